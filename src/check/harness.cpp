// The parity harness: input layouts, comparison, the case registry and run_case.
// See harness.h for the contract.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>

#include "base/dispatch.h"
#include "wick/check.h"
#include "wick/error.h"

namespace wick::check {

namespace {

// SplitMix64 (Steele, Lea, Flood 2014): a tiny host generator, enough for test inputs
// and independent of the library's Philox streams.
uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::vector<OpCase>& registry() {
  static std::vector<OpCase> cases;
  return cases;
}

// A contiguous tensor of `shape` holding `values` converted to dtype.
Tensor host_tensor(const std::vector<double>& values, const Shape& shape, DType dtype, Device dev) {
  return dispatch_dtype(dtype, "make_input", [&]<class T>() {
    std::vector<T> data(values.size());
    for (size_t i = 0; i < values.size(); ++i) data[i] = convert<T, double>(values[i]);
    return Tensor::from_bytes(data.data(), data.size(), shape, dtype, dev);
  });
}

// What fills the storage around a Narrowed input: NaN for floats (a stray read shows
// up as a NaN mismatch), 123 for integers (representable in every integer dtype).
double padding_value(DType dtype) {
  return is_float(dtype) ? std::numeric_limits<double>::quiet_NaN() : 123.0;
}

// "[1,2,3]" for the row-major linear index i of dims.
std::string index_str(size_t i, const std::vector<size_t>& dims) {
  std::vector<size_t> idx(dims.size());
  for (size_t k = dims.size(); k-- > 0;) {
    if (dims[k] == 0) return "[]";
    idx[k] = i % dims[k];
    i /= dims[k];
  }
  std::string s = "[";
  for (size_t k = 0; k < idx.size(); ++k) s += fmt::format("{}{}", k ? "," : "", idx[k]);
  return s + "]";
}

bool same_bits(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  uint64_t ua, ub;
  std::memcpy(&ua, &a, 8);
  std::memcpy(&ub, &b, 8);
  return ua == ub;
}

// Element test under a `close` tolerance; NaN matches NaN, infinities match exactly.
bool close_enough(double a, double b, const Tolerance& tol) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::fabs(a - b) <= tol.atol + tol.rtol * std::fabs(b);
}

// The element-wise comparison; *bad_index = the first failing element (SIZE_MAX if none
// or if the failure is the count or the NMSE).
CaseResult compare_impl(const std::vector<double>& got, const std::vector<double>& expected,
                        const Tolerance& tol, size_t* bad_index) {
  if (bad_index) *bad_index = SIZE_MAX;
  CaseResult r;
  if (got.size() != expected.size()) {
    r.detail = fmt::format("{} elements, expected {}", got.size(), expected.size());
    return r;
  }
  double err2 = 0, ref2 = 0;
  bool first_bad = true;
  r.pass = true;
  for (size_t i = 0; i < got.size(); ++i) {
    double a = got[i], b = expected[i];
    bool ok = tol.exact ? same_bits(a, b) : close_enough(a, b, tol);
    if (std::isfinite(a) && std::isfinite(b)) {
      double e = std::fabs(a - b);
      r.max_abs_err = std::max(r.max_abs_err, e);
      err2 += e * e;
      ref2 += b * b;
    }
    if (!ok) {
      r.pass = false;
      if (first_bad) {
        r.detail = fmt::format("element {}: got {} expected {}", i, a, b);
        if (bad_index) *bad_index = i;
        first_bad = false;
      }
    }
  }
  // NMSE (ggml's error measure): squared error over the reference's energy; the bare
  // squared error when the reference is all zeros.
  r.nmse = ref2 > 0 ? err2 / ref2 : err2;
  if (r.pass && !tol.exact && tol.nmse > 0 && r.nmse > tol.nmse) {
    r.pass = false;
    r.detail = fmt::format("NMSE {:.3g} above the bound {:.3g}", r.nmse, tol.nmse);
  }
  return r;
}

// Compares every output of `got` against `expected` outputs; returns the merged result.
CaseResult compare_outputs(const std::vector<Tensor>& got, const std::vector<std::vector<double>>& expected,
                           const Tolerance& tol, const std::vector<Shape>* expected_shapes) {
  CaseResult r;
  if (got.size() != expected.size()) {
    r.detail = fmt::format("{} outputs, expected {}", got.size(), expected.size());
    return r;
  }
  r.pass = true;
  for (size_t o = 0; o < got.size(); ++o) {
    if (!got[o].defined()) {
      r.pass = false;
      r.detail = fmt::format("output {} is an undefined tensor", o);
      return r;
    }
    if (expected_shapes && got[o].shape() != (*expected_shapes)[o]) {
      r.pass = false;
      r.detail = fmt::format("output {} has shape {}, expected {}", o, got[o].shape().str(),
                             (*expected_shapes)[o].str());
      return r;
    }
    size_t bad = 0;
    CaseResult one = compare_impl(got[o].to_f64_vector(), expected[o], tol, &bad);
    r.max_abs_err = std::max(r.max_abs_err, one.max_abs_err);
    r.nmse = std::max(r.nmse, one.nmse);
    if (!one.pass && r.pass) {
      r.pass = false;
      r.detail =
          fmt::format("output {} {} {}: {}", o, got[o].shape().str(), dtype_name(got[o].dtype()), one.detail);
      if (bad != SIZE_MAX) r.detail += " at " + index_str(bad, got[o].dims());
    }
  }
  return r;
}

}  // namespace

const char* layout_kind_name(LayoutKind k) {
  switch (k) {
    case LayoutKind::Contiguous:
      return "contiguous";
    case LayoutKind::Transposed:
      return "transposed";
    case LayoutKind::Broadcast:
      return "broadcast";
    case LayoutKind::Narrowed:
      return "narrowed";
    case LayoutKind::Size1:
      return "size1";
    case LayoutKind::Empty:
      return "empty";
  }
  return "?";
}

std::vector<double> random_values(size_t n, uint64_t seed, double lo, double hi) {
  uint64_t state = seed * 0x2545F4914F6CDD1Dull + 1;
  std::vector<double> v(n);
  for (auto& x : v) {
    double u = double(splitmix64(state) >> 11) * 0x1.0p-53;  // [0, 1)
    x = lo + u * (hi - lo);
  }
  return v;
}

std::vector<double> round_to_dtype(const std::vector<double>& values, DType dtype) {
  return dispatch_dtype(dtype, "round_to_dtype", [&]<class T>() {
    std::vector<double> out(values.size());
    for (size_t i = 0; i < values.size(); ++i) out[i] = convert<double, T>(convert<T, double>(values[i]));
    return out;
  });
}

Tensor make_input(const std::vector<double>& values, const Shape& shape, DType dtype, Device dev,
                  LayoutKind kind) {
  if (values.size() != shape.elem_count()) {
    throw_error(ErrorKind::ShapeMismatch, "make_input",
                fmt::format("{} values for shape {} ({} elements) {}", values.size(), shape.str(),
                            shape.elem_count(), dtype_name(dtype)));
  }
  const auto& dims = shape.dims();
  switch (kind) {
    case LayoutKind::Contiguous:
    case LayoutKind::Size1:
    case LayoutKind::Empty:
      return host_tensor(values, shape, dtype, dev);

    case LayoutKind::Transposed: {
      if (shape.rank() < 2) {
        throw_error(
            ErrorKind::InvalidArgument, "make_input",
            fmt::format("transposed layout of {} {}: needs rank >= 2", shape.str(), dtype_name(dtype)));
      }
      // Store (.., cols, rows) row-major, then view it as (.., rows, cols).
      size_t rows = dims[dims.size() - 2], cols = dims.back(), mat = rows * cols;
      std::vector<double> stored(values.size());
      for (size_t b = 0; mat && b < values.size() / mat; ++b)
        for (size_t i = 0; i < rows; ++i)
          for (size_t j = 0; j < cols; ++j) stored[b * mat + j * rows + i] = values[b * mat + i * cols + j];
      std::vector<size_t> sd = dims;
      std::swap(sd[sd.size() - 2], sd[sd.size() - 1]);
      return host_tensor(stored, Shape(sd), dtype, dev).transpose(-2, -1);
    }

    case LayoutKind::Narrowed: {
      // Rank >= 2: the last dim sits inside rows 3 wider, starting at column 1 (strided
      // and offset). Rank 1: the vector starts 2 elements into a longer buffer
      // (contiguous with an offset). Rank 0 has nothing to narrow.
      if (shape.rank() == 0) {
        throw_error(ErrorKind::InvalidArgument, "make_input",
                    fmt::format("narrowed layout of a scalar {}: needs rank >= 1", dtype_name(dtype)));
      }
      double pad = padding_value(dtype);
      if (shape.rank() == 1) {
        std::vector<double> stored(values.size() + 3, pad);
        std::copy(values.begin(), values.end(), stored.begin() + 2);
        return host_tensor(stored, Shape{stored.size()}, dtype, dev).narrow(0, 2, values.size());
      }
      size_t cols = dims.back(), wide = cols + 3, rows = cols ? values.size() / cols : 0;
      std::vector<size_t> sd = dims;
      sd.back() = wide;
      std::vector<double> stored(Shape(sd).elem_count(), pad);
      for (size_t r = 0; r < rows; ++r)
        for (size_t j = 0; j < cols; ++j) stored[r * wide + 1 + j] = values[r * cols + j];
      return host_tensor(stored, Shape(sd), dtype, dev).narrow(-1, 1, cols);
    }

    case LayoutKind::Broadcast: {
      if (shape.rank() == 0 || dims[0] == 0) {
        throw_error(ErrorKind::InvalidArgument, "make_input",
                    fmt::format("broadcast layout of {} {}: needs a non-empty dim 0", shape.str(),
                                dtype_name(dtype)));
      }
      size_t inner = values.size() / dims[0];
      for (size_t i = inner; i < values.size(); ++i) {
        if (!same_bits(values[i], values[i % inner])) {
          throw_error(ErrorKind::InvalidArgument, "make_input",
                      fmt::format("broadcast layout of {} {}: values differ along dim 0 (element {})",
                                  shape.str(), dtype_name(dtype), i));
        }
      }
      std::vector<size_t> sd = dims;
      sd[0] = 1;
      std::vector<double> row(values.begin(), values.begin() + std::ptrdiff_t(inner));
      return host_tensor(row, Shape(sd), dtype, dev).broadcast_as(shape);
    }
  }
  throw_error(ErrorKind::InvalidArgument, "make_input", "unknown layout kind");
}

double float_epsilon(DType dt) {
  switch (dt) {
    case DType::F16:
      return 0x1.0p-10;
    case DType::BF16:
      return 0x1.0p-7;
    case DType::F32:
      return 0x1.0p-23;
    case DType::F64:
      return 0x1.0p-52;
    default:
      return 0;
  }
}

Tolerance float_tolerance(DType dt, double ulps) {
  if (!is_float(dt)) return Tolerance::exact_match();
  const double eps = float_epsilon(dt);
  // Per element |a-b| <= bound*(1+|b|). The NMSE bound is `bound` itself, not its
  // square: an element near zero may pass on atol with a relative error far above
  // bound, and on a one-element output that error is the NMSE (ggml's test-backend-ops
  // uses fixed NMSE bounds of 1e-7 and looser for the same reason).
  double bound = ulps * eps;
  return Tolerance::close(bound, bound, bound);
}

bool register_cases(std::vector<OpCase> cases) {
  auto& r = registry();
  for (auto& c : cases) r.push_back(std::move(c));
  return true;
}

const std::vector<OpCase>& all_cases() { return registry(); }

std::vector<std::string> families() {
  std::vector<std::string> out;
  for (const auto& c : registry())
    if (std::find(out.begin(), out.end(), c.family) == out.end()) out.push_back(c.family);
  return out;
}

bool device_present(Device dev, std::string* why) {
  for (const Device& d : available_devices())
    if (d == dev) return true;
  if (why) {
    std::string s = fmt::format("{} is not present", dev.str());
    for (const auto& b : gpu_backend_status())
      s += fmt::format("; {}: {}", b.name, b.loaded ? "loaded, but has no such device" : b.detail);
    *why = s;
  }
  return false;
}

CaseResult compare_values(const std::vector<double>& got, const std::vector<double>& expected,
                          const Tolerance& tol) {
  return compare_impl(got, expected, tol, nullptr);
}

CaseResult run_case(const OpCase& c, Device dev, uint64_t seed) {
  CaseResult r;
  std::string why;
  if (!dev.is_cpu() && !device_present(dev, &why)) {
    r.skipped = true;
    r.detail = why;
    return r;
  }
  try {
    if (dev.is_cpu()) {
      std::vector<Tensor> got = c.run(dev, seed);
      return compare_outputs(got, c.reference(seed), c.vs_reference, nullptr);
    }
    std::vector<Tensor> got = c.run(dev, seed);
    std::vector<Tensor> cpu = c.run(Device::cpu(), seed);
    for (size_t o = 0; o < got.size() && o < cpu.size(); ++o) {
      if (got[o].defined() && cpu[o].defined() && got[o].dtype() != cpu[o].dtype()) {
        r.detail = fmt::format("output {} is {} on {}, {} on the CPU", o, dtype_name(got[o].dtype()),
                               dev.str(), dtype_name(cpu[o].dtype()));
        return r;
      }
      if (got[o].defined() && got[o].device() != dev) {
        r.detail = fmt::format("output {} lives on {}, not {}", o, got[o].device().str(), dev.str());
        return r;
      }
    }
    std::vector<std::vector<double>> expected;
    std::vector<Shape> shapes;
    for (const Tensor& t : cpu) {
      expected.push_back(t.to_f64_vector());
      shapes.push_back(t.shape());
    }
    return compare_outputs(got, expected, c.vs_cpu, &shapes);
  } catch (const Error& e) {
    r.pass = false;
    r.detail = fmt::format("threw {}: {}", error_kind_name(e.kind()), e.what());
  } catch (const std::exception& e) {
    r.pass = false;
    r.detail = fmt::format("threw: {}", e.what());
  }
  return r;
}

}  // namespace wick::check
