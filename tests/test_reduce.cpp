// Reductions (sum, min, max, argmin, argmax, sum_all) and cumsum: hand-computed cases, float64
// references written here over every dtype and layout, NaN and tie rules, numerics and error paths.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "check/reduce_refs.h"
#include "reduce_test_util.h"

namespace wick {
namespace {

using testing::expect_error;
using testing::Input;
using testing::make;
using testing::round_to;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// An exact sum as the dtype holds it: floats round once (the f32 accumulator is exact for the sample
// values), u8 and u32 wrap modulo 2^bits (i32/i64 sample sums never overflow).
double wrap_or_round(DType dt, double x) {
  if (dt == DType::U8) return std::fmod(x, 256.0);
  if (dt == DType::U32) return std::fmod(x, 4294967296.0);
  return round_to(dt, x);
}

void expect_same(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " at " << i << ": got " << got[i];
    } else {
      EXPECT_EQ(got[i], want[i]) << what << " at " << i;
    }
  }
}

// --- hand-computed cases -------------------------------------------------------------------------

TEST(Reduce, SumOfMatrixByHand) {
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  EXPECT_EQ(x.sum({0}).to_vector<float>(), (std::vector<float>{5, 7, 9}));
  EXPECT_EQ(x.sum({1}).to_vector<float>(), (std::vector<float>{6, 15}));
  EXPECT_EQ(x.sum({-1}).shape(), (Shape{2}));
  EXPECT_EQ(x.sum({0}, true).shape(), (Shape{1, 3}));
  EXPECT_EQ(x.sum({1}, true).shape(), (Shape{2, 1}));
  EXPECT_EQ(x.sum({0, 1}).to_vector<float>(), (std::vector<float>{21}));
  EXPECT_EQ(x.sum({1, 0}, true).shape(), (Shape{1, 1}));
  Tensor all = x.sum_all();
  EXPECT_EQ(all.rank(), 0u);
  EXPECT_EQ(all.item(), 21.0);
}

TEST(Reduce, MinMaxArgByHand) {
  Tensor x = Tensor::from_vector<int32_t>({3, -1, 7, 7, 0, -1}, Shape{2, 3});
  EXPECT_EQ(x.max({1}).to_vector<int32_t>(), (std::vector<int32_t>{7, 7}));
  EXPECT_EQ(x.min({1}).to_vector<int32_t>(), (std::vector<int32_t>{-1, -1}));
  EXPECT_EQ(x.argmax({1}).to_vector<uint32_t>(), (std::vector<uint32_t>{2, 0}));
  EXPECT_EQ(x.argmin({1}).to_vector<uint32_t>(), (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(x.argmax({0}).to_vector<uint32_t>(), (std::vector<uint32_t>{1, 1, 0}));
  EXPECT_EQ(x.argmax({0}).dtype(), DType::U32);
  // Over both dims the index is row-major over the reduced dims.
  EXPECT_EQ(x.argmax({0, 1}).item(), 2.0);
  EXPECT_EQ(x.argmin({0, 1}).item(), 1.0);
  EXPECT_EQ(x.argmin({0, 1}, true).shape(), (Shape{1, 1}));
}

TEST(Reduce, ArgOfTiesGivesFirstIndex) {
  Tensor x = Tensor::from_vector<float>({2, 5, 5, 1, 1, 5}, Shape{6});
  EXPECT_EQ(x.argmax({0}).item(), 1.0);
  EXPECT_EQ(x.argmin({0}).item(), 3.0);
  Tensor z = Tensor::from_vector<float>({-0.0f, 0.0f, -0.0f}, Shape{3});
  EXPECT_EQ(z.argmax({0}).item(), 0.0);
  EXPECT_EQ(z.argmin({0}).item(), 0.0);
  // All equal to the lowest value: the first index still.
  Tensor inf = Tensor::from_vector<float>({-INFINITY, -INFINITY}, Shape{2});
  EXPECT_EQ(inf.argmax({0}).item(), 0.0);
  EXPECT_EQ(inf.max({0}).item(), -INFINITY);
  Tensor lo = Tensor::from_vector<int64_t>({INT64_MIN, INT64_MIN, INT64_MIN}, Shape{3});
  EXPECT_EQ(lo.argmax({0}).item(), 0.0);
  Tensor hi = Tensor::from_vector<uint8_t>({255, 255}, Shape{2});
  EXPECT_EQ(hi.argmin({0}).item(), 0.0);
}

TEST(Reduce, NaNPropagatesThroughMinMaxAndArgGivesFirstNaN) {
  for (DType dt : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    Tensor x = make({1, kNaN, 9, kNaN, -3, 4, 2, 8}, Shape{2, 4}, dt);
    auto mx = x.max({1}).to_f64_vector();
    EXPECT_TRUE(std::isnan(mx[0]));
    EXPECT_EQ(mx[1], 8.0);
    auto mn = x.min({1}).to_f64_vector();
    EXPECT_TRUE(std::isnan(mn[0]));
    EXPECT_EQ(mn[1], -3.0);
    EXPECT_EQ(x.argmax({1}).to_vector<uint32_t>(), (std::vector<uint32_t>{1, 3}));
    EXPECT_EQ(x.argmin({1}).to_vector<uint32_t>(), (std::vector<uint32_t>{1, 0}));
    // Down the columns (NaN in columns 1 and 3 at row 0).
    EXPECT_EQ(x.argmin({0}).to_vector<uint32_t>(), (std::vector<uint32_t>{1, 0, 1, 0}));
    auto cmx = x.max({0}).to_f64_vector();
    EXPECT_EQ(cmx[0], 1.0);
    EXPECT_TRUE(std::isnan(cmx[1]));
    EXPECT_TRUE(std::isnan(x.sum({1}).to_f64_vector()[0]));
  }
}

TEST(Reduce, IntegerSumsWrapInTheDType) {
  EXPECT_EQ(Tensor::from_vector<uint8_t>({200, 100}, Shape{2}).sum({0}).to_vector<uint8_t>()[0], 44);
  EXPECT_EQ(Tensor::from_vector<int32_t>({INT32_MAX, 1}, Shape{2}).sum({0}).to_vector<int32_t>()[0],
            INT32_MIN);
  EXPECT_EQ(Tensor::from_vector<uint32_t>({0xffffffffu, 2}, Shape{2}).sum({0}).to_vector<uint32_t>()[0], 1u);
  EXPECT_EQ(Tensor::from_vector<int64_t>({INT64_MIN, -1}, Shape{2}).sum({0}).to_vector<int64_t>()[0],
            INT64_MAX);
  // Column path too (sum over dim 0 of a [2,2]).
  EXPECT_EQ(Tensor::from_vector<uint8_t>({250, 1, 10, 2}, Shape{2, 2}).sum({0}).to_vector<uint8_t>(),
            (std::vector<uint8_t>{4, 3}));
}

TEST(Reduce, HalfSumsAccumulateInF32) {
  // 2048 + 1 + 1: an f16 accumulator would stay at 2048 (2049 rounds to even); f32 reaches 2050.
  EXPECT_EQ(make({2048, 1, 1}, Shape{3}, DType::F16).sum({0}).item(), 2050.0);
  EXPECT_EQ(make({2048, 1, 1}, Shape{3, 1}, DType::F16).sum({0}).item(), 2050.0);
  // bf16 has 8 significant bits: 256 + 1 + 1 needs the f32 accumulator too.
  EXPECT_EQ(make({256, 1, 1}, Shape{3}, DType::BF16).sum({0}).item(), 258.0);
}

// --- every op x dtype x layout x dims against the float64 reference ------------------------------

TEST(Reduce, EveryOpDTypeLayoutAndDimsMatchReference) {
  const std::vector<std::vector<int64_t>> dim_sets = {{0},    {1},    {2},       {0, 1},
                                                      {0, 2}, {1, 2}, {0, 1, 2}, {-1, 0}};
  const ReduceOp ops[] = {ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max, ReduceOp::ArgMin, ReduceOp::ArgMax};
  uint32_t seed = 1;
  for (DType dt : kAllDTypes) {
    for (const auto& kind : testing::view_kinds()) {
      Input in = kind.build(dt, 3, 4, 5, seed++);
      for (const auto& ds : dim_sets) {
        std::vector<size_t> red;
        for (int64_t d : ds) red.push_back(size_t(d < 0 ? d + 3 : d));
        std::sort(red.begin(), red.end());
        for (ReduceOp op : ops) {
          std::string what = std::string(dtype_name(dt)) + " " + kind.name + " " +
                             std::string(reduce_op_name(op)) + " dims " + Shape(red).str();
          std::vector<double> want = refs::reduce(op, in.v, {3, 4, 5}, red);
          if (op == ReduceOp::Sum) {
            for (auto& w : want) w = wrap_or_round(dt, w);
          }
          Tensor keep = in.t.reduce(op, ds, true);
          std::vector<size_t> kd = {3, 4, 5};
          for (size_t d : red) kd[d] = 1;
          EXPECT_EQ(keep.shape(), Shape(kd)) << what;
          EXPECT_EQ(keep.dtype(), op == ReduceOp::ArgMin || op == ReduceOp::ArgMax ? DType::U32 : dt) << what;
          expect_same(keep.to_f64_vector(), want, what);
          Tensor drop = in.t.reduce(op, ds, false);
          EXPECT_EQ(drop.rank(), 3 - red.size()) << what;
          expect_same(drop.to_f64_vector(), want, what + " (no keepdim)");
        }
      }
    }
  }
}

TEST(Reduce, SizeOneDimsAndScalars) {
  Tensor x = Tensor::from_vector<float>({4, -2, 7}, Shape{1, 3, 1});
  EXPECT_EQ(x.sum({0}).shape(), (Shape{3, 1}));
  EXPECT_EQ(x.sum({0}).to_vector<float>(), (std::vector<float>{4, -2, 7}));
  EXPECT_EQ(x.max({2}).to_vector<float>(), (std::vector<float>{4, -2, 7}));
  EXPECT_EQ(x.argmax({0, 2}).to_vector<uint32_t>(), (std::vector<uint32_t>{0, 0, 0}));
  EXPECT_EQ(x.argmax({1}).item(), 2.0);
  EXPECT_EQ(x.argmin({0, 1, 2}).item(), 1.0);
  Tensor s = Tensor::from_vector<double>({5.5}, Shape{});
  EXPECT_EQ(s.sum_all().rank(), 0u);
  EXPECT_EQ(s.sum_all().item(), 5.5);
}

TEST(Reduce, ZeroSizeInputs) {
  Tensor x = Tensor::zeros(Shape{2, 0, 3});
  Tensor s = x.sum({1});
  EXPECT_EQ(s.shape(), (Shape{2, 3}));
  EXPECT_EQ(s.to_vector<float>(), std::vector<float>(6, 0.0f));
  EXPECT_EQ(x.sum_all().item(), 0.0);
  // Reducing a non-empty dim of an empty tensor gives an empty result, for every op.
  EXPECT_EQ(x.max({2}).shape(), (Shape{2, 0}));
  EXPECT_EQ(x.argmin({0}, true).shape(), (Shape{1, 0, 3}));
  EXPECT_EQ(x.sum({0, 2}).shape(), (Shape{0}));
  EXPECT_EQ(Tensor::zeros(Shape{0}, DType::I64).sum({0}).item(), 0.0);
}

// --- long rows, columns and the general path at sizes that split across chunks and threads -------

std::vector<double> uniform(size_t n, uint32_t seed, double lo, double hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = double(float(d(rng)));  // exactly representable in f32
  return v;
}

TEST(Reduce, SumOfMillionPositiveF32IsPairwiseAccurate) {
  // A plain running f32 sum of 2^20 values near 0.5 drifts by ~1e-4 relative; pairwise summation stays
  // near f32 rounding of the result.
  size_t n = size_t(1) << 20;
  auto v = uniform(n, 7, 0.0, 1.0);
  double want = 0;
  for (double x : v) want += x;
  Tensor x = make(v, Shape{n}, DType::F32);
  EXPECT_NEAR(x.sum({0}).item(), want, 1e-6 * want);
  EXPECT_NEAR(x.sum_all().item(), want, 1e-6 * want);
  // The same values as 4 columns (column path, two-level blocking) and strided (general path).
  auto cols = x.reshape(Shape{n / 4, 4}).sum({0}).to_f64_vector();
  auto cols_want = refs::reduce(ReduceOp::Sum, v, {n / 4, 4}, {0});
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(cols[i], cols_want[i], 1e-5 * cols_want[i]);
  Tensor t = x.reshape(Shape{1024, 1024}).t();  // sum over both dims of a transposed view
  EXPECT_NEAR(t.sum({0, 1}).item(), want, 1e-5 * want);
}

TEST(Reduce, LongRowsAcrossChunksMatchReference) {
  // Rows longer than the CPU backend's chunk (16384), contiguous and strided, every op.
  size_t rows = 3, len = 40000;
  auto v = uniform(rows * len, 11, -100.0, 100.0);
  // Plant ties across chunk boundaries and a NaN in a late chunk of row 2.
  v[0 * len + 100] = 500;
  v[0 * len + 30000] = 500;
  v[1 * len + 20000] = -500;
  v[1 * len + 39999] = -500;
  v[2 * len + 35000] = kNaN;
  v[2 * len + 36000] = kNaN;
  Tensor x = make(v, Shape{rows, len}, DType::F32);
  Tensor xt = make(v, Shape{rows, len}, DType::F32).t().contiguous().t();  // same values, strided
  for (const Tensor& in : {x, xt}) {
    EXPECT_EQ(in.argmax({1}).to_vector<uint32_t>()[0], 100u);
    EXPECT_EQ(in.argmin({1}).to_vector<uint32_t>()[1], 20000u);
    EXPECT_EQ(in.argmax({1}).to_vector<uint32_t>()[2], 35000u);
    EXPECT_EQ(in.argmin({1}).to_vector<uint32_t>()[2], 35000u);
    for (ReduceOp op : {ReduceOp::Min, ReduceOp::Max, ReduceOp::ArgMin, ReduceOp::ArgMax}) {
      expect_same(in.reduce(op, {1}, false).to_f64_vector(), refs::reduce(op, v, {rows, len}, {1}),
                  std::string(reduce_op_name(op)));
    }
    auto s = in.sum({1}).to_f64_vector();
    auto want = refs::reduce(ReduceOp::Sum, v, {rows, len}, {1});
    double sum_abs = 50.0 * double(len);  // E|x| = 50 for x uniform in [-100, 100]
    EXPECT_NEAR(s[0], want[0], 1e-6 * sum_abs);
    EXPECT_NEAR(s[1], want[1], 1e-6 * sum_abs);
    EXPECT_TRUE(std::isnan(s[2]));
  }
}

TEST(Reduce, ManyRowsInPiecesMatchReference) {
  // The rows path hands rows to the threads in pieces of about 128 KiB: 301 rows of
  // 1000 f32 (32 rows a piece, the last one short) and of 1000 bf16, every op.
  size_t rows = 301, len = 1000;
  for (DType dt : {DType::F32, DType::BF16}) {
    auto v = uniform(rows * len, 12, -100.0, 100.0);
    if (dt == DType::BF16)
      for (double& x : v) x = double(float(bf16(float(x))));  // the values bf16 holds
    v[150 * len + 999] = 1000;                                // a row's extreme in its last element
    Tensor x = make(v, Shape{rows, len}, dt);
    for (ReduceOp op : {ReduceOp::Min, ReduceOp::Max, ReduceOp::ArgMin, ReduceOp::ArgMax}) {
      expect_same(x.reduce(op, {1}, false).to_f64_vector(), refs::reduce(op, v, {rows, len}, {1}),
                  std::string(reduce_op_name(op)) + " " + std::string(dtype_name(dt)));
    }
    auto s = x.sum({1}).to_f64_vector();
    auto want = refs::reduce(ReduceOp::Sum, v, {rows, len}, {1});
    ASSERT_EQ(s.size(), rows);
    // f32 accumulation, rounded once to the dtype (bf16: 2^-8 of the sum's magnitude)
    for (size_t r = 0; r < rows; ++r)
      EXPECT_NEAR(s[r], want[r],
                  1e-5 * 50.0 * double(len) + (dt == DType::BF16 ? std::fabs(want[r]) / 256 : 0))
          << dtype_name(dt) << " row " << r;
  }
}

TEST(Reduce, WideColumnsMatchReference) {
  // [outer, e, inner] with inner wider than one column block (256) and e over one row block (64).
  size_t a = 3, e = 70, c = 600;
  auto v = testing::sample_values(a * e * c, DType::F32, 5);
  Tensor x = make(v, Shape{a, e, c}, DType::F32);
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max, ReduceOp::ArgMin, ReduceOp::ArgMax}) {
    expect_same(x.reduce(op, {1}, false).to_f64_vector(), refs::reduce(op, v, {a, e, c}, {1}),
                std::string(reduce_op_name(op)));
  }
}

TEST(Reduce, ColumnSumsOfEveryFloatDTypeMatchReference) {
  // The column path's vector kernel: row counts that leave 1-3 rows after the passes of four rows
  // (67 crosses a 64-row block), widths with a partial last vector and past one column block (2048).
  for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
    for (size_t e : {1, 3, 4, 6, 67}) {
      for (size_t c : {1, 5, 16, 37, 2100}) {
        for (size_t a : {1, 2}) {
          auto v = testing::sample_values(a * e * c, dt, uint32_t(e * 131 + c));
          Tensor x = make(v, Shape{a, e, c}, dt);
          auto want = refs::reduce(ReduceOp::Sum, v, {a, e, c}, {1});
          for (double& w : want) w = round_to(dt, w);  // exact in f32, rounded once to the dtype
          expect_same(x.sum({1}).to_f64_vector(), want,
                      std::string(dtype_name(dt)) + " " + std::to_string(a) + "x" + std::to_string(e) + "x" +
                          std::to_string(c));
        }
      }
    }
  }
}

TEST(Reduce, NarrowColumnsSplitByRowsMatchReference) {
  // [e, inner] with a narrow inner: too few column blocks for the threads, so on a multi-core machine the
  // CPU splits the rows into ranges whose states merge in order (ties and a NaN across the ranges).
  size_t e = 5000, c = 7;
  auto v = testing::sample_values(e * c, DType::F32, 21);
  v[4000 * c + 3] = kNaN;
  v[4500 * c + 3] = kNaN;
  Tensor x = make(v, Shape{e, c}, DType::F32);
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max, ReduceOp::ArgMin, ReduceOp::ArgMax}) {
    expect_same(x.reduce(op, {0}, false).to_f64_vector(), refs::reduce(op, v, {e, c}, {0}),
                std::string(reduce_op_name(op)));
  }
}

// --- cumsum ---------------------------------------------------------------------------------------

TEST(Cumsum, ByHand) {
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  EXPECT_EQ(x.cumsum(1).to_vector<float>(), (std::vector<float>{1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(x.cumsum(0).to_vector<float>(), (std::vector<float>{1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(x.cumsum(-1).shape(), (Shape{2, 3}));
  EXPECT_EQ(Tensor::from_vector<uint8_t>({200, 50, 10}, Shape{3}).cumsum(0).to_vector<uint8_t>(),
            (std::vector<uint8_t>{200, 250, 4}));
  // The running sum stays in f32 for f16: 2049 rounds to 2048 on output, 2050 is exact.
  EXPECT_EQ(make({2048, 1, 1}, Shape{3}, DType::F16).cumsum(0).to_f64_vector(),
            (std::vector<double>{2048, 2048, 2050}));
}

TEST(Cumsum, EveryDTypeLayoutAndDimMatchReference) {
  uint32_t seed = 100;
  for (DType dt : kAllDTypes) {
    for (const auto& kind : testing::view_kinds()) {
      Input in = kind.build(dt, 3, 4, 5, seed++);
      for (size_t dim = 0; dim < 3; ++dim) {
        std::string what = std::string(dtype_name(dt)) + " " + kind.name + " dim " + std::to_string(dim);
        auto want = refs::cumsum(in.v, {3, 4, 5}, dim, [dt](double x) { return wrap_or_round(dt, x); });
        Tensor y = in.t.cumsum(int64_t(dim));
        EXPECT_EQ(y.shape(), (Shape{3, 4, 5})) << what;
        EXPECT_EQ(y.dtype(), dt) << what;
        expect_same(y.to_f64_vector(), want, what);
      }
    }
  }
}

TEST(Cumsum, WideAndZeroSize) {
  size_t a = 2, len = 50, inner = 1500;  // inner spans two scan blocks
  auto v = testing::sample_values(a * len * inner, DType::F64, 9);
  Tensor x = make(v, Shape{a, len, inner}, DType::F64);
  expect_same(x.cumsum(1).to_f64_vector(), refs::cumsum(v, {a, len, inner}, 1, [](double x) { return x; }),
              "wide");
  Tensor z = Tensor::zeros(Shape{0, 4});
  EXPECT_EQ(z.cumsum(1).shape(), (Shape{0, 4}));
}

// --- errors ---------------------------------------------------------------------------------------

TEST(ReduceErrors, DimOutOfRange) {
  Tensor x = Tensor::zeros(Shape{2, 3});
  expect_error([&] { x.sum({2}); }, ErrorKind::DimOutOfRange, {"[sum]", "dim 2", "rank 2"});
  expect_error([&] { x.max({-3}); }, ErrorKind::DimOutOfRange, {"[max]", "dim -3"});
  expect_error([&] { x.argmin({5}, true); }, ErrorKind::DimOutOfRange, {"[argmin]"});
  expect_error([&] { x.cumsum(2); }, ErrorKind::DimOutOfRange, {"[cumsum]", "dim 2"});
  expect_error([&] { Tensor::from_vector<float>({1}, Shape{}).cumsum(0); }, ErrorKind::DimOutOfRange,
               {"[cumsum]"});
}

TEST(ReduceErrors, DuplicateOrMissingDims) {
  Tensor x = Tensor::zeros(Shape{2, 3});
  expect_error([&] { x.sum({1, -1}); }, ErrorKind::InvalidArgument, {"[sum]", "twice"});
  expect_error([&] { x.sum({}); }, ErrorKind::InvalidArgument, {"[sum]", "no dims", "[2,3] f32"});
  expect_error([&] { x.argmax({}); }, ErrorKind::InvalidArgument, {"[argmax]", "no dims"});
}

TEST(ReduceErrors, EmptyMinMaxArg) {
  Tensor x = Tensor::zeros(Shape{2, 0}, DType::I32);
  expect_error([&] { x.max({1}); }, ErrorKind::InvalidArgument, {"[max]", "empty", "[2,0] i32"});
  expect_error([&] { x.min({1}); }, ErrorKind::InvalidArgument, {"[min]", "empty"});
  expect_error([&] { x.argmax({0, 1}); }, ErrorKind::InvalidArgument, {"[argmax]", "empty"});
  expect_error([&] { x.argmin({-1}); }, ErrorKind::InvalidArgument, {"[argmin]", "empty"});
}

TEST(ReduceErrors, UndefinedTensor) {
  Tensor u;
  expect_error([&] { u.sum({0}); }, ErrorKind::InvalidArgument, {"[sum]", "undefined"});
  expect_error([&] { u.sum_all(); }, ErrorKind::InvalidArgument, {"[sum_all]", "undefined"});
  expect_error([&] { u.cumsum(0); }, ErrorKind::InvalidArgument, {"[cumsum]", "undefined"});
}

}  // namespace
}  // namespace wick
