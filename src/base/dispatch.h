// The one dtype-dispatch helper: calls `f.template operator()<T>()` with the C++
// type of `dt`, restricted to a subset; a dtype outside the subset throws
// Error(UnsupportedDType) naming the op.
//
//   dispatch_dtype<kFloatDTypes>(dt, "powf", [&]<class T>() { ... });
#pragma once

#include <string>

#include "wick/dtype.h"
#include "wick/error.h"

namespace wick {

// Subsets as bit masks over DType.
using DTypeSet = uint32_t;
constexpr DTypeSet dtype_bit(DType d) { return 1u << unsigned(d); }
inline constexpr DTypeSet kAllDTypeSet = 0xffu;
inline constexpr DTypeSet kFloatDTypes =
    dtype_bit(DType::F16) | dtype_bit(DType::BF16) | dtype_bit(DType::F32) | dtype_bit(DType::F64);
inline constexpr DTypeSet kIntDTypes =
    dtype_bit(DType::U8) | dtype_bit(DType::U32) | dtype_bit(DType::I32) | dtype_bit(DType::I64);
inline constexpr DTypeSet kIndexDTypes = kIntDTypes;
inline constexpr DTypeSet kMatmulDTypes = kFloatDTypes;

[[noreturn]] void throw_unsupported_dtype(const char* op, DType dt);

template <DTypeSet Set = kAllDTypeSet, class F>
decltype(auto) dispatch_dtype(DType dt, const char* op, F&& f) {
#define WICK_DISPATCH_CASE(D)                                                         \
  case D:                                                                             \
    if constexpr ((Set & dtype_bit(D)) != 0) return f.template operator()<type_of<D>>(); \
    break;
  switch (dt) {
    WICK_DISPATCH_CASE(DType::U8)
    WICK_DISPATCH_CASE(DType::U32)
    WICK_DISPATCH_CASE(DType::I32)
    WICK_DISPATCH_CASE(DType::I64)
    WICK_DISPATCH_CASE(DType::F16)
    WICK_DISPATCH_CASE(DType::BF16)
    WICK_DISPATCH_CASE(DType::F32)
    WICK_DISPATCH_CASE(DType::F64)
  }
#undef WICK_DISPATCH_CASE
  throw_unsupported_dtype(op, dt);
}

// Compute type of an element type: f16/bf16 compute in float, others in themselves.
template <class T> struct ComputeOf { using type = T; };
template <> struct ComputeOf<f16> { using type = float; };
template <> struct ComputeOf<bf16> { using type = float; };
template <class T> using compute_t = typename ComputeOf<T>::type;

}  // namespace wick
