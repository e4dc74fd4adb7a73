// dtype conversions: f16 and bf16 exhaustively (every bit pattern decodes to the
// value the format defines; every tie between neighbours rounds to even; overflow,
// subnormals, NaN), f64 -> f16/bf16 with a single rounding, and every cast pair of
// Tensor::to_dtype against rules written here (including strided inputs).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "base/dispatch.h"
#include "wick/tensor.h"

namespace wick {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// The value a 16-bit pattern denotes, from the format's definition: sign, `ebits`
// exponent bits (bias 2^(ebits-1)-1), `mbits` mantissa bits, subnormals, inf, NaN.
double decode(uint16_t h, int ebits, int mbits) {
  int bias = (1 << (ebits - 1)) - 1;
  int e = (h >> mbits) & ((1 << ebits) - 1);
  int m = h & ((1 << mbits) - 1);
  double sign = (h >> 15) ? -1.0 : 1.0;
  if (e == (1 << ebits) - 1) return m ? kNaN : sign * kInf;
  if (e == 0) return sign * std::ldexp(double(m), 1 - bias - mbits);
  return sign * std::ldexp(1.0 + std::ldexp(double(m), -mbits), e - bias);
}
double decode_f16(uint16_t h) { return decode(h, 5, 10); }
double decode_bf16(uint16_t h) { return decode(h, 8, 7); }

bool is_nan16(uint16_t h, int mbits) {
  uint16_t exp_mask = uint16_t(0x7fff & ~((1 << mbits) - 1));
  return (h & exp_mask) == exp_mask && (h & ((1 << mbits) - 1)) != 0;
}

// ---- f16 ---------------------------------------------------------------------------------

TEST(F16, EveryBitPatternDecodesToItsValue) {
  for (uint32_t b = 0; b < 65536; ++b) {
    uint16_t h = uint16_t(b);
    double want = decode_f16(h);
    float got = f16_bits_to_f32(h);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << b;
      ASSERT_EQ(std::signbit(got), bool(h >> 15)) << std::hex << b;
    } else {
      ASSERT_EQ(double(got), want) << std::hex << b;
      ASSERT_EQ(std::signbit(got), bool(h >> 15)) << std::hex << b;  // -0 stays -0
    }
  }
}

TEST(F16, EveryBitPatternRoundTripsThroughF32) {
  for (uint32_t b = 0; b < 65536; ++b) {
    uint16_t h = uint16_t(b);
    uint16_t back = f32_to_f16_bits(f16_bits_to_f32(h));
    if (is_nan16(h, 10)) {
      ASSERT_TRUE(is_nan16(back, 10)) << std::hex << b;  // NaN stays NaN (quieted), sign kept
      ASSERT_EQ(back & 0x8000, h & 0x8000) << std::hex << b;
    } else {
      ASSERT_EQ(back, h) << std::hex << b;
    }
  }
}

// Between every pair of neighbouring finite f16 values (and between the largest
// finite and inf): the midpoint rounds to the even pattern, anything off the
// midpoint to the nearer one. Covers subnormals, the subnormal/normal boundary and
// overflow (65520 -> inf). Run from f32 and from f64.
TEST(F16, TiesRoundToEvenEverywhereFromF32AndF64) {
  for (uint32_t b = 0; b < 0x7c00; ++b) {
    uint16_t lo = uint16_t(b), hi = uint16_t(b + 1);
    double a = decode_f16(lo);
    double c = hi == 0x7c00 ? 65536.0 : decode_f16(hi);  // inf's slot is one ulp above 65504
    double mid = (a + c) / 2;
    uint16_t even = (lo & 1) ? hi : lo;
    for (double s : {1.0, -1.0}) {
      uint16_t sign = s < 0 ? 0x8000 : 0;
      ASSERT_EQ(f32_to_f16_bits(float(s * mid)), even | sign) << "f32 mid " << mid;
      ASSERT_EQ(f64_to_f16_bits(s * mid), even | sign) << "f64 mid " << mid;
      float below = std::nextafter(float(mid), 0.0f),
            above = std::nextafter(float(mid), std::numeric_limits<float>::infinity());
      ASSERT_EQ(f32_to_f16_bits(float(s) * below), lo | sign) << "f32 below " << mid;
      ASSERT_EQ(f32_to_f16_bits(float(s) * above), hi | sign) << "f32 above " << mid;
      ASSERT_EQ(f64_to_f16_bits(s * std::nextafter(mid, 0.0)), lo | sign) << "f64 below " << mid;
      ASSERT_EQ(f64_to_f16_bits(s * std::nextafter(mid, kInf)), hi | sign) << "f64 above " << mid;
    }
  }
}

TEST(F16, OverflowSubnormalsAndNaN) {
  EXPECT_EQ(f32_to_f16_bits(65504.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16_bits(65519.99f), 0x7bff);
  EXPECT_EQ(f32_to_f16_bits(65520.0f), 0x7c00);
  EXPECT_EQ(f32_to_f16_bits(1e10f), 0x7c00);
  EXPECT_EQ(f32_to_f16_bits(-1e10f), 0xfc00);
  EXPECT_EQ(f32_to_f16_bits(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.0f, -24)), 0x0001);     // smallest subnormal
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.0f, -25)), 0x0000);     // tie with 0: even
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(3.0f, -25)), 0x0002);     // tie 1|2: even
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.0f, -14)), 0x0400);     // smallest normal
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1023.5f, -24)), 0x0400);  // tie 0x3ff|0x400: even
  EXPECT_EQ(f32_to_f16_bits(1e-10f), 0x0000);
  EXPECT_EQ(f32_to_f16_bits(-1e-10f), 0x8000);
  EXPECT_EQ(f32_to_f16_bits(-0.0f), 0x8000);
  for (uint32_t nan : {0x7fc00000u, 0x7f800001u, 0xffc00000u, 0x7fa00000u}) {
    uint16_t h = f32_to_f16_bits(float_of(nan));
    EXPECT_TRUE(is_nan16(h, 10)) << std::hex << nan << " -> " << h;
    EXPECT_EQ(h & 0x8000, (nan >> 16) & 0x8000) << std::hex << nan;
  }
  EXPECT_TRUE(is_nan16(f64_to_f16_bits(kNaN), 10));
  EXPECT_EQ(f64_to_f16_bits(1e300), 0x7c00);
  EXPECT_EQ(f64_to_f16_bits(-1e-300), 0x8000);
}

// A double just above a tie rounds up directly; through f32 the excess is lost
// first and the (now exact) tie rounds down to even.
TEST(F16, F64ConvertsWithASingleRounding) {
  double d = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(f64_to_f16_bits(d), 0x3c01);
  EXPECT_EQ(f32_to_f16_bits(float(d)), 0x3c00);  // the double rounding it avoids
  EXPECT_EQ(f16(d).bits, 0x3c01);
  Tensor t = Tensor::from_vector<double>({d, -d}, Shape{2}).to_dtype(DType::F16);
  auto v = t.to_vector<f16>();
  EXPECT_EQ(v[0].bits, 0x3c01);
  EXPECT_EQ(v[1].bits, 0xbc01);
  // same near the overflow threshold: 65520 - 2^-30 is below the tie, so finite
  EXPECT_EQ(f64_to_f16_bits(65520.0 - std::ldexp(1.0, -30)), 0x7bff);
}

// ---- bf16 --------------------------------------------------------------------------------

TEST(BF16, EveryBitPatternDecodesAndRoundTrips) {
  for (uint32_t b = 0; b < 65536; ++b) {
    uint16_t h = uint16_t(b);
    double want = decode_bf16(h);
    float got = bf16_bits_to_f32(h);
    uint16_t back = f32_to_bf16_bits(got);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << b;
      ASSERT_TRUE(is_nan16(back, 7)) << std::hex << b;
      ASSERT_EQ(back & 0x8000, h & 0x8000) << std::hex << b;
    } else {
      ASSERT_EQ(double(got), want) << std::hex << b;
      ASSERT_EQ(back, h) << std::hex << b;
    }
  }
}

TEST(BF16, TiesRoundToEvenEverywhereFromF32AndF64) {
  for (uint32_t b = 0; b < 0x7f80; ++b) {
    uint16_t lo = uint16_t(b), hi = uint16_t(b + 1);
    double a = decode_bf16(lo);
    double c = hi == 0x7f80 ? std::ldexp(1.0, 128) : decode_bf16(hi);
    double mid = (a + c) / 2;  // exact in f32 except above the largest finite f32
    uint16_t even = (lo & 1) ? hi : lo;
    for (double s : {1.0, -1.0}) {
      uint16_t sign = s < 0 ? 0x8000 : 0;
      ASSERT_EQ(f64_to_bf16_bits(s * mid), even | sign) << "f64 mid " << mid;
      ASSERT_EQ(f64_to_bf16_bits(s * std::nextafter(mid, 0.0)), lo | sign) << "f64 below " << mid;
      ASSERT_EQ(f64_to_bf16_bits(s * std::nextafter(mid, kInf)), hi | sign) << "f64 above " << mid;
      if (hi != 0x7f80) {
        float fm = float(mid);
        ASSERT_EQ(double(fm), mid);
        ASSERT_EQ(f32_to_bf16_bits(float(s) * fm), even | sign) << "f32 mid " << mid;
        ASSERT_EQ(f32_to_bf16_bits(float(s) * std::nextafter(fm, 0.0f)), lo | sign) << "f32 below " << mid;
        ASSERT_EQ(f32_to_bf16_bits(float(s) * std::nextafter(fm, std::numeric_limits<float>::infinity())),
                  hi | sign)
            << "f32 above " << mid;
      }
    }
  }
}

TEST(BF16, OverflowSubnormalsAndNaN) {
  EXPECT_EQ(f32_to_bf16_bits(std::numeric_limits<float>::max()), 0x7f80);  // above the last midpoint
  EXPECT_EQ(f32_to_bf16_bits(float_of(0x7f7f7fffu)), 0x7f7f);
  EXPECT_EQ(f32_to_bf16_bits(float_of(0x00000001u)), 0x0000);  // f32 subnormal below bf16's smallest / 2
  EXPECT_EQ(f32_to_bf16_bits(float_of(0x00010000u)), 0x0001);  // bf16's smallest subnormal
  EXPECT_EQ(f32_to_bf16_bits(float_of(0x00018000u)), 0x0002);  // tie 1|2: even
  EXPECT_EQ(f32_to_bf16_bits(-0.0f), 0x8000);
  for (uint32_t nan : {0x7fc00000u, 0x7f800001u, 0xff800001u, 0x7fffffffu}) {
    uint16_t h = f32_to_bf16_bits(float_of(nan));
    EXPECT_TRUE(is_nan16(h, 7)) << std::hex << nan << " -> " << h;
    EXPECT_EQ(h & 0x8000, (nan >> 16) & 0x8000) << std::hex << nan;
  }
  EXPECT_TRUE(is_nan16(f64_to_bf16_bits(-kNaN), 7));
  EXPECT_EQ(f64_to_bf16_bits(1e300), 0x7f80);
  EXPECT_EQ(f64_to_bf16_bits(-1e300), 0xff80);
  EXPECT_EQ(f64_to_bf16_bits(1e-300), 0x0000);
}

TEST(BF16, F64ConvertsWithASingleRounding) {
  double d = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  EXPECT_EQ(f64_to_bf16_bits(d), 0x3f81);
  EXPECT_EQ(f32_to_bf16_bits(float(d)), 0x3f80);
  auto v = Tensor::from_vector<double>({d}, Shape{1}).to_dtype(DType::BF16).to_vector<bf16>();
  EXPECT_EQ(v[0].bits, 0x3f81);
}

// ---- every cast pair through Tensor::to_dtype ----------------------------------------------

// The nearest value of a 16-bit float format to x, ties to the even pattern, found by
// search over every finite pattern (independent of the library's bit tricks);
// overflow to inf at and beyond the midpoint to the next power-of-two slot.
double nearest16(double x, bool bf) {
  if (std::isnan(x)) return kNaN;
  auto dec = bf ? decode_bf16 : decode_f16;
  uint16_t inf = bf ? 0x7f80 : 0x7c00;
  double a = std::fabs(x);
  uint16_t best = 0;
  for (uint16_t h = 1; h < inf; ++h) {
    double dh = std::fabs(dec(h) - a), db = std::fabs(dec(best) - a);
    if (dh < db || (dh == db && (h & 1) == 0)) best = h;
  }
  double max = dec(inf - 1), slot = bf ? std::ldexp(1.0, 128) : 65536.0;
  double r = a >= (max + slot) / 2 ? kInf : dec(best);
  return std::copysign(r, x);
}

// What casting x (a value of `from`) to `to` must give, by the documented rules:
// float -> int truncates toward zero, NaN -> 0, saturates; int -> int wraps;
// anything -> float rounds to nearest even (f32/f64 by the C++ conversion of an
// exact double, f16/bf16 by search).
double expected_cast(double x, DType from, DType to) {
  if (is_int(to)) {
    return dispatch_dtype<kIntDTypes>(to, "expected", [&]<class T>() {
      double lo = double(std::numeric_limits<T>::min()), hi = double(std::numeric_limits<T>::max());
      if (is_float(from)) {
        if (std::isnan(x)) return 0.0;
        double t = std::trunc(x);
        return (t < lo ? lo : t > hi ? hi : t) + 0.0;  // -0 truncates to integer 0
      }
      return double(static_cast<T>(int64_t(x)));  // modular (values here fit in int64 exactly)
    });
  }
  switch (to) {
    case DType::F64:
      return x;
    case DType::F32:
      return double(float(x));
    case DType::F16:
      return nearest16(x, false);
    default:
      return nearest16(x, true);
  }
}

std::vector<double> values_of(DType dt) {
  switch (dt) {
    case DType::U8:
      return {0, 1, 127, 128, 200, 255};
    // 16842753 = 2^24 + 2^16 + 1 lies just above a bf16 midpoint; via f32 it would land on it
    case DType::U32:
      return {0, 1, 255, 256, 65504, 70000, 2147483648.0, 4294967295.0, 16777217, 16842753};
    case DType::I32:
      return {0, -1, 1, -128, 255, 2049, -70000, 2147483647.0, -2147483648.0, 16777217, -16842753};
    case DType::I64:
      return {0, -1, 300, -129, 4294967296.0 + 5, -4294967296.0 * 2 - 3, 9007199254740992.0};
    case DType::F16:
      return {0, -0.0, 0.5, -1.5, 2.5, 255.5, -129.75, 2049, 65504, -kInf, kInf, kNaN, 5.96e-8};
    case DType::BF16:
      return {0, -0.0, 0.5, -1.5, 300.0, -1e10, 3e38, -kInf, kNaN, 1e-39, 1.0 + 1.0 / 128};
    case DType::F32:
      return {0,       -0.0, 0.3,           -2.7, 255.9, 256.0, -128.5, 1e10,         -1e10,        65519.0,
              65520.0, 1e-8, 1.0 + 0x1p-11, 3e38, -kInf, kInf,  kNaN,   4294967295.0, -2147483904.0};
    case DType::F64:
      return {0,
              -0.0,
              0.1,
              -2.999999,
              1e300,
              -1e300,
              1e-300,
              1.0 + 0x1p-11 + 0x1p-40,
              9.3e18,
              -9.3e18,
              65520,
              kNaN,
              -kInf,
              4294967295.5,
              1.0 + 0x1p-8 + 0x1p-40,
              3.4e38,
              1e-45};
  }
  return {};
}

TEST(ToDType, EveryPairFollowsTheCastRules) {
  for (DType from : kAllDTypes) {
    // the source values as stored in `from`
    std::vector<double> src = values_of(from);
    Tensor t = dispatch_dtype(from, "src", [&]<class T>() {
      std::vector<T> v(src.size());
      for (size_t i = 0; i < src.size(); ++i) v[i] = convert<T, double>(src[i]);
      return Tensor::from_vector<T>(v, Shape{src.size()});
    });
    std::vector<double> stored = t.to_f64_vector();
    for (DType to : kAllDTypes) {
      Tensor y = t.to_dtype(to);
      ASSERT_EQ(y.dtype(), to);
      ASSERT_EQ(y.shape(), t.shape());
      std::vector<double> got = y.to_f64_vector();
      for (size_t i = 0; i < got.size(); ++i) {
        double want = expected_cast(stored[i], from, to);
        std::string ctx = std::string(dtype_name(from)) + " -> " + std::string(dtype_name(to)) + " of " +
                          std::to_string(stored[i]);
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(got[i])) << ctx;
        } else {
          EXPECT_EQ(got[i], want) << ctx;
          EXPECT_EQ(std::signbit(got[i]), std::signbit(want)) << ctx << " (sign of zero)";
        }
      }
    }
  }
}

TEST(ToDType, HandComputedRules) {
  auto f32 = [](std::vector<float> v) { return Tensor::from_vector<float>(v, Shape{v.size()}); };
  EXPECT_EQ(f32({-1.5f, 300.7f, 2.9f, NAN}).to_dtype(DType::U8).to_vector<uint8_t>(),
            (std::vector<uint8_t>{0, 255, 2, 0}));
  EXPECT_EQ(f32({-2.9f, -INFINITY, INFINITY, 3e9f}).to_dtype(DType::I32).to_vector<int32_t>(),
            (std::vector<int32_t>{-2, std::numeric_limits<int32_t>::min(),
                                  std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::max()}));
  EXPECT_EQ(f32({1e20f, -1e20f}).to_dtype(DType::I64).to_vector<int64_t>(),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()}));
  EXPECT_EQ(Tensor::from_vector<int32_t>({-1, 256, 257}, Shape{3}).to_dtype(DType::U8).to_vector<uint8_t>(),
            (std::vector<uint8_t>{255, 0, 1}));
  EXPECT_EQ(Tensor::from_vector<uint32_t>({4294967295u}, Shape{1}).to_dtype(DType::I32).to_vector<int32_t>(),
            (std::vector<int32_t>{-1}));
  // i64 beyond 2^53: the nearest double, ties to even (2^53 + 1 -> 2^53)
  const int64_t big = (int64_t(1) << 53) + 1;
  EXPECT_EQ(Tensor::from_vector<int64_t>({big, big + 2}, Shape{2}).to_dtype(DType::F64).to_vector<double>(),
            (std::vector<double>{9007199254740992.0, 9007199254740996.0}));
  EXPECT_EQ(Tensor::from_vector<int64_t>({(int64_t(1) << 40) + 5, -1}, Shape{2})
                .to_dtype(DType::U32)
                .to_vector<uint32_t>(),
            (std::vector<uint32_t>{5, 4294967295u}));
  EXPECT_EQ(Tensor::from_vector<int64_t>({std::numeric_limits<int64_t>::max()}, Shape{1})
                .to_dtype(DType::F32)
                .to_vector<float>(),
            (std::vector<float>{9.223372036854775808e18f}));
  // integers to f16: 2049 is a tie (2048 | 2050) -> 2048; 70000 overflows
  auto h = Tensor::from_vector<int64_t>({2049, 2051, 70000, -65519}, Shape{4})
               .to_dtype(DType::F16)
               .to_vector<f16>();
  EXPECT_EQ(h[0].bits, 0x6800);  // 2048
  EXPECT_EQ(h[1].bits, 0x6802);  // 2052 (tie 2050|2052 -> even mantissa)
  EXPECT_EQ(h[2].bits, 0x7c00);
  EXPECT_EQ(h[3].bits, 0xfbff);  // -65504
}

TEST(ToDType, StridedInputs) {
  // transposed f32 -> f16
  Tensor a = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3}).t();  // [[1,4],[2,5],[3,6]]
  EXPECT_EQ(a.to_dtype(DType::F64).to_vector<double>(), (std::vector<double>{1, 4, 2, 5, 3, 6}));
  // narrowed i64 -> f32
  Tensor b = Tensor::from_vector<int64_t>({9, 9, -1, 7, 9}, Shape{5}).narrow(0, 2, 2);
  EXPECT_EQ(b.to_dtype(DType::F32).to_vector<float>(), (std::vector<float>{-1, 7}));
  // broadcast u8 -> bf16
  Tensor c = Tensor::from_vector<uint8_t>({3, 200}, Shape{1, 2}).broadcast_as(Shape{3, 2});
  auto v = c.to_dtype(DType::BF16).to_f64_vector();
  EXPECT_EQ(v, (std::vector<double>{3, 200, 3, 200, 3, 200}));
  // large transposed (threaded) f64 -> i32
  const size_t r = 300, k = 257;
  std::vector<double> src(r * k);
  for (size_t i = 0; i < src.size(); ++i) src[i] = double(i) - 1000.5;
  Tensor d = Tensor::from_vector<double>(src, Shape{r, k}).t();
  auto got = d.to_dtype(DType::I32).to_vector<int32_t>();
  for (size_t i = 0; i < k; ++i)
    for (size_t j = 0; j < r; ++j) ASSERT_EQ(got[i * r + j], int32_t(std::trunc(src[j * k + i])));
}

TEST(ToDType, SameDTypeReturnsTheTensorItself) {
  Tensor a = Tensor::from_vector<float>({1, 2}, Shape{2});
  Tensor b = a.to_dtype(DType::F32);
  EXPECT_EQ(a.storage(), b.storage());
}

TEST(ToDType, UndefinedTensorThrows) {
  try {
    Tensor().to_dtype(DType::F32);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("[to_dtype] tensor is an undefined tensor"), std::string::npos);
  }
}

TEST(ToDType, UnknownTargetDTypeThrows) {
  try {
    Tensor::from_vector<float>({1}, Shape{1}).to_dtype(DType(42));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::UnsupportedDType);
    EXPECT_NE(std::string(e.what()).find("[to_dtype] tensor [1] f32 to unknown dtype 42"), std::string::npos)
        << e.what();
  }
}

TEST(ParseDType, NamesAndUnknown) {
  for (DType d : kAllDTypes) EXPECT_EQ(parse_dtype(dtype_name(d)), d);
  try {
    parse_dtype("f8");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::UnsupportedDType);
    EXPECT_NE(std::string(e.what()).find("unknown dtype 'f8'"), std::string::npos);
  }
}

}  // namespace
}  // namespace wick
