// The model runner (wick/model.h): loading (plan, memory check, upload), the
// forward pass of the llama decoder with its optional parts (arch.h), and the
// generation loop. One code path for every device: the ops dispatch to it.
#include "wick/model.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <tuple>

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

// The projections of a layer that read the same input: q, k, v (parts 0, 1, 2) and gate,
// up (0, 1). Adjacent parts of one weight type are uploaded as one matrix (their rows
// one after the other), so one qmatmul launch serves them; parts of different types
// (Q4_K_M mixes them) stay separate matrices. Under tensor parallelism a rank's matrix
// holds its rows of each part: its q heads, then its KV heads of k and of v (resp. its
// slices of gate and up).
struct Proj {
  QTensor w;
  Tensor bias;                // the parts' biases, concatenated; undefined when none
  std::vector<size_t> parts;  // which parts, in order
  size_t rows = 0;            // output columns
};

// What one rank holds: its share of the weights (all of them without tensor
// parallelism), its KV heads' cache and the RoPE tables, on its device.
struct Rank {
  Device device;
  model::Weights w;
  std::vector<std::vector<Proj>> qkv, gate_up;  // per layer
  std::vector<Tensor> k_cache, v_cache;         // per layer (1, Hkv/tp, n_ctx, D) f16, the rank's KV heads
  Tensor rope_cos, rope_sin;                    // (n_ctx, Dk/2) f32: row p serves position p
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
  // One-token steps without tensor parallelism read their inputs from `step`, u32
  // {token, pos, pos + 1} on the device, so that one recorded graph serves every step.
  Tensor step;
  bool use_graph = false;
  bool warmed = false;  // a step ran eagerly (modules loaded, buffers cached)
  Graph graph;          // the recorded step
  Tensor graph_logits;  // its output (the graph's buffer)

  void upload(const GgufFile& file, const ModelPlan& plan, const ModelOptions& o);
  void build_rope_tables();
  Tensor embed(const Rank& rk, size_t rank, const std::vector<int32_t>& ids, size_t begin, size_t n) const;
  Tensor embed_step(const Rank& rk) const;
  std::vector<Tensor> project(const Tensor& x, const std::vector<Proj>& ps) const;
  std::vector<Tensor> norm_project(Tensor& x, Tensor& part, const Tensor& norm,
                                   const std::vector<Proj>& ps) const;
  Tensor attention_block(Rank& rk, std::vector<Tensor> ys, size_t l, size_t n, const Tensor& cos,
                         const Tensor& sin, bool from_step);
  Tensor ffn_block(const Rank& rk, std::vector<Tensor> ys, size_t l) const;
  // The ranks' partial results summed (the results themselves without a communicator).
  std::vector<Tensor> all_reduce(std::vector<Tensor> parts) const {
    return comm ? comm->all_reduce_sum(parts) : parts;
  }
  Tensor batch(const std::vector<int32_t>& ids, size_t begin, size_t n, bool all_logits, bool from_step);
  Tensor decode(int32_t id);
};

namespace {

// One part of a merged projection (q, k, v, gate or up; under tensor parallelism one
// rank's rows of it): packed rows on the host.
struct PartBytes {
  GgmlType type;
  size_t rows = 0, cols = 0;
  const uint8_t* data = nullptr;
  size_t nbytes = 0;
};

// The merged projections of one layer on `dev`: runs of adjacent parts of one type
// are concatenated on the host and uploaded as one matrix.
std::vector<Proj> upload_merged(const std::vector<PartBytes>& parts, Device dev) {
  std::vector<Proj> out;
  for (size_t p = 0; p < parts.size();) {
    const PartBytes& first = parts[p];
    size_t e = p + 1;
    while (e < parts.size() && parts[e].type == first.type) ++e;
    Proj pr;
    if (e == p + 1) {
      pr.w = QTensor::from_bytes(first.type, Shape{first.rows, first.cols}, first.data, first.nbytes, dev);
    } else {
      size_t bytes = 0, rows = 0;
      for (size_t i = p; i < e; ++i) {
        bytes += parts[i].nbytes;
        rows += parts[i].rows;
      }
      std::vector<uint8_t> data(bytes);
      size_t at = 0;
      for (size_t i = p; i < e; ++i) {
        std::memcpy(data.data() + at, parts[i].data, parts[i].nbytes);
        at += parts[i].nbytes;
      }
      pr.w = QTensor::from_bytes(first.type, Shape{rows, first.cols}, data.data(), bytes, dev);
    }
    for (size_t i = p; i < e; ++i) pr.parts.push_back(i);
    pr.rows = pr.w.shape()[0];
    out.push_back(std::move(pr));
    p = e;
  }
  return out;
}

}  // namespace

// Without a communicator each tensor goes straight to the device; with one it is read
// to the host, split (tensor_parallel.h) and each part goes to its rank's device. The
// mergeable projections are split first and merged per rank after.
void Model::Impl::upload(const GgufFile& file, const ModelPlan& plan, const ModelOptions& o) {
  const size_t tp = ranks.size(), n_layer = plan.hp.n_layer;
  for (Rank& rk : ranks) {
    rk.w.layers.resize(n_layer);
    rk.qkv.resize(n_layer);
    rk.gate_up.resize(n_layer);
  }
  // The mergeable matrices, held back until the loop below: q, k, v and gate, up.
  std::vector<std::array<const model::PlannedTensor*, 3>> attn(n_layer), ffn(n_layer);
  const auto slot = [&](const model::PlannedTensor& t) -> const model::PlannedTensor** {
    const auto m = t.spec->layer_mat;
    auto& a = attn[size_t(t.layer)];
    auto& f = ffn[size_t(t.layer)];
    if (m == &LayerWeights::wq) return &a[0];
    if (m == &LayerWeights::wk) return &a[1];
    if (m == &LayerWeights::wv) return &a[2];
    if (m == &LayerWeights::w_gate) return &f[0];
    if (m == &LayerWeights::w_up) return &f[1];
    return nullptr;
  };
  const size_t total = plan.weight_bytes;
  size_t done = 0;
  if (o.progress) o.progress(0, total);
  for (const model::PlannedTensor& t : plan.tensors) {
    const model::TensorSpec& s = *t.spec;
    const std::string& name = t.info->name;
    const auto where = [&](size_t r) { return s.on_host ? Device::cpu() : ranks[r].device; };
    const auto layer = [&](size_t r) -> LayerWeights& { return ranks[r].w.layers[size_t(t.layer)]; };
    if (s.layer_mat) {
      if (const model::PlannedTensor** p = slot(t)) {
        *p = &t;
        continue;
      }
    }
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
  // Each rank's merged projections of a group (q, k, v or gate, up) of layer l: the
  // parts from the file's mapping, or each part split by its output rows and rank r's
  // rows of every part merged.
  const auto merge = [&](const std::vector<const model::PlannedTensor*>& group, size_t l,
                         std::vector<std::vector<Proj>> Rank::*member) {
    std::vector<std::vector<PartBytes>> parts(tp);  // per rank
    std::vector<std::vector<uint8_t>> held;         // the split parts' bytes
    for (const model::PlannedTensor* t : group) {
      const GgufTensorInfo& info = *t->info;
      const GgmlType type = GgmlType(info.type);
      const size_t cols = info.shape()[1];
      if (!comm) {
        parts[0].push_back({type, info.shape()[0], cols, file.tensor_data(info), size_t(info.nbytes)});
        continue;
      }
      const std::vector<QTensor> split =
          model::split_matrix(file.qtensor(info.name, Device::cpu()), t->spec->tp, tp, info.name);
      for (size_t r = 0; r < tp; ++r) held.push_back(split[r].to_host_bytes());
      for (size_t r = 0; r < tp; ++r) {
        const std::vector<uint8_t>& b = held[held.size() - tp + r];
        parts[r].push_back({type, split[r].shape()[0], cols, b.data(), b.size()});
      }
    }
    for (size_t r = 0; r < tp; ++r) (ranks[r].*member)[l] = upload_merged(parts[r], ranks[r].device);
  };
  for (size_t l = 0; l < n_layer; ++l) {
    merge({attn[l][0], attn[l][1], attn[l][2]}, l, &Rank::qkv);
    merge({ffn[l][0], ffn[l][1]}, l, &Rank::gate_up);
    for (Rank& rk : ranks) {
      LayerWeights& L = rk.w.layers[l];
      const Tensor* biases[] = {&L.q_bias, &L.k_bias, &L.v_bias};
      for (Proj& p : rk.qkv[l]) {
        if (!L.q_bias.defined()) break;
        std::vector<Tensor> parts;
        for (size_t i : p.parts) parts.push_back(*biases[i]);
        p.bias = parts.size() == 1 ? parts[0] : Tensor::cat(parts, 0);
      }
      L.q_bias = L.k_bias = L.v_bias = Tensor();
    }
    for (size_t i = 0; i < 3; ++i) done += attn[l][i]->device_bytes;
    for (size_t i = 0; i < 2; ++i) done += ffn[l][i]->device_bytes;
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

// The row of the token in `step` (1, n_embd) f32 (one rank: the whole vocabulary).
Tensor Model::Impl::embed_step(const Rank& rk) const {
  const QTensor& table = rk.w.token_embd;
  const size_t e = info.n_embd, row_bytes = ggml_row_size(table.type(), e);
  const Tensor row = table.bytes().reshape({local.n_vocab, row_bytes}).index_select(step.narrow(0, 0, 1), 0);
  StoragePtr s = backend_device(rk.device).dequantize(table.type(), *row.storage(),
                                                      row.layout().start_offset(), e, DType::F32);
  return Tensor(std::move(s), Layout(Shape{1, e}), DType::F32, rk.device);
}

// x (T, E) times each projection of `ps`: (T, p.rows) each, biases added.
std::vector<Tensor> Model::Impl::project(const Tensor& x, const std::vector<Proj>& ps) const {
  std::vector<Tensor> ys;
  for (const Proj& p : ps) {
    Tensor y = qmatmul(x, p.w);
    ys.push_back(p.bias.defined() ? y.add(p.bias) : y);
  }
  return ys;
}

// The projections `ps` of rms_norm(x + part) * norm, x becoming x + part and part
// released. One projection, or one row: each projection forms the normed row itself
// (add_rms_norm_qmatmul: one launch each where the device fuses them); more rows:
// nn::add_rms_norm once, then project.
std::vector<Tensor> Model::Impl::norm_project(Tensor& x, Tensor& part, const Tensor& norm,
                                              const std::vector<Proj>& ps) const {
  std::vector<Tensor> ys;
  if (ps.size() == 1 || x.dim(0) == 1) {
    Tensor sum;
    for (const Proj& p : ps) {
      auto [s, y] = add_rms_norm_qmatmul(x, part, norm, hp.rms_eps, p.w);
      if (!sum.defined()) sum = std::move(s);
      ys.push_back(p.bias.defined() ? y.add(p.bias) : y);
    }
    x = std::move(sum);
  } else {
    Tensor h;
    std::tie(x, h) = nn::add_rms_norm(x, part, norm, hp.rms_eps);
    ys = project(h, ps);
  }
  part = Tensor();
  return ys;
}

namespace {

// Output columns [col, col + heads * dim) of the projections `ps` (outputs ys, each
// (T, rows) contiguous) as a (1, T, heads, dim) view: the range lies in one output.
Tensor heads_of(const std::vector<Tensor>& ys, const std::vector<Proj>& ps, size_t col, size_t heads,
                size_t dim) {
  size_t i = 0;
  while (col >= ps[i].rows) col -= ps[i++].rows;
  const Tensor& y = ys[i];
  const size_t t = y.dim(0), cols = y.dim(1);
  return Tensor(y.storage(),
                Layout({1, t, heads, dim}, {t * cols, cols, dim, 1}, y.layout().start_offset() + col),
                y.dtype(), y.device());
}

}  // namespace

// The attention sub-block of layer l for the n tokens at `pos` on rank rk (ys: the
// rank's q, k and v projections of the normed input, rk.qkv[l], one where their types
// agree), then one fused pass rotates q and k and writes k and v to the
// rank's cache, attention over the cache, and attn_output (n, E), the rank's partial
// sum. Temporaries are released as soon as they are used (prefill activations are the
// runner's work memory).
Tensor Model::Impl::attention_block(Rank& rk, std::vector<Tensor> ys, size_t l, size_t n, const Tensor& cos,
                                    const Tensor& sin, bool from_step) {
  const LayerWeights& L = rk.w.layers[l];
  const std::vector<Proj>& qkv = rk.qkv[l];
  const size_t nh = local.n_head, hkv = local.n_head_kv, dk = hp.head_dim_k, dv = hp.head_dim_v;
  Tensor q = heads_of(ys, qkv, 0, nh, dk);                       // (1, T, H, Dk)
  Tensor k = heads_of(ys, qkv, nh * dk, hkv, dk);                // (1, T, Hkv, Dk)
  const Tensor v = heads_of(ys, qkv, (nh + hkv) * dk, hkv, dv);  // (1, T, Hkv, Dv)
  if (L.q_norm.defined()) {
    q = nn::rms_norm(q, L.q_norm, hp.rms_eps);
    k = nn::rms_norm(k, L.k_norm, hp.rms_eps);
  }
  const RopeKind kind = rope_style == RopeStyle::Norm ? RopeKind::Interleaved : RopeKind::HalfSplit;
  Tensor& kc = rk.k_cache[l];
  Tensor& vc = rk.v_cache[l];
  q = from_step ? nn::rope_kv_cache(q, k, v, cos, sin, kind, kc, vc, step.narrow(0, 1, 1))
                : nn::rope_kv_cache(q, k, v, cos, sin, kind, kc, vc, pos);  // (1, H, T, Dk)
  ys.clear();
  k = Tensor();
  const float scale = float(1.0 / std::sqrt(double(dk)));
  Tensor o = from_step ? nn::attention(q, kc, vc, scale, true, step.narrow(0, 2, 1))
                       : nn::attention(q, kc.narrow(2, 0, pos + n), vc.narrow(2, 0, pos + n), scale, true);
  q = Tensor();  // o: (1, H, T, Dv)
  o = o.squeeze(0).transpose(0, 1).reshape({n, nh * dv});
  return qmatmul(o, L.wo);
}

// The feed-forward sub-block on rank rk: ffn_down(swiglu(gate, up)) over the rank's
// slice of the width (its partial sum); ys: the gate and up projections of the normed
// input, rk.gate_up[l] (one where their types agree).
Tensor Model::Impl::ffn_block(const Rank& rk, std::vector<Tensor> ys, size_t l) const {
  const size_t ff = local.n_ff;
  const Tensor g = ys.size() == 1 ? ys[0].narrow(1, 0, ff) : ys[0];
  const Tensor u = ys.size() == 1 ? ys[0].narrow(1, ff, ff) : ys[1];
  return swiglu_qmatmul(g, u, rk.w.layers[l].w_down);
}

// One forward pass of ids[begin, begin + n) at position `pos`; logits of the last
// token (1, n_vocab), or of every token, on rank 0's device. Every rank holds the
// whole residual stream x (T, E); each block half's partial outputs are summed over
// the ranks before they are added to it, and the ranks' vocabulary slices of the
// logits are gathered. The residual adds are fused with the norm that follows them
// and, where one projection follows, with its mat-vec (norm_project).
//
// from_step (one token, one rank): the token and position come from `step` on the
// device, and the attention reads the cache's first pos + 1 rows from it too.
Tensor Model::Impl::batch(const std::vector<int32_t>& ids, size_t begin, size_t n, bool all_logits,
                          bool from_step) {
  const size_t tp = ranks.size();
  std::vector<Tensor> cos(tp), sin(tp), x(tp), part(tp);
  for (size_t r = 0; r < tp; ++r) {
    if (from_step) {
      const Tensor p = step.narrow(0, 1, 1);
      cos[r] = ranks[r].rope_cos.index_select(p, 0);
      sin[r] = ranks[r].rope_sin.index_select(p, 0);
      x[r] = embed_step(ranks[r]);
    } else {
      cos[r] = ranks[r].rope_cos.narrow(0, pos, n);
      sin[r] = ranks[r].rope_sin.narrow(0, pos, n);
      x[r] = embed(ranks[r], r, ids, begin, n);  // (T, E)
    }
  }
  if (comm) x = comm->all_reduce_sum(x);
  for (size_t l = 0; l < hp.n_layer; ++l) {
    for (size_t r = 0; r < tp; ++r) {
      Rank& rk = ranks[r];
      const LayerWeights& L = rk.w.layers[l];
      std::vector<Tensor> ys = l == 0 ? project(nn::rms_norm(x[r], L.attn_norm, hp.rms_eps), rk.qkv[l])
                                      : norm_project(x[r], part[r], L.attn_norm, rk.qkv[l]);
      part[r] = attention_block(rk, std::move(ys), l, n, cos[r], sin[r], from_step);
    }
    part = all_reduce(std::move(part));
    for (size_t r = 0; r < tp; ++r)
      part[r] = ffn_block(ranks[r],
                          norm_project(x[r], part[r], ranks[r].w.layers[l].ffn_norm, ranks[r].gate_up[l]), l);
    part = all_reduce(std::move(part));
  }
  // The output norm and head: of the last token only unless every token's logits are asked for.
  for (size_t r = 0; r < tp; ++r) {
    const model::Weights& w = ranks[r].w;
    const Tensor xs = all_logits ? x[r] : x[r].narrow(0, n - 1, 1);
    const Tensor ps = all_logits ? part[r] : part[r].narrow(0, n - 1, 1);
    x[r] = part[r] = Tensor();
    part[r] = add_rms_norm_qmatmul(xs, ps, w.output_norm, hp.rms_eps,
                                   w.output.defined() ? w.output : w.token_embd)
                  .second;  // (T, V/tp)
  }
  return comm ? comm->all_gather(part, 1)[0] : part[0];
}

// One token at `pos` through the step path: written to `step`, then run, or (GPU,
// graph option) recorded once on the second step and replayed from then on. The
// logits returned are a copy: the graph's own buffer is rewritten by its next replay.
Tensor Model::Impl::decode(int32_t id) {
  const Device dev = ranks[0].device;
  const std::vector<uint32_t> v = {uint32_t(id), uint32_t(pos), uint32_t(pos + 1)};
  step.slice_set_(Tensor::from_vector(v, {3}, dev), 0, 0);
  if (graph.defined()) {
    graph.replay();
    return graph_logits.copy();
  }
  if (!use_graph || !warmed) {
    warmed = true;
    return batch({id}, 0, 1, false, true);
  }
  graph = Graph::capture(dev, [&] { graph_logits = batch({id}, 0, 1, false, true); });
  graph.replay();
  return graph_logits.copy();
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
  m.step = Tensor::zeros({3}, DType::U32, m.ranks[0].device);
  m.use_graph = options.graph && !options.communicator && m.ranks[0].device.is_gpu();
  for (Rank& rk : m.ranks) {
    for (size_t l = 0; l < hp.n_layer; ++l) {
      rk.k_cache.push_back(Tensor::empty({1, lh.n_head_kv, n_ctx, lh.head_dim_k}, DType::F16, rk.device));
      rk.v_cache.push_back(Tensor::empty({1, lh.n_head_kv, n_ctx, lh.head_dim_v}, DType::F16, rk.device));
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
    if (n == 1 && m.ranks.size() == 1)
      logits = m.decode(tokens[begin]);
    else if (all_logits || last)
      logits = m.batch(tokens, begin, n, all_logits, false);
    else
      (void)m.batch(tokens, begin, n, false, false);
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
