// GPU benchmarks of the reduce, cumsum, fused nn, indexing, sort, GEMM and convolution ops
// on gpu:0 (names BM_GpuOps*), at the sizes of their speed targets. Bandwidth cases
// report bytes that must move (inputs read once, output written once); GEMM and
// convolution cases report flops. Compared with PyTorch on the same GPU by
// bench/gpu_ops_compare.py. Cases skip without a GPU.
#include <benchmark/benchmark.h>

#include <chrono>
#include <functional>

#include "bench_util.h"
#include "wick/device.h"
#include "wick/options.h"
#include "wick/tensor.h"

namespace wick {
namespace {

constexpr size_t kSide = 16384;

// Times `op` (after one warm-up) in batches of `repeat` ops; `bytes` and `flops` per op.
void run_op(benchmark::State& state, double bytes, double flops, int repeat,
            const std::function<Tensor()>& op) {
  const Device gpu = Device::gpu(0);
  Tensor out = op();
  synchronize(gpu);
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < repeat; ++i) out = op();
    synchronize(gpu);
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

void BM_GpuOpsReduce(benchmark::State& state, ReduceOp op) {
  REQUIRE_GPU_BENCH();
  Tensor x = input(DType::F32, Shape{kSide, kSide}, 21);
  run_op(state, 4.0 * kSide * kSide + 4.0 * kSide, 0, 10, [&] { return x.reduce(op, {-1}, false); });
}

void BM_GpuOpsSoftmax(benchmark::State& state, DType dt) {
  REQUIRE_GPU_BENCH();
  Tensor x = input(dt, Shape{kSide, kSide}, 22, -4, 4);
  run_op(state, 2.0 * double(dtype_size(dt)) * kSide * kSide, 0, 10, [&] { return nn::softmax_last_dim(x); });
}

void BM_GpuOpsRmsNorm(benchmark::State& state, DType dt) {
  REQUIRE_GPU_BENCH();
  Tensor x = input(dt, Shape{kSide, kSide}, 23), a = input(dt, Shape{kSide}, 24, 0.5, 1.5);
  run_op(state, 2.0 * double(dtype_size(dt)) * kSide * kSide + double(dtype_size(dt)) * kSide, 0, 10,
         [&] { return nn::rms_norm(x, a, 1e-5f); });
}

void BM_GpuOpsLayerNorm(benchmark::State& state, DType dt) {
  REQUIRE_GPU_BENCH();
  Tensor x = input(dt, Shape{kSide, kSide}, 32), a = input(dt, Shape{kSide}, 33, 0.5, 1.5);
  Tensor b = input(dt, Shape{kSide}, 34);
  run_op(state, 2.0 * double(dtype_size(dt)) * kSide * kSide + 2.0 * double(dtype_size(dt)) * kSide, 0, 10,
         [&] { return nn::layer_norm(x, a, b, 1e-5f); });
}

void BM_GpuOpsCumsum(benchmark::State& state, DType dt) {
  REQUIRE_GPU_BENCH();
  Tensor x = input(dt, Shape{kSide, kSide}, 35);
  run_op(state, 2.0 * double(dtype_size(dt)) * kSide * kSide, 0, 10, [&] { return x.cumsum(-1); });
}

void BM_GpuOpsIndexSelect(benchmark::State& state, DType dt) {
  REQUIRE_GPU_BENCH();
  const size_t rows = 8192;
  Tensor x = input(dt, Shape{kSide, kSide}, 25);
  Tensor ids = input(DType::F32, Shape{rows}, 26, 0, double(kSide) - 1).to_dtype(DType::U32);
  run_op(state, 2.0 * double(dtype_size(dt)) * rows * kSide + 4.0 * rows, 0, 10,
         [&] { return x.index_select(ids, 0); });
}

void BM_GpuOpsArgsort(benchmark::State& state, DType dt) {
  REQUIRE_GPU_BENCH();
  const size_t side = 4096;
  Tensor x = input(dt, Shape{side, side}, 27);
  run_op(state, double(dtype_size(dt) + 4) * side * side, 0, 10, [&] { return x.argsort(true); });
}

// GEMM options of the GEMM and convolution cases: TF32 off (full f32 precision, as
// PyTorch is run by bench/gpu_ops_compare.py) unless a case allows it, the portable
// kernel where asked.
Options gemm_options(bool portable, bool tf32 = false) {
  Options o = options();
  o.allow_tf32 = tf32;
  o.portable_gemm = portable;
  return o;
}

// The GEMM on inputs in [0, 1) (what bench/gpu_ops_compare.py gives torch), beside
// BM_GpuOpsMatmul's [-1, 1): the matrix units' rate depends on the data.
void BM_GpuOpsMatmulUnit(benchmark::State& state, DType dt) {
  REQUIRE_GPU_BENCH();
  const size_t n = 8192;
  ScopedOptions opts(gemm_options(false));
  Tensor a = input(dt, Shape{n, n}, 28, 0, 1), b = input(dt, Shape{n, n}, 29, 0, 1);
  run_op(state, 0, 2.0 * n * n * n, 5, [&] { return a.matmul(b); });
}

// portable: wick's tiled GEMM kernel instead of the vendor BLAS.
void BM_GpuOpsMatmul(benchmark::State& state, DType dt, bool portable) {
  REQUIRE_GPU_BENCH();
  const size_t n = 8192;
  ScopedOptions opts(gemm_options(portable));
  Tensor a = input(dt, Shape{n, n}, 28), b = input(dt, Shape{n, n}, 29);
  run_op(state, 0, 2.0 * n * n * n, portable ? 2 : 5, [&] { return a.matmul(b); });
}

// tf32: f32 convolutions may use TF32 (PyTorch's default for convolutions).
void BM_GpuOpsConv2d(benchmark::State& state, DType dt, bool tf32) {
  REQUIRE_GPU_BENCH();
  ScopedOptions opts(gemm_options(false, tf32));
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
WICK_GPU_OPS_BENCH(BM_GpuOpsSoftmax, f32, DType::F32);
WICK_GPU_OPS_BENCH(BM_GpuOpsRmsNorm, f32, DType::F32);
WICK_GPU_OPS_BENCH(BM_GpuOpsLayerNorm, f32, DType::F32);
WICK_GPU_OPS_BENCH(BM_GpuOpsCumsum, f32, DType::F32);
WICK_GPU_OPS_BENCH(BM_GpuOpsIndexSelect, f32, DType::F32);
WICK_GPU_OPS_BENCH(BM_GpuOpsArgsort, f32, DType::F32);
WICK_GPU_OPS_BENCH(BM_GpuOpsMatmul, bf16, DType::BF16, false);
WICK_GPU_OPS_BENCH(BM_GpuOpsMatmul, f32, DType::F32, false);
WICK_GPU_OPS_BENCH(BM_GpuOpsMatmul, f32_portable, DType::F32, true);
WICK_GPU_OPS_BENCH(BM_GpuOpsConv2d, f32, DType::F32, false);
WICK_GPU_OPS_BENCH(BM_GpuOpsConv2d, f32_tf32, DType::F32, true);
WICK_GPU_OPS_BENCH(BM_GpuOpsConv2d, bf16, DType::BF16, false);
WICK_GPU_OPS_BENCH(BM_GpuOpsMatmulUnit, bf16, DType::BF16);

}  // namespace
}  // namespace wick
