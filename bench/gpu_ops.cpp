// GPU benchmarks of the issue-4 ops on gpu:0 (names BM_GpuOps*), at the sizes of the
// issue's speed targets. Bandwidth cases report bytes that must move (inputs read
// once, output written once); GEMM and convolution cases report flops. Compared
// with PyTorch on the same GPU by bench/gpu_ops_compare.py. Cases skip without a GPU.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <functional>

#include "backend/backend.h"
#include "wick/tensor.h"

namespace wick {
namespace {

constexpr size_t kSide = 16384;

bool have_gpu() {
  for (const Device& d : available_devices())
    if (d.is_gpu()) return true;
  return false;
}

// Times `op` (after one warm-up) in batches of `repeat` ops; `bytes` and `flops` per op.
void run_op(benchmark::State& state, double bytes, double flops, int repeat,
            const std::function<Tensor()>& op) {
  BackendDevice& dev = backend_device(Device::gpu(0));
  Tensor out = op();
  dev.synchronize();
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < repeat; ++i) out = op();
    dev.synchronize();
    auto t1 = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count() / repeat);
  }
  const double it = double(state.iterations());
  if (bytes > 0) state.counters["TBps"] = benchmark::Counter(bytes * it / 1e12, benchmark::Counter::kIsRate);
  if (flops > 0)
    state.counters["TFLOPs"] = benchmark::Counter(flops * it / 1e12, benchmark::Counter::kIsRate);
}

Tensor input(DType dt, const Shape& s, uint64_t seed, double lo = -1, double hi = 1) {
  Tensor::manual_seed(seed, Device::gpu(0));
  return Tensor::rand(s, DType::F32, Device::gpu(0), lo, hi).to_dtype(dt);
}

#define REQUIRE_GPU_BENCH() \
  if (!have_gpu()) return state.SkipWithError("no GPU backend/device")

void BM_GpuOpsReduce(benchmark::State& state, ReduceOp op) {
  REQUIRE_GPU_BENCH();
  Tensor x = input(DType::F32, Shape{kSide, kSide}, 21);
  run_op(state, 4.0 * kSide * kSide + 4.0 * kSide, 0, 10, [&] { return x.reduce(op, {-1}, false); });
}

// tpr: threads per row (WICK_REDUCE_TPR: "256" a block per row, a wave or less
// several rows per block).
void BM_GpuOpsReduceTpr(benchmark::State& state, ReduceOp op, const char* tpr) {
  ::setenv("WICK_REDUCE_TPR", tpr, 1);
  BM_GpuOpsReduce(state, op);
  ::unsetenv("WICK_REDUCE_TPR");
}

// cache "0": the kernels without the register row cache (WICK_NN_CACHE=0).
void BM_GpuOpsSoftmax(benchmark::State& state, const char* cache) {
  REQUIRE_GPU_BENCH();
  ::setenv("WICK_NN_CACHE", cache, 1);
  Tensor x = input(DType::F32, Shape{kSide, kSide}, 22, -4, 4);
  run_op(state, 2.0 * 4 * kSide * kSide, 0, 10, [&] { return nn::softmax_last_dim(x); });
}

void BM_GpuOpsRmsNorm(benchmark::State& state, const char* cache) {
  REQUIRE_GPU_BENCH();
  ::setenv("WICK_NN_CACHE", cache, 1);
  Tensor x = input(DType::F32, Shape{kSide, kSide}, 23), a = input(DType::F32, Shape{kSide}, 24, 0.5, 1.5);
  run_op(state, 2.0 * 4 * kSide * kSide + 4.0 * kSide, 0, 10, [&] { return nn::rms_norm(x, a, 1e-5f); });
}

void BM_GpuOpsIndexSelect(benchmark::State& state, DType dt) {
  REQUIRE_GPU_BENCH();
  const size_t rows = 8192;
  Tensor x = input(dt, Shape{kSide, kSide}, 25);
  Tensor ids = input(DType::F32, Shape{rows}, 26, 0, double(kSide) - 1).to_dtype(DType::U32);
  run_op(state, 2.0 * double(dtype_size(dt)) * rows * kSide + 4.0 * rows, 0, 10,
         [&] { return x.index_select(ids, 0); });
}

// The one-thread-per-item kernel (WICK_IS_1D=1) beside the default 2-D row grid.
void BM_GpuOpsIndexSelect1d(benchmark::State& state, DType dt) {
  ::setenv("WICK_IS_1D", "1", 1);
  BM_GpuOpsIndexSelect(state, dt);
  ::unsetenv("WICK_IS_1D");
}

void BM_GpuOpsArgsort(benchmark::State& state, DType dt) {
  REQUIRE_GPU_BENCH();
  const size_t side = 4096;
  Tensor x = input(dt, Shape{side, side}, 27);
  run_op(state, double(dtype_size(dt) + 4) * side * side, 0, 10, [&] { return x.argsort(true); });
}

// WICK_ARGSORT=local: the one-pair-per-step shared-memory kernel (before argsort_reg).
void BM_GpuOpsArgsortLocal(benchmark::State& state, DType dt) {
  ::setenv("WICK_ARGSORT", "local", 1);
  BM_GpuOpsArgsort(state, dt);
  ::unsetenv("WICK_ARGSORT");
}

// The GEMM on inputs in [0, 1) (what bench/gpu_ops_compare.py gives torch), beside
// BM_GpuOpsMatmul's [-1, 1): the matrix units' rate depends on the data.
void BM_GpuOpsMatmulUnit(benchmark::State& state, DType dt, const char* gemm) {
  REQUIRE_GPU_BENCH();
  const size_t n = 8192;
  if (gemm) ::setenv("WICK_GEMM", gemm, 1);
  ::setenv("WICK_ALLOW_TF32", "0", 1);
  Tensor a = input(dt, Shape{n, n}, 28, 0, 1), b = input(dt, Shape{n, n}, 29, 0, 1);
  run_op(state, 0, 2.0 * n * n * n, 5, [&] { return a.matmul(b); });
  if (gemm) ::unsetenv("WICK_GEMM");
}

void BM_GpuOpsMatmul(benchmark::State& state, DType dt, const char* gemm) {
  REQUIRE_GPU_BENCH();
  const size_t n = 8192;
  if (gemm) ::setenv("WICK_GEMM", gemm, 1);
  ::setenv("WICK_ALLOW_TF32", "0", 1);
  Tensor a = input(dt, Shape{n, n}, 28), b = input(dt, Shape{n, n}, 29);
  run_op(state, 0, 2.0 * n * n * n, gemm ? 2 : 5, [&] { return a.matmul(b); });
  if (gemm) ::unsetenv("WICK_GEMM");
}

void BM_GpuOpsConv2d(benchmark::State& state, DType dt) {
  REQUIRE_GPU_BENCH();
  ::setenv("WICK_ALLOW_TF32", "0", 1);
  Tensor x = input(dt, Shape{32, 64, 128, 128}, 30), w = input(dt, Shape{128, 64, 3, 3}, 31);
  // padding 1: output [32, 128, 128, 128]
  const double flops = 2.0 * 32 * 128 * 128 * 128 * 64 * 9;
  run_op(state, 0, flops, 5, [&] { return x.conv2d(w, 1, 1, 1, 1); });
}

#define WICK_GPU_OPS_BENCH(fn, ...) \
  BENCHMARK_CAPTURE(fn, __VA_ARGS__)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.3)

WICK_GPU_OPS_BENCH(BM_GpuOpsReduce, sum, ReduceOp::Sum);
WICK_GPU_OPS_BENCH(BM_GpuOpsReduce, max, ReduceOp::Max);
WICK_GPU_OPS_BENCH(BM_GpuOpsReduce, argmax, ReduceOp::ArgMax);
WICK_GPU_OPS_BENCH(BM_GpuOpsReduceTpr, sum_tpr256, ReduceOp::Sum, "256");
WICK_GPU_OPS_BENCH(BM_GpuOpsReduceTpr, max_tpr256, ReduceOp::Max, "256");
WICK_GPU_OPS_BENCH(BM_GpuOpsReduceTpr, argmax_tpr256, ReduceOp::ArgMax, "256");
WICK_GPU_OPS_BENCH(BM_GpuOpsSoftmax, f32, "1");
WICK_GPU_OPS_BENCH(BM_GpuOpsSoftmax, f32_nc, "0");
WICK_GPU_OPS_BENCH(BM_GpuOpsRmsNorm, f32, "1");
WICK_GPU_OPS_BENCH(BM_GpuOpsRmsNorm, f32_nc, "0");
WICK_GPU_OPS_BENCH(BM_GpuOpsIndexSelect, f32, DType::F32);
WICK_GPU_OPS_BENCH(BM_GpuOpsIndexSelect1d, f32, DType::F32);
WICK_GPU_OPS_BENCH(BM_GpuOpsArgsort, f32, DType::F32);
WICK_GPU_OPS_BENCH(BM_GpuOpsMatmul, bf16, DType::BF16, nullptr);
WICK_GPU_OPS_BENCH(BM_GpuOpsMatmul, f32, DType::F32, nullptr);
WICK_GPU_OPS_BENCH(BM_GpuOpsMatmul, f32_portable, DType::F32, "portable");
WICK_GPU_OPS_BENCH(BM_GpuOpsConv2d, f32, DType::F32);
WICK_GPU_OPS_BENCH(BM_GpuOpsArgsortLocal, f32, DType::F32);
WICK_GPU_OPS_BENCH(BM_GpuOpsMatmul, bf16_lt, DType::BF16, "lt");
WICK_GPU_OPS_BENCH(BM_GpuOpsMatmulUnit, bf16, DType::BF16, nullptr);
WICK_GPU_OPS_BENCH(BM_GpuOpsMatmulUnit, bf16_lt, DType::BF16, "lt");

}  // namespace
}  // namespace wick
