// oneDNN glue of the CPU backend (gemm.cpp, conv.cpp): one CPU engine, primitives
// built once per distinct shape and kept in a small cache, run with a scratchpad per
// call on as many threads as their work fills (at most options().cpu_threads), and
// oneDNN's errors rethrown as wick::Error. oneDNN picks its kernels for the CPU at run
// time (AVX2, AVX-512, AVX512-BF16, AMX).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>

#include "wick/dtype.h"
#include "wick/layout.h"

namespace wick::cpu::onednn {

dnnl::engine& engine();

// oneDNN's type of a float dtype (f32, bf16, f16).
dnnl::memory::data_type data_type(DType dt);

// A primitive and the descriptors of the memory it expects.
struct Primitive {
  dnnl::primitive prim;
  dnnl::memory::desc src, weights, dst, scratchpad;
  bool reference = false;  // oneDNN's reference implementation (no kernel of its own for this CPU)
  int threads = 1;         // the threads it was built for and runs on
};

// Threads for `work` units: 1 when it is less than two threads' worth (`per_thread`
// each: oneDNN splits even a tiny product over every thread, and each split costs a
// barrier), else wick's thread count (never a count in between: libgomp would end and
// restart threads at each change of team size); 1 inside a task of wick's pool (a
// primitive run there must not start threads of its own).
int threads_for(double work, double per_thread);

// The cached primitive of `key` (any bytes naming the shape) for `threads` threads,
// built by `make` on first use; null when oneDNN has no implementation for it. `make`
// gets the attributes to build with (user scratchpad) and returns the primitive
// descriptor.
using MakePd = std::function<dnnl::primitive_desc_base(const dnnl::primitive_attr&)>;
std::shared_ptr<const Primitive> primitive(const std::string& key, const MakePd& make, int threads,
                                           const char* op);

// Runs p with `args` (DNNL_ARG_* -> memory) plus a scratchpad of its own.
void execute(const Primitive& p, std::unordered_map<int, dnnl::memory> args, const char* op);

// Copies (and converts) between two memory descriptions of the same dims through a
// cached reorder primitive.
void reorder(const dnnl::memory::desc& from, const void* src, const dnnl::memory::desc& to, void* dst,
             const char* op);

// f16 / bf16 (`half`) <-> f32 for the operands and results of an f32 primitive, on
// the OpenMP threads oneDNN runs on (oneDNN 2.6's reorders convert f16 with scalar
// loops, and wick's pool would compete with oneDNN's spinning threads:
// docs/PERFORMANCE.md). widen: the tensor of layout l over `src` (elements of `half`)
// into a contiguous f32 buffer; narrow: n contiguous floats rounded to nearest even.
void widen(DType half, const void* src, const Layout& l, float* dst);
void narrow(DType half, const float* src, void* dst, size_t n);

// A key builder: the values' bytes, in order.
class Key {
 public:
  explicit Key(const char* kind) : s_(kind) {}
  Key& add(int64_t v) {
    s_.append(reinterpret_cast<const char*>(&v), sizeof(v));
    return *this;
  }
  Key& add(const dnnl::memory::desc& d);
  const std::string& str() const { return s_; }

 private:
  std::string s_;
};

}  // namespace wick::cpu::onednn
