// STUB: replaced by the family owner.
#include "backend/cpu/cpu_storage.h"

namespace wick {

StoragePtr CpuStorage::index_select(const BackendStorage& ids, const Layout& l, const Layout& ids_l, size_t dim) const { throw_error(ErrorKind::InvalidArgument, "index_select", "not implemented yet"); }
StoragePtr CpuStorage::gather(const Layout& l, const BackendStorage& ids, const Layout& ids_l, size_t dim) const { throw_error(ErrorKind::InvalidArgument, "gather", "not implemented yet"); }
void CpuStorage::scatter(ScatterMode mode, const Layout& l, const BackendStorage& ids, const Layout& ids_l, const BackendStorage& src, const Layout& src_l, size_t dim) { throw_error(ErrorKind::InvalidArgument, "scatter", "not implemented yet"); }
StoragePtr CpuStorage::index_add(const Layout& l, const BackendStorage& ids, const Layout& ids_l, const BackendStorage& src, const Layout& src_l, size_t dim) const { throw_error(ErrorKind::InvalidArgument, "index_add", "not implemented yet"); }

}  // namespace wick
