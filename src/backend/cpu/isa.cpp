// CPU feature detection for the kernels' run-time dispatch (isa.h).
#include "backend/cpu/isa.h"

#include <atomic>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace wick::cpu {

namespace {

#if defined(__x86_64__) || defined(__i386__)
// XCR0: the register state the OS saves on a context switch.
uint64_t xgetbv0() {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t(hi) << 32) | lo;
}

Isa detect() {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return Isa::Scalar;
  const bool fma = c & (1u << 12), osxsave = c & (1u << 27), avx = c & (1u << 28), f16c = c & (1u << 29);
  if (!osxsave || !avx) return Isa::Scalar;
  const uint64_t xcr0 = xgetbv0();
  if ((xcr0 & 0x6) != 0x6) return Isa::Scalar;  // XMM and YMM state
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return Isa::Scalar;
  const bool avx2 = b & (1u << 5);
  if (!(avx2 && fma && f16c)) return Isa::Scalar;
  const bool f = b & (1u << 16), dq = b & (1u << 17), bw = b & (1u << 30), vl = b & (1u << 31);
  const bool vnni = c & (1u << 11);
  const bool zmm_state = (xcr0 & 0xE0) == 0xE0;  // opmask, upper ZMM0-15, ZMM16-31
  return f && dq && bw && vl && vnni && zmm_state ? Isa::Avx512 : Isa::Avx2;
}
#else
Isa detect() { return Isa::Scalar; }
#endif

std::atomic<Isa> g_cap{Isa::Avx512};

}  // namespace

Isa detected_isa() {
  static const Isa d = detect();
  return d;
}

Isa isa() {
  const Isa d = detected_isa(), cap = g_cap.load(std::memory_order_relaxed);
  return cap < d ? cap : d;
}

Isa set_max_isa(Isa cap) { return g_cap.exchange(cap); }

const char* isa_name(Isa i) {
  switch (i) {
    case Isa::Avx2:
      return "avx2";
    case Isa::Avx512:
      return "avx512";
    default:
      return "scalar";
  }
}

}  // namespace wick::cpu
