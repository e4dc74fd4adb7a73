// Hugging Face llama-family checkpoints (LlamaForCausalLM, MistralForCausalLM) written as
// llama.cpp's convert_hf_to_gguf.py writes them: llama.cpp's tensor names, the llama.*
// hyperparameters of the config.json beside the weights, and the rows of the Q and K
// projections permuted from Hugging Face's rotary layout (halves) to GGUF's (pairs).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "wick/io.h"

namespace wick::cli {

class HfLlama {
 public:
  // The conversion of `st` (read from `path`) when its tensor names are Hugging Face llama's
  // and `path`'s folder holds a config.json of a llama or mistral model; nullopt otherwise,
  // with `why` saying what was missing when the names matched.
  static std::optional<HfLlama> detect(const SafetensorsFile& st, const std::string& path, std::string& why);

  // general.architecture = "llama" and the llama.* keys.
  const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return meta_; }
  // llama.cpp's name of a Hugging Face tensor; "" for a tensor llama.cpp does not load
  // (rotary_emb.inv_freq); the name itself for one it does not know.
  std::string gguf_name(const std::string& hf_name) const;
  // The tensor as GGUF stores it: Q and K projections permuted, others as they are.
  Tensor convert(const std::string& hf_name, const Tensor& t) const;

 private:
  std::vector<std::pair<std::string, GgufValue>> meta_;
  uint32_t n_head_ = 0, n_head_kv_ = 0;
};

}  // namespace wick::cli
