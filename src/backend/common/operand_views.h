// Host-side views of op operands shared by the CPU and GPU backends: how an
// indexed dim splits a shape, and how a strided matrix reads as a BLAS operand.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace wick {

// dims viewed as [left, dims[dim], right] (the products of the dims before and after dim).
struct Blocks {
  size_t left = 1, right = 1;
};
inline Blocks blocks_of(const std::vector<size_t>& dims, size_t dim) {
  Blocks b;
  for (size_t k = 0; k < dim; ++k) b.left *= dims[k];
  for (size_t k = dim + 1; k < dims.size(); ++k) b.right *= dims[k];
  return b;
}

// How row-major BLAS reads a rows x cols matrix with strides (s_row, s_col): as is
// (element (i,j) at i*ld + j) or as the row-major storage of its transpose (element
// (i,j) at j*ld + i); ok is false when neither fits. BLAS requires ld >= max(1, row
// length).
struct BlasView {
  bool ok = false;
  bool trans = false;
  size_t ld = 0;
};
inline BlasView blas_view(size_t rows, size_t cols, size_t s_row, size_t s_col) {
  const size_t min_ld = std::max<size_t>(cols, 1);
  if ((s_col == 1 || cols <= 1) && (rows <= 1 || s_row >= min_ld))
    return {true, false, rows <= 1 ? min_ld : s_row};
  const size_t min_ld_t = std::max<size_t>(rows, 1);
  if ((s_row == 1 || rows <= 1) && (cols <= 1 || s_col >= min_ld_t))
    return {true, true, cols <= 1 ? min_ld_t : s_col};
  return {};
}

}  // namespace wick
