#include "wick/layout.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <numeric>

#include "base/checked.h"
#include "wick/error.h"

namespace wick {

size_t Shape::elem_count() const { return checked_elem_count(dims_, 1, "shape"); }

std::vector<size_t> Shape::contiguous_strides() const {
  std::vector<size_t> s(dims_.size());
  size_t acc = 1;
  for (size_t k = dims_.size(); k-- > 0;) {
    s[k] = acc;
    acc *= dims_[k];
  }
  return s;
}

std::string Shape::str() const { return fmt::format("[{}]", fmt::join(dims_, ",")); }

size_t resolve_dim(int64_t dim, size_t rank, const char* op) {
  int64_t r = int64_t(rank);
  int64_t d = dim < 0 ? dim + r : dim;
  if (d < 0 || d >= r) {
    throw_error(ErrorKind::DimOutOfRange, op, fmt::format("dim {} out of range for rank {}", dim, rank));
  }
  return size_t(d);
}

Layout::Layout(const Shape& shape, size_t offset)
    : dims_(shape.dims()), strides_(shape.contiguous_strides()), offset_(offset), contiguous_(true) {}

Layout::Layout(std::vector<size_t> dims, std::vector<size_t> strides, size_t offset)
    : dims_(std::move(dims)), strides_(std::move(strides)), offset_(offset) {
  update_contiguity();
}

void Layout::update_contiguity() {
  size_t acc = 1;
  contiguous_ = true;
  for (size_t k = dims_.size(); k-- > 0;) {
    if (dims_[k] == 1) continue;  // a size-1 dim's stride never matters
    if (strides_[k] != acc) {
      contiguous_ = false;
      break;
    }
    acc *= dims_[k];
  }
  if (elem_count() == 0) contiguous_ = true;
}

size_t Layout::elem_count() const { return checked_elem_count(dims_, 1, "layout"); }

size_t Layout::storage_extent() const {
  if (elem_count() == 0) return offset_;
  size_t last = offset_;
  for (size_t k = 0; k < dims_.size(); ++k) last += (dims_[k] - 1) * strides_[k];
  return last + 1;
}

std::vector<size_t> Layout::dims_and_strides() const {
  std::vector<size_t> v(dims_);
  v.insert(v.end(), strides_.begin(), strides_.end());
  return v;
}

Layout Layout::narrow(size_t dim, size_t start, size_t len) const {
  Layout l = *this;
  l.offset_ += start * strides_[dim];
  l.dims_[dim] = len;
  l.update_contiguity();
  return l;
}

Layout Layout::transpose(size_t d0, size_t d1) const {
  Layout l = *this;
  std::swap(l.dims_[d0], l.dims_[d1]);
  std::swap(l.strides_[d0], l.strides_[d1]);
  l.update_contiguity();
  return l;
}

Layout Layout::permute(const std::vector<size_t>& order) const {
  Layout l = *this;
  for (size_t k = 0; k < order.size(); ++k) {
    l.dims_[k] = dims_[order[k]];
    l.strides_[k] = strides_[order[k]];
  }
  l.update_contiguity();
  return l;
}

Layout Layout::broadcast_as(const Shape& target) const {
  const auto& td = target.dims();
  if (td.size() < dims_.size()) {
    throw_error(ErrorKind::ShapeMismatch, "broadcast_as",
                fmt::format("cannot broadcast {} to {}", shape().str(), target.str()));
  }
  size_t extra = td.size() - dims_.size();
  std::vector<size_t> strides(td.size(), 0);
  for (size_t k = 0; k < dims_.size(); ++k) {
    size_t tk = k + extra;
    if (dims_[k] == td[tk]) {
      strides[tk] = strides_[k];
    } else if (dims_[k] == 1) {
      strides[tk] = 0;
    } else {
      throw_error(ErrorKind::ShapeMismatch, "broadcast_as",
                  fmt::format("cannot broadcast {} to {}", shape().str(), target.str()));
    }
  }
  return Layout(td, std::move(strides), offset_);
}

Layout Layout::squeeze(size_t dim) const {
  Layout l = *this;
  l.dims_.erase(l.dims_.begin() + std::ptrdiff_t(dim));
  l.strides_.erase(l.strides_.begin() + std::ptrdiff_t(dim));
  l.update_contiguity();
  return l;
}

Layout Layout::unsqueeze(size_t dim) const {
  Layout l = *this;
  // stride of the new size-1 dim: whatever keeps contiguity (it is never used to step)
  size_t s = dim < dims_.size() ? strides_[dim] * dims_[dim] : 1;
  l.dims_.insert(l.dims_.begin() + std::ptrdiff_t(dim), 1);
  l.strides_.insert(l.strides_.begin() + std::ptrdiff_t(dim), s);
  l.update_contiguity();
  return l;
}

std::string Layout::str() const {
  return fmt::format("dims [{}] strides [{}] offset {}", fmt::join(dims_, ","), fmt::join(strides_, ","), offset_);
}

}  // namespace wick
