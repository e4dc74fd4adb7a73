// `wick devices`: what this machine offers wick — CPU cores and SIMD level, the BLAS
// in use, each GPU backend (loaded, or why not) and each GPU with its memory use.
#include <dlfcn.h>
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "commands.h"
#include "wick/device.h"

namespace wick::cli {

namespace {

// The widest vector extension this CPU runs (GCC/Clang's cpuid probe).
std::string simd_level() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return "avx512f";
  if (__builtin_cpu_supports("avx2")) return "avx2";
  if (__builtin_cpu_supports("sse4.2")) return "sse4.2";
  return "baseline x86";
#else
  return "not probed on this architecture";
#endif
}

// OpenBLAS's build description, looked up in the running process (libwick links
// OpenBLAS; the CLI does not link it directly).
std::string blas_config() {
  using Fn = char* (*)();
  auto fn = reinterpret_cast<Fn>(::dlsym(RTLD_DEFAULT, "openblas_get_config"));
  if (!fn) return "unknown (openblas_get_config not found in the process)";
  const char* s = fn();
  return s ? std::string(s) : "OpenBLAS (no config string)";
}

std::string gib(size_t bytes) { return fmt::format("{:.2f} GiB", double(bytes) / double(1ull << 30)); }
std::string mib(size_t bytes) { return fmt::format("{:.1f} MiB", double(bytes) / double(1ull << 20)); }

}  // namespace

int cmd_devices(bool json) {
  nlohmann::json j;
  unsigned cores = std::thread::hardware_concurrency();
  std::string simd = simd_level(), blas = blas_config(), cpu_name = device_info(Device::cpu()).name;
  j["cpu"] = {{"cores", cores}, {"backend", cpu_name}, {"simd", simd}, {"blas", blas}};
  j["gpu_backends"] = nlohmann::json::array();
  for (const auto& b : gpu_backend_status())
    j["gpu_backends"].push_back({{"name", b.name}, {"loaded", b.loaded}, {"detail", b.detail}});
  j["gpus"] = nlohmann::json::array();
  for (const Device& d : available_devices()) {
    if (d.is_cpu()) continue;
    const DeviceInfo info = device_info(d);
    const MemoryStats m = memory_stats(d);
    j["gpus"].push_back({{"device", d.str()},
                         {"backend", info.backend},
                         {"name", info.name},
                         {"arch", info.arch},
                         {"total_memory", info.total_memory},
                         {"wave_size", info.wave_size},
                         {"multiprocessors", info.multiprocessors},
                         {"memory", {{"in_use", m.in_use}, {"cached", m.cached}, {"peak", m.peak}}}});
  }
  if (json) {
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print("CPU     {} cores, {}\n", cores, cpu_name);
  fmt::print("SIMD    {}\n", simd);
  fmt::print("BLAS    {}\n", blas);
  fmt::print("GPU backends\n");
  for (const auto& b : j["gpu_backends"])
    fmt::print("  {:<5} {}: {}\n", b["name"].get<std::string>(),
               b["loaded"].get<bool>() ? "loaded" : "not loaded", b["detail"].get<std::string>());
  if (j["gpus"].empty()) {
    fmt::print("GPUs    none\n");
    return 0;
  }
  fmt::print("GPUs\n");
  for (const auto& g : j["gpus"]) {
    fmt::print("  {:<6} {} ({}) {}, {} memory, wave {}, {} multiprocessors\n", g["device"].get<std::string>(),
               g["name"].get<std::string>(), g["backend"].get<std::string>(), g["arch"].get<std::string>(),
               gib(g["total_memory"].get<size_t>()), g["wave_size"].get<int>(),
               g["multiprocessors"].get<int>());
    fmt::print("         memory in use {}, cached {}, peak {}\n", mib(g["memory"]["in_use"].get<size_t>()),
               mib(g["memory"]["cached"].get<size_t>()), mib(g["memory"]["peak"].get<size_t>()));
  }
  return 0;
}

}  // namespace wick::cli
