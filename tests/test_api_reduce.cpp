// Reductions of the composite API on the CPU: whole-tensor min / max / argmin / argmax /
// sum, mean, var, log_sum_exp, topk and softmax / log_softmax along any dim, against
// float64 math written here; then their error paths (kind and message).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "api_test_util.h"

namespace wick {
namespace {

using namespace api_test;

// Element (i0, i1, i2) of a row-major [d0, d1, d2] array.
size_t at3(const Shape& s, size_t i0, size_t i1, size_t i2) { return (i0 * s[1] + i1) * s[2] + i2; }

// The f64 reduction of v (shape s, rank 3) over dim `d` with `f` folding the values of a fiber.
template <class F>
V reduce3(const V& v, const Shape& s, size_t d, F f) {
  V out;
  size_t n0 = d == 0 ? 1 : s[0], n1 = d == 1 ? 1 : s[1], n2 = d == 2 ? 1 : s[2];
  for (size_t a = 0; a < n0; ++a)
    for (size_t b = 0; b < n1; ++b)
      for (size_t c = 0; c < n2; ++c) {
        V fiber;
        for (size_t k = 0; k < s[d]; ++k)
          fiber.push_back(v[at3(s, d == 0 ? k : a, d == 1 ? k : b, d == 2 ? k : c)]);
        out.push_back(f(fiber));
      }
  return out;
}

double mean_of(const V& x) { return std::accumulate(x.begin(), x.end(), 0.0) / double(x.size()); }
double var_of(const V& x, double correction) {
  double m = mean_of(x), ss = 0;
  for (double e : x) ss += (e - m) * (e - m);
  return ss / std::max(0.0, double(x.size()) - correction);
}
double lse_of(const V& x) {
  double m = *std::max_element(x.begin(), x.end()), s = 0;
  for (double e : x) s += std::exp(e - m);
  return m + std::log(s);
}

// ---- whole-tensor reductions ------------------------------------------------------------

TEST(WholeTensor, MinMaxArgminArgmaxSum) {
  const V v = {3, -1, 7, 7, -4, 2};
  for (DType dt : kAllDTypes) {
    V x = v;
    if (is_int(dt) && (dt == DType::U8 || dt == DType::U32))
      for (auto& e : x) e = std::fabs(e);
    Tensor t = make(x, Shape{2, 3}, dt).t();  // a transposed view: the flat index is row-major of the view
    V seen = {x[0], x[3], x[1], x[4], x[2], x[5]};
    auto mx = std::max_element(seen.begin(), seen.end()), mn = std::min_element(seen.begin(), seen.end());
    std::string d(dtype_name(dt));
    expect_values(t.max(), dt, Shape{}, {*mx}, 0, d + " max");
    expect_values(t.min(), dt, Shape{}, {*mn}, 0, d + " min");
    expect_values(t.argmax(), DType::U32, Shape{}, {double(mx - seen.begin())}, 0,
                  d + " argmax (first of ties)");
    expect_values(t.argmin(), DType::U32, Shape{}, {double(mn - seen.begin())}, 0, d + " argmin");
    expect_values(t.sum(), dt, Shape{}, {std::accumulate(seen.begin(), seen.end(), 0.0)}, 0, d + " sum");
  }
  // rank 0: the element itself, index 0
  Tensor s = make({5}, Shape{}, DType::F32);
  expect_values(s.max(), DType::F32, Shape{}, {5}, 0);
  expect_values(s.argmax(), DType::U32, Shape{}, {0}, 0);
  // NaN is the extreme for both, as in PyTorch
  Tensor n = make({1, kNaN, 3}, Shape{3}, DType::F32);
  expect_values(n.max(), DType::F32, Shape{}, {kNaN}, 0);
  expect_values(n.argmax(), DType::U32, Shape{}, {1}, 0);
}

TEST(WholeTensor, EmptyIsAnError) {
  expect_error(
      [] {
        (void)Tensor::zeros({0, 3}).max();
      },
      ErrorKind::InvalidArgument, "[max] reduction over dims [0,1] of [0,3] f32 is empty");
  expect_error([] { (void)Tensor::zeros({0}).argmin(); }, ErrorKind::InvalidArgument, "[argmin]");
  expect_error([] { (void)Tensor().max(); }, ErrorKind::InvalidArgument,
               "[max] tensor is an undefined tensor");
}

// ---- mean, var ----------------------------------------------------------------------------

TEST(Mean, EveryFloatDTypeAndDim) {
  const Shape s{3, 4, 5};
  for (DType dt : kFloats) {
    // positive values: no cancellation, so the sums' rounding stays a few ulps of the mean
    V v = round_to(dt, uniform(s.elem_count(), 7, 1, 5));
    Tensor t = make(v, s, dt);
    // f16/bf16: one rounding of an f32 result; f32/f64: the sum's and the division's roundings
    const double ulps = dt == DType::F32 || dt == DType::F64 ? 4 : 1;
    for (size_t d = 0; d < 3; ++d) {
      std::vector<size_t> kd = s.dims();
      kd[d] = 1;
      expect_values(t.mean({int64_t(d)}, true), dt, Shape(kd), reduce3(v, s, d, mean_of), ulps,
                    std::string(dtype_name(dt)) + " dim " + std::to_string(d));
    }
    double all = mean_of(v);
    expect_values(t.mean(), dt, Shape{}, {all}, ulps, std::string(dtype_name(dt)) + " all");
    expect_values(t.mean({0, 2}), dt, Shape{4},
                  reduce3(reduce3(v, s, 0, mean_of), Shape{1, 4, 5}, 2, mean_of), ulps,
                  std::string(dtype_name(dt)) + " dims 0,2");
  }
}

TEST(Mean, HalfSumsDoNotOverflow) {
  // 1000 values of 100: the sum (100000) is past f16's largest finite 65504.
  Tensor t = Tensor::full(100.0, {1000}, DType::F16);
  expect_values(t.mean(), DType::F16, Shape{}, {100}, 0);
}

TEST(Mean, EmptyGivesNaN) {
  expect_values(Tensor::zeros({0, 3}).mean({0}), DType::F32, Shape{3}, {kNaN, kNaN, kNaN}, 0);
}

TEST(Var, CorrectionsAndDims) {
  const Shape s{3, 4, 5};
  for (DType dt : kFloats) {
    const bool is_half = dt == DType::F16 || dt == DType::BF16;  // computed in f32, rounded once
    V v = round_to(dt, uniform(s.elem_count(), 11, -3, 5));
    Tensor t = make(v, s, dt);
    for (double corr : {1.0, 0.0, 2.5}) {
      for (size_t d = 0; d < 3; ++d) {
        V want = reduce3(v, s, d, [&](const V& x) { return var_of(x, corr); });
        std::vector<size_t> od;
        for (size_t k = 0; k < 3; ++k)
          if (k != d) od.push_back(s[k]);
        expect_values(t.var({int64_t(d)}, false, corr), dt, Shape(od), want, is_half ? 1 : 8,
                      std::string(dtype_name(dt)) + " correction " + std::to_string(corr));
      }
    }
    expect_values(t.var(), dt, Shape{}, {var_of(v, 1)}, is_half ? 1 : 8, "all dims");
  }
}

TEST(Var, TooFewElementsFollowPyTorch) {
  // n - correction <= 0: 0 / 0 = NaN for one element, x / 0 = inf otherwise.
  expect_values(make({4}, Shape{1}, DType::F32).var(), DType::F32, Shape{}, {kNaN}, 0);
  expect_values(make({1, 3}, Shape{2}, DType::F64).var({0}, false, 2), DType::F64, Shape{}, {kInf}, 0);
}

TEST(MeanVar, Errors) {
  Tensor i = make({1, 2}, Shape{2}, DType::I32);
  expect_error([&] { (void)i.mean(); }, ErrorKind::UnsupportedDType,
               "[mean] tensor [2] i32: dtype i32 is not supported");
  expect_error([&] { (void)i.var({0}); }, ErrorKind::UnsupportedDType, "[var] tensor [2] i32");
  Tensor f = make({1, 2}, Shape{2}, DType::F32);
  expect_error([&] { (void)f.mean({1}); }, ErrorKind::DimOutOfRange, "[mean] dim 1 out of range for rank 1");
  expect_error([&] { (void)f.mean({0, 0}); }, ErrorKind::InvalidArgument, "[mean] a dim is listed twice");
  expect_error([&] { (void)f.mean(std::vector<int64_t>{}); }, ErrorKind::InvalidArgument,
               "[mean] no dims to reduce for [2] f32");
  expect_error([&] { (void)f.var({0}, false, kNaN); }, ErrorKind::InvalidArgument,
               "[var] correction nan for [2] f32 must be finite");
}

// ---- log_sum_exp ------------------------------------------------------------------------

TEST(LogSumExp, EveryFloatDTypeAndDim) {
  const Shape s{2, 3, 4};
  for (DType dt : kFloats) {
    V v = round_to(dt, uniform(s.elem_count(), 5, -30, 30));
    Tensor t = make(v, s, dt);
    for (size_t d = 0; d < 3; ++d) {
      std::vector<size_t> kd = s.dims();
      kd[d] = 1;
      expect_values(t.log_sum_exp({int64_t(d)}, true), dt, Shape(kd), reduce3(v, s, d, lse_of),
                    dt == DType::F64   ? 8
                    : dt == DType::F32 ? 4
                                       : 1,
                    std::string(dtype_name(dt)));
    }
  }
  // large values: exp would overflow without the shift
  expect_values(make({1000, 1000}, Shape{2}, DType::F32).log_sum_exp({0}), DType::F32, Shape{},
                {1000 + std::log(2.0)}, 1);
}

TEST(LogSumExp, InfinitiesNaNAndEmpty) {
  expect_values(make({-kInf, -kInf}, Shape{2}, DType::F32).log_sum_exp({0}), DType::F32, Shape{}, {-kInf}, 0);
  expect_values(make({kInf, 1}, Shape{2}, DType::F32).log_sum_exp({0}), DType::F32, Shape{}, {kInf}, 0);
  expect_values(make({kNaN, 1}, Shape{2}, DType::F32).log_sum_exp({0}), DType::F32, Shape{}, {kNaN}, 0);
  expect_values(Tensor::zeros({0, 2}).log_sum_exp({0}), DType::F32, Shape{2}, {-kInf, -kInf}, 0);
  expect_error([] { (void)make({1}, Shape{1}, DType::U8).log_sum_exp({0}); }, ErrorKind::UnsupportedDType,
               "[log_sum_exp] tensor [1] u8");
}

// ---- topk ------------------------------------------------------------------------------------

TEST(TopK, LargestAndSmallestAlongEveryDim) {
  const Shape s{3, 4, 5};
  for (DType dt : kAllDTypes) {
    V v(s.elem_count());
    for (size_t i = 0; i < v.size(); ++i) v[i] = double((i * 37) % 60);  // distinct per fiber, no ties
    Tensor t = make(v, s, dt);
    for (size_t d = 0; d < 3; ++d)
      for (bool largest : {true, false}) {
        const size_t k = 2;
        auto [vals, idx] = t.topk(k, int64_t(d), largest);
        std::vector<size_t> od = s.dims();
        od[d] = k;
        V want_v, want_i;
        // gather per output position in row-major order of `od`
        for (size_t a = 0; a < od[0]; ++a)
          for (size_t b = 0; b < od[1]; ++b)
            for (size_t c = 0; c < od[2]; ++c) {
              std::vector<size_t> order(s[d]);
              std::iota(order.begin(), order.end(), 0);
              auto val = [&](size_t j) { return v[at3(s, d == 0 ? j : a, d == 1 ? j : b, d == 2 ? j : c)]; };
              std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
                return largest ? val(x) > val(y) : val(x) < val(y);
              });
              size_t r = d == 0 ? a : d == 1 ? b : c;
              want_i.push_back(double(order[r]));
              want_v.push_back(val(order[r]));
            }
        std::string ctx =
            std::string(dtype_name(dt)) + " dim " + std::to_string(d) + (largest ? " largest" : " smallest");
        expect_values(vals, dt, Shape(od), want_v, 0, ctx);
        expect_values(idx, DType::U32, Shape(od), want_i, 0, ctx);
      }
  }
}

TEST(TopK, TiesKeepTheLowerIndexAndNaNRanksLast) {
  auto [v, i] = make({2, 5, 5, kNaN, 1}, Shape{5}, DType::F32).topk(3);
  expect_values(v, DType::F32, Shape{3}, {5, 5, 2}, 0);
  expect_values(i, DType::U32, Shape{3}, {1, 2, 0}, 0);
  auto [sv, si] = make({2, kNaN, 1}, Shape{3}, DType::F32).topk(3, -1, false);
  expect_values(sv, DType::F32, Shape{3}, {1, 2, kNaN}, 0);
  expect_values(si, DType::U32, Shape{3}, {2, 0, 1}, 0);
  auto [ev, ei] = make({1, 2}, Shape{2}, DType::F32).topk(0);
  EXPECT_EQ(ev.shape(), Shape({0}));
  EXPECT_EQ(ei.dtype(), DType::U32);
}

TEST(TopK, Errors) {
  Tensor t = make({1, 2, 3, 4, 5, 6}, Shape{2, 3}, DType::F32);
  expect_error([&] { (void)t.topk(4); }, ErrorKind::InvalidArgument,
               "[topk] k 4 is larger than dim 1 (size 3) of [2,3] f32");
  expect_error([&] { (void)t.topk(1, 2); }, ErrorKind::DimOutOfRange, "[topk] dim 2 out of range for rank 2");
  expect_error([&] { (void)make({1}, Shape{}, DType::F32).topk(1); }, ErrorKind::DimOutOfRange, "[topk]");
}

// ---- softmax / log_softmax along any dim ---------------------------------------------------

TEST(SoftmaxDim, EveryDimMatchesFloat64) {
  const Shape s{3, 4, 5};
  for (DType dt : kFloats) {
    V v = round_to(dt, uniform(s.elem_count(), 3, -5, 5));
    Tensor t = make(v, s, dt);
    for (int64_t d : {0, 1, 2, -1, -3}) {
      size_t dd = size_t(d < 0 ? d + 3 : d);
      V sm(v.size()), lsm(v.size());
      for (size_t a = 0; a < s[0]; ++a)
        for (size_t b = 0; b < s[1]; ++b)
          for (size_t c = 0; c < s[2]; ++c) {
            V fiber;
            for (size_t k = 0; k < s[dd]; ++k)
              fiber.push_back(v[at3(s, dd == 0 ? k : a, dd == 1 ? k : b, dd == 2 ? k : c)]);
            size_t i = at3(s, a, b, c);
            lsm[i] = v[i] - lse_of(fiber);
            sm[i] = std::exp(lsm[i]);
          }
      std::string ctx = std::string(dtype_name(dt)) + " dim " + std::to_string(d);
      // a few ulps, and an absolute bound of a few epsilons where log_softmax cancels (x - lse near 0)
      const double eps = ulp(dt, 1.0), ulps = dt == DType::F64 || dt == DType::F32 ? 8 : 2;
      expect_values(nn::softmax(t, d), dt, s, sm, ulps, ctx + " softmax", 2 * eps);
      expect_values(nn::log_softmax(t, d), dt, s, lsm, ulps, ctx + " log_softmax", 16 * eps);
    }
  }
}

TEST(SoftmaxDim, Errors) {
  expect_error(
      [] {
        (void)nn::softmax(make({1, 2}, Shape{2}, DType::I32), 0);
      },
      ErrorKind::UnsupportedDType, "[softmax] input [2] i32: dtype i32 is not supported");
  expect_error(
      [] {
        (void)nn::log_softmax(Tensor::zeros({2, 3}), 2);
      },
      ErrorKind::DimOutOfRange, "[log_softmax] dim 2 out of range for rank 2");
  expect_error([] { (void)nn::softmax(Tensor::zeros({}), 0); }, ErrorKind::DimOutOfRange,
               "[softmax] input [] f32 has no last dim");
}

}  // namespace
}  // namespace wick
