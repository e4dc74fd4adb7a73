// nn::attention against float64 attention written here, on every device present,
// and its argument checks.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "wick/tensor.h"

namespace wick {
namespace {

struct Dims {
  size_t b, h, hkv, t, s, d, dv;
};

std::vector<double> randoms(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = normal(rng);
  return v;
}

// softmax(scale q k^T + mask) v with query head h reading key/value head h / (H / Hkv).
std::vector<double> reference(const Dims& z, const std::vector<double>& q, const std::vector<double>& k,
                              const std::vector<double>& v, double scale, bool causal) {
  std::vector<double> out(z.b * z.h * z.t * z.dv, 0.0);
  const size_t g = z.h / z.hkv;
  for (size_t b = 0; b < z.b; ++b) {
    for (size_t h = 0; h < z.h; ++h) {
      const size_t kh = h / g;
      for (size_t i = 0; i < z.t; ++i) {
        const size_t visible = causal ? z.s - z.t + i + 1 : z.s;
        std::vector<double> p(visible);
        double mx = -INFINITY, sum = 0.0;
        for (size_t j = 0; j < visible; ++j) {
          double dot = 0.0;
          for (size_t c = 0; c < z.d; ++c) {
            dot += q[((b * z.h + h) * z.t + i) * z.d + c] * k[((b * z.hkv + kh) * z.s + j) * z.d + c];
          }
          p[j] = scale * dot;
          mx = std::max(mx, p[j]);
        }
        for (double& x : p) sum += (x = std::exp(x - mx));
        for (size_t j = 0; j < visible; ++j)
          for (size_t c = 0; c < z.dv; ++c)
            out[((b * z.h + h) * z.t + i) * z.dv + c] +=
                p[j] / sum * v[((b * z.hkv + kh) * z.s + j) * z.dv + c];
      }
    }
  }
  return out;
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0.0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

// Runs one case in dtype `dt` (k and v in `kv_dt`) on every device and compares.
void check_case(const Dims& z, bool causal, DType dt, DType kv_dt, double tol) {
  const auto q = randoms(z.b * z.h * z.t * z.d, 1), k = randoms(z.b * z.hkv * z.s * z.d, 2),
             v = randoms(z.b * z.hkv * z.s * z.dv, 3);
  const double scale = 1.0 / std::sqrt(double(z.d));
  for (Device dev : available_devices()) {
    SCOPED_TRACE(dev.str());
    // The inputs the op sees, rounded to their dtypes, feed the reference too.
    const Tensor qt = Tensor::from_vector(q, {z.b, z.h, z.t, z.d}, dev).to_dtype(dt);
    const Tensor kt = Tensor::from_vector(k, {z.b, z.hkv, z.s, z.d}, dev).to_dtype(kv_dt);
    const Tensor vt = Tensor::from_vector(v, {z.b, z.hkv, z.s, z.dv}, dev).to_dtype(kv_dt);
    const auto want = reference(z, qt.to_f64_vector(), kt.to_f64_vector(), vt.to_f64_vector(),
                                double(float(scale)), causal);
    const Tensor out = nn::attention(qt, kt, vt, float(scale), causal);
    ASSERT_EQ(out.dims(), (std::vector<size_t>{z.b, z.h, z.t, z.dv}));
    EXPECT_EQ(out.dtype(), dt);
    EXPECT_LT(max_abs_diff(out.to_f64_vector(), want), tol);
  }
}

TEST(Attention, CausalPrefillWithGroupedHeads) {
  check_case({2, 4, 2, 5, 5, 8, 8}, true, DType::F32, DType::F32, 1e-5);
}

TEST(Attention, CausalQueriesAtTheEndOfALongerCache) {
  check_case({1, 6, 2, 3, 11, 8, 4}, true, DType::F32, DType::F32, 1e-5);
}

TEST(Attention, SingleQueryDecodeStep) {
  check_case({1, 8, 2, 1, 17, 16, 16}, true, DType::F32, DType::F32, 1e-5);
}

TEST(Attention, NonCausalSeesEveryKey) {
  check_case({2, 3, 3, 4, 6, 8, 8}, false, DType::F32, DType::F32, 1e-5);
}

TEST(Attention, F64IsExactToRounding) {
  check_case({1, 4, 1, 4, 7, 8, 8}, true, DType::F64, DType::F64, 1e-12);
}

TEST(Attention, F16KeysAndValuesWithF32Queries) {
  check_case({1, 4, 2, 3, 9, 16, 16}, true, DType::F32, DType::F16, 1e-5);
}

TEST(Attention, F16Throughout) { check_case({1, 2, 1, 4, 4, 8, 8}, true, DType::F16, DType::F16, 2e-2); }

// B*H*T*S above kAttentionScoreBlock: the queries run in several pieces.
TEST(Attention, LongPrefillRunsInPieces) {
  const size_t s = 4096, t = 300;
  ASSERT_GT(2 * t * s, nn::kAttentionScoreBlock);
  check_case({1, 2, 1, t, s, 4, 4}, true, DType::F32, DType::F32, 1e-5);
  check_case({1, 2, 1, t, s, 4, 4}, false, DType::F32, DType::F32, 1e-5);
  check_case({1, 2, 2, 800, 800, 4, 4}, true, DType::F32, DType::F32, 1e-5);  // a prefill from position 0
}

// A strided view of a cache (the layout the model runner passes) gives the same result.
TEST(Attention, StridedCacheView) {
  const size_t hkv = 2, ctx = 16, d = 8, used = 6;
  const auto cache_k = randoms(hkv * ctx * d, 4), cache_v = randoms(hkv * ctx * d, 5),
             q = randoms(4 * 2 * d, 6);
  const Tensor ck = Tensor::from_vector(cache_k, {hkv, ctx, d}),
               cv = Tensor::from_vector(cache_v, {hkv, ctx, d});
  const Tensor k = ck.narrow(1, 0, used).unsqueeze(0), v = cv.narrow(1, 0, used).unsqueeze(0);
  const Tensor qt = Tensor::from_vector(q, {1, 4, 2, d});
  const Tensor got = nn::attention(qt, k, v, 0.5f, true);
  const Tensor want = nn::attention(qt, k.contiguous(), v.contiguous(), 0.5f, true);
  EXPECT_EQ(got.to_vector<double>(), want.to_vector<double>());
  const Dims z{1, 4, hkv, 2, used, d, d};
  EXPECT_LT(max_abs_diff(got.to_f64_vector(), reference(z, q, k.contiguous().to_f64_vector(),
                                                        v.contiguous().to_f64_vector(), 0.5, true)),
            1e-12);
}

void expect_error(const Tensor& q, const Tensor& k, const Tensor& v, ErrorKind kind, const std::string& part,
                  float scale = 1.0f, bool causal = true) {
  try {
    (void)nn::attention(q, k, v, scale, causal);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    const std::string msg = e.what();
    EXPECT_NE(msg.find("[attention]"), std::string::npos) << msg;
    EXPECT_NE(msg.find(part), std::string::npos) << msg;
  }
}

TEST(Attention, Errors) {
  const Tensor q = Tensor::zeros({1, 4, 2, 8}), k = Tensor::zeros({1, 2, 3, 8}),
               v = Tensor::zeros({1, 2, 3, 8});
  expect_error(Tensor::zeros({4, 2, 8}), k, v, ErrorKind::ShapeMismatch,
               "q [4,2,8] f32 must be (B, H, T, D)");
  expect_error(q, Tensor::zeros({2, 3, 8}), v, ErrorKind::ShapeMismatch, "must be (B, Hkv, S, D)");
  expect_error(q, Tensor::zeros({2, 2, 3, 8}), Tensor::zeros({2, 2, 3, 8}), ErrorKind::ShapeMismatch,
               "batch sizes differ");
  expect_error(q, Tensor::zeros({1, 2, 3, 4}), v, ErrorKind::ShapeMismatch, "head dims differ");
  expect_error(q, k, Tensor::zeros({1, 2, 4, 8}), ErrorKind::ShapeMismatch, "same heads and length");
  expect_error(q, Tensor::zeros({1, 3, 3, 8}), Tensor::zeros({1, 3, 3, 8}), ErrorKind::ShapeMismatch,
               "q heads 4 are not a multiple of k/v heads 3");
  expect_error(Tensor::zeros({1, 4, 5, 8}), k, v, ErrorKind::ShapeMismatch, "causal attention needs S >= T");
  expect_error(Tensor::zeros({1, 4, 2, 8}, DType::I32), k, v, ErrorKind::UnsupportedDType, "dtype i32");
  expect_error(q, k, v, ErrorKind::InvalidArgument, "must be finite", INFINITY);
  expect_error(q, Tensor::zeros({1, 2, 0, 8}), Tensor::zeros({1, 2, 0, 8}), ErrorKind::ShapeMismatch,
               "no keys", 1.0f, false);
  expect_error(q, k, Tensor(), ErrorKind::InvalidArgument, "v");
}

TEST(Attention, NonCausalAllowsMoreQueriesThanKeys) {
  const Tensor out = nn::attention(Tensor::ones({1, 2, 5, 4}), Tensor::ones({1, 1, 2, 4}),
                                   Tensor::full(3.0, {1, 1, 2, 4}), 1.0f, false);
  for (double x : out.to_f64_vector()) EXPECT_EQ(x, 3.0);  // equal scores: the mean of equal values
}

}  // namespace
}  // namespace wick
