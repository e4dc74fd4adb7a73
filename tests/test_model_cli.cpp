// `wick generate` and `wick bench-model` through the built binary, on SmolLM2-135M-Instruct Q4_1 from the
// fetch_test_data fixture and on tiny files written here.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_run.h"
#include "model_test_util.h"
#include "wick/io.h"
#include "wick/tokenizer.h"

namespace wick {
namespace {

namespace fs = std::filesystem;

const std::string kModel = std::string(WICK_TEST_DATA_DIR) + "/SmolLM2-135M-Instruct.Q4_1.gguf";

using test::CliRun;

CliRun run(const std::string& args) { return test::run_cli_split(args); }

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

class ModelCli : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(kModel)) << kModel
                                    << " is missing: run scripts/fetch-test-data.sh " WICK_TEST_DATA_DIR;
    dir_ = fs::temp_directory_path() / ("wick_model_cli_dir_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ModelCli, GreedyGenerationStreamsTheAnswerAndReportsFigures) {
  const CliRun r = run("generate '" + kModel + "' -p 'The capital of France is' -n 1 --temp 0 -d cpu");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, " Paris\n");
  EXPECT_TRUE(contains(r.err, "load: ")) << r.err;
  EXPECT_TRUE(contains(r.err, "prompt: 5 tokens")) << r.err;
  EXPECT_TRUE(contains(r.err, "generated: 1 tokens")) << r.err;
  EXPECT_TRUE(contains(r.err, "tok/s")) << r.err;
  EXPECT_TRUE(contains(r.err, "memory on cpu")) << r.err;
  EXPECT_TRUE(contains(r.err, "weights + KV cache (4096 tokens)")) << r.err;
}

TEST_F(ModelCli, DumpLogitsWritesTheLastPromptPosition) {
  const std::string npy = (dir_ / "logits.npy").string();
  const CliRun r = run("generate '" + kModel +
                       "' -p 'The capital of France is' -n 1 --temp 0 -d cpu --dump-logits " + npy);
  ASSERT_EQ(r.status, 0) << r.err;
  const Tensor t = read_npy(npy);
  ASSERT_EQ(t.dims(), (std::vector<size_t>{49152}));
  EXPECT_EQ(t.dtype(), DType::F32);
  const auto v = t.to_vector<float>();
  const auto best = int32_t(std::max_element(v.begin(), v.end()) - v.begin());
  EXPECT_EQ(Tokenizer::from_gguf(GgufFile::open(kModel)).token_to_piece(best), " Paris");
}

TEST_F(ModelCli, ChatAppliesTheTemplate) {
  const CliRun r =
      run("generate '" + kModel + "' -p 'What is the capital of France?' -n 24 --temp 0 --chat -d cpu");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "Paris")) << r.out;
  EXPECT_TRUE(contains(r.err, "(end of generation)")) << r.err;
}

TEST_F(ModelCli, SameSeedSameText) {
  const std::string args =
      "generate '" + kModel + "' -p 'Once upon a time' -n 12 --seed 11 --temp 1.2 -d cpu";
  const CliRun a = run(args), b = run(args);
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_GT(a.out.size(), 12u);
}

TEST_F(ModelCli, PromptLongerThanTheContextIsAnError) {
  const CliRun r = run("generate '" + kModel + "' -p 'The capital of France is' --ctx 3 -d cpu");
  EXPECT_EQ(r.status, 1);  // the run failed (not the command line's form, not a file)
  EXPECT_TRUE(contains(r.err, "the prompt of 5 tokens does not fit the context of 3 tokens")) << r.err;
}

TEST_F(ModelCli, UnknownArchitectureIsAnError) {
  test::TinyFile f = test::make_tiny_model(test::TinyConfig{});
  f.metadata[0].second = GgufValue(std::string("mamba"));
  const std::string file = (dir_ / "mamba.gguf").string();
  write_gguf(file, f.metadata, f.tensors);
  const CliRun r = run("generate " + file + " -p hi -d cpu");
  EXPECT_EQ(r.status, 3);  // a file wick cannot run
  EXPECT_TRUE(contains(r.err, "architecture 'mamba' is not supported (supported: llama, qwen2, qwen3)"))
      << r.err;
}

TEST_F(ModelCli, AbsentDeviceIsAnError) {
  const CliRun r = run("generate '" + kModel + "' -p hi -d gpu:9");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "gpu:9")) << r.err;
}

// SmolLM2-135M has 9 heads and 3 KV heads: three ranks split it, two do not.
TEST_F(ModelCli, TensorParallelOnTheCpuGeneratesTheUnsplitText) {
  const std::string args = "generate '" + kModel + "' -p 'The capital of France is' -n 4 --temp 0 -d cpu";
  const CliRun whole = run(args), split = run(args + " --tp 3");
  ASSERT_EQ(whole.status, 0) << whole.err;
  ASSERT_EQ(split.status, 0) << split.err;
  EXPECT_EQ(split.out, whole.out);
  EXPECT_TRUE(contains(split.out, " Paris")) << split.out;
  EXPECT_TRUE(contains(split.err, "on cpu, tp 3)")) << split.err;
}

TEST_F(ModelCli, TpThatDoesNotDivideTheHeadsIsAnError) {
  const CliRun r = run("generate '" + kModel + "' -p hi -d cpu --tp 2");
  EXPECT_EQ(r.status, 1);  // the model refuses the split: an error of the library, not of usage
  EXPECT_TRUE(contains(r.err, "tp 2: head_count 9 is not a multiple of tp")) << r.err;
}

// Without NCCL no build splits a model across GPUs: with fewer GPUs than ranks the
// message counts them, with enough it names NCCL; with none, the absent device is named.
TEST_F(ModelCli, TpAcrossGpusIsRefusedWithoutNccl) {
  size_t gpus = 0;
  for (const Device& d : available_devices()) gpus += d.is_gpu();
  for (const char* cmd : {"generate", "bench-model"}) {
    const CliRun r =
        run(std::string(cmd) + " '" + kModel + "' " + (cmd[0] == 'g' ? "-p hi " : "") + "-d gpu --tp 2");
    EXPECT_EQ(r.status, 2) << cmd;
    const std::string want = gpus == 0  ? "gpu:0 is not present"
                             : gpus < 2 ? "--tp 2 on GPUs needs 2 GPUs, " + std::to_string(gpus) + " present"
                                        : "needs NCCL";
    EXPECT_TRUE(contains(r.err, want)) << cmd << ": " << r.err;
  }
}

TEST_F(ModelCli, BenchModelReportsTp) {
  const CliRun r = run("bench-model '" + kModel + "' -p 8 -n 2 -r 1 -d cpu --tp 3 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 2u);
  for (const auto& t : j) EXPECT_EQ(t["tp"], 3);
}

TEST_F(ModelCli, BenchModelJsonHasPrefillAndDecodeFigures) {
  const CliRun r = run("bench-model '" + kModel + "' -p 16 -n 4 -r 2 -d cpu --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["test"], "pp16");
  EXPECT_EQ(j[0]["n_prompt"], 16);
  EXPECT_EQ(j[1]["test"], "tg4");
  EXPECT_EQ(j[1]["n_gen"], 4);
  for (const auto& t : j) {
    EXPECT_EQ(t["samples_ts"].size(), 2u);
    EXPECT_GT(t["avg_ts"].get<double>(), 0.0);
    EXPECT_GE(t["stddev_ts"].get<double>(), 0.0);
    EXPECT_EQ(t["device"], "cpu");
    EXPECT_EQ(t["arch"], "llama");
  }
}

TEST_F(ModelCli, BenchModelDepthStartsEachTestWithContext) {
  const CliRun r = run("bench-model '" + kModel + "' -p 4 -n 2 --depth 8 -r 1 -d cpu --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["test"], "pp4 @ d8");
  EXPECT_EQ(j[1]["test"], "tg2 @ d8");
  for (const auto& t : j) EXPECT_EQ(t["n_depth"], 8);
}

TEST_F(ModelCli, BenchModelTable) {
  const CliRun r = run("bench-model '" + kModel + "' -p 8 -n 0 -r 1 -d cpu");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "| test | t/s |")) << r.out;
  EXPECT_TRUE(contains(r.out, "| pp8 |")) << r.out;
  EXPECT_FALSE(contains(r.out, "tg")) << r.out;
}

}  // namespace
}  // namespace wick
