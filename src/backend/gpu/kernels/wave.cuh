// Wave (warp) and block reductions written once for any wave size (32 on NVIDIA
// and RDNA, 64 on CDNA): the width comes from warpSize at run time, shuffles go
// through vendor.h's wrappers. Values of any trivially copyable type up to 24
// bytes (reduction states included) move as 32-bit words.
#pragma once

#include "common.cuh"

namespace wk {

// The largest wave count a block may hold (1024 threads of 32-wide waves).
constexpr int kMaxWaves = 32;

template <class T>
__device__ __forceinline__ T shfl_xor_any(T v, int mask) {
  constexpr int kWords = int((sizeof(T) + 3) / 4);
  static_assert(kWords <= 6, "shfl_xor_any: value too large");
  int w[kWords] = {};
  __builtin_memcpy(w, &v, sizeof(T));
#pragma unroll
  for (int k = 0; k < kWords; ++k) w[k] = wick_shfl_xor(w[k], mask);
  T r;
  __builtin_memcpy(&r, w, sizeof(T));
  return r;
}

// Combines v over aligned groups of `width` lanes (a power of two <= warpSize);
// every lane of a group gets the group's result. All lanes of the wave must call.
template <class T, class Op>
__device__ __forceinline__ T group_allreduce(T v, int width, const Op& op) {
  for (int m = width / 2; m > 0; m >>= 1) v = op(v, shfl_xor_any(v, m));
  return v;
}

// Combines v over the whole block (blockDim.x a multiple of warpSize); every
// thread gets the result. Every thread of the block must call (it synchronizes).
template <class T, class Op>
__device__ __forceinline__ T block_allreduce(T v, const Op& op) {
  __shared__ uint4 raw[kMaxWaves * ((sizeof(T) + 15) / 16)];  // 16-byte aligned
  T* buf = reinterpret_cast<T*>(raw);
  const int wave = int(threadIdx.x) / warpSize, lane = int(threadIdx.x) % warpSize;
  const int nwaves = int(blockDim.x) / warpSize;
  v = group_allreduce(v, warpSize, op);
  __syncthreads();  // buf may still be read by a previous call
  if (lane == 0) buf[wave] = v;
  __syncthreads();
  T r = buf[0];
  for (int k = 1; k < nwaves; ++k) r = op(r, buf[k]);
  return r;
}

// Reduces over groups of `width` threads: a wave-level reduction when width <=
// warpSize, else the whole block (width == blockDim.x).
template <class T, class Op>
__device__ __forceinline__ T group_or_block_allreduce(T v, int width, const Op& op) {
  if (width <= warpSize) return group_allreduce(v, width, op);
  return block_allreduce(v, op);
}

__device__ __forceinline__ float exp_c(float x) { return expf(x); }
__device__ __forceinline__ double exp_c(double x) { return exp(x); }

// (max, sum of exp(x - max)) of a row part, combined across threads (softmax); NaN
// anywhere makes max NaN. An empty part is (-inf, 0).
template <class C>
struct MaxSum {
  C m, s;
};
template <class C>
struct MaxSumOp {
  // One exp a combine: the part with the smaller max is scaled to the larger.
  __device__ __forceinline__ MaxSum<C> operator()(MaxSum<C> a, MaxSum<C> b) const {
    if (a.m != a.m) return a;
    if (b.m != b.m) return b;
    if (b.m > a.m) {
      const MaxSum<C> t = a;
      a = b;
      b = t;
    }
    // a.m >= b.m; b.s == 0 (an empty part, or -inf maxima) adds nothing.
    return MaxSum<C>{a.m, b.s == C(0) ? a.s : a.s + b.s * exp_c(b.m - a.m)};
  }
};

template <class C>
__device__ __forceinline__ bool is_nan_c(C v) {
  if constexpr (is_floating_v<C>) {
    return v != v;
  } else {
    return false;
  }
}

}  // namespace wk
