// convert<To>(From): the element conversion every cast uses, on the CPU and (the
// same rules, written again in kernels/cast.cu) on the GPU:
//   float -> int   truncate toward zero; NaN -> 0; out of range saturates
//   int   -> int   two's-complement wrap (C++ conversion)
//   any   -> f16/bf16  through the widest float (one rounding, to nearest even)
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>

namespace wick {

namespace detail {
template <class T> inline constexpr bool is_half_v = std::is_same_v<T, f16> || std::is_same_v<T, bf16>;

template <class I> I float_to_int(double x) {
  if (std::isnan(x)) return I(0);
  constexpr double lo = double(std::numeric_limits<I>::min());
  // max+1 is exact in double for every integer type here
  constexpr double hi_excl = double(std::numeric_limits<I>::max()) + 1.0;
  if (x <= lo) return std::numeric_limits<I>::min();
  if (x >= hi_excl) return std::numeric_limits<I>::max();
  return I(x);  // truncates toward zero
}
}  // namespace detail

template <class To, class From> inline To convert(From x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (detail::is_half_v<To>) {
    // f64 and 32/64-bit integers through double: via float, an integer above 2^24
    // could round onto a bf16 midpoint first (a second rounding)
    if constexpr (std::is_same_v<From, double> || (std::is_integral_v<From> && sizeof(From) >= 4)) {
      return To(double(x));
    } else {
      return To(float(x));
    }
  } else if constexpr (detail::is_half_v<From>) {
    return convert<To, float>(float(x));
  } else if constexpr (std::is_floating_point_v<To>) {
    return To(x);
  } else if constexpr (std::is_floating_point_v<From>) {
    return detail::float_to_int<To>(double(x));
  } else {
    return static_cast<To>(x);
  }
}

template <class T> inline T Scalar::as() const {
  if (is_int) return convert<T, int64_t>(i);
  return convert<T, double>(f);
}

}  // namespace wick
