// Tensor::matmul on the CPU: hand-computed products, f64 reference loops written
// here for every float dtype, transposed / offset / non-BLAS-strided operands,
// broadcast and stride-0 batches, odd and empty sizes, and every error path.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <functional>

#include "backend/cpu/isa.h"
#include "mmconv_test_helpers.h"
#include "wick/options.h"

namespace wick {
namespace {

using namespace mmtest;

struct Ref {
  Values val, tol;
};

// out[bi, i, j] = sum_p a(bi, i, p) * b(bi, p, j) in f64; the tolerance allows the
// backend's GEMM arithmetic (f32 for halves) over k terms and one final rounding to dt.
Ref ref_matmul(size_t batch, size_t m, size_t k, size_t n,
               const std::function<double(size_t, size_t, size_t)>& a,
               const std::function<double(size_t, size_t, size_t)>& b, DType dt) {
  Ref r;
  for (size_t bi = 0; bi < batch; ++bi)
    for (size_t i = 0; i < m; ++i)
      for (size_t j = 0; j < n; ++j) {
        double s = 0, abs_s = 0;
        for (size_t p = 0; p < k; ++p) {
          s += a(bi, i, p) * b(bi, p, j);
          abs_s += std::fabs(a(bi, i, p) * b(bi, p, j));
        }
        r.val.push_back(s);
        r.tol.push_back(2 * unit_roundoff(dt) * std::fabs(s) + double(k + 2) * gemm_roundoff(dt) * abs_s);
      }
  return r;
}

// Row-major accessor of a (batch, rows, cols) value array; batch index taken modulo `nb` (broadcast when 1).
std::function<double(size_t, size_t, size_t)> at(const Values& v, size_t nb, size_t rows, size_t cols) {
  return [&v, nb, rows, cols](size_t bi, size_t i, size_t j) { return v[((bi % nb) * rows + i) * cols + j]; };
}

// The (cols, rows) row-major values of the transpose of a (rows, cols) row-major array.
Values transposed(const Values& v, size_t rows, size_t cols) {
  Values t(rows * cols);
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j) t[j * rows + i] = v[i * cols + j];
  return t;
}

TEST(Matmul, HandComputed2x3Times3x2EveryFloatDtype) {
  for (DType dt : kFloatTypes) {
    Tensor a = make({1, 2, 3, 4, 5, 6}, {2, 3}, dt), b = make({7, 8, 9, 10, 11, 12}, {3, 2}, dt);
    Tensor c = a.matmul(b);
    EXPECT_EQ(c.shape(), (Shape{2, 2}));
    EXPECT_EQ(c.dtype(), dt);
    EXPECT_EQ(c.to_f64_vector(), (Values{58, 64, 139, 154})) << dtype_name(dt);
  }
}

TEST(Matmul, RandomOddSizesMatchF64ReferenceEveryDtype) {
  for (DType dt : kFloatTypes) {
    for (auto [m, k, n] : {std::array<size_t, 3>{7, 13, 5}, {1, 1, 1}, {1, 9, 1}, {33, 65, 17}, {4, 1, 6}}) {
      Values av = rand_values(m * k, 1, dt), bv = rand_values(k * n, 2, dt);
      Tensor c = make(av, {m, k}, dt).matmul(make(bv, {k, n}, dt));
      Ref r = ref_matmul(1, m, k, n, at(av, 1, m, k), at(bv, 1, k, n), dt);
      expect_close(c, r.val, r.tol, fmt::format("{} {}x{}x{}", dtype_name(dt), m, k, n));
    }
  }
}

TEST(Matmul, TransposedOperandsEveryDtype) {
  size_t m = 6, k = 11, n = 9;
  for (DType dt : kFloatTypes) {
    Values av = rand_values(m * k, 3, dt), bv = rand_values(k * n, 4, dt);
    // Store the transposes, then view them back: lhs strides (1, m), rhs strides (1, k).
    const Values at_v = transposed(av, m, k), bt_v = transposed(bv, k, n);
    Tensor a = make(av, {m, k}, dt), b = make(bv, {k, n}, dt);
    Tensor a_t = make(at_v, {k, m}, dt).t(), b_t = make(bt_v, {n, k}, dt).t();
    ASSERT_FALSE(a_t.is_contiguous());
    Ref r = ref_matmul(1, m, k, n, at(av, 1, m, k), at(bv, 1, k, n), dt);
    expect_close(a_t.matmul(b), r.val, r.tol, std::string("lhs transposed ") + std::string(dtype_name(dt)));
    expect_close(a.matmul(b_t), r.val, r.tol, std::string("rhs transposed ") + std::string(dtype_name(dt)));
    expect_close(a_t.matmul(b_t), r.val, r.tol,
                 std::string("both transposed ") + std::string(dtype_name(dt)));
  }
}

TEST(Matmul, BatchedLhsTimesSharedRhs) {
  for (DType dt : {DType::F32, DType::BF16}) {
    Values av = rand_values(2 * 3 * 4 * 5, 5, dt), bv = rand_values(5 * 6, 6, dt);
    Tensor c = make(av, {2, 3, 4, 5}, dt).matmul(make(bv, {5, 6}, dt));
    EXPECT_EQ(c.shape(), (Shape{2, 3, 4, 6}));
    Ref r = ref_matmul(6, 4, 5, 6, at(av, 6, 4, 5), at(bv, 1, 5, 6), dt);
    expect_close(c, r.val, r.tol, std::string(dtype_name(dt)));
  }
}

TEST(Matmul, ManySmallBatchesOnEveryThreadCount) {
  // Products too small to split run side by side, one per thread: 37 batches of
  // (9 x 12)(12 x 10), the rhs stored transposed and shared by a stride-0 batch dim
  // in the second case, at 1, 2, 3 and 8 threads.
  const Options saved = options();
  const size_t nb = 37, m = 9, k = 12, n = 10;
  for (DType dt : {DType::F32, DType::BF16}) {
    Values av = rand_values(nb * m * k, 30, dt), bv = rand_values(nb * k * n, 31, dt);
    Values btv(nb * n * k);  // the rhs batches stored transposed: [nb, n, k]
    for (size_t bi = 0; bi < nb; ++bi)
      for (size_t p = 0; p < k; ++p)
        for (size_t j = 0; j < n; ++j) btv[(bi * n + j) * k + p] = bv[(bi * k + p) * n + j];
    Tensor a = make(av, {nb, m, k}, dt), b_t = make(btv, {nb, n, k}, dt).transpose(1, 2);
    Tensor shared = make(Values(btv.begin(), btv.begin() + n * k), {1, n, k}, dt).transpose(1, 2);
    Ref r = ref_matmul(nb, m, k, n, at(av, nb, m, k), at(bv, nb, k, n), dt);
    Ref r_shared = ref_matmul(nb, m, k, n, at(av, nb, m, k), at(bv, 1, k, n), dt);
    for (int threads : {1, 2, 3, 8}) {
      Options o = saved;
      o.cpu_threads = threads;
      set_options(o);
      std::string what = fmt::format("{} threads {}", dtype_name(dt), threads);
      expect_close(a.matmul(b_t), r.val, r.tol, what);
      expect_close(a.matmul(shared.broadcast_as({nb, k, n})), r_shared.val, r_shared.tol, "shared " + what);
    }
  }
  set_options(saved);
}

TEST(Matmul, BatchedOperandsOfOneShapeInDifferentLayoutsInterleaved) {
  // Batches one stride apart run through one primitive per description: the same
  // shapes with other leading dims, batch strides and transposes, called in turn (twice
  // over), must each get their own. lhs: contiguous; narrowed from [nb, m, k + 3]; the
  // batch dim permuted out of [m, nb, k]. rhs: contiguous; stored transposed.
  const size_t nb = 5, m = 6, k = 7, n = 8;
  for (DType dt : {DType::F32, DType::BF16}) {
    Values av = rand_values(nb * m * k, 40, dt), bv = rand_values(nb * k * n, 41, dt);
    Values wide(nb * m * (k + 3), 0.0), mk(m * nb * k), btv(nb * n * k);
    for (size_t bi = 0; bi < nb; ++bi)
      for (size_t i = 0; i < m; ++i)
        for (size_t p = 0; p < k; ++p) {
          wide[(bi * m + i) * (k + 3) + p] = av[(bi * m + i) * k + p];
          mk[(i * nb + bi) * k + p] = av[(bi * m + i) * k + p];
        }
    for (size_t bi = 0; bi < nb; ++bi)
      for (size_t p = 0; p < k; ++p)
        for (size_t j = 0; j < n; ++j) btv[(bi * n + j) * k + p] = bv[(bi * k + p) * n + j];
    const Tensor lhs[] = {make(av, {nb, m, k}, dt), make(wide, {nb, m, k + 3}, dt).narrow(2, 0, k),
                          make(mk, {m, nb, k}, dt).permute({1, 0, 2})};
    const Tensor rhs[] = {make(bv, {nb, k, n}, dt), make(btv, {nb, n, k}, dt).transpose(1, 2)};
    const Ref r = ref_matmul(nb, m, k, n, at(av, nb, m, k), at(bv, nb, k, n), dt);
    for (int round = 0; round < 2; ++round)
      for (size_t i = 0; i < 3; ++i)
        for (size_t j = 0; j < 2; ++j)
          expect_close(lhs[i].matmul(rhs[j]), r.val, r.tol,
                       fmt::format("{} round {} lhs {} rhs {}", dtype_name(dt), round, i, j));
  }
}

TEST(Matmul, BatchDimsBroadcastOnBothSides) {
  // lhs (3,1,4,5) x rhs (2,5,6) -> (3,2,4,6): out batch (i, j) uses lhs batch i, rhs batch j.
  for (DType dt : {DType::F64, DType::F16}) {
    Values av = rand_values(3 * 4 * 5, 7, dt), bv = rand_values(2 * 5 * 6, 8, dt);
    Tensor c = make(av, {3, 1, 4, 5}, dt).matmul(make(bv, {2, 5, 6}, dt));
    EXPECT_EQ(c.shape(), (Shape{3, 2, 4, 6}));
    auto a = [&](size_t bi, size_t i, size_t p) { return av[((bi / 2) * 4 + i) * 5 + p]; };
    auto b = [&](size_t bi, size_t p, size_t j) { return bv[((bi % 2) * 5 + p) * 6 + j]; };
    Ref r = ref_matmul(6, 4, 5, 6, a, b, dt);
    expect_close(c, r.val, r.tol, std::string(dtype_name(dt)));
  }
}

TEST(Matmul, RankTwoLhsBroadcastsAgainstBatchedRhs) {
  Values av = rand_values(4 * 5, 20, DType::F32), bv = rand_values(3 * 5 * 6, 21, DType::F32);
  Tensor c = make(av, {4, 5}, DType::F32).matmul(make(bv, {3, 5, 6}, DType::F32));
  EXPECT_EQ(c.shape(), (Shape{3, 4, 6}));
  Ref r = ref_matmul(3, 4, 5, 6, at(av, 1, 4, 5), at(bv, 3, 5, 6), DType::F32);
  expect_close(c, r.val, r.tol, "rank-2 lhs");
}

TEST(Matmul, StrideZeroBatchOperands) {
  for (DType dt : kFloatTypes) {
    Values av = rand_values(4 * 3 * 5, 9, dt), bv = rand_values(5 * 6, 10, dt);
    Tensor a = make(av, {4, 3, 5}, dt);
    Tensor b = make(bv, {1, 5, 6}, dt).broadcast_as({4, 5, 6});
    ASSERT_EQ(b.layout().strides()[0], 0u);
    Ref r = ref_matmul(4, 3, 5, 6, at(av, 4, 3, 5), at(bv, 1, 5, 6), dt);
    expect_close(a.matmul(b), r.val, r.tol, std::string("rhs stride-0 ") + std::string(dtype_name(dt)));
    // And a stride-0 lhs batch against a per-batch rhs.
    Values cv = rand_values(4 * 5 * 6, 11, dt);
    Tensor a0 = make(Values(av.begin(), av.begin() + 15), {1, 3, 5}, dt).broadcast_as({4, 3, 5});
    Ref r2 = ref_matmul(4, 3, 5, 6, at(av, 1, 3, 5), at(cv, 4, 5, 6), dt);
    expect_close(a0.matmul(make(cv, {4, 5, 6}, dt)), r2.val, r2.tol,
                 std::string("lhs stride-0 ") + std::string(dtype_name(dt)));
  }
}

TEST(Matmul, OffsetOperandsWithLeadingDims) {
  // lhs = columns 2..5 of a (5, 9) tensor (strides (9, 1), offset 2); rhs = rows 1..4 of (6, 3).
  for (DType dt : kFloatTypes) {
    Values big_a = rand_values(5 * 9, 12, dt), big_b = rand_values(6 * 3, 13, dt);
    Tensor a = make(big_a, {5, 9}, dt).narrow(1, 2, 4), b = make(big_b, {6, 3}, dt).narrow(0, 1, 4);
    auto fa = [&](size_t, size_t i, size_t p) { return big_a[i * 9 + 2 + p]; };
    auto fb = [&](size_t, size_t p, size_t j) { return big_b[(1 + p) * 3 + j]; };
    Ref r = ref_matmul(1, 5, 4, 3, fa, fb, dt);
    expect_close(a.matmul(b), r.val, r.tol, std::string(dtype_name(dt)));
  }
}

TEST(Matmul, StridesBlasCannotTakeArePacked) {
  size_t m = 5, k = 7, n = 4;
  for (DType dt : {DType::F32, DType::F64, DType::F16}) {
    // lhs: every other element of a (m, 2k) row: strides (2k, 2).
    Values wide = rand_values(m * k * 2, 14, dt);
    Tensor a = make(wide, {m, k, 2}, dt).narrow(2, 1, 1).squeeze(2);
    ASSERT_EQ(a.layout().strides()[1], 2u);
    // rhs: a row broadcast along k (stride 0 inside the matrix).
    Values row = rand_values(n, 15, dt);
    Tensor b = make(row, {1, n}, dt).broadcast_as({k, n});
    auto fa = [&](size_t, size_t i, size_t p) { return wide[(i * k + p) * 2 + 1]; };
    auto fb = [&](size_t, size_t, size_t j) { return row[j]; };
    Ref r = ref_matmul(1, m, k, n, fa, fb, dt);
    expect_close(a.matmul(b), r.val, r.tol, std::string(dtype_name(dt)));
  }
}

TEST(Matmul, NonUniformBatchStridesFromPermute) {
  // base (2, 3, m, k) permuted to (3, 2, m, k): batch strides (m*k, 3*m*k) do not collapse.
  size_t m = 3, k = 4, n = 5;
  for (DType dt : {DType::F32, DType::BF16}) {
    Values av = rand_values(2 * 3 * m * k, 16, dt), bv = rand_values(3 * 2 * k * n, 17, dt);
    Tensor a = make(av, {2, 3, m, k}, dt).permute({1, 0, 2, 3});
    Tensor b = make(bv, {3, 2, k, n}, dt);
    auto fa = [&](size_t bi, size_t i, size_t p) {
      size_t i0 = bi / 2, i1 = bi % 2;  // out batch (i0, i1) reads base batch (i1, i0)
      return av[((i1 * 3 + i0) * m + i) * k + p];
    };
    Ref r = ref_matmul(6, m, k, n, fa, at(bv, 6, k, n), dt);
    expect_close(a.matmul(b), r.val, r.tol, std::string(dtype_name(dt)));
  }
}

TEST(Matmul, LargerHalfPrecisionProductRoundsOnce) {
  size_t m = 65, k = 129, n = 67;
  for (DType dt : {DType::F16, DType::BF16}) {
    Values av = rand_values(m * k, 18, dt), bv = rand_values(k * n, 19, dt);
    Ref r = ref_matmul(1, m, k, n, at(av, 1, m, k), at(bv, 1, k, n), dt);
    expect_close(make(av, {m, k}, dt).matmul(make(bv, {k, n}, dt)), r.val, r.tol,
                 std::string(dtype_name(dt)));
  }
}

TEST(Matmul, HalfProductsAcrossBlocksAndLayouts) {
  // Sizes past every block of the CPU's f16 GEMM (hgemm.cpp): m 110 two blocks of rows
  // and a short micro-tile, k 1100 three blocks of k (partial sums kept between them),
  // n 560 five items of columns and a short micro-panel, large enough to be split over
  // the threads; and a wide, short product (n 1100: nine items of columns, m 30 one
  // short block of rows). Each operand stored both ways (k along rows or down columns).
  for (const auto& size : {std::array<size_t, 3>{110, 1100, 560}, {30, 300, 1100}}) {
    const size_t m = size[0], k = size[1], n = size[2];  // clang before 16 cannot capture bindings
    for (DType dt : {DType::F16, DType::BF16}) {
      Values av = rand_values(m * k, 22, dt), bv = rand_values(k * n, 23, dt);
      const Values at_v = transposed(av, m, k), bt_v = transposed(bv, k, n);
      const Ref r = ref_matmul(1, m, k, n, at(av, 1, m, k), at(bv, 1, k, n), dt);
      const Tensor a = make(av, {m, k}, dt), b = make(bv, {k, n}, dt);
      const Tensor a_t = make(at_v, {k, m}, dt).t(), b_t = make(bt_v, {n, k}, dt).t();
      const std::string name = fmt::format("{} {}x{}x{}", dtype_name(dt), m, k, n);
      expect_close(a.matmul(b), r.val, r.tol, name + " A B");
      expect_close(a_t.matmul(b), r.val, r.tol, name + " lhs transposed");
      expect_close(a.matmul(b_t), r.val, r.tol, name + " rhs transposed");
      expect_close(a_t.matmul(b_t), r.val, r.tol, name + " both transposed");
    }
  }
}

TEST(Matmul, ManySmallHalfProductsSideBySide) {
  // 24 batches of 40 x 33 x 50 (each too small to split over threads), the rhs shared.
  const size_t batch = 24, m = 40, k = 33, n = 50;
  Values av = rand_values(batch * m * k, 24, DType::F16), bv = rand_values(k * n, 25, DType::F16);
  Tensor c = make(av, {batch, m, k}, DType::F16).matmul(make(bv, {k, n}, DType::F16));
  const Ref r = ref_matmul(batch, m, k, n, at(av, batch, m, k), at(bv, 1, k, n), DType::F16);
  expect_close(c, r.val, r.tol, "f16 batches");
}

// The instruction-set levels of the CPU backend's hand-written kernels this CPU runs.
std::vector<cpu::Isa> cpu_levels() {
  std::vector<cpu::Isa> v;
  for (cpu::Isa i : {cpu::Isa::Scalar, cpu::Isa::Avx2, cpu::Isa::Avx512})
    if (i <= cpu::detected_isa()) v.push_back(i);
  return v;
}

// Runs the body at each level the CPU has, the cap restored after.
template <class F>
void at_every_level(F&& f) {
  for (cpu::Isa level : cpu_levels()) {
    const cpu::Isa saved = cpu::set_max_isa(level);
    f(std::string(" at ") + cpu::isa_name(level));
    cpu::set_max_isa(saved);
  }
}

TEST(Matmul, MatVecBothFormsEveryHalfDtypeAndLevel) {
  // A row vector times a matrix and a matrix times a column vector, with the matrix
  // stored both ways (its rows along k: a dot per output; along the outputs: scaled
  // rows summed); odd k and output counts cover every vector tail (k 77: a 64-wide
  // step, then an 8- or 16-wide one, then the rest), 1100 outputs more than one
  // accumulation block, and [70, 1030] rows of more than 128 KiB several pieces of
  // rows taken by the threads (the last one short).
  at_every_level([](const std::string& level) {
    for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
      for (const auto& k_len :
           {std::array<size_t, 2>{1, 1}, {7, 5}, {33, 37}, {77, 300}, {100, 1100}, {1030, 70}}) {
        const size_t k = k_len[0], len = k_len[1];  // clang before 16 cannot capture bindings
        Values xv = rand_values(k, 30, dt), wv = rand_values(k * len, 31, dt);
        Tensor x_row = make(xv, {1, k}, dt), x_col = make(xv, {k, 1}, dt);
        Tensor w_kn = make(wv, {k, len}, dt);  // rows along the outputs
        Tensor w_nk = make(wv, {len, k}, dt);  // rows along k
        auto f_kn = [&](size_t, size_t p, size_t j) { return wv[p * len + j]; };
        auto f_nk = [&](size_t, size_t i, size_t p) { return wv[i * k + p]; };
        auto f_x = [&](size_t, size_t, size_t p) { return xv[p]; };
        auto f_xc = [&](size_t, size_t p, size_t) { return xv[p]; };
        std::string what = fmt::format("{} k {} len {}{}", dtype_name(dt), k, len, level);
        Ref r1 = ref_matmul(1, 1, k, len, f_x, f_kn, dt);
        expect_close(x_row.matmul(w_kn), r1.val, r1.tol, "row x [k,n] " + what);
        auto f_nk_t = [&](size_t, size_t p, size_t j) { return wv[j * k + p]; };
        Ref r2 = ref_matmul(1, 1, k, len, f_x, f_nk_t, dt);
        expect_close(x_row.matmul(w_nk.t()), r2.val, r2.tol, "row x [n,k]^T " + what);
        Ref r3 = ref_matmul(1, len, k, 1, f_nk, f_xc, dt);
        expect_close(w_nk.matmul(x_col), r3.val, r3.tol, "[n,k] x col " + what);
        auto f_kn_t = [&](size_t, size_t i, size_t p) { return wv[p * len + i]; };
        Ref r4 = ref_matmul(1, len, k, 1, f_kn_t, f_xc, dt);
        expect_close(w_kn.t().matmul(x_col), r4.val, r4.tol, "[k,n]^T x col " + what);
      }
    }
  });
}

TEST(Matmul, MatVecStridedVectorsAndBroadcastBatches) {
  // A vector read every other element, a batch of 3 vectors against one shared matrix
  // (stride-0 batch), and a stride-0 vector that must be packed.
  size_t k = 19, n = 23;
  for (DType dt : {DType::F32, DType::BF16}) {
    Values wide = rand_values(3 * k * 2, 32, dt), wv = rand_values(k * n, 33, dt);
    Tensor x = make(wide, {3, 1, k, 2}, dt).narrow(3, 1, 1).squeeze(3);  // (3, 1, k) stride 2
    Tensor w = make(wv, {1, k, n}, dt).broadcast_as({3, k, n});
    auto fx = [&](size_t bi, size_t, size_t p) { return wide[(bi * k + p) * 2 + 1]; };
    Ref r = ref_matmul(3, 1, k, n, fx, at(wv, 1, k, n), dt);
    expect_close(x.matmul(w), r.val, r.tol, std::string("strided batch ") + std::string(dtype_name(dt)));
    Values one = rand_values(1, 34, dt);
    Tensor x0 = make(one, {1, 1}, dt).broadcast_as({1, k});
    Ref r0 = ref_matmul(
        1, 1, k, n, [&](size_t, size_t, size_t) { return one[0]; }, at(wv, 1, k, n), dt);
    expect_close(x0.matmul(make(wv, {k, n}, dt)), r0.val, r0.tol,
                 std::string("stride-0 vector ") + std::string(dtype_name(dt)));
  }
}

TEST(Matmul, ZeroInnerDimGivesZeros) {
  Tensor c = Tensor::zeros({3, 0}, DType::F32).matmul(Tensor::zeros({0, 4}, DType::F32));
  EXPECT_EQ(c.shape(), (Shape{3, 4}));
  EXPECT_EQ(c.to_f64_vector(), Values(12, 0.0));
  // mat-vecs (m == 1, n == 1) with k == 0, in place and widened
  for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
    EXPECT_EQ(Tensor::zeros({1, 0}, dt).matmul(Tensor::ones({0, 5}, dt)).to_f64_vector(), Values(5, 0.0));
    EXPECT_EQ(Tensor::ones({6, 0}, dt).matmul(Tensor::zeros({0, 1}, dt)).to_f64_vector(), Values(6, 0.0));
  }
}

TEST(Matmul, EmptyOutputs) {
  EXPECT_EQ(Tensor::zeros({0, 3}, DType::F64).matmul(Tensor::ones({3, 4}, DType::F64)).shape(),
            (Shape{0, 4}));
  EXPECT_EQ(Tensor::zeros({2, 3}, DType::F64).matmul(Tensor::ones({3, 0}, DType::F64)).shape(),
            (Shape{2, 0}));
  EXPECT_EQ(Tensor::zeros({0, 2, 3}, DType::F16).matmul(Tensor::ones({3, 4}, DType::F16)).shape(),
            (Shape{0, 2, 4}));
}

TEST(MatmulErrors, InnerDimsDiffer) {
  expect_error(
      [] {
        Tensor::zeros({2, 3}).matmul(Tensor::zeros({4, 5}));
      },
      ErrorKind::ShapeMismatch, "[matmul] lhs [2,3] f32 rhs [4,5] f32: inner dims differ");
}

TEST(MatmulErrors, RankZeroOperand) {
  expect_error(
      [] {
        Tensor::zeros({}).matmul(Tensor::zeros({3, 2}));
      },
      ErrorKind::ShapeMismatch, "[matmul] lhs [] f32 rhs [3,2] f32: both operands need rank >= 1");
  expect_error(
      [] {
        Tensor::zeros({2, 3}).matmul(Tensor::zeros({}));
      },
      ErrorKind::ShapeMismatch, "rank >= 1");
}

TEST(MatmulErrors, VectorInnerDimsDiffer) {
  expect_error(
      [] {
        Tensor::zeros({3}).matmul(Tensor::zeros({4, 2}));
      },
      ErrorKind::ShapeMismatch, "[matmul] lhs [3] f32 rhs [4,2] f32: inner dims differ");
  expect_error(
      [] {
        Tensor::zeros({2, 3}).matmul(Tensor::zeros({4}));
      },
      ErrorKind::ShapeMismatch, "[matmul] lhs [2,3] f32 rhs [4] f32: inner dims differ");
  expect_error([] { Tensor::zeros({3}).matmul(Tensor::zeros({4})); }, ErrorKind::ShapeMismatch,
               "[matmul] lhs [3] f32 rhs [4] f32: inner dims differ");
}

TEST(MatmulErrors, BatchDimsDoNotBroadcast) {
  expect_error(
      [] {
        Tensor::zeros({2, 2, 3}).matmul(Tensor::zeros({3, 3, 4}));
      },
      ErrorKind::ShapeMismatch, "[matmul] lhs [2,2,3] f32 rhs [3,3,4] f32: batch dims do not broadcast");
}

TEST(MatmulErrors, DtypesDiffer) {
  expect_error(
      [] {
        Tensor::zeros({2, 3}).matmul(Tensor::zeros({3, 2}, DType::F64));
      },
      ErrorKind::DTypeMismatch, "[matmul] lhs [2,3] f32 rhs [3,2] f64: dtypes differ");
}

TEST(MatmulErrors, IntegerDtypeUnsupported) {
  for (DType dt : {DType::U8, DType::U32, DType::I32, DType::I64}) {
    expect_error(
        [dt] {
          Tensor::zeros({2, 3}, dt).matmul(Tensor::zeros({3, 2}, dt));
        },
        ErrorKind::UnsupportedDType, "[matmul] lhs [2,3] " + std::string(dtype_name(dt)));
  }
}

TEST(MatmulErrors, UndefinedOperand) {
  expect_error(
      [] {
        Tensor().matmul(Tensor::zeros({3, 2}));
      },
      ErrorKind::InvalidArgument, "[matmul] lhs is an undefined tensor");
  expect_error(
      [] {
        Tensor::zeros({3, 2}).matmul(Tensor());
      },
      ErrorKind::InvalidArgument, "[matmul] rhs is an undefined tensor");
}

}  // namespace
}  // namespace wick
