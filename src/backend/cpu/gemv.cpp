// A matrix times a vector (gemm.h): one pass over the matrix in its own dtype (f32,
// f16, bf16), elements widened to f32 in registers and multiplied into f32
// accumulators, so the time is the matrix's bytes over the memory bandwidth. AVX-512
// and AVX2 loops are chosen at run time (isa.h); the scalar loops serve other CPUs.
//   Dot form:  one row at a time, in four accumulators: each thread streams its rows
//              in order.
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

// ---- one vector kernel per form, compiled for each level through its lane type -------
// A level's lane type V gives the vector width (kLanes) and its operations: zero,
// set1, load (widens f16 / bf16 to f32), loadu / storeu of f32, fma and hsum. The
// kernels below are written once and always inlined into each level's entry point,
// whose target attribute compiles them for that level; the last partial vector of a
// row takes the scalar loop. -Wpsabi: GCC warns of the vector ABI of these templates,
// which have no target of their own; being always inlined, they are never called
// across an ABI boundary.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

struct Avx2 {
  using V = __m256;
  static constexpr size_t kLanes = 8;
  WICK_AVX2 static V zero() { return _mm256_setzero_ps(); }
  WICK_AVX2 static V set1(float v) { return _mm256_set1_ps(v); }
  WICK_AVX2 static V loadu(const float* p) { return _mm256_loadu_ps(p); }
  WICK_AVX2 static void storeu(float* p, V v) { _mm256_storeu_ps(p, v); }
  WICK_AVX2 static V load(const float* p) { return _mm256_loadu_ps(p); }
  WICK_AVX2 static V load(const f16* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  WICK_AVX2 static V load(const bf16* p) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  WICK_AVX2 static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  WICK_AVX2 static V add(V a, V b) { return _mm256_add_ps(a, b); }
  WICK_AVX2 static float hsum(V v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
};

struct Avx512 {
  using V = __m512;
  static constexpr size_t kLanes = 16;
  WICK_AVX512 static V zero() { return _mm512_setzero_ps(); }
  WICK_AVX512 static V set1(float v) { return _mm512_set1_ps(v); }
  WICK_AVX512 static V loadu(const float* p) { return _mm512_loadu_ps(p); }
  WICK_AVX512 static void storeu(float* p, V v) { _mm512_storeu_ps(p, v); }
  WICK_AVX512 static V load(const float* p) { return _mm512_loadu_ps(p); }
  WICK_AVX512 static V load(const f16* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  WICK_AVX512 static V load(const bf16* p) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
  WICK_AVX512 static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  WICK_AVX512 static V add(V a, V b) { return _mm512_add_ps(a, b); }
  WICK_AVX512 static float hsum(V v) { return _mm512_reduce_add_ps(v); }
};

// Dot form: one row at a time in four independent accumulators, so each thread reads
// the matrix as one sequential stream (rows interleaved in groups of 4 were four
// streams, measured 30% slower for f16 / bf16: docs/PERFORMANCE.md); x stays in L1.
template <class L, class T>
__attribute__((always_inline)) inline void dot_vec(const T* a, size_t ld, size_t b, size_t e, size_t k,
                                                   const float* x, float* y) {
  constexpr size_t W = L::kLanes;
  for (size_t i = b; i < e; ++i) {
    const T* r = a + i * ld;
    auto a0 = L::zero(), a1 = a0, a2 = a0, a3 = a0;
    size_t p = 0;
    for (; p + 4 * W <= k; p += 4 * W) {
      a0 = L::fma(L::load(r + p), L::loadu(x + p), a0);
      a1 = L::fma(L::load(r + p + W), L::loadu(x + p + W), a1);
      a2 = L::fma(L::load(r + p + 2 * W), L::loadu(x + p + 2 * W), a2);
      a3 = L::fma(L::load(r + p + 3 * W), L::loadu(x + p + 3 * W), a3);
    }
    for (; p + W <= k; p += W) a0 = L::fma(L::load(r + p), L::loadu(x + p), a0);
    float s = L::hsum(L::add(L::add(a0, a1), L::add(a2, a3)));
    for (; p < k; ++p) s += widen(r[p]) * x[p];
    y[i] = s;
  }
}

// Axpy form: y[j0, j1) += x[p] * row p, for P rows p0.. at a time.
template <class L, int P, class T>
__attribute__((always_inline)) inline void axpy_rows(const T* a, size_t ld, size_t p0, size_t j0, size_t j1,
                                                     const float* x, float* y) {
  const size_t vec_end = j0 + (j1 - j0) / L::kLanes * L::kLanes;
  const T* r[P];
  typename L::V xs[P];
  for (int q = 0; q < P; ++q) r[q] = a + (p0 + size_t(q)) * ld, xs[q] = L::set1(x[p0 + size_t(q)]);
  for (size_t j = j0; j < vec_end; j += L::kLanes) {
    auto acc = L::loadu(y + j);
    for (int q = 0; q < P; ++q) acc = L::fma(xs[q], L::load(r[q] + j), acc);
    L::storeu(y + j, acc);
  }
  for (size_t j = vec_end; j < j1; ++j) {
    float s = y[j];
    for (int q = 0; q < P; ++q) s += x[p0 + size_t(q)] * widen(r[q][j]);
    y[j] = s;
  }
}

template <class L, class T>
__attribute__((always_inline)) inline void axpy_vec(const T* a, size_t ld, size_t b, size_t e, size_t k,
                                                    const float* x, float* y) {
  for (size_t j0 = b; j0 < e; j0 += kAxpyBlock) {
    const size_t j1 = std::min(e, j0 + kAxpyBlock);
    std::fill(y + j0, y + j1, 0.0f);
    size_t p = 0;
    for (; p + 4 <= k; p += 4) axpy_rows<L, 4>(a, ld, p, j0, j1, x, y);
    for (; p < k; ++p) axpy_rows<L, 1>(a, ld, p, j0, j1, x, y);
  }
}

// Each level's entry points: the kernels above compiled for it.
template <class T>
WICK_AVX2 void dot_avx2(const T* a, size_t ld, size_t b, size_t e, size_t k, const float* x, float* y) {
  dot_vec<Avx2>(a, ld, b, e, k, x, y);
}
template <class T>
WICK_AVX2 void axpy_avx2(const T* a, size_t ld, size_t b, size_t e, size_t k, const float* x, float* y) {
  axpy_vec<Avx2>(a, ld, b, e, k, x, y);
}
template <class T>
WICK_AVX512 void dot_avx512(const T* a, size_t ld, size_t b, size_t e, size_t k, const float* x, float* y) {
  dot_vec<Avx512>(a, ld, b, e, k, x, y);
}
template <class T>
WICK_AVX512 void axpy_avx512(const T* a, size_t ld, size_t b, size_t e, size_t k, const float* x, float* y) {
  axpy_vec<Avx512>(a, ld, b, e, k, x, y);
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

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
  // Chunks of at least ~64 KiB of the matrix per thread: the dot form splits rows, the
  // axpy form columns in whole 16-wide groups.
  const size_t per_out = std::max<size_t>(k * sizeof(T), 1);
  if (!a.axpy) {
    parallel_for(len, (size_t(1) << 16) / per_out + 1,
                 [&](size_t b, size_t e) { f(a.a, a.ld, b, e, k, x, y); });
    return;
  }
  parallel_for((len + 15) / 16, (size_t(1) << 12) / per_out + 1,
               [&](size_t b, size_t e) { f(a.a, a.ld, b * 16, std::min(e * 16, len), k, x, y); });
}

template void gemv<float>(GemvMatrix<float>, size_t, size_t, const float*, float*);
template void gemv<f16>(GemvMatrix<f16>, size_t, size_t, const float*, float*);
template void gemv<bf16>(GemvMatrix<bf16>, size_t, size_t, const float*, float*);

}  // namespace wick::cpu
