// The GPU QUANTIZED module against the CPU reference: dequantize of every ggml type
// to f32/f16/bf16 equal to the CPU (within 1 ulp), a hand-built Q4_0 block, and
// qmatmul through both paths (int8 mat-vec on Q8_1 activations, dequantize + GEMM)
// within NMSE 5e-4 of the CPU's qmatmul. The mat-vec has three kernel families,
// each reached here by the inputs that select it (src/backend/gpu/quantized.cpp):
//   mmvqw  batch 1 of Q4_0, Q8_0, Q4_K or Q6_K whose rows are whole 16-byte words
//          and k a multiple of its round (1024 columns; 2048 for Q4_K and Q6_K);
//   mmvqs  those four types otherwise (batch 2..8, or k not a multiple of the round);
//   mmvq   every other quantized type (the generic kernels).
// Skips with the reason printed when no GPU is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "wick/check.h"
#include "wick/options.h"
#include "wick/quant.h"
#include "wick/tensor.h"

namespace wick {
namespace {

#define REQUIRE_GPU()                                                                                     \
  do {                                                                                                    \
    std::string why_;                                                                                     \
    if (!check::device_present(Device::gpu(0), &why_)) GTEST_SKIP() << "no GPU backend/device: " << why_; \
  } while (0)

const Device kGpu = Device::gpu(0);

std::vector<float> normal_values(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Distance in units in the last place between two floats of the same sign class.
int64_t ulp_distance(float a, float b) {
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  if (ia < 0) ia = int32_t(0x80000000u) - ia;
  if (ib < 0) ib = int32_t(0x80000000u) - ib;
  return std::llabs(int64_t(ia) - int64_t(ib));
}

// sum (a - b)^2 / sum b^2, in float64.
double nmse(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (double(a[i]) - double(b[i])) * (double(a[i]) - double(b[i]));
    den += double(b[i]) * double(b[i]);
  }
  return den > 0 ? num / den : num;
}

class GpuDequantize : public ::testing::TestWithParam<GgmlType> {};

TEST_P(GpuDequantize, EqualsTheCpuForEveryOutputDtype) {
  REQUIRE_GPU();
  const GgmlType t = GetParam();
  const size_t rows = 3, k = 512;
  Tensor x = Tensor::from_vector(normal_values(rows * k, 7), Shape{rows, k});
  QTensor q_cpu = QTensor::quantize(x, t);
  QTensor q_gpu = q_cpu.to_device(kGpu);
  ASSERT_EQ(q_gpu.to_host_bytes(), q_cpu.to_host_bytes());
  const std::vector<float> c32 = q_cpu.dequantize(DType::F32).to_vector<float>();
  const std::vector<float> g32 = q_gpu.dequantize(DType::F32).to_vector<float>();
  ASSERT_EQ(g32.size(), rows * k);
  size_t exact = 0;
  for (size_t i = 0; i < c32.size(); ++i) {
    ASSERT_LE(ulp_distance(g32[i], c32[i]), 1)
        << ggml_type_name(t) << " element " << i << ": gpu " << g32[i] << " cpu " << c32[i];
    exact += g32[i] == c32[i];
  }
  if (exact != c32.size())
    std::printf("%s -> f32: %zu of %zu bit-exact (the rest 1 ulp)\n", std::string(ggml_type_name(t)).c_str(),
                exact, c32.size());
  // f16/bf16: the CPU's f32 values rounded once; where the f32 values differ by
  // an ulp, the GPU's own f32 value rounded once is also accepted.
  for (DType dt : {DType::F16, DType::BF16}) {
    Tensor g = q_gpu.dequantize(dt);
    ASSERT_EQ(g.device(), kGpu);
    ASSERT_EQ(g.dtype(), dt);
    ASSERT_EQ(g.dims(), (std::vector<size_t>{rows, k}));
    const std::vector<float> gv = g.to_dtype(DType::F32).to_vector<float>();
    const std::vector<float> cv = q_cpu.dequantize(dt).to_dtype(DType::F32).to_vector<float>();
    const std::vector<float> alt =
        Tensor::from_vector(g32, Shape{rows * k}).to_dtype(dt).to_dtype(DType::F32).to_vector<float>();
    for (size_t i = 0; i < cv.size(); ++i) {
      ASSERT_TRUE(gv[i] == cv[i] || (g32[i] != c32[i] && gv[i] == alt[i]))
          << ggml_type_name(t) << " -> " << dtype_name(dt) << " element " << i << ": gpu " << gv[i] << " cpu "
          << cv[i];
    }
  }
}

TEST_P(GpuDequantize, F64OutputIsTheF32ValuesWidened) {
  REQUIRE_GPU();
  const GgmlType t = GetParam();
  Tensor x = Tensor::from_vector(normal_values(256, 11), Shape{1, 256});
  QTensor q = QTensor::quantize(x, t);
  const std::vector<double> g = q.to_device(kGpu).dequantize(DType::F64).to_vector<double>();
  const std::vector<float> c = q.dequantize(DType::F32).to_vector<float>();
  ASSERT_EQ(g.size(), c.size());
  for (size_t i = 0; i < c.size(); ++i) ASSERT_LE(ulp_distance(float(g[i]), c[i]), 1) << i;
}

INSTANTIATE_TEST_SUITE_P(AllTypes, GpuDequantize, ::testing::ValuesIn(kAllGgmlTypes),
                         [](const ::testing::TestParamInfo<GgmlType>& i) {
                           return std::string(ggml_type_name(i.param));
                         });

TEST(GpuDequantizeQ4_0, HandBuiltBlockGivesHandComputedValues) {
  REQUIRE_GPU();
  // d = 0.5 (f16 0x3800); qs[j] = low nibble j % 16, high nibble 15 - j % 16.
  // Element j < 16: (j - 8) * 0.5; element j + 16: (15 - j - 8) * 0.5.
  std::vector<uint8_t> blk(18);
  blk[0] = 0x00;
  blk[1] = 0x38;
  for (int j = 0; j < 16; ++j) blk[2 + j] = uint8_t(j | ((15 - j) << 4));
  QTensor q = QTensor::from_bytes(GgmlType::Q4_0, Shape{1, 32}, blk.data(), blk.size(), kGpu);
  const std::vector<float> y = q.dequantize().to_vector<float>();
  ASSERT_EQ(y.size(), 32u);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], float(j - 8) * 0.5f) << j;
    EXPECT_EQ(y[j + 16], float(7 - j) * 0.5f) << j;
  }
}

struct QmmCase {
  GgmlType type;
  QMatmulPath path;
  size_t m;
};

std::string path_name(QMatmulPath p) {
  return p == QMatmulPath::Auto ? "auto" : p == QMatmulPath::MatVec ? "matvec" : "gemm";
}

class GpuQmatmul : public ::testing::TestWithParam<QmmCase> {};

TEST_P(GpuQmatmul, IsWithinNmse5e4OfTheCpu) {
  REQUIRE_GPU();
  const QmmCase c = GetParam();
  // k = 768 is not a multiple of the 512-element row padding; n = 67 leaves a
  // partial block of rows.
  const size_t n = 67, k = 768;
  QTensor w = QTensor::quantize(Tensor::from_vector(normal_values(n * k, 3), Shape{n, k}), c.type);
  Tensor x = Tensor::from_vector(normal_values(c.m * k, 5), Shape{c.m, k});
  const std::vector<float> want = qmatmul(x, w).to_vector<float>();
  Tensor got = qmatmul(x.to_device(kGpu), w.to_device(kGpu), c.path);
  ASSERT_EQ(got.device(), kGpu);
  ASSERT_EQ(got.dims(), (std::vector<size_t>{c.m, n}));
  const double e = nmse(got.to_vector<float>(), want);
  EXPECT_LE(e, 5e-4) << ggml_type_name(c.type) << " " << path_name(c.path) << " m=" << c.m;
}

std::vector<QmmCase> qmm_cases() {
  std::vector<QmmCase> v;
  for (GgmlType t : kAllGgmlTypes) {
    for (size_t m : {1, 3, 8, 13}) {
      v.push_back({t, QMatmulPath::DequantGemm, m});
      if (ggml_is_quantized(t)) v.push_back({t, QMatmulPath::MatVec, m});
    }
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(AllTypes, GpuQmatmul, ::testing::ValuesIn(qmm_cases()),
                         [](const ::testing::TestParamInfo<QmmCase>& i) {
                           return std::string(ggml_type_name(i.param.type)) + "_" + path_name(i.param.path) +
                                  "_m" + std::to_string(i.param.m);
                         });

// f32 -> bf16 -> f64, rounding to nearest even (the test's own rounding).
double bf16_round(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  float r;
  std::memcpy(&r, &u, 4);
  return double(r);
}

// Above 8 rows Auto is the bf16 GEMM: x and the dequantized weight rounded to bf16,
// their products summed in f32. The float64 sum of the rounded operands bounds it
// tightly; the unrounded product is further away than that bound.
TEST(GpuQmatmulPath, AutoTakesTheMatVecUpTo8RowsAndTheBf16GemmAbove) {
  REQUIRE_GPU();
  const size_t n = 40, k = 256;
  const QTensor wc =
      QTensor::quantize(Tensor::from_vector(normal_values(n * k, 21), Shape{n, k}), GgmlType::Q4_K);
  const QTensor w = wc.to_device(kGpu);
  const std::vector<float> wd = wc.dequantize().to_vector<float>();
  for (size_t m : {size_t(1), kQMatVecMaxBatch, kQMatVecMaxBatch + 1, size_t(64)}) {
    const std::vector<float> xv = normal_values(m * k, 22);
    Tensor x = Tensor::from_vector(xv, Shape{m, k}, kGpu);
    const std::vector<float> got = qmatmul(x, w).to_vector<float>();
    // Each path is deterministic: Auto must reproduce the chosen one bit for bit.
    if (m <= kQMatVecMaxBatch) {
      EXPECT_EQ(got, qmatmul(x, w, QMatmulPath::MatVec).to_vector<float>()) << "m=" << m;
      continue;
    }
    double worst_rounded = 0, worst_exact = 0;
    for (size_t i = 0; i < m; ++i)
      for (size_t j = 0; j < n; ++j) {
        double rounded = 0, exact = 0, scale = 0;
        for (size_t c = 0; c < k; ++c) {
          const double xr = bf16_round(xv[i * k + c]), wr = bf16_round(wd[j * k + c]);
          rounded += xr * wr;
          exact += double(xv[i * k + c]) * wd[j * k + c];
          scale += std::fabs(xr * wr);
        }
        const double g = got[i * n + j];
        worst_rounded = std::max(worst_rounded, std::fabs(g - rounded) / scale);
        worst_exact = std::max(worst_exact, std::fabs(g - exact) / scale);
      }
    EXPECT_LE(worst_rounded, 1e-5) << "m=" << m << ": f32 sums of the bf16 operands";
    EXPECT_GT(worst_exact, 1e-4) << "m=" << m << ": the operands are rounded to bf16";
  }
}

// The fused mat-vecs of one f32 row (mmvqw's add-norm and SwiGLU rows) for each type
// with a wide plan: the sum is x + r exactly; the product matches the CPU's (the ops
// one by one) within MatVec's rounding and the GPU's unfused ops closely. A row that
// is not 16-byte aligned takes the ops one by one and gives their result exactly.
TEST(GpuQmatmulFused, WideRowsMatchTheOpsOneByOne) {
  REQUIRE_GPU();
  const size_t n = 67, k = 4096;
  const float eps = 1e-6f;
  const std::vector<float> xv = normal_values(k, 31), rv = normal_values(k, 32), av = normal_values(k, 33);
  std::vector<float> sum(k);
  for (size_t i = 0; i < k; ++i) sum[i] = xv[i] + rv[i];
  const Tensor x = Tensor::from_vector(xv, Shape{1, k}), r = Tensor::from_vector(rv, Shape{1, k}),
               a = Tensor::from_vector(av, Shape{k});
  const Tensor xg = x.to_device(kGpu), rg = r.to_device(kGpu), ag = a.to_device(kGpu);
  // x one element into a longer row: a contiguous row 4 bytes off a 16-byte boundary
  const Tensor xu = Tensor::cat({Tensor::zeros(Shape{1, 1}), x}, 1).to_device(kGpu).narrow(1, 1, k);
  for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K}) {
    SCOPED_TRACE(ggml_type_name(t));
    const QTensor w = QTensor::quantize(Tensor::from_vector(normal_values(n * k, 34), Shape{n, k}), t);
    const QTensor wg = w.to_device(kGpu);
    auto [s, y] = add_rms_norm_qmatmul(xg, rg, ag, eps, wg);
    EXPECT_EQ(s.to_vector<float>(), sum);
    ASSERT_EQ(y.shape(), (Shape{1, n}));
    const std::vector<float> got = y.to_vector<float>();
    EXPECT_LE(nmse(got, add_rms_norm_qmatmul(x, r, a, eps, w).second.to_vector<float>()), 5e-4);
    const Tensor h = nn::add_rms_norm(xg, rg, ag, eps).second;
    EXPECT_LE(nmse(got, qmatmul(h, wg, QMatmulPath::MatVec).to_vector<float>()), 1e-6);
    const Tensor hu = nn::add_rms_norm(xu, rg, ag, eps).second;
    EXPECT_EQ(add_rms_norm_qmatmul(xu, rg, ag, eps, wg).second.to_vector<float>(),
              qmatmul(hu, wg, QMatmulPath::MatVec).to_vector<float>());

    const std::vector<float> got_s = swiglu_qmatmul(xg, rg, wg).to_vector<float>();
    EXPECT_LE(nmse(got_s, swiglu_qmatmul(x, r, w).to_vector<float>()), 5e-4);
    EXPECT_LE(nmse(got_s, qmatmul(nn::swiglu(xg, rg), wg, QMatmulPath::MatVec).to_vector<float>()), 1e-6);
    EXPECT_EQ(swiglu_qmatmul(xu, rg, wg).to_vector<float>(),
              qmatmul(nn::swiglu(xu, rg), wg, QMatmulPath::MatVec).to_vector<float>());
  }
}

// The generic kernels on rows of k = 2048 (several 16-element steps per thread of a
// row) for n = 45 (a partial block of rows) and 1 and 3 rows of x.
TEST(GpuQmatmulGeneric, LongRowsGiveTheCpuResult) {
  REQUIRE_GPU();
  const size_t n = 45, k = 2048;
  for (GgmlType t : {GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q3_K, GgmlType::Q5_K}) {
    QTensor w = QTensor::quantize(Tensor::from_vector(normal_values(n * k, 51), Shape{n, k}), t);
    QTensor wg = w.to_device(kGpu);
    for (size_t m : {size_t(1), size_t(3)}) {
      Tensor x = Tensor::from_vector(normal_values(m * k, 52), Shape{m, k});
      const std::vector<float> want = qmatmul(x, w).to_vector<float>();
      const std::vector<float> got = qmatmul(x.to_device(kGpu), wg, QMatmulPath::MatVec).to_vector<float>();
      EXPECT_LE(nmse(got, want), 5e-4) << ggml_type_name(t) << " m=" << m;
    }
  }
}

// At a bench-like k = 4352 (17 * 256: a multiple of neither the 512 padding nor
// mmvqw's round; more slices per row than a wave has lanes, so several steps per
// row) Q4_0, Q8_0, Q4_K and Q6_K take mmvqs and Q4_1 and Q5_K the generic kernels:
// each within NMSE 5e-4 of the CPU, for n = 70 (a partial block of rows) with 1, 3
// and 8 rows of x, and n = 4500 with one row.
TEST(GpuQmatmulKernels, SplitAndGenericKernelsGiveTheCpuResultAtABenchLikeK) {
  REQUIRE_GPU();
  const size_t k = 4352;
  struct Case {
    size_t n, m;
  };
  for (GgmlType t :
       {GgmlType::Q4_0, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::Q4_1, GgmlType::Q5_K}) {
    for (Case c : {Case{70, 1}, Case{70, 3}, Case{70, 8}, Case{4500, 1}}) {
      QTensor w = QTensor::quantize(Tensor::from_vector(normal_values(c.n * k, 61), Shape{c.n, k}), t);
      Tensor x = Tensor::from_vector(normal_values(c.m * k, 62), Shape{c.m, k});
      const std::vector<float> want = qmatmul(x, w).to_vector<float>();
      const std::vector<float> got =
          qmatmul(x.to_device(kGpu), w.to_device(kGpu), QMatmulPath::MatVec).to_vector<float>();
      EXPECT_LE(nmse(got, want), 5e-4) << ggml_type_name(t) << " n=" << c.n << " m=" << c.m;
    }
  }
}

// One Q4_0 block (d = 0.5, quant j of the block = j % 16 for j < 16, 15 - j % 16
// above; a row of 32 is shorter than mmvqw's round: mmvqs) and one Q4_1 block (the
// same quants, d = 0.5, m = -4: the generic kernel) against x of integers whose
// largest magnitude is 127, so the Q8_1 activations are x itself (d = 1) and its
// f16 block sum (432) is exact: the mat-vec is exact, sum_j (d * q_j + min) * x_j
// (min = -8 d for Q4_0, m for Q4_1), computed here in float64.
TEST(GpuQmatmulKernels, HandBuiltBlocksGiveTheExactDot) {
  REQUIRE_GPU();
  std::vector<float> xv(32);
  for (int j = 0; j < 32; ++j) xv[size_t(j)] = j % 2 ? 127.f : -100.f;
  Tensor x = Tensor::from_vector(xv, Shape{1, 32}, kGpu);
  auto quant = [](int j) { return j < 16 ? j : 15 - (j - 16); };
  {
    std::vector<uint8_t> blk(18);
    blk[0] = 0x00;
    blk[1] = 0x38;  // f16 0.5
    for (int j = 0; j < 16; ++j) blk[2 + j] = uint8_t(j | ((15 - j) << 4));
    QTensor w = QTensor::from_bytes(GgmlType::Q4_0, Shape{1, 32}, blk.data(), blk.size(), kGpu);
    double want = 0;
    for (int j = 0; j < 32; ++j) want += 0.5 * double(quant(j) - 8) * double(xv[size_t(j)]);
    const std::vector<float> got = qmatmul(x, w, QMatmulPath::MatVec).to_vector<float>();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(double(got[0]), want) << "q4_0 (mmvqs)";
  }
  {
    std::vector<uint8_t> blk(20);
    blk[0] = 0x00;
    blk[1] = 0x38;  // d: f16 0.5
    blk[2] = 0x00;
    blk[3] = 0xC4;  // m: f16 -4
    for (int j = 0; j < 16; ++j) blk[4 + j] = uint8_t(j | ((15 - j) << 4));
    QTensor w = QTensor::from_bytes(GgmlType::Q4_1, Shape{1, 32}, blk.data(), blk.size(), kGpu);
    double want = 0;
    for (int j = 0; j < 32; ++j) want += (0.5 * double(quant(j)) - 4.0) * double(xv[size_t(j)]);
    const std::vector<float> got = qmatmul(x, w, QMatmulPath::MatVec).to_vector<float>();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(double(got[0]), want) << "q4_1 (generic mmvq)";
  }
}

// sum_i w_i * xq_i in float64: the dequantized weight row against x quantized to
// Q8_1 by the CPU (and dequantized), which is what the GPU mat-vec kernels compute
// up to rounding. The CPU's own qmatmul quantizes x for the K-quants to Q8_K
// instead, so for ONE output the two differ by more than 5e-4 NMSE at times (q4_K,
// k = 4096, bf16 x: 1.9e-3); over many outputs they agree within it.
double q8_1_dot(const QTensor& w_row, const Tensor& x_f32) {
  const std::vector<float> wd = w_row.dequantize(DType::F32).to_vector<float>();
  const std::vector<float> xq =
      QTensor::quantize(x_f32, GgmlType::Q8_1).dequantize(DType::F32).to_vector<float>();
  double s = 0;
  for (size_t i = 0; i < wd.size(); ++i) s += double(wd[i]) * double(xq[i]);
  return s;
}

// x starting 4 bytes past a 16-byte boundary (a narrowed row) takes the scalar
// activation loads: k = 4096 through mmvqw, k = 3584 (a multiple of neither 1024
// nor 2048) through mmvqs, each within NMSE 5e-4 of the CPU.
TEST(GpuQmatmulWide, UnalignedActivationRowGivesTheCpuResult) {
  REQUIRE_GPU();
  const size_t n = 45;
  for (size_t k : {size_t(4096), size_t(3584)}) {
    for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q4_K, GgmlType::Q6_K}) {
      QTensor w = QTensor::quantize(Tensor::from_vector(normal_values(n * k, 81), Shape{n, k}), t);
      Tensor big = Tensor::from_vector(normal_values(k + 1, 82), Shape{1, k + 1});
      Tensor x = big.narrow(1, 1, k);
      const std::vector<float> want = qmatmul(x.contiguous(), w).to_vector<float>();
      Tensor xg = big.to_device(kGpu).narrow(1, 1, k);
      const std::vector<float> got = qmatmul(xg, w.to_device(kGpu), QMatmulPath::MatVec).to_vector<float>();
      EXPECT_LE(nmse(got, want), 5e-4) << ggml_type_name(t) << " k=" << k;
    }
  }
}

// A hand-built Q4_0 row of 32 blocks (k = 1024: one mmvqw round, each lane a block;
// 576 bytes, 16-byte aligned), block b with d = 0.5 and quant j = (j + b) % 16 for
// j < 16, 15 - (j + b) % 16 above, against x whose every 32-group has largest
// magnitude 127 (Q8_1 d = 1, x exact) and a sum below 2048 in magnitude (exact in
// f16): the dot is exact, computed here in float64. mmvqw gives it for one row of
// x, mmvqs for two (x and -x: the dot and its negation), odd blocks (quants 4-byte
// aligned) and even ones (2 bytes off) alike.
TEST(GpuQmatmulWide, HandBuiltQ4_0RowGivesTheExactDot) {
  REQUIRE_GPU();
  const int blocks = 32, k = 32 * blocks;
  std::vector<uint8_t> row(18 * blocks);
  std::vector<float> xv(k);
  double want = 0;
  for (int b = 0; b < blocks; ++b) {
    uint8_t* blk = row.data() + 18 * b;
    blk[0] = 0x00;
    blk[1] = 0x38;  // f16 0.5
    for (int j = 0; j < 16; ++j) blk[2 + j] = uint8_t(((j + b) % 16) | ((15 - (j + b) % 16) << 4));
    for (int j = 0; j < 32; ++j) {
      const float v = (j + b) % 3 == 0 ? 127.f : float(-100 + 3 * b);
      xv[size_t(32 * b + j)] = v;
      const int q = j < 16 ? (j + b) % 16 : 15 - (j - 16 + b) % 16;
      want += 0.5 * double(q - 8) * double(v);
    }
  }
  QTensor w = QTensor::from_bytes(GgmlType::Q4_0, Shape{1, size_t(k)}, row.data(), row.size(), kGpu);
  Tensor x = Tensor::from_vector(xv, Shape{1, size_t(k)}, kGpu);
  const std::vector<float> one = qmatmul(x, w, QMatmulPath::MatVec).to_vector<float>();
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(double(one[0]), want) << "one row (mmvqw)";
  const std::vector<float> two =
      qmatmul(Tensor::cat({x, x.neg()}, 0), w, QMatmulPath::MatVec).to_vector<float>();
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(double(two[0]), want) << "two rows (mmvqs)";
  EXPECT_EQ(double(two[1]), -want) << "two rows (mmvqs)";
}

// Batch 1 takes mmvqw (one launch: x quantized in each block's shared memory, one
// block per multiprocessor, teams of 32 lanes taking rows g, g + G, ... streamed
// through shared memory in tiles of 1024- or 2048-column rounds) for Q4_0, Q8_0,
// Q4_K and Q6_K rows of whole 16-byte words: within NMSE 5e-4 of the CPU for
// k = 4096 (one tile or four per row) and k = 14336 (two to fourteen, the last of a
// row shorter for Q4_0 and Q4_K), for n = 7 (fewer rows than teams: most teams own
// none), 67, 1501 and 4500 (more rows than the H200's 2112 teams: two or three rows
// a team; more than eight rows a team wait for their reduction), for f32, f16 and
// bf16 x; n = 1 against q8_1_dot. Two equal rows of x (mmvqs) meet the same bounds
// on the same cases, row by row.
TEST(GpuQmatmulWide, AlignedRowsGiveTheCpuResultForEveryXDtype) {
  REQUIRE_GPU();
  for (size_t k : {size_t(4096), size_t(14336)}) {
    for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K}) {
      ASSERT_EQ(ggml_row_size(t, k) % 16, 0u) << ggml_type_name(t) << " k=" << k;
      for (size_t n : {size_t(1), size_t(7), size_t(67), size_t(1501), size_t(4500)}) {
        if (k == 14336 && n > 1501) continue;  // the k = 4096 case covers several rows a wave
        QTensor w = QTensor::quantize(Tensor::from_vector(normal_values(n * k, 73), Shape{n, k}), t);
        QTensor wg = w.to_device(kGpu);
        Tensor x = Tensor::from_vector(normal_values(k, 74), Shape{1, k});
        for (DType xd : {DType::F32, DType::F16, DType::BF16}) {
          Tensor xr = x.to_dtype(xd).to_dtype(DType::F32);  // the values the GPU sees
          const std::vector<float> want =
              n == 1 ? std::vector<float>{float(q8_1_dot(w, xr))} : qmatmul(xr, w).to_vector<float>();
          Tensor xg = x.to_dtype(xd).to_device(kGpu);
          Tensor one = qmatmul(xg, wg, QMatmulPath::MatVec);
          ASSERT_EQ(one.dtype(), xd);
          EXPECT_LE(nmse(one.to_dtype(DType::F32).to_vector<float>(), want), 5e-4)
              << ggml_type_name(t) << " " << dtype_name(xd) << " mmvqw k=" << k << " n=" << n;
          Tensor two = qmatmul(Tensor::cat({xg, xg}, 0), wg, QMatmulPath::MatVec).to_dtype(DType::F32);
          for (size_t r = 0; r < 2; ++r)
            EXPECT_LE(nmse(two.narrow(0, r, 1).contiguous().to_vector<float>(), want), 5e-4)
                << ggml_type_name(t) << " " << dtype_name(xd) << " mmvqs row " << r << " k=" << k
                << " n=" << n;
        }
      }
    }
  }
}

// On sm_90 mmvqw is a programmatic dependent launch: it may start while the kernel
// before it runs, streaming weight tiles, and waits for it before reading x. Here x
// is written by the kernel right before each mat-vec (x0 scaled by i + 1, ten times
// over): every result is the CPU's for that x, within NMSE 5e-4.
TEST(GpuQmatmulWide, TheKernelWritingXJustBeforeIsWaitedFor) {
  REQUIRE_GPU();
  const size_t n = 1501, k = 4096;
  for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q6_K}) {
    QTensor w = QTensor::quantize(Tensor::from_vector(normal_values(n * k, 77), Shape{n, k}), t);
    QTensor wg = w.to_device(kGpu);
    Tensor x0 = Tensor::from_vector(normal_values(k, 78), Shape{1, k});
    Tensor x0g = x0.to_device(kGpu);
    std::vector<Tensor> got;
    for (int i = 0; i < 10; ++i)
      got.push_back(qmatmul(x0g.affine(double(i + 1), 0.0), wg, QMatmulPath::MatVec));
    for (int i = 0; i < 10; ++i) {
      const std::vector<float> want = qmatmul(x0.affine(double(i + 1), 0.0), w).to_vector<float>();
      EXPECT_LE(nmse(got[size_t(i)].to_vector<float>(), want), 5e-4) << ggml_type_name(t) << " i=" << i;
    }
  }
}

// The batch-1 kernel (mmvqw) is deterministic: the same call twice gives the same
// bits (each row is summed by one team in a fixed order).
TEST(GpuQmatmulWide, RepeatedCallsAreBitIdentical) {
  REQUIRE_GPU();
  const size_t n = 3000, k = 4096;
  for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q6_K}) {
    QTensor w =
        QTensor::quantize(Tensor::from_vector(normal_values(n * k, 75), Shape{n, k}), t).to_device(kGpu);
    Tensor x = Tensor::from_vector(normal_values(k, 76), Shape{1, k}, kGpu);
    const std::vector<float> a = qmatmul(x, w, QMatmulPath::MatVec).to_vector<float>();
    for (int i = 0; i < 3; ++i)
      EXPECT_EQ(qmatmul(x, w, QMatmulPath::MatVec).to_vector<float>(), a) << ggml_type_name(t);
  }
}

// Where mmvqw does not apply, Q4_0, Q4_K and Q6_K take mmvqs: Q6_K rows of k = 768
// (630 bytes, not a multiple of 16), Q4_0 rows of k = 3584 (not a multiple of 1024),
// Q4_K rows of k = 3072 (not a multiple of 2048) and batch 2..8 (mmvqw is batch 1),
// each within NMSE 5e-4 of the CPU.
TEST(GpuQmatmulWide, WhereItDoesNotApplyMmvqsGivesTheCpuResult) {
  REQUIRE_GPU();
  struct Case {
    GgmlType t;
    size_t n, k, m;
  };
  for (Case c : {Case{GgmlType::Q6_K, 19, 768, 1}, Case{GgmlType::Q4_0, 21, 3584, 1},
                 Case{GgmlType::Q4_K, 23, 3072, 1}, Case{GgmlType::Q4_0, 33, 4096, 2},
                 Case{GgmlType::Q4_K, 33, 4096, 8}}) {
    QTensor w = QTensor::quantize(Tensor::from_vector(normal_values(c.n * c.k, 91), Shape{c.n, c.k}), c.t);
    Tensor x = Tensor::from_vector(normal_values(c.m * c.k, 92), Shape{c.m, c.k});
    const std::vector<float> want = qmatmul(x, w).to_vector<float>();
    const std::vector<float> got =
        qmatmul(x.to_device(kGpu), w.to_device(kGpu), QMatmulPath::MatVec).to_vector<float>();
    EXPECT_LE(nmse(got, want), 5e-4) << ggml_type_name(c.t) << " k=" << c.k << " m=" << c.m;
  }
}

// Rows too long for 16 teams' shared memory take blocks of fewer teams: Q8_0 rows of
// k = 65536 (the activation (80 KB) and 16 teams' tiles and slots (186 KB) exceed the
// H200's 227 KB a block; 8 teams fit) and Q4_0 rows of k = 49152 (16 teams' 197 KB
// beside 60 KB of activation: 8 teams). Within NMSE 5e-4 of the CPU.
TEST(GpuQmatmulWide, LongRowsTakeSmallerBlocks) {
  REQUIRE_GPU();
  for (auto [t, k] : {std::pair{GgmlType::Q8_0, size_t(65536)}, std::pair{GgmlType::Q4_0, size_t(49152)}}) {
    const size_t n = 37;
    QTensor w = QTensor::quantize(Tensor::from_vector(normal_values(n * k, 93), Shape{n, k}), t);
    Tensor x = Tensor::from_vector(normal_values(k, 94), Shape{1, k});
    const std::vector<float> want = qmatmul(x, w).to_vector<float>();
    const std::vector<float> got =
        qmatmul(x.to_device(kGpu), w.to_device(kGpu), QMatmulPath::MatVec).to_vector<float>();
    EXPECT_LE(nmse(got, want), 5e-4) << ggml_type_name(t) << " k=" << k;
  }
}

TEST(GpuQmatmulDtypes, Bf16F16AndF64ActivationsKeepTheirDtype) {
  REQUIRE_GPU();
  const size_t n = 33, k = 512;
  QTensor w = QTensor::quantize(Tensor::from_vector(normal_values(n * k, 31), Shape{n, k}), GgmlType::Q8_0);
  for (DType dt : {DType::BF16, DType::F16, DType::F64}) {
    for (size_t m : {2, 16}) {
      Tensor x = Tensor::from_vector(normal_values(m * k, 32), Shape{m, k});
      Tensor xd = x.to_dtype(dt);
      const std::vector<float> want = qmatmul(xd.to_dtype(DType::F32), w).to_vector<float>();
      Tensor got = qmatmul(xd.to_device(kGpu), w.to_device(kGpu));
      ASSERT_EQ(got.dtype(), dt);
      EXPECT_LE(nmse(got.to_dtype(DType::F32).to_vector<float>(), want), 5e-4)
          << dtype_name(dt) << " m=" << m;
    }
  }
}

TEST(GpuQmatmulDtypes, BatchedLeadingDimsFlattenToRows) {
  REQUIRE_GPU();
  const size_t n = 16, k = 256;
  QTensor w = QTensor::quantize(Tensor::from_vector(normal_values(n * k, 41), Shape{n, k}), GgmlType::Q6_K);
  Tensor x = Tensor::from_vector(normal_values(2 * 3 * k, 42), Shape{2, 3, k});
  const std::vector<float> want = qmatmul(x, w).to_vector<float>();
  Tensor got = qmatmul(x.to_device(kGpu), w.to_device(kGpu));
  ASSERT_EQ(got.dims(), (std::vector<size_t>{2, 3, n}));
  EXPECT_LE(nmse(got.to_vector<float>(), want), 5e-4);
}

TEST(GpuQmatmulErrors, WeightOnTheCpuAndXOnTheGpuIsADeviceMismatch) {
  REQUIRE_GPU();
  QTensor w = QTensor::quantize(Tensor::from_vector(normal_values(32 * 4, 1), Shape{4, 32}), GgmlType::Q8_0);
  Tensor x = Tensor::from_vector(normal_values(32, 2), Shape{1, 32}, kGpu);
  try {
    (void)qmatmul(x, w);
    ADD_FAILURE() << "no error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::DeviceMismatch) << e.what();
    EXPECT_NE(std::string(e.what()).find("[qmatmul]"), std::string::npos) << e.what();
  }
}

TEST(GpuDequantizeErrors, AnIntegerTargetDtypeIsUnsupported) {
  REQUIRE_GPU();
  QTensor w = QTensor::quantize(Tensor::from_vector(normal_values(32, 1), Shape{1, 32}), GgmlType::Q4_0)
                  .to_device(kGpu);
  try {
    (void)w.dequantize(DType::U8);
    ADD_FAILURE() << "no error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::UnsupportedDType) << e.what();
    EXPECT_NE(std::string(e.what()).find("[dequantize]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace wick
