// Asynchronous copies into shared memory and the inline PTX that goes with them,
// the device-side companion of vendor.h (the only other file that names CUDA or
// HIP specifics). Each has a fallback where the hardware lacks it, so callers are
// written once:
//   wick_copy16_async / wick_async_commit / wick_async_wait<N>: 16-byte copies
//       global -> shared in commit groups (cp.async, sm_80+); elsewhere (AMD, older
//       NVIDIA) a plain load and store, done at once, and no-op groups.
//   WICK_BULK_COPY (sm_90+ only, no fallback: callers test the macro): 1-D bulk
//       copies (cp.async.bulk, the tensor memory accelerator) completing on
//       mbarriers, and programmatic dependent launch (griddepcontrol).
#pragma once

#include <stdint.h>

#include "vendor.h"

#if !defined(WICK_VENDOR_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define WICK_ASYNC_COPY 1
#endif

// 16 bytes from src (global) to dst (shared), both 16-byte aligned.
__device__ __forceinline__ void wick_copy16_async(uint4* dst, const uint4* src) {
#if defined(WICK_ASYNC_COPY)
  const unsigned d = unsigned(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src) : "memory");
#else
  *dst = *src;
#endif
}
// Closes this lane's group of copies issued since the last commit.
__device__ __forceinline__ void wick_async_commit() {
#if defined(WICK_ASYNC_COPY)
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
// This lane's copies of all but the N most recent groups have landed.
template <int N>
__device__ __forceinline__ void wick_async_wait() {
#if defined(WICK_ASYNC_COPY)
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

#if !defined(WICK_VENDOR_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define WICK_BULK_COPY 1
// The shared-memory address of a generic pointer to shared memory.
__device__ __forceinline__ unsigned wick_smem_u32(const void* p) {
  return unsigned(__cvta_generic_to_shared(p));
}
// A barrier expecting one arrival a phase.
__device__ __forceinline__ void wick_mbar_init(uint64_t* b) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(wick_smem_u32(b)) : "memory");
}
// Makes the barriers' initialisation visible to the bulk copies.
__device__ __forceinline__ void wick_mbar_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// Orders this thread's (and, after a barrier, its team's) shared-memory accesses
// before later bulk copies into shared memory.
__device__ __forceinline__ void wick_fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// `bytes` (a multiple of 16; both addresses 16-byte aligned) from src to dst; the
// barrier completes its phase when they have landed.
__device__ __forceinline__ void wick_bulk_copy(void* dst, const void* src, unsigned bytes, uint64_t* b) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(wick_smem_u32(b)), "r"(bytes)
               : "memory");
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
          wick_smem_u32(dst)),
      "l"(src), "r"(bytes), "r"(wick_smem_u32(b))
      : "memory");
}
// Waits until the barrier's phase of parity `parity` completed.
__device__ __forceinline__ void wick_mbar_wait(uint64_t* b, unsigned parity) {
  asm volatile(
      "{\n.reg .pred p;\nWICK_MBAR_WAIT:\nmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@p bra "
      "WICK_MBAR_DONE;\nbra WICK_MBAR_WAIT;\nWICK_MBAR_DONE:\n}\n" ::"r"(wick_smem_u32(b)),
      "r"(parity)
      : "memory");
}
// Programmatic dependent launch (a kernel launched by gpuLaunchDependent): lets the
// next kernel in the stream launch, and waits until the previous one finished and its
// writes are visible.
__device__ __forceinline__ void wick_grid_launch_dependents() {
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
}
__device__ __forceinline__ void wick_grid_wait_previous() {
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
}
#endif
