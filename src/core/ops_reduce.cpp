// STUB: replaced by the family owner.
#include "core/checks.h"

namespace wick {

Tensor Tensor::sum(const std::vector<int64_t>& dims, bool keepdim) const { throw_error(ErrorKind::InvalidArgument, "sum", "not implemented yet"); }
Tensor Tensor::min(const std::vector<int64_t>& dims, bool keepdim) const { throw_error(ErrorKind::InvalidArgument, "min", "not implemented yet"); }
Tensor Tensor::max(const std::vector<int64_t>& dims, bool keepdim) const { throw_error(ErrorKind::InvalidArgument, "max", "not implemented yet"); }
Tensor Tensor::argmin(const std::vector<int64_t>& dims, bool keepdim) const { throw_error(ErrorKind::InvalidArgument, "argmin", "not implemented yet"); }
Tensor Tensor::argmax(const std::vector<int64_t>& dims, bool keepdim) const { throw_error(ErrorKind::InvalidArgument, "argmax", "not implemented yet"); }
Tensor Tensor::reduce(ReduceOp op, const std::vector<int64_t>& dims, bool keepdim) const { throw_error(ErrorKind::InvalidArgument, "reduce", "not implemented yet"); }
Tensor Tensor::sum_all() const { throw_error(ErrorKind::InvalidArgument, "sum_all", "not implemented yet"); }
Tensor Tensor::cumsum(int64_t dim) const { throw_error(ErrorKind::InvalidArgument, "cumsum", "not implemented yet"); }
Tensor Tensor::argsort(bool ascending) const { throw_error(ErrorKind::InvalidArgument, "argsort", "not implemented yet"); }
std::pair<Tensor, Tensor> Tensor::sort(bool ascending) const { throw_error(ErrorKind::InvalidArgument, "sort", "not implemented yet"); }

}  // namespace wick
