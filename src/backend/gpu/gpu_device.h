// The GPU backend's host side, written once for CUDA and ROCm (vendor.h maps the
// names): the module store (kernel families loaded lazily, at most once per
// device), the caching allocator, one stream per device, and launch helpers.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "backend/backend.h"
#include "backend/gpu/batch_ops.h"
#include "backend/gpu/vendor.h"

namespace wick::gpu {

// The kernel modules (code object / fatbin), written once: X(Enum, "name"). One a
// family, from kernels/<family>.cu, image "<family>"; a family split into parts has
// one a part, from kernels/<family>/<part>.cu, image "<family>_<part>". The build
// embeds an image per kernel file (cmake/gpu.cmake) and fails unless the images and
// this list name the same modules (the generated images.cpp checks).
#define WICK_GPU_MODULES(X)                      \
  X(Affine, "affine")                            \
  X(Binary, "binary")                            \
  X(Cast, "cast")                                \
  X(Fill, "fill")                                \
  X(Ternary, "ternary")                          \
  X(Unary, "unary")                              \
  X(Reduce, "reduce")                            \
  X(Sort, "sort")                                \
  X(Indexing, "indexing")                        \
  X(Matmul, "matmul")                            \
  X(Conv, "conv")                                \
  X(Nn, "nn")                                    \
  X(Attention, "attention")                      \
  X(Batch, "batch")                              \
  X(QuantizedDequantize, "quantized_dequantize") \
  X(QuantizedMmvq, "quantized_mmvq")             \
  X(QuantizedMmvqs, "quantized_mmvqs")           \
  X(QuantizedMmvqw, "quantized_mmvqw")

#define WICK_GPU_MODULE_ENUM(e, name) e,
enum class Module : uint8_t { WICK_GPU_MODULES(WICK_GPU_MODULE_ENUM) };
#undef WICK_GPU_MODULE_ENUM
#define WICK_GPU_MODULE_NAME(e, name) std::string_view(name),
inline constexpr std::array kModuleNames = {WICK_GPU_MODULES(WICK_GPU_MODULE_NAME)};
#undef WICK_GPU_MODULE_NAME
inline constexpr size_t kNumModules = kModuleNames.size();

// The embedded image of a module (generated images.cpp, from the build's fatbins
// or code objects).
struct ModuleImage {
  const unsigned char* data = nullptr;
  size_t size = 0;
};
ModuleImage module_image(Module m);
// The architectures the embedded images were built for ("80;90" or "gfx906;gfx90a").
const char* compiled_archs();

// A kernel of one module, named once: a process-wide index into every device's table
// of function handles. Call sites keep their kernels in static tables (built once, by
// op and dtype), so a launch formats no name and looks up no map: it reads the handle
// from the device's table (ModuleStore::get), resolving it on the first launch.
class Kernel {
 public:
  Kernel() = default;
  // Registers (module, name) and takes its index (the same index for the same pair).
  Kernel(Module m, std::string_view name);
  uint32_t id() const { return id_; }
  Module module() const { return module_; }
  const std::string& name() const;
  // Kernels registered so far, and the most a process may register.
  static size_t count();
  static constexpr size_t kMaxKernels = 8192;

 private:
  uint32_t id_ = UINT32_MAX;
  Module module_ = Module(0);
};

// The kernels "{prefix}_{dtype}" of module m, one per dtype (kernels that do not exist
// are never launched, so never resolved).
class DTypeKernels {
 public:
  DTypeKernels(Module m, std::string_view prefix);
  const Kernel& operator[](DType d) const { return k_[size_t(d)]; }

 private:
  std::array<Kernel, kNumDTypes> k_;
};

// The kernels "{prefix}_{a}_{b}" of module m for every pair of dtypes (casts, where,
// gather by an ids dtype, ...).
class DTypePairKernels {
 public:
  DTypePairKernels(Module m, std::string_view prefix);
  const Kernel& operator()(DType a, DType b) const { return k_[size_t(a) * kNumDTypes + size_t(b)]; }

 private:
  std::array<Kernel, size_t(kNumDTypes) * kNumDTypes> k_;
};

// Kernel modules of one device: each is loaded on first use and at most once;
// function handles are resolved on a kernel's first launch and kept in a table
// indexed by Kernel::id (read without a lock afterwards).
class ModuleStore {
 public:
  explicit ModuleStore(int ordinal);
  ~ModuleStore();
  ModuleStore(const ModuleStore&) = delete;
  ModuleStore& operator=(const ModuleStore&) = delete;

  gpuFunction_t get(const Kernel& k) {
    gpuFunction_t f = funcs_[k.id()].load(std::memory_order_acquire);
    return f ? f : resolve(k);
  }
  // How many times module m was loaded on this device (0 or 1).
  size_t load_count(Module m) const;

 private:
  gpuFunction_t resolve(const Kernel& k);
  int ordinal_;
  mutable std::mutex mu_;
  std::array<gpuModule_t, kNumModules> modules_{};
  std::array<bool, kNumModules> loaded_{};
  std::array<size_t, kNumModules> loads_{};
  std::unique_ptr<std::atomic<gpuFunction_t>[]> funcs_;  // Kernel::kMaxKernels
};

// Per-device caching allocator: blocks are rounded to size classes (at most 25%
// above the request, 512 bytes minimum) and kept on free lists for reuse; the
// runtime allocates only when a class has no free block. All work runs on the
// device's one stream, so a block freed here may be reused by later work at once
// (stream order). Out of memory: free the cache, retry once, then OutOfMemory.
class CachingAllocator {
 public:
  // before_free: runs before the allocator returns cached blocks to the runtime (the
  // device's deferred ops, which may still read such a block, are launched then).
  CachingAllocator(int ordinal, std::function<void()> before_free)
      : ordinal_(ordinal), before_free_(std::move(before_free)) {}
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // null for 0 bytes. host_written: the block is for data copied from the host at
  // once (copy_in); while a pool is open such a block is a fresh one, never one that
  // recorded work used before (which a replay would write over it).
  void* allocate(size_t bytes, bool host_written = false);
  void release(void* p, size_t bytes);  // bytes as requested in allocate
  void empty_cache();
  MemoryStats stats() const;
  static size_t size_class(size_t bytes);
  // The index of a size class (0 for 512 bytes, four a power of two after it), and back.
  static size_t class_index(size_t cls);
  static size_t class_size(size_t index);
  static constexpr size_t kClasses = 4 * (64 - 9);

  // The blocks of a graph's capture. While a pool is open every block allocated joins
  // it; a released block of a pool stays the pool's (its own later allocations reuse it
  // while it is open, in stream order, unless the host wrote it: allocate) and returns
  // to the free lists only when the pool is dropped, so no replay of the graph writes
  // into another tensor's memory. Blocks still held when the pool is dropped become
  // ordinary ones.
  struct Pool;
  Pool* open_pool();   // throws InvalidArgument when one is open already
  Pool* close_pool();  // the open pool stops taking new blocks; returns it (null: none)
  void drop_pool(Pool* pool);

 private:
  void free_cached();  // mu_ held
  int ordinal_;
  std::function<void()> before_free_;
  mutable std::mutex mu_;
  std::array<std::vector<void*>, kClasses> free_;  // by class_index
  size_t in_use_ = 0, cached_ = 0, peak_ = 0;      // in use counts the pools' blocks
  Pool* open_ = nullptr;
  std::unordered_map<void*, Pool*> owner_;  // the pools' blocks
};

// Sets the current device for the calling thread (cheap when already current).
void set_device(int ordinal);

class GpuDevice final : public BackendDevice {
 public:
  GpuDevice(int local_ordinal, int global_ordinal, DeviceInfo info);
  ~GpuDevice() override;

  Device device() const override { return Device::gpu(global_); }
  std::string name() const override { return info_.name; }
  StoragePtr alloc(size_t n, DType dtype) override;
  StoragePtr zeros(size_t n, DType dtype) override;
  StoragePtr from_host(const void* data, size_t n, DType dtype) override;
  StoragePtr wrap(void* ptr, size_t n, DType dtype, std::function<void(void*)> deleter) override;
  StoragePtr rand_uniform(size_t n, DType dtype, double lo, double up, uint64_t seed,
                          uint64_t offset) override;
  StoragePtr rand_normal(size_t n, DType dtype, double mean, double std, uint64_t seed,
                         uint64_t offset) override;
  void synchronize() override;
  void* native_stream() override { return stream(); }
  void begin_capture() override;
  std::unique_ptr<DeviceGraph> end_capture() override;
  void abort_capture() override;
  // Whether this device's stream is being recorded: host data then goes to the device
  // at once, through a side stream (copy_in), since the recorded stream runs nothing.
  bool capturing() const { return capturing_.load(std::memory_order_relaxed); }
  // Copies `bytes` of host memory to device memory `dst` in stream order, the host
  // memory free for reuse on return.
  void copy_in(void* dst, const void* src, size_t bytes);
  DeviceInfo info() const override { return info_; }
  const DeviceInfo& props() const { return info_; }  // info() without the copy
  MemoryStats memory_stats() const override;

  int ordinal() const { return local_; }
  // The device's stream, the deferred small ops launched on it first: whatever the
  // caller queues on it then runs after them.
  gpuStream_t stream() {
    flush();
    return stream_;
  }

  // Small eager ops run together (batch_ops.h). defer() records `op` to run with the
  // ops deferred before it, launching them when kMaxOps are waiting; it returns false
  // while the stream is being recorded into a graph (the caller launches the op's own
  // kernel). flush() launches the waiting ops. Every path that queues other work on
  // the stream (launch, stream(), the copies, synchronize, a capture, the vendor
  // libraries' handles) flushes first, so the deferred ops keep their place in the
  // stream's order.
  bool defer(const batch::Op& op);
  void flush() {
    if (deferred_waiting_.load(std::memory_order_acquire) != 0) launch_deferred();
  }
  // Ops this device ran deferred (counting the waiting ones), for tests.
  size_t deferred_ops() const { return deferred_total_.load(std::memory_order_relaxed); }
  ModuleStore& modules() { return modules_; }
  CachingAllocator& allocator() { return allocator_; }

  // Launches kernel `name` of module m on this device's stream; a failed launch
  // throws Error(GpuRuntime) naming the kernel. Past kSharedDefault bytes of dynamic
  // shared memory the kernel first opts in (once) to info().shared_per_block.
  static constexpr size_t kSharedDefault = 48 * 1024;
  // dependent: the kernel may start before the previous one in the stream finished
  // (gpuLaunchDependent); it waits for it before touching memory that one writes.
  void launch(const Kernel& k, dim3 grid, dim3 block, void** args, size_t shmem = 0, bool dependent = false);
  // Launch shape of the elementwise kernels: 256 threads, enough blocks for one
  // 16-byte item per thread; grid-stride loops cover the rest (on the H200 this
  // beat 128/512-thread blocks and grids capped per multiprocessor:
  // docs/PERFORMANCE.md).
  static constexpr unsigned kBlock = 256;
  // Grid for a grid-stride kernel over `items` work items of kBlock threads.
  unsigned grid_for(size_t items) const;
  unsigned block_size() const { return kBlock; }

  // Copies `bytes` from device memory at src, after the stream's queued work, to host
  // memory at dst (pageable: a std::vector), synchronizing the stream. From
  // kStagedCopyMin bytes on, the copy goes through a pinned staging buffer in chunks of
  // kStagingChunk, the DMA of one chunk overlapping the host's copy of the one before:
  // a pageable device-to-host copy of a model's logits ran at about 5 GB/s
  // (docs/PERFORMANCE.md).
  void copy_to_host(void* dst, const void* src, size_t bytes);
  static constexpr size_t kStagedCopyMin = size_t(64) << 10, kStagingChunk = size_t(256) << 10;

  // Defined in indexing.cpp and matmul.cpp.
  // Device pointer of this device's IndexErrorRecord (index_error.h; mapped host
  // memory, allocated on first use) that indexing kernels report bad ids to.
  void* index_error_record();
  // After the stream synchronized: throws Error(IndexOutOfRange) naming the op if a
  // kernel reported a bad index since the last check, and clears the record.
  void check_index_error();
  // The vendor BLAS handle on this device's stream with its kBlasWorkspaceBytes
  // workspace (created on first use); null in a build without vendor BLAS.
  void* blas_handle();
  static constexpr size_t kBlasWorkspaceBytes = size_t(32) << 20;
  // The vendor DNN library on this device (conv.cpp: its handle on this device's
  // stream and the convolution plans by shape), created on first use; only a build
  // with a DNN library (WICK_GPU_DNN) creates one.
  struct DnnState;
  DnnState& dnn_state();

  // The QUANTIZED module's entry points (quantized.cpp).
  StoragePtr dequantize(GgmlType t, const BackendStorage& blocks, size_t byte_offset, size_t n,
                        DType out) override;
  StoragePtr qmatmul(GgmlType t, const BackendStorage& w, size_t byte_offset, size_t n, size_t k,
                     const BackendStorage& x, const Layout& x_l, size_t m, QMatmulPath path) override;
  StoragePair qmatvec_fused(const FusedRow& row, GgmlType t, const BackendStorage& w, size_t byte_offset,
                            size_t n, size_t k) override;

 private:
  std::mutex lazy_mu_;                // guards the lazily created members below
  void* index_error_host_ = nullptr;  // IndexErrorRecord*, host view
  void* index_error_dev_ = nullptr;   // the same record, device view
  void* blas_handle_ = nullptr;       // gpublasHandle_t
  void* blas_workspace_ = nullptr;    // kBlasWorkspaceBytes, kept
  std::mutex staging_mu_;             // one staged copy_to_host at a time
  void* staging_ = nullptr;           // 2 x kStagingChunk pinned bytes, created on first use
  gpuEvent_t staged_[2] = {};         // the chunk in each half landed
  std::shared_ptr<DnnState> dnn_;

  void raise_shared_limit(gpuFunction_t f, const Kernel& k);
  void launch_deferred();
  void launch_deferred_locked();  // batch_mu_ held
  std::mutex batch_mu_;           // guards batch_
  batch::Batch batch_;            // the waiting ops
  std::atomic<uint32_t> deferred_waiting_{0};
  std::atomic<size_t> deferred_total_{0};
  std::mutex raised_mu_;
  std::unordered_set<uint32_t> raised_;  // kernels (ids) opted in to info_.shared_per_block

  int local_, global_;
  DeviceInfo info_;
  gpuStream_t stream_ = nullptr;
  gpuStream_t side_stream_ = nullptr;   // copy_in while capturing (created on first use)
  std::atomic<bool> capturing_{false};  // the allocator's pool is open meanwhile
  ModuleStore modules_;
  mutable CachingAllocator allocator_;
};

// A device buffer from a device's caching allocator, returned on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(GpuDevice& dev, size_t bytes, bool host_written = false)
      : dev_(&dev), bytes_(bytes), ptr_(dev.allocator().allocate(bytes, host_written)) {}
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : dev_(o.dev_), bytes_(o.bytes_), ptr_(o.ptr_) { o.ptr_ = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      dev_ = o.dev_;
      bytes_ = o.bytes_;
      ptr_ = o.ptr_;
      o.ptr_ = nullptr;
    }
    return *this;
  }
  void* get() const { return ptr_; }
  void reset() {
    if (ptr_) dev_->allocator().release(ptr_, bytes_);
    ptr_ = nullptr;
  }

 private:
  GpuDevice* dev_ = nullptr;
  size_t bytes_ = 0;
  void* ptr_ = nullptr;
};

// Queues an upload of `v` to a fresh device buffer (stream-ordered).
DeviceBuffer upload(GpuDevice& dev, const std::vector<size_t>& v);

// How many convolutions the vendor DNN library ran on `dev` (conv.cpp); -2 in a
// build without one, -4 when it did not load.
long dnn_convolutions(GpuDevice& dev);

}  // namespace wick::gpu
