// Float64 references of the elementwise families, written from the op
// definitions (Candle's unary, binary and comparison ops and the choices
// documented in src/backend/common/functors.h), never through wick ops or
// functors. Shared by the tests (tests/test_elementwise.cpp, test_cpu_simd.cpp, ...)
// and the parity cases (src/check/cases_*.cpp).
//
// Every switch over an op enum lists each op (no default) and a missing case is
// an error, not a warning: an op added to wick/op_table.h without its reference
// here fails the build.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "base/dispatch.h"
#include "wick/ops.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch"

namespace wick::ref {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The input domain an op's random cases draw from (log/sqrt/recip stay positive).
struct Domain {
  double lo, hi;
};
inline Domain unary_domain(UnaryOp op) {
  switch (op) {
    case UnaryOp::Log:
      return {0.01, 5};
    case UnaryOp::Sqrt:
      return {0, 5};
    case UnaryOp::Recip:
      return {0.1, 4};
    case UnaryOp::Erf:
      return {-3, 3};
    case UnaryOp::Silu:
    case UnaryOp::Sigmoid:
      return {-6, 6};
    default:
      return {-4, 4};
  }
}

// Float unary ops.
inline double unary(UnaryOp op, double x) {
  const double pi = 3.14159265358979323846;
  switch (op) {
    case UnaryOp::Exp:
      return std::exp(x);
    case UnaryOp::Log:
      return std::log(x);
    case UnaryOp::Sin:
      return std::sin(x);
    case UnaryOp::Cos:
      return std::cos(x);
    case UnaryOp::Abs:
      return std::fabs(x);
    case UnaryOp::Neg:
      return -x;
    case UnaryOp::Recip:
      return 1.0 / x;
    case UnaryOp::Sqr:
      return x * x;
    case UnaryOp::Sqrt:
      return std::sqrt(x);
    case UnaryOp::Gelu:
      return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / pi) * (x + 0.044715 * x * x * x)));
    case UnaryOp::GeluErf:
      return 0.5 * x * std::erfc(-x / std::sqrt(2.0));
    case UnaryOp::Erf:
      return std::erf(x);
    case UnaryOp::Relu:
      return std::isnan(x) ? x : x > 0 ? x : 0.0;
    case UnaryOp::Silu:
      return x / (1.0 + std::exp(-x));
    case UnaryOp::Tanh:
      return std::tanh(x);
    case UnaryOp::Floor:
      return std::floor(x);
    case UnaryOp::Ceil:
      return std::ceil(x);
    case UnaryOp::Round:
      return std::round(x);  // half away from zero
    case UnaryOp::Sign:
      return double((x > 0) - (x < 0));
    case UnaryOp::Sigmoid:
      return 1.0 / (1.0 + std::exp(-x));
  }
  return kNaN;
}

// v (an integer) wrapped to integer dtype dt, two's complement.
inline double wrap_to(DType dt, uint64_t v) {
  return dispatch_dtype<kIntDTypes>(dt, "wrap_to", [&]<class T>() { return double(static_cast<T>(v)); });
}

// Integer unary ops (the rows of wick/op_table.h marked `all`), wrapping.
inline double int_unary(UnaryOp op, DType dt, double xd) {
  int64_t x = int64_t(xd);
  uint64_t ux = uint64_t(x);
  switch (op) {
#define WICK_REF_FLOAT_ONLY_floats(op_) case UnaryOp::op_:
#define WICK_REF_FLOAT_ONLY_all(op_)
#define WICK_REF_FLOAT_ONLY(op_, name, dtypes) WICK_REF_FLOAT_ONLY_##dtypes(op_)
    WICK_UNARY_OPS(WICK_REF_FLOAT_ONLY)
#undef WICK_REF_FLOAT_ONLY
#undef WICK_REF_FLOAT_ONLY_all
#undef WICK_REF_FLOAT_ONLY_floats
    return kNaN;  // float dtypes only: the front end rejects integer inputs
    case UnaryOp::Abs:
      return wrap_to(dt, x < 0 ? uint64_t(0) - ux : ux);
    case UnaryOp::Neg:
      return wrap_to(dt, uint64_t(0) - ux);
    case UnaryOp::Sqr:
      return wrap_to(dt, ux * ux);
    case UnaryOp::Relu:
      return x > 0 ? xd : 0.0;
    case UnaryOp::Sign:
      return double((x > 0) - (x < 0));
    case UnaryOp::Floor:
    case UnaryOp::Ceil:
    case UnaryOp::Round:
      return xd;
  }
  return kNaN;
}

// Binary ops: floats exact in f64 (max/min propagate NaN); integers wrap, x / 0 = 0,
// division truncates toward zero, min / -1 wraps; integer pow wraps and a negative
// exponent truncates 1 / x^-e toward zero.
inline double binary(BinaryOp op, DType dt, double a, double b) {
  if (is_int(dt)) {
    int64_t x = int64_t(a), y = int64_t(b);
    uint64_t ux = uint64_t(x), uy = uint64_t(y);
    switch (op) {
      case BinaryOp::Add:
        return wrap_to(dt, ux + uy);
      case BinaryOp::Sub:
        return wrap_to(dt, ux - uy);
      case BinaryOp::Mul:
        return wrap_to(dt, ux * uy);
      case BinaryOp::Div:
        if (y == 0) return 0.0;
        if (y == -1) return wrap_to(dt, uint64_t(0) - ux);
        return double(x / y);
      case BinaryOp::Maximum:
        return double(std::max(x, y));
      case BinaryOp::Minimum:
        return double(std::min(x, y));
      case BinaryOp::Pow: {
        if (y < 0) return x == 1 ? 1.0 : x == -1 ? (y % 2 != 0 ? -1.0 : 1.0) : 0.0;
        uint64_t r = 1;  // x^y mod 2^64 by repeated squaring, then wrapped to the dtype
        for (uint64_t e = uint64_t(y), b = ux; e != 0; e >>= 1, b *= b)
          if (e & 1) r *= b;
        return wrap_to(dt, r);
      }
    }
  }
  switch (op) {
    case BinaryOp::Add:
      return a + b;
    case BinaryOp::Sub:
      return a - b;
    case BinaryOp::Mul:
      return a * b;
    case BinaryOp::Div:
      return a / b;
    case BinaryOp::Maximum:
      return std::isnan(a) || std::isnan(b) ? kNaN : std::max(a, b);
    case BinaryOp::Minimum:
      return std::isnan(a) || std::isnan(b) ? kNaN : std::min(a, b);
    case BinaryOp::Pow:
      return std::pow(a, b);
  }
  return kNaN;
}

inline double cmp(CmpOp op, double a, double b) {
  switch (op) {
    case CmpOp::Eq:
      return a == b;
    case CmpOp::Ne:
      return a != b;
    case CmpOp::Lt:
      return a < b;
    case CmpOp::Le:
      return a <= b;
    case CmpOp::Gt:
      return a > b;
    case CmpOp::Ge:
      return a >= b;
  }
  return kNaN;
}

// A float x converted to integer dtype dt: truncate toward zero, NaN -> 0, saturate.
inline double float_to_int(DType dt, double x) {
  return dispatch_dtype<kIntDTypes>(dt, "float_to_int", [&]<class T>() {
    if (std::isnan(x)) return 0.0;
    double lo = double(std::numeric_limits<T>::min()), hi = double(std::numeric_limits<T>::max());
    return std::clamp(std::trunc(x), lo, hi) + 0.0;  // + 0.0: -0 truncates to integer 0
  });
}

// affine: floats x*mul+add; integers the same in double, then converted like a cast.
inline double affine(DType dt, double x, double mul, double add) {
  return is_int(dt) ? float_to_int(dt, x * mul + add) : x * mul + add;
}

// elu with alpha: x for x > 0, alpha (e^x - 1) otherwise.
inline double elu(double x, double alpha) { return x > 0 ? x : alpha * std::expm1(x); }

// x rounded to a binary float format of `mbits` stored mantissa bits, minimum normal
// exponent `emin` and largest finite `max`, to nearest even, overflowing to inf.
inline double round_to_format(double x, int mbits, int emin, double max) {
  if (std::isnan(x) || std::isinf(x) || x == 0) return x;
  double a = std::fabs(x);
  int e = std::max(std::ilogb(a), emin);
  double q = std::ldexp(1.0, e - mbits);
  double r = std::nearbyint(a / q) * q;  // a / q is exact; nearbyint rounds half to even
  double top_ulp = std::ldexp(1.0, std::ilogb(max) - mbits);
  if (r > max || a >= max + top_ulp / 2) r = std::numeric_limits<double>::infinity();
  return std::copysign(r, x);
}

// x (a value of dtype `from`) cast to `to` by the documented rules.
inline double cast(double x, DType from, DType to) {
  if (is_int(to)) return is_float(from) ? float_to_int(to, x) : wrap_to(to, uint64_t(int64_t(x)));
  switch (to) {
    case DType::F16:
      return round_to_format(x, 10, -14, 65504.0);
    case DType::BF16:
      return round_to_format(x, 7, -126, 0x1.fep127);
    case DType::F32:
      return round_to_format(x, 23, -126, double(std::numeric_limits<float>::max()));
    default:
      return x;
  }
}

}  // namespace wick::ref

#pragma GCC diagnostic pop
