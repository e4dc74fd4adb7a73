// The process-wide device registry: the CPU backend, and GPU backends loaded at
// first use from libwick-cuda.so / libwick-rocm.so (in the folders of
// options().backend_path, else beside libwick.so). The core runs without them.
#include <dlfcn.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <mutex>

#include "backend/backend.h"
#include "wick/options.h"
#include "wick/tensor.h"

namespace wick {

namespace {

struct LoadedBackend {
  std::string name;
  bool loaded = false;
  std::string detail;
  GpuBackend* backend = nullptr;
  int first_ordinal = 0;  // wick gpu ordinal of this backend's device 0
};

struct Registry {
  std::vector<LoadedBackend> backends;
  int gpu_count = 0;
};

bool file_exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

std::vector<std::string> search_dirs() {
  std::vector<std::string> dirs;
  if (const std::string s = options().backend_path; !s.empty()) {
    size_t start = 0;
    while (start <= s.size()) {
      size_t end = s.find(':', start);
      if (end == std::string::npos) end = s.size();
      if (end > start) dirs.push_back(s.substr(start, end - start));
      start = end + 1;
    }
  }
  Dl_info info;
  if (::dladdr(reinterpret_cast<void*>(&search_dirs), &info) && info.dli_fname) {
    std::string self(info.dli_fname);
    size_t slash = self.rfind('/');
    dirs.push_back(slash == std::string::npos ? "." : self.substr(0, slash));
  }
  return dirs;
}

LoadedBackend load_one(const std::string& name) {
  LoadedBackend b;
  b.name = name;
  std::string file = fmt::format("libwick-{}.so", name);
  std::string path;
  for (const auto& d : search_dirs()) {
    if (file_exists(d + "/" + file)) {
      path = d + "/" + file;
      break;
    }
  }
  if (path.empty()) {
    b.detail = fmt::format("{} not found (not built, or not on the backend path)", file);
    return b;
  }
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = ::dlerror();
    b.detail = fmt::format("{} did not load: {}", path, e ? e : "unknown error");
    return b;
  }
  using Create = GpuBackend* (*)(std::string*);
  auto create = reinterpret_cast<Create>(::dlsym(h, "wick_gpu_backend_create"));
  if (!create) {
    b.detail = fmt::format("{} has no wick_gpu_backend_create", path);
    return b;
  }
  std::string why;
  GpuBackend* gb = nullptr;
  try {
    gb = create(&why);
  } catch (const std::exception& e) {
    why = e.what();
  }
  if (!gb) {
    b.detail = why.empty() ? "backend declined to start" : why;
    return b;
  }
  if (gb->device_count() <= 0) {
    b.detail = "no device";
    return b;
  }
  b.loaded = true;
  b.backend = gb;
  b.detail = why.empty() ? path : fmt::format("{}; skipped {}", path, why);
  return b;
}

Registry& registry() {
  static Registry r = [] {
    Registry reg;
    for (const char* name : {"cuda", "rocm"}) {
      LoadedBackend b = load_one(name);
      if (b.loaded) {
        b.first_ordinal = reg.gpu_count;
        reg.gpu_count += b.backend->device_count();
      }
      reg.backends.push_back(std::move(b));
    }
    return reg;
  }();
  return r;
}

}  // namespace

BackendDevice& backend_device(Device d) {
  if (d.is_cpu()) return cpu_backend_device();
  Registry& r = registry();
  for (auto& b : r.backends) {
    if (!b.loaded) continue;
    int local = d.ordinal - b.first_ordinal;
    if (local >= 0 && local < b.backend->device_count()) return b.backend->device(local, d.ordinal);
  }
  std::string why;
  for (const auto& b : r.backends) why += fmt::format("; {}: {}", b.name, b.loaded ? "loaded" : b.detail);
  throw_error(ErrorKind::InvalidArgument, "device",
              fmt::format("{} is not available ({} GPU(s) present{})", d.str(), r.gpu_count, why));
}

std::vector<Device> available_devices() {
  std::vector<Device> v{Device::cpu()};
  for (int i = 0; i < registry().gpu_count; ++i) v.push_back(Device::gpu(i));
  return v;
}

std::vector<BackendStatus> gpu_backend_status() {
  std::vector<BackendStatus> v;
  for (const auto& b : registry().backends) v.push_back({b.name, b.loaded, b.detail});
  return v;
}

DeviceInfo device_info(Device d) { return backend_device(d).info(); }
MemoryStats memory_stats(Device d) { return backend_device(d).memory_stats(); }
void synchronize(Device d) { backend_device(d).synchronize(); }
void* native_stream(Device d) { return backend_device(d).native_stream(); }

Graph Graph::capture(Device device, const std::function<void()>& record) {
  BackendDevice& bd = backend_device(device);
  bd.begin_capture();
  Graph g;
  try {
    record();
    g.g_ = bd.end_capture();
  } catch (...) {
    bd.abort_capture();
    throw;
  }
  return g;
}

void Graph::replay() const {
  if (!g_) throw_error(ErrorKind::InvalidArgument, "replay", "the graph is empty (nothing was captured)");
  g_->replay();
}

}  // namespace wick
