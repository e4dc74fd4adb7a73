// The splits of tensor parallelism (src/model/tensor_parallel.h) against the unsplit
// layers: the parts hold the matrix's values, a column-parallel layer gathers to the
// unsplit layer's output, a row-parallel layer sums to it within the rounding of a
// reordered f32 sum; and the errors of splits that do not land on heads or blocks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <random>

#include "error_test_util.h"
#include "model/tensor_parallel.h"
#include "model_test_util.h"
#include "test_gguf_util.h"
#include "wick/comm.h"

namespace wick {
namespace {

using model::TpSplit;
using test::expect_error;

Tensor random_matrix(size_t rows, size_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(rows * cols);
  for (float& x : v) x = normal(rng);
  return Tensor::from_vector(v, {rows, cols});
}

struct Case {
  GgmlType type;
  size_t rows, cols, tp;
};
// Column slices of cols / tp are whole blocks in each.
const Case kCases[] = {{GgmlType::F32, 12, 64, 4}, {GgmlType::F16, 8, 64, 2},   {GgmlType::Q8_0, 8, 128, 4},
                       {GgmlType::Q4_0, 6, 64, 2}, {GgmlType::Q4_K, 4, 512, 2}, {GgmlType::Q6_K, 6, 768, 3}};

std::string trace(const Case& c) {
  return std::string(ggml_type_name(c.type)) + " tp " + std::to_string(c.tp);
}

TEST(TensorParallel, OutPartsHoldTheMatrixRows) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(trace(c));
    const QTensor w = QTensor::quantize(random_matrix(c.rows, c.cols, 1), c.type);
    const auto full = w.dequantize().to_vector<float>();
    const auto parts = model::split_matrix(w, TpSplit::Out, c.tp, "w");
    ASSERT_EQ(parts.size(), c.tp);
    const size_t n = c.rows / c.tp;
    for (size_t r = 0; r < c.tp; ++r) {
      EXPECT_EQ(parts[r].type(), c.type);
      EXPECT_EQ(parts[r].shape(), (Shape{n, c.cols}));
      const std::vector<float> want(full.begin() + ptrdiff_t(r * n * c.cols),
                                    full.begin() + ptrdiff_t((r + 1) * n * c.cols));
      EXPECT_EQ(parts[r].dequantize().to_vector<float>(), want) << "rank " << r;
    }
  }
}

TEST(TensorParallel, InPartsHoldTheMatrixColumns) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(trace(c));
    const QTensor w = QTensor::quantize(random_matrix(c.rows, c.cols, 2), c.type);
    const auto full = w.dequantize().to_vector<float>();
    const auto parts = model::split_matrix(w, TpSplit::In, c.tp, "w");
    const size_t n = c.cols / c.tp;
    for (size_t r = 0; r < c.tp; ++r) {
      EXPECT_EQ(parts[r].shape(), (Shape{c.rows, n}));
      std::vector<float> want;
      for (size_t i = 0; i < c.rows; ++i)
        for (size_t j = r * n; j < (r + 1) * n; ++j) want.push_back(full[i * c.cols + j]);
      EXPECT_EQ(parts[r].dequantize().to_vector<float>(), want) << "rank " << r;
    }
  }
}

TEST(TensorParallel, NoneGivesEveryRankTheWholeMatrix) {
  const QTensor w = QTensor::quantize(random_matrix(4, 64, 3), GgmlType::Q8_0);
  const auto parts = model::split_matrix(w, TpSplit::None, 3, "w");
  ASSERT_EQ(parts.size(), 3u);
  for (const QTensor& p : parts) EXPECT_EQ(p.to_host_bytes(), w.to_host_bytes());
}

// Each output feature of a column-parallel layer is the same dot product as in the
// unsplit layer, so the gathered output equals it bit for bit.
TEST(TensorParallel, ColumnParallelLinearGathersToTheUnsplitLayer) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(trace(c));
    const QTensor w = QTensor::quantize(random_matrix(c.rows, c.cols, 4), c.type);
    const Tensor x = random_matrix(3, c.cols, 5);
    const auto parts = model::split_matrix(w, TpSplit::Out, c.tp, "w");
    auto comm = Communicator::host(std::vector<Device>(c.tp, Device::cpu()));
    std::vector<Tensor> ys;
    for (const QTensor& p : parts) ys.push_back(qmatmul(x, p));
    const Tensor y = comm->all_gather(ys, 1)[0];
    EXPECT_EQ(y.to_vector<float>(), qmatmul(x, w).to_vector<float>());
  }
}

// A row-parallel layer's outputs are sums of the same products as the unsplit layer's
// (the activations quantize block by block, and the parts are whole blocks), added in
// another order. Any order of a K-term f32 sum is within gamma_K = K u / (1 - K u) of
// the exact sum, relative to the sum of |terms| (Higham, Accuracy and Stability of
// Numerical Algorithms, 2nd ed., section 3.1; u = 2^-24), so the two differ by at most
// 2 gamma_K sum_k |w_k| |xq_k| with |xq_k| <= max |x| (a quantized activation never
// exceeds its block's largest magnitude).
TEST(TensorParallel, RowParallelLinearSumsToTheUnsplitLayer) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(trace(c));
    const QTensor w = QTensor::quantize(random_matrix(c.rows, c.cols, 6), c.type);
    const Tensor x = random_matrix(3, c.cols, 7);
    const auto parts = model::split_matrix(w, TpSplit::In, c.tp, "w");
    auto comm = Communicator::host(std::vector<Device>(c.tp, Device::cpu()));
    std::vector<Tensor> ys;
    const size_t n = c.cols / c.tp;
    for (size_t r = 0; r < c.tp; ++r) ys.push_back(qmatmul(x.narrow(1, r * n, n).contiguous(), parts[r]));
    const auto got = comm->all_reduce_sum(ys)[0].to_vector<float>();
    const auto want = qmatmul(x, w).to_vector<float>();
    const auto wv = w.dequantize().to_vector<float>(), xv = x.to_vector<float>();
    const double u = std::ldexp(1.0, -24), k = double(c.cols), gamma = k * u / (1.0 - k * u);
    for (size_t i = 0; i < 3; ++i) {
      double xmax = 0.0;
      for (size_t j = 0; j < c.cols; ++j) xmax = std::max(xmax, double(std::fabs(xv[i * c.cols + j])));
      for (size_t o = 0; o < c.rows; ++o) {
        double abs_sum = 0.0;
        for (size_t j = 0; j < c.cols; ++j) abs_sum += std::fabs(double(wv[o * c.cols + j]));
        EXPECT_NEAR(got[i * c.rows + o], want[i * c.rows + o], 2.0 * gamma * xmax * abs_sum)
            << "row " << i << " output " << o;
      }
    }
  }
}

TEST(TensorParallel, OutVectorPartsHoldTheSlices) {
  const Tensor v = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {6});
  const auto parts = model::split_vector(v, TpSplit::Out, 3, "b");
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[1].to_vector<float>(), (std::vector<float>{3, 4}));
  EXPECT_EQ(model::split_vector(v, TpSplit::None, 2, "n")[1].to_vector<float>(), v.to_vector<float>());
}

TEST(TensorParallel, InSplitOffBlockBoundariesIsRejected) {
  const QTensor w = QTensor::quantize(random_matrix(4, 256, 8), GgmlType::Q4_K);
  expect_error([&] { model::split_matrix(w, TpSplit::In, 2, "blk.0.ffn_down.weight"); },
               ErrorKind::InvalidArgument,
               {"[tensor_parallel]", "tp 2", "'blk.0.ffn_down.weight'", "q4_K", "column slices of 128",
                "whole blocks of 256"});
}

TEST(TensorParallel, SplitsThatAreNotAMultipleOfTpAreRejected) {
  const QTensor w = QTensor::quantize(random_matrix(6, 64, 9), GgmlType::F32);
  expect_error([&] { model::split_matrix(w, TpSplit::Out, 4, "w"); }, ErrorKind::InvalidArgument,
               {"tp 4", "'w'", "[6,64]", "6 rows"});
  expect_error([&] { model::split_matrix(w, TpSplit::In, 3, "w"); }, ErrorKind::InvalidArgument,
               {"tp 3", "64 columns"});
  const Tensor v = Tensor::zeros({5});
  expect_error([&] { model::split_vector(v, TpSplit::Out, 2, "b"); }, ErrorKind::InvalidArgument,
               {"tp 2", "'b'", "5 elements"});
  expect_error([&] { model::split_vector(v, TpSplit::In, 1, "b"); }, ErrorKind::InvalidArgument,
               {"'b'", "no input features"});
  expect_error([&] { model::split_matrix(w, TpSplit::Out, 0, "w"); }, ErrorKind::InvalidArgument, {"tp 0"});
}

class TensorParallelPlan : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("tp_plan"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  model::ModelPlan plan(const test::TinyConfig& c) {
    const std::string p = (dir_ / "m.gguf").string();
    file_.reset();  // the writer refuses a file this process has open
    test::write_tiny_model(p, c);
    file_.emplace(GgufFile::open(p));  // the plan points into the file
    return model::plan_model(*file_);
  }
  std::filesystem::path dir_;
  std::optional<GgufFile> file_;
};

TEST_F(TensorParallelPlan, RankHParamsDivideHeadsWidthAndVocabulary) {
  test::TinyConfig c;  // 4 heads, 2 KV heads, ff 96, vocabulary 48
  const model::ModelPlan p = plan(c);
  EXPECT_NO_THROW(model::check_tensor_parallel(p, 2));
  const model::HParams r = model::rank_hparams(p.hp, 2);
  EXPECT_EQ(r.n_head, 2u);
  EXPECT_EQ(r.n_head_kv, 1u);
  EXPECT_EQ(r.n_ff, 48u);
  EXPECT_EQ(r.n_vocab, 24u);
  EXPECT_EQ(r.n_embd, 64u);
  EXPECT_EQ(r.head_dim_k, 16u);
}

TEST_F(TensorParallelPlan, KvHeadsNotAMultipleOfTpAreRejected) {
  test::TinyConfig c;  // 2 KV heads
  const model::ModelPlan p = plan(c);
  expect_error([&] { model::check_tensor_parallel(p, 4); }, ErrorKind::InvalidArgument,
               {"[tensor_parallel]", "tp 4", "head_count_kv 2"});
  expect_error([&] { model::check_tensor_parallel(p, 3); }, ErrorKind::InvalidArgument,
               {"tp 3", "head_count 4"});
}

TEST_F(TensorParallelPlan, VocabularyAndWidthNotAMultipleOfTpAreRejected) {
  test::TinyConfig c;
  c.heads = c.heads_kv = 2;
  c.vocab = 47;
  expect_error([&] { model::check_tensor_parallel(plan(c), 2); }, ErrorKind::InvalidArgument,
               {"tp 2", "vocabulary 47"});
  c.vocab = 48;
  c.ff = 95;
  expect_error([&] { model::check_tensor_parallel(plan(c), 2); }, ErrorKind::InvalidArgument,
               {"tp 2", "feed_forward_length 95"});
}

TEST_F(TensorParallelPlan, RowParallelSlicesOffBlocksAreRejected) {
  test::TinyConfig c;  // ff 96: ffn_down's column slices of 48 are not whole q8_0 blocks of 32
  c.type = GgmlType::Q8_0;
  expect_error([&] { model::check_tensor_parallel(plan(c), 2); }, ErrorKind::InvalidArgument,
               {"tp 2", "'blk.0.ffn_down.weight'", "q8_0", "column slices of 48", "whole blocks of 32"});
}

}  // namespace
}  // namespace wick
