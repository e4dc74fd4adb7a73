// The elementwise families (affine, powf, elu, unary, binary, cmp, where_cond) on
// the CPU: hand-computed values, then every op x every dtype it supports x layouts
// (contiguous, transposed, narrowed, broadcast, size-1, rank 0, empty, permuted 3-D,
// and a large strided case that spans threads) against float64 math written here,
// then every error path (kind and message).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "api_test_util.h"
#include "base/dispatch.h"
#include "check/elementwise_ref.h"
#include "wick/tensor.h"

namespace wick {
namespace {

using namespace api_test;
constexpr DType kInts[] = {DType::U8, DType::U32, DType::I32, DType::I64};

// Deterministic picks from a small set (so comparisons see ties).
V picks(size_t n, uint64_t seed, const V& set) {
  V u = uniform(n, seed, 0, double(set.size())), v(n);
  for (size_t i = 0; i < n; ++i) v[i] = set[size_t(u[i])];
  return v;
}

// Integers in (-span, span) (signed dtypes) or [0, span) (unsigned), truncated.
std::function<V(size_t, uint64_t)> int_gen(DType dt, double span) {
  bool is_signed = dt == DType::I32 || dt == DType::I64;
  return [=](size_t n, uint64_t seed) {
    V v = uniform(n, seed, is_signed ? -span : 0, span);
    for (auto& x : v) x = std::trunc(x);
    return v;
  };
}

// api_test::expect_values, and the result is a fresh contiguous tensor.
void expect_values(const Tensor& got, const Shape& shape, DType dt, const V& want, double ulps, double atol,
                   const std::string& ctx) {
  ASSERT_TRUE(got.is_contiguous()) << ctx;
  api_test::expect_values(got, dt, shape, want, ulps, ctx, atol);
}

// A test input: the tensor (any layout) and its logical row-major values as stored.
struct Input {
  std::string name;
  Tensor t;
  V values;
};

// Inputs of dtype dt in many layouts, values drawn by gen(n, seed).
std::vector<Input> layouts(DType dt, const std::function<V(size_t, uint64_t)>& gen) {
  std::vector<Input> out;
  double pad = is_float(dt) ? kNaN : 77.0;  // a stray read of the padding shows up
  {                                         // contiguous [4,5]
    V v = round_to(dt, gen(20, 1));
    out.push_back({"contiguous [4,5]", make(v, Shape{4, 5}, dt), v});
  }
  {  // transposed: stored [5,4], viewed [4,5]
    V v = round_to(dt, gen(20, 2)), stored(20);
    for (size_t i = 0; i < 4; ++i)
      for (size_t j = 0; j < 5; ++j) stored[j * 4 + i] = v[i * 5 + j];
    out.push_back({"transposed [4,5]", make(stored, Shape{5, 4}, dt).t(), v});
  }
  {  // narrowed: [4,5] at column 2 of a [4,8] buffer (strided, offset)
    V v = round_to(dt, gen(20, 3)), stored(32, pad);
    for (size_t i = 0; i < 4; ++i)
      for (size_t j = 0; j < 5; ++j) stored[i * 8 + 2 + j] = v[i * 5 + j];
    out.push_back({"narrowed [4,5]", make(stored, Shape{4, 8}, dt).narrow(1, 2, 5), v});
  }
  {  // broadcast: [1,5] -> [4,5] (stride 0)
    V row = round_to(dt, gen(5, 4)), v(20);
    for (size_t i = 0; i < 20; ++i) v[i] = row[i % 5];
    out.push_back({"broadcast [4,5]", make(row, Shape{1, 5}, dt).broadcast_as(Shape{4, 5}), v});
  }
  {  // size 1
    V v = round_to(dt, gen(1, 5));
    out.push_back({"size1 [1,1]", make(v, Shape{1, 1}, dt), v});
  }
  {  // rank 0
    V v = round_to(dt, gen(1, 6));
    out.push_back({"scalar []", make(v, Shape{}, dt), v});
  }
  {  // empty
    out.push_back({"empty [0,5]", make({}, Shape{0, 5}, dt), {}});
  }
  {  // permuted 3-D: stored [2,3,4], viewed [4,2,3] by permute {2,0,1}
    V s = round_to(dt, gen(24, 7)), v(24);
    for (size_t k = 0; k < 4; ++k)
      for (size_t i = 0; i < 2; ++i)
        for (size_t j = 0; j < 3; ++j) v[(k * 2 + i) * 3 + j] = s[(i * 3 + j) * 4 + k];
    out.push_back({"permuted [4,2,3]", make(s, Shape{2, 3, 4}, dt).permute({2, 0, 1}), v});
  }
  {  // large transposed [257,300] (several thread chunks, walkers starting mid-tensor)
    const size_t r = 257, c = 300;
    V v = round_to(dt, gen(r * c, 8)), stored(r * c);
    for (size_t i = 0; i < r; ++i)
      for (size_t j = 0; j < c; ++j) stored[j * r + i] = v[i * c + j];
    out.push_back({"large transposed [257,300]", make(stored, Shape{c, r}, dt).t(), v});
  }
  return out;
}

std::string ctx_of(const std::string& op, DType dt, const std::string& layout) {
  return op + " " + std::string(dtype_name(dt)) + " " + layout;
}

// Tolerance of a float result against float64 math: halves round once from an f32
// result (1 ulp); f32 and f64 allow a few ulps of libm and intermediate rounding.
double ulps_for(DType dt) { return dt == DType::F16 || dt == DType::BF16 ? 1.0 : 8.0; }
double atol_for(DType dt) { return dt == DType::F32 ? 1e-6 : dt == DType::F64 ? 1e-14 : 0.0; }

// ---- unary: hand-computed values -------------------------------------------------------

struct HandCase {
  UnaryOp op;
  double x, y;
};

TEST(Unary, HandComputedValues) {
  const double pi = 3.14159265358979323846;
  const HandCase cases[] = {
      {UnaryOp::Exp, 1.0, 2.718281828459045},
      {UnaryOp::Exp, 0.0, 1.0},
      {UnaryOp::Log, 2.0, 0.6931471805599453},
      {UnaryOp::Sin, pi / 6, 0.5},
      {UnaryOp::Cos, pi / 3, 0.5},
      {UnaryOp::Abs, -2.5, 2.5},
      {UnaryOp::Neg, 3.0, -3.0},
      {UnaryOp::Recip, 4.0, 0.25},
      {UnaryOp::Sqr, -3.0, 9.0},
      {UnaryOp::Sqrt, 2.25, 1.5},
      {UnaryOp::Gelu, 1.0, 0.8411919906082768},
      {UnaryOp::Gelu, -1.0, -0.15880800939172324},
      {UnaryOp::GeluErf, 1.0, 0.8413447460685429},
      {UnaryOp::GeluErf, -1.0, -0.15865525393145707},
      {UnaryOp::Erf, 0.5, 0.5204998778130465},
      {UnaryOp::Relu, -2.0, 0.0},
      {UnaryOp::Relu, 2.0, 2.0},
      {UnaryOp::Silu, 1.0, 0.7310585786300049},
      {UnaryOp::Tanh, 0.5, 0.46211715726000974},
      {UnaryOp::Floor, -1.5, -2.0},
      {UnaryOp::Ceil, -1.5, -1.0},
      {UnaryOp::Round, 2.5, 3.0},
      {UnaryOp::Round, -2.5, -3.0},
      {UnaryOp::Round, 0.5, 1.0},
      {UnaryOp::Round, 1.5, 2.0},
      {UnaryOp::Round, -0.4, -0.0},
      {UnaryOp::Sign, -3.0, -1.0},
      {UnaryOp::Sign, 0.0, 0.0},
      {UnaryOp::Sign, 2.0, 1.0},
      {UnaryOp::Sigmoid, 0.0, 0.5},
      {UnaryOp::Sigmoid, 1.0, 0.7310585786300049},
  };
  for (DType dt : {DType::F32, DType::F64}) {
    for (const auto& c : cases) {
      Tensor y = make({c.x}, Shape{1}, dt).unary(c.op);
      expect_values(y, Shape{1}, dt, {c.y}, 2, dt == DType::F32 ? 1e-7 : 1e-15,
                    ctx_of(std::string(unary_op_name(c.op)), dt, std::to_string(c.x)));
    }
  }
}

TEST(Unary, SpecialValues) {
  const HandCase cases[] = {
      {UnaryOp::Exp, -kInf, 0.0},    {UnaryOp::Exp, kInf, kInf},    {UnaryOp::Exp, kNaN, kNaN},
      {UnaryOp::Log, 0.0, -kInf},    {UnaryOp::Log, -1.0, kNaN},    {UnaryOp::Sqrt, -1.0, kNaN},
      {UnaryOp::Recip, 0.0, kInf},   {UnaryOp::Recip, -0.0, -kInf}, {UnaryOp::Relu, kNaN, kNaN},
      {UnaryOp::Sign, kNaN, 0.0},    {UnaryOp::Tanh, kInf, 1.0},    {UnaryOp::Sigmoid, -kInf, 0.0},
      {UnaryOp::Sigmoid, kInf, 1.0}, {UnaryOp::Abs, -kInf, kInf},   {UnaryOp::Floor, kNaN, kNaN},
      {UnaryOp::Erf, kInf, 1.0},     {UnaryOp::Erf, -kInf, -1.0},
  };
  for (DType dt : kFloats) {
    for (const auto& c : cases) {
      Tensor y = make({c.x}, Shape{1}, dt).unary(c.op);
      expect_values(y, Shape{1}, dt, {c.y}, 1, 1e-30,
                    ctx_of(std::string(unary_op_name(c.op)), dt, std::to_string(c.x)));
    }
  }
}

// ---- unary: every op x float dtype x layout against float64 math -------------------------

TEST(Unary, FloatDTypesAndLayoutsMatchFloat64) {
  for (size_t o = 0; o < kNumUnaryOps; ++o) {
    UnaryOp op = UnaryOp(o);
    ref::Domain d = ref::unary_domain(op);
    for (DType dt : kFloats) {
      // Sign and round cases on exact halves and zero too.
      auto gen = [&](size_t n, uint64_t seed) {
        V v = uniform(n, seed, d.lo, d.hi);
        if (n > 2 && d.lo < 0) {
          v[0] = 0.0;
          v[1] = -2.5;
        }
        return v;
      };
      for (const auto& in : layouts(dt, gen)) {
        Tensor y = in.t.unary(op);
        V r(in.values.size());
        for (size_t i = 0; i < r.size(); ++i) r[i] = ref::unary(op, in.values[i]);
        expect_values(y, in.t.shape(), dt, r, ulps_for(dt), atol_for(dt),
                      ctx_of(std::string(unary_op_name(op)), dt, in.name));
      }
    }
  }
}

TEST(Unary, IntegerOpsOnIntegerDTypes) {
  const UnaryOp int_ops[] = {UnaryOp::Abs,  UnaryOp::Neg,   UnaryOp::Sqr,  UnaryOp::Relu,
                             UnaryOp::Sign, UnaryOp::Floor, UnaryOp::Ceil, UnaryOp::Round};
  for (DType dt : kInts) {
    auto gen = int_gen(dt, 1000);
    for (UnaryOp op : int_ops) {
      for (const auto& in : layouts(dt, gen)) {
        V want(in.values.size());
        for (size_t i = 0; i < want.size(); ++i) want[i] = ref::int_unary(op, dt, in.values[i]);
        expect_values(in.t.unary(op), in.t.shape(), dt, want, 0, 0,
                      ctx_of(std::string(unary_op_name(op)), dt, in.name));
      }
    }
  }
}

TEST(Unary, IntegerWrapAround) {
  // u8: -3 wraps to 253; 16^2 = 256 wraps to 0; 20^2 = 400 wraps to 144.
  EXPECT_EQ(make({3, 0}, Shape{2}, DType::U8).neg().to_vector<uint8_t>(), (std::vector<uint8_t>{253, 0}));
  EXPECT_EQ(make({16, 20, 255}, Shape{3}, DType::U8).sqr().to_vector<uint8_t>(),
            (std::vector<uint8_t>{0, 144, 1}));
  EXPECT_EQ(make({0, 7}, Shape{2}, DType::U8).sign().to_vector<uint8_t>(), (std::vector<uint8_t>{0, 1}));
  // i32: abs and neg of the minimum wrap to the minimum; 46341^2 wraps negative.
  const int32_t mn = std::numeric_limits<int32_t>::min();
  Tensor t = Tensor::from_vector<int32_t>({mn, -5, 46341}, Shape{3});
  EXPECT_EQ(t.abs().to_vector<int32_t>(), (std::vector<int32_t>{mn, 5, 46341}));
  EXPECT_EQ(t.neg().to_vector<int32_t>(), (std::vector<int32_t>{mn, 5, -46341}));
  EXPECT_EQ(t.sqr().to_vector<int32_t>(), (std::vector<int32_t>{0, 25, -2147479015}));
  const int64_t mn64 = std::numeric_limits<int64_t>::min();
  Tensor t64 = Tensor::from_vector<int64_t>({mn64, -9}, Shape{2});
  EXPECT_EQ(t64.abs().to_vector<int64_t>(), (std::vector<int64_t>{mn64, 9}));
  EXPECT_EQ(t64.relu().to_vector<int64_t>(), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(t64.sign().to_vector<int64_t>(), (std::vector<int64_t>{-1, -1}));
}

// ---- affine, powf, elu -------------------------------------------------------------------

TEST(Affine, FloatDTypesAndLayouts) {
  const double mul = 1.5, add = -2.25;
  for (DType dt : kFloats) {
    for (const auto& in : layouts(dt, [](size_t n, uint64_t s) { return uniform(n, s, -10, 10); })) {
      V want(in.values.size());
      for (size_t i = 0; i < want.size(); ++i) want[i] = in.values[i] * mul + add;
      expect_values(in.t.affine(mul, add), in.t.shape(), dt, want, ulps_for(dt), atol_for(dt),
                    ctx_of("affine", dt, in.name));
    }
  }
}

// Integers compute x*mul+add in double, then convert like a cast: truncate toward
// zero and saturate at the dtype's range.
TEST(Affine, IntegerDTypesTruncateAndSaturate) {
  const double mul = 2.5, add = -3.0;
  for (DType dt : kInts) {
    auto gen = int_gen(dt, 200);
    for (const auto& in : layouts(dt, gen)) {
      V want(in.values.size());
      for (size_t i = 0; i < want.size(); ++i) want[i] = ref::affine(dt, in.values[i], mul, add);
      expect_values(in.t.affine(mul, add), in.t.shape(), dt, want, 0, 0, ctx_of("affine", dt, in.name));
    }
  }
}

TEST(Affine, HandComputedIntegerCases) {
  EXPECT_EQ(make({200, 3}, Shape{2}, DType::U8).affine(2, 0).to_vector<uint8_t>(),
            (std::vector<uint8_t>{255, 6}));
  EXPECT_EQ(make({3}, Shape{1}, DType::U8).affine(-1, 0).to_vector<uint8_t>(), (std::vector<uint8_t>{0}));
  EXPECT_EQ(make({-3, 3}, Shape{2}, DType::I32).affine(0.5, 0).to_vector<int32_t>(),
            (std::vector<int32_t>{-1, 1}));
  EXPECT_EQ(make({7}, Shape{1}, DType::I64).affine(1, 0.5).to_vector<int64_t>(), (std::vector<int64_t>{7}));
  EXPECT_EQ(make({4e9}, Shape{1}, DType::U32).affine(2, 0).to_vector<uint32_t>(),
            (std::vector<uint32_t>{4294967295u}));
}

TEST(Powf, FloatDTypesAndLayouts) {
  for (double e : {2.5, 2.0, -1.0, 0.0}) {
    for (DType dt : kFloats) {
      for (const auto& in : layouts(dt, [](size_t n, uint64_t s) { return uniform(n, s, 0.1, 3); })) {
        V want(in.values.size());
        for (size_t i = 0; i < want.size(); ++i) want[i] = std::pow(in.values[i], e);
        expect_values(in.t.powf(e), in.t.shape(), dt, want, ulps_for(dt), atol_for(dt),
                      ctx_of("powf " + std::to_string(e), dt, in.name));
      }
    }
  }
}

TEST(Powf, NegativeBases) {
  for (DType dt : kFloats) {
    expect_values(make({-3, -0.5}, Shape{2}, dt).powf(2.0), Shape{2}, dt, {9, 0.25}, 0, 0, "powf 2");
    expect_values(make({-4}, Shape{1}, dt).powf(0.5), Shape{1}, dt, {kNaN}, 0, 0, "powf 0.5 of -4");
  }
}

TEST(Elu, FloatDTypesAndLayouts) {
  const double alpha = 1.5;
  for (DType dt : kFloats) {
    for (const auto& in : layouts(dt, [](size_t n, uint64_t s) { return uniform(n, s, -4, 4); })) {
      V want(in.values.size());
      for (size_t i = 0; i < want.size(); ++i) want[i] = ref::elu(in.values[i], alpha);
      expect_values(in.t.elu(alpha), in.t.shape(), dt, want, ulps_for(dt), atol_for(dt),
                    ctx_of("elu", dt, in.name));
    }
  }
}

TEST(Elu, HandComputedValues) {
  // elu(-1, 2) = 2 (e^-1 - 1) = -1.2642411176571153; tiny inputs keep relative accuracy.
  expect_values(make({-1, 0, 3, -1e-7}, Shape{4}, DType::F32).elu(2.0), Shape{4}, DType::F32,
                {-1.2642411176571153, 0, 3, 2 * -9.999999500000017e-08}, 2, 0, "elu");
}

// ---- binary and cmp --------------------------------------------------------------------

// An operand of a binary-shaped op: its tensor and logical values, any shape that
// broadcasts to the output.
struct Operand {
  Tensor t;
  V values;
};

// The values of `a` as seen at each element of `out` under NumPy broadcasting.
V broadcast_to(const Operand& a, const Shape& out) {
  const auto& ad = a.t.dims();
  const auto& od = out.dims();
  size_t n = out.elem_count(), extra = od.size() - ad.size();
  V v(n);
  std::vector<size_t> idx(od.size());
  for (size_t i = 0; i < n; ++i) {
    size_t rem = i;
    for (size_t k = od.size(); k-- > 0;) idx[k] = rem % od[k], rem /= od[k];
    size_t src = 0;
    for (size_t k = 0; k < ad.size(); ++k) src = src * ad[k] + (ad[k] == 1 ? 0 : idx[k + extra]);
    v[i] = a.values[src];
  }
  return v;
}

// Operand pairs covering the layouts a binary op meets: same shapes, transposed,
// narrowed, row / column / both-sides broadcasts, rank 0, 3-D, empty, large.
struct Pair {
  std::string name;
  Operand lhs, rhs;
  Shape out;
};

std::vector<Pair> pairs(DType dt, const std::function<V(size_t, uint64_t)>& gen) {
  auto ins = layouts(dt, gen);  // contiguous, transposed, narrowed, broadcast, size1, scalar, empty, ...
  auto get = [&](const std::string& name) -> Operand {
    for (auto& in : ins)
      if (in.name == name) return {in.t, in.values};
    return {};
  };
  auto plain = [&](const Shape& s, uint64_t seed) -> Operand {
    V v = round_to(dt, gen(s.elem_count(), seed));
    return {make(v, s, dt), v};
  };
  std::vector<Pair> p;
  p.push_back({"contiguous op contiguous", get("contiguous [4,5]"), plain(Shape{4, 5}, 11), Shape{4, 5}});
  p.push_back({"transposed op contiguous", get("transposed [4,5]"), plain(Shape{4, 5}, 12), Shape{4, 5}});
  p.push_back({"narrowed op transposed", get("narrowed [4,5]"), get("transposed [4,5]"), Shape{4, 5}});
  p.push_back({"contiguous op row [5]", get("contiguous [4,5]"), plain(Shape{5}, 13), Shape{4, 5}});
  p.push_back({"column [4,1] op contiguous", plain(Shape{4, 1}, 14), get("contiguous [4,5]"), Shape{4, 5}});
  p.push_back({"column [4,1] op row [1,5]", plain(Shape{4, 1}, 15), plain(Shape{1, 5}, 16), Shape{4, 5}});
  p.push_back({"broadcast view op narrowed", get("broadcast [4,5]"), get("narrowed [4,5]"), Shape{4, 5}});
  p.push_back({"contiguous op scalar []", get("contiguous [4,5]"), get("scalar []"), Shape{4, 5}});
  p.push_back({"size1 op size1", get("size1 [1,1]"), plain(Shape{1}, 17), Shape{1, 1}});
  p.push_back({"3-D [2,3,4] op [3,1]", plain(Shape{2, 3, 4}, 18), plain(Shape{3, 1}, 19), Shape{2, 3, 4}});
  p.push_back(
      {"permuted op permuted-shaped", get("permuted [4,2,3]"), plain(Shape{4, 2, 3}, 20), Shape{4, 2, 3}});
  p.push_back({"empty [0,5] op row [5]", get("empty [0,5]"), plain(Shape{5}, 21), Shape{0, 5}});
  p.push_back(
      {"large transposed op row", get("large transposed [257,300]"), plain(Shape{300}, 22), Shape{257, 300}});
  return p;
}

// u8/u32 products and differences wrap; i32/i64 ones stay in range.
V gen_for(DType dt, size_t n, uint64_t seed) {
  return is_float(dt) ? uniform(n, seed, -8, 8) : int_gen(dt, 60)(n, seed);
}

TEST(Binary, EveryOpDTypeAndLayoutMatchesFloat64) {
  for (size_t o = 0; o < kNumBinaryOps; ++o) {
    BinaryOp op = BinaryOp(o);
    for (DType dt : kAllDTypes) {
      for (const auto& p : pairs(dt, [&](size_t n, uint64_t s) { return gen_for(dt, n, s); })) {
        Tensor y = p.lhs.t.binary(op, p.rhs.t);
        V a = broadcast_to(p.lhs, p.out), b = broadcast_to(p.rhs, p.out), want(a.size());
        for (size_t i = 0; i < want.size(); ++i) want[i] = ref::binary(op, dt, a[i], b[i]);
        // one rounding of an exact (or correctly rounded) result
        expect_values(y, p.out, dt, want, is_float(dt) ? 1.0 : 0.0, 0,
                      ctx_of(std::string(binary_op_name(op)), dt, p.name));
      }
    }
  }
}

TEST(Binary, IntegerDivisionTruncatesAndDefinesZeroDivisor) {
  Tensor a = Tensor::from_vector<int32_t>({7, -7, 7, 5, std::numeric_limits<int32_t>::min(), 0}, Shape{6});
  Tensor b = Tensor::from_vector<int32_t>({2, 2, -2, 0, -1, 0}, Shape{6});
  EXPECT_EQ(a.div(b).to_vector<int32_t>(),
            (std::vector<int32_t>{3, -3, -3, 0, std::numeric_limits<int32_t>::min(), 0}));
  Tensor u = Tensor::from_vector<uint8_t>({9, 9, 255}, Shape{3});
  Tensor v = Tensor::from_vector<uint8_t>({0, 4, 1}, Shape{3});
  EXPECT_EQ(u.div(v).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 2, 255}));
  Tensor l = Tensor::from_vector<int64_t>({std::numeric_limits<int64_t>::min(), 1}, Shape{2});
  Tensor m = Tensor::from_vector<int64_t>({-1, 0}, Shape{2});
  EXPECT_EQ(l.div(m).to_vector<int64_t>(), (std::vector<int64_t>{std::numeric_limits<int64_t>::min(), 0}));
  Tensor w = Tensor::from_vector<uint32_t>({10}, Shape{1});
  EXPECT_EQ(w.div(Tensor::from_vector<uint32_t>({0}, Shape{1})).to_vector<uint32_t>(),
            (std::vector<uint32_t>{0}));
}

TEST(Binary, IntegerArithmeticWraps) {
  Tensor a = Tensor::from_vector<uint8_t>({250, 3, 16}, Shape{3});
  Tensor b = Tensor::from_vector<uint8_t>({10, 5, 16}, Shape{3});
  EXPECT_EQ(a.add(b).to_vector<uint8_t>(), (std::vector<uint8_t>{4, 8, 32}));
  EXPECT_EQ(a.sub(b).to_vector<uint8_t>(), (std::vector<uint8_t>{240, 254, 0}));
  EXPECT_EQ(a.mul(b).to_vector<uint8_t>(), (std::vector<uint8_t>{196, 15, 0}));
  const int32_t mx = std::numeric_limits<int32_t>::max(), mn = std::numeric_limits<int32_t>::min();
  Tensor c = Tensor::from_vector<int32_t>({mx, mn}, Shape{2});
  Tensor one = Tensor::from_vector<int32_t>({1}, Shape{1});
  EXPECT_EQ(c.add(one).to_vector<int32_t>(), (std::vector<int32_t>{mn, mn + 1}));
  EXPECT_EQ(c.sub(one).to_vector<int32_t>(), (std::vector<int32_t>{mx - 1, mx}));
}

// maximum / minimum propagate NaN from either side (PyTorch's choice).
TEST(Binary, MaximumAndMinimumPropagateNaN) {
  for (DType dt : kFloats) {
    Tensor a = make({kNaN, 1, kNaN, -kInf, 2}, Shape{5}, dt);
    Tensor b = make({1, kNaN, kNaN, 3, kInf}, Shape{5}, dt);
    expect_values(a.maximum(b), Shape{5}, dt, {kNaN, kNaN, kNaN, 3, kInf}, 0, 0, "maximum NaN");
    expect_values(a.minimum(b), Shape{5}, dt, {kNaN, kNaN, kNaN, -kInf, 2}, 0, 0, "minimum NaN");
  }
}

TEST(Binary, FloatDivisionByZero) {
  for (DType dt : kFloats) {
    Tensor a = make({1, -1, 0}, Shape{3}, dt);
    expect_values(a.div(make({0}, Shape{1}, dt)), Shape{3}, dt, {kInf, -kInf, kNaN}, 0, 0, "div by 0");
  }
}

TEST(Binary, BroadcastHelpersAreTheSameOps) {
  Tensor a = make({1, 2, 3, 4, 5, 6}, Shape{2, 3}, DType::F32);
  Tensor b = make({10, 20, 30}, Shape{3}, DType::F32);
  EXPECT_EQ(a.broadcast_add(b).to_vector<float>(), (std::vector<float>{11, 22, 33, 14, 25, 36}));
  EXPECT_EQ(a.broadcast_sub(b).to_vector<float>(), (std::vector<float>{-9, -18, -27, -6, -15, -24}));
  EXPECT_EQ(a.broadcast_mul(b).to_vector<float>(), (std::vector<float>{10, 40, 90, 40, 100, 180}));
  EXPECT_EQ(b.broadcast_div(a).to_vector<float>(), (std::vector<float>{10, 10, 10, 2.5, 4, 5}));
}

TEST(Cmp, EveryOpDTypeAndLayoutMatchesFloat64) {
  for (size_t o = 0; o < kNumCmpOps; ++o) {
    CmpOp op = CmpOp(o);
    for (DType dt : kAllDTypes) {
      V set = is_float(dt) ? V{-1.5, -0.5, 0, 0.5, 1.5, kNaN} : V{0, 1, 2, 3, 200};
      for (const auto& p : pairs(dt, [&](size_t n, uint64_t s) { return picks(n, s, set); })) {
        Tensor y = p.lhs.t.cmp(op, p.rhs.t);
        V a = broadcast_to(p.lhs, p.out), b = broadcast_to(p.rhs, p.out), want(a.size());
        for (size_t i = 0; i < want.size(); ++i) want[i] = ref::cmp(op, a[i], b[i]);
        expect_values(y, p.out, DType::U8, want, 0, 0, ctx_of(std::string(cmp_op_name(op)), dt, p.name));
      }
    }
  }
}

TEST(Cmp, HandComputedWithNaNAndSignedZero) {
  Tensor a = make({kNaN, -0.0, 1, 2}, Shape{4}, DType::F32);
  Tensor b = make({kNaN, 0.0, 2, 1}, Shape{4}, DType::F32);
  EXPECT_EQ(a.eq(b).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 1, 0, 0}));
  EXPECT_EQ(a.ne(b).to_vector<uint8_t>(), (std::vector<uint8_t>{1, 0, 1, 1}));
  EXPECT_EQ(a.lt(b).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 0, 1, 0}));
  EXPECT_EQ(a.le(b).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 1, 1, 0}));
  EXPECT_EQ(a.gt(b).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 0, 0, 1}));
  EXPECT_EQ(a.ge(b).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 1, 0, 1}));
  // unsigned compare is unsigned: 200 > 3 in u8
  EXPECT_EQ(make({200}, Shape{1}, DType::U8).gt(make({3}, Shape{1}, DType::U8)).to_vector<uint8_t>(),
            (std::vector<uint8_t>{1}));
}

// ---- where_cond ------------------------------------------------------------------------

TEST(Where, EveryConditionAndValueDTypeAndLayout) {
  for (DType cdt : kInts) {
    V cset = cdt == DType::U8 || cdt == DType::U32 ? V{0, 1, 255} : V{0, 1, -1};
    for (DType dt : kAllDTypes) {
      auto cond_ins = layouts(cdt, [&](size_t n, uint64_t s) { return picks(n, s, cset); });
      auto val_ins = layouts(dt, [&](size_t n, uint64_t s) { return gen_for(dt, n, s); });
      auto val_ins2 = layouts(dt, [&](size_t n, uint64_t s) { return gen_for(dt, n, s + 100); });
      auto row = [&](uint64_t seed) -> Operand {
        V v = round_to(dt, gen_for(dt, 5, seed));
        return {make(v, Shape{5}, dt), v};
      };
      // (cond, t, f) triples: the three in the same layout; condition broadcast; values broadcast.
      struct Triple {
        std::string name;
        Operand c, t, f;
        Shape out;
      };
      auto op = [](const Input& in) { return Operand{in.t, in.values}; };
      std::vector<Triple> triples;
      for (size_t k = 0; k < cond_ins.size(); ++k) {
        triples.push_back(
            {cond_ins[k].name, op(cond_ins[k]), op(val_ins[k]), op(val_ins2[k]), cond_ins[k].t.shape()});
      }
      V c41 = round_to(cdt, picks(4, 30, cset));
      triples.push_back({"cond [4,1] t row [5] f transposed",
                         {make(c41, Shape{4, 1}, cdt), c41},
                         row(31),
                         op(val_ins[1]),
                         Shape{4, 5}});
      triples.push_back(
          {"cond scalar t narrowed f row [5]", op(cond_ins[5]), op(val_ins[2]), row(32), Shape{4, 5}});
      for (const auto& tr : triples) {
        Tensor y = tr.c.t.where_cond(tr.t.t, tr.f.t);
        V c = broadcast_to(tr.c, tr.out), a = broadcast_to(tr.t, tr.out), b = broadcast_to(tr.f, tr.out);
        V want(c.size());
        for (size_t i = 0; i < want.size(); ++i) want[i] = c[i] != 0 ? a[i] : b[i];
        expect_values(y, tr.out, dt, want, 0, 0,
                      "where cond " + std::string(dtype_name(cdt)) + " " + ctx_of("", dt, tr.name));
      }
    }
  }
}

TEST(Where, HandComputed) {
  Tensor c = Tensor::from_vector<int64_t>({0, -3, 1}, Shape{3});
  Tensor t = make({1, 2, 3}, Shape{3}, DType::F16);
  Tensor f = make({-1}, Shape{1}, DType::F16);
  expect_values(c.where_cond(t, f), Shape{3}, DType::F16, {-1, 2, 3}, 0, 0, "where");
}

// ---- empty tensors and dtype propagation ------------------------------------------------

TEST(Elementwise, EmptyInputsGiveEmptyOutputsOfTheRightDType) {
  Tensor e = make({}, Shape{0, 3}, DType::F32);
  EXPECT_EQ(e.exp().shape(), (Shape{0, 3}));
  EXPECT_EQ(e.affine(2, 1).shape(), (Shape{0, 3}));
  EXPECT_EQ(e.add(make({1, 2, 3}, Shape{3}, DType::F32)).shape(), (Shape{0, 3}));
  Tensor c = e.lt(make({1}, Shape{1}, DType::F32));
  EXPECT_EQ(c.shape(), (Shape{0, 3}));
  EXPECT_EQ(c.dtype(), DType::U8);
  EXPECT_EQ(e.to_dtype(DType::I64).dtype(), DType::I64);
  Tensor w = make({}, Shape{0}, DType::U8)
                 .where_cond(make({1}, Shape{1}, DType::F64), make({2}, Shape{1}, DType::F64));
  EXPECT_EQ(w.shape(), (Shape{0}));
  EXPECT_EQ(w.dtype(), DType::F64);
}

TEST(Elementwise, OutputsDoNotAliasInputs) {
  Tensor a = make({1, 2}, Shape{2}, DType::F32);
  Tensor b = a.affine(1, 0);
  b.fill_(Scalar(9.0));
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{1, 2}));
}

// ---- errors ------------------------------------------------------------------------------

TEST(Errors, UndefinedTensors) {
  Tensor u, x = make({1}, Shape{1}, DType::F32);
  expect_error([&] { u.exp(); }, ErrorKind::InvalidArgument, "[exp] tensor is an undefined tensor");
  expect_error([&] { u.affine(1, 0); }, ErrorKind::InvalidArgument, "[affine] tensor is an undefined");
  expect_error([&] { u.powf(2); }, ErrorKind::InvalidArgument, "[powf] tensor is an undefined");
  expect_error([&] { u.elu(1); }, ErrorKind::InvalidArgument, "[elu] tensor is an undefined");
  expect_error([&] { u.add(x); }, ErrorKind::InvalidArgument, "[add] lhs is an undefined tensor");
  expect_error([&] { x.mul(u); }, ErrorKind::InvalidArgument, "[mul] rhs is an undefined tensor");
  expect_error([&] { x.eq(u); }, ErrorKind::InvalidArgument, "[eq] rhs is an undefined tensor");
  expect_error([&] { u.where_cond(x, x); }, ErrorKind::InvalidArgument,
               "[where_cond] condition is an undefined");
  expect_error([&] { make({1}, Shape{1}, DType::U8).where_cond(u, x); }, ErrorKind::InvalidArgument,
               "[where_cond] on_true is an undefined");
  expect_error([&] { make({1}, Shape{1}, DType::U8).where_cond(x, u); }, ErrorKind::InvalidArgument,
               "[where_cond] on_false is an undefined");
  expect_error([&] { u.to_dtype(DType::F16); }, ErrorKind::InvalidArgument,
               "[to_dtype] tensor is an undefined");
}

TEST(Errors, DeviceMismatch) {
  Tensor a = make({1, 2}, Shape{2}, DType::F32);
  Tensor g = on_fake_gpu(a);
  expect_error([&] { a.add(g); }, ErrorKind::DeviceMismatch, "[add] [2] f32 on cpu and [2] f32 on gpu:0");
  expect_error([&] { g.ge(a); }, ErrorKind::DeviceMismatch, "[ge] [2] f32 on gpu:0 and [2] f32 on cpu");
  Tensor c = make({1, 0}, Shape{2}, DType::U8);
  expect_error([&] { c.where_cond(g, a); }, ErrorKind::DeviceMismatch, "[where_cond]");
  expect_error([&] { c.where_cond(a, g); }, ErrorKind::DeviceMismatch, "gpu:0");
}

TEST(Binary, MixedDTypesPromote) {
  // f32 with f64 computes in f64 (promote_types; its table is tested in test_api_operators.cpp).
  Tensor a = make({1, 2, 3, 4, 5, 6}, Shape{2, 3}, DType::F32);
  Tensor b = make({0.1, 0.2, 0.3}, Shape{3}, DType::F64);
  Tensor s = a.add(b);
  EXPECT_EQ(s.dtype(), DType::F64);
  EXPECT_EQ(s.to_vector<double>(),
            (std::vector<double>{1 + 0.1, 2 + 0.2, 3 + 0.3, 4 + 0.1, 5 + 0.2, 6 + 0.3}));
  EXPECT_EQ(a.lt(b).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 0, 0, 0, 0, 0}));
  Tensor c = make({1, 0, 1}, Shape{3}, DType::U8);
  Tensor w = c.where_cond(a, b);
  EXPECT_EQ(w.dtype(), DType::F64);
  EXPECT_EQ(w.to_vector<double>(), (std::vector<double>{1, 0.2, 3, 4, 0.2, 6}));
}

TEST(Errors, ShapesNotBroadcastable) {
  Tensor a = make({1, 2, 3, 4, 5, 6}, Shape{2, 3}, DType::F32);
  Tensor b = make({1, 2, 3, 4}, Shape{4}, DType::F32);
  expect_error([&] { a.add(b); }, ErrorKind::ShapeMismatch,
               "[add] lhs [2,3] f32 rhs [4] f32: shapes are not broadcastable");
  expect_error([&] { a.maximum(b); }, ErrorKind::ShapeMismatch, "[maximum] lhs [2,3] f32 rhs [4] f32");
  expect_error([&] { b.ne(a); }, ErrorKind::ShapeMismatch, "[ne] lhs [4] f32 rhs [2,3] f32");
  Tensor c = make({1, 0}, Shape{2, 1}, DType::U8);
  expect_error(
      [&] { c.where_cond(a, b); }, ErrorKind::ShapeMismatch,
      "[where_cond] condition [2,1] u8 on_true [2,3] f32 on_false [4] f32: shapes are not broadcastable");
}

TEST(Errors, UnsupportedDTypes) {
  Tensor i = make({1, 2}, Shape{2}, DType::I32);
  expect_error([&] { i.exp(); }, ErrorKind::UnsupportedDType,
               "[exp] tensor [2] i32: dtype i32 is not supported");
  const UnaryOp float_only[] = {UnaryOp::Exp,   UnaryOp::Log,  UnaryOp::Sin,  UnaryOp::Cos,
                                UnaryOp::Recip, UnaryOp::Sqrt, UnaryOp::Gelu, UnaryOp::GeluErf,
                                UnaryOp::Erf,   UnaryOp::Silu, UnaryOp::Tanh, UnaryOp::Sigmoid};
  for (DType dt : kInts) {
    Tensor x = make({1}, Shape{1}, dt);
    for (UnaryOp op : float_only) {
      expect_error([&] { x.unary(op); }, ErrorKind::UnsupportedDType,
                   "[" + std::string(unary_op_name(op)) + "] tensor [1] " + std::string(dtype_name(dt)));
    }
    expect_error([&] { x.powf(2); }, ErrorKind::UnsupportedDType,
                 "[powf] tensor [1] " + std::string(dtype_name(dt)));
    expect_error([&] { x.elu(1); }, ErrorKind::UnsupportedDType,
                 "[elu] tensor [1] " + std::string(dtype_name(dt)));
  }
  Tensor f = make({1}, Shape{1}, DType::F32);
  expect_error([&] { f.where_cond(f, f); }, ErrorKind::UnsupportedDType,
               "[where_cond] condition [1] f32: dtype f32 is not supported");
  Tensor h = make({1}, Shape{1}, DType::BF16);
  expect_error([&] { h.where_cond(f, f); }, ErrorKind::UnsupportedDType, "condition [1] bf16");
}

TEST(Errors, UnknownOpEnumValues) {
  Tensor x = make({1}, Shape{1}, DType::F32);
  expect_error([&] { x.unary(UnaryOp(200)); }, ErrorKind::InvalidArgument, "[unary] unknown unary op 200");
  expect_error([&] { x.binary(BinaryOp(99), x); }, ErrorKind::InvalidArgument,
               "[binary] unknown binary op 99");
  expect_error([&] { x.cmp(CmpOp(42), x); }, ErrorKind::InvalidArgument, "[cmp] unknown comparison op 42");
}

}  // namespace
}  // namespace wick
