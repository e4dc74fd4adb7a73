// The CPU backend's compute-bound and weight-streaming cases (Google Benchmark, wall
// clock): dense mat-vec and GEMM in f32/f16/bf16, a conv2d layer, and the quantized
// mat-vec of an 8B model's FFN shape. Mat-vecs report the matrix's bytes per second;
// GEMM and conv2d report FLOP/s (2 per multiply-add). The cases set beside PyTorch
// (bench/cpu_compare.py) are bench/cpu_ops.cpp's; these add the column mat-vec
// (w [n, k] times x [k, 1]), bf16 convolution and the quantized batches 8 and 512.
// The mat-vecs cycle through copies of the matrix that together span at least 256 MB,
// so every call reads it from DRAM, not from a server CPU's L3 (tens of MB, larger
// than a quantized [14336 x 4096]).
#include <benchmark/benchmark.h>

#include <functional>
#include <string>
#include <vector>

#include "bench_util.h"
#include "wick/quant.h"
#include "wick/tensor.h"

namespace wick {
namespace {

using namespace bench;

// The FFN projection of an 8B llama: [14336 x 4096].
constexpr size_t kFfn = 14336, kModel = 4096;

DType dtype_arg(int64_t bits) { return bits == 32 ? DType::F32 : bits == 16 ? DType::F16 : DType::BF16; }

// w [14336, 4096] times x [4096, 1] (bits: 32 f32, 16 f16, 0 bf16).
void BM_cpu_matvec(benchmark::State& state) {
  const DType dt = dtype_arg(state.range(0));
  const double bytes = double(kFfn * kModel * dtype_size(dt));
  std::vector<Tensor> ws{randn({kFfn, kModel}, dt, 1)};
  while (ws.size() < copies_for(bytes)) ws.push_back(ws[0].copy());
  Tensor x = randn({kModel, 1}, dt, 2);
  size_t i = 0;
  run(state, bytes, 0, [&] { return ws[i++ % ws.size()].matmul(x); });
}

// [2048, 2048] x [2048, 2048].
void BM_cpu_matmul_2048(benchmark::State& state) {
  const size_t n = 2048;
  const DType dt = dtype_arg(state.range(0));
  Tensor a = randn({n, n}, dt, 1), b = randn({n, n}, dt, 2);
  run(state, 0, 2.0 * double(n) * double(n) * double(n), [&] { return a.matmul(b); });
}

// x [8, 64, 64, 64] * w [128, 64, 3, 3], padding 1.
void BM_cpu_conv2d(benchmark::State& state) {
  const DType dt = dtype_arg(state.range(0));
  Tensor x = randn({8, 64, 64, 64}, dt, 1), w = randn({128, 64, 3, 3}, dt, 2);
  run(state, 0, 2.0 * 8 * 128 * 64 * 64 * 64 * 9, [&] { return x.conv2d(w, 1); });
}

// qmatmul of x [kBatch, 4096] f32 with a quantized [14336, 4096] weight; bytes: the weight's.
template <size_t kBatch>
void BM_cpu_qmatvec(benchmark::State& state) {
  const auto t = GgmlType(state.range(0));
  const size_t batch = kBatch;
  std::vector<QTensor> ws{QTensor::quantize(randn({kFfn, kModel}, DType::F32, 1), t)};
  const std::vector<uint8_t> bytes = ws[0].to_host_bytes();
  while (ws.size() < copies_for(double(bytes.size())))
    ws.push_back(QTensor::from_bytes(t, ws[0].shape(), bytes.data(), bytes.size()));
  Tensor x = randn({batch, kModel}, DType::F32, 2);
  state.SetLabel(std::string(ggml_type_name(t)));
  size_t i = 0;
  run(state, double(bytes.size()), 0, [&] { return qmatmul(x, ws[i++ % ws.size()]); });
}

// Names have two parts ("BM_x/arg:v") as bench/compare_common.py keys them.
#define WICK_BENCH(...) BENCHMARK(__VA_ARGS__)->UseRealTime()->Unit(benchmark::kMicrosecond)
WICK_BENCH(BM_cpu_matvec)->Arg(0)->Arg(16)->Arg(32)->ArgName("bits");
WICK_BENCH(BM_cpu_matmul_2048)->Arg(0)->Arg(16)->Arg(32)->ArgName("bits");
WICK_BENCH(BM_cpu_conv2d)->Arg(32)->Arg(0)->ArgName("bits");
constexpr int64_t kQ4_0 = int64_t(GgmlType::Q4_0), kQ4_K = int64_t(GgmlType::Q4_K),
                  kQ6_K = int64_t(GgmlType::Q6_K), kQ8_0 = int64_t(GgmlType::Q8_0);
WICK_BENCH(BM_cpu_qmatvec<1>)->Arg(kQ4_0)->Arg(kQ4_K)->Arg(kQ6_K)->Arg(kQ8_0)->ArgName("type");
WICK_BENCH(BM_cpu_qmatvec<8>)->Arg(kQ4_0)->Arg(kQ4_K)->ArgName("type");
WICK_BENCH(BM_cpu_qmatvec<512>)->Arg(kQ4_0)->Arg(kQ4_K)->ArgName("type");

}  // namespace
}  // namespace wick
