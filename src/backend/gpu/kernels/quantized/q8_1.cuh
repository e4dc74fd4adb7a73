// QUANTIZED: activations to ggml's Q8_1 values (the reference algorithm of
// quantize_row_q8_1: d = amax / 127 over 32 columns, q = round(v / d), s = d * sum q),
// in the three layouts the mat-vec generations read:
//   quantize_q8_1: BlockQ8_1 rows of k_pad columns (mmvq);
//   quantize_q8_1s<P>: split rows, int8 quants permuted by perm_pos<P> and one
//       (f16 d, f16 s) word a 32-column group (mmvqs);
//   quantize_row_shared: one row into a block's shared memory (mmvqw).
// Rows are padded to k_pad (a multiple of qplan::kRowPadding) with zeros.
#pragma once

#include "../wave.cuh"
#include "backend/common/functors.h"
#include "blocks.cuh"

namespace wk::q {
// One lane a column or 8 columns a lane: whole waves (up to 64 lanes) fall in or out
// of a padded row, and every lane of a 4-lane group is present.
static_assert(qplan::kRowPadding % (8 * 64) == 0, "Q8_1 rows: whole waves");

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
  const size_t total = m * k_pad;  // a multiple of kRowPadding: every wave is wholly in or out
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
  static_assert(P >= 0 && P < qplan::kSplitPerms, "perm_pos: P0..P3");
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

// The row mmvqw multiplies, 8 columns at a time (zeros past k), from one of three
// sources (qplan::Fuse): x as it is (RowX, any kernel dtype); rms_norm(x + r) * alpha
// with x + r written out by block 0 (RowAddNorm, f32: nn::add_rms_norm's formula, its
// scale computed by prepare()); silu(x) * r (RowSwiglu, f32: nn::swiglu's SiluMul).
// prepare(k, scratch) runs once, after the previous kernel was waited for, by every
// thread (scratch: a float a wave of shared memory, free until the block's next barrier).
template <class T>
struct RowX {
  const T* __restrict__ x;
  bool vec = false;
  __device__ __forceinline__ void prepare(int, float*) { vec = (reinterpret_cast<uintptr_t>(x) & 15u) == 0; }
  __device__ __forceinline__ void load8(int c0, int k, float (&f)[8]) const {
    if (c0 + 8 <= k) {
      load4(x, c0, vec, *reinterpret_cast<float(*)[4]>(f));
      load4(x, c0 + 4, vec, *reinterpret_cast<float(*)[4]>(f + 4));
    } else {
#pragma unroll
      for (int i = 0; i < 8; ++i) f[i] = c0 + i < k ? load_f(x + c0 + i) : 0.f;
    }
  }
};

// The fused sources read f32 rows 16-byte aligned with k a multiple of 8 (the host
// checks; the wide plans' rounds are multiples of 1024 columns).
__device__ __forceinline__ void load8_f32(const float* __restrict__ p, int c0, float (&f)[8]) {
  const float4 a = *reinterpret_cast<const float4*>(p + c0), b = *reinterpret_cast<const float4*>(p + c0 + 4);
  f[0] = a.x, f[1] = a.y, f[2] = a.z, f[3] = a.w, f[4] = b.x, f[5] = b.y, f[6] = b.z, f[7] = b.w;
}

struct RowAddNorm {
  const float* __restrict__ x;
  const float* __restrict__ r;
  const float* __restrict__ alpha;  // null: 1
  float eps;
  float* __restrict__ sum;
  float scale = 0.f;
  // scale = 1 / sqrt(mean((x + r)^2) + eps) (the waves' sums added in order); block 0
  // writes x + r.
  __device__ __forceinline__ void prepare(int k, float* scratch) {
    float ss = 0.f;
    for (int c = 4 * int(threadIdx.x); c < k; c += 4 * int(blockDim.x)) {
      const float4 a = *reinterpret_cast<const float4*>(x + c), b = *reinterpret_cast<const float4*>(r + c);
      const float4 v = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
      ss += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
      if (blockIdx.x == 0) *reinterpret_cast<float4*>(sum + c) = v;
    }
    ss = group_allreduce(ss, warpSize, [](float a, float b) { return a + b; });
    if (int(threadIdx.x) % warpSize == 0) scratch[int(threadIdx.x) / warpSize] = ss;
    __syncthreads();
    float t = 0.f;
    for (int i = 0; i < int(blockDim.x) / warpSize; ++i) t += scratch[i];
    scale = 1.f / sqrtf(t / float(k) + eps);
  }
  __device__ __forceinline__ void load8(int c0, int k, float (&f)[8]) const {
    if (c0 >= k) {
#pragma unroll
      for (int i = 0; i < 8; ++i) f[i] = 0.f;
      return;
    }
    float a[8], b[8], g[8];
    load8_f32(x, c0, a);
    load8_f32(r, c0, b);
    if (alpha) {
      load8_f32(alpha, c0, g);
    } else {
#pragma unroll
      for (int i = 0; i < 8; ++i) g[i] = 1.f;
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) f[i] = (a[i] + b[i]) * scale * g[i];
  }
};

struct RowSwiglu {
  const float* __restrict__ x;
  const float* __restrict__ r;
  __device__ __forceinline__ void prepare(int, float*) {}
  __device__ __forceinline__ void load8(int c0, int k, float (&f)[8]) const {
    if (c0 >= k) {
#pragma unroll
      for (int i = 0; i < 8; ++i) f[i] = 0.f;
      return;
    }
    float a[8], b[8];
    load8_f32(x, c0, a);
    load8_f32(r, c0, b);
#pragma unroll
    for (int i = 0; i < 8; ++i) f[i] = ::wick::fn::SiluMul{}(a[i], b[i]);
  }
};

// One row x (a source above: k elements; zeros up to k_pad) quantized into shared memory for mmvqw
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
template <int Swz, int J, int S, class X, class F>
__device__ void quantize_row_shared(int k, int k_pad, const X& x, int8_t* sq, float2* sd, F&& issued) {
  bool called = false;
  const int quads = k_pad / 8, bd = int(blockDim.x);
  // k_pad / 8 is a multiple of 64 (kRowPadding): whole waves take each quad, so the 4-lane groups
  // below shuffle with every lane present. J quads a thread at a time, their loads
  // issued before any arithmetic (x comes from L2 or HBM).
  for (int t0 = int(threadIdx.x); t0 < quads; t0 += J * bd) {
    float f[J][8];
#pragma unroll
    for (int j = 0; j < J; ++j) x.load8(8 * (t0 + j * bd), k, f[j]);
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

}  // namespace wk::q
