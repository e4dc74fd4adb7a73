// `wick tokenize` through the built binary: ids of
// SmolLM2's prompt and of llama.cpp's vocab files (expected ids from llama.cpp's
// vocab tests), the flags, and bad input. The model files come from
// scripts/fetch-test-data.sh (the fetch_test_data CTest fixture) in WICK_TEST_DATA_DIR.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_run.h"
#include "wick/io.h"

namespace {

namespace fs = std::filesystem;

std::string data(const std::string& file) { return std::string(WICK_TEST_DATA_DIR) + "/" + file; }

using wick::test::CliRun;

// Runs `wick tokenize <args>`; stdout only, or stdout and stderr together.
CliRun tokenize(const std::string& args, bool with_stderr = false) {
  return wick::test::run_cli("tokenize " + args, with_stderr);
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(TokenizeCli, SmolLM2PromptIds) {
  const CliRun r = tokenize("'" + data("SmolLM2-135M-Instruct.Q4_1.gguf") + "' 'The capital of France is'");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out, "504 3575 282 4649 314\n");
}

TEST(TokenizeCli, NoSpecialLeavesOutBos) {
  // llama.cpp's vocab test: "Hello world" -> 15043 3186; the file adds BOS (1).
  const std::string model = "'" + data("ggml-vocab-llama-spm.gguf") + "'";
  CliRun r = tokenize(model + " 'Hello world'");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out, "1 15043 3186\n");
  r = tokenize(model + " 'Hello world' --no-special");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out, "15043 3186\n");
}

TEST(TokenizeCli, JsonGivesIdsAndPieces) {
  const std::string model = "'" + data("ggml-vocab-llama-bpe.gguf") + "'";
  CliRun r = tokenize(model + " 'Hello<|eot_id|>' --json");
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ids"], nlohmann::json({128000, 9906, 128009}));
  EXPECT_EQ(j["pieces"], nlohmann::json({"<|begin_of_text|>", "Hello", "<|eot_id|>"}));
  // Without parsing special tokens the marker is plain text.
  r = tokenize(model + " 'Hello<|eot_id|>' --json --no-special --no-parse-special");
  ASSERT_EQ(r.status, 0) << r.out;
  j = nlohmann::json::parse(r.out);
  ASSERT_GT(j["ids"].size(), 2u);
  EXPECT_EQ(j["ids"][0], 9906);
  for (const auto& id : j["ids"]) EXPECT_LT(id.get<int>(), 128000);
}

TEST(TokenizeCli, BadInputsExitWithTheirCodes) {
  CliRun r = tokenize("/nonexistent/model.gguf 'Hi'", true);
  EXPECT_EQ(r.status, 3) << r.out;  // a file error
  EXPECT_TRUE(contains(r.out, "/nonexistent/model.gguf")) << r.out;

  // A GGUF without tokenizer metadata.
  const fs::path file =
      fs::temp_directory_path() / ("wick_tokenize_cli_" + std::to_string(::getpid()) + ".gguf");
  wick::write_gguf(file.string(), {{"general.architecture", wick::GgufValue("llama")}}, {});
  r = tokenize("'" + file.string() + "' 'Hi'", true);
  fs::remove(file);
  EXPECT_EQ(r.status, 3) << r.out;
  EXPECT_TRUE(contains(r.out, "[tokenizer]")) << r.out;
  EXPECT_TRUE(contains(r.out, "tokenizer.ggml.model is missing")) << r.out;

  r = tokenize("'" + data("ggml-vocab-gpt-2.gguf") + "'", true);  // no TEXT
  EXPECT_EQ(r.status, 2) << r.out;                                // a usage error
  EXPECT_TRUE(contains(r.out, "text")) << r.out;
}

}  // namespace
