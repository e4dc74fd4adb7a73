// The packed sub-block scales of the K-quants (base/ggml_blocks.h), unpacked the
// same way by the CPU backend (backend/cpu/kquants.cpp) and the GPU kernels
// (backend/gpu/kernels/quantized/).
#pragma once

#include <stdint.h>

#include "backend/common/hd.h"

namespace wick::quant {

// 6-bit scale d and min m of sub-block j (0..7) of Q4_K / Q5_K's 12-byte packing:
// j < 4 in the low 6 bits of q[j] and q[j + 4]; j >= 4 low 4 bits from q[j + 4],
// high 2 bits from bits 6..7 of q[j - 4] (d) and q[j] (m).
WICK_HD void scale_min_k4(int j, const uint8_t* q, uint8_t& d, uint8_t& m) {
  if (j < 4) {
    d = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    d = uint8_t((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    m = uint8_t((q[j + 4] >> 4) | ((q[j - 0] >> 6) << 4));
  }
}

// 6-bit signed scale j (0..15) of Q3_K's 12-byte packing, minus the bias of 32.
WICK_HD int q3k_scale(const uint8_t* s, int j) {
  int lo = j < 8 ? (s[j] & 0xF) : (s[j - 8] >> 4);
  int hi = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
  return (lo | hi << 4) - 32;
}

}  // namespace wick::quant
