// WICK_HD marks functions both the host compiler and the device compilers (nvcc,
// hipcc) build. Headers in src/backend/common/ are read by all three.
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__)
#define WICK_HD __host__ __device__ __forceinline__
#else
#define WICK_HD inline
#endif
