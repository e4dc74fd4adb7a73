// Raw DEFLATE (RFC 1951) decoding for the deflated entries of .npz archives
// (np.savez_compressed), through zlib. Bounded: it never produces more than
// `expected` bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace wick::io {

// Inflates `size` bytes of raw deflate data that must expand to exactly `expected`
// bytes. Throws Error(Format) naming `what` on malformed or mismatched data.
std::vector<uint8_t> inflate_raw(const uint8_t* data, size_t size, size_t expected, const std::string& what);

// The zip CRC-32 of `n` bytes (zlib's crc32).
uint32_t crc32(const uint8_t* p, size_t n);

}  // namespace wick::io
