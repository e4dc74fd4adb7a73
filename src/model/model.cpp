// The model runner (wick/model.h): loading (plan, memory check, upload), the
// forward pass of the llama decoder with its optional parts (arch.h), and the
// generation loop. One code path for every device: the ops dispatch to it.
#include "wick/model.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>

#include "backend/backend.h"
#include "model/arch.h"
#include "wick/io.h"
#include "wick/quant.h"
#include "wick/tokenizer.h"

namespace wick {

using model::HParams;
using model::LayerWeights;
using model::ModelPlan;
using model::RopeStyle;

namespace {

constexpr const char* kOp = "model";
// Tokens per forward pass of a long prompt (llama.cpp's default n_ubatch): bounds
// the activations a prefill holds at once.
constexpr size_t kMaxBatch = 512;
// The KV cache's default length cap (--ctx): min(the model's context, this).
constexpr size_t kDefaultCtx = 4096;
// The longest cache a model may ask for (keeps the byte counts far from overflow).
constexpr size_t kMaxCtx = size_t(1) << 32;

double mib(size_t bytes) { return double(bytes) / (1024.0 * 1024.0); }

size_t default_ctx(const HParams& hp, size_t requested) {
  return requested ? requested : std::min(hp.n_ctx_train, kDefaultCtx);
}

size_t kv_cache_bytes(const HParams& hp, size_t n_ctx) {
  return hp.n_layer * n_ctx * hp.n_head_kv * (hp.head_dim_k + hp.head_dim_v) * sizeof(uint16_t);
}

// What one forward pass of kMaxBatch tokens adds to the weights and the cache, at
// most (f32 activations, the attention's scores and f32 copies of the keys and
// values, the logits, a dequantized weight on the GPU's GEMM path, the RoPE tables).
size_t work_bytes(const ModelPlan& p, size_t n_ctx, Device device) {
  const HParams& hp = p.hp;
  const size_t t = std::min(kMaxBatch, n_ctx);
  const size_t q = hp.n_head * hp.head_dim_k, kv = hp.n_head_kv * (hp.head_dim_k + hp.head_dim_v);
  const size_t vo = hp.n_head * hp.head_dim_v;
  size_t elems = t * (4 * hp.n_embd + 2 * q + 2 * kv + 2 * vo + 4 * hp.n_ff);
  elems += 2 * std::min(nn::kAttentionScoreBlock, hp.n_head * t * n_ctx);
  elems += hp.n_head_kv * n_ctx * (hp.head_dim_k + hp.head_dim_v);
  elems += hp.n_vocab;
  elems += n_ctx * hp.head_dim_k;  // cos and sin tables
  if (device.is_gpu()) elems += std::max(hp.n_ff, q) * hp.n_embd;
  return elems * sizeof(float);
}

MemoryBudget budget_of(const ModelPlan& p, const ModelOptions& o) {
  const size_t n_ctx = default_ctx(p.hp, o.ctx);
  MemoryBudget b;
  b.weights = p.weight_bytes;
  b.kv_cache = kv_cache_bytes(p.hp, n_ctx);
  b.work = work_bytes(p, n_ctx, o.device);
  if (o.memory_limit) {
    b.available = o.memory_limit;
  } else {
    // Free memory 0 means unknown (a CPU without /proc/meminfo): no check.
    const MemoryStats m = memory_stats(o.device);
    b.available = m.free ? m.free + m.cached : SIZE_MAX;
  }
  return b;
}

void check_budget(const std::string& path, const ModelOptions& o, const MemoryBudget& b, size_t n_ctx) {
  if (b.needed() <= b.available) return;
  throw_error(
      ErrorKind::OutOfMemory, kOp,
      fmt::format("{} needs {:.1f} MiB on {} (weights {:.1f} MiB, KV cache {:.1f} MiB for {} tokens, "
                  "work buffers {:.1f} MiB) but {} {:.1f} MiB; try a smaller --ctx or another device",
                  path, mib(b.needed()), o.device.str(), mib(b.weights), mib(b.kv_cache), n_ctx, mib(b.work),
                  o.memory_limit ? "the memory limit is" : "the device has free", mib(b.available)));
}

void check_options(const ModelOptions& o) {
  // Fails early, naming the device, when it is absent.
  (void)device_info(o.device);
  if (o.ctx > kMaxCtx) {
    throw_error(ErrorKind::InvalidArgument, kOp, fmt::format("ctx {} exceeds {} tokens", o.ctx, kMaxCtx));
  }
}

}  // namespace

struct Model::Impl {
  std::string path;
  RopeStyle rope_style = RopeStyle::Norm;
  HParams hp;
  ModelInfo info;
  model::Weights w;
  std::optional<Tokenizer> tok;
  std::vector<Tensor> k_cache, v_cache;  // per layer (Hkv, n_ctx, D) f16
  Tensor rope_cos, rope_sin;             // (n_ctx, Dk/2) f32: row p serves position p
  size_t pos = 0;

  void upload(const GgufFile& file, const ModelPlan& plan, const ModelOptions& o);
  void build_rope_tables();
  Tensor embed(const std::vector<int32_t>& ids, size_t begin, size_t n) const;
  Tensor linear(const Tensor& x, const QTensor& w, const Tensor& bias) const;
  Tensor rope(const Tensor& x, const Tensor& cos, const Tensor& sin) const;
  Tensor attention_block(const Tensor& x, size_t l, size_t n, const Tensor& cos, const Tensor& sin);
  Tensor ffn_block(const Tensor& x, const LayerWeights& L) const;
  Tensor batch(const std::vector<int32_t>& ids, size_t begin, size_t n, bool all_logits);
};

void Model::Impl::upload(const GgufFile& file, const ModelPlan& plan, const ModelOptions& o) {
  const Device dev = o.device;
  w.layers.resize(plan.hp.n_layer);
  const size_t total = plan.weight_bytes;
  size_t done = 0;
  if (o.progress) o.progress(0, total);
  for (const model::PlannedTensor& t : plan.tensors) {
    const model::TensorSpec& s = *t.spec;
    const Device where = s.on_host ? Device::cpu() : dev;
    if (s.mat || s.layer_mat) {
      QTensor q = file.qtensor(t.info->name, where);
      (s.mat ? w.*s.mat : w.layers[size_t(t.layer)].*s.layer_mat) = std::move(q);
    } else {
      Tensor v = file.tensor(t.info->name, where).to_dtype(DType::F32);
      (s.vec ? w.*s.vec : w.layers[size_t(t.layer)].*s.layer_vec) = std::move(v);
    }
    done += t.device_bytes;
    if (o.progress) o.progress(done, total);
  }
}

// cos / sin of position p times each pair's frequency base^(-2i/D), divided by the
// Llama 3.1 frequency factor of the pair (rope_freqs.weight) and scaled by the
// linear factor, for p < n_ctx; computed in double on the host.
void Model::Impl::build_rope_tables() {
  const size_t half = hp.head_dim_k / 2, n_ctx = info.n_ctx;
  std::vector<float> factors(half, 1.0f);
  if (w.rope_freqs.defined()) factors = w.rope_freqs.to_vector<float>();
  std::vector<double> freq(half);
  for (size_t i = 0; i < half; ++i) {
    freq[i] = std::pow(double(hp.rope_base), -2.0 * double(i) / double(hp.head_dim_k)) * hp.rope_freq_scale /
              double(factors[i]);
  }
  std::vector<float> c(n_ctx * half), s(n_ctx * half);
  for (size_t p = 0; p < n_ctx; ++p) {
    for (size_t i = 0; i < half; ++i) {
      const double a = double(p) * freq[i];
      c[p * half + i] = float(std::cos(a));
      s[p * half + i] = float(std::sin(a));
    }
  }
  rope_cos = Tensor::from_vector(c, {n_ctx, half}, info.device);
  rope_sin = Tensor::from_vector(s, {n_ctx, half}, info.device);
}

// Rows of the embedding table for ids[begin, begin + n): the packed rows are
// gathered on the device, then dequantized to f32 (n, n_embd).
Tensor Model::Impl::embed(const std::vector<int32_t>& ids, size_t begin, size_t n) const {
  const QTensor& table = w.token_embd;
  const size_t e = info.n_embd, row_bytes = ggml_row_size(table.type(), e);
  std::vector<uint32_t> idx(ids.begin() + ptrdiff_t(begin), ids.begin() + ptrdiff_t(begin + n));
  const Tensor idx_t = Tensor::from_vector(idx, {n}, info.device);
  const Tensor rows = table.bytes().reshape({info.n_vocab, row_bytes}).index_select(idx_t, 0);
  StoragePtr s =
      backend_device(info.device)
          .dequantize(table.type(), *rows.storage(), rows.layout().start_offset(), n * e, DType::F32);
  return Tensor(std::move(s), Layout(Shape{n, e}), DType::F32, info.device);
}

Tensor Model::Impl::linear(const Tensor& x, const QTensor& wt, const Tensor& bias) const {
  Tensor y = qmatmul(x, wt);
  return bias.defined() ? y.add(bias) : y;
}

// x (1, H, T, D); cos / sin (T, D/2).
Tensor Model::Impl::rope(const Tensor& x, const Tensor& cos, const Tensor& sin) const {
  return rope_style == RopeStyle::Norm ? nn::rope_i(x, cos, sin) : nn::rope(x, cos, sin);
}

// The attention sub-block of layer l for the n tokens at `pos`: their keys and values
// go to the cache, the result is attn_output(attention(...)) (n, E). Temporaries are
// released as soon as they are used (prefill activations are the runner's work memory).
Tensor Model::Impl::attention_block(const Tensor& x, size_t l, size_t n, const Tensor& cos,
                                    const Tensor& sin) {
  const LayerWeights& L = w.layers[l];
  const size_t h = hp.n_head, hkv = hp.n_head_kv, dk = hp.head_dim_k, dv = hp.head_dim_v;
  Tensor a = nn::rms_norm(x, L.attn_norm, hp.rms_eps);
  Tensor q = linear(a, L.wq, L.q_bias).reshape({1, n, h, dk});
  Tensor k = linear(a, L.wk, L.k_bias).reshape({1, n, hkv, dk});
  Tensor v = linear(a, L.wv, L.v_bias).reshape({1, n, hkv, dv});
  a = Tensor();
  if (L.q_norm.defined()) {
    q = nn::rms_norm(q, L.q_norm, hp.rms_eps);
    k = nn::rms_norm(k, L.k_norm, hp.rms_eps);
  }
  q = rope(q.transpose(1, 2), cos, sin);  // (1, H, T, Dk)
  k = rope(k.transpose(1, 2), cos, sin);  // (1, Hkv, T, Dk)
  k_cache[l].slice_set_(k.squeeze(0).to_dtype(DType::F16), 1, pos);
  v_cache[l].slice_set_(v.transpose(1, 2).squeeze(0).to_dtype(DType::F16), 1, pos);
  k = v = Tensor();
  const Tensor kk = k_cache[l].narrow(1, 0, pos + n).unsqueeze(0);
  const Tensor vv = v_cache[l].narrow(1, 0, pos + n).unsqueeze(0);
  Tensor o = nn::attention(q, kk, vv, float(1.0 / std::sqrt(double(dk))), true);  // (1, H, T, Dv)
  q = Tensor();
  o = o.squeeze(0).transpose(0, 1).reshape({n, h * dv});
  return qmatmul(o, L.wo);
}

// The feed-forward sub-block: ffn_down(silu(ffn_gate(a)) * ffn_up(a)), a = rms_norm(x).
Tensor Model::Impl::ffn_block(const Tensor& x, const LayerWeights& L) const {
  Tensor a = nn::rms_norm(x, L.ffn_norm, hp.rms_eps);
  Tensor g = qmatmul(a, L.w_gate);
  g = g.silu();
  g = g.mul(qmatmul(a, L.w_up));
  a = Tensor();
  return qmatmul(g, L.w_down);
}

// One forward pass of ids[begin, begin + n) at position `pos`; logits of the last
// token (1, n_vocab), or of every token.
Tensor Model::Impl::batch(const std::vector<int32_t>& ids, size_t begin, size_t n, bool all_logits) {
  const Tensor cos = rope_cos.narrow(0, pos, n), sin = rope_sin.narrow(0, pos, n);
  Tensor x = embed(ids, begin, n);  // (T, E)
  for (size_t l = 0; l < hp.n_layer; ++l) {
    x = x.add(attention_block(x, l, n, cos, sin));
    x = x.add(ffn_block(x, w.layers[l]));
  }
  if (!all_logits) x = x.narrow(0, n - 1, 1);
  x = nn::rms_norm(x, w.output_norm, hp.rms_eps);
  return qmatmul(x, w.output.defined() ? w.output : w.token_embd);
}

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;
Model::~Model() = default;

MemoryBudget Model::memory_budget(const std::string& path, const ModelOptions& options) {
  check_options(options);
  const GgufFile f = GgufFile::open(path);
  return budget_of(model::plan_model(f), options);
}

Model Model::load(const std::string& path, const ModelOptions& options) {
  check_options(options);
  auto impl = std::make_unique<Impl>();
  Impl& m = *impl;
  // The file stays mapped only while loading: the weights are copied to the device.
  const GgufFile file = GgufFile::open(path);
  const ModelPlan plan = model::plan_model(file);
  const HParams& hp = plan.hp;
  const size_t n_ctx = default_ctx(hp, options.ctx);
  const MemoryBudget b = budget_of(plan, options);
  check_budget(path, options, b, n_ctx);
  if (file.find("tokenizer.ggml.model")) m.tok = Tokenizer::from_gguf(file);
  m.path = path;
  m.rope_style = plan.arch->rope;
  m.hp = hp;

  ModelInfo& i = m.info;
  i.arch = std::string(plan.arch->name);
  i.name = plan.name;
  i.device = options.device;
  i.n_vocab = hp.n_vocab;
  i.n_embd = hp.n_embd;
  i.n_layer = hp.n_layer;
  i.n_head = hp.n_head;
  i.n_head_kv = hp.n_head_kv;
  i.head_dim = hp.head_dim_k;
  i.n_ff = hp.n_ff;
  i.n_ctx_train = hp.n_ctx_train;
  i.n_ctx = n_ctx;
  i.n_params = plan.n_params;
  i.weight_bytes = b.weights;
  i.kv_cache_bytes = b.kv_cache;
  i.work_bytes = b.work;

  m.upload(file, plan, options);
  m.build_rope_tables();
  for (size_t l = 0; l < hp.n_layer; ++l) {
    m.k_cache.push_back(Tensor::empty({hp.n_head_kv, n_ctx, hp.head_dim_k}, DType::F16, options.device));
    m.v_cache.push_back(Tensor::empty({hp.n_head_kv, n_ctx, hp.head_dim_v}, DType::F16, options.device));
  }
  return Model(std::move(impl));
}

const ModelInfo& Model::info() const { return impl_->info; }

bool Model::has_tokenizer() const { return impl_->tok.has_value(); }

const Tokenizer& Model::tokenizer() const {
  if (!impl_->tok) {
    throw_error(ErrorKind::InvalidArgument, "tokenize",
                fmt::format("{} has no tokenizer (no tokenizer.ggml.* metadata)", impl_->path));
  }
  return *impl_->tok;
}

std::vector<int32_t> Model::tokenize(std::string_view text, bool add_special, bool parse_special) const {
  return tokenizer().encode(text, add_special, parse_special);
}

size_t Model::position() const { return impl_->pos; }

void Model::reset() { impl_->pos = 0; }

Tensor Model::forward(const std::vector<int32_t>& tokens, bool all_logits) {
  Impl& m = *impl_;
  const ModelInfo& i = m.info;
  if (tokens.empty()) throw_error(ErrorKind::InvalidArgument, "forward", "no tokens");
  if (m.pos + tokens.size() > i.n_ctx) {
    throw_error(
        ErrorKind::InvalidArgument, "forward",
        fmt::format("{} tokens at position {} do not fit the context of {} tokens (--ctx; the model's "
                    "context length is {})",
                    tokens.size(), m.pos, i.n_ctx, i.n_ctx_train));
  }
  for (size_t k = 0; k < tokens.size(); ++k) {
    if (tokens[k] < 0 || size_t(tokens[k]) >= i.n_vocab) {
      throw_error(ErrorKind::InvalidArgument, "forward",
                  fmt::format("token {} (at {}) is outside the vocabulary of {}", tokens[k], k, i.n_vocab));
    }
  }
  std::vector<Tensor> outs;
  for (size_t begin = 0; begin < tokens.size(); begin += kMaxBatch) {
    const size_t n = std::min(kMaxBatch, tokens.size() - begin);
    const bool last = begin + n == tokens.size();
    Tensor logits;
    if (all_logits || last)
      logits = m.batch(tokens, begin, n, all_logits);
    else
      (void)m.batch(tokens, begin, n, false);
    m.pos += n;
    if (logits.defined()) outs.push_back(std::move(logits));
  }
  return outs.size() == 1 ? outs[0] : Tensor::cat(outs, 0);
}

GenerateStats Model::generate(const std::vector<int32_t>& prompt, const GenerateOptions& options,
                              const TokenCallback& on_token) {
  using clock = std::chrono::steady_clock;
  const auto seconds = [](clock::time_point a, clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  Impl& m = *impl_;
  const size_t n_ctx = m.info.n_ctx;
  if (prompt.empty()) throw_error(ErrorKind::InvalidArgument, "generate", "empty prompt");
  if (m.pos + prompt.size() > n_ctx) {
    throw_error(ErrorKind::InvalidArgument, "generate",
                fmt::format("the prompt of {} tokens{} does not fit the context of {} tokens (--ctx; the "
                            "model's context length is {})",
                            prompt.size(), m.pos ? fmt::format(" at position {}", m.pos) : "", n_ctx,
                            m.info.n_ctx_train));
  }
  Sampler sampler(options.sampler, n_ctx);
  for (int32_t id : prompt) sampler.accept(id);
  std::optional<TokenDecoder> decoder;
  if (m.tok) decoder.emplace(*m.tok);

  GenerateStats st;
  st.prompt_tokens = prompt.size();
  st.seed = sampler.seed();
  auto t0 = clock::now();
  Tensor logits = forward(prompt);
  std::vector<float> host = logits.to_vector<float>();  // synchronizes
  st.prompt_seconds = seconds(t0, clock::now());
  if (options.on_prompt_logits) options.on_prompt_logits(logits);

  t0 = clock::now();
  const auto budget = [&] {
    return options.n_predict < 0 || int64_t(st.generated_tokens) < options.n_predict;
  };
  while (budget()) {
    const int32_t id = sampler.sample(host.data(), host.size());
    sampler.accept(id);
    ++st.generated_tokens;
    if (m.tok && m.tok->is_end_of_generation(id)) {
      st.stopped_at_eog = true;
      break;
    }
    const std::string text = decoder ? decoder->push(id) : std::string();
    if (!on_token(id, text)) break;
    if (!budget() || m.pos >= n_ctx) break;
    host = forward({id}).to_vector<float>();
    ++st.decode_steps;
  }
  st.decode_seconds = seconds(t0, clock::now());
  return st;
}

}  // namespace wick
