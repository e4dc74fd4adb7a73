// Helpers shared by test_reduce.cpp, test_sort.cpp and test_indexing.cpp: tensors of any dtype from f64
// values, strided views whose logical values are computed here from the layout (not through wick's
// copy), and the error assertion of error_test_util.h.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "base/dispatch.h"
#include "error_test_util.h"
#include "wick/tensor.h"

namespace wick::testing {

using test::expect_error;

// v converted to dtype dt (integers: C++ conversion; halves: one rounding).
inline Tensor make(const std::vector<double>& v, const Shape& shape, DType dt) {
  return dispatch_dtype(dt, "test", [&]<class T>() {
    std::vector<T> raw(v.size());
    for (size_t i = 0; i < v.size(); ++i) raw[i] = convert<T, double>(v[i]);
    return Tensor::from_vector(raw, shape);
  });
}

// x rounded to dtype dt and back.
inline double round_to(DType dt, double x) {
  return dispatch_dtype(dt, "test", [&]<class T>() { return convert<double, T>(convert<T, double>(x)); });
}

// Values exactly representable in dt with many ties: quarters in [-10, 10] for floats (exact even in
// bf16), small integers otherwise (non-negative for unsigned dtypes).
inline std::vector<double> sample_values(size_t n, DType dt, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<double> v(n);
  for (auto& x : v) {
    switch (dt) {
      case DType::U8:
        x = double(rng() % 21);
        break;
      case DType::U32:
        x = double(rng() % 1000);
        break;
      case DType::I32:
      case DType::I64:
        x = double(int(rng() % 1001) - 500);
        break;
      default:
        x = double(int(rng() % 81) - 40) / 4.0;
        break;
    }
  }
  return v;
}

struct Input {
  Tensor t;
  std::vector<double> v;  // logical values, row-major
};

// A view `view(base)` of a contiguous base of `base_shape` holding sample values; the logical values
// of the view are read from the base values through the view's layout (dims, strides, offset).
inline Input make_view(DType dt, const Shape& base_shape, const std::function<Tensor(const Tensor&)>& view,
                       uint32_t seed, std::vector<double> base_vals = {}) {
  if (base_vals.empty()) base_vals = sample_values(base_shape.elem_count(), dt, seed);
  Tensor t = view(make(base_vals, base_shape, dt));
  const Layout& l = t.layout();
  std::vector<double> v(t.elem_count());
  for (size_t i = 0; i < v.size(); ++i) {
    size_t off = l.start_offset(), rem = i;
    for (size_t k = l.rank(); k-- > 0;) {
      off += (rem % l.dims()[k]) * l.strides()[k];
      rem /= l.dims()[k];
    }
    v[i] = base_vals[off];
  }
  return {t, v};
}

// The named layouts every op is exercised on, for a logical 3-D shape [a, b, c].
struct ViewKind {
  std::string name;
  std::function<Input(DType, size_t, size_t, size_t, uint32_t)> build;
};

inline std::vector<ViewKind> view_kinds() {
  return {
      {"contiguous",
       [](DType dt, size_t a, size_t b, size_t c, uint32_t s) {
         return make_view(
             dt, Shape{a, b, c}, [](const Tensor& x) { return x; }, s);
       }},
      {"offset",  // contiguous but starting inside the storage
       [](DType dt, size_t a, size_t b, size_t c, uint32_t s) {
         return make_view(
             dt, Shape{a + 2, b, c}, [a](const Tensor& x) { return x.narrow(0, 2, a); }, s);
       }},
      {"transposed",
       [](DType dt, size_t a, size_t b, size_t c, uint32_t s) {
         return make_view(
             dt, Shape{a, c, b}, [](const Tensor& x) { return x.transpose(1, 2); }, s);
       }},
      {"permuted",  // base [c, a, b] seen as [a, b, c]
       [](DType dt, size_t a, size_t b, size_t c, uint32_t s) {
         return make_view(
             dt, Shape{c, a, b},
             [](const Tensor& x) {
               return x.permute({1, 2, 0});
             },
             s);
       }},
      {"narrowed",
       [](DType dt, size_t a, size_t b, size_t c, uint32_t s) {
         return make_view(
             dt, Shape{a, b, c + 3}, [c](const Tensor& x) { return x.narrow(2, 1, c); }, s);
       }},
      {"broadcast",
       [](DType dt, size_t a, size_t b, size_t c, uint32_t s) {
         return make_view(
             dt, Shape{1, b, c},
             [a, b, c](const Tensor& x) {
               return x.broadcast_as(Shape{a, b, c});
             },
             s);
       }},
  };
}

}  // namespace wick::testing
