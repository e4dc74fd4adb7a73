// STUB: replaced by the family owner.
#include "core/checks.h"

namespace wick {

Tensor Tensor::index_select(const Tensor& ids, int64_t dim) const { throw_error(ErrorKind::InvalidArgument, "index_select", "not implemented yet"); }
Tensor Tensor::gather(const Tensor& ids, int64_t dim) const { throw_error(ErrorKind::InvalidArgument, "gather", "not implemented yet"); }
Tensor Tensor::scatter(const Tensor& ids, const Tensor& src, int64_t dim) const { throw_error(ErrorKind::InvalidArgument, "scatter", "not implemented yet"); }
Tensor Tensor::scatter_add(const Tensor& ids, const Tensor& src, int64_t dim) const { throw_error(ErrorKind::InvalidArgument, "scatter_add", "not implemented yet"); }
void Tensor::scatter_(const Tensor& ids, const Tensor& src, int64_t dim) { throw_error(ErrorKind::InvalidArgument, "scatter_", "not implemented yet"); }
void Tensor::scatter_add_(const Tensor& ids, const Tensor& src, int64_t dim) { throw_error(ErrorKind::InvalidArgument, "scatter_add_", "not implemented yet"); }
Tensor Tensor::index_add(const Tensor& ids, const Tensor& src, int64_t dim) const { throw_error(ErrorKind::InvalidArgument, "index_add", "not implemented yet"); }

}  // namespace wick
