// Devices: the CPU and GPUs served by a loadable vendor backend (CUDA or ROCm).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace wick {

enum class DeviceKind : uint8_t { Cpu, Gpu };

struct Device {
  DeviceKind kind = DeviceKind::Cpu;
  int ordinal = 0;

  static Device cpu() { return {DeviceKind::Cpu, 0}; }
  static Device gpu(int n = 0) { return {DeviceKind::Gpu, n}; }
  bool is_cpu() const { return kind == DeviceKind::Cpu; }
  bool is_gpu() const { return kind == DeviceKind::Gpu; }
  bool operator==(const Device& o) const { return kind == o.kind && ordinal == o.ordinal; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  // "cpu", "gpu:0"
  std::string str() const;
  // Parses "cpu", "gpu", "gpu:1"; throws InvalidArgument otherwise.
  static Device parse(const std::string& s);
};

// What a device is (for `wick devices` and for sizing work).
struct DeviceInfo {
  Device device;
  std::string name;             // "CPU (16 threads)", "NVIDIA H200"
  std::string backend;          // "cpu", "cuda", "rocm"
  std::string arch;             // "sm_90", "gfx90a"; empty for the CPU
  size_t total_memory = 0;      // bytes; 0 for the CPU
  int wave_size = 0;            // threads per warp / wave; 0 for the CPU
  int multiprocessors = 0;      // SMs / CUs; the thread count for the CPU
  size_t shared_per_block = 0;  // the most shared memory a GPU block may take
};

// Memory that wick's allocator of a device holds.
struct MemoryStats {
  size_t in_use = 0;  // bytes handed out to live tensors
  size_t cached = 0;  // bytes held by the caching allocator, free for reuse
  size_t peak = 0;    // high-water mark of in_use
  size_t free = 0;    // bytes the device has free beyond wick's (GPU: the runtime's free
                      // memory; CPU: MemAvailable of /proc/meminfo, 0 when unknown)
};

// Devices present in this process: the CPU first, then each GPU of each loaded backend.
std::vector<Device> available_devices();
// Throws InvalidArgument naming the device and why it is absent.
DeviceInfo device_info(Device device);
MemoryStats memory_stats(Device device);
// Waits until the work queued on `device` is done; reports a bad index an earlier
// GPU op found (IndexOutOfRange). A no-op on the CPU.
void synchronize(Device device);
// The vendor runtime's stream (cudaStream_t / hipStream_t) on which wick queues the
// work of a GPU device, for interop with other GPU libraries (the `stream` of
// DLPack's __dlpack__): work they queue on it runs in order with wick's. Null for
// the CPU.
void* native_stream(Device device);

// Work recorded once on a GPU and queued again on demand (a CUDA / HIP graph): what
// a stretch of eager code queues, at a fraction of its host time per replay.
// Graph::capture runs `record` with the device's queue recording instead of running;
// replay() queues the recorded kernels again with the same arguments and buffers. So
// inputs that change between replays are written into tensors the work reads, and
// tensors made while recording are the graph's: their memory stays reserved until the
// Graph goes (a replay rewrites them, never another tensor), and a result read after a
// replay is read from them. Tensors the work reads that were made before recording must
// outlive the Graph. Inside `record` nothing may wait for the device or read its memory
// (to_vector, synchronize...): that fails the capture with Error(GpuRuntime), the
// device usable as before. The CPU has no queue: InvalidArgument.
class DeviceGraph;
class Graph {
 public:
  Graph() = default;
  static Graph capture(Device device, const std::function<void()>& record);
  void replay() const;  // InvalidArgument for an empty Graph
  bool defined() const { return g_ != nullptr; }

 private:
  std::shared_ptr<DeviceGraph> g_;
};

// A GPU backend library and whether it loaded (for `wick devices`).
struct BackendStatus {
  std::string name;  // "cuda", "rocm"
  bool loaded = false;
  std::string detail;  // library path, or why not
};
std::vector<BackendStatus> gpu_backend_status();

}  // namespace wick
