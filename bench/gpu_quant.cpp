// GPU benchmarks of the QUANTIZED module on gpu:0 (names BM_GpuQuant*), at the
// sizes of its speed targets:
//   - mat-vec, batch 1, weights [14336 x 4096] and [4096 x 14336], Q4_0/Q4_K/Q6_K/
//     Q8_0: TBps counts the weight bytes read per call, to be set against
//     BM_GpuQuantCopy (a device copy: bytes read + written). BM_GpuQuantMatVec runs
//     the calls back to back: on sm_90 each is a dependent launch that starts
//     streaming its weight while the previous call ends. BM_GpuQuantMatVecAfterWrite
//     runs each after an ordinary kernel that writes its x (an affine, as a
//     decoder's norm precedes its projections) and reports the mat-vec's share:
//     the pair's time minus the affine's alone, measured in the same run;
//   - batch 512 through dequantize + GEMM (bf16 activations) against the bf16 GEMM
//     of the same shape (TFLOPs = 2*m*n*k per call).
// bench/gpu_quant_report.py turns the JSON into the table of targets. Weights are
// quantized on the CPU from a [256 x k] random matrix tiled to n rows (quantizing
// 58M elements per case would dominate the run), in copies that calls cycle through
// (see weights()). Cases skip without a GPU.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <random>
#include <string>
#include <tuple>

#include "bench_util.h"
#include "wick/device.h"
#include "wick/quant.h"
#include "wick/tensor.h"

namespace wick {
namespace {

// `repeat` calls per timed iteration.
void run_op(benchmark::State& state, double bytes, double flops, int repeat,
            const std::function<Tensor()>& op) {
  const Device gpu = Device::gpu(0);
  Tensor out = op();
  synchronize(gpu);
  double host = 0;  // seconds spent issuing the calls, before the synchronize
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < repeat; ++i) out = op();
    auto tq = std::chrono::steady_clock::now();
    synchronize(gpu);
    auto t1 = std::chrono::steady_clock::now();
    host += std::chrono::duration<double>(tq - t0).count();
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count() / repeat);
  }
  const double it = double(state.iterations());
  // Host time per call: when it nears the time per call, the host is the limit.
  state.counters["host_us"] = benchmark::Counter(host * 1e6 / (it * repeat));
  if (bytes > 0) state.counters["TBps"] = benchmark::Counter(bytes * it / 1e12, benchmark::Counter::kIsRate);
  if (flops > 0)
    state.counters["TFLOPs"] = benchmark::Counter(flops * it / 1e12, benchmark::Counter::kIsRate);
}

// Each timed iteration runs `repeat` calls of `first` alone, then `repeat` pairs of
// `first` and `second` (second reading first's output); the iteration time is a
// pair's. Counters, named by `first_name` and `second_name`: {first}_us (first
// alone, per call), {second}_us (a pair minus first alone: second's share when it
// follows first) and {second}_TBps (`bytes` per {second}_us).
void run_after(benchmark::State& state, double bytes, int repeat, const std::string& first_name,
               const std::function<Tensor()>& first, const std::string& second_name,
               const std::function<Tensor(const Tensor&)>& second) {
  const Device gpu = Device::gpu(0);
  Tensor out = second(first());
  synchronize(gpu);
  double first_s = 0, pair_s = 0;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < repeat; ++i) out = first();
    synchronize(gpu);
    auto t1 = std::chrono::steady_clock::now();
    for (int i = 0; i < repeat; ++i) out = second(first());
    synchronize(gpu);
    auto t2 = std::chrono::steady_clock::now();
    first_s += std::chrono::duration<double>(t1 - t0).count();
    const double pair = std::chrono::duration<double>(t2 - t1).count();
    pair_s += pair;
    state.SetIterationTime(pair / repeat);
  }
  const double calls = double(state.iterations()) * repeat;
  const double second_s = (pair_s - first_s) / calls;
  state.counters[first_name + "_us"] = benchmark::Counter(first_s * 1e6 / calls);
  state.counters[second_name + "_us"] = benchmark::Counter(second_s * 1e6);
  if (second_s > 0) state.counters[second_name + "_TBps"] = benchmark::Counter(bytes / second_s / 1e12);
}

std::vector<float> normal_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Copies of an (n, k) weight of type t on gpu:0 (256 quantized rows tiled n/256
// times), enough that they span 256 MB: calls cycle through them, so the weight
// comes from HBM, not from the 50 MB L2 a single [14336 x 4096] Q4_0 fits in.
// The last case's copies are kept: Google Benchmark calls a case's function more
// than once, and building them is most of a case's set-up.
const std::vector<QTensor>& weights(GgmlType t, size_t n, size_t k) {
  static std::tuple<GgmlType, size_t, size_t> key{GgmlType::F32, 0, 0};
  static std::vector<QTensor> w;
  if (key == std::make_tuple(t, n, k) && !w.empty()) return w;
  w.clear();
  key = {t, n, k};
  const size_t tile = 256;
  QTensor q = QTensor::quantize(Tensor::from_vector(normal_values(tile * k, 1), Shape{tile, k}), t);
  const std::vector<uint8_t> b = q.to_host_bytes();
  std::vector<uint8_t> all(b.size() * (n / tile));
  for (size_t r = 0; r < n / tile; ++r) std::copy(b.begin(), b.end(), all.begin() + r * b.size());
  const size_t copies = std::max<size_t>(2, (size_t(256) << 20) / all.size() + 1);
  for (size_t c = 0; c < copies; ++c)
    w.push_back(QTensor::from_bytes(t, Shape{n, k}, all.data(), all.size(), Device::gpu(0)));
  return w;
}

Tensor activations(size_t m, size_t k, DType dt) {
  return Tensor::from_vector(normal_values(m * k, 2), Shape{m, k}, Device::gpu(0)).to_dtype(dt);
}

void BM_GpuQuantCopy(benchmark::State& state) {
  REQUIRE_GPU_BENCH();
  const size_t n = size_t(1) << 28;  // 1 GiB of f32
  Tensor x = activations(1, n, DType::F32);
  run_op(state, 2.0 * 4 * double(n), 0, 10, [&] { return x.copy(); });
}

void BM_GpuQuantMatVec(benchmark::State& state, GgmlType t, size_t n, size_t k) {
  REQUIRE_GPU_BENCH();
  const std::vector<QTensor>& w = weights(t, n, k);
  Tensor x = activations(1, k, DType::F32);
  size_t i = 0;
  run_op(state, double(w[0].nbytes()), 2.0 * n * k, 50,
         [&] { return qmatmul(x, w[i++ % w.size()], QMatmulPath::MatVec); });
}

// The batch-1 mat-vec after an ordinary kernel that writes its x (an affine of x0),
// not back to back after another mat-vec: matvec_us and matvec_TBps are the
// mat-vec's share of each affine + mat-vec pair, affine_us the affine alone.
void BM_GpuQuantMatVecAfterWrite(benchmark::State& state, GgmlType t, size_t n, size_t k) {
  REQUIRE_GPU_BENCH();
  const std::vector<QTensor>& w = weights(t, n, k);
  Tensor x0 = activations(1, k, DType::F32);
  size_t i = 0;
  run_after(
      state, double(w[0].nbytes()), 50, "affine", [&] { return x0.affine(1.0, 0.0); }, "matvec",
      [&](const Tensor& x) { return qmatmul(x, w[i++ % w.size()], QMatmulPath::MatVec); });
}

void BM_GpuQuantDequantGemm(benchmark::State& state, GgmlType t, size_t n, size_t k) {
  REQUIRE_GPU_BENCH();
  const size_t m = 512;
  const std::vector<QTensor>& w = weights(t, n, k);
  Tensor x = activations(m, k, DType::BF16);
  size_t i = 0;
  run_op(state, 0, 2.0 * m * n * k, 10,
         [&] { return qmatmul(x, w[i++ % w.size()], QMatmulPath::DequantGemm); });
}

void BM_GpuQuantBf16Gemm(benchmark::State& state, size_t n, size_t k) {
  REQUIRE_GPU_BENCH();
  const size_t m = 512;
  Tensor x = activations(m, k, DType::BF16), w = activations(n, k, DType::BF16);
  run_op(state, 0, 2.0 * m * n * k, 10, [&] { return x.matmul(w.t()); });
}

// Fixed iteration counts: each case's function runs once (its set-up once), for
// at least 2000 mat-vec calls or 200 GEMM-sized calls. The two mat-vec cases of a
// shape run one after the other and share its weights (weights() keeps them).
#define GPUQ_BENCH(iters, fn, ...) \
  BENCHMARK_CAPTURE(fn, __VA_ARGS__)->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(iters)

BENCHMARK(BM_GpuQuantCopy)->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(100);
GPUQ_BENCH(40, BM_GpuQuantMatVec, q4_0_14336x4096, GgmlType::Q4_0, 14336, 4096);
GPUQ_BENCH(40, BM_GpuQuantMatVecAfterWrite, q4_0_14336x4096, GgmlType::Q4_0, 14336, 4096);
GPUQ_BENCH(40, BM_GpuQuantMatVec, q4_0_4096x14336, GgmlType::Q4_0, 4096, 14336);
GPUQ_BENCH(40, BM_GpuQuantMatVecAfterWrite, q4_0_4096x14336, GgmlType::Q4_0, 4096, 14336);
GPUQ_BENCH(40, BM_GpuQuantMatVec, q4_K_14336x4096, GgmlType::Q4_K, 14336, 4096);
GPUQ_BENCH(40, BM_GpuQuantMatVecAfterWrite, q4_K_14336x4096, GgmlType::Q4_K, 14336, 4096);
GPUQ_BENCH(40, BM_GpuQuantMatVec, q4_K_4096x14336, GgmlType::Q4_K, 4096, 14336);
GPUQ_BENCH(40, BM_GpuQuantMatVecAfterWrite, q4_K_4096x14336, GgmlType::Q4_K, 4096, 14336);
GPUQ_BENCH(40, BM_GpuQuantMatVec, q6_K_14336x4096, GgmlType::Q6_K, 14336, 4096);
GPUQ_BENCH(40, BM_GpuQuantMatVecAfterWrite, q6_K_14336x4096, GgmlType::Q6_K, 14336, 4096);
GPUQ_BENCH(40, BM_GpuQuantMatVec, q6_K_4096x14336, GgmlType::Q6_K, 4096, 14336);
GPUQ_BENCH(40, BM_GpuQuantMatVecAfterWrite, q6_K_4096x14336, GgmlType::Q6_K, 4096, 14336);
GPUQ_BENCH(40, BM_GpuQuantMatVec, q8_0_14336x4096, GgmlType::Q8_0, 14336, 4096);
GPUQ_BENCH(40, BM_GpuQuantMatVecAfterWrite, q8_0_14336x4096, GgmlType::Q8_0, 14336, 4096);
GPUQ_BENCH(40, BM_GpuQuantMatVec, q8_0_4096x14336, GgmlType::Q8_0, 4096, 14336);
GPUQ_BENCH(40, BM_GpuQuantMatVecAfterWrite, q8_0_4096x14336, GgmlType::Q8_0, 4096, 14336);
GPUQ_BENCH(20, BM_GpuQuantDequantGemm, q4_0_14336x4096, GgmlType::Q4_0, 14336, 4096);
GPUQ_BENCH(20, BM_GpuQuantDequantGemm, q4_K_14336x4096, GgmlType::Q4_K, 14336, 4096);
GPUQ_BENCH(20, BM_GpuQuantDequantGemm, q6_K_14336x4096, GgmlType::Q6_K, 14336, 4096);
GPUQ_BENCH(20, BM_GpuQuantDequantGemm, q8_0_14336x4096, GgmlType::Q8_0, 14336, 4096);
GPUQ_BENCH(20, BM_GpuQuantDequantGemm, q4_0_4096x14336, GgmlType::Q4_0, 4096, 14336);
GPUQ_BENCH(20, BM_GpuQuantDequantGemm, q4_K_4096x14336, GgmlType::Q4_K, 4096, 14336);
GPUQ_BENCH(20, BM_GpuQuantDequantGemm, q6_K_4096x14336, GgmlType::Q6_K, 4096, 14336);
GPUQ_BENCH(20, BM_GpuQuantDequantGemm, q8_0_4096x14336, GgmlType::Q8_0, 4096, 14336);
GPUQ_BENCH(20, BM_GpuQuantBf16Gemm, 14336x4096, 14336, 4096);
GPUQ_BENCH(20, BM_GpuQuantBf16Gemm, 4096x14336, 4096, 14336);

}  // namespace
}  // namespace wick
