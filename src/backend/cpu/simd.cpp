// The CPU backend's vector kernels (simd.h). Highway compiles this file once per x86
// target (foreach_target.h re-includes it): the kernels below live in
// wick::cpu::simd::HWY_NAMESPACE, compiled with that target's instruction set, and
// the entry points at the end (HWY_ONCE) call the best one the running CPU supports.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backend/cpu/simd.cpp"
#include <hwy/foreach_target.h>  // must precede highway.h
// clang-format off
#include <hwy/highway.h>
// clang-format on

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "backend/common/functors.h"
#include "backend/cpu/simd.h"

HWY_BEFORE_NAMESPACE();
namespace wick::cpu::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The vector path: x86 targets from SSE4 up (SLEEF's SSE4.1, AVX2 and AVX-512F
// functions); f16 needs F16C (AVX2 and up: Highway's SSE4 conversions of f16
// truncate). Other targets run the scalar loops.
#undef WICK_SIMD_VECTOR
#undef WICK_SIMD_F16
#undef WICK_SLEEF
#undef WICK_SLEEF_D
#undef WICK_SLEEF_VEC
#undef WICK_SLEEF_VECD
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_SSE4
#define WICK_SIMD_VECTOR 1
#define WICK_SIMD_F16 (HWY_TARGET <= HWY_AVX2)
#if HWY_TARGET <= HWY_AVX3
#define WICK_SLEEF(f) Sleef_##f##f16_u10avx512f
#define WICK_SLEEF_D(f) Sleef_##f##d8_u10avx512f
#define WICK_SLEEF_VEC __m512
#define WICK_SLEEF_VECD __m512d
#elif HWY_TARGET == HWY_AVX2
#define WICK_SLEEF(f) Sleef_##f##f8_u10avx2
#define WICK_SLEEF_D(f) Sleef_##f##d4_u10avx2
#define WICK_SLEEF_VEC __m256
#define WICK_SLEEF_VECD __m256d
#else
#define WICK_SLEEF(f) Sleef_##f##f4_u10sse4
#define WICK_SLEEF_D(f) Sleef_##f##d2_u10sse4
#define WICK_SLEEF_VEC __m128
#define WICK_SLEEF_VECD __m128d
#endif
// SLEEF's functions of this target (libsleef; sleef.h declares the 256- and 512-bit
// ones only when the whole file is compiled for AVX / AVX-512).
extern "C" {
WICK_SLEEF_VEC WICK_SLEEF(exp)(WICK_SLEEF_VEC);
WICK_SLEEF_VEC WICK_SLEEF(log)(WICK_SLEEF_VEC);
WICK_SLEEF_VEC WICK_SLEEF(sin)(WICK_SLEEF_VEC);
WICK_SLEEF_VEC WICK_SLEEF(cos)(WICK_SLEEF_VEC);
WICK_SLEEF_VEC WICK_SLEEF(tanh)(WICK_SLEEF_VEC);
WICK_SLEEF_VEC WICK_SLEEF(erf)(WICK_SLEEF_VEC);
WICK_SLEEF_VECD WICK_SLEEF_D(exp)(WICK_SLEEF_VECD);
}
#else
#define WICK_SIMD_VECTOR 0
#define WICK_SIMD_F16 0
#endif

// Largest vector in floats on any target, for the padded last vector of a run.
constexpr size_t kMaxLanes = 64 / sizeof(float);

// ---- scalar forms: targets without a vector path -------------------------------------
template <class T>
float to_f32(T x) {
  return float(x);
}
template <class T>
T from_f32(float x) {
  return T(x);
}

template <class Fn, class T>
void scalar_map(const T* x, T* y, size_t n, Fn f) {
  for (size_t i = 0; i < n; ++i) y[i] = from_f32<T>(f(to_f32(x[i])));
}

template <class T>
float scalar_sum(const T* x, size_t n) {
  if (n <= 256) {
    float lane[8] = {};
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
      for (size_t k = 0; k < 8; ++k) lane[k] += to_f32(x[i + k]);
    for (size_t k = 0; i < n; ++i, ++k) lane[k] += to_f32(x[i]);
    return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
  }
  size_t half = (n / 2) & ~size_t(7);
  return scalar_sum(x, half) + scalar_sum(x + half, n - half);
}

template <class T>
void scalar_softmax(const T* x, T* y, size_t n, bool log, double* e) {
  float m = -std::numeric_limits<float>::infinity();
  bool nan = false;
  for (size_t i = 0; i < n; ++i) {
    float v = to_f32(x[i]);
    nan |= v != v;
    m = v > m ? v : m;
  }
  if (nan) {
    for (size_t i = 0; i < n; ++i) y[i] = from_f32<T>(std::numeric_limits<float>::quiet_NaN());
    return;
  }
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += e[i] = std::exp(double(to_f32(x[i])) - double(m));
  if (log) {
    const double lse = double(m) + std::log(sum);
    for (size_t i = 0; i < n; ++i) y[i] = convert<T, double>(double(to_f32(x[i])) - lse);
    return;
  }
  const double inv = 1.0 / sum;
  for (size_t i = 0; i < n; ++i) y[i] = convert<T, double>(e[i] * inv);
}

#if WICK_SIMD_VECTOR
using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

// Element types as f32 vectors: loads widen, stores round to nearest even.
template <class T>
struct Io;
template <>
struct Io<float> {
  static VF load(DF d, const float* p) { return hn::LoadU(d, p); }
  static void store(DF d, VF v, float* p) { hn::StoreU(v, d, p); }
};
template <>
struct Io<bf16> {
  static VF load(DF d, const bf16* p) {
    const hn::Rebind<hwy::bfloat16_t, DF> db;
    return hn::PromoteTo(d, hn::LoadU(db, reinterpret_cast<const hwy::bfloat16_t*>(p)));
  }
  // f32_to_bf16_bits: x + 0x7fff + (bit 16 of x), the top half; a NaN keeps its top
  // half with the quiet bit set.
  static void store(DF d, VF v, bf16* p) {
    const hn::RebindToUnsigned<DF> du;
    const hn::RebindToSigned<DF> di;
    const hn::Rebind<uint16_t, DF> d16;
    const auto u = hn::BitCast(du, v);
    const auto lsb = hn::And(hn::ShiftRight<16>(u), hn::Set(du, 1u));
    const auto rounded = hn::ShiftRight<16>(hn::Add(u, hn::Add(hn::Set(du, 0x7fffu), lsb)));
    const auto quiet = hn::Or(hn::ShiftRight<16>(u), hn::Set(du, 0x40u));
    const auto bits = hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(v)), quiet, rounded);
    hn::StoreU(hn::DemoteTo(d16, hn::BitCast(di, bits)), d16, reinterpret_cast<uint16_t*>(p));
  }
};
template <>
struct Io<f16> {
  static VF load(DF d, const f16* p) {
    const hn::Rebind<hwy::float16_t, DF> dh;
    return hn::PromoteTo(d, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(p)));
  }
  static void store(DF d, VF v, f16* p) {
    const hn::Rebind<hwy::float16_t, DF> dh;
    hn::StoreU(hn::DemoteTo(dh, v), dh, reinterpret_cast<hwy::float16_t*>(p));
  }
};

// y = f(x) vector by vector; the last partial vector goes through a padded copy
// (zeros), so every element takes the same vector code.
template <class In, class Out, class F>
void map(const In* x, Out* y, size_t n, F f) {
  const DF d;
  const size_t lanes = hn::Lanes(d);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) Io<Out>::store(d, f(d, Io<In>::load(d, x + i)), y + i);
  if (i < n) {
    In xb[kMaxLanes] = {};
    Out yb[kMaxLanes];
    std::memcpy(xb, x + i, (n - i) * sizeof(In));
    Io<Out>::store(d, f(d, Io<In>::load(d, xb)), yb);
    std::memcpy(y + i, yb, (n - i) * sizeof(Out));
  }
}

// ---- vector forms of the functors of backend/common/functors.h ------------------------
HWY_INLINE VF vexp(VF v) { return VF{WICK_SLEEF(exp)(v.raw)}; }
HWY_INLINE VF vlog(VF v) { return VF{WICK_SLEEF(log)(v.raw)}; }
HWY_INLINE VF vsin(VF v) { return VF{WICK_SLEEF(sin)(v.raw)}; }
HWY_INLINE VF vcos(VF v) { return VF{WICK_SLEEF(cos)(v.raw)}; }
HWY_INLINE VF vtanh(VF v) { return VF{WICK_SLEEF(tanh)(v.raw)}; }
HWY_INLINE VF verf(VF v) { return VF{WICK_SLEEF(erf)(v.raw)}; }

template <UnaryOp Op>
struct VOp;
template <>
struct VOp<UnaryOp::Exp> {
  VF operator()(DF, VF x) const { return vexp(x); }
};
template <>
struct VOp<UnaryOp::Log> {
  VF operator()(DF, VF x) const { return vlog(x); }
};
template <>
struct VOp<UnaryOp::Sin> {
  VF operator()(DF, VF x) const { return vsin(x); }
};
template <>
struct VOp<UnaryOp::Cos> {
  VF operator()(DF, VF x) const { return vcos(x); }
};
template <>
struct VOp<UnaryOp::Tanh> {
  VF operator()(DF, VF x) const { return vtanh(x); }
};
template <>
struct VOp<UnaryOp::Erf> {
  VF operator()(DF, VF x) const { return verf(x); }
};
// x / (1 + exp(-x))
template <>
struct VOp<UnaryOp::Silu> {
  VF operator()(DF d, VF x) const { return hn::Div(x, hn::Add(hn::Set(d, 1.0f), vexp(hn::Neg(x)))); }
};
// 1 / (1 + exp(-x))
template <>
struct VOp<UnaryOp::Sigmoid> {
  VF operator()(DF d, VF x) const {
    const VF one = hn::Set(d, 1.0f);
    return hn::Div(one, hn::Add(one, vexp(hn::Neg(x))));
  }
};
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
template <>
struct VOp<UnaryOp::Gelu> {
  VF operator()(DF d, VF x) const {
    const VF k = hn::Set(d, 0.79788456080286535587989211986876373f);
    const VF cube = hn::Mul(hn::Mul(hn::Mul(hn::Set(d, 0.044715f), x), x), x);
    const VF t = vtanh(hn::Mul(k, hn::Add(x, cube)));
    return hn::Mul(hn::Mul(hn::Set(d, 0.5f), x), hn::Add(hn::Set(d, 1.0f), t));
  }
};
// 0.5 x (1 + erf(x / sqrt(2)))
template <>
struct VOp<UnaryOp::GeluErf> {
  VF operator()(DF d, VF x) const {
    const VF e = verf(hn::Mul(x, hn::Set(d, 0.70710678118654752440084436210484903f)));
    return hn::Mul(hn::Mul(hn::Set(d, 0.5f), x), hn::Add(hn::Set(d, 1.0f), e));
  }
};
#endif  // WICK_SIMD_VECTOR

// The ops simd::has_unary lists, each on element type T.
template <class T>
void unary_typed(UnaryOp op, const T* x, T* y, size_t n) {
  constexpr bool vector = WICK_SIMD_VECTOR && (!std::is_same_v<T, f16> || WICK_SIMD_F16);
  switch (op) {
#if WICK_SIMD_VECTOR
#define WICK_SIMD_CASE(op_)                     \
  case UnaryOp::op_:                            \
    if constexpr (vector) {                     \
      return map(x, y, n, VOp<UnaryOp::op_>{}); \
    } else {                                    \
      return scalar_map(x, y, n, fn::op_{});    \
    }
#else
#define WICK_SIMD_CASE(op_) \
  case UnaryOp::op_:        \
    return scalar_map(x, y, n, fn::op_{});
#endif
    WICK_SIMD_CASE(Exp)
    WICK_SIMD_CASE(Log)
    WICK_SIMD_CASE(Sin)
    WICK_SIMD_CASE(Cos)
    WICK_SIMD_CASE(Tanh)
    WICK_SIMD_CASE(Erf)
    WICK_SIMD_CASE(Silu)
    WICK_SIMD_CASE(Sigmoid)
    WICK_SIMD_CASE(Gelu)
    WICK_SIMD_CASE(GeluErf)
#undef WICK_SIMD_CASE
    default:
      break;  // not reached: has_unary lists the ops above
  }
  (void)vector;
}

template <class T>
float sum_typed(const T* x, size_t n) {
#if WICK_SIMD_VECTOR
  if constexpr (!std::is_same_v<T, f16> || WICK_SIMD_F16) {
    const DF d;
    const size_t lanes = hn::Lanes(d);
    // Blocks of up to 32 vectors in four independent accumulators; halves combine
    // recursively (pairwise), splitting on whole vectors.
    if (n > 32 * lanes) {
      const size_t half = (n / 2) / lanes * lanes;
      return sum_typed(x, half) + sum_typed(x + half, n - half);
    }
    VF a0 = hn::Zero(d), a1 = a0, a2 = a0, a3 = a0;
    size_t i = 0;
    for (; i + 4 * lanes <= n; i += 4 * lanes) {
      a0 = hn::Add(a0, Io<T>::load(d, x + i));
      a1 = hn::Add(a1, Io<T>::load(d, x + i + lanes));
      a2 = hn::Add(a2, Io<T>::load(d, x + i + 2 * lanes));
      a3 = hn::Add(a3, Io<T>::load(d, x + i + 3 * lanes));
    }
    for (; i + lanes <= n; i += lanes) a0 = hn::Add(a0, Io<T>::load(d, x + i));
    if (i < n) {
      T xb[kMaxLanes] = {};
      std::memcpy(xb, x + i, (n - i) * sizeof(T));
      a1 = hn::Add(a1, Io<T>::load(d, xb));
    }
    return hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3))));
  }
#endif
  return scalar_sum(x, n);
}

// Max (IsMax) or min of a non-empty run in f32; NaN when the run holds a NaN.
template <bool IsMax, class T>
float extreme_typed(const T* x, size_t n) {
#if WICK_SIMD_VECTOR
  if constexpr (!std::is_same_v<T, f16> || WICK_SIMD_F16) {
    const DF d;
    const size_t lanes = hn::Lanes(d);
    auto pick = [](VF a, VF b) {
      if constexpr (IsMax) {
        return hn::Max(a, b);
      } else {
        return hn::Min(a, b);
      }
    };
    // Four independent accumulators; NaN is tracked apart (Max/Min do not propagate it).
    const VF first = hn::Set(d, to_f32(x[0]));
    VF m0 = first, m1 = first, m2 = first, m3 = first;
    auto nan = hn::IsNaN(first);
    size_t i = 0;
    for (; i + 4 * lanes <= n; i += 4 * lanes) {
      const VF v0 = Io<T>::load(d, x + i), v1 = Io<T>::load(d, x + i + lanes);
      const VF v2 = Io<T>::load(d, x + i + 2 * lanes), v3 = Io<T>::load(d, x + i + 3 * lanes);
      nan = hn::Or(nan, hn::Or(hn::Or(hn::IsNaN(v0), hn::IsNaN(v1)), hn::Or(hn::IsNaN(v2), hn::IsNaN(v3))));
      m0 = pick(m0, v0);
      m1 = pick(m1, v1);
      m2 = pick(m2, v2);
      m3 = pick(m3, v3);
    }
    for (; i + lanes <= n; i += lanes) {
      const VF v = Io<T>::load(d, x + i);
      nan = hn::Or(nan, hn::IsNaN(v));
      m0 = pick(m0, v);
    }
    if (i < n) {  // the last partial vector, padded with the run's first element
      T xb[kMaxLanes];
      for (size_t k = 0; k < lanes; ++k) xb[k] = i + k < n ? x[i + k] : x[0];
      const VF v = Io<T>::load(d, xb);
      nan = hn::Or(nan, hn::IsNaN(v));
      m1 = pick(m1, v);
    }
    if (!hn::AllFalse(d, nan)) return std::numeric_limits<float>::quiet_NaN();
    const VF m = pick(pick(m0, m1), pick(m2, m3));
    return hn::GetLane(IsMax ? hn::MaxOfLanes(d, m) : hn::MinOfLanes(d, m));
  }
#endif
  float m = to_f32(x[0]);
  for (size_t i = 0; i < n; ++i) {
    const float v = to_f32(x[i]);
    if (v != v) return v;
    m = (IsMax ? v > m : v < m) ? v : m;
  }
  return m;
}

// Index of the first element of the run equal to v (the first NaN when v is NaN); n
// when there is none.
template <class T>
size_t find_typed(const T* x, size_t n, float v) {
  const bool want_nan = v != v;
#if WICK_SIMD_VECTOR
  if constexpr (!std::is_same_v<T, f16> || WICK_SIMD_F16) {
    const DF d;
    const size_t lanes = hn::Lanes(d);
    const VF vv = hn::Set(d, v);
    auto hit = [&](VF e) { return want_nan ? hn::IsNaN(e) : hn::Eq(e, vv); };
    size_t i = 0;
    // Blocks of four vectors tested together, then the hit located in its block.
    for (; i + 4 * lanes <= n; i += 4 * lanes) {
      const auto m =
          hn::Or(hn::Or(hit(Io<T>::load(d, x + i)), hit(Io<T>::load(d, x + i + lanes))),
                 hn::Or(hit(Io<T>::load(d, x + i + 2 * lanes)), hit(Io<T>::load(d, x + i + 3 * lanes))));
      if (!hn::AllFalse(d, m)) break;
    }
    for (; i + lanes <= n; i += lanes) {
      const intptr_t k = hn::FindFirstTrue(d, hit(Io<T>::load(d, x + i)));
      if (k >= 0) return i + size_t(k);
    }
    for (; i < n; ++i) {
      const float e = to_f32(x[i]);
      if (want_nan ? e != e : e == v) return i;
    }
    return n;
  }
#endif
  for (size_t i = 0; i < n; ++i) {
    const float e = to_f32(x[i]);
    if (want_nan ? e != e : e == v) return i;
  }
  return n;
}

template <class T>
void softmax_typed(const T* x, T* y, size_t n, bool log, double* e) {
#if WICK_SIMD_VECTOR
  if constexpr (!std::is_same_v<T, f16> || WICK_SIMD_F16) {
    const DF d;
    const hn::Half<DF> dh;
    const hn::Repartition<double, DF> dd;
    using VD = hn::Vec<decltype(dd)>;
    const size_t lanes = hn::Lanes(d), half = lanes / 2;
    const float ninf = -std::numeric_limits<float>::infinity();
    // Pass 1: the max, and whether a NaN is present (Max does not propagate NaN).
    VF vmax = hn::Set(d, ninf);
    bool nan = false;
    size_t i = 0;
    for (; i + lanes <= n; i += lanes) {
      const VF v = Io<T>::load(d, x + i);
      nan |= !hn::AllFalse(d, hn::IsNaN(v));
      vmax = hn::Max(vmax, v);
    }
    for (; i < n; ++i) {
      const float v = to_f32(x[i]);
      nan |= v != v;
      vmax = hn::Max(vmax, hn::Set(d, v));
    }
    if (nan) {
      for (size_t k = 0; k < n; ++k) y[k] = from_f32<T>(std::numeric_limits<float>::quiet_NaN());
      return;
    }
    const float m = hn::GetLane(hn::MaxOfLanes(d, vmax));
    const VD vm = hn::Set(dd, double(m));
    // f64 halves of a vector of elements (the padded last vector: -inf, whose
    // exponential adds nothing to the sum).
    auto halves = [&](size_t at, VD& lo, VD& hi) {
      VF v;
      if (at + lanes <= n) {
        v = Io<T>::load(d, x + at);
      } else {
        alignas(64) float xb[kMaxLanes];
        for (size_t k = 0; k < lanes; ++k) xb[k] = at + k < n ? to_f32(x[at + k]) : ninf;
        v = hn::LoadU(d, xb);
      }
      lo = hn::PromoteTo(dd, hn::LowerHalf(dh, v));
      hi = hn::PromoteTo(dd, hn::UpperHalf(dh, v));
    };
    // f32 vector of two f64 halves, stored (rounded once to T) at y + at.
    auto store = [&](size_t at, VD lo, VD hi) {
      const VF v = hn::Combine(d, hn::DemoteTo(dh, hi), hn::DemoteTo(dh, lo));
      if (at + lanes <= n) {
        Io<T>::store(d, v, y + at);
      } else {
        T yb[kMaxLanes];
        Io<T>::store(d, v, yb);
        std::memcpy(y + at, yb, (n - at) * sizeof(T));
      }
    };
    // Pass 2: e = exp(x - max) in f64 (x - max is exact there) into the scratch row,
    // and its sum. The scratch holds whole vectors: n rounded up to a vector.
    VD s0 = hn::Zero(dd), s1 = s0;
    for (i = 0; i < n; i += lanes) {
      VD lo, hi;
      halves(i, lo, hi);
      lo = VD{WICK_SLEEF_D(exp)(hn::Sub(lo, vm).raw)};
      hi = VD{WICK_SLEEF_D(exp)(hn::Sub(hi, vm).raw)};
      hn::StoreU(lo, dd, e + i);
      hn::StoreU(hi, dd, e + i + half);
      s0 = hn::Add(s0, lo);
      s1 = hn::Add(s1, hi);
    }
    const double sum = hn::GetLane(hn::SumOfLanes(dd, hn::Add(s0, s1)));
    // Pass 3, in f64, one rounding to f32 on the way out (and one more to f16/bf16).
    if (log) {
      const VD lse = hn::Set(dd, double(m) + std::log(sum));
      for (i = 0; i < n; i += lanes) {
        VD lo, hi;
        halves(i, lo, hi);
        store(i, hn::Sub(lo, lse), hn::Sub(hi, lse));
      }
      return;
    }
    const VD inv = hn::Set(dd, 1.0 / sum);
    for (i = 0; i < n; i += lanes)
      store(i, hn::Mul(hn::LoadU(dd, e + i), inv), hn::Mul(hn::LoadU(dd, e + i + half), inv));
    return;
  }
#endif
  scalar_softmax(x, y, n, log, e);
}

// ---- rms_norm / layer_norm rows, in f64 ----------------------------------------------
// Scalar forms (targets without a vector path, and the rare vectors of f64 results
// below f32's normal range on their way to f16 / bf16).
template <class T>
double scalar_moment(const T* x, size_t n, double center, bool square) {
  double s = 0;
  for (size_t i = 0; i < n; ++i) {
    const double v = double(to_f32(x[i])) - center;
    s += square ? v * v : v;
  }
  return s;
}

template <class T>
void scalar_scale(const T* x, T* y, size_t n, double center, double mul, const double* alpha,
                  const double* beta) {
  for (size_t i = 0; i < n; ++i) {
    double v = (double(to_f32(x[i])) - center) * mul;
    if (alpha) v *= alpha[i];
    if (beta) v += beta[i];
    y[i] = convert<T, double>(v);
  }
}

#if WICK_SIMD_VECTOR
using DD = hn::Repartition<double, DF>;
using VD = hn::Vec<DD>;

// The f64 halves of a vector of elements at x.
template <class T>
HWY_INLINE void load_halves(const T* x, VD& lo, VD& hi) {
  const DF d;
  const hn::Half<DF> dh;
  const DD dd;
  const VF v = Io<T>::load(d, x);
  lo = hn::PromoteTo(dd, hn::LowerHalf(dh, v));
  hi = hn::PromoteTo(dd, hn::UpperHalf(dh, v));
}

// f64 rounded to f32 toward zero, the last bit set when inexact ("round to odd"): its
// rounding to f16 / bf16 (11 / 8 bits, fewer than f32's 24 - 2) is the single
// rounding of the f64 value. Exact for |v| >= 2^-126 (f32 normals, and overflow to
// inf); a NaN becomes the quiet NaN of its sign, as f64_to_f16_bits / f64_to_bf16_bits.
HWY_INLINE VD round_to_odd_f32(VD v) {
  const DD dd;
  const hn::RebindToUnsigned<DD> du;
  const auto u = hn::BitCast(du, v);
  const auto low_bits = hn::Set(du, (uint64_t(1) << 29) - 1);  // the 52 - 23 bits f32 drops
  // (dropped bits + 2^29 - 1) carries into bit 29 exactly when a dropped bit is set
  const auto sticky = hn::And(hn::Add(hn::And(u, low_bits), low_bits), hn::Set(du, uint64_t(1) << 29));
  const VD r = hn::BitCast(dd, hn::Or(hn::AndNot(low_bits, u), sticky));
  return hn::IfThenElse(hn::IsNaN(v), hn::CopySign(hn::Set(dd, std::numeric_limits<double>::quiet_NaN()), v),
                        r);
}

// Stores the f64 values lo, hi (one vector of elements) at y rounded once to T;
// `valid` elements of it.
template <class T>
HWY_INLINE void store_rounded(VD lo, VD hi, T* y, size_t valid) {
  const DF d;
  const hn::Half<DF> dh;
  const DD dd;
  const size_t lanes = hn::Lanes(d);
  VF v;
  if constexpr (std::is_same_v<T, float>) {
    v = hn::Combine(d, hn::DemoteTo(dh, hi), hn::DemoteTo(dh, lo));
  } else {
    // Nonzero values below f32's normals: f32 subnormals would round a second time.
    const VD tiny = hn::Set(dd, 1.1754943508222875e-38);  // 2^-126
    const auto below = hn::Or(hn::And(hn::Lt(hn::Abs(lo), tiny), hn::Ne(lo, hn::Zero(dd))),
                              hn::And(hn::Lt(hn::Abs(hi), tiny), hn::Ne(hi, hn::Zero(dd))));
    if (!hn::AllFalse(dd, below)) {
      alignas(64) double buf[kMaxLanes];
      hn::Store(lo, dd, buf);
      hn::Store(hi, dd, buf + lanes / 2);
      for (size_t k = 0; k < valid; ++k) y[k] = convert<T, double>(buf[k]);
      return;
    }
    v = hn::Combine(d, hn::DemoteTo(dh, round_to_odd_f32(hi)), hn::DemoteTo(dh, round_to_odd_f32(lo)));
  }
  if (valid == lanes) {
    Io<T>::store(d, v, y);
  } else {
    T yb[kMaxLanes];
    Io<T>::store(d, v, yb);
    std::memcpy(y, yb, valid * sizeof(T));
  }
}
#endif  // WICK_SIMD_VECTOR

template <class T>
double moment_typed(const T* x, size_t n, double center, bool square) {
#if WICK_SIMD_VECTOR
  if constexpr (!std::is_same_v<T, f16> || WICK_SIMD_F16) {
    const DD dd;
    const size_t lanes = hn::Lanes(DF());
    const VD c = hn::Set(dd, center);
    VD s0 = hn::Zero(dd), s1 = s0, s2 = s0, s3 = s0;
    size_t i = 0;
    for (; i + 2 * lanes <= n; i += 2 * lanes) {
      VD a, b, e, f;
      load_halves(x + i, a, b);
      load_halves(x + i + lanes, e, f);
      a = hn::Sub(a, c), b = hn::Sub(b, c), e = hn::Sub(e, c), f = hn::Sub(f, c);
      if (square) {
        s0 = hn::MulAdd(a, a, s0), s1 = hn::MulAdd(b, b, s1), s2 = hn::MulAdd(e, e, s2),
        s3 = hn::MulAdd(f, f, s3);
      } else {
        s0 = hn::Add(s0, a), s1 = hn::Add(s1, b), s2 = hn::Add(s2, e), s3 = hn::Add(s3, f);
      }
    }
    const double v = hn::GetLane(hn::SumOfLanes(dd, hn::Add(hn::Add(s0, s1), hn::Add(s2, s3))));
    return v + scalar_moment(x + i, n - i, center, square);
  }
#endif
  return scalar_moment(x, n, center, square);
}

template <class T>
void scale_typed(const T* x, T* y, size_t n, double center, double mul, const double* alpha,
                 const double* beta) {
#if WICK_SIMD_VECTOR
  if constexpr (!std::is_same_v<T, f16> || WICK_SIMD_F16) {
    const DD dd;
    const size_t lanes = hn::Lanes(DF()), half = lanes / 2;
    const VD c = hn::Set(dd, center), m = hn::Set(dd, mul);
    for (size_t i = 0; i < n; i += lanes) {
      const size_t valid = std::min(lanes, n - i);
      VD lo, hi;
      // The last partial vector through padded copies (zeros; ones for alpha).
      alignas(64) double ab[kMaxLanes], bb[kMaxLanes];
      const double *a = alpha ? alpha + i : nullptr, *b = beta ? beta + i : nullptr;
      if (valid == lanes) {
        load_halves(x + i, lo, hi);
      } else {
        T xb[kMaxLanes] = {};
        std::memcpy(xb, x + i, valid * sizeof(T));
        load_halves(xb, lo, hi);
        for (size_t k = 0; k < lanes; ++k) {
          ab[k] = alpha && k < valid ? alpha[i + k] : 1.0;
          bb[k] = beta && k < valid ? beta[i + k] : 0.0;
        }
        a = alpha ? ab : nullptr, b = beta ? bb : nullptr;
      }
      // ((x - center) * mul) * alpha + beta, each step in f64 as the scalar form
      lo = hn::Mul(hn::Sub(lo, c), m);
      hi = hn::Mul(hn::Sub(hi, c), m);
      if (a) lo = hn::Mul(lo, hn::LoadU(dd, a)), hi = hn::Mul(hi, hn::LoadU(dd, a + half));
      if (b) lo = hn::Add(lo, hn::LoadU(dd, b)), hi = hn::Add(hi, hn::LoadU(dd, b + half));
      store_rounded(lo, hi, y + i, valid);
    }
    return;
  }
#endif
  scalar_scale(x, y, n, center, mul, alpha, beta);
}

// y = a + b in f32, rounded once to T (add's semantics).
template <class T>
void add_typed(const T* a, const T* b, T* y, size_t n) {
#if WICK_SIMD_VECTOR
  if constexpr (!std::is_same_v<T, f16> || WICK_SIMD_F16) {
    const DF d;
    const size_t lanes = hn::Lanes(d);
    size_t i = 0;
    for (; i + lanes <= n; i += lanes)
      Io<T>::store(d, hn::Add(Io<T>::load(d, a + i), Io<T>::load(d, b + i)), y + i);
    if (i < n) {
      T ab[kMaxLanes] = {}, bb[kMaxLanes] = {}, yb[kMaxLanes];
      std::memcpy(ab, a + i, (n - i) * sizeof(T));
      std::memcpy(bb, b + i, (n - i) * sizeof(T));
      Io<T>::store(d, hn::Add(Io<T>::load(d, ab), Io<T>::load(d, bb)), yb);
      std::memcpy(y + i, yb, (n - i) * sizeof(T));
    }
    return;
  }
#endif
  for (size_t i = 0; i < n; ++i) y[i] = from_f32<T>(to_f32(a[i]) + to_f32(b[i]));
}

// acc[i] += the sum over r < rows of x[r * stride + i], i < n, in f32: four rows a pass
// (one load and store of acc per four rows), ((r0 + r1) + (r2 + r3)) + acc, then the
// rows left one at a time.
template <class T>
void sum_rows_typed(const T* x, size_t stride, size_t rows, float* acc, size_t n) {
  size_t r = 0;
#if WICK_SIMD_VECTOR
  if constexpr (!std::is_same_v<T, f16> || WICK_SIMD_F16) {
    const DF d;
    const size_t lanes = hn::Lanes(d);
    const size_t nv = n / lanes * lanes;
    for (; r + 4 <= rows; r += 4) {
      const T* r0 = x + r * stride;
      const T *r1 = r0 + stride, *r2 = r1 + stride, *r3 = r2 + stride;
      for (size_t i = 0; i < nv; i += lanes) {
        const VF s = hn::Add(hn::Add(Io<T>::load(d, r0 + i), Io<T>::load(d, r1 + i)),
                             hn::Add(Io<T>::load(d, r2 + i), Io<T>::load(d, r3 + i)));
        hn::StoreU(hn::Add(hn::LoadU(d, acc + i), s), d, acc + i);
      }
      for (size_t i = nv; i < n; ++i)
        acc[i] += (to_f32(r0[i]) + to_f32(r1[i])) + (to_f32(r2[i]) + to_f32(r3[i]));
    }
    for (; r < rows; ++r) {
      const T* r0 = x + r * stride;
      for (size_t i = 0; i < nv; i += lanes)
        hn::StoreU(hn::Add(hn::LoadU(d, acc + i), Io<T>::load(d, r0 + i)), d, acc + i);
      for (size_t i = nv; i < n; ++i) acc[i] += to_f32(r0[i]);
    }
    return;
  }
#endif
  for (; r + 4 <= rows; r += 4) {
    const T* r0 = x + r * stride;
    const T *r1 = r0 + stride, *r2 = r1 + stride, *r3 = r2 + stride;
    for (size_t i = 0; i < n; ++i)
      acc[i] += (to_f32(r0[i]) + to_f32(r1[i])) + (to_f32(r2[i]) + to_f32(r3[i]));
  }
  for (; r < rows; ++r)
    for (size_t i = 0; i < n; ++i) acc[i] += to_f32(x[r * stride + i]);
}

// ---- the exported kernels (one per entry point of simd.h) ------------------------------
void WidenKernel(DType half, const uint16_t* x, float* y, size_t n) {
  if (half == DType::BF16) {
    const bf16* xs = reinterpret_cast<const bf16*>(x);
#if WICK_SIMD_VECTOR
    map(xs, y, n, [](DF, VF v) { return v; });
#else
    for (size_t i = 0; i < n; ++i) y[i] = float(xs[i]);
#endif
    return;
  }
  const f16* xs = reinterpret_cast<const f16*>(x);
#if WICK_SIMD_F16
  map(xs, y, n, [](DF, VF v) { return v; });
#else
  for (size_t i = 0; i < n; ++i) y[i] = float(xs[i]);
#endif
}

void NarrowKernel(DType half, const float* x, uint16_t* y, size_t n) {
  if (half == DType::BF16) {
    bf16* ys = reinterpret_cast<bf16*>(y);
#if WICK_SIMD_VECTOR
    map(x, ys, n, [](DF, VF v) { return v; });
#else
    for (size_t i = 0; i < n; ++i) ys[i] = bf16(x[i]);
#endif
    return;
  }
  f16* ys = reinterpret_cast<f16*>(y);
#if WICK_SIMD_F16
  map(x, ys, n, [](DF, VF v) { return v; });
#else
  for (size_t i = 0; i < n; ++i) ys[i] = f16(x[i]);
#endif
}

void UnaryKernel(UnaryOp op, DType dt, const void* x, void* y, size_t n) {
  switch (dt) {
    case DType::F32:
      return unary_typed(op, static_cast<const float*>(x), static_cast<float*>(y), n);
    case DType::BF16:
      return unary_typed(op, static_cast<const bf16*>(x), static_cast<bf16*>(y), n);
    default:
      return unary_typed(op, static_cast<const f16*>(x), static_cast<f16*>(y), n);
  }
}

float SumKernel(DType dt, const void* x, size_t n) {
  switch (dt) {
    case DType::F32:
      return sum_typed(static_cast<const float*>(x), n);
    case DType::BF16:
      return sum_typed(static_cast<const bf16*>(x), n);
    default:
      return sum_typed(static_cast<const f16*>(x), n);
  }
}

float ExtremeKernel(DType dt, const void* x, size_t n, bool is_max) {
  switch (dt) {
    case DType::F32:
      return is_max ? extreme_typed<true>(static_cast<const float*>(x), n)
                    : extreme_typed<false>(static_cast<const float*>(x), n);
    case DType::BF16:
      return is_max ? extreme_typed<true>(static_cast<const bf16*>(x), n)
                    : extreme_typed<false>(static_cast<const bf16*>(x), n);
    default:
      return is_max ? extreme_typed<true>(static_cast<const f16*>(x), n)
                    : extreme_typed<false>(static_cast<const f16*>(x), n);
  }
}

size_t FindKernel(DType dt, const void* x, size_t n, float v) {
  switch (dt) {
    case DType::F32:
      return find_typed(static_cast<const float*>(x), n, v);
    case DType::BF16:
      return find_typed(static_cast<const bf16*>(x), n, v);
    default:
      return find_typed(static_cast<const f16*>(x), n, v);
  }
}

void SoftmaxKernel(DType dt, const void* x, void* y, size_t n, bool log, double* scratch) {
  switch (dt) {
    case DType::F32:
      return softmax_typed(static_cast<const float*>(x), static_cast<float*>(y), n, log, scratch);
    case DType::BF16:
      return softmax_typed(static_cast<const bf16*>(x), static_cast<bf16*>(y), n, log, scratch);
    default:
      return softmax_typed(static_cast<const f16*>(x), static_cast<f16*>(y), n, log, scratch);
  }
}

double MomentKernel(DType dt, const void* x, size_t n, double center, bool square) {
  switch (dt) {
    case DType::F32:
      return moment_typed(static_cast<const float*>(x), n, center, square);
    case DType::BF16:
      return moment_typed(static_cast<const bf16*>(x), n, center, square);
    default:
      return moment_typed(static_cast<const f16*>(x), n, center, square);
  }
}

void ScaleKernel(DType dt, const void* x, void* y, size_t n, double center, double mul, const double* alpha,
                 const double* beta) {
  switch (dt) {
    case DType::F32:
      return scale_typed(static_cast<const float*>(x), static_cast<float*>(y), n, center, mul, alpha, beta);
    case DType::BF16:
      return scale_typed(static_cast<const bf16*>(x), static_cast<bf16*>(y), n, center, mul, alpha, beta);
    default:
      return scale_typed(static_cast<const f16*>(x), static_cast<f16*>(y), n, center, mul, alpha, beta);
  }
}

void SumRowsKernel(DType dt, const void* x, size_t stride, size_t rows, float* acc, size_t n) {
  switch (dt) {
    case DType::F32:
      return sum_rows_typed(static_cast<const float*>(x), stride, rows, acc, n);
    case DType::BF16:
      return sum_rows_typed(static_cast<const bf16*>(x), stride, rows, acc, n);
    default:
      return sum_rows_typed(static_cast<const f16*>(x), stride, rows, acc, n);
  }
}

void AddKernel(DType dt, const void* a, const void* b, void* y, size_t n) {
  switch (dt) {
    case DType::F32:
      return add_typed(static_cast<const float*>(a), static_cast<const float*>(b), static_cast<float*>(y), n);
    case DType::BF16:
      return add_typed(static_cast<const bf16*>(a), static_cast<const bf16*>(b), static_cast<bf16*>(y), n);
    default:
      return add_typed(static_cast<const f16*>(a), static_cast<const f16*>(b), static_cast<f16*>(y), n);
  }
}

template <class U>
void fill_typed(U v, U* y, size_t n) {
  size_t i = 0;
#if WICK_SIMD_VECTOR
  const hn::ScalableTag<U> d;
  const size_t lanes = hn::Lanes(d);
  const auto vv = hn::Set(d, v);
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    hn::StoreU(vv, d, y + i);
    hn::StoreU(vv, d, y + i + lanes);
    hn::StoreU(vv, d, y + i + 2 * lanes);
    hn::StoreU(vv, d, y + i + 3 * lanes);
  }
#endif
  for (; i < n; ++i) y[i] = v;
}

void FillKernel(size_t elem_bytes, uint64_t bits, void* y, size_t n) {
  switch (elem_bytes) {
    case 1:
      return fill_typed(uint8_t(bits), static_cast<uint8_t*>(y), n);
    case 2:
      return fill_typed(uint16_t(bits), static_cast<uint16_t*>(y), n);
    case 4:
      return fill_typed(uint32_t(bits), static_cast<uint32_t*>(y), n);
    default:
      return fill_typed(uint64_t(bits), static_cast<uint64_t*>(y), n);
  }
}

}  // namespace wick::cpu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace wick::cpu::simd {

HWY_EXPORT(WidenKernel);
HWY_EXPORT(NarrowKernel);
HWY_EXPORT(UnaryKernel);
HWY_EXPORT(SumKernel);
HWY_EXPORT(FillKernel);
HWY_EXPORT(SumRowsKernel);
HWY_EXPORT(SoftmaxKernel);
HWY_EXPORT(ExtremeKernel);
HWY_EXPORT(FindKernel);
HWY_EXPORT(MomentKernel);
HWY_EXPORT(ScaleKernel);
HWY_EXPORT(AddKernel);

void widen(DType half, const uint16_t* x, float* y, size_t n) {
  HWY_DYNAMIC_DISPATCH(WidenKernel)(half, x, y, n);
}
void narrow(DType half, const float* x, uint16_t* y, size_t n) {
  HWY_DYNAMIC_DISPATCH(NarrowKernel)(half, x, y, n);
}

bool has_unary(UnaryOp op, DType dt) {
  if (dt != DType::F32 && dt != DType::F16 && dt != DType::BF16) return false;
  switch (op) {
    case UnaryOp::Exp:
    case UnaryOp::Log:
    case UnaryOp::Sin:
    case UnaryOp::Cos:
    case UnaryOp::Tanh:
    case UnaryOp::Erf:
    case UnaryOp::Silu:
    case UnaryOp::Sigmoid:
    case UnaryOp::Gelu:
    case UnaryOp::GeluErf:
      return true;
    default:
      return false;
  }
}

void unary_run(UnaryOp op, DType dt, const void* x, void* y, size_t n) {
  HWY_DYNAMIC_DISPATCH(UnaryKernel)(op, dt, x, y, n);
}

float sum_run(DType dt, const void* x, size_t n) { return HWY_DYNAMIC_DISPATCH(SumKernel)(dt, x, n); }

void sum_rows(DType dt, const void* x, size_t stride, size_t rows, float* acc, size_t n) {
  HWY_DYNAMIC_DISPATCH(SumRowsKernel)(dt, x, stride, rows, acc, n);
}

float extreme_run(DType dt, const void* x, size_t n, bool is_max) {
  return HWY_DYNAMIC_DISPATCH(ExtremeKernel)(dt, x, n, is_max);
}

size_t find_run(DType dt, const void* x, size_t n, float v) {
  return HWY_DYNAMIC_DISPATCH(FindKernel)(dt, x, n, v);
}

void softmax_row(DType dt, const void* x, void* y, size_t n, bool log, double* scratch) {
  HWY_DYNAMIC_DISPATCH(SoftmaxKernel)(dt, x, y, n, log, scratch);
}

double moment_row(DType dt, const void* x, size_t n, double center, bool square) {
  return HWY_DYNAMIC_DISPATCH(MomentKernel)(dt, x, n, center, square);
}

void scale_row(DType dt, const void* x, void* y, size_t n, double center, double mul, const double* alpha,
               const double* beta) {
  HWY_DYNAMIC_DISPATCH(ScaleKernel)(dt, x, y, n, center, mul, alpha, beta);
}

void fill(size_t elem_bytes, uint64_t bits, void* y, size_t n) {
  HWY_DYNAMIC_DISPATCH(FillKernel)(elem_bytes, bits, y, n);
}

void add_row(DType dt, const void* a, const void* b, void* y, size_t n) {
  HWY_DYNAMIC_DISPATCH(AddKernel)(dt, a, b, y, n);
}

}  // namespace wick::cpu::simd
#endif  // HWY_ONCE
