// In-place ops whose source shares storage with the destination: scatter_ / scatter_add_
// and slice_set_ read what the source held before the op (the front end copies an
// overlapping source out first), and fill_ of a broadcast view, which would write one
// element several times, is refused. Expected values are worked out by hand from the
// values before the op.
#include <gtest/gtest.h>

#include "reduce_test_util.h"
#include "wick/tensor.h"

namespace wick {
namespace {

using testing::expect_error;

TEST(Aliasing, ScatterFromItselfReadsTheOldValues) {
  // t[0, ids[j]] = t[0, j]: a reversal. Reading t while writing it gave [1, 2, 2, 1].
  Tensor t = Tensor::from_vector<float>({1, 2, 3, 4}, Shape{1, 4});
  t.scatter_(Tensor::from_vector<uint32_t>({3, 2, 1, 0}, Shape{1, 4}), t, 1);
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{4, 3, 2, 1}));
}

TEST(Aliasing, ScatterAddFromItselfReadsTheOldValues) {
  // Every old element added to t[0, 1]: 2 + (1 + 2 + 3 + 4) = 12 (13 when t[0, 1] was re-read).
  Tensor t = Tensor::from_vector<int32_t>({1, 2, 3, 4}, Shape{1, 4});
  t.scatter_add_(Tensor::from_vector<int64_t>({1, 1, 1, 1}, Shape{1, 4}), t, 1);
  EXPECT_EQ(t.to_vector<int32_t>(), (std::vector<int32_t>{1, 12, 3, 4}));
}

TEST(Aliasing, ScatterFromAnOverlappingViewReadsTheOldValues) {
  // t[0, 2..6) = old t[0, 0..4); written in order, t[0, 4] would read the new t[0, 2].
  Tensor t = Tensor::from_vector<float>({0, 1, 2, 3, 4, 5, 6, 7}, Shape{1, 8});
  t.scatter_(Tensor::from_vector<uint8_t>({2, 3, 4, 5}, Shape{1, 4}), t.narrow(1, 0, 4), 1);
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{0, 1, 0, 1, 2, 3, 6, 7}));
}

TEST(Aliasing, ScatterWithIdsThatAreTheDestination) {
  // ids are read before anything is written: t[t_old[j]] = src[j].
  Tensor t = Tensor::from_vector<uint32_t>({3, 2, 1, 0}, Shape{1, 4});
  t.scatter_(t, Tensor::from_vector<uint32_t>({10, 20, 30, 40}, Shape{1, 4}), 1);
  EXPECT_EQ(t.to_vector<uint32_t>(), (std::vector<uint32_t>{40, 30, 20, 10}));
}

TEST(Aliasing, ScatterFromADisjointViewOfTheSameStorage) {
  // Shared storage, no shared elements: row 0 of a [2, 3] tensor from its row 1.
  Tensor t = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  Tensor row0 = t.narrow(0, 0, 1);
  row0.scatter_(Tensor::from_vector<int32_t>({2, 0, 1}, Shape{1, 3}), t.narrow(0, 1, 1), 1);
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{5, 6, 4, 4, 5, 6}));
}

TEST(Aliasing, SliceSetFromAnOverlappingViewOfItself) {
  // t[3..9) = old t[0..6): the ranges overlap (a memcpy with overlapping ranges before).
  std::vector<float> v = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  Tensor t = Tensor::from_vector(v, Shape{10});
  t.slice_set_(t.narrow(0, 0, 6), 0, 3);
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{0, 1, 2, 0, 1, 2, 3, 4, 5, 9}));
  // Along an inner dim of a 2-D tensor: columns 1..3 of each row = old columns 0..2.
  Tensor m = Tensor::from_vector<int64_t>({1, 2, 3, 4, 5, 6, 7, 8}, Shape{2, 4});
  m.slice_set_(m.narrow(1, 0, 3), 1, 1);
  EXPECT_EQ(m.to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 2, 3, 5, 5, 6, 7}));
  // Onto itself: unchanged.
  m.slice_set_(m, 0, 0);
  EXPECT_EQ(m.to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 2, 3, 5, 5, 6, 7}));
}

TEST(Aliasing, FillOfABroadcastViewIsRefused) {
  Tensor base = Tensor::zeros(Shape{1, 3});
  Tensor b = base.broadcast_as(Shape{4, 3});
  expect_error([&] { b.fill_(Scalar(2.0)); }, ErrorKind::InvalidArgument, {"[fill_]", "broadcast", "[4,3]"});
  EXPECT_EQ(base.to_vector<float>(), (std::vector<float>{0, 0, 0}));
  // A broadcast that repeats nothing (a size-1 dim) and other strided views are filled.
  base.broadcast_as(Shape{1, 3}).fill_(Scalar(1.0));
  EXPECT_EQ(base.to_vector<float>(), (std::vector<float>{1, 1, 1}));
  Tensor m = Tensor::zeros(Shape{2, 3}, DType::I32);
  m.t().narrow(0, 1, 1).fill_(Scalar(7.0));
  EXPECT_EQ(m.to_vector<int32_t>(), (std::vector<int32_t>{0, 7, 0, 0, 7, 0}));
}

}  // namespace
}  // namespace wick
