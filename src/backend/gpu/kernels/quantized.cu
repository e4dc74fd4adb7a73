// QUANTIZED family (issue 5): ggml block types on the GPU.
//   dequantize_{type}_{f32|f16|bf16}(n, src, out): n elements of packed rows of
//       ggml type `type` (q4_0 ... q8_K, f32, f16, bf16) to floats, equal to the CPU's
//       dequantize_row (then one rounding to f16/bf16).
//   quantize_q8_1_{f32|f16|bf16}(m, k, k_pad, x, out): rows of x (m, k) to Q8_1
//       rows of k_pad elements (k rounded up to 512, ggml's MATRIX_ROW_PADDING; the
//       padding quantizes zeros), the reference algorithm of quantize_row_q8_1.
//   mmvq_{type}_b{B}(n, k, row_threads, w, w_row_bytes, act, act_row_bytes, out):
//       out (B, n) f32 = B Q8_1 activation rows times n weight rows, int8 dot
//       products (wick_dp4a); row_threads threads per weight row, 16 elements each per step.
//   quantize_q8_1s_p{P}_{f32|f16|bf16}(m, k, k_pad, x, qs, ds): the same Q8_1 values
//       in a split layout for the mmvqs kernels: qs (m, k_pad) int8 with each group of
//       32 or 256 columns permuted by P (perm_pos below) so that every lane of a
//       mmvqs kernel reads its activation bytes as whole 16-byte words, adjacent lanes
//       adjacent words; ds (m, k_pad / 32) words of (f16 d, f16 s) per 32 columns.
//   mmvqs_{q4_0|q8_0|q4_K|q6_K}_b{B}(n, k, w, w_row_bytes, qs, ds, k_pad, out): the
//       mat-vec of those types on split activations: one wave per weight row, each
//       lane reading a fixed slice of a block (lanes of a block read adjacent words,
//       so a wave's load covers few cache lines), several slices' loads issued
//       before their dot products.
//   mmvqw_{q4_0|q8_0|q4_K|q6_K}_{f32|f16|bf16}(n, k, k_pad, w, x, out): one row of
//       x, one launch (the batch-1 default where k is a multiple of the round width
//       and rows are whole 16-byte words): each block quantizes x into shared memory;
//       teams of 32 lanes own ranges of rows, copied in tiles of rounds (1024 or
//       2048 columns) into shared memory by cp.async, several tiles in flight, each
//       lane taking one part of a round (a whole Q4_0 / Q8_0 block, a Q4_K sub-block
//       pair, a Q6_K mmvqs slice) (bench/results/2026-11-21-h200-session4).
//   dequantize_{q4_0|q8_0|q4_K|q6_K}_*: 16 elements of one block per thread
//       (dequantize16), the other types 8 elements per thread.
#include "quantized.cuh"
#include "wave.cuh"

namespace wk::q {

template <class T>
__device__ __forceinline__ void store_f(T* p, float v) {
  if constexpr (std::is_same_v<T, float>) {
    *p = v;
  } else if constexpr (std::is_same_v<T, f16s>) {
    p->bits = f32_to_f16(v);
  } else {
    p->bits = f32_to_bf16(v);
  }
}

template <class T>
__device__ __forceinline__ float load_f(const T* p) {
  if constexpr (std::is_same_v<T, float>) {
    return *p;
  } else if constexpr (std::is_same_v<T, f16s>) {
    return f16_to_f32(p->bits);
  } else {
    return bf16_to_f32(p->bits);
  }
}

// Each thread writes 8 consecutive outputs (one 16-byte store for f16/bf16).
template <int Q, class T>
__device__ void dequantize(size_t n, const uint8_t* src, T* out) {
  constexpr int kQK = Traits<Q>::kQK;
  constexpr size_t kBytes = sizeof(typename Traits<Q>::Block);
  const size_t items = (n + 7) / 8;
  for (size_t it = size_t(blockIdx.x) * blockDim.x + threadIdx.x; it < items;
       it += size_t(gridDim.x) * blockDim.x) {
    const size_t e0 = it * 8;
    alignas(16) T v[8];
#pragma unroll
    for (int t = 0; t < 8; ++t) {
      const size_t e = e0 + t;
      float f = 0.f;
      if (kQK > 1 || e < n) f = deq<Q>(src + (e / kQK) * kBytes, int(e % kQK));
      store_f(&v[t], f);
    }
    if (e0 + 8 <= n) {
      if constexpr (sizeof(T) == 2) {
        *reinterpret_cast<uint4*>(out + e0) = *reinterpret_cast<const uint4*>(v);
      } else {
        reinterpret_cast<uint4*>(out + e0)[0] = reinterpret_cast<const uint4*>(v)[0];
        reinterpret_cast<uint4*>(out + e0)[1] = reinterpret_cast<const uint4*>(v)[1];
      }
    } else {
#pragma unroll
      for (int t = 0; t < 8; ++t)
        if (e0 + t < n) out[e0 + t] = v[t];
    }
  }
}

// Q4_0, Q8_0, Q4_K and Q6_K: each thread decodes 16 consecutive elements of one
// block (unpack16: the block's scale decoded once), each element then by the CPU's
// own expression (deq above) so results stay equal to it.
template <int Q>
__device__ __forceinline__ float deq16(const Chunk16& c, uint32_t q) {
  if constexpr (Q == kQ4_0) {
    return float(int(q) - 8) * c.scale;
  } else if constexpr (Q == kQ8_0) {
    return float(int8_t(q)) * c.scale;
  } else if constexpr (Q == kQ4_K) {
    return c.scale * float(q) - (-c.min);  // d1 * q - m1
  } else {                                 // kQ6_K: d * sc * (q - 32)
    return c.scale * float(int(q) - 32);
  }
}

template <int Q, class T>
__device__ void dequantize16(size_t n, const uint8_t* src, T* out) {
  constexpr int kQK = Traits<Q>::kQK;
  constexpr size_t kBytes = sizeof(typename Traits<Q>::Block);
  const size_t items = n / 16;  // n is a whole number of blocks
  for (size_t it = size_t(blockIdx.x) * blockDim.x + threadIdx.x; it < items;
       it += size_t(gridDim.x) * blockDim.x) {
    const size_t e0 = it * 16;
    const Chunk16 c = unpack16<Q>(src + (e0 / kQK) * kBytes, int(e0 % kQK));
    alignas(16) T v[16];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
      for (int b = 0; b < 4; ++b) store_f(&v[4 * i + b], deq16<Q>(c, (uint32_t(c.q[i]) >> (8 * b)) & 0xFFu));
    }
    uint4* o = reinterpret_cast<uint4*>(out + e0);  // 16 elements: 32 or 64 bytes, 16-byte aligned
    const uint4* s = reinterpret_cast<const uint4*>(v);
#pragma unroll
    for (int i = 0; i < int(16 * sizeof(T) / 16); ++i) o[i] = s[i];
  }
}

// The (f16 d, f16 d * sum) word of a Q8_1 group.
__device__ __forceinline__ uint32_t ds_word(float d, int sum) {
  return uint32_t(f32_to_f16(d)) | uint32_t(f32_to_f16(float(sum) * d)) << 16;
}

// The reference Q8_1 values of a column v, one lane a column, 32 aligned lanes a
// group (every lane of the wave calls): the lane's quant, the group's d and sum of quants.
struct Q81Lane {
  int q, sum;
  float d;
};
__device__ __forceinline__ Q81Lane q8_1_lane(float v) {
  const float amax = group_allreduce(fabsf(v), 32, [](float a, float b) { return fmaxf(a, b); });
  const float d = amax / 127.f;
  const float id = d != 0.f ? 1.f / d : 0.f;
  const int q = int(roundf(v * id));
  return Q81Lane{q, group_allreduce(q, 32, [](int a, int b) { return a + b; }), d};
}

// One thread per element of the padded rows; 32 aligned lanes make one block.
template <class T>
__device__ void quantize_q8_1(size_t m, size_t k, size_t k_pad, const T* x, uint8_t* out) {
  const size_t total = m * k_pad;  // a multiple of 512: every wave is wholly in or out
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += size_t(gridDim.x) * blockDim.x) {
    const size_t r = i / k_pad, c = i % k_pad;
    const Q81Lane l = q8_1_lane(c < k ? load_f(x + r * k + c) : 0.f);
    BlockQ8_1* blk = reinterpret_cast<BlockQ8_1*>(out + r * (k_pad / 32) * sizeof(BlockQ8_1)) + c / 32;
    blk->qs[c % 32] = int8_t(l.q);
    if (c % 32 == 0) {
      blk->d = f32_to_f16(l.d);
      blk->s = f32_to_f16(float(l.sum) * l.d);
    }
  }
}

// `row_threads` threads (whole waves, dividing blockDim.x) share one weight row,
// each taking 16 elements per step; partial sums meet through the waves' shuffles
// and, for a row wider than a wave, shared memory.
template <int Q, int B>
__device__ void mmvq(int n, int k, int row_threads, const uint8_t* w, size_t w_row_bytes, const uint8_t* act,
                     size_t act_row_bytes, float* out) {
  __shared__ float partial[kMaxWaves][B];
  const int wave = warpSize, lane = int(threadIdx.x) % wave, wave_id = int(threadIdx.x) / wave;
  const int t = int(threadIdx.x) % row_threads;
  const int row = int(blockIdx.x) * (int(blockDim.x) / row_threads) + int(threadIdx.x) / row_threads;
  const bool valid = row < n;  // no early return: the block synchronizes below
  const uint8_t* wr = w + size_t(valid ? row : 0) * w_row_bytes;
  float acc[B];
#pragma unroll
  for (int b = 0; b < B; ++b) acc[b] = 0.f;
  for (int e = t * 16; valid && e < k; e += row_threads * 16) {
    const Chunk16 c = unpack16<Q>(wr, e);
#pragma unroll
    for (int b = 0; b < B; ++b) {
      const BlockQ8_1* ab = reinterpret_cast<const BlockQ8_1*>(act + size_t(b) * act_row_bytes) + e / 32;
      const int* a = reinterpret_cast<const int*>(ab->qs + e % 32);  // 4-byte aligned (36-byte blocks)
      int sq = 0, sa = 0;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int ai = a[i];
        sq = wick_dp4a(c.q[i], ai, sq);
        sa = wick_dp4a(0x01010101, ai, sa);
      }
      acc[b] += h2f(ab->d) * (c.scale * float(sq) + c.min * float(sa));
    }
  }
#pragma unroll
  for (int b = 0; b < B; ++b) acc[b] = group_allreduce(acc[b], wave, [](float x, float y) { return x + y; });
  if (row_threads > wave) {
    if (lane == 0) {
#pragma unroll
      for (int b = 0; b < B; ++b) partial[wave_id][b] = acc[b];
    }
    __syncthreads();
    if (t == 0) {
      const int w0 = wave_id, nw = row_threads / wave;
#pragma unroll
      for (int b = 0; b < B; ++b) {
        float s = partial[w0][b];
        for (int i = 1; i < nw; ++i) s += partial[w0 + i][b];
        acc[b] = s;
      }
    }
  }
  if (valid && t == 0) {
#pragma unroll
    for (int b = 0; b < B; ++b) out[size_t(b) * size_t(n) + size_t(row)] = acc[b];
  }
}

// ---- split-layout activations and the mmvqs kernels ------------------------------------------
// Column permutations of the split activations, one per weight layout (P), within
// groups of 32 (P1) or 256 (P2, P3) columns; P0 keeps the order.
//   P1 (q4_0): lane h of a block takes qs bytes 8h..8h+7, i.e. columns 8h..8h+7
//       (low nibbles) and 16+8h..16+8h+7 (high): stored at 16h..16h+15.
//   P2 (q4_K): lane j of a block takes qs bytes 16j..16j+15 of its 128, i.e.
//       columns 64g+l (low nibbles) and 64g+32+l (high), g = j/2, l = 16(j%2)+i:
//       low ones at 16j+i, high ones at 128+16j+i.
//   P3 (q6_K): lane j = 4h + l/8 takes columns 128h+32kk+l..l+7 for kk = 0..3:
//       kk = 0, 1 at 16j+8kk+i, kk = 2, 3 at 128+16j+8(kk-2)+i.
template <int P>
__device__ __forceinline__ size_t perm_pos(size_t c) {
  if constexpr (P == 0) {
    return c;
  } else if constexpr (P == 1) {
    const size_t e = c % 32, half = e / 16, l = e % 16;
    return c - e + 16 * (l / 8) + 8 * half + l % 8;
  } else if constexpr (P == 2) {
    const size_t e = c % 256, g = e / 64, r = e % 64, hi = r / 32, l = r % 32;
    return c - e + 128 * hi + 16 * (2 * g + l / 16) + l % 16;
  } else {
    const size_t e = c % 256, h = e / 128, r = e % 128, kk = r / 32, l = r % 32;
    return c - e + 128 * (kk / 2) + 16 * (4 * h + l / 8) + 8 * (kk % 2) + l % 8;
  }
}

// The reference Q8_1 quantizer of quantize_q8_1 above, written to the split layout.
template <int P, class T>
__device__ void quantize_q8_1s(size_t m, size_t k, size_t k_pad, const T* x, int8_t* qs, uint32_t* ds) {
  const size_t total = m * k_pad;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += size_t(gridDim.x) * blockDim.x) {
    const size_t r = i / k_pad, c = i % k_pad;
    const Q81Lane l = q8_1_lane(c < k ? load_f(x + r * k + c) : 0.f);
    qs[r * k_pad + perm_pos<P>(c)] = int8_t(l.q);
    if (c % 32 == 0) ds[i / 32] = ds_word(l.d, l.sum);
  }
}

// Elements c..c+3 of x as floats; vec: x is 16-byte aligned (c a multiple of 4).
template <class T>
__device__ __forceinline__ void load4(const T* __restrict__ x, int c, bool vec, float (&f)[4]) {
  if (vec) {
    if constexpr (sizeof(T) == 4) {
      const float4 t = *reinterpret_cast<const float4*>(x + c);
      f[0] = t.x, f[1] = t.y, f[2] = t.z, f[3] = t.w;
    } else {
      const uint2 t = *reinterpret_cast<const uint2*>(x + c);
      T h[4];
      __builtin_memcpy(h, &t, sizeof(t));
#pragma unroll
      for (int i = 0; i < 4; ++i) f[i] = load_f(h + i);
    }
  } else {
#pragma unroll
    for (int i = 0; i < 4; ++i) f[i] = load_f(x + c + i);
  }
}

// f16 bits to float in one conversion where the hardware has it (same value as h2f).
__device__ __forceinline__ float hf(uint32_t h) {
#if defined(WICK_HW_HALF_CVT)
  return __half2float(__ushort_as_half((unsigned short)(h & 0xFFFFu)));
#else
  return f16_to_f32(uint16_t(h));
#endif
}

// One row x (k elements; zeros up to k_pad) quantized into shared memory for mmvqw
// (sq: k_pad bytes in column order but for the swizzle, sd: k_pad / 32 float pairs):
// the reference's values (amax of the group, d = amax / 127, q = round(v / d), the
// sum of q), 4 threads per 32-column group, 8 columns each. Every thread of the
// block calls it (blockDim.x a multiple of the wave). Swz, for mmvqw's readers whose
// lanes read 16-byte words of x at a 32- or 64-byte stride: 1 swaps the two 16-byte
// halves of the 32-column groups whose index has bit 2 set, 2 XORs the 16-byte word
// index within each 64 columns with bits 7..8 of the column, 3 XORs bits 1..2 of
// the 16-byte word index with bits 7..8 of the column, so that the eight lanes of
// one 16-byte shared-memory access hit distinct banks. J: quads a thread has in
// flight (4 for long rows; 1 where one pass of the block covers the row). The group's
// (d, s) go to sd as floats (d, S * s) of the reference's f16 values (no conversions
// per block in the readers; S = -8 gives Q4_0 its offset term).
// `issued()` runs once, after the thread's first loads of x are issued and before
// any arithmetic (mmvqw issues weight tiles there, behind x's loads).
template <int Swz, int J, int S, class T, class F>
__device__ void quantize_row_shared(int k, int k_pad, const T* __restrict__ x, int8_t* sq, float2* sd,
                                    F&& issued) {
  bool called = false;
  const bool vec = (reinterpret_cast<uintptr_t>(x) & 15u) == 0;
  const int quads = k_pad / 8, bd = int(blockDim.x);
  // k_pad / 8 is a multiple of 64: whole waves take each quad, so the 4-lane groups
  // below shuffle with every lane present. J quads a thread at a time, their loads
  // issued before any arithmetic (x comes from L2 or HBM).
  for (int t0 = int(threadIdx.x); t0 < quads; t0 += J * bd) {
    float f[J][8];
#pragma unroll
    for (int j = 0; j < J; ++j) {
      const int c0 = 8 * (t0 + j * bd);
      if (c0 + 8 <= k) {
        load4(x, c0, vec, *reinterpret_cast<float(*)[4]>(f[j]));
        load4(x, c0 + 4, vec, *reinterpret_cast<float(*)[4]>(f[j] + 4));
      } else {
#pragma unroll
        for (int i = 0; i < 8; ++i) f[j][i] = c0 + i < k ? load_f(x + c0 + i) : 0.f;
      }
    }
    if (!called) {
      issued();
      called = true;
    }
#pragma unroll
    for (int j = 0; j < J; ++j) {
      const int t = t0 + j * bd;
      if (t >= quads) break;  // the same for the whole wave
      float amax = 0.f;
#pragma unroll
      for (int i = 0; i < 8; ++i) amax = fmaxf(amax, fabsf(f[j][i]));
      amax = group_allreduce(amax, 4, [](float a, float b) { return fmaxf(a, b); });
      const float d = amax / 127.f;
      const float id = d != 0.f ? 1.f / d : 0.f;
      int sum = 0;
      uint32_t word[2] = {0u, 0u};
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const int q = int(roundf(f[j][i] * id));
        sum += q;
        word[i / 4] |= uint32_t(q & 0xFF) << (8 * (i % 4));
      }
      sum = group_allreduce(sum, 4, [](int a, int b) { return a + b; });
      int pos = 8 * t;
      if (Swz == 1) pos ^= ((pos >> 7) & 1) << 4;
      if (Swz == 2) pos ^= ((pos >> 7) & 3) << 4;
      if (Swz == 3) pos ^= ((pos >> 7) & 3) << 5;
      *reinterpret_cast<uint2*>(sq + pos) = make_uint2(word[0], word[1]);
      if (t % 4 == 0) {
        const uint32_t dw = ds_word(d, sum);
        sd[t / 4] = make_float2(hf(dw), float(S) * hf(dw >> 16));
      }
    }
  }
  if (!called) issued();
}

// A read-only load (the non-coherent path on NVIDIA); G = false: a plain load (the
// pointer may be to shared memory).
template <class T, bool G = true>
__device__ __forceinline__ T ldg(const T* p) {
#if defined(WICK_VENDOR_HIP)
  return *p;
#else
  if constexpr (G) {
    return __ldg(p);
  } else {
    return *p;
  }
#endif
}

// The 32 bits of (hi:lo) >> sh, sh in [0, 32): one funnel shift.
__device__ __forceinline__ uint32_t funnel_r(uint32_t lo, uint32_t hi, int sh) {
#if defined(WICK_VENDOR_HIP)
  return __builtin_amdgcn_alignbit(hi, lo, uint32_t(sh));
#else
  return __funnelshift_r(lo, hi, uint32_t(sh));
#endif
}

// N little-endian words from a 2-byte aligned address in a buffer that starts
// 4-byte aligned: aligned 32-bit loads only (one more when the address is not
// itself 4-byte aligned), so nothing outside the 4-byte words holding the N words
// is touched.
template <int N, bool G = true>
__device__ __forceinline__ void ldw(const uint8_t* p, uint32_t (&o)[N]) {
  // Pointer arithmetic (not an integer round trip) keeps a shared-memory pointer
  // known as one: shared loads, not generic ones.
  const int mis = int(reinterpret_cast<uintptr_t>(p) & 3u);  // 0 or 2
  const bool odd = mis != 0;
  const uint32_t* a = reinterpret_cast<const uint32_t*>(p - mis);
  uint32_t r[N + 1];
#pragma unroll
  for (int i = 0; i < N; ++i) r[i] = ldg<uint32_t, G>(a + i);
  r[N] = odd ? ldg<uint32_t, G>(a + N) : 0u;
#pragma unroll
  for (int i = 0; i < N; ++i) o[i] = funnel_r(r[i], r[i + 1], 8 * mis);
}
template <bool G = true>
__device__ __forceinline__ uint32_t ldh(const uint8_t* p) {
  return ldg<uint16_t, G>(reinterpret_cast<const uint16_t*>(p));
}
// Activation words: plain loads (the pointer may be to shared memory).
__device__ __forceinline__ int4 ld_act(const int8_t* p) { return *reinterpret_cast<const int4*>(p); }

// One lane's slice of a block: its raw words, loaded before any arithmetic.
template <int Q>
struct Slice;
// Q4_0 / Q8_0 blocks read as two slices of 16 columns, one a lane: slice p takes
// quant bytes 8 (p % 2).. of block p / 2 (Q4_0: columns 8 h.. and 16 + 8 h.., h = p
// % 2; Q8_0: columns 16 h..), its activation part at 16 p in the split layout.
template <int Q>
struct Half {
  static_assert(Q == kQ4_0 || Q == kQ8_0, "Half: Q4_0 and Q8_0 only");
  static constexpr int kCols = 16;  // activation: perm_pos P1 (Q4_0), P0 (Q8_0)
  static constexpr int kWords = Q == kQ4_0 ? 2 : 4;  // raw quant words a lane
  uint32_t q[kWords], d;
  template <bool G = true>
  __device__ __forceinline__ void load(const uint8_t* row, int p) {
    const uint8_t* blk = row + size_t(p / 2) * sizeof(typename Traits<Q>::Block);
    ldw<kWords, G>(blk + 2 + 4 * kWords * (p % 2), q);
    d = ldh<G>(blk);
  }
  // Sum over the slice of w * a (a: the activation row's split qs and ds).
  __device__ __forceinline__ float dot(int p, const int8_t* qs, const uint32_t* ds) const {
    const int4 v = ld_act(qs + 16 * size_t(p));
    const int a[4] = {v.x, v.y, v.z, v.w};
    // int8 words in the activation's order: Q8_0 as stored; Q4_0 low nibbles of both
    // raw words, then the high ones (the split P1 order).
    uint32_t u[4];
    if constexpr (Q == kQ4_0) {
      u[0] = q[0] & 0x0F0F0F0Fu, u[1] = q[1] & 0x0F0F0F0Fu;
      u[2] = (q[0] >> 4) & 0x0F0F0F0Fu, u[3] = (q[1] >> 4) & 0x0F0F0F0Fu;
    } else {
      u[0] = q[0], u[1] = q[1], u[2] = q[2], u[3] = q[3];
    }
    int s = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) s = wick_dp4a(int(u[i]), a[i], s);
    const uint32_t da = ds[p / 2];
    if constexpr (Q == kQ4_0) {
      // value = d * (q - 8): the -8 * d * sum(a) term once per block, by its first slice.
      const float m = p % 2 == 0 ? 8.f * hf(da >> 16) : 0.f;
      return hf(d) * (hf(da) * float(s) - m);
    } else {
      return hf(d) * (hf(da) * float(s));
    }
  }
};
template <>
struct Slice<kQ4_0> : Half<kQ4_0> {};
template <>
struct Slice<kQ8_0> : Half<kQ8_0> {};
template <>
struct Slice<kQ4_K> {  // 8 lanes per block, 32 columns each; blocks 16-byte aligned
  static constexpr int kCols = 32;  // activation: perm_pos P2
  uint4 h, q;  // the block's header (d, dmin, 12 scale bytes) and qs bytes 16j..16j+15
  template <bool G = true>
  __device__ __forceinline__ void load(const uint8_t* row, int p) {
    const uint4* blk = reinterpret_cast<const uint4*>(row + size_t(p / 8) * sizeof(BlockQ4_K));
    h = ldg<uint4, G>(blk);
    q = ldg<uint4, G>(blk + 1 + p % 8);
  }
  __device__ __forceinline__ float dot(int p, const int8_t* qs, const uint32_t* ds) const {
    const int j = p % 8, g = j / 2;
    const int8_t* a0 = qs + 256 * size_t(p / 8) + 16 * j;
    const int4 lo = ld_act(a0), hi = ld_act(a0 + 128);
    int sl = wick_dp4a(int(q.x & 0x0F0F0F0Fu), lo.x, 0);
    sl = wick_dp4a(int(q.y & 0x0F0F0F0Fu), lo.y, sl);
    sl = wick_dp4a(int(q.z & 0x0F0F0F0Fu), lo.z, sl);
    sl = wick_dp4a(int(q.w & 0x0F0F0F0Fu), lo.w, sl);
    int sh = wick_dp4a(int((q.x >> 4) & 0x0F0F0F0Fu), hi.x, 0);
    sh = wick_dp4a(int((q.y >> 4) & 0x0F0F0F0Fu), hi.y, sh);
    sh = wick_dp4a(int((q.z >> 4) & 0x0F0F0F0Fu), hi.z, sh);
    sh = wick_dp4a(int((q.w >> 4) & 0x0F0F0F0Fu), hi.w, sh);
    // scale_min_k4 of sub-blocks 2g (low nibbles) and 2g+1 (high): two bytes each.
    const int sft = 16 * (g % 2);
    uint32_t sc, mn;
    if (g < 2) {
      sc = (h.y >> sft) & 0x3F3Fu;
      mn = (h.z >> sft) & 0x3F3Fu;
    } else {
      sc = ((h.w >> sft) & 0x0F0Fu) | (((h.y >> sft) >> 2) & 0x3030u);
      mn = ((h.w >> sft >> 4) & 0x0F0Fu) | (((h.z >> sft) >> 2) & 0x3030u);
    }
    const uint32_t da0 = ds[8 * size_t(p / 8) + 2 * g], da1 = ds[8 * size_t(p / 8) + 2 * g + 1];
    const float v = float(sc & 0xFFu) * hf(da0) * float(sl) + float(sc >> 8) * hf(da1) * float(sh);
    // value = d * sc * q - dmin * m: the min term once per sub-block pair, by the even lane.
    const float m = j % 2 == 0
                        ? hf(h.x >> 16) * (float(mn & 0xFFu) * hf(da0 >> 16) + float(mn >> 8) * hf(da1 >> 16))
                        : 0.f;
    return hf(h.x) * v - m;
  }
};
template <>
struct Slice<kQ6_K> {  // 8 lanes per block, 32 columns each
  static constexpr int kCols = 32;  // activation: perm_pos P3
  uint32_t a[2], b[2], hb[2], s[2], d;  // ql words (kk = 0/2, 1/3), qh words, scale bytes, d
  template <bool G = true>
  __device__ __forceinline__ void load(const uint8_t* row, int p) {
    const uint8_t* blk = row + size_t(p / 8) * sizeof(BlockQ6_K);
    const int j = p % 8, h = j / 4, l = 8 * (j % 4);
    ldw<2, G>(blk + 64 * h + l, a);
    ldw<2, G>(blk + 64 * h + 32 + l, b);
    ldw<2, G>(blk + 128 + 32 * h + l, hb);
    ldw<2, G>(blk + 192 + 8 * h, s);
    d = ldh<G>(blk + 208);
  }
  // Six-bit quants (ql nibble | qh bits << 4) minus 32, as signed bytes.
  __device__ __forceinline__ static int q6(uint32_t ql, int lsh, uint32_t qh, int hsh) {
    const uint32_t q = ((ql >> lsh) & 0x0F0F0F0Fu) | (((qh >> hsh) & 0x03030303u) << 4);
    return int(((q | 0x80808080u) - 0x20202020u) ^ 0x80808080u);
  }
  __device__ __forceinline__ float dot(int p, const int8_t* qs, const uint32_t* ds) const {
    const int j = p % 8, h = j / 4, l = 8 * (j % 4);
    const int8_t* a0 = qs + 256 * size_t(p / 8) + 16 * j;
    const int4 x01 = ld_act(a0), x23 = ld_act(a0 + 128);
    const int s0 = wick_dp4a(q6(a[1], 0, hb[1], 0), x01.y, wick_dp4a(q6(a[0], 0, hb[0], 0), x01.x, 0));
    const int s1 = wick_dp4a(q6(b[1], 0, hb[1], 2), x01.w, wick_dp4a(q6(b[0], 0, hb[0], 2), x01.z, 0));
    const int s2 = wick_dp4a(q6(a[1], 4, hb[1], 4), x23.y, wick_dp4a(q6(a[0], 4, hb[0], 4), x23.x, 0));
    const int s3 = wick_dp4a(q6(b[1], 4, hb[1], 6), x23.w, wick_dp4a(q6(b[0], 4, hb[0], 6), x23.z, 0));
    // scales[8h + 2kk + l/16]: bytes l/16 + 2kk of the 8 loaded from 8h.
    const int o = 8 * (l / 16);
    const float c0 = float(int8_t(s[0] >> o)), c1 = float(int8_t(s[0] >> (o + 16)));
    const float c2 = float(int8_t(s[1] >> o)), c3 = float(int8_t(s[1] >> (o + 16)));
    const uint4 da = *reinterpret_cast<const uint4*>(ds + 8 * size_t(p / 8) + 4 * h);
    return hf(d) * (c0 * hf(da.x) * float(s0) + c1 * hf(da.y) * float(s1) + c2 * hf(da.z) * float(s2) +
                    c3 * hf(da.w) * float(s3));
  }
};

// One wave per weight row; lane `lane` takes slices lane, lane + wave, ... of the
// row, U of them loaded before their dot products (fewer for more activation rows,
// which hold more accumulators).
template <int Q, int B>
__device__ void mmvqs(int n, int k, const uint8_t* __restrict__ w, size_t w_row_bytes,
                      const int8_t* __restrict__ qs, const uint32_t* __restrict__ ds, size_t k_pad,
                      float* __restrict__ out) {
  using S = Slice<Q>;
  constexpr int U = B == 1 ? 4 : B == 2 ? 2 : 1;
  const int wave = warpSize, lane = int(threadIdx.x) % wave;
  const int row = int(blockIdx.x) * (int(blockDim.x) / wave) + int(threadIdx.x) / wave;
  if (row >= n) return;  // whole waves only; nothing below synchronizes the block
  const uint8_t* wr = w + size_t(row) * w_row_bytes;
  const int slices = k / S::kCols;
  float acc[B];
#pragma unroll
  for (int b = 0; b < B; ++b) acc[b] = 0.f;
  for (int p0 = lane; p0 < slices; p0 += U * wave) {
    S sl[U];
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (p0 + u * wave < slices) sl[u].load(wr, p0 + u * wave);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (p0 + u * wave < slices) {
#pragma unroll
        for (int b = 0; b < B; ++b) acc[b] += sl[u].dot(p0 + u * wave, qs + b * k_pad, ds + b * (k_pad / 32));
      }
    }
  }
#pragma unroll
  for (int b = 0; b < B; ++b) acc[b] = group_allreduce(acc[b], wave, [](float x, float y) { return x + y; });
  if (lane == 0) {
#pragma unroll
    for (int b = 0; b < B; ++b) out[size_t(b) * size_t(n) + size_t(row)] = acc[b];
  }
}

// The wave's lanes see each other's shared-memory stores after it.
__device__ __forceinline__ void wave_sync() {
#if defined(WICK_VENDOR_HIP)
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront");
  __builtin_amdgcn_wave_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront");
#else
  __syncwarp();
#endif
}

// ---- mmvqw: batch 1 in one launch, teams of 32 lanes streaming rounds ---------------------
// A team is 32 lanes (a warp on NVIDIA, half a wave on CDNA): its sizes and strides
// are compile-time constants. A round is 1024 columns of one weight row, one part a
// lane: a whole block for Q4_0 / Q8_0 (WholeLane below), an mmvqs slice for Q4_K /
// Q6_K (8 lanes a block, 4 blocks). A team owns the rows [g n / G, (g+1) n / G), whose
// bytes are contiguous: it streams them as tiles of kT rounds, plain coalesced
// 16-byte loads (kW a lane) into registers one tile ahead, each tile stored to the
// team's shared-memory buffer and read back by the lanes' parts. A row's sum stays
// in the lanes until its last round, then one reduction over the team (deterministic).
constexpr int kTeam = 32;

// Q4_0 / Q8_0: lane l takes block l of a round (18 or 34 bytes at 18 l / 34 l: 2-byte
// aligned). It reads the aligned words covering the block, d from the first; the
// quants come out as whole words by one byte permutation each (odd lanes: the words
// after the first; even lanes: shifted by two bytes). The activation (natural order,
// halves swizzled as quantize_row_shared's Swz) is read at per-lane constant offsets.
template <int Q>
struct WholeLane {
  static_assert(Q == kQ4_0 || Q == kQ8_0, "WholeLane: Q4_0 and Q8_0 only");
  static constexpr int kBytes = int(sizeof(typename Traits<Q>::Block)), kQw = Q == kQ4_0 ? 4 : 8;
  int a0, dsh, x0, x1;
  uint32_t sel;
  __device__ __forceinline__ explicit WholeLane(int l) {
    const int o = kBytes * l, odd = (o >> 1) & 1;
    a0 = o - 2 * odd;  // the 4-byte word holding d
    dsh = 16 * odd;
    sel = odd ? 0x7654u : 0x5432u;
    const int sw = 16 * ((l >> 2) & 1);
    x0 = 32 * l + sw;  // columns 0..15 of the lane's group
    x1 = 32 * l + 16 - sw;
  }
  // The lane's block of the round at `round` (shared memory) times the activation's
  // 1024 columns at xq (quants) and xd ((d, S * s) pairs).
  __device__ __forceinline__ float dot(const uint8_t* round, const int8_t* xq, const float2* xd) const {
    const uint32_t* p = reinterpret_cast<const uint32_t*>(round + a0);
    uint32_t w[kQw + 1];
#pragma unroll
    for (int i = 0; i <= kQw; ++i) w[i] = p[i];
    const int4 lo = *reinterpret_cast<const int4*>(xq + x0), hi = *reinterpret_cast<const int4*>(xq + x1);
    const int xa[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
    const float2 ds = xd[x0 / 32];
    int s0 = 0, s1 = 0;  // two chains of dependent dot products
    if constexpr (Q == kQ4_0) {
      // byte i: column i (low nibble), column 16 + i (high); value d * (q - 8).
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const uint32_t q = __byte_perm(w[i], w[i + 1], sel);
        s0 = wick_dp4a(int(q & 0x0F0F0F0Fu), xa[i], s0);
        s1 = wick_dp4a(int((q >> 4) & 0x0F0F0F0Fu), xa[4 + i], s1);
      }
      return hf(w[0] >> dsh) * fmaf(ds.x, float(s0 + s1), ds.y);  // ds.y = -8 * s
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        s0 = wick_dp4a(int(__byte_perm(w[i], w[i + 1], sel)), xa[i], s0);
        s1 = wick_dp4a(int(__byte_perm(w[i + 4], w[i + 5], sel)), xa[i + 4], s1);
      }
      return hf(w[0] >> dsh) * (ds.x * float(s0 + s1));
    }
  }
};

// Q4_K: 4 lanes a block, 8 blocks a round of 2048 columns. Lane l takes sub-blocks
// 2j, 2j + 1 (j = l % 4) of block l / 4: qs bytes 32j..32j+31, low nibbles columns
// 64j + i, high ones 64j + 32 + i; their 6-bit scales and mins decoded without
// branches. The activation: natural order, 16-byte words swizzled (Swz 2); (d, s)
// pairs as floats.
struct K4Lane {
  int hb, qb, x[4], sh, s2;
  bool hi;
  __device__ __forceinline__ explicit K4Lane(int l) {
    const int b = l >> 2, j = l & 3, sw = (l >> 1) & 3;
    hb = 144 * b;
    qb = 144 * b + 16 + 32 * j;
#pragma unroll
    for (int c = 0; c < 4; ++c) x[c] = 64 * l + 16 * (c ^ sw);
    sh = 16 * (j & 1);
    hi = j >= 2;
    s2 = hi ? 2 : 0;
  }
  __device__ __forceinline__ float dot(const uint8_t* round, const int8_t* xq, const float2* xd, int l) const {
    const uint4 h = *reinterpret_cast<const uint4*>(round + hb);
    const uint4 q0 = *reinterpret_cast<const uint4*>(round + qb), q1 = *reinterpret_cast<const uint4*>(round + qb + 16);
    int4 a[4];
#pragma unroll
    for (int c = 0; c < 4; ++c) a[c] = *reinterpret_cast<const int4*>(xq + x[c]);
    const float4 ds = *reinterpret_cast<const float4*>(xd + 2 * l);  // (d, s) of sub-blocks 2j, 2j + 1
    const uint32_t qw[8] = {q0.x, q0.y, q0.z, q0.w, q1.x, q1.y, q1.z, q1.w};
    const int xa[16] = {a[0].x, a[0].y, a[0].z, a[0].w, a[1].x, a[1].y, a[1].z, a[1].w,
                        a[2].x, a[2].y, a[2].z, a[2].w, a[3].x, a[3].y, a[3].z, a[3].w};
    int lo0 = 0, lo1 = 0, hi0 = 0, hi1 = 0;  // four chains of dependent dot products
#pragma unroll
    for (int i = 0; i < 8; i += 2) {
      lo0 = wick_dp4a(int(qw[i] & 0x0F0F0F0Fu), xa[i], lo0);
      lo1 = wick_dp4a(int(qw[i + 1] & 0x0F0F0F0Fu), xa[i + 1], lo1);
      hi0 = wick_dp4a(int((qw[i] >> 4) & 0x0F0F0F0Fu), xa[8 + i], hi0);
      hi1 = wick_dp4a(int((qw[i + 1] >> 4) & 0x0F0F0F0Fu), xa[9 + i], hi1);
    }
    // get_scale_min_k4 of sub-blocks 2j, 2j + 1 (one byte each): j < 2: scales[2j..]
    // & 63 and scales[2j + 4..] & 63; j >= 2: low 4 bits from scales[2j + 4..], high
    // 2 from bits 6..7 of scales[2j - 4..] (the scale) or scales[2j..] (the min).
    const uint32_t A = h.y >> sh, B = h.z >> sh, Cc = h.w >> sh;
    const uint32_t X = hi ? Cc : A, Y = hi ? Cc >> 4 : B;
    const uint32_t sc = (X & 0x0F0Fu) | ((A >> s2) & 0x3030u), mn = (Y & 0x0F0Fu) | ((B >> s2) & 0x3030u);
    // value = d * sc * q - dmin * m
    const float v = float(sc & 0xFFu) * ds.x * float(lo0 + lo1) + float(sc >> 8) * ds.z * float(hi0 + hi1);
    const float m = float(mn & 0xFFu) * ds.y + float(mn >> 8) * ds.w;
    return hf(h.x) * v - hf(h.x >> 16) * m;
  }
};

// Q6_K: 4 lanes a block, 8 blocks a round of 2048 columns (1680 bytes: odd blocks
// start 2 bytes off a word, so every piece is read as the aligned words around it
// and one byte permutation a word, as WholeLane does). Lane l takes half h = p / 2,
// e = p % 2 (p = l % 4) of block l / 4: ql bytes 64h + 16e.. (A) and 64h + 32 +
// 16e.. (B), qh bytes 32h + 16e.., i.e. columns 128h + 16e + 32c + i for c = 0..3
// (A low nibbles, B low, A high, B high; qh bits 2c..2c+1), each 16-column group
// with its scale byte 8h + e + 2c. q - 32 as the dot of q minus 32 times the sum of
// x (a dot product with 0x20 bytes). The activation: natural order, 16-byte words
// swizzled (Swz 3); (d, s) pairs as floats.
struct K6Lane {
  int a0, b0, h0, s0, d0, x[4], dsx, esh, dsh;
  uint32_t sel;
  __device__ __forceinline__ explicit K6Lane(int l) {
    const int b = l >> 2, p = l & 3, h = p >> 1, e = p & 1;
    const int blk = 210 * b, mis = blk & 2;  // 0 or 2
    sel = mis ? 0x5432u : 0x3210u;
    dsh = 8 * mis;
    a0 = blk + 64 * h + 16 * e - mis;  // aligned word starts of the pieces
    b0 = a0 + 32;
    h0 = blk + 128 + 32 * h + 16 * e - mis;
    s0 = blk + 192 + 8 * h - mis;
    d0 = blk + 208 - mis;
    const int sw = ((2 * b + h) & 3) << 1;
#pragma unroll
    for (int c = 0; c < 4; ++c) x[c] = 16 * ((16 * b + 8 * h + 2 * c + e) ^ sw);
    dsx = 8 * b + 4 * h;  // (d, s) pairs of groups 8b + 4h + c
    esh = 8 * e;
  }
  // The 16 bytes at p0 + (2 if the block is odd) as four words.
  __device__ __forceinline__ void piece(const uint8_t* p0, uint32_t (&o)[4]) const {
    const uint32_t* w = reinterpret_cast<const uint32_t*>(p0);
    uint32_t r[5];
#pragma unroll
    for (int i = 0; i < 5; ++i) r[i] = w[i];
#pragma unroll
    for (int i = 0; i < 4; ++i) o[i] = __byte_perm(r[i], r[i + 1], sel);
  }
  __device__ __forceinline__ float dot(const uint8_t* round, const int8_t* xq, const float2* xd) const {
    uint32_t qa[4], qb[4], qh[4];
    piece(round + a0, qa);
    piece(round + b0, qb);
    piece(round + h0, qh);
    const uint32_t* sp = reinterpret_cast<const uint32_t*>(round + s0);
    const uint32_t sw0 = sp[0], sw1 = sp[1], sw2 = sp[2];
    const uint32_t slo = __byte_perm(sw0, sw1, sel), shi = __byte_perm(sw1, sw2, sel);  // scales 8h..8h+7
    const uint32_t dw = *reinterpret_cast<const uint32_t*>(round + d0) >> dsh;
    int4 a[4];
#pragma unroll
    for (int c = 0; c < 4; ++c) a[c] = *reinterpret_cast<const int4*>(xq + x[c]);
    const float4 ds01 = *reinterpret_cast<const float4*>(xd + dsx), ds23 = *reinterpret_cast<const float4*>(xd + dsx + 2);
    const float dx[4] = {ds01.x, ds01.z, ds23.x, ds23.z};
    int sq[4], sx[4];
#pragma unroll
    for (int c = 0; c < 4; ++c) sq[c] = 0, sx[c] = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int xa[4] = {(&a[0].x)[i], (&a[1].x)[i], (&a[2].x)[i], (&a[3].x)[i]};
      const uint32_t q[4] = {(qa[i] & 0x0F0F0F0Fu) | ((qh[i] << 4) & 0x30303030u),
                             (qb[i] & 0x0F0F0F0Fu) | ((qh[i] << 2) & 0x30303030u),
                             ((qa[i] >> 4) & 0x0F0F0F0Fu) | (qh[i] & 0x30303030u),
                             ((qb[i] >> 4) & 0x0F0F0F0Fu) | ((qh[i] >> 2) & 0x30303030u)};
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        sq[c] = wick_dp4a(int(q[c]), xa[c], sq[c]);
        sx[c] = wick_dp4a(0x20202020, xa[c], sx[c]);
      }
    }
    // value = d * scale * (q - 32); scale byte e + 2c of the eight at 8h
    const float sc[4] = {float(int8_t(slo >> esh)), float(int8_t(slo >> (esh + 16))), float(int8_t(shi >> esh)),
                         float(int8_t(shi >> (esh + 16)))};
    float v = 0.f;
#pragma unroll
    for (int c = 0; c < 4; ++c) v += sc[c] * dx[c] * float(sq[c] - sx[c]);
    return hf(dw) * v;
  }
};

// 16-byte copies global -> shared that complete in the background, in commit groups
// (cp.async, sm_80+); elsewhere (HIP, older NVIDIA) a plain load and store, done at once.
__device__ __forceinline__ void copy16_async(uint4* dst, const uint4* src) {
#if !defined(WICK_VENDOR_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned d = unsigned(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src) : "memory");
#else
  *dst = *src;
#endif
}
__device__ __forceinline__ void async_commit() {
#if !defined(WICK_VENDOR_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
// This lane's copies of all but the N most recent groups have landed.
template <int N>
__device__ __forceinline__ void async_wait() {
#if !defined(WICK_VENDOR_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

// sm_90+: a team's tiles come by one bulk copy each (cp.async.bulk, the tensor memory
// accelerator's 1-D copy), issued by lane 0, completing on an mbarrier per stage.
#if !defined(WICK_VENDOR_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define WICK_BULK_COPY 1
__device__ __forceinline__ unsigned smem_u32(const void* p) { return unsigned(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void mbar_init(uint64_t* b) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem_u32(b)) : "memory");
}
// Makes the barriers' initialisation visible to the bulk copies.
__device__ __forceinline__ void mbar_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// Orders this thread's (and, after a barrier, its team's) shared-memory accesses
// before later bulk copies into shared memory.
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// `bytes` (a multiple of 16; both addresses 16-byte aligned) from src to dst; the
// barrier completes its phase when they have landed.
__device__ __forceinline__ void bulk_copy(void* dst, const void* src, unsigned bytes, uint64_t* b) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(b)), "r"(bytes)
               : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                   smem_u32(dst)),
               "l"(src), "r"(bytes), "r"(smem_u32(b))
               : "memory");
}
// Programmatic dependent launch: lets the next kernel in the stream launch, and waits
// until the previous one finished and its writes are visible.
__device__ __forceinline__ void grid_launch_dependents() { asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory"); }
__device__ __forceinline__ void grid_wait_previous() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }
// Waits until the barrier's phase of parity `parity` completed.
__device__ __forceinline__ void mbar_wait(uint64_t* b, unsigned parity) {
  asm volatile(
      "{\n.reg .pred p;\nWICK_MBAR_WAIT:\nmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@p bra "
      "WICK_MBAR_DONE;\nbra WICK_MBAR_WAIT;\nWICK_MBAR_DONE:\n}\n" ::"r"(smem_u32(b)),
      "r"(parity)
      : "memory");
}
#endif

// Per type: rounds of kRoundCols columns (one part a lane: WholeLane, K4Lane or an
// mmvqs Slice), kT rounds a tile (whole 16-byte words), kS tiles of shared memory a
// team (kS - 1 in flight while one is computed), the activation layout (perm_pos P,
// swizzle, float pairs). quantized.cpp's plan_wide repeats the round width, the tile
// bytes and the stages. Shared memory: the activation, then each team's kS tiles,
// then each team's 8 x 32 floats of finished rows and 8 barrier words.
template <int Q>
struct Wide {
  static constexpr int kRoundCols = Q == kQ4_K || Q == kQ6_K ? 2048 : 1024;
  static constexpr int kRoundBytes = kRoundCols / Traits<Q>::kQK * int(sizeof(typename Traits<Q>::Block));
  static constexpr int kT = Q == kQ4_0 ? 4 : Q == kQ6_K ? 1 : 2, kS = Q == kQ6_K ? 7 : 5;
  // First tiles issued before the wait for the previous kernel (measured best on the
  // H200: bench/results/2026-11-21-h200-session4/call13).
  static constexpr int kP = Q == kQ4_0 || Q == kQ4_K ? 1 : 2;
  static constexpr int kReader = Q == kQ4_0 || Q == kQ8_0 ? 0 : Q == kQ4_K ? 1 : 2;  // Whole, K4, K6
  static constexpr int kSwz = kReader + 1, kSumScale = Q == kQ4_0 ? -8 : 1;
  static constexpr int kTileWords = kT * kRoundBytes / 16, kW = (kTileWords + kTeam - 1) / kTeam;
  static_assert(kT * kRoundBytes % 16 == 0, "mmvqw: a tile is whole 16-byte words");
};

template <int Q, int J, class T>
__device__ void mmvqw(int n, int k, int k_pad, const uint8_t* __restrict__ w, const T* __restrict__ x,
                      float* __restrict__ out) {
  using C = Wide<Q>;
  constexpr int kRC = C::kRoundCols, kRB = C::kRoundBytes, kT = C::kT, kS = C::kS, kTW = C::kTileWords;
  extern __shared__ uint4 smem_w[];
  const int l = int(threadIdx.x) % kTeam, team = int(threadIdx.x) / kTeam, teams = int(blockDim.x) / kTeam;
  int8_t* sq = reinterpret_cast<int8_t*>(smem_w);
  float2* sd = reinterpret_cast<float2*>(sq + k_pad);  // k_pad: a multiple of 512
  uint4* stages0 = reinterpret_cast<uint4*>(sd + k_pad / 32);
  uint4* stages = stages0 + size_t(team) * kS * kTW;
  float* slots = reinterpret_cast<float*>(stages0 + size_t(teams) * kS * kTW) + 272 * team;
#if defined(WICK_BULK_COPY)
  static_assert(kS <= 8, "mmvqw: eight barriers a team");
  uint64_t* bars = reinterpret_cast<uint64_t*>(slots + 256);  // one a stage
  if (l == 0) {
#pragma unroll
    for (int i = 0; i < kS; ++i) mbar_init(bars + i);
    mbar_init_fence();
  }
  wave_sync();
  unsigned parity = 0;  // bit s: the parity of stage s's next phase
#endif
  // Team g of G takes rows g, g + G, g + 2G, ...: at any time the teams read
  // neighbouring rows, sweeping the weight together. A row is tpr tiles of kT
  // rounds (its last one shorter where kT does not divide the row's rpr rounds).
  const int G = int(gridDim.x) * teams, g = int(blockIdx.x) * teams + team;
  const int rows = g < n ? (n - 1 - g) / G + 1 : 0;
  const int rpr = k / kRC, tpr = (rpr + kT - 1) / kT, tiles = rows * tpr;
  const size_t row_words = size_t(rpr) * kRB / 16, stride_words = size_t(G) * row_words;
  // The copy cursor: tile ij of the row at isrc (16-byte aligned).
  const uint4* isrc = reinterpret_cast<const uint4*>(w) + size_t(g) * row_words;
  int ij = 0;
  // The next tile into stage `stage`: one bulk copy by lane 0 (completing the stage's
  // barrier phase), or per-lane copies making one commit group a call (empty past the
  // last tile; whole tiles copy every word without tests but the last's).
  auto issue = [&](int t, int stage) {
    if (t < tiles) {
      const int nw = min(kT, rpr - ij * kT) * kRB / 16;
#if defined(WICK_BULK_COPY)
      if (l == 0) bulk_copy(stages + stage * kTW, isrc + size_t(ij) * kTW, unsigned(nw) * 16u, bars + stage);
#else
      constexpr int kW = C::kW;  // words a lane
      const uint4* s = isrc + size_t(ij) * kTW + l;
      uint4* d = stages + stage * kTW + l;
      if (nw == kTW) {
#pragma unroll
        for (int u = 0; u < kW; ++u)
          if (kTeam * (u + 1) <= kTW || l + kTeam * u < kTW) copy16_async(d + kTeam * u, s + kTeam * u);
      } else {
#pragma unroll
        for (int u = 0; u < kW; ++u)
          if (l + kTeam * u < nw) copy16_async(d + kTeam * u, s + kTeam * u);
      }
#endif
      if (++ij == tpr) {
        ij = 0;
        isrc += stride_words;
      }
    }
#if !defined(WICK_BULK_COPY)
    async_commit();
#endif
  };
  // The first kP tiles in flight before the previous kernel is waited for (launched
  // dependent: the weight is no kernel's output), then x quantized, the other first
  // tiles in flight behind its loads.
#if defined(WICK_BULK_COPY)
  constexpr int kP = C::kP;
#else
  constexpr int kP = 0;  // never launched dependent: x's loads first
#endif
#pragma unroll
  for (int j = 0; j < kP; ++j) issue(j, j);
#if defined(WICK_BULK_COPY)
  grid_launch_dependents();
  grid_wait_previous();
#endif
  quantize_row_shared<C::kSwz, J, C::kSumScale>(k, k_pad, x, sq, sd, [&] {
#pragma unroll
    for (int j = kP; j < kS - 1; ++j) issue(j, j);
  });
  __syncthreads();  // the activation visible to every team
  const WholeLane<C::kReader == 0 ? Q : kQ4_0> whole(l);
  const K4Lane k4(l);
  const K6Lane k6(l);
  // Finished rows' lane sums wait in the team's slots (the team's row i0 + i in
  // slots[32 i..]), eight at a time: lanes 4i..4i+3 add row i's 32 values, then two
  // shuffles.
  int np = 0, i0 = 0;
  auto flush = [&] {
    wave_sync();  // every lane's slot stores visible
    const float4 u = *reinterpret_cast<const float4*>(slots + 8 * l);
    const float4 v = *reinterpret_cast<const float4*>(slots + 8 * l + 4);
    float sum = ((u.x + u.y) + (u.z + u.w)) + ((v.x + v.y) + (v.z + v.w));
    sum += wick_shfl_xor(sum, 1);
    sum += wick_shfl_xor(sum, 2);
    const int i = l >> 2;
    if ((l & 3) == 0 && i < np) out[g + (i0 + i) * G] = sum;
    i0 += np;
    np = 0;
    wave_sync();  // every lane done reading the slots
  };
  // The lane's part of round r of the tile at tb, whose first round is round c0 of its row.
  auto part = [&](const uint8_t* tb, int c0, int r) {
    const uint8_t* rb = tb + r * kRB;
    const int8_t* xq = sq + kRC * (c0 + r);
    const float2* xd = sd + kRC / 32 * (c0 + r);
    if constexpr (C::kReader == 0) {
      return whole.dot(rb, xq, xd);
    } else if constexpr (C::kReader == 1) {
      return k4.dot(rb, xq, xd, l);
    } else {
      return k6.dot(rb, xq, xd);
    }
  };
  int cj = 0, stage = 0;  // the tile computed: tile cj of its row, in stage `stage`
  float acc = 0.f;
  for (int t = 0; t < tiles; ++t) {  // the same trip count for every lane of a team
#if defined(WICK_BULK_COPY)
    mbar_wait(bars + stage, (parity >> stage) & 1u);  // tile t landed
    parity ^= 1u << stage;
    wave_sync();                    // every lane done with tile t - 1
    if (l == 0) fence_proxy_async();  // ... before the copy over it
#else
    async_wait<kS - 2>();  // this lane's copies of tile t landed
    wave_sync();           // every lane's too; every lane done with tile t - 1
#endif
    issue(t + kS - 1, stage == 0 ? kS - 1 : stage - 1);  // into tile t - 1's stage
    const uint8_t* tb = reinterpret_cast<const uint8_t*>(stages + stage * kTW);
    stage = stage + 1 == kS ? 0 : stage + 1;
    const int c0 = cj * kT, nr = min(kT, rpr - c0);
    if (nr == kT) {  // every round of the tile, without branches, so they interleave
      float p[kT];
#pragma unroll
      for (int r = 0; r < kT; ++r) p[r] = part(tb, c0, r);
#pragma unroll
      for (int r = 0; r < kT; ++r) acc += p[r];
    } else {
#pragma unroll
      for (int r = 0; r < kT; ++r)
        if (r < nr) acc += part(tb, c0, r);
    }
    if (++cj == tpr) {  // the row's last tile (the same for the whole team)
      cj = 0;
      slots[32 * np + l] = acc;
      acc = 0.f;
      if (++np == 8) flush();
    }
  }
  if (np > 0) flush();
#if !defined(WICK_BULK_COPY)
  async_wait<0>();  // no copy outlives the block (every bulk copy was waited for)
#endif
}
}  // namespace wk::q

#define DEQ_KERNEL(Q, QS, T, TS)                                             \
  WICK_KERNEL dequantize_##QS##_##TS(size_t n, const uint8_t* src, T* out) { \
    wk::q::dequantize<Q>(n, src, out);                                       \
  }
#define DEQ_KERNELS(Q, QS)         \
  DEQ_KERNEL(Q, QS, float, f32)    \
  DEQ_KERNEL(Q, QS, wk::f16s, f16) \
  DEQ_KERNEL(Q, QS, wk::bf16s, bf16)

#define MMVQ_KERNEL(Q, QS, B)                                                                       \
  WICK_KERNEL mmvq_##QS##_b##B(int n, int k, int row_threads, const uint8_t* w, size_t w_row_bytes, \
                               const uint8_t* act, size_t act_row_bytes, float* out) {              \
    wk::q::mmvq<Q, B>(n, k, row_threads, w, w_row_bytes, act, act_row_bytes, out);                  \
  }
#define MMVQ_KERNELS(Q, QS) \
  MMVQ_KERNEL(Q, QS, 1)     \
  MMVQ_KERNEL(Q, QS, 2)     \
  MMVQ_KERNEL(Q, QS, 3)     \
  MMVQ_KERNEL(Q, QS, 4)     \
  MMVQ_KERNEL(Q, QS, 5)     \
  MMVQ_KERNEL(Q, QS, 6)     \
  MMVQ_KERNEL(Q, QS, 7)     \
  MMVQ_KERNEL(Q, QS, 8)

#define Q_TYPE(Q, QS) DEQ_KERNELS(Q, QS) MMVQ_KERNELS(Q, QS)

#define DEQ16_KERNEL(Q, QS, T, TS)                                           \
  WICK_KERNEL dequantize_##QS##_##TS(size_t n, const uint8_t* src, T* out) { \
    wk::q::dequantize16<Q>(n, src, out);                                     \
  }
#define DEQ16_KERNELS(Q, QS)         \
  DEQ16_KERNEL(Q, QS, float, f32)    \
  DEQ16_KERNEL(Q, QS, wk::f16s, f16) \
  DEQ16_KERNEL(Q, QS, wk::bf16s, bf16)
#define Q_TYPE16(Q, QS) DEQ16_KERNELS(Q, QS) MMVQ_KERNELS(Q, QS)

DEQ_KERNELS(wk::q::kF32, f32)
DEQ_KERNELS(wk::q::kF16, f16)
DEQ_KERNELS(wk::q::kBF16, bf16)
Q_TYPE16(wk::q::kQ4_0, q4_0)
Q_TYPE(wk::q::kQ4_1, q4_1)
Q_TYPE(wk::q::kQ5_0, q5_0)
Q_TYPE(wk::q::kQ5_1, q5_1)
Q_TYPE16(wk::q::kQ8_0, q8_0)
Q_TYPE(wk::q::kQ8_1, q8_1)
Q_TYPE(wk::q::kQ2_K, q2_K)
Q_TYPE(wk::q::kQ3_K, q3_K)
Q_TYPE16(wk::q::kQ4_K, q4_K)
Q_TYPE(wk::q::kQ5_K, q5_K)
Q_TYPE16(wk::q::kQ6_K, q6_K)
Q_TYPE(wk::q::kQ8_K, q8_K)

WICK_KERNEL quantize_q8_1_f32(size_t m, size_t k, size_t k_pad, const float* x, uint8_t* out) {
  wk::q::quantize_q8_1(m, k, k_pad, x, out);
}
WICK_KERNEL quantize_q8_1_f16(size_t m, size_t k, size_t k_pad, const wk::f16s* x, uint8_t* out) {
  wk::q::quantize_q8_1(m, k, k_pad, x, out);
}
WICK_KERNEL quantize_q8_1_bf16(size_t m, size_t k, size_t k_pad, const wk::bf16s* x, uint8_t* out) {
  wk::q::quantize_q8_1(m, k, k_pad, x, out);
}

#define MMVQS_KERNEL(Q, QS, B)                                                                        \
  WICK_KERNEL mmvqs_##QS##_b##B(int n, int k, const uint8_t* w, size_t w_row_bytes, const int8_t* qs, \
                                const uint32_t* ds, size_t k_pad, float* out) {                       \
    wk::q::mmvqs<Q, B>(n, k, w, w_row_bytes, qs, ds, k_pad, out);                                     \
  }
#define MMVQS_KERNELS(Q, QS) \
  MMVQS_KERNEL(Q, QS, 1)     \
  MMVQS_KERNEL(Q, QS, 2)     \
  MMVQS_KERNEL(Q, QS, 3)     \
  MMVQS_KERNEL(Q, QS, 4)     \
  MMVQS_KERNEL(Q, QS, 5)     \
  MMVQS_KERNEL(Q, QS, 6)     \
  MMVQS_KERNEL(Q, QS, 7)     \
  MMVQS_KERNEL(Q, QS, 8)
MMVQS_KERNELS(wk::q::kQ4_0, q4_0)
MMVQS_KERNELS(wk::q::kQ8_0, q8_0)
MMVQS_KERNELS(wk::q::kQ4_K, q4_K)
MMVQS_KERNELS(wk::q::kQ6_K, q6_K)

#define QUANTIZE_S(P, T, TS)                                                                       \
  WICK_KERNEL quantize_q8_1s_p##P##_##TS(size_t m, size_t k, size_t k_pad, const T* x, int8_t* qs, \
                                         uint32_t* ds) {                                           \
    wk::q::quantize_q8_1s<P>(m, k, k_pad, x, qs, ds);                                              \
  }
#define QUANTIZE_S_ALL(P)      \
  QUANTIZE_S(P, float, f32)    \
  QUANTIZE_S(P, wk::f16s, f16) \
  QUANTIZE_S(P, wk::bf16s, bf16)
QUANTIZE_S_ALL(0)
QUANTIZE_S_ALL(1)
QUANTIZE_S_ALL(2)
QUANTIZE_S_ALL(3)

// Up to 512 threads (16 teams), one block per multiprocessor (up to 128 registers on NVIDIA).
#define MMVQW_KERNEL(Q, QS, T, TS)                                                                         \
  extern "C" __global__ void __launch_bounds__(512, 1)                                                     \
      mmvqw_##QS##_##TS(int n, int k, int k_pad, const uint8_t* w, const T* x, float* out) {               \
    if (k_pad <= 8 * 512) {                                                                                \
      wk::q::mmvqw<Q, 1>(n, k, k_pad, w, x, out);                                                          \
    } else {                                                                                               \
      wk::q::mmvqw<Q, 4>(n, k, k_pad, w, x, out);                                                          \
    }                                                                                                      \
  }
#define MMVQW_KERNELS(Q, QS)         \
  MMVQW_KERNEL(Q, QS, float, f32)    \
  MMVQW_KERNEL(Q, QS, wk::f16s, f16) \
  MMVQW_KERNEL(Q, QS, wk::bf16s, bf16)
MMVQW_KERNELS(wk::q::kQ4_0, q4_0)
MMVQW_KERNELS(wk::q::kQ8_0, q8_0)
MMVQW_KERNELS(wk::q::kQ4_K, q4_K)
MMVQW_KERNELS(wk::q::kQ6_K, q6_K)

