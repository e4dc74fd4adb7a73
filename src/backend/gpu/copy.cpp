// Entry points of the copy and fill family: clone, strided copy (a tiled kernel
// for transposed views), copy2d (cat, slice_set), const_set.
#include <fmt/format.h>

#include <cstring>

#include "backend/gpu/gpu_storage.h"
#include "base/dispatch.h"

namespace wick::gpu {

StoragePtr GpuStorage::try_clone(const Layout&) const {
  auto out = gpu_alloc(dev_, n_, dtype_);
  if (n_) {
    set_device(dev_.ordinal());
    WICK_GPU_CHECK(
        gpuMemcpyAsync(out->raw(), ptr_, n_ * dtype_size(dtype_), gpuMemcpyDeviceToDevice, dev_.stream()));
  }
  return out;
}

void GpuStorage::copy_strided_src(BackendStorage& dst_s, size_t dst_offset, const Layout& src_l) const {
  GpuStorage& dst = of(dst_s);
  const size_t n = src_l.elem_count();
  if (n == 0) return;
  const size_t esize = dtype_size(dtype_);
  const void* src = at(src_l.start_offset());
  void* out = dst.at(dst_offset);
  Collapsed c = collapse({&src_l});
  set_device(dev_.ordinal());
  if (c.contiguous) {
    WICK_GPU_CHECK(gpuMemcpyAsync(out, src, n * esize, gpuMemcpyDeviceToDevice, dev_.stream()));
    return;
  }
  const auto& d = c.dims;
  const auto& s = c.strides[0];
  const size_t nd = d.size();
  // A (batched) transposed matrix: unit stride on the second-last dim, not the last.
  if ((nd == 2 || nd == 3) && s[nd - 2] == 1 && s[nd - 1] != 1) {
    size_t B = nd == 3 ? d[0] : 1, R = d[nd - 2], C = d[nd - 1];
    size_t sB = nd == 3 ? s[0] : 0, sR = 1, sC = s[nd - 1];
    void* args[] = {&B, &R, &C, &sB, &sR, &sC, &src, &out};
    constexpr unsigned kTile = plan::transpose::kTile, kRows = plan::transpose::kRows;
    dim3 grid(unsigned((C + kTile - 1) / kTile), unsigned(std::min<size_t>((R + kTile - 1) / kTile, 65535)),
              unsigned(std::min<size_t>(B, 65535)));
    static const DTypeKernels k(Module::Unary, "utranspose");
    dev_.launch(k[dtype_], grid, dim3(kTile, kRows), args);
    return;
  }
  DeviceBuffer info_buf = upload(dev_, c.info());
  const size_t* info = static_cast<const size_t*>(info_buf.get());
  size_t numel = n, ndims = nd;
  void* args[] = {&numel, &ndims, &info, &src, &out};
  const bool inner = s.back() == 1 && d.back() % vector_lanes(esize) == 0;
  static const DTypeKernels k(Module::Unary, "ucopy");
  dev_.launch(k[dtype_], dim3(strided_grid(dev_, inner ? vector_items(n, esize) : n)),
              dim3(dev_.block_size()), args);
}

void GpuStorage::copy2d(BackendStorage& dst_s, size_t d1, size_t d2, size_t src_stride1, size_t dst_stride1,
                        size_t src_offset, size_t dst_offset) const {
  if (d1 == 0 || d2 == 0) return;
  GpuStorage& dst = of(dst_s);
  const size_t esize = dtype_size(dtype_);
  const void* src = at(src_offset);
  void* out = dst.at(dst_offset);
  set_device(dev_.ordinal());
  if ((src_stride1 == d2 && dst_stride1 == d2) || d1 == 1) {
    WICK_GPU_CHECK(gpuMemcpyAsync(out, src, d1 * d2 * esize, gpuMemcpyDeviceToDevice, dev_.stream()));
    return;
  }
  void* args[] = {&src, &out, &d1, &d2, &src_stride1, &dst_stride1};
  static const DTypeKernels k(Module::Fill, "copy2d");
  dev_.launch(k[dtype_], dim3(dev_.grid_for(vector_items(d1 * d2, esize))), dim3(dev_.block_size()), args);
}

void GpuStorage::const_set(Scalar v, const Layout& l) {
  const size_t n = l.elem_count();
  if (n == 0) return;
  alignas(8) unsigned char value[8] = {};
  dispatch_dtype(dtype_, "const_set", [&]<class T>() {
    T x = v.as<T>();
    std::memcpy(value, &x, sizeof(T));
  });
  Collapsed c = collapse({&l});
  DeviceBuffer info_buf;
  const size_t* info = nullptr;
  if (!c.contiguous) {
    info_buf = upload(dev_, c.info());
    info = static_cast<const size_t*>(info_buf.get());
  }
  size_t numel = n, nd = c.dims.size();
  void* out = at(l.start_offset());
  void* args[] = {&numel, &nd, &info, value, &out};
  static const DTypeKernels k(Module::Fill, "const_set");
  dev_.launch(k[dtype_], dim3(dev_.grid_for(c.contiguous ? vector_items(n, dtype_size(dtype_)) : n)),
              dim3(dev_.block_size()), args);
}

}  // namespace wick::gpu
