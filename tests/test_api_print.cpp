// Printing values: Tensor::str and operator<< against PyTorch's repr (torch/_tensor_str.py
// with its default options). The expected strings are PyTorch's output for the same values
// with the dtype and device named as wick names them (float32 and int64 unnamed there too).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <sstream>

#include "api_test_util.h"
#include "wick/check.h"

namespace wick {
namespace {

using namespace api_test;

TEST(Print, FixedPointWithFourDecimals) {
  EXPECT_EQ(make({1, 2.5}, Shape{2}, DType::F32).str(), "tensor([1.0000, 2.5000])");
  EXPECT_EQ(make({0.5, 1}, Shape{2}, DType::F16).str(), "tensor([0.5000, 1.0000], dtype=f16)");
  EXPECT_EQ(make({1.0 / 3}, Shape{1}, DType::BF16).str(),
            "tensor([0.3340], dtype=bf16)");  // bf16(1/3) = 0.333984375
  EXPECT_EQ(make({3.5}, Shape{}, DType::F64).str(), "tensor(3.5000, dtype=f64)");
}

TEST(Print, IntegralFloatsEndInADot) {
  EXPECT_EQ(Tensor::ones({2, 3}).str(), "tensor([[1., 1., 1.],\n        [1., 1., 1.]])");
  EXPECT_EQ(make({-0.0, 0.0}, Shape{2}, DType::F32).str(), "tensor([-0., 0.])");
  EXPECT_EQ(make({1, kInf}, Shape{2}, DType::F32).str(), "tensor([1., inf])");
}

TEST(Print, ScientificForWideRangesAndTinyValues) {
  EXPECT_EQ(make({1e-5, 1}, Shape{2}, DType::F32).str(), "tensor([1.0000e-05, 1.0000e+00])");
  EXPECT_EQ(make({1, 2e9}, Shape{2}, DType::F64).str(), "tensor([1.0000e+00, 2.0000e+09], dtype=f64)");
}

TEST(Print, NaNAndInfinitiesAreRightAligned) {
  EXPECT_EQ(make({1.5, kNaN, -kInf}, Shape{3}, DType::F32).str(), "tensor([1.5000,    nan,   -inf])");
  EXPECT_EQ(make({kNaN}, Shape{1}, DType::F32).str(), "tensor([nan])");
}

TEST(Print, Integers) {
  EXPECT_EQ(make({1, -20, 300}, Shape{3}, DType::I64).str(), "tensor([  1, -20, 300])");
  EXPECT_EQ(make({1, 2}, Shape{2}, DType::I32).str(), "tensor([1, 2], dtype=i32)");
  EXPECT_EQ(make({255}, Shape{1}, DType::U8).str(), "tensor([255], dtype=u8)");
  EXPECT_EQ(Tensor::from_vector<int64_t>({std::numeric_limits<int64_t>::min()}, Shape{1}).str(),
            "tensor([-9223372036854775808])");  // exact, not through a double
  EXPECT_EQ(Tensor::from_vector<int64_t>({7}, Shape{}).str(), "tensor(7)");
}

TEST(Print, ThreeDimsSeparateBlocksWithABlankLine) {
  EXPECT_EQ(Tensor::ones({2, 2, 2}, DType::I64).str(),
            "tensor([[[1, 1],\n         [1, 1]],\n\n        [[1, 1],\n         [1, 1]]])");
}

TEST(Print, EmptyTensorsNameTheirSize) {
  EXPECT_EQ(Tensor::zeros({0}).str(), "tensor([])");
  EXPECT_EQ(Tensor::zeros({0, 3}).str(), "tensor([], size=(0, 3))");
  EXPECT_EQ(Tensor::zeros({0}, DType::I64).str(), "tensor([], dtype=i64)");
}

TEST(Print, LongRowsWrapAtEightyColumns) {
  // torch.arange(2000.) prints exactly this.
  EXPECT_EQ(Tensor::arange(0, 2000).str(),
            "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
            "        1.9990e+03])");
  // Suffixes move to a new line when they would pass column 80.
  EXPECT_EQ(Tensor::full(0.5, {9}, DType::F16).str(),
            "tensor([0.5000, 0.5000, 0.5000, 0.5000, 0.5000, 0.5000, 0.5000, 0.5000, 0.5000],\n"
            "       dtype=f16)");
  V v(20);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.25 * double(i + 1);
  EXPECT_EQ(make(v, Shape{20}, DType::F32).str(),
            "tensor([0.2500, 0.5000, 0.7500, 1.0000, 1.2500, 1.5000, 1.7500, 2.0000, 2.2500,\n"
            "        2.5000, 2.7500, 3.0000, 3.2500, 3.5000, 3.7500, 4.0000, 4.2500, 4.5000,\n"
            "        4.7500, 5.0000])");
}

TEST(Print, PastAThousandElementsTheMiddleIsElided) {
  EXPECT_EQ(Tensor::zeros({2000}).str(), "tensor([0., 0., 0.,  ..., 0., 0., 0.])");
  // torch.arange(10000).reshape(100, 100)
  EXPECT_EQ(Tensor::arange(0, 10000, 1, DType::I64).reshape(Shape{100, 100}).str(),
            "tensor([[   0,    1,    2,  ...,   97,   98,   99],\n"
            "        [ 100,  101,  102,  ...,  197,  198,  199],\n"
            "        [ 200,  201,  202,  ...,  297,  298,  299],\n"
            "        ...,\n"
            "        [9700, 9701, 9702,  ..., 9797, 9798, 9799],\n"
            "        [9800, 9801, 9802,  ..., 9897, 9898, 9899],\n"
            "        [9900, 9901, 9902,  ..., 9997, 9998, 9999]])");
  // Dims of at most 6 are printed whole even when the tensor is summarized; the format is
  // chosen from the printed values only (here 0 .. 5 and 1994 .. 1999: scientific).
  Tensor t = Tensor::arange(0, 2000).reshape(Shape{1000, 2}).t();  // a strided view: [2, 1000]
  EXPECT_EQ(t.str(),
            "tensor([[0.0000e+00, 2.0000e+00, 4.0000e+00,  ..., 1.9940e+03, 1.9960e+03,\n"
            "         1.9980e+03],\n"
            "        [1.0000e+00, 3.0000e+00, 5.0000e+00,  ..., 1.9950e+03, 1.9970e+03,\n"
            "         1.9990e+03]])");
}

TEST(Print, TheDeviceIsNamedBeforeTheDType) {
  // A tensor that claims to live on gpu:0 (its storage is host memory, so no GPU is needed to
  // format it): the device suffix comes first, as in PyTorch.
  EXPECT_EQ(on_fake_gpu(make({1, 2}, Shape{2}, DType::F32)).str(), "tensor([1., 2.], device=gpu:0)");
  EXPECT_EQ(on_fake_gpu(make({1, 2}, Shape{2}, DType::I32)).str(), "tensor([1, 2], device=gpu:0, dtype=i32)");
}

TEST(Print, GpuTensorsPrintTheSameValues) {
  std::string why;
  if (!check::device_present(Device::gpu(0), &why)) GTEST_SKIP() << "no GPU: " << why;
  // Summarized on the device (only the shown corners come to the host): the CPU's text plus the device.
  Tensor c = Tensor::arange(0, 10000, 1, DType::I64).reshape(Shape{100, 100});
  std::string cs = c.str();
  EXPECT_EQ(c.to_device(Device::gpu(0)).str(), cs.substr(0, cs.size() - 1) + ", device=gpu:0)");
  EXPECT_EQ(make({0.5, 1}, Shape{2}, DType::F16, Device::gpu(0)).str(),
            "tensor([0.5000, 1.0000], device=gpu:0, dtype=f16)");
}

TEST(Print, StreamOperatorWritesStr) {
  Tensor t = make({1, 2.5, -3}, Shape{3}, DType::F16);
  std::ostringstream os;
  os << t;
  EXPECT_EQ(os.str(), t.str());
  EXPECT_EQ(os.str(), "tensor([ 1.0000,  2.5000, -3.0000], dtype=f16)");
  expect_error([] { (void)Tensor().str(); }, ErrorKind::InvalidArgument,
               "[str] tensor is an undefined tensor");
}

}  // namespace
}  // namespace wick
