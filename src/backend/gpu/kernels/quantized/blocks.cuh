// Device-side readers of ggml's quantized blocks (base/ggml_blocks.h), shared by
// every kernel of the QUANTIZED family, and the element conversions they use.
//
// Two views of a block type T (ggml type id):
//   deq(block, j)       element j of a block as float, with the CPU's expression
//                       order (backend/cpu/quants.cpp, kquants.cpp) so results match
//                       it bit for bit (the build does not contract into FMA);
//   unpack16(row, e)    16 consecutive elements e..e+15 (e a multiple of 16) as
//                       four words of four unsigned int8 quants q and one (scale,
//                       min) with value = scale * q + min: every type's sub-blocks
//                       span at least 16 elements, so the pair is shared.
// Block addresses are only 2-byte aligned (18-, 22-, 34-, 110-, 210-byte blocks):
// words are read as two 16-bit loads.
#pragma once

#include "../common.cuh"
#include "backend/common/kquant_scales.h"
#include "backend/gpu/quantized_plan.h"
#include "base/ggml_blocks.h"

namespace wk::q {

using namespace ::wick::quant;
using namespace ::wick::quant::type_id;
namespace qplan = ::wick::gpu::qplan;

template <int T>
struct Traits;
#define WICK_QTRAITS(ID, BLOCK, QK) \
  template <>                       \
  struct Traits<ID> {               \
    using Block = BLOCK;            \
    static constexpr int kQK = QK;  \
  };
WICK_QTRAITS(kF32, float, 1)
WICK_QTRAITS(kF16, uint16_t, 1)
WICK_QTRAITS(kBF16, uint16_t, 1)
WICK_QTRAITS(kQ4_0, BlockQ4_0, 32)
WICK_QTRAITS(kQ4_1, BlockQ4_1, 32)
WICK_QTRAITS(kQ5_0, BlockQ5_0, 32)
WICK_QTRAITS(kQ5_1, BlockQ5_1, 32)
WICK_QTRAITS(kQ8_0, BlockQ8_0, 32)
WICK_QTRAITS(kQ8_1, BlockQ8_1, 32)
WICK_QTRAITS(kQ2_K, BlockQ2_K, 256)
WICK_QTRAITS(kQ3_K, BlockQ3_K, 256)
WICK_QTRAITS(kQ4_K, BlockQ4_K, 256)
WICK_QTRAITS(kQ5_K, BlockQ5_K, 256)
WICK_QTRAITS(kQ6_K, BlockQ6_K, 256)
WICK_QTRAITS(kQ8_K, BlockQ8_K, 256)
#undef WICK_QTRAITS

// The instantiation lists of the kernel files, X(id, name): the name as in kernel
// names (ggml_type_name).
#define WICK_Q_FLOAT_TYPES(X) X(kF32, f32) X(kF16, f16) X(kBF16, bf16)
// clang-format off
#define WICK_Q_QUANTIZED_TYPES(X)                                                            \
  X(kQ4_0, q4_0) X(kQ4_1, q4_1) X(kQ5_0, q5_0) X(kQ5_1, q5_1) X(kQ8_0, q8_0) X(kQ8_1, q8_1) \
  X(kQ2_K, q2_K) X(kQ3_K, q3_K) X(kQ4_K, q4_K) X(kQ5_K, q5_K) X(kQ6_K, q6_K) X(kQ8_K, q8_K)
// The types with mmvqs and mmvqw kernels (qplan::split_perm, qplan::wide_shape).
#define WICK_Q_SPLIT_TYPES(X) X(kQ4_0, q4_0) X(kQ8_0, q8_0) X(kQ4_K, q4_K) X(kQ6_K, q6_K)
// X(T, name, args...) for each element type of x and of dequantized output.
#define WICK_Q_DTYPES(X, ...) \
  X(float, f32, __VA_ARGS__) X(wk::f16s, f16, __VA_ARGS__) X(wk::bf16s, bf16, __VA_ARGS__)
// X(args..., B) for B = 1..qplan::kMaxBatch (activation rows of one mmvq / mmvqs launch).
#define WICK_Q_BATCHES(X, ...)                                                              \
  X(__VA_ARGS__, 1) X(__VA_ARGS__, 2) X(__VA_ARGS__, 3) X(__VA_ARGS__, 4) X(__VA_ARGS__, 5) \
  X(__VA_ARGS__, 6) X(__VA_ARGS__, 7) X(__VA_ARGS__, 8)
// clang-format on
static_assert(qplan::kMaxBatch == 8, "WICK_Q_BATCHES lists 1..kMaxBatch");

__device__ __forceinline__ float h2f(uint16_t h) { return f16_to_f32(h); }

// A 32-bit little-endian word at a 2-byte aligned address.
__device__ __forceinline__ uint32_t ld32(const uint8_t* p) {
  const uint16_t* h = reinterpret_cast<const uint16_t*>(p);
  return uint32_t(h[0]) | (uint32_t(h[1]) << 16);
}
__device__ __forceinline__ float ldf32(const uint8_t* p) { return u2f(ld32(p)); }

// ---- element conversions -------------------------------------------------------------------
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

// f16 bits to float in one conversion where the hardware has it (same value as h2f).
__device__ __forceinline__ float hf(uint32_t h) {
#if defined(WICK_HW_HALF_CVT)
  return wick_f16_bits_to_f32((unsigned short)(h & 0xFFFFu));
#else
  return f16_to_f32(uint16_t(h));
#endif
}

// ---- bit positions of the K-quants (scale_min_k4 and q3k_scale: backend/common/kquant_scales.h)
__device__ __forceinline__ int q2_at(const uint8_t* qs, int e) {
  return (qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
}
__device__ __forceinline__ int k4_nibble(const uint8_t* qs, int e) {
  const uint8_t b = qs[32 * (e / 64) + e % 32];
  return (e % 64) < 32 ? (b & 0xF) : (b >> 4);
}

// ---- element j of one block, as the CPU computes it --------------------------------------------
template <int T>
__device__ __forceinline__ float deq(const uint8_t* blk, int j) {
  using B = typename Traits<T>::Block;
  const B& b = *reinterpret_cast<const B*>(blk);
  if constexpr (T == kF32) {
    return ldf32(blk);
  } else if constexpr (T == kF16) {
    return h2f(b);
  } else if constexpr (T == kBF16) {
    return bf16_to_f32(b);
  } else if constexpr (T == kQ4_0) {
    const int q = j < 16 ? (b.qs[j] & 0x0F) : (b.qs[j - 16] >> 4);
    return float(q - 8) * h2f(b.d);
  } else if constexpr (T == kQ4_1) {
    const int q = j < 16 ? (b.qs[j] & 0x0F) : (b.qs[j - 16] >> 4);
    return float(q) * h2f(b.d) + h2f(b.m);
  } else if constexpr (T == kQ5_0 || T == kQ5_1) {
    const uint32_t qh = ld32(b.qh);
    const int q = (j < 16 ? (b.qs[j] & 0x0F) : (b.qs[j - 16] >> 4)) | int((qh >> j) & 1u) << 4;
    if constexpr (T == kQ5_0) {
      return float(q - 16) * h2f(b.d);
    } else {
      return float(q) * h2f(b.d) + h2f(b.m);
    }
  } else if constexpr (T == kQ8_0 || T == kQ8_1) {
    return float(b.qs[j]) * h2f(b.d);
  } else if constexpr (T == kQ2_K) {
    const uint8_t sc = b.scales[j / 16];
    const float dl = h2f(b.d) * float(sc & 0xF), ml = h2f(b.dmin) * float(sc >> 4);
    return dl * float(q2_at(b.qs, j)) - ml;
  } else if constexpr (T == kQ3_K) {
    const float dl = h2f(b.d) * float(q3k_scale(b.scales, j / 16));
    const int hbit = (b.hmask[j % 32] >> (j / 32)) & 1;
    return dl * float(q2_at(b.qs, j) - (hbit ? 0 : 4));
  } else if constexpr (T == kQ4_K || T == kQ5_K) {
    uint8_t sc, m;
    scale_min_k4(j / 32, b.scales, sc, m);
    const float d1 = h2f(b.d) * float(sc), m1 = h2f(b.dmin) * float(m);
    int q = k4_nibble(b.qs, j);
    if constexpr (T == kQ5_K) q += 16 * ((b.qh[j % 32] >> (j / 32)) & 1);
    return d1 * float(q) - m1;
  } else if constexpr (T == kQ6_K) {
    const int h = j / 128, r = j % 128, k = r / 32, l = j % 32;
    const uint8_t lo_byte = b.ql[64 * h + 32 * (k & 1) + l];
    const int lo = k < 2 ? (lo_byte & 0xF) : (lo_byte >> 4);
    const int hi = (b.qh[32 * h + l] >> (2 * k)) & 3;
    return h2f(b.d) * float(b.scales[j / 16]) * float((lo | hi << 4) - 32);
  } else {  // kQ8_K
    return ldf32(blk) * float(b.qs[j]);
  }
}

// ---- 16 quants of a row ---------------------------------------------------------------------
struct Chunk16 {
  int q[4];  // four unsigned int8 quants per word (each < 128, so dp4a may read them signed)
  float scale, min;
};

// Each byte's bit `bit` of the four bytes of word w, moved to bit `to` of that byte.
__device__ __forceinline__ int bits_of(uint32_t w, int bit, int to) {
  return int(((w >> bit) & 0x01010101u) << to);
}

// Five-bit high bits of elements j0..j0+3 from a 32-bit qh, as bit 4 of each byte.
__device__ __forceinline__ int qh_bits4(uint32_t qh, int j0) {
  const uint32_t h = (qh >> j0) & 0xFu;
  return int(((h & 1u) << 4) | ((h & 2u) << 11) | ((h & 4u) << 18) | ((h & 8u) << 25));
}

template <int T>
__device__ __forceinline__ Chunk16 unpack16(const uint8_t* row, int e) {
  constexpr int kQK = Traits<T>::kQK;
  using B = typename Traits<T>::Block;
  const uint8_t* blk = row + size_t(e / kQK) * sizeof(B);
  const B& b = *reinterpret_cast<const B*>(blk);
  const int j = e % kQK;  // first element within the block
  Chunk16 c;
  if constexpr (T == kQ4_0 || T == kQ4_1 || T == kQ5_0 || T == kQ5_1) {
    const int shift = j ? 4 : 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) c.q[i] = int((ld32(b.qs + 4 * i) >> shift) & 0x0F0F0F0Fu);
    const float d = h2f(b.d);
    if constexpr (T == kQ5_0 || T == kQ5_1) {
      const uint32_t qh = ld32(b.qh);
#pragma unroll
      for (int i = 0; i < 4; ++i) c.q[i] |= qh_bits4(qh, j + 4 * i);
    }
    c.scale = d;
    if constexpr (T == kQ4_0) c.min = -8.f * d;
    if constexpr (T == kQ5_0) c.min = -16.f * d;
    if constexpr (T == kQ4_1 || T == kQ5_1) c.min = h2f(b.m);
  } else if constexpr (T == kQ8_0 || T == kQ8_1 || T == kQ8_K) {
#pragma unroll
    for (int i = 0; i < 4; ++i) c.q[i] = int(ld32(reinterpret_cast<const uint8_t*>(b.qs) + j + 4 * i));
    if constexpr (T == kQ8_K) {
      c.scale = ldf32(blk);
    } else {
      c.scale = h2f(b.d);
    }
    c.min = 0.f;
  } else if constexpr (T == kQ2_K || T == kQ3_K) {
    const uint8_t* qs = b.qs + 32 * (j / 128) + j % 32;
    const int shift = 2 * ((j % 128) / 32);
#pragma unroll
    for (int i = 0; i < 4; ++i) c.q[i] = int((ld32(qs + 4 * i) >> shift) & 0x03030303u);
    if constexpr (T == kQ2_K) {
      const uint8_t sc = b.scales[j / 16];
      c.scale = h2f(b.d) * float(sc & 0xF);
      c.min = -(h2f(b.dmin) * float(sc >> 4));
    } else {
      // q = q2 + 4*hbit in 0..7; value = d*sc*(q - 4)
#pragma unroll
      for (int i = 0; i < 4; ++i) c.q[i] |= bits_of(ld32(b.hmask + j % 32 + 4 * i), j / 32, 2);
      c.scale = h2f(b.d) * float(q3k_scale(b.scales, j / 16));
      c.min = -4.f * c.scale;
    }
  } else if constexpr (T == kQ4_K || T == kQ5_K) {
    const uint8_t* qs = b.qs + 32 * (j / 64) + j % 32;
    const int shift = (j % 64) < 32 ? 0 : 4;
#pragma unroll
    for (int i = 0; i < 4; ++i) c.q[i] = int((ld32(qs + 4 * i) >> shift) & 0x0F0F0F0Fu);
    if constexpr (T == kQ5_K) {
#pragma unroll
      for (int i = 0; i < 4; ++i) c.q[i] |= bits_of(ld32(b.qh + j % 32 + 4 * i), j / 32, 4);
    }
    uint8_t sc, m;
    scale_min_k4(j / 32, b.scales, sc, m);
    c.scale = h2f(b.d) * float(sc);
    c.min = -(h2f(b.dmin) * float(m));
  } else if constexpr (T == kQ6_K) {
    const int h = j / 128, k = (j % 128) / 32, l = j % 32;
    const uint8_t* ql = b.ql + 64 * h + 32 * (k & 1) + l;
    const uint8_t* qh = b.qh + 32 * h + l;
    const int lo_shift = k < 2 ? 0 : 4;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      c.q[i] = int((ld32(ql + 4 * i) >> lo_shift) & 0x0F0F0F0Fu) |
               int(((ld32(qh + 4 * i) >> (2 * k)) & 0x03030303u) << 4);
    }
    c.scale = h2f(b.d) * float(b.scales[j / 16]);
    c.min = -32.f * c.scale;
  }
  return c;
}

}  // namespace wk::q
