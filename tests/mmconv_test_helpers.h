// Helpers for test_matmul.cpp, test_conv.cpp and test_nn.cpp: seeded host values,
// tensors of any dtype built from f64 values, per-element tolerance checks and
// error assertions. References are computed by the tests themselves in f64.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "base/dispatch.h"
#include "wick/check.h"
#include "wick/tensor.h"

namespace wick::mmtest {

using Values = std::vector<double>;

inline constexpr DType kFloatTypes[] = {DType::F16, DType::BF16, DType::F32, DType::F64};

// Seeded uniform values in [lo, hi), rounded to what `dt` stores.
inline Values rand_values(size_t n, uint64_t seed, DType dt = DType::F64, double lo = -1.0, double hi = 1.0) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  Values v(n);
  for (auto& x : v) x = u(gen);
  return dispatch_dtype(dt, "rand_values", [&]<class T>() {
    for (auto& x : v) x = convert<double, T>(convert<T, double>(x));
    return v;
  });
}

// A contiguous tensor of `dt` holding `v` (each value converted to dt).
inline Tensor make(const Values& v, const Shape& shape, DType dt) {
  return dispatch_dtype(dt, "make", [&]<class T>() {
    std::vector<T> data(v.size());
    for (size_t i = 0; i < v.size(); ++i) data[i] = convert<T, double>(v[i]);
    return Tensor::from_vector(data, shape);
  });
}

// Unit roundoff of a float dtype (half an ulp at 1).
inline double unit_roundoff(DType dt) { return check::float_epsilon(dt) / 2; }

// The unit roundoff of the arithmetic the CPU backend uses for dtype `dt` in GEMM (f32 for halves).
inline double gemm_roundoff(DType dt) { return unit_roundoff(dt == DType::F64 ? DType::F64 : DType::F32); }

// Every element within |got - want| <= tol[i]; NaN must meet NaN.
inline void expect_close(const Tensor& got, const Values& want, const Values& tol, const std::string& what) {
  Values g = got.to_f64_vector();
  ASSERT_EQ(g.size(), want.size()) << what;
  size_t bad = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    bool ok = std::isnan(want[i]) ? std::isnan(g[i]) : std::fabs(g[i] - want[i]) <= tol[i];
    if (!ok && bad++ < 5)
      ADD_FAILURE() << what << ": element " << i << " got " << g[i] << " want " << want[i];
  }
  EXPECT_EQ(bad, 0u) << what;
}

// Spacing of dt's subnormals (the absolute rounding step near zero).
inline double subnormal_step(DType dt) {
  switch (dt) {
    case DType::F16: return 0x1.0p-24;
    case DType::BF16: return 0x1.0p-133;
    case DType::F32: return 0x1.0p-149;
    default: return 0x1.0p-1074;
  }
}

// Tolerance of a value computed exactly (in f64) and rounded once to dt, allowing `ulps`
// half-ulps (relative, or half subnormal steps near zero) plus `abs_floor`.
inline Values rounding_tol(const Values& want, DType dt, double ulps = 2.0, double abs_floor = 0.0) {
  Values t(want.size());
  for (size_t i = 0; i < t.size(); ++i)
    t[i] = ulps * (unit_roundoff(dt) * std::fabs(want[i]) + subnormal_step(dt) / 2) + abs_floor;
  return t;
}

// Runs f and checks it throws wick::Error of `kind` whose message contains `part`.
template <class F>
void expect_error(F&& f, ErrorKind kind, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no error thrown; expected one containing \"" << part << "\"";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

}  // namespace wick::mmtest
