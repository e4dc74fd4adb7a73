// STUB: replaced by the family owner.
#include "backend/cpu/cpu_storage.h"

namespace wick {

StoragePtr CpuStorage::matmul(const BackendStorage& rhs, const MatmulDims& d, const Layout& lhs_l, const Layout& rhs_l) const { throw_error(ErrorKind::InvalidArgument, "matmul", "not implemented yet"); }

}  // namespace wick
