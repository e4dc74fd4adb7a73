// WICK_HD marks functions both the host compiler and the device compilers (nvcc,
// hipcc) build. Headers in src/backend/common/ are read by all three.
#pragma once

#if defined(__HIPCC__) && !defined(__forceinline__)
// Lets common headers stand alone under hipcc (before hip_runtime.h): the same
// definition HIP's host_defines.h makes, so a later identical redefinition is fine.
#define __forceinline__ inline __attribute__((always_inline))
#endif

#if defined(__CUDACC__) || defined(__HIPCC__)
#define WICK_HD __host__ __device__ __forceinline__
#else
#define WICK_HD inline
#endif
