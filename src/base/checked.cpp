// Checked size arithmetic (base/checked.h).
#include "base/checked.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace wick {

uint64_t checked_mul(uint64_t a, uint64_t b, ErrorKind kind, std::string_view op, std::string_view what) {
  uint64_t r = 0;
  if (!mul_fits(a, b, r)) throw_error(kind, op, fmt::format("{}: {} * {} exceeds 2^63-1", what, a, b));
  return r;
}

uint64_t checked_add(uint64_t a, uint64_t b, ErrorKind kind, std::string_view op, std::string_view what) {
  uint64_t r = 0;
  if (!add_fits(a, b, r)) throw_error(kind, op, fmt::format("{}: {} + {} exceeds 2^63-1", what, a, b));
  return r;
}

bool shape_fits(const std::vector<uint64_t>& dims, uint64_t elem_size, uint64_t& elems) {
  uint64_t prod = elem_size ? elem_size : 1;
  bool empty = false;
  for (uint64_t d : dims) {
    if (d == 0) {
      empty = true;
    } else if (!mul_fits(prod, d, prod)) {
      return false;
    }
  }
  elems = empty ? 0 : prod / (elem_size ? elem_size : 1);
  return true;
}

uint64_t checked_elem_count(const std::vector<uint64_t>& dims, uint64_t elem_size, std::string_view op) {
  uint64_t n = 0;
  if (!shape_fits(dims, elem_size, n)) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("shape [{}] of {}-byte elements is too large: its size exceeds 2^63-1 bytes",
                            fmt::join(dims, ","), elem_size));
  }
  return n;
}

}  // namespace wick
