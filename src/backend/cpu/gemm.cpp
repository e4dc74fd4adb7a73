// GEMM (gemm.h): f32 and bf16 through oneDNN's matmul primitive, f64 through
// OpenBLAS's dgemm. docs/PERFORMANCE.md (Choices measured) has why oneDNN for f32.
#include "backend/cpu/gemm.h"

#include <cblas.h>
#include <fmt/format.h>

#include <atomic>
#include <climits>
#include <type_traits>

#include "backend/cpu/onednn.h"
#include "backend/cpu/strided.h"
#include "wick/error.h"

namespace wick::cpu {

namespace {

using dnnl::memory;

// Multiply-adds per thread, at least (2^20: tens of microseconds of work), so a small
// product is not split into pieces smaller than a barrier.
constexpr double kMacsPerThread = double(1 << 20);

// (rows, cols) row-major at ld, or the storage of its transpose.
memory::desc mat_desc(memory::data_type t, size_t rows, size_t cols, bool trans, size_t ld) {
  const auto r = memory::dim(rows), c = memory::dim(cols), l = memory::dim(ld);
  return trans ? memory::desc({r, c}, t, {1, l}) : memory::desc({r, c}, t, {l, 1});
}

// `batch` matrices (rows, cols) row-major at ld, `stride` elements apart (a 3-D
// description; one batch: 2-D).
memory::desc batch_desc(memory::data_type t, size_t batch, size_t rows, size_t cols, bool trans, size_t ld,
                        size_t stride) {
  if (batch == 1) return mat_desc(t, rows, cols, trans, ld);
  const auto b = memory::dim(batch), r = memory::dim(rows), c = memory::dim(cols), l = memory::dim(ld),
             s = memory::dim(stride);
  return trans ? memory::desc({b, r, c}, t, {s, 1, l}) : memory::desc({b, r, c}, t, {s, l, 1});
}

std::shared_ptr<const onednn::Primitive> matmul_primitive(DType dt, const GemmBatch& g) {
  onednn::Key key("matmul");
  for (size_t v : {size_t(dt), g.batch, g.m, g.n, g.k, size_t(g.trans_a), g.lda, g.stride_a,
                   size_t(g.trans_b), g.ldb, g.stride_b, g.ldc, g.stride_c})
    key.add(int64_t(v));
  return onednn::primitive(
      key.str(),
      [&](const dnnl::primitive_attr& attr) {
        const auto t = onednn::data_type(dt);
        const memory::desc a = batch_desc(t, g.batch, g.m, g.k, g.trans_a, g.lda, g.stride_a),
                           b = batch_desc(t, g.batch, g.k, g.n, g.trans_b, g.ldb, g.stride_b),
                           c = batch_desc(t, g.batch, g.m, g.n, false, g.ldc, g.stride_c);
        return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, c), attr, onednn::engine());
      },
      onednn::threads_for(double(g.batch) * double(g.m) * double(g.n) * double(g.k), kMacsPerThread),
      "matmul");
}

std::shared_ptr<const onednn::Primitive> matmul_primitive(DType dt, bool trans_a, bool trans_b, size_t m,
                                                          size_t n, size_t k, size_t lda, size_t ldb,
                                                          size_t ldc) {
  return matmul_primitive(dt, GemmBatch{1, m, n, k, trans_a, lda, 0, trans_b, ldb, 0, ldc, 0});
}

// C = A B through the matmul primitive p (A, B and C in p's layouts).
template <class T>
void run_matmul(const onednn::Primitive& p, const T* a, const T* b, T* c) {
  auto& e = onednn::engine();
  onednn::execute(p,
                  {{DNNL_ARG_SRC, memory(p.src, e, const_cast<T*>(a))},
                   {DNNL_ARG_WEIGHTS, memory(p.weights, e, const_cast<T*>(b))},
                   {DNNL_ARG_DST, memory(p.dst, e, c)}},
                  "matmul");
}

template <class T>
void onednn_gemm(bool trans_a, bool trans_b, size_t m, size_t n, size_t k, const T* a, size_t lda, const T* b,
                 size_t ldb, T* c, size_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {  // oneDNN has no empty inner dim: C is zeros
    for (size_t i = 0; i < m; ++i)
      for (size_t j = 0; j < n; ++j) c[i * ldc + j] = T(0.0f);
    return;
  }
  const DType dt = std::is_same_v<T, float> ? DType::F32 : DType::BF16;
  auto p = matmul_primitive(dt, trans_a, trans_b, m, n, k, lda, ldb, ldc);
  if (!p) {
    throw_error(ErrorKind::UnsupportedDType, "matmul",
                fmt::format("oneDNN has no {} matmul on this CPU", dtype_name(dt)));
  }
  run_matmul(*p, a, b, c);
}

template <class T>
bool onednn_gemm_batched(const GemmBatch& g, const T* a, const T* b, T* c) {
  const DType dt = std::is_same_v<T, float> ? DType::F32 : DType::BF16;
  auto p = matmul_primitive(dt, g);
  if (!p || p->reference) return false;
  run_matmul(*p, a, b, c);
  return true;
}

blasint blas_int(size_t v) {
  if (v > size_t(INT_MAX)) {
    throw_error(ErrorKind::InvalidArgument, "matmul",
                fmt::format("GEMM dimension {} exceeds the BLAS int range", v));
  }
  return blasint(v);
}

}  // namespace

void gemm(bool trans_a, bool trans_b, size_t m, size_t n, size_t k, const float* a, size_t lda,
          const float* b, size_t ldb, float* c, size_t ldc) {
  onednn_gemm(trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc);
}

void gemm(bool trans_a, bool trans_b, size_t m, size_t n, size_t k, const bf16* a, size_t lda, const bf16* b,
          size_t ldb, bf16* c, size_t ldc) {
  onednn_gemm(trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc);
}

void gemm(bool trans_a, bool trans_b, size_t m, size_t n, size_t k, const double* a, size_t lda,
          const double* b, size_t ldb, double* c, size_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {  // BLAS rejects lda = 0
    for (size_t i = 0; i < m; ++i)
      for (size_t j = 0; j < n; ++j) c[i * ldc + j] = 0.0;
    return;
  }
  // OpenBLAS keeps its own thread count: follow options().cpu_threads.
  static std::atomic<int> blas_threads{0};
  if (const int want = max_threads(); blas_threads.exchange(want) != want) openblas_set_num_threads(want);
  cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
              blas_int(m), blas_int(n), blas_int(k), 1.0, a, blas_int(lda), b, blas_int(ldb), 0.0, c,
              blas_int(ldc));
}

bool gemm_batched(const GemmBatch& g, const float* a, const float* b, float* c) {
  return onednn_gemm_batched(g, a, b, c);
}
bool gemm_batched(const GemmBatch& g, const bf16* a, const bf16* b, bf16* c) {
  return onednn_gemm_batched(g, a, b, c);
}

int gemm_threads(size_t m, size_t n, size_t k) {
  const double t = double(m) * double(n) * double(k) / kMacsPerThread;
  const int most = max_threads();
  return t < 1 ? 1 : t >= double(most) ? most : int(t);
}

bool gemm_native(DType dt) {
  if (dt == DType::F32 || dt == DType::F64) return true;
  if (dt != DType::BF16) return false;
  // Asked once, of a square shape: without AVX-512 oneDNN has no bf16 matmul (or only
  // its reference loops), and bf16 is then multiplied as f32.
  static const bool native = [] {
    auto p = matmul_primitive(DType::BF16, false, false, 64, 64, 64, 64, 64, 64);
    return p && !p->reference;
  }();
  return native;
}

}  // namespace wick::cpu
