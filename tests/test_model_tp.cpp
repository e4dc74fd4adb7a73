// Tensor parallelism of the model runner over the host communicator (N ranks in one
// process sharing a device, on every device present): the split model's logits against
// the unsplit model's and the float64 forward of the test, greedy generation token for
// token, one rank through the communicator, and the splits a model does not allow.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "model_test_util.h"
#include "test_gguf_util.h"
#include "wick/comm.h"
#include "wick/model.h"

namespace wick {
namespace {

using test::prompt_of;
using test::TinyConfig;

class ModelTpTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("model_tp"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

// tp ranks on `device` through the host communicator.
ModelOptions tp_options(size_t tp, Device device = Device::cpu()) {
  ModelOptions o;
  o.communicator = Communicator::host(std::vector<Device>(tp, device));
  return o;
}

std::vector<int32_t> greedy_tokens(Model& m, const std::vector<int32_t>& prompt, size_t n) {
  GenerateOptions g;
  g.n_predict = int64_t(n);
  g.sampler.temp = 0.0f;
  g.sampler.seed = 1;
  std::vector<int32_t> out;
  m.generate(prompt, g, [&](int32_t id, std::string_view) {
    out.push_back(id);
    return true;
  });
  return out;
}

// The split model differs from the unsplit one only in the order of the f32 sums of the
// row-parallel layers (attention output, down: each rank sums its slice, then the ranks'
// sums are added), and in the roundings downstream that such a reordering can tip: keys
// and values rounded to the f16 KV cache and, for block types, activations rounded to 8
// bits. Both models evaluate the same float64 function with those roundings, each within
// its rounding error E of it, so they differ by at most about 2 E, where E is the unsplit
// model's largest distance from the float64 forward over the prompt (it is dominated by
// the f16 cache and the 8-bit activations, so a tipped rounding stays within it). The
// split model must also stay as close to the float64 forward as the unsplit one must
// (test_model.cpp's bounds), and generate the same greedy tokens. On `device`, which the
// ranks share.
void expect_split_matches_unsplit_on(Device device, const std::string& file, const TinyConfig& cfg,
                                     const test::TinyValues& values, size_t tp, double nmse_bound) {
  SCOPED_TRACE("tp " + std::to_string(tp) + " on " + device.str());
  const auto ids = prompt_of(9, cfg.vocab);
  const auto ref = test::reference_logits(cfg, values, ids);
  ModelOptions plain;
  plain.device = device;
  Model whole = Model::load(file, plain);
  Model split = Model::load(file, tp_options(tp, device));
  EXPECT_EQ(split.info().tp, tp);
  const auto a = whole.forward(ids, true).to_vector<float>();
  const Tensor split_logits = split.forward(ids, true);
  ASSERT_EQ(split_logits.dims(), (std::vector<size_t>{ids.size(), cfg.vocab}));
  const auto b = split_logits.to_vector<float>();
  double e = 0.0;
  for (size_t p = 0; p < ids.size(); ++p)
    for (size_t i = 0; i < cfg.vocab; ++i)
      e = std::max(e, std::fabs(double(a[p * cfg.vocab + i]) - ref[p][i]));
  ASSERT_GT(e, 0.0);
  for (size_t k = 0; k < a.size(); ++k)
    EXPECT_LE(std::fabs(double(a[k]) - double(b[k])), 2.0 * e) << "logit " << k;
  for (size_t p = 0; p < ids.size(); ++p) {
    const std::vector<float> row(b.begin() + ptrdiff_t(p * cfg.vocab),
                                 b.begin() + ptrdiff_t((p + 1) * cfg.vocab));
    EXPECT_LT(test::nmse(row, ref[p]), nmse_bound) << "position " << p;
  }
  whole.reset();
  split.reset();
  const auto prompt = prompt_of(5, cfg.vocab);
  const auto want = greedy_tokens(whole, prompt, 16);
  ASSERT_EQ(want.size(), 16u);
  EXPECT_EQ(greedy_tokens(split, prompt, 16), want);
}

// On every device present.
void expect_split_matches_unsplit(const std::string& file, const TinyConfig& cfg,
                                  const test::TinyValues& values, size_t tp, double nmse_bound) {
  for (Device d : available_devices()) expect_split_matches_unsplit_on(d, file, cfg, values, tp, nmse_bound);
}

TEST_F(ModelTpTest, LlamaSplitInTwoMatchesTheUnsplitModel) {
  TinyConfig c;  // 4 heads, 2 KV heads
  const auto v = test::write_tiny_model(path("m.gguf"), c);
  expect_split_matches_unsplit(path("m.gguf"), c, v, 2, 1e-5);
}

TEST_F(ModelTpTest, LlamaSplitInFourMatchesTheUnsplitModel) {
  TinyConfig c;
  c.heads_kv = c.heads;  // 4 KV heads: one per rank
  c.rope_freqs = true;
  const auto v = test::write_tiny_model(path("m.gguf"), c);
  expect_split_matches_unsplit(path("m.gguf"), c, v, 2, 1e-5);
  expect_split_matches_unsplit(path("m.gguf"), c, v, 4, 1e-5);
}

TEST_F(ModelTpTest, TiedQ8_0LlamaSplitInTwoMatchesTheUnsplitModel) {
  TinyConfig c;
  c.type = GgmlType::Q8_0;
  c.ff = 128;  // down's column slices of 64: whole blocks of 32
  c.tied = true;
  const auto v = test::write_tiny_model(path("m.gguf"), c);
  expect_split_matches_unsplit(path("m.gguf"), c, v, 2, 2e-3);
}

TEST_F(ModelTpTest, Q4_KQwen2SplitInTwoMatchesTheUnsplitModel) {
  TinyConfig c;
  c.arch = "qwen2";  // q/k/v biases, split with their rows
  c.type = GgmlType::Q4_K;
  c.embd = 256;
  c.heads = 8;
  c.head_dim = 64;  // attention output's column slices of 256: whole blocks of 256
  c.ff = 512;
  const auto v = test::write_tiny_model(path("m.gguf"), c);
  expect_split_matches_unsplit(path("m.gguf"), c, v, 2, 2e-3);
}

// Matrices of one layer in different types (as Q4_K_M mixes them): each rank projects
// its rows of q, k, v (resp. gate, up) by runs of one type, q and k together and v
// apart (llama), q apart and k and v together with their biases (qwen2); gate and up
// apart in both.
TEST_F(ModelTpTest, MixedWeightTypesSplitInTwoMatchTheUnsplitModel) {
  for (const std::string arch : {"llama", "qwen2"}) {
    SCOPED_TRACE(arch);
    TinyConfig c;
    c.arch = arch;
    c.type = GgmlType::Q8_0;
    c.ff = 128;  // down's column slices of 64: whole blocks of 32
    if (arch == "llama")
      c.types = {{"attn_v", GgmlType::Q4_0}, {"ffn_gate", GgmlType::Q4_1}};
    else
      c.types = {{"attn_q", GgmlType::Q4_0}, {"ffn_up", GgmlType::Q4_1}};
    const std::string file = path(arch + "_mixed.gguf");
    const auto v = test::write_tiny_model(file, c);
    expect_split_matches_unsplit(file, c, v, 2, 2e-3);
  }
}

TEST_F(ModelTpTest, Qwen3SplitInTwoMatchesTheUnsplitModel) {
  TinyConfig c;
  c.arch = "qwen3";  // per-head q/k norms, replicated
  c.head_dim = 32;
  const auto v = test::write_tiny_model(path("m.gguf"), c);
  expect_split_matches_unsplit(path("m.gguf"), c, v, 2, 1e-5);
}

// One rank: the collectives are identities, so logits and tokens are the unsplit
// model's, bit for bit, on every device.
TEST_F(ModelTpTest, OneRankThroughTheCommunicatorIsTheUnsplitModel) {
  TinyConfig c;
  test::write_tiny_model(path("m.gguf"), c);
  const auto ids = prompt_of(9, c.vocab);
  for (Device d : available_devices()) {
    SCOPED_TRACE(d.str());
    ModelOptions plain, one;
    plain.device = d;
    one.communicator = Communicator::host({d});
    Model a = Model::load(path("m.gguf"), plain);
    Model b = Model::load(path("m.gguf"), one);
    EXPECT_EQ(b.info().device, d);
    EXPECT_EQ(b.forward(ids, true).to_vector<float>(), a.forward(ids, true).to_vector<float>());
    a.reset();
    b.reset();
    EXPECT_EQ(greedy_tokens(b, prompt_of(5, c.vocab), 16), greedy_tokens(a, prompt_of(5, c.vocab), 16));
  }
}

TEST_F(ModelTpTest, EachRankHoldsItsShareOfTheKvCache) {
  TinyConfig c;
  test::write_tiny_model(path("m.gguf"), c);
  const MemoryBudget whole = Model::memory_budget(path("m.gguf"));
  const MemoryBudget half = Model::memory_budget(path("m.gguf"), tp_options(2));
  EXPECT_EQ(half.kv_cache * 2, whole.kv_cache);
  EXPECT_LT(half.weights, whole.weights);
  EXPECT_GT(half.weights * 2, whole.weights);  // norms are on every rank
}

TEST_F(ModelTpTest, KvHeadsNotAMultipleOfTpAreRejectedAtLoad) {
  TinyConfig c;  // 2 KV heads
  test::write_tiny_model(path("m.gguf"), c);
  try {
    Model::load(path("m.gguf"), tp_options(4));
    FAIL() << "no error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("head_count_kv 2 is not a multiple of tp"), std::string::npos)
        << e.what();
  }
}

TEST_F(ModelTpTest, RowParallelSlicesOffBlocksAreRejectedAtLoad) {
  TinyConfig c;
  c.type = GgmlType::Q8_0;  // ff 96: down's column slices of 48
  test::write_tiny_model(path("m.gguf"), c);
  try {
    Model::load(path("m.gguf"), tp_options(2));
    FAIL() << "no error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("'blk.0.ffn_down.weight'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("whole blocks of 32"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace wick
