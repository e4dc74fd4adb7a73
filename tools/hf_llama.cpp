// Hugging Face llama-family checkpoints to llama.cpp's GGUF layout (see hf_llama.h); the names
// and keys are those of llama.cpp's gguf-py (tensor_mapping.py, constants.py).
#include "hf_llama.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

namespace wick::cli {

namespace {

// Per-layer names: Hugging Face's suffix after model.layers.N. and llama.cpp's after blk.N.
constexpr std::pair<const char*, const char*> kLayerNames[] = {
    {"input_layernorm.weight", "attn_norm.weight"},    {"self_attn.q_proj.weight", "attn_q.weight"},
    {"self_attn.k_proj.weight", "attn_k.weight"},      {"self_attn.v_proj.weight", "attn_v.weight"},
    {"self_attn.o_proj.weight", "attn_output.weight"}, {"post_attention_layernorm.weight", "ffn_norm.weight"},
    {"mlp.gate_proj.weight", "ffn_gate.weight"},       {"mlp.up_proj.weight", "ffn_up.weight"},
    {"mlp.down_proj.weight", "ffn_down.weight"},
};

const std::regex& layer_re() {
  static const std::regex re(R"(model\.layers\.(\d+)\.(.+))");
  return re;
}

}  // namespace

std::optional<HfLlama> HfLlama::detect(const SafetensorsFile& st, const std::string& path, std::string& why) {
  why.clear();
  if (!st.find_tensor("model.embed_tokens.weight") ||
      !st.find_tensor("model.layers.0.self_attn.q_proj.weight"))
    return std::nullopt;
  const std::filesystem::path config = std::filesystem::path(path).parent_path() / "config.json";
  std::ifstream in(config);
  if (!in) {
    why = fmt::format("{} not found: the Hugging Face names are kept", config.string());
    return std::nullopt;
  }
  nlohmann::json c;
  try {
    c = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    throw_error(ErrorKind::Format, "quantize", fmt::format("{}: {}", config.string(), e.what()));
  }
  const std::string model_type = c.value("model_type", "");
  if (model_type != "llama" && model_type != "mistral") {
    why = fmt::format("{}: model_type '{}' is not llama or mistral: the Hugging Face names are kept",
                      config.string(), model_type);
    return std::nullopt;
  }
  const auto need = [&](const char* key) -> uint64_t {
    if (!c.contains(key) || !c[key].is_number_unsigned() || c[key].get<uint64_t>() == 0)
      throw_error(ErrorKind::Format, "quantize",
                  fmt::format("{}: no positive integer '{}'", config.string(), key));
    return c[key].get<uint64_t>();
  };
  HfLlama h;
  const uint64_t hidden = need("hidden_size"), heads = need("num_attention_heads");
  h.n_head_ = uint32_t(heads);
  h.n_head_kv_ = uint32_t(c.contains("num_key_value_heads") ? need("num_key_value_heads") : heads);
  if (hidden % heads != 0) {
    throw_error(ErrorKind::Format, "quantize",
                fmt::format("{}: hidden_size {} is not a multiple of num_attention_heads {}", config.string(),
                            hidden, heads));
  }
  const uint64_t head_dim = c.contains("head_dim") ? need("head_dim") : hidden / heads;
  auto& m = h.meta_;
  m.emplace_back("general.architecture", std::string("llama"));
  m.emplace_back("llama.context_length", uint32_t(need("max_position_embeddings")));
  m.emplace_back("llama.embedding_length", uint32_t(hidden));
  m.emplace_back("llama.block_count", uint32_t(need("num_hidden_layers")));
  m.emplace_back("llama.feed_forward_length", uint32_t(need("intermediate_size")));
  m.emplace_back("llama.rope.dimension_count", uint32_t(head_dim));
  m.emplace_back("llama.attention.head_count", h.n_head_);
  m.emplace_back("llama.attention.head_count_kv", h.n_head_kv_);
  m.emplace_back("llama.attention.layer_norm_rms_epsilon", float(c.value("rms_norm_eps", 1e-5)));
  if (c.contains("rope_theta")) m.emplace_back("llama.rope.freq_base", float(c["rope_theta"].get<double>()));
  if (c.contains("vocab_size")) m.emplace_back("llama.vocab_size", uint32_t(need("vocab_size")));
  return h;
}

std::string HfLlama::gguf_name(const std::string& n) const {
  if (n == "model.embed_tokens.weight") return "token_embd.weight";
  if (n == "model.norm.weight") return "output_norm.weight";
  if (n == "lm_head.weight") return "output.weight";
  std::smatch mt;
  if (std::regex_match(n, mt, layer_re())) {
    if (mt[2] == "self_attn.rotary_emb.inv_freq") return "";
    for (const auto& [hf, gg] : kLayerNames)
      if (mt[2] == hf) return "blk." + mt[1].str() + "." + gg;
  }
  return n;
}

Tensor HfLlama::convert(const std::string& n, const Tensor& t) const {
  std::smatch mt;
  if (!std::regex_match(n, mt, layer_re())) return t;
  uint32_t heads = 0;
  if (mt[2] == "self_attn.q_proj.weight") heads = n_head_;
  if (mt[2] == "self_attn.k_proj.weight") heads = n_head_kv_;
  if (heads == 0) return t;
  // Each head's rows come as two halves (the rotation's first and second coordinates);
  // GGUF interleaves them: rows (h, k, j) -> (h, j, k), as convert_hf_to_gguf.py's permute.
  const size_t rows = t.dim(0), cols = t.rank() == 2 ? t.dim(1) : 0;
  if (t.rank() != 2 || rows % (2 * heads) != 0) {
    throw_error(
        ErrorKind::Format, "quantize",
        fmt::format("tensor '{}' {}: not {} heads of an even number of rows", n, t.shape().str(), heads));
  }
  return t.reshape(Shape{heads, 2, rows / heads / 2, cols})
      .transpose(1, 2)
      .contiguous()
      .reshape(Shape{rows, cols});
}

}  // namespace wick::cli
