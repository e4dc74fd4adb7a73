// The CPU backend's vector kernels (src/backend/cpu/simd.h) on every target this
// machine runs (Highway's run-time choice narrowed to one target per test instance):
// conversions bit for bit against wick/dtype.h's scalar conversions (each of the 65536
// halves, and f32 bit patterns across every exponent, subnormals, ties, overflow and NaN
// payloads), the transcendental ops against the float64 <cmath> references of
// check/elementwise_ref.h, sums and softmax rows against float64 loops, at every length
// around the vector widths (the padded last vector).
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "backend/cpu/simd.h"
#include "check/elementwise_ref.h"
#include "wick/dtype.h"

namespace wick {
namespace {

namespace simd = cpu::simd;

// Each test runs once per vector target this machine supports and simd.cpp is compiled
// for: Highway's dispatch then picks that target (the mock is lifted afterwards).
class CpuSimd : public ::testing::TestWithParam<int64_t> {
 protected:
  void SetUp() override { hwy::SetSupportedTargetsForTest(GetParam()); }
  void TearDown() override { hwy::SetSupportedTargetsForTest(0); }
};
INSTANTIATE_TEST_SUITE_P(Targets, CpuSimd, ::testing::ValuesIn(hwy::SupportedAndGeneratedTargets()),
                         [](const ::testing::TestParamInfo<int64_t>& info) {
                           return std::string(hwy::TargetName(info.param));
                         });

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint32_t to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// f32 bit patterns: every exponent with mantissas near the rounding boundaries of
// f16 and bf16 (ties, one below, one above), a pseudo-random spread, and the specials.
std::vector<float> conversion_inputs() {
  std::vector<uint32_t> bits;
  for (uint32_t sign : {0u, 0x80000000u}) {
    for (uint32_t e = 0; e < 256; ++e) {
      for (uint32_t m : {0u, 1u, 0x0fffu, 0x1000u, 0x1001u, 0x2000u, 0x3000u, 0x7fffu, 0x8000u, 0x8001u,
                         0x18000u, 0x400000u, 0x7fe000u, 0x7ff000u, 0x7fffffu, 0x402000u, 0x3ff000u}) {
        bits.push_back(sign | (e << 23) | m);
      }
    }
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) bits.push_back(uint32_t(rng()));
  std::vector<float> v;
  for (uint32_t b : bits) v.push_back(from_bits(b));
  return v;
}

TEST_P(CpuSimd, NarrowToF16AndBf16GivesTheScalarConversionsBits) {
  std::vector<float> x = conversion_inputs();
  for (DType half : {DType::F16, DType::BF16}) {
    // odd length: the padded last vector too
    const size_t n = x.size() | 1;
    x.resize(n, 65519.0f);
    std::vector<uint16_t> y(n);
    simd::narrow(half, x.data(), y.data(), n);
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) {
      uint16_t want = half == DType::F16 ? f32_to_f16_bits(x[i]) : f32_to_bf16_bits(x[i]);
      if (y[i] != want && bad++ < 5)
        ADD_FAILURE() << dtype_name(half) << " of bits " << std::hex << to_bits(x[i]) << ": " << y[i]
                      << ", want " << want;
    }
    EXPECT_EQ(bad, 0u) << dtype_name(half);
  }
}

TEST_P(CpuSimd, WidenEveryF16AndBf16Value) {
  std::vector<uint16_t> x(65536 + 3);
  for (size_t i = 0; i < x.size(); ++i) x[i] = uint16_t(i);
  for (DType half : {DType::F16, DType::BF16}) {
    std::vector<float> y(x.size());
    simd::widen(half, x.data(), y.data(), x.size());
    size_t bad = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      float want = half == DType::F16 ? f16_bits_to_f32(x[i]) : bf16_bits_to_f32(x[i]);
      // NaN: the same sign and payload; F16C quiets a signaling f16 NaN (the quiet bit set)
      const uint32_t quiet = 0x00400000u;
      bool same = std::isnan(want) ? std::isnan(y[i]) && (to_bits(y[i]) | quiet) == (to_bits(want) | quiet)
                                   : y[i] == want;
      same = same && std::signbit(y[i]) == std::signbit(want);
      if (!same && bad++ < 5) ADD_FAILURE() << dtype_name(half) << " bits " << x[i] << ": " << y[i];
    }
    EXPECT_EQ(bad, 0u) << dtype_name(half);
  }
}

TEST_P(CpuSimd, ConversionsOfEveryShortLength) {
  for (size_t n = 0; n <= 67; ++n) {
    std::vector<float> x(n), back(n, -1.0f);
    for (size_t i = 0; i < n; ++i) x[i] = float(i) - 0.5f;
    std::vector<uint16_t> h(n + 1, 0xabcd);  // one guard element past the end
    simd::narrow(DType::F16, x.data(), h.data(), n);
    EXPECT_EQ(h[n], 0xabcd) << n;
    simd::widen(DType::F16, h.data(), back.data(), n);
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(back[i], x[i]) << n << " " << i;
  }
}

// |a - b| in units of the f32 ulp at b (or of the smallest normal's ulp near zero).
double ulps(float a, double b) {
  if (std::isnan(b)) return std::isnan(a) ? 0 : 1e9;
  if (std::isinf(b)) return a == b ? 0 : 1e9;
  double ulp = std::ldexp(1.0, std::max(std::ilogb(b), -126) - 23);
  return std::fabs(double(a) - b) / ulp;
}

TEST_P(CpuSimd, TranscendentalsOnF32WithinTheirUlpBounds) {
  // SLEEF's functions: 1 ulp; silu / sigmoid / gelu / gelu_erf add a few roundings of
  // their formulas (and gelu's cancellation for negative x is measured in the ulp of
  // the result, so its inputs stay where the result does not cancel).
  struct Case {
    UnaryOp op;
    double lo, hi, max_ulps;
  };
  const Case cases[] = {{UnaryOp::Exp, -87, 88, 1.0},   {UnaryOp::Log, 1e-30, 1e30, 1.0},
                        {UnaryOp::Sin, -100, 100, 1.0}, {UnaryOp::Cos, -100, 100, 1.0},
                        {UnaryOp::Tanh, -10, 10, 1.0},  {UnaryOp::Erf, -4, 4, 1.0},
                        {UnaryOp::Silu, -80, 80, 4.0},  {UnaryOp::Sigmoid, -80, 80, 4.0},
                        {UnaryOp::Gelu, -0.5, 10, 4.0}, {UnaryOp::GeluErf, -0.5, 10, 4.0}};
  // Below SSE4 the kernels are the scalar loops on libm, whose f32 functions glibc
  // documents at up to 2 ulps (tanhf; 2.07 in this test's measure, the ulp of the f32
  // result): those targets get 3 where SLEEF's bound is 1.
  const bool sleef = HWY_ARCH_X86 && GetParam() <= HWY_SSE4;
  std::mt19937 rng(3);
  for (const Case& c : cases) {
    const double max_ulps = sleef ? c.max_ulps : std::max(c.max_ulps, 3.0);
    const size_t n = 100003;
    std::vector<float> x(n), y(n);
    std::uniform_real_distribution<double> u(0, 1);
    for (size_t i = 0; i < n; ++i) {
      double t = u(rng);
      x[i] = c.op == UnaryOp::Log ? float(std::exp(std::log(c.lo) + t * (std::log(c.hi) - std::log(c.lo))))
                                  : float(c.lo + t * (c.hi - c.lo));
    }
    ASSERT_TRUE(simd::has_unary(c.op, DType::F32));
    simd::unary_run(c.op, DType::F32, x.data(), y.data(), n);
    double worst = 0;
    size_t at = 0;
    for (size_t i = 0; i < n; ++i) {
      double e = ulps(y[i], ref::unary(c.op, double(x[i])));
      if (e > worst) worst = e, at = i;
    }
    EXPECT_LE(worst, max_ulps) << unary_op_name(c.op) << " at x = " << x[at] << ": " << y[at] << " vs "
                               << ref::unary(c.op, double(x[at]));
  }
}

TEST_P(CpuSimd, TranscendentalsOfSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {nan, inf, -inf, 0.0f, -0.0f, 1e-45f, -1e-45f, 100.0f, -100.0f, 89.0f, -104.0f};
  for (UnaryOp op : {UnaryOp::Exp, UnaryOp::Log, UnaryOp::Sin, UnaryOp::Cos, UnaryOp::Tanh, UnaryOp::Erf,
                     UnaryOp::Silu, UnaryOp::Sigmoid, UnaryOp::Gelu, UnaryOp::GeluErf}) {
    std::vector<float> y(x.size());
    simd::unary_run(op, DType::F32, x.data(), y.data(), x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      double want = ref::unary(op, double(x[i]));
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(y[i])) << unary_op_name(op) << "(" << x[i] << ") = " << y[i];
      } else if (std::isinf(float(want))) {  // beyond f32's range
        EXPECT_EQ(y[i], float(want)) << unary_op_name(op) << "(" << x[i] << ")";
      } else {
        EXPECT_NEAR(y[i], want, 2e-7 * (1 + std::fabs(want))) << unary_op_name(op) << "(" << x[i] << ")";
      }
    }
  }
}

TEST_P(CpuSimd, UnaryOnHalvesRoundsTheF32ResultOnce) {
  // bf16 / f16 in, f32 math, one rounding out: within one half ulp of the exact value
  // plus the f32 function's error.
  for (DType half : {DType::F16, DType::BF16}) {
    for (size_t n : {size_t(1), size_t(15), size_t(16), size_t(17), size_t(1000)}) {
      std::vector<uint16_t> x(n), y(n);
      std::vector<float> xf(n);
      for (size_t i = 0; i < n; ++i) xf[i] = -4.0f + 8.0f * float(i) / float(n);
      simd::narrow(half, xf.data(), x.data(), n);
      simd::unary_run(UnaryOp::Exp, half, x.data(), y.data(), n);
      for (size_t i = 0; i < n; ++i) {
        double xi = half == DType::F16 ? f16_bits_to_f32(x[i]) : bf16_bits_to_f32(x[i]);
        double got = half == DType::F16 ? f16_bits_to_f32(y[i]) : bf16_bits_to_f32(y[i]);
        double eps = half == DType::F16 ? 0x1.0p-10 : 0x1.0p-7;
        EXPECT_NEAR(got, std::exp(xi), std::exp(xi) * eps * 0.5 * 1.001) << dtype_name(half) << " " << xi;
      }
    }
  }
}

TEST_P(CpuSimd, SumOfEveryLengthAgainstFloat64) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1, 1);
  for (size_t n : {0, 1, 7, 8, 15, 16, 17, 63, 64, 65, 255, 256, 257, 511, 513, 1000, 4096, 16384, 100001}) {
    std::vector<float> x(n);
    double want = 0, abs_sum = 0;
    for (float& v : x) {
      v = u(rng);
      want += v;
      abs_sum += std::fabs(v);
    }
    float got = simd::sum_run(DType::F32, x.data(), n);
    // pairwise in f32: error ~ eps * log2(n) * sum |x|
    EXPECT_NEAR(got, want, 0x1.0p-23 * (2 + std::log2(double(n) + 1)) * abs_sum) << n;
    std::vector<uint16_t> b(n);
    simd::narrow(DType::BF16, x.data(), b.data(), n);
    double want_b = 0;
    for (uint16_t v : b) want_b += bf16_bits_to_f32(v);
    EXPECT_NEAR(simd::sum_run(DType::BF16, b.data(), n), want_b,
                0x1.0p-23 * (2 + std::log2(double(n) + 1)) * abs_sum)
        << n;
  }
}

// Elements of dt holding the values x (f16 / bf16 rounded by the scalar conversions),
// and the values they hold as doubles.
std::vector<uint8_t> as_dtype(DType dt, const std::vector<float>& x, std::vector<double>& held) {
  std::vector<uint8_t> bytes(x.size() * dtype_size(dt));
  held.resize(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    if (dt == DType::F32) {
      std::memcpy(bytes.data() + 4 * i, &x[i], 4);
      held[i] = x[i];
      continue;
    }
    uint16_t h = dt == DType::F16 ? f32_to_f16_bits(x[i]) : f32_to_bf16_bits(x[i]);
    std::memcpy(bytes.data() + 2 * i, &h, 2);
    held[i] = dt == DType::F16 ? f16_bits_to_f32(h) : bf16_bits_to_f32(h);
  }
  return bytes;
}

// Column sums added into a non-zero accumulator, rows at a stride past their width,
// every row count around the passes of four and widths around the vector widths.
TEST_P(CpuSimd, SumRowsAgainstFloat64) {
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> u(-1, 1);
  for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
    for (size_t rows : {0, 1, 2, 3, 4, 5, 7, 8, 9, 64}) {
      for (size_t n : {1, 3, 8, 15, 16, 17, 31, 33, 100}) {
        const size_t stride = n + 5;
        std::vector<float> x(rows * stride);
        for (float& v : x) v = u(rng);
        std::vector<double> held;
        std::vector<uint8_t> bytes = as_dtype(dt, x, held);
        std::vector<float> acc(n);
        for (size_t i = 0; i < n; ++i) acc[i] = float(i) - 4.5f;
        std::vector<double> want(acc.begin(), acc.end()), abs_sum(n, 4.5 + double(n));
        for (size_t r = 0; r < rows; ++r) {
          for (size_t i = 0; i < n; ++i) {
            want[i] += held[r * stride + i];
            abs_sum[i] += std::fabs(held[r * stride + i]);
          }
        }
        simd::sum_rows(dt, bytes.data(), stride, rows, acc.data(), n);
        for (size_t i = 0; i < n; ++i) {
          // one f32 rounding per addition: rows + 1 of them at most
          EXPECT_NEAR(acc[i], want[i], 0x1.0p-24 * double(rows + 1) * abs_sum[i])
              << dtype_name(dt) << " rows " << rows << " n " << n << " i " << i;
        }
      }
    }
  }
}

TEST_P(CpuSimd, ExtremeAndFindOfEveryLengthAgainstDoubleLoops) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-100, 100);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
    for (size_t n : {1, 2, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 1000, 4096}) {
      // case 0: random; 1: a NaN at a random position; 2: two NaNs; 3: +-inf; 4: all equal
      for (int c = 0; c < 5; ++c) {
        std::vector<float> x(n);
        for (float& v : x) v = c == 4 ? 3.5f : u(rng);
        size_t p = rng() % n, q = rng() % n;
        if (c == 1 || c == 2) x[p] = nan;
        if (c == 2) x[q] = nan;
        if (c == 3) x[p] = -inf, x[q] = inf;
        std::vector<double> held;
        std::vector<uint8_t> bytes = as_dtype(dt, x, held);
        double mx = -INFINITY, mn = INFINITY;
        size_t first_nan = n;
        for (size_t i = 0; i < n; ++i) {
          if (std::isnan(held[i])) {
            first_nan = std::min(first_nan, i);
          } else {
            mx = std::max(mx, held[i]);
            mn = std::min(mn, held[i]);
          }
        }
        std::string at =
            std::string(dtype_name(dt)) + " n " + std::to_string(n) + " case " + std::to_string(c);
        float got_max = simd::extreme_run(dt, bytes.data(), n, true);
        float got_min = simd::extreme_run(dt, bytes.data(), n, false);
        if (first_nan < n) {
          EXPECT_TRUE(std::isnan(got_max)) << at;
          EXPECT_TRUE(std::isnan(got_min)) << at;
          EXPECT_EQ(simd::find_run(dt, bytes.data(), n, nan), first_nan) << at;
          continue;
        }
        EXPECT_EQ(double(got_max), mx) << at;
        EXPECT_EQ(double(got_min), mn) << at;
        for (double v : {mx, mn}) {
          size_t want = 0;
          while (held[want] != v) ++want;
          EXPECT_EQ(simd::find_run(dt, bytes.data(), n, float(v)), want) << at;
        }
        EXPECT_EQ(simd::find_run(dt, bytes.data(), n, 1000.0f), n) << at;  // not present
        EXPECT_EQ(simd::find_run(dt, bytes.data(), n, nan), n) << at;
      }
    }
  }
}

TEST_P(CpuSimd, SoftmaxRowAgainstFloat64) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(-6, 6);
  for (bool log : {false, true}) {
    for (size_t n : {1, 2, 5, 16, 17, 33, 1000, 8192}) {
      std::vector<float> x(n), y(n);
      std::vector<double> scratch(simd::softmax_scratch(n));
      for (float& v : x) v = u(rng);
      simd::softmax_row(DType::F32, x.data(), y.data(), n, log, scratch.data());
      double m = -INFINITY, s = 0;
      for (float v : x) m = std::max(m, double(v));
      for (float v : x) s += std::exp(double(v) - m);
      for (size_t i = 0; i < n; ++i) {
        double want = log ? double(x[i]) - m - std::log(s) : std::exp(double(x[i]) - m) / s;
        // the bound of the parity suite's softmax against float64: 2 ulps of f32
        EXPECT_NEAR(y[i], want, 2 * 0x1.0p-23 * (1 + std::fabs(want)))
            << (log ? "log " : "") << n << " " << i;
      }
    }
  }
}

TEST_P(CpuSimd, SoftmaxRowWithNanOrInfinity) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<double> scratch(simd::softmax_scratch(40));
  std::vector<float> y(40);
  std::vector<float> with_nan(40, 1.0f);
  with_nan[37] = nan;
  simd::softmax_row(DType::F32, with_nan.data(), y.data(), 40, false, scratch.data());
  for (float v : y) EXPECT_TRUE(std::isnan(v));
  std::vector<float> with_ninf(40, 0.0f);
  with_ninf[3] = -inf;
  simd::softmax_row(DType::F32, with_ninf.data(), y.data(), 40, false, scratch.data());
  EXPECT_EQ(y[3], 0.0f);
  EXPECT_NEAR(y[0], 1.0 / 39, 1e-7);
  std::vector<float> with_inf(40, 0.0f);
  with_inf[5] = inf;  // inf - inf: NaN, as exp(x - max) / sum in float64
  simd::softmax_row(DType::F32, with_inf.data(), y.data(), 40, false, scratch.data());
  EXPECT_TRUE(std::isnan(y[5]));
}

// The value rounded once to nearest even with `bits` significant bits and minimum
// normal exponent `emin` (f16: 11, -14; bf16: 8, -126), overflow to inf at `max_exp`.
double round_once(double v, int bits, int emin, int max_exp) {
  if (v == 0 || !std::isfinite(v)) return v;
  int e;
  std::frexp(v, &e);  // v = m 2^e, m in [0.5, 1)
  const double q = std::ldexp(1.0, std::max(e - 1, emin) - (bits - 1));
  const double r = std::nearbyint(v / q) * q;
  return std::fabs(r) >= std::ldexp(1.0, max_exp) ? std::copysign(INFINITY, v) : r;
}

template <class T>
double rounded_ref(double v) {
  if constexpr (std::is_same_v<T, float>) {
    return double(float(v));
  } else if constexpr (std::is_same_v<T, bf16>) {
    return round_once(v, 8, -126, 128);
  } else {
    return round_once(v, 11, -14, 16);
  }
}

// ((x - center) * mul) * alpha + beta in f64, rounded once: results within 2^-30 of
// the midpoints between neighbours of the dtype (where rounding to f32 first would
// land on the midpoint and round a second time), below f32's normals, past the
// dtype's range, NaN; lengths around the vector widths.
template <class T>
void check_scale_row(DType dt) {
  std::mt19937 rng(21);
  for (size_t n : {1, 3, 8, 15, 16, 17, 31, 33, 64, 100, 1027}) {
    std::vector<T> x(n);
    std::vector<double> alpha(n), beta(n);
    for (size_t i = 0; i < n; ++i) {
      x[i] = T(float(int(rng() % 7) - 3) * 0.5f);
      alpha[i] = 1.0 + double(rng() % 5) * 0.25;
      const int kind = int(i % 8);
      const double ulp = std::is_same_v<T, bf16> ? 0x1.0p-7 : std::is_same_v<T, f16> ? 0x1.0p-10 : 0x1.0p-23;
      const double mid = 1.0 + ulp * (double(rng() % 64) + 0.5);  // a midpoint in [1, 2)
      if (kind == 0) beta[i] = mid + 0x1.0p-30;
      if (kind == 1) beta[i] = mid - 0x1.0p-30;
      if (kind == 2) beta[i] = mid;
      if (kind == 3) beta[i] = 1e-39 * double(rng() % 100);  // tiny (x * 0 below)
      if (kind == 4) beta[i] = 1e39;                         // past every half range
      if (kind == 5) beta[i] = -std::ldexp(mid, -130);       // bf16 subnormal range
      if (kind == 6) beta[i] = double(rng() % 1000) / 7.0;
      if (kind == 7) beta[i] = i % 16 == 7 ? NAN : 0.0;
      if (kind <= 5) alpha[i] = 0.0;  // the result is beta itself
    }
    std::vector<T> y(n);
    const double center = 0.25, mul = 1.0 / 3.0;
    simd::scale_row(dt, x.data(), y.data(), n, center, mul, alpha.data(), beta.data());
    for (size_t i = 0; i < n; ++i) {
      const double want = rounded_ref<T>((double(float(x[i])) - center) * mul * alpha[i] + beta[i]);
      const double got = double(float(y[i]));
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << n << " " << i;
      } else {
        EXPECT_EQ(got, want) << dtype_name(dt) << " n " << n << " i " << i << " beta " << beta[i];
      }
    }
    // Without alpha and beta: ((x - center) * mul) only.
    simd::scale_row(dt, x.data(), y.data(), n, center, mul, nullptr, nullptr);
    for (size_t i = 0; i < n; ++i)
      EXPECT_EQ(double(float(y[i])), rounded_ref<T>((double(float(x[i])) - center) * mul)) << n << " " << i;
  }
}

TEST_P(CpuSimd, NormScaleRowRoundsTheFloat64ResultOnce) {
  check_scale_row<float>(DType::F32);
  check_scale_row<f16>(DType::F16);
  check_scale_row<bf16>(DType::BF16);
}

TEST_P(CpuSimd, NormMomentAndAddRowsAgainstFloat64) {
  std::mt19937 rng(22);
  std::uniform_real_distribution<float> u(-4, 4);
  for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
    for (size_t n : {1, 7, 16, 17, 32, 33, 65, 1000}) {
      std::vector<float> xf(n), rf(n);
      std::vector<uint16_t> xh(n), rh(n), yh(n);
      for (size_t i = 0; i < n; ++i) xf[i] = u(rng) + 10.0f, rf[i] = u(rng);
      const void* x = xf.data();
      if (dt != DType::F32) {  // the values as the dtype holds them
        for (size_t i = 0; i < n; ++i) {
          xh[i] = dt == DType::F16 ? f32_to_f16_bits(xf[i]) : f32_to_bf16_bits(xf[i]);
          rh[i] = dt == DType::F16 ? f32_to_f16_bits(rf[i]) : f32_to_bf16_bits(rf[i]);
          xf[i] = dt == DType::F16 ? f16_bits_to_f32(xh[i]) : bf16_bits_to_f32(xh[i]);
          rf[i] = dt == DType::F16 ? f16_bits_to_f32(rh[i]) : bf16_bits_to_f32(rh[i]);
        }
        x = xh.data();
      }
      double s = 0, ss = 0, sc = 0;
      for (float v : xf) s += v, ss += double(v) * v, sc += (double(v) - 10.0) * (double(v) - 10.0);
      const std::string what = std::string(dtype_name(dt)) + " n " + std::to_string(n);
      EXPECT_NEAR(simd::moment_row(dt, x, n, 0.0, false), s, 1e-12 * std::fabs(s)) << what;
      EXPECT_NEAR(simd::moment_row(dt, x, n, 0.0, true), ss, 1e-12 * ss) << what;
      EXPECT_NEAR(simd::moment_row(dt, x, n, 10.0, true), sc, 1e-12 * sc + 1e-300) << what;
      // add: a + b in f32, rounded once to the dtype
      if (dt == DType::F32) {
        std::vector<float> y(n);
        simd::add_row(dt, xf.data(), rf.data(), y.data(), n);
        for (size_t i = 0; i < n; ++i) EXPECT_EQ(y[i], xf[i] + rf[i]) << what;
      } else {
        simd::add_row(dt, xh.data(), rh.data(), yh.data(), n);
        for (size_t i = 0; i < n; ++i) {
          const float got = dt == DType::F16 ? f16_bits_to_f32(yh[i]) : bf16_bits_to_f32(yh[i]);
          const double want = dt == DType::F16 ? round_once(double(xf[i] + rf[i]), 11, -14, 16)
                                               : round_once(double(xf[i] + rf[i]), 8, -126, 128);
          EXPECT_EQ(double(got), want) << what << " i " << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace wick
