// QUANTIZED: ggml rows to floats.
//   dequantize<Q, T>(n, src, out): n elements of packed rows of type Q (every
//       type, f32/f16/bf16 included) to T, 8 elements a thread, each by the CPU's
//       expression (deq), then one rounding to f16/bf16;
//   dequantize16<Q, T>: the types of qplan::dequantize_by16 (Q4_0, Q8_0, Q4_K,
//       Q6_K), 16 elements of one block a thread, the block's scale decoded once.
#pragma once

#include "blocks.cuh"

namespace wk::q {

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

}  // namespace wk::q
