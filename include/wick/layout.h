// Shape and Layout. A Layout is how a tensor's elements sit in its storage:
// dims, strides (in elements, never negative; 0 for a broadcast dim) and the
// start offset (in elements). Contiguity (row-major) is computed once.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <vector>

namespace wick {

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<size_t> dims) : dims_(dims) {}
  explicit Shape(std::vector<size_t> dims) : dims_(std::move(dims)) {}

  const std::vector<size_t>& dims() const { return dims_; }
  size_t rank() const { return dims_.size(); }
  size_t operator[](size_t i) const { return dims_[i]; }
  // Throws ShapeMismatch when the product of the non-zero dims exceeds 2^63-1 (ops
  // check their shapes first and name themselves; this never returns a wrapped count).
  size_t elem_count() const;
  // Row-major strides of a contiguous tensor of this shape, in elements.
  std::vector<size_t> contiguous_strides() const;
  // "[2,3,4]"
  std::string str() const;
  bool operator==(const Shape& o) const { return dims_ == o.dims_; }
  bool operator!=(const Shape& o) const { return dims_ != o.dims_; }

 private:
  std::vector<size_t> dims_;
};

// Resolves a possibly negative dim against a rank; throws DimOutOfRange naming `op`.
size_t resolve_dim(int64_t dim, size_t rank, const char* op);

class Layout {
 public:
  Layout() = default;
  // Contiguous row-major layout of `shape` starting at `offset`.
  explicit Layout(const Shape& shape, size_t offset = 0);
  Layout(std::vector<size_t> dims, std::vector<size_t> strides, size_t offset);

  const std::vector<size_t>& dims() const { return dims_; }
  const std::vector<size_t>& strides() const { return strides_; }
  size_t start_offset() const { return offset_; }
  size_t rank() const { return dims_.size(); }
  Shape shape() const { return Shape(dims_); }
  size_t elem_count() const;
  // Row-major contiguous (size-1 dims ignored): elements are storage[offset, offset+n).
  bool is_contiguous() const { return contiguous_; }
  // The largest storage index the layout touches, plus one (offset when empty).
  size_t storage_extent() const;
  // dims then strides, the `info` array GPU kernels take.
  std::vector<size_t> dims_and_strides() const;

  // Views (no data moves); the op name in errors is given by the caller.
  Layout narrow(size_t dim, size_t start, size_t len) const;
  Layout transpose(size_t d0, size_t d1) const;
  Layout permute(const std::vector<size_t>& order) const;
  Layout broadcast_as(const Shape& target) const;  // throws ShapeMismatch
  Layout squeeze(size_t dim) const;
  Layout unsqueeze(size_t dim) const;

  std::string str() const;  // "dims [2,3] strides [3,1] offset 0"

 private:
  void update_contiguity();
  std::vector<size_t> dims_, strides_;
  size_t offset_ = 0;
  bool contiguous_ = true;
};

}  // namespace wick
