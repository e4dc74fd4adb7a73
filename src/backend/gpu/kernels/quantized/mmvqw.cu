// QUANTIZED, module quantized_mmvqw: mmvqw_{q4_0|q8_0|q4_K|q6_K}_{f32|f16|bf16}(n, k,
// k_pad, w, x, out): one row of x times n weight rows in one launch (the batch-1
// default where the type has a wide plan, k is a multiple of its round width and
// rows are whole 16-byte words); the same with a fused row (_addnorm, _swiglu).
#include "mmvqw.cuh"

// Up to kWideThreads threads (16 teams), one block per multiprocessor (up to 128
// registers on NVIDIA). x's quads in flight a thread: 1 where one pass of a full block
// covers the row, else 4.
template <int Q, class X>
__device__ __forceinline__ void run_wide(int n, int k, int k_pad, const uint8_t* w, const X& x, float* out) {
  if (k_pad <= wk::q::qplan::kWideOnePass) {
    wk::q::mmvqw<Q, 1>(n, k, k_pad, w, x, out);
  } else {
    wk::q::mmvqw<Q, 4>(n, k, k_pad, w, x, out);
  }
}
#define WIDE_KERNEL extern "C" __global__ void __launch_bounds__(wk::q::qplan::kWideThreads, 1)
#define MMVQW_KERNEL(T, TS, Q, QS)                                                                   \
  WIDE_KERNEL mmvqw_##QS##_##TS(int n, int k, int k_pad, const uint8_t* w, const T* x, float* out) { \
    run_wide<wk::q::Q>(n, k, k_pad, w, wk::q::RowX<T>{x}, out);                                      \
  }
#define MMVQW_KERNELS(Q, QS) WICK_Q_DTYPES(MMVQW_KERNEL, Q, QS)
WICK_Q_SPLIT_TYPES(MMVQW_KERNELS)

// The fused rows (f32): mmvqw_{type}_addnorm(n, k, k_pad, w, x, r, alpha, eps, sum, out)
// and mmvqw_{type}_swiglu(n, k, k_pad, w, x, r, out).
#define MMVQW_FUSED(Q, QS)                                                                                   \
  WIDE_KERNEL mmvqw_##QS##_addnorm(int n, int k, int k_pad, const uint8_t* w, const float* x,                \
                                   const float* r, const float* alpha, float eps, float* sum, float* out) {  \
    run_wide<wk::q::Q>(n, k, k_pad, w, wk::q::RowAddNorm{x, r, alpha, eps, sum}, out);                       \
  }                                                                                                          \
  WIDE_KERNEL mmvqw_##QS##_swiglu(int n, int k, int k_pad, const uint8_t* w, const float* x, const float* r, \
                                  float* out) {                                                              \
    run_wide<wk::q::Q>(n, k, k_pad, w, wk::q::RowSwiglu{x, r}, out);                                         \
  }
WICK_Q_SPLIT_TYPES(MMVQW_FUSED)

#define WIDE_COUNT(Q, QS) +(wk::q::qplan::wide_shape(wk::q::Q).round_cols > 0 ? 1 : 0)
#define ONE(Q, QS) +1
static_assert(0 WICK_Q_QUANTIZED_TYPES(WIDE_COUNT) == 0 WICK_Q_SPLIT_TYPES(ONE),
              "mmvqw: a kernel a wide type");
