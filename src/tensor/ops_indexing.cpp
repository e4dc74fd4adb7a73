// Front end of the indexing family: index_select, gather, scatter / scatter_add (copying and in place)
// and index_add. Shapes follow Candle's index_select, gather, scatter and index_add:
//   index_select  ids 1-D; out = self with dims[dim] = len(ids)
//   gather        ids rank = self rank, ids dims = self dims except at dim; out shape = ids shape
//   scatter*      ids shape = src shape; src dims = self dims except at dim
//   index_add     ids 1-D, len(ids) = src.dims[dim]; src dims = self dims except at dim
// Index values are checked by the backend (they live in device data), before it writes anything.
#include <fmt/format.h>

#include "base/dispatch.h"
#include "tensor/checks.h"

namespace wick {

using front::describe;

namespace {

void check_ids(const char* op, const Tensor& self, const Tensor& ids) {
  front::check_defined(op, self, "tensor");
  front::check_defined(op, ids, "ids");
  front::check_same_device(op, self, ids);
  front::check_dtype_in(op, ids, kIndexDTypes, "ids");
}

void check_ids_1d(const char* op, const Tensor& ids) {
  if (ids.rank() != 1) {
    throw_error(ErrorKind::ShapeMismatch, op, fmt::format("ids {} must be 1-D", describe(ids)));
  }
}

// a and b have the same rank and the same dims everywhere except at `dim`.
bool same_except(const Tensor& a, const Tensor& b, size_t dim) {
  if (a.rank() != b.rank()) return false;
  for (size_t k = 0; k < a.rank(); ++k) {
    if (k != dim && a.dims()[k] != b.dims()[k]) return false;
  }
  return true;
}

// The checks shared by scatter, scatter_add and their in-place forms; returns the resolved dim.
size_t check_scatter(const char* op, const Tensor& self, const Tensor& ids, const Tensor& src, int64_t dim) {
  check_ids(op, self, ids);
  front::check_defined(op, src, "src");
  front::check_same_device(op, self, src);
  front::check_same_dtype(op, self, src);
  size_t d = resolve_dim(dim, self.rank(), op);
  if (ids.shape() != src.shape()) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("ids {} and src {} must have the same shape", describe(ids), describe(src)));
  }
  if (!same_except(self, src, d)) {
    throw_error(
        ErrorKind::ShapeMismatch, op,
        fmt::format("src {} must match {} in every dim but dim {}", describe(src), describe(self), d));
  }
  return d;
}

// Checks, then scatters into `dst` in place (dst must be contiguous: the backend writes its storage).
void scatter_in_place(const char* op, ScatterMode mode, Tensor& dst, const Tensor& ids, const Tensor& src,
                      int64_t dim) {
  size_t d = check_scatter(op, dst, ids, src, dim);
  if (!dst.is_contiguous()) {
    throw_error(ErrorKind::InvalidArgument, op,
                fmt::format("destination {} is not contiguous", describe(dst)));
  }
  if (ids.elem_count() == 0) return;
  // Operands that share elements with the destination are read from copies: the backend
  // writes dst while it reads them.
  const Tensor s = front::overlaps(dst, src) ? src.copy() : src;
  const Tensor i = front::overlaps(dst, ids) ? ids.copy() : ids;
  dst.storage()->scatter(mode, dst.layout(), *i.storage(), i.layout(), *s.storage(), s.layout(), d);
}

}  // namespace

Tensor Tensor::index_select(const Tensor& ids, int64_t dim) const {
  const char* op = "index_select";
  check_ids(op, *this, ids);
  check_ids_1d(op, ids);
  size_t d = resolve_dim(dim, rank(), op);
  std::vector<size_t> od = dims();
  od[d] = ids.elem_count();
  Shape out_shape(od);
  front::check_shape(op, out_shape, dtype_);
  if (ids.elem_count() == 0) return Tensor::empty(out_shape, dtype_, device_);
  return front::wrap(storage_->index_select(*ids.storage(), layout_, ids.layout(), d), out_shape, dtype_,
                     device_);
}

Tensor Tensor::gather(const Tensor& ids, int64_t dim) const {
  const char* op = "gather";
  check_ids(op, *this, ids);
  size_t d = resolve_dim(dim, rank(), op);
  if (!same_except(*this, ids, d)) {
    throw_error(
        ErrorKind::ShapeMismatch, op,
        fmt::format("ids {} must match {} in every dim but dim {}", describe(ids), describe(*this), d));
  }
  if (ids.elem_count() == 0) return Tensor::empty(ids.shape(), dtype_, device_);
  return front::wrap(storage_->gather(layout_, *ids.storage(), ids.layout(), d), ids.shape(), dtype_,
                     device_);
}

void Tensor::scatter_(const Tensor& ids, const Tensor& src, int64_t dim) {
  scatter_in_place("scatter_", ScatterMode::Set, *this, ids, src, dim);
}

void Tensor::scatter_add_(const Tensor& ids, const Tensor& src, int64_t dim) {
  scatter_in_place("scatter_add_", ScatterMode::Add, *this, ids, src, dim);
}

Tensor Tensor::scatter(const Tensor& ids, const Tensor& src, int64_t dim) const {
  check_scatter("scatter", *this, ids, src, dim);
  Tensor out = copy();
  scatter_in_place("scatter", ScatterMode::Set, out, ids, src, dim);
  return out;
}

Tensor Tensor::scatter_add(const Tensor& ids, const Tensor& src, int64_t dim) const {
  check_scatter("scatter_add", *this, ids, src, dim);
  Tensor out = copy();
  scatter_in_place("scatter_add", ScatterMode::Add, out, ids, src, dim);
  return out;
}

Tensor Tensor::index_add(const Tensor& ids, const Tensor& src, int64_t dim) const {
  const char* op = "index_add";
  check_ids(op, *this, ids);
  front::check_defined(op, src, "src");
  front::check_same_device(op, *this, src);
  front::check_same_dtype(op, *this, src);
  check_ids_1d(op, ids);
  size_t d = resolve_dim(dim, rank(), op);
  if (!same_except(*this, src, d)) {
    throw_error(
        ErrorKind::ShapeMismatch, op,
        fmt::format("src {} must match {} in every dim but dim {}", describe(src), describe(*this), d));
  }
  if (ids.elem_count() != src.dims()[d]) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("ids {} has {} entries, src {} has {} along dim {}", describe(ids),
                            ids.elem_count(), describe(src), src.dims()[d], d));
  }
  if (ids.elem_count() == 0) return copy();
  return front::wrap(
      storage_->index_add(layout_, *ids.storage(), ids.layout(), *src.storage(), src.layout(), d), shape(),
      dtype_, device_);
}

}  // namespace wick
