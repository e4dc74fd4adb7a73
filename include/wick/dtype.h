// Element types. Candle's set plus i32: u8, u32, i32, i64, f16, bf16, f32, f64.
// f16 and bf16 are 16-bit storage types on the host with exact conversions
// (round to nearest even; NaN and infinities preserved). Arithmetic on them
// goes through float: `float(x)` in, `f16(y)` out.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

namespace wick {

enum class DType : uint8_t { U8, U32, I32, I64, F16, BF16, F32, F64 };
inline constexpr int kNumDTypes = 8;
inline constexpr DType kAllDTypes[kNumDTypes] = {DType::U8,  DType::U32,  DType::I32, DType::I64,
                                                 DType::F16, DType::BF16, DType::F32, DType::F64};

// Bits of a float <-> f16 / bf16, round to nearest even, NaN stays NaN (quiet).
// Defined inline: every f16/bf16 element of every CPU op passes through these.
inline uint16_t f32_to_f16_bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) {  // inf or NaN (NaN stays a quiet NaN with its top payload bits)
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
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // a carry may bump the exponent: still right
  return uint16_t(sign | h);
}

inline float f16_bits_to_f32(uint16_t h) {
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

inline uint16_t f32_to_bf16_bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return uint16_t(x >> 16);
}

inline float bf16_bits_to_f32(uint16_t b) {
  uint32_t u = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
// Direct f64 -> f16 / bf16 with a single rounding (f64 -> f32 -> f16 would round twice).
uint16_t f64_to_f16_bits(double d);
uint16_t f64_to_bf16_bits(double d);

struct f16 {
  uint16_t bits = 0;
  f16() = default;
  explicit f16(float f) : bits(f32_to_f16_bits(f)) {}
  explicit f16(double d) : bits(f64_to_f16_bits(d)) {}
  static f16 from_bits(uint16_t b) {
    f16 h;
    h.bits = b;
    return h;
  }
  operator float() const { return f16_bits_to_f32(bits); }
};

struct bf16 {
  uint16_t bits = 0;
  bf16() = default;
  explicit bf16(float f) : bits(f32_to_bf16_bits(f)) {}
  explicit bf16(double d) : bits(f64_to_bf16_bits(d)) {}
  static bf16 from_bits(uint16_t b) {
    bf16 h;
    h.bits = b;
    return h;
  }
  operator float() const { return bf16_bits_to_f32(bits); }
};

static_assert(sizeof(f16) == 2 && sizeof(bf16) == 2);

constexpr size_t dtype_size(DType dt) {
  switch (dt) {
    case DType::U8: return 1;
    case DType::F16:
    case DType::BF16: return 2;
    case DType::U32:
    case DType::I32:
    case DType::F32: return 4;
    case DType::I64:
    case DType::F64: return 8;
  }
  return 0;
}

// "u8", "u32", "i32", "i64", "f16", "bf16", "f32", "f64": the kernel-name suffix.
constexpr std::string_view dtype_name(DType dt) {
  switch (dt) {
    case DType::U8: return "u8";
    case DType::U32: return "u32";
    case DType::I32: return "i32";
    case DType::I64: return "i64";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::F32: return "f32";
    case DType::F64: return "f64";
  }
  return "?";
}

constexpr bool is_float(DType dt) {
  return dt == DType::F16 || dt == DType::BF16 || dt == DType::F32 || dt == DType::F64;
}
constexpr bool is_int(DType dt) { return !is_float(dt); }
// The dtypes an index tensor (ids, where-condition) may have.
constexpr bool is_index_dtype(DType dt) {
  return dt == DType::U8 || dt == DType::U32 || dt == DType::I32 || dt == DType::I64;
}

// Parses a dtype name ("f32"); throws Error(UnsupportedDType) on an unknown name.
DType parse_dtype(std::string_view name);

// C++ type <-> DType.
template <class T> struct DTypeOf;
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::U8; };
template <> struct DTypeOf<uint32_t> { static constexpr DType value = DType::U32; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::I32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::I64; };
template <> struct DTypeOf<f16> { static constexpr DType value = DType::F16; };
template <> struct DTypeOf<bf16> { static constexpr DType value = DType::BF16; };
template <> struct DTypeOf<float> { static constexpr DType value = DType::F32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::F64; };
template <class T> inline constexpr DType dtype_of = DTypeOf<T>::value;

template <DType D> struct TypeOf;
template <> struct TypeOf<DType::U8> { using type = uint8_t; };
template <> struct TypeOf<DType::U32> { using type = uint32_t; };
template <> struct TypeOf<DType::I32> { using type = int32_t; };
template <> struct TypeOf<DType::I64> { using type = int64_t; };
template <> struct TypeOf<DType::F16> { using type = f16; };
template <> struct TypeOf<DType::BF16> { using type = bf16; };
template <> struct TypeOf<DType::F32> { using type = float; };
template <> struct TypeOf<DType::F64> { using type = double; };
template <DType D> using type_of = typename TypeOf<D>::type;

// Converts between element types the way a cast op does: floats to integers
// truncate toward zero (NaN -> 0, out of range saturates), integers wrap as in C++.
template <class To, class From> To convert(From x);

namespace detail {
// The arithmetic types Scalar has no exact constructor for.
template <class T>
concept OtherArithmetic = std::is_arithmetic_v<T> && !std::is_same_v<T, double> &&
                          !std::is_same_v<T, int64_t> && !std::is_same_v<T, int>;
}  // namespace detail

// A scalar of any dtype, held as double (exact for every value of every dtype
// except i64 beyond 2^53, which is held exactly in `i`).
struct Scalar {
  double f = 0.0;
  int64_t i = 0;
  bool is_int = false;
  Scalar() = default;
  // i is only read for integer scalars; a value outside the i64 range (or NaN) leaves it 0
  // rather than converting out of range.
  Scalar(double v) : f(v), i(v > -9.2e18 && v < 9.2e18 ? int64_t(v) : 0), is_int(false) {}
  Scalar(int64_t v) : f(double(v)), i(v), is_int(true) {}
  Scalar(int v) : Scalar(int64_t(v)) {}
  // Any other arithmetic type (unsigned, size_t, long long, float, bool): integers stay
  // integers (an unsigned value above the i64 range is held as a float), floats widen.
  template <detail::OtherArithmetic T>
  Scalar(T v) : Scalar(from(v)) {}
  template <class T> T as() const;

 private:
  template <class T>
  static Scalar from(T v) {
    if constexpr (std::is_floating_point_v<T>) {
      return Scalar(double(v));
    } else if constexpr (std::is_unsigned_v<T> && sizeof(T) >= sizeof(int64_t)) {
      return v > T(INT64_MAX) ? Scalar(double(v)) : Scalar(int64_t(v));
    } else {
      return Scalar(int64_t(v));
    }
  }
};

}  // namespace wick

#include "wick/dtype_convert.h"
