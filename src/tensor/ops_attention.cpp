// Front end of the attention op: validation, then the computation from existing
// ops (a batched matmul, the causal mask by where_cond, softmax_last_dim, a second
// batched matmul), over ranges of queries when the scores would be large.
// Grouped-query attention needs no copy of k or v: the G = H / Hkv query heads of
// one key/value head meet it through a broadcast batch dim.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "base/dispatch.h"
#include "tensor/checks.h"

namespace wick {

using front::describe;

namespace {

void check_rank4(const char* op, const Tensor& t, const char* what, const char* dims) {
  front::check_defined(op, t, what);
  front::check_dtype_in(op, t, kFloatDTypes, what);
  if (t.rank() != 4) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("{} {} must be {} (rank 4)", what, describe(t), dims));
  }
}

}  // namespace

Tensor nn::attention(const Tensor& q, const Tensor& k, const Tensor& v, float scale, bool causal) {
  const char* op = "attention";
  check_rank4(op, q, "q", "(B, H, T, D)");
  check_rank4(op, k, "k", "(B, Hkv, S, D)");
  check_rank4(op, v, "v", "(B, Hkv, S, Dv)");
  front::check_same_device(op, q, k);
  front::check_same_device(op, q, v);
  const size_t b = q.dim(0), h = q.dim(1), t = q.dim(2), d = q.dim(3);
  const size_t hkv = k.dim(1), s = k.dim(2), dv = v.dim(3);
  const auto shapes = [&] { return fmt::format("q {} k {} v {}", describe(q), describe(k), describe(v)); };
  if (k.dim(0) != b || v.dim(0) != b) {
    throw_error(ErrorKind::ShapeMismatch, op, fmt::format("{}: batch sizes differ", shapes()));
  }
  if (k.dim(3) != d) {
    throw_error(ErrorKind::ShapeMismatch, op, fmt::format("{}: q and k head dims differ", shapes()));
  }
  if (v.dim(1) != hkv || v.dim(2) != s) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("{}: k and v must have the same heads and length", shapes()));
  }
  if (hkv == 0 || h % hkv != 0) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("{}: q heads {} are not a multiple of k/v heads {}", shapes(), h, hkv));
  }
  if (causal && s < t) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("{}: causal attention needs S >= T (keys {} < queries {})", shapes(), s, t));
  }
  if (!std::isfinite(scale)) {
    throw_error(ErrorKind::InvalidArgument, op, fmt::format("scale {} must be finite", scale));
  }
  const DType dt = q.dtype();
  const size_t g = h / hkv;
  if (b * h * t * dv == 0) return Tensor::zeros({b, h, t, dv}, dt, q.device());
  if (s == 0) {
    throw_error(ErrorKind::ShapeMismatch, op, fmt::format("{}: no keys to attend to", shapes()));
  }

  // Query heads kv*G .. kv*G + G-1 share key/value head kv: (B*Hkv, G, T, D) against
  // keys (B*Hkv, 1, S, D) broadcast over G.
  const Tensor qg = q.affine(scale, 0.0).reshape({b * hkv, g, t, d});
  const Tensor kt = (k.dtype() == dt ? k : k.to_dtype(dt)).reshape({b * hkv, 1, s, d}).transpose(2, 3);
  const Tensor vc = (v.dtype() == dt ? v : v.to_dtype(dt)).reshape({b * hkv, 1, s, dv});
  // Query i (position S - T + i) must not see key j > S - T + i.
  Tensor mask, neg_inf;
  if (causal && t > 1) {
    std::vector<uint8_t> hide(t * s, 0);
    for (size_t i = 0; i < t; ++i)
      for (size_t j = s - t + i + 1; j < s; ++j) hide[i * s + j] = 1;
    mask = Tensor::from_vector(hide, {t, s}, q.device());
    const std::vector<float> inf{-std::numeric_limits<float>::infinity()};
    neg_inf = Tensor::from_vector(inf, {1}, q.device()).to_dtype(dt);
  }
  // Rows of queries per piece, so that a piece's scores stay within kAttentionScoreBlock.
  const size_t rows = std::clamp<size_t>(kAttentionScoreBlock / (b * h * s), 1, t);
  Tensor out = rows == t ? Tensor() : Tensor::empty({b * hkv, g, t, dv}, dt, q.device());
  for (size_t t0 = 0; t0 < t; t0 += rows) {
    const size_t n = std::min(rows, t - t0);
    // Causal: these queries see no key past S - T + t0 + n.
    const size_t seen = causal ? s - t + t0 + n : s;
    Tensor scores = qg.narrow(2, t0, n).matmul(kt.narrow(3, 0, seen));  // (B*Hkv, G, n, seen)
    if (mask.defined()) scores = mask.narrow(0, t0, n).narrow(1, 0, seen).where_cond(neg_inf, scores);
    scores = nn::softmax_last_dim(scores);
    Tensor piece = scores.matmul(vc.narrow(2, 0, seen));  // (B*Hkv, G, n, Dv)
    scores = Tensor();
    if (rows == t) return piece.reshape({b, h, t, dv});
    out.slice_set_(piece, 2, t0);
  }
  return out.reshape({b, h, t, dv});
}

}  // namespace wick
