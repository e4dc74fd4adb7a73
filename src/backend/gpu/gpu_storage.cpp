// GpuStorage basics: allocation, host transfer, operand collapsing, and the
// methods of later issues (they throw until their kernels land).
#include "backend/gpu/gpu_storage.h"

#include <fmt/format.h>

#include <algorithm>

#include "wick/error.h"

namespace wick::gpu {

GpuStorage::GpuStorage(GpuDevice& dev, size_t n, DType dtype)
    : dev_(dev), ptr_(dev.allocator().allocate(n * dtype_size(dtype))), n_(n), dtype_(dtype) {}

GpuStorage::~GpuStorage() { dev_.allocator().release(ptr_, n_ * dtype_size(dtype_)); }

std::shared_ptr<GpuStorage> gpu_alloc(GpuDevice& dev, size_t n, DType dtype) {
  return std::make_shared<GpuStorage>(dev, n, dtype);
}

void GpuStorage::copy_to_host(void* dst, size_t offset, size_t count) const {
  if (count == 0) return;
  set_device(dev_.ordinal());
  WICK_GPU_CHECK(
      gpuMemcpyAsync(dst, at(offset), count * dtype_size(dtype_), gpuMemcpyDeviceToHost, dev_.stream()));
  WICK_GPU_CHECK(gpuStreamSynchronize(dev_.stream()));
}

std::vector<size_t> Collapsed::info() const {
  std::vector<size_t> v(dims);
  for (const auto& s : strides) v.insert(v.end(), s.begin(), s.end());
  return v;
}

Collapsed collapse(const std::vector<const Layout*>& layouts) {
  Collapsed c;
  const size_t k = layouts.size();
  c.strides.resize(k);
  const auto& dims = layouts[0]->dims();
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    bool merge = !c.dims.empty();
    for (size_t j = 0; j < k && merge; ++j) merge = c.strides[j].back() == layouts[j]->strides()[d] * dims[d];
    if (merge) {
      c.dims.back() *= dims[d];
      for (size_t j = 0; j < k; ++j) c.strides[j].back() = layouts[j]->strides()[d];
    } else {
      c.dims.push_back(dims[d]);
      for (size_t j = 0; j < k; ++j) c.strides[j].push_back(layouts[j]->strides()[d]);
    }
  }
  c.contiguous = c.dims.empty() ||
                 (c.dims.size() == 1 &&
                  std::all_of(c.strides.begin(), c.strides.end(), [](const auto& s) { return s[0] == 1; }));
  return c;
}

size_t vector_items(size_t n, size_t max_elem_bytes) {
  const size_t v = std::max<size_t>(1, 16 / max_elem_bytes);
  return (n + v - 1) / v;
}

// ---- families of later issues --------------------------------------------------------------
#define WICK_GPU_LATER(op) \
  throw_error(ErrorKind::InvalidArgument, op, "not implemented on the GPU backend yet (issue 4)")

StoragePtr GpuStorage::reduce(ReduceOp op, const Layout&, const std::vector<size_t>&) const {
  WICK_GPU_LATER(reduce_op_name(op));
}
StoragePtr GpuStorage::cumsum(const Layout&, size_t) const { WICK_GPU_LATER("cumsum"); }
StoragePtr GpuStorage::argsort(const Layout&, bool) const { WICK_GPU_LATER("argsort"); }
StoragePtr GpuStorage::index_select(const BackendStorage&, const Layout&, const Layout&, size_t) const {
  WICK_GPU_LATER("index_select");
}
StoragePtr GpuStorage::gather(const Layout&, const BackendStorage&, const Layout&, size_t) const {
  WICK_GPU_LATER("gather");
}
void GpuStorage::scatter(ScatterMode mode, const Layout&, const BackendStorage&, const Layout&,
                         const BackendStorage&, const Layout&, size_t) {
  WICK_GPU_LATER(mode == ScatterMode::Set ? "scatter" : "scatter_add");
}
StoragePtr GpuStorage::index_add(const Layout&, const BackendStorage&, const Layout&, const BackendStorage&,
                                 const Layout&, size_t) const {
  WICK_GPU_LATER("index_add");
}
StoragePtr GpuStorage::matmul(const BackendStorage&, const MatmulDims&, const Layout&, const Layout&) const {
  WICK_GPU_LATER("matmul");
}
StoragePtr GpuStorage::conv1d(const Layout&, const BackendStorage&, const Layout&,
                              const Conv1dParams&) const {
  WICK_GPU_LATER("conv1d");
}
StoragePtr GpuStorage::conv_transpose1d(const Layout&, const BackendStorage&, const Layout&,
                                        const ConvTranspose1dParams&) const {
  WICK_GPU_LATER("conv_transpose1d");
}
StoragePtr GpuStorage::conv2d(const Layout&, const BackendStorage&, const Layout&,
                              const Conv2dParams&) const {
  WICK_GPU_LATER("conv2d");
}
StoragePtr GpuStorage::conv_transpose2d(const Layout&, const BackendStorage&, const Layout&,
                                        const ConvTranspose2dParams&) const {
  WICK_GPU_LATER("conv_transpose2d");
}
StoragePtr GpuStorage::pool2d(PoolOp op, const Layout&, std::array<size_t, 2>, std::array<size_t, 2>) const {
  WICK_GPU_LATER(op == PoolOp::Avg ? "avg_pool2d" : "max_pool2d");
}
StoragePtr GpuStorage::upsample_nearest1d(const Layout&, size_t) const {
  WICK_GPU_LATER("upsample_nearest1d");
}
StoragePtr GpuStorage::upsample_nearest2d(const Layout&, size_t, size_t) const {
  WICK_GPU_LATER("upsample_nearest2d");
}
StoragePtr GpuStorage::upsample_bilinear2d(const Layout&, const BilinearParams&) const {
  WICK_GPU_LATER("upsample_bilinear2d");
}
StoragePtr GpuStorage::softmax_last_dim(const Layout&, bool log) const {
  WICK_GPU_LATER(log ? "log_softmax" : "softmax");
}
StoragePtr GpuStorage::rms_norm(const Layout&, const BackendStorage*, const Layout*, float) const {
  WICK_GPU_LATER("rms_norm");
}
StoragePtr GpuStorage::layer_norm(const Layout&, const BackendStorage*, const Layout*, const BackendStorage*,
                                  const Layout*, float) const {
  WICK_GPU_LATER("layer_norm");
}
StoragePtr GpuStorage::rope(RopeKind, const Layout&, const BackendStorage&, const Layout&,
                            const BackendStorage&, const Layout&) const {
  WICK_GPU_LATER("rope");
}

}  // namespace wick::gpu
