// GpuStorage basics: allocation and host transfer (which also surfaces index
// errors reported by kernels). The op families live in their own files
// (elementwise.cpp, copy.cpp, reduce.cpp, sort.cpp, indexing.cpp, ...).
#include "backend/gpu/gpu_storage.h"

#include <fmt/format.h>

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

GpuStorage::GpuStorage(GpuDevice& dev, size_t n, DType dtype, bool host_written)
    : dev_(dev), ptr_(dev.allocator().allocate(alloc_bytes(n, dtype), host_written)), n_(n), dtype_(dtype) {}

GpuStorage::GpuStorage(GpuDevice& dev, void* ptr, size_t n, DType dtype, std::function<void(void*)> deleter)
    : dev_(dev), ptr_(ptr), n_(n), dtype_(dtype), external_(true), deleter_(std::move(deleter)) {}

GpuStorage::~GpuStorage() {
  if (!external_) {
    dev_.allocator().release(ptr_, n_ * dtype_size(dtype_));
    return;
  }
  if (!deleter_) return;
  // Kernels queued on the stream may still read the memory: drain it first. A destructor
  // cannot throw, so errors (a runtime torn down at exit) are ignored.
  (void)gpuSetDevice(dev_.ordinal());
  try {
    dev_.flush();
  } catch (...) {
  }
  (void)gpuStreamSynchronize(dev_.stream());  // flushed above: stream() throws no more
  try {
    deleter_(ptr_);
  } catch (...) {
  }
}

std::shared_ptr<GpuStorage> gpu_alloc(GpuDevice& dev, size_t n, DType dtype, bool host_written) {
  return std::make_shared<GpuStorage>(dev, n, dtype, host_written);
}

void GpuStorage::copy_to_host(void* dst, size_t offset, size_t count) const {
  if (count == 0) return;
  dev_.copy_to_host(dst, at(offset), count * dtype_size(dtype_));
  dev_.check_index_error();
}

}  // namespace wick::gpu
