// Fused nn ops on the CPU: softmax / log-softmax over the last dim, rms_norm,
// layer_norm and the three rotary embeddings. Hand-computed cases and f64
// reference loops written here for every float dtype, strided and offset inputs,
// optional alpha/beta, cos/sin tables longer than T and per batch, and every
// error path.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "mmconv_test_helpers.h"

namespace wick {
namespace {

using namespace mmtest;

const double kInf = std::numeric_limits<double>::infinity();

// The values of a (rows, cols) tensor stored transposed and viewed back (a strided input).
Tensor transposed_view(const Values& v, size_t rows, size_t cols, DType dt) {
  Values st(v.size());
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j) st[j * rows + i] = v[i * cols + j];
  return make(st, {cols, rows}, dt).t();
}

Values ref_softmax(const Values& x, size_t cols, bool log) {
  Values out;
  for (size_t r = 0; r < x.size() / cols; ++r) {
    double m = -kInf, s = 0;
    for (size_t i = 0; i < cols; ++i) m = std::max(m, x[r * cols + i]);
    for (size_t i = 0; i < cols; ++i) s += std::exp(x[r * cols + i] - m);
    for (size_t i = 0; i < cols; ++i)
      out.push_back(log ? x[r * cols + i] - m - std::log(s) : std::exp(x[r * cols + i] - m) / s);
  }
  return out;
}

// --- softmax -------------------------------------------------------------------

TEST(Softmax, HandComputed) {
  for (DType dt : kFloatTypes) {
    EXPECT_EQ(nn::softmax_last_dim(make({0, 0, 5, 5}, {2, 2}, dt)).to_f64_vector(),
              (Values{0.5, 0.5, 0.5, 0.5}));
    Values y = nn::softmax_last_dim(make({0, std::log(3.0)}, {1, 2}, DType::F64)).to_f64_vector();
    EXPECT_NEAR(y[0], 0.25, 1e-15);
    EXPECT_NEAR(y[1], 0.75, 1e-15);
  }
}

TEST(Softmax, RandomEveryDtypeStridedAndOffset) {
  size_t rows = 7, cols = 33;
  for (DType dt : kFloatTypes) {
    Values xv = rand_values(rows * cols, 41, dt, -8.0, 8.0);
    for (bool log : {false, true}) {
      Values want = ref_softmax(xv, cols, log);
      Values tol = rounding_tol(want, dt, 2.0, 1e-14);
      auto f = log ? nn::log_softmax_last_dim : nn::softmax_last_dim;
      expect_close(f(make(xv, {rows, cols}, dt)), want, tol, std::string(dtype_name(dt)) + " contiguous");
      expect_close(f(transposed_view(xv, rows, cols, dt)), want, tol,
                   std::string(dtype_name(dt)) + " transposed");
      // offset: rows 1.. of a larger tensor
      Values big(cols, 0.0);
      big.insert(big.end(), xv.begin(), xv.end());
      expect_close(f(make(big, {rows + 1, cols}, dt).narrow(0, 1, rows)), want, tol,
                   std::string(dtype_name(dt)) + " narrowed");
    }
  }
}

TEST(Softmax, LargeLogitsAreStable) {
  Values y = nn::softmax_last_dim(make({1000, 1001}, {1, 2}, DType::F32)).to_f64_vector();
  double e = std::exp(1.0);
  EXPECT_NEAR(y[0], 1 / (1 + e), 1e-7);
  EXPECT_NEAR(y[1], e / (1 + e), 1e-7);
  Values ly = nn::log_softmax_last_dim(make({1000, 1001}, {1, 2}, DType::F32)).to_f64_vector();
  EXPECT_NEAR(ly[0], -std::log1p(e), 1e-6);
}

TEST(Softmax, MinusInfinityGetsZeroProbability) {
  EXPECT_EQ(nn::softmax_last_dim(make({-kInf, 0, -kInf}, {1, 3}, DType::F32)).to_f64_vector(),
            (Values{0, 1, 0}));
  Values ly = nn::log_softmax_last_dim(make({-kInf, 0}, {1, 2}, DType::F32)).to_f64_vector();
  EXPECT_EQ(ly[0], -kInf);
  EXPECT_EQ(ly[1], 0);
}

TEST(Softmax, NaNPoisonsItsRowOnly) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  Values y = nn::softmax_last_dim(make({1, nan, 0, 0}, {2, 2}, DType::F32)).to_f64_vector();
  EXPECT_TRUE(std::isnan(y[0]) && std::isnan(y[1]));
  EXPECT_EQ(y[2], 0.5);
}

TEST(Softmax, HigherRankAndEmpty) {
  Values xv = rand_values(2 * 3 * 5, 42, DType::F32);
  Tensor y = nn::softmax_last_dim(make(xv, {2, 3, 5}, DType::F32));
  EXPECT_EQ(y.shape(), (Shape{2, 3, 5}));
  Values want = ref_softmax(xv, 5, false);
  expect_close(y, want, rounding_tol(want, DType::F32, 2.0, 1e-14), "rank 3");
  EXPECT_EQ(nn::softmax_last_dim(Tensor::zeros({0, 4})).shape(), (Shape{0, 4}));
}

TEST(SoftmaxErrors, DtypeAndRank) {
  expect_error(
      [] {
        nn::softmax_last_dim(Tensor::zeros({2, 3}, DType::I64));
      },
      ErrorKind::UnsupportedDType, "[softmax_last_dim] input [2,3] i64: dtype i64 is not supported");
  expect_error([] { nn::log_softmax_last_dim(Tensor::zeros({}, DType::F32)); }, ErrorKind::DimOutOfRange,
               "[log_softmax_last_dim] input [] f32 has no last dim");
  expect_error([] { nn::softmax_last_dim(Tensor()); }, ErrorKind::InvalidArgument,
               "[softmax_last_dim] input is an undefined tensor");
}

// --- rms_norm / layer_norm -----------------------------------------------------

TEST(RmsNorm, HandComputed) {
  // rms of [3, 4] = sqrt(12.5)
  Values y = nn::rms_norm(make({3, 4}, {1, 2}, DType::F64), Tensor(), 0.0f).to_f64_vector();
  EXPECT_NEAR(y[0], 3 / std::sqrt(12.5), 1e-15);
  EXPECT_NEAR(y[1], 4 / std::sqrt(12.5), 1e-15);
  Values ya =
      nn::rms_norm(make({3, 4}, {1, 2}, DType::F64), make({2, -1}, {2}, DType::F64), 0.0f).to_f64_vector();
  EXPECT_NEAR(ya[0], 6 / std::sqrt(12.5), 1e-15);
  EXPECT_NEAR(ya[1], -4 / std::sqrt(12.5), 1e-15);
  // eps enters under the root: [1, 1] with eps 3 -> 1/sqrt(1 + 3) = 0.5
  EXPECT_EQ(nn::rms_norm(make({1, 1}, {1, 2}, DType::F32), Tensor(), 3.0f).to_f64_vector(),
            (Values{0.5, 0.5}));
}

Values ref_norm(const Values& x, size_t cols, const Values* alpha, const Values* beta, double eps,
                bool layer) {
  Values out;
  for (size_t r = 0; r < x.size() / cols; ++r) {
    const double* v = &x[r * cols];
    double mean = 0, ss = 0;
    if (layer) {
      for (size_t i = 0; i < cols; ++i) mean += v[i];
      mean /= double(cols);
    }
    for (size_t i = 0; i < cols; ++i) ss += (v[i] - mean) * (v[i] - mean);
    double inv = 1.0 / std::sqrt(ss / double(cols) + eps);
    for (size_t i = 0; i < cols; ++i) {
      double y = (v[i] - mean) * inv * (alpha ? (*alpha)[i] : 1.0);
      out.push_back(beta ? y + (*beta)[i] : y);
    }
  }
  return out;
}

TEST(RmsNorm, RandomEveryDtypeStrided) {
  size_t rows = 9, cols = 24;
  const float eps = 1e-5f;
  for (DType dt : kFloatTypes) {
    Values xv = rand_values(rows * cols, 43, dt, -3, 3), av = rand_values(cols, 44, dt, 0.5, 1.5);
    for (bool with_alpha : {false, true}) {
      Values want = ref_norm(xv, cols, with_alpha ? &av : nullptr, nullptr, double(eps), false);
      Tensor alpha = with_alpha ? make(av, {cols}, dt) : Tensor();
      expect_close(nn::rms_norm(transposed_view(xv, rows, cols, dt), alpha, eps), want,
                   rounding_tol(want, dt, 2.0, 1e-12), std::string(dtype_name(dt)));
    }
  }
}

TEST(LayerNorm, HandComputed) {
  // [1, 2, 3]: mean 2, biased variance 2/3
  double s = std::sqrt(1.5);
  Values y = nn::layer_norm(make({1, 2, 3}, {1, 3}, DType::F64), Tensor(), Tensor(), 0.0f).to_f64_vector();
  EXPECT_NEAR(y[0], -s, 1e-15);
  EXPECT_NEAR(y[1], 0, 1e-15);
  EXPECT_NEAR(y[2], s, 1e-15);
  Values yb = nn::layer_norm(make({1, 2, 3}, {1, 3}, DType::F64), make({2, 2, 2}, {3}, DType::F64),
                             make({1, 1, 1}, {3}, DType::F64), 0.0f)
                  .to_f64_vector();
  EXPECT_NEAR(yb[0], 1 - 2 * s, 1e-14);
  EXPECT_NEAR(yb[2], 1 + 2 * s, 1e-14);
}

TEST(LayerNorm, RandomEveryDtypeAlphaBetaOptional) {
  size_t rows = 6, cols = 31;
  const float eps = 1e-5f;
  for (DType dt : kFloatTypes) {
    // An offset (mean ~ 10) that a one-pass E[x^2] - mean^2 would lose precision on.
    Values xv = rand_values(rows * cols, 45, dt, 9, 11), av = rand_values(cols, 46, dt),
           bv = rand_values(cols, 47, dt);
    for (int mask = 0; mask < 4; ++mask) {
      bool ha = mask & 1, hb = mask & 2;
      Values want = ref_norm(xv, cols, ha ? &av : nullptr, hb ? &bv : nullptr, double(eps), true);
      Tensor y = nn::layer_norm(make(xv, {rows, cols}, dt), ha ? make(av, {cols}, dt) : Tensor(),
                                hb ? make(bv, {cols}, dt) : Tensor(), eps);
      // The f64 reference sees the rounded inputs; the output rounds once (relative to |x - mean| ~ 1).
      expect_close(y, want, rounding_tol(want, dt, 2.0, dt == DType::F64 ? 1e-12 : 1e-9),
                   std::string(dtype_name(dt)) + " mask " + std::to_string(mask));
    }
  }
}

TEST(NormErrors, ParamsAndEps) {
  expect_error(
      [] {
        nn::rms_norm(Tensor::zeros({2, 4}), Tensor::ones({3}), 1e-5f);
      },
      ErrorKind::ShapeMismatch,
      "[rms_norm] input [2,4] f32 alpha [3] f32: alpha must be 1-D with the last dim's length 4");
  expect_error(
      [] {
        nn::rms_norm(Tensor::zeros({2, 4}), Tensor::ones({1, 4}), 1e-5f);
      },
      ErrorKind::ShapeMismatch, "alpha must be 1-D");
  expect_error(
      [] {
        nn::rms_norm(Tensor::zeros({2, 4}), Tensor::ones({4}, DType::F64), 1e-5f);
      },
      ErrorKind::DTypeMismatch, "[rms_norm] input [2,4] f32 alpha [4] f64: dtypes differ");
  expect_error(
      [] {
        nn::layer_norm(Tensor::zeros({2, 4}), Tensor(), Tensor::ones({5}), 1e-5f);
      },
      ErrorKind::ShapeMismatch, "[layer_norm] input [2,4] f32 beta [5] f32: beta must be 1-D");
  expect_error(
      [] {
        nn::layer_norm(Tensor::zeros({2, 4}), Tensor(), Tensor(), -1.0f);
      },
      ErrorKind::InvalidArgument, "[layer_norm] eps -1 must be finite and >= 0");
  expect_error(
      [] {
        nn::rms_norm(Tensor::zeros({2, 4}, DType::U8), Tensor(), 1e-5f);
      },
      ErrorKind::UnsupportedDType, "[rms_norm] input [2,4] u8: dtype u8 is not supported");
}

// --- add_rms_norm ------------------------------------------------------------------

TEST(AddRmsNorm, HandComputed) {
  // [1, 2] + [2, 2] = [3, 4]; rms sqrt(12.5)
  auto [sum, y] = nn::add_rms_norm(make({1, 2}, {1, 2}, DType::F64), make({2, 2}, {1, 2}, DType::F64),
                                   make({2, -1}, {2}, DType::F64), 0.0f);
  EXPECT_EQ(sum.to_f64_vector(), (Values{3, 4}));
  Values yv = y.to_f64_vector();
  EXPECT_NEAR(yv[0], 6 / std::sqrt(12.5), 1e-15);
  EXPECT_NEAR(yv[1], -4 / std::sqrt(12.5), 1e-15);
}

// The sum is exactly add's; the norm is rms_norm's of that sum (rounded to the dtype).
TEST(AddRmsNorm, IsAddThenRmsNormEveryDtypeStrided) {
  size_t rows = 5, cols = 40;
  const float eps = 1e-5f;
  for (DType dt : kFloatTypes) {
    Values xv = rand_values(rows * cols, 61, dt, -3, 3), rv = rand_values(rows * cols, 62, dt, -3, 3);
    Values av = rand_values(cols, 63, dt, 0.5, 1.5);
    const Tensor x = transposed_view(xv, rows, cols, dt), r = make(rv, {rows, cols}, dt);
    for (bool with_alpha : {false, true}) {
      const Tensor alpha = with_alpha ? make(av, {cols}, dt) : Tensor();
      auto [sum, y] = nn::add_rms_norm(x, r, alpha, eps);
      const Values sv = x.add(r).to_f64_vector();
      EXPECT_EQ(sum.to_f64_vector(), sv) << dtype_name(dt);
      Values want = ref_norm(sv, cols, with_alpha ? &av : nullptr, nullptr, double(eps), false);
      expect_close(y, want, rounding_tol(want, dt, 2.0, 1e-12), std::string(dtype_name(dt)));
    }
  }
}

TEST(AddRmsNormErrors, ShapesAndDtypes) {
  expect_error(
      [] {
        nn::add_rms_norm(Tensor::zeros({2, 4}), Tensor::zeros({2, 3}), Tensor(), 1e-5f);
      },
      ErrorKind::ShapeMismatch, "[add_rms_norm] input [2,4] f32 residual [2,3] f32: shapes differ");
  expect_error(
      [] {
        nn::add_rms_norm(Tensor::zeros({2, 4}), Tensor::zeros({2, 4}, DType::F16), Tensor(), 1e-5f);
      },
      ErrorKind::DTypeMismatch, "[add_rms_norm] input [2,4] f32 residual [2,4] f16: dtypes differ");
  expect_error(
      [] {
        nn::add_rms_norm(Tensor::zeros({2, 4}), Tensor::zeros({2, 4}), Tensor::ones({3}), 1e-5f);
      },
      ErrorKind::ShapeMismatch, "alpha must be 1-D");
  expect_error(
      [] {
        nn::add_rms_norm(Tensor::zeros({2, 4}), Tensor::zeros({2, 4}), Tensor(), -1.0f);
      },
      ErrorKind::InvalidArgument, "eps -1 must be finite");
}

// --- swiglu ---------------------------------------------------------------------------

TEST(Swiglu, HandComputed) {
  // silu(g) = g / (1 + e^-g)
  Values y = nn::swiglu(make({0, 1, -2}, {3}, DType::F64), make({5, 2, 3}, {3}, DType::F64)).to_f64_vector();
  EXPECT_EQ(y[0], 0.0);
  EXPECT_NEAR(y[1], 2 / (1 + std::exp(-1.0)), 1e-15);
  EXPECT_NEAR(y[2], -6 / (1 + std::exp(2.0)), 1e-15);
}

// gate and up as the two halves of one (rows, 2 * cols) projection (strided views).
TEST(Swiglu, RandomEveryDtypeHalvesOfOneProjection) {
  size_t rows = 6, cols = 20;
  for (DType dt : kFloatTypes) {
    Values pv = rand_values(rows * 2 * cols, 64, dt, -6, 6);
    const Tensor p = make(pv, {rows, 2 * cols}, dt);
    Values want;
    for (size_t r = 0; r < rows; ++r)
      for (size_t c = 0; c < cols; ++c) {
        const double g = pv[r * 2 * cols + c], u = pv[r * 2 * cols + cols + c];
        want.push_back(g / (1 + std::exp(-g)) * u);
      }
    // f16/bf16 compute in f32 (as silu and mul do): a few f32 roundings on top of one to dt.
    Values tol = rounding_tol(want, dt, 2.0, 1e-12);
    for (size_t i = 0; i < tol.size(); ++i) tol[i] += 8 * unit_roundoff(DType::F32) * std::fabs(want[i]);
    expect_close(nn::swiglu(p.narrow(1, 0, cols), p.narrow(1, cols, cols)), want, tol,
                 std::string(dtype_name(dt)));
  }
}

TEST(SwigluErrors, ShapesAndDtypes) {
  expect_error(
      [] {
        nn::swiglu(Tensor::zeros({2, 4}), Tensor::zeros({2, 3}));
      },
      ErrorKind::ShapeMismatch, "[swiglu] gate [2,4] f32 up [2,3] f32: shapes differ");
  expect_error(
      [] {
        nn::swiglu(Tensor::zeros({2, 4}), Tensor::zeros({2, 4}, DType::F64));
      },
      ErrorKind::DTypeMismatch, "[swiglu] input [2,4] f32 up [2,4] f64: dtypes differ");
  expect_error(
      [] {
        nn::swiglu(Tensor::zeros({2, 4}, DType::I32), Tensor::zeros({2, 4}, DType::I32));
      },
      ErrorKind::UnsupportedDType, "[swiglu] gate [2,4] i32: dtype i32 is not supported");
}

// --- rope ----------------------------------------------------------------------

enum class Kind { Half, Inter, Thd };

// Reference: x (B,H,T,D) or (B,T,H,D) for Thd; cos/sin (T',D/2), or (B,T',D/2) when per_batch.
Values ref_rope(Kind kind, const Values& x, size_t b, size_t h, size_t t, size_t d, const Values& cos,
                const Values& sin, size_t t_table, bool per_batch) {
  Values out(x.size());
  size_t half = d / 2;
  for (size_t bi = 0; bi < b; ++bi)
    for (size_t hi = 0; hi < h; ++hi)
      for (size_t ti = 0; ti < t; ++ti) {
        size_t row = kind == Kind::Thd ? (bi * t + ti) * h + hi : (bi * h + hi) * t + ti;
        size_t cs = (per_batch ? bi * t_table * half : 0) + ti * half;
        for (size_t i = 0; i < half; ++i) {
          size_t i0 = kind == Kind::Inter ? 2 * i : i, i1 = kind == Kind::Inter ? 2 * i + 1 : i + half;
          double x0 = x[row * d + i0], x1 = x[row * d + i1], c = cos[cs + i], s = sin[cs + i];
          out[row * d + i0] = x0 * c - x1 * s;
          out[row * d + i1] = x0 * s + x1 * c;
        }
      }
  return out;
}

Tensor run_rope(Kind k, const Tensor& x, const Tensor& c, const Tensor& s) {
  return k == Kind::Half ? nn::rope(x, c, s) : k == Kind::Inter ? nn::rope_i(x, c, s) : nn::rope_thd(x, c, s);
}

TEST(Rope, QuarterTurnHandComputed) {
  // cos 0, sin 1 rotates each pair by 90 degrees: (x0, x1) -> (-x1, x0).
  Tensor c = make({0, 0}, {1, 2}, DType::F32), s = make({1, 1}, {1, 2}, DType::F32);
  Tensor x = make({1, 2, 3, 4}, {1, 1, 1, 4}, DType::F32);
  EXPECT_EQ(nn::rope(x, c, s).to_f64_vector(), (Values{-3, -4, 1, 2}));    // pairs (0,2), (1,3)
  EXPECT_EQ(nn::rope_i(x, c, s).to_f64_vector(), (Values{-2, 1, -4, 3}));  // pairs (0,1), (2,3)
  EXPECT_EQ(nn::rope_thd(x, c, s).to_f64_vector(), (Values{-3, -4, 1, 2}));
}

TEST(Rope, RandomEveryKindDtypeAndTableShape) {
  size_t b = 2, h = 3, t = 5, d = 8, t_table = 7;
  for (DType dt : kFloatTypes) {
    for (Kind k : {Kind::Half, Kind::Inter, Kind::Thd}) {
      for (bool per_batch : {false, true}) {
        Values xv = rand_values(b * h * t * d, 48, dt);
        size_t nt = (per_batch ? b : 1) * t_table * d / 2;
        Values ang = rand_values(nt, 49, DType::F64, -3.2, 3.2), cv(nt), sv(nt);
        for (size_t i = 0; i < nt; ++i) cv[i] = std::cos(ang[i]), sv[i] = std::sin(ang[i]);
        // round the tables to dt so the reference sees what the op sees
        Tensor ct = make(cv, per_batch ? Shape{b, t_table, d / 2} : Shape{t_table, d / 2}, dt);
        Tensor st = make(sv, ct.shape(), dt);
        Values cr = ct.to_f64_vector(), sr = st.to_f64_vector();
        Shape xs = k == Kind::Thd ? Shape{b, t, h, d} : Shape{b, h, t, d};
        Values want = ref_rope(k, xv, b, h, t, d, cr, sr, t_table, per_batch);
        std::string what = std::string(dtype_name(dt)) + " kind " + std::to_string(int(k)) +
                           (per_batch ? " per-batch" : " shared");
        expect_close(run_rope(k, make(xv, xs, dt), ct, st), want, rounding_tol(want, dt, 2.0, 1e-12), what);
      }
    }
  }
}

TEST(Rope, StridedInputsAreMadeContiguous) {
  // x given as a (B,T,H,D) tensor transposed to (B,H,T,D); cos/sin narrowed out of wider tables.
  size_t b = 1, h = 2, t = 3, d = 4;
  Values xv = rand_values(b * t * h * d, 50, DType::F32);
  Tensor x = make(xv, {b, t, h, d}, DType::F32).transpose(1, 2);
  Values wide_c = rand_values(t * d, 51, DType::F32), wide_s = rand_values(t * d, 52, DType::F32);
  Tensor c = make(wide_c, {t, d}, DType::F32).narrow(1, 1, d / 2),
         s = make(wide_s, {t, d}, DType::F32).narrow(1, 1, d / 2);
  // logical (B,H,T,D) values and (T, D/2) tables
  Values xl, cl, sl;
  for (size_t hi = 0; hi < h; ++hi)
    for (size_t ti = 0; ti < t; ++ti)
      for (size_t i = 0; i < d; ++i) xl.push_back(xv[(ti * h + hi) * d + i]);
  for (size_t ti = 0; ti < t; ++ti)
    for (size_t i = 0; i < d / 2; ++i)
      cl.push_back(wide_c[ti * d + 1 + i]), sl.push_back(wide_s[ti * d + 1 + i]);
  Values want = ref_rope(Kind::Half, xl, b, h, t, d, cl, sl, t, false);
  expect_close(nn::rope(x, c, s), want, rounding_tol(want, DType::F32, 2.0, 1e-12), "strided rope");
}

TEST(RopeErrors, Shapes) {
  Tensor x = Tensor::zeros({1, 2, 3, 4}), c = Tensor::zeros({3, 2});
  expect_error(
      [&] {
        nn::rope(Tensor::zeros({2, 3, 4}), c, c);
      },
      ErrorKind::ShapeMismatch, "[rope] input [2,3,4] f32 must be (B, H, T, D) (rank 4)");
  expect_error(
      [&] {
        nn::rope_thd(Tensor::zeros({2, 3, 4}), c, c);
      },
      ErrorKind::ShapeMismatch, "[rope_thd] input [2,3,4] f32 must be (B, T, H, D)");
  expect_error(
      [&] {
        nn::rope_i(Tensor::zeros({1, 2, 3, 5}), c, c);
      },
      ErrorKind::ShapeMismatch, "[rope_i] input [1,2,3,5] f32: head dim D = 5 must be even");
  expect_error(
      [&] {
        nn::rope(x, c, Tensor::zeros({4, 2}));
      },
      ErrorKind::ShapeMismatch, "[rope] cos [3,2] f32 sin [4,2] f32: shapes differ");
  expect_error(
      [&] {
        nn::rope(x, Tensor::zeros({2, 2}), Tensor::zeros({2, 2}));
      },
      ErrorKind::ShapeMismatch,
      "[rope] input [1,2,3,4] f32 cos [2,2] f32: cos/sin must be (T', D/2) or (B, T', D/2) with T' >= T = 3");
  expect_error(
      [&] {
        nn::rope(x, Tensor::zeros({3, 4}), Tensor::zeros({3, 4}));
      },
      ErrorKind::ShapeMismatch, "D/2 = 2");
  expect_error(
      [&] {
        nn::rope(x, Tensor::zeros({2, 3, 2}), Tensor::zeros({2, 3, 2}));
      },
      ErrorKind::ShapeMismatch, "B = 1");
  expect_error(
      [&] {
        nn::rope(x, c, Tensor::zeros({3, 2}, DType::F64));
      },
      ErrorKind::DTypeMismatch, "[rope] input [1,2,3,4] f32 sin [3,2] f64: dtypes differ");
  expect_error(
      [&] {
        nn::rope(Tensor::zeros({1, 2, 3, 4}, DType::I32), c, c);
      },
      ErrorKind::UnsupportedDType, "[rope] input [1,2,3,4] i32: dtype i32 is not supported");
  expect_error([&] { nn::rope(x, Tensor(), c); }, ErrorKind::InvalidArgument,
               "[rope] cos is an undefined tensor");
}

}  // namespace
}  // namespace wick
