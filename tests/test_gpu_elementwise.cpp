// GPU elementwise parity: every elementwise op x every dtype it applies to x every
// layout (contiguous, transposed, broadcast, narrowed, size-1 dims, zero-size) on
// gpu:0 against the CPU backend. Integer ops, casts, copies and where are exact;
// float math is held to a bound stated per dtype below. Skips (with the reason)
// when no GPU backend or device is present.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "wick/check.h"
#include "wick/tensor.h"

namespace wick {
namespace {

using check::LayoutKind;

const LayoutKind kLayouts[] = {LayoutKind::Contiguous, LayoutKind::Transposed, LayoutKind::Broadcast,
                               LayoutKind::Narrowed,   LayoutKind::Size1,      LayoutKind::Empty};

#define REQUIRE_GPU()                                                                                      \
  do {                                                                                                     \
    std::string why_;                                                                                      \
    if (!check::device_present(Device::gpu(0), &why_)) GTEST_SKIP() << "no GPU backend/device: " << why_; \
  } while (0)

Shape shape_for(LayoutKind k) {
  switch (k) {
    case LayoutKind::Size1:
      return Shape{1, 37, 1};
    case LayoutKind::Empty:
      return Shape{0, 5};
    case LayoutKind::Transposed:
      return Shape{19, 33};
    default:
      return Shape{23, 41};
  }
}

// Values for a shape: seeded, within [lo, hi); constant along dim 0 for Broadcast
// (the harness builds that layout with a stride-0 dim).
std::vector<double> values_for(const Shape& s, LayoutKind k, uint64_t seed, double lo, double hi) {
  std::vector<double> v = check::random_values(s.elem_count(), seed, lo, hi);
  if (k == LayoutKind::Broadcast && s.rank() > 0 && s[0] > 0) {
    size_t row = s.elem_count() / s[0];
    for (size_t i = row; i < v.size(); ++i) v[i] = v[i % row];
  }
  return v;
}

// Stated bounds for float math against the CPU: the GPU's libm (CUDA / ROCm
// device math) may differ from glibc by a few ulp in f32/f64; f16/bf16 compute in
// float and round once, so a float-ulp difference can flip one half-ulp rounding.
check::Tolerance math_tolerance(DType dt) {
  switch (dt) {
    case DType::F16:
      return check::Tolerance::close(1e-3, 2e-3);
    case DType::BF16:
      return check::Tolerance::close(8e-3, 1.6e-2);
    case DType::F32:
      return check::Tolerance::close(1e-6, 4e-6);
    case DType::F64:
      return check::Tolerance::close(1e-14, 1e-14);
    default:
      return check::Tolerance::exact_match();
  }
}

void expect_match(const Tensor& gpu, const Tensor& cpu, const check::Tolerance& tol,
                  const std::string& what) {
  ASSERT_EQ(gpu.device(), Device::gpu(0)) << what;
  ASSERT_EQ(gpu.dtype(), cpu.dtype()) << what;
  ASSERT_EQ(gpu.shape(), cpu.shape()) << what;
  check::CaseResult r = check::compare_values(gpu.to_f64_vector(), cpu.to_f64_vector(), tol);
  EXPECT_TRUE(r.pass) << what << ": " << r.detail;
}

std::string label(const char* op, DType dt, LayoutKind k) {
  return std::string(op) + " " + std::string(dtype_name(dt)) + " " + check::layout_kind_name(k);
}

check::Tolerance binary_tolerance(BinaryOp op, DType dt) {
  return op == BinaryOp::Pow && is_float(dt) ? math_tolerance(dt) : check::Tolerance::exact_match();
}

std::pair<double, double> range_for(DType dt) {
  if (dt == DType::U8) return {0, 15};
  if (dt == DType::U32) return {0, 60000};
  if (is_int(dt)) return {-60000, 60000};
  return {-2, 2};
}

// Runs `op` on the CPU and gpu:0 over the same input and compares.
template <class Op>
void check_unary_like(const char* name, DType dt, LayoutKind k, const check::Tolerance& tol, Op op,
                      uint64_t seed = 7) {
  Shape s = shape_for(k);
  auto [lo, hi] = range_for(dt);
  auto vals = values_for(s, k, seed, lo, hi);
  Tensor c = op(check::make_input(vals, s, dt, Device::cpu(), k));
  Tensor g = op(check::make_input(vals, s, dt, Device::gpu(0), k));
  expect_match(g, c, tol, label(name, dt, k));
}

TEST(GpuUnary, EveryOpDtypeAndLayoutMatchesTheCpu) {
  REQUIRE_GPU();
  for (size_t o = 0; o < kNumUnaryOps; ++o) {
    UnaryOp op = UnaryOp(o);
    for (DType dt : kAllDTypes) {
      if (is_int(dt) && !unary_op_allows_int(op)) continue;
      for (LayoutKind k : kLayouts) {
        check::Tolerance tol = is_int(dt) ? check::Tolerance::exact_match() : math_tolerance(dt);
        check_unary_like(std::string(unary_op_name(op)).c_str(), dt, k, tol,
                         [&](const Tensor& t) { return t.unary(op); });
      }
    }
  }
}

TEST(GpuAffine, EveryDtypeAndLayoutMatchesTheCpuExactly) {
  REQUIRE_GPU();
  for (DType dt : kAllDTypes)
    for (LayoutKind k : kLayouts)
      check_unary_like("affine", dt, k, check::Tolerance::exact_match(),
                       [](const Tensor& t) { return t.affine(1.5, -0.25); });
}

TEST(GpuPowfElu, FloatDtypesMatchTheCpu) {
  REQUIRE_GPU();
  for (DType dt : {DType::F16, DType::BF16, DType::F32, DType::F64})
    for (LayoutKind k : kLayouts) {
      check_unary_like("powf", dt, k, math_tolerance(dt), [](const Tensor& t) { return t.abs().powf(1.7); });
      check_unary_like("elu", dt, k, math_tolerance(dt), [](const Tensor& t) { return t.elu(0.7); });
    }
}

// Binary ops and comparisons: lhs laid out as k, rhs contiguous, and rhs as a
// broadcast row [41] against lhs [23,41].
TEST(GpuBinary, EveryOpDtypeAndLayoutMatchesTheCpu) {
  REQUIRE_GPU();
  for (DType dt : kAllDTypes) {
    auto [lo, hi] = range_for(dt);
    for (LayoutKind k : kLayouts) {
      Shape s = shape_for(k);
      auto a = values_for(s, k, 11, lo, hi);
      auto b = values_for(s, LayoutKind::Contiguous, 12, lo, hi);
      // Exercise equality: copy some lhs values into rhs.
      for (size_t i = 0; i < b.size(); i += 3) b[i] = a[i];
      for (size_t o = 0; o < kNumBinaryOps; ++o) {
        BinaryOp op = BinaryOp(o);
        auto run = [&](Device d) {
          return check::make_input(a, s, dt, d, k)
              .binary(op, check::make_input(b, s, dt, d, LayoutKind::Contiguous));
        };
        // Add/sub/mul/max/min are exact in every dtype; div rounds once like them; float pow
        // is the vendor's powf, within a few ulps of the C library's.
        expect_match(run(Device::gpu(0)), run(Device::cpu()), binary_tolerance(op, dt),
                     label(std::string(binary_op_name(op)).c_str(), dt, k));
      }
      for (size_t o = 0; o < kNumCmpOps; ++o) {
        CmpOp op = CmpOp(o);
        auto run = [&](Device d) {
          return check::make_input(a, s, dt, d, k)
              .cmp(op, check::make_input(b, s, dt, d, LayoutKind::Contiguous));
        };
        expect_match(run(Device::gpu(0)), run(Device::cpu()), check::Tolerance::exact_match(),
                     label(std::string(cmp_op_name(op)).c_str(), dt, k));
      }
    }
    // Broadcast of a row and of a column.
    Shape s{23, 40};
    auto a = values_for(s, LayoutKind::Contiguous, 13, lo, hi);
    auto row = values_for(Shape{40}, LayoutKind::Contiguous, 14, lo, hi);
    auto col = values_for(Shape{23, 1}, LayoutKind::Contiguous, 15, lo, hi);
    for (size_t o = 0; o < kNumBinaryOps; ++o) {
      BinaryOp op = BinaryOp(o);
      for (Device d : {Device::gpu(0)}) {
        Tensor g1 = Tensor::from_vector(a, s).to_dtype(dt).to_device(d).binary(
            op, Tensor::from_vector(row, Shape{40}).to_dtype(dt).to_device(d));
        Tensor c1 = Tensor::from_vector(a, s).to_dtype(dt).binary(
            op, Tensor::from_vector(row, Shape{40}).to_dtype(dt));
        expect_match(g1, c1, binary_tolerance(op, dt), "row broadcast " + std::string(dtype_name(dt)));
        Tensor g2 = Tensor::from_vector(col, Shape{23, 1})
                        .to_dtype(dt)
                        .to_device(d)
                        .binary(op, Tensor::from_vector(a, s).to_dtype(dt).to_device(d));
        Tensor c2 = Tensor::from_vector(col, Shape{23, 1})
                        .to_dtype(dt)
                        .binary(op, Tensor::from_vector(a, s).to_dtype(dt));
        expect_match(g2, c2, binary_tolerance(op, dt), "column broadcast " + std::string(dtype_name(dt)));
      }
    }
  }
}

TEST(GpuWhere, EveryConditionAndValueDtypeMatchesTheCpuExactly) {
  REQUIRE_GPU();
  for (DType cond_dt : {DType::U8, DType::U32, DType::I32, DType::I64})
    for (DType dt : kAllDTypes)
      for (LayoutKind k : kLayouts) {
        Shape s = shape_for(k);
        auto c = values_for(s, k, 21, 0, 2);  // 0 or 1 after truncation
        auto t = values_for(s, LayoutKind::Contiguous, 22, -50, 50);
        auto f = values_for(s, LayoutKind::Contiguous, 23, -50, 50);
        auto run = [&](Device d) {
          return check::make_input(c, s, cond_dt, d, k)
              .where_cond(check::make_input(t, s, dt, d, LayoutKind::Contiguous),
                          check::make_input(f, s, dt, d, LayoutKind::Contiguous));
        };
        expect_match(run(Device::gpu(0)), run(Device::cpu()), check::Tolerance::exact_match(),
                     label(("where " + std::string(dtype_name(cond_dt))).c_str(), dt, k));
      }
}

TEST(GpuCast, EveryPairAndLayoutMatchesTheCpuExactly) {
  REQUIRE_GPU();
  for (DType from : kAllDTypes)
    for (DType to : kAllDTypes)
      for (LayoutKind k : kLayouts)
        check_unary_like(("cast to " + std::string(dtype_name(to))).c_str(), from, k,
                         check::Tolerance::exact_match(), [&](const Tensor& t) { return t.to_dtype(to); });
}

TEST(GpuCast, SpecialValuesSaturateAndRoundLikeTheCpu) {
  REQUIRE_GPU();
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> v = {0.0,
                           -0.0,
                           0.5,
                           -0.5,
                           1.5,
                           2.5,
                           -2.5,
                           255.5,
                           256.0,
                           -1.0,
                           65504.0,
                           65520.0,
                           1e10,
                           -1e10,
                           3e38,
                           1e-8,
                           6e-8,
                           3e-8,
                           1e-40,
                           inf,
                           -inf,
                           nan,
                           4294967296.0,
                           -2147483649.0,
                           1.00048828125,
                           1.0009765625,
                           9.2233720368547758e18,
                           -9.2233720368547758e18};
  Shape s{v.size()};
  for (DType from : {DType::F64, DType::F32, DType::F16, DType::BF16})
    for (DType to : kAllDTypes) {
      Tensor c = Tensor::from_vector(v, s).to_dtype(from).to_dtype(to);
      Tensor g = Tensor::from_vector(v, s).to_dtype(from).to_device(Device::gpu(0)).to_dtype(to);
      expect_match(g, c, check::Tolerance::exact_match(),
                   "cast " + std::string(dtype_name(from)) + " -> " + std::string(dtype_name(to)));
    }
  // f64 -> f16 rounds once: 1 + 2^-11 + 2^-40 is above the halfway point.
  Tensor h = Tensor::from_vector(std::vector<double>{1.0 + 0x1p-11 + 0x1p-40}, Shape{1})
                 .to_device(Device::gpu(0))
                 .to_dtype(DType::F16);
  EXPECT_EQ(h.to_f64_vector()[0], 1.0 + 0x1p-10);
}

TEST(GpuCopy, StridedCopiesOfEveryLayoutAreExact) {
  REQUIRE_GPU();
  for (DType dt : kAllDTypes)
    for (LayoutKind k : kLayouts)
      check_unary_like("copy", dt, k, check::Tolerance::exact_match(),
                       [](const Tensor& t) { return t.copy(); });
  // A batched transpose (tiled kernel) and a permutation (general strided kernel).
  for (DType dt : kAllDTypes) {
    Shape s{3, 45, 70};
    auto vals = check::random_values(s.elem_count(), 5, -100, 100);
    auto run = [&](Device d, bool perm) {
      Tensor t = Tensor::from_vector(vals, s).to_dtype(dt).to_device(d);
      return perm ? t.permute({2, 0, 1}).copy() : t.transpose(1, 2).copy();
    };
    expect_match(run(Device::gpu(0), false), run(Device::cpu(), false), check::Tolerance::exact_match(),
                 "batched transpose " + std::string(dtype_name(dt)));
    expect_match(run(Device::gpu(0), true), run(Device::cpu(), true), check::Tolerance::exact_match(),
                 "permute " + std::string(dtype_name(dt)));
  }
}

}  // namespace
}  // namespace wick
