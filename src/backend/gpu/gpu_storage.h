// GpuStorage: a device allocation of one dtype on one GpuDevice. Methods are
// defined one family per file: elementwise.cpp (affine, powf, elu, unary,
// binary, cmp, where, to_dtype), copy.cpp (clone, strided copy, copy2d,
// const_set, transfers), reduce.cpp, sort.cpp, indexing.cpp, matmul.cpp,
// conv.cpp, nn.cpp.
#pragma once

#include <cstddef>
#include <memory>

#include "backend/backend.h"
#include "backend/common/collapse.h"
#include "backend/gpu/gpu_device.h"
#include "backend/gpu/launch_plan.h"

namespace wick::gpu {

class GpuStorage final : public BackendStorage {
 public:
  // Uninitialised; host_written: see CachingAllocator::allocate.
  GpuStorage(GpuDevice& dev, size_t n, DType dtype, bool host_written = false);
  // Over external device memory (BackendDevice::wrap): not the allocator's; deleter(ptr)
  // at the end, after the device's stream has drained.
  GpuStorage(GpuDevice& dev, void* ptr, size_t n, DType dtype, std::function<void(void*)> deleter);
  ~GpuStorage() override;
  GpuStorage(const GpuStorage&) = delete;
  GpuStorage& operator=(const GpuStorage&) = delete;

  DType dtype() const override { return dtype_; }
  size_t elem_count() const override { return n_; }
  BackendDevice& backend_device() const override { return dev_; }
  void copy_to_host(void* dst, size_t offset, size_t count) const override;
  void* base_ptr() const override { return ptr_; }

  GpuDevice& dev() const { return dev_; }
  void* raw() const { return ptr_; }
  // Address of element `offset` (elements of this storage's dtype).
  void* at(size_t offset) const { return static_cast<char*>(ptr_) + offset * dtype_size(dtype_); }
  static const GpuStorage& of(const BackendStorage& s) { return static_cast<const GpuStorage&>(s); }
  static GpuStorage& of(BackendStorage& s) { return static_cast<GpuStorage&>(s); }

  // The op methods of the seam (backend.h: WICK_STORAGE_OPS).
  WICK_STORAGE_OVERRIDES

 private:
  GpuDevice& dev_;
  void* ptr_ = nullptr;
  size_t n_ = 0;
  DType dtype_;
  bool external_ = false;
  std::function<void(void*)> deleter_;  // external memory only
};

std::shared_ptr<GpuStorage> gpu_alloc(GpuDevice& dev, size_t n, DType dtype, bool host_written = false);

// Grid of a strided elementwise kernel over `items` work items: one item per
// thread, capped at plan::elementwise::kStridedBlocksPerSm blocks per multiprocessor.
inline unsigned strided_grid(const GpuDevice& dev, size_t items) {
  unsigned cap = plan::elementwise::kStridedBlocksPerSm *
                 unsigned(dev.props().multiprocessors > 0 ? dev.props().multiprocessors : 1);
  unsigned g = dev.grid_for(items);
  return g < cap ? g : cap;
}

// Elements of `elem_bytes` in one vector of plan::kVectorBytes (at least 1).
inline size_t vector_lanes(size_t elem_bytes) {
  return elem_bytes < plan::kVectorBytes ? plan::kVectorBytes / elem_bytes : 1;
}

// Work items of a contiguous elementwise kernel over n elements whose widest
// operand is `max_elem_bytes` (one vector per item).
inline size_t vector_items(size_t n, size_t max_elem_bytes) {
  const size_t v = vector_lanes(max_elem_bytes);
  return (n + v - 1) / v;
}

}  // namespace wick::gpu
