// Checked size arithmetic, the one place it is written. Every size computed from
// dims, counts or parameters that a caller or a file controls (element counts, byte
// counts, output lengths, allocation rounding) goes through these helpers, so a
// product or sum that does not fit is an Error naming the op, never a wrapped value.
//
// The limit is kMaxSize = 2^63 - 1 for every size: element counts, byte counts and
// the index arithmetic the backends do in ptrdiff_t. It is what pointer arithmetic,
// NumPy's npy_intp and GGUF's int64 dims can all express, so a tensor wick can hold
// can be written to every format it reads, and the other way round.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "wick/error.h"

namespace wick {

static_assert(sizeof(size_t) == sizeof(uint64_t), "wick assumes a 64-bit size_t");

inline constexpr uint64_t kMaxSize = uint64_t(std::numeric_limits<int64_t>::max());

// a * b and a + b when the result is at most kMaxSize; false (out untouched) otherwise.
inline bool mul_fits(uint64_t a, uint64_t b, uint64_t& out) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r) || r > kMaxSize) return false;
  out = r;
  return true;
}
inline bool add_fits(uint64_t a, uint64_t b, uint64_t& out) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r) || r > kMaxSize) return false;
  out = r;
  return true;
}

// The same, throwing `kind` as "[op] what: a * b exceeds 2^63-1" when the result does not fit.
uint64_t checked_mul(uint64_t a, uint64_t b, ErrorKind kind, std::string_view op, std::string_view what);
uint64_t checked_add(uint64_t a, uint64_t b, ErrorKind kind, std::string_view op, std::string_view what);

// NumPy's rule for a shape: the product of its non-zero dims times elem_size must be at
// most kMaxSize (a zero dim makes the tensor empty but does not excuse the others, so
// the row-major strides of any valid shape fit too). On success `elems` is the element
// count (0 when a dim is 0).
bool shape_fits(const std::vector<uint64_t>& dims, uint64_t elem_size, uint64_t& elems);

// shape_fits, throwing ShapeMismatch "[op] shape [..] of `elem_size`-byte elements is too
// large ..." when the shape does not fit; returns the element count.
uint64_t checked_elem_count(const std::vector<uint64_t>& dims, uint64_t elem_size, std::string_view op);

}  // namespace wick
