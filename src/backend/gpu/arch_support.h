// Whether the kernel images a GPU module embeds can serve a device, and why not when
// they cannot: plain C++ (no vendor runtime), so tests/test_gpu_plans.cpp checks the
// messages on the CPU. The backend skips such a device and says why
// (wick_gpu_backend_create's why_not), which `wick devices` shows through
// gpu_backend_status().
#pragma once

#include <string>
#include <string_view>

namespace wick::gpu {

// The gfx target of a HIP device's gcnArchName: "gfx90a" of "gfx90a:sramecc+:xnack-"
// (target features follow a ':'; the images are built for any setting of them).
inline std::string_view rocm_target(std::string_view gcn_arch_name) {
  return gcn_arch_name.substr(0, gcn_arch_name.find(':'));
}

// ROCm: a code object bundle serves exactly the gfx targets it holds (`built`, the
// build's WICK_ROCM_ARCHS list: "gfx906;gfx90a"). Empty when `target` is one of them;
// else the reason, naming the missing target and how to build for it.
inline std::string rocm_missing_target(std::string_view target, std::string_view built) {
  for (std::string_view rest = built; !rest.empty();) {
    const size_t semi = rest.find(';');
    if (rest.substr(0, semi) == target) return {};
    rest = semi == std::string_view::npos ? std::string_view() : rest.substr(semi + 1);
  }
  const std::string t(target);
  return "no code object for " + t + " (built for " + std::string(built) + "); build libwick-rocm.so with " +
         t + " in WICK_ROCM_ARCHS (README: Building for another AMD target)";
}

// CUDA: SASS for sm_XY runs on sm_XZ (Z >= Y) and the PTX of the highest arch
// JIT-compiles for newer GPUs, so a device of compute capability `cc` (major * 10 +
// minor) runs the images when cc is at least the lowest of `built` ("80;90"). Empty
// then; else the reason, naming the device's arch and how to build for it.
inline std::string cuda_missing_target(int cc, std::string_view built) {
  int lowest = 0;
  bool any = false;
  for (std::string_view rest = built; !rest.empty();) {
    const size_t semi = rest.find(';');
    const std::string_view a = rest.substr(0, semi);
    int v = 0;
    for (char c : a) v = c >= '0' && c <= '9' ? v * 10 + (c - '0') : v;
    if (!a.empty() && (!any || v < lowest)) lowest = v, any = true;
    rest = semi == std::string_view::npos ? std::string_view() : rest.substr(semi + 1);
  }
  if (any && cc >= lowest) return {};
  const std::string sm = std::to_string(cc);
  return "no code object for sm_" + sm + " (built for sm " + std::string(built) +
         "); build libwick-cuda.so with " + sm + " in WICK_CUDA_ARCHS";
}

}  // namespace wick::gpu
