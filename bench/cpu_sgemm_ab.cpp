// f32 GEMM two ways on the same operands, for deciding the CPU backend's f32 GEMM
// library by one run on the target machine: wick's matmul (oneDNN's matmul primitive,
// src/backend/cpu/gemm.cpp) and OpenBLAS's cblas_sgemm called directly on the same
// row-major buffers, at the `wick bench` / bench/cpu_ops.cpp shapes [1024]^3 and
// [2048]^3. OpenBLAS runs on as many threads as wick (WICK_NUM_THREADS, else the cores
// this process may run on). Cases: BM_CpuSgemmAB/{onednn,openblas}/N.
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <sched.h>

#include <cstring>
#include <string>
#include <vector>

#include "bench_util.h"
#include "wick/options.h"
#include "wick/tensor.h"

extern "C" void openblas_set_num_threads(int num_threads);

namespace wick {
namespace {

using namespace bench;

int blas_threads() {
  if (options().cpu_threads > 0) return options().cpu_threads;
  cpu_set_t set;
  return sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
}

void BM_CpuSgemmOneDnn(benchmark::State& state, size_t n) {
  Tensor a = randn({n, n}, DType::F32, 1), b = randn({n, n}, DType::F32, 2);
  run(state, 0, 2.0 * double(n) * double(n) * double(n), [&] { return a.matmul(b); });
}

void BM_CpuSgemmOpenBlas(benchmark::State& state, int n) {
  const size_t un = size_t(n);
  const std::vector<float> a = randn({un, un}, DType::F32, 1).to_vector<float>();
  const std::vector<float> b = randn({un, un}, DType::F32, 2).to_vector<float>();
  std::vector<float> c(un * un);
  openblas_set_num_threads(blas_threads());
  auto call = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f,
                c.data(), n);
  };
  call();
  for (auto _ : state) {
    call();
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["FLOP/s"] =
      benchmark::Counter(2.0 * n * double(n) * n * double(state.iterations()), benchmark::Counter::kIsRate);
}

const int kRegistered = [] {
  for (int n : {1024, 2048}) {
    benchmark::RegisterBenchmark(("BM_CpuSgemmAB/onednn/" + std::to_string(n)).c_str(), BM_CpuSgemmOneDnn,
                                 size_t(n))
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_CpuSgemmAB/openblas/" + std::to_string(n)).c_str(), BM_CpuSgemmOpenBlas,
                                 n)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  return 0;
}();

}  // namespace
}  // namespace wick
