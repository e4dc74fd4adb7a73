// STUB: replaced by the family owner.
#include "backend/cpu/cpu_storage.h"

namespace wick {

StoragePtr CpuStorage::conv1d(const Layout& l, const BackendStorage& kernel, const Layout& k_l, const Conv1dParams& p) const { throw_error(ErrorKind::InvalidArgument, "conv1d", "not implemented yet"); }
StoragePtr CpuStorage::conv_transpose1d(const Layout& l, const BackendStorage& kernel, const Layout& k_l, const ConvTranspose1dParams& p) const { throw_error(ErrorKind::InvalidArgument, "conv_transpose1d", "not implemented yet"); }
StoragePtr CpuStorage::conv2d(const Layout& l, const BackendStorage& kernel, const Layout& k_l, const Conv2dParams& p) const { throw_error(ErrorKind::InvalidArgument, "conv2d", "not implemented yet"); }
StoragePtr CpuStorage::conv_transpose2d(const Layout& l, const BackendStorage& kernel, const Layout& k_l, const ConvTranspose2dParams& p) const { throw_error(ErrorKind::InvalidArgument, "conv_transpose2d", "not implemented yet"); }
StoragePtr CpuStorage::pool2d(PoolOp op, const Layout& l, std::array<size_t, 2> kernel, std::array<size_t, 2> stride) const { throw_error(ErrorKind::InvalidArgument, "pool2d", "not implemented yet"); }
StoragePtr CpuStorage::upsample_nearest1d(const Layout& l, size_t target_len) const { throw_error(ErrorKind::InvalidArgument, "upsample_nearest1d", "not implemented yet"); }
StoragePtr CpuStorage::upsample_nearest2d(const Layout& l, size_t target_h, size_t target_w) const { throw_error(ErrorKind::InvalidArgument, "upsample_nearest2d", "not implemented yet"); }
StoragePtr CpuStorage::upsample_bilinear2d(const Layout& l, const BilinearParams& p) const { throw_error(ErrorKind::InvalidArgument, "upsample_bilinear2d", "not implemented yet"); }

}  // namespace wick
