// CAST family: cast_{src}_{dst} for all 64 pairs of the 8 dtypes (identity pairs
// are plain copies). Rules of include/wick/dtype_convert.h: float -> int
// truncates toward zero, NaN -> 0, saturates; int -> int wraps; any -> f16/bf16
// through the widest float with one rounding.
#include "functors.cuh"

#define CAST_OP(D, DS, S, SS)                                                                             \
  WICK_KERNEL cast_##SS##_##DS(size_t numel, size_t num_dims, const size_t* info, const S* inp, D* out) { \
    wk::map_n(numel, num_dims, info, out, wk::Cast<D, S>{}, inp);                                         \
  }
#define CAST_FROM(S, SS) WK_ALL_DTYPES(CAST_OP, S, SS)

CAST_FROM(uint8_t, u8)
CAST_FROM(uint32_t, u32)
CAST_FROM(int32_t, i32)
CAST_FROM(int64_t, i64)
CAST_FROM(wk::f16s, f16)
CAST_FROM(wk::bf16s, bf16)
CAST_FROM(float, f32)
CAST_FROM(double, f64)
