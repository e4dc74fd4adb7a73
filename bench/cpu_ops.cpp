// CPU benchmarks (Google Benchmark, wall-clock time: the backend runs on several
// threads, options().cpu_threads / WICK_NUM_THREADS). Names BM_Cpu<Op>/<variant>;
// bench/cpu_compare.py times PyTorch CPU on the same cases in the same run, one line
// of its table per case, so a case added here is added there too.
//
// Shapes: the memory-bound ops work on 2^26 elements or [8192, 8192] (256 MiB of f32,
// beyond every cache) and, where `wick bench` has the case, on its shape; GEMM and
// convolution at the sizes of the CPU targets (docs/PERFORMANCE.md). Bytes count each
// input read once and the output written once; the quantized mat-vec counts the
// weight bytes only (its figure is set against add's GB/s). FLOP/s counts 2 per
// multiply-add. An op that throws marks its case as an error instead of aborting.
#include <benchmark/benchmark.h>

#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "bench_util.h"
#include "wick/quant.h"
#include "wick/tensor.h"

namespace wick {
namespace {

constexpr size_t kN26 = size_t(1) << 26;
const Shape kSq8k{8192, 8192};
const Shape kSq4k{4096, 4096};

using namespace bench;

double nbytes(const Tensor& t) { return double(t.elem_count() * dtype_size(t.dtype())); }

// ---- memory-bound ops ---------------------------------------------------------------
void BM_CpuCopy(benchmark::State& state) {
  Tensor x = randn({kN26});
  run(state, 2 * nbytes(x), 0, [&] { return x.copy(); });
}
void BM_CpuCopyTransposed(benchmark::State& state) {
  Tensor x = randn(kSq4k).t();
  run(state, 2 * nbytes(x), 0, [&] { return x.contiguous(); });
}
void BM_CpuAffine(benchmark::State& state) {
  Tensor x = randn(kSq4k);
  run(state, 2 * nbytes(x), 0, [&] { return x.affine(1.5, -2.25); });
}
void BM_CpuExp(benchmark::State& state, DType dt) {
  Tensor x = randn({kN26}, dt);
  run(state, 2 * nbytes(x), 0, [&] { return x.exp(); });
}
void BM_CpuSilu(benchmark::State& state, DType dt) {
  Tensor x = randn({kN26}, dt);
  run(state, 2 * nbytes(x), 0, [&] { return x.silu(); });
}
void BM_CpuAdd(benchmark::State& state, DType dt) {
  Tensor a = randn(kSq4k, dt, 1), b = randn(kSq4k, dt, 2);
  run(state, 3 * nbytes(a), 0, [&] { return a.add(b); });
}
void BM_CpuBroadcastAdd(benchmark::State& state) {
  Tensor a = randn(kSq4k, DType::F32, 1), b = randn({kSq4k[1]}, DType::F32, 2);
  run(state, 2 * nbytes(a) + nbytes(b), 0, [&] { return a.add(b); });
}
void BM_CpuWhere(benchmark::State& state) {
  Tensor t = randn(kSq4k, DType::F32, 1), f = randn(kSq4k, DType::F32, 2);
  Tensor cond = t.gt(f);  // u8
  run(state, double(t.elem_count()) * (1 + 4 + 4 + 4), 0, [&] { return cond.where_cond(t, f); });
}
// Casts of [8192, 8192].
void BM_CpuCast(benchmark::State& state, DType from, DType to) {
  Tensor x = randn(kSq8k, from);
  run(state, double(x.elem_count()) * double(dtype_size(from) + dtype_size(to)), 0,
      [&] { return x.to_dtype(to); });
}
void BM_CpuSum(benchmark::State& state, DType dt) {  // over the last dim
  Tensor x = randn(kSq8k, dt);
  run(state, nbytes(x) + double(kSq8k[0] * dtype_size(x.dtype())), 0, [&] { return x.sum({-1}); });
}
void BM_CpuSumFirstDim(benchmark::State& state) {
  Tensor x = randn(kSq8k);
  run(state, nbytes(x) + double(kSq8k[1] * 4), 0, [&] { return x.sum({0}); });
}
void BM_CpuMax(benchmark::State& state, DType dt) {  // over the last dim, [2048, 4096] as `wick bench`
  Tensor x = randn({2048, 4096}, dt);
  run(state, nbytes(x) + 2048.0 * double(dtype_size(x.dtype())), 0, [&] { return x.max({-1}); });
}
void BM_CpuArgmax(benchmark::State& state, DType dt) {
  Tensor x = randn({2048, 4096}, dt);
  run(state, nbytes(x) + 2048.0 * 4, 0, [&] { return x.argmax({-1}); });
}
void BM_CpuCumsum(benchmark::State& state) {  // along the last dim
  Tensor x = randn(kSq4k);
  run(state, 2 * nbytes(x), 0, [&] { return x.cumsum(-1); });
}
void BM_CpuSoftmax(benchmark::State& state, DType dt) {  // over the last dim
  Tensor x = randn(kSq8k, dt);
  run(state, 2 * nbytes(x), 0, [&] { return nn::softmax_last_dim(x); });
}
void BM_CpuRmsNorm(benchmark::State& state, DType dt) {
  Tensor x = randn(kSq4k, dt), alpha = randn({kSq4k[1]}, dt, 3);
  run(state, 2 * nbytes(x), 0, [&] { return nn::rms_norm(x, alpha, 1e-5f); });
}
void BM_CpuLayerNorm(benchmark::State& state) {
  Tensor x = randn(kSq4k), alpha = randn({kSq4k[1]}, DType::F32, 3), beta = randn({kSq4k[1]}, DType::F32, 4);
  run(state, 2 * nbytes(x), 0, [&] { return nn::layer_norm(x, alpha, beta, 1e-5f); });
}
void BM_CpuIndexSelect(benchmark::State& state, DType dt) {
  // an embedding lookup as `wick bench`: 4096 rows of a [16384, 1024] table
  Tensor table = randn({16384, 1024}, dt);
  std::vector<uint32_t> ids(4096);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = uint32_t((i * 2654435761u) % 16384);
  Tensor idx = Tensor::from_vector(ids, {ids.size()});
  run(state, 2.0 * 4096 * 1024 * double(dtype_size(dt)) + 4096 * 4, 0,
      [&] { return table.index_select(idx, 0); });
}
void BM_CpuArgsort(benchmark::State& state) {  // ascending, [1024, 4096] as `wick bench`
  Tensor x = randn({1024, 4096});
  run(state, double(x.elem_count()) * (4 + 4), 0, [&] { return x.argsort(true); });
}

// ---- GEMM, mat-vec, convolution -------------------------------------------------------
void BM_CpuMatmul(benchmark::State& state, DType dt) {  // 2048^3
  const size_t n = 2048;
  Tensor a = randn({n, n}, dt, 1), b = randn({n, n}, dt, 2);
  run(state, 0, 2.0 * double(n) * double(n) * double(n), [&] { return a.matmul(b); });
}
void BM_CpuLinear(benchmark::State& state, DType dt) {
  // x [512, 4096] times the transpose of a weight [4096, 4096]: a prompt of 512 tokens
  // through a linear layer (k runs down the columns of the right operand)
  const size_t t = 512, n = 4096, k = 4096;
  Tensor x = randn({t, k}, dt, 1), w = randn({n, k}, dt, 2);
  run(state, 0, 2.0 * double(t) * double(n) * double(k), [&] { return x.matmul(w.t()); });
}
void BM_CpuMatVec(benchmark::State& state, DType dt) {
  // x [1, 4096] times the transpose of a dense weight [14336, 4096] (a linear layer)
  const size_t n = 14336, k = 4096;
  Tensor x = randn({1, k}, dt, 1), w = randn({n, k}, dt, 2);
  std::vector<Tensor> wts{w.t()};
  while (wts.size() < copies_for(nbytes(w))) wts.push_back(w.copy().t());
  size_t i = 0;
  run(state, nbytes(w), 2.0 * double(n) * double(k), [&] { return x.matmul(wts[i++ % wts.size()]); });
}
void BM_CpuMatmulBatched(benchmark::State& state) {
  // 32 heads of (128 x 64) x (64 x 128): attention-score shaped
  Tensor q = randn({32, 128, 64}, DType::F32, 1), k = randn({32, 64, 128}, DType::F32, 2);
  run(state, 0, 2.0 * 32 * 128 * 128 * 64, [&] { return q.matmul(k); });
}
void BM_CpuConv2d(benchmark::State& state) {
  // x [8, 64, 64, 64], kernel [128, 64, 3, 3], padding 1
  Tensor x = randn({8, 64, 64, 64}, DType::F32, 1), w = randn({128, 64, 3, 3}, DType::F32, 2);
  run(state, 0, 2.0 * 8 * 128 * 64 * 64 * 64 * 9, [&] { return x.conv2d(w, 1); });
}

// ---- quantized mat-vec ------------------------------------------------------------------
// x [1, 4096] f32 times a quantized weight [14336, 4096].
// The weight is a [256, 4096] random matrix quantized once and tiled to 14336 rows
// (quantizing 58M elements per case would dominate the run). Bytes: the weight's.
void BM_CpuQMatVec(benchmark::State& state, GgmlType t) {
  const size_t n = 14336, k = 4096, tile = 256;
  const QTensor part = QTensor::quantize(randn({tile, k}, DType::F32, 2), t);
  const std::vector<uint8_t> bytes = part.to_host_bytes();
  std::vector<uint8_t> all(bytes.size() * (n / tile));
  for (size_t i = 0; i < n / tile; ++i)
    std::memcpy(all.data() + i * bytes.size(), bytes.data(), bytes.size());
  std::vector<QTensor> ws;
  while (ws.size() < copies_for(double(all.size())))
    ws.push_back(QTensor::from_bytes(t, Shape{n, k}, all.data(), all.size()));
  Tensor x = randn({1, k}, DType::F32, 1);
  size_t i = 0;
  run(state, double(all.size()), 2.0 * double(n) * double(k),
      [&] { return qmatmul(x, ws[i++ % ws.size()]); });
}

// Registered by name (BM_CpuExp/bf16), the names bench/cpu_compare.py lists.
template <class F, class... A>
void add(const std::string& name, F fn, A... args) {
  benchmark::RegisterBenchmark(name.c_str(), fn, args...)->UseRealTime()->Unit(benchmark::kMillisecond);
}
std::string dt_name(DType dt) { return std::string(dtype_name(dt)); }

const int kRegistered = [] {
  const DType f32 = DType::F32, f16 = DType::F16, bf16 = DType::BF16;
  add("BM_CpuCopy/f32", BM_CpuCopy);
  add("BM_CpuCopyTransposed/f32", BM_CpuCopyTransposed);
  add("BM_CpuAffine/f32", BM_CpuAffine);
  for (DType dt : {f32, bf16, f16}) {
    add("BM_CpuExp/" + dt_name(dt), BM_CpuExp, dt);
    add("BM_CpuSilu/" + dt_name(dt), BM_CpuSilu, dt);
  }
  for (DType dt : {f32, bf16}) add("BM_CpuAdd/" + dt_name(dt), BM_CpuAdd, dt);
  add("BM_CpuBroadcastAdd/f32", BM_CpuBroadcastAdd);
  add("BM_CpuWhere/f32", BM_CpuWhere);
  for (auto [from, to] : {std::pair{f32, f16}, {f16, f32}, {f32, bf16}, {bf16, f32}})
    add("BM_CpuCast/" + dt_name(from) + "_" + dt_name(to), BM_CpuCast, from, to);
  for (DType dt : {f32, bf16, f16}) {
    add("BM_CpuSum/" + dt_name(dt), BM_CpuSum, dt);
    add("BM_CpuMax/" + dt_name(dt), BM_CpuMax, dt);
    add("BM_CpuArgmax/" + dt_name(dt), BM_CpuArgmax, dt);
  }
  add("BM_CpuSumFirstDim/f32", BM_CpuSumFirstDim);
  add("BM_CpuCumsum/f32", BM_CpuCumsum);
  for (DType dt : {f32, bf16}) {
    add("BM_CpuSoftmax/" + dt_name(dt), BM_CpuSoftmax, dt);
    add("BM_CpuRmsNorm/" + dt_name(dt), BM_CpuRmsNorm, dt);
  }
  add("BM_CpuLayerNorm/f32", BM_CpuLayerNorm);
  for (DType dt : {f32, f16}) add("BM_CpuIndexSelect/" + dt_name(dt), BM_CpuIndexSelect, dt);
  add("BM_CpuArgsort/f32", BM_CpuArgsort);
  for (DType dt : {f32, bf16, f16}) {
    add("BM_CpuMatmul/" + dt_name(dt), BM_CpuMatmul, dt);
    add("BM_CpuMatVec/" + dt_name(dt), BM_CpuMatVec, dt);
    add("BM_CpuLinear/" + dt_name(dt), BM_CpuLinear, dt);
  }
  add("BM_CpuMatmulBatched/f32", BM_CpuMatmulBatched);
  add("BM_CpuConv2d/f32", BM_CpuConv2d);
  for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::Q8_0})
    add("BM_CpuQMatVec/" + std::string(ggml_type_name(t)), BM_CpuQMatVec, t);
  return 0;
}();

}  // namespace
}  // namespace wick
