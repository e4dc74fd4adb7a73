// MATMUL family: the portable tiled GEMM (ROCm without rocBLAS; CUDA with
// options().portable_gemm). gemm_{in}_{out}: for every batch p,
//   C_p[i, j] = sum_kk A_p[i, kk] * B_p[kk, j]
// with A_p[i, kk] = a[p*sa_b + i*sa_r + kk*sa_c] (any strides: transposes and
// broadcast batches need no copy), likewise B, and C row-major with leading dim
// ldc. Accumulation in f32 (f64 for f64); the result is rounded once.
//
// Tiles: a 256-thread block computes a 64 x 64 tile of C, 4 x 4 per thread (rows
// ty + 16*r, cols tx + 16*c: conflict-free shared reads), stepping k by 16
// through shared memory. Operand tiles are read along whichever of their two dims
// has unit stride, so both plain and transposed operands load coalesced. The
// tile shape is independent of the wave size.
#include "common.cuh"

namespace wk {

// The tile plan the host launches with (launch_plan.h).
constexpr int kBM = plan::gemm::kTileM, kBN = plan::gemm::kTileN, kBK = plan::gemm::kTileK,
              kThreads = plan::gemm::kThreads;
// The thread grid and the per-thread sub-tile below are written for this plan.
static_assert(kThreads == 256 && kBM == 4 * 16 && kBN == 4 * 16, "gemm_tiled: 16 x 16 threads of 4 x 4");

// Explicit fused multiply-add: the build disables contraction (-fmad=false) for
// bit parity of elementwise ops; a GEMM's sum order differs from the CPU's anyway.
__device__ __forceinline__ float fma_c(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double fma_c(double a, double b, double c) { return fma(a, b, c); }

template <class In, class Out>
__device__ void gemm_tiled(size_t m, size_t n, size_t k, const In* a, size_t sa_b, size_t sa_r, size_t sa_c,
                           const In* b, size_t sb_b, size_t sb_r, size_t sb_c, Out* c, size_t sc_b,
                           size_t ldc, size_t batch) {
  using C = compute_t<In>;
  __shared__ C as[kBK][kBM + 1];
  __shared__ C bs[kBK][kBN + 1];
  const int tid = int(threadIdx.x), tx = tid % 16, ty = tid / 16;
  const size_t i0 = size_t(blockIdx.y) * kBM, j0 = size_t(blockIdx.x) * kBN;
  for (size_t p = blockIdx.z; p < batch; p += gridDim.z) {
    const In* ap = a + p * sa_b;
    const In* bp = b + p * sb_b;
    C acc[4][4];
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[r][q] = C(0);
    for (size_t k0 = 0; k0 < k; k0 += kBK) {
      // A tile: kBM x kBK, 4 elements per thread.
#pragma unroll
      for (int q = 0; q < (kBM * kBK) / kThreads; ++q) {
        const int e = tid + q * kThreads;
        int ii, kk;
        if (sa_c == 1) {
          kk = e % kBK, ii = e / kBK;
        } else {
          ii = e % kBM, kk = e / kBM;
        }
        const size_t gi = i0 + ii, gk = k0 + kk;
        as[kk][ii] = gi < m && gk < k ? to_c(ap[gi * sa_r + gk * sa_c]) : C(0);
      }
#pragma unroll
      for (int q = 0; q < (kBN * kBK) / kThreads; ++q) {
        const int e = tid + q * kThreads;
        int jj, kk;
        if (sb_c == 1) {
          jj = e % kBN, kk = e / kBN;
        } else {
          kk = e % kBK, jj = e / kBK;
        }
        const size_t gj = j0 + jj, gk = k0 + kk;
        bs[kk][jj] = gj < n && gk < k ? to_c(bp[gk * sb_r + gj * sb_c]) : C(0);
      }
      __syncthreads();
#pragma unroll
      for (int kk = 0; kk < kBK; ++kk) {
        C av[4], bv[4];
#pragma unroll
        for (int r = 0; r < 4; ++r) av[r] = as[kk][ty + 16 * r];
#pragma unroll
        for (int q = 0; q < 4; ++q) bv[q] = bs[kk][tx + 16 * q];
#pragma unroll
        for (int r = 0; r < 4; ++r)
#pragma unroll
          for (int q = 0; q < 4; ++q) acc[r][q] = fma_c(av[r], bv[q], acc[r][q]);
      }
      __syncthreads();
    }
    Out* cp = c + p * sc_b;
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const size_t gi = i0 + ty + 16 * r;
      if (gi >= m) continue;
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const size_t gj = j0 + tx + 16 * q;
        if (gj < n) cp[gi * ldc + gj] = from_c<Out>(compute_t<Out>(acc[r][q]));
      }
    }
  }
}

}  // namespace wk

#define GEMM_OP(IN, ISFX, OUT, OSFX)                                                                        \
  WICK_KERNEL gemm_##ISFX##_##OSFX(size_t m, size_t n, size_t k, const IN* a, size_t sa_b, size_t sa_r,     \
                                   size_t sa_c, const IN* b, size_t sb_b, size_t sb_r, size_t sb_c, OUT* c, \
                                   size_t sc_b, size_t ldc, size_t batch) {                                 \
    wk::gemm_tiled<IN, OUT>(m, n, k, a, sa_b, sa_r, sa_c, b, sb_b, sb_r, sb_c, c, sc_b, ldc, batch);        \
  }

GEMM_OP(wk::f16s, f16, wk::f16s, f16)
GEMM_OP(wk::bf16s, bf16, wk::bf16s, bf16)
GEMM_OP(float, f32, float, f32)
GEMM_OP(double, f64, double, f64)
GEMM_OP(wk::f16s, f16, float, f32)
GEMM_OP(wk::bf16s, bf16, float, f32)
