// Devices: the CPU and GPUs served by a loadable vendor backend (CUDA or ROCm).
#pragma once

#include <cstdint>
#include <string>

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

}  // namespace wick
