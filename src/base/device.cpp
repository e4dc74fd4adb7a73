#include "wick/device.h"

#include <fmt/format.h>

#include "wick/error.h"

namespace wick {

std::string Device::str() const { return is_cpu() ? std::string("cpu") : fmt::format("gpu:{}", ordinal); }

Device Device::parse(const std::string& s) {
  if (s == "cpu") return cpu();
  if (s == "gpu" || s == "cuda" || s == "rocm") return gpu(0);
  if (s.rfind("gpu:", 0) == 0 && s.size() > 4) {
    try {
      size_t pos = 0;
      int n = std::stoi(s.substr(4), &pos);
      if (pos == s.size() - 4 && n >= 0) return gpu(n);
    } catch (const std::exception&) {
    }
  }
  throw_error(ErrorKind::InvalidArgument, "device", fmt::format("cannot parse device '{}' (cpu, gpu, gpu:N)", s));
}

}  // namespace wick
