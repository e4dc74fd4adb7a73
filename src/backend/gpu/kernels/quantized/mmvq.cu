// QUANTIZED, module quantized_mmvq: the generic mat-vec, every quantized type.
//   quantize_q8_1_{f32|f16|bf16}(m, k, k_pad, x, out): rows of x (m, k) to Q8_1
//       rows of k_pad elements (k rounded up to qplan::kRowPadding; the padding
//       quantizes zeros), the reference algorithm of quantize_row_q8_1.
//   mmvq_{type}_b{B}(n, k, row_threads, w, w_row_bytes, act, act_row_bytes, out):
//       out (B, n) f32 = B Q8_1 activation rows times n weight rows.
#include "mmvq.cuh"
#include "q8_1.cuh"

#define QUANTIZE_KERNEL(T, TS, _)                                                              \
  WICK_KERNEL quantize_q8_1_##TS(size_t m, size_t k, size_t k_pad, const T* x, uint8_t* out) { \
    wk::q::quantize_q8_1(m, k, k_pad, x, out);                                                 \
  }
WICK_Q_DTYPES(QUANTIZE_KERNEL, _)

#define MMVQ_KERNEL(Q, QS, B)                                                                       \
  WICK_KERNEL mmvq_##QS##_b##B(int n, int k, int row_threads, const uint8_t* w, size_t w_row_bytes, \
                               const uint8_t* act, size_t act_row_bytes, float* out) {              \
    wk::q::mmvq<wk::q::Q, B>(n, k, row_threads, w, w_row_bytes, act, act_row_bytes, out);           \
  }
#define MMVQ_KERNELS(Q, QS) WICK_Q_BATCHES(MMVQ_KERNEL, Q, QS)
WICK_Q_QUANTIZED_TYPES(MMVQ_KERNELS)
