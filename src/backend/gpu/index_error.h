// The record an indexing kernel (or a kernel that reads a position from device
// memory) writes when it meets an index out of range (the
// first one wins), read by the host after the stream synchronizes. It lives in
// mapped (zero-copy) host memory, so the check costs no transfer. Plain C types:
// read by the host compiler, nvcc and hipcc alike.
#pragma once

#include <stdint.h>

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

}  // namespace wick::gpu
