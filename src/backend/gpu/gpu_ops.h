// Host helpers shared by the GPU entry points of reduce, sort, indexing, matmul,
// conv and nn: contiguous staging of strided operands, kernel names, and the
// row-major GEMM every matmul and im2col convolution goes through (cuBLAS where
// the build has it, else the portable MATMUL kernel).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "backend/gpu/gpu_storage.h"

namespace wick::gpu {

// The elements of `s` seen through `l` as one contiguous run: s's own memory when
// `l` is contiguous, else a fresh copy held in `keep`.
const void* contiguous_data(const GpuStorage& s, const Layout& l, std::shared_ptr<GpuStorage>& keep);

// Records a small op to run deferred (batch_ops.h): `op` with its operands' dtypes
// `in` and `out`, each operand holding at most `elems` elements. True when deferred
// (the caller launches nothing); false when the op does not qualify (a dtype that is
// not a float dtype, too many elements, a stream being recorded): the caller then
// launches the op's own kernel. The caller has checked that every operand is
// contiguous.
bool defer_small(GpuDevice& dev, batch::Op op, DType in, DType out, size_t elems);

// The device's wave size: the runtime's warpSize (32 on NVIDIA and RDNA, 64 on
// CDNA), which every launch plan involving waves takes (launch_plan.h).
unsigned wave_size(const GpuDevice& dev);

// One strided-batched row-major GEMM: for p < batch,
//   C_p (m x n, ldc) = op(A_p) (m x k) * op(B_p) (k x n)
// with A_p = a + p*stride_a (elements), op(A) = A^T when trans_a (A then stored
// k x m with leading dim lda), likewise B. a/b have dtype `dt` (a float dtype); c
// has dtype `c_dt` (dt, or F32 for f16/bf16 inputs). Accumulation in f32 (f64 for
// f64). Uses cuBLAS unless the build has none or use_portable_gemm(); f32 uses
// TF32 tensor cores only when allowed (allow_tf32()).
void gemm(GpuDevice& dev, DType dt, DType c_dt, bool trans_a, bool trans_b, size_t m, size_t n, size_t k,
          const void* a, size_t lda, size_t stride_a, const void* b, size_t ldb, size_t stride_b, void* c,
          size_t ldc, size_t stride_c, size_t batch);

// Whether f32 GEMMs and convolutions may use TF32 (options().allow_tf32, read at each
// call; off by default).
bool allow_tf32();
// Whether GEMMs go to the portable MATMUL kernel, and convolutions to im2col + that
// kernel (options().portable_gemm, or no vendor BLAS).
bool use_portable_gemm();

}  // namespace wick::gpu
