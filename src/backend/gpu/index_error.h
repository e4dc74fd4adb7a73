// The record an indexing kernel (or a kernel that reads a position from device memory)
// writes when it meets an index out of range (the first one wins), read by the host
// after the stream synchronizes. It lives in mapped (zero-copy) host memory, so the
// check costs no transfer. Plain C types: read by the host compiler, nvcc and hipcc
// alike.
#pragma once

#include <stdint.h>
#if defined(__CUDACC__) || defined(__HIPCC__)
#include "vendor.h"  // the device side: atomics, fences
#endif

namespace wick::gpu {

struct IndexErrorRecord {
  uint32_t flag;      // 0: no error; set to 1 once by the first failing thread
  uint32_t op;        // IndexOp of the failing launch
  int64_t index;      // the offending index value
  uint64_t dim_size;  // the size of the indexed dim
  uint64_t dim;       // the indexed dim
};

// Op codes the kernels report (names in indexing.cpp).
// kKvPosition: a KV-cache write position read from device memory (the last row it
// writes); kKvLength: an attention's key count read from device memory.
enum IndexOp : uint32_t {
  kIndexSelect,
  kGather,
  kScatter,
  kScatterAdd,
  kIndexAdd,
  kKvPosition,
  kKvLength,
  kNumIndexOps
};

#if defined(__CUDACC__) || defined(__HIPCC__)
// Records a bad index (the first report wins; the host raises it at the next
// synchronization).
__device__ __forceinline__ void report_index_error(IndexErrorRecord* err, uint32_t op, int64_t index,
                                                   uint64_t dim_size, uint64_t dim) {
  if (atomicCAS(&err->flag, 0u, 1u) == 0u) {
    err->op = op;
    err->index = index;
    err->dim_size = dim_size;
    err->dim = dim;
    __threadfence_system();
  }
}
#endif

}  // namespace wick::gpu
