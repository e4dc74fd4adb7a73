// The model runner on tiny random models of every architecture: logits against a
// float64 forward pass written in the test (model_test_util.h), every weight type,
// prefill against decode, generation, and the errors of bad files and bad calls.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "error_test_util.h"
#include "model_test_util.h"
#include "test_gguf_util.h"
#include "wick/model.h"

namespace wick {
namespace {

using test::expect_error;
using test::prompt_of;
using test::TinyConfig;

class ModelTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("model"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

// Loads `cfg` on every device present and checks the logits of every position of a
// 9-token prompt against the float64 reference.
void expect_matches_reference(const std::string& file, const TinyConfig& cfg, const test::TinyValues& values,
                              double bound) {
  const auto ids = prompt_of(9, cfg.vocab);
  const auto ref = test::reference_logits(cfg, values, ids);
  for (Device d : available_devices()) {
    SCOPED_TRACE(d.str());
    ModelOptions o;
    o.device = d;
    Model m = Model::load(file, o);
    const Tensor logits = m.forward(ids, true);
    ASSERT_EQ(logits.dims(), (std::vector<size_t>{ids.size(), cfg.vocab}));
    const auto got = logits.to_vector<float>();
    for (size_t p = 0; p < ids.size(); ++p) {
      const std::vector<float> row(got.begin() + ptrdiff_t(p * cfg.vocab),
                                   got.begin() + ptrdiff_t((p + 1) * cfg.vocab));
      EXPECT_LT(test::nmse(row, ref[p]), bound) << "position " << p;
    }
  }
}

TEST_F(ModelTest, LlamaMatchesFloat64Reference) {
  TinyConfig c;
  const auto v = test::write_tiny_model(path("llama.gguf"), c);
  expect_matches_reference(path("llama.gguf"), c, v, 1e-5);
}

TEST_F(ModelTest, LlamaWithRopeFreqFactorsMatchesReference) {
  TinyConfig c;
  c.rope_freqs = true;
  c.rope_base = 500000.0f;
  const auto v = test::write_tiny_model(path("llama31.gguf"), c);
  expect_matches_reference(path("llama31.gguf"), c, v, 1e-5);
}

TEST_F(ModelTest, LlamaWithLinearRopeScalingMatchesReference) {
  TinyConfig c;
  c.linear_scale = 4.0f;
  const auto v = test::write_tiny_model(path("linear.gguf"), c);
  expect_matches_reference(path("linear.gguf"), c, v, 1e-5);
}

TEST_F(ModelTest, TiedEmbeddingsMatchReference) {
  TinyConfig c;
  c.tied = true;
  const auto v = test::write_tiny_model(path("tied.gguf"), c);
  expect_matches_reference(path("tied.gguf"), c, v, 1e-5);
}

TEST_F(ModelTest, MultiHeadWithoutGroupingMatchesReference) {
  TinyConfig c;
  c.heads_kv = c.heads;
  const auto v = test::write_tiny_model(path("mha.gguf"), c);
  expect_matches_reference(path("mha.gguf"), c, v, 1e-5);
}

TEST_F(ModelTest, Qwen2MatchesFloat64Reference) {
  TinyConfig c;
  c.arch = "qwen2";
  c.tied = true;
  c.rope_base = 1000000.0f;
  const auto v = test::write_tiny_model(path("qwen2.gguf"), c);
  expect_matches_reference(path("qwen2.gguf"), c, v, 1e-5);
}

TEST_F(ModelTest, Qwen3MatchesFloat64Reference) {
  TinyConfig c;
  c.arch = "qwen3";
  c.head_dim = 32;  // key_length differs from embd / heads = 16
  c.heads_kv = 1;
  const auto v = test::write_tiny_model(path("qwen3.gguf"), c);
  expect_matches_reference(path("qwen3.gguf"), c, v, 1e-5);
}

// Every matrix type: the logits match the float64 forward over the dequantized
// weights (the bound covers the quantized activations of the quantized dot products).
TEST_F(ModelTest, EveryWeightTypeMatchesReference) {
  const GgmlType types[] = {GgmlType::F16,  GgmlType::BF16, GgmlType::Q4_0, GgmlType::Q4_1,
                            GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::Q2_K,
                            GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K};
  for (GgmlType t : types) {
    SCOPED_TRACE(std::string(ggml_type_name(t)));
    TinyConfig c;
    c.type = t;
    c.arch = t == GgmlType::Q4_K ? "qwen2" : "llama";
    if (ggml_block_size(t) == 256) c.embd = c.ff = 256;
    const std::string file = path(std::string(ggml_type_name(t)) + ".gguf");
    const auto v = test::write_tiny_model(file, c);
    // The CPU dots f16 / bf16 weights with activations rounded to f16 / bf16 and the
    // block types with activations quantized to 8 bits.
    const double bound = t == GgmlType::F16 ? 1e-6 : t == GgmlType::BF16 ? 5e-5 : 2e-3;
    expect_matches_reference(file, c, v, bound);
  }
}

// Matrices of one layer in different types (as Q4_K_M mixes them): q, k, v and gate, up
// are projected by runs of one type (here q alone, k and v together; gate and up apart).
TEST_F(ModelTest, MixedWeightTypesMatchReference) {
  for (const std::string arch : {"llama", "qwen2"}) {
    SCOPED_TRACE(arch);
    TinyConfig c;
    c.arch = arch;
    c.type = GgmlType::Q8_0;
    c.types = {{"attn_q", GgmlType::Q4_0}, {"ffn_up", GgmlType::Q4_1}};
    const std::string file = path(arch + "_mixed.gguf");
    const auto v = test::write_tiny_model(file, c);
    expect_matches_reference(file, c, v, 2e-3);
  }
}

TEST_F(ModelTest, DecodeTokenByTokenMatchesPrefill) {
  TinyConfig c;
  c.arch = "qwen3";
  test::write_tiny_model(path("m.gguf"), c);
  const auto ids = prompt_of(12, c.vocab);
  for (Device d : available_devices()) {
    SCOPED_TRACE(d.str());
    ModelOptions o;
    o.device = d;
    Model m = Model::load(path("m.gguf"), o);
    const auto all = m.forward(ids, true).to_vector<float>();
    EXPECT_EQ(m.position(), ids.size());
    m.reset();
    EXPECT_EQ(m.position(), 0u);
    // 5 tokens as a batch, then one at a time.
    (void)m.forward(std::vector<int32_t>(ids.begin(), ids.begin() + 5));
    for (size_t p = 5; p < ids.size(); ++p) {
      const auto one = m.forward({ids[p]}).to_vector<float>();
      ASSERT_EQ(one.size(), c.vocab);
      std::vector<double> want(all.begin() + ptrdiff_t(p * c.vocab),
                               all.begin() + ptrdiff_t((p + 1) * c.vocab));
      EXPECT_LT(test::nmse(one, want), 1e-9) << "position " << p;
    }
  }
}

// One token at a time from position 0, against the float64 reference at every position,
// with the GPU's recorded decode step (replays from the third token on) and without it;
// both take the same kernels, so their logits agree exactly. After reset() the
// recorded step serves the positions again.
TEST_F(ModelTest, DecodeStepsMatchTheReferenceWithAndWithoutTheGraph) {
  TinyConfig c;
  c.type = GgmlType::Q8_0;
  const test::TinyValues values = test::write_tiny_model(path("m.gguf"), c);
  const auto ids = prompt_of(20, c.vocab);
  const auto ref = test::reference_logits(c, values, ids);
  for (Device d : available_devices()) {
    SCOPED_TRACE(d.str());
    std::vector<std::vector<float>> runs;
    for (bool graph : {true, false}) {
      ModelOptions o;
      o.device = d;
      o.graph = graph;
      Model m = Model::load(path("m.gguf"), o);
      std::vector<float> all;
      for (int pass = 0; pass < 2; ++pass) {
        m.reset();
        for (size_t p = 0; p < ids.size(); ++p) {
          const auto one = m.forward({ids[p]}).to_vector<float>();
          ASSERT_EQ(one.size(), c.vocab);
          EXPECT_LT(test::nmse(one, ref[p]), 1e-3)
              << "graph " << graph << " pass " << pass << " position " << p;
          if (pass == 1) all.insert(all.end(), one.begin(), one.end());
        }
      }
      runs.push_back(std::move(all));
    }
    EXPECT_EQ(runs[0], runs[1]);
  }
}

// A prompt longer than one forward pass (512 tokens) runs in several and still
// matches the reference at its last position.
TEST_F(ModelTest, LongPromptMatchesReference) {
  TinyConfig c;
  c.layers = 1;
  c.ctx = 1024;
  const auto v = test::write_tiny_model(path("long.gguf"), c);
  const auto ids = prompt_of(600, c.vocab);
  const auto ref = test::reference_logits(c, v, ids);
  Model m = Model::load(path("long.gguf"));
  EXPECT_LT(test::nmse(m.forward(ids).to_vector<float>(), ref.back()), 1e-5);
}

TEST_F(ModelTest, InfoDescribesTheModel) {
  TinyConfig c;
  c.arch = "qwen2";
  test::write_tiny_model(path("m.gguf"), c);
  ModelOptions o;
  o.ctx = 32;
  Model m = Model::load(path("m.gguf"), o);
  const ModelInfo& i = m.info();
  EXPECT_EQ(i.arch, "qwen2");
  EXPECT_EQ(i.name, "tiny-qwen2");
  EXPECT_EQ(i.n_vocab, c.vocab);
  EXPECT_EQ(i.n_embd, c.embd);
  EXPECT_EQ(i.n_layer, c.layers);
  EXPECT_EQ(i.n_head, c.heads);
  EXPECT_EQ(i.n_head_kv, c.heads_kv);
  EXPECT_EQ(i.head_dim, c.embd / c.heads);
  EXPECT_EQ(i.n_ctx_train, c.ctx);
  EXPECT_EQ(i.n_ctx, 32u);
  // f32 weights: 4 bytes a parameter; the KV cache: layers x ctx x kv heads x (k + v dims) x 2 bytes.
  EXPECT_EQ(i.weight_bytes, i.n_params * 4);
  EXPECT_EQ(i.kv_cache_bytes, c.layers * 32 * c.heads_kv * 2 * (c.embd / c.heads) * 2);
  EXPECT_FALSE(m.has_tokenizer());
  EXPECT_THROW((void)m.tokenize("hi"), Error);
}

TEST_F(ModelTest, DefaultContextIsTheModelsCappedAt4096) {
  TinyConfig c;
  c.ctx = 100;
  test::write_tiny_model(path("short.gguf"), c);
  EXPECT_EQ(Model::load(path("short.gguf")).info().n_ctx, 100u);
  c.ctx = 8192;
  test::write_tiny_model(path("long.gguf"), c);
  EXPECT_EQ(Model::load(path("long.gguf")).info().n_ctx, 4096u);
}

TEST_F(ModelTest, LoadReportsProgressUpToTheWeightBytes) {
  TinyConfig c;
  test::write_tiny_model(path("m.gguf"), c);
  ModelOptions o;
  std::vector<std::pair<size_t, size_t>> seen;
  o.progress = [&](size_t done, size_t total) { seen.emplace_back(done, total); };
  Model m = Model::load(path("m.gguf"), o);
  ASSERT_GE(seen.size(), 2u);
  EXPECT_EQ(seen.front().first, 0u);
  EXPECT_EQ(seen.back().first, m.info().weight_bytes);
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_GE(seen[i].first, seen[i - 1].first);
}

// ---- generation -----------------------------------------------------------------------

TEST_F(ModelTest, GreedyGenerationFollowsTheReferenceArgmax) {
  TinyConfig c;
  const auto v = test::write_tiny_model(path("m.gguf"), c);
  std::vector<int32_t> seq = prompt_of(4, c.vocab);
  const size_t prompt_len = seq.size();
  // The reference's greedy continuation of 6 tokens.
  for (int k = 0; k < 6; ++k) {
    const auto ref = test::reference_logits(c, v, seq).back();
    seq.push_back(int32_t(std::max_element(ref.begin(), ref.end()) - ref.begin()));
  }
  for (Device d : available_devices()) {
    SCOPED_TRACE(d.str());
    ModelOptions o;
    o.device = d;
    Model m = Model::load(path("m.gguf"), o);
    GenerateOptions g;
    g.n_predict = 6;
    g.sampler.temp = 0.0f;
    std::vector<int32_t> got;
    const GenerateStats st =
        m.generate(std::vector<int32_t>(seq.begin(), seq.begin() + ptrdiff_t(prompt_len)), g,
                   [&](int32_t id, std::string_view) {
                     got.push_back(id);
                     return true;
                   });
    EXPECT_EQ(got, std::vector<int32_t>(seq.begin() + ptrdiff_t(prompt_len), seq.end()));
    EXPECT_EQ(st.prompt_tokens, prompt_len);
    EXPECT_EQ(st.generated_tokens, 6u);
    EXPECT_EQ(st.decode_steps, 5u);
    EXPECT_FALSE(st.stopped_at_eog);
    EXPECT_EQ(m.position(), prompt_len + 5);
  }
}

TEST_F(ModelTest, SameSeedSameTokens) {
  TinyConfig c;
  test::write_tiny_model(path("m.gguf"), c);
  Model m = Model::load(path("m.gguf"));
  auto run = [&](uint32_t seed) {
    m.reset();
    GenerateOptions g;
    g.n_predict = 20;
    g.sampler.temp = 1.5f;
    g.sampler.top_k = 0;
    g.sampler.top_p = 1.0f;
    g.sampler.min_p = 0.0f;
    g.sampler.seed = seed;
    std::vector<int32_t> got;
    const GenerateStats st = m.generate(prompt_of(3, c.vocab), g, [&](int32_t id, std::string_view) {
      got.push_back(id);
      return true;
    });
    EXPECT_EQ(st.seed, seed);
    return got;
  };
  const auto a = run(1234), b = run(1234), other = run(99);
  EXPECT_EQ(a.size(), 20u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, other);  // 20 draws from a flat distribution over 48 tokens
}

TEST_F(ModelTest, CallbackReturningFalseStops) {
  TinyConfig c;
  test::write_tiny_model(path("m.gguf"), c);
  Model m = Model::load(path("m.gguf"));
  GenerateOptions g;
  g.n_predict = 10;
  size_t calls = 0;
  const auto st =
      m.generate(prompt_of(3, c.vocab), g, [&](int32_t, std::string_view) { return ++calls < 3; });
  EXPECT_EQ(calls, 3u);
  EXPECT_EQ(st.generated_tokens, 3u);
}

TEST_F(ModelTest, GenerationStopsWhenTheCacheIsFull) {
  TinyConfig c;
  test::write_tiny_model(path("m.gguf"), c);
  ModelOptions o;
  o.ctx = 10;
  Model m = Model::load(path("m.gguf"), o);
  GenerateOptions g;  // n_predict -1: until the cache is full
  const auto st = m.generate(prompt_of(4, c.vocab), g, [](int32_t, std::string_view) { return true; });
  EXPECT_EQ(m.position(), 10u);
  EXPECT_EQ(st.generated_tokens, 7u);  // the last token is sampled from position 9's logits
}

// ---- bad input --------------------------------------------------------------------------

TEST_F(ModelTest, MissingFileIsAnIoError) {
  expect_error([&] { Model::load(path("absent.gguf")); }, ErrorKind::Io, {"absent.gguf"});
}

TEST_F(ModelTest, TruncatedFileIsAFormatError) {
  TinyConfig c;
  test::write_tiny_model(path("m.gguf"), c);
  const auto size = std::filesystem::file_size(path("m.gguf"));
  std::filesystem::resize_file(path("m.gguf"), size - 100);
  expect_error([&] { Model::load(path("m.gguf")); }, ErrorKind::Format, {"m.gguf"});
}

TEST_F(ModelTest, CorruptedHeaderIsAFormatError) {
  TinyConfig c;
  test::write_tiny_model(path("m.gguf"), c);
  {
    std::fstream f(path("m.gguf"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(0);
    f.write("GGXX", 4);
  }
  expect_error([&] { Model::load(path("m.gguf")); }, ErrorKind::Format, {"m.gguf"});
}

TEST_F(ModelTest, UnknownArchitectureIsRefusedListingTheSupported) {
  test::TinyFile f = test::make_tiny_model(TinyConfig{});
  f.metadata[0].second = GgufValue(std::string("gpt2"));
  write_gguf(path("m.gguf"), f.metadata, f.tensors);
  expect_error([&] { Model::load(path("m.gguf")); }, ErrorKind::Format,
               {"architecture 'gpt2' is not supported", "llama, qwen2, qwen3"});
}

TEST_F(ModelTest, MissingTensorIsNamed) {
  test::TinyFile f = test::make_tiny_model(TinyConfig{});
  std::erase_if(f.tensors, [](const GgufTensorData& t) { return t.name == "blk.1.ffn_up.weight"; });
  write_gguf(path("m.gguf"), f.metadata, f.tensors);
  expect_error([&] { Model::load(path("m.gguf")); }, ErrorKind::Format,
               {"tensor 'blk.1.ffn_up.weight' is missing", "ffn_gate.weight"});
}

TEST_F(ModelTest, QwenWithoutBiasesIsMissingATensor) {
  TinyConfig c;  // a llama file relabelled qwen2 lacks the biases qwen2 reads
  test::TinyFile f = test::make_tiny_model(c);
  f.metadata.clear();
  c.arch = "qwen2";
  f.metadata = test::make_tiny_model(c).metadata;
  write_gguf(path("m.gguf"), f.metadata, f.tensors);
  expect_error([&] { Model::load(path("m.gguf")); }, ErrorKind::Format, {"'blk.0.attn_q.bias' is missing"});
}

TEST_F(ModelTest, WrongShapeIsNamedWithTheExpectedShape) {
  TinyConfig c;
  test::TinyFile f = test::make_tiny_model(c);
  for (auto& t : f.tensors) {
    if (t.name == "blk.0.attn_k.weight") {  // [kv, embd] -> written as [embd, kv]: same bytes, other shape
      std::swap(t.ne[0], t.ne[1]);
    }
  }
  write_gguf(path("m.gguf"), f.metadata, f.tensors);
  expect_error([&] { Model::load(path("m.gguf")); }, ErrorKind::Format,
               {"blk.0.attn_k.weight", "shape [64,32]", "expected [32,64]"});
}

TEST_F(ModelTest, UnsupportedTensorTypeIsRefusedListingTheSupported) {
  TinyConfig c;
  c.embd = c.ff = 256;
  test::TinyFile f = test::make_tiny_model(c);
  for (auto& t : f.tensors) {
    if (t.name == "blk.0.ffn_down.weight") {
      const QTensor q = QTensor::quantize(Tensor::zeros({256, 256}), GgmlType::Q8_K);
      t = GgufTensorData::from_qtensor(t.name, q);
    }
  }
  write_gguf(path("m.gguf"), f.metadata, f.tensors);
  expect_error([&] { Model::load(path("m.gguf")); }, ErrorKind::Format,
               {"blk.0.ffn_down.weight", "type q8_K", "q4_0", "q6_K"});
}

TEST_F(ModelTest, TensorOutsideTheArchitectureIsRefused) {
  test::TinyFile f = test::make_tiny_model(TinyConfig{});
  f.tensors.push_back(GgufTensorData::from_tensor("blk.0.attn_q.bias", Tensor::zeros({64})));
  write_gguf(path("m.gguf"), f.metadata, f.tensors);
  expect_error([&] { Model::load(path("m.gguf")); }, ErrorKind::Format,
               {"'blk.0.attn_q.bias' is not part of architecture llama"});
}

TEST_F(ModelTest, MissingHyperparameterIsNamed) {
  test::TinyFile f = test::make_tiny_model(TinyConfig{});
  std::erase_if(f.metadata, [](const auto& kv) { return kv.first == "llama.block_count"; });
  write_gguf(path("m.gguf"), f.metadata, f.tensors);
  expect_error([&] { Model::load(path("m.gguf")); }, ErrorKind::Format, {"'llama.block_count' is missing"});
}

TEST_F(ModelTest, PromptLongerThanTheContextIsRefused) {
  TinyConfig c;
  test::write_tiny_model(path("m.gguf"), c);
  ModelOptions o;
  o.ctx = 8;
  Model m = Model::load(path("m.gguf"), o);
  expect_error([&] { m.forward(prompt_of(9, c.vocab)); }, ErrorKind::InvalidArgument,
               {"9 tokens at position 0 do not fit the context of 8 tokens"});
  expect_error([&] { m.generate(prompt_of(9, c.vocab), {}, [](int32_t, std::string_view) { return true; }); },
               ErrorKind::InvalidArgument, {"prompt of 9 tokens does not fit the context of 8 tokens"});
  EXPECT_EQ(m.position(), 0u);
  (void)m.forward(prompt_of(8, c.vocab));  // exactly full is fine
  expect_error([&] { m.forward({1}); }, ErrorKind::InvalidArgument, {"1 tokens at position 8"});
}

TEST_F(ModelTest, ContextAboveTwoToThe32IsRefused) {
  test::write_tiny_model(path("m.gguf"), TinyConfig{});
  ModelOptions o;
  o.ctx = (size_t(1) << 32) + 1;
  expect_error([&] { Model::load(path("m.gguf"), o); }, ErrorKind::InvalidArgument,
               {"ctx 4294967297 exceeds 4294967296 tokens"});
}

TEST_F(ModelTest, AbsentDeviceIsRefused) {
  test::write_tiny_model(path("m.gguf"), TinyConfig{});
  ModelOptions o;
  o.device = Device::gpu(99);
  expect_error([&] { Model::load(path("m.gguf"), o); }, ErrorKind::InvalidArgument, {"gpu:99"});
}

TEST_F(ModelTest, TokenOutsideTheVocabularyIsRefused) {
  TinyConfig c;
  test::write_tiny_model(path("m.gguf"), c);
  Model m = Model::load(path("m.gguf"));
  expect_error([&] { m.forward({1, 48}); }, ErrorKind::InvalidArgument, {"token 48", "vocabulary of 48"});
  expect_error([&] { m.forward({-1}); }, ErrorKind::InvalidArgument, {"token -1"});
  expect_error([&] { m.forward({}); }, ErrorKind::InvalidArgument, {"no tokens"});
}

TEST_F(ModelTest, ModelTooLargeForTheMemoryIsRefusedBeforeLoading) {
  TinyConfig c;
  test::write_tiny_model(path("m.gguf"), c);
  const MemoryBudget b = Model::memory_budget(path("m.gguf"));
  EXPECT_GT(b.weights, 0u);
  EXPECT_GT(b.kv_cache, 0u);
  EXPECT_GT(b.available, 0u);
  ModelOptions o;
  o.memory_limit = b.needed() - 1;
  const size_t before = memory_stats(Device::cpu()).in_use;
  expect_error([&] { Model::load(path("m.gguf"), o); }, ErrorKind::OutOfMemory,
               {"m.gguf needs", "MiB on cpu", "the memory limit is"});
  EXPECT_EQ(memory_stats(Device::cpu()).in_use, before);  // nothing was uploaded
  // The process stays usable: the same model loads within the limit it needs.
  o.memory_limit = b.needed();
  Model m = Model::load(path("m.gguf"), o);
  EXPECT_EQ(m.forward({1, 2}).dims(), (std::vector<size_t>{1, c.vocab}));
}

TEST_F(ModelTest, ModelLargerThanTheFreeMemoryIsRefused) {
  // A KV cache of 2^32 - 1 tokens x 2 layers x 2 kv heads x 16 dims x 2 x 2 bytes (1 TiB).
  TinyConfig c;
  c.ctx = 0xFFFFFFFFu;
  test::write_tiny_model(path("big.gguf"), c);
  ModelOptions o;
  o.ctx = c.ctx;
  const size_t before = memory_stats(Device::cpu()).in_use;
  expect_error([&] { Model::load(path("big.gguf"), o); }, ErrorKind::OutOfMemory,
               {"KV cache", "for 4294967295 tokens", "the device has free"});
  EXPECT_EQ(memory_stats(Device::cpu()).in_use, before);
}

}  // namespace
}  // namespace wick
