// QUANTIZED: the split mat-vec of Q4_0, Q8_0, Q4_K and Q6_K.
//   mmvqs<Q, B>(n, k, w, w_row_bytes, qs, ds, k_pad, out): B split activation rows
//       (quantize_q8_1s<qplan::split_perm(Q)>) times n weight rows: one wave per
//       weight row, each lane reading a fixed slice of a block (lanes of a block read
//       adjacent words, so a wave's load covers few cache lines), several slices'
//       loads issued before their dot products.
#pragma once

#include "../wave.cuh"
#include "blocks.cuh"

namespace wk::q {

// N little-endian words from a 2-byte aligned address in a buffer that starts
// 4-byte aligned: aligned 32-bit loads only (one more when the address is not
// itself 4-byte aligned), so nothing outside the 4-byte words holding the N words
// is touched.
template <int N>
__device__ __forceinline__ void ldw(const uint8_t* p, uint32_t (&o)[N]) {
  // Pointer arithmetic, not an integer round trip: the compiler keeps what it knows
  // of the pointer.
  const int mis = int(reinterpret_cast<uintptr_t>(p) & 3u);  // 0 or 2
  const bool odd = mis != 0;
  const uint32_t* a = reinterpret_cast<const uint32_t*>(p - mis);
  uint32_t r[N + 1];
#pragma unroll
  for (int i = 0; i < N; ++i) r[i] = wick_ldg(a + i);
  r[N] = odd ? wick_ldg(a + N) : 0u;
#pragma unroll
  for (int i = 0; i < N; ++i) o[i] = wick_funnel_r(r[i], r[i + 1], 8 * mis);
}
__device__ __forceinline__ uint32_t ldh(const uint8_t* p) {
  return wick_ldg(reinterpret_cast<const uint16_t*>(p));
}
// 16 activation bytes (16-byte aligned), a plain load.
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
  static constexpr int kCols = 16, kPerm = Q == kQ4_0 ? 1 : 0;  // activation: perm_pos P1 (Q4_0), P0 (Q8_0)
  static constexpr int kWords = Q == kQ4_0 ? 2 : 4;             // raw quant words a lane
  uint32_t q[kWords], d;
  __device__ __forceinline__ void load(const uint8_t* row, int p) {
    const uint8_t* blk = row + size_t(p / 2) * sizeof(typename Traits<Q>::Block);
    ldw<kWords>(blk + 2 + 4 * kWords * (p % 2), q);
    d = ldh(blk);
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
  static_assert(sizeof(BlockQ4_K) % 16 == 0 && qplan::split_align(kQ4_K) == 16, "Q4_K: 16-byte words");
  static constexpr int kCols = 32, kPerm = 2;  // activation: perm_pos P2
  uint4 h, q;  // the block's header (d, dmin, 12 scale bytes) and qs bytes 16j..16j+15
  __device__ __forceinline__ void load(const uint8_t* row, int p) {
    const uint4* blk = reinterpret_cast<const uint4*>(row + size_t(p / 8) * sizeof(BlockQ4_K));
    h = wick_ldg(blk);
    q = wick_ldg(blk + 1 + p % 8);
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
struct Slice<kQ6_K> {                          // 8 lanes per block, 32 columns each
  static constexpr int kCols = 32, kPerm = 3;  // activation: perm_pos P3
  uint32_t a[2], b[2], hb[2], s[2], d;         // ql words (kk = 0/2, 1/3), qh words, scale bytes, d
  __device__ __forceinline__ void load(const uint8_t* row, int p) {
    const uint8_t* blk = row + size_t(p / 8) * sizeof(BlockQ6_K);
    const int j = p % 8, h = j / 4, l = 8 * (j % 4);
    ldw<2>(blk + 64 * h + l, a);
    ldw<2>(blk + 64 * h + 32 + l, b);
    ldw<2>(blk + 128 + 32 * h + l, hb);
    ldw<2>(blk + 192 + 8 * h, s);
    d = ldh(blk + 208);
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
  static_assert(S::kPerm == qplan::split_perm(Q), "mmvqs: the activation layout the host quantizes to");
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

}  // namespace wk::q
