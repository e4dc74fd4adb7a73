// The f16 GEMM of AVX-512 CPUs (gemm.h, gemm_f16). oneDNN 2.6 has no f16 GEMM for
// CPUs, and widening both whole operands to f32 for its f32 GEMM, then rounding the
// product back, costs passes over memory and, with k running down the columns of B
// (x W^T), oneDNN's slower f32 path (docs/PERFORMANCE.md, CPU f16 GEMM). Here the
// operands are widened one block of k at a time as they are packed, and the product
// is rounded to f16 in registers.
//
// The scheme is BLIS's, threaded for a machine whose threads the system may slow. For
// each block of k (kKc), the threads widen A into micro-panels of kMr rows (rows kLda
// floats apart, so that the kernel broadcasts A's elements at constant offsets) and B
// into micro-panels of kNr columns (kKc rows of kNr floats). Then they take items of C
// (kMc x kNi) in turn, a thread left behind leaving its items to the others, and, in
// the same parallel region, widen the next block of k into a second set of panels.
// The micro-kernel multiplies one micro-panel of each into kMr x kNr sums in
// registers. With k > kKc the partial sums wait in f32 for the next block of k.
#include <algorithm>
#include <cstring>
#include <vector>

#include "backend/cpu/cpu_storage.h"
#include "backend/cpu/gemm.h"
#include "backend/cpu/isa.h"
#include "backend/cpu/strided.h"

namespace wick::cpu {

#if WICK_X86

namespace {

constexpr size_t kMr = 12;   // rows of a micro-tile: 24 of the 32 vector registers accumulate
constexpr size_t kNr = 32;   // columns of a micro-tile: two vectors
constexpr size_t kKc = 256;  // k of a block: a micro-panel of B (kKc x kNr floats: 32 KiB) in L1
// Floats between the rows of a micro-panel of A: a row and a cache line, so that the
// kernel's kMr rows do not fall into the same few sets of L1.
constexpr size_t kLda = kKc + 16;
constexpr size_t kMc = 96;   // rows of an item of C: its block of A (kMc x kLda floats) in L2
constexpr size_t kNi = 128;  // columns of an item of C

// Where a micro-tile's sums go. first: no partial sums yet; last: the final block of
// k (the result is rounded to f16 into c), else the sums wait in part (f32).
struct Dest {
  f16* c;
  size_t ldc;
  float* part;
  size_t ldp;
  bool first, last;
};

WICK_AVX512 inline __mmask16 mask16(size_t n) {
  return n >= 16 ? __mmask16(0xffff) : __mmask16((1u << n) - 1);
}

// acc(kMr x kNr) = a (kMr rows at kLda apart) * b (kc rows of kNr), then stored to d's
// rows i0.., columns j0.. (mr x nr of them valid).
WICK_AVX512 void micro_kernel(size_t kc, const float* a, const float* b, size_t mr, size_t nr, const Dest& d,
                              size_t i0, size_t j0) {
  __m512 acc[kMr][2];
#pragma GCC unroll 12
  for (size_t i = 0; i < kMr; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  for (size_t p = 0; p < kc; ++p) {
    const __m512 b0 = _mm512_load_ps(b + p * kNr), b1 = _mm512_load_ps(b + p * kNr + 16);
#pragma GCC unroll 12
    for (size_t i = 0; i < kMr; ++i) {
      const __m512 ai = _mm512_set1_ps(a[i * kLda + p]);
      acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
    }
  }
  const __mmask16 m0 = mask16(nr), m1 = mask16(nr > 16 ? nr - 16 : 0);
#pragma GCC unroll 12
  for (size_t i = 0; i < kMr; ++i) {
    if (i >= mr) break;
    float* part = d.part ? d.part + (i0 + i) * d.ldp + j0 : nullptr;  // none when k fits one block
    __m512 v0 = acc[i][0], v1 = acc[i][1];
    if (!d.first) {
      v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, part));
      v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, part + 16));
    }
    if (d.last) {
      f16* c = d.c + (i0 + i) * d.ldc + j0;
      _mm256_mask_storeu_epi16(c, m0, _mm512_cvtps_ph(v0, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      _mm256_mask_storeu_epi16(c + 16, m1,
                               _mm512_cvtps_ph(v1, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    } else {
      _mm512_mask_storeu_ps(part, m0, v0);
      _mm512_mask_storeu_ps(part + 16, m1, v1);
    }
  }
}

// n f16 at src (element stride s) widened into dst[0, n), dst[n, n_pad) zeroed.
WICK_AVX512 void widen_run(const f16* src, size_t s, size_t n, float* dst, size_t n_pad) {
  size_t j = 0;
  if (s == 1) {
    for (; j < n; j += 16) {
      const __mmask16 m = mask16(n - j);
      _mm512_storeu_ps(dst + j, _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, src + j)));
    }
    j = std::min(j, n_pad);
  } else {
    for (; j < n; ++j) dst[j] = float(src[j * s]);
  }
  for (; j < n_pad; ++j) dst[j] = 0.0f;
}

// A 16 x 16 block of f16 widened and transposed: row x of the block at src + x * ld
// (rows x < rows and columns < cols read, the rest taken as zeros); column y becomes
// the 16 floats at dst + y * ld_dst, for y < out_rows.
WICK_AVX512 void widen_transpose16(const f16* src, size_t ld, size_t rows, size_t cols, float* dst,
                                   size_t ld_dst, size_t out_rows) {
  __m512 r[16], t[16];
  const __mmask16 m = mask16(cols);
#pragma GCC unroll 16
  for (size_t x = 0; x < 16; ++x)
    r[x] = x < rows ? _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, src + x * ld)) : _mm512_setzero_ps();
#pragma GCC unroll 8
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
    r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xee);
    r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xee);
  }
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    const int a = (i / 4) * 8 + (i % 4);
    t[a] = _mm512_shuffle_f32x4(r[a], r[a + 4], 0x88);
    t[a + 4] = _mm512_shuffle_f32x4(r[a], r[a + 4], 0xdd);
  }
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
  }
#pragma GCC unroll 16
  for (size_t y = 0; y < 16; ++y)
    if (y < out_rows) _mm512_storeu_ps(dst + y * ld_dst, r[y]);
}

// An operand: element (i, j) at p[i * rs + j * cs].
struct Operand {
  const f16* p;
  size_t rs, cs;
};

// Rows [i0, i0 + mr) (mr <= kMr) x k [p0, p0 + kc) of A into one micro-panel: kMr
// rows kLda floats apart (rows past mr: zeros; k past kc is never read).
WICK_AVX512 void pack_a(const Operand& a, size_t i0, size_t mr, size_t p0, size_t kc, float* dst) {
  if (a.cs != 1 && a.rs == 1) {
    // k runs down the columns: 16 x 16 blocks (k x i) widened and transposed.
    for (size_t q = 0; q < kc; q += 16)
      widen_transpose16(a.p + (p0 + q) * a.cs + i0, a.cs, std::min<size_t>(16, kc - q), mr, dst + q, kLda,
                        kMr);
    return;
  }
  for (size_t r = 0; r < kMr; ++r) {
    float* out = dst + r * kLda;
    if (r < mr)
      widen_run(a.p + (i0 + r) * a.rs + p0 * a.cs, a.cs, kc, out, kc);
    else
      std::memset(out, 0, kc * sizeof(float));
  }
}

// k [p0, p0 + kc) x columns [j0, j0 + nc) (nc <= kNr) of B into one micro-panel: kc
// rows of kNr floats (columns past nc: zeros).
WICK_AVX512 void pack_b(const Operand& b, size_t p0, size_t kc, size_t j0, size_t nc, float* dst) {
  if (b.cs != 1 && b.rs == 1) {
    // k runs down the columns (B given as the transpose of a row-major matrix): 16 x 16
    // blocks (j x k) widened and transposed.
    for (size_t h = 0; h < kNr; h += 16) {
      const size_t nj = h < nc ? std::min<size_t>(16, nc - h) : 0;
      for (size_t q = 0; q < kc; q += 16) {
        const size_t nq = std::min<size_t>(16, kc - q);
        // Columns past nc (nj 0) read nothing: any pointer into B serves.
        const f16* src = nj ? b.p + (j0 + h) * b.cs + p0 + q : b.p;
        widen_transpose16(src, b.cs, nj, nq, dst + q * kNr + h, kNr, nq);
      }
    }
    return;
  }
  for (size_t p = 0; p < kc; ++p) widen_run(b.p + (p0 + p) * b.rs + j0 * b.cs, b.cs, nc, dst + p * kNr, kNr);
}

}  // namespace

bool gemm_f16(size_t m, size_t n, size_t k, const f16* a, size_t rsa, size_t csa, const f16* b, size_t rsb,
              size_t csb, f16* c, size_t ldc) {
  if (isa() < Isa::Avx512) return false;
  if (m == 0 || n == 0) return true;
  if (k == 0) {
    for (size_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, f16(0.0f));
    return true;
  }
  const Operand oa{a, rsa, csa}, ob{b, rsb, csb};
  const size_t mp = (m + kMr - 1) / kMr, np = (n + kNr - 1) / kNr;  // micro-panels
  // A product below a few threads' worth (2^22 multiply-adds) runs on the caller alone.
  const bool threads = double(m) * double(n) * double(k) >= double(1 << 22);
  // Two sets of one block of k of A and of B, widened (the threads fill one while they
  // multiply from the other), and the partial sums; from wick's allocator: 64-byte
  // aligned, and kept between calls, so not faulted in anew each time.
  const size_t a_len = mp * kMr * kLda, b_len = np * kKc * kNr, sets = threads && k > kKc ? 2 : 1;
  const auto abuf = cpu_alloc(sets * a_len, DType::F32), bbuf = cpu_alloc(sets * b_len, DType::F32);
  const auto pbuf = k > kKc ? cpu_alloc(m * n, DType::F32) : nullptr;
  float* part = pbuf ? pbuf->data<float>() : nullptr;
  // Micro-panels [lo, hi) (A's, then B's) of the block of k at pc, into set `set`.
  auto pack = [&](size_t pc, size_t set, size_t lo, size_t hi) {
    const size_t kc = std::min(kKc, k - pc);
    float* ap = abuf->data<float>() + set * a_len;
    float* bp = bbuf->data<float>() + set * b_len;
    for (size_t t = lo; t < hi; ++t) {
      if (t < mp) {
        pack_a(oa, t * kMr, std::min(kMr, m - t * kMr), pc, kc, ap + t * kMr * kLda);
      } else {
        const size_t j = (t - mp) * kNr;
        pack_b(ob, pc, kc, j, std::min(kNr, n - j), bp + (t - mp) * kKc * kNr);
      }
    }
  };
  // Items of C (kMc rows x kNi columns) [lo, hi) of the block of k at pc, from set `set`.
  const size_t mi = (m + kMc - 1) / kMc, ni = (n + kNi - 1) / kNi;
  auto multiply = [&](size_t pc, size_t set, size_t lo, size_t hi) {
    const size_t kc = std::min(kKc, k - pc);
    const float* ap = abuf->data<float>() + set * a_len;
    const float* bp = bbuf->data<float>() + set * b_len;
    const Dest d{c, ldc, part, n, pc == 0, pc + kc >= k};
    for (size_t t = lo; t < hi; ++t) {
      const size_t i0 = (t / ni) * kMc, i1 = std::min(m, i0 + kMc);
      const size_t j0 = (t % ni) * kNi, j1 = std::min(n, j0 + kNi);
      for (size_t j = j0; j < j1; j += kNr)
        for (size_t i = i0; i < i1; i += kMr)
          micro_kernel(kc, ap + (i / kMr) * kMr * kLda, bp + (j / kNr) * kKc * kNr, std::min(kMr, i1 - i),
                       std::min(kNr, j1 - j), d, i, j);
    }
  };
  if (!threads) {
    for (size_t pc = 0; pc < k; pc += kKc) {
      pack(pc, 0, 0, mp + np);
      multiply(pc, 0, 0, mi * ni);
    }
    return true;
  }
  // One parallel region a block of k: its items of C, then the packing of the next
  // block in pairs of micro-panels. The threads take the items of C in turn (a thread
  // the system slows leaves its items to the others), and a thread done with its items
  // packs, so packing fills the tail of the region instead of a region of its own.
  parallel_for(mp + np, 2, [&](size_t lo, size_t hi) { pack(0, 0, lo, hi); });
  const size_t items = mi * ni, pairs = (mp + np + 1) / 2;
  std::vector<size_t> order;
  for (size_t pc = 0, set = 0; pc < k; pc += kKc, set ^= 1) {
    const size_t next = pc + kKc < k ? pairs : 0, tasks = items + next;
    // Each thread's share (strided.h: parallel_chunks) holds its items first, then its
    // pairs of micro-panels.
    const size_t nt = std::min<size_t>(tasks, size_t(max_threads()));
    order.clear();
    for (size_t s = 0; s < nt; ++s) {
      for (size_t t = items * s / nt; t < items * (s + 1) / nt; ++t) order.push_back(t);
      for (size_t q = next * s / nt; q < next * (s + 1) / nt; ++q) order.push_back(items + q);
    }
    parallel_chunks(tasks, 1, [&](size_t lo, size_t hi) {
      for (size_t x = lo; x < hi; ++x) {
        const size_t t = order[x];
        if (t < items)
          multiply(pc, set, t, t + 1);
        else
          pack(pc + kKc, set ^ 1, 2 * (t - items), std::min(mp + np, 2 * (t - items) + 2));
      }
    });
  }
  return true;
}

#else

bool gemm_f16(size_t, size_t, size_t, const f16*, size_t, size_t, const f16*, size_t, size_t, f16*, size_t) {
  return false;
}

#endif

}  // namespace wick::cpu
