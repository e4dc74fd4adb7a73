// Parity cases of the reduce family (sum, min, max, argmin, argmax over dim sets; cumsum) and of the
// sort family (argsort, sort): every op x dtype x layout, NaN placement, and bench-sized cases.
// References are host loops in float64 over the row-major input values (after rounding to the dtype):
//   sum      exact in f64, then rounded to the dtype (floats) or wrapped modulo 2^bits (integers)
//   min/max  NaN if the reduction holds one
//   arg*     first index of the extreme value (row-major over the reduced dims), first NaN if any
//   argsort  stable, NaN last in both orders
// Sums carry a bound for f32 accumulation (f16/bf16/f32) over the reduction length; the rest is exact.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "check/reduce_refs.h"
#include "wick/check.h"

namespace wick::check {
namespace {

using Values = std::vector<double>;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Values inputs(DType dt, const Shape& shape, LayoutKind lk, uint64_t seed) {
  return refs::seeded_inputs(dt, shape, lk, seed);
}

// Floats carry NaNs (and infinities) at seeded positions, for the NaN cases.
Values with_nans(Values v, uint64_t seed) {
  Values pick = random_values(v.size(), seed ^ 0x5eedull, 0.0, 1.0);
  for (size_t i = 0; i < v.size(); ++i) {
    if (pick[i] < 0.03)
      v[i] = kNaN;
    else if (pick[i] < 0.05)
      v[i] = pick[i] < 0.04 ? INFINITY : -INFINITY;
  }
  return v;
}

// x as the dtype holds it: floats rounded once, integers wrapped modulo 2^bits.
double to_dtype(DType dt, double x) {
  if (is_float(dt)) return round_to_dtype({x}, dt)[0];
  auto wrap = [](double y, double mod) {
    double r = std::fmod(y, mod);
    return r < 0 ? r + mod : r;
  };
  switch (dt) {
    case DType::U8:
      return wrap(x, 256.0);
    case DType::U32:
      return wrap(x, 4294967296.0);
    case DType::I32: {
      double r = wrap(x, 4294967296.0);
      return r >= 2147483648.0 ? r - 4294967296.0 : r;
    }
    default:
      return x;  // i64 sums of the seeded values stay far below 2^53
  }
}

// The reference of a reduction: refs::reduce with sums as the dtype holds them.
Values ref_reduce(ReduceOp op, const Values& v, const std::vector<size_t>& dims,
                  const std::vector<size_t>& red, DType dt) {
  Values out = refs::reduce(op, v, dims, red);
  if (op == ReduceOp::Sum) {
    for (auto& x : out) x = to_dtype(dt, x);
  }
  return out;
}

double bytes_of(size_t n, DType dt) { return double(n) * double(dtype_size(dt)); }

std::string dims_str(const std::vector<int64_t>& d) {
  std::string s;
  for (int64_t x : d) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

OpCase reduce_case(ReduceOp op, DType dt, LayoutKind lk, const Shape& shape, std::vector<int64_t> dims,
                   bool nans = false, bool bench = false) {
  std::vector<size_t> red;
  for (int64_t d : dims) red.push_back(size_t(d < 0 ? d + int64_t(shape.rank()) : d));
  std::sort(red.begin(), red.end());
  size_t len = 1;
  for (size_t d : red) len *= shape[d];
  bool keepdim = dims.size() > 1;
  auto in = [=](uint64_t seed) {
    Values v = inputs(dt, shape, lk, seed);
    return nans ? with_nans(v, seed) : v;
  };
  OpCase c;
  c.family = "reduce";
  c.name = fmt::format("{} {} {} {} dims {}{}{}", reduce_op_name(op), dtype_name(dt), layout_kind_name(lk),
                       shape.str(), dims_str(dims), keepdim ? " keepdim" : "", nans ? " with NaN/inf" : "");
  c.dtype = dt;
  c.layout = lk;
  // Float inputs lie in [-2, 2): |term| <= 2.
  c.vs_reference = op == ReduceOp::Sum ? refs::sum_tolerance(dt, len, 2.0) : Tolerance::exact_match();
  c.vs_cpu = op == ReduceOp::Sum ? refs::sum_tolerance(dt, len, 2.0, 2) : Tolerance::exact_match();
  c.run = [=](Device dev, uint64_t seed) {
    Tensor x = make_input(in(seed), shape, dt, dev, lk);
    return std::vector<Tensor>{x.reduce(op, dims, keepdim)};
  };
  c.reference = [=](uint64_t seed) {
    return std::vector<Values>{ref_reduce(op, in(seed), shape.dims(), red, dt)};
  };
  if (bench) {
    bool arg = op == ReduceOp::ArgMin || op == ReduceOp::ArgMax;
    c.bytes = bytes_of(shape.elem_count(), dt) + bytes_of(shape.elem_count() / len, arg ? DType::U32 : dt);
    c.prepare = [=](Device dev, uint64_t seed) {
      Tensor x = make_input(in(seed), shape, dt, dev, lk);
      return std::function<std::vector<Tensor>()>(
          [=] { return std::vector<Tensor>{x.reduce(op, dims, keepdim)}; });
    };
  }
  return c;
}

OpCase cumsum_case(DType dt, LayoutKind lk, const Shape& shape, size_t dim) {
  OpCase c;
  c.family = "reduce";
  c.name = fmt::format("cumsum {} {} {} dim {}", dtype_name(dt), layout_kind_name(lk), shape.str(), dim);
  c.dtype = dt;
  c.layout = lk;
  c.vs_reference = refs::sum_tolerance(dt, shape[dim], 2.0);
  c.vs_cpu = refs::sum_tolerance(dt, shape[dim], 2.0, 2);
  c.run = [=](Device dev, uint64_t seed) {
    return std::vector<Tensor>{
        make_input(inputs(dt, shape, lk, seed), shape, dt, dev, lk).cumsum(int64_t(dim))};
  };
  c.reference = [=](uint64_t seed) {
    return std::vector<Values>{refs::cumsum(inputs(dt, shape, lk, seed), shape.dims(), dim,
                                            [dt](double x) { return to_dtype(dt, x); })};
  };
  return c;
}

// argsort (one output) or sort (values, indices) along the last dim.
OpCase sort_case(DType dt, LayoutKind lk, const Shape& shape, bool asc, bool values_too, bool nans = false,
                 bool bench = false) {
  size_t n = shape[shape.rank() - 1];
  auto in = [=](uint64_t seed) {
    Values v = inputs(dt, shape, lk, seed);
    return nans ? with_nans(v, seed) : v;
  };
  OpCase c;
  c.family = "sort";
  c.name = fmt::format("{} {} {} {} {}{}", values_too ? "sort" : "argsort", asc ? "asc" : "desc",
                       dtype_name(dt), layout_kind_name(lk), shape.str(), nans ? " with NaN/inf" : "");
  c.dtype = dt;
  c.layout = lk;
  c.vs_reference = c.vs_cpu = Tolerance::exact_match();
  c.run = [=](Device dev, uint64_t seed) {
    Tensor x = make_input(in(seed), shape, dt, dev, lk);
    if (!values_too) return std::vector<Tensor>{x.argsort(asc)};
    auto [vals, idx] = x.sort(asc);
    return std::vector<Tensor>{vals, idx};
  };
  c.reference = [=](uint64_t seed) {
    Values v = in(seed);
    auto idx = refs::argsort(v, n, asc);
    Values iv(idx.begin(), idx.end()), vals(idx.size());
    for (size_t i = 0; i < idx.size(); ++i) vals[i] = v[(i / n) * n + idx[i]];
    return values_too ? std::vector<Values>{vals, iv} : std::vector<Values>{iv};
  };
  if (bench) {
    c.bytes = bytes_of(shape.elem_count(), dt) + bytes_of(shape.elem_count(), DType::U32);
    c.prepare = [=](Device dev, uint64_t seed) {
      Tensor x = make_input(in(seed), shape, dt, dev, lk);
      return std::function<std::vector<Tensor>()>([=] { return std::vector<Tensor>{x.argsort(asc)}; });
    };
  }
  return c;
}

constexpr LayoutKind kLayouts[] = {LayoutKind::Contiguous, LayoutKind::Transposed, LayoutKind::Broadcast,
                                   LayoutKind::Narrowed,   LayoutKind::Size1,      LayoutKind::Empty};

// The logical shape used with each layout kind.
Shape shape_for(LayoutKind lk) {
  switch (lk) {
    case LayoutKind::Size1:
      return Shape{5, 1, 33};
    case LayoutKind::Empty:
      return Shape{5, 0, 33};
    default:
      return Shape{5, 17, 33};
  }
}

std::vector<OpCase> reduce_cases() {
  std::vector<OpCase> cs;
  const std::vector<std::vector<int64_t>> sum_dims = {{-1}, {1}, {0}, {0, 2}, {1, 2}, {0, 1, 2}};
  const std::vector<std::vector<int64_t>> ext_dims = {{2}, {0}, {0, 2}};
  const ReduceOp ext_ops[] = {ReduceOp::Min, ReduceOp::Max, ReduceOp::ArgMin, ReduceOp::ArgMax};
  for (DType dt : kAllDTypes) {
    for (LayoutKind lk : kLayouts) {
      Shape s = shape_for(lk);
      for (const auto& d : sum_dims) cs.push_back(reduce_case(ReduceOp::Sum, dt, lk, s, d));
      for (ReduceOp op : ext_ops) {
        for (const auto& d : ext_dims)
          cs.push_back(reduce_case(op, dt, lk, s, d));  // never an empty reduction
      }
      for (size_t dim : {1, 2}) cs.push_back(cumsum_case(dt, lk, s, dim));
    }
  }
  // NaN and infinities: propagate through min/max and sum, first NaN for arg*.
  for (DType dt : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max, ReduceOp::ArgMin, ReduceOp::ArgMax}) {
      for (const auto& d : ext_dims)
        cs.push_back(reduce_case(op, dt, LayoutKind::Contiguous, Shape{5, 17, 33}, d, true));
    }
  }
  // Long rows (split into chunks on the CPU, several blocks per row on a GPU) and a wide column sum.
  for (DType dt : {DType::F32, DType::BF16, DType::I32}) {
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::ArgMin}) {
      cs.push_back(reduce_case(op, dt, LayoutKind::Contiguous, Shape{3, 70001}, {1}));
      cs.push_back(reduce_case(op, dt, LayoutKind::Contiguous, Shape{3000, 130}, {0}));
    }
  }
  // Bench: reductions over the last dim of a 32 MiB (f32) input.
  for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::ArgMax}) {
      cs.push_back(reduce_case(op, dt, LayoutKind::Contiguous, Shape{2048, 4096}, {-1}, false, true));
    }
  }
  cs.push_back(
      reduce_case(ReduceOp::Sum, DType::F32, LayoutKind::Contiguous, Shape{4096, 2048}, {0}, false, true));
  cs.push_back(reduce_case(ReduceOp::Sum, DType::F32, LayoutKind::Contiguous, Shape{size_t(1) << 23}, {0},
                           false, true));
  return cs;
}

std::vector<OpCase> sort_cases() {
  std::vector<OpCase> cs;
  for (DType dt : kAllDTypes) {
    for (LayoutKind lk : kLayouts) {
      Shape s = shape_for(lk);
      for (bool asc : {true, false}) cs.push_back(sort_case(dt, lk, s, asc, false));
      cs.push_back(sort_case(dt, lk, s, false, true));
    }
    cs.push_back(sort_case(dt, LayoutKind::Contiguous, Shape{4, 3000}, true, true));  // rows over 1024 long
  }
  for (DType dt : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    for (bool asc : {true, false})
      cs.push_back(sort_case(dt, LayoutKind::Contiguous, Shape{6, 100}, asc, true, true));
  }
  for (DType dt : {DType::F32, DType::BF16}) {
    cs.push_back(sort_case(dt, LayoutKind::Contiguous, Shape{1024, 4096}, true, false, false, true));
  }
  return cs;
}

const bool kRegistered = register_cases(reduce_cases()) && register_cases(sort_cases());

}  // namespace
}  // namespace wick::check
