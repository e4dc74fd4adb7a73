// GpuStorage basics: allocation, host transfer (which also surfaces index errors
// reported by kernels), operand collapsing. The other families live in their own
// files (reduce.cpp, sort.cpp, indexing.cpp, matmul.cpp, conv.cpp, nn.cpp, ...).
#include "backend/gpu/gpu_storage.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/checked.h"
#include "wick/error.h"

namespace wick::gpu {

namespace {
// n elements of dtype in bytes; OutOfMemory when that exceeds 2^63-1.
size_t alloc_bytes(size_t n, DType dtype) {
  size_t bytes = 0;
  if (!mul_fits(n, dtype_size(dtype), bytes)) {
    throw_error(ErrorKind::OutOfMemory, "gpu",
                fmt::format("{} elements of {}: the byte count exceeds 2^63-1", n, dtype_name(dtype)));
  }
  return bytes;
}
}  // namespace

GpuStorage::GpuStorage(GpuDevice& dev, size_t n, DType dtype)
    : dev_(dev), ptr_(dev.allocator().allocate(alloc_bytes(n, dtype))), n_(n), dtype_(dtype) {}

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
  dev_.check_index_error();
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

}  // namespace wick::gpu
