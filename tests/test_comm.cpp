// The in-process host communicator (wick/comm.h): sums and gathers against values
// computed in the test, the fixed order of the f32 sum, and every error path.
#include <gtest/gtest.h>

#include <random>

#include "error_test_util.h"
#include "wick/comm.h"

namespace wick {
namespace {

using test::expect_error;

std::vector<Device> cpus(size_t n) { return std::vector<Device>(n, Device::cpu()); }

TEST(Comm, AllReduceSumMatchesFloat64SumOnEveryRank) {
  const size_t ranks = 3, n = 257;
  auto comm = Communicator::host(cpus(ranks));
  EXPECT_EQ(comm->size(), ranks);
  EXPECT_EQ(comm->name(), "host");
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<Tensor> parts;
  std::vector<double> want(n, 0.0);
  for (size_t r = 0; r < ranks; ++r) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) want[i] += double(v[i] = normal(rng));
    parts.push_back(Tensor::from_vector(v, {1, n}));
  }
  const auto sums = comm->all_reduce_sum(parts);
  ASSERT_EQ(sums.size(), ranks);
  const auto first = sums[0].to_vector<float>();
  for (size_t r = 0; r < ranks; ++r) {
    EXPECT_EQ(sums[r].dims(), (std::vector<size_t>{1, n}));
    EXPECT_EQ(sums[r].dtype(), DType::F32);
    EXPECT_EQ(sums[r].to_vector<float>(), first) << "rank " << r;  // the same bits everywhere
  }
  // Two f32 additions of values |x| < 6: each rounds by at most 2^-24 of its result.
  for (size_t i = 0; i < n; ++i) EXPECT_NEAR(first[i], want[i], 2 * 18.0 * 0x1p-24) << i;
}

// 1e8 + 1 rounds to 1e8 in f32 (spacing 8 at 1e8): in rank order ((1e8 + 1) - 1e8) = 0,
// where any other order or a wider accumulator gives 1.
TEST(Comm, AllReduceSumAddsInRankOrderInF32) {
  auto comm = Communicator::host(cpus(3));
  const std::vector<Tensor> parts = {Tensor::from_vector(std::vector<float>{1e8f, 1.0f}, {2}),
                                     Tensor::from_vector(std::vector<float>{1.0f, 1e8f}, {2}),
                                     Tensor::from_vector(std::vector<float>{-1e8f, -1e8f}, {2})};
  EXPECT_EQ(comm->all_reduce_sum(parts)[0].to_vector<float>(), (std::vector<float>{0.0f, 0.0f}));
}

TEST(Comm, AllReduceSumKeepsHalfDTypes) {
  auto comm = Communicator::host(cpus(2));
  const Tensor a = Tensor::from_vector(std::vector<float>{1.5f, -2.0f}, {2}).to_dtype(DType::F16);
  const Tensor b = Tensor::from_vector(std::vector<float>{0.25f, 8.0f}, {2}).to_dtype(DType::F16);
  const std::vector<Tensor> parts = {a, b};
  const Tensor s = comm->all_reduce_sum(parts)[1];
  EXPECT_EQ(s.dtype(), DType::F16);
  EXPECT_EQ(s.to_dtype(DType::F32).to_vector<float>(), (std::vector<float>{1.75f, 6.0f}));
}

TEST(Comm, AllGatherConcatenatesInRankOrder) {
  auto comm = Communicator::host(cpus(2));
  const std::vector<Tensor> parts = {Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2}),
                                     Tensor::from_vector(std::vector<float>{5, 6, 7, 8}, {2, 2})};
  const auto cols = comm->all_gather(parts, 1);
  ASSERT_EQ(cols.size(), 2u);
  for (const Tensor& t : cols) {
    EXPECT_EQ(t.dims(), (std::vector<size_t>{2, 4}));
    EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1, 2, 5, 6, 3, 4, 7, 8}));
  }
  const auto rows = comm->all_gather(parts, 0);
  EXPECT_EQ(rows[0].dims(), (std::vector<size_t>{4, 2}));
  EXPECT_EQ(rows[0].to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(Comm, OneRankIsTheIdentity) {
  auto comm = Communicator::host(cpus(1));
  const std::vector<Tensor> parts = {Tensor::from_vector(std::vector<float>{0.1f, -3.0f}, {2})};
  EXPECT_EQ(comm->all_reduce_sum(parts)[0].to_vector<float>(), (std::vector<float>{0.1f, -3.0f}));
  EXPECT_EQ(comm->all_gather(parts, 0)[0].to_vector<float>(), (std::vector<float>{0.1f, -3.0f}));
}

TEST(Comm, EmptyGroupIsRejected) {
  expect_error([] { Communicator::host({}); }, ErrorKind::InvalidArgument, {"[comm]", "at least one rank"});
}

TEST(Comm, RankOutOfRangeIsRejected) {
  auto comm = Communicator::host(cpus(2));
  EXPECT_EQ(comm->device(1), Device::cpu());
  expect_error([&] { comm->device(2); }, ErrorKind::IndexOutOfRange,
               {"[comm]", "rank 2", "group of 2 ranks"});
}

TEST(Comm, WrongTensorCountIsRejected) {
  auto comm = Communicator::host(cpus(2));
  const std::vector<Tensor> three(3, Tensor::zeros({2}));
  expect_error([&] { comm->all_reduce_sum(three); }, ErrorKind::InvalidArgument,
               {"[all_reduce_sum]", "3 tensors", "group of 2 ranks"});
  expect_error([&] { comm->all_gather(three, 0); }, ErrorKind::InvalidArgument,
               {"[all_gather]", "3 tensors", "group of 2 ranks"});
}

TEST(Comm, UndefinedTensorIsRejected) {
  auto comm = Communicator::host(cpus(2));
  const std::vector<Tensor> parts = {Tensor::zeros({2}), Tensor()};
  expect_error([&] { comm->all_reduce_sum(parts); }, ErrorKind::InvalidArgument,
               {"[all_reduce_sum]", "rank 1", "undefined"});
}

TEST(Comm, MismatchedShapesAcrossRanksAreRejected) {
  auto comm = Communicator::host(cpus(2));
  const std::vector<Tensor> parts = {Tensor::zeros({2, 3}), Tensor::zeros({3, 2})};
  expect_error([&] { comm->all_reduce_sum(parts); }, ErrorKind::ShapeMismatch,
               {"[all_reduce_sum]", "rank 1 [3,2] f32", "rank 0 [2,3] f32"});
  expect_error([&] { comm->all_gather(parts, 0); }, ErrorKind::ShapeMismatch,
               {"[all_gather]", "rank 1 [3,2] f32", "rank 0 [2,3] f32"});
}

TEST(Comm, MismatchedDTypesAcrossRanksAreRejected) {
  auto comm = Communicator::host(cpus(2));
  const std::vector<Tensor> parts = {Tensor::zeros({2}), Tensor::zeros({2}, DType::F16)};
  expect_error([&] { comm->all_reduce_sum(parts); }, ErrorKind::DTypeMismatch,
               {"[all_reduce_sum]", "rank 1 [2] f16", "rank 0 [2] f32"});
  expect_error([&] { comm->all_gather(parts, 0); }, ErrorKind::DTypeMismatch,
               {"[all_gather]", "rank 1 [2] f16", "rank 0 [2] f32"});
}

TEST(Comm, IntegerAllReduceIsRejected) {
  auto comm = Communicator::host(cpus(2));
  const std::vector<Tensor> parts(2, Tensor::zeros({2}, DType::I32));
  expect_error([&] { comm->all_reduce_sum(parts); }, ErrorKind::UnsupportedDType,
               {"[all_reduce_sum]", "i32"});
}

TEST(Comm, GatherDimOutOfRangeIsRejected) {
  auto comm = Communicator::host(cpus(2));
  const std::vector<Tensor> parts(2, Tensor::zeros({2, 3}));
  expect_error([&] { comm->all_gather(parts, 2); }, ErrorKind::DimOutOfRange,
               {"[all_gather]", "dim 2", "[2,3] f32"});
}

TEST(Comm, TensorOffItsRankDeviceIsRejected) {
  auto comm = Communicator::host({Device::cpu(), Device::gpu(0)});
  const std::vector<Tensor> parts(2, Tensor::zeros({2}));
  expect_error([&] { comm->all_reduce_sum(parts); }, ErrorKind::DeviceMismatch,
               {"[all_reduce_sum]", "rank 1", "on cpu", "gpu:0"});
}

}  // namespace
}  // namespace wick
