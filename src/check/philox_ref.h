// An independent Philox-4x32-10 for tests (Salmon et al., SC'11; Random123's
// philox4x32 with 10 rounds), written from the paper rather than shared with the
// library, plus the documented rand/randn mappings (src/backend/common/philox.h
// states the stream contract this checks).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

namespace wick::check::philox_ref {

inline std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> ctr, std::array<uint32_t, 2> key) {
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t(0xD2511F53u) * ctr[0];
    uint64_t p1 = uint64_t(0xCD9E8D57u) * ctr[2];
    ctr = {uint32_t(p1 >> 32) ^ ctr[1] ^ key[0], uint32_t(p1), uint32_t(p0 >> 32) ^ ctr[3] ^ key[1],
           uint32_t(p0)};
    key = {key[0] + 0x9E3779B9u, key[1] + 0xBB67AE85u};
  }
  return ctr;
}

// The four words element `i` of a call with (seed, offset) draws.
inline std::array<uint32_t, 4> words(uint64_t i, uint64_t offset, uint64_t seed) {
  return philox4x32_10({uint32_t(i), uint32_t(i >> 32), uint32_t(offset), uint32_t(offset >> 32)},
                       {uint32_t(seed), uint32_t(seed >> 32)});
}

// rand's value for element i before rounding to the dtype (`f64` selects 53 random bits).
inline double uniform(uint64_t i, uint64_t offset, uint64_t seed, bool f64, double lo, double hi) {
  auto w = words(i, offset, seed);
  double u = f64 ? std::ldexp(double(((uint64_t(w[0]) << 32) | w[1]) >> 11), -53)
                 : std::ldexp(double(w[0] >> 8), -24);
  return std::fma(u, hi - lo, lo);
}

// randn's value for element i before rounding (Box-Muller on two open-interval words).
inline double normal(uint64_t i, uint64_t offset, uint64_t seed, double mean, double std) {
  auto w = words(i, offset, seed);
  double u1 = (double(w[0]) + 0.5) / 4294967296.0, u2 = (double(w[1]) + 0.5) / 4294967296.0;
  double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
  return std::fma(z, std, mean);
}

}  // namespace wick::check::philox_ref
