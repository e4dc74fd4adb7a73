// Operators, dtype promotion and weakly typed scalars on the CPU: the promotion table
// against NumPy's, mixed-dtype binary ops / comparisons / where against float64 math,
// tensor-scalar arithmetic and exact comparisons, pow, clamp, where_cond with scalars,
// masked_fill, and every error path (kind and message).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "api_test_util.h"
#include "check/elementwise_ref.h"

namespace wick {
namespace {

using namespace api_test;

std::string fmt_ctx(std::string_view op, DType a, DType b) {
  return std::string(op) + " " + std::string(dtype_name(a)) + " with " + std::string(dtype_name(b));
}

constexpr DType U8 = DType::U8, U32 = DType::U32, I32 = DType::I32, I64 = DType::I64, F16 = DType::F16,
                BF16 = DType::BF16, F32 = DType::F32, F64 = DType::F64;

// ---- promote_types -------------------------------------------------------------------

// The rows without bf16 are NumPy 2.4's np.promote_types for
// (uint8, uint32, int32, int64, float16, float32, float64); bf16 is placed by the same
// "smallest dtype holding both" rule (it holds every u8 exactly; with f16 neither holds the
// other, so f32, as in PyTorch), which is where ml_dtypes puts it where it defines one.
const DType kWant[kNumDTypes][kNumDTypes] = {
    //  u8    u32  i32  i64  f16   bf16  f32  f64
    {U8, U32, I32, I64, F16, BF16, F32, F64},    // u8
    {U32, U32, I64, I64, F64, F64, F64, F64},    // u32
    {I32, I64, I32, I64, F64, F64, F64, F64},    // i32
    {I64, I64, I64, I64, F64, F64, F64, F64},    // i64
    {F16, F64, F64, F64, F16, F32, F32, F64},    // f16
    {BF16, F64, F64, F64, F32, BF16, F32, F64},  // bf16
    {F32, F64, F64, F64, F32, F32, F32, F64},    // f32
    {F64, F64, F64, F64, F64, F64, F64, F64}};   // f64

TEST(PromoteTypes, MatchesNumPysTable) {
  for (DType a : kAllDTypes)
    for (DType b : kAllDTypes)
      EXPECT_EQ(promote_types(a, b), kWant[size_t(a)][size_t(b)]) << dtype_name(a) << " + " << dtype_name(b);
}

TEST(PromoteTypes, EveryIntegerValueIsExactInTheResult) {
  // The rule behind the table: the result holds every value of both dtypes (i64 -> f64 excepted,
  // as in NumPy). Checked here on each integer dtype's extremes.
  for (DType a : {U8, U32, I32})
    for (DType b : kAllDTypes) {
      DType r = promote_types(a, b);
      for (double x : {a == U8    ? 255.0
                       : a == U32 ? 4294967295.0
                                  : 2147483647.0,
                       a == I32 ? -2147483648.0 : 0.0})
        EXPECT_EQ(round_to(r, x), x) << dtype_name(a) << " + " << dtype_name(b) << " -> " << dtype_name(r);
    }
}

TEST(PromoteTypes, UnknownDTypeIsRejected) {
  expect_error([] { promote_types(DType(9), F32); }, ErrorKind::UnsupportedDType,
               "[promote_types] unknown dtype 9");
}

// ---- mixed-dtype binary ops, comparisons, where -----------------------------------------

TEST(Promotion, BinaryOpsComputeInThePromotedDType) {
  const V a = {1, 2, 3, 100}, b = {2, 5, 7, 3};
  for (DType da : kAllDTypes)
    for (DType db : kAllDTypes)
      for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Maximum, BinaryOp::Div}) {
        DType r = kWant[size_t(da)][size_t(db)];
        V want(a.size());
        for (size_t i = 0; i < a.size(); ++i) want[i] = ref::binary(op, r, a[i], b[i]);
        Tensor y = make(a, Shape{4}, da).binary(op, make(b, Shape{4}, db));
        expect_values(y, r, Shape{4}, want, op == BinaryOp::Div ? 1 : 0, fmt_ctx(binary_op_name(op), da, db));
      }
}

TEST(Promotion, OperatorsBroadcastAndPromote) {
  Tensor a = make({1, 2, 3, 4, 5, 6}, Shape{2, 3}, I32);
  Tensor b = make({0.5, 0.25, 2}, Shape{3}, F16);  // i32 + f16 -> f64
  expect_values(a + b, F64, Shape{2, 3}, {1.5, 2.25, 5, 4.5, 5.25, 8}, 0);
  expect_values(a - b, F64, Shape{2, 3}, {0.5, 1.75, 1, 3.5, 4.75, 4}, 0);
  expect_values(a * b, F64, Shape{2, 3}, {0.5, 0.5, 6, 2, 1.25, 12}, 0);
  expect_values(a / b, F64, Shape{2, 3}, {2, 8, 1.5, 8, 20, 3}, 0);
  expect_values(-a, I32, Shape{2, 3}, {-1, -2, -3, -4, -5, -6}, 0);
  Tensor c = make({1, 2}, Shape{2, 1}, U8);  // u8 + f16 -> f16
  expect_values(c + b, F16, Shape{2, 3}, {1.5, 1.25, 3, 2.5, 2.25, 4}, 0);
  // integer division truncates, as C++ does
  expect_values(make({7, -7}, Shape{2}, I32) / make({2, 2}, Shape{2}, I32), I32, Shape{2}, {3, -3}, 0);
}

TEST(Promotion, ComparisonsCompareThePromotedValues) {
  const V a = {1, 2.5, 3, 100}, b = {2, 2.5, 7, 3};
  for (DType da : kAllDTypes)
    for (DType db : kAllDTypes) {
      V sa = round_to(da, a), sb = round_to(db, b);  // what the tensors hold
      Tensor x = make(a, Shape{4}, da), y = make(b, Shape{4}, db);
      V lt(4), eq(4), ge(4);
      for (size_t i = 0; i < 4; ++i) lt[i] = sa[i] < sb[i], eq[i] = sa[i] == sb[i], ge[i] = sa[i] >= sb[i];
      expect_values(x < y, U8, Shape{4}, lt, 0, fmt_ctx("lt", da, db));
      expect_values(x == y, U8, Shape{4}, eq, 0, fmt_ctx("eq", da, db));
      expect_values(x >= y, U8, Shape{4}, ge, 0, fmt_ctx("ge", da, db));
    }
  // promotion keeps an i32 exact where a comparison in f32 would not: 2^24 + 1 vs 2^24 as f32
  Tensor big = make({16777217}, Shape{1}, I32), f = make({16777216}, Shape{1}, F32);
  expect_values(big > f, U8, Shape{1}, {1}, 0);
}

TEST(Promotion, WhereCondPromotesItsValues) {
  Tensor c = make({1, 0, 1}, Shape{3}, U8);
  expect_values(c.where_cond(make({1, 2, 3}, Shape{3}, I32), make({0.5, 0.5, 0.5}, Shape{3}, F32)), F64,
                Shape{3}, {1, 0.5, 3}, 0);
  expect_values(c.where_cond(make({1, 2, 3}, Shape{3}, U8), make({-1, -1, -1}, Shape{3}, I32)), I32, Shape{3},
                {1, -1, 3}, 0);
  expect_values(c.where_cond(make({1, 2, 3}, Shape{3}, F16), make({4, 4, 4}, Shape{3}, BF16)), F32, Shape{3},
                {1, 4, 3}, 0);
}

// ---- weak scalars: arithmetic --------------------------------------------------------------

TEST(Scalars, IntegerScalarsKeepTheTensorDType) {
  const V a = {1, 2, 3, 4};
  for (DType dt : kAllDTypes) {
    Tensor t = make(a, Shape{4}, dt);
    auto want = [&](BinaryOp op, bool scalar_first, double s) {
      V w(a.size());
      for (size_t i = 0; i < a.size(); ++i)
        w[i] = scalar_first ? ref::binary(op, dt, s, a[i]) : ref::binary(op, dt, a[i], s);
      return w;
    };
    std::string d(dtype_name(dt));
    expect_values(t + 2, dt, Shape{4}, want(BinaryOp::Add, false, 2), 0, d + " t + 2");
    expect_values(2 + t, dt, Shape{4}, want(BinaryOp::Add, true, 2), 0, d + " 2 + t");
    expect_values(t - 1, dt, Shape{4}, want(BinaryOp::Sub, false, 1), 0, d + " t - 1");
    expect_values(5 - t, dt, Shape{4}, want(BinaryOp::Sub, true, 5), 0, d + " 5 - t");
    expect_values(t * 3, dt, Shape{4}, want(BinaryOp::Mul, false, 3), 0, d + " t * 3");
    expect_values(3 * t, dt, Shape{4}, want(BinaryOp::Mul, true, 3), 0, d + " 3 * t");
    expect_values(t / 2, dt, Shape{4}, want(BinaryOp::Div, false, 2), 0, d + " t / 2");
    expect_values(12 / t, dt, Shape{4}, want(BinaryOp::Div, true, 12), 0, d + " 12 / t");
    expect_values(t * size_t(3), dt, Shape{4}, want(BinaryOp::Mul, false, 3), 0, d + " t * size_t");
    expect_values(t + 2u, dt, Shape{4}, want(BinaryOp::Add, false, 2), 0, d + " t + unsigned");
  }
}

TEST(Scalars, FloatScalarsKeepAFloatTensorsDTypeAndGiveF32ForIntegers) {
  const V a = {1, 2, 3, 4};
  for (DType dt : kAllDTypes) {
    DType r = is_float(dt) ? dt : F32;
    Tensor t = make(a, Shape{4}, dt);
    const double s = round_to(r, 0.1);  // the scalar as the result dtype holds it
    V add(4), sub(4), rsub(4), mul(4), div(4), rdiv(4);
    for (size_t i = 0; i < 4; ++i) {
      add[i] = a[i] + s, sub[i] = a[i] - s, rsub[i] = s - a[i], mul[i] = a[i] * s;
      div[i] = a[i] / s, rdiv[i] = s / a[i];
    }
    std::string d(dtype_name(dt));
    // Sums and products of these values are exact in f64: one rounding to the dtype.
    expect_values(t + 0.1, r, Shape{4}, add, 0, d + " t + 0.1");
    expect_values(0.1 + t, r, Shape{4}, add, 0, d + " 0.1 + t");
    expect_values(t - 0.1, r, Shape{4}, sub, 0, d + " t - 0.1");
    expect_values(0.1 - t, r, Shape{4}, rsub, 0, d + " 0.1 - t");
    expect_values(t * 0.1, r, Shape{4}, mul, 0, d + " t * 0.1");
    expect_values(0.1 * t, r, Shape{4}, mul, 0, d + " 0.1 * t");
    expect_values(t / 0.1, r, Shape{4}, div, 1, d + " t / 0.1");
    expect_values(0.1 / t, r, Shape{4}, rdiv, 1, d + " 0.1 / t");
    expect_values(t * 0.5f, r, Shape{4}, {0.5, 1, 1.5, 2}, 0, d + " t * 0.5f");
  }
}

TEST(Scalars, TheScalarIsRoundedToTheTensorsDTypeFirst) {
  // NumPy 2: float16(2048) + 1.0001 -> 1.0001 becomes f16 1.0, 2049 is a tie, rounds to even 2048.
  // (Computing 2048 + 1.0001 in f32 first would round to 2050.)
  expect_values(make({2048}, Shape{1}, F16) + 1.0001, F16, Shape{1}, {2048}, 0);
  expect_values(make({2048}, Shape{1}, I32) + 1.0001, F32, Shape{1}, {2048 + double(float(1.0001))}, 0);
}

TEST(Scalars, ProductsAndDifferencesKeepTheSignOfZero) {
  Tensor z = make({-0.0, 0.0}, Shape{2}, F32);
  V m = (z * 1.0).to_f64_vector();  // -0 * 1 = -0, 0 * 1 = 0
  EXPECT_TRUE(std::signbit(m[0]));
  EXPECT_FALSE(std::signbit(m[1]));
  V n = (z * -1.0).to_f64_vector();
  EXPECT_FALSE(std::signbit(n[0]));
  EXPECT_TRUE(std::signbit(n[1]));
  V s = (z - 0.0).to_f64_vector();  // -0 - 0 = -0
  EXPECT_TRUE(std::signbit(s[0]));
  EXPECT_FALSE(std::signbit(s[1]));
  V r = (0.0 - z).to_f64_vector();  // 0 - (-0) = 0, 0 - 0 = 0
  EXPECT_FALSE(std::signbit(r[0]));
  EXPECT_FALSE(std::signbit(r[1]));
  V p = (z + 0.0).to_f64_vector();  // -0 + 0 = 0
  EXPECT_FALSE(std::signbit(p[0]));
}

TEST(Scalars, NaNAndInfinitiesFollowIEEE) {
  Tensor t = make({kInf, -kInf, kNaN, 0}, Shape{4}, F32);
  expect_values(t + 1, F32, Shape{4}, {kInf, -kInf, kNaN, 1}, 0);
  expect_values(t * 0.0, F32, Shape{4}, {kNaN, kNaN, kNaN, 0}, 0);
  expect_values(t - kInf, F32, Shape{4}, {kNaN, -kInf, kNaN, -kInf}, 0);
}

TEST(Scalars, EmptyTensorsStayEmpty) {
  Tensor e = Tensor::zeros({0, 3}, F16);
  EXPECT_EQ((e + 1.5).shape(), Shape({0, 3}));
  EXPECT_EQ((e * 2).dtype(), F16);
  EXPECT_EQ((e < 1).dtype(), U8);
  EXPECT_EQ((Tensor::zeros({0}, I32) + 0.5).dtype(), F32);
}

TEST(Scalars, AnIntegerScalarOutsideAnIntegerDTypeIsAnError) {
  Tensor u = make({1, 2, 3}, Shape{3}, U8);
  expect_error([&] { (void)(u + 300); }, ErrorKind::InvalidArgument,
               "[add] scalar 300 is out of range for tensor [3] u8");
  expect_error([&] { (void)(u - (-1)); }, ErrorKind::InvalidArgument,
               "[sub] scalar -1 is out of range for tensor [3] u8");
  expect_error([&] { (void)(make({1}, Shape{1}, I32) * int64_t(3000000000)); }, ErrorKind::InvalidArgument,
               "[mul] scalar 3000000000 is out of range for tensor [1] i32");
  expect_error([&] { (void)(make({1}, Shape{1}, U32) / -1); }, ErrorKind::InvalidArgument, "[div] scalar -1");
  // in range: fine, even at the edges
  expect_values(u * 255, U8, Shape{3}, {255, 254, 253}, 0);  // wraps like the binary op
  expect_values(make({1}, Shape{1}, I64) + std::numeric_limits<int64_t>::max(), I64, Shape{1},
                {double(std::numeric_limits<int64_t>::min())}, 0);
}

TEST(Scalars, UndefinedAndDeviceErrors) {
  Tensor u;
  expect_error([&] { (void)(u + 1); }, ErrorKind::InvalidArgument, "[add] lhs is an undefined tensor");
  expect_error([&] { (void)(1 - u); }, ErrorKind::InvalidArgument, "[sub] rhs is an undefined tensor");
  expect_error([&] { (void)(u < 1); }, ErrorKind::InvalidArgument, "[lt] lhs is an undefined tensor");
  Tensor a = make({1, 2}, Shape{2}, F32);
  expect_error([&] { (void)(a + on_fake_gpu(a)); }, ErrorKind::DeviceMismatch,
               "[add] [2] f32 on cpu and [2] f32 on gpu:0");
  expect_error(
      [&] {
        (void)(a == on_fake_gpu(make({1, 2}, Shape{2}, I32)));
      },
      ErrorKind::DeviceMismatch, "[eq] [2] f32 on cpu and [2] i32 on gpu:0");
  expect_error(
      [&] {
        (void)(a * make({1, 2, 3}, Shape{3}, F16));
      },
      ErrorKind::ShapeMismatch, "[mul] lhs [2] f32 rhs [3] f16: shapes are not broadcastable");
}

// ---- weak scalars: comparisons -------------------------------------------------------------

TEST(ScalarComparisons, FloatTensorsCompareWithTheScalarInTheirDType) {
  Tensor t = make({0.1, 0.5, 1, kNaN}, Shape{4}, F32);
  expect_values(t == 0.1, U8, Shape{4}, {1, 0, 0, 0}, 0);  // 0.1 as f32 on both sides
  expect_values(t < 0.5, U8, Shape{4}, {1, 0, 0, 0}, 0);
  expect_values(t >= 0.5, U8, Shape{4}, {0, 1, 1, 0}, 0);
  expect_values(t != 1, U8, Shape{4}, {1, 1, 0, 1}, 0);
  expect_values(0.5 < t, U8, Shape{4}, {0, 0, 1, 0}, 0);  // the scalar on the left
  expect_values(0.5 >= t, U8, Shape{4}, {1, 1, 0, 0}, 0);
}

TEST(ScalarComparisons, IntegerTensorsCompareExactly) {
  Tensor t = make({1, 2, 3}, Shape{3}, I32);
  expect_values(t < 1.5, U8, Shape{3}, {1, 0, 0}, 0);
  expect_values(t <= 1.5, U8, Shape{3}, {1, 0, 0}, 0);
  expect_values(t > 1.5, U8, Shape{3}, {0, 1, 1}, 0);
  expect_values(t >= 2.5, U8, Shape{3}, {0, 0, 1}, 0);
  expect_values(t == 2.0, U8, Shape{3}, {0, 1, 0}, 0);
  expect_values(t == 1.5, U8, Shape{3}, {0, 0, 0}, 0);
  expect_values(t != 1.5, U8, Shape{3}, {1, 1, 1}, 0);
  expect_values(t > -1.5, U8, Shape{3}, {1, 1, 1}, 0);
  expect_values(t < -0.5, U8, Shape{3}, {0, 0, 0}, 0);
  expect_values(2.5 < t, U8, Shape{3}, {0, 0, 1}, 0);
  expect_values(t == kNaN, U8, Shape{3}, {0, 0, 0}, 0);
  expect_values(t != kNaN, U8, Shape{3}, {1, 1, 1}, 0);
  expect_values(t < kInf, U8, Shape{3}, {1, 1, 1}, 0);
  expect_values(t > -kInf, U8, Shape{3}, {1, 1, 1}, 0);
  expect_values(t >= kInf, U8, Shape{3}, {0, 0, 0}, 0);
}

TEST(ScalarComparisons, BoundsOutsideTheDTypeGiveConstantResults) {
  Tensor u = make({0, 255}, Shape{2}, U8);
  expect_values(u < 300, U8, Shape{2}, {1, 1}, 0);
  expect_values(u > 300, U8, Shape{2}, {0, 0}, 0);
  expect_values(u == 300, U8, Shape{2}, {0, 0}, 0);
  expect_values(u != 300, U8, Shape{2}, {1, 1}, 0);
  expect_values(u > -1, U8, Shape{2}, {1, 1}, 0);
  expect_values(u <= -1, U8, Shape{2}, {0, 0}, 0);
  expect_values(u >= 255, U8, Shape{2}, {0, 1}, 0);  // in range: compared
  Tensor l = Tensor::from_vector<int64_t>({std::numeric_limits<int64_t>::max(), 0}, Shape{2});
  expect_values(l < 9.3e18, U8, Shape{2}, {1, 1}, 0);  // beyond i64: every value is below
  expect_values(l > -9.3e18, U8, Shape{2}, {1, 1}, 0);
  expect_values(l == 9223372036854775807.0, U8, Shape{2}, {0, 0}, 0);  // 2^63 as a double: above every i64
}

// ---- pow ---------------------------------------------------------------------------------

TEST(Pow, FloatTensorsFollowCsPow) {
  const V base = {-2, -2, 2, 0.5, 0, 3, -8}, ex = {3, 0.5, -1, 2, 0, 0.5, 1.0 / 3};
  for (DType dt : kFloats) {
    V b = round_to(dt, base), e = round_to(dt, ex), want(b.size());
    for (size_t i = 0; i < b.size(); ++i) want[i] = std::pow(b[i], e[i]);
    expect_values(make(base, Shape{7}, dt).pow(make(ex, Shape{7}, dt)), dt, Shape{7}, want, 1,
                  std::string(dtype_name(dt)));
  }
}

// x^e mod 2^64 by e multiplications (the definition, not the kernel's squaring).
double naive_int_pow(DType dt, int64_t x, int64_t e) {
  uint64_t r = 1;
  for (int64_t i = 0; i < e; ++i) r *= uint64_t(x);
  return ref::wrap_to(dt, r);
}

TEST(Pow, IntegerTensorsAreExactAndWrap) {
  const V x = {2, -3, 7, 3, 1, -1, -1, 2, 0, 5};
  const V e = {10, 3, 0, 40, -5, -3, -4, -1, -2, 27};
  V want(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    if (e[i] >= 0) {
      want[i] = naive_int_pow(I32, int64_t(x[i]), int64_t(e[i]));
    } else {  // 1 / x^-e truncated toward zero
      want[i] = std::trunc(1.0 / std::pow(x[i], -e[i]));
      if (x[i] == 0) want[i] = 0;
    }
  }
  expect_values(make(x, Shape{10}, I32).pow(make(e, Shape{10}, I32)), I32, Shape{10}, want, 0);
  // u8: 2^8 wraps to 0, 3^5 = 243, 3^6 wraps to 729 mod 256
  expect_values(make({2, 3, 3}, Shape{3}, U8).pow(make({8, 5, 6}, Shape{3}, U8)), U8, Shape{3},
                {0, 243, 729 % 256}, 0);
  expect_values(make({3}, Shape{1}, I64).pow(make({39}, Shape{1}, I64)), I64, Shape{1},
                {naive_int_pow(I64, 3, 39)}, 0);
}

TEST(Pow, ScalarExponentsAndBases) {
  const V a = {0.5, 1, 2, 9};
  for (DType dt : kFloats) {
    Tensor t = make(a, Shape{4}, dt);
    V sq(4), rt(4), two(4);
    for (size_t i = 0; i < 4; ++i) sq[i] = a[i] * a[i], rt[i] = std::sqrt(a[i]), two[i] = std::pow(2.0, a[i]);
    expect_values(t.pow(2), dt, Shape{4}, sq, 0, std::string(dtype_name(dt)) + " t^2");
    expect_values(t.pow(0.5), dt, Shape{4}, rt, 1, std::string(dtype_name(dt)) + " t^0.5");
    expect_values(pow(2.0, t), dt, Shape{4}, two, 1, std::string(dtype_name(dt)) + " 2^t");
  }
  Tensor i = make({1, 2, 3, 4}, Shape{4}, I32);
  expect_values(i.pow(3), I32, Shape{4}, {1, 8, 27, 64}, 0);
  expect_values(i.pow(0.5), F32, Shape{4}, {1, std::sqrt(2.0), std::sqrt(3.0), 2}, 1);
  expect_values(pow(2, i), I32, Shape{4}, {2, 4, 8, 16}, 0);
  expect_error([&] { (void)make({1}, Shape{1}, U8).pow(-1); }, ErrorKind::InvalidArgument,
               "[pow] scalar -1 is out of range for tensor [1] u8");
}

// ---- clamp -------------------------------------------------------------------------------

TEST(Clamp, ScalarBoundsLikePyTorch) {
  for (DType dt : kFloats) {
    Tensor t = make({-2, -0.5, 0.5, 2, kNaN}, Shape{5}, dt);
    expect_values(t.clamp(-1, 1), dt, Shape{5}, {-1, -0.5, 0.5, 1, kNaN}, 0, std::string(dtype_name(dt)));
    expect_values(t.clamp(1, -1), dt, Shape{5}, {-1, -1, -1, -1, kNaN}, 0, "lo > hi gives hi");
    expect_values(t.clamp(-0.25, 0.25), dt, Shape{5}, {-0.25, -0.25, 0.25, 0.25, kNaN}, 0);
  }
  Tensor i = make({-5, 0, 5}, Shape{3}, I32);
  expect_values(i.clamp(-1, 2), I32, Shape{3}, {-1, 0, 2}, 0);
  expect_values(i.clamp(-1.5, 2.5), F32, Shape{3}, {-1.5, 0, 2.5}, 0);  // float bounds: f32
  expect_error([&] { (void)make({1}, Shape{1}, U8).clamp(-1, 3); }, ErrorKind::InvalidArgument,
               "[clamp] scalar -1 is out of range for tensor [1] u8");
}

TEST(Clamp, TensorBoundsBroadcastAndPromote) {
  Tensor t = make({-3, 0, 3, -3, 0, 3}, Shape{2, 3}, I32);
  Tensor lo = make({-1, -2}, Shape{2, 1}, I32), hi = make({0.5, 1, 2.5}, Shape{3}, F32);
  expect_values(t.clamp(lo, hi), F64, Shape{2, 3}, {-1, 0, 2.5, -2, 0, 2.5}, 0);  // i32 with f32: f64
}

// ---- where_cond with scalars, masked_fill --------------------------------------------------

TEST(WhereScalars, ScalarsAreWeaklyTyped) {
  Tensor c = make({1, 0, 1}, Shape{3}, U8);
  Tensor h = make({1, 2, 3}, Shape{3}, F16), i = make({1, 2, 3}, Shape{3}, I32);
  expect_values(c.where_cond(h, 0.1), F16, Shape{3}, {1, 0.1, 3}, 0);
  expect_values(c.where_cond(0.1, h), F16, Shape{3}, {0.1, 2, 0.1}, 0);
  expect_values(c.where_cond(i, -7), I32, Shape{3}, {1, -7, 3}, 0);
  expect_values(c.where_cond(i, 0.5), F32, Shape{3}, {1, 0.5, 3}, 0);
  expect_values(c.where_cond(4, 5), I64, Shape{3}, {4, 5, 4}, 0);
  expect_values(c.where_cond(4, 0.5), F32, Shape{3}, {4, 0.5, 4}, 0);
  expect_values(make({1, 0}, Shape{2, 1}, I64).where_cond(h, 0), F16, Shape{2, 3}, {1, 2, 3, 0, 0, 0}, 0);
  expect_error([&] { (void)c.where_cond(make({1}, Shape{1}, U8), 300); }, ErrorKind::InvalidArgument,
               "[where_cond] scalar 300 is out of range for tensor [1] u8");
  expect_error([&] { (void)make({1}, Shape{1}, F32).where_cond(1, 0); }, ErrorKind::UnsupportedDType,
               "[where_cond] condition [1] f32: dtype f32 is not supported");
}

TEST(MaskedFill, FillsWhereTheMaskIsSet) {
  Tensor x = make({1, 2, 3, 4, 5, 6}, Shape{2, 3}, F32);
  expect_values(x.masked_fill(make({1, 0, 1}, Shape{3}, U8), -1), F32, Shape{2, 3}, {-1, 2, -1, -1, 5, -1},
                0);
  expect_values(x.masked_fill(make({0, 1}, Shape{2, 1}, I64), kNaN), F32, Shape{2, 3},
                {1, 2, 3, kNaN, kNaN, kNaN}, 0);
  // the value takes the tensor's dtype (cast rules: truncation toward zero)
  expect_values(make({1, 2}, Shape{2}, I32).masked_fill(make({1, 0}, Shape{2}, U8), 7.9), I32, Shape{2},
                {7, 2}, 0);
}

TEST(MaskedFill, Errors) {
  Tensor x = make({1, 2, 3, 4, 5, 6}, Shape{2, 3}, F32);
  expect_error(
      [&] {
        (void)x.masked_fill(make({1, 0}, Shape{2}, U8), 0);
      },
      ErrorKind::ShapeMismatch, "[masked_fill] mask [2] u8 does not broadcast to tensor [2,3] f32");
  expect_error(
      [&] {
        (void)x.masked_fill(make({1, 0, 1}, Shape{1, 1, 3}, U8), 0);
      },
      ErrorKind::ShapeMismatch, "[masked_fill] mask [1,1,3] u8 does not broadcast to tensor [2,3] f32");
  expect_error(
      [&] {
        (void)x.masked_fill(make({1, 0, 1}, Shape{3}, F32), 0);
      },
      ErrorKind::UnsupportedDType, "[masked_fill] mask [3] f32: dtype f32 is not supported");
  expect_error(
      [&] {
        (void)x.masked_fill(on_fake_gpu(make({1, 0, 1}, Shape{3}, U8)), 0);
      },
      ErrorKind::DeviceMismatch, "[masked_fill] [2,3] f32 on cpu and [3] u8 on gpu:0");
  expect_error([&] { (void)x.masked_fill(Tensor(), 0); }, ErrorKind::InvalidArgument,
               "[masked_fill] mask is an undefined tensor");
}

}  // namespace
}  // namespace wick
