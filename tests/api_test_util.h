// Helpers shared by the tests of the composite API (tests/test_api_*.cpp): tensors of any
// dtype from f64 values, values as a dtype stores them, deterministic inputs, comparisons
// against float64 expectations in ulps, and error assertions.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "base/dispatch.h"
#include "wick/tensor.h"

namespace wick::api_test {

using V = std::vector<double>;
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr DType kFloats[] = {DType::F16, DType::BF16, DType::F32, DType::F64};

// v stored in dtype dt (the cast rules: integers truncate and saturate, halves round once).
inline Tensor make(const V& v, const Shape& shape, DType dt, Device dev = Device::cpu()) {
  return dispatch_dtype(dt, "test", [&]<class T>() {
    std::vector<T> raw(v.size());
    for (size_t i = 0; i < v.size(); ++i) raw[i] = convert<T, double>(v[i]);
    return Tensor::from_vector(raw, shape, dev);
  });
}

// x as it reads back after being stored in dt.
inline double round_to(DType dt, double x) {
  return dispatch_dtype(dt, "test", [&]<class T>() { return convert<double, T>(convert<T, double>(x)); });
}
inline V round_to(DType dt, const V& v) {
  V out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = round_to(dt, v[i]);
  return out;
}

// One unit in the last place of float dtype dt at the magnitude of x.
inline double ulp(DType dt, double x) {
  double a = std::fabs(x);
  int e = a > 0 ? std::ilogb(a) : -100000;
  switch (dt) {
    case DType::F16:
      return std::ldexp(1.0, std::max(e, -14) - 10);
    case DType::BF16:
      return std::ldexp(1.0, std::max(e, -126) - 7);
    case DType::F32:
      return std::ldexp(1.0, std::max(e, -126) - 23);
    case DType::F64:
      return std::ldexp(1.0, std::max(e, -1022) - 52);
    default:
      return 0;
  }
}

// Deterministic values in [lo, hi).
inline V uniform(size_t n, uint64_t seed, double lo, double hi) {
  V v(n);
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (auto& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = lo + double(s >> 11) * 0x1.0p-53 * (hi - lo);
  }
  return v;
}

// got has dtype dt and shape `shape`, and every element is within `ulps` units in the last
// place (of dt, at the expected value) of want rounded to dt; exact for integer dtypes.
// NaN must match NaN, infinities exactly. atol widens the bound where a result cancels.
inline void expect_values(const Tensor& got, DType dt, const Shape& shape, const V& want, double ulps,
                          const std::string& ctx = "", double atol = 0) {
  ASSERT_EQ(got.dtype(), dt) << ctx;
  ASSERT_EQ(got.shape(), shape) << ctx;
  V g = got.to_f64_vector();
  ASSERT_EQ(g.size(), want.size()) << ctx;
  size_t bad = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    double e = round_to(dt, want[i]);
    bool ok = std::isnan(e)                   ? std::isnan(g[i])
              : (std::isinf(e) || is_int(dt)) ? g[i] == e
                                              : std::fabs(g[i] - e) <= ulps * ulp(dt, e) + atol;
    if (!ok && ++bad <= 5) {
      ADD_FAILURE() << ctx << ": element " << i << " got " << g[i] << " expected " << e << " (from "
                    << want[i] << ")";
    }
  }
  EXPECT_EQ(bad, 0u) << ctx;
}

template <class F>
void expect_error(F&& f, ErrorKind kind, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no error thrown; expected " << error_kind_name(kind) << " containing '" << part << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what() << "\nwanted: " << part;
  }
}

// A tensor that claims to live on gpu:0 (its storage is CPU memory): the front end must
// reject the device mismatch before any backend sees it.
inline Tensor on_fake_gpu(const Tensor& t) {
  return Tensor(t.storage(), t.layout(), t.dtype(), Device::gpu(0));
}

}  // namespace wick::api_test
