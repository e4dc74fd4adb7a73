// Exact f16 / bf16 conversions (round to nearest even; NaN and infinities kept).
#include "wick/dtype.h"

#include <fmt/format.h>

#include <cmath>

#include "wick/error.h"

namespace wick {

namespace {
// Rounds |d| to a binary format with `precision` significand bits and minimum
// normal exponent `emin` (subnormals below), once, to nearest even. The result is
// exactly representable in float (or overflows to inf there), so a float path
// finishes the conversion without a second rounding.
float round_to_format(double d, int precision, int emin) {
  double a = std::fabs(d);
  if (a == 0.0 || std::isinf(a)) return float(d);
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  int exp = e - 1;
  if (exp < emin) exp = emin;
  double q = std::ldexp(1.0, exp - (precision - 1));
  double r = std::nearbyint(a / q) * q;
  return float(std::copysign(r, d));
}
}  // namespace

uint16_t f64_to_f16_bits(double d) {
  if (std::isnan(d)) return std::signbit(d) ? 0xfe00u : 0x7e00u;
  return f32_to_f16_bits(round_to_format(d, 11, -14));
}

uint16_t f64_to_bf16_bits(double d) {
  if (std::isnan(d)) return std::signbit(d) ? 0xffc0u : 0x7fc0u;
  return f32_to_bf16_bits(round_to_format(d, 8, -126));
}

DType parse_dtype(std::string_view name) {
  for (DType d : kAllDTypes)
    if (dtype_name(d) == name) return d;
  throw_error(ErrorKind::UnsupportedDType, "dtype", fmt::format("unknown dtype '{}'", name));
}

}  // namespace wick
