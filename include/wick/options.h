// The library's run-time choices. Each starts from an environment variable, read
// once at first use (src/base/options.cpp is the only code that reads the
// environment), and can be changed through set_options() at any time: a change
// applies to the calls that follow it.
//
//   WICK_GEMM=portable        portable_gemm
//   WICK_ALLOW_TF32=1         allow_tf32
//   WICK_QMATMUL=auto|matvec|dequant_gemm   qmatmul_path
//   WICK_BACKEND_PATH=DIR:DIR backend_path
//   WICK_NUM_THREADS=N        cpu_threads
//   WICK_CPU_CACHE_BYTES=N    cpu_cache_bytes
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace wick {

enum class QMatmulPath : uint8_t;  // wick/quant.h

struct Options {
  // GPU matmul through wick's portable tiled GEMM kernel instead of the vendor BLAS,
  // and convolutions as im2col + that kernel instead of the vendor DNN library (a
  // build without vendor BLAS always uses the portable kernel).
  bool portable_gemm = false;
  // f32 GEMMs and convolutions on the vendor libraries may use TF32 tensor cores
  // (about 10 mantissa bits).
  bool allow_tf32 = false;
  // The path qmatmul takes when called with QMatmulPath::Auto; Auto itself picks
  // the mat-vec for at most kQMatVecMaxBatch rows of x, else dequantize + GEMM.
  QMatmulPath qmatmul_path{};
  // Folders searched first for libwick-cuda.so / libwick-rocm.so, ':'-separated;
  // read when the first GPU is used (set it before that).
  std::string backend_path;
  // CPU threads of wick's parallel loops, oneDNN and OpenBLAS; 0: OpenMP's default
  // (OMP_NUM_THREADS, else every core).
  int cpu_threads = 0;
  // Bytes of freed large host blocks kept for reuse by the CPU allocator; 0: none.
  size_t cpu_cache_bytes = size_t(1) << 30;
};

// The options in force (a copy; cheap).
Options options();
// Replaces the options. Throws InvalidArgument for a negative thread count.
void set_options(const Options& o);
// The options the environment gives (what options() starts from).
Options options_from_environment();

// Sets options for a scope and restores the previous ones at its end.
class ScopedOptions {
 public:
  explicit ScopedOptions(const Options& o) : saved_(options()) { set_options(o); }
  ~ScopedOptions() { set_options(saved_); }
  ScopedOptions(const ScopedOptions&) = delete;
  ScopedOptions& operator=(const ScopedOptions&) = delete;

 private:
  Options saved_;
};

}  // namespace wick
