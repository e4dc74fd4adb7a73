// STUB: replaced by the family owner.
#include "backend/cpu/cpu_storage.h"

namespace wick {

StoragePtr CpuStorage::affine(const Layout& l, double mul, double add) const { throw_error(ErrorKind::InvalidArgument, "affine", "not implemented yet"); }
StoragePtr CpuStorage::powf(const Layout& l, double e) const { throw_error(ErrorKind::InvalidArgument, "powf", "not implemented yet"); }
StoragePtr CpuStorage::elu(const Layout& l, double alpha) const { throw_error(ErrorKind::InvalidArgument, "elu", "not implemented yet"); }
StoragePtr CpuStorage::unary(UnaryOp op, const Layout& l) const { throw_error(ErrorKind::InvalidArgument, "unary", "not implemented yet"); }
StoragePtr CpuStorage::binary(BinaryOp op, const BackendStorage& rhs, const Layout& lhs_l, const Layout& rhs_l) const { throw_error(ErrorKind::InvalidArgument, "binary", "not implemented yet"); }
StoragePtr CpuStorage::cmp(CmpOp op, const BackendStorage& rhs, const Layout& lhs_l, const Layout& rhs_l) const { throw_error(ErrorKind::InvalidArgument, "cmp", "not implemented yet"); }
StoragePtr CpuStorage::where_cond(const Layout& l, const BackendStorage& t, const Layout& t_l, const BackendStorage& f, const Layout& f_l) const { throw_error(ErrorKind::InvalidArgument, "where_cond", "not implemented yet"); }
StoragePtr CpuStorage::to_dtype(const Layout& l, DType dtype) const { throw_error(ErrorKind::InvalidArgument, "to_dtype", "not implemented yet"); }

}  // namespace wick
