// Hand-written x86 dot products of the mat-vec's block types against their int8
// activation blocks (quants.h): Q4_0 and Q8_0 against Q8_0, Q4_K and Q6_K against
// Q8_K, for AVX2 (vpmaddubsw) and AVX-512 (vpdpbusd, 64-byte vectors). They sit
// beside the scalar kernels of quants.cpp / kquants.cpp, which stay the reference and
// serve every other type and CPU; quant_types.cpp picks by isa() at run time.
//
// Arithmetic. Every block's integer sum is exact. The AVX2 K-quant kernels then apply
// the scalar kernel's float epilogue per 256-element super-block, in its order and
// with single scalar instructions (never contracted into an FMA), so they equal the
// scalar kernel bit for bit. The AVX-512 kernels (and AVX2's Q4_0 and Q8_0) scale each
// block's partial sums in vector lanes and add them up once per row, as ggml does,
// rather than reducing every block to a scalar: their results differ from the scalar
// kernel by float reassociation only (the bounds of test_quant's QuantSimd tests).
//
// The batch-1 mat-vec (mat_vec_simd: the four types at AVX-512) builds the
// activation's side of every block once a call (Q4_0, Q8_0, Q4_K: its quants in the
// order the kernel reads them, its sums and scales; L1-sized), then reads the weight
// rows one after the other, one sequential stream a thread. Each row's arithmetic is
// that of the row kernel.
//
// One weight row is dotted with R activation rows at once (the weight block unpacked
// once per R); each row's arithmetic is the same for every R, so a row's result does
// not depend on the rows batched with it.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "backend/common/kquant_scales.h"
#include "backend/cpu/isa.h"
#include "backend/cpu/quants.h"

namespace wick::quant {

#if WICK_X86

namespace {

using VecDot = void (*)(size_t, const void*, const void*, size_t, float*);

// Rows in groups of 4, then one by one, through the kernel's R = 4 and R = 1 forms.
template <class B, class A, void (*K4)(size_t, const B*, const A*, size_t, float*),
          void (*K1)(size_t, const B*, const A*, size_t, float*)>
void row_groups(size_t nb, const void* w, const void* act, size_t ny, float* s) {
  const B* x = static_cast<const B*>(w);
  const A* y = static_cast<const A*>(act);
  size_t r = 0;
  for (; r + 4 <= ny; r += 4) K4(nb, x, y + r * nb, nb, s + r);
  for (; r < ny; ++r) K1(nb, x, y + r * nb, nb, s + r);
}

// ---- AVX2 ------------------------------------------------------------------------------

WICK_AVX2 inline float h2f_avx2(uint16_t h) { return _cvtsh_ss(h); }

WICK_AVX2 inline int hsum_i32_avx2(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 1));
  return _mm_cvtsi128_si32(s);
}

WICK_AVX2 inline float hsum_f32_avx2(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// Sums of 4 adjacent products of signed bytes x and y, as 8 int32 lanes (|x|, |y| <= 127
// or x = -128 with |y| <= 127: the 16-bit pair sums cannot saturate).
WICK_AVX2 inline __m256i dot_i8_avx2(__m256i x, __m256i y) {
  const __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x));
  return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
}

// The 32 quants of a block as signed bytes: Q4_0's minus 8 (elements 0..15 low
// nibbles, 16..31 high), Q8_0's as stored.
WICK_AVX2 inline __m256i quants_avx2(const BlockQ4_0& x) {
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x.qs));
  const __m256i n = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(b, 4), b), _mm256_set1_epi8(0x0F));
  return _mm256_sub_epi8(n, _mm256_set1_epi8(8));
}
WICK_AVX2 inline __m256i quants_avx2(const BlockQ8_0& x) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.qs));
}

// Q4_0 or Q8_0 (B) against Q8_0: the two differ only in how a block's quants unpack.
template <class B, int R>
WICK_AVX2 void q_0_avx2(size_t nb, const B* x, const BlockQ8_0* y, size_t ys, float* s) {
  __m256 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
  for (size_t i = 0; i < nb; ++i) {
    const __m256i q = quants_avx2(x[i]);
    const float dx = h2f_avx2(x[i].d);
    for (int r = 0; r < R; ++r) {
      const BlockQ8_0& b = y[r * ys + i];
      const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs));
      const __m256 d = _mm256_set1_ps(dx * h2f_avx2(b.d));
      acc[r] = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(dot_i8_avx2(q, a)), acc[r]);
    }
  }
  for (int r = 0; r < R; ++r) s[r] = hsum_f32_avx2(acc[r]);
}

// The K-quant epilogue of the scalar kernels, s + ((yd * d) * isum - (yd * dmin) * summs),
// one rounding per operation as there.
WICK_AVX2 inline float k_term_avx2(float s, float yd, float d, int isum, float dmin, int summs) {
  const __m128 a = _mm_mul_ss(_mm_mul_ss(_mm_set_ss(yd), _mm_set_ss(d)), _mm_set_ss(float(isum)));
  const __m128 b = _mm_mul_ss(_mm_mul_ss(_mm_set_ss(yd), _mm_set_ss(dmin)), _mm_set_ss(float(summs)));
  return _mm_cvtss_f32(_mm_add_ss(_mm_set_ss(s), _mm_sub_ss(a, b)));
}
WICK_AVX2 inline float k_term_avx2(float s, float yd, float d, int isum) {
  const __m128 a = _mm_mul_ss(_mm_mul_ss(_mm_set_ss(yd), _mm_set_ss(d)), _mm_set_ss(float(isum)));
  return _mm_cvtss_f32(_mm_add_ss(_mm_set_ss(s), a));
}

// A Q4_K super-block's 8 sub-block scales into sc; returns its 8 mins as 16-bit lanes.
WICK_AVX2 inline __m128i k4_scales_avx2(const uint8_t* scales, uint8_t sc[8]) {
  uint8_t mn[8];
  for (int j = 0; j < 8; ++j) scale_min_k4(j, scales, sc[j], mn[j]);
  return _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(mn)));
}

// Sum over j < 8 of m[j] * (bsums[2j] + bsums[2j + 1]): the min term of Q4_K.
WICK_AVX2 inline int k4_min_sum_avx2(const int16_t* bsums, __m128i mins16) {
  const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bsums));
  const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bsums + 8));
  __m128i p = _mm_madd_epi16(_mm_hadd_epi16(lo, hi), mins16);
  p = _mm_add_epi32(p, _mm_unpackhi_epi64(p, p));
  p = _mm_add_epi32(p, _mm_shuffle_epi32(p, 1));
  return _mm_cvtsi128_si32(p);
}

template <int R>
WICK_AVX2 void q4_k_avx2(size_t nb, const BlockQ4_K* x, const BlockQ8_K* y, size_t ys, float* s) {
  float acc[R];
  for (int r = 0; r < R; ++r) acc[r] = 0;
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  for (size_t i = 0; i < nb; ++i) {
    uint8_t sc[8];
    const __m128i mins16 = k4_scales_avx2(x[i].scales, sc);
    __m256i lo[4], hi[4], s_lo[4], s_hi[4];
    for (int c = 0; c < 4; ++c) {
      const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[i].qs + 32 * c));
      lo[c] = _mm256_and_si256(b, m4);
      hi[c] = _mm256_and_si256(_mm256_srli_epi16(b, 4), m4);
      s_lo[c] = _mm256_set1_epi16(sc[2 * c]);
      s_hi[c] = _mm256_set1_epi16(sc[2 * c + 1]);
    }
    const float d = h2f_avx2(x[i].d), dmin = h2f_avx2(x[i].dmin);
    for (int r = 0; r < R; ++r) {
      const BlockQ8_K& b = y[r * ys + i];
      __m256i sum = _mm256_setzero_si256();
      for (int c = 0; c < 4; ++c) {
        const __m256i a_lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 64 * c));
        const __m256i a_hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 64 * c + 32));
        sum = _mm256_add_epi32(sum, _mm256_madd_epi16(_mm256_maddubs_epi16(lo[c], a_lo), s_lo[c]));
        sum = _mm256_add_epi32(sum, _mm256_madd_epi16(_mm256_maddubs_epi16(hi[c], a_hi), s_hi[c]));
      }
      acc[r] = k_term_avx2(acc[r], b.d, d, hsum_i32_avx2(sum), dmin, k4_min_sum_avx2(b.bsums, mins16));
    }
  }
  for (int r = 0; r < R; ++r) s[r] = acc[r];
}

// Q6_K: 2 halves of 128 elements; per half the 4 quant vectors (elements 32g..32g+31,
// 0..63 before the -32) of ql's low / high nibbles with two bits of qh each.
WICK_AVX2 inline void q6_k_unpack_avx2(const uint8_t* ql, const uint8_t* qh, __m256i q[4]) {
  const __m256i m4 = _mm256_set1_epi8(0x0F), m30 = _mm256_set1_epi8(0x30);
  const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql));
  const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 32));
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh));
  q[0] = _mm256_or_si256(_mm256_and_si256(a, m4), _mm256_and_si256(_mm256_slli_epi16(h, 4), m30));
  q[1] = _mm256_or_si256(_mm256_and_si256(c, m4), _mm256_and_si256(_mm256_slli_epi16(h, 2), m30));
  q[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(a, 4), m4), _mm256_and_si256(h, m30));
  q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(c, 4), m4),
                         _mm256_and_si256(_mm256_srli_epi16(h, 2), m30));
}

template <int R>
WICK_AVX2 void q6_k_avx2(size_t nb, const BlockQ6_K* x, const BlockQ8_K* y, size_t ys, float* s) {
  float acc[R];
  for (int r = 0; r < R; ++r) acc[r] = 0;
  for (size_t i = 0; i < nb; ++i) {
    __m256i q[8], scl[8];
    q6_k_unpack_avx2(x[i].ql, x[i].qh, q);
    q6_k_unpack_avx2(x[i].ql + 64, x[i].qh + 32, q + 4);
    // vector v covers sub-blocks 2v (its 16-bit lanes 0..7) and 2v + 1 (lanes 8..15)
    for (int v = 0; v < 8; ++v)
      scl[v] = _mm256_set_m128i(_mm_set1_epi16(x[i].scales[2 * v + 1]), _mm_set1_epi16(x[i].scales[2 * v]));
    const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x[i].scales)));
    const float d = h2f_avx2(x[i].d);
    for (int r = 0; r < R; ++r) {
      const BlockQ8_K& b = y[r * ys + i];
      __m256i sum = _mm256_setzero_si256();
      for (int v = 0; v < 8; ++v) {
        const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * v));
        sum = _mm256_add_epi32(sum, _mm256_madd_epi16(_mm256_maddubs_epi16(q[v], a), scl[v]));
      }
      // the quants' bias of 32: sum_j scale_j * 32 * bsums_j
      const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.bsums));
      sum = _mm256_sub_epi32(sum, _mm256_slli_epi32(_mm256_madd_epi16(bs, sc16), 5));
      acc[r] = k_term_avx2(acc[r], b.d, d, hsum_i32_avx2(sum));
    }
  }
  for (int r = 0; r < R; ++r) s[r] = acc[r];
}

// ---- AVX-512 ---------------------------------------------------------------------------

WICK_AVX512 inline float h2f_avx512(uint16_t h) { return _cvtsh_ss(h); }

// Two 32-byte rows side by side in one vector.
WICK_AVX512 inline __m512i pair256(const void* lo, const void* hi) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256(static_cast<const __m256i*>(lo))),
                            _mm256_loadu_si256(static_cast<const __m256i*>(hi)), 1);
}

// Per 4-byte lane: the sum of the products of signed bytes x and y (y never -128).
WICK_AVX512 inline __m512i dot_i8_avx512(__m512i x, __m512i y) {
  const __m512i sy = _mm512_mask_sub_epi8(y, _mm512_movepi8_mask(x), _mm512_setzero_si512(), y);
  return _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_abs_epi8(x), sy);
}
WICK_AVX512 inline __m256i dot_i8_256_avx512(__m256i x, __m256i y) {
  const __m256i sy = _mm256_mask_sub_epi8(y, _mm256_movepi8_mask(x), _mm256_setzero_si256(), y);
  return _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_abs_epi8(x), sy);
}

// Scales of two blocks: lanes 0..7 a, 8..15 b.
WICK_AVX512 inline __m512 scale_pair(float a, float b) {
  return _mm512_insertf32x8(_mm512_set1_ps(a), _mm256_set1_ps(b), 1);
}

WICK_AVX512 inline float hsum_f32_avx512(__m512 v, __m256 tail) {
  const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
  return hsum_f32_avx2(_mm256_add_ps(h, tail));
}

// The quants of blocks i and i + 1 in block order, as quants_avx2 gives each.
WICK_AVX512 inline __m512i quants_pair_avx512(const BlockQ4_0& x0, const BlockQ4_0& x1) {
  const __m256i b = _mm256_set_m128i(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x1.qs)),
                                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(x0.qs)));
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  // [lo0 lo1 hi0 hi1] -> [lo0 hi0 lo1 hi1] in 16-byte lanes
  const __m512i n = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_and_si256(b, m4)),
                                       _mm256_and_si256(_mm256_srli_epi16(b, 4), m4), 1);
  return _mm512_sub_epi8(_mm512_shuffle_i64x2(n, n, _MM_SHUFFLE(3, 1, 2, 0)), _mm512_set1_epi8(8));
}
WICK_AVX512 inline __m512i quants_pair_avx512(const BlockQ8_0& x0, const BlockQ8_0& x1) {
  return pair256(x0.qs, x1.qs);
}

// Q4_0 or Q8_0 (B) against Q8_0, two blocks per vector; an odd last block in 32-byte vectors.
template <class B, int R>
WICK_AVX512 void q_0_avx512(size_t nb, const B* x, const BlockQ8_0* y, size_t ys, float* s) {
  __m512 acc[R];
  __m256 tail[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps(), tail[r] = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 2 <= nb; i += 2) {
    const __m512i q = quants_pair_avx512(x[i], x[i + 1]);
    const float d0 = h2f_avx512(x[i].d), d1 = h2f_avx512(x[i + 1].d);
    for (int r = 0; r < R; ++r) {
      const BlockQ8_0* b = y + r * ys + i;
      const __m512i a = pair256(b[0].qs, b[1].qs);
      const __m512 d = scale_pair(d0 * h2f_avx512(b[0].d), d1 * h2f_avx512(b[1].d));
      acc[r] = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(dot_i8_avx512(q, a)), acc[r]);
    }
  }
  if (i < nb) {
    const __m256i q = quants_avx2(x[i]);
    const float d0 = h2f_avx512(x[i].d);
    for (int r = 0; r < R; ++r) {
      const BlockQ8_0& b = y[r * ys + i];
      const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs));
      tail[r] =
          _mm256_mul_ps(_mm256_set1_ps(d0 * h2f_avx512(b.d)), _mm256_cvtepi32_ps(dot_i8_256_avx512(q, a)));
    }
  }
  for (int r = 0; r < R; ++r) s[r] = hsum_f32_avx512(acc[r], tail[r]);
}

// Four 16-byte pieces at p, p + stride, ... as one vector.
WICK_AVX512 inline __m512i four128(const uint8_t* p, size_t stride) {
  __m512i v = _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + stride)), 1);
  v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2 * stride)), 2);
  return _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 3 * stride)), 3);
}

// The f16 d of four Q4_0 blocks at p (18 bytes apart: words 0, 9, 18 and 27 of the
// 64 bytes at p), and of four Q8_0 blocks (34 bytes apart: words 0 and 17 of the 64
// bytes at p, 2 and 19 of the next 64; the blocks span 136 bytes), as floats.
WICK_AVX512 inline __m128 four_scales(const BlockQ4_0* p) {
  const __m512i idx = _mm512_castsi128_si512(_mm_setr_epi16(0, 9, 18, 27, 0, 0, 0, 0));
  const __m512i w = _mm512_permutexvar_epi16(idx, _mm512_loadu_si512(p));
  return _mm_cvtph_ps(_mm512_castsi512_si128(w));
}

WICK_AVX512 inline __m128i four_d(const BlockQ8_0* p) {
  const __m512i idx = _mm512_castsi128_si512(_mm_setr_epi16(0, 17, 32 + 2, 32 + 19, 0, 0, 0, 0));
  const __m512i a = _mm512_loadu_si512(p), b = _mm512_loadu_si512(reinterpret_cast<const uint8_t*>(p) + 64);
  return _mm512_castsi512_si128(_mm512_permutex2var_epi16(a, idx, b));
}
WICK_AVX512 inline __m128 four_scales(const BlockQ8_0* p) { return _mm_cvtph_ps(four_d(p)); }

// The quants of four blocks as unsigned bytes, each block's columns 0..15 in its
// 16-byte group of lo and 16..31 in hi, and the offset that makes them unsigned: Q4_0's
// nibbles as they are (offset 8), Q8_0's bytes plus 128 (a flipped top bit).
WICK_AVX512 inline void quad_quants(const BlockQ4_0* x, __m512i& lo, __m512i& hi) {
  const __m512i q = four128(x[0].qs, sizeof(BlockQ4_0)), m4 = _mm512_set1_epi8(0x0F);
  lo = _mm512_and_si512(q, m4);
  hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
}
// The quants of four Q8_0 blocks as stored, each block's 0..15 in its 16-byte group of
// lo and 16..31 in hi: blocks 0 and 1, 2 and 3 side by side ([lo0 hi0 lo1 hi1]), then
// their groups sorted (two 32-byte inserts and two shuffles against six 16-byte
// inserts: docs/PERFORMANCE.md).
WICK_AVX512 inline void quad_halves(const BlockQ8_0* x, __m512i& lo, __m512i& hi) {
  const __m512i a = pair256(x[0].qs, x[1].qs), b = pair256(x[2].qs, x[3].qs);
  lo = _mm512_shuffle_i64x2(a, b, _MM_SHUFFLE(2, 0, 2, 0));
  hi = _mm512_shuffle_i64x2(a, b, _MM_SHUFFLE(3, 1, 3, 1));
}
WICK_AVX512 inline void quad_quants(const BlockQ8_0* x, __m512i& lo, __m512i& hi) {
  const __m512i flip = _mm512_set1_epi8(char(0x80));
  quad_halves(x, lo, hi);
  lo = _mm512_xor_si512(lo, flip);
  hi = _mm512_xor_si512(hi, flip);
}
template <class B>
inline constexpr char kQuadOffset = std::is_same_v<B, BlockQ4_0> ? 8 : char(0x80);

// Q4_0 or Q8_0 (B) against Q8_0, four blocks per step: the weight's quants unsigned
// (quad_quants) for vpdpbusd against the activation's signed bytes, their offset taken
// off by a second vpdpbusd of it against them, so no sign transfer; the four blocks'
// scales from one word permute of their bytes per side, brought to their lanes by one
// more. (The pair kernel above built each pair's scales from scalar conversions and
// broadcasts: shuffle-port work that bound it on Intel cores, docs/PERFORMANCE.md.)
// Fewer than four blocks left: the pair kernel.
template <class B, int R>
WICK_AVX512 void q_0_quad_avx512(size_t nb, const B* x, const BlockQ8_0* y, size_t ys, float* s) {
  __m512 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
  const __m512i off = _mm512_set1_epi8(kQuadOffset<B>);
  const __m512i lane_block = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
  size_t i = 0;
  for (; i + 4 <= nb; i += 4) {
    __m512i lo, hi;
    quad_quants(x + i, lo, hi);
    const __m128 dx = four_scales(x + i);
    for (int r = 0; r < R; ++r) {
      const BlockQ8_0* b = y + r * ys + i;
      __m512i yl, yh;
      quad_halves(b, yl, yh);
      const __m512i t = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), lo, yl), hi, yh);
      const __m512i c = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), off, yl), off, yh);
      const __m128 d = _mm_mul_ps(dx, four_scales(b));
      const __m512 dz = _mm512_permutexvar_ps(lane_block, _mm512_castps128_ps512(d));
      acc[r] = _mm512_fmadd_ps(dz, _mm512_cvtepi32_ps(_mm512_sub_epi32(t, c)), acc[r]);
    }
  }
  float tail[R] = {};
  if (i < nb) q_0_avx512<B, R>(nb - i, x + i, y + i, ys, tail);
  for (int r = 0; r < R; ++r) s[r] = _mm512_reduce_add_ps(acc[r]) + tail[r];
}

// The activation's side of a step of q_0_quad_avx512 for four Q8_0 blocks: their
// quants in the four blocks' order (low and high 16 bytes) and minus the offset's dot
// with them (so the weight's sums start from it). The blocks' d follow all the steps
// of a row as floats (q_0_quad_prepare).
struct QuadAct {
  __m512i yl, yh, nc;
};

// The steps' QuadAct, then the d of their blocks (f32), for a Q8_0 row of nb blocks.
size_t quad_prep_bytes(size_t nb) { return nb / 4 * (sizeof(QuadAct) + 4 * sizeof(float)); }

template <class B>
WICK_AVX512 void q_0_quad_prepare(size_t nb, const BlockQ8_0* y, QuadAct* pa) {
  const __m512i off = _mm512_set1_epi8(kQuadOffset<B>);
  const size_t nq = nb / 4;
  for (size_t q = 0; q < nq; ++q) {
    QuadAct& p = pa[q];
    quad_halves(y + 4 * q, p.yl, p.yh);
    p.nc = _mm512_sub_epi32(
        _mm512_setzero_si512(),
        _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), off, p.yl), off, p.yh));
  }
  float* dy = reinterpret_cast<float*>(pa + nq);
  for (size_t j = 0; j < 4 * nq; ++j) dy[j] = h2f(y[j].d);
}

// The f16 d of the 16 blocks of four steps at x, in block order: Q4_0's from the 64
// bytes at each step (words 0, 9, 18, 27), two steps a permute; Q8_0's as four_scales
// reads them, a step a permute.
WICK_AVX512 inline __m256i sixteen_d(const BlockQ4_0* x) {
  static constexpr int16_t kIdx[32] = {0, 9, 18, 27, 32, 41, 50, 59};
  const __m512i idx = _mm512_loadu_si512(kIdx);
  const uint8_t* p = reinterpret_cast<const uint8_t*>(x);
  const __m512i a = _mm512_permutex2var_epi16(_mm512_loadu_si512(p), idx, _mm512_loadu_si512(p + 72));
  const __m512i b = _mm512_permutex2var_epi16(_mm512_loadu_si512(p + 144), idx, _mm512_loadu_si512(p + 216));
  return _mm256_inserti128_si256(_mm512_castsi512_si256(a), _mm512_castsi512_si128(b), 1);
}
WICK_AVX512 inline __m256i sixteen_d(const BlockQ8_0* x) {
  const __m128i a = _mm_unpacklo_epi64(four_d(x), four_d(x + 4));
  const __m128i b = _mm_unpacklo_epi64(four_d(x + 8), four_d(x + 12));
  return _mm256_inserti128_si256(_mm256_castsi128_si256(a), b, 1);
}

// Q4_0 or Q8_0 (B): n_w weight rows (nb blocks each, back to back) against one Q8_0
// row y and its prepared side pa, each row's arithmetic that of q_0_quad_avx512<B, 1>;
// the rows are read one after the other, one sequential stream. The weight's and the
// activation's d multiply 16 blocks at a time (one conversion, one multiply), each
// step's four taken to their lanes by a permute; the weight's sums start from the
// prepared -offset * sum(activation). Against the scales of each step converted and
// multiplied in their lanes and a subtract: a fifth fewer vector uops (llvm-mca's Ice
// Lake server model) and a fifth less prepared data (docs/PERFORMANCE.md).
template <class B>
WICK_AVX512 void q_0_quad_mv_avx512(size_t nb, const B* x, size_t n_w, const BlockQ8_0* y, const QuadAct* pa,
                                    float* s) {
  const size_t nq = nb / 4;
  const float* dy = reinterpret_cast<const float*>(pa + nq);
  __m512i lane_block[4];  // lanes 4k..4k+3: block 4i + k of 16
  for (int i = 0; i < 4; ++i)
    lane_block[i] = _mm512_add_epi32(_mm512_set1_epi32(4 * i),
                                     _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3));
  for (size_t r = 0; r < n_w; ++r, x += nb) {
    __m512 acc = _mm512_setzero_ps();
    auto step = [&](size_t q, __m512 dz) WICK_AVX512 {
      __m512i lo, hi;
      quad_quants(x + 4 * q, lo, hi);
      const __m512i t = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(pa[q].nc, lo, pa[q].yl), hi, pa[q].yh);
      acc = _mm512_fmadd_ps(dz, _mm512_cvtepi32_ps(t), acc);
    };
    size_t q = 0;
    for (; q + 4 <= nq; q += 4) {
      const __m512 d = _mm512_mul_ps(_mm512_cvtph_ps(sixteen_d(x + 4 * q)), _mm512_loadu_ps(dy + 4 * q));
      for (int i = 0; i < 4; ++i) step(q + i, _mm512_permutexvar_ps(lane_block[i], d));
    }
    for (; q < nq; ++q) {
      const __m128 d = _mm_mul_ps(four_scales(x + 4 * q), _mm_loadu_ps(dy + 4 * q));
      step(q, _mm512_permutexvar_ps(lane_block[0], _mm512_castps128_ps512(d)));
    }
    float tail = 0;
    if (4 * nq < nb) q_0_avx512<B, 1>(nb - 4 * nq, x + 4 * nq, y + 4 * nq, nb, &tail);
    s[r] = _mm512_reduce_add_ps(acc) + tail;
  }
}

// The activation's side of a Q4_K super-block (q4_k_block): its quants in the order
// of the weight's nibble vectors (a[2h]: low nibbles of half h, a[2h + 1]: high), the
// pair sums of its bsums in the upper 8 words of bsp (the lower 8 zero) and d.
struct K4Act {
  __m512i a[4];
  __m256i bsp;
  float d;
};

WICK_AVX512 inline void k4_act(const BlockQ8_K& y, K4Act& p) {
  for (int h = 0; h < 2; ++h) {
    p.a[2 * h] = pair256(y.qs + 128 * h, y.qs + 128 * h + 64);
    p.a[2 * h + 1] = pair256(y.qs + 128 * h + 32, y.qs + 128 * h + 96);
  }
  const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(y.bsums));
  const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(y.bsums + 8));
  p.bsp = _mm256_inserti128_si256(_mm256_setzero_si256(), _mm_hadd_epi16(lo, hi), 1);
  p.d = y.d;
}

// Q4_K's 8 scales (bytes 0..7) and 8 mins (bytes 8..15) of a super-block: ggml's
// unpacking of the 12-byte packing (scale_min_k4) on its three 32-bit words u0..u2, in
// vector lanes: scales 0..3 = u0 & 0x3f.., 4..7 = (u2 & 0x0f..) | (u0 >> 6 & 0x03..) << 4;
// mins 0..3 = u1 & 0x3f.., 4..7 = (u2 >> 4 & 0x0f..) | (u1 >> 6 & 0x03..) << 4; in each
// 128-bit half of u. k4_scales_mins2 and k4_scales_mins read 16 bytes at each block's
// scales (the quants follow them in the block).
WICK_AVX512 inline __m256i k4_unpack_scales_mins(__m256i u) {
  const __m256i a = _mm256_shuffle_epi32(u, _MM_SHUFFLE(2, 1, 2, 0));  // u0 u2 u1 u2
  const __m256i b = _mm256_shuffle_epi32(u, _MM_SHUFFLE(1, 1, 0, 0));  // u0 u0 u1 u1
  const __m256i even = _mm256_and_si256(a, _mm256_set1_epi32(0x3f3f3f3f));
  const __m256i lo4 = _mm256_and_si256(_mm256_srlv_epi32(a, _mm256_setr_epi32(0, 0, 0, 4, 0, 0, 0, 4)),
                                       _mm256_set1_epi32(0x0f0f0f0f));
  const __m256i hi2 =
      _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(b, 6), _mm256_set1_epi32(0x03030303)), 4);
  return _mm256_blend_epi32(even, _mm256_or_si256(lo4, hi2), 0xAA);
}
// Those of two super-blocks, one in each 128-bit half.
WICK_AVX512 inline __m256i k4_scales_mins2(const uint8_t* s0, const uint8_t* s1) {
  const __m128i u0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s0));
  const __m128i u1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s1));
  return k4_unpack_scales_mins(_mm256_inserti128_si256(_mm256_castsi128_si256(u0), u1, 1));
}
// Those of one, the same steps on 128 bits (the row kernel's: its 256-bit form cost
// qmatmul 3-4% at m = 8 and 64, docs/PERFORMANCE.md).
WICK_AVX512 inline __m128i k4_scales_mins(const uint8_t* scales) {
  const __m128i u = _mm_loadu_si128(reinterpret_cast<const __m128i*>(scales));
  const __m128i a = _mm_shuffle_epi32(u, _MM_SHUFFLE(2, 1, 2, 0));
  const __m128i b = _mm_shuffle_epi32(u, _MM_SHUFFLE(1, 1, 0, 0));
  const __m128i even = _mm_and_si128(a, _mm_set1_epi32(0x3f3f3f3f));
  const __m128i lo4 =
      _mm_and_si128(_mm_srlv_epi32(a, _mm_setr_epi32(0, 0, 0, 4)), _mm_set1_epi32(0x0f0f0f0f));
  const __m128i hi2 = _mm_slli_epi32(_mm_and_si128(_mm_srli_epi32(b, 6), _mm_set1_epi32(0x03030303)), 4);
  return _mm_blend_epi32(even, _mm_or_si128(lo4, hi2), 0xA);
}

// Byte shuffles that widen Q4_K's scales (k4_scales_mins, in every 128-bit lane) to the
// 16-bit lanes of nibble vector k = 2h + (0 low, 1 high): lanes 0..15 take the scale
// of sub-block 4h + k % 2, lanes 16..31 that of 4h + k % 2 + 2.
struct K4Shuffles {
  __m512i v[4];
  WICK_AVX512 K4Shuffles() {
    for (int k = 0; k < 4; ++k) {
      alignas(64) int8_t ix[64];
      for (int l = 0; l < 64; ++l)
        ix[l] = l % 2 ? int8_t(-128) : int8_t(4 * (k / 2) + k % 2 + (l < 32 ? 0 : 2));
      v[k] = _mm512_load_si512(ix);
    }
  }
};

// The scale sums of a Q4_K super-block w against p, per lane (sc: its scales and mins
// in every 128-bit lane).
WICK_AVX512 inline __m512i q4_k_sums(const BlockQ4_K& w, const K4Act& p, const K4Shuffles& sh, __m512i sc) {
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  __m512i sum = _mm512_setzero_si512();
  for (int h = 0; h < 2; ++h) {
    const __m512i b = _mm512_loadu_si512(w.qs + 64 * h);
    const __m512i lo = _mm512_and_si512(b, m4), hi = _mm512_and_si512(_mm512_srli_epi16(b, 4), m4);
    sum =
        _mm512_dpwssd_epi32(sum, _mm512_maddubs_epi16(lo, p.a[2 * h]), _mm512_shuffle_epi8(sc, sh.v[2 * h]));
    sum = _mm512_dpwssd_epi32(sum, _mm512_maddubs_epi16(hi, p.a[2 * h + 1]),
                              _mm512_shuffle_epi8(sc, sh.v[2 * h + 1]));
  }
  return sum;
}

// One Q4_K super-block against the activation's side p: the scale sums per lane times
// yd * d into accv, the min sums per lane times yd * dmin into accm; the row's dot is
// sum(accv) - sum(accm) (q4_k_finish). Every integer sum is exact; the float sums are
// those of the scalar kernel reassociated (one rounding per block and lane).
WICK_AVX512 inline void q4_k_block(const BlockQ4_K& w, const K4Act& p, const K4Shuffles& sh, __m512& accv,
                                   __m256& accm) {
  const __m128i scm = k4_scales_mins(w.scales);
  const __m512i sum = q4_k_sums(w, p, sh, _mm512_broadcast_i32x4(scm));
  // lanes 4..7: the min sum's partials (the scales meet bsp's zeros)
  const __m256i mins = _mm256_madd_epi16(_mm256_cvtepu8_epi16(scm), p.bsp);
  const __m128 dd =
      _mm_mul_ps(_mm_cvtph_ps(_mm_cvtsi32_si128(int(w.d | uint32_t(w.dmin) << 16))), _mm_set1_ps(p.d));
  accv = _mm512_fmadd_ps(_mm512_broadcastss_ps(dd), _mm512_cvtepi32_ps(sum), accv);
  accm = _mm256_fmadd_ps(_mm256_broadcastss_ps(_mm_movehdup_ps(dd)), _mm256_cvtepi32_ps(mins), accm);
}

// Two super-blocks w[0], w[1], with q4_k_block's arithmetic for each in turn: their
// scales and mins unpacked, their min sums and their d and dmin converted together (an
// eighth fewer uops a super-block than two q4_k_block: docs/PERFORMANCE.md).
WICK_AVX512 inline void q4_k_pair(const BlockQ4_K* w, const K4Act* p, const K4Shuffles& sh, __m512& accv,
                                  __m256& accm) {
  const __m256i scm = k4_scales_mins2(w[0].scales, w[1].scales);
  const __m512i scm512 = _mm512_castsi256_si512(scm);
  const __m512i sum0 = q4_k_sums(w[0], p[0], sh, _mm512_shuffle_i32x4(scm512, scm512, 0x00));
  const __m512i sum1 = q4_k_sums(w[1], p[1], sh, _mm512_shuffle_i32x4(scm512, scm512, 0x55));
  const __m512i bsp = _mm512_inserti64x4(_mm512_castsi256_si512(p[0].bsp), p[1].bsp, 1);
  const __m512 mins = _mm512_cvtepi32_ps(_mm512_madd_epi16(_mm512_cvtepu8_epi16(scm), bsp));
  // d0 dmin0 d1 dmin1, times the activations' d
  const __m128i dw = _mm_unpacklo_epi32(_mm_cvtsi32_si128(int(w[0].d | uint32_t(w[0].dmin) << 16)),
                                        _mm_cvtsi32_si128(int(w[1].d | uint32_t(w[1].dmin) << 16)));
  const __m128 yd =
      _mm_castpd_ps(_mm_unpacklo_pd(_mm_castps_pd(_mm_set1_ps(p[0].d)), _mm_castps_pd(_mm_set1_ps(p[1].d))));
  const __m512 dd = _mm512_castps128_ps512(_mm_mul_ps(_mm_cvtph_ps(dw), yd));
  accv = _mm512_fmadd_ps(_mm512_permutexvar_ps(_mm512_setzero_si512(), dd), _mm512_cvtepi32_ps(sum0), accv);
  accm = _mm256_fmadd_ps(_mm512_castps512_ps256(_mm512_permutexvar_ps(_mm512_set1_epi32(1), dd)),
                         _mm512_castps512_ps256(mins), accm);
  accv = _mm512_fmadd_ps(_mm512_permutexvar_ps(_mm512_set1_epi32(2), dd), _mm512_cvtepi32_ps(sum1), accv);
  accm = _mm256_fmadd_ps(_mm512_castps512_ps256(_mm512_permutexvar_ps(_mm512_set1_epi32(3), dd)),
                         _mm512_extractf32x8_ps(mins, 1), accm);
}

WICK_AVX512 inline float q4_k_finish(__m512 accv, __m256 accm) {
  return _mm512_reduce_add_ps(accv) - hsum_f32_avx2(accm);
}

// Q4_K against R Q8_K rows (the activation's side of each block built per row).
template <int R>
WICK_AVX512 void q4_k_avx512(size_t nb, const BlockQ4_K* x, const BlockQ8_K* y, size_t ys, float* s) {
  const K4Shuffles sh;
  __m512 accv[R];
  __m256 accm[R];
  for (int r = 0; r < R; ++r) accv[r] = _mm512_setzero_ps(), accm[r] = _mm256_setzero_ps();
  for (size_t i = 0; i < nb; ++i) {
    for (int r = 0; r < R; ++r) {
      K4Act p;
      k4_act(y[r * ys + i], p);
      q4_k_block(x[i], p, sh, accv[r], accm[r]);
    }
  }
  for (int r = 0; r < R; ++r) s[r] = q4_k_finish(accv[r], accm[r]);
}

WICK_AVX512 void q4_k_prepare(size_t nb, const BlockQ8_K* y, K4Act* pa) {
  for (size_t i = 0; i < nb; ++i) k4_act(y[i], pa[i]);
}

// Q4_K: n_w weight rows (nb super-blocks each, back to back) against the prepared side
// pa of one Q8_K row, each row's arithmetic that of q4_k_avx512<1>; the rows are read
// one after the other.
WICK_AVX512 void q4_k_mv_avx512(size_t nb, const BlockQ4_K* x, size_t n_w, const BlockQ8_K*, const K4Act* pa,
                                float* s) {
  const K4Shuffles sh;
  for (size_t r = 0; r < n_w; ++r, x += nb) {
    __m512 accv = _mm512_setzero_ps();
    __m256 accm = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 2 <= nb; i += 2) q4_k_pair(x + i, pa + i, sh, accv, accm);
    if (i < nb) q4_k_block(x[i], pa[i], sh, accv, accm);
    s[r] = q4_k_finish(accv, accm);
  }
}

// Q6_K half h (128 elements): vector 0 holds elements 0..63 (ql low nibbles of both
// 32-byte rows, qh bits 0-1 / 2-3), vector 1 elements 64..127 (high nibbles, bits 4-5 /
// 6-7). qh is read into both 256-bit halves and shifted by lane (4 / 2 left, 0 / 2 right).
WICK_AVX512 inline void q6_k_unpack_avx512(const uint8_t* ql, const uint8_t* qh, __m512i q[2]) {
  const __m512i m4 = _mm512_set1_epi8(0x0F), m30 = _mm512_set1_epi8(0x30);
  const __m512i shl = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);
  const __m512i shr = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1);
  const __m512i l = _mm512_loadu_si512(ql);
  const __m512i h = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh)));
  q[0] = _mm512_or_si512(_mm512_and_si512(l, m4), _mm512_and_si512(_mm512_sllv_epi16(h, shl), m30));
  q[1] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l, 4), m4),
                         _mm512_and_si512(_mm512_srlv_epi16(h, shr), m30));
}

// Q6_K against R Q8_K rows. Per super-block and row the integer sums stay in 16 lanes
// (the quants' bias of 32, sum_j scale_j * 32 * bsums_j, taken off the lower 8), which
// are scaled by yd * d into float lanes (one fma a block) and added up once per row:
// every integer sum is exact, the float sums are the scalar kernel's reassociated.
template <int R>
WICK_AVX512 void q6_k_avx512(size_t nb, const BlockQ6_K* x, const BlockQ8_K* y, size_t ys, float* s) {
  __m512 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
  // 16-bit lane l of vector v takes the scale of sub-block 4v + l / 8
  __m512i idx[4];
  for (int v = 0; v < 4; ++v) {
    alignas(64) int16_t ix[32];
    for (int l = 0; l < 32; ++l) ix[l] = int16_t(4 * v + l / 8);
    idx[v] = _mm512_load_si512(ix);
  }
  for (size_t i = 0; i < nb; ++i) {
    __m512i q[4], scl[4];
    q6_k_unpack_avx512(x[i].ql, x[i].qh, q);
    q6_k_unpack_avx512(x[i].ql + 64, x[i].qh + 32, q + 2);
    const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x[i].scales)));
    const __m512i sc512 = _mm512_castsi256_si512(sc16);
    for (int v = 0; v < 4; ++v) scl[v] = _mm512_permutexvar_epi16(idx[v], sc512);
    const float d = h2f_avx512(x[i].d);
    for (int r = 0; r < R; ++r) {
      const BlockQ8_K& b = y[r * ys + i];
      const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.bsums));
      __m512i sum = _mm512_zextsi256_si512(_mm256_slli_epi32(_mm256_madd_epi16(bs, sc16), 5));
      sum = _mm512_sub_epi32(_mm512_setzero_si512(), sum);
      for (int v = 0; v < 4; ++v) {
        const __m512i a = _mm512_loadu_si512(b.qs + 64 * v);
        sum = _mm512_dpwssd_epi32(sum, _mm512_maddubs_epi16(q[v], a), scl[v]);
      }
      acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(b.d * d), _mm512_cvtepi32_ps(sum), acc[r]);
    }
  }
  for (int r = 0; r < R; ++r) s[r] = _mm512_reduce_add_ps(acc[r]);
}

// Q6_K: n_w weight rows against one Q8_K row, one after the other (the activation is
// read as it is stored: nothing to prepare).
struct NoPrep {};
WICK_AVX512 void q6_k_prepare(size_t, const BlockQ8_K*, NoPrep*) {}
WICK_AVX512 void q6_k_mv_avx512(size_t nb, const BlockQ6_K* x, size_t n_w, const BlockQ8_K* y, const NoPrep*,
                                float* s) {
  for (size_t r = 0; r < n_w; ++r) q6_k_avx512<1>(nb, x + r * nb, y, nb, s + r);
}

// One level's kernels, by block size of the type: nb = n / block.
template <class B, class A, void (*K4)(size_t, const B*, const A*, size_t, float*),
          void (*K1)(size_t, const B*, const A*, size_t, float*), int kBlock>
void entry(size_t n, const void* w, const void* act, size_t ny, float* s) {
  row_groups<B, A, K4, K1>(n / kBlock, w, act, ny, s);
}

// Q8_0's quantizer (quantize_q8_0) a block at a time: amax, d = amax / 127,
// id = 1 / d and roundf(x * id) in the same single-precision operations, roundf's
// halves away from zero by truncation and the exact remainder.
WICK_AVX512 void quantize_q8_0_avx512(const float* x, void* out, size_t n) {
  auto* y = static_cast<BlockQ8_0*>(out);
  const __m512 abs_mask = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fffffff));
  const __m512 half = _mm512_set1_ps(0.5f), one = _mm512_set1_ps(1.0f);
  for (size_t i = 0; i < n / kQK8_0; ++i, x += kQK8_0) {
    const __m512 v0 = _mm512_loadu_ps(x), v1 = _mm512_loadu_ps(x + 16);
    const float amax =
        _mm512_reduce_max_ps(_mm512_max_ps(_mm512_and_ps(v0, abs_mask), _mm512_and_ps(v1, abs_mask)));
    const float d = amax / ((1 << 7) - 1);
    const float id = d ? 1.0f / d : 0.0f;
    y[i].d = f2h(d);
    const __m512 ids = _mm512_set1_ps(id);
    __m512i q[2];
    for (int h = 0; h < 2; ++h) {
      const __m512 v = _mm512_mul_ps(h ? v1 : v0, ids);
      const __m512 t = _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
      const __mmask16 up = _mm512_cmp_ps_mask(_mm512_and_ps(_mm512_sub_ps(v, t), abs_mask), half, _CMP_GE_OQ);
      // t + copysign(1, v) where the remainder reaches a half
      const __m512 r = _mm512_mask_add_ps(t, up, t, _mm512_or_ps(one, _mm512_andnot_ps(abs_mask, v)));
      q[h] = _mm512_cvttps_epi32(r);
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y[i].qs), _mm512_cvtepi32_epi8(q[0]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y[i].qs + 16), _mm512_cvtepi32_epi8(q[1]));
  }
}

// Q8_K's quantizer (quantize_q8_k) a block at a time: the first element of largest
// magnitude, iscale = -127 / it, min(127, nearest_int(iscale * x)) (round to nearest
// even: the conversion's default mode) and the 16 sums of 16.
WICK_AVX512 void quantize_q8_k_avx512(const float* x, void* out, size_t n) {
  auto* y = static_cast<BlockQ8_K*>(out);
  const __m512 abs_mask = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fffffff));
  for (size_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
    __m512 m = _mm512_setzero_ps();
    for (int g = 0; g < 16; ++g) m = _mm512_max_ps(m, _mm512_and_ps(_mm512_loadu_ps(x + 16 * g), abs_mask));
    const float amax = _mm512_reduce_max_ps(m);
    if (!amax) {
      std::memset(&y[i], 0, sizeof(BlockQ8_K));
      continue;
    }
    int first = 0;
    for (int g = 0; g < 16; ++g) {
      const __mmask16 k = _mm512_cmp_ps_mask(_mm512_and_ps(_mm512_loadu_ps(x + 16 * g), abs_mask),
                                             _mm512_set1_ps(amax), _CMP_EQ_OQ);
      if (k) {
        first = 16 * g + __builtin_ctz(k);
        break;
      }
    }
    const float iscale = -127.f / x[first];
    const __m512 is = _mm512_set1_ps(iscale);
    for (int g = 0; g < 16; ++g) {
      const __m512i q = _mm512_min_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(is, _mm512_loadu_ps(x + 16 * g))),
                                         _mm512_set1_epi32(127));
      const __m128i q8 = _mm512_cvtepi32_epi8(q);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(y[i].qs + 16 * g), q8);
      // summed as the stored bytes: where iscale is infinite (a block of subnormals) the
      // products convert out of range and only their low bytes are the scalar quantizer's
      y[i].bsums[g] = int16_t(_mm512_reduce_add_epi32(_mm512_cvtepi8_epi32(q8)));
    }
    y[i].d = 1 / iscale;
  }
}

// A mat-vec kernel of nb blocks a row, with its activation side P (Bytes(nb) bytes), as
// a MatVec.
template <class B, class A, class P, int kBlock, size_t (*Bytes)(size_t), void (*Prep)(size_t, const A*, P*),
          void (*Run)(size_t, const B*, size_t, const A*, const P*, float*)>
MatVec mat_vec_of() {
  MatVec m;
  m.prep_bytes = [](size_t n) { return Bytes(n / kBlock); };
  m.prepare = [](size_t n, const void* act, void* prep) {
    Prep(n / kBlock, static_cast<const A*>(act), static_cast<P*>(prep));
  };
  m.run = [](size_t n, const void* w, size_t n_w, const void* act, const void* prep, float* s) {
    Run(n / kBlock, static_cast<const B*>(w), n_w, static_cast<const A*>(act), static_cast<const P*>(prep),
        s);
  };
  return m;
}

// A P a block (none where P is empty).
template <class P>
size_t per_block(size_t nb) {
  return std::is_empty_v<P> ? 0 : nb * sizeof(P);
}

}  // namespace

VecDot vec_dot_simd(GgmlType t, cpu::Isa level) {
  if (level == cpu::Isa::Avx512) {
    switch (t) {
      case GgmlType::Q4_0:
        return entry<BlockQ4_0, BlockQ8_0, q_0_quad_avx512<BlockQ4_0, 4>, q_0_quad_avx512<BlockQ4_0, 1>,
                     kQK4_0>;
      case GgmlType::Q8_0:
        return entry<BlockQ8_0, BlockQ8_0, q_0_quad_avx512<BlockQ8_0, 4>, q_0_quad_avx512<BlockQ8_0, 1>,
                     kQK8_0>;
      case GgmlType::Q4_K:
        return entry<BlockQ4_K, BlockQ8_K, q4_k_avx512<4>, q4_k_avx512<1>, kQK_K>;
      case GgmlType::Q6_K:
        return entry<BlockQ6_K, BlockQ8_K, q6_k_avx512<4>, q6_k_avx512<1>, kQK_K>;
      default:
        return nullptr;
    }
  }
  if (level == cpu::Isa::Avx2) {
    switch (t) {
      case GgmlType::Q4_0:
        return entry<BlockQ4_0, BlockQ8_0, q_0_avx2<BlockQ4_0, 4>, q_0_avx2<BlockQ4_0, 1>, kQK4_0>;
      case GgmlType::Q8_0:
        return entry<BlockQ8_0, BlockQ8_0, q_0_avx2<BlockQ8_0, 4>, q_0_avx2<BlockQ8_0, 1>, kQK8_0>;
      case GgmlType::Q4_K:
        return entry<BlockQ4_K, BlockQ8_K, q4_k_avx2<4>, q4_k_avx2<1>, kQK_K>;
      case GgmlType::Q6_K:
        return entry<BlockQ6_K, BlockQ8_K, q6_k_avx2<4>, q6_k_avx2<1>, kQK_K>;
      default:
        return nullptr;
    }
  }
  return nullptr;
}

QuantizeFn quantize_simd(GgmlType t, cpu::Isa level) {
  if (level != cpu::Isa::Avx512) return nullptr;
  if (t == GgmlType::Q8_0) return quantize_q8_0_avx512;
  if (t == GgmlType::Q8_K) return quantize_q8_k_avx512;
  return nullptr;
}

MatVec mat_vec_simd(GgmlType t, cpu::Isa level) {
  if (level != cpu::Isa::Avx512) return {};
  switch (t) {
    case GgmlType::Q4_0:
      return mat_vec_of<BlockQ4_0, BlockQ8_0, QuadAct, kQK4_0, quad_prep_bytes, q_0_quad_prepare<BlockQ4_0>,
                        q_0_quad_mv_avx512<BlockQ4_0>>();
    case GgmlType::Q8_0:
      return mat_vec_of<BlockQ8_0, BlockQ8_0, QuadAct, kQK8_0, quad_prep_bytes, q_0_quad_prepare<BlockQ8_0>,
                        q_0_quad_mv_avx512<BlockQ8_0>>();
    case GgmlType::Q4_K:
      return mat_vec_of<BlockQ4_K, BlockQ8_K, K4Act, kQK_K, per_block<K4Act>, q4_k_prepare, q4_k_mv_avx512>();
    case GgmlType::Q6_K:
      return mat_vec_of<BlockQ6_K, BlockQ8_K, NoPrep, kQK_K, per_block<NoPrep>, q6_k_prepare,
                        q6_k_mv_avx512>();
    default:
      return {};
  }
}

#else

VecDot vec_dot_simd(GgmlType, cpu::Isa) { return nullptr; }
QuantizeFn quantize_simd(GgmlType, cpu::Isa) { return nullptr; }
MatVec mat_vec_simd(GgmlType, cpu::Isa) { return {}; }

#endif  // WICK_X86

}  // namespace wick::quant
