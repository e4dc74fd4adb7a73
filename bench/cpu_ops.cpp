// CPU throughput of the main op families (Google Benchmark, wall-clock time since
// the backend runs on several threads). Memory-bound ops report bytes/s (each input
// read once, the output written once); matmul and conv2d report FLOP/s (2 per
// multiply-add). An op that throws marks its case as an error instead of aborting.
// Results: bench/results/.
#include <benchmark/benchmark.h>

#include <functional>

#include "wick/tensor.h"

namespace wick {
namespace {

constexpr size_t kRows = 4096, kCols = 1024;  // 4 Mi elements: 16 MiB of f32, beyond L2
const Shape kMat{kRows, kCols};

Tensor randn(const Shape& s, DType dt = DType::F32, uint64_t seed = 1) {
  Tensor::manual_seed(seed);
  return Tensor::randn(s, DType::F32).to_dtype(dt);
}

// Runs `op` per iteration; `bytes` and `flops` are per call (0 = not reported).
void run(benchmark::State& state, double bytes, double flops, const std::function<Tensor()>& op) {
  try {
    Tensor out = op();  // warm-up
    for (auto _ : state) {
      out = op();
      benchmark::DoNotOptimize(out);
    }
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  if (bytes > 0) state.SetBytesProcessed(int64_t(bytes * double(state.iterations())));
  if (flops > 0)
    state.counters["FLOP/s"] =
        benchmark::Counter(flops * double(state.iterations()), benchmark::Counter::kIsRate);
}

double f32_bytes(size_t n) { return double(n) * 4.0; }

void BM_copy_contiguous(benchmark::State& state) {
  Tensor x = randn(kMat);
  run(state, 2 * f32_bytes(x.elem_count()), 0, [&] { return x.copy(); });
}
void BM_copy_transposed(benchmark::State& state) {
  Tensor x = randn(kMat).t();
  run(state, 2 * f32_bytes(x.elem_count()), 0, [&] { return x.contiguous(); });
}
void BM_affine(benchmark::State& state) {
  Tensor x = randn(kMat);
  run(state, 2 * f32_bytes(x.elem_count()), 0, [&] { return x.affine(1.5, -0.25); });
}
void BM_unary_exp(benchmark::State& state) {
  Tensor x = randn(kMat);
  run(state, 2 * f32_bytes(x.elem_count()), 0, [&] { return x.exp(); });
}
void BM_binary_add(benchmark::State& state) {
  Tensor a = randn(kMat, DType::F32, 1), b = randn(kMat, DType::F32, 2);
  run(state, 3 * f32_bytes(a.elem_count()), 0, [&] { return a.add(b); });
}
void BM_binary_add_broadcast_row(benchmark::State& state) {
  Tensor a = randn(kMat, DType::F32, 1), b = randn({kCols}, DType::F32, 2);
  run(state, 2 * f32_bytes(a.elem_count()) + f32_bytes(kCols), 0, [&] { return a.add(b); });
}
void BM_where(benchmark::State& state) {
  Tensor t = randn(kMat, DType::F32, 1), f = randn(kMat, DType::F32, 2);
  Tensor cond = t.gt(f);  // u8
  run(state, double(t.elem_count()) * (1 + 4 + 4 + 4), 0, [&] { return cond.where_cond(t, f); });
}
void BM_cast_f32_f16(benchmark::State& state) {
  Tensor x = randn(kMat);
  run(state, double(x.elem_count()) * (4 + 2), 0, [&] { return x.to_dtype(DType::F16); });
}
void BM_cast_bf16_f32(benchmark::State& state) {
  Tensor x = randn(kMat, DType::BF16);
  run(state, double(x.elem_count()) * (2 + 4), 0, [&] { return x.to_dtype(DType::F32); });
}
void BM_sum_last_dim(benchmark::State& state) {
  Tensor x = randn(kMat);
  run(state, f32_bytes(x.elem_count() + kRows), 0, [&] { return x.sum({-1}); });
}
void BM_sum_first_dim(benchmark::State& state) {
  Tensor x = randn(kMat);
  run(state, f32_bytes(x.elem_count() + kCols), 0, [&] { return x.sum({0}); });
}
void BM_max_last_dim(benchmark::State& state) {
  Tensor x = randn(kMat);
  run(state, f32_bytes(x.elem_count() + kRows), 0, [&] { return x.max({-1}); });
}
void BM_argmax_last_dim(benchmark::State& state) {
  Tensor x = randn(kMat);
  run(state, f32_bytes(x.elem_count() + kRows), 0, [&] { return x.argmax({-1}); });
}
void BM_softmax_last_dim(benchmark::State& state) {
  Tensor x = randn(kMat);
  run(state, 2 * f32_bytes(x.elem_count()), 0, [&] { return nn::softmax_last_dim(x); });
}
void BM_rms_norm(benchmark::State& state) {
  Tensor x = randn(kMat), alpha = randn({kCols}, DType::F32, 3);
  run(state, 2 * f32_bytes(x.elem_count()), 0, [&] { return nn::rms_norm(x, alpha, 1e-5f); });
}
void BM_matmul(benchmark::State& state) {
  size_t n = size_t(state.range(0));
  DType dt = state.range(1) == 32 ? DType::F32 : DType::BF16;
  Tensor a = randn({n, n}, dt, 1), b = randn({n, n}, dt, 2);
  run(state, 0, 2.0 * double(n) * double(n) * double(n), [&] { return a.matmul(b); });
}
void BM_matmul_batched(benchmark::State& state) {
  // 32 heads of (128 x 64) x (64 x 128): attention-score shaped
  Tensor q = randn({32, 128, 64}, DType::F32, 1), k = randn({32, 64, 128}, DType::F32, 2);
  run(state, 0, 2.0 * 32 * 128 * 128 * 64, [&] { return q.matmul(k); });
}
void BM_conv2d(benchmark::State& state) {
  // ResNet-style 3x3: (1, 64, 56, 56) * (64, 64, 3, 3), padding 1
  Tensor x = randn({1, 64, 56, 56}, DType::F32, 1), w = randn({64, 64, 3, 3}, DType::F32, 2);
  run(state, 0, 2.0 * 64 * 56 * 56 * 64 * 9, [&] { return x.conv2d(w, 1); });
}
void BM_index_select(benchmark::State& state) {
  // embedding lookup: 2048 rows of a (4096, 1024) table
  Tensor table = randn(kMat);
  std::vector<uint32_t> ids(2048);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = uint32_t((i * 2654435761u) % kRows);
  Tensor idx = Tensor::from_vector(ids, {ids.size()});
  run(state, 2 * f32_bytes(ids.size() * kCols), 0, [&] { return table.index_select(idx, 0); });
}
void BM_argsort(benchmark::State& state) {
  Tensor x = randn({1024, 1024});
  run(state, double(x.elem_count()) * (4 + 4), 0, [&] { return x.argsort(true); });
}

#define WICK_BENCH(fn) BENCHMARK(fn)->UseRealTime()->Unit(benchmark::kMicrosecond)
WICK_BENCH(BM_copy_contiguous);
WICK_BENCH(BM_copy_transposed);
WICK_BENCH(BM_affine);
WICK_BENCH(BM_unary_exp);
WICK_BENCH(BM_binary_add);
WICK_BENCH(BM_binary_add_broadcast_row);
WICK_BENCH(BM_where);
WICK_BENCH(BM_cast_f32_f16);
WICK_BENCH(BM_cast_bf16_f32);
WICK_BENCH(BM_sum_last_dim);
WICK_BENCH(BM_sum_first_dim);
WICK_BENCH(BM_max_last_dim);
WICK_BENCH(BM_argmax_last_dim);
WICK_BENCH(BM_softmax_last_dim);
WICK_BENCH(BM_rms_norm);
WICK_BENCH(BM_matmul)->Args({256, 32})->Args({1024, 32})->Args({512, 16})->ArgNames({"n", "bits"});
WICK_BENCH(BM_matmul_batched);
WICK_BENCH(BM_conv2d);
WICK_BENCH(BM_index_select);
WICK_BENCH(BM_argsort);

}  // namespace
}  // namespace wick
