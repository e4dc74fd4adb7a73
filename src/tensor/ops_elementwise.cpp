// Front end of the elementwise families: validate (defined, same device, NumPy
// broadcasting, dtype subsets), promote the operands of binary ops, comparisons and
// where_cond to one dtype (promote_types), then dispatch with broadcast layouts
// (stride 0 on broadcast dims). Empty outputs never reach a backend.
#include <fmt/format.h>

#include "base/dispatch.h"
#include "tensor/checks.h"

namespace wick {

using front::describe;

namespace {

// A new tensor of `shape`/`dtype` on t's device from backend storage `s`.
Tensor result(StoragePtr s, const Shape& shape, DType dtype, const Tensor& t) {
  return front::wrap(std::move(s), shape, dtype, t.device());
}

// An empty output (no backend call: GPU launches of zero elements are not valid).
Tensor empty_like(const Shape& shape, DType dtype, const Tensor& t) {
  return Tensor::empty(shape, dtype, t.device());
}

// Unary-shaped ops: defined input, dtype in `allowed`; `run` calls the backend.
template <class Run>
Tensor unary_shaped(const Tensor& x, const char* op, DTypeSet allowed, Run&& run) {
  front::check_defined(op, x, "tensor");
  front::check_dtype_in(op, x, allowed, "tensor");
  if (x.elem_count() == 0) return empty_like(x.shape(), x.dtype(), x);
  return result(run(front::storage_of(x), x.layout()), x.shape(), x.dtype(), x);
}

// Validates lhs/rhs of a binary-shaped op and returns the broadcast output shape.
Shape check_binary(const char* op, const Tensor& lhs, const Tensor& rhs) {
  front::check_defined(op, lhs, "lhs");
  front::check_defined(op, rhs, "rhs");
  front::check_same_device(op, lhs, rhs);
  Shape out;
  try {
    out = front::broadcast_shape(op, lhs.shape(), rhs.shape());
  } catch (const Error&) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("lhs {} rhs {}: shapes are not broadcastable", describe(lhs), describe(rhs)));
  }
  front::check_shape(op, out, promote_types(lhs.dtype(), rhs.dtype()));
  return out;
}

}  // namespace

Tensor Tensor::affine(double mul, double add) const {
  return unary_shaped(*this, "affine", kAllDTypeSet,
                      [&](const BackendStorage& s, const Layout& l) { return s.affine(l, mul, add); });
}

Tensor Tensor::powf(double e) const {
  return unary_shaped(*this, "powf", kFloatDTypes,
                      [&](const BackendStorage& s, const Layout& l) { return s.powf(l, e); });
}

Tensor Tensor::elu(double alpha) const {
  return unary_shaped(*this, "elu", kFloatDTypes,
                      [&](const BackendStorage& s, const Layout& l) { return s.elu(l, alpha); });
}

Tensor Tensor::unary(UnaryOp op) const {
  if (size_t(op) >= kNumUnaryOps) {
    throw_error(ErrorKind::InvalidArgument, "unary", fmt::format("unknown unary op {}", int(op)));
  }
  const char* name = unary_op_name(op).data();  // names are string literals
  DTypeSet allowed = unary_op_allows_int(op) ? kAllDTypeSet : kFloatDTypes;
  return unary_shaped(*this, name, allowed,
                      [&](const BackendStorage& s, const Layout& l) { return s.unary(op, l); });
}

Tensor Tensor::binary(BinaryOp op, const Tensor& rhs) const {
  if (size_t(op) >= kNumBinaryOps) {
    throw_error(ErrorKind::InvalidArgument, "binary", fmt::format("unknown binary op {}", int(op)));
  }
  const char* name = binary_op_name(op).data();
  // Same dims (the common case): no broadcast layouts to build.
  if (defined() && rhs.defined() && dims() == rhs.dims() && dtype_ == rhs.dtype() &&
      device_ == rhs.device()) {
    if (elem_count() == 0) return empty_like(shape(), dtype_, *this);
    auto s = storage_->binary(op, front::storage_of(rhs), layout_, rhs.layout());
    return result(std::move(s), shape(), dtype_, *this);
  }
  Shape out = check_binary(name, *this, rhs);
  DType dt = promote_types(dtype_, rhs.dtype());
  if (out.elem_count() == 0) return empty_like(out, dt, *this);
  Tensor a = to_dtype(dt), b = rhs.to_dtype(dt);
  auto s =
      a.storage_->binary(op, front::storage_of(b), a.layout_.broadcast_as(out), b.layout().broadcast_as(out));
  return result(std::move(s), out, dt, *this);
}

Tensor Tensor::cmp(CmpOp op, const Tensor& rhs) const {
  if (size_t(op) >= kNumCmpOps) {
    throw_error(ErrorKind::InvalidArgument, "cmp", fmt::format("unknown comparison op {}", int(op)));
  }
  const char* name = cmp_op_name(op).data();
  Shape out = check_binary(name, *this, rhs);
  if (out.elem_count() == 0) return empty_like(out, DType::U8, *this);
  DType dt = promote_types(dtype_, rhs.dtype());
  Tensor a = to_dtype(dt), b = rhs.to_dtype(dt);
  auto s =
      a.storage_->cmp(op, front::storage_of(b), a.layout_.broadcast_as(out), b.layout().broadcast_as(out));
  return result(std::move(s), out, DType::U8, *this);
}

Tensor Tensor::where_cond(const Tensor& on_true, const Tensor& on_false) const {
  const char* op = "where_cond";
  front::check_defined(op, *this, "condition");
  front::check_defined(op, on_true, "on_true");
  front::check_defined(op, on_false, "on_false");
  front::check_same_device(op, *this, on_true);
  front::check_same_device(op, *this, on_false);
  front::check_dtype_in(op, *this, kIndexDTypes, "condition");
  Shape out;
  try {
    out = front::broadcast_shape(op, front::broadcast_shape(op, shape(), on_true.shape()), on_false.shape());
  } catch (const Error&) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("condition {} on_true {} on_false {}: shapes are not broadcastable",
                            describe(*this), describe(on_true), describe(on_false)));
  }
  DType dt = promote_types(on_true.dtype(), on_false.dtype());
  if (front::check_shape(op, out, dt) == 0) return empty_like(out, dt, *this);
  Tensor t = on_true.to_dtype(dt), f = on_false.to_dtype(dt);
  auto s = storage_->where_cond(layout_.broadcast_as(out), front::storage_of(t), t.layout().broadcast_as(out),
                                front::storage_of(f), f.layout().broadcast_as(out));
  return result(std::move(s), out, dt, *this);
}

// Same dtype: returns this tensor (shares storage), as PyTorch's `to` does.
Tensor Tensor::to_dtype(DType dtype) const {
  front::check_defined("to_dtype", *this, "tensor");
  if (size_t(dtype) >= size_t(kNumDTypes)) {
    throw_error(ErrorKind::UnsupportedDType, "to_dtype",
                fmt::format("tensor {} to unknown dtype {}", describe(*this), int(dtype)));
  }
  if (dtype == dtype_) return *this;
  if (elem_count() == 0) return empty_like(shape(), dtype, *this);
  return result(storage_->to_dtype(layout_, dtype), shape(), dtype, *this);
}

}  // namespace wick
