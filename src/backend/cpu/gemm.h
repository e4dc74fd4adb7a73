// BLAS GEMM for the CPU backend, shared by matmul.cpp and conv.cpp: a row-major
// C(m,n) = op(A)(m,k) * op(B)(k,n) + beta*C over OpenBLAS (sgemm / dgemm).
// Leading dims in elements. OpenBLAS threads each call internally.
#pragma once

#include <cstddef>

namespace wick::cpu {

void gemm(bool trans_a, bool trans_b, size_t m, size_t n, size_t k, const float* a, size_t lda,
          const float* b, size_t ldb, float* c, size_t ldc, float beta = 0.0f);
void gemm(bool trans_a, bool trans_b, size_t m, size_t n, size_t k, const double* a, size_t lda,
          const double* b, size_t ldb, double* c, size_t ldc, double beta = 0.0);

}  // namespace wick::cpu
