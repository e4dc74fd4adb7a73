// REDUCE family: {sum,min,max,argmin,argmax}_{dtype} over any set of dims, and
// cumsum_{dtype}. Semantics are those of src/backend/cpu/reduce.cpp:
//  - sum accumulates f16/bf16/f32 in f32, f64 in f64, integers wrap in their
//    unsigned twin;
//  - min/max propagate NaN; argmin/argmax give the first index of the extreme, or
//    of the first NaN; the index is row-major over the reduced dims (u32).
//
// reduce kernel ABI: (n_out, e, nk, nr, info, x, out, tpr)
//   info = kept dims[nk] | kept strides[nk] | reduced dims[nr] | reduced strides[nr]
//   (elements; x pre-offset). Output o reduces the e elements of reduced position
//   space at the kept offset of o. `tpr` threads (1, a power of two <= warpSize,
//   or blockDim.x) cooperate on one output; a contiguous reduced run (nr == 1,
//   stride 1) is read with 16-byte vectors when aligned.
// cumsum kernel ABI: (outer, len, inner, x, out, tpr), x contiguous [outer, len,
//   inner]; tpr: threads a row when inner == 1 (see scan_rows).
#include "reduce_rows.cuh"

// {op}_{dtype} for every row of WICK_REDUCE_OPS (reducer wk::R{Op}), and cumsum_{dtype}; every dtype.
#define REDUCE_OP(T, SFX, OP, NAME)                                                                      \
  WICK_KERNEL NAME##_##SFX(size_t n_out, size_t e, size_t nk, size_t nr, const size_t* info, const T* x, \
                           typename wk::R##OP<T>::Out* out, size_t tpr) {                                \
    wk::reduce_rows<wk::R##OP<T>, T>(n_out, e, int(nk), int(nr), info, x, out, int(tpr));                \
  }
#define REDUCE_ROW(OP, NAME) WK_ALL_DTYPES(REDUCE_OP, OP, NAME)
WICK_REDUCE_OPS(REDUCE_ROW)

#define CUMSUM_OP(T, SFX, ...)                                                                       \
  WICK_KERNEL cumsum_##SFX(size_t outer, size_t len, size_t inner, const T* x, T* out, size_t tpr) { \
    wk::cumsum<T>(outer, len, inner, x, out, int(tpr));                                              \
  }
WK_ALL_DTYPES(CUMSUM_OP, )
