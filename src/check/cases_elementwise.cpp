// Parity cases of the elementwise families: unary (20 ops), affine, powf, elu,
// binary (6 ops), cmp (6 ops), where_cond and to_dtype (every pair): every op x
// every dtype it supports x layouts {contiguous, transposed, broadcast, narrowed,
// size1, empty}, plus NumPy row/column broadcasts and 2^24-element f32 bench cases.
// References are float64 math over the row-major input values as stored
// (src/check/elementwise_ref.h), rounded to the output dtype:
//   floats within a few units in the last place; integers, comparisons, where and
//   casts exactly.
#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <limits>

#include "check/elementwise_ref.h"
#include "wick/check.h"

namespace wick::check {
namespace {

using Values = std::vector<double>;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr size_t kBenchElems = size_t(1) << 24;  // 64 MiB of f32: beyond any GPU's L2

// One input of a case: dtype, logical shape, layout and how its values are drawn.
struct Arg {
  DType dt;
  Shape shape;
  LayoutKind lk;
  double lo, hi;
  Values set;     // when non-empty, values are picked from this set (ties for comparisons)
  bool specials;  // floats: a NaN, infinities and -0 among the values
  Arg(DType dt, Shape shape, LayoutKind lk, double lo = -2, double hi = 2, Values set = {},
      bool specials = false)
      : dt(dt), shape(std::move(shape)), lk(lk), lo(lo), hi(hi), set(std::move(set)), specials(specials) {}
};

Values draw(const Arg& a, size_t n, uint64_t seed) {
  Values v = random_values(n, seed, a.set.empty() ? a.lo : 0.0, a.set.empty() ? a.hi : double(a.set.size()));
  if (!a.set.empty())
    for (auto& x : v) x = a.set[std::min(size_t(x), a.set.size() - 1)];
  if (a.specials && is_float(a.dt) && n > 4) {
    v[0] = kNaN;
    v[1] = kInf;
    v[2] = -kInf;
    v[3] = -0.0;
  }
  return round_to_dtype(v, a.dt);
}

// The values of an input as stored, row-major (constant along dim 0 for Broadcast).
Values values_of(const Arg& a, uint64_t seed) {
  size_t n = a.shape.elem_count();
  if (a.lk != LayoutKind::Broadcast) return draw(a, n, seed);
  size_t inner = n / a.shape[0];
  Values row = draw(a, inner, seed), v(n);
  for (size_t i = 0; i < n; ++i) v[i] = row[i % inner];
  return v;
}

// The values of an input of shape `in` as seen at each element of `out` (NumPy rules).
Values broadcast_to(const Values& v, const Shape& in, const Shape& out) {
  size_t n = out.elem_count(), extra = out.rank() - in.rank();
  Values r(n);
  std::vector<size_t> idx(out.rank());
  for (size_t i = 0; i < n; ++i) {
    size_t rem = i;
    for (size_t k = out.rank(); k-- > 0;) {
      idx[k] = rem % out[k];
      rem /= out[k];
    }
    size_t src = 0;
    for (size_t k = 0; k < in.rank(); ++k) src = src * in[k] + (in[k] == 1 ? 0 : idx[k + extra]);
    r[i] = v[src];
  }
  return r;
}

using Op = std::function<Tensor(const std::vector<Tensor>&)>;
using Ref = std::function<double(const Values&)>;  // one output element from the inputs' elements

struct Spec {
  std::string family, name;
  DType dtype;   // the case's dtype (of the first input)
  DType out_dt;  // output dtype
  LayoutKind layout;
  std::vector<Arg> args;
  Shape out;
  Op op;
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
  auto build = [args = s.args](Device dev, uint64_t seed) {
    std::vector<Tensor> ts;
    for (size_t k = 0; k < args.size(); ++k)
      ts.push_back(
          make_input(values_of(args[k], seed + 7919 * k), args[k].shape, args[k].dt, dev, args[k].lk));
    return ts;
  };
  c.run = [build, op = s.op](Device dev, uint64_t seed) { return std::vector<Tensor>{op(build(dev, seed))}; };
  c.reference = [s](uint64_t seed) {
    std::vector<Values> in;
    for (size_t k = 0; k < s.args.size(); ++k)
      in.push_back(broadcast_to(values_of(s.args[k], seed + 7919 * k), s.args[k].shape, s.out));
    Values out(s.out.elem_count()), e(s.args.size());
    for (size_t i = 0; i < out.size(); ++i) {
      for (size_t k = 0; k < in.size(); ++k) e[k] = in[k][i];
      out[i] = s.ref(e);
    }
    return std::vector<Values>{round_to_dtype(out, s.out_dt)};
  };
  size_t n = s.out.elem_count();
  if (n >= kBenchElems) {
    double bytes = double(n * dtype_size(s.out_dt));
    for (const Arg& a : s.args) bytes += double(a.shape.elem_count() * dtype_size(a.dt));
    c.bytes = bytes;
    c.prepare = [build, op = s.op](Device dev, uint64_t seed) {
      std::vector<Tensor> ts = build(dev, seed);
      return std::function<std::vector<Tensor>()>([ts, op] { return std::vector<Tensor>{op(ts)}; });
    };
  }
  return c;
}

// The logical shape each layout kind is exercised at.
Shape shape_for(LayoutKind lk) {
  switch (lk) {
    case LayoutKind::Broadcast:
      return Shape{8, 33};
    case LayoutKind::Size1:
      return Shape{1, 1};
    case LayoutKind::Empty:
      return Shape{0, 17};
    default:
      return Shape{33, 17};
  }
}
constexpr LayoutKind kLayouts[] = {LayoutKind::Contiguous, LayoutKind::Transposed, LayoutKind::Broadcast,
                                   LayoutKind::Narrowed,   LayoutKind::Size1,      LayoutKind::Empty};

// Float results: a few ulps against float64 math; GPU vs CPU allows libm differences.
// The NMSE bound is the element bound itself (not its square): ops whose formula
// cancels (gelu, gelu_erf for negative x) lose relative accuracy near zero, and a
// one-element output's NMSE is that element's squared relative error.
Tolerance ulp_tol(DType dt, double ulps) {
  Tolerance t = float_tolerance(dt, ulps);
  if (!t.exact) t.nmse = t.atol;
  return t;
}
Tolerance ref_tol(DType dt, double ulps = 4) { return ulp_tol(dt, ulps); }
Tolerance gpu_tol(DType dt) { return ulp_tol(dt, dt == DType::F16 || dt == DType::BF16 ? 2 : 8); }

std::string title(const std::string& op, DType dt, LayoutKind lk, const Shape& s) {
  return fmt::format("{} {} {} {}", op, dtype_name(dt), layout_kind_name(lk), s.str());
}

// Integer inputs over most of each dtype's range (so arithmetic wraps).
Arg int_arg(DType dt, const Shape& s, LayoutKind lk) {
  switch (dt) {
    case DType::U8:
      return {dt, s, lk, 0, 256};
    case DType::U32:
      return {dt, s, lk, 0, 4.2e9};
    case DType::I32:
      return {dt, s, lk, -2.1e9, 2.1e9};
    default:
      return {dt, s, lk, -1e12, 1e12};
  }
}

// ---- unary, affine, powf, elu --------------------------------------------------------

void unary_cases(std::vector<OpCase>& cases) {
  for (size_t o = 0; o < kNumUnaryOps; ++o) {
    UnaryOp op = UnaryOp(o);
    std::string name(unary_op_name(op));
    for (DType dt : kAllDTypes) {
      if (is_int(dt) && !unary_op_allows_int(op)) continue;
      for (LayoutKind lk : kLayouts) {
        Shape s = shape_for(lk);
        Arg a = is_float(dt) ? Arg{dt, s, lk, ref::unary_domain(op).lo, ref::unary_domain(op).hi}
                             : int_arg(dt, s, lk);
        Ref r = is_float(dt) ? Ref([op](const Values& e) { return ref::unary(op, e[0]); })
                             : Ref([op, dt](const Values& e) { return ref::int_unary(op, dt, e[0]); });
        cases.push_back(make_case({"unary",
                                   title(name, dt, lk, s),
                                   dt,
                                   dt,
                                   lk,
                                   {a},
                                   s,
                                   [op](const std::vector<Tensor>& t) { return t[0].unary(op); },
                                   r,
                                   ref_tol(dt, 8),
                                   gpu_tol(dt)}));
      }
    }
  }
  // NaN, infinities and -0 through every float op
  for (size_t o = 0; o < kNumUnaryOps; ++o) {
    UnaryOp op = UnaryOp(o);
    for (DType dt : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
      Arg a{dt, Shape{40}, LayoutKind::Contiguous, -3, 3, {}, true};
      cases.push_back(make_case({"unary",
                                 title(std::string(unary_op_name(op)) + " specials", dt, a.lk, a.shape),
                                 dt,
                                 dt,
                                 a.lk,
                                 {a},
                                 a.shape,
                                 [op](const std::vector<Tensor>& t) { return t[0].unary(op); },
                                 [op](const Values& e) { return ref::unary(op, e[0]); },
                                 ref_tol(dt, 8),
                                 gpu_tol(dt)}));
    }
  }
}

void affine_cases(std::vector<OpCase>& cases) {
  for (DType dt : kAllDTypes) {
    double mul = is_float(dt) ? 1.5 : 2.5, add = is_float(dt) ? -2.25 : -3.0;
    for (LayoutKind lk : kLayouts) {
      Shape s = shape_for(lk);
      Arg a = is_float(dt) ? Arg{dt, s, lk, -10, 10} : int_arg(dt, s, lk);
      cases.push_back(make_case({"affine",
                                 title(fmt::format("affine({},{})", mul, add), dt, lk, s),
                                 dt,
                                 dt,
                                 lk,
                                 {a},
                                 s,
                                 [=](const std::vector<Tensor>& t) { return t[0].affine(mul, add); },
                                 [=](const Values& e) { return ref::affine(dt, e[0], mul, add); },
                                 ref_tol(dt, 2),
                                 gpu_tol(dt)}));
    }
  }
  for (DType dt : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    for (LayoutKind lk : kLayouts) {
      Shape s = shape_for(lk);
      cases.push_back(make_case({"affine",
                                 title("powf(2.5)", dt, lk, s),
                                 dt,
                                 dt,
                                 lk,
                                 {{dt, s, lk, 0.1, 3}},
                                 s,
                                 [](const std::vector<Tensor>& t) { return t[0].powf(2.5); },
                                 [](const Values& e) { return std::pow(e[0], 2.5); },
                                 ref_tol(dt, 8),
                                 gpu_tol(dt)}));
      cases.push_back(make_case({"affine",
                                 title("elu(1.5)", dt, lk, s),
                                 dt,
                                 dt,
                                 lk,
                                 {{dt, s, lk, -4, 4}},
                                 s,
                                 [](const std::vector<Tensor>& t) { return t[0].elu(1.5); },
                                 [](const Values& e) { return ref::elu(e[0], 1.5); },
                                 ref_tol(dt, 8),
                                 gpu_tol(dt)}));
    }
  }
}

// ---- binary, cmp -----------------------------------------------------------------------

// (lhs, rhs, out) layouts of a binary-shaped case: both inputs in `lk`, then NumPy
// broadcasts of a row and of a column (marked Broadcast).
struct BinaryLayout {
  std::string what;
  LayoutKind lk;
  Shape lhs, rhs, out;
  LayoutKind lhs_lk, rhs_lk;
};
std::vector<BinaryLayout> binary_layouts() {
  std::vector<BinaryLayout> v;
  for (LayoutKind lk : kLayouts) {
    Shape s = shape_for(lk);
    v.push_back({layout_kind_name(lk), lk, s, s, s, lk, lk});
  }
  v.push_back({"row [17]", LayoutKind::Broadcast, Shape{33, 17}, Shape{17}, Shape{33, 17},
               LayoutKind::Transposed, LayoutKind::Contiguous});
  v.push_back({"column [33,1] x row [1,17]", LayoutKind::Broadcast, Shape{33, 1}, Shape{1, 17}, Shape{33, 17},
               LayoutKind::Contiguous, LayoutKind::Contiguous});
  return v;
}

void binary_cases(std::vector<OpCase>& cases) {
  for (size_t o = 0; o < kNumBinaryOps; ++o) {
    BinaryOp op = BinaryOp(o);
    for (DType dt : kAllDTypes) {
      for (const auto& bl : binary_layouts()) {
        auto arg = [&](const Shape& s, LayoutKind lk) {
          Arg a = is_float(dt) ? Arg{dt, s, lk, -8, 8} : int_arg(dt, s, lk);
          if (is_int(dt) && op == BinaryOp::Div) {  // small values: many zero and -1 divisors
            a.lo = a.lo < 0 ? -5 : 0;
            a.hi = 5;
          }
          return a;
        };
        std::string name = fmt::format("{} {} {} {} op {}", binary_op_name(op), dtype_name(dt), bl.what,
                                       bl.lhs.str(), bl.rhs.str());
        cases.push_back(make_case({"binary",
                                   name,
                                   dt,
                                   dt,
                                   bl.lk,
                                   {arg(bl.lhs, bl.lhs_lk), arg(bl.rhs, bl.rhs_lk)},
                                   bl.out,
                                   [op](const std::vector<Tensor>& t) { return t[0].binary(op, t[1]); },
                                   [op, dt](const Values& e) { return ref::binary(op, dt, e[0], e[1]); },
                                   ref_tol(dt, 1),
                                   gpu_tol(dt)}));
      }
    }
  }
  // maximum / minimum with NaN and infinities on both sides
  for (BinaryOp op : {BinaryOp::Maximum, BinaryOp::Minimum, BinaryOp::Div}) {
    for (DType dt : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
      Arg a{dt, Shape{48}, LayoutKind::Contiguous, -2, 2, {kNaN, kInf, -kInf, 0, 1, -1, 0.5}};
      cases.push_back(make_case({"binary",
                                 title(std::string(binary_op_name(op)) + " specials", dt, a.lk, a.shape),
                                 dt,
                                 dt,
                                 a.lk,
                                 {a, a},
                                 a.shape,
                                 [op](const std::vector<Tensor>& t) { return t[0].binary(op, t[1]); },
                                 [op, dt](const Values& e) { return ref::binary(op, dt, e[0], e[1]); },
                                 ref_tol(dt, 1),
                                 gpu_tol(dt)}));
    }
  }
}

void cmp_cases(std::vector<OpCase>& cases) {
  for (size_t o = 0; o < kNumCmpOps; ++o) {
    CmpOp op = CmpOp(o);
    for (DType dt : kAllDTypes) {
      Values set = is_float(dt) ? Values{-1.5, -0.5, -0.0, 0, 0.5, 1.5, kNaN, kInf} : Values{0, 1, 2, 3, 200};
      for (const auto& bl : binary_layouts()) {
        std::string name = fmt::format("{} {} {} {} op {}", cmp_op_name(op), dtype_name(dt), bl.what,
                                       bl.lhs.str(), bl.rhs.str());
        cases.push_back(make_case({"cmp",
                                   name,
                                   dt,
                                   DType::U8,
                                   bl.lk,
                                   {{dt, bl.lhs, bl.lhs_lk, 0, 0, set}, {dt, bl.rhs, bl.rhs_lk, 0, 0, set}},
                                   bl.out,
                                   [op](const std::vector<Tensor>& t) { return t[0].cmp(op, t[1]); },
                                   [op](const Values& e) { return ref::cmp(op, e[0], e[1]); },
                                   Tolerance::exact_match(),
                                   Tolerance::exact_match()}));
      }
    }
  }
}

// ---- where_cond ----------------------------------------------------------------------------

void where_cases(std::vector<OpCase>& cases) {
  const DType conds[] = {DType::U8, DType::U32, DType::I32, DType::I64};
  for (DType cdt : conds) {
    Values cset = cdt == DType::U8 || cdt == DType::U32 ? Values{0, 1, 255} : Values{0, 1, -1};
    for (DType dt : kAllDTypes) {
      auto val = [&](const Shape& s, LayoutKind lk) {
        Arg a = is_float(dt) ? Arg{dt, s, lk, -8, 8} : int_arg(dt, s, lk);
        a.specials = true;
        return a;
      };
      std::vector<std::pair<std::string, std::vector<Arg>>> layouts;
      for (LayoutKind lk : kLayouts) {
        Shape s = shape_for(lk);
        layouts.push_back({layout_kind_name(lk), {{cdt, s, lk, 0, 0, cset}, val(s, lk), val(s, lk)}});
      }
      layouts.push_back({"cond [33,1] t row [17] f transposed",
                         {{cdt, Shape{33, 1}, LayoutKind::Contiguous, 0, 0, cset},
                          val(Shape{17}, LayoutKind::Contiguous),
                          val(Shape{33, 17}, LayoutKind::Transposed)}});
      for (const auto& [what, args] : layouts) {
        LayoutKind lk = args[0].shape.rank() == args[1].shape.rank() ? args[0].lk : LayoutKind::Broadcast;
        Shape out = args[2].shape;
        std::string name =
            fmt::format("where cond {} {} {} {}", dtype_name(cdt), dtype_name(dt), what, out.str());
        cases.push_back(make_case({"where", name, dt, dt, lk, args, out,
                                   [](const std::vector<Tensor>& t) { return t[0].where_cond(t[1], t[2]); },
                                   [](const Values& e) { return e[0] != 0 ? e[1] : e[2]; },
                                   Tolerance::exact_match(), Tolerance::exact_match()}));
      }
    }
  }
}

// ---- to_dtype -------------------------------------------------------------------------------

void cast_cases(std::vector<OpCase>& cases) {
  for (DType from : kAllDTypes) {
    for (DType to : kAllDTypes) {
      for (LayoutKind lk : kLayouts) {
        Shape s = shape_for(lk);
        Arg a = is_float(from) ? Arg{from, s, lk, -70000, 70000, {}, true} : int_arg(from, s, lk);
        std::string name = title(fmt::format("cast {}->{}", dtype_name(from), dtype_name(to)), from, lk, s);
        cases.push_back(make_case({"cast",
                                   name,
                                   from,
                                   to,
                                   lk,
                                   {a},
                                   s,
                                   [to](const std::vector<Tensor>& t) { return t[0].to_dtype(to); },
                                   [from, to](const Values& e) { return ref::cast(e[0], from, to); },
                                   Tolerance::exact_match(),
                                   Tolerance::exact_match()}));
      }
    }
  }
  // fractions near rounding boundaries of the half formats
  for (DType from : {DType::F32, DType::F64}) {
    for (DType to : {DType::F16, DType::BF16}) {
      Arg a{from, Shape{1000}, LayoutKind::Contiguous, -1e-3, 1e-3, {}, true};
      cases.push_back(make_case(
          {"cast",
           title(fmt::format("cast small {}->{}", dtype_name(from), dtype_name(to)), from, a.lk, a.shape),
           from,
           to,
           a.lk,
           {a},
           a.shape,
           [to](const std::vector<Tensor>& t) { return t[0].to_dtype(to); },
           [from, to](const Values& e) { return ref::cast(e[0], from, to); },
           Tolerance::exact_match(),
           Tolerance::exact_match()}));
    }
  }
}

// ---- bench-sized cases (2^24 contiguous elements) --------------------------------------------

void bench_cases(std::vector<OpCase>& cases) {
  const Shape big{4096, 4096};
  const DType f = DType::F32;
  const LayoutKind c = LayoutKind::Contiguous;
  cases.push_back(make_case({"affine",
                             title("affine(1.5,-2.25)", f, c, big),
                             f,
                             f,
                             c,
                             {{f, big, c, -10, 10}},
                             big,
                             [](const std::vector<Tensor>& t) { return t[0].affine(1.5, -2.25); },
                             [](const Values& e) { return e[0] * 1.5 - 2.25; },
                             ref_tol(f, 2),
                             gpu_tol(f)}));
  cases.push_back(make_case({"unary",
                             title("exp", f, c, big),
                             f,
                             f,
                             c,
                             {{f, big, c, -4, 4}},
                             big,
                             [](const std::vector<Tensor>& t) { return t[0].exp(); },
                             [](const Values& e) { return std::exp(e[0]); },
                             ref_tol(f, 8),
                             gpu_tol(f)}));
  for (DType dt : {DType::F32, DType::BF16}) {
    cases.push_back(make_case({"binary",
                               title("add", dt, c, big),
                               dt,
                               dt,
                               c,
                               {{dt, big, c}, {dt, big, c}},
                               big,
                               [](const std::vector<Tensor>& t) { return t[0].add(t[1]); },
                               [](const Values& e) { return e[0] + e[1]; },
                               ref_tol(dt, 1),
                               gpu_tol(dt)}));
  }
  cases.push_back(make_case({"where",
                             title("where cond u8", f, c, big),
                             f,
                             f,
                             c,
                             {{DType::U8, big, c, 0, 0, {0, 1}}, {f, big, c}, {f, big, c}},
                             big,
                             [](const std::vector<Tensor>& t) { return t[0].where_cond(t[1], t[2]); },
                             [](const Values& e) { return e[0] != 0 ? e[1] : e[2]; },
                             Tolerance::exact_match(),
                             Tolerance::exact_match()}));
  for (auto cast_pair : {std::pair{DType::F32, DType::F16}, std::pair{DType::F16, DType::F32},
                         std::pair{DType::F32, DType::BF16}}) {
    const DType from = cast_pair.first, to = cast_pair.second;  // named: clang 14 captures no bindings
    cases.push_back(
        make_case({"cast",
                   title(fmt::format("cast {}->{}", dtype_name(from), dtype_name(to)), from, c, big),
                   from,
                   to,
                   c,
                   {{from, big, c, -100, 100}},
                   big,
                   [to](const std::vector<Tensor>& t) { return t[0].to_dtype(to); },
                   [from, to](const Values& e) { return ref::cast(e[0], from, to); },
                   Tolerance::exact_match(),
                   Tolerance::exact_match()}));
  }
}

std::vector<OpCase> elementwise_cases() {
  std::vector<OpCase> cases;
  unary_cases(cases);
  affine_cases(cases);
  binary_cases(cases);
  cmp_cases(cases);
  where_cases(cases);
  cast_cases(cases);
  bench_cases(cases);
  return cases;
}

const bool kRegistered = register_cases(elementwise_cases());

}  // namespace
}  // namespace wick::check
