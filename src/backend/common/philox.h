// Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
// SC'11), the counter-based generator behind rand/randn on every device. One
// definition serves the CPU backend and the GPU kernels, so a seed gives the same
// stream everywhere.
//
// Stream: element i of a call with (seed, offset) draws the four words
//   philox(counter = {lo32(i), hi32(i), lo32(offset), hi32(offset)}, key = {lo32(seed), hi32(seed)}).
// uniform: u = (w0 >> 8) * 2^-24 (f32/f16/bf16) or ((w0:w1) >> 11) * 2^-53 (f64), in [0, 1);
//          value = fma(u, hi - lo, lo) in double, then rounded once to the dtype.
// normal:  u1 = (w0 + 0.5) * 2^-32, u2 = (w1 + 0.5) * 2^-32 in (0, 1);
//          z = sqrt(-2 ln u1) * cos(2 pi u2) in double; value = fma(z, std, mean), rounded once.
#pragma once

#include <cstdint>

#include "hd.h"

namespace wick::philox {

struct Words {
  uint32_t w[4];
};

WICK_HD uint32_t mulhi32(uint32_t a, uint32_t b) { return uint32_t((uint64_t(a) * uint64_t(b)) >> 32); }

WICK_HD Words philox4x32_10(uint64_t index, uint64_t offset, uint64_t seed) {
  uint32_t c0 = uint32_t(index), c1 = uint32_t(index >> 32), c2 = uint32_t(offset), c3 = uint32_t(offset >> 32);
  uint32_t k0 = uint32_t(seed), k1 = uint32_t(seed >> 32);
  constexpr uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u, W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
  for (int r = 0; r < 10; ++r) {
    uint32_t hi0 = mulhi32(M0, c0), lo0 = M0 * c0;
    uint32_t hi1 = mulhi32(M1, c2), lo1 = M1 * c2;
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += W0;
    k1 += W1;
  }
  return Words{{c0, c1, c2, c3}};
}

// [0, 1) with 24 random bits (for f32, f16, bf16 outputs).
WICK_HD double uniform24(const Words& r) { return double(r.w[0] >> 8) * (1.0 / 16777216.0); }
// [0, 1) with 53 random bits (for f64 outputs).
WICK_HD double uniform53(const Words& r) {
  uint64_t x = (uint64_t(r.w[0]) << 32) | r.w[1];
  return double(x >> 11) * (1.0 / 9007199254740992.0);
}
// Box-Muller in double; log/cos/sqrt come from the caller's math library
// (host libm or device math), which may differ in the last bit of a double.
WICK_HD double open01(uint32_t w) { return (double(w) + 0.5) * (1.0 / 4294967296.0); }

}  // namespace wick::philox
