// The model runner: GGUF language models (llama, qwen2, qwen3 and the families that
// are llama in GGUF: Llama 2/3, Mistral, SmolLM) on any device, with the same code.
//
//   wick::ModelOptions o;
//   o.device = wick::Device::gpu(0);
//   wick::Model m = wick::Model::load("model.gguf", o);
//   auto ids = m.tokenize("The capital of France is");
//   m.generate(ids, {}, [](int32_t id, std::string_view text) { std::cout << text; return true; });
//
// Weights are memory-mapped, checked against the architecture (every tensor's name,
// shape and type) before anything is uploaded, and uploaded once; matrices stay
// quantized (QTensor) and go through qmatmul. The KV cache lives on the device in f16.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "wick/comm.h"
#include "wick/device.h"
#include "wick/sampler.h"
#include "wick/tensor.h"

namespace wick {

class Tokenizer;

// Called while weights upload: `done` of `total` bytes.
using LoadProgress = std::function<void(size_t done, size_t total)>;

struct ModelOptions {
  Device device = Device::cpu();
  // Tokens the KV cache holds; 0: min(the model's context length, 4096).
  size_t ctx = 0;
  // Bytes the model may take on the device (weights, KV cache, work buffers); 0: the
  // device's free memory. Loading throws OutOfMemory, before uploading, above it.
  size_t memory_limit = 0;
  LoadProgress progress;
  // Tensor parallelism: when set, the model is split over the communicator's ranks
  // (rank r on its device r; `device` is not used): each rank holds a share of the
  // attention heads, KV heads, feed-forward width and vocabulary, and the ranks sum
  // their partial outputs after each block half. Head counts, KV head counts, the
  // feed-forward width and the vocabulary must divide by the rank count, and the
  // row-parallel matrices' column slices must be whole quantization blocks
  // (InvalidArgument at load otherwise). One rank runs the unsplit model through the
  // communicator.
  std::shared_ptr<Communicator> communicator;
  // GPU decoding: the first one-token step runs as it comes, the second is recorded
  // as a graph (BackendDevice::begin_capture) and every later one replays it, with
  // the token and position passed in device memory. false: every step runs as it
  // comes (the same kernels). Only without a communicator (whose collectives run on
  // the host).
  bool graph = true;
};

// What a loaded model is.
struct ModelInfo {
  std::string arch;  // general.architecture: "llama", "qwen2", "qwen3"
  std::string name;  // general.name, "" when absent
  Device device;     // rank 0's under tensor parallelism
  size_t tp = 1;     // ranks the model is split over
  size_t n_vocab = 0, n_embd = 0, n_layer = 0, n_head = 0, n_head_kv = 0;
  size_t head_dim = 0;     // of queries and keys (attention.key_length)
  size_t n_ff = 0;         // feed-forward width
  size_t n_ctx_train = 0;  // the model's context length
  size_t n_ctx = 0;        // the KV cache's length in tokens
  size_t n_params = 0;
  // Bytes on the device, summed over the ranks under tensor parallelism.
  size_t weight_bytes = 0;    // the weights on the device
  size_t kv_cache_bytes = 0;  // the KV cache on the device
  size_t work_bytes = 0;      // the most the largest forward pass adds (estimate)
};

// Device memory a model needs, and what the device has, for the check before loading;
// under tensor parallelism, what one rank needs on its device.
struct MemoryBudget {
  size_t weights = 0, kv_cache = 0, work = 0;  // bytes
  size_t available = 0;                        // bytes: the limit, or free device memory
  size_t needed() const { return weights + kv_cache + work; }
};

// What generate() did.
struct GenerateStats {
  size_t prompt_tokens = 0;
  double prompt_seconds = 0.0;  // prefill
  size_t generated_tokens = 0;  // sampled tokens, an end-of-generation token included
  size_t decode_steps = 0;      // forward passes of one token (each generated token but the last)
  double decode_seconds = 0.0;  // the sampling and decode steps after the prefill
  bool stopped_at_eog = false;  // an end-of-generation token ended it
  uint32_t seed = 0;            // the sampler's seed (drawn when the options asked for a random one)
};

struct GenerateOptions {
  int64_t n_predict = -1;  // tokens to generate; -1: until end of generation or a full cache
  SamplerParams sampler;
  // Receives the logits (1, n_vocab) f32 of the prompt's last position (optional).
  std::function<void(const Tensor&)> on_prompt_logits;
};

// Receives each generated token and its text (may be "" while a UTF-8 character is
// incomplete); returning false stops generation.
using TokenCallback = std::function<bool(int32_t id, std::string_view text)>;

class Model {
 public:
  // Opens, checks and uploads a model. Errors (wick::Error): Io / Format for a missing,
  // truncated or corrupt file; Format naming the tensor or key for an unknown
  // architecture, a missing tensor, a wrong shape or an unsupported tensor type (the
  // message lists what is supported); OutOfMemory, before uploading, saying how much is
  // needed and how much is free.
  static Model load(const std::string& path, const ModelOptions& options = {});
  // The memory check of load() without loading: what the model needs at `options`.
  static MemoryBudget memory_budget(const std::string& path, const ModelOptions& options = {});

  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;
  ~Model();

  const ModelInfo& info() const;
  // True when the file carries a tokenizer (tokenizer.ggml.*).
  bool has_tokenizer() const;
  // Throws InvalidArgument when the file has no tokenizer.
  const Tokenizer& tokenizer() const;
  // Text to token ids (add_special: BOS/EOS as the model's metadata asks; parse_special:
  // "<|im_start|>" style text becomes its special token).
  std::vector<int32_t> tokenize(std::string_view text, bool add_special = true,
                                bool parse_special = false) const;

  // Runs `tokens` at position(), stores their keys and values in the cache and advances
  // position(). Returns f32 logits on the device: (1, n_vocab) for the last token, or
  // (tokens.size(), n_vocab) with all_logits. Throws InvalidArgument, before computing,
  // when the tokens do not fit the cache or an id is outside the vocabulary.
  Tensor forward(const std::vector<int32_t>& tokens, bool all_logits = false);
  // Tokens in the cache.
  size_t position() const;
  // Empties the cache (position() = 0).
  void reset();

  // Feeds `prompt` at position() (the cache continues; reset() to start over), then
  // samples up to n_predict tokens, calling on_token for each. Throws InvalidArgument
  // when the prompt does not fit the cache.
  GenerateStats generate(const std::vector<int32_t>& prompt, const GenerateOptions& options,
                         const TokenCallback& on_token);

 private:
  struct Impl;
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace wick
