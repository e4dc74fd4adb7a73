// End to end on a real model: SmolLM2-135M-Instruct Q4_1 (llama architecture, tied
// Q8_0 embeddings, GQA 9/3 heads), fetched by scripts/fetch-test-data.sh (the
// fetch_test_data CTest fixture) into WICK_TEST_DATA_DIR. The token ids of the prompt
// are those llama.cpp's llama-tokenize gives for this file.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "wick/model.h"
#include "wick/tokenizer.h"

namespace wick {
namespace {

const std::string kModel = std::string(WICK_TEST_DATA_DIR) + "/SmolLM2-135M-Instruct.Q4_1.gguf";
const std::vector<int32_t> kPromptIds = {504, 3575, 282, 4649, 314};  // "The capital of France is"

class SmolLM : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!std::filesystem::exists(kModel)) return;
    ModelOptions o;
    o.ctx = 256;
    cpu_ = std::make_unique<Model>(Model::load(kModel, o));
  }
  static void TearDownTestSuite() { cpu_.reset(); }
  void SetUp() override {
    ASSERT_TRUE(cpu_) << kModel << " is missing: run scripts/fetch-test-data.sh " WICK_TEST_DATA_DIR
                      << " (ctest runs it as the fetch_test_data fixture)";
    cpu_->reset();
  }

  static std::vector<int32_t> greedy(Model& m, size_t n) {
    m.reset();
    GenerateOptions g;
    g.n_predict = int64_t(n);
    g.sampler.temp = 0.0f;
    std::vector<int32_t> ids;
    m.generate(kPromptIds, g, [&](int32_t id, std::string_view) {
      ids.push_back(id);
      return true;
    });
    return ids;
  }

  static std::unique_ptr<Model> cpu_;
};
std::unique_ptr<Model> SmolLM::cpu_;

TEST_F(SmolLM, InfoIsTheFilesHyperparameters) {
  const ModelInfo& i = cpu_->info();
  EXPECT_EQ(i.arch, "llama");
  EXPECT_EQ(i.n_vocab, 49152u);
  EXPECT_EQ(i.n_embd, 576u);
  EXPECT_EQ(i.n_layer, 30u);
  EXPECT_EQ(i.n_head, 9u);
  EXPECT_EQ(i.n_head_kv, 3u);
  EXPECT_EQ(i.head_dim, 64u);
  EXPECT_EQ(i.n_ff, 1536u);
  EXPECT_EQ(i.n_ctx_train, 8192u);
  EXPECT_EQ(i.n_ctx, 256u);
  // 134.5 M parameters (the model card's 135M).
  EXPECT_NEAR(double(i.n_params), 134.5e6, 0.1e6);
}

TEST_F(SmolLM, TokenizesThePrompt) { EXPECT_EQ(cpu_->tokenize("The capital of France is"), kPromptIds); }

TEST_F(SmolLM, TopNextTokenIsParis) {
  const auto logits = cpu_->forward(kPromptIds).to_vector<float>();
  ASSERT_EQ(logits.size(), 49152u);
  const auto best = int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
  EXPECT_EQ(cpu_->tokenizer().token_to_piece(best), " Paris");
}

TEST_F(SmolLM, ChatAnswerNamesParis) {
  const Tokenizer& tok = cpu_->tokenizer();
  const ChatTemplate t = detect_chat_template(tok.chat_template());
  ASSERT_EQ(t, ChatTemplate::ChatML);
  const auto ids =
      cpu_->tokenize(apply_chat_template(t, {{"user", "What is the capital of France?"}}, true), true, true);
  GenerateOptions g;
  g.n_predict = 24;
  g.sampler.temp = 0.0f;
  std::string text;
  const GenerateStats st = cpu_->generate(ids, g, [&](int32_t, std::string_view s) {
    text += s;
    return true;
  });
  EXPECT_NE(text.find("Paris"), std::string::npos) << text;
  EXPECT_TRUE(st.stopped_at_eog) << text;  // the instruct model ends its turn
}

TEST_F(SmolLM, GreedyTokensAreTheSameOnTheGpu) {
  std::vector<Device> gpus;
  for (Device d : available_devices())
    if (d.is_gpu()) gpus.push_back(d);
  if (gpus.empty()) GTEST_SKIP() << "no GPU present: the CPU / GPU comparison runs on a machine with one";
  const auto on_cpu = greedy(*cpu_, 32);
  ModelOptions o;
  o.device = gpus[0];
  o.ctx = 256;
  Model gpu = Model::load(kModel, o);
  EXPECT_EQ(greedy(gpu, 32), on_cpu);
  // And the prompt's logits agree closely.
  cpu_->reset();
  gpu.reset();
  const auto a = cpu_->forward(kPromptIds).to_vector<float>(), b = gpu.forward(kPromptIds).to_vector<float>();
  double num = 0, den = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    num += double(a[k] - b[k]) * double(a[k] - b[k]);
    den += double(a[k]) * double(a[k]);
  }
  EXPECT_LT(num / den, 1e-3);
}

}  // namespace
}  // namespace wick
