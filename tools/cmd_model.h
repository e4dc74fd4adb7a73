// `wick generate` and `wick bench-model`: the model runner's subcommands
// (tools/cmd_generate.cpp, tools/cmd_bench_model.cpp), and what they share.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "wick/comm.h"
#include "wick/model.h"

namespace wick::cli {

struct GenerateCliOptions {
  std::string model, prompt;
  std::string device;  // empty: the first GPU, else the CPU
  int64_t n_predict = -1;
  bool chat = false;
  size_t ctx = 0;  // 0: min(the model's context, 4096)
  SamplerParams sampler;
  std::string dump_logits;  // .npy of the prompt's last logits
  size_t tp = 0;            // ranks of tensor parallelism (model_communicator); 0: none
  bool graph = true;        // ModelOptions::graph
};
// Streams the generated text to stdout; load time, prompt and generation speed and
// device memory to stderr.
int cmd_generate(const GenerateCliOptions& o);

struct BenchModelOptions {
  std::string model;
  std::string device;  // empty: the first GPU, else the CPU
  size_t n_prompt = 512;
  size_t n_gen = 128;
  size_t depth = 0;  // tokens already in the cache when a test starts (llama-bench's -d)
  int reps = 5;
  bool json = false;
  size_t tp = 0;      // ranks of tensor parallelism (model_communicator); 0: none
  bool graph = true;  // ModelOptions::graph
};
// llama-bench's figures: prefill tokens/s of n_prompt tokens (pp) and decode tokens/s
// of n_gen tokens (tg), mean and standard deviation over the repetitions; with a depth,
// each test starts with that many tokens of context already in the cache (not timed).
int cmd_bench_model(const BenchModelOptions& o);

// The device a model command runs on: `name` parsed, or the first GPU, else the CPU.
Device model_device(const std::string& name);
// The communicator of `--tp N` on `device`: N ranks on the CPU, or one rank on a GPU,
// through the host communicator; null for tp 0. Tensor parallelism across GPUs needs
// NCCL, which this build does not have: InvalidArgument saying so, or saying how many
// GPUs are present when there are fewer than N.
std::shared_ptr<Communicator> model_communicator(Device device, size_t tp);
// Loads a model with a progress bar on stderr, split over `comm`'s ranks when set.
// graph: ModelOptions::graph.
Model load_model(const std::string& path, Device device, size_t ctx, std::shared_ptr<Communicator> comm,
                 bool graph);

}  // namespace wick::cli
