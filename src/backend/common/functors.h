// Elementwise functors on compute types, shared by the CPU backend and the GPU
// kernels (g++, nvcc and hipcc all read this header). Compute types: float and
// double for float dtypes (f16/bf16 compute in float, the caller converts in and
// out and rounds once), and the integer types themselves for integer dtypes.
//
// Each functor is a small struct with `operator()` marked WICK_HD, named as its
// op's enumerator in wick/op_table.h (UnaryOp::Exp -> Exp): the CPU dispatch and
// the GPU kernels are generated from that table, so a missing functor fails the
// build.
//
// Semantics chosen where the reference leaves a choice (the CPU and GPU share them):
// - Integer arithmetic wraps (two's complement), including neg/abs of the minimum.
// - Integer division truncates toward zero; x / 0 = 0; min / -1 = min (wraps).
// - Integer pow is exact and wraps; a negative exponent gives 1 / x^-e truncated toward
//   zero like division (1 for x = 1, +-1 for x = -1, else 0, 0 for x = 0 too).
// - maximum / minimum propagate NaN (like PyTorch; Candle's CUDA f32 path ignores NaN).
// - relu propagates NaN (x < 0 ? 0 : x); sign follows (x>0)-(x<0), so sign(NaN) = 0.
// - round is half away from zero (C round); elu uses expm1 for accuracy near 0.
// - affine on integers computes x*mul+add in double and converts like a cast
//   (truncate toward zero, saturate, NaN -> 0); floats compute in their compute type.
#pragma once

#include <math.h>
#include <stdint.h>

#include <limits>
#include <type_traits>

#include "backend/common/hd.h"

namespace wick::fn {

// ---- math overloads that exist on the host and on both device compilers --------
namespace m {
#define WICK_FN_MATH1(name, fname)                      \
  WICK_HD float name(float x) { return ::fname##f(x); } \
  WICK_HD double name(double x) { return ::fname(x); }
WICK_FN_MATH1(exp, exp)
WICK_FN_MATH1(expm1, expm1)
WICK_FN_MATH1(log, log)
WICK_FN_MATH1(sin, sin)
WICK_FN_MATH1(cos, cos)
WICK_FN_MATH1(tanh, tanh)
WICK_FN_MATH1(erf, erf)
WICK_FN_MATH1(sqrt, sqrt)
WICK_FN_MATH1(fabs, fabs)
WICK_FN_MATH1(floor, floor)
WICK_FN_MATH1(ceil, ceil)
WICK_FN_MATH1(round, round)
#undef WICK_FN_MATH1
WICK_HD float pow(float x, float e) { return ::powf(x, e); }
WICK_HD double pow(double x, double e) { return ::pow(x, e); }
}  // namespace m

template <class T>
inline constexpr bool is_int_v = std::is_integral_v<T>;

// Two's-complement negation without signed overflow (which is undefined behaviour).
template <class T>
WICK_HD T wrap_neg(T x) {
  using U = std::make_unsigned_t<T>;
  return T(U(U(0) - U(x)));
}

// Float -> integer the way a cast does: truncate toward zero, NaN -> 0, saturate.
template <class I>
WICK_HD I float_to_int(double x) {
  if (x != x) return I(0);
  constexpr double lo = double(std::numeric_limits<I>::min());
  constexpr double hi_excl = double(std::numeric_limits<I>::max()) + 1.0;  // exact for every I here
  if (x <= lo) return std::numeric_limits<I>::min();
  if (x >= hi_excl) return std::numeric_limits<I>::max();
  return I(x);
}

// ---- unary ------------------------------------------------------------------------
struct Exp {
  template <class T>
  WICK_HD T operator()(T x) const {
    return m::exp(x);
  }
};
struct Log {
  template <class T>
  WICK_HD T operator()(T x) const {
    return m::log(x);
  }
};
struct Sin {
  template <class T>
  WICK_HD T operator()(T x) const {
    return m::sin(x);
  }
};
struct Cos {
  template <class T>
  WICK_HD T operator()(T x) const {
    return m::cos(x);
  }
};
struct Abs {
  template <class T>
  WICK_HD T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T>) {
      return x;
    } else if constexpr (is_int_v<T>) {
      return x < T(0) ? wrap_neg(x) : x;
    } else {
      return m::fabs(x);
    }
  }
};
struct Neg {
  template <class T>
  WICK_HD T operator()(T x) const {
    if constexpr (is_int_v<T>) {
      return wrap_neg(x);
    } else {
      return -x;
    }
  }
};
struct Recip {
  template <class T>
  WICK_HD T operator()(T x) const {
    return T(1) / x;
  }
};
struct Sqr {
  template <class T>
  WICK_HD T operator()(T x) const {
    if constexpr (is_int_v<T>) {
      using U = std::make_unsigned_t<T>;
      return T(U(U(x) * U(x)));
    } else {
      return x * x;
    }
  }
};
struct Sqrt {
  template <class T>
  WICK_HD T operator()(T x) const {
    return m::sqrt(x);
  }
};
// Tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
struct Gelu {
  template <class T>
  WICK_HD T operator()(T x) const {
    const T k = T(0.79788456080286535587989211986876373);  // sqrt(2/pi)
    return T(0.5) * x * (T(1) + m::tanh(k * (x + T(0.044715) * x * x * x)));
  }
};
// Exact: 0.5 x (1 + erf(x / sqrt(2))).
struct GeluErf {
  template <class T>
  WICK_HD T operator()(T x) const {
    const T inv_sqrt2 = T(0.70710678118654752440084436210484903);
    return T(0.5) * x * (T(1) + m::erf(x * inv_sqrt2));
  }
};
struct Erf {
  template <class T>
  WICK_HD T operator()(T x) const {
    return m::erf(x);
  }
};
struct Relu {
  template <class T>
  WICK_HD T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T>) {
      return x;
    } else {
      return x < T(0) ? T(0) : x;
    }
  }
};
struct Silu {
  template <class T>
  WICK_HD T operator()(T x) const {
    return x / (T(1) + m::exp(-x));
  }
};
struct Tanh {
  template <class T>
  WICK_HD T operator()(T x) const {
    return m::tanh(x);
  }
};
struct Floor {
  template <class T>
  WICK_HD T operator()(T x) const {
    if constexpr (is_int_v<T>) {
      return x;
    } else {
      return m::floor(x);
    }
  }
};
struct Ceil {
  template <class T>
  WICK_HD T operator()(T x) const {
    if constexpr (is_int_v<T>) {
      return x;
    } else {
      return m::ceil(x);
    }
  }
};
struct Round {
  template <class T>
  WICK_HD T operator()(T x) const {
    if constexpr (is_int_v<T>) {
      return x;
    } else {
      return m::round(x);
    }
  }
};
struct Sign {
  template <class T>
  WICK_HD T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T>) {
      return T(x > T(0));
    } else {
      return T(int(x > T(0)) - int(x < T(0)));
    }
  }
};
struct Sigmoid {
  template <class T>
  WICK_HD T operator()(T x) const {
    return T(1) / (T(1) + m::exp(-x));
  }
};

// ---- unary with a parameter (float dtypes except Affine) ---------------------------
struct Affine {
  double mul, add;
  template <class T>
  WICK_HD T operator()(T x) const {
    if constexpr (is_int_v<T>) {
      return float_to_int<T>(double(x) * mul + add);
    } else {
      return x * T(mul) + T(add);
    }
  }
};
struct Powf {
  double e;
  template <class T>
  WICK_HD T operator()(T x) const {
    return m::pow(x, T(e));
  }
};
struct Elu {
  double alpha;
  template <class T>
  WICK_HD T operator()(T x) const {
    return x > T(0) ? x : T(alpha) * m::expm1(x);
  }
};

// ---- binary -----------------------------------------------------------------------
struct Add {
  template <class T>
  WICK_HD T operator()(T a, T b) const {
    if constexpr (is_int_v<T>) {
      using U = std::make_unsigned_t<T>;
      return T(U(U(a) + U(b)));
    } else {
      return a + b;
    }
  }
};
struct Sub {
  template <class T>
  WICK_HD T operator()(T a, T b) const {
    if constexpr (is_int_v<T>) {
      using U = std::make_unsigned_t<T>;
      return T(U(U(a) - U(b)));
    } else {
      return a - b;
    }
  }
};
struct Mul {
  template <class T>
  WICK_HD T operator()(T a, T b) const {
    if constexpr (is_int_v<T>) {
      using U = std::make_unsigned_t<T>;
      return T(U(U(a) * U(b)));
    } else {
      return a * b;
    }
  }
};
struct Div {
  template <class T>
  WICK_HD T operator()(T a, T b) const {
    if constexpr (is_int_v<T>) {
      if (b == T(0)) return T(0);
      if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return wrap_neg(a);  // min / -1 overflows (and traps on x86)
      }
      return T(a / b);
    } else {
      return a / b;
    }
  }
};
struct Maximum {
  // NaN in either operand gives NaN (a != a only for NaN; always false for integers).
  template <class T>
  WICK_HD T operator()(T a, T b) const {
    return (a < b || b != b) ? b : a;
  }
};
struct Minimum {
  template <class T>
  WICK_HD T operator()(T a, T b) const {
    return (b < a || b != b) ? b : a;
  }
};

struct Pow {
  template <class T>
  WICK_HD T operator()(T a, T b) const {
    if constexpr (is_int_v<T>) {
      if constexpr (std::is_signed_v<T>) {
        if (b < T(0)) {
          if (a == T(1)) return T(1);
          if (a == T(-1)) return (b & T(1)) ? T(-1) : T(1);
          return T(0);
        }
      }
      // Square and multiply in the unsigned twin: wraps without undefined behaviour.
      using U = std::make_unsigned_t<T>;
      U base = U(a), result = U(1);
      for (U e = U(b); e != U(0); e = U(e >> 1)) {
        if (e & U(1)) result = U(result * base);
        base = U(base * base);
      }
      return T(result);
    } else {
      return m::pow(a, b);
    }
  }
};

// ---- fused (float dtypes; nn::swiglu) ----------------------------------------------------
// silu(g) * u with silu as Silu computes it: the same value as silu then mul, without
// rounding silu(g) to a 16-bit dtype in between.
struct SiluMul {
  template <class T>
  WICK_HD T operator()(T g, T u) const {
    return Silu{}(g)*u;
  }
};

// ---- comparisons (result 0/1, stored as u8) ------------------------------------------
struct Eq {
  template <class T>
  WICK_HD bool operator()(T a, T b) const {
    return a == b;
  }
};
struct Ne {
  template <class T>
  WICK_HD bool operator()(T a, T b) const {
    return a != b;
  }
};
struct Lt {
  template <class T>
  WICK_HD bool operator()(T a, T b) const {
    return a < b;
  }
};
struct Le {
  template <class T>
  WICK_HD bool operator()(T a, T b) const {
    return a <= b;
  }
};
struct Gt {
  template <class T>
  WICK_HD bool operator()(T a, T b) const {
    return a > b;
  }
};
struct Ge {
  template <class T>
  WICK_HD bool operator()(T a, T b) const {
    return a >= b;
  }
};

// ---- ternary --------------------------------------------------------------------------
struct Where {
  template <class C, class T>
  WICK_HD T operator()(C cond, T t, T f) const {
    return cond != C(0) ? t : f;
  }
};

}  // namespace wick::fn
