// Reductions composed from the backend families: the whole-tensor min / max / argmin /
// argmax, mean, var, log_sum_exp and topk. f16 and bf16 inputs are widened to f32 first
// where a sum is kept (mean, var, log_sum_exp): the backend's sum accumulates them in f32
// but rounds its result to the dtype, which would overflow (a sum of 1000 values of 100
// is past f16's 65504) and round twice.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "base/dispatch.h"
#include "tensor/checks.h"

namespace wick {

using front::describe;

namespace {

// Every dim of t (a rank-0 tensor is viewed as [1]).
std::vector<int64_t> all_dims(const Tensor& t) {
  std::vector<int64_t> d(std::max<size_t>(t.rank(), 1));
  for (size_t k = 0; k < d.size(); ++k) d[k] = int64_t(k);
  return d;
}
Tensor at_least_1d(const Tensor& t) { return t.rank() == 0 ? t.reshape(Shape{1}) : t; }

// Checks a float reduction's input and dims; returns the number of elements reduced.
size_t check_float_reduce(const char* op, const Tensor& t, const std::vector<int64_t>& dims) {
  front::check_defined(op, t, "tensor");
  front::check_dtype_in(op, t, kFloatDTypes, "tensor");
  if (dims.empty()) {
    throw_error(ErrorKind::InvalidArgument, op, fmt::format("no dims to reduce for {}", describe(t)));
  }
  size_t n = 1;
  for (size_t d : front::resolve_dims(op, dims, t.rank())) n *= t.dims()[d];
  return n;
}

// The dtype a float reduction computes in.
DType wide(DType dt) { return dt == DType::F16 || dt == DType::BF16 ? DType::F32 : dt; }

// t's dims with `dims` (resolved, sorted) dropped.
Shape without(const Tensor& t, const std::vector<int64_t>& dims) {
  std::vector<size_t> rd = front::resolve_dims("reduce", dims, t.rank()), out;
  for (size_t k = 0, r = 0; k < t.rank(); ++k) {
    if (r < rd.size() && rd[r] == k) {
      ++r;
    } else {
      out.push_back(t.dims()[k]);
    }
  }
  return Shape(out);
}

}  // namespace

Tensor Tensor::min() const {
  front::check_defined("min", *this, "tensor");
  return at_least_1d(*this).min(all_dims(*this));
}
Tensor Tensor::max() const {
  front::check_defined("max", *this, "tensor");
  return at_least_1d(*this).max(all_dims(*this));
}
Tensor Tensor::argmin() const {
  front::check_defined("argmin", *this, "tensor");
  return at_least_1d(*this).argmin(all_dims(*this));
}
Tensor Tensor::argmax() const {
  front::check_defined("argmax", *this, "tensor");
  return at_least_1d(*this).argmax(all_dims(*this));
}

Tensor Tensor::mean(const std::vector<int64_t>& dims, bool keepdim) const {
  size_t n = check_float_reduce("mean", *this, dims);
  Tensor s = to_dtype(wide(dtype_)).sum(dims, keepdim);
  return (s / double(n)).to_dtype(dtype_);
}

Tensor Tensor::mean() const {
  front::check_defined("mean", *this, "tensor");
  return at_least_1d(*this).mean(all_dims(*this));
}

Tensor Tensor::var(const std::vector<int64_t>& dims, bool keepdim, double correction) const {
  size_t n = check_float_reduce("var", *this, dims);
  if (!std::isfinite(correction)) {
    throw_error(ErrorKind::InvalidArgument, "var",
                fmt::format("correction {} for {} must be finite", correction, describe(*this)));
  }
  Tensor x = to_dtype(wide(dtype_));
  Tensor d = x - x.mean(dims, true);
  Tensor ss = d.sqr().sum(dims, keepdim);
  return (ss / std::max(0.0, double(n) - correction)).to_dtype(dtype_);
}

Tensor Tensor::var() const {
  front::check_defined("var", *this, "tensor");
  return at_least_1d(*this).var(all_dims(*this));
}

Tensor Tensor::log_sum_exp(const std::vector<int64_t>& dims, bool keepdim) const {
  size_t n = check_float_reduce("log_sum_exp", *this, dims);
  Tensor x = to_dtype(wide(dtype_));
  Tensor out;
  if (n == 0) {
    out = x.sum(dims, true) + -std::numeric_limits<double>::infinity();  // log(0)
  } else {
    Tensor m = x.max(dims, true);
    // An infinite max is not subtracted: inf - inf would be NaN where the answer is +-inf.
    m = m.masked_fill(m.abs() == std::numeric_limits<double>::infinity(), 0.0);
    out = (x - m).exp().sum(dims, true).log() + m;
  }
  if (!keepdim) out = out.reshape(without(*this, dims));
  return out.to_dtype(dtype_);
}

std::pair<Tensor, Tensor> Tensor::topk(size_t k, int64_t dim, bool largest) const {
  const char* op = "topk";
  front::check_defined(op, *this, "tensor");
  size_t d = resolve_dim(dim, rank(), op);
  if (k > dims()[d]) {
    throw_error(ErrorKind::InvalidArgument, op,
                fmt::format("k {} is larger than dim {} (size {}) of {}", k, d, dims()[d], describe(*this)));
  }
  const bool last = d + 1 == rank();
  Tensor x = last ? *this : transpose(int64_t(d), -1);
  Tensor idx = x.argsort(!largest).narrow(-1, 0, k);
  Tensor vals = x.gather(idx, -1);
  if (last) return {vals, idx};
  return {vals.transpose(int64_t(d), -1), idx.transpose(int64_t(d), -1)};
}

}  // namespace wick
