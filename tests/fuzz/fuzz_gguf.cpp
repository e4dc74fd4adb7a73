// libFuzzer target: the GGUF parser, then everything a loader does with a file that
// parsed (metadata printing, dequantizing each tensor wick implements). Any wick::Error
// is an expected rejection; anything else (a crash, a sanitizer report, another
// exception type, a timeout) is a bug. Built and run by scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>

#include "wick/io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    wick::GgufFile f = wick::GgufFile::parse(data, size, "fuzz.gguf");
    for (const auto& [k, v] : f.metadata()) (void)v.str();
    for (const auto& ti : f.tensors()) {
      if (ti.nbytes > (1u << 20)) continue;  // keep each run fast
      if (wick::ggml_type_known(ti.type)) (void)f.qtensor(ti.name).dequantize();
    }
  } catch (const wick::Error&) {
  }
  return 0;
}
