// CPU storage allocation, host transfers, and the CPU BackendDevice.
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <list>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/cpu/cpu_storage.h"
#include "backend/cpu/strided.h"
#include "base/checked.h"
#include "wick/options.h"

namespace wick {

std::string CpuDevice::name() const { return fmt::format("CPU ({} threads)", cpu::max_threads()); }
StoragePtr CpuDevice::alloc(size_t n, DType dtype) { return cpu_alloc(n, dtype); }
StoragePtr CpuDevice::zeros(size_t n, DType dtype) {
  auto s = cpu_alloc(n, dtype);
  if (n) s->const_set(Scalar(0.0), Layout({n}));  // the threads' fill (copy.cpp)
  return s;
}
StoragePtr CpuDevice::from_host(const void* data, size_t n, DType dtype) {
  auto s = cpu_alloc(n, dtype);
  if (n) std::memcpy(s->raw(), data, n * dtype_size(dtype));
  return s;
}
StoragePtr CpuDevice::wrap(void* ptr, size_t n, DType dtype, std::function<void(void*)> deleter) {
  return std::make_shared<CpuStorage>(ptr, n, dtype, std::move(deleter));
}
StoragePtr CpuDevice::rand_uniform(size_t n, DType dtype, double lo, double up, uint64_t seed,
                                   uint64_t offset) {
  return cpu_rand_uniform(n, dtype, lo, up, seed, offset);
}
StoragePtr CpuDevice::rand_normal(size_t n, DType dtype, double mean, double std, uint64_t seed,
                                  uint64_t offset) {
  return cpu_rand_normal(n, dtype, mean, std, seed, offset);
}

namespace {

// Large host blocks are kept for reuse: glibc hands blocks above 32 MiB to mmap and
// returns them on free, so without a cache every large op output is faulted in page
// by page (measured: a 256 MiB f32 copy ran at 3.7 GB/s on the development VM,
// docs/PERFORMANCE.md). Blocks of at least kMinCached bytes are
// rounded to a size class (four per power of two, at most 25% above the request) and
// kept on free lists up to a total of options().cpu_cache_bytes (default 1 GiB; 0:
// no cache). A released block that does not fit evicts the blocks released longest
// ago (the sizes of ops run before, which would otherwise hold the cache and leave
// every later size class faulted in at each call: docs/PERFORMANCE.md); an
// allocation that fails frees the cached blocks and retries once.
// Builds with AddressSanitizer never cache, so it still sees every free.
class HostBlockCache {
 public:
  static constexpr size_t kMinCached = size_t(1) << 20;

  static HostBlockCache& get() {
    static HostBlockCache* cache = new HostBlockCache;  // never destroyed: storages may outlive statics
    return *cache;
  }
  // The block size for `bytes` (> 0), or 0 when the rounded size does not fit in 2^63-1.
  static size_t size_class(size_t bytes) {
    const size_t step = bytes < kMinCached ? 64 : size_t(1) << (61 - __builtin_clzll(bytes));
    size_t padded = 0;
    return add_fits(bytes, step - 1, padded) ? padded / step * step : 0;
  }
  void* allocate(size_t cls) {
    void* p = cls >= kMinCached ? take_cached(cls) : nullptr;
    if (!p) p = std::aligned_alloc(64, cls);
    if (!p && stats().cached > 0) {  // out of memory: give the cached blocks back and retry once
      trim();
      p = std::aligned_alloc(64, cls);
    }
    if (p) {
      std::lock_guard<std::mutex> lock(mu_);
      in_use_ += cls;
      peak_ = std::max(peak_, in_use_);
    }
    return p;
  }
  MemoryStats stats() {
    std::lock_guard<std::mutex> lock(mu_);
    return {in_use_, cached_, peak_};
  }
  void trim() {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Block& b : order_) std::free(b.p);
    order_.clear();
    free_.clear();
    cached_ = 0;
  }
  void release(void* p, size_t cls) {
    if (!p) return;
    const size_t limit = cls >= kMinCached ? cache_limit() : 0;
    std::vector<void*> evicted;
    {
      std::lock_guard<std::mutex> lock(mu_);
      in_use_ -= cls;
      if (cls <= limit) {
        while (cached_ + cls > limit) {  // the oldest blocks make room (the oldest of their class too)
          const Block& old = order_.back();
          auto& v = free_[old.cls];
          v.erase(v.begin());
          cached_ -= old.cls;
          evicted.push_back(old.p);
          order_.pop_back();
        }
        order_.push_front({p, cls});
        free_[cls].push_back(order_.begin());
        cached_ += cls;
        p = nullptr;
      }
    }
    for (void* q : evicted) std::free(q);
    std::free(p);
  }

 private:
  struct Block {
    void* p;
    size_t cls;
  };
  static size_t cache_limit() {
#if defined(__SANITIZE_ADDRESS__)
    return 0;
#else
    return options().cpu_cache_bytes;
#endif
  }
  void* take_cached(size_t cls) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = free_.find(cls);
    if (it == free_.end() || it->second.empty()) return nullptr;
    const auto b = it->second.back();  // the newest of its class
    it->second.pop_back();
    void* p = b->p;
    order_.erase(b);
    cached_ -= cls;
    return p;
  }
  std::mutex mu_;
  std::list<Block> order_;  // cached blocks, the most recently released first
  std::unordered_map<size_t, std::vector<std::list<Block>::iterator>> free_;  // per class, oldest first
  size_t cached_ = 0, in_use_ = 0, peak_ = 0;
};

// MemAvailable of /proc/meminfo in bytes; 0 when it cannot be read.
size_t available_host_memory() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  unsigned long long kib = 0;
  while (std::getline(in, line)) {
    if (std::sscanf(line.c_str(), "MemAvailable: %llu kB", &kib) == 1) return size_t(kib) * 1024;
  }
  return 0;
}

}  // namespace

int cpu::max_threads() {
  const int n = options().cpu_threads;
  return n > 0 ? n : omp_get_max_threads();
}

DeviceInfo CpuDevice::info() const {
  DeviceInfo i;
  i.device = Device::cpu();
  i.name = name();
  i.backend = "cpu";
  i.multiprocessors = cpu::max_threads();
  return i;
}

MemoryStats CpuDevice::memory_stats() const {
  MemoryStats s = HostBlockCache::get().stats();
  s.free = available_host_memory();
  return s;
}

BackendDevice& cpu_backend_device() {
  static CpuDevice dev;
  return dev;
}

CpuStorage::CpuStorage(size_t n, DType dtype) : n_(n), dtype_(dtype) {
  size_t bytes = 0;
  if (!mul_fits(n, dtype_size(dtype), bytes)) {
    throw_error(ErrorKind::OutOfMemory, "alloc",
                fmt::format("{} elements of {}: the byte count exceeds 2^63-1", n, dtype_name(dtype)));
  }
  if (bytes == 0) return;
  const size_t rounded = HostBlockCache::size_class(bytes);
  data_ = rounded ? HostBlockCache::get().allocate(rounded) : nullptr;
  if (!data_) {
    throw_error(ErrorKind::OutOfMemory, "alloc", fmt::format("cannot allocate {} bytes on the CPU", bytes));
  }
  capacity_ = rounded;
}

CpuStorage::CpuStorage(void* data, size_t n, DType dtype, std::function<void(void*)> deleter)
    : data_(data), n_(n), dtype_(dtype), external_(true), deleter_(std::move(deleter)) {}

CpuStorage::~CpuStorage() {
  if (external_) {
    if (deleter_) {
      try {
        deleter_(data_);
      } catch (...) {  // a destructor cannot throw; the deleter's contract is not to
      }
    }
    return;
  }
  if (data_) HostBlockCache::get().release(data_, capacity_);
}

BackendDevice& CpuStorage::backend_device() const { return cpu_backend_device(); }

void CpuStorage::copy_to_host(void* dst, size_t offset, size_t count) const {
  if (count)
    std::memcpy(dst, static_cast<const char*>(data_) + offset * dtype_size(dtype_),
                count * dtype_size(dtype_));
}

std::shared_ptr<CpuStorage> cpu_alloc(size_t n, DType dtype) {
  return std::make_shared<CpuStorage>(n, dtype);
}

}  // namespace wick
