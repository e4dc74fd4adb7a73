// Parity cases of the matmul, conv, pool and upsample families: every op x float
// dtype x layout (integer dtypes too for pooling and upsampling), with float64
// references written here as direct loops (the definitions, not im2col/GEMM), and
// bench-sized cases (matmul 1024^3 in f32/f16/bf16, a ResNet-like conv2d).
//
// Bounds: a GEMM-like output (matmul, convolutions) of K products of inputs in
// [-1, 1] allows K * (the backend's accumulation roundoff: f32 for f16/bf16/f32, f64
// for f64) absolutely plus a few output ulps relatively. Pooling and upsampling are
// exact for integers and max, a few ulps otherwise.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>

#include "wick/check.h"

namespace wick::check {
namespace {

using Values = std::vector<double>;

// Seeded inputs for `shape` laid out as `lk` (constant along dim 0 for Broadcast), rounded to dt.
Values inputs(DType dt, const Shape& shape, LayoutKind lk, uint64_t seed, double lo = -1.0, double hi = 1.0) {
  size_t n = shape.elem_count();
  if (lk != LayoutKind::Broadcast || n == 0) return round_to_dtype(random_values(n, seed, lo, hi), dt);
  size_t inner = n / shape[0];
  Values row = random_values(inner, seed, lo, hi), v(n);
  for (size_t i = 0; i < n; ++i) v[i] = row[i % inner];
  return round_to_dtype(v, dt);
}

// K products of values in [-1, 1], accumulated in f32 (f64 for f64), rounded once to dt
// (unit roundoffs: half the machine epsilon).
Tolerance gemm_tolerance(DType dt, size_t k, double slack = 1.0) {
  double acc = float_epsilon(dt == DType::F64 ? DType::F64 : DType::F32) / 2;
  double u = float_epsilon(dt) / 2;
  double sub = dt == DType::F16 ? 0x1.0p-24 : 0.0;  // f16 subnormal step near zero
  double kk = double(k + 2);
  // NMSE: the output rounding plus the worst accumulation error relative to a cancelling sum.
  return Tolerance::close(slack * (2.0 * kk * acc + sub), slack * 4.0 * u,
                          slack * (64.0 * u * u + 4.0 * kk * kk * acc * acc));
}

double bytes_of(size_t n, DType dt) { return double(n) * double(dtype_size(dt)); }

std::vector<size_t> tail(const Shape& s, size_t keep_last) {
  return std::vector<size_t>(s.dims().begin(), s.dims().end() - ptrdiff_t(keep_last));
}

// Row-major linear index into `dims` of the broadcast position `idx` (in out dims, right-aligned).
size_t bcast_linear(const std::vector<size_t>& idx, const std::vector<size_t>& dims) {
  size_t off = 0, extra = idx.size() - dims.size();
  for (size_t k = 0; k < dims.size(); ++k) off = off * dims[k] + (dims[k] == 1 ? 0 : idx[k + extra]);
  return off;
}

// --- matmul --------------------------------------------------------------------

// lhs (.., m, k) x rhs (.., k, n) with NumPy batch broadcasting, in f64 (i-p-j loop order).
Values ref_matmul(const Values& a, const Shape& as, const Values& b, const Shape& bs) {
  size_t m = as[as.rank() - 2], k = as[as.rank() - 1], n = bs[bs.rank() - 1];
  std::vector<size_t> ab = tail(as, 2), bb = tail(bs, 2), ob(std::max(ab.size(), bb.size()));
  for (size_t i = 0; i < ob.size(); ++i) {
    size_t da = i + ab.size() >= ob.size() ? ab[i + ab.size() - ob.size()] : 1;
    size_t db = i + bb.size() >= ob.size() ? bb[i + bb.size() - ob.size()] : 1;
    ob[i] = std::max(da, db);
  }
  size_t nb = 1;
  for (size_t d : ob) nb *= d;
  Values out(nb * m * n, 0.0);
  std::vector<size_t> idx(ob.size());
  for (size_t bi = 0; bi < nb; ++bi) {
    for (size_t r = bi, q = ob.size(); q-- > 0;) idx[q] = r % ob[q], r /= ob[q];
    const double* pa = a.data() + bcast_linear(idx, ab) * m * k;
    const double* pb = b.data() + bcast_linear(idx, bb) * k * n;
    double* po = out.data() + bi * m * n;
    for (size_t i = 0; i < m; ++i)
      for (size_t p = 0; p < k; ++p) {
        double av = pa[i * k + p];
        for (size_t j = 0; j < n; ++j) po[i * n + j] += av * pb[p * n + j];
      }
  }
  return out;
}

OpCase matmul_case(DType dt, LayoutKind lk, Shape as, Shape bs, bool bench = false) {
  OpCase c;
  c.family = "matmul";
  c.name = fmt::format("matmul {} {} {}x{}", dtype_name(dt), layout_kind_name(lk), as.str(), bs.str());
  c.dtype = dt;
  c.layout = lk;
  size_t k = as[as.rank() - 1];
  c.vs_reference = gemm_tolerance(dt, k);
  c.vs_cpu = gemm_tolerance(dt, k, 2.0);
  c.run = [=](Device dev, uint64_t seed) {
    Tensor a = make_input(inputs(dt, as, lk, seed), as, dt, dev, lk);
    Tensor b = make_input(inputs(dt, bs, lk, seed + 1), bs, dt, dev, lk);
    return std::vector<Tensor>{a.matmul(b)};
  };
  c.reference = [=](uint64_t seed) {
    return std::vector<Values>{ref_matmul(inputs(dt, as, lk, seed), as, inputs(dt, bs, lk, seed + 1), bs)};
  };
  if (bench) {
    size_t m = as[as.rank() - 2], n = bs[bs.rank() - 1];
    c.flops = 2.0 * double(m) * double(n) * double(k);
    c.bytes = bytes_of(as.elem_count() + bs.elem_count() + m * n, dt);
    c.prepare = [=](Device dev, uint64_t seed) {
      Tensor a = make_input(inputs(dt, as, lk, seed), as, dt, dev, lk);
      Tensor b = make_input(inputs(dt, bs, lk, seed + 1), bs, dt, dev, lk);
      return std::function<std::vector<Tensor>()>([a, b] { return std::vector<Tensor>{a.matmul(b)}; });
    };
  }
  return c;
}

std::vector<OpCase> matmul_cases() {
  std::vector<OpCase> v;
  const DType floats[] = {DType::F16, DType::BF16, DType::F32, DType::F64};
  using LK = LayoutKind;
  for (DType dt : floats) {
    for (LK lk : {LK::Contiguous, LK::Transposed, LK::Narrowed}) {
      v.push_back(matmul_case(dt, lk, {17, 33}, {33, 9}));
      v.push_back(matmul_case(dt, lk, {2, 3, 7, 12}, {2, 3, 12, 5}));
    }
    // stride-0 batch (and, for rank 2, stride-0 rows that BLAS cannot read in place)
    v.push_back(matmul_case(dt, LK::Broadcast, {4, 6, 10}, {4, 10, 7}));
    v.push_back(matmul_case(dt, LK::Broadcast, {5, 8}, {8, 3}));
    // batch broadcasting: (3,1,m,k) x (2,k,n), and a rank-2 rhs shared by every batch
    v.push_back(matmul_case(dt, LK::Contiguous, {3, 1, 5, 6}, {2, 6, 4}));
    v.push_back(matmul_case(dt, LK::Transposed, {2, 4, 9, 11}, {11, 13}));
    v.push_back(matmul_case(dt, LK::Size1, {1, 65}, {65, 1}));
    v.push_back(matmul_case(dt, LK::Size1, {1, 1}, {1, 1}));
    v.push_back(matmul_case(dt, LK::Empty, {0, 5}, {5, 3}));
    v.push_back(matmul_case(dt, LK::Empty, {4, 0}, {0, 3}));
  }
  for (DType dt : {DType::F32, DType::F16, DType::BF16})
    v.push_back(matmul_case(dt, LK::Contiguous, {1024, 1024}, {1024, 1024}, true));
  v.push_back(
      matmul_case(DType::F32, LK::Contiguous, {32, 128, 64}, {32, 64, 128}, true));  // attention-like batch
  return v;
}

// --- convolutions ----------------------------------------------------------------

struct ConvSpec {
  std::array<size_t, 4> x;  // (B, C, H, W); H = 1 for 1-D ops
  std::array<size_t, 4> w;  // conv: (Co, C/groups, KH, KW); transposed: (C, Co/groups, KH, KW)
  size_t pad = 0, stride = 1, dil = 1, groups = 1, out_pad = 0;
  bool one_d = false, transposed = false;
};

Shape x_shape(const ConvSpec& s) {
  return s.one_d ? Shape{s.x[0], s.x[1], s.x[3]} : Shape{s.x[0], s.x[1], s.x[2], s.x[3]};
}
Shape w_shape(const ConvSpec& s) {
  return s.one_d ? Shape{s.w[0], s.w[1], s.w[3]} : Shape{s.w[0], s.w[1], s.w[2], s.w[3]};
}

// Along one axis: output length. 1-D specs have no padding along H.
size_t out_len(const ConvSpec& s, size_t in, size_t k, bool h_axis) {
  size_t pad = s.one_d && h_axis ? 0 : s.pad, op = s.one_d && h_axis ? 0 : s.out_pad;
  if (s.transposed)
    return (in - 1) * s.stride * (s.one_d && h_axis ? 0 : 1) + s.dil * (k - 1) + op + 1 - 2 * pad;
  size_t stride = s.one_d && h_axis ? 1 : s.stride;
  return (in + 2 * pad - s.dil * (k - 1) - 1) / stride + 1;
}

// The convolution by its definition: every (input, kernel) pair adds x * w at its output position.
Values ref_conv(const ConvSpec& s, const Values& x, const Values& w) {
  auto [b, c, h, wi] = s.x;
  size_t kh = s.w[2], kw = s.w[3];
  size_t cig = c / s.groups;
  size_t co = s.transposed ? s.w[1] * s.groups : s.w[0], cog = co / s.groups;
  size_t oh = out_len(s, h, kh, true), ow = out_len(s, wi, kw, false);
  size_t pad_h = s.one_d ? 0 : s.pad, stride_h = s.one_d ? 1 : s.stride;
  Values out(b * co * oh * ow, 0.0);
  for (size_t bi = 0; bi < b; ++bi)
    for (size_t ci = 0; ci < c; ++ci)
      for (size_t oc = 0; oc < cog; ++oc) {
        size_t o = (ci / cig) * cog + oc;
        // conv: kernel row o, channel ci % cig; transposed: kernel (ci, oc)
        const double* kern =
            s.transposed ? &w[(ci * cog + oc) * kh * kw] : &w[(o * cig + ci % cig) * kh * kw];
        for (size_t i = 0; i < kh; ++i)
          for (size_t j = 0; j < kw; ++j) {
            double kv = kern[i * kw + j];
            if (s.transposed) {
              for (size_t y = 0; y < h; ++y)
                for (size_t xx = 0; xx < wi; ++xx) {
                  long oy = long(y * stride_h + i * s.dil) - long(pad_h);
                  long ox = long(xx * s.stride + j * s.dil) - long(s.pad);
                  if (oy < 0 || ox < 0 || oy >= long(oh) || ox >= long(ow)) continue;
                  out[((bi * co + o) * oh + size_t(oy)) * ow + size_t(ox)] +=
                      x[((bi * c + ci) * h + y) * wi + xx] * kv;
                }
            } else {
              for (size_t y = 0; y < oh; ++y)
                for (size_t xx = 0; xx < ow; ++xx) {
                  long iy = long(y * stride_h + i * s.dil) - long(pad_h);
                  long ix = long(xx * s.stride + j * s.dil) - long(s.pad);
                  if (iy < 0 || ix < 0 || iy >= long(h) || ix >= long(wi)) continue;
                  out[((bi * co + o) * oh + y) * ow + xx] +=
                      x[((bi * c + ci) * h + size_t(iy)) * wi + size_t(ix)] * kv;
                }
            }
          }
      }
  return out;
}

Tensor run_conv(const ConvSpec& s, const Tensor& x, const Tensor& w) {
  if (s.one_d)
    return s.transposed ? x.conv_transpose1d(w, s.pad, s.out_pad, s.stride, s.dil, s.groups)
                        : x.conv1d(w, s.pad, s.stride, s.dil, s.groups);
  return s.transposed ? x.conv_transpose2d(w, s.pad, s.out_pad, s.stride, s.dil)
                      : x.conv2d(w, s.pad, s.stride, s.dil, s.groups);
}

// The layout applies to the input; Transposed also transposes the kernel's last two dims.
OpCase conv_case(DType dt, LayoutKind lk, ConvSpec s, bool bench = false) {
  OpCase c;
  c.family = "conv";
  const char* op = s.one_d ? (s.transposed ? "conv_transpose1d" : "conv1d")
                           : (s.transposed ? "conv_transpose2d" : "conv2d");
  Shape xs = x_shape(s), ws = w_shape(s);
  c.name = fmt::format("{} {} {} x {} k {} pad {} stride {} dil {} groups {} out_pad {}", op, dtype_name(dt),
                       layout_kind_name(lk), xs.str(), ws.str(), s.pad, s.stride, s.dil, s.groups, s.out_pad);
  c.dtype = dt;
  c.layout = lk;
  size_t terms = (s.transposed ? s.w[0] / s.groups : s.w[1]) * s.w[2] * s.w[3];
  c.vs_reference = gemm_tolerance(dt, terms);
  c.vs_cpu = gemm_tolerance(dt, terms, 2.0);
  LayoutKind wk = lk == LayoutKind::Transposed ? lk : LayoutKind::Contiguous;
  auto build = [=](Device dev, uint64_t seed) {
    Tensor x = make_input(inputs(dt, xs, lk, seed), xs, dt, dev, lk);
    Tensor w = make_input(inputs(dt, ws, wk, seed + 1), ws, dt, dev, wk);
    return std::pair<Tensor, Tensor>{x, w};
  };
  c.run = [=](Device dev, uint64_t seed) {
    auto [x, w] = build(dev, seed);
    return std::vector<Tensor>{run_conv(s, x, w)};
  };
  c.reference = [=](uint64_t seed) {
    return std::vector<Values>{ref_conv(s, inputs(dt, xs, lk, seed), inputs(dt, ws, wk, seed + 1))};
  };
  if (bench) {
    size_t oh = out_len(s, s.x[2], s.w[2], true), ow = out_len(s, s.x[3], s.w[3], false);
    size_t co = s.transposed ? s.w[1] * s.groups : s.w[0];
    c.flops = 2.0 * double(s.x[0] * co * oh * ow) * double(terms);
    c.bytes = bytes_of(xs.elem_count() + ws.elem_count() + s.x[0] * co * oh * ow, dt);
    c.prepare = [=](Device dev, uint64_t seed) {
      // Named tensors, not a structured binding: clang 14 cannot capture one.
      const auto built = build(dev, seed);
      const Tensor x = built.first, w = built.second;
      return std::function<std::vector<Tensor>()>([=] { return std::vector<Tensor>{run_conv(s, x, w)}; });
    };
  }
  return c;
}

std::vector<OpCase> conv_cases() {
  std::vector<OpCase> v;
  using LK = LayoutKind;
  auto c1 = [](std::array<size_t, 3> x, std::array<size_t, 3> w, size_t pad, size_t stride, size_t dil,
               size_t groups, bool tr = false, size_t op = 0) {
    ConvSpec s{{x[0], x[1], 1, x[2]}, {w[0], w[1], 1, w[2]}, pad, stride, dil, groups, op, true, tr};
    return s;
  };
  auto c2 = [](std::array<size_t, 4> x, std::array<size_t, 4> w, size_t pad, size_t stride, size_t dil,
               size_t groups, bool tr = false, size_t op = 0) {
    ConvSpec s{x, w, pad, stride, dil, groups, op, false, tr};
    return s;
  };
  const ConvSpec specs[] = {
      c1({2, 4, 13}, {6, 4, 3}, 1, 1, 1, 1),
      c1({1, 6, 17}, {4, 3, 4}, 2, 3, 2, 2),
      c2({2, 3, 9, 11}, {5, 3, 3, 3}, 1, 1, 1, 1),
      c2({1, 4, 10, 7}, {6, 2, 3, 2}, 2, 2, 2, 2),
      c2({2, 6, 6, 6}, {6, 1, 3, 3}, 1, 1, 1, 6),  // depthwise
      c1({2, 3, 7}, {3, 4, 3}, 0, 1, 1, 1, true),
      c1({1, 4, 6}, {4, 2, 4}, 1, 2, 1, 2, true, 1),
      c2({2, 3, 5, 4}, {3, 4, 3, 3}, 1, 2, 1, 1, true, 1),
      c2({1, 2, 4, 6}, {2, 3, 2, 3}, 2, 3, 2, 1, true, 1),
  };
  for (DType dt : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    for (const ConvSpec& s : specs)
      for (LK lk : {LK::Contiguous, LK::Transposed, LK::Narrowed}) v.push_back(conv_case(dt, lk, s));
    ConvSpec bspec = c2({3, 2, 6, 5}, {4, 2, 3, 3}, 1, 1, 1, 1);
    v.push_back(conv_case(dt, LK::Broadcast, bspec));
    v.push_back(conv_case(dt, LK::Empty, c2({0, 2, 6, 5}, {4, 2, 3, 3}, 1, 1, 1, 1)));
    v.push_back(conv_case(dt, LK::Size1, c2({1, 1, 1, 1}, {1, 1, 1, 1}, 0, 1, 1, 1)));
  }
  // ResNet-like 3x3 layer
  v.push_back(conv_case(DType::F32, LK::Contiguous, c2({4, 64, 56, 56}, {64, 64, 3, 3}, 1, 1, 1, 1), true));
  v.push_back(conv_case(DType::F16, LK::Contiguous, c2({4, 64, 56, 56}, {64, 64, 3, 3}, 1, 1, 1, 1), true));
  return v;
}

// --- pooling ---------------------------------------------------------------------

Values pool_inputs(DType dt, const Shape& s, LayoutKind lk, uint64_t seed) {
  double hi = dt == DType::U8 ? 256.0 : is_float(dt) ? 1.0 : 1000.0;
  double lo = dt == DType::U8 || dt == DType::U32 ? 0.0 : is_float(dt) ? -1.0 : -1000.0;
  return inputs(dt, s, lk, seed, lo, hi);
}

OpCase pool_case(DType dt, LayoutKind lk, bool avg, Shape xs, std::array<size_t, 2> k,
                 std::array<size_t, 2> st) {
  OpCase c;
  c.family = "pool";
  c.name = fmt::format("{} {} {} {} k [{},{}] stride [{},{}]", avg ? "avg_pool2d" : "max_pool2d",
                       dtype_name(dt), layout_kind_name(lk), xs.str(), k[0], k[1], st[0], st[1]);
  c.dtype = dt;
  c.layout = lk;
  bool exact = !avg || !is_float(dt);
  c.vs_reference = exact ? Tolerance::exact_match() : float_tolerance(dt, 2.0);
  c.vs_cpu = exact ? Tolerance::exact_match() : float_tolerance(dt, 4.0);
  c.run = [=](Device dev, uint64_t seed) {
    Tensor x = make_input(pool_inputs(dt, xs, lk, seed), xs, dt, dev, lk);
    return std::vector<Tensor>{avg ? x.avg_pool2d(k, st) : x.max_pool2d(k, st)};
  };
  c.reference = [=](uint64_t seed) {
    Values x = pool_inputs(dt, xs, lk, seed), out;
    size_t planes = xs[0] * xs[1], h = xs[2], w = xs[3];
    size_t oh = (h - k[0]) / st[0] + 1, ow = (w - k[1]) / st[1] + 1;
    for (size_t p = 0; p < planes; ++p)
      for (size_t y = 0; y < oh; ++y)
        for (size_t xx = 0; xx < ow; ++xx) {
          double acc = avg ? 0.0 : -std::numeric_limits<double>::infinity();
          for (size_t i = 0; i < k[0]; ++i)
            for (size_t j = 0; j < k[1]; ++j) {
              double e = x[(p * h + y * st[0] + i) * w + xx * st[1] + j];
              acc = avg ? acc + e : std::max(acc, e);
            }
          // integer average: truncation toward zero
          if (avg) acc = is_float(dt) ? acc / double(k[0] * k[1]) : std::trunc(acc / double(k[0] * k[1]));
          out.push_back(acc);
        }
    return std::vector<Values>{round_to_dtype(out, dt)};
  };
  return c;
}

std::vector<OpCase> pool_cases() {
  std::vector<OpCase> v;
  using LK = LayoutKind;
  for (DType dt : kAllDTypes)
    for (bool avg : {false, true}) {
      for (LK lk : {LK::Contiguous, LK::Transposed, LK::Narrowed, LK::Broadcast})
        v.push_back(pool_case(dt, lk, avg, {2, 3, 9, 10}, {3, 2}, {2, 3}));
      v.push_back(pool_case(dt, LK::Contiguous, avg, {1, 2, 8, 8}, {2, 2}, {2, 2}));
      v.push_back(pool_case(dt, LK::Size1, avg, {1, 1, 1, 1}, {1, 1}, {1, 1}));
      v.push_back(pool_case(dt, LK::Empty, avg, {0, 3, 4, 4}, {2, 2}, {1, 1}));
    }
  return v;
}

// --- upsampling ------------------------------------------------------------------

enum class Up { Nearest1d, Nearest2d, Bilinear, BilinearAlign };

// PyTorch's linear taps along one axis (area_pixel_compute_scale / source index); a given
// scale factor sf steps the source by 1 / sf.
void taps(size_t in, size_t out, bool ac, size_t i, size_t& i0, size_t& i1, double& l1,
          std::optional<double> sf) {
  double scale = ac   ? (out > 1 ? double(in - 1) / double(out - 1) : 0.0)
                 : sf ? 1.0 / *sf
                      : double(in) / double(out);
  double src = ac ? scale * double(i) : std::max(scale * (double(i) + 0.5) - 0.5, 0.0);
  i0 = std::min(size_t(std::floor(src)), in - 1);
  i1 = std::min(i0 + 1, in - 1);
  l1 = src - double(i0);
}

OpCase upsample_case(DType dt, LayoutKind lk, Up up, Shape xs, size_t oh, size_t ow,
                     std::optional<double> sh = std::nullopt, std::optional<double> sw = std::nullopt) {
  OpCase c;
  c.family = "upsample";
  const char* names[] = {"upsample_nearest1d", "upsample_nearest2d", "upsample_bilinear2d",
                         "upsample_bilinear2d align_corners"};
  c.name = fmt::format("{} {} {} {} -> [{},{}]{}", names[int(up)], dtype_name(dt), layout_kind_name(lk),
                       xs.str(), oh, ow, sh ? fmt::format(" scales {},{}", *sh, *sw) : "");
  c.dtype = dt;
  c.layout = lk;
  bool nearest = up == Up::Nearest1d || up == Up::Nearest2d;
  c.vs_reference = nearest || !is_float(dt) ? Tolerance::exact_match() : float_tolerance(dt, 2.0);
  c.vs_cpu = nearest        ? Tolerance::exact_match()
             : is_float(dt) ? float_tolerance(dt, 4.0)
                            : Tolerance::close(1, 0);
  c.run = [=](Device dev, uint64_t seed) {
    Tensor x = make_input(pool_inputs(dt, xs, lk, seed), xs, dt, dev, lk);
    switch (up) {
      case Up::Nearest1d:
        return std::vector<Tensor>{x.upsample_nearest1d(ow)};
      case Up::Nearest2d:
        return std::vector<Tensor>{x.upsample_nearest2d(oh, ow)};
      default:
        return std::vector<Tensor>{x.upsample_bilinear2d(oh, ow, up == Up::BilinearAlign, sh, sw)};
    }
  };
  c.reference = [=](uint64_t seed) {
    Values x = pool_inputs(dt, xs, lk, seed), out;
    bool one_d = up == Up::Nearest1d;
    size_t planes = xs[0] * xs[1], h = one_d ? 1 : xs[2], w = xs[xs.rank() - 1];
    for (size_t p = 0; p < planes; ++p)
      for (size_t y = 0; y < oh; ++y)
        for (size_t xx = 0; xx < ow; ++xx) {
          auto at = [&](size_t r, size_t q) { return x[(p * h + r) * w + q]; };
          if (nearest) {
            out.push_back(at(y * h / oh, xx * w / ow));  // floor(dst * in / out)
            continue;
          }
          size_t y0, y1, x0, x1;
          double ly, lx;
          taps(h, oh, up == Up::BilinearAlign, y, y0, y1, ly, sh);
          taps(w, ow, up == Up::BilinearAlign, xx, x0, x1, lx, sw);
          double v = (1 - ly) * ((1 - lx) * at(y0, x0) + lx * at(y0, x1)) +
                     ly * ((1 - lx) * at(y1, x0) + lx * at(y1, x1));
          out.push_back(is_float(dt) ? v : std::round(v));  // integers round half away from zero
        }
    return std::vector<Values>{round_to_dtype(out, dt)};
  };
  return c;
}

std::vector<OpCase> upsample_cases() {
  std::vector<OpCase> v;
  using LK = LayoutKind;
  for (DType dt : kAllDTypes) {
    for (LK lk : {LK::Contiguous, LK::Transposed, LK::Narrowed, LK::Broadcast}) {
      v.push_back(upsample_case(dt, lk, Up::Nearest1d, {2, 3, 7}, 1, 17));
      v.push_back(upsample_case(dt, lk, Up::Nearest2d, {2, 3, 5, 7}, 11, 4));
    }
    v.push_back(upsample_case(dt, LK::Size1, Up::Nearest2d, {1, 1, 1, 1}, 3, 2));
    v.push_back(upsample_case(dt, LK::Empty, Up::Nearest1d, {0, 2, 4}, 1, 6));
  }
  // Bilinear: every float dtype, and u8 (rounded) for image-like data.
  for (DType dt : {DType::F16, DType::BF16, DType::F32, DType::F64, DType::U8}) {
    for (Up up : {Up::Bilinear, Up::BilinearAlign}) {
      for (LK lk : {LK::Contiguous, LK::Transposed, LK::Narrowed, LK::Broadcast}) {
        v.push_back(upsample_case(dt, lk, up, {2, 3, 5, 6}, 9, 13));  // up
        v.push_back(upsample_case(dt, lk, up, {2, 2, 9, 8}, 4, 3));   // down
      }
      // interpolate(scale_factor=s): floor(in * s) outputs, sources stepped by 1 / s
      v.push_back(upsample_case(dt, LK::Transposed, up, {2, 3, 5, 6}, 9, 13, 1.9, 2.3));
      v.push_back(upsample_case(dt, LK::Contiguous, up, {2, 2, 9, 8}, 4, 3, 0.5, 0.45));
      v.push_back(upsample_case(dt, LK::Size1, up, {1, 1, 1, 1}, 2, 3));
      v.push_back(upsample_case(dt, LK::Empty, up, {0, 1, 3, 3}, 5, 5));
    }
  }
  return v;
}

const bool kRegistered = register_cases(matmul_cases()) && register_cases(conv_cases()) &&
                         register_cases(pool_cases()) && register_cases(upsample_cases());

}  // namespace
}  // namespace wick::check
