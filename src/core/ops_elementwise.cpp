// STUB: replaced by the family owner.
#include "core/checks.h"

namespace wick {

Tensor Tensor::affine(double mul, double add) const { throw_error(ErrorKind::InvalidArgument, "affine", "not implemented yet"); }
Tensor Tensor::powf(double e) const { throw_error(ErrorKind::InvalidArgument, "powf", "not implemented yet"); }
Tensor Tensor::elu(double alpha) const { throw_error(ErrorKind::InvalidArgument, "elu", "not implemented yet"); }
Tensor Tensor::unary(UnaryOp op) const { throw_error(ErrorKind::InvalidArgument, "unary", "not implemented yet"); }
Tensor Tensor::binary(BinaryOp op, const Tensor& rhs) const { throw_error(ErrorKind::InvalidArgument, "binary", "not implemented yet"); }
Tensor Tensor::cmp(CmpOp op, const Tensor& rhs) const { throw_error(ErrorKind::InvalidArgument, "cmp", "not implemented yet"); }
Tensor Tensor::where_cond(const Tensor& on_true, const Tensor& on_false) const { throw_error(ErrorKind::InvalidArgument, "where_cond", "not implemented yet"); }
Tensor Tensor::to_dtype(DType dtype) const { throw_error(ErrorKind::InvalidArgument, "to_dtype", "not implemented yet"); }

}  // namespace wick
