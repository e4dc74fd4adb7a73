// BINARY family: b{op}_{dtype} (add, sub, mul, div, maximum, minimum) and the
// comparisons {eq,ne,lt,le,gt,ge}_{dtype} (u8 output), every dtype.
// info = dims | lhs strides | rhs strides, or null when both are contiguous;
// broadcasting arrives as stride 0.
#include "functors.cuh"

#define BINARY_OP(NAME, FUNC, T, SFX)                                                                        \
  WICK_KERNEL b##NAME##_##SFX(size_t numel, size_t num_dims, const size_t* info, const T* lhs, const T* rhs, \
                              T* out) {                                                                      \
    wk::map_n(numel, num_dims, info, out, wk::BinOnStorage<T, ::wick::fn::FUNC>{}, lhs, rhs);                \
  }
#define CMP_OP(NAME, FUNC, T, SFX)                                                                        \
  WICK_KERNEL NAME##_##SFX(size_t numel, size_t num_dims, const size_t* info, const T* lhs, const T* rhs, \
                           uint8_t* out) {                                                                \
    wk::map_n(numel, num_dims, info, out, wk::CmpOnStorage<T, ::wick::fn::FUNC>{}, lhs, rhs);             \
  }
#define BINARY_ALL(T, SFX)            \
  BINARY_OP(add, Add, T, SFX)         \
  BINARY_OP(sub, Sub, T, SFX)         \
  BINARY_OP(mul, Mul, T, SFX)         \
  BINARY_OP(div, Div, T, SFX)         \
  BINARY_OP(maximum, Maximum, T, SFX) \
  BINARY_OP(minimum, Minimum, T, SFX) \
  CMP_OP(eq, Eq, T, SFX)              \
  CMP_OP(ne, Ne, T, SFX)              \
  CMP_OP(lt, Lt, T, SFX)              \
  CMP_OP(le, Le, T, SFX)              \
  CMP_OP(gt, Gt, T, SFX)              \
  CMP_OP(ge, Ge, T, SFX)

BINARY_ALL(uint8_t, u8)
BINARY_ALL(uint32_t, u32)
BINARY_ALL(int32_t, i32)
BINARY_ALL(int64_t, i64)
BINARY_ALL(wk::f16s, f16)
BINARY_ALL(wk::bf16s, bf16)
BINARY_ALL(float, f32)
BINARY_ALL(double, f64)
