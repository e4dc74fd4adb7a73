// CPU matmul: batched row-major GEMM over OpenBLAS. f32 calls sgemm, f64 dgemm;
// f16/bf16 are converted to f32, multiplied by sgemm and rounded back once.
//
// Operands: the last two dims of each operand are handed to BLAS in place when a
// transpose flag and a leading dim can describe them (as Candle's matmul does,
// generalized to any leading dim >= the row length); any other stride pattern
// (a stride-0 row, overlapping rows, two non-unit strides) is packed into a
// contiguous buffer first. Batch offsets come from the batch dims' own strides,
// so uniform, non-uniform and stride-0 (broadcast) batches all work; a packed
// broadcast operand is packed once and reused. One GEMM per batch, in order;
// OpenBLAS threads each GEMM.
#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <type_traits>
#include <vector>

#include "backend/common/operand_views.h"
#include "backend/cpu/cpu_storage.h"
#include "backend/cpu/gemm.h"
#include "backend/cpu/strided.h"
#include "base/dispatch.h"

namespace wick {
namespace cpu {
namespace {

blasint blas_int(size_t v) {
  if (v > size_t(INT_MAX)) {
    throw_error(ErrorKind::InvalidArgument, "matmul",
                fmt::format("GEMM dimension {} exceeds the BLAS int range", v));
  }
  return blasint(v);
}

// sgemm / dgemm by element type; k == 0 gives C = beta * C (BLAS would reject lda = 0).
template <class C>
void gemm_impl(bool trans_a, bool trans_b, size_t m, size_t n, size_t k, const C* a, size_t lda, const C* b,
               size_t ldb, C* c, size_t ldc, C beta) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (size_t i = 0; i < m; ++i)
      for (size_t j = 0; j < n; ++j) c[i * ldc + j] = beta == C(0) ? C(0) : beta * c[i * ldc + j];
    return;
  }
  // OpenBLAS keeps its own thread count: follow options().cpu_threads.
  static std::atomic<int> blas_threads{0};
  if (const int want = max_threads(); blas_threads.exchange(want) != want) openblas_set_num_threads(want);
  auto ta = trans_a ? CblasTrans : CblasNoTrans, tb = trans_b ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<C, float>) {
    cblas_sgemm(CblasRowMajor, ta, tb, blas_int(m), blas_int(n), blas_int(k), 1.0f, a, blas_int(lda), b,
                blas_int(ldb), beta, c, blas_int(ldc));
  } else {
    cblas_dgemm(CblasRowMajor, ta, tb, blas_int(m), blas_int(n), blas_int(k), 1.0, a, blas_int(lda), b,
                blas_int(ldb), beta, c, blas_int(ldc));
  }
}

}  // namespace

void gemm(bool trans_a, bool trans_b, size_t m, size_t n, size_t k, const float* a, size_t lda,
          const float* b, size_t ldb, float* c, size_t ldc, float beta) {
  gemm_impl(trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc, beta);
}

void gemm(bool trans_a, bool trans_b, size_t m, size_t n, size_t k, const double* a, size_t lda,
          const double* b, size_t ldb, double* c, size_t ldc, double beta) {
  gemm_impl(trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc, beta);
}

}  // namespace cpu

namespace {

// One GEMM operand: the batch matrices of a layout (batch dims..., rows, cols) as
// pointers BLAS can read, in compute type C. Packs (and converts) when needed.
template <class T, class C>
class GemmOperand {
 public:
  GemmOperand(const T* data, const Layout& l, size_t rows, size_t cols)
      : data_(data), rows_(rows), cols_(cols) {
    size_t r = l.rank();
    s_row_ = l.strides()[r - 2];
    s_col_ = l.strides()[r - 1];
    std::vector<size_t> bd(l.dims().begin(), l.dims().end() - 2),
        bs(l.strides().begin(), l.strides().end() - 2);
    batch_l_ = Layout(std::move(bd), std::move(bs), l.start_offset());
    view_ = std::is_same_v<T, C> ? blas_view(rows, cols, s_row_, s_col_) : BlasView{};
  }

  // Batch `i` as (pointer, transposed, leading dim).
  struct Mat {
    const C* ptr;
    bool trans;
    size_t ld;
  };
  Mat get(size_t i) {
    size_t off = cpu::strided_offset(i, batch_l_);
    if constexpr (std::is_same_v<T, C>) {
      if (view_.ok) return {data_ + off, view_.trans, view_.ld};
    }
    if (off != packed_offset_ || buf_.empty()) pack(off);
    return {buf_.data(), false, std::max<size_t>(cols_, 1)};
  }

 private:
  void pack(size_t off) {
    buf_.resize(std::max<size_t>(rows_ * cols_, 1));
    cpu::parallel_for(rows_, (size_t(1) << 14) / std::max<size_t>(cols_, 1) + 1, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) {
        const T* src = data_ + off + i * s_row_;
        C* dst = buf_.data() + i * cols_;
        for (size_t j = 0; j < cols_; ++j) dst[j] = static_cast<C>(src[j * s_col_]);
      }
    });
    packed_offset_ = off;
  }

  const T* data_;
  size_t rows_, cols_, s_row_ = 0, s_col_ = 0;
  Layout batch_l_;
  BlasView view_;
  std::vector<C> buf_;
  size_t packed_offset_ = 0;
};

}  // namespace

StoragePtr CpuStorage::matmul(const BackendStorage& rhs_storage, const MatmulDims& d, const Layout& lhs_l,
                              const Layout& rhs_l) const {
  const auto& rhs = CpuStorage::of(rhs_storage);
  size_t mn = d.m * d.n;
  auto out = cpu_alloc(d.b * mn, dtype_);
  if (d.b * mn == 0) return out;
  dispatch_dtype<kMatmulDTypes>(dtype_, "matmul", [&]<class T>() {
    using C = compute_t<T>;
    GemmOperand<T, C> a(data<T>(), lhs_l, d.m, d.k), b(rhs.data<T>(), rhs_l, d.k, d.n);
    std::vector<C> c_buf(std::is_same_v<T, C> ? 0 : mn);
    for (size_t i = 0; i < d.b; ++i) {
      auto am = a.get(i);
      auto bm = b.get(i);
      T* dst = out->data<T>() + i * mn;
      if constexpr (std::is_same_v<T, C>) {
        cpu::gemm(am.trans, bm.trans, d.m, d.n, d.k, am.ptr, am.ld, bm.ptr, bm.ld, dst, d.n);
      } else {
        cpu::gemm(am.trans, bm.trans, d.m, d.n, d.k, am.ptr, am.ld, bm.ptr, bm.ld, c_buf.data(), d.n);
        cpu::parallel_for(mn, size_t(1) << 15, [&](size_t s, size_t e) {
          for (size_t j = s; j < e; ++j) dst[j] = T(c_buf[j]);
        });
      }
    }
  });
  return out;
}

}  // namespace wick
