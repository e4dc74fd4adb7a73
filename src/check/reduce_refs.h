// Float64 host references of the reduce, sort and indexing families, shared by their unit tests
// (tests/test_reduce.cpp, test_sort.cpp, test_indexing.cpp) and parity cases (cases_reduce.cpp,
// cases_indexing.cpp). Plain loops over row-major values; no wick op runs here.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <vector>

#include "wick/check.h"
#include "wick/ops.h"

namespace wick::refs {

using Values = std::vector<double>;

// The bound of a float sum of `len` terms of magnitude <= `mag`: f32 (f64) accumulation error on top of
// one rounding to the dtype; `sides` = 2 when two accumulating implementations are compared.
inline check::Tolerance sum_tolerance(DType dt, size_t len, double mag, double sides = 1) {
  if (!is_float(dt)) return check::Tolerance::exact_match();
  const double acc_eps = check::float_epsilon(dt == DType::F64 ? DType::F64 : DType::F32);
  return check::Tolerance::close(sides * 4 * acc_eps * double(len) * mag, sides * check::float_epsilon(dt));
}

// Seeded parity inputs: [-2, 2) for floats; integer ranges whose sums (and sums of a few thousand of
// them) stay exact in f64.
inline Values seeded_values(DType dt, size_t n, uint64_t seed) {
  switch (dt) {
    case DType::U8:
      return check::round_to_dtype(check::random_values(n, seed, 0.0, 256.0), dt);
    case DType::U32:
      return check::round_to_dtype(check::random_values(n, seed, 0.0, 1.0e6), dt);
    case DType::I32:
      return check::round_to_dtype(check::random_values(n, seed, -1.0e6, 1.0e6), dt);
    case DType::I64:
      return check::round_to_dtype(check::random_values(n, seed, -1.0e12, 1.0e12), dt);
    default:
      return check::round_to_dtype(check::random_values(n, seed, -2.0, 2.0), dt);
  }
}

// Seeded inputs for layout `lk` of `shape`: constant along dim 0 for Broadcast (what make_input needs).
inline Values seeded_inputs(DType dt, const Shape& shape, check::LayoutKind lk, uint64_t seed) {
  if (lk != check::LayoutKind::Broadcast) return seeded_values(dt, shape.elem_count(), seed);
  size_t inner = shape.elem_count() / shape[0];
  Values row = seeded_values(dt, inner, seed), v(shape.elem_count());
  for (size_t i = 0; i < v.size(); ++i) v[i] = row[i % inner];
  return v;
}

// In host ids lists: stands for the ids dtype's max value (Candle's "skip" sentinel).
inline constexpr int64_t kSkipId = -1;

// Coordinates of row-major index i in dims, and back.
inline std::vector<size_t> coords(size_t i, const std::vector<size_t>& dims) {
  std::vector<size_t> c(dims.size());
  for (size_t k = dims.size(); k-- > 0;) {
    c[k] = i % dims[k];
    i /= dims[k];
  }
  return c;
}
inline size_t flat(const std::vector<size_t>& c, const std::vector<size_t>& dims) {
  size_t i = 0;
  for (size_t k = 0; k < dims.size(); ++k) i = i * dims[k] + c[k];
  return i;
}

// A ReduceOp missing from the switch below is an error: an op added to wick/op_table.h
// needs its reference here.
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch"
// The keepdim reduction of `v` (dims `dims`) over the sorted dims `red`. Each output visits its
// elements in row-major order of the reduced dims, so "first" is the first one visited:
//   Sum      exact f64 sum (the caller rounds or wraps to the dtype)
//   Min/Max  NaN if the reduction holds one
//   Arg*     index (row-major over the reduced dims) of the first extreme value, or of the first NaN
inline Values reduce(ReduceOp op, const Values& v, const std::vector<size_t>& dims,
                     const std::vector<size_t>& red) {
  std::vector<bool> is_red(dims.size(), false);
  for (size_t d : red) is_red[d] = true;
  size_t n_out = 1;
  for (size_t k = 0; k < dims.size(); ++k) n_out *= is_red[k] ? 1 : dims[k];
  Values acc(n_out, 0.0), best(n_out, 0.0);
  std::vector<size_t> idx(n_out, 0);
  std::vector<char> seen(n_out, 0), nan(n_out, 0);
  bool want_max = op == ReduceOp::Max || op == ReduceOp::ArgMax;
  for (size_t i = 0; i < v.size(); ++i) {
    size_t rem = i, o = 0, o_mul = 1, r = 0, r_mul = 1;
    for (size_t k = dims.size(); k-- > 0;) {
      size_t c = rem % dims[k];
      rem /= dims[k];
      if (is_red[k]) {
        r += c * r_mul;
        r_mul *= dims[k];
      } else {
        o += c * o_mul;
        o_mul *= dims[k];
      }
    }
    acc[o] += v[i];
    if (nan[o]) continue;
    if (std::isnan(v[i])) {
      nan[o] = 1;
      idx[o] = r;
    } else if (!seen[o] || (want_max ? v[i] > best[o] : v[i] < best[o])) {
      best[o] = v[i];
      idx[o] = r;
      seen[o] = 1;
    }
  }
  Values out(n_out);
  for (size_t o = 0; o < n_out; ++o) {
    switch (op) {
      case ReduceOp::Sum:
        out[o] = acc[o];
        break;
      case ReduceOp::Min:
      case ReduceOp::Max:
        out[o] = nan[o] ? std::numeric_limits<double>::quiet_NaN() : best[o];
        break;
      case ReduceOp::ArgMin:
      case ReduceOp::ArgMax:
        out[o] = double(idx[o]);
        break;
    }
  }
  return out;
}
#pragma GCC diagnostic pop

// Inclusive running sums along `dim`, each passed through `round` (to the dtype) as it is stored.
inline Values cumsum(const Values& v, const std::vector<size_t>& dims, size_t dim,
                     const std::function<double(double)>& round) {
  size_t inner = 1, outer = 1;
  for (size_t k = dim + 1; k < dims.size(); ++k) inner *= dims[k];
  for (size_t k = 0; k < dim; ++k) outer *= dims[k];
  Values out(v.size());
  for (size_t o = 0; o < outer; ++o) {
    for (size_t i = 0; i < inner; ++i) {
      double acc = 0;
      for (size_t j = 0; j < dims[dim]; ++j) {
        size_t p = (o * dims[dim] + j) * inner + i;
        acc += v[p];
        out[p] = round(acc);
      }
    }
  }
  return out;
}

// Per row of n: a stable sort of indices by value, NaN after every number in both orders.
inline std::vector<uint32_t> argsort(const Values& v, size_t n, bool asc) {
  std::vector<uint32_t> out;
  for (size_t r = 0; n && r < v.size() / n; ++r) {
    std::vector<uint32_t> idx(n);
    std::iota(idx.begin(), idx.end(), 0u);
    const double* row = v.data() + r * n;
    std::stable_sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) {
      if (std::isnan(row[a])) return false;
      if (std::isnan(row[b])) return true;
      return asc ? row[a] < row[b] : row[a] > row[b];
    });
    out.insert(out.end(), idx.begin(), idx.end());
  }
  return out;
}

// out[.., j, ..] = v[.., ids[j], ..] along d (0 for a skipped id).
inline Values index_select(const Values& v, const std::vector<size_t>& dims, size_t d,
                           const std::vector<int64_t>& ids) {
  std::vector<size_t> od = dims;
  od[d] = ids.size();
  size_t n = 1;
  for (size_t x : od) n *= x;
  Values out(n, 0.0);
  for (size_t p = 0; p < n; ++p) {
    auto c = coords(p, od);
    if (ids[c[d]] == kSkipId) continue;
    c[d] = size_t(ids[c[d]]);
    out[p] = v[flat(c, dims)];
  }
  return out;
}

// out[p] = v[p with coordinate d replaced by ids[p]] (0 for a skipped id); out dims = ids_dims.
inline Values gather(const Values& v, const std::vector<size_t>& dims, size_t d,
                     const std::vector<int64_t>& ids, const std::vector<size_t>& ids_dims) {
  Values out(ids.size(), 0.0);
  for (size_t p = 0; p < ids.size(); ++p) {
    if (ids[p] == kSkipId) continue;
    auto c = coords(p, ids_dims);
    c[d] = size_t(ids[p]);
    out[p] = v[flat(c, dims)];
  }
  return out;
}

// dst[.., ids[p], ..] = src[p], or = add(dst, src[p]) when `add` is given; p in row-major order of
// src (so the last duplicate wins a set, and adds happen in that order).
inline Values scatter(Values dst, const std::vector<size_t>& dims, size_t d, const std::vector<int64_t>& ids,
                      const Values& src, const std::vector<size_t>& src_dims,
                      const std::function<double(double, double)>& add = {}) {
  for (size_t p = 0; p < src.size(); ++p) {
    if (ids[p] == kSkipId) continue;
    auto c = coords(p, src_dims);
    c[d] = size_t(ids[p]);
    double& o = dst[flat(c, dims)];
    o = add ? add(o, src[p]) : src[p];
  }
  return dst;
}

// dst[.., ids[j], ..] = add(dst, src[.., j, ..]) for every j, in row-major order of src.
inline Values index_add(Values dst, const std::vector<size_t>& dims, size_t d,
                        const std::vector<int64_t>& ids, const Values& src,
                        const std::vector<size_t>& src_dims,
                        const std::function<double(double, double)>& add) {
  for (size_t p = 0; p < src.size(); ++p) {
    auto c = coords(p, src_dims);
    int64_t id = ids[c[d]];
    if (id == kSkipId) continue;
    c[d] = size_t(id);
    double& o = dst[flat(c, dims)];
    o = add(o, src[p]);
  }
  return dst;
}

}  // namespace wick::refs
