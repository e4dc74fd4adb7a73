// CPU storage allocation, host transfers, and the CPU BackendDevice.
#include <fmt/format.h>
#include <omp.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include "backend/cpu/cpu_storage.h"

namespace wick {

namespace {
class CpuDevice final : public BackendDevice {
 public:
  Device device() const override { return Device::cpu(); }
  std::string name() const override { return fmt::format("CPU ({} threads)", omp_get_max_threads()); }
  StoragePtr alloc(size_t n, DType dtype) override { return cpu_alloc(n, dtype); }
  StoragePtr zeros(size_t n, DType dtype) override {
    auto s = cpu_alloc(n, dtype);
    if (n) std::memset(s->raw(), 0, n * dtype_size(dtype));
    return s;
  }
  StoragePtr from_host(const void* data, size_t n, DType dtype) override {
    auto s = cpu_alloc(n, dtype);
    if (n) std::memcpy(s->raw(), data, n * dtype_size(dtype));
    return s;
  }
  StoragePtr rand_uniform(size_t n, DType dtype, double lo, double up, uint64_t seed, uint64_t offset) override {
    return cpu_rand_uniform(n, dtype, lo, up, seed, offset);
  }
  StoragePtr rand_normal(size_t n, DType dtype, double mean, double std, uint64_t seed, uint64_t offset) override {
    return cpu_rand_normal(n, dtype, mean, std, seed, offset);
  }
  void synchronize() override {}
};
}  // namespace

BackendDevice& cpu_backend_device() {
  static CpuDevice dev;
  return dev;
}

CpuStorage::CpuStorage(size_t n, DType dtype) : n_(n), dtype_(dtype) {
  size_t bytes = n * dtype_size(dtype);
  if (n != 0 && bytes / n != dtype_size(dtype)) {
    throw_error(ErrorKind::OutOfMemory, "alloc", fmt::format("{} elements of {} overflow size_t", n, dtype_name(dtype)));
  }
  size_t rounded = (bytes + 63) / 64 * 64;
  data_ = rounded ? std::aligned_alloc(64, rounded) : nullptr;
  if (rounded && !data_) {
    throw_error(ErrorKind::OutOfMemory, "alloc", fmt::format("cannot allocate {} bytes on the CPU", bytes));
  }
}

CpuStorage::~CpuStorage() { std::free(data_); }

BackendDevice& CpuStorage::backend_device() const { return cpu_backend_device(); }

void CpuStorage::copy_to_host(void* dst, size_t offset, size_t count) const {
  if (count) std::memcpy(dst, static_cast<const char*>(data_) + offset * dtype_size(dtype_), count * dtype_size(dtype_));
}

std::shared_ptr<CpuStorage> cpu_alloc(size_t n, DType dtype) { return std::make_shared<CpuStorage>(n, dtype); }

}  // namespace wick
