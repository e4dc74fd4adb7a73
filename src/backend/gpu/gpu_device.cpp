// GPU device, module store, caching allocator and the loadable backend's entry
// point (wick_gpu_backend_create), written once for CUDA and ROCm.
#include "backend/gpu/gpu_device.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <unordered_map>
#include <utility>

#include "backend/gpu/arch_support.h"
#include "backend/gpu/gpu_storage.h"
#include "base/checked.h"
#include "wick/error.h"

namespace wick::gpu {

[[noreturn]] void throw_gpu_error(gpuError_t err, const char* call, const char* file, int line) {
  const char* base = file;
  for (const char* p = file; *p; ++p)
    if (*p == '/') base = p + 1;
  std::string msg = fmt::format("{} failed at {}:{}: {} ({})", call, base, line, gpuGetErrorName(err),
                                gpuGetErrorString(err));
  throw_error(err == gpuErrorMemoryAllocation ? ErrorKind::OutOfMemory : ErrorKind::GpuRuntime, "gpu", msg);
}

void set_device(int ordinal) {
  thread_local int current = -1;
  if (current == ordinal) return;
  WICK_GPU_CHECK(gpuSetDevice(ordinal));
  current = ordinal;
}

// ---- kernels and the module store -----------------------------------------------------
namespace {

// Every registered (module, name), in id order.
struct KernelRegistry {
  std::mutex mu;
  std::unordered_map<std::string, uint32_t> ids;  // "module/name"
  std::deque<std::string> names;
};
KernelRegistry& registry() {
  static KernelRegistry* r = new KernelRegistry;  // never destroyed: kernels outlive static teardown
  return *r;
}

}  // namespace

Kernel::Kernel(Module m, std::string_view name) : module_(m) {
  KernelRegistry& r = registry();
  std::string key = fmt::format("{}/{}", kModuleNames[size_t(m)], name);
  std::lock_guard<std::mutex> lock(r.mu);
  auto [it, added] = r.ids.emplace(std::move(key), uint32_t(r.names.size()));
  if (added) {
    if (r.names.size() >= kMaxKernels) {
      r.ids.erase(it);
      throw_error(ErrorKind::GpuRuntime, "gpu",
                  fmt::format("kernel {}: more than {} kernels registered", name, kMaxKernels));
    }
    r.names.emplace_back(name);
  }
  id_ = it->second;
}

const std::string& Kernel::name() const {
  KernelRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.names[id_];  // a deque: references stay valid as names are added
}

size_t Kernel::count() {
  KernelRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.names.size();
}

DTypeKernels::DTypeKernels(Module m, std::string_view prefix) {
  for (DType d : kAllDTypes) k_[size_t(d)] = Kernel(m, fmt::format("{}_{}", prefix, dtype_name(d)));
}

DTypePairKernels::DTypePairKernels(Module m, std::string_view prefix) {
  for (DType a : kAllDTypes)
    for (DType b : kAllDTypes)
      k_[size_t(a) * kNumDTypes + size_t(b)] =
          Kernel(m, fmt::format("{}_{}_{}", prefix, dtype_name(a), dtype_name(b)));
}

ModuleStore::ModuleStore(int ordinal)
    : ordinal_(ordinal), funcs_(new std::atomic<gpuFunction_t>[Kernel::kMaxKernels]) {
  for (size_t i = 0; i < Kernel::kMaxKernels; ++i)
    funcs_[i].store(gpuFunction_t{}, std::memory_order_relaxed);
}

ModuleStore::~ModuleStore() {
  for (size_t i = 0; i < kNumModules; ++i)
    if (loaded_[i]) (void)gpuModuleUnload(modules_[i]);  // best effort at teardown
}

gpuFunction_t ModuleStore::resolve(const Kernel& k) {
  std::lock_guard<std::mutex> lock(mu_);
  if (gpuFunction_t f = funcs_[k.id()].load(std::memory_order_acquire)) return f;
  const size_t mi = size_t(k.module());
  if (!loaded_[mi]) {
    ModuleImage img = module_image(k.module());
    if (!img.data || img.size == 0)
      throw_error(ErrorKind::GpuRuntime, "gpu",
                  fmt::format("module {} has no embedded image", kModuleNames[mi]));
    set_device(ordinal_);
    gpuError_t err = gpuModuleLoadData(&modules_[mi], img.data);
    if (err != gpuSuccess) {
      (void)gpuGetLastError();
      throw_error(
          ErrorKind::GpuRuntime, "gpu",
          fmt::format("loading module {} on device {} failed: {} ({}); built for archs {}", kModuleNames[mi],
                      ordinal_, gpuGetErrorName(err), gpuGetErrorString(err), compiled_archs()));
    }
    loaded_[mi] = true;
    ++loads_[mi];
  }
  gpuFunction_t f{};
  gpuError_t err = gpuModuleGetFunction(&f, modules_[mi], k.name().c_str());
  if (err != gpuSuccess) {
    (void)gpuGetLastError();
    throw_error(ErrorKind::GpuRuntime, "gpu",
                fmt::format("kernel {} not found in module {}: {}", k.name(), kModuleNames[mi],
                            gpuGetErrorString(err)));
  }
  funcs_[k.id()].store(f, std::memory_order_release);
  return f;
}

size_t ModuleStore::load_count(Module m) const {
  std::lock_guard<std::mutex> lock(mu_);
  return loads_[size_t(m)];
}

// ---- caching allocator -------------------------------------------------------------------
struct CachingAllocator::Pool {
  std::array<std::vector<void*>, kClasses> free;  // released blocks, by class_index
  // Blocks written from the host while recording: the recorded kernels read them
  // later, so no later allocation of the recording may take them (kept apart).
  std::unordered_set<void*> written;
  std::array<std::vector<void*>, kClasses> kept;  // released written blocks
};

size_t CachingAllocator::size_class(size_t bytes) {
  if (bytes <= 512) return 512;
  // four classes per power of two: 2^k, 1.25*2^k, 1.5*2^k, 1.75*2^k; 0 when the rounded
  // size does not fit in 2^63-1 (no device has such a block)
  size_t k = 63 - size_t(__builtin_clzll(bytes));
  size_t step = size_t(1) << (k - 2);
  size_t padded = 0;
  return add_fits(bytes, step - 1, padded) ? padded / step * step : 0;
}

size_t CachingAllocator::class_index(size_t cls) {
  const size_t k = 63 - size_t(__builtin_clzll(cls));
  return (k - 9) * 4 + ((cls - (size_t(1) << k)) >> (k - 2));
}

CachingAllocator::~CachingAllocator() {
  // Teardown at process exit may find the runtime already gone: ignore errors.
  for (auto& v : free_)
    for (void* p : v) (void)gpuFree(p);
}

void* CachingAllocator::allocate(size_t bytes, bool host_written) {
  if (bytes == 0) return nullptr;
  const size_t cls = size_class(bytes);
  if (cls == 0) {
    throw_error(ErrorKind::OutOfMemory, "gpu",
                fmt::format("out of memory allocating {} bytes on device {}: no block can be that large",
                            bytes, ordinal_));
  }
  std::vector<void*>& list = free_[class_index(cls)];
  std::lock_guard<std::mutex> lock(mu_);
  void* p = nullptr;
  if (open_ && !host_written && !open_->free[class_index(cls)].empty()) {
    // A block the capture released before: still counted in use.
    std::vector<void*>& own = open_->free[class_index(cls)];
    p = own.back();
    own.pop_back();
    return p;
  }
  if (!list.empty() && !(open_ && host_written)) {
    p = list.back();
    list.pop_back();
    cached_ -= cls;
  } else {
    set_device(ordinal_);
    gpuError_t err = gpuMalloc(&p, cls);
    if (err == gpuErrorMemoryAllocation) {
      (void)gpuGetLastError();
      // Free every cached block and retry once.
      free_cached();
      err = gpuMalloc(&p, cls);
      if (err == gpuErrorMemoryAllocation) {
        (void)gpuGetLastError();
        throw_error(ErrorKind::OutOfMemory, "gpu",
                    fmt::format("out of memory allocating {} bytes on device {} ({} bytes in use by wick)",
                                bytes, ordinal_, in_use_));
      }
    }
    WICK_GPU_CHECK(err);
  }
  in_use_ += cls;
  peak_ = std::max(peak_, in_use_);
  if (open_) {
    owner_.emplace(p, open_);
    if (host_written) open_->written.insert(p);
  }
  return p;
}

void CachingAllocator::release(void* p, size_t bytes) {
  if (!p) return;
  const size_t cls = size_class(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = owner_.find(p); it != owner_.end()) {
    Pool& pool = *it->second;
    (pool.written.count(p) ? pool.kept : pool.free)[class_index(cls)].push_back(p);
    return;
  }
  free_[class_index(cls)].push_back(p);
  in_use_ -= cls;
  cached_ += cls;
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  free_cached();
}

void CachingAllocator::free_cached() {
  // A freed block goes back to the runtime only after the work queued on the stream;
  // work not queued yet (deferred ops that read a cached block) is queued first.
  if (before_free_) before_free_();
  set_device(ordinal_);
  for (auto& v : free_) {
    for (void* q : v) WICK_GPU_CHECK(gpuFree(q));
    v.clear();
  }
  cached_ = 0;
}

size_t CachingAllocator::class_size(size_t index) {
  const size_t k = index / 4 + 9;
  return (size_t(1) << k) + (index % 4) * (size_t(1) << (k - 2));
}

CachingAllocator::Pool* CachingAllocator::open_pool() {
  std::lock_guard<std::mutex> lock(mu_);
  if (open_) throw_error(ErrorKind::InvalidArgument, "capture", "a capture is already recording");
  open_ = new Pool;
  return open_;
}

CachingAllocator::Pool* CachingAllocator::close_pool() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(open_, nullptr);
}

void CachingAllocator::drop_pool(Pool* pool) {
  if (!pool) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (open_ == pool) open_ = nullptr;
  for (size_t i = 0; i < kClasses; ++i) {
    for (auto* list : {&pool->free[i], &pool->kept[i]}) {
      for (void* p : *list) {
        free_[i].push_back(p);
        in_use_ -= class_size(i);
        cached_ += class_size(i);
      }
    }
  }
  std::erase_if(owner_, [pool](const auto& kv) { return kv.second == pool; });
  delete pool;
}

MemoryStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return MemoryStats{in_use_, cached_, peak_};
}

// ---- device --------------------------------------------------------------------------------
GpuDevice::GpuDevice(int local_ordinal, int global_ordinal, DeviceInfo info)
    : local_(local_ordinal),
      global_(global_ordinal),
      info_(std::move(info)),
      modules_(local_ordinal),
      allocator_(local_ordinal, [this] { flush(); }) {
  set_device(local_);
  WICK_GPU_CHECK(gpuStreamCreateWithFlags(&stream_, gpuStreamNonBlocking));
}

GpuDevice::~GpuDevice() {
  for (gpuEvent_t e : staged_)
    if (e) (void)gpuEventDestroy(e);
  if (staging_) (void)gpuFreeHost(staging_);
  if (side_stream_) (void)gpuStreamDestroy(side_stream_);
  if (stream_) (void)gpuStreamDestroy(stream_);
}

void GpuDevice::copy_to_host(void* dst, const void* src, size_t bytes) {
  flush();
  set_device(local_);
  if (bytes < kStagedCopyMin) {
    WICK_GPU_CHECK(gpuMemcpyAsync(dst, src, bytes, gpuMemcpyDeviceToHost, stream_));
    WICK_GPU_CHECK(gpuStreamSynchronize(stream_));
    return;
  }
  std::lock_guard<std::mutex> lock(staging_mu_);
  if (!staging_) {
    WICK_GPU_CHECK(gpuHostAllocMapped(&staging_, 2 * kStagingChunk));
    for (gpuEvent_t& e : staged_) WICK_GPU_CHECK(gpuEventCreate(&e));
  }
  char* stage = static_cast<char*>(staging_);
  const char* from = static_cast<const char*>(src);
  char* to = static_cast<char*>(dst);
  const size_t chunks = (bytes + kStagingChunk - 1) / kStagingChunk;
  const auto length = [&](size_t i) { return std::min(kStagingChunk, bytes - i * kStagingChunk); };
  const auto issue = [&](size_t i) {  // chunk i into half i % 2
    WICK_GPU_CHECK(gpuMemcpyAsync(stage + (i % 2) * kStagingChunk, from + i * kStagingChunk, length(i),
                                  gpuMemcpyDeviceToHost, stream_));
    WICK_GPU_CHECK(gpuEventRecord(staged_[i % 2], stream_));
  };
  issue(0);
  for (size_t i = 0; i < chunks; ++i) {
    if (i + 1 < chunks) issue(i + 1);  // into the half chunk i - 1 left
    WICK_GPU_CHECK(gpuEventSynchronize(staged_[i % 2]));
    std::memcpy(to + i * kStagingChunk, stage + (i % 2) * kStagingChunk, length(i));
  }
}

// ---- graphs --------------------------------------------------------------------------------
namespace {

class GpuGraph final : public DeviceGraph {
 public:
  GpuGraph(GpuDevice& dev, gpuGraph_t g, gpuGraphExec_t e, CachingAllocator::Pool* pool)
      : dev_(dev), graph_(g), exec_(e), pool_(pool) {}
  ~GpuGraph() override {
    // Replays may still be queued: drain the stream before the buffers go back.
    // A destructor cannot throw: errors (a runtime torn down at exit) are ignored.
    (void)gpuSetDevice(dev_.ordinal());
    try {
      dev_.flush();
    } catch (...) {
    }
    (void)gpuStreamSynchronize(dev_.stream());  // flushed above: stream() throws no more
    (void)gpuGraphExecDestroy(exec_);
    (void)gpuGraphDestroy(graph_);
    (void)gpuGetLastError();
    dev_.allocator().drop_pool(pool_);
  }
  GpuGraph(const GpuGraph&) = delete;
  GpuGraph& operator=(const GpuGraph&) = delete;
  void replay() override {
    set_device(dev_.ordinal());
    WICK_GPU_CHECK(gpuGraphLaunch(exec_, dev_.stream()));
  }

 private:
  GpuDevice& dev_;
  gpuGraph_t graph_;
  gpuGraphExec_t exec_;
  CachingAllocator::Pool* pool_;
};

}  // namespace

void GpuDevice::begin_capture() {
  flush();  // ops deferred before the capture run now, not in every replay
  set_device(local_);
  CachingAllocator::Pool* pool = allocator_.open_pool();
  const gpuError_t err = gpuStreamBeginCapture(stream_, gpuStreamCaptureModeRelaxed);
  if (err != gpuSuccess) {
    allocator_.drop_pool(pool);
    WICK_GPU_CHECK(err);
  }
  capturing_ = true;
}

std::unique_ptr<DeviceGraph> GpuDevice::end_capture() {
  if (!capturing()) throw_error(ErrorKind::InvalidArgument, "capture", "no capture is recording");
  set_device(local_);
  gpuGraph_t g = nullptr;
  gpuError_t err = gpuStreamEndCapture(stream_, &g);
  capturing_ = false;
  CachingAllocator::Pool* pool = allocator_.close_pool();
  gpuGraphExec_t e = nullptr;
  if (err == gpuSuccess) err = gpuGraphInstantiate(&e, g);
  if (err != gpuSuccess) {
    if (g) (void)gpuGraphDestroy(g);
    allocator_.drop_pool(pool);
    WICK_GPU_CHECK(err);
  }
  return std::make_unique<GpuGraph>(*this, g, e, pool);
}

void GpuDevice::abort_capture() {
  if (!capturing()) return;
  set_device(local_);
  gpuGraph_t g = nullptr;
  (void)gpuStreamEndCapture(stream_, &g);
  if (g) (void)gpuGraphDestroy(g);
  (void)gpuGetLastError();
  capturing_ = false;
  allocator_.drop_pool(allocator_.close_pool());
}

void GpuDevice::copy_in(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  flush();
  set_device(local_);
  if (capturing()) {
    std::lock_guard<std::mutex> lock(lazy_mu_);
    if (!side_stream_) WICK_GPU_CHECK(gpuStreamCreateWithFlags(&side_stream_, gpuStreamNonBlocking));
    WICK_GPU_CHECK(gpuMemcpyAsync(dst, src, bytes, gpuMemcpyHostToDevice, side_stream_));
    WICK_GPU_CHECK(gpuStreamSynchronize(side_stream_));
    return;
  }
  WICK_GPU_CHECK(gpuMemcpyAsync(dst, src, bytes, gpuMemcpyHostToDevice, stream_));
  // The caller's buffer may be freed on return: make the copy complete first.
  WICK_GPU_CHECK(gpuStreamSynchronize(stream_));
}

MemoryStats GpuDevice::memory_stats() const {
  MemoryStats s = allocator_.stats();
  size_t free = 0, total = 0;
  set_device(local_);
  WICK_GPU_CHECK(gpuMemGetInfo(&free, &total));
  s.free = free;
  return s;
}

unsigned GpuDevice::grid_for(size_t items) const {
  size_t g = (items + kBlock - 1) / kBlock;
  // At most 2^31 threads per launch (HIP requires grid x block < 2^32); grid-stride
  // loops cover larger tensors.
  constexpr size_t cap = (size_t(1) << 31) / kBlock;
  return unsigned(std::clamp<size_t>(g, 1, cap));
}

void GpuDevice::launch(const Kernel& k, dim3 grid, dim3 block, void** args, size_t shmem, bool dependent) {
  flush();
  gpuFunction_t f = modules_.get(k);
  set_device(local_);
  if (shmem > kSharedDefault) raise_shared_limit(f, k);
  gpuError_t err = dependent ? gpuLaunchDependent(f, grid, block, args, shmem, stream_)
                             : gpuLaunch(f, grid, block, args, shmem, stream_);
  if (err != gpuSuccess) {
    (void)gpuGetLastError();
    throw_error(
        ErrorKind::GpuRuntime, "gpu",
        fmt::format("launch of kernel {} (grid {}x{}x{}, block {}x{}x{}) failed: {} ({})", k.name(), grid.x,
                    grid.y, grid.z, block.x, block.y, block.z, gpuGetErrorName(err), gpuGetErrorString(err)));
  }
}

bool GpuDevice::defer(const batch::Op& op) {
  std::lock_guard<std::mutex> lock(batch_mu_);
  if (capturing()) return false;
  batch_.ops[batch_.count++] = op;
  deferred_total_.fetch_add(1, std::memory_order_relaxed);
  if (batch_.count == batch::kMaxOps) {
    launch_deferred_locked();
  } else {
    deferred_waiting_.store(batch_.count, std::memory_order_release);
  }
  return true;
}

void GpuDevice::launch_deferred() {
  std::lock_guard<std::mutex> lock(batch_mu_);
  launch_deferred_locked();
}

void GpuDevice::launch_deferred_locked() {
  if (batch_.count == 0) return;
  static const Kernel k(Module::Batch, "eager_batch");
  const uint32_t count = batch_.count;
  gpuError_t err = gpuSuccess;
  std::exception_ptr failure;
  try {
    gpuFunction_t f = modules_.get(k);
    set_device(local_);
    void* args[] = {&batch_};
    err = gpuLaunch(f, dim3(1), dim3(batch::kBlock), args, 0, stream_);
  } catch (...) {
    failure = std::current_exception();
  }
  // The records are spent whether the launch succeeded or not: after a failed launch
  // the deferred ops' outputs are undefined, as after any failed kernel.
  batch_.count = 0;
  deferred_waiting_.store(0, std::memory_order_release);
  if (failure) std::rethrow_exception(failure);
  if (err != gpuSuccess) {
    (void)gpuGetLastError();
    throw_error(ErrorKind::GpuRuntime, "gpu",
                fmt::format("launch of kernel {} ({} deferred ops) failed: {} ({})", k.name(), count,
                            gpuGetErrorName(err), gpuGetErrorString(err)));
  }
}

void GpuDevice::raise_shared_limit(gpuFunction_t f, const Kernel& k) {
  std::lock_guard<std::mutex> lock(raised_mu_);
  if (!raised_.insert(k.id()).second) return;
  const gpuError_t err = gpuRaiseSharedLimit(f, int(info_.shared_per_block), local_);
  if (err != gpuSuccess) {
    (void)gpuGetLastError();
    raised_.erase(k.id());
    throw_error(ErrorKind::GpuRuntime, "gpu",
                fmt::format("raising the shared-memory limit of kernel {} to {} bytes failed: {} ({})",
                            k.name(), info_.shared_per_block, gpuGetErrorName(err), gpuGetErrorString(err)));
  }
}

void GpuDevice::synchronize() {
  flush();
  set_device(local_);
  WICK_GPU_CHECK(gpuStreamSynchronize(stream_));
  check_index_error();
}

StoragePtr GpuDevice::alloc(size_t n, DType dtype) { return gpu_alloc(*this, n, dtype); }

StoragePtr GpuDevice::zeros(size_t n, DType dtype) {
  auto s = gpu_alloc(*this, n, dtype);
  if (n) {
    set_device(local_);
    WICK_GPU_CHECK(gpuMemsetAsync(s->raw(), 0, n * dtype_size(dtype), stream()));
  }
  return s;
}

StoragePtr GpuDevice::from_host(const void* data, size_t n, DType dtype) {
  auto s = gpu_alloc(*this, n, dtype, true);
  copy_in(s->raw(), data, n * dtype_size(dtype));
  return s;
}

StoragePtr GpuDevice::wrap(void* ptr, size_t n, DType dtype, std::function<void(void*)> deleter) {
  return std::make_shared<GpuStorage>(*this, ptr, n, dtype, std::move(deleter));
}

namespace {
StoragePtr launch_rand(GpuDevice& dev, bool normal_dist, size_t n, DType dtype, double a, double b,
                       uint64_t seed, uint64_t offset) {
  auto s = gpu_alloc(dev, n, dtype);
  if (n == 0) return s;
  void* out = s->raw();
  void* args[] = {&n, &a, &b, &seed, &offset, &out};
  static const DTypeKernels uniform(Module::Fill, "rand_uniform"), normal(Module::Fill, "rand_normal");
  dev.launch((normal_dist ? normal : uniform)[dtype], dim3(dev.grid_for(n)), dim3(dev.block_size()), args);
  return s;
}
}  // namespace

StoragePtr GpuDevice::rand_uniform(size_t n, DType dtype, double lo, double up, uint64_t seed,
                                   uint64_t offset) {
  return launch_rand(*this, false, n, dtype, lo, up, seed, offset);
}

StoragePtr GpuDevice::rand_normal(size_t n, DType dtype, double mean, double std, uint64_t seed,
                                  uint64_t offset) {
  return launch_rand(*this, true, n, dtype, mean, std, seed, offset);
}

DeviceBuffer upload(GpuDevice& dev, const std::vector<size_t>& v) {
  DeviceBuffer b(dev, v.size() * sizeof(size_t), true);
  if (v.empty()) return b;
  if (dev.capturing()) {
    dev.copy_in(b.get(), v.data(), v.size() * sizeof(size_t));
  } else {
    set_device(dev.ordinal());
    // Small pageable copies are staged by the runtime before the call returns.
    WICK_GPU_CHECK(
        gpuMemcpyAsync(b.get(), v.data(), v.size() * sizeof(size_t), gpuMemcpyHostToDevice, dev.stream()));
  }
  return b;
}

// ---- the loadable backend ---------------------------------------------------------------------
namespace {

// Empty when the embedded images serve the device, else why not (arch_support.h).
std::string missing_target(const gpuDeviceProp_t& p) {
#if defined(WICK_VENDOR_HIP)
  return rocm_missing_target(rocm_target(p.gcnArchName), compiled_archs());
#else
  return cuda_missing_target(p.major * 10 + p.minor, compiled_archs());
#endif
}

class GpuBackendImpl final : public GpuBackend {
 public:
  // hw[i]: the runtime's ordinal of the backend's device i (unusable GPUs are skipped).
  GpuBackendImpl(std::vector<DeviceInfo> infos, std::vector<int> hw)
      : infos_(std::move(infos)), hw_(std::move(hw)), devices_(infos_.size()) {}
  std::string vendor() const override { return WICK_GPU_VENDOR; }
  int device_count() const override { return int(infos_.size()); }
  DeviceInfo info(int ordinal) const override { return infos_.at(size_t(ordinal)); }
  BackendDevice& device(int ordinal, int global_ordinal) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto& d = devices_.at(size_t(ordinal));
    if (!d) d = std::make_unique<GpuDevice>(hw_[size_t(ordinal)], global_ordinal, infos_[size_t(ordinal)]);
    return *d;
  }
  GpuDevice* existing(int ordinal) {
    std::lock_guard<std::mutex> lock(mu_);
    if (ordinal < 0 || size_t(ordinal) >= devices_.size()) return nullptr;
    return devices_[size_t(ordinal)].get();
  }

 private:
  std::vector<DeviceInfo> infos_;
  std::vector<int> hw_;
  std::mutex mu_;
  std::vector<std::unique_ptr<GpuDevice>> devices_;
};

// The process keeps the backend for its lifetime (storages may outlive any owner).
GpuBackendImpl* g_backend = nullptr;

}  // namespace

}  // namespace wick::gpu

extern "C" __attribute__((visibility("default"))) wick::GpuBackend* wick_gpu_backend_create(
    std::string* why_not) {
  using namespace wick::gpu;
  if (g_backend) return g_backend;
  int count = 0;
  gpuError_t err = gpuGetDeviceCount(&count);
  if (err != gpuSuccess) {
    (void)gpuGetLastError();
    if (why_not) {
      const char* what = err == gpuErrorNoDevice             ? "no device"
                         : err == gpuErrorInsufficientDriver ? "no driver (or one too old)"
                                                             : "runtime unavailable";
      *why_not = fmt::format("{}: {} ({})", what, gpuGetErrorName(err), gpuGetErrorString(err));
    }
    return nullptr;
  }
  if (count <= 0) {
    if (why_not) *why_not = "no device";
    return nullptr;
  }
  std::vector<wick::DeviceInfo> infos;
  std::vector<int> hw;
  std::string why;
  for (int i = 0; i < count; ++i) {
    gpuDeviceProp_t p{};
    if (gpuGetDeviceProperties(&p, i) != gpuSuccess) {
      (void)gpuGetLastError();
      continue;
    }
    if (const std::string w = missing_target(p); !w.empty()) {
      why += (why.empty() ? "" : "; ") + fmt::format("device {} ({}): {}", i, p.name, w);
      continue;
    }
    wick::DeviceInfo info;
    info.device = wick::Device::gpu(int(infos.size()));
    info.name = p.name;
    info.backend = WICK_GPU_VENDOR;
    info.arch = gpu_arch_name(p);
    info.total_memory = p.totalGlobalMem;
    info.wave_size = p.warpSize;
    info.multiprocessors = p.multiProcessorCount;
    info.shared_per_block = gpu_shared_per_block_max(p);
    infos.push_back(std::move(info));
    hw.push_back(i);
  }
  if (infos.empty()) {
    if (why_not) *why_not = why.empty() ? "no usable device" : why;
    return nullptr;
  }
  if (why_not) *why_not = why;  // the devices skipped beside those served
  g_backend = new GpuBackendImpl(std::move(infos), std::move(hw));
  return g_backend;
}

// Observability for tests and tools (looked up with dlsym): how many times module
// `module` (index into kModuleNames) was loaded on local device `ordinal`; -1 when
// that device was never opened.
extern "C" __attribute__((visibility("default"))) long wick_gpu_module_load_count(int ordinal, int module) {
  using namespace wick::gpu;
  if (!g_backend || module < 0 || size_t(module) >= kNumModules) return -1;
  GpuDevice* d = g_backend->existing(ordinal);
  if (!d) return -1;
  return long(d->modules().load_count(Module(module)));
}

// Observability for tests (looked up with dlsym): how many convolutions the
// vendor DNN library ran on local device `ordinal`; -1 when that device was never
// opened, -2 in a build without a DNN library, -4 when the library did not load.
extern "C" __attribute__((visibility("default"))) long wick_gpu_dnn_convolutions(int ordinal) {
  using namespace wick::gpu;
  GpuDevice* d = g_backend ? g_backend->existing(ordinal) : nullptr;
  if (!d) return -1;
  return dnn_convolutions(*d);
}

// Observability for tests (looked up with dlsym): how many small ops ran deferred
// (batch_ops.h) on local device `ordinal`, the waiting ones included; -1 when that
// device was never opened.
extern "C" __attribute__((visibility("default"))) long wick_gpu_deferred_ops(int ordinal) {
  using namespace wick::gpu;
  GpuDevice* d = g_backend ? g_backend->existing(ordinal) : nullptr;
  if (!d) return -1;
  return long(d->deferred_ops());
}

// A test hook (looked up with dlsym) for the launch-failure path: launches kernel
// `kernel` of the AFFINE module, with affine's parameters and no elements, on local
// device `ordinal` (opened already) with the given grid and block. Returns -1 when
// the device was never opened, 0 when the launch was accepted, else the ErrorKind
// of the wick::Error it raised, with that error's message copied to `msg`.
extern "C" __attribute__((visibility("default"))) int wick_gpu_test_launch_affine(
    int ordinal, const char* kernel, unsigned grid, unsigned block, char* msg, size_t msg_len) {
  using namespace wick::gpu;
  GpuDevice* d = g_backend ? g_backend->existing(ordinal) : nullptr;
  if (!d) return -1;
  size_t numel = 0, num_dims = 0;
  const void *info = nullptr, *inp = nullptr;
  void* out = nullptr;
  double mul = 1.0, add = 0.0;
  void* args[] = {&numel, &num_dims, &info, &inp, &out, &mul, &add};
  try {
    d->launch(Kernel(Module::Affine, kernel), dim3(grid), dim3(block), args);
    return 0;
  } catch (const wick::Error& e) {
    if (msg && msg_len) std::snprintf(msg, msg_len, "%s", e.what());
    return int(e.kind());
  }
}
