// A matrix times a vector (gemm.h): one pass over the matrix in its own dtype (f32,
// f16, bf16), elements widened to f32 in registers and multiplied into f32
// accumulators, so the time is the matrix's bytes over the memory bandwidth. AVX-512
// and AVX2 loops are chosen at run time (isa.h); the scalar loops serve other CPUs.
//   Dot form:  one row at a time in four accumulators, so that each thread reads one
//              sequential stream (rows in groups of four sharing the loads of x, four
//              streams, were slower: docs/PERFORMANCE.md).
//   Axpy form: each thread owns a block of outputs, kept in L1 as f32, and adds 4
//              matrix rows scaled by x per pass over it.
#include <algorithm>

#include "backend/cpu/gemm.h"
#include "backend/cpu/isa.h"
#include "backend/cpu/strided.h"

namespace wick::cpu {

namespace {

// Outputs of the axpy form accumulated per pass (f32 in L1: 4 KiB).
constexpr size_t kAxpyBlock = 1024;
// Matrix bytes of the dot form's pieces of rows, taken by the threads through
// cpu::parallel_chunks (each its own share, then what the others left), as the
// quantized mat-vec's: a thread the system slows leaves its rows to the others
// (docs/PERFORMANCE.md).
constexpr size_t kRowsChunkBytes = size_t(128) << 10;

template <class T>
float widen(T v) {
  return float(v);
}

// ---- scalar ------------------------------------------------------------------------

template <class T>
void dot_scalar(const T* a, size_t ld, size_t b, size_t e, size_t k, const float* x, float* y) {
  for (size_t i = b; i < e; ++i) {
    const T* r = a + i * ld;
    float s = 0;
    for (size_t p = 0; p < k; ++p) s += widen(r[p]) * x[p];
    y[i] = s;
  }
}

template <class T>
void axpy_scalar(const T* a, size_t ld, size_t b, size_t e, size_t k, const float* x, float* y) {
  std::fill(y + b, y + e, 0.0f);
  for (size_t p = 0; p < k; ++p) {
    const T* r = a + p * ld;
    for (size_t j = b; j < e; ++j) y[j] += x[p] * widen(r[j]);
  }
}

#if WICK_X86

// ---- AVX2: 8 lanes ---------------------------------------------------------------------

WICK_AVX2 inline __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
WICK_AVX2 inline __m256 load8(const f16* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
WICK_AVX2 inline __m256 load8(const bf16* p) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}
WICK_AVX2 inline float hsum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

template <class T>
WICK_AVX2 void dot_avx2(const T* a, size_t ld, size_t b, size_t e, size_t k, const float* x, float* y) {
  for (size_t i = b; i < e; ++i) {
    const T* r = a + i * ld;
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    size_t p = 0;
    for (; p + 32 <= k; p += 32) {
      a0 = _mm256_fmadd_ps(load8(r + p), _mm256_loadu_ps(x + p), a0);
      a1 = _mm256_fmadd_ps(load8(r + p + 8), _mm256_loadu_ps(x + p + 8), a1);
      a2 = _mm256_fmadd_ps(load8(r + p + 16), _mm256_loadu_ps(x + p + 16), a2);
      a3 = _mm256_fmadd_ps(load8(r + p + 24), _mm256_loadu_ps(x + p + 24), a3);
    }
    for (; p + 8 <= k; p += 8) a0 = _mm256_fmadd_ps(load8(r + p), _mm256_loadu_ps(x + p), a0);
    float s = hsum8(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
    for (; p < k; ++p) s += widen(r[p]) * x[p];
    y[i] = s;
  }
}

template <class T>
WICK_AVX2 void axpy_avx2(const T* a, size_t ld, size_t b, size_t e, size_t k, const float* x, float* y) {
  for (size_t j0 = b; j0 < e; j0 += kAxpyBlock) {
    const size_t j1 = std::min(e, j0 + kAxpyBlock), vec_end = j0 + (j1 - j0) / 8 * 8;
    std::fill(y + j0, y + j1, 0.0f);
    size_t p = 0;
    for (; p + 4 <= k; p += 4) {
      const T *r0 = a + p * ld, *r1 = r0 + ld, *r2 = r1 + ld, *r3 = r2 + ld;
      const __m256 x0 = _mm256_set1_ps(x[p]), x1 = _mm256_set1_ps(x[p + 1]), x2 = _mm256_set1_ps(x[p + 2]),
                   x3 = _mm256_set1_ps(x[p + 3]);
      for (size_t j = j0; j < vec_end; j += 8) {
        __m256 acc = _mm256_loadu_ps(y + j);
        acc = _mm256_fmadd_ps(x0, load8(r0 + j), acc);
        acc = _mm256_fmadd_ps(x1, load8(r1 + j), acc);
        acc = _mm256_fmadd_ps(x2, load8(r2 + j), acc);
        acc = _mm256_fmadd_ps(x3, load8(r3 + j), acc);
        _mm256_storeu_ps(y + j, acc);
      }
      for (size_t j = vec_end; j < j1; ++j)
        y[j] +=
            x[p] * widen(r0[j]) + x[p + 1] * widen(r1[j]) + x[p + 2] * widen(r2[j]) + x[p + 3] * widen(r3[j]);
    }
    for (; p < k; ++p) {
      const T* r0 = a + p * ld;
      const __m256 x0 = _mm256_set1_ps(x[p]);
      for (size_t j = j0; j < vec_end; j += 8)
        _mm256_storeu_ps(y + j, _mm256_fmadd_ps(x0, load8(r0 + j), _mm256_loadu_ps(y + j)));
      for (size_t j = vec_end; j < j1; ++j) y[j] += x[p] * widen(r0[j]);
    }
  }
}

// ---- AVX-512: 16 lanes, masked tails -----------------------------------------------

WICK_AVX512 inline __m512 load16(const float* p, __mmask16 m) { return _mm512_maskz_loadu_ps(m, p); }
WICK_AVX512 inline __m512 load16(const f16* p, __mmask16 m) {
  return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
}
WICK_AVX512 inline __m512 load16(const bf16* p, __mmask16 m) {
  const __m256i h = _mm256_maskz_loadu_epi16(m, p);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}
WICK_AVX512 inline __mmask16 tail_mask(size_t n) { return __mmask16((1u << n) - 1); }

template <class T>
WICK_AVX512 void dot_avx512(const T* a, size_t ld, size_t b, size_t e, size_t k, const float* x, float* y) {
  for (size_t i = b; i < e; ++i) {
    const T* r = a + i * ld;
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    size_t p = 0;
    for (; p + 64 <= k; p += 64) {
      a0 = _mm512_fmadd_ps(load16(r + p, 0xFFFF), _mm512_loadu_ps(x + p), a0);
      a1 = _mm512_fmadd_ps(load16(r + p + 16, 0xFFFF), _mm512_loadu_ps(x + p + 16), a1);
      a2 = _mm512_fmadd_ps(load16(r + p + 32, 0xFFFF), _mm512_loadu_ps(x + p + 32), a2);
      a3 = _mm512_fmadd_ps(load16(r + p + 48, 0xFFFF), _mm512_loadu_ps(x + p + 48), a3);
    }
    for (; p < k; p += 16) {
      const __mmask16 m = p + 16 <= k ? __mmask16(0xFFFF) : tail_mask(k - p);
      a0 = _mm512_fmadd_ps(load16(r + p, m), _mm512_maskz_loadu_ps(m, x + p), a0);
    }
    y[i] = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
  }
}

template <class T>
WICK_AVX512 void axpy_avx512(const T* a, size_t ld, size_t b, size_t e, size_t k, const float* x, float* y) {
  for (size_t j0 = b; j0 < e; j0 += kAxpyBlock) {
    const size_t j1 = std::min(e, j0 + kAxpyBlock);
    std::fill(y + j0, y + j1, 0.0f);
    size_t p = 0;
    for (; p + 4 <= k; p += 4) {
      const T *r0 = a + p * ld, *r1 = r0 + ld, *r2 = r1 + ld, *r3 = r2 + ld;
      const __m512 x0 = _mm512_set1_ps(x[p]), x1 = _mm512_set1_ps(x[p + 1]), x2 = _mm512_set1_ps(x[p + 2]),
                   x3 = _mm512_set1_ps(x[p + 3]);
      for (size_t j = j0; j < j1; j += 16) {
        const __mmask16 m = j + 16 <= j1 ? __mmask16(0xFFFF) : tail_mask(j1 - j);
        __m512 acc = _mm512_maskz_loadu_ps(m, y + j);
        acc = _mm512_fmadd_ps(x0, load16(r0 + j, m), acc);
        acc = _mm512_fmadd_ps(x1, load16(r1 + j, m), acc);
        acc = _mm512_fmadd_ps(x2, load16(r2 + j, m), acc);
        acc = _mm512_fmadd_ps(x3, load16(r3 + j, m), acc);
        _mm512_mask_storeu_ps(y + j, m, acc);
      }
    }
    for (; p < k; ++p) {
      const T* r0 = a + p * ld;
      const __m512 x0 = _mm512_set1_ps(x[p]);
      for (size_t j = j0; j < j1; j += 16) {
        const __mmask16 m = j + 16 <= j1 ? __mmask16(0xFFFF) : tail_mask(j1 - j);
        _mm512_mask_storeu_ps(y + j, m,
                              _mm512_fmadd_ps(x0, load16(r0 + j, m), _mm512_maskz_loadu_ps(m, y + j)));
      }
    }
  }
}

#endif  // WICK_X86

}  // namespace

template <class T>
void gemv(GemvMatrix<T> a, size_t len, size_t k, const float* x, float* y) {
  using Kernel = void (*)(const T*, size_t, size_t, size_t, size_t, const float*, float*);
  Kernel f = a.axpy ? axpy_scalar<T> : dot_scalar<T>;
#if WICK_X86
  switch (isa()) {
    case Isa::Avx512:
      f = a.axpy ? axpy_avx512<T> : dot_avx512<T>;
      break;
    case Isa::Avx2:
      f = a.axpy ? axpy_avx2<T> : dot_avx2<T>;
      break;
    default:
      break;
  }
#endif
  const size_t per_out = std::max<size_t>(k * sizeof(T), 1);
  if (!a.axpy) {
    // Rows in pieces of about kRowsChunkBytes that the threads take in turn.
    parallel_chunks(len, std::max<size_t>(1, kRowsChunkBytes / per_out),
                    [&](size_t b, size_t e) { f(a.a, a.ld, b, e, k, x, y); });
    return;
  }
  // The axpy form: chunks of at least ~4 KiB of the matrix per thread, columns in
  // whole 16-wide groups.
  parallel_for((len + 15) / 16, (size_t(1) << 12) / per_out + 1,
               [&](size_t b, size_t e) { f(a.a, a.ld, b * 16, std::min(e * 16, len), k, x, y); });
}

template void gemv<float>(GemvMatrix<float>, size_t, size_t, const float*, float*);
template void gemv<f16>(GemvMatrix<f16>, size_t, size_t, const float*, float*);
template void gemv<bf16>(GemvMatrix<bf16>, size_t, size_t, const float*, float*);

}  // namespace wick::cpu
