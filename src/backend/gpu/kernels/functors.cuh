// Kernel-side glue for the elementwise functors of src/backend/common/functors.h,
// the very structs the CPU backend runs (so the GPU computes the same formulas in
// the same compute type: float for f16/bf16/f32, double for f64, integers in
// themselves), plus the cast rules of include/wick/dtype_convert.h.
#pragma once

#include "backend/common/functors.h"
#include "common.cuh"

namespace wk {

// Lifts a compute-type functor to storage values: load, compute, round once.
template <class T, class F>
struct OnStorage {
  F f;
  __device__ __forceinline__ T operator()(T x) const { return from_c<T>(f(to_c(x))); }
};

template <class T, class F>
struct BinOnStorage {
  F f;
  __device__ __forceinline__ T operator()(T a, T b) const { return from_c<T>(f(to_c(a), to_c(b))); }
};
template <class T, class F>
struct CmpOnStorage {
  F f;
  __device__ __forceinline__ uint8_t operator()(T a, T b) const { return uint8_t(f(to_c(a), to_c(b))); }
};

// ---- casts (the rules of include/wick/dtype_convert.h) ------------------------------
template <class To, class From>
__device__ __forceinline__ To convert(From x) {
  if constexpr (std::is_same<To, From>::value) {
    return x;
  } else if constexpr (is_half_v<To>) {
    // any -> f16/bf16 through the widest float, one rounding
    if constexpr (std::is_same<From, double>::value || std::is_same<From, int64_t>::value) {
      if constexpr (std::is_same<To, f16s>::value)
        return f16s{f64_to_small<5, 10>(double(x))};
      else
        return bf16s{f64_to_small<8, 7>(double(x))};
    } else {
      return from_c<To>(float(to_c(x)));
    }
  } else if constexpr (is_half_v<From>) {
    return convert<To, float>(to_c(x));
  } else if constexpr (is_floating_v<To>) {
    return To(x);
  } else if constexpr (is_floating_v<From>) {
    return ::wick::fn::float_to_int<To>(double(x));
  } else {
    return static_cast<To>(x);
  }
}

template <class To, class From>
struct Cast {
  __device__ __forceinline__ To operator()(From x) const { return convert<To, From>(x); }
};

}  // namespace wk
