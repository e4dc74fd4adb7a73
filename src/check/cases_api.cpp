// Parity cases of the composite API (the ops built in src/tensor from the backend
// families), so `wick check` runs them on every device:
//   promote    binary ops, comparisons and where_cond on every pair of different dtypes
//   scalar     tensor-scalar arithmetic and comparisons, pow, clamp, where_cond with
//              scalars, masked_fill, in every dtype
//   composite  whole-tensor reductions, mean, var, log_sum_exp, topk, softmax along dim 0,
//              matmul with 1-D operands
//   shape      eye, linspace, full_like, tril / triu, repeat, pad, expand and split (copied)
// References are float64 loops over the row-major input values as stored (after rounding to
// their dtype), written from each op's definition; elementwise semantics come from
// src/check/elementwise_ref.h. Outputs are rounded to the output dtype before comparing.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

#include "check/elementwise_ref.h"
#include "wick/check.h"

namespace wick::check {
namespace {

using Values = std::vector<double>;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr DType kFloatList[] = {DType::F16, DType::BF16, DType::F32, DType::F64};

// One input: dtype, logical shape, layout, and the range (or set) its values are drawn from.
struct In {
  DType dt;
  Shape shape;
  LayoutKind lk = LayoutKind::Contiguous;
  double lo = -2, hi = 2;
  Values set = {};
};

// The values of an input as stored, row-major (constant along dim 0 for Broadcast).
Values values_of(const In& a, uint64_t seed) {
  size_t n = a.shape.elem_count();
  size_t inner = a.lk == LayoutKind::Broadcast && n > 0 ? n / a.shape[0] : n;
  bool picks = !a.set.empty();
  Values row = random_values(inner, seed, picks ? 0.0 : a.lo, picks ? double(a.set.size()) : a.hi), v(n);
  if (picks)
    for (auto& x : row) x = a.set[std::min(size_t(x), a.set.size() - 1)];
  for (size_t i = 0; i < n; ++i) v[i] = row[i % std::max<size_t>(inner, 1)];
  return round_to_dtype(v, a.dt);
}

using Run = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
// The expected outputs (f64, row-major) from the inputs' stored values.
using Ref = std::function<std::vector<Values>(const std::vector<Values>&)>;

struct Spec {
  std::string family, name;
  DType dtype;
  LayoutKind layout;
  std::vector<In> ins;
  std::vector<DType> out_dts;  // each output is rounded to its dtype
  Run run;
  Ref ref;
  Tolerance vs_reference, vs_cpu;
};

OpCase make_case(Spec s) {
  OpCase c;
  c.family = s.family;
  c.name = s.name;
  c.dtype = s.dtype;
  c.layout = s.layout;
  c.vs_reference = s.vs_reference;
  c.vs_cpu = s.vs_cpu;
  c.run = [ins = s.ins, run = s.run](Device dev, uint64_t seed) {
    std::vector<Tensor> ts;
    for (size_t k = 0; k < ins.size(); ++k)
      ts.push_back(make_input(values_of(ins[k], seed + 7919 * k), ins[k].shape, ins[k].dt, dev, ins[k].lk));
    return run(ts);
  };
  c.reference = [s](uint64_t seed) {
    std::vector<Values> in;
    for (size_t k = 0; k < s.ins.size(); ++k) in.push_back(values_of(s.ins[k], seed + 7919 * k));
    std::vector<Values> out = s.ref(in);
    for (size_t o = 0; o < out.size(); ++o) out[o] = round_to_dtype(out[o], s.out_dts[o]);
    return out;
  };
  return c;
}

// Elementwise reference over inputs of one logical shape.
Ref map_ref(std::function<double(const Values&)> f) {
  return [f](const std::vector<Values>& in) {
    Values out(in[0].size()), e(in.size());
    for (size_t i = 0; i < out.size(); ++i) {
      for (size_t k = 0; k < in.size(); ++k) e[k] = in[k][i];
      out[i] = f(e);
    }
    return std::vector<Values>{out};
  };
}

// Float results rounded once from an exact (or correctly rounded) value: a few ulps; a GPU
// computing f16/bf16 through float agrees to a rounding flip.
Tolerance tol(DType dt, double ulps = 2) { return float_tolerance(dt, ulps); }

// Input ranges: integers in a band every integer dtype holds (so promotions are exact),
// unsigned ones non-negative; floats in [-8, 8).
In arg(DType dt, const Shape& s, LayoutKind lk) {
  if (dt == DType::U8 || dt == DType::U32) return {dt, s, lk, 0, 100};
  if (is_int(dt)) return {dt, s, lk, -100, 100};
  return {dt, s, lk, -8, 8};
}

std::string dts(DType a, DType b) { return fmt::format("{} {}", dtype_name(a), dtype_name(b)); }

const Shape kMat{33, 17};

// ---- promote ----------------------------------------------------------------------------------

void promote_cases(std::vector<OpCase>& cases) {
  for (DType a : kAllDTypes)
    for (DType b : kAllDTypes) {
      if (a == b) continue;
      const DType r = promote_types(a, b);
      for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Maximum}) {
        cases.push_back(make_case(
            {"promote",
             fmt::format("{} {} transposed op {} row-broadcast {}", binary_op_name(op), dts(a, b), kMat.str(),
                         kMat.str()),
             a,
             LayoutKind::Transposed,
             {arg(a, kMat, LayoutKind::Transposed), arg(b, kMat, LayoutKind::Broadcast)},
             {r},
             [op](const std::vector<Tensor>& t) { return std::vector<Tensor>{t[0].binary(op, t[1])}; },
             map_ref([op, r](const Values& e) { return ref::binary(op, r, e[0], e[1]); }),
             tol(r),
             Tolerance::exact_match()}));
      }
      const Values set = {-1, 0, 1, 2.5, 3};
      for (CmpOp op : {CmpOp::Lt, CmpOp::Eq, CmpOp::Ge}) {
        cases.push_back(make_case(
            {"promote",
             fmt::format("{} {} narrowed {}", cmp_op_name(op), dts(a, b), kMat.str()),
             a,
             LayoutKind::Narrowed,
             {{a, kMat, LayoutKind::Narrowed, 0, 0, set}, {b, kMat, LayoutKind::Contiguous, 0, 0, set}},
             {DType::U8},
             [op](const std::vector<Tensor>& t) { return std::vector<Tensor>{t[0].cmp(op, t[1])}; },
             map_ref([op](const Values& e) { return ref::cmp(op, e[0], e[1]); }),
             Tolerance::exact_match(),
             Tolerance::exact_match()}));
      }
      cases.push_back(make_case(
          {"promote",
           fmt::format("where cond u8 {} {}", dts(a, b), kMat.str()),
           a,
           LayoutKind::Contiguous,
           {{DType::U8, kMat, LayoutKind::Contiguous, 0, 0, {0, 1}},
            arg(a, kMat, LayoutKind::Transposed),
            arg(b, kMat, LayoutKind::Contiguous)},
           {r},
           [](const std::vector<Tensor>& t) { return std::vector<Tensor>{t[0].where_cond(t[1], t[2])}; },
           map_ref([](const Values& e) { return e[0] != 0 ? e[1] : e[2]; }),
           Tolerance::exact_match(),
           Tolerance::exact_match()}));
    }
}

// ---- scalar --------------------------------------------------------------------------------

void scalar_cases(std::vector<OpCase>& cases) {
  const LayoutKind lk = LayoutKind::Transposed;
  for (DType dt : kAllDTypes) {
    const DType fr = is_float(dt) ? dt : DType::F32;  // the dtype with a float scalar
    auto add_ref = [&](const std::string& what, DType out, std::vector<In> ins, Run run, Ref ref,
                       bool exact_on_gpu = true) {
      cases.push_back(make_case({"scalar",
                                 fmt::format("{} {} transposed {}", what, dtype_name(dt), kMat.str()),
                                 dt,
                                 lk,
                                 std::move(ins),
                                 {out},
                                 std::move(run),
                                 std::move(ref),
                                 tol(out),
                                 exact_on_gpu ? Tolerance::exact_match() : tol(out, 8)}));
    };
    auto add = [&](const std::string& what, DType out, std::vector<In> ins, Run run,
                   std::function<double(const Values&)> f, bool exact_on_gpu = true) {
      add_ref(what, out, std::move(ins), std::move(run), map_ref(std::move(f)), exact_on_gpu);
    };
    const In x = arg(dt, kMat, lk);
    auto one = [](std::function<Tensor(const Tensor&)> f) {
      return [f](const std::vector<Tensor>& t) { return std::vector<Tensor>{f(t[0])}; };
    };
    auto bin = [dt](BinaryOp op, double s, bool first) {
      return [=](const Values& e) {
        return first ? ref::binary(op, dt, s, e[0]) : ref::binary(op, dt, e[0], s);
      };
    };
    // integer scalars: the tensor's dtype
    add("t + 3", dt, {x}, one([](const Tensor& t) { return t + 3; }), bin(BinaryOp::Add, 3, false));
    add("3 - t", dt, {x}, one([](const Tensor& t) { return 3 - t; }), bin(BinaryOp::Sub, 3, true));
    add("t * 3", dt, {x}, one([](const Tensor& t) { return t * 3; }), bin(BinaryOp::Mul, 3, false));
    add("t / 3", dt, {x}, one([](const Tensor& t) { return t / 3; }), bin(BinaryOp::Div, 3, false));
    add("12 / t", dt, {x}, one([](const Tensor& t) { return 12 / t; }), bin(BinaryOp::Div, 12, true));
    // float scalars: the float dtype or f32; the scalar as that dtype holds it
    const double s = round_to_dtype({0.7}, fr)[0];
    add("t + 0.7", fr, {x}, one([](const Tensor& t) { return t + 0.7; }),
        [s](const Values& e) { return e[0] + s; });
    add("0.7 - t", fr, {x}, one([](const Tensor& t) { return 0.7 - t; }),
        [s](const Values& e) { return s - e[0]; });
    add("t * 0.7", fr, {x}, one([](const Tensor& t) { return t * 0.7; }),
        [s](const Values& e) { return e[0] * s; });
    add("t / 0.7", fr, {x}, one([](const Tensor& t) { return t / 0.7; }),
        [s](const Values& e) { return e[0] / s; });
    // comparisons: exact for integer tensors, bounds past the dtype included
    const In c{dt, kMat, lk, 0, 0, is_float(dt) ? Values{-1, 0.5, 1.5, 2, kNaN} : Values{0, 1, 2, 3}};
    const double h = is_float(dt) ? round_to_dtype({1.5}, dt)[0] : 1.5;
    add("t < 1.5", DType::U8, {c}, one([](const Tensor& t) { return t < 1.5; }),
        [h](const Values& e) { return double(e[0] < h); });
    add("1.5 <= t", DType::U8, {c}, one([](const Tensor& t) { return 1.5 <= t; }),
        [h](const Values& e) { return double(h <= e[0]); });
    add("t == 2", DType::U8, {c}, one([](const Tensor& t) { return t == 2; }),
        [](const Values& e) { return double(e[0] == 2); });
    add("t != 1.5", DType::U8, {c}, one([](const Tensor& t) { return t != 1.5; }),
        [h](const Values& e) { return double(e[0] != h); });
    add("t < 1e10", DType::U8, {c}, one([](const Tensor& t) { return t < int64_t(10000000000); }),
        [b = round_to_dtype({1e10}, is_float(dt) ? dt : DType::F64)[0]](const Values& e) {
          return double(e[0] < b);
        });
    // pow, clamp
    const In pos{dt, kMat, lk, 0, is_float(dt) ? 4.0 : 9.0};
    if (is_float(dt)) {
      add(
          "t ^ 2.5", dt, {pos}, one([](const Tensor& t) { return t.pow(2.5); }),
          [](const Values& e) { return std::pow(e[0], 2.5); }, false);
      add(
          "2 ^ t", dt, {x}, one([](const Tensor& t) { return pow(2.0, t); }),
          [](const Values& e) { return std::pow(2.0, e[0]); }, false);
    } else {
      add("t ^ 3", dt, {pos}, one([](const Tensor& t) { return t.pow(3); }),
          [dt](const Values& e) { return ref::binary(BinaryOp::Pow, dt, e[0], 3); });
    }
    add("clamp(1, 5)", dt, {x}, one([](const Tensor& t) { return t.clamp(1, 5); }),
        [](const Values& e) { return std::isnan(e[0]) ? kNaN : std::min(std::max(e[0], 1.0), 5.0); });
    add("clamp(-1.5, 2.5)", fr, {x}, one([](const Tensor& t) { return t.clamp(-1.5, 2.5); }),
        [](const Values& e) { return std::min(std::max(e[0], -1.5), 2.5); });
    // where with scalars, masked_fill
    const In cond{DType::U8, kMat, LayoutKind::Contiguous, 0, 0, {0, 1}};
    auto two = [](std::function<Tensor(const Tensor&, const Tensor&)> f) {
      return [f](const std::vector<Tensor>& t) { return std::vector<Tensor>{f(t[0], t[1])}; };
    };
    add("where(c, t, 7)", dt, {cond, x},
        two([](const Tensor& k, const Tensor& t) { return k.where_cond(t, 7); }),
        [](const Values& e) { return e[0] != 0 ? e[1] : 7.0; });
    add("where(c, 0.5, t)", fr, {cond, x},
        two([](const Tensor& k, const Tensor& t) { return k.where_cond(0.5, t); }),
        [](const Values& e) { return e[0] != 0 ? 0.5 : e[1]; });
    // a [17] mask broadcast over the rows
    add_ref(
        "masked_fill(m, 9)", dt, {x, {DType::U8, Shape{17}, LayoutKind::Contiguous, 0, 0, {0, 1}}},
        [](const std::vector<Tensor>& t) { return std::vector<Tensor>{t[0].masked_fill(t[1], 9)}; },
        [](const std::vector<Values>& in) {
          Values v = in[0];
          for (size_t i = 0; i < v.size(); ++i)
            if (in[1][i % 17] != 0) v[i] = 9;
          return std::vector<Values>{v};
        });
  }
}

// ---- composite ------------------------------------------------------------------------------

// A reduction of row-major values of dims over `red` (sorted dims), keeping them as size 1.
Values reduce_ref(const Values& v, const std::vector<size_t>& dims, const std::vector<size_t>& red,
                  const std::function<double(const Values&)>& f) {
  std::vector<size_t> out_dims = dims;
  for (size_t d : red) out_dims[d] = 1;
  size_t n_out = 1;
  for (size_t d : out_dims) n_out *= d;
  std::vector<Values> groups(n_out);
  std::vector<size_t> idx(dims.size());
  for (size_t i = 0; i < v.size(); ++i) {
    size_t rem = i, o = 0;
    for (size_t k = dims.size(); k-- > 0;) {
      idx[k] = rem % dims[k];
      rem /= dims[k];
    }
    for (size_t k = 0; k < dims.size(); ++k) o = o * out_dims[k] + (out_dims[k] == 1 ? 0 : idx[k]);
    groups[o].push_back(v[i]);
  }
  Values out;
  for (const auto& g : groups) out.push_back(f(g));
  return out;
}

double mean_of(const Values& x) { return std::accumulate(x.begin(), x.end(), 0.0) / double(x.size()); }
double var_of(const Values& x, double corr) {
  double m = mean_of(x), ss = 0;
  for (double e : x) ss += (e - m) * (e - m);
  return ss / std::max(0.0, double(x.size()) - corr);
}
double lse_of(const Values& x) {
  double m = *std::max_element(x.begin(), x.end()), s = 0;
  for (double e : x) s += std::exp(e - m);
  return m + std::log(s);
}

void composite_cases(std::vector<OpCase>& cases) {
  const Shape s{9, 17};
  for (DType dt : kFloatList) {
    for (LayoutKind lk : {LayoutKind::Contiguous, LayoutKind::Transposed, LayoutKind::Narrowed}) {
      const In x{dt, s, lk, 0.5, 4};  // positive: a mean does not cancel
      auto red = [&](const std::string& what, std::vector<int64_t> dims, Run run,
                     std::function<double(const Values&)> f, double ulps) {
        std::vector<size_t> rd;
        for (int64_t d : dims) rd.push_back(size_t(d));
        cases.push_back(
            make_case({"composite",
                       fmt::format("{} {} {} {}", what, dtype_name(dt), layout_kind_name(lk), s.str()),
                       dt,
                       lk,
                       {x},
                       {dt},
                       std::move(run),
                       [s, rd, f](const std::vector<Values>& in) {
                         return std::vector<Values>{reduce_ref(in[0], s.dims(), rd, f)};
                       },
                       tol(dt, ulps),
                       tol(dt, 4 * ulps)}));  // a device sums in another order
      };
      auto one = [](std::function<Tensor(const Tensor&)> f) {
        return [f](const std::vector<Tensor>& t) { return std::vector<Tensor>{f(t[0])}; };
      };
      red("mean dim 1", {1}, one([](const Tensor& t) { return t.mean({1}); }), mean_of, 4);
      red("mean dims 0,1 keepdim", {0, 1}, one([](const Tensor& t) {
            return t.mean({0, 1}, true);
          }),
          mean_of, 8);
      red(
          "var dim 0", {0}, one([](const Tensor& t) { return t.var({0}); }),
          [](const Values& v) { return var_of(v, 1); }, 16);
      red(
          "var all correction 0", {0, 1}, one([](const Tensor& t) {
            return t.var({0, 1}, false, 0);
          }),
          [](const Values& v) { return var_of(v, 0); }, 16);
      red("log_sum_exp dim 1", {1}, one([](const Tensor& t) { return t.log_sum_exp({1}); }), lse_of, 8);
      red("log_sum_exp dim 0", {0}, one([](const Tensor& t) { return t.log_sum_exp({0}, true); }), lse_of, 8);
    }
    // softmax / log_softmax along dim 0 (the transposed route) of a [9, 17] input
    const In x{dt, s, LayoutKind::Contiguous, -4, 4};
    for (bool log : {false, true}) {
      cases.push_back(make_case(
          {"composite",
           fmt::format("{} dim 0 {} contiguous {}", log ? "log_softmax" : "softmax", dtype_name(dt), s.str()),
           dt,
           LayoutKind::Contiguous,
           {x},
           {dt},
           [log](const std::vector<Tensor>& t) {
             return std::vector<Tensor>{log ? nn::log_softmax(t[0], 0) : nn::softmax(t[0], 0)};
           },
           [s, log](const std::vector<Values>& in) {
             Values lse = reduce_ref(in[0], s.dims(), {0}, lse_of), out(in[0].size());
             for (size_t i = 0; i < out.size(); ++i) {
               double l = in[0][i] - lse[i % s[1]];
               out[i] = log ? l : std::exp(l);
             }
             return std::vector<Values>{out};
           },
           tol(dt, 16),
           tol(dt, 16)}));
    }
    // matmul with 1-D operands: NumPy's rules; positive values, so the dot products do not cancel
    struct MV {
      const char* what;
      Shape a, b, out;
    };
    for (const MV& m :
         {MV{"mat-vec", Shape{33, 17}, Shape{17}, Shape{33}},
          MV{"vec-mat", Shape{17}, Shape{17, 9}, Shape{9}}, MV{"vec-vec", Shape{17}, Shape{17}, Shape{}},
          MV{"batched mat-vec", Shape{4, 33, 17}, Shape{17}, Shape{4, 33}}}) {
      cases.push_back(
          make_case({"composite",
                     fmt::format("matmul {} {} {} x {}", m.what, dtype_name(dt), m.a.str(), m.b.str()),
                     dt,
                     LayoutKind::Contiguous,
                     {{dt, m.a, LayoutKind::Contiguous, 0, 1}, {dt, m.b, LayoutKind::Contiguous, 0, 1}},
                     {dt},
                     [](const std::vector<Tensor>& t) { return std::vector<Tensor>{t[0].matmul(t[1])}; },
                     [m](const std::vector<Values>& in) {
                       // lhs rows of k, rhs columns of k (a 1-D rhs is one column, a 1-D lhs one row)
                       const size_t k = 17, n = m.b.rank() == 1 ? 1 : m.b[1], rows = in[0].size() / k;
                       Values out;
                       for (size_t r = 0; r < rows; ++r)
                         for (size_t j = 0; j < n; ++j) {
                           double acc = 0;
                           for (size_t p = 0; p < k; ++p) acc += in[0][r * k + p] * in[1][p * n + j];
                           out.push_back(acc);
                         }
                       return std::vector<Values>{out};
                     },
                     tol(dt, dt == DType::F32 ? 32 : 4),
                     tol(dt, dt == DType::F32 ? 32 : 4)}));
    }
  }
  // whole-tensor reductions and topk in every dtype
  for (DType dt : kAllDTypes) {
    const In x = arg(dt, s, LayoutKind::Transposed);
    auto flat = [](const std::vector<Values>& in, std::function<double(const Values&)> f) {
      return std::vector<Values>{{f(in[0])}};
    };
    auto add = [&](const std::string& what, DType out, Run run, std::function<double(const Values&)> f) {
      cases.push_back(make_case({"composite",
                                 fmt::format("{} {} transposed {}", what, dtype_name(dt), s.str()),
                                 dt,
                                 LayoutKind::Transposed,
                                 {x},
                                 {out},
                                 std::move(run),
                                 [f, flat](const std::vector<Values>& in) { return flat(in, f); },
                                 Tolerance::exact_match(),
                                 Tolerance::exact_match()}));
    };
    add(
        "max()", dt, [](const std::vector<Tensor>& t) { return std::vector<Tensor>{t[0].max()}; },
        [](const Values& v) { return *std::max_element(v.begin(), v.end()); });
    add(
        "argmin()", DType::U32,
        [](const std::vector<Tensor>& t) { return std::vector<Tensor>{t[0].argmin()}; },
        [](const Values& v) { return double(std::min_element(v.begin(), v.end()) - v.begin()); });
    add(
        "argmax()", DType::U32,
        [](const std::vector<Tensor>& t) { return std::vector<Tensor>{t[0].argmax()}; },
        [](const Values& v) { return double(std::max_element(v.begin(), v.end()) - v.begin()); });
    // topk along each dim: values and indices, the stable order (lower index first among ties)
    for (auto [dim, k, largest] : {std::tuple{1, size_t(5), true}, std::tuple{0, size_t(3), false}}) {
      cases.push_back(make_case({"composite",
                                 fmt::format("topk k {} dim {} {} {} transposed {}", k, dim,
                                             largest ? "largest" : "smallest", dtype_name(dt), s.str()),
                                 dt,
                                 LayoutKind::Transposed,
                                 {x},
                                 {dt, DType::U32},
                                 [=](const std::vector<Tensor>& t) {
                                   auto [v, i] = t[0].topk(k, dim, largest);
                                   return std::vector<Tensor>{v, i};
                                 },
                                 [=](const std::vector<Values>& in) {
                                   const Values& v = in[0];
                                   std::vector<size_t> od = s.dims();
                                   od[size_t(dim)] = k;
                                   Values vals(od[0] * od[1]), idx(vals.size());
                                   for (size_t f = 0; f < s[1 - size_t(dim)]; ++f) {
                                     std::vector<size_t> order(s[size_t(dim)]);
                                     std::iota(order.begin(), order.end(), 0);
                                     auto at = [&](size_t j) {
                                       return dim == 1 ? v[f * s[1] + j] : v[j * s[1] + f];
                                     };
                                     std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
                                       return largest ? at(a) > at(b) : at(a) < at(b);
                                     });
                                     for (size_t r = 0; r < k; ++r) {
                                       size_t o = dim == 1 ? f * k + r : r * s[1] + f;
                                       vals[o] = at(order[r]);
                                       idx[o] = double(order[r]);
                                     }
                                   }
                                   return std::vector<Values>{vals, idx};
                                 },
                                 Tolerance::exact_match(),
                                 Tolerance::exact_match()}));
    }
  }
}

// ---- shape ---------------------------------------------------------------------------------------

void shape_cases(std::vector<OpCase>& cases) {
  for (DType dt : kAllDTypes) {
    auto add = [&](const std::string& what, LayoutKind lk, std::vector<In> ins, Run run, Ref ref) {
      cases.push_back(make_case({"shape",
                                 fmt::format("{} {} {}", what, dtype_name(dt), layout_kind_name(lk)),
                                 dt,
                                 lk,
                                 std::move(ins),
                                 {dt},
                                 std::move(run),
                                 std::move(ref),
                                 Tolerance::exact_match(),
                                 Tolerance::exact_match()}));
    };
    // eye (no inputs: the device comes from a 1-element placeholder)
    const In dummy{dt, Shape{1}};
    add(
        "eye(5, 7)", LayoutKind::Contiguous, {dummy},
        [dt](const std::vector<Tensor>& t) {
          return std::vector<Tensor>{Tensor::eye(5, 7, dt, t[0].device())};
        },
        [](const std::vector<Values>&) {
          Values v(35);
          for (size_t i = 0; i < 5; ++i) v[i * 7 + i] = 1;
          return std::vector<Values>{v};
        });
    add(
        "linspace(-3, 20, 11)", LayoutKind::Contiguous, {dummy},
        [dt](const std::vector<Tensor>& t) {
          return std::vector<Tensor>{Tensor::linspace(-3, 20, 11, dt, t[0].device())};
        },
        [dt](const std::vector<Values>&) {
          Values v(11);
          for (size_t i = 0; i < 11; ++i) v[i] = i < 5 ? -3 + 2.3 * double(i) : 20 - 2.3 * double(10 - i);
          if (is_int(dt))
            for (auto& e : v) e = ref::float_to_int(dt, e);
          return std::vector<Values>{v};
        });
    add(
        "full_like(x, 5)", LayoutKind::Transposed, {arg(dt, Shape{5, 6}, LayoutKind::Transposed)},
        [](const std::vector<Tensor>& t) { return std::vector<Tensor>{Tensor::full_like(t[0], 5)}; },
        [](const std::vector<Values>&) { return std::vector<Values>{Values(30, 5.0)}; });
    // tril / triu of a batch of [5, 7] matrices
    const Shape b{2, 5, 7};
    for (int64_t k : {-1, 0, 2})
      for (bool lower : {true, false})
        add(
            fmt::format("{}({}) {}", lower ? "tril" : "triu", k, b.str()), LayoutKind::Narrowed,
            {arg(dt, b, LayoutKind::Narrowed)},
            [=](const std::vector<Tensor>& t) {
              return std::vector<Tensor>{lower ? t[0].tril(k) : t[0].triu(k)};
            },
            [=](const std::vector<Values>& in) {
              Values v = in[0];
              for (size_t i = 0; i < v.size(); ++i) {
                int64_t r = int64_t((i / 7) % 5), c = int64_t(i % 7);
                if (lower ? c - r > k : c - r < k) v[i] = 0;
              }
              return std::vector<Values>{v};
            });
    // repeat of a transposed [4, 3] view to [2, 8, 9]
    const Shape rs{4, 3};
    add(
        "repeat(2, 2, 3) of [4,3]", LayoutKind::Transposed, {arg(dt, rs, LayoutKind::Transposed)},
        [](const std::vector<Tensor>& t) {
          return std::vector<Tensor>{t[0].repeat({2, 2, 3})};
        },
        [](const std::vector<Values>& in) {
          Values v;
          for (size_t a = 0; a < 2; ++a)
            for (size_t i = 0; i < 8; ++i)
              for (size_t j = 0; j < 9; ++j) v.push_back(in[0][(i % 4) * 3 + j % 3]);
          return std::vector<Values>{v};
        });
    // pad [5, 6] by ((1, 2), (0, 3)) with 7
    add(
        "pad((1,2),(0,3), 7) of [5,6]", LayoutKind::Narrowed, {arg(dt, Shape{5, 6}, LayoutKind::Narrowed)},
        [](const std::vector<Tensor>& t) {
          return std::vector<Tensor>{t[0].pad({{1, 2}, {0, 3}}, 7)};
        },
        [](const std::vector<Values>& in) {
          Values v(8 * 9, 7.0);
          for (size_t i = 0; i < 5; ++i)
            for (size_t j = 0; j < 6; ++j) v[(i + 1) * 9 + j] = in[0][i * 6 + j];
          return std::vector<Values>{v};
        });
    // expand a [5, 1] column to [3, 5, 4], then copy; the middle piece of split(2, 1) of [5, 6]
    add(
        "expand [5,1] to [3,5,4]", LayoutKind::Broadcast, {arg(dt, Shape{5, 1}, LayoutKind::Contiguous)},
        [](const std::vector<Tensor>& t) {
          return std::vector<Tensor>{t[0].expand({3, 5, 4}).contiguous()};
        },
        [](const std::vector<Values>& in) {
          Values v;
          for (size_t a = 0; a < 3; ++a)
            for (size_t i = 0; i < 5; ++i)
              for (size_t j = 0; j < 4; ++j) v.push_back(in[0][i]);
          return std::vector<Values>{v};
        });
    add(
        "split(2, 1)[1] of [5,6]", LayoutKind::Transposed, {arg(dt, Shape{5, 6}, LayoutKind::Transposed)},
        [](const std::vector<Tensor>& t) { return std::vector<Tensor>{t[0].split(2, 1)[1].contiguous()}; },
        [](const std::vector<Values>& in) {
          Values v;
          for (size_t i = 0; i < 5; ++i)
            for (size_t j = 2; j < 4; ++j) v.push_back(in[0][i * 6 + j]);
          return std::vector<Values>{v};
        });
  }
}

std::vector<OpCase> api_cases() {
  std::vector<OpCase> cases;
  promote_cases(cases);
  scalar_cases(cases);
  composite_cases(cases);
  shape_cases(cases);
  return cases;
}

const bool kRegistered = register_cases(api_cases());

}  // namespace
}  // namespace wick::check
