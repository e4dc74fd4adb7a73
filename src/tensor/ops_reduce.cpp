// Front end of the reduce family: sum / min / max / argmin / argmax over dims, sum_all, cumsum, argsort
// and sort. Validation here; the numerics are the backend's (src/backend/cpu/reduce.cpp documents them).
#include <fmt/format.h>

#include <limits>

#include "base/dispatch.h"
#include "tensor/checks.h"

namespace wick {

using front::describe;

namespace {

// The largest reduction an arg* op (or argsort) can index with its u32 output.
constexpr size_t kMaxU32Index = std::numeric_limits<uint32_t>::max();

Shape drop_dims(const std::vector<size_t>& dims, const std::vector<size_t>& reduced) {
  std::vector<size_t> out;
  for (size_t k = 0, r = 0; k < dims.size(); ++k) {
    if (r < reduced.size() && reduced[r] == k) {
      ++r;
    } else {
      out.push_back(dims[k]);
    }
  }
  return Shape(out);
}

}  // namespace

Tensor Tensor::reduce(ReduceOp op, const std::vector<int64_t>& dims, bool keepdim) const {
  std::string name(reduce_op_name(op));
  const char* opn = name.c_str();
  front::check_defined(opn, *this, "tensor");
  if (dims.empty()) {
    throw_error(ErrorKind::InvalidArgument, opn, fmt::format("no dims to reduce for {}", describe(*this)));
  }
  std::vector<size_t> rd = front::resolve_dims(opn, dims, rank());
  size_t red_count = 1;
  for (size_t d : rd) red_count *= this->dims()[d];
  bool arg = op == ReduceOp::ArgMin || op == ReduceOp::ArgMax;
  if (op != ReduceOp::Sum && red_count == 0) {
    throw_error(ErrorKind::InvalidArgument, opn,
                fmt::format("reduction over dims {} of {} is empty", Shape(rd).str(), describe(*this)));
  }
  if (arg && red_count - 1 > kMaxU32Index) {
    throw_error(ErrorKind::InvalidArgument, opn,
                fmt::format("reduction over dims {} of {} has {} elements, more than a u32 index can address",
                            Shape(rd).str(), describe(*this), red_count));
  }
  std::vector<size_t> kd = this->dims();
  for (size_t d : rd) kd[d] = 1;
  Shape keep_shape(kd);
  DType out_dtype = arg ? DType::U32 : dtype_;
  Tensor out;
  if (keep_shape.elem_count() == 0) {
    out = Tensor::empty(keep_shape, out_dtype, device_);
  } else if (red_count == 0) {
    out = Tensor::zeros(keep_shape, out_dtype, device_);
  } else {
    out = front::wrap(storage_->reduce(op, layout_, rd), keep_shape, out_dtype, device_);
  }
  return keepdim ? out : out.reshape(drop_dims(this->dims(), rd));
}

Tensor Tensor::sum(const std::vector<int64_t>& dims, bool keepdim) const {
  return reduce(ReduceOp::Sum, dims, keepdim);
}
Tensor Tensor::min(const std::vector<int64_t>& dims, bool keepdim) const {
  return reduce(ReduceOp::Min, dims, keepdim);
}
Tensor Tensor::max(const std::vector<int64_t>& dims, bool keepdim) const {
  return reduce(ReduceOp::Max, dims, keepdim);
}
Tensor Tensor::argmin(const std::vector<int64_t>& dims, bool keepdim) const {
  return reduce(ReduceOp::ArgMin, dims, keepdim);
}
Tensor Tensor::argmax(const std::vector<int64_t>& dims, bool keepdim) const {
  return reduce(ReduceOp::ArgMax, dims, keepdim);
}

Tensor Tensor::sum_all() const {
  front::check_defined("sum_all", *this, "tensor");
  if (rank() == 0) return copy();
  std::vector<int64_t> all(rank());
  for (size_t k = 0; k < rank(); ++k) all[k] = int64_t(k);
  return reduce(ReduceOp::Sum, all, false);
}

Tensor Tensor::cumsum(int64_t dim) const {
  front::check_defined("cumsum", *this, "tensor");
  size_t d = resolve_dim(dim, rank(), "cumsum");
  if (elem_count() == 0) return Tensor::empty(shape(), dtype_, device_);
  return front::wrap(storage_->cumsum(layout_, d), shape(), dtype_, device_);
}

Tensor Tensor::argsort(bool ascending) const {
  front::check_defined("argsort", *this, "tensor");
  if (rank() == 0) {
    throw_error(ErrorKind::DimOutOfRange, "argsort",
                fmt::format("tensor {} has no last dim", describe(*this)));
  }
  if (dims().back() > size_t(kMaxU32Index) + 1) {
    throw_error(ErrorKind::InvalidArgument, "argsort",
                fmt::format("last dim of {} is longer than a u32 index can address", describe(*this)));
  }
  if (elem_count() == 0) return Tensor::empty(shape(), DType::U32, device_);
  Tensor c = contiguous();
  return front::wrap(c.storage_->argsort(c.layout_, ascending), shape(), DType::U32, device_);
}

std::pair<Tensor, Tensor> Tensor::sort(bool ascending) const {
  front::check_defined("sort", *this, "tensor");
  if (rank() == 0) {
    throw_error(ErrorKind::DimOutOfRange, "sort", fmt::format("tensor {} has no last dim", describe(*this)));
  }
  Tensor idx = argsort(ascending);
  return {gather(idx, -1), idx};
}

}  // namespace wick
