// Per-type row kernels behind wick::quant::{quantize_row, dequantize_row, vec_dot}.
// Internal to src/quant: callers pass whole blocks (n a multiple of the block size).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "base/ggml_blocks.h"
#include "wick/dtype.h"

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

// 32-element types (quants.cpp).
void quantize_q4_0(const float* x, BlockQ4_0* y, size_t n);
void quantize_q4_1(const float* x, BlockQ4_1* y, size_t n);
void quantize_q5_0(const float* x, BlockQ5_0* y, size_t n);
void quantize_q5_1(const float* x, BlockQ5_1* y, size_t n);
void quantize_q8_0(const float* x, BlockQ8_0* y, size_t n);
void quantize_q8_1(const float* x, BlockQ8_1* y, size_t n);
void dequantize_q4_0(const BlockQ4_0* x, float* y, size_t n);
void dequantize_q4_1(const BlockQ4_1* x, float* y, size_t n);
void dequantize_q5_0(const BlockQ5_0* x, float* y, size_t n);
void dequantize_q5_1(const BlockQ5_1* x, float* y, size_t n);
void dequantize_q8_0(const BlockQ8_0* x, float* y, size_t n);
void dequantize_q8_1(const BlockQ8_1* x, float* y, size_t n);
void vec_dot_q4_0_q8_0(size_t n, const BlockQ4_0* x, const BlockQ8_0* y, size_t ny, float* s);
void vec_dot_q4_1_q8_1(size_t n, const BlockQ4_1* x, const BlockQ8_1* y, size_t ny, float* s);
void vec_dot_q5_0_q8_0(size_t n, const BlockQ5_0* x, const BlockQ8_0* y, size_t ny, float* s);
void vec_dot_q5_1_q8_1(size_t n, const BlockQ5_1* x, const BlockQ8_1* y, size_t ny, float* s);
void vec_dot_q8_0_q8_0(size_t n, const BlockQ8_0* x, const BlockQ8_0* y, size_t ny, float* s);
void vec_dot_q8_1_q8_1(size_t n, const BlockQ8_1* x, const BlockQ8_1* y, size_t ny, float* s);

// K-quants (kquants.cpp).
void quantize_q2_k(const float* x, BlockQ2_K* y, size_t n);
void quantize_q3_k(const float* x, BlockQ3_K* y, size_t n);
void quantize_q4_k(const float* x, BlockQ4_K* y, size_t n);
void quantize_q5_k(const float* x, BlockQ5_K* y, size_t n);
void quantize_q6_k(const float* x, BlockQ6_K* y, size_t n);
void quantize_q8_k(const float* x, BlockQ8_K* y, size_t n);
void dequantize_q2_k(const BlockQ2_K* x, float* y, size_t n);
void dequantize_q3_k(const BlockQ3_K* x, float* y, size_t n);
void dequantize_q4_k(const BlockQ4_K* x, float* y, size_t n);
void dequantize_q5_k(const BlockQ5_K* x, float* y, size_t n);
void dequantize_q6_k(const BlockQ6_K* x, float* y, size_t n);
void dequantize_q8_k(const BlockQ8_K* x, float* y, size_t n);
void vec_dot_q2_k_q8_k(size_t n, const BlockQ2_K* x, const BlockQ8_K* y, size_t ny, float* s);
void vec_dot_q3_k_q8_k(size_t n, const BlockQ3_K* x, const BlockQ8_K* y, size_t ny, float* s);
void vec_dot_q4_k_q8_k(size_t n, const BlockQ4_K* x, const BlockQ8_K* y, size_t ny, float* s);
void vec_dot_q5_k_q8_k(size_t n, const BlockQ5_K* x, const BlockQ8_K* y, size_t ny, float* s);
void vec_dot_q6_k_q8_k(size_t n, const BlockQ6_K* x, const BlockQ8_K* y, size_t ny, float* s);
void vec_dot_q8_k_q8_k(size_t n, const BlockQ8_K* x, const BlockQ8_K* y, size_t ny, float* s);

}  // namespace wick::quant
