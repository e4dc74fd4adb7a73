// ggml's quantized block layouts, bit-compatible with ggml-common.h. Read by the
// host compiler, nvcc and hipcc alike: fixed-width fields only, f16 scales held
// as their raw bits (uint16_t), every size pinned by a static_assert.
//
// Element order inside the 32-element blocks (Q4_0 .. Q5_1): qs[j] holds element
// j in its low nibble and element j+16 in its high nibble. K-quant addressing is
// documented beside each struct.
#pragma once

#include <stdint.h>

namespace wick::quant {

// ggml's numeric type ids, the values of wick::GgmlType (include/wick/quant.h), for
// code that does not include the public API: the kernels and the launch plans they
// share with the host (src/backend/gpu/quantized.cpp checks that the two agree).
namespace type_id {
enum : int {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,
  kBF16 = 30
};
}  // namespace type_id

inline constexpr int kQK4_0 = 32;
inline constexpr int kQK4_1 = 32;
inline constexpr int kQK5_0 = 32;
inline constexpr int kQK5_1 = 32;
inline constexpr int kQK8_0 = 32;
inline constexpr int kQK8_1 = 32;
inline constexpr int kQK_K = 256;       // elements per K-quant super-block
inline constexpr int kKScaleSize = 12;  // packed 6-bit scales+mins of Q4_K / Q5_K

// x = d * (q - 8), q in 0..15
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kQK4_0 / 2];
};
static_assert(sizeof(BlockQ4_0) == 18, "BlockQ4_0 size");

// x = d * q + m, q in 0..15
struct BlockQ4_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qs[kQK4_1 / 2];
};
static_assert(sizeof(BlockQ4_1) == 20, "BlockQ4_1 size");

// x = d * (q - 16), q = nibble | (bit j of qh as uint32 LE) << 4
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[kQK5_0 / 2];
};
static_assert(sizeof(BlockQ5_0) == 22, "BlockQ5_0 size");

// x = d * q + m, q in 0..31
struct BlockQ5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[kQK5_1 / 2];
};
static_assert(sizeof(BlockQ5_1) == 24, "BlockQ5_1 size");

// x = d * qs[j]
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[kQK8_0];
};
static_assert(sizeof(BlockQ8_0) == 34, "BlockQ8_0 size");

// x = d * qs[j]; s = d * sum(qs) (folds a weight block's offset into dot products)
struct BlockQ8_1 {
  uint16_t d;
  uint16_t s;
  int8_t qs[kQK8_1];
};
static_assert(sizeof(BlockQ8_1) == 36, "BlockQ8_1 size");

// 16 sub-blocks of 16: x = d*(sc&0xF)*q - dmin*(sc>>4), q 2 bits at
// (qs[32*(e/128) + e%32] >> 2*((e%128)/32)) & 3, sc = scales[e/16].
struct BlockQ2_K {
  uint8_t scales[kQK_K / 16];
  uint8_t qs[kQK_K / 4];
  uint16_t d;
  uint16_t dmin;
};
static_assert(sizeof(BlockQ2_K) == 84, "BlockQ2_K size");

// 16 sub-blocks of 16: x = d*(sc6-32)*(q2 - (hbit ? 0 : 4)); q2 as in Q2_K, hbit is
// bit (e/32) of hmask[e%32]; sc6 packed 6-bit in scales[12].
struct BlockQ3_K {
  uint8_t hmask[kQK_K / 8];
  uint8_t qs[kQK_K / 4];
  uint8_t scales[12];
  uint16_t d;
};
static_assert(sizeof(BlockQ3_K) == 110, "BlockQ3_K size");

// 8 sub-blocks of 32: x = d*sc*q - dmin*m; chunk c = e/64 uses qs[32c..32c+31], low
// nibbles first (sub-block 2c) then high nibbles (2c+1).
struct BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[kKScaleSize];
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ4_K) == 144, "BlockQ4_K size");

// As Q4_K plus a fifth bit: bit 2c (low half) / 2c+1 (high half) of qh[e%32].
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[kKScaleSize];
  uint8_t qh[kQK_K / 8];
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ5_K) == 176, "BlockQ5_K size");

// 16 sub-blocks of 16: x = d*scales[e/16]*(q - 32), q = 4 low bits from ql, 2 high from qh.
struct BlockQ6_K {
  uint8_t ql[kQK_K / 2];
  uint8_t qh[kQK_K / 4];
  int8_t scales[kQK_K / 16];
  uint16_t d;
};
static_assert(sizeof(BlockQ6_K) == 210, "BlockQ6_K size");

// The CPU activation partner of the K-quants: x = d*qs[j], d is f32;
// bsums[i] = sum of qs[16i .. 16i+15].
struct BlockQ8_K {
  float d;
  int8_t qs[kQK_K];
  int16_t bsums[kQK_K / 16];
};
static_assert(sizeof(BlockQ8_K) == 292, "BlockQ8_K size");

}  // namespace wick::quant
