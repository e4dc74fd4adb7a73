// QUANTIZED, module quantized_mmvqs: the split mat-vec of Q4_0, Q8_0, Q4_K, Q6_K.
//   quantize_q8_1s_p{P}_{f32|f16|bf16}(m, k, k_pad, x, qs, ds): the Q8_1 values of
//       quantize_q8_1 in the split layout: qs (m, k_pad) int8 with each group of 32
//       or 256 columns permuted by P (perm_pos) so that every lane of an mmvqs kernel
//       reads its activation bytes as whole 16-byte words, adjacent lanes adjacent
//       words; ds (m, k_pad / 32) words of (f16 d, f16 s) per 32 columns.
//   mmvqs_{type}_b{B}(n, k, w, w_row_bytes, qs, ds, k_pad, out): out (B, n) f32 = B
//       split activation rows (permuted by qplan::split_perm(type)) times n weight rows.
#include "mmvqs.cuh"
#include "q8_1.cuh"

#define QUANTIZE_S_KERNEL(T, TS, P)                                                                \
  WICK_KERNEL quantize_q8_1s_p##P##_##TS(size_t m, size_t k, size_t k_pad, const T* x, int8_t* qs, \
                                         uint32_t* ds) {                                           \
    wk::q::quantize_q8_1s<P>(m, k, k_pad, x, qs, ds);                                              \
  }
WICK_Q_DTYPES(QUANTIZE_S_KERNEL, 0)
WICK_Q_DTYPES(QUANTIZE_S_KERNEL, 1)
WICK_Q_DTYPES(QUANTIZE_S_KERNEL, 2)
WICK_Q_DTYPES(QUANTIZE_S_KERNEL, 3)

#define MMVQS_KERNEL(Q, QS, B)                                                                        \
  WICK_KERNEL mmvqs_##QS##_b##B(int n, int k, const uint8_t* w, size_t w_row_bytes, const int8_t* qs, \
                                const uint32_t* ds, size_t k_pad, float* out) {                       \
    wk::q::mmvqs<wk::q::Q, B>(n, k, w, w_row_bytes, qs, ds, k_pad, out);                              \
  }
#define MMVQS_KERNELS(Q, QS) WICK_Q_BATCHES(MMVQS_KERNEL, Q, QS)
WICK_Q_SPLIT_TYPES(MMVQS_KERNELS)

// Every type with a split permutation has its kernels here, and each permutation its
// quantizers above.
#define SPLIT_COUNT(Q, QS) +(wk::q::qplan::split_perm(wk::q::Q) >= 0 ? 1 : 0)
#define SPLIT_PERM_KNOWN(Q, QS) \
  &&wk::q::qplan::split_perm(wk::q::Q) >= 0 && wk::q::qplan::split_perm(wk::q::Q) < wk::q::qplan::kSplitPerms
#define ONE(Q, QS) +1
static_assert(0 WICK_Q_QUANTIZED_TYPES(SPLIT_COUNT) == 0 WICK_Q_SPLIT_TYPES(ONE),
              "mmvqs: a kernel a split type");
static_assert(wk::q::qplan::kSplitPerms == 4 WICK_Q_SPLIT_TYPES(SPLIT_PERM_KNOWN),
              "mmvqs: quantizers p0..p3");
