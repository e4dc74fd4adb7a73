// Parity cases of the fused nn family: softmax / log-softmax over the last dim,
// rms_norm and layer_norm (alpha / beta optional), rope / rope_i / rope_thd with
// shared and per-batch cos/sin tables longer than T. Every float dtype x layout of
// the main input; float64 references written here; bench-sized softmax and rms_norm.
//
// Bounds: the CPU computes in f64 and rounds once, so against the reference a few
// output ulps suffice; another device accumulating in f32 gets more room.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "wick/check.h"

namespace wick::check {
namespace {

using Values = std::vector<double>;

Values inputs(DType dt, const Shape& shape, LayoutKind lk, uint64_t seed, double lo = -2.0, double hi = 2.0) {
  size_t n = shape.elem_count();
  if (lk != LayoutKind::Broadcast || n == 0) return round_to_dtype(random_values(n, seed, lo, hi), dt);
  size_t inner = n / shape[0];
  Values row = random_values(inner, seed, lo, hi), v(n);
  for (size_t i = 0; i < n; ++i) v[i] = row[i % inner];
  return round_to_dtype(v, dt);
}

double bytes_of(size_t n, DType dt) { return double(n) * double(dtype_size(dt)); }

// Ulps of room for a device computing in f32 against the CPU's f64 (halves round the same result).
Tolerance device_tolerance(DType dt, size_t row_len) {
  double ulps = dt == DType::F32 ? 16.0 + std::sqrt(double(row_len)) : dt == DType::F64 ? 64.0 : 4.0;
  return float_tolerance(dt, ulps);
}

// --- softmax ---------------------------------------------------------------------

OpCase softmax_case(DType dt, LayoutKind lk, bool log, Shape s, bool bench = false) {
  OpCase c;
  c.family = "nn";
  const char* op = log ? "log_softmax_last_dim" : "softmax_last_dim";
  c.name = fmt::format("{} {} {} {}", op, dtype_name(dt), layout_kind_name(lk), s.str());
  c.dtype = dt;
  c.layout = lk;
  size_t cols = s.rank() ? s[s.rank() - 1] : 1;
  c.vs_reference = float_tolerance(dt, 2.0);
  c.vs_cpu = device_tolerance(dt, cols);
  auto run1 = [log](const Tensor& x) { return log ? nn::log_softmax_last_dim(x) : nn::softmax_last_dim(x); };
  c.run = [=](Device dev, uint64_t seed) {
    return std::vector<Tensor>{run1(make_input(inputs(dt, s, lk, seed, -6, 6), s, dt, dev, lk))};
  };
  c.reference = [=](uint64_t seed) {
    Values x = inputs(dt, s, lk, seed, -6, 6), out;
    for (size_t r = 0; cols && r < x.size() / cols; ++r) {
      double m = -std::numeric_limits<double>::infinity(), sum = 0;
      for (size_t i = 0; i < cols; ++i) m = std::max(m, x[r * cols + i]);
      for (size_t i = 0; i < cols; ++i) sum += std::exp(x[r * cols + i] - m);
      for (size_t i = 0; i < cols; ++i)
        out.push_back(log ? x[r * cols + i] - m - std::log(sum) : std::exp(x[r * cols + i] - m) / sum);
    }
    return std::vector<Values>{round_to_dtype(out, dt)};
  };
  if (bench) {
    c.bytes = 2 * bytes_of(s.elem_count(), dt);
    c.prepare = [=](Device dev, uint64_t seed) {
      Tensor x = make_input(inputs(dt, s, lk, seed, -6, 6), s, dt, dev, lk);
      return std::function<std::vector<Tensor>()>([=] { return std::vector<Tensor>{run1(x)}; });
    };
  }
  return c;
}

// --- rms_norm / layer_norm -------------------------------------------------------

OpCase norm_case(DType dt, LayoutKind lk, bool layer, bool with_alpha, bool with_beta, Shape s,
                 bool bench = false) {
  OpCase c;
  c.family = "nn";
  c.name = fmt::format("{} {} {} {}{}{}", layer ? "layer_norm" : "rms_norm", dtype_name(dt),
                       layout_kind_name(lk), s.str(), with_alpha ? " alpha" : "", with_beta ? " beta" : "");
  c.dtype = dt;
  c.layout = lk;
  size_t cols = s[s.rank() - 1];
  const float eps = 1e-5f;
  c.vs_reference = float_tolerance(dt, 2.0);
  c.vs_cpu = device_tolerance(dt, cols);
  Shape ps{cols};
  auto build = [=](Device dev, uint64_t seed) {
    Tensor x = make_input(inputs(dt, s, lk, seed), s, dt, dev, lk);
    Tensor a = with_alpha ? make_input(inputs(dt, ps, LayoutKind::Contiguous, seed + 1, 0.5, 1.5), ps, dt,
                                       dev, LayoutKind::Contiguous)
                          : Tensor();
    Tensor b = with_beta ? make_input(inputs(dt, ps, LayoutKind::Contiguous, seed + 2), ps, dt, dev,
                                      LayoutKind::Contiguous)
                         : Tensor();
    return std::array<Tensor, 3>{x, a, b};
  };
  auto run1 = [=](const std::array<Tensor, 3>& t) {
    return layer ? nn::layer_norm(t[0], t[1], t[2], eps) : nn::rms_norm(t[0], t[1], eps);
  };
  c.run = [=](Device dev, uint64_t seed) { return std::vector<Tensor>{run1(build(dev, seed))}; };
  c.reference = [=](uint64_t seed) {
    Values x = inputs(dt, s, lk, seed), out;
    Values a = inputs(dt, ps, LayoutKind::Contiguous, seed + 1, 0.5, 1.5);
    Values b = inputs(dt, ps, LayoutKind::Contiguous, seed + 2);
    for (size_t r = 0; r < x.size() / cols; ++r) {
      const double* v = &x[r * cols];
      double mean = 0, ss = 0;
      if (layer) {
        for (size_t i = 0; i < cols; ++i) mean += v[i];
        mean /= double(cols);
      }
      for (size_t i = 0; i < cols; ++i) ss += (v[i] - mean) * (v[i] - mean);
      double inv = 1.0 / std::sqrt(ss / double(cols) + double(eps));
      for (size_t i = 0; i < cols; ++i)
        out.push_back((v[i] - mean) * inv * (with_alpha ? a[i] : 1.0) + (with_beta ? b[i] : 0.0));
    }
    return std::vector<Values>{round_to_dtype(out, dt)};
  };
  if (bench) {
    c.bytes = 2 * bytes_of(s.elem_count(), dt);
    c.prepare = [=](Device dev, uint64_t seed) {
      auto t = build(dev, seed);
      return std::function<std::vector<Tensor>()>([=] { return std::vector<Tensor>{run1(t)}; });
    };
  }
  return c;
}

// --- rope ------------------------------------------------------------------------

OpCase rope_case(DType dt, LayoutKind lk, RopeKind kind, bool per_batch, size_t b, size_t h, size_t t,
                 size_t d, size_t t_table) {
  OpCase c;
  c.family = "nn";
  const char* op = kind == RopeKind::HalfSplit     ? "rope"
                   : kind == RopeKind::Interleaved ? "rope_i"
                                                   : "rope_thd";
  bool thd = kind == RopeKind::Thd;
  Shape xs = thd ? Shape{b, t, h, d} : Shape{b, h, t, d};
  Shape cs = per_batch ? Shape{b, t_table, d / 2} : Shape{t_table, d / 2};
  c.name =
      fmt::format("{} {} {} {} cos/sin {}", op, dtype_name(dt), layout_kind_name(lk), xs.str(), cs.str());
  c.dtype = dt;
  c.layout = lk;
  c.vs_reference = float_tolerance(dt, 2.0);
  c.vs_cpu = device_tolerance(dt, 2);
  // cos/sin of seeded angles, rounded to dt
  auto tables = [=](uint64_t seed) {
    Values ang = random_values(cs.elem_count(), seed + 7, -3.2, 3.2), co(ang.size()), si(ang.size());
    for (size_t i = 0; i < ang.size(); ++i) co[i] = std::cos(ang[i]), si[i] = std::sin(ang[i]);
    return std::pair<Values, Values>{round_to_dtype(co, dt), round_to_dtype(si, dt)};
  };
  c.run = [=](Device dev, uint64_t seed) {
    Tensor x = make_input(inputs(dt, xs, lk, seed), xs, dt, dev, lk);
    auto [co, si] = tables(seed);
    Tensor ct = make_input(co, cs, dt, dev, LayoutKind::Contiguous);
    Tensor st = make_input(si, cs, dt, dev, LayoutKind::Contiguous);
    Tensor y = kind == RopeKind::HalfSplit     ? nn::rope(x, ct, st)
               : kind == RopeKind::Interleaved ? nn::rope_i(x, ct, st)
                                               : nn::rope_thd(x, ct, st);
    return std::vector<Tensor>{y};
  };
  c.reference = [=](uint64_t seed) {
    Values x = inputs(dt, xs, lk, seed), out(x.size());
    auto [co, si] = tables(seed);
    size_t half = d / 2;
    for (size_t bi = 0; bi < b; ++bi)
      for (size_t hi = 0; hi < h; ++hi)
        for (size_t ti = 0; ti < t; ++ti) {
          size_t row = thd ? (bi * t + ti) * h + hi : (bi * h + hi) * t + ti;
          size_t tab = (per_batch ? bi * t_table * half : 0) + ti * half;
          for (size_t i = 0; i < half; ++i) {
            size_t i0 = kind == RopeKind::Interleaved ? 2 * i : i;
            size_t i1 = kind == RopeKind::Interleaved ? 2 * i + 1 : i + half;
            double x0 = x[row * d + i0], x1 = x[row * d + i1];
            out[row * d + i0] = x0 * co[tab + i] - x1 * si[tab + i];
            out[row * d + i1] = x0 * si[tab + i] + x1 * co[tab + i];
          }
        }
    return std::vector<Values>{round_to_dtype(out, dt)};
  };
  return c;
}

std::vector<OpCase> nn_cases() {
  std::vector<OpCase> v;
  using LK = LayoutKind;
  const LK layouts[] = {LK::Contiguous, LK::Transposed, LK::Narrowed, LK::Broadcast};
  for (DType dt : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    for (bool log : {false, true}) {
      for (LK lk : layouts) v.push_back(softmax_case(dt, lk, log, {5, 3, 37}));
      v.push_back(softmax_case(dt, LK::Size1, log, {4, 1}));
      v.push_back(softmax_case(dt, LK::Empty, log, {0, 8}));
      v.push_back(softmax_case(dt, LK::Contiguous, log, {3, 1000}));
    }
    for (bool layer : {false, true}) {
      for (LK lk : layouts) v.push_back(norm_case(dt, lk, layer, true, layer, {6, 2, 40}));
      v.push_back(norm_case(dt, LK::Contiguous, layer, false, false, {7, 33}));
      if (layer) v.push_back(norm_case(dt, LK::Contiguous, true, false, true, {7, 33}));
      v.push_back(norm_case(dt, LK::Size1, layer, true, layer, {3, 1}));
      v.push_back(norm_case(dt, LK::Empty, layer, true, layer, {0, 16}));
    }
    for (RopeKind kind : {RopeKind::HalfSplit, RopeKind::Interleaved, RopeKind::Thd})
      for (bool per_batch : {false, true}) {
        for (LK lk : layouts) v.push_back(rope_case(dt, lk, kind, per_batch, 2, 3, 5, 8, 7));
        v.push_back(rope_case(dt, LK::Contiguous, kind, per_batch, 1, 4, 9, 64, 9));
        v.push_back(rope_case(dt, LK::Empty, kind, per_batch, 2, 0, 5, 8, 5));
      }
  }
  v.push_back(softmax_case(DType::F32, LK::Contiguous, false, {4096, 4096}, true));
  v.push_back(softmax_case(DType::BF16, LK::Contiguous, false, {4096, 4096}, true));
  v.push_back(norm_case(DType::F32, LK::Contiguous, false, true, false, {4096, 4096}, true));
  v.push_back(norm_case(DType::BF16, LK::Contiguous, false, true, false, {4096, 4096}, true));
  v.push_back(norm_case(DType::F32, LK::Contiguous, true, true, true, {4096, 4096}, true));
  return v;
}

const bool kRegistered = register_cases(nn_cases());

}  // namespace
}  // namespace wick::check
