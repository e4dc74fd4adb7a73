// libFuzzer target: the safetensors header parser and tensor loading. Any
// wick::Error is an expected rejection; anything else is a bug. See scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>

#include "wick/io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    wick::SafetensorsFile f = wick::SafetensorsFile::parse(data, size, "fuzz.safetensors");
    for (const auto& ti : f.tensors()) {
      if (ti.loadable && ti.end - ti.begin <= (1u << 20)) (void)f.tensor(ti.name);
    }
  } catch (const wick::Error&) {
  }
  return 0;
}
