// Dim collapsing, written once for the CPU and GPU backends (host code): operands
// of the same dims seen through the fewest dims that describe them all.
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <span>
#include <vector>

#include "wick/layout.h"

namespace wick {

// Operand geometry after collapsing: size-1 dims dropped and each dim merged into
// the one before it where every operand steps across the boundary as if
// contiguous. Strides in elements, outermost dim first.
struct Collapsed {
  std::vector<size_t> dims;
  std::vector<std::vector<size_t>> strides;  // one set per operand
  // Every operand row-major dense (at most one dim left, unit stride in each).
  bool contiguous = true;
  // dims then each stride set: the GPU kernels' `info` array.
  std::vector<size_t> info() const {
    std::vector<size_t> v(dims);
    for (const auto& s : strides) v.insert(v.end(), s.begin(), s.end());
    return v;
  }
};

// `dims` with one stride set per operand (strides[j] has dims.size() entries).
inline Collapsed collapse_dims(const std::vector<size_t>& dims,
                               std::span<const std::vector<size_t>* const> strides) {
  Collapsed c;
  const size_t k = strides.size();
  c.strides.resize(k);
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    bool merge = !c.dims.empty();
    for (size_t j = 0; j < k && merge; ++j) merge = c.strides[j].back() == (*strides[j])[d] * dims[d];
    if (merge) {
      c.dims.back() *= dims[d];
      for (size_t j = 0; j < k; ++j) c.strides[j].back() = (*strides[j])[d];
    } else {
      c.dims.push_back(dims[d]);
      for (size_t j = 0; j < k; ++j) c.strides[j].push_back((*strides[j])[d]);
    }
  }
  c.contiguous = c.dims.empty() ||
                 (c.dims.size() == 1 &&
                  std::all_of(c.strides.begin(), c.strides.end(), [](const auto& s) { return s[0] == 1; }));
  return c;
}

// One stride set.
inline Collapsed collapse_dims(const std::vector<size_t>& dims, const std::vector<size_t>& strides) {
  const std::vector<size_t>* s[] = {&strides};
  return collapse_dims(dims, s);
}

// Layouts of identical dims (start offsets are not part of the result).
inline Collapsed collapse(std::span<const Layout* const> layouts) {
  std::vector<const std::vector<size_t>*> strides;
  strides.reserve(layouts.size());
  for (const Layout* l : layouts) strides.push_back(&l->strides());
  return collapse_dims(layouts[0]->dims(), strides);
}
inline Collapsed collapse(std::initializer_list<const Layout*> layouts) {
  return collapse(std::span<const Layout* const>(layouts.begin(), layouts.size()));
}

}  // namespace wick
