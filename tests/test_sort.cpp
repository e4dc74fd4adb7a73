// argsort and sort along the last dim: hand-computed orders, stability, NaN placement, every dtype
// and layout against a std::stable_sort reference written here, and error paths.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "check/reduce_refs.h"
#include "reduce_test_util.h"

namespace wick {
namespace {

using testing::expect_error;
using testing::make;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(Argsort, ByHand) {
  Tensor x = Tensor::from_vector<float>({3, 1, 2}, Shape{3});
  EXPECT_EQ(x.argsort().to_vector<uint32_t>(), (std::vector<uint32_t>{1, 2, 0}));
  EXPECT_EQ(x.argsort(false).to_vector<uint32_t>(), (std::vector<uint32_t>{0, 2, 1}));
  EXPECT_EQ(x.argsort().dtype(), DType::U32);
  Tensor m = Tensor::from_vector<int64_t>({5, -7, 0, 9, 9, -1}, Shape{2, 3});
  EXPECT_EQ(m.argsort().to_vector<uint32_t>(), (std::vector<uint32_t>{1, 2, 0, 2, 0, 1}));
  EXPECT_EQ(m.argsort().shape(), (Shape{2, 3}));
}

TEST(Argsort, TiesKeepInputOrderInBothDirections) {
  Tensor x = Tensor::from_vector<int32_t>({2, 1, 2, 1, 2}, Shape{5});
  EXPECT_EQ(x.argsort(true).to_vector<uint32_t>(), (std::vector<uint32_t>{1, 3, 0, 2, 4}));
  EXPECT_EQ(x.argsort(false).to_vector<uint32_t>(), (std::vector<uint32_t>{0, 2, 4, 1, 3}));
  // -0.0 and 0.0 are equal, so they keep their order too.
  Tensor z = Tensor::from_vector<float>({0.0f, -0.0f, -1.0f, 0.0f}, Shape{4});
  EXPECT_EQ(z.argsort(true).to_vector<uint32_t>(), (std::vector<uint32_t>{2, 0, 1, 3}));
  EXPECT_EQ(z.argsort(false).to_vector<uint32_t>(), (std::vector<uint32_t>{0, 1, 3, 2}));
}

TEST(Argsort, NaNSortsLastInBothOrders) {
  for (DType dt : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    Tensor x = make({kNaN, 1, kNaN, 0, -INFINITY, INFINITY}, Shape{6}, dt);
    EXPECT_EQ(x.argsort(true).to_vector<uint32_t>(), (std::vector<uint32_t>{4, 3, 1, 5, 0, 2}));
    EXPECT_EQ(x.argsort(false).to_vector<uint32_t>(), (std::vector<uint32_t>{5, 1, 3, 4, 0, 2}));
  }
}

TEST(Argsort, EveryDTypeAndLayoutMatchesStableSortReference) {
  uint32_t seed = 3;
  for (DType dt : kAllDTypes) {
    for (const auto& kind : testing::view_kinds()) {
      auto in = kind.build(dt, 3, 4, 7, seed++);
      for (bool asc : {true, false}) {
        std::string what = std::string(dtype_name(dt)) + " " + kind.name + (asc ? " asc" : " desc");
        Tensor idx = in.t.argsort(asc);
        EXPECT_EQ(idx.shape(), (Shape{3, 4, 7})) << what;
        EXPECT_EQ(idx.to_vector<uint32_t>(), refs::argsort(in.v, 7, asc)) << what;
      }
    }
  }
}

TEST(Argsort, ManyLongRowsAcrossThreads) {
  size_t rows = 64, n = 5000;
  auto v = testing::sample_values(rows * n, DType::F32, 17);  // 81 distinct values: many ties per row
  Tensor x = make(v, Shape{rows, n}, DType::F32);
  EXPECT_EQ(x.argsort(true).to_vector<uint32_t>(), refs::argsort(v, n, true));
  EXPECT_EQ(x.argsort(false).to_vector<uint32_t>(), refs::argsort(v, n, false));
}

TEST(Argsort, SizeOneAndZeroSize) {
  EXPECT_EQ(Tensor::from_vector<float>({4}, Shape{1}).argsort().to_vector<uint32_t>(),
            (std::vector<uint32_t>{0}));
  EXPECT_EQ(Tensor::from_vector<float>({4, 2}, Shape{2, 1}).argsort().to_vector<uint32_t>(),
            (std::vector<uint32_t>{0, 0}));
  Tensor e = Tensor::zeros(Shape{3, 0});
  EXPECT_EQ(e.argsort().shape(), (Shape{3, 0}));
  EXPECT_EQ(e.argsort().dtype(), DType::U32);
  EXPECT_EQ(Tensor::zeros(Shape{0, 5}).sort().first.shape(), (Shape{0, 5}));
}

TEST(Sort, ValuesAndIndices) {
  Tensor x = Tensor::from_vector<float>({3, 1, 2, -5, 8, 8}, Shape{2, 3});
  auto [vals, idx] = x.sort();
  EXPECT_EQ(vals.to_vector<float>(), (std::vector<float>{1, 2, 3, -5, 8, 8}));
  EXPECT_EQ(idx.to_vector<uint32_t>(), (std::vector<uint32_t>{1, 2, 0, 0, 1, 2}));
  auto [dv, di] = x.sort(false);
  EXPECT_EQ(dv.to_vector<float>(), (std::vector<float>{3, 2, 1, 8, 8, -5}));
  EXPECT_EQ(di.to_vector<uint32_t>(), (std::vector<uint32_t>{0, 2, 1, 1, 2, 0}));
}

TEST(Sort, EveryDTypeStridedValuesFollowIndices) {
  uint32_t seed = 40;
  for (DType dt : kAllDTypes) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    auto in = testing::view_kinds()[2].build(dt, 2, 3, 9, seed++);  // transposed
    auto [vals, idx] = in.t.sort(false);
    auto want_idx = refs::argsort(in.v, 9, false);
    EXPECT_EQ(idx.to_vector<uint32_t>(), want_idx);
    auto got = vals.to_f64_vector();
    ASSERT_EQ(got.size(), want_idx.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], in.v[(i / 9) * 9 + want_idx[i]]) << i;
    EXPECT_EQ(vals.dtype(), dt);
  }
}

TEST(SortErrors, RankZeroAndUndefined) {
  Tensor s = Tensor::from_vector<float>({1}, Shape{});
  expect_error([&] { s.argsort(); }, ErrorKind::DimOutOfRange, {"[argsort]", "no last dim"});
  expect_error([&] { s.sort(); }, ErrorKind::DimOutOfRange, {"[sort]", "no last dim"});
  Tensor u;
  expect_error([&] { u.argsort(); }, ErrorKind::InvalidArgument, {"[argsort]", "undefined"});
  expect_error([&] { u.sort(); }, ErrorKind::InvalidArgument, {"[sort]", "undefined"});
}

}  // namespace
}  // namespace wick
