// The CPU reference backend. One storage class; its methods are defined one
// family per file: elementwise.cpp, copy.cpp, reduce.cpp, sort.cpp,
// indexing.cpp, matmul.cpp, conv.cpp, nn.cpp. The device (device.cpp) holds the
// allocation, random and quantized entry points (quantized.cpp).
#pragma once

#include <cstddef>
#include <memory>

#include "backend/backend.h"

namespace wick {

class CpuStorage final : public BackendStorage {
 public:
  CpuStorage(size_t n, DType dtype);  // uninitialised, 64-byte aligned
  // Over external memory (BackendDevice::wrap): never freed here; deleter(data) at the end.
  CpuStorage(void* data, size_t n, DType dtype, std::function<void(void*)> deleter);
  ~CpuStorage() override;
  CpuStorage(const CpuStorage&) = delete;
  CpuStorage& operator=(const CpuStorage&) = delete;

  DType dtype() const override { return dtype_; }
  size_t elem_count() const override { return n_; }
  BackendDevice& backend_device() const override;
  void copy_to_host(void* dst, size_t offset, size_t count) const override;
  void* base_ptr() const override { return data_; }

  void* raw() const { return data_; }
  template <class T>
  T* data() const {
    return static_cast<T*>(data_);
  }
  static const CpuStorage& of(const BackendStorage& s) { return static_cast<const CpuStorage&>(s); }
  static CpuStorage& of(BackendStorage& s) { return static_cast<CpuStorage&>(s); }

  // The op methods of the seam (backend.h: WICK_STORAGE_OPS).
  WICK_STORAGE_OVERRIDES

 private:
  void* data_ = nullptr;
  size_t capacity_ = 0;  // bytes of the block behind data_ (its size class, device.cpp)
  size_t n_ = 0;
  DType dtype_;
  bool external_ = false;
  std::function<void(void*)> deleter_;  // external memory only
};

class CpuDevice final : public BackendDevice {
 public:
  Device device() const override { return Device::cpu(); }
  std::string name() const override;
  StoragePtr alloc(size_t n, DType dtype) override;
  StoragePtr zeros(size_t n, DType dtype) override;
  StoragePtr from_host(const void* data, size_t n, DType dtype) override;
  StoragePtr wrap(void* ptr, size_t n, DType dtype, std::function<void(void*)> deleter) override;
  StoragePtr rand_uniform(size_t n, DType dtype, double lo, double up, uint64_t seed,
                          uint64_t offset) override;
  StoragePtr rand_normal(size_t n, DType dtype, double mean, double std, uint64_t seed,
                         uint64_t offset) override;
  void synchronize() override {}
  DeviceInfo info() const override;
  MemoryStats memory_stats() const override;

  StoragePtr quantize(GgmlType t, const BackendStorage& x, const Layout& x_l, size_t rows, size_t k) override;
  StoragePtr dequantize(GgmlType t, const BackendStorage& blocks, size_t byte_offset, size_t n,
                        DType out) override;
  StoragePtr qmatmul(GgmlType t, const BackendStorage& w, size_t byte_offset, size_t n, size_t k,
                     const BackendStorage& x, const Layout& x_l, size_t m, QMatmulPath path) override;
};

// A new uninitialised CPU storage of n elements.
std::shared_ptr<CpuStorage> cpu_alloc(size_t n, DType dtype);

}  // namespace wick

namespace wick {
// Philox streams (src/backend/common/philox.h) on the CPU: src/backend/cpu/random.cpp.
StoragePtr cpu_rand_uniform(size_t n, DType dtype, double lo, double up, uint64_t seed, uint64_t offset);
StoragePtr cpu_rand_normal(size_t n, DType dtype, double mean, double std, uint64_t seed, uint64_t offset);
}  // namespace wick
