// STUB: replaced by the family owner.
#include "backend/cpu/cpu_storage.h"

namespace wick {

StoragePtr CpuStorage::reduce(ReduceOp op, const Layout& l, const std::vector<size_t>& dims) const { throw_error(ErrorKind::InvalidArgument, "reduce", "not implemented yet"); }
StoragePtr CpuStorage::cumsum(const Layout& l, size_t dim) const { throw_error(ErrorKind::InvalidArgument, "cumsum", "not implemented yet"); }

}  // namespace wick
