// Per-type row kernels behind wick::quant::{quantize_row, dequantize_row, vec_dot}.
// Internal to src/quant: callers pass whole blocks (n a multiple of the block size).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "backend/cpu/isa.h"
#include "base/ggml_blocks.h"
#include "wick/dtype.h"
#include "wick/quant.h"

namespace wick::quant {

inline float h2f(uint16_t h) { return f16_bits_to_f32(h); }
inline uint16_t f2h(float f) { return f32_to_f16_bits(f); }

// ggml's nearest_int: round half to even through the 1.5*2^23 trick (|x| <= 2^22).
inline int nearest_int(float fval) {
  float val = fval + 12582912.f;
  int i;
  std::memcpy(&i, &val, sizeof(int));
  return (i & 0x007fffff) - 0x00400000;
}

// The value of largest magnitude in x[0..n), sign kept (the first among equal
// magnitudes); its magnitude goes to `amax`.
inline float signed_absmax(const float* x, int n, float& amax) {
  float max = 0.0f;
  amax = 0.0f;
  for (int j = 0; j < n; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  return max;
}

// Dot of one weight row (x) with `ny` activation rows stored back to back from y,
// n elements each: s[r] = x . y_r. Each weight block is unpacked once (prep(i)) and
// dotted with block i of every activation row (term(i, y_block)). s[r] sums the
// blocks in order, so each result equals the single-row dot bit for bit.
template <class BA, class Prep, class Term>
void dot_rows(size_t nb, const BA* y, size_t ny, float* s, Prep&& prep, Term&& term) {
  for (size_t r = 0; r < ny; ++r) s[r] = 0;
  for (size_t i = 0; i < nb; ++i) {
    prep(i);
    for (size_t r = 0; r < ny; ++r) s[r] += term(i, y[r * nb + i]);
  }
}

// The block types with CPU row kernels, one X(GgmlType enumerator, block, kernel
// suffix, activation block, activation suffix) row each: the 32-element types
// (quants.cpp) and the K-quants (kquants.cpp). Their declarations below and the
// dispatch table of quant_types.cpp are generated from these rows.
#define WICK_CPU_QUANT_TYPES(X)             \
  X(Q4_0, BlockQ4_0, q4_0, BlockQ8_0, q8_0) \
  X(Q4_1, BlockQ4_1, q4_1, BlockQ8_1, q8_1) \
  X(Q5_0, BlockQ5_0, q5_0, BlockQ8_0, q8_0) \
  X(Q5_1, BlockQ5_1, q5_1, BlockQ8_1, q8_1) \
  X(Q8_0, BlockQ8_0, q8_0, BlockQ8_0, q8_0) \
  X(Q8_1, BlockQ8_1, q8_1, BlockQ8_1, q8_1) \
  X(Q2_K, BlockQ2_K, q2_k, BlockQ8_K, q8_k) \
  X(Q3_K, BlockQ3_K, q3_k, BlockQ8_K, q8_k) \
  X(Q4_K, BlockQ4_K, q4_k, BlockQ8_K, q8_k) \
  X(Q5_K, BlockQ5_K, q5_k, BlockQ8_K, q8_k) \
  X(Q6_K, BlockQ6_K, q6_k, BlockQ8_K, q8_k) \
  X(Q8_K, BlockQ8_K, q8_k, BlockQ8_K, q8_k)

// quantize_{sfx}, dequantize_{sfx} and vec_dot_{sfx}_{act sfx} (n elements a row;
// vec_dot: one weight row against ny activation rows, as dot_rows).
#define WICK_DECLARE_ROW_KERNELS(type, B, sfx, A, asfx)  \
  void quantize_##sfx(const float* x, B* y, size_t n);   \
  void dequantize_##sfx(const B* x, float* y, size_t n); \
  void vec_dot_##sfx##_##asfx(size_t n, const B* x, const A* y, size_t ny, float* s);
WICK_CPU_QUANT_TYPES(WICK_DECLARE_ROW_KERNELS)
#undef WICK_DECLARE_ROW_KERNELS

// A type's vec_dot: one weight row of n elements against n_act activation rows (back
// to back): out[r] = w . act_r.
using VecDotFn = void (*)(size_t n, const void* w, const void* act, size_t n_act, float* out);

// The hand-written vec_dot of type t for instruction-set level `level`
// (quants_x86.cpp: Q4_0, Q8_0, Q4_K, Q6_K at Avx2 and Avx512), or null.
VecDotFn vec_dot_simd(GgmlType t, cpu::Isa level);

// The vec_dot qmatmul and vec_dot_rows run for type t on this CPU (the hand-written
// one of isa(), else the scalar reference); checks t and n as vec_dot_rows does.
VecDotFn vec_dot_kernel(GgmlType t, size_t n);

// A quantizer of n elements (whole blocks) of x into y.
using QuantizeFn = void (*)(const float* x, void* y, size_t n);

// The hand-written quantizer of type t for instruction-set level `level` (quants_x86.cpp:
// Q8_0 and Q8_K at Avx512, the mat-vec's activation types), or null. It gives the scalar
// quantizer's bytes exactly.
QuantizeFn quantize_simd(GgmlType t, cpu::Isa level);

// A type's batch-1 mat-vec: prepare() builds the activation's side of every block of
// one activation row of n elements once (prep_bytes(n) bytes at a 64-byte aligned
// prep), then run() takes n_w weight rows (back to back) against it: out[r] = w_r . act,
// with the bits of the same level's VecDotFn for row r alone. run() reads act and prep
// only, so threads share them.
struct MatVec {
  size_t (*prep_bytes)(size_t n) = nullptr;
  void (*prepare)(size_t n, const void* act, void* prep) = nullptr;
  void (*run)(size_t n, const void* w, size_t n_w, const void* act, const void* prep, float* out) = nullptr;
};

// The hand-written mat-vec of type t for instruction-set level `level` (the four types
// of vec_dot_simd at Avx512), or one with null members.
MatVec mat_vec_simd(GgmlType t, cpu::Isa level);

}  // namespace wick::quant
