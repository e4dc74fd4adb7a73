// STUB: replaced by the family owner.
#include "backend/cpu/cpu_storage.h"

namespace wick {

StoragePtr CpuStorage::softmax_last_dim(const Layout& l, bool log) const { throw_error(ErrorKind::InvalidArgument, "softmax_last_dim", "not implemented yet"); }
StoragePtr CpuStorage::rms_norm(const Layout& l, const BackendStorage* alpha, const Layout* alpha_l, float eps) const { throw_error(ErrorKind::InvalidArgument, "rms_norm", "not implemented yet"); }
StoragePtr CpuStorage::layer_norm(const Layout& l, const BackendStorage* alpha, const Layout* alpha_l, const BackendStorage* beta, const Layout* beta_l, float eps) const { throw_error(ErrorKind::InvalidArgument, "layer_norm", "not implemented yet"); }
StoragePtr CpuStorage::rope(RopeKind kind, const Layout& l, const BackendStorage& cos, const Layout& cos_l, const BackendStorage& sin, const Layout& sin_l) const { throw_error(ErrorKind::InvalidArgument, "rope", "not implemented yet"); }

}  // namespace wick
