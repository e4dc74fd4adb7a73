// libFuzzer target: the .npy parser and the .npz (zip) reader. Any wick::Error is
// an expected rejection; anything else is a bug. See scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>

#include "wick/io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)wick::parse_npy(data, size, "fuzz.npy");
  } catch (const wick::Error&) {
  }
  try {
    (void)wick::parse_npz(data, size, "fuzz.npz");
  } catch (const wick::Error&) {
  }
  return 0;
}
