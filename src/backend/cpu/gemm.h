// GEMM and mat-vec for the CPU backend, shared by matmul.cpp, conv.cpp and
// quantized.cpp: row-major C(m,n) = op(A)(m,k) * op(B)(k,n), leading dims in elements.
//   f32, bf16: oneDNN's matmul (its kernels for this CPU: AVX2, AVX-512, AVX512-BF16,
//              AMX); bf16 accumulates in f32 and rounds C once.
//   f64:       OpenBLAS's dgemm (oneDNN has no f64).
//   f16:       hand-written for AVX-512 (hgemm.cpp: oneDNN 2.6 has no f16 GEMM on CPUs),
//              f32 arithmetic, operands widened a block at a time as they are packed.
// A matrix times a vector (m == 1 or n == 1) streams the matrix once through gemv
// (gemv.cpp), in the matrix's own f32 / f16 / bf16, with hand-written AVX2 / AVX-512
// loops chosen at run time (isa.h). docs/PERFORMANCE.md has the measurements.
#pragma once

#include <cstddef>

#include "wick/dtype.h"

namespace wick::cpu {

void gemm(bool trans_a, bool trans_b, size_t m, size_t n, size_t k, const float* a, size_t lda,
          const float* b, size_t ldb, float* c, size_t ldc);
void gemm(bool trans_a, bool trans_b, size_t m, size_t n, size_t k, const bf16* a, size_t lda, const bf16* b,
          size_t ldb, bf16* c, size_t ldc);
void gemm(bool trans_a, bool trans_b, size_t m, size_t n, size_t k, const double* a, size_t lda,
          const double* b, size_t ldb, double* c, size_t ldc);

// f16 operands and product, f32 arithmetic: C (m x n, row-major at ldc) = A B with
// element (i, j) of A at a[i * rsa + j * csa] and of B at b[i * rsb + j * csb] (any
// strides, 0 included). Hand-written for AVX-512 CPUs (hgemm.cpp); false (nothing
// written) elsewhere.
bool gemm_f16(size_t m, size_t n, size_t k, const f16* a, size_t rsa, size_t csa, const f16* b, size_t rsb,
              size_t csb, f16* c, size_t ldc);

// `batch` GEMMs of one shape whose operands lie a fixed stride apart (elements): C_i =
// op(A_i) * op(B_i) with A_i at a + i * stride_a (likewise B, C; a stride may be 0).
struct GemmBatch {
  size_t batch, m, n, k;
  bool trans_a;
  size_t lda, stride_a;
  bool trans_b;
  size_t ldb, stride_b, ldc, stride_c;
};

// All the batch's GEMMs through one oneDNN primitive threaded over batches and blocks;
// false (nothing written) where oneDNN has no kernel of its own for this description.
bool gemm_batched(const GemmBatch& g, const float* a, const float* b, float* c);
bool gemm_batched(const GemmBatch& g, const bf16* a, const bf16* b, bf16* c);

// The threads one gemm() of this shape runs on (a small product is not split into
// pieces smaller than a barrier's cost): callers with many small products run them in
// parallel instead, each on one thread.
int gemm_threads(size_t m, size_t n, size_t k);

// Whether gemm() has a kernel of its own for `dt` on this CPU (bf16 needs AVX-512);
// callers multiply other half-precision operands as f32.
bool gemm_native(DType dt);

// The matrix operand of a mat-vec. Rows: the `len` outputs. Dot form (axpy false):
// output i is sum_p x[p] * a[i * ld + p]; axpy form: output j is sum_p x[p] * a[p * ld + j].
template <class T>
struct GemvMatrix {
  const T* a;
  size_t ld;
  bool axpy;
};

// y[0..len) = the product of matrix `a` with x[0..k) (f32, contiguous), accumulated in
// f32; T is f32, f16 or bf16. Threads split the outputs.
template <class T>
void gemv(GemvMatrix<T> a, size_t len, size_t k, const float* x, float* y);

}  // namespace wick::cpu
