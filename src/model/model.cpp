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
#include "model/tensor_parallel.h"
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
size_t work_bytes(const HParams& hp, size_t n_ctx, Device device) {
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

size_t tp_of(const ModelOptions& o) { return o.communicator ? o.communicator->size() : 1; }
Device device_of(const ModelOptions& o, size_t rank) {
  return o.communicator ? o.communicator->device(rank) : o.device;
}

// What one rank needs on its device (the whole model without tensor parallelism);
// the memory available is what its device has free divided among the ranks on it.
MemoryBudget budget_of(const ModelPlan& p, const ModelOptions& o, size_t rank = 0) {
  const size_t tp = tp_of(o);
  if (tp > 1) model::check_tensor_parallel(p, tp);
  const HParams hp = tp > 1 ? model::rank_hparams(p.hp, tp) : p.hp;
  const Device device = device_of(o, rank);
  const size_t n_ctx = default_ctx(p.hp, o.ctx);
  MemoryBudget b;
  for (const model::PlannedTensor& t : p.tensors)
    b.weights += t.spec->tp == model::TpSplit::None ? t.device_bytes : t.device_bytes / tp;
  b.kv_cache = kv_cache_bytes(hp, n_ctx);
  b.work = work_bytes(hp, n_ctx, device);
  if (o.memory_limit) {
    b.available = o.memory_limit;
  } else {
    // Free memory 0 means unknown (a CPU without /proc/meminfo): no check.
    const MemoryStats m = memory_stats(device);
    b.available = m.free ? m.free + m.cached : SIZE_MAX;
  }
  size_t sharing = 0;
  for (size_t r = 0; r < tp; ++r) sharing += device_of(o, r) == device;
  if (b.available != SIZE_MAX) b.available /= sharing;
  return b;
}

void check_budget(const std::string& path, const ModelOptions& o, const MemoryBudget& b, size_t n_ctx,
                  Device device) {
  if (b.needed() <= b.available) return;
  throw_error(
      ErrorKind::OutOfMemory, kOp,
      fmt::format("{} needs {:.1f} MiB on {} (weights {:.1f} MiB, KV cache {:.1f} MiB for {} tokens, "
                  "work buffers {:.1f} MiB) but {} {:.1f} MiB; try a smaller --ctx or another device",
                  path, mib(b.needed()), device.str(), mib(b.weights), mib(b.kv_cache), n_ctx, mib(b.work),
                  o.memory_limit ? "the memory limit is" : "the device has free", mib(b.available)));
}

void check_options(const ModelOptions& o) {
  // Fails early, naming the device, when it is absent.
  for (size_t r = 0; r < tp_of(o); ++r) (void)device_info(device_of(o, r));
  if (o.ctx > kMaxCtx) {
    throw_error(ErrorKind::InvalidArgument, kOp, fmt::format("ctx {} exceeds {} tokens", o.ctx, kMaxCtx));
  }
}

}  // namespace

// What one rank holds: its share of the weights (all of them without tensor
// parallelism), its KV heads' cache and the RoPE tables, on its device.
struct Rank {
  Device device;
  model::Weights w;
  std::vector<Tensor> k_cache, v_cache;  // per layer (Hkv, n_ctx, D) f16, the rank's KV heads
  Tensor rope_cos, rope_sin;             // (n_ctx, Dk/2) f32: row p serves position p
};

struct Model::Impl {
  std::string path;
  RopeStyle rope_style = RopeStyle::Norm;
  HParams hp;     // the model's
  HParams local;  // one rank's share of the heads, feed-forward width and vocabulary
  ModelInfo info;
  std::optional<Tokenizer> tok;
  std::shared_ptr<Communicator> comm;  // null: one device, no collectives
  std::vector<Rank> ranks;
  size_t pos = 0;

  void upload(const GgufFile& file, const ModelPlan& plan, const ModelOptions& o);
  void build_rope_tables();
  Tensor embed(const Rank& rk, size_t rank, const std::vector<int32_t>& ids, size_t begin, size_t n) const;
  Tensor linear(const Tensor& x, const QTensor& w, const Tensor& bias) const;
  Tensor rope(const Tensor& x, const Tensor& cos, const Tensor& sin) const;
  Tensor attention_block(Rank& rk, const Tensor& x, size_t l, size_t n, const Tensor& cos, const Tensor& sin);
  Tensor ffn_block(const Tensor& x, const LayerWeights& L) const;
  // The ranks' partial results summed (the results themselves without a communicator).
  std::vector<Tensor> all_reduce(std::vector<Tensor> parts) const {
    return comm ? comm->all_reduce_sum(parts) : parts;
  }
  Tensor batch(const std::vector<int32_t>& ids, size_t begin, size_t n, bool all_logits);
};

// Without a communicator each tensor goes straight to the device; with one it is read
// to the host, split (tensor_parallel.h) and each part goes to its rank's device.
void Model::Impl::upload(const GgufFile& file, const ModelPlan& plan, const ModelOptions& o) {
  const size_t tp = ranks.size();
  for (Rank& rk : ranks) rk.w.layers.resize(plan.hp.n_layer);
  const size_t total = plan.weight_bytes;
  size_t done = 0;
  if (o.progress) o.progress(0, total);
  for (const model::PlannedTensor& t : plan.tensors) {
    const model::TensorSpec& s = *t.spec;
    const std::string& name = t.info->name;
    const auto where = [&](size_t r) { return s.on_host ? Device::cpu() : ranks[r].device; };
    const auto layer = [&](size_t r) -> LayerWeights& { return ranks[r].w.layers[size_t(t.layer)]; };
    if (s.mat || s.layer_mat) {
      std::vector<QTensor> parts;
      if (comm)
        parts = model::split_matrix(file.qtensor(name, Device::cpu()), s.tp, tp, name);
      else
        parts.push_back(file.qtensor(name, where(0)));
      for (size_t r = 0; r < tp; ++r)
        (s.mat ? ranks[r].w.*s.mat : layer(r).*s.layer_mat) = parts[r].to_device(where(r));
    } else {
      std::vector<Tensor> parts;
      if (comm)
        parts = model::split_vector(file.tensor(name, Device::cpu()).to_dtype(DType::F32), s.tp, tp, name);
      else
        parts.push_back(file.tensor(name, where(0)).to_dtype(DType::F32));
      for (size_t r = 0; r < tp; ++r)
        (s.vec ? ranks[r].w.*s.vec : layer(r).*s.layer_vec) = parts[r].to_device(where(r));
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
  if (ranks[0].w.rope_freqs.defined()) factors = ranks[0].w.rope_freqs.to_vector<float>();
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
  for (Rank& rk : ranks) {
    rk.rope_cos = Tensor::from_vector(c, {n_ctx, half}, rk.device);
    rk.rope_sin = Tensor::from_vector(s, {n_ctx, half}, rk.device);
  }
}

// Rows of the embedding table for ids[begin, begin + n) (n, n_embd) f32: the packed
// rows are gathered on the device, then dequantized. A rank holds the vocabulary
// slice [rank V/tp, (rank+1) V/tp): its rows of the other ids are zeros, so that the
// sum over ranks is each id's row, exactly.
Tensor Model::Impl::embed(const Rank& rk, size_t rank, const std::vector<int32_t>& ids, size_t begin,
                          size_t n) const {
  const QTensor& table = rk.w.token_embd;
  const size_t e = info.n_embd, row_bytes = ggml_row_size(table.type(), e);
  const size_t vocab = local.n_vocab, first = rank * vocab;
  std::vector<uint32_t> idx, pick(n);  // rows of this rank; each token's row of them (or the zero row)
  for (size_t i = 0; i < n; ++i) {
    const size_t id = size_t(ids[begin + i]);
    pick[i] = uint32_t(id - first < vocab ? idx.size() : SIZE_MAX);
    if (id - first < vocab) idx.push_back(uint32_t(id - first));
  }
  if (idx.empty()) return Tensor::zeros({n, e}, DType::F32, rk.device);
  const size_t m = idx.size();
  const Tensor rows =
      table.bytes().reshape({vocab, row_bytes}).index_select(Tensor::from_vector(idx, {m}, rk.device), 0);
  StoragePtr s = backend_device(rk.device).dequantize(table.type(), *rows.storage(),
                                                      rows.layout().start_offset(), m * e, DType::F32);
  Tensor x(std::move(s), Layout(Shape{m, e}), DType::F32, rk.device);
  if (m == n) return x;
  for (uint32_t& p : pick) p = std::min(p, uint32_t(m));
  return Tensor::cat({x, Tensor::zeros({1, e}, DType::F32, rk.device)}, 0)
      .index_select(Tensor::from_vector(pick, {n}, rk.device), 0);
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
Tensor Model::Impl::attention_block(Rank& rk, const Tensor& x, size_t l, size_t n, const Tensor& cos,
                                    const Tensor& sin) {
  const LayerWeights& L = rk.w.layers[l];
  const size_t h = local.n_head, hkv = local.n_head_kv, dk = hp.head_dim_k, dv = hp.head_dim_v;
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
  rk.k_cache[l].slice_set_(k.squeeze(0).to_dtype(DType::F16), 1, pos);
  rk.v_cache[l].slice_set_(v.transpose(1, 2).squeeze(0).to_dtype(DType::F16), 1, pos);
  k = v = Tensor();
  const Tensor kk = rk.k_cache[l].narrow(1, 0, pos + n).unsqueeze(0);
  const Tensor vv = rk.v_cache[l].narrow(1, 0, pos + n).unsqueeze(0);
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
// token (1, n_vocab), or of every token, on rank 0's device. Every rank holds the
// whole residual stream x (T, E); each block half's partial outputs are summed over
// the ranks before they are added to it, and the ranks' vocabulary slices of the
// logits are gathered.
Tensor Model::Impl::batch(const std::vector<int32_t>& ids, size_t begin, size_t n, bool all_logits) {
  const size_t tp = ranks.size();
  std::vector<Tensor> cos(tp), sin(tp), x(tp), part(tp);
  for (size_t r = 0; r < tp; ++r) {
    cos[r] = ranks[r].rope_cos.narrow(0, pos, n);
    sin[r] = ranks[r].rope_sin.narrow(0, pos, n);
    x[r] = embed(ranks[r], r, ids, begin, n);  // (T, E)
  }
  if (comm) x = comm->all_reduce_sum(x);
  for (size_t l = 0; l < hp.n_layer; ++l) {
    for (size_t r = 0; r < tp; ++r) part[r] = attention_block(ranks[r], x[r], l, n, cos[r], sin[r]);
    part = all_reduce(std::move(part));
    for (size_t r = 0; r < tp; ++r) x[r] = x[r].add(part[r]);
    for (size_t r = 0; r < tp; ++r) part[r] = ffn_block(x[r], ranks[r].w.layers[l]);
    part = all_reduce(std::move(part));
    for (size_t r = 0; r < tp; ++r) x[r] = x[r].add(part[r]);
  }
  for (size_t r = 0; r < tp; ++r) {
    const model::Weights& w = ranks[r].w;
    Tensor y = all_logits ? x[r] : x[r].narrow(0, n - 1, 1);
    x[r] = Tensor();
    y = nn::rms_norm(y, w.output_norm, hp.rms_eps);
    part[r] = qmatmul(y, w.output.defined() ? w.output : w.token_embd);  // (T, V/tp)
  }
  return comm ? comm->all_gather(part, 1)[0] : part[0];
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
  const size_t tp = tp_of(options);
  MemoryBudget b;
  for (size_t r = 0; r < tp; ++r) {
    const MemoryBudget br = budget_of(plan, options, r);
    check_budget(path, options, br, n_ctx, device_of(options, r));
    b.weights += br.weights;
    b.kv_cache += br.kv_cache;
    b.work = std::max(b.work, br.work);
  }
  if (file.find("tokenizer.ggml.model")) m.tok = Tokenizer::from_gguf(file);
  m.path = path;
  m.rope_style = plan.arch->rope;
  m.hp = hp;
  m.local = tp > 1 ? model::rank_hparams(hp, tp) : hp;
  m.comm = options.communicator;
  m.ranks.resize(tp);
  for (size_t r = 0; r < tp; ++r) m.ranks[r].device = device_of(options, r);

  ModelInfo& i = m.info;
  i.arch = std::string(plan.arch->name);
  i.name = plan.name;
  i.device = m.ranks[0].device;
  i.tp = tp;
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
  const HParams& lh = m.local;
  for (Rank& rk : m.ranks) {
    for (size_t l = 0; l < hp.n_layer; ++l) {
      rk.k_cache.push_back(Tensor::empty({lh.n_head_kv, n_ctx, lh.head_dim_k}, DType::F16, rk.device));
      rk.v_cache.push_back(Tensor::empty({lh.n_head_kv, n_ctx, lh.head_dim_v}, DType::F16, rk.device));
    }
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
