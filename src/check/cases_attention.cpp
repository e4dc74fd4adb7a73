// Parity cases of the attention family: nn::attention (decoding steps of one and a few
// queries over caches of up to thousands of keys, split on a GPU; prefills of many
// queries, the GEMM path on a GPU; grouped heads in groups of 1 to 7; causal and not;
// f16 / bf16 caches under f32 queries; caches viewed through a narrowed S dim with NaN
// beyond it, so that a stray read shows), nn::rope_kv_cache (every float dtype and cache
// dtype, both pair layouts), nn::swiglu and nn::add_rms_norm (every float dtype, strided
// inputs). float64 references written here.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "wick/check.h"

namespace wick::check {
namespace {

using Values = std::vector<double>;

// Ulps of room for a device that accumulates in f32 (f64 for f64) against the CPU's f64.
Tolerance device_tolerance(DType dt, size_t terms) {
  double ulps = dt == DType::F32 ? 16.0 + std::sqrt(double(terms)) : dt == DType::F64 ? 64.0 : 4.0;
  return float_tolerance(dt, ulps);
}

// --- attention ---------------------------------------------------------------------

struct AttnShape {
  size_t b, h, hkv, t, s, d, dv;
};

// A (B, Hkv, S, D) view of a cache of `cap` >= S rows whose rows past S hold NaN.
Tensor cache_view(const Values& v, size_t b, size_t hkv, size_t s, size_t d, size_t cap, DType dt,
                  Device dev) {
  Values full(b * hkv * cap * d, std::numeric_limits<double>::quiet_NaN());
  for (size_t i = 0; i < b * hkv; ++i)
    for (size_t j = 0; j < s * d; ++j) full[i * cap * d + j] = v[i * s * d + j];
  return make_input(full, Shape{b, hkv, cap, d}, dt, dev, LayoutKind::Contiguous).narrow(2, 0, s);
}

Values attention_reference(const AttnShape& z, const Values& q, const Values& k, const Values& v,
                           double scale, bool causal) {
  Values out(z.b * z.h * z.t * z.dv, 0.0);
  const size_t g = z.h / z.hkv;
  for (size_t bi = 0; bi < z.b; ++bi)
    for (size_t hi = 0; hi < z.h; ++hi)
      for (size_t i = 0; i < z.t; ++i) {
        const size_t kh = hi / g, visible = causal ? z.s - z.t + i + 1 : z.s;
        Values p(visible);
        double m = -std::numeric_limits<double>::infinity(), sum = 0.0;
        for (size_t j = 0; j < visible; ++j) {
          double dot = 0.0;
          for (size_t c = 0; c < z.d; ++c)
            dot += q[((bi * z.h + hi) * z.t + i) * z.d + c] * k[((bi * z.hkv + kh) * z.s + j) * z.d + c];
          p[j] = scale * dot;
          m = std::max(m, p[j]);
        }
        for (double& x : p) sum += (x = std::exp(x - m));
        for (size_t j = 0; j < visible; ++j)
          for (size_t c = 0; c < z.dv; ++c)
            out[((bi * z.h + hi) * z.t + i) * z.dv + c] +=
                p[j] / sum * v[((bi * z.hkv + kh) * z.s + j) * z.dv + c];
      }
  return out;
}

// q of dtype dt (contiguous, or transposed from (B, T, H, D) storage), k and v of kv_dt
// as a cache view.
OpCase attention_case(AttnShape z, bool causal, DType dt, DType kv_dt, bool q_transposed,
                      bool bench = false) {
  OpCase c;
  c.family = "attention";
  c.name = fmt::format("attention q {} kv {} B{} H{} Hkv{} T{} S{} D{} Dv{}{}{}", dtype_name(dt),
                       dtype_name(kv_dt), z.b, z.h, z.hkv, z.t, z.s, z.d, z.dv, causal ? " causal" : "",
                       q_transposed ? " q (B,T,H,D)" : "");
  c.dtype = dt;
  c.layout = q_transposed ? LayoutKind::Transposed : LayoutKind::Contiguous;
  c.vs_reference = float_tolerance(dt, 4.0);
  c.vs_cpu = device_tolerance(dt, z.s);
  const float scale = float(1.0 / std::sqrt(double(std::max<size_t>(z.d, 1))));
  auto values = [=](uint64_t seed) {
    return std::array<Values, 3>{round_to_dtype(random_values(z.b * z.h * z.t * z.d, seed), dt),
                                 round_to_dtype(random_values(z.b * z.hkv * z.s * z.d, seed + 1), kv_dt),
                                 round_to_dtype(random_values(z.b * z.hkv * z.s * z.dv, seed + 2), kv_dt)};
  };
  auto build = [=](Device dev, uint64_t seed) {
    auto [q, k, v] = values(seed);
    Tensor qt;
    if (q_transposed) {
      Values st(q.size());  // stored (B, T, H, D)
      for (size_t bi = 0; bi < z.b; ++bi)
        for (size_t hi = 0; hi < z.h; ++hi)
          for (size_t i = 0; i < z.t; ++i)
            for (size_t e = 0; e < z.d; ++e)
              st[((bi * z.t + i) * z.h + hi) * z.d + e] = q[((bi * z.h + hi) * z.t + i) * z.d + e];
      qt = make_input(st, Shape{z.b, z.t, z.h, z.d}, dt, dev, LayoutKind::Contiguous).transpose(1, 2);
    } else {
      qt = make_input(q, Shape{z.b, z.h, z.t, z.d}, dt, dev, LayoutKind::Contiguous);
    }
    const size_t cap = z.s + 5;
    return std::array<Tensor, 3>{qt, cache_view(k, z.b, z.hkv, z.s, z.d, cap, kv_dt, dev),
                                 cache_view(v, z.b, z.hkv, z.s, z.dv, cap, kv_dt, dev)};
  };
  c.run = [=](Device dev, uint64_t seed) {
    auto t = build(dev, seed);
    return std::vector<Tensor>{nn::attention(t[0], t[1], t[2], scale, causal)};
  };
  c.reference = [=](uint64_t seed) {
    auto [q, k, v] = values(seed);
    // k and v are read as q's dtype.
    return std::vector<Values>{round_to_dtype(
        attention_reference(z, q, round_to_dtype(k, dt), round_to_dtype(v, dt), double(scale), causal), dt)};
  };
  if (bench) {
    c.bytes = double(z.b * z.hkv * z.s * (z.d + z.dv) * dtype_size(kv_dt));
    c.prepare = [=](Device dev, uint64_t seed) {
      auto t = build(dev, seed);
      return std::function<std::vector<Tensor>()>(
          [=] { return std::vector<Tensor>{nn::attention(t[0], t[1], t[2], scale, causal)}; });
    };
  }
  return c;
}

// --- rope_kv_cache -------------------------------------------------------------------

OpCase rope_kv_case(DType dt, DType cache_dt, bool interleaved, size_t t, size_t pos, bool strided) {
  const size_t b = 1, h = 4, hkv = 2, d = 8, s = 12, cols = (h + 2 * hkv) * d;
  OpCase c;
  c.family = "attention";
  c.name = fmt::format("rope_kv_cache {} cache {} {} T{} pos {}{}", dtype_name(dt), dtype_name(cache_dt),
                       interleaved ? "interleaved" : "half-split", t, pos,
                       strided ? " q/k/v of one projection" : "");
  c.dtype = dt;
  c.layout = strided ? LayoutKind::Narrowed : LayoutKind::Contiguous;
  // f64 math rounded once, on every device: exact.
  c.vs_reference = Tolerance::exact_match();
  c.vs_cpu = Tolerance::exact_match();
  auto values = [=](uint64_t seed) {
    Values proj = round_to_dtype(random_values(t * cols, seed), dt);
    Values ang = random_values(t * d / 2, seed + 1, -3.2, 3.2), cs(ang.size()), sn(ang.size());
    for (size_t i = 0; i < ang.size(); ++i) cs[i] = std::cos(ang[i]), sn[i] = std::sin(ang[i]);
    return std::array<Values, 3>{proj, round_to_dtype(cs, dt), round_to_dtype(sn, dt)};
  };
  c.run = [=](Device dev, uint64_t seed) {
    auto [proj, cs, sn] = values(seed);
    const Tensor p = make_input(proj, Shape{b, t, cols}, dt, dev, LayoutKind::Contiguous);
    const auto part = [&](size_t c0, size_t heads) {
      const Tensor v = p.narrow(2, c0, heads * d);
      return strided ? Tensor(v.storage(), Layout({b, t, heads, d}, {t * cols, cols, d, 1}, c0), dt, dev)
                     : v.contiguous().reshape({b, t, heads, d});
    };
    Tensor kc = Tensor::full(Scalar(0.5), {b, hkv, s, d}, cache_dt, dev);
    Tensor vc = Tensor::full(Scalar(-0.5), {b, hkv, s, d}, cache_dt, dev);
    const Tensor ct = make_input(cs, Shape{t, d / 2}, dt, dev, LayoutKind::Contiguous);
    const Tensor st = make_input(sn, Shape{t, d / 2}, dt, dev, LayoutKind::Contiguous);
    Tensor qr = nn::rope_kv_cache(part(0, h), part(h * d, hkv), part((h + hkv) * d, hkv), ct, st,
                                  interleaved ? RopeKind::Interleaved : RopeKind::HalfSplit, kc, vc, pos);
    return std::vector<Tensor>{qr, kc, vc};
  };
  c.reference = [=](uint64_t seed) {
    auto [proj, cs_bound, sn_bound] = values(seed);
    // Named references: a lambda may not capture structured bindings before C++20's
    // rule reached every compiler (clang 14 refuses).
    const Values& cs = cs_bound;
    const Values& sn = sn_bound;
    Values q(b * h * t * d), kc(b * hkv * s * d, 0.5), vc(b * hkv * s * d, -0.5);
    const auto rotate = [&](const double* x, size_t ti, double* y) {
      for (size_t i = 0; i < d / 2; ++i) {
        const size_t i0 = interleaved ? 2 * i : i, i1 = interleaved ? 2 * i + 1 : i + d / 2;
        const double co = cs[ti * d / 2 + i], si = sn[ti * d / 2 + i];
        y[i0] = x[i0] * co - x[i1] * si;
        y[i1] = x[i0] * si + x[i1] * co;
      }
    };
    for (size_t ti = 0; ti < t; ++ti) {
      const double* row = &proj[ti * cols];
      for (size_t hi = 0; hi < h; ++hi) rotate(row + hi * d, ti, &q[(hi * t + ti) * d]);
      for (size_t hi = 0; hi < hkv; ++hi) {
        rotate(row + (h + hi) * d, ti, &kc[(hi * s + pos + ti) * d]);
        for (size_t e = 0; e < d; ++e) vc[(hi * s + pos + ti) * d + e] = row[(h + hkv + hi) * d + e];
      }
    }
    return std::vector<Values>{round_to_dtype(q, dt), round_to_dtype(kc, cache_dt),
                               round_to_dtype(vc, cache_dt)};
  };
  return c;
}

// --- swiglu / add_rms_norm ------------------------------------------------------------

OpCase swiglu_case(DType dt, LayoutKind lk, Shape s) {
  OpCase c;
  c.family = "attention";
  c.name = fmt::format("swiglu {} {} {}", dtype_name(dt), layout_kind_name(lk), s.str());
  c.dtype = dt;
  c.layout = lk;
  // silu and the product in f32 (f64 for f64), one rounding to dt at the end.
  c.vs_reference = float_tolerance(dt, dt == DType::F32 ? 16.0 : 4.0);
  c.vs_cpu = float_tolerance(dt, dt == DType::F32 ? 16.0 : 4.0);
  auto values = [=](uint64_t seed) {
    return std::array<Values, 2>{round_to_dtype(random_values(s.elem_count(), seed, -6, 6), dt),
                                 round_to_dtype(random_values(s.elem_count(), seed + 1, -3, 3), dt)};
  };
  c.run = [=](Device dev, uint64_t seed) {
    auto [g, u] = values(seed);
    return std::vector<Tensor>{nn::swiglu(make_input(g, s, dt, dev, lk), make_input(u, s, dt, dev, lk))};
  };
  c.reference = [=](uint64_t seed) {
    auto [g, u] = values(seed);
    Values out(g.size());
    for (size_t i = 0; i < g.size(); ++i) out[i] = g[i] / (1.0 + std::exp(-g[i])) * u[i];
    return std::vector<Values>{round_to_dtype(out, dt)};
  };
  return c;
}

OpCase add_rms_norm_case(DType dt, LayoutKind lk, bool with_alpha, Shape s) {
  OpCase c;
  c.family = "attention";
  c.name = fmt::format("add_rms_norm {} {} {}{}", dtype_name(dt), layout_kind_name(lk), s.str(),
                       with_alpha ? " alpha" : "");
  c.dtype = dt;
  c.layout = lk;
  const size_t cols = s[s.rank() - 1];
  const float eps = 1e-5f;
  c.vs_reference = float_tolerance(dt, 2.0);
  c.vs_cpu = device_tolerance(dt, cols);
  auto values = [=](uint64_t seed) {
    return std::array<Values, 3>{round_to_dtype(random_values(s.elem_count(), seed), dt),
                                 round_to_dtype(random_values(s.elem_count(), seed + 1), dt),
                                 round_to_dtype(random_values(cols, seed + 2, 0.5, 1.5), dt)};
  };
  c.run = [=](Device dev, uint64_t seed) {
    auto [x, r, a] = values(seed);
    const Tensor alpha = with_alpha ? make_input(a, Shape{cols}, dt, dev, LayoutKind::Contiguous) : Tensor();
    auto [sum, y] =
        nn::add_rms_norm(make_input(x, s, dt, dev, lk), make_input(r, s, dt, dev, lk), alpha, eps);
    return std::vector<Tensor>{sum, y};
  };
  c.reference = [=](uint64_t seed) {
    auto [x, r, a] = values(seed);
    Values sum(x.size());
    for (size_t i = 0; i < x.size(); ++i) sum[i] = x[i] + r[i];
    // The sum as the dtype stores it (halves add in f32 first; a sum of two halves is
    // exact in f32) feeds the norm.
    sum = round_to_dtype(sum, dt);
    Values y(sum.size());
    for (size_t row = 0; row < sum.size() / cols; ++row) {
      double ss = 0;
      for (size_t i = 0; i < cols; ++i) ss += sum[row * cols + i] * sum[row * cols + i];
      const double inv = 1.0 / std::sqrt(ss / double(cols) + double(eps));
      for (size_t i = 0; i < cols; ++i)
        y[row * cols + i] = sum[row * cols + i] * inv * (with_alpha ? a[i] : 1.0);
    }
    return std::vector<Values>{sum, round_to_dtype(y, dt)};
  };
  return c;
}

std::vector<OpCase> attention_cases() {
  std::vector<OpCase> v;
  const DType f32 = DType::F32, f16 = DType::F16, bf16 = DType::BF16, f64 = DType::F64;
  // Decoding: one query over short and long caches (long ones split on a GPU), the head
  // sizes of the models (64, 128), an odd one, grouped heads of 1, 3, 4 and 7.
  v.push_back(attention_case({1, 32, 8, 1, 4100, 128, 128}, true, f32, f16, false));
  v.push_back(attention_case({1, 9, 3, 1, 300, 64, 64}, true, f32, f16, false));
  v.push_back(attention_case({2, 14, 2, 1, 1000, 64, 64}, true, f32, bf16, true));
  v.push_back(attention_case({1, 4, 4, 1, 37, 20, 12}, false, f32, f32, false));
  v.push_back(attention_case({1, 8, 2, 1, 2000, 128, 128}, true, f16, f16, false));
  v.push_back(attention_case({1, 8, 2, 1, 513, 64, 64}, true, bf16, bf16, false));
  v.push_back(attention_case({1, 4, 2, 1, 200, 32, 32}, true, f64, f64, false));
  // A few queries (decode kernels, causal by position) and many (the GEMM path).
  v.push_back(attention_case({1, 8, 2, 5, 300, 128, 128}, true, f32, f16, true));
  v.push_back(attention_case({1, 8, 2, 8, 8, 64, 64}, true, f32, f16, false));
  v.push_back(attention_case({1, 8, 2, 40, 300, 128, 128}, true, f32, f16, true));
  v.push_back(attention_case({2, 6, 3, 17, 17, 32, 16}, true, f32, f32, false));
  v.push_back(attention_case({1, 4, 1, 12, 30, 16, 16}, false, f16, f16, false));
  v.push_back(attention_case({1, 4, 2, 9, 20, 16, 16}, true, f64, f64, false));
  // Bench: one decoding step of an 8B Llama layer at a 4096-token depth.
  v.push_back(attention_case({1, 32, 8, 1, 4096, 128, 128}, true, f32, f16, false, true));

  for (DType dt : {f16, bf16, f32, f64}) {
    for (DType cache : {f16, f32})
      for (bool inter : {false, true}) v.push_back(rope_kv_case(dt, cache, inter, 3, 4, true));
    v.push_back(rope_kv_case(dt, bf16, true, 1, 11, false));
    v.push_back(rope_kv_case(dt, f64, false, 2, 0, false));
    for (LayoutKind lk : {LayoutKind::Contiguous, LayoutKind::Transposed, LayoutKind::Narrowed}) {
      v.push_back(swiglu_case(dt, lk, {5, 3, 37}));
      v.push_back(add_rms_norm_case(dt, lk, true, {6, 2, 40}));
    }
    v.push_back(add_rms_norm_case(dt, LayoutKind::Contiguous, false, {3, 4096}));
    v.push_back(swiglu_case(dt, LayoutKind::Empty, {0, 8}));
  }
  return v;
}

const bool kRegistered = register_cases(attention_cases());

}  // namespace
}  // namespace wick::check
