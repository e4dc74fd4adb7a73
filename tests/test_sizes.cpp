// Sizes that do not fit: element counts, byte counts, allocation rounding and op
// geometry whose products or sums exceed 2^63-1 are refused with an Error naming the
// op (base/checked.h), never wrapped into a small count that is then read or written
// past its end. Expected sizes are hand-computed.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "backend/backend.h"
#include "reduce_test_util.h"
#include "wick/tensor.h"

namespace wick {
namespace {

using testing::expect_error;

constexpr size_t k2to32 = size_t(1) << 32;
constexpr size_t k2to62 = size_t(1) << 62;
constexpr size_t k2to63 = size_t(1) << 63;
constexpr size_t kMax = std::numeric_limits<size_t>::max();

// --- element counts of the shapes ops are given or build ---------------------------

TEST(ShapeSizes, ElemCountNeverWraps) {
  EXPECT_EQ((Shape{k2to32, k2to32 / 2 - 1}).elem_count(), k2to32 * (k2to32 / 2 - 1));
  EXPECT_EQ((Shape{0, k2to62}).elem_count(), 0u);
  expect_error([] { (void)Shape({k2to32, k2to32}).elem_count(); }, ErrorKind::ShapeMismatch, {"[shape]"});
  expect_error([] { (void)Shape({k2to62 + 1, 4}).elem_count(); }, ErrorKind::ShapeMismatch, {"[shape]"});
  // The non-zero dims must fit even when another dim makes the tensor empty (NumPy's rule).
  expect_error([] { (void)Shape({0, k2to63, 2}).elem_count(); }, ErrorKind::ShapeMismatch, {"[shape]"});
}

TEST(ShapeSizes, CreationRefusesShapesWhoseSizeOverflows) {
  // 2^62+1 rows of 4 once wrapped to 4 elements over a 16-byte buffer.
  expect_error(
      [] {
        Tensor::zeros(Shape{k2to62 + 1, 4});
      },
      ErrorKind::ShapeMismatch, {"[zeros]", "[4611686018427387905,4]"});
  expect_error([] { Tensor::zeros(Shape{k2to32, k2to32}); }, ErrorKind::ShapeMismatch, {"[zeros]"});
  // 2^61 f32 elements count fine but are 2^63 bytes.
  expect_error([] { Tensor::empty(Shape{size_t(1) << 61}, DType::F32); }, ErrorKind::ShapeMismatch,
               {"[empty]", "f32"});
  expect_error([] { Tensor::full(Scalar(1.0), Shape{k2to63}, DType::U8); }, ErrorKind::ShapeMismatch,
               {"[full]"});
  expect_error([] { Tensor::ones(Shape{k2to32, k2to32}); }, ErrorKind::ShapeMismatch, {"[full]"});
  expect_error([] { Tensor::rand(Shape{k2to32, k2to32}); }, ErrorKind::ShapeMismatch, {"[rand]"});
  expect_error([] { Tensor::randn(Shape{k2to32, k2to32}); }, ErrorKind::ShapeMismatch, {"[randn]"});
  expect_error(
      [] {
        Tensor::from_vector(std::vector<float>{}, Shape{0, k2to63, 2});
      },
      ErrorKind::ShapeMismatch, {"[from_vector]"});
  // Empty tensors whose other dims fit are fine.
  EXPECT_EQ(Tensor::zeros(Shape{0, k2to62}, DType::U8).elem_count(), 0u);
}

TEST(ShapeSizes, ViewsAndReshapesRefuseOverflowingShapes) {
  // An empty tensor once reshaped to [2^63, 2]: 2^64 wrapped to 0 elements, "equal" to 0.
  expect_error(
      [] {
        Tensor::zeros(Shape{0}).reshape(Shape{k2to63, 2});
      },
      ErrorKind::ShapeMismatch, {"[reshape]"});
  expect_error(
      [] {
        Tensor::zeros(Shape{1}).broadcast_as(Shape{k2to32, k2to32});
      },
      ErrorKind::ShapeMismatch, {"[broadcast_as]"});
  expect_error(
      [] {
        Tensor::zeros(Shape{1}).broadcast_left({k2to32, k2to32});
      },
      ErrorKind::ShapeMismatch, {"[broadcast_as]"});
}

TEST(ShapeSizes, OpOutputsRefuseOverflowingShapes) {
  // Operands with an empty dim are cheap; their outputs would have 2^64 elements.
  Tensor rows = Tensor::zeros(Shape{k2to32, 1, 0});
  Tensor cols = Tensor::zeros(Shape{1, k2to32, 0});
  expect_error([&] { rows.add(cols); }, ErrorKind::ShapeMismatch, {"[add]"});
  expect_error([&] { rows.lt(cols); }, ErrorKind::ShapeMismatch, {"[lt]"});
  Tensor cond = Tensor::zeros(Shape{k2to32, 1, 0}, DType::U8);
  expect_error([&] { cond.where_cond(cols, cols); }, ErrorKind::ShapeMismatch, {"[where_cond]"});

  Tensor lhs = Tensor::zeros(Shape{k2to32, 0}), rhs = Tensor::zeros(Shape{0, k2to32});
  expect_error([&] { lhs.matmul(rhs); }, ErrorKind::ShapeMismatch, {"[matmul]", "[4294967296,4294967296]"});

  Tensor x = Tensor::ones(Shape{1, 1, 1, 1});
  expect_error([&] { x.upsample_nearest2d(k2to32, k2to32); }, ErrorKind::ShapeMismatch,
               {"[upsample_nearest2d]"});
  expect_error([&] { x.upsample_bilinear2d(k2to32, k2to32); }, ErrorKind::ShapeMismatch,
               {"[upsample_bilinear2d]"});
  expect_error(
      [] {
        Tensor::ones(Shape{1, 1, 1}).upsample_nearest1d(k2to62);
      },
      ErrorKind::ShapeMismatch, {"[upsample_nearest1d]"});

  // Joining two [0, 2^62] u8 tensors along dim 1 needs 2^63 columns.
  Tensor half = Tensor::zeros(Shape{0, k2to62}, DType::U8);
  expect_error([&] { Tensor::cat({half, half}, 1); }, ErrorKind::ShapeMismatch, {"[cat]"});
  expect_error([&] { Tensor::cat({half, half, half, half}, 1); }, ErrorKind::ShapeMismatch, {"[cat]"});
  expect_error(
      [&] {
        half.index_select(Tensor::from_vector<uint32_t>({0, 0}, Shape{2}), 0);
      },
      ErrorKind::ShapeMismatch, {"[index_select]"});
}

// --- the CPU allocator's size classes ------------------------------------------------

TEST(AllocationSizes, RoundingNeverWrapsToASmallBlock) {
  BackendDevice& cpu = backend_device(Device::cpu());
  // 0x3C00000000000000 f32 elements are 0xF000000000000000 bytes: rounding up to the
  // size class once wrapped to 0, and zeros() wrote through a null block.
  expect_error([&] { cpu.zeros(0x3C00000000000000ull, DType::F32); }, ErrorKind::OutOfMemory, {"[alloc]"});
  // SIZE_MAX bytes once rounded to an empty block and gave a tensor without storage.
  expect_error([&] { cpu.alloc(kMax, DType::U8); }, ErrorKind::OutOfMemory, {"[alloc]"});
  expect_error([&] { cpu.alloc(kMax / 2 + 1, DType::F32); }, ErrorKind::OutOfMemory, {"[alloc]"});
  // 2^63-1 bytes fit, their size class (2^63 + 2^60) does not.
  expect_error([&] { cpu.alloc(kMax / 2, DType::U8); }, ErrorKind::OutOfMemory, {"[alloc]"});
  // Through the front end the shape check names the op first.
  expect_error([] { Tensor::zeros(Shape{0x3C00000000000000ull}); }, ErrorKind::ShapeMismatch, {"[zeros]"});
  expect_error([] { Tensor::empty(Shape{kMax}, DType::U8); }, ErrorKind::ShapeMismatch, {"[empty]"});
}

// --- arguments whose derived sizes do not fit ----------------------------------------

TEST(ArgumentSizes, ConvolutionGeometryThatWrapsIsRefused) {
  Tensor x = Tensor::ones(Shape{1, 1, 4}), k2 = Tensor::ones(Shape{1, 1, 2}),
         k3 = Tensor::ones(Shape{1, 1, 3});
  // 4 + 2 * 2^63 wrapped to 4: the op returned values for a padding it never applied.
  expect_error([&] { x.conv1d(k2, k2to63); }, ErrorKind::InvalidArgument, {"[conv1d]", "padding"});
  expect_error([&] { x.conv1d(k2, k2to62); }, ErrorKind::InvalidArgument, {"[conv1d]"});
  // 2^63 * (3 - 1) + 1 wrapped to 1: a dilated kernel that fits the input.
  expect_error([&] { x.conv1d(k3, 0, 1, k2to63); }, ErrorKind::InvalidArgument, {"[conv1d]", "dilat"});
  Tensor x4 = Tensor::ones(Shape{1, 1, 4, 4}), kk = Tensor::ones(Shape{1, 1, 2, 2});
  expect_error([&] { x4.conv2d(kk, k2to63); }, ErrorKind::InvalidArgument, {"[conv2d]"});
  expect_error([&] { x4.conv2d(kk, 0, 1, k2to63); }, ErrorKind::InvalidArgument, {"[conv2d]"});
  // (4 - 1) * 2^62 + 2 overflows: signed overflow in the length before.
  expect_error([&] { x.conv_transpose1d(k2, 0, 0, k2to62); }, ErrorKind::InvalidArgument,
               {"[conv_transpose1d]", "output length"});
  expect_error([&] { x.conv_transpose1d(k2, 0, 0, 1, k2to63); }, ErrorKind::InvalidArgument,
               {"[conv_transpose1d]"});
  expect_error([&] { x.conv_transpose1d(k2, k2to63); }, ErrorKind::InvalidArgument, {"[conv_transpose1d]"});
  expect_error([&] { x4.conv_transpose2d(kk, 0, 0, k2to62); }, ErrorKind::InvalidArgument,
               {"[conv_transpose2d]"});
  // Groups whose C_out product wraps.
  Tensor e = Tensor::zeros(Shape{1, 0, 4}), ke = Tensor::zeros(Shape{0, 4, 2});
  expect_error([&] { e.conv_transpose1d(ke, 0, 0, 1, 1, k2to62); }, ErrorKind::InvalidArgument,
               {"[conv_transpose1d]", "groups"});
  // 2^40 kernel taps by 2^24 output positions: an unfolded input of 2^64 elements, which
  // wrapped to an empty scratch buffer the backend then wrote. Broadcast views take no memory.
  const size_t taps = size_t(1) << 40, positions = size_t(1) << 24;
  Tensor xb = Tensor::zeros(Shape{1, 1, 1}).broadcast_as(Shape{1, 1, taps + positions - 1});
  Tensor kb = Tensor::zeros(Shape{1, 1, 1}).broadcast_as(Shape{1, 1, taps});
  expect_error([&] { xb.conv1d(kb); }, ErrorKind::InvalidArgument, {"[conv1d]", "unfolded input"});
  // Large but representable geometry still computes: padding 3 on each side, by hand.
  EXPECT_EQ(x.conv1d(k2, 3).to_vector<float>(), (std::vector<float>{0, 0, 1, 2, 2, 2, 1, 0, 0}));
}

TEST(ArgumentSizes, ArangeRefusesLengthsBeyondAnyTensor) {
  // 1e300 elements once converted to an integer out of range and gave an empty tensor.
  expect_error([] { Tensor::arange(0, 1e300); }, ErrorKind::InvalidArgument, {"[arange]"});
  expect_error([] { Tensor::arange(-1e308, 1e308); }, ErrorKind::InvalidArgument, {"[arange]"});
  // A span of the wrong sign is an empty range, however long.
  EXPECT_EQ(Tensor::arange(0, 1e300, -1).elem_count(), 0u);
}

TEST(ArgumentSizes, ArangeThatCannotBeAllocatedIsAnError) {
  // 1e13 f64 values (80 TB) once escaped as std::bad_alloc.
  expect_error([] { Tensor::arange(0, 1e13); }, ErrorKind::OutOfMemory, {"[arange]"});
  // 2^62 elements do not fit as f64 bytes.
  expect_error([] { Tensor::arange(0, 0x1p62); }, ErrorKind::ShapeMismatch, {"[arange]"});
}

}  // namespace
}  // namespace wick
