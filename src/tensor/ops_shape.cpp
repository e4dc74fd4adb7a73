// Creation and shape ops composed from views, copies and the elementwise families:
// eye, linspace, *_like, from_blob and data_ptr (external memory), expand, repeat, pad,
// split, tril / triu. Views (expand, split) never copy; repeat is one strided copy of a
// stride-0 view; pad concatenates constant blocks along each padded dim; eye, tril and
// triu compare index ranges (arange) and select.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "base/dispatch.h"
#include "tensor/checks.h"

namespace wick {

using front::describe;

namespace {

// a * b, or InvalidArgument naming op when it overflows size_t.
size_t checked_mul(const char* op, size_t a, size_t b, const Tensor& t) {
  if (a != 0 && b > std::numeric_limits<size_t>::max() / a) {
    throw_error(ErrorKind::InvalidArgument, op,
                fmt::format("the result's size overflows ({} x {}) for {}", a, b, describe(t)));
  }
  return a * b;
}

// Row and column indices (i64) of an r x c grid: [r, 1] and [1, c].
std::pair<Tensor, Tensor> grid_indices(size_t r, size_t c, Device d) {
  Tensor rows = Tensor::arange(0, double(r), 1, DType::I64, d).reshape(Shape{r, 1});
  Tensor cols = Tensor::arange(0, double(c), 1, DType::I64, d).reshape(Shape{1, c});
  return {rows, cols};
}

// The triangle of x's last two dims where (j - i) cmp k holds; zero elsewhere.
Tensor triangle(const Tensor& x, const char* op, CmpOp keep, int64_t k) {
  front::check_defined(op, x, "tensor");
  if (x.rank() < 2) {
    throw_error(ErrorKind::ShapeMismatch, op, fmt::format("tensor {} needs rank >= 2", describe(x)));
  }
  auto [rows, cols] = grid_indices(x.dims()[x.rank() - 2], x.dims()[x.rank() - 1], x.device());
  return cmp(keep, cols - rows, k).where_cond(x, 0);
}

}  // namespace

// --- creation --------------------------------------------------------------------------

Tensor Tensor::eye(size_t n, DType dtype, Device device) { return eye(n, n, dtype, device); }

Tensor Tensor::eye(size_t n, size_t m, DType dtype, Device device) {
  auto [rows, cols] = grid_indices(n, m, device);
  return rows.eq(cols).to_dtype(dtype);
}

Tensor Tensor::linspace(double start, double end, size_t steps, DType dtype, Device device) {
  if (!std::isfinite(start) || !std::isfinite(end)) {
    throw_error(ErrorKind::InvalidArgument, "linspace",
                fmt::format("start {} end {} steps {}: start and end must be finite", start, end, steps));
  }
  std::vector<double> v(steps);
  if (steps == 1) v[0] = start;
  if (steps > 1) {
    const double step = (end - start) / double(steps - 1);
    const size_t half = steps / 2;
    for (size_t i = 0; i < steps; ++i)
      v[i] = i < half ? start + step * double(i) : end - step * double(steps - 1 - i);
  }
  return from_vector(v, Shape{steps}).to_dtype(dtype).to_device(device);
}

Tensor Tensor::zeros_like(const Tensor& t) {
  front::check_defined("zeros_like", t, "tensor");
  return zeros(t.shape(), t.dtype(), t.device());
}

Tensor Tensor::ones_like(const Tensor& t) {
  front::check_defined("ones_like", t, "tensor");
  return ones(t.shape(), t.dtype(), t.device());
}

Tensor Tensor::full_like(const Tensor& t, Scalar value) {
  front::check_defined("full_like", t, "tensor");
  return full(value, t.shape(), t.dtype(), t.device());
}

Tensor Tensor::from_blob(void* data, const Shape& shape, DType dtype, Device device,
                         std::function<void(void*)> deleter) {
  const char* op = "from_blob";
  if (size_t(dtype) >= size_t(kNumDTypes)) {
    throw_error(ErrorKind::UnsupportedDType, op, fmt::format("unknown dtype {}", int(dtype)));
  }
  const size_t n = shape.elem_count();
  if (!data && n > 0) {
    throw_error(ErrorKind::InvalidArgument, op,
                fmt::format("null data for {} {}", shape.str(), dtype_name(dtype)));
  }
  if (reinterpret_cast<uintptr_t>(data) % dtype_size(dtype) != 0) {
    throw_error(ErrorKind::InvalidArgument, op,
                fmt::format("data at {} for {} {} is not aligned to its {}-byte elements", data, shape.str(),
                            dtype_name(dtype), dtype_size(dtype)));
  }
  auto s = backend_device(device).wrap(data, n, dtype, std::move(deleter));
  return Tensor(std::move(s), Layout(shape), dtype, device);
}

void* Tensor::data_ptr() const {
  front::check_defined("data_ptr", *this, "tensor");
  void* base = storage_->base_ptr();
  if (!base) return nullptr;
  return static_cast<char*>(base) + layout_.start_offset() * dtype_size(dtype_);
}

// --- views -----------------------------------------------------------------------------

Tensor Tensor::expand(const std::vector<int64_t>& sizes) const {
  const char* op = "expand";
  front::check_defined(op, *this, "tensor");
  if (sizes.size() < rank()) {
    throw_error(
        ErrorKind::ShapeMismatch, op,
        fmt::format("sizes [{}] have fewer dims than tensor {}", fmt::join(sizes, ","), describe(*this)));
  }
  const size_t lead = sizes.size() - rank();
  std::vector<size_t> target(sizes.size());
  for (size_t k = 0; k < sizes.size(); ++k) {
    const int64_t s = sizes[k];
    if (s == -1 && k >= lead) {
      target[k] = dims()[k - lead];
      continue;
    }
    if (s < 0) {
      throw_error(
          ErrorKind::InvalidArgument, op,
          fmt::format("size {} at dim {} of [{}] for tensor {}: only -1 (keep, on an existing dim) is "
                      "allowed below 0",
                      s, k, fmt::join(sizes, ","), describe(*this)));
    }
    target[k] = size_t(s);
    if (k >= lead && dims()[k - lead] != 1 && dims()[k - lead] != target[k]) {
      throw_error(ErrorKind::ShapeMismatch, op,
                  fmt::format("tensor {} cannot expand to [{}]: dim {} has size {}, not 1 or {}",
                              describe(*this), fmt::join(sizes, ","), k - lead, dims()[k - lead], s));
    }
  }
  return broadcast_as(Shape(target));
}

std::vector<Tensor> Tensor::split(size_t size, int64_t dim) const {
  const char* op = "split";
  front::check_defined(op, *this, "tensor");
  size_t d = resolve_dim(dim, rank(), op);
  if (size == 0) {
    throw_error(ErrorKind::InvalidArgument, op,
                fmt::format("pieces of size 0 along dim {} of {}", d, describe(*this)));
  }
  const size_t n = dims()[d];
  if (n == 0) return {*this};
  std::vector<Tensor> out;
  for (size_t start = 0; start < n; start += size)
    out.push_back(narrow(int64_t(d), start, std::min(size, n - start)));
  return out;
}

std::vector<Tensor> Tensor::split_with_sizes(const std::vector<size_t>& sizes, int64_t dim) const {
  const char* op = "split_with_sizes";
  front::check_defined(op, *this, "tensor");
  size_t d = resolve_dim(dim, rank(), op);
  size_t total = 0;
  for (size_t s : sizes) total += s;
  if (total != dims()[d]) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("sizes [{}] add up to {}, dim {} of {} has size {}", fmt::join(sizes, ","), total,
                            d, describe(*this), dims()[d]));
  }
  std::vector<Tensor> out;
  size_t start = 0;
  for (size_t s : sizes) {
    out.push_back(narrow(int64_t(d), start, s));
    start += s;
  }
  return out;
}

// --- copies ----------------------------------------------------------------------------

Tensor Tensor::repeat(const std::vector<size_t>& reps) const {
  const char* op = "repeat";
  front::check_defined(op, *this, "tensor");
  if (reps.size() < rank()) {
    throw_error(
        ErrorKind::ShapeMismatch, op,
        fmt::format("{} repeats given for tensor {} of rank {}", reps.size(), describe(*this), rank()));
  }
  // View dims [r0, d0, r1, d1, ...] with stride 0 on each r: one strided copy tiles it.
  const size_t lead = reps.size() - rank();
  std::vector<size_t> vd, vs, out;
  size_t count = 1;
  for (size_t k = 0; k < reps.size(); ++k) {
    const size_t dk = k < lead ? 1 : dims()[k - lead];
    vd.insert(vd.end(), {reps[k], dk});
    vs.insert(vs.end(), {0, k < lead ? 0 : layout_.strides()[k - lead]});
    out.push_back(checked_mul(op, reps[k], dk, *this));
    count = checked_mul(op, count, out.back(), *this);
  }
  return Tensor(storage_, Layout(vd, vs, layout_.start_offset()), dtype_, device_).copy().reshape(Shape(out));
}

Tensor Tensor::pad(const std::vector<std::array<size_t, 2>>& widths, Scalar value) const {
  const char* op = "pad";
  front::check_defined(op, *this, "tensor");
  if (widths.size() != rank()) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("{} {{before, after}} pairs given for tensor {} of rank {}", widths.size(),
                            describe(*this), rank()));
  }
  Tensor y = *this;
  bool padded = false;
  for (size_t k = 0; k < rank(); ++k) {
    if (widths[k][0] == 0 && widths[k][1] == 0) continue;
    std::vector<Tensor> parts;
    for (size_t side = 0; side < 2; ++side) {
      if (side == 1) parts.push_back(y);
      if (widths[k][side] == 0) continue;
      std::vector<size_t> d = y.dims();
      d[k] = widths[k][side];
      parts.push_back(full(value, Shape(d), dtype_, device_));
    }
    y = cat(parts, int64_t(k));
    padded = true;
  }
  return padded ? y : copy();
}

Tensor Tensor::tril(int64_t k) const { return triangle(*this, "tril", CmpOp::Le, k); }
Tensor Tensor::triu(int64_t k) const { return triangle(*this, "triu", CmpOp::Ge, k); }

}  // namespace wick
