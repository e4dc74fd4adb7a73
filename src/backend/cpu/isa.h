// The x86 instruction sets the CPU backend's hand-written kernels are compiled for,
// chosen at run time: a kernel of a level runs only where the CPU and the OS support
// it (CPUID and XGETBV), so one binary serves the dev VM, CI and the GPU machine.
#pragma once

#include <cstdint>

namespace wick::cpu {

// Ordered: each level includes the ones below it.
//   Avx2:   AVX2, FMA, F16C.
//   Avx512: AVX-512 F/BW/DQ/VL and VNNI (vpdpbusd), plus Avx2.
enum class Isa : uint8_t { Scalar, Avx2, Avx512 };

// The highest level this CPU supports, capped by set_max_isa().
Isa isa();
// The highest level this CPU supports (ignores the cap).
Isa detected_isa();
// Caps isa() at `cap` (tests run every level the CPU has through this); returns the
// previous cap.
Isa set_max_isa(Isa cap);

const char* isa_name(Isa i);

}  // namespace wick::cpu

// Target attributes of the functions of a level (x86-64 only). Every function that
// uses a level's intrinsics carries its attribute, and runs only where isa() allows.
#if defined(__x86_64__)
// GCC 12 flags its own AVX-512 intrinsics (their _mm512_undefined_* operands) as maybe
// uninitialized when they are inlined: a false positive, silenced for those headers.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif
#define WICK_X86 1
#define WICK_AVX2 __attribute__((target("avx2,fma,f16c")))
#define WICK_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vnni,avx2,fma,f16c")))
#else
#define WICK_X86 0
#endif
