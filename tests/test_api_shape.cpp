// Creation and shape ops of the composite API on the CPU: eye, linspace, *_like, expand,
// repeat, pad, split, split_with_sizes, tril / triu, matmul with 1-D operands, and external
// memory (from_blob, data_ptr). Expected values are written out or computed here from the
// definitions; every error path has its kind and message asserted.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "api_test_util.h"
#include "wick/check.h"

namespace wick {
namespace {

using namespace api_test;

// The row-major values 0, 1, ... of a [r, c] matrix.
V iota(size_t n, double start = 0) {
  V v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + double(i);
  return v;
}

// ---- creation -----------------------------------------------------------------------------

TEST(Eye, SquareAndRectangularInEveryDType) {
  for (DType dt : kAllDTypes) {
    expect_values(Tensor::eye(3, dt), dt, Shape{3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1}, 0);
    expect_values(Tensor::eye(2, 3, dt), dt, Shape{2, 3}, {1, 0, 0, 0, 1, 0}, 0);
    expect_values(Tensor::eye(3, 1, dt), dt, Shape{3, 1}, {1, 0, 0}, 0);
  }
  EXPECT_EQ(Tensor::eye(0).shape(), Shape({0, 0}));
  EXPECT_EQ(Tensor::eye(2, 0).shape(), Shape({2, 0}));
}

TEST(Linspace, EndpointsAndSymmetricSteps) {
  // PyTorch's definition: start + i*step for the first half, end - (steps-1-i)*step after.
  const double start = -1, end = 2.5;
  const size_t steps = 7;
  const double step = (end - start) / 6;
  V want(steps);
  for (size_t i = 0; i < steps; ++i) want[i] = i < 3 ? start + step * double(i) : end - step * double(6 - i);
  for (DType dt : kFloats) expect_values(Tensor::linspace(start, end, steps, dt), dt, Shape{7}, want, 0);
  expect_values(Tensor::linspace(0, 10, 5, DType::I32), DType::I32, Shape{5}, {0, 2, 5, 7, 10},
                0);  // 2.5 -> 2
  expect_values(Tensor::linspace(3, 3, 1), DType::F32, Shape{1}, {3}, 0);
  expect_values(Tensor::linspace(5, -5, 3, DType::F64), DType::F64, Shape{3}, {5, 0, -5}, 0);
  EXPECT_EQ(Tensor::linspace(0, 1, 0).shape(), Shape({0}));
  expect_error([] { (void)Tensor::linspace(0, kInf, 3); }, ErrorKind::InvalidArgument,
               "[linspace] start 0 end inf steps 3: start and end must be finite");
}

TEST(Like, ShapeDTypeAndDeviceOfTheModel) {
  Tensor m = make(iota(6), Shape{2, 3}, DType::BF16).t();  // a strided view: the result is contiguous
  Tensor z = Tensor::zeros_like(m), o = Tensor::ones_like(m), f = Tensor::full_like(m, -2.5);
  expect_values(z, DType::BF16, Shape{3, 2}, V(6, 0), 0);
  expect_values(o, DType::BF16, Shape{3, 2}, V(6, 1), 0);
  expect_values(f, DType::BF16, Shape{3, 2}, V(6, -2.5), 0);
  EXPECT_TRUE(z.is_contiguous());
  expect_error([] { (void)Tensor::zeros_like(Tensor()); }, ErrorKind::InvalidArgument,
               "[zeros_like] tensor is an undefined tensor");
}

// ---- views ------------------------------------------------------------------------------------

TEST(Expand, BroadcastsSizeOneDimsAndAddsLeadingOnes) {
  Tensor t = make({1, 2, 3}, Shape{3, 1}, DType::F32);
  Tensor e = t.expand({2, 3, 4});
  EXPECT_EQ(e.storage(), t.storage());  // a view
  V want;
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) want.push_back(i + 1);
  expect_values(e, DType::F32, Shape{2, 3, 4}, want, 0);
  expect_values(t.expand({-1, 2}), DType::F32, Shape{3, 2}, {1, 1, 2, 2, 3, 3}, 0);
  expect_values(t.expand({3, 1}), DType::F32, Shape{3, 1}, {1, 2, 3}, 0);
}

TEST(Expand, Errors) {
  Tensor t = make({1, 2, 3}, Shape{3, 1}, DType::F32);
  expect_error([&] { (void)t.expand({4}); }, ErrorKind::ShapeMismatch,
               "[expand] sizes [4] have fewer dims than tensor [3,1] f32");
  expect_error(
      [&] {
        (void)t.expand({2, 2});
      },
      ErrorKind::ShapeMismatch,
      "[expand] tensor [3,1] f32 cannot expand to [2,2]: dim 0 has size 3, not 1 or 2");
  expect_error(
      [&] {
        (void)t.expand({-1, 3, 1});
      },
      ErrorKind::InvalidArgument, "[expand] size -1 at dim 0 of [-1,3,1]");
  expect_error([&] { (void)t.expand({3, -2}); }, ErrorKind::InvalidArgument, "[expand] size -2 at dim 1");
}

TEST(Split, EqualPiecesAndGivenSizesAreViews) {
  Tensor t = make(iota(10), Shape{2, 5}, DType::I32);
  std::vector<Tensor> p = t.split(2, 1);
  ASSERT_EQ(p.size(), 3u);
  expect_values(p[0], DType::I32, Shape{2, 2}, {0, 1, 5, 6}, 0);
  expect_values(p[1], DType::I32, Shape{2, 2}, {2, 3, 7, 8}, 0);
  expect_values(p[2], DType::I32, Shape{2, 1}, {4, 9}, 0);
  EXPECT_EQ(p[1].storage(), t.storage());
  std::vector<Tensor> q = t.split_with_sizes({1, 0, 4}, -1);
  ASSERT_EQ(q.size(), 3u);
  expect_values(q[0], DType::I32, Shape{2, 1}, {0, 5}, 0);
  EXPECT_EQ(q[1].shape(), Shape({2, 0}));
  expect_values(q[2], DType::I32, Shape{2, 4}, {1, 2, 3, 4, 6, 7, 8, 9}, 0);
  ASSERT_EQ(t.split(5, 0).size(), 1u);
  ASSERT_EQ(Tensor::zeros({0, 3}).split(2).size(), 1u);
}

TEST(Split, Errors) {
  Tensor t = Tensor::zeros({2, 5});
  expect_error([&] { (void)t.split(0, 1); }, ErrorKind::InvalidArgument,
               "[split] pieces of size 0 along dim 1 of [2,5] f32");
  expect_error([&] { (void)t.split(1, 2); }, ErrorKind::DimOutOfRange,
               "[split] dim 2 out of range for rank 2");
  expect_error(
      [&] {
        (void)t.split_with_sizes({2, 2}, 1);
      },
      ErrorKind::ShapeMismatch, "[split_with_sizes] sizes [2,2] add up to 4, dim 1 of [2,5] f32 has size 5");
}

// ---- copies -------------------------------------------------------------------------------------

TEST(Repeat, TilesAlongEveryDim) {
  Tensor t = make({1, 2, 3, 4}, Shape{2, 2}, DType::F16);
  // numpy.tile([[1, 2], [3, 4]], (2, 3))
  expect_values(t.repeat({2, 3}), DType::F16, Shape{4, 6},
                {1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}, 0);
  // extra leading reps add dims; a transposed input tiles its logical values
  expect_values(t.t().repeat({2, 1, 1}), DType::F16, Shape{2, 2, 2}, {1, 3, 2, 4, 1, 3, 2, 4}, 0);
  EXPECT_EQ(t.repeat({0, 1}).shape(), Shape({0, 2}));
  expect_values(make({7}, Shape{}, DType::I64).repeat({3}), DType::I64, Shape{3}, {7, 7, 7}, 0);
  expect_error([&] { (void)t.repeat({2}); }, ErrorKind::ShapeMismatch,
               "[repeat] 1 repeats given for tensor [2,2] f16 of rank 2");
  expect_error(
      [&] {
        (void)t.repeat({size_t(1) << 62, 8});
      },
      ErrorKind::InvalidArgument, "[repeat] the result's size overflows");
}

TEST(Pad, ConstantWidthsPerDim) {
  Tensor t = make({1, 2, 3, 4}, Shape{2, 2}, DType::I32);
  // numpy.pad([[1, 2], [3, 4]], ((1, 0), (2, 1)), constant_values=9)
  expect_values(t.pad({{1, 0}, {2, 1}}, 9), DType::I32, Shape{3, 5},
                {9, 9, 9, 9, 9, 9, 9, 1, 2, 9, 9, 9, 3, 4, 9}, 0);
  expect_values(t.t().pad({{0, 1}, {0, 0}}), DType::I32, Shape{3, 2}, {1, 3, 2, 4, 0, 0}, 0);
  Tensor same = t.pad({{0, 0}, {0, 0}});
  EXPECT_NE(same.storage(), t.storage());  // always a new tensor
  expect_values(same, DType::I32, Shape{2, 2}, {1, 2, 3, 4}, 0);
  expect_values(make({1, 2}, Shape{2}, DType::F32).pad({{1, 1}}, kNaN), DType::F32, Shape{4},
                {kNaN, 1, 2, kNaN}, 0);
  expect_error(
      [&] {
        (void)t.pad({{1, 1}});
      },
      ErrorKind::ShapeMismatch, "[pad] 1 {before, after} pairs given for tensor [2,2] i32 of rank 2");
}

TEST(Triangles, TrilAndTriuWithDiagonalOffsets) {
  Tensor t = make(iota(12, 1), Shape{3, 4}, DType::F32);
  auto tri = [&](bool lower, int64_t k) {
    V w = iota(12, 1);
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 4; ++j)
        if (lower ? j - i > k : j - i < k) w[size_t(i * 4 + j)] = 0;
    return w;
  };
  for (int64_t k : {-4, -1, 0, 1, 3}) {
    expect_values(t.tril(k), DType::F32, Shape{3, 4}, tri(true, k), 0, "tril " + std::to_string(k));
    expect_values(t.triu(k), DType::F32, Shape{3, 4}, tri(false, k), 0, "triu " + std::to_string(k));
  }
  // batched: every matrix of the batch
  Tensor b = make(iota(8, 1), Shape{2, 2, 2}, DType::U8);
  expect_values(b.tril(), DType::U8, Shape{2, 2, 2}, {1, 0, 3, 4, 5, 0, 7, 8}, 0);
  expect_error([] { (void)Tensor::zeros({3}).tril(); }, ErrorKind::ShapeMismatch,
               "[tril] tensor [3] f32 needs rank >= 2");
  expect_error([] { (void)Tensor::zeros({3}).triu(); }, ErrorKind::ShapeMismatch, "[triu]");
}

// ---- matmul with 1-D operands ----------------------------------------------------------------

TEST(MatmulVectors, NumPysOneDimensionalRules) {
  const V a = {1, 2, 3, 4, 5, 6};  // (2, 3)
  const V x = {1, -1, 2};          // (3)
  for (DType dt : kFloats) {
    Tensor m = make(a, Shape{2, 3}, dt), v = make(x, Shape{3}, dt);
    expect_values(m.matmul(v), dt, Shape{2}, {1 - 2 + 6, 4 - 5 + 12}, 0, "mat-vec");
    expect_values(v.matmul(m.t()), dt, Shape{2}, {5, 11}, 0, "vec-mat");
    expect_values(v.matmul(v), dt, Shape{}, {6}, 0, "vec-vec");
    Tensor batch = make(iota(12), Shape{2, 2, 3}, dt);  // (2, 2, 3) x (3) -> (2, 2)
    expect_values(batch.matmul(v), dt, Shape{2, 2}, {0 - 1 + 4, 3 - 4 + 10, 6 - 7 + 16, 9 - 10 + 22}, 0,
                  "batched");
    Tensor bt = make(iota(12), Shape{2, 3, 2}, dt);  // (3) x (2, 3, 2) -> (2, 2)
    expect_values(v.matmul(bt), dt, Shape{2, 2}, {0 - 2 + 8, 1 - 3 + 10, 6 - 8 + 20, 7 - 9 + 22}, 0,
                  "vec-batched");
  }
}

// ---- external memory -------------------------------------------------------------------------

TEST(FromBlob, WrapsHostMemoryWithoutACopy) {
  std::vector<float> buf = {1, 2, 3, 4, 5, 6};
  Tensor t = Tensor::from_blob(buf.data(), Shape{2, 3}, DType::F32);
  EXPECT_EQ(t.data_ptr(), buf.data());
  expect_values(t, DType::F32, Shape{2, 3}, {1, 2, 3, 4, 5, 6}, 0);
  buf[4] = 50;  // the tensor sees the caller's writes
  expect_values(t.narrow(1, 1, 1), DType::F32, Shape{2, 1}, {2, 50}, 0);
  t.fill_(Scalar(7.0));  // and writes through
  EXPECT_EQ(buf, (std::vector<float>(6, 7)));
  expect_values(t + 1, DType::F32, Shape{2, 3}, V(6, 8), 0);
}

TEST(FromBlob, TheDeleterRunsOnceWhenTheLastViewGoes) {
  int calls = 0;
  void* seen = nullptr;
  auto* mem = new int64_t[4]{1, 2, 3, 4};
  {
    Tensor view;
    {
      Tensor t = Tensor::from_blob(mem, Shape{4}, DType::I64, Device::cpu(), [&](void* p) {
        ++calls;
        seen = p;
        delete[] static_cast<int64_t*>(p);
      });
      view = t.narrow(0, 2, 2);
    }
    EXPECT_EQ(calls, 0);  // the view still holds the storage
    expect_values(view, DType::I64, Shape{2}, {3, 4}, 0);
  }
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen, mem);
}

TEST(FromBlob, Errors) {
  alignas(8) unsigned char bytes[16] = {};
  expect_error([&] { (void)Tensor::from_blob(bytes + 2, Shape{2}, DType::F32); }, ErrorKind::InvalidArgument,
               "[from_blob] data at 0x");
  expect_error([&] { (void)Tensor::from_blob(bytes + 2, Shape{2}, DType::F32); }, ErrorKind::InvalidArgument,
               "for [2] f32 is not aligned to its 4-byte elements");
  expect_error([] { (void)Tensor::from_blob(nullptr, Shape{2}, DType::U8); }, ErrorKind::InvalidArgument,
               "[from_blob] null data for [2] u8");
  expect_error([&] { (void)Tensor::from_blob(bytes, Shape{2}, DType(12)); }, ErrorKind::UnsupportedDType,
               "[from_blob] unknown dtype 12");
  EXPECT_EQ(Tensor::from_blob(nullptr, Shape{0, 3}, DType::F32).shape(),
            Shape({0, 3}));  // nothing to point at
}

TEST(FromBlob, WrapsDeviceMemoryOnAGpu) {
  std::string why;
  if (!check::device_present(Device::gpu(0), &why)) GTEST_SKIP() << "no GPU: " << why;
  const Device g = Device::gpu(0);
  Tensor owner = make(iota(6), Shape{2, 3}, DType::F32, g);
  int calls = 0;
  {
    Tensor t = Tensor::from_blob(owner.data_ptr(), Shape{3, 2}, DType::F32, g, [&](void*) { ++calls; });
    EXPECT_EQ(t.data_ptr(), owner.data_ptr());
    EXPECT_EQ(t.device(), g);
    expect_values(t, DType::F32, Shape{3, 2}, iota(6), 0);
    expect_values(t.t() * 2, DType::F32, Shape{2, 3}, {0, 4, 8, 2, 6, 10}, 0);
    t.narrow(0, 1, 1).fill_(Scalar(-1.0));  // writes through to the owner's memory
    expect_values(owner, DType::F32, Shape{2, 3}, {0, 1, -1, -1, 4, 5}, 0);
  }
  EXPECT_EQ(calls, 1);  // the deleter ran (after the stream drained); the owner still holds its memory
  expect_values(owner + 1, DType::F32, Shape{2, 3}, {1, 2, 0, 0, 5, 6}, 0);
}

TEST(DataPtr, PointsAtTheFirstElementOfAView) {
  Tensor t = make(iota(6), Shape{2, 3}, DType::F64);
  const double* base = t.data_ptr<double>();
  EXPECT_EQ(base[4], 4.0);
  Tensor v = t.narrow(1, 1, 2);
  EXPECT_EQ(static_cast<const char*>(v.data_ptr()) - static_cast<const char*>(t.data_ptr()), 8);
  EXPECT_EQ(v.data_ptr<double>()[0], 1.0);
  expect_error([&] { (void)t.data_ptr<float>(); }, ErrorKind::DTypeMismatch,
               "[data_ptr] tensor [2,3] f64 read as f32");
  expect_error([] { (void)Tensor().data_ptr(); }, ErrorKind::InvalidArgument,
               "[data_ptr] tensor is an undefined tensor");
}

}  // namespace
}  // namespace wick
