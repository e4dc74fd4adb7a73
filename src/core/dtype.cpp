// Exact f16 / bf16 conversions (round to nearest even; NaN and infinities kept).
#include "wick/dtype.h"

#include <fmt/format.h>

#include <cmath>

#include "wick/error.h"

namespace wick {

namespace {
uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

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

uint16_t f32_to_f16_bits(float f) {
  uint32_t x = f32_bits(f);
  uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) {  // inf or NaN (NaN stays quiet NaN with its top payload bits)
    return uint16_t(sign | 0x7c00u | (ax > 0x7f800000u ? (0x200u | ((ax >> 13) & 0x3ffu)) : 0u));
  }
  if (ax >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // >= 65520 rounds to inf
  if (ax < 0x38800000u) {                                   // below 2^-14: half subnormal (or zero)
    float a = std::fabs(f) * 16777216.0f;                   // in units of 2^-24, exact
    return uint16_t(sign | uint16_t(std::nearbyint(a)));    // 1024 carries into the smallest normal
  }
  uint32_t mant = ax & 0x7fffffu;
  uint32_t h = (((ax >> 23) - 127 + 15) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // carry may bump the exponent: still right
  return uint16_t(sign | h);
}

float f16_bits_to_f32(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  uint32_t u;
  if (exp == 0) {
    float v = float(mant) * 5.9604644775390625e-8f;  // mant * 2^-24
    return sign ? -v : v;
  } else if (exp == 31) {
    u = sign | 0x7f800000u | (mant << 13);
  } else {
    u = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t f32_to_bf16_bits(float f) {
  uint32_t x = f32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return uint16_t(x >> 16);
}

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
