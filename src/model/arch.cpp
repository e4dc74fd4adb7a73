// The architecture and tensor tables (arch.h) and the check of a file against them.
#include "model/arch.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "wick/error.h"

namespace wick::model {

namespace {

constexpr const char* kOp = "model";

constexpr ArchSpec kArchs[] = {
    {"llama", RopeStyle::Norm, kRopeFreqs},
    {"qwen2", RopeStyle::Neox, kQkvBias},
    {"qwen3", RopeStyle::Neox, kQkNorm},
};

constexpr TensorSpec kTensors[] = {
    {.name = "token_embd.weight",
     .rows = Dim::Vocab,
     .cols = Dim::Embd,
     .mat = &Weights::token_embd,
     .tp = TpSplit::Out},
    {.name = "output_norm.weight", .cols = Dim::Embd, .vec = &Weights::output_norm},
    {.name = "output.weight",
     .optional = true,
     .rows = Dim::Vocab,
     .cols = Dim::Embd,
     .mat = &Weights::output,
     .tp = TpSplit::Out},
    {.name = "rope_freqs.weight",
     .part = kRopeFreqs,
     .optional = true,
     .cols = Dim::RopeHalf,
     .vec = &Weights::rope_freqs,
     .on_host = true},
    {.name = "attn_norm.weight", .cols = Dim::Embd, .layer_vec = &LayerWeights::attn_norm},
    {.name = "attn_q.weight",
     .rows = Dim::QDim,
     .cols = Dim::Embd,
     .layer_mat = &LayerWeights::wq,
     .tp = TpSplit::Out},
    {.name = "attn_k.weight",
     .rows = Dim::KvDim,
     .cols = Dim::Embd,
     .layer_mat = &LayerWeights::wk,
     .tp = TpSplit::Out},
    {.name = "attn_v.weight",
     .rows = Dim::KvVDim,
     .cols = Dim::Embd,
     .layer_mat = &LayerWeights::wv,
     .tp = TpSplit::Out},
    {.name = "attn_output.weight",
     .rows = Dim::Embd,
     .cols = Dim::VDim,
     .layer_mat = &LayerWeights::wo,
     .tp = TpSplit::In},
    {.name = "attn_q.bias",
     .part = kQkvBias,
     .cols = Dim::QDim,
     .layer_vec = &LayerWeights::q_bias,
     .tp = TpSplit::Out},
    {.name = "attn_k.bias",
     .part = kQkvBias,
     .cols = Dim::KvDim,
     .layer_vec = &LayerWeights::k_bias,
     .tp = TpSplit::Out},
    {.name = "attn_v.bias",
     .part = kQkvBias,
     .cols = Dim::KvVDim,
     .layer_vec = &LayerWeights::v_bias,
     .tp = TpSplit::Out},
    {.name = "attn_q_norm.weight", .part = kQkNorm, .cols = Dim::HeadK, .layer_vec = &LayerWeights::q_norm},
    {.name = "attn_k_norm.weight", .part = kQkNorm, .cols = Dim::HeadK, .layer_vec = &LayerWeights::k_norm},
    {.name = "ffn_norm.weight", .cols = Dim::Embd, .layer_vec = &LayerWeights::ffn_norm},
    {.name = "ffn_gate.weight",
     .rows = Dim::Ff,
     .cols = Dim::Embd,
     .layer_mat = &LayerWeights::w_gate,
     .tp = TpSplit::Out},
    {.name = "ffn_up.weight",
     .rows = Dim::Ff,
     .cols = Dim::Embd,
     .layer_mat = &LayerWeights::w_up,
     .tp = TpSplit::Out},
    {.name = "ffn_down.weight",
     .rows = Dim::Embd,
     .cols = Dim::Ff,
     .layer_mat = &LayerWeights::w_down,
     .tp = TpSplit::In},
};

constexpr GgmlType kMatrixTypes[] = {GgmlType::F32,  GgmlType::F16,  GgmlType::BF16, GgmlType::Q4_0,
                                     GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0,
                                     GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K,
                                     GgmlType::Q6_K};
constexpr GgmlType kVectorTypes[] = {GgmlType::F32, GgmlType::F16, GgmlType::BF16};

template <size_t N>
std::string type_list(const GgmlType (&types)[N]) {
  std::string s;
  for (GgmlType t : types) s += (s.empty() ? "" : ", ") + std::string(ggml_type_name(t));
  return s;
}

bool is_layer(const TensorSpec& s) { return s.layer_mat || s.layer_vec; }
bool is_matrix(const TensorSpec& s) { return s.mat || s.layer_mat; }

// Reads the {arch}.* keys.
class Keys {
 public:
  Keys(const GgufFile& f, std::string_view arch) : f_(f), prefix_(std::string(arch) + ".") {}

  const GgufValue* find(const std::string& key) const { return f_.find(prefix_ + key); }
  size_t uint(const std::string& key) const {
    const GgufValue* v = find(key);
    if (!v)
      throw_error(ErrorKind::Format, kOp, fmt::format("{}: key '{}{}' is missing", f_.path(), prefix_, key));
    return as_uint(key, *v);
  }
  size_t uint(const std::string& key, size_t fallback) const {
    const GgufValue* v = find(key);
    return v ? as_uint(key, *v) : fallback;
  }
  float real(const std::string& key, float fallback, bool required = false) const {
    const GgufValue* v = find(key);
    if (!v) {
      if (required) {
        throw_error(ErrorKind::Format, kOp,
                    fmt::format("{}: key '{}{}' is missing", f_.path(), prefix_, key));
      }
      return fallback;
    }
    try {
      return float(v->as_float());
    } catch (const Error&) {
      throw_error(ErrorKind::Format, kOp,
                  fmt::format("{}: key '{}{}' is {} {}, expected a number", f_.path(), prefix_, key,
                              gguf_type_name(v->type()), v->str()));
    }
  }
  std::string text(const std::string& key) const {
    const GgufValue* v = find(key);
    if (!v) return "";
    if (v->type() != GgufType::String) {
      throw_error(ErrorKind::Format, kOp,
                  fmt::format("{}: key '{}{}' is {}, expected a string", f_.path(), prefix_, key,
                              gguf_type_name(v->type())));
    }
    return v->as_string();
  }

 private:
  size_t as_uint(const std::string& key, const GgufValue& v) const {
    try {
      return size_t(v.as_uint());
    } catch (const Error&) {
      throw_error(ErrorKind::Format, kOp,
                  fmt::format("{}: key '{}{}' is {} {}, expected one non-negative integer", f_.path(),
                              prefix_, key, gguf_type_name(v.type()), v.str()));
    }
  }
  const GgufFile& f_;
  std::string prefix_;
};

HParams read_hparams(const GgufFile& f, const ArchSpec& arch) {
  const Keys k(f, arch.name);
  const std::string& path = f.path();
  HParams hp;
  hp.n_ctx_train = k.uint("context_length");
  hp.n_embd = k.uint("embedding_length");
  hp.n_layer = k.uint("block_count");
  hp.n_ff = k.uint("feed_forward_length");
  hp.n_head = k.uint("attention.head_count");
  hp.n_head_kv = k.uint("attention.head_count_kv", hp.n_head);
  hp.rms_eps = k.real("attention.layer_norm_rms_epsilon", 0.0f, true);
  hp.rope_base = k.real("rope.freq_base", 10000.0f);
  const auto bad = [&](const std::string& what) {
    throw_error(ErrorKind::Format, kOp, fmt::format("{}: architecture {}: {}", path, arch.name, what));
  };
  if (hp.n_embd == 0 || hp.n_layer == 0 || hp.n_ff == 0 || hp.n_head == 0 || hp.n_head_kv == 0 ||
      hp.n_ctx_train == 0) {
    bad(
        fmt::format("embedding_length {}, block_count {}, feed_forward_length {}, head_count {}, "
                    "head_count_kv {} and context_length {} must all be positive",
                    hp.n_embd, hp.n_layer, hp.n_ff, hp.n_head, hp.n_head_kv, hp.n_ctx_train));
  }
  if (hp.n_head % hp.n_head_kv != 0) {
    bad(fmt::format("head_count {} is not a multiple of head_count_kv {}", hp.n_head, hp.n_head_kv));
  }
  if (!k.find("attention.key_length") && hp.n_embd % hp.n_head != 0) {
    bad(fmt::format("embedding_length {} is not a multiple of head_count {}", hp.n_embd, hp.n_head));
  }
  hp.head_dim_k = k.uint("attention.key_length", hp.n_embd / hp.n_head);
  hp.head_dim_v = k.uint("attention.value_length", hp.head_dim_k);
  if (hp.head_dim_k == 0 || hp.head_dim_k % 2 != 0 || hp.head_dim_v == 0) {
    bad(fmt::format("key_length {} must be even and positive, value_length {} positive", hp.head_dim_k,
                    hp.head_dim_v));
  }
  const size_t n_rot = k.uint("rope.dimension_count", hp.head_dim_k);
  if (n_rot != hp.head_dim_k) {
    bad(
        fmt::format("rope.dimension_count {} differs from the head dim {} (partial rotary embeddings are not "
                    "supported)",
                    n_rot, hp.head_dim_k));
  }
  if (!(hp.rms_eps > 0.0f) || !(hp.rope_base > 0.0f)) {
    bad(fmt::format("layer_norm_rms_epsilon {} and rope.freq_base {} must be positive", hp.rms_eps,
                    hp.rope_base));
  }
  // RoPE scaling: none, or linear (positions divided by the factor). Llama 3.1's
  // scaling is the rope_freqs.weight tensor.
  std::string scaling = k.text("rope.scaling.type");
  float factor = k.real("rope.scaling.factor", 1.0f);
  if (scaling.empty() && k.find("rope.scale_linear")) {
    scaling = "linear";
    factor = k.real("rope.scale_linear", 1.0f);
  }
  if (scaling == "linear") {
    if (!(factor > 0.0f)) bad(fmt::format("rope scaling factor {} must be positive", factor));
    hp.rope_freq_scale = 1.0f / factor;
  } else if (!scaling.empty() && scaling != "none") {
    bad(
        fmt::format("rope.scaling.type '{}' is not supported (supported: none, linear; Llama 3.1 scaling "
                    "comes as rope_freqs.weight)",
                    scaling));
  }
  return hp;
}

size_t dim_value(Dim d, const HParams& hp) {
  switch (d) {
    case Dim::None:
      return 1;
    case Dim::Embd:
      return hp.n_embd;
    case Dim::Vocab:
      return hp.n_vocab;
    case Dim::Ff:
      return hp.n_ff;
    case Dim::QDim:
      return hp.n_head * hp.head_dim_k;
    case Dim::KvDim:
      return hp.n_head_kv * hp.head_dim_k;
    case Dim::VDim:
      return hp.n_head * hp.head_dim_v;
    case Dim::KvVDim:
      return hp.n_head_kv * hp.head_dim_v;
    case Dim::HeadK:
      return hp.head_dim_k;
    case Dim::RopeHalf:
      return hp.head_dim_k / 2;
  }
  return 0;
}

Shape expected_shape(const TensorSpec& s, const HParams& hp) {
  if (s.rows == Dim::None) return Shape{dim_value(s.cols, hp)};
  return Shape{dim_value(s.rows, hp), dim_value(s.cols, hp)};
}

// "token_embd.weight, output.weight (optional), blk.N.{attn_norm.weight, ...}"
std::string tensor_names(const ArchSpec& arch) {
  std::string globals, layers;
  for (const TensorSpec& s : kTensors) {
    if (s.part != kCore && !(arch.parts & s.part)) continue;
    std::string n = std::string(s.name) + (s.optional ? " (optional)" : "");
    std::string& list = is_layer(s) ? layers : globals;
    list += (list.empty() ? "" : ", ") + n;
  }
  return fmt::format("{}, blk.N.{{{}}}", globals, layers);
}

}  // namespace

std::span<const ArchSpec> architectures() { return kArchs; }

std::string architecture_names() {
  std::string s;
  for (const ArchSpec& a : kArchs) s += (s.empty() ? "" : ", ") + std::string(a.name);
  return s;
}

std::span<const TensorSpec> tensor_table() { return kTensors; }

bool matrix_type_supported(uint32_t t) {
  return std::find(std::begin(kMatrixTypes), std::end(kMatrixTypes), GgmlType(t)) != std::end(kMatrixTypes);
}

bool vector_type_supported(uint32_t t) {
  return std::find(std::begin(kVectorTypes), std::end(kVectorTypes), GgmlType(t)) != std::end(kVectorTypes);
}

ModelPlan plan_model(const GgufFile& f) {
  const std::string& path = f.path();
  const GgufValue* arch_v = f.find("general.architecture");
  if (!arch_v || arch_v->type() != GgufType::String) {
    throw_error(ErrorKind::Format, kOp,
                fmt::format("{}: no general.architecture string (supported architectures: {})", path,
                            architecture_names()));
  }
  const std::string& arch_name = arch_v->as_string();
  ModelPlan plan;
  for (const ArchSpec& a : kArchs)
    if (a.name == arch_name) plan.arch = &a;
  if (!plan.arch) {
    throw_error(ErrorKind::Format, kOp,
                fmt::format("{}: architecture '{}' is not supported (supported: {})", path, arch_name,
                            architecture_names()));
  }
  const ArchSpec& arch = *plan.arch;
  plan.hp = read_hparams(f, arch);
  HParams& hp = plan.hp;
  if (const GgufValue* n = f.find("general.name"); n && n->type() == GgufType::String)
    plan.name = n->as_string();

  const GgufTensorInfo* embd = f.find_tensor("token_embd.weight");
  if (!embd) {
    throw_error(ErrorKind::Format, kOp,
                fmt::format("{}: tensor 'token_embd.weight' is missing (architecture {} reads: {})", path,
                            arch.name, tensor_names(arch)));
  }
  hp.n_vocab = embd->ne.size() == 2 ? size_t(embd->ne[1]) : 0;
  if (const size_t v = Keys(f, arch.name).uint("vocab_size", hp.n_vocab); v != hp.n_vocab) {
    throw_error(ErrorKind::Format, kOp,
                fmt::format("{}: {}.vocab_size {} differs from the rows of token_embd.weight {}", path,
                            arch.name, v, embd->shape().str()));
  }

  std::set<std::string> claimed;
  for (const TensorSpec& s : kTensors) {
    if (s.part != kCore && !(arch.parts & s.part)) continue;
    const int layers = is_layer(s) ? int(hp.n_layer) : 1;
    for (int l = 0; l < layers; ++l) {
      const std::string name = is_layer(s) ? fmt::format("blk.{}.{}", l, s.name) : std::string(s.name);
      const GgufTensorInfo* ti = f.find_tensor(name);
      if (!ti) {
        if (s.optional) continue;
        throw_error(ErrorKind::Format, kOp,
                    fmt::format("{}: tensor '{}' is missing (architecture {} reads: {})", path, name,
                                arch.name, tensor_names(arch)));
      }
      claimed.insert(name);
      const Shape want = expected_shape(s, hp);
      if (ti->shape() != want) {
        throw_error(ErrorKind::Format, kOp,
                    fmt::format("{}: tensor '{}' has shape {}, expected {} (architecture {}: embedding {}, "
                                "heads {}/{} of dim {}/{}, feed-forward {}, vocabulary {})",
                                path, name, ti->shape().str(), want.str(), arch.name, hp.n_embd, hp.n_head,
                                hp.n_head_kv, hp.head_dim_k, hp.head_dim_v, hp.n_ff, hp.n_vocab));
      }
      const bool matrix = is_matrix(s);
      if (matrix ? !matrix_type_supported(ti->type) : !vector_type_supported(ti->type)) {
        const std::string_view tn = ggml_any_type_name(ti->type);
        throw_error(ErrorKind::Format, kOp,
                    fmt::format("{}: tensor '{}' has type {}, which the model runner does not support "
                                "(matrices: {}; norms and biases: {})",
                                path, name, tn.empty() ? fmt::format("id {}", ti->type) : std::string(tn),
                                type_list(kMatrixTypes), type_list(kVectorTypes)));
      }
      if (matrix && want[1] % ggml_block_size(GgmlType(ti->type)) != 0) {
        throw_error(ErrorKind::Format, kOp,
                    fmt::format("{}: tensor '{}' {} {}: rows of {} are not whole blocks of {}", path, name,
                                want.str(), ggml_type_name(GgmlType(ti->type)), want[1],
                                ggml_block_size(GgmlType(ti->type))));
      }
      const size_t bytes = matrix ? size_t(ti->nbytes) : want.elem_count() * sizeof(float);
      plan.tensors.push_back({&s, is_layer(s) ? l : -1, ti, s.on_host ? 0 : bytes});
      plan.weight_bytes += s.on_host ? 0 : bytes;
      plan.n_params += want.elem_count();
    }
  }
  for (const GgufTensorInfo& ti : f.tensors()) {
    if (!claimed.count(ti.name)) {
      throw_error(ErrorKind::Format, kOp,
                  fmt::format("{}: tensor '{}' is not part of architecture {}, which reads: {}", path,
                              ti.name, arch.name, tensor_names(arch)));
    }
  }
  return plan;
}

}  // namespace wick::model
