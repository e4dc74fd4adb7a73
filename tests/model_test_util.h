// Tiny GGUF language models for the model runner's tests, written with wick's GGUF
// writer, and an independent float64 forward pass over the values the file holds
// (plain loops: no wick op is involved).
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "wick/io.h"
#include "wick/quant.h"

namespace wick::test {

struct TinyConfig {
  std::string arch = "llama";
  size_t vocab = 48, embd = 64, layers = 2, heads = 4, heads_kv = 2, ff = 96, ctx = 128;
  size_t head_dim = 0;            // 0: embd / heads; otherwise written as attention.key_length
  GgmlType type = GgmlType::F32;  // the matrices' type
  bool tied = false;              // no output.weight
  bool rope_freqs = false;        // rope_freqs.weight (llama)
  float rope_base = 10000.0f;
  float linear_scale = 0.0f;  // > 0: rope.scaling.type linear with this factor
  float eps = 1e-5f;
  uint32_t seed = 7;
  // Per matrix kind ("attn_v", "ffn_up", ...): a type other than `type` (Q4_K_M mixes them).
  std::map<std::string, GgmlType> types;

  bool qkv_bias() const { return arch == "qwen2"; }
  bool qk_norm() const { return arch == "qwen3"; }
  bool neox() const { return arch != "llama"; }
  size_t hd() const { return head_dim ? head_dim : embd / heads; }
};

// The values each tensor holds, as the runner reads them (dequantized), row-major.
using TinyValues = std::map<std::string, std::vector<double>>;

struct TinyFile {
  std::vector<std::pair<std::string, GgufValue>> metadata;
  std::vector<GgufTensorData> tensors;
  TinyValues values;
};

// Builds the metadata and tensors of a tiny model (random weights of `cfg.seed`).
inline TinyFile make_tiny_model(const TinyConfig& c) {
  TinyFile f;
  const std::string a = c.arch;
  auto& md = f.metadata;
  md.emplace_back("general.architecture", GgufValue(a));
  md.emplace_back("general.name", GgufValue(std::string("tiny-") + a));
  md.emplace_back(a + ".context_length", GgufValue(uint32_t(c.ctx)));
  md.emplace_back(a + ".embedding_length", GgufValue(uint32_t(c.embd)));
  md.emplace_back(a + ".block_count", GgufValue(uint32_t(c.layers)));
  md.emplace_back(a + ".feed_forward_length", GgufValue(uint32_t(c.ff)));
  md.emplace_back(a + ".attention.head_count", GgufValue(uint32_t(c.heads)));
  md.emplace_back(a + ".attention.head_count_kv", GgufValue(uint32_t(c.heads_kv)));
  md.emplace_back(a + ".attention.layer_norm_rms_epsilon", GgufValue(c.eps));
  md.emplace_back(a + ".rope.freq_base", GgufValue(c.rope_base));
  if (c.head_dim) md.emplace_back(a + ".attention.key_length", GgufValue(uint32_t(c.head_dim)));
  if (c.linear_scale > 0) {
    md.emplace_back(a + ".rope.scaling.type", GgufValue(std::string("linear")));
    md.emplace_back(a + ".rope.scaling.factor", GgufValue(c.linear_scale));
  }

  std::mt19937 rng(c.seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto matrix = [&](const std::string& name, size_t rows, size_t cols, float scale) {
    std::vector<float> v(rows * cols);
    for (float& x : v) x = normal(rng) * scale;
    const Tensor t = Tensor::from_vector(v, {rows, cols});
    const size_t dot = name.rfind(".weight"), start = name.rfind('.', dot - 1) + 1;
    const auto it = c.types.find(name.substr(start, dot - start));
    const QTensor q = QTensor::quantize(t, it == c.types.end() ? c.type : it->second);
    f.tensors.push_back(GgufTensorData::from_qtensor(name, q));
    f.values[name] = q.dequantize(DType::F64).to_vector<double>();
  };
  auto vector = [&](const std::string& name, size_t n, float center, float scale) {
    std::vector<float> v(n);
    for (float& x : v) x = center + normal(rng) * scale;
    f.tensors.push_back(GgufTensorData::from_tensor(name, Tensor::from_vector(v, {n})));
    f.values[name] = std::vector<double>(v.begin(), v.end());
  };
  const size_t hd = c.hd(), q = c.heads * hd, kv = c.heads_kv * hd;
  matrix("token_embd.weight", c.vocab, c.embd, 1.0f);
  vector("output_norm.weight", c.embd, 1.0f, 0.1f);
  if (!c.tied) matrix("output.weight", c.vocab, c.embd, 1.0f / std::sqrt(float(c.embd)));
  if (c.rope_freqs) {
    std::vector<float> ff(hd / 2);
    for (size_t i = 0; i < ff.size(); ++i) ff[i] = 1.0f + float(i % 3) * 1.5f;  // divisors 1, 2.5, 4
    f.tensors.push_back(
        GgufTensorData::from_tensor("rope_freqs.weight", Tensor::from_vector(ff, {ff.size()})));
    f.values["rope_freqs.weight"] = std::vector<double>(ff.begin(), ff.end());
  }
  for (size_t l = 0; l < c.layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    const float s_in = 1.0f / std::sqrt(float(c.embd));
    vector(p + "attn_norm.weight", c.embd, 1.0f, 0.1f);
    matrix(p + "attn_q.weight", q, c.embd, s_in);
    matrix(p + "attn_k.weight", kv, c.embd, s_in);
    matrix(p + "attn_v.weight", kv, c.embd, s_in);
    matrix(p + "attn_output.weight", c.embd, q, 1.0f / std::sqrt(float(q)));
    if (c.qkv_bias()) {
      vector(p + "attn_q.bias", q, 0.0f, 0.2f);
      vector(p + "attn_k.bias", kv, 0.0f, 0.2f);
      vector(p + "attn_v.bias", kv, 0.0f, 0.2f);
    }
    if (c.qk_norm()) {
      vector(p + "attn_q_norm.weight", hd, 1.0f, 0.1f);
      vector(p + "attn_k_norm.weight", hd, 1.0f, 0.1f);
    }
    vector(p + "ffn_norm.weight", c.embd, 1.0f, 0.1f);
    matrix(p + "ffn_gate.weight", c.ff, c.embd, s_in);
    matrix(p + "ffn_up.weight", c.ff, c.embd, s_in);
    matrix(p + "ffn_down.weight", c.embd, c.ff, 1.0f / std::sqrt(float(c.ff)));
  }
  return f;
}

inline TinyValues write_tiny_model(const std::string& path, const TinyConfig& c) {
  TinyFile f = make_tiny_model(c);
  write_gguf(path, f.metadata, f.tensors);
  return std::move(f.values);
}

// Float64 logits (tokens.size() x vocab) of the model for `tokens` at positions 0.., one
// token after another, with a float64 KV cache.
inline std::vector<std::vector<double>> reference_logits(const TinyConfig& c, const TinyValues& v,
                                                         const std::vector<int32_t>& tokens) {
  const size_t e = c.embd, hd = c.hd(), h = c.heads, hkv = c.heads_kv, g = h / hkv, half = hd / 2;
  auto W = [&](const std::string& n) -> const std::vector<double>& { return v.at(n); };
  auto matvec = [](const std::vector<double>& m, const std::vector<double>& x, size_t rows) {
    const size_t cols = x.size();
    std::vector<double> y(rows, 0.0);
    for (size_t r = 0; r < rows; ++r)
      for (size_t k = 0; k < cols; ++k) y[r] += m[r * cols + k] * x[k];
    return y;
  };
  auto rmsnorm = [&](const std::vector<double>& x, const std::vector<double>& w, size_t off, size_t n) {
    double ss = 0.0;
    for (size_t i = 0; i < n; ++i) ss += x[off + i] * x[off + i];
    const double r = 1.0 / std::sqrt(ss / double(n) + double(c.eps));
    std::vector<double> y(x);
    for (size_t i = 0; i < n; ++i) y[off + i] = x[off + i] * r * w[i];
    return y;
  };
  auto rope = [&](std::vector<double>& x, size_t heads, size_t pos) {
    for (size_t hh = 0; hh < heads; ++hh) {
      for (size_t i = 0; i < half; ++i) {
        double theta = std::pow(double(c.rope_base), -2.0 * double(i) / double(hd));
        if (c.rope_freqs) theta /= W("rope_freqs.weight")[i];
        if (c.linear_scale > 0) theta /= double(c.linear_scale);
        const double a = double(pos) * theta, cs = std::cos(a), sn = std::sin(a);
        const size_t i0 = hh * hd + (c.neox() ? i : 2 * i), i1 = hh * hd + (c.neox() ? i + half : 2 * i + 1);
        const double x0 = x[i0], x1 = x[i1];
        x[i0] = x0 * cs - x1 * sn;
        x[i1] = x0 * sn + x1 * cs;
      }
    }
  };
  std::vector<std::vector<std::vector<double>>> kc(c.layers), vc(c.layers);
  std::vector<std::vector<double>> out;
  for (size_t p = 0; p < tokens.size(); ++p) {
    const auto& te = W("token_embd.weight");
    std::vector<double> x(te.begin() + ptrdiff_t(size_t(tokens[p]) * e),
                          te.begin() + ptrdiff_t(size_t(tokens[p] + 1) * e));
    for (size_t l = 0; l < c.layers; ++l) {
      const std::string pre = "blk." + std::to_string(l) + ".";
      const auto a = rmsnorm(x, W(pre + "attn_norm.weight"), 0, e);
      auto q = matvec(W(pre + "attn_q.weight"), a, h * hd);
      auto k = matvec(W(pre + "attn_k.weight"), a, hkv * hd);
      auto vv = matvec(W(pre + "attn_v.weight"), a, hkv * hd);
      if (c.qkv_bias()) {
        for (size_t i = 0; i < q.size(); ++i) q[i] += W(pre + "attn_q.bias")[i];
        for (size_t i = 0; i < k.size(); ++i) k[i] += W(pre + "attn_k.bias")[i];
        for (size_t i = 0; i < vv.size(); ++i) vv[i] += W(pre + "attn_v.bias")[i];
      }
      if (c.qk_norm()) {
        for (size_t hh = 0; hh < h; ++hh) q = rmsnorm(q, W(pre + "attn_q_norm.weight"), hh * hd, hd);
        for (size_t hh = 0; hh < hkv; ++hh) k = rmsnorm(k, W(pre + "attn_k_norm.weight"), hh * hd, hd);
      }
      rope(q, h, p);
      rope(k, hkv, p);
      kc[l].push_back(k);
      vc[l].push_back(vv);
      std::vector<double> o(h * hd, 0.0);
      for (size_t hh = 0; hh < h; ++hh) {
        const size_t kh = hh / g;
        std::vector<double> s(p + 1);
        double mx = -1e300;
        for (size_t j = 0; j <= p; ++j) {
          double d = 0.0;
          for (size_t i = 0; i < hd; ++i) d += q[hh * hd + i] * kc[l][j][kh * hd + i];
          s[j] = d / std::sqrt(double(hd));
          mx = std::max(mx, s[j]);
        }
        double sum = 0.0;
        for (double& sj : s) sum += (sj = std::exp(sj - mx));
        for (size_t j = 0; j <= p; ++j)
          for (size_t i = 0; i < hd; ++i) o[hh * hd + i] += s[j] / sum * vc[l][j][kh * hd + i];
      }
      const auto ao = matvec(W(pre + "attn_output.weight"), o, e);
      for (size_t i = 0; i < e; ++i) x[i] += ao[i];
      const auto b = rmsnorm(x, W(pre + "ffn_norm.weight"), 0, e);
      const auto gate = matvec(W(pre + "ffn_gate.weight"), b, c.ff);
      const auto up = matvec(W(pre + "ffn_up.weight"), b, c.ff);
      std::vector<double> act(c.ff);
      for (size_t i = 0; i < c.ff; ++i) act[i] = gate[i] / (1.0 + std::exp(-gate[i])) * up[i];
      const auto down = matvec(W(pre + "ffn_down.weight"), act, e);
      for (size_t i = 0; i < e; ++i) x[i] += down[i];
    }
    const auto xn = rmsnorm(x, W("output_norm.weight"), 0, e);
    out.push_back(matvec(W(c.tied ? "token_embd.weight" : "output.weight"), xn, c.vocab));
  }
  return out;
}

// Normalized mean squared error sum((a-b)^2) / sum(b^2).
inline double nmse(const std::vector<float>& a, const std::vector<double>& b) {
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < b.size(); ++i) {
    num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    den += b[i] * b[i];
  }
  return num / den;
}

// Tokens used as prompts: a fixed walk over the vocabulary.
inline std::vector<int32_t> prompt_of(size_t n, size_t vocab) {
  std::vector<int32_t> ids(n);
  for (size_t i = 0; i < n; ++i) ids[i] = int32_t((i * 7 + 3) % vocab);
  return ids;
}

}  // namespace wick::test
