// CPU matmul: batched row-major GEMM (gemm.h). f32 and bf16 multiply in their own
// type through oneDNN (bf16 accumulates in f32), f64 through OpenBLAS, f16 through the
// hand-written f16 GEMM on AVX-512 CPUs (hgemm.cpp, f32 arithmetic); f16 elsewhere,
// and bf16 on a CPU where oneDNN has no bf16 kernel, are converted to f32 when packed
// and rounded back once. A matrix times a vector (m == 1 or n == 1) in f32/f16/bf16 reads
// the matrix in place, in its own type, through gemv.
//
// Operands: the last two dims of each operand are handed to the GEMM in place when a
// transpose flag and a leading dim can describe them (as Candle's matmul does,
// generalized to any leading dim >= the row length); any other stride pattern
// (a stride-0 row, overlapping rows, two non-unit strides) is packed into a
// contiguous buffer first. Batch offsets come from the batch dims' own strides,
// so uniform, non-uniform and stride-0 (broadcast) batches all work; a packed
// broadcast operand is packed once and reused. One GEMM per batch: a product large
// enough threads itself (oneDNN), and small products read in place run side by side
// on wick's pool, one thread each.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "backend/common/operand_views.h"
#include "backend/cpu/cpu_storage.h"
#include "backend/cpu/gemm.h"
#include "backend/cpu/isa.h"
#include "backend/cpu/onednn.h"
#include "backend/cpu/simd.h"
#include "backend/cpu/strided.h"
#include "base/dispatch.h"

namespace wick {

namespace {

// The batch dims of an operand's layout (batch dims..., rows, cols): where each
// batch's matrix starts.
Layout batch_layout(const Layout& l) {
  return Layout(std::vector<size_t>(l.dims().begin(), l.dims().end() - 2),
                std::vector<size_t>(l.strides().begin(), l.strides().end() - 2), l.start_offset());
}

// One GEMM operand: the batch matrices of a layout (batch dims..., rows, cols) as
// pointers the GEMM can read, in compute type C. Packs when needed; converts (T to f32)
// on oneDNN's threads (onednn::widen).
template <class T, class C>
class GemmOperand {
 public:
  GemmOperand(const CpuStorage& s, const Layout& l, size_t rows, size_t cols)
      : s_(s), data_(s.data<T>()), rows_(rows), cols_(cols) {
    size_t r = l.rank();
    s_row_ = l.strides()[r - 2];
    s_col_ = l.strides()[r - 1];
    batch_l_ = batch_layout(l);
    view_ = std::is_same_v<T, C> ? blas_view(rows, cols, s_row_, s_col_) : BlasView{};
  }

  // Whether every batch is read in place (get() then only computes an address).
  bool in_place() const {
    if constexpr (std::is_same_v<T, C>) return view_.ok;
    return false;
  }

  // Whether the batches lie one stride apart (returned in `stride`, elements; 0 for a
  // broadcast operand): the batch dims collapse into one.
  bool uniform_batches(size_t& stride) const {
    stride = 0;
    const auto& dims = batch_l_.dims();
    const auto& st = batch_l_.strides();
    size_t inner = 1;  // batches of the dims after i
    bool seen = false;
    for (size_t i = dims.size(); i-- > 0;) {
      if (dims[i] == 1) continue;
      if (!seen) {
        stride = st[i];
        seen = true;
      } else if (st[i] != stride * inner) {
        return false;
      }
      inner *= dims[i];
    }
    return true;
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
    if (off != packed_offset_ || !packed_) pack(off);
    return {packed_, false, std::max<size_t>(cols_, 1)};
  }

 private:
  void pack(size_t off) {
    packed_offset_ = off;
    if constexpr (!std::is_same_v<T, C>) {
      static_assert(std::is_same_v<C, float>);
      if (!conv_) conv_ = cpu_alloc(std::max<size_t>(rows_ * cols_, 1), DType::F32);
      packed_ = conv_->data<float>();
      cpu::onednn::widen(s_.dtype(), data_, Layout({rows_, cols_}, {s_row_, s_col_}, off),
                         conv_->data<float>());
      return;
    }
    buf_.resize(std::max<size_t>(rows_ * cols_, 1));
    packed_ = buf_.data();
    cpu::parallel_for(rows_, (size_t(1) << 14) / std::max<size_t>(cols_, 1) + 1, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) {
        const T* src = data_ + off + i * s_row_;
        C* dst = buf_.data() + i * cols_;
        for (size_t j = 0; j < cols_; ++j) dst[j] = src[j * s_col_];
      }
    });
  }

  const CpuStorage& s_;
  const T* data_;
  size_t rows_, cols_, s_row_ = 0, s_col_ = 0;
  Layout batch_l_;
  BlasView view_;
  std::vector<C> buf_;                // a packed matrix in T
  std::shared_ptr<CpuStorage> conv_;  // a converted matrix in f32
  const C* packed_ = nullptr;
  size_t packed_offset_ = 0;
};

}  // namespace

namespace {

// One matrix-times-vector per batch: the vector (a row of lhs when m == 1, a column
// of rhs when n == 1) widened to f32, the matrix read as it lies.
template <class T>
StoragePtr matvec_batches(const CpuStorage& lhs, const Layout& lhs_l, const CpuStorage& rhs,
                          const Layout& rhs_l, const MatmulDims& d) {
  GemmOperand<T, T> a(lhs, lhs_l, d.m, d.k), b(rhs, rhs_l, d.k, d.n);
  const size_t len = d.m == 1 ? d.n : d.m;
  auto out = cpu_alloc(d.b * len, lhs.dtype());
  std::vector<float> x(d.k), y(std::is_same_v<T, float> ? 0 : len);
  for (size_t i = 0; i < d.b; ++i) {
    auto am = a.get(i);
    auto bm = b.get(i);
    // The vector's element stride, and the matrix as the gemv reads it.
    const T* v;
    size_t v_stride;
    cpu::GemvMatrix<T> mat;
    if (d.m == 1) {  // (1 x k) * (k x n): B stored n x k is the dot form
      v = am.ptr, v_stride = am.trans ? am.ld : 1;
      mat = {bm.ptr, bm.ld, !bm.trans};
    } else {  // (m x k) * (k x 1): A stored m x k is the dot form
      v = bm.ptr, v_stride = bm.trans ? 1 : bm.ld;
      mat = {am.ptr, am.ld, am.trans};
    }
    T* dst = out->template data<T>() + i * len;
    if constexpr (std::is_same_v<T, float>) {
      const float* xp = v;
      if (v_stride != 1) {
        for (size_t p = 0; p < d.k; ++p) x[p] = v[p * v_stride];
        xp = x.data();
      }
      cpu::gemv(mat, len, d.k, xp, dst);
    } else {
      // f16 / bf16 widened and rounded back a vector at a time (simd.h: the bits of
      // the scalar conversions).
      if (v_stride == 1) {
        cpu::simd::widen(lhs.dtype(), reinterpret_cast<const uint16_t*>(v), x.data(), d.k);
      } else {
        for (size_t p = 0; p < d.k; ++p) x[p] = float(v[p * v_stride]);
      }
      cpu::gemv(mat, len, d.k, x.data(), y.data());
      cpu::simd::narrow(lhs.dtype(), y.data(), reinterpret_cast<uint16_t*>(dst), len);
    }
  }
  return out;
}

// Multiply-adds of a task of batches run side by side, at least (as gemm.cpp's per thread).
constexpr size_t kMacsPerTask = size_t(1) << 20;

// One GEMM per batch in compute type C: T itself, or f32 for halves without a GEMM of
// their own (operands converted, the output rounded back to T once).
template <class T, class C>
StoragePtr gemm_batches(const CpuStorage& lhs, const Layout& lhs_l, const CpuStorage& rhs,
                        const Layout& rhs_l, const MatmulDims& d) {
  const size_t mn = d.m * d.n;
  GemmOperand<T, C> a(lhs, lhs_l, d.m, d.k), b(rhs, rhs_l, d.k, d.n);
  auto out = cpu_alloc(d.b * mn, std::is_same_v<T, C> ? lhs.dtype() : DType::F32);
  auto one = [&](size_t i) {
    auto am = a.get(i);
    auto bm = b.get(i);
    cpu::gemm(am.trans, bm.trans, d.m, d.n, d.k, am.ptr, am.ld, bm.ptr, bm.ld,
              out->template data<C>() + i * mn, d.n);
  };
  // Products too small to fill the threads run side by side, one thread each, when
  // that occupies more threads than one product would.
  const size_t threads = size_t(cpu::max_threads()), macs = std::max<size_t>(d.m * d.n * d.k, 1);
  // Batches one stride apart in place: one primitive for all of them, threaded over
  // batches and blocks (docs/PERFORMANCE.md, CPU GEMM).
  size_t sa = 0, sb = 0;
  if constexpr (std::is_same_v<T, C> && !std::is_same_v<T, double>) {
    if (d.b > 1 && a.in_place() && b.in_place() && a.uniform_batches(sa) && b.uniform_batches(sb)) {
      auto am = a.get(0);
      auto bm = b.get(0);
      if (cpu::gemm_batched({d.b, d.m, d.n, d.k, am.trans, am.ld, sa, bm.trans, bm.ld, sb, d.n, mn}, am.ptr,
                            bm.ptr, out->template data<C>()))
        return out;
    }
  }
  if (a.in_place() && b.in_place() && std::min(d.b, threads) > size_t(cpu::gemm_threads(d.m, d.n, d.k))) {
    cpu::parallel_for(d.b, kMacsPerTask / macs + 1, [&](size_t lo, size_t hi) {
      for (size_t i = lo; i < hi; ++i) one(i);
    });
  } else {
    for (size_t i = 0; i < d.b; ++i) one(i);
  }
  if constexpr (std::is_same_v<T, C>) {
    return out;
  } else {
    auto rounded = cpu_alloc(d.b * mn, lhs.dtype());
    cpu::onednn::narrow(lhs.dtype(), out->template data<float>(), rounded->raw(), d.b * mn);
    return rounded;
  }
}

// f16 products through the f16 GEMM, each batch read in place; null where the CPU has
// none (gemm_f16). Products gemm_f16 runs on one thread (below 2^22 multiply-adds) run
// side by side.
StoragePtr gemm_batches_f16(const CpuStorage& lhs, const Layout& lhs_l, const CpuStorage& rhs,
                            const Layout& rhs_l, const MatmulDims& d) {
  if (cpu::isa() < cpu::Isa::Avx512) return nullptr;
  const Layout ba = batch_layout(lhs_l), bb = batch_layout(rhs_l);
  const size_t ra = lhs_l.rank(), rb = rhs_l.rank(), mn = d.m * d.n;
  auto out = cpu_alloc(d.b * mn, DType::F16);
  const f16* a = lhs.data<f16>();
  const f16* b = rhs.data<f16>();
  f16* c = out->data<f16>();
  auto one = [&](size_t i) {
    cpu::gemm_f16(d.m, d.n, d.k, a + cpu::strided_offset(i, ba), lhs_l.strides()[ra - 2],
                  lhs_l.strides()[ra - 1], b + cpu::strided_offset(i, bb), rhs_l.strides()[rb - 2],
                  rhs_l.strides()[rb - 1], c + i * mn, d.n);
  };
  const size_t macs = std::max<size_t>(d.m * d.n * d.k, 1);
  if (d.b > 1 && macs < kMacsPerTask * 4) {
    cpu::parallel_for(d.b, kMacsPerTask / macs + 1, [&](size_t lo, size_t hi) {
      for (size_t i = lo; i < hi; ++i) one(i);
    });
  } else {
    for (size_t i = 0; i < d.b; ++i) one(i);
  }
  return out;
}

}  // namespace

StoragePtr CpuStorage::matmul(const BackendStorage& rhs_storage, const MatmulDims& d, const Layout& lhs_l,
                              const Layout& rhs_l) const {
  const auto& rhs = CpuStorage::of(rhs_storage);
  if (d.b * d.m * d.n == 0) return cpu_alloc(0, dtype_);
  return dispatch_dtype<kMatmulDTypes>(dtype_, "matmul", [&]<class T>() -> StoragePtr {
    if constexpr (std::is_same_v<T, double>) {
      return gemm_batches<T, T>(*this, lhs_l, rhs, rhs_l, d);
    } else {
      if (d.m == 1 || d.n == 1) return matvec_batches<T>(*this, lhs_l, rhs, rhs_l, d);
      if constexpr (std::is_same_v<T, f16>) {
        if (auto out = gemm_batches_f16(*this, lhs_l, rhs, rhs_l, d)) return out;
        return gemm_batches<T, float>(*this, lhs_l, rhs, rhs_l, d);
      } else {
        if (std::is_same_v<T, bf16> && !cpu::gemm_native(DType::BF16))
          return gemm_batches<T, float>(*this, lhs_l, rhs, rhs_l, d);
        return gemm_batches<T, T>(*this, lhs_l, rhs, rhs_l, d);
      }
    }
  });
}

}  // namespace wick
