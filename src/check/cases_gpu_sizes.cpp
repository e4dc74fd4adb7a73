// Parity cases at the sizes where GPU kernels change path: rows of 1, 31, 33 and
// 1000 elements (under, around and over a wave), rows longer than a block's
// register cache (20000 > 16384 columns for the fused nn ops), argsort rows past
// the 4096-element shared-memory bitonic (the global-memory merge), and odd GEMM
// shapes. References are float64 host loops (refs:: for reduce, cumsum, argsort).
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "check/reduce_refs.h"
#include "wick/check.h"

namespace wick::check {
namespace {

using Values = std::vector<double>;

Values in_values(DType dt, size_t n, uint64_t seed, double lo = -2.0, double hi = 2.0) {
  if (!is_float(dt)) return refs::seeded_values(dt, n, seed);
  return round_to_dtype(random_values(n, seed, lo, hi), dt);
}

// NaN and infinities at seeded positions (floats only).
Values with_specials(Values v, DType dt, uint64_t seed) {
  if (!is_float(dt)) return v;
  Values pick = random_values(v.size(), seed ^ 0xabcdull, 0.0, 1.0);
  for (size_t i = 0; i < v.size(); ++i) {
    if (pick[i] < 0.02)
      v[i] = std::numeric_limits<double>::quiet_NaN();
    else if (pick[i] < 0.03)
      v[i] = pick[i] < 0.025 ? INFINITY : -INFINITY;
  }
  return v;
}

double wrap_to(DType dt, double x) {
  if (is_float(dt)) return round_to_dtype({x}, dt)[0];
  double mod = dt == DType::U8 ? 256.0 : 4294967296.0;
  if (dt == DType::I64) return x;
  double r = std::fmod(x, mod);
  if (r < 0) r += mod;
  if (dt == DType::I32 && r >= 2147483648.0) r -= 4294967296.0;
  return r;
}

// Sums of `len` inputs in [-2, 2), a device against the CPU or the reference.
Tolerance sum_tol(DType dt, size_t len) { return refs::sum_tolerance(dt, len, 2.0, 2); }

OpCase row_reduce_case(ReduceOp op, DType dt, size_t rows, size_t len) {
  Shape s{rows, len};
  auto in = [=](uint64_t seed) {
    Values v = in_values(dt, s.elem_count(), seed);
    return op == ReduceOp::Sum ? v : with_specials(v, dt, seed);
  };
  OpCase c;
  c.family = "gpu_sizes";
  c.name = fmt::format("{} {} rows {} x {}", reduce_op_name(op), dtype_name(dt), rows, len);
  c.dtype = dt;
  c.vs_reference = c.vs_cpu = op == ReduceOp::Sum ? sum_tol(dt, len) : Tolerance::exact_match();
  c.run = [=](Device dev, uint64_t seed) {
    Tensor x = make_input(in(seed), s, dt, dev, LayoutKind::Contiguous);
    return std::vector<Tensor>{x.reduce(op, {-1}, false)};
  };
  c.reference = [=](uint64_t seed) {
    Values r = refs::reduce(op, in(seed), s.dims(), {1});
    if (op == ReduceOp::Sum)
      for (auto& x : r) x = wrap_to(dt, x);
    return std::vector<Values>{r};
  };
  return c;
}

// A reduction over dim 0 of a transposed view (strided reduced dim, unit-stride kept dim).
OpCase col_reduce_case(ReduceOp op, DType dt, size_t rows, size_t cols) {
  Shape s{rows, cols};
  OpCase c;
  c.family = "gpu_sizes";
  c.name = fmt::format("{} {} transposed {} dim 0", reduce_op_name(op), dtype_name(dt), s.str());
  c.dtype = dt;
  c.layout = LayoutKind::Transposed;
  c.vs_reference = c.vs_cpu = op == ReduceOp::Sum ? sum_tol(dt, rows) : Tolerance::exact_match();
  c.run = [=](Device dev, uint64_t seed) {
    Tensor x = make_input(in_values(dt, s.elem_count(), seed), s, dt, dev, LayoutKind::Transposed);
    return std::vector<Tensor>{x.reduce(op, {0}, false)};
  };
  c.reference = [=](uint64_t seed) {
    Values r = refs::reduce(op, in_values(dt, s.elem_count(), seed), s.dims(), {0});
    if (op == ReduceOp::Sum)
      for (auto& x : r) x = wrap_to(dt, x);
    return std::vector<Values>{r};
  };
  return c;
}

OpCase cumsum_rows_case(DType dt, size_t rows, size_t len) {
  Shape s{rows, len};
  OpCase c;
  c.family = "gpu_sizes";
  c.name = fmt::format("cumsum {} rows {} x {}", dtype_name(dt), rows, len);
  c.dtype = dt;
  c.vs_reference = c.vs_cpu = sum_tol(dt, len);
  c.run = [=](Device dev, uint64_t seed) {
    Tensor x = make_input(in_values(dt, s.elem_count(), seed), s, dt, dev, LayoutKind::Contiguous);
    return std::vector<Tensor>{x.cumsum(1)};
  };
  c.reference = [=](uint64_t seed) {
    return std::vector<Values>{refs::cumsum(in_values(dt, s.elem_count(), seed), s.dims(), 1,
                                            [dt](double x) { return wrap_to(dt, x); })};
  };
  return c;
}

OpCase argsort_rows_case(DType dt, size_t rows, size_t n, bool asc) {
  Shape s{rows, n};
  auto in = [=](uint64_t seed) {
    // Few distinct values, so ties (and their stable order) are common.
    Values v = is_float(dt) ? round_to_dtype(random_values(s.elem_count(), seed, -8.0, 8.0), dt)
                            : refs::seeded_values(dt, s.elem_count(), seed);
    if (is_float(dt))
      for (auto& x : v) x = std::floor(x);
    return with_specials(v, dt, seed);
  };
  OpCase c;
  c.family = "gpu_sizes";
  c.name = fmt::format("argsort {} {} rows {} x {}", asc ? "asc" : "desc", dtype_name(dt), rows, n);
  c.dtype = dt;
  c.vs_reference = c.vs_cpu = Tolerance::exact_match();
  c.run = [=](Device dev, uint64_t seed) {
    return std::vector<Tensor>{make_input(in(seed), s, dt, dev, LayoutKind::Contiguous).argsort(asc)};
  };
  c.reference = [=](uint64_t seed) {
    auto idx = refs::argsort(in(seed), n, asc);
    return std::vector<Values>{Values(idx.begin(), idx.end())};
  };
  return c;
}

// softmax / log_softmax / rms_norm (alpha) / layer_norm (alpha, beta) over the last dim.
enum class Nn { Softmax, LogSoftmax, Rms, Layer };

OpCase nn_rows_case(Nn op, DType dt, size_t rows, size_t cols) {
  Shape s{rows, cols};
  const char* names[] = {"softmax", "log_softmax", "rms_norm", "layer_norm"};
  OpCase c;
  c.family = "gpu_sizes";
  c.name = fmt::format("{} {} rows {} x {}", names[int(op)], dtype_name(dt), rows, cols);
  c.dtype = dt;
  c.vs_reference = float_tolerance(dt, 2.0);
  double ulps = dt == DType::F32 ? 16.0 + std::sqrt(double(cols)) : dt == DType::F64 ? 64.0 : 4.0;
  c.vs_cpu = float_tolerance(dt, ulps);
  const float eps = 1e-5f;
  auto x_of = [=](uint64_t seed) { return in_values(dt, s.elem_count(), seed, -4.0, 4.0); };
  auto a_of = [=](uint64_t seed) { return in_values(dt, cols, seed + 1, 0.5, 1.5); };
  auto b_of = [=](uint64_t seed) { return in_values(dt, cols, seed + 2, -1.0, 1.0); };
  c.run = [=](Device dev, uint64_t seed) {
    Tensor x = make_input(x_of(seed), s, dt, dev, LayoutKind::Contiguous);
    Tensor a = make_input(a_of(seed), Shape{cols}, dt, dev, LayoutKind::Contiguous);
    Tensor b = make_input(b_of(seed), Shape{cols}, dt, dev, LayoutKind::Contiguous);
    switch (op) {
      case Nn::Softmax:
        return std::vector<Tensor>{nn::softmax_last_dim(x)};
      case Nn::LogSoftmax:
        return std::vector<Tensor>{nn::log_softmax_last_dim(x)};
      case Nn::Rms:
        return std::vector<Tensor>{nn::rms_norm(x, a, eps)};
      default:
        return std::vector<Tensor>{nn::layer_norm(x, a, b, eps)};
    }
  };
  c.reference = [=](uint64_t seed) {
    Values x = x_of(seed), a = a_of(seed), b = b_of(seed), y(x.size());
    for (size_t r = 0; r < rows; ++r) {
      const double* p = x.data() + r * cols;
      double* q = y.data() + r * cols;
      if (op == Nn::Softmax || op == Nn::LogSoftmax) {
        double m = -INFINITY, sum = 0;
        for (size_t i = 0; i < cols; ++i) m = std::max(m, p[i]);
        for (size_t i = 0; i < cols; ++i) sum += std::exp(p[i] - m);
        for (size_t i = 0; i < cols; ++i)
          q[i] = op == Nn::Softmax ? std::exp(p[i] - m) / sum : p[i] - m - std::log(sum);
      } else if (op == Nn::Rms) {
        double ss = 0;
        for (size_t i = 0; i < cols; ++i) ss += p[i] * p[i];
        double scale = 1.0 / std::sqrt(ss / double(cols) + double(eps));
        for (size_t i = 0; i < cols; ++i) q[i] = p[i] * scale * a[i];
      } else {
        double mean = 0, var = 0;
        for (size_t i = 0; i < cols; ++i) mean += p[i];
        mean /= double(cols);
        for (size_t i = 0; i < cols; ++i) var += (p[i] - mean) * (p[i] - mean);
        double rstd = 1.0 / std::sqrt(var / double(cols) + double(eps));
        for (size_t i = 0; i < cols; ++i) q[i] = (p[i] - mean) * rstd * a[i] + b[i];
      }
    }
    return std::vector<Values>{round_to_dtype(y, dt)};
  };
  return c;
}

OpCase matmul_odd_case(DType dt, size_t m, size_t n, size_t k) {
  OpCase c;
  c.family = "gpu_sizes";
  c.name = fmt::format("matmul {} {}x{}x{}", dtype_name(dt), m, k, n);
  c.dtype = dt;
  const double acc = float_epsilon(dt == DType::F64 ? DType::F64 : DType::F32);
  // |a|, |b| <= 1: a sum of k products is off by at most ~k * acc (plus one rounding).
  c.vs_reference = c.vs_cpu = Tolerance::close(4 * acc * double(k), 2 * float_epsilon(dt));
  auto a_of = [=](uint64_t seed) { return in_values(dt, m * k, seed, -1.0, 1.0); };
  auto b_of = [=](uint64_t seed) { return in_values(dt, k * n, seed + 7, -1.0, 1.0); };
  c.run = [=](Device dev, uint64_t seed) {
    Tensor a = make_input(a_of(seed), Shape{m, k}, dt, dev, LayoutKind::Contiguous);
    Tensor b = make_input(b_of(seed), Shape{k, n}, dt, dev, LayoutKind::Transposed);
    return std::vector<Tensor>{a.matmul(b)};
  };
  c.reference = [=](uint64_t seed) {
    Values a = a_of(seed), b = b_of(seed), y(m * n, 0.0);
    for (size_t i = 0; i < m; ++i)
      for (size_t j = 0; j < n; ++j) {
        double s = 0;
        for (size_t q = 0; q < k; ++q) s += a[i * k + q] * b[q * n + j];
        y[i * n + j] = s;
      }
    return std::vector<Values>{round_to_dtype(y, dt)};
  };
  return c;
}

std::vector<OpCase> build() {
  std::vector<OpCase> cs;
  for (size_t len : {size_t(1), size_t(31), size_t(33), size_t(1000), size_t(20000)}) {
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::ArgMax, ReduceOp::ArgMin}) {
      for (DType dt : {DType::F32, DType::F16, DType::I32}) cs.push_back(row_reduce_case(op, dt, 3, len));
    }
    cs.push_back(cumsum_rows_case(DType::F32, 2, len));
    cs.push_back(cumsum_rows_case(DType::I64, 2, len));
    for (Nn op : {Nn::Softmax, Nn::LogSoftmax, Nn::Rms, Nn::Layer}) {
      cs.push_back(nn_rows_case(op, DType::F32, 3, len));
      cs.push_back(nn_rows_case(op, DType::BF16, 2, len));
    }
    cs.push_back(nn_rows_case(Nn::Softmax, DType::F64, 2, len));
  }
  // cumsum rows longer than a 32-lane wave's chunk, many of them (a wave a row on
  // GPUs of up to 312 multiprocessors at 32 lanes), in 16-byte vectors and not.
  cs.push_back(cumsum_rows_case(DType::F32, 20000, 600));
  cs.push_back(cumsum_rows_case(DType::F32, 20000, 603));
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Min, ReduceOp::ArgMax})
    cs.push_back(col_reduce_case(op, DType::F32, 1000, 4100));
  for (size_t n : {size_t(1), size_t(31), size_t(33), size_t(1000), size_t(4097), size_t(70000)}) {
    for (bool asc : {true, false}) {
      cs.push_back(argsort_rows_case(DType::F32, 3, n, asc));
      cs.push_back(argsort_rows_case(DType::I64, 2, n, asc));
    }
    cs.push_back(argsort_rows_case(DType::BF16, 2, n, true));
  }
  for (DType dt : {DType::F32, DType::F16, DType::BF16, DType::F64}) {
    cs.push_back(matmul_odd_case(dt, 1, 1, 1));
    cs.push_back(matmul_odd_case(dt, 31, 33, 1000));
    cs.push_back(matmul_odd_case(dt, 65, 1, 33));
  }
  return cs;
}

const bool kRegistered = register_cases(build());

}  // namespace
}  // namespace wick::check
