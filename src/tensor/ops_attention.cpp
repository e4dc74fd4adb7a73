// Front ends of the attention op and of the fused rope + KV-cache write: validation,
// then one backend call each (backend.h: attention, rope_kv_cache).
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

// A position or length given as a tensor: one u32 element on `on`'s device.
void check_position(const char* op, const Tensor& on, const Tensor& p, const char* what) {
  front::check_defined(op, p, what);
  front::check_same_device(op, on, p);
  if (p.dtype() != DType::U32 || p.elem_count() != 1) {
    throw_error(ErrorKind::InvalidArgument, op,
                fmt::format("{} {} must be one u32 element", what, describe(p)));
  }
}

// Its value, read on the host (synchronizes with its device).
size_t position_value(const Tensor& p) { return size_t(p.flatten_all().to_vector<uint32_t>()[0]); }

// attention with every key of k and v, or (kv_len defined) the first kv_len of them.
Tensor attention_impl(const Tensor& q, const Tensor& k, const Tensor& v, float scale, bool causal,
                      const Tensor* kv_len) {
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
  if (b * h * t * dv == 0) return Tensor::zeros({b, h, t, dv}, q.dtype(), q.device());
  if (s == 0) {
    throw_error(ErrorKind::ShapeMismatch, op, fmt::format("{}: no keys to attend to", shapes()));
  }
  DeviceU32 len;
  if (kv_len) {
    check_position(op, q, *kv_len, "kv_len");
    if (q.device().is_cpu()) {
      // Read here: the CPU runs the op at once.
      const size_t n = position_value(*kv_len);
      if (n < std::max<size_t>(t, 1) || n > s) {
        throw_error(
            ErrorKind::IndexOutOfRange, op,
            fmt::format("{}: kv_len {} must lie in [{}, {}]", shapes(), n, std::max<size_t>(t, 1), s));
      }
      return attention_impl(q, k.narrow(2, 0, n), v.narrow(2, 0, n), scale, causal, nullptr);
    }
    len.storage = kv_len->storage().get();
    len.offset = kv_len->layout().start_offset();
  }
  auto out = front::storage_of(q).attention(q.layout(), front::storage_of(k), k.layout(),
                                            front::storage_of(v), v.layout(), scale, causal, len);
  return front::wrap(std::move(out), Shape{b, h, t, dv}, q.dtype(), q.device());
}

// rope_kv_cache at `pos`, or (pos_dev defined) at the position it holds.
Tensor rope_kv_cache_impl(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& cos,
                          const Tensor& sin, RopeKind kind, Tensor& k_cache, Tensor& v_cache, size_t pos,
                          const Tensor* pos_dev) {
  const char* op = "rope_kv_cache";
  check_rank4(op, q, "q", "(B, T, H, D)");
  check_rank4(op, k, "k", "(B, T, Hkv, D)");
  check_rank4(op, v, "v", "(B, T, Hkv, Dv)");
  check_rank4(op, k_cache, "k_cache", "(B, Hkv, S, D)");
  check_rank4(op, v_cache, "v_cache", "(B, Hkv, S, Dv)");
  for (const Tensor* t : std::initializer_list<const Tensor*>{&k, &v, &cos, &sin, &k_cache, &v_cache}) {
    front::check_defined(op, *t, "input");
    front::check_same_device(op, q, *t);
  }
  const auto shapes = [&] {
    return fmt::format("q {} k {} v {} k_cache {} v_cache {}", describe(q), describe(k), describe(v),
                       describe(k_cache), describe(v_cache));
  };
  for (const Tensor* t : {&k, &v, &cos, &sin}) {
    if (t->dtype() != q.dtype()) {
      throw_error(
          ErrorKind::DTypeMismatch, op,
          fmt::format("q {} and {}: q, k, v, cos and sin must share a dtype", describe(q), describe(*t)));
    }
  }
  if (kind != RopeKind::HalfSplit && kind != RopeKind::Interleaved) {
    throw_error(ErrorKind::InvalidArgument, op,
                "kind must be HalfSplit or Interleaved (inputs are (B, T, H, D))");
  }
  const size_t b = q.dim(0), t = q.dim(1), h = q.dim(2), d = q.dim(3);
  const size_t hkv = k.dim(2), dv = v.dim(3);
  if (k.dim(0) != b || v.dim(0) != b || k.dim(1) != t || v.dim(1) != t) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("{}: q, k and v must have the same B and T", shapes()));
  }
  if (k.dim(3) != d || d % 2 != 0) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("{}: q and k need the same even head dim", shapes()));
  }
  if (v.dim(2) != hkv) {
    throw_error(ErrorKind::ShapeMismatch, op, fmt::format("{}: k and v must have the same heads", shapes()));
  }
  const bool caches_fit = k_cache.dim(0) == b && v_cache.dim(0) == b && k_cache.dim(1) == hkv &&
                          v_cache.dim(1) == hkv && k_cache.dim(3) == d && v_cache.dim(3) == dv;
  if (!caches_fit) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("{}: the caches must be (B, Hkv, S, D) and (B, Hkv, S, Dv)", shapes()));
  }
  if (!pos_dev && (pos > k_cache.dim(2) || t > k_cache.dim(2) - pos || pos > v_cache.dim(2) ||
                   t > v_cache.dim(2) - pos)) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("{}: {} tokens at position {} do not fit the caches", shapes(), t, pos));
  }
  if (!k_cache.is_contiguous() || !v_cache.is_contiguous()) {
    throw_error(ErrorKind::InvalidArgument, op, fmt::format("{}: the caches must be contiguous", shapes()));
  }
  if (cos.shape() != sin.shape() || cos.rank() != 2 || cos.dim(1) != d / 2 || cos.dim(0) < t) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("q {} cos {} sin {}: cos/sin must be (T', D/2) with T' >= T = {}, D/2 = {}",
                            describe(q), describe(cos), describe(sin), t, d / 2));
  }
  if (b * t == 0) return Tensor::zeros({b, h, t, d}, q.dtype(), q.device());
  // The backend reads rows with unit stride.
  const auto unit_inner = [](const Tensor& x) { return x.layout().strides()[3] == 1 ? x : x.contiguous(); };
  const Tensor qc = unit_inner(q), kc = unit_inner(k), vc = unit_inner(v);
  const Tensor cc = cos.contiguous(), sc = sin.contiguous();
  KvCacheWrite w;
  w.k = kc.storage().get();
  w.k_l = &kc.layout();
  w.v = vc.storage().get();
  w.v_l = &vc.layout();
  w.k_cache = k_cache.storage().get();
  w.k_cache_l = &k_cache.layout();
  w.v_cache = v_cache.storage().get();
  w.v_cache_l = &v_cache.layout();
  w.pos = pos;
  if (pos_dev) {
    w.pos_dev = {pos_dev->storage().get(), pos_dev->layout().start_offset()};
  }
  auto out = front::storage_of(qc).rope_kv_cache(kind, qc.layout(), front::storage_of(cc), cc.layout(),
                                                 front::storage_of(sc), sc.layout(), w);
  return front::wrap(std::move(out), Shape{b, h, t, d}, q.dtype(), q.device());
}

}  // namespace

Tensor nn::attention(const Tensor& q, const Tensor& k, const Tensor& v, float scale, bool causal) {
  return attention_impl(q, k, v, scale, causal, nullptr);
}

Tensor nn::attention(const Tensor& q, const Tensor& k, const Tensor& v, float scale, bool causal,
                     const Tensor& kv_len) {
  return attention_impl(q, k, v, scale, causal, &kv_len);
}

Tensor nn::rope_kv_cache(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& cos,
                         const Tensor& sin, RopeKind kind, Tensor& k_cache, Tensor& v_cache, size_t pos) {
  return rope_kv_cache_impl(q, k, v, cos, sin, kind, k_cache, v_cache, pos, nullptr);
}

Tensor nn::rope_kv_cache(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& cos,
                         const Tensor& sin, RopeKind kind, Tensor& k_cache, Tensor& v_cache,
                         const Tensor& pos) {
  check_position("rope_kv_cache", q, pos, "pos");
  // The CPU runs the op at once: the position is read here.
  if (q.device().is_cpu()) {
    return rope_kv_cache_impl(q, k, v, cos, sin, kind, k_cache, v_cache, position_value(pos), nullptr);
  }
  return rope_kv_cache_impl(q, k, v, cos, sin, kind, k_cache, v_cache, 0, &pos);
}

}  // namespace wick
