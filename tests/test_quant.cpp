// ggml block types on the CPU: the type table, hand-built blocks of every type
// dequantized against formulas written here from the format description, ggml's
// quantize/dequantize and dot-product error bounds (test-quantize-fns), the
// reference quantizers on hand-computed cases, QTensor and qmatmul.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "backend/common/kquant_scales.h"
#include "backend/cpu/isa.h"
#include "backend/cpu/quants.h"
#include "base/ggml_blocks.h"
#include "error_test_util.h"
#include "wick/quant.h"
#include "wick/tensor.h"

using namespace wick;
namespace q = wick::quant;

namespace {

constexpr uint16_t kHalf = 0x3800;     // 0.5 in f16
constexpr uint16_t kQuarter = 0x3400;  // 0.25
constexpr uint16_t kOne = 0x3C00;      // 1.0

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> b(n);
  for (auto& v : b) v = uint8_t(rng() & 0xFF);
  return b;
}

// Puts a little-endian u16 at byte offset `off`.
void put16(std::vector<uint8_t>& b, size_t off, uint16_t v) {
  b[off] = uint8_t(v & 0xFF);
  b[off + 1] = uint8_t(v >> 8);
}

std::vector<float> dequant(GgmlType t, const std::vector<uint8_t>& b, size_t n) {
  std::vector<float> y(n);
  q::dequantize_row(t, b.data(), y.data(), n);
  return y;
}

// ggml's test-quantize-fns synthetic data and its "rmse" (sqrt(sum sq)/n).
std::vector<float> synthetic(float offset, size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = float(0.1 + 2 * std::cos(double(i) + offset));
  return v;
}
double ggml_rmse(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
  return std::sqrt(s) / double(a.size());
}

}  // namespace

TEST(QuantTypes, BlockSizesMatchGgml) {
  // bytes per block from ggml-common.h / the GGUF spec
  struct Row {
    GgmlType t;
    size_t block, bytes;
  };
  const Row rows[] = {{GgmlType::F32, 1, 4},      {GgmlType::F16, 1, 2},      {GgmlType::BF16, 1, 2},
                      {GgmlType::Q4_0, 32, 18},   {GgmlType::Q4_1, 32, 20},   {GgmlType::Q5_0, 32, 22},
                      {GgmlType::Q5_1, 32, 24},   {GgmlType::Q8_0, 32, 34},   {GgmlType::Q8_1, 32, 36},
                      {GgmlType::Q2_K, 256, 84},  {GgmlType::Q3_K, 256, 110}, {GgmlType::Q4_K, 256, 144},
                      {GgmlType::Q5_K, 256, 176}, {GgmlType::Q6_K, 256, 210}, {GgmlType::Q8_K, 256, 292}};
  for (const auto& r : rows) {
    EXPECT_EQ(ggml_block_size(r.t), r.block) << ggml_type_name(r.t);
    EXPECT_EQ(ggml_type_size(r.t), r.bytes) << ggml_type_name(r.t);
  }
  EXPECT_EQ(uint32_t(GgmlType::BF16), 30u);
  EXPECT_EQ(uint32_t(GgmlType::Q6_K), 14u);
  EXPECT_FALSE(ggml_type_known(4));  // removed Q4_2
  EXPECT_FALSE(ggml_type_known(16));
  EXPECT_EQ(ggml_row_size(GgmlType::Q4_K, 512), 288u);
  EXPECT_EQ(ggml_vec_dot_type(GgmlType::Q4_0), GgmlType::Q8_0);
  EXPECT_EQ(ggml_vec_dot_type(GgmlType::Q5_1), GgmlType::Q8_1);
  EXPECT_EQ(ggml_vec_dot_type(GgmlType::Q3_K), GgmlType::Q8_K);
}

TEST(QuantTypes, ParseNames) {
  EXPECT_EQ(parse_ggml_type("q4_k"), GgmlType::Q4_K);
  EXPECT_EQ(parse_ggml_type("Q8_0"), GgmlType::Q8_0);
  EXPECT_EQ(parse_ggml_type("bf16"), GgmlType::BF16);
  try {
    parse_ggml_type("q9_9");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("q9_9"), std::string::npos);
  }
}

TEST(QuantTypes, RowNotMultipleOfBlockThrows) {
  std::vector<float> x(48);
  std::vector<uint8_t> y(64);
  try {
    q::quantize_row(GgmlType::Q4_0, x.data(), y.data(), 48);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("[quantize]"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("block size 32"), std::string::npos);
  }
  EXPECT_THROW(ggml_row_size(GgmlType::Q6_K, 100), Error);
}

// ---- hand-built blocks ---------------------------------------------------------

TEST(QuantDequant, Q4_0HandBlock) {
  std::vector<uint8_t> b(18);
  put16(b, 0, kHalf);
  for (int j = 0; j < 16; ++j) b[2 + j] = uint8_t(j | ((15 - j) << 4));
  auto y = dequant(GgmlType::Q4_0, b, 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], 0.5f * float(j - 8));
    EXPECT_EQ(y[j + 16], 0.5f * float(7 - j));
  }
}

TEST(QuantDequant, Q4_1HandBlock) {
  std::vector<uint8_t> b(20);
  put16(b, 0, kHalf);
  put16(b, 2, 0xBC00);  // m = -1
  for (int j = 0; j < 16; ++j) b[4 + j] = uint8_t(j | ((15 - j) << 4));
  auto y = dequant(GgmlType::Q4_1, b, 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], 0.5f * float(j) - 1.0f);
    EXPECT_EQ(y[j + 16], 0.5f * float(15 - j) - 1.0f);
  }
}

TEST(QuantDequant, Q5_0AndQ5_1HandBlocks) {
  // qh = 0xA5A5F00F: bit i is the 5th bit of element i
  const uint32_t qh = 0xA5A5F00Fu;
  for (bool with_min : {false, true}) {
    const size_t off = with_min ? 4 : 2;
    std::vector<uint8_t> b(with_min ? 24 : 22);
    put16(b, 0, kQuarter);
    if (with_min) put16(b, 2, kOne);
    std::memcpy(&b[off], &qh, 4);
    for (int j = 0; j < 16; ++j) b[off + 4 + j] = uint8_t(((3 * j) & 15) | (((5 * j + 1) & 15) << 4));
    auto y = dequant(with_min ? GgmlType::Q5_1 : GgmlType::Q5_0, b, 32);
    for (int e = 0; e < 32; ++e) {
      int lo = e < 16 ? ((3 * e) & 15) : ((5 * (e - 16) + 1) & 15);
      int qv = lo + 16 * int((qh >> e) & 1);
      float expect = with_min ? 0.25f * float(qv) + 1.0f : 0.25f * float(qv - 16);
      EXPECT_EQ(y[e], expect) << "element " << e << (with_min ? " q5_1" : " q5_0");
    }
  }
}

TEST(QuantDequant, Q8_0AndQ8_1HandBlocks) {
  for (bool q81 : {false, true}) {
    const size_t off = q81 ? 4 : 2;
    std::vector<uint8_t> b(q81 ? 36 : 34);
    put16(b, 0, kHalf);
    for (int j = 0; j < 32; ++j) b[off + j] = uint8_t(int8_t(j * 8 - 128));
    auto y = dequant(q81 ? GgmlType::Q8_1 : GgmlType::Q8_0, b, 32);
    for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], 0.5f * float(j * 8 - 128));
  }
}

TEST(QuantDequant, Q2_KHandBlock) {
  auto b = random_bytes(84, 2);
  put16(b, 80, kHalf);
  put16(b, 82, kQuarter);
  auto y = dequant(GgmlType::Q2_K, b, 256);
  for (int e = 0; e < 256; ++e) {
    int h = e / 128, g = (e % 128) / 32, l = e % 32;
    int qv = (b[16 + 32 * h + l] >> (2 * g)) & 3;
    int sc = b[e / 16];
    double expect = 0.5 * (sc & 0xF) * qv - 0.25 * (sc >> 4);
    EXPECT_EQ(double(y[e]), expect) << e;
  }
}

TEST(QuantDequant, Q3_KHandBlock) {
  auto b = random_bytes(110, 3);
  put16(b, 108, kHalf);
  auto y = dequant(GgmlType::Q3_K, b, 256);
  const uint8_t* hmask = &b[0];
  const uint8_t* qs = &b[32];
  const uint8_t* sc = &b[96];
  for (int e = 0; e < 256; ++e) {
    int h = e / 128, g = (e % 128) / 32, l = e % 32;
    int q2 = (qs[32 * h + l] >> (2 * g)) & 3;
    int hbit = (hmask[l] >> (4 * h + g)) & 1;
    int j = e / 16;
    int lo = j < 8 ? (sc[j] & 0xF) : (sc[j - 8] >> 4);
    int hi = (sc[8 + j % 4] >> (2 * (j / 4))) & 3;
    double expect = 0.5 * ((lo | hi << 4) - 32) * (q2 - (hbit ? 0 : 4));
    EXPECT_EQ(double(y[e]), expect) << e;
  }
}

namespace {
// get_scale_min_k4 as the format sheet states it.
void scale_min_k4(int j, const uint8_t* q, int& sc, int& m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}
}  // namespace

TEST(QuantDequant, Q4_KAndQ5_KHandBlocks) {
  for (bool q5 : {false, true}) {
    auto b = random_bytes(q5 ? 176 : 144, q5 ? 5 : 4);
    put16(b, 0, kHalf);
    put16(b, 2, kQuarter);
    auto y = dequant(q5 ? GgmlType::Q5_K : GgmlType::Q4_K, b, 256);
    const uint8_t* scales = &b[4];
    const uint8_t* qh = &b[16];
    const uint8_t* qs = q5 ? &b[48] : &b[16];
    for (int e = 0; e < 256; ++e) {
      int c = e / 64, high = (e % 64) / 32, l = e % 32;
      int nib = high ? (qs[32 * c + l] >> 4) : (qs[32 * c + l] & 0xF);
      if (q5) nib += 16 * ((qh[l] >> (2 * c + high)) & 1);
      int sc, m;
      scale_min_k4(2 * c + high, scales, sc, m);
      double expect = 0.5 * sc * nib - 0.25 * m;
      EXPECT_EQ(double(y[e]), expect) << e << (q5 ? " q5_K" : " q4_K");
    }
  }
}

TEST(QuantDequant, Q6_KHandBlock) {
  auto b = random_bytes(210, 6);
  put16(b, 208, kQuarter);
  auto y = dequant(GgmlType::Q6_K, b, 256);
  const uint8_t* ql = &b[0];
  const uint8_t* qh = &b[128];
  const int8_t* sc = reinterpret_cast<const int8_t*>(&b[192]);
  for (int e = 0; e < 256; ++e) {
    int h = e / 128, k = (e % 128) / 32, l = e % 32;
    int lo4 = k == 0   ? (ql[64 * h + l] & 0xF)
              : k == 1 ? (ql[64 * h + 32 + l] & 0xF)
              : k == 2 ? (ql[64 * h + l] >> 4)
                       : (ql[64 * h + 32 + l] >> 4);
    int hi2 = (qh[32 * h + l] >> (2 * k)) & 3;
    double expect = 0.25 * sc[e / 16] * ((lo4 | hi2 << 4) - 32);
    EXPECT_EQ(double(y[e]), expect) << e;
  }
}

TEST(QuantDequant, Q8_KHandBlock) {
  auto b = random_bytes(292, 8);
  const float d = 0.125f;
  std::memcpy(&b[0], &d, 4);
  auto y = dequant(GgmlType::Q8_K, b, 256);
  for (int j = 0; j < 256; ++j) EXPECT_EQ(y[j], 0.125f * float(int8_t(b[4 + j])));
}

TEST(QuantDequant, FloatTypes) {
  std::vector<uint8_t> b(6);
  put16(b, 0, kHalf);
  put16(b, 2, 0xC000);  // -2
  put16(b, 4, 0x3F80);  // bf16 1.0 (read as f16 it is 1.875)
  auto y = dequant(GgmlType::F16, b, 3);
  EXPECT_EQ(y[0], 0.5f);
  EXPECT_EQ(y[1], -2.0f);
  EXPECT_EQ(y[2], 1.875f);
  auto z = dequant(GgmlType::BF16, b, 3);
  EXPECT_EQ(z[2], 1.0f);
}

// ---- reference quantizers on hand-computed cases -------------------------------

TEST(QuantReference, Q8_0OfRamp) {
  // x = j - 15.5 * (j<32); amax = 16.5 at j = 32? use x_j = j/4 - 4 (amax 4 at j=0)
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) x[j] = float(j) / 4.0f - 4.0f;
  std::vector<uint8_t> b(34);
  q::quantize_row(GgmlType::Q8_0, x.data(), b.data(), 32);
  // d = 4/127 stored as f16; q = round(x * 127/4)
  uint16_t d;
  std::memcpy(&d, b.data(), 2);
  EXPECT_NEAR(f16_bits_to_f32(d), 4.0 / 127.0, 1e-5);
  for (int j = 0; j < 32; ++j) {
    EXPECT_EQ(int(int8_t(b[2 + j])), int(std::lround((j / 4.0 - 4.0) * 127.0 / 4.0))) << j;
  }
}

TEST(QuantReference, Q4_0SignedMaxBecomesMinusEight) {
  // the largest magnitude is -3 -> d = -3/-8 = 0.375, it quantizes to 0 (value -8*d)
  std::vector<float> x(32, 0.0f);
  x[5] = -3.0f;
  x[20] = 1.5f;  // 1.5/0.375 = 4 -> q = 12
  std::vector<uint8_t> b(18);
  q::quantize_row(GgmlType::Q4_0, x.data(), b.data(), 32);
  uint16_t d;
  std::memcpy(&d, b.data(), 2);
  EXPECT_EQ(f16_bits_to_f32(d), 0.375f);
  EXPECT_EQ(b[2 + 5] & 0xF, 0);
  EXPECT_EQ(b[2 + 4] >> 4, 12);  // element 20 is the high nibble of byte 4
  EXPECT_EQ(b[2 + 0] & 0xF, 8);  // zeros -> 8
}

TEST(QuantReference, Q8_1StoresScaledSum) {
  std::vector<float> x(32, 1.0f);
  x[0] = -2.0f;
  std::vector<uint8_t> b(36);
  q::quantize_row(GgmlType::Q8_1, x.data(), b.data(), 32);
  uint16_t d, s;
  std::memcpy(&d, b.data(), 2);
  std::memcpy(&s, b.data() + 2, 2);
  // q = -127 at 0 and round(63.5) = 64 elsewhere; s = d * sum(q)
  const double dd = f16_bits_to_f32(d);
  EXPECT_EQ(int8_t(b[4]), -127);
  EXPECT_EQ(int8_t(b[5]), 64);
  EXPECT_NEAR(f16_bits_to_f32(s), dd * (-127 + 31 * 64), 0.01);
}

TEST(QuantReference, ZeroInputGivesZeroBlocks) {
  std::vector<float> x(256, 0.0f), y(256, 1.0f);
  for (GgmlType t : kAllGgmlTypes) {
    std::vector<uint8_t> b(ggml_row_size(t, 256), 0xAB);
    q::quantize_row(t, x.data(), b.data(), 256);
    q::dequantize_row(t, b.data(), y.data(), 256);
    for (float v : y) ASSERT_EQ(v, 0.0f) << ggml_type_name(t);
  }
}

// ---- ggml's error bounds ----------------------------------------------------------

namespace {
double max_rmse(GgmlType t) {
  switch (t) {
    case GgmlType::Q2_K:
      return 0.0075;  // MAX_QUANTIZATION_TOTAL_ERROR_2BITS
    case GgmlType::Q3_K:
      return 0.0040;  // MAX_QUANTIZATION_TOTAL_ERROR_3BITS
    default:
      return 0.002;  // MAX_QUANTIZATION_TOTAL_ERROR
  }
}
double max_dot_error(GgmlType t) {
  return t == GgmlType::Q2_K ? 0.04 : 0.02;  // MAX_DOT_PRODUCT_ERROR(_LOWBIT)
}
}  // namespace

TEST(QuantError, RoundTripWithinGgmlBounds) {
  const size_t n = 32 * 128;
  const auto x = synthetic(0.0f, n);
  for (GgmlType t : kAllGgmlTypes) {
    std::vector<uint8_t> b(ggml_row_size(t, n));
    std::vector<float> y(n);
    q::quantize_row(t, x.data(), b.data(), n);
    q::dequantize_row(t, b.data(), y.data(), n);
    const double err = ggml_rmse(x, y);
    EXPECT_LE(err, max_rmse(t)) << ggml_type_name(t);
  }
}

TEST(QuantError, DotProductWithinGgmlBounds) {
  const size_t n = 32 * 128;
  const auto x = synthetic(0.0f, n), w = synthetic(1.0f, n);
  double ref = 0;
  for (size_t i = 0; i < n; ++i) ref += double(x[i]) * double(w[i]);
  for (GgmlType t : kAllGgmlTypes) {
    const GgmlType at = ggml_vec_dot_type(t);
    std::vector<uint8_t> wb(ggml_row_size(t, n)), xb(ggml_row_size(at, n));
    q::quantize_row(t, w.data(), wb.data(), n);
    q::quantize_row(at, x.data(), xb.data(), n);
    const double got = q::vec_dot(t, n, wb.data(), xb.data());
    EXPECT_LE(std::fabs(got - ref) / double(n), max_dot_error(t)) << ggml_type_name(t);
  }
}

TEST(QuantError, VecDotEqualsDequantizedDot) {
  // The integer dot must equal the float64 dot of the two dequantized rows up to rounding.
  const size_t n = 512;
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> x(n), w(n);
  for (auto& v : x) v = nd(rng);
  for (auto& v : w) v = nd(rng);
  for (GgmlType t : kAllGgmlTypes) {
    const GgmlType at = ggml_vec_dot_type(t);
    std::vector<uint8_t> wb(ggml_row_size(t, n)), xb(ggml_row_size(at, n));
    q::quantize_row(t, w.data(), wb.data(), n);
    q::quantize_row(at, x.data(), xb.data(), n);
    std::vector<float> wd(n), xd(n);
    q::dequantize_row(t, wb.data(), wd.data(), n);
    q::dequantize_row(at, xb.data(), xd.data(), n);
    double ref = 0, mag = 0;
    for (size_t i = 0; i < n; ++i) {
      ref += double(wd[i]) * xd[i];
      mag += std::fabs(double(wd[i]) * xd[i]);
    }
    // Q8_1's s is rounded to f16, so Q4_1/Q5_1 carry an extra 2^-11 relative term per block
    EXPECT_NEAR(q::vec_dot(t, n, wb.data(), xb.data()), ref, 2e-3 * mag) << ggml_type_name(t);
  }
}

// ---- the hand-written kernels of each instruction-set level -----------------------------

namespace {

// The levels above Scalar this CPU runs.
std::vector<cpu::Isa> simd_levels() {
  std::vector<cpu::Isa> v;
  for (cpu::Isa i : {cpu::Isa::Avx2, cpu::Isa::Avx512})
    if (i <= cpu::detected_isa()) v.push_back(i);
  return v;
}

// vec_dot_rows with isa() capped at `level`.
std::vector<float> dot_rows_at(cpu::Isa level, GgmlType t, size_t n, const uint8_t* w, const uint8_t* acts,
                               size_t ny) {
  const cpu::Isa saved = cpu::set_max_isa(level);
  std::vector<float> out(ny);
  q::vec_dot_rows(t, n, w, acts, ny, out.data());
  cpu::set_max_isa(saved);
  return out;
}

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// A weight row of type t: quantized normal values, or (raw) random bytes with every
// block's f16 scales set to finite values, so any quant and sub-block scale occurs.
std::vector<uint8_t> weight_row(GgmlType t, size_t n, uint32_t seed, bool raw) {
  std::vector<uint8_t> b(ggml_row_size(t, n));
  if (!raw) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<float> v(n);
    for (auto& x : v) x = nd(rng);
    q::quantize_row(t, v.data(), b.data(), n);
    return b;
  }
  b = random_bytes(b.size(), seed);
  const size_t bs = ggml_type_size(t);
  for (size_t off = 0; off < b.size(); off += bs) {
    // d (and dmin) at the block's start, Q6_K's d at its end: 0.5, 0.25 (f16)
    if (t == GgmlType::Q6_K) {
      put16(b, off + bs - 2, kHalf);
    } else {
      put16(b, off, kHalf);
      if (t == GgmlType::Q4_K) put16(b, off + 2, kQuarter);
    }
  }
  return b;
}

// The magnitude of the integer sums the K-quant kernels scale, for a Q4_K or Q6_K row
// against a Q8_K row, in float64: over the elements, Q4_K: |yd| (|d| sc q + |dmin| m) |a|
// (the scale term and the min term, each of which can exceed sum |w a| where they
// cancel); Q6_K: |yd d sc| (q + 32) |a| (q in 0..63 and the bias of 32 summed apart).
double k_quant_magnitude(GgmlType t, const uint8_t* w, const uint8_t* act, size_t n) {
  double mag = 0;
  for (size_t b = 0; b < n / 256; ++b) {
    q::BlockQ8_K y;
    std::memcpy(&y, act + b * sizeof(y), sizeof(y));
    const double yd = std::fabs(double(y.d));
    if (t == GgmlType::Q4_K) {
      q::BlockQ4_K x;
      std::memcpy(&x, w + b * sizeof(x), sizeof(x));
      const double d = std::fabs(f16_bits_to_f32(x.d)), dmin = std::fabs(f16_bits_to_f32(x.dmin));
      for (int j = 0; j < 8; ++j) {
        uint8_t sc, m;
        q::scale_min_k4(j, x.scales, sc, m);
        for (int l = 0; l < 32; ++l) {
          const int e = 32 * j + l;  // chunk e / 64 of 32 bytes, low nibbles first
          const int qv = (x.qs[32 * (e / 64) + e % 32] >> (e % 64 < 32 ? 0 : 4)) & 0xF;
          mag += yd * (d * sc * qv + dmin * m) * std::abs(int(y.qs[e]));
        }
      }
    } else {
      q::BlockQ6_K x;
      std::memcpy(&x, w + b * sizeof(x), sizeof(x));
      const double d = std::fabs(f16_bits_to_f32(x.d));
      for (int e = 0; e < 256; ++e) {
        // half e / 128; group g of 32: ql low (g even) or high nibbles of row g % 2, qh bits 2g
        const int h = e / 128, g = (e % 128) / 32, l = e % 32;
        const int lo = (x.ql[64 * h + 32 * (g % 2) + l] >> (g < 2 ? 0 : 4)) & 0xF;
        const int qv = lo | ((x.qh[32 * h + l] >> (2 * g)) & 3) << 4;
        mag += yd * d * std::abs(int(x.scales[e / 16])) * (qv + 32) * std::abs(int(y.qs[e]));
      }
    }
  }
  return mag;
}

}  // namespace

TEST(QuantSimd, EveryLevelMatchesTheScalarKernel) {
  // 7 activation rows: a group of 4 and 3 single rows; 41 blocks of 32 (an odd count:
  // the AVX-512 kernels take blocks in pairs) or 3 super-blocks of 256. The AVX2 K-quant
  // kernels equal the scalar kernel bit for bit. Q4_0 and Q8_0 sum their blocks in
  // another order, within the float reassociation bound (blocks + 8 lanes) * 2^-24 *
  // sum |w a|. Q4_K and Q6_K at AVX-512 keep each super-block's integer sums in 16 (and
  // 8) lanes, each converted exactly or with one rounding, scaled into float lanes by
  // one fma a block and added up once per row: within (blocks + 18) * 2^-24 * M of the
  // exact value, M the magnitude of k_quant_magnitude; the scalar kernel rounds about 4
  // times a block and once per block into its sum, within (blocks + 4) * 2^-24 * M. So
  // they differ by at most (2 * blocks + 32) * 2^-24 * M.
  const size_t ny = 7;
  for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K}) {
    const bool k_quant = ggml_block_size(t) == 256;
    const size_t n = k_quant ? 3 * 256 : 41 * 32;
    const GgmlType at = ggml_vec_dot_type(t);
    const size_t arow = ggml_row_size(at, n);
    std::vector<uint8_t> acts(ny * arow);
    std::mt19937 rng(3);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<float> xv(n);
    for (size_t r = 0; r < ny; ++r) {
      for (auto& v : xv) v = nd(rng);
      q::quantize_row(at, xv.data(), acts.data() + r * arow, n);
    }
    for (bool raw : {false, true}) {
      const auto w = weight_row(t, n, 17, raw);
      const auto ref = dot_rows_at(cpu::Isa::Scalar, t, n, w.data(), acts.data(), ny);
      std::vector<float> wd(n), ad(n);
      q::dequantize_row(t, w.data(), wd.data(), n);
      for (cpu::Isa level : simd_levels()) {
        ASSERT_NE(q::vec_dot_simd(t, level), nullptr) << ggml_type_name(t);
        const auto got = dot_rows_at(level, t, n, w.data(), acts.data(), ny);
        for (size_t r = 0; r < ny; ++r) {
          const std::string what = std::string(ggml_type_name(t)) + " at " + cpu::isa_name(level) +
                                   (raw ? " raw" : "") + " row " + std::to_string(r);
          // each row alone gives the same bits as in the batch
          const auto one = dot_rows_at(level, t, n, w.data(), acts.data() + r * arow, 1);
          EXPECT_EQ(bits_of(one[0]), bits_of(got[r])) << what;
          if (k_quant && level == cpu::Isa::Avx512) {
            const double mag = k_quant_magnitude(t, w.data(), acts.data() + r * arow, n);
            EXPECT_NEAR(got[r], ref[r], double(2 * (n / 256) + 32) * 0x1p-24 * mag) << what;
          } else if (k_quant) {
            EXPECT_EQ(bits_of(got[r]), bits_of(ref[r])) << what << ": " << got[r] << " vs " << ref[r];
          } else {
            q::dequantize_row(at, acts.data() + r * arow, ad.data(), n);
            double mag = 0;
            for (size_t i = 0; i < n; ++i) mag += std::fabs(double(wd[i]) * ad[i]);
            EXPECT_NEAR(got[r], ref[r], double(n / 32 + 8) * 0x1p-24 * mag) << what;
          }
        }
      }
    }
  }
}

TEST(QuantSimd, MatVecMatchesTheRowKernel) {
  // 7 weight rows (quantized and raw in turn) against one activation row: each result
  // has the bits of the same level's row kernel for that row alone, which the test
  // above holds to the scalar kernel, whichever rows run with it (1, 3 or 7 rows from
  // the first, 3 from the fifth). Blocks of 32: 41 (two groups of 16 blocks, two steps
  // of 4 on their own and a tail block), 16 (one group), 3 (the tail alone);
  // super-blocks of 256: 3 and 1.
  const size_t nw = 7;
  for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K}) {
    const bool k_quant = ggml_block_size(t) == 256;
    for (size_t nb : k_quant ? std::vector<size_t>{3, 1} : std::vector<size_t>{41, 16, 3}) {
      const size_t n = nb * ggml_block_size(t);
      const GgmlType at = ggml_vec_dot_type(t);
      std::vector<uint8_t> act(ggml_row_size(at, n));
      std::mt19937 rng(5);
      std::normal_distribution<float> nd(0.0f, 1.0f);
      std::vector<float> xv(n);
      for (auto& v : xv) v = nd(rng);
      q::quantize_row(at, xv.data(), act.data(), n);
      const size_t wrow = ggml_row_size(t, n);
      std::vector<uint8_t> w(nw * wrow);
      for (size_t r = 0; r < nw; ++r) {
        const auto row = weight_row(t, n, uint32_t(30 + r), r % 2 == 1);
        std::memcpy(w.data() + r * wrow, row.data(), wrow);
      }
      for (cpu::Isa level : simd_levels()) {
        const q::MatVec mv = q::mat_vec_simd(t, level);
        if (!mv.run) continue;
        std::vector<uint8_t> prep(mv.prep_bytes(n) + 64);
        uint8_t* const pp = prep.data() + (64 - reinterpret_cast<uintptr_t>(prep.data()) % 64) % 64;
        mv.prepare(n, act.data(), pp);
        for (auto [first, rows] : {std::pair<size_t, size_t>{0, 1}, {0, 3}, {0, nw}, {4, 3}}) {
          std::vector<float> got(rows);
          mv.run(n, w.data() + first * wrow, rows, act.data(), pp, got.data());
          for (size_t r = first; r < first + rows; ++r) {
            float want;
            q::vec_dot_simd(t, level)(n, w.data() + r * wrow, act.data(), 1, &want);
            EXPECT_EQ(bits_of(got[r - first]), bits_of(want))
                << ggml_type_name(t) << " at " << cpu::isa_name(level) << ", " << nb << " blocks, row " << r
                << " of " << first << ".." << first + rows;
          }
        }
      }
    }
  }
}

TEST(QuantSimd, ActivationQuantizersMatchTheScalarOnes) {
  // Blocks of normal values at several scales, an all-zero block, a block of
  // subnormals, and blocks where x * id lands on halves: Q8_0 with d = 1 (127 sets
  // amax; roundf takes halves away from zero), Q8_K with iscale = 1 (-127 the first
  // value of largest magnitude, +127 after it within the same 16; halves to even).
  // Each must give the scalar quantizer's bytes.
  std::mt19937 rng(9);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (GgmlType t : {GgmlType::Q8_0, GgmlType::Q8_K}) {
    const size_t block = ggml_block_size(t);
    std::vector<float> x;
    for (float scale : {1.0f, 1e-3f, 1e4f, 3e-38f})
      for (size_t j = 0; j < 2 * block; ++j) x.push_back(scale * nd(rng));
    for (size_t j = 0; j < block; ++j) x.push_back(0.0f);
    for (size_t j = 0; j < block; ++j) x.push_back(float(int(j % 32) - 16) * 1e-44f);
    for (int b = 0; b < 2; ++b) {
      const float sign = b ? -1.0f : 1.0f;
      const float top = t == GgmlType::Q8_K ? -127.0f : 127.0f;
      x.push_back(sign * top);
      for (size_t j = 1; j < block; ++j)
        x.push_back(sign * (j == 5 ? -top : float(int(j % 32) * 4 - 62) + 0.5f));
    }
    const size_t n = x.size();
    std::vector<uint8_t> want(ggml_row_size(t, n)), got(want.size());
    for (size_t b = 0; b < n / block; ++b) {
      const size_t bb = ggml_type_size(t);
      if (t == GgmlType::Q8_0)
        q::quantize_q8_0(x.data() + b * block, reinterpret_cast<q::BlockQ8_0*>(want.data() + b * bb), block);
      else
        q::quantize_q8_k(x.data() + b * block, reinterpret_cast<q::BlockQ8_K*>(want.data() + b * bb), block);
    }
    for (cpu::Isa level : simd_levels()) {
      const q::QuantizeFn f = q::quantize_simd(t, level);
      if (!f) continue;
      std::fill(got.begin(), got.end(), uint8_t(0xAB));
      f(x.data(), got.data(), n);
      EXPECT_EQ(got, want) << ggml_type_name(t) << " at " << cpu::isa_name(level);
    }
  }
}

TEST(QuantSimd, Q8_0WeightsOfMinus128) {
  // Weights from other quantizers may hold -128 (ggml's own stop at -127): the sign
  // trick of the int8 dot products must keep its magnitude.
  const size_t n = 64;
  std::vector<uint8_t> w(ggml_row_size(GgmlType::Q8_0, n)), a(w.size());
  std::vector<float> ones(n, 1.0f);
  q::quantize_row(GgmlType::Q8_0, ones.data(), a.data(), n);  // every quant 127, d = 1/127
  for (size_t blk = 0; blk < 2; ++blk) {
    put16(w, blk * 34, kOne);
    for (size_t j = 0; j < 32; ++j) w[blk * 34 + 2 + j] = uint8_t(int8_t(-128));
  }
  const float want = dot_rows_at(cpu::Isa::Scalar, GgmlType::Q8_0, n, w.data(), a.data(), 1)[0];
  EXPECT_NEAR(want, -64.0 * 128 * 127 * f16_bits_to_f32(uint16_t(a[0] | a[1] << 8)), 1e-3);
  for (cpu::Isa level : simd_levels())
    EXPECT_NEAR(dot_rows_at(level, GgmlType::Q8_0, n, w.data(), a.data(), 1)[0], want, 1e-6 * std::fabs(want))
        << cpu::isa_name(level);
}

// ---- QTensor and qmatmul ------------------------------------------------------------

TEST(QTensor, QuantizeDequantizeShapes) {
  auto x = synthetic(0.5f, 4 * 256);
  Tensor t = Tensor::from_vector(x, Shape{4, 256});
  QTensor qt = QTensor::quantize(t, GgmlType::Q4_K);
  EXPECT_EQ(qt.shape(), (Shape{4, 256}));
  EXPECT_EQ(qt.nbytes(), 4u * 144u);
  Tensor d = qt.dequantize();
  EXPECT_EQ(d.shape(), (Shape{4, 256}));
  auto dv = d.to_vector<float>();
  std::vector<float> ref(4 * 256);
  auto hb = qt.to_host_bytes();
  q::dequantize_row(GgmlType::Q4_K, hb.data(), ref.data(), ref.size());
  EXPECT_EQ(dv, ref);
  EXPECT_EQ(qt.dequantize(DType::F16).dtype(), DType::F16);
  EXPECT_EQ(qt.str(), "QTensor[4,256] q4_K cpu");
}

// Empty quantized tensors (a GGUF may hold one) on every device present: the shapes
// come through, with zeros where a product has an empty inner dim.
TEST(QTensor, EmptyTensorsDequantizeAndMultiply) {
  for (Device dev : available_devices()) {
    SCOPED_TRACE(dev.str());
    QTensor e = QTensor::from_bytes(GgmlType::Q8_0, Shape{0, 32}, nullptr, 0, dev);
    EXPECT_EQ(e.dequantize().shape(), (Shape{0, 32}));
    EXPECT_EQ(e.dequantize(DType::F16).dtype(), DType::F16);
    EXPECT_EQ(QTensor::quantize(Tensor::zeros(Shape{0, 64}, DType::F32, dev), GgmlType::Q4_0).nbytes(), 0u);
    // y (3, 0) = x (3, 32) w^T with w (0, 32); and x (0, 32) against w (2, 32).
    Tensor x = Tensor::ones(Shape{3, 32}, DType::F32, dev);
    EXPECT_EQ(qmatmul(x, e).shape(), (Shape{3, 0}));
    QTensor w = QTensor::quantize(Tensor::ones(Shape{2, 32}, DType::F32, dev), GgmlType::Q8_0);
    EXPECT_EQ(qmatmul(Tensor::zeros(Shape{0, 32}, DType::F32, dev), w).shape(), (Shape{0, 2}));
    // An empty inner dim: sums of nothing.
    QTensor w0 = QTensor::from_bytes(GgmlType::Q8_0, Shape{2, 0}, nullptr, 0, dev);
    EXPECT_EQ(qmatmul(Tensor::ones(Shape{3, 0}, DType::F32, dev), w0).to_vector<float>(),
              std::vector<float>(6, 0.0f));
  }
}

TEST(QTensor, BadShapeAndDtypeThrow) {
  Tensor t = Tensor::zeros(Shape{2, 48});
  try {
    QTensor::quantize(t, GgmlType::Q8_0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ShapeMismatch);
    EXPECT_NE(std::string(e.what()).find("last dim 48"), std::string::npos);
  }
  try {
    QTensor::quantize(Tensor::zeros(Shape{2, 32}, DType::I32), GgmlType::Q8_0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::UnsupportedDType);
    EXPECT_NE(std::string(e.what()).find("i32"), std::string::npos);
  }
  std::vector<uint8_t> bytes(10);
  try {
    QTensor::from_bytes(GgmlType::Q8_0, Shape{32}, bytes.data(), bytes.size());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("needs 34 bytes, got 10"), std::string::npos);
  }
}

TEST(QMatmul, MatchesFloat64OfDequantizedOperands) {
  const size_t m = 3, n = 5, k = 512;
  std::mt19937 rng(11);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> xv(m * k), wv(n * k);
  for (auto& v : xv) v = nd(rng);
  for (auto& v : wv) v = nd(rng);
  Tensor x = Tensor::from_vector(xv, Shape{m, k});
  for (GgmlType t : kAllGgmlTypes) {
    if (t == GgmlType::Q8_K) continue;  // an activation format, never a weight in ggml
    QTensor w = QTensor::quantize(Tensor::from_vector(wv, Shape{n, k}), t);
    auto wd = w.dequantize().to_vector<float>();
    auto out = qmatmul(x, w).to_vector<float>();
    ASSERT_EQ(out.size(), m * n);
    double num = 0, den = 0;
    for (size_t i = 0; i < m; ++i) {
      for (size_t j = 0; j < n; ++j) {
        double ref = 0;
        for (size_t l = 0; l < k; ++l) ref += double(xv[i * k + l]) * wd[j * k + l];
        num += (out[i * n + j] - ref) * (out[i * n + j] - ref);
        den += ref * ref;
      }
    }
    // activations are quantized to 8 bits: NMSE bound as in test-backend-ops (5e-4)
    EXPECT_LE(num / den, 5e-4) << ggml_type_name(t);
  }
}

TEST(QMatmul, DequantGemmPathIsTheFloat64DotOfTheDequantizedWeight) {
  const size_t m = 4, n = 7, k = 768;
  std::mt19937 rng(12);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> xv(m * k), wv(n * k);
  for (auto& v : xv) v = nd(rng);
  for (auto& v : wv) v = nd(rng);
  const Tensor x = Tensor::from_vector(xv, Shape{m, k});
  for (GgmlType t :
       {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::F16}) {
    const size_t kt = t == GgmlType::Q4_K || t == GgmlType::Q6_K ? 512 : k;  // whole 256-blocks
    QTensor w = QTensor::quantize(
        Tensor::from_vector(std::vector<float>(wv.begin(), wv.begin() + ptrdiff_t(n * kt)), Shape{n, kt}), t);
    const Tensor xs = x.narrow(1, 0, kt).contiguous();
    const auto xh = xs.to_vector<float>();
    const auto wd = w.dequantize().to_vector<float>();
    const auto out = qmatmul(xs, w, QMatmulPath::DequantGemm).to_vector<float>();
    ASSERT_EQ(out.size(), m * n);
    for (size_t i = 0; i < m; ++i) {
      for (size_t j = 0; j < n; ++j) {
        double ref = 0, mag = 0;
        for (size_t l = 0; l < kt; ++l) {
          ref += double(xh[i * kt + l]) * wd[j * kt + l];
          mag += std::fabs(double(xh[i * kt + l]) * wd[j * kt + l]);
        }
        // f32 products and sums: a few units of 2^-24 of the sum of magnitudes
        EXPECT_NEAR(out[i * n + j], ref, 1e-5 * mag) << ggml_type_name(t) << " " << i << "," << j;
      }
    }
  }
}

TEST(QMatmul, EqualsRowByRowVecDotExactly) {
  // the batched kernel must give each output exactly what a single-row vec_dot gives
  const size_t m = 5, n = 3, k = 768;
  auto xv = synthetic(0.7f, m * k), wv = synthetic(2.0f, n * k);
  Tensor x = Tensor::from_vector(xv, Shape{m, k});
  for (GgmlType t : kAllGgmlTypes) {
    if (t == GgmlType::Q8_K) continue;
    QTensor w = QTensor::quantize(Tensor::from_vector(wv, Shape{n, k}), t);
    const auto wb = w.to_host_bytes();
    const GgmlType at = ggml_vec_dot_type(t);
    const size_t arow = ggml_row_size(at, k), wrow = ggml_row_size(t, k);
    auto out = qmatmul(x, w).to_vector<float>();
    for (size_t i = 0; i < m; ++i) {
      std::vector<uint8_t> a(arow);
      q::quantize_row(at, xv.data() + i * k, a.data(), k);
      for (size_t j = 0; j < n; ++j) {
        ASSERT_EQ(out[i * n + j], q::vec_dot(t, k, wb.data() + j * wrow, a.data())) << ggml_type_name(t);
      }
    }
  }
}

TEST(QMatmul, RowsBeyondOneActivationChunk) {
  // 1000 rows of x (more than one cache-sized chunk of Q8_K activation rows at k = 256)
  // each give what a single-row vec_dot gives.
  const size_t m = 1000, n = 3, k = 256;
  auto xv = synthetic(0.9f, m * k), wv = synthetic(1.3f, n * k);
  for (GgmlType t : {GgmlType::Q4_K, GgmlType::Q8_0}) {
    QTensor w = QTensor::quantize(Tensor::from_vector(wv, Shape{n, k}), t);
    const auto wb = w.to_host_bytes();
    const GgmlType at = ggml_vec_dot_type(t);
    const size_t arow = ggml_row_size(at, k), wrow = ggml_row_size(t, k);
    const auto out = qmatmul(Tensor::from_vector(xv, Shape{m, k}), w).to_vector<float>();
    std::vector<uint8_t> a(arow);
    for (size_t i = 0; i < m; ++i) {
      q::quantize_row(at, xv.data() + i * k, a.data(), k);
      for (size_t j = 0; j < n; ++j)
        ASSERT_EQ(out[i * n + j], q::vec_dot(t, k, wb.data() + j * wrow, a.data())) << ggml_type_name(t);
    }
  }
}

TEST(QMatmul, BatchDimsAndErrors) {
  auto wv = synthetic(0.3f, 4 * 64);
  QTensor w = QTensor::quantize(Tensor::from_vector(wv, Shape{4, 64}), GgmlType::Q8_0);
  Tensor x = Tensor::ones(Shape{2, 3, 64});
  Tensor y = qmatmul(x, w);
  EXPECT_EQ(y.shape(), (Shape{2, 3, 4}));
  try {
    qmatmul(Tensor::ones(Shape{2, 32}), w);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ShapeMismatch);
    EXPECT_NE(std::string(e.what()).find("inner dims differ"), std::string::npos);
  }
  try {
    qmatmul(Tensor::ones(Shape{2, 64}, DType::I64), w);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::UnsupportedDType);
  }
  QTensor w3 = QTensor::quantize(Tensor::ones(Shape{2, 2, 64}), GgmlType::Q8_0);
  try {
    qmatmul(x, w3);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ShapeMismatch);
    EXPECT_NE(std::string(e.what()).find("rank 2"), std::string::npos);
  }
}

// add_rms_norm_qmatmul and swiglu_qmatmul against float64 math over the dequantized
// weight (the bound covers MatVec's 8-bit rounding of the row); the sum is x + r in
// f32, exactly.
TEST(QMatmulFused, RowsMatchFloat64) {
  const size_t n = 5, k = 256;
  std::mt19937 rng(17);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const auto draw = [&](size_t len, float mean) {
    std::vector<float> v(len);
    for (auto& e : v) e = mean + nd(rng);
    return v;
  };
  const std::vector<float> xv = draw(k, 0), rv = draw(k, 0), av = draw(k, 1), wv = draw(n * k, 0);
  const float eps = 1e-5f;
  for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q4_K, GgmlType::Q8_0}) {
    SCOPED_TRACE(ggml_type_name(t));
    const QTensor w = QTensor::quantize(Tensor::from_vector(wv, Shape{n, k}), t);
    const std::vector<float> wd = w.dequantize().to_vector<float>();
    const auto product = [&](const std::vector<double>& row) {
      std::vector<float> y(n);
      for (size_t j = 0; j < n; ++j) {
        double acc = 0;
        for (size_t i = 0; i < k; ++i) acc += row[i] * wd[j * k + i];
        y[j] = float(acc);
      }
      return y;
    };
    std::vector<float> sum(k);
    double ms = 0;
    for (size_t i = 0; i < k; ++i) {
      sum[i] = xv[i] + rv[i];
      ms += double(sum[i]) * sum[i] / double(k);
    }
    std::vector<double> normed(k), act(k);
    for (size_t i = 0; i < k; ++i) {
      normed[i] = sum[i] / std::sqrt(ms + eps) * av[i];
      act[i] = xv[i] / (1.0 + std::exp(-double(xv[i]))) * rv[i];
    }
    const Tensor x = Tensor::from_vector(xv, Shape{1, k}), r = Tensor::from_vector(rv, Shape{1, k});
    auto [s, y] = add_rms_norm_qmatmul(x, r, Tensor::from_vector(av, Shape{k}), eps, w);
    EXPECT_EQ(s.to_vector<float>(), sum);
    ASSERT_EQ(y.shape(), (Shape{1, n}));
    const std::vector<float> want = product(normed), got = y.to_vector<float>();
    double num = 0, den = 0;
    for (size_t j = 0; j < n; ++j) num += (got[j] - want[j]) * (got[j] - want[j]), den += want[j] * want[j];
    EXPECT_LT(num / den, 5e-4);
    const std::vector<float> want_s = product(act), got_s = swiglu_qmatmul(x, r, w).to_vector<float>();
    num = den = 0;
    for (size_t j = 0; j < n; ++j)
      num += (got_s[j] - want_s[j]) * (got_s[j] - want_s[j]), den += want_s[j] * want_s[j];
    EXPECT_LT(num / den, 5e-4);
  }
}

// Bad operands get the errors of the op they reach: add_rms_norm / swiglu, then qmatmul.
TEST(QMatmulFused, Errors) {
  const QTensor w = QTensor::quantize(Tensor::ones(Shape{4, 64}), GgmlType::Q8_0);
  const Tensor x = Tensor::ones(Shape{1, 64});
  test::expect_error(
      [&] {
        add_rms_norm_qmatmul(x, Tensor::ones(Shape{1, 32}), Tensor(), 1e-5f, w);
      },
      ErrorKind::ShapeMismatch, {"add_rms_norm", "[1,32]"});
  test::expect_error([&] { add_rms_norm_qmatmul(x, x, Tensor(), -1.0f, w); }, ErrorKind::InvalidArgument,
                     {"add_rms_norm", "eps"});
  const Tensor x32 = Tensor::ones(Shape{1, 32});
  test::expect_error([&] { add_rms_norm_qmatmul(x32, x32, Tensor(), 1e-5f, w); }, ErrorKind::ShapeMismatch,
                     {"qmatmul", "inner dims differ"});
  test::expect_error(
      [&] {
        swiglu_qmatmul(x, Tensor::ones(Shape{1, 64}, DType::I64), w);
      },
      ErrorKind::DTypeMismatch, {"swiglu"});
  test::expect_error([&] { swiglu_qmatmul(x32, x32, w); }, ErrorKind::ShapeMismatch, {"qmatmul"});
}
