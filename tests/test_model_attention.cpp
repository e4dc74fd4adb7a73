// nn::attention and nn::rope_kv_cache against float64 references written here, on
// every device present, and their argument checks. On a GPU, few queries (decoding) take
// the fused flash-decoding kernels, split over the keys when they are many; many queries
// take the GEMM path: the cases below cover both.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "error_test_util.h"
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

// The same with k and v of z.s + spare rows (the spare ones large, so that reading any
// of them shows) and the key count z.s passed as a u32 tensor on the device.
void check_kv_len_case(const Dims& z, size_t spare, bool causal, DType dt, DType kv_dt, double tol) {
  const size_t rows = z.s + spare;
  const auto q = randoms(z.b * z.h * z.t * z.d, 1);
  auto k = randoms(z.b * z.hkv * rows * z.d, 2), v = randoms(z.b * z.hkv * rows * z.dv, 3);
  for (size_t bh = 0; bh < z.b * z.hkv; ++bh)
    for (size_t j = z.s; j < rows; ++j) {
      for (size_t c = 0; c < z.d; ++c) k[(bh * rows + j) * z.d + c] = 50.0;
      for (size_t c = 0; c < z.dv; ++c) v[(bh * rows + j) * z.dv + c] = 1000.0;
    }
  const double scale = 1.0 / std::sqrt(double(z.d));
  for (Device dev : available_devices()) {
    SCOPED_TRACE(dev.str());
    const Tensor qt = Tensor::from_vector(q, {z.b, z.h, z.t, z.d}, dev).to_dtype(dt);
    const Tensor kt = Tensor::from_vector(k, {z.b, z.hkv, rows, z.d}, dev).to_dtype(kv_dt);
    const Tensor vt = Tensor::from_vector(v, {z.b, z.hkv, rows, z.dv}, dev).to_dtype(kv_dt);
    const Tensor len = Tensor::from_vector(std::vector<uint32_t>{uint32_t(z.s)}, {1}, dev);
    const auto want =
        reference(z, qt.to_f64_vector(), kt.narrow(2, 0, z.s).contiguous().to_f64_vector(),
                  vt.narrow(2, 0, z.s).contiguous().to_f64_vector(), double(float(scale)), causal);
    const Tensor out = nn::attention(qt, kt, vt, float(scale), causal, len);
    ASSERT_EQ(out.dims(), (std::vector<size_t>{z.b, z.h, z.t, z.dv}));
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

// B*H*T*S above kAttentionScoreBlock: where the scores are materialized (a GPU with many
// queries), the queries run in several pieces.
TEST(Attention, LongPrefillRunsInPieces) {
  const size_t s = 4096, t = 600;
  ASSERT_GT(2 * t * s, nn::kAttentionScoreBlock);
  check_case({1, 2, 1, t, s, 4, 4}, true, DType::F32, DType::F32, 1e-5);
  check_case({1, 2, 1, t, s, 4, 4}, false, DType::F32, DType::F32, 1e-5);
  check_case({1, 2, 2, 800, 800, 4, 4}, true, DType::F32, DType::F32, 1e-5);  // a prefill from position 0
}

// One query against thousands of keys: on a GPU the keys are split over many blocks and
// the parts combined (flash decoding); head dims of the models (128) and odd ones.
TEST(Attention, DecodeStepOverALongCache) {
  check_case({1, 32, 8, 1, 4100, 128, 128}, true, DType::F32, DType::F16, 2e-5);
  check_case({2, 8, 2, 1, 3000, 64, 64}, false, DType::F32, DType::F32, 2e-5);
  check_case({1, 4, 4, 1, 1500, 20, 12}, true, DType::F32, DType::F16, 2e-5);
  check_case({1, 14, 2, 1, 2000, 64, 64}, true, DType::BF16, DType::BF16, 2e-2);
}

// The splits of one decode are merged by the block that finishes last (the GPU), which
// sets its counter back for the next call: calls in a row, each against the reference;
// with the key count on the device, the splits share the keys it gives (a long cache
// holding few keys, some, and most).
TEST(Attention, DecodeCallsInARowMergeTheirSplits) {
  for (int i = 0; i < 3; ++i) check_case({1, 32, 8, 1, 4100, 128, 128}, true, DType::F32, DType::F16, 2e-5);
  for (size_t keys : {5, 300, 3000}) {
    SCOPED_TRACE(keys);
    check_kv_len_case({1, 32, 8, 1, keys, 128, 128}, 4100 - keys, true, DType::F32, DType::F16, 2e-5);
  }
}

// A few queries at once (speculative decoding, short prompts) and many (prefill) with
// grouped heads and a model's head size.
TEST(Attention, FewAndManyQueriesWithModelHeads) {
  check_case({1, 8, 2, 4, 300, 128, 128}, true, DType::F32, DType::F16, 2e-5);
  check_case({1, 8, 2, 40, 300, 128, 128}, true, DType::F32, DType::F16, 2e-5);
  check_case({1, 9, 3, 33, 33, 64, 64}, true, DType::F32, DType::F16, 2e-5);
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

// A key count in device memory: decode steps over a cache longer than what is used
// (the decode kernels read it when they run), a few queries, and a prefill (the GPU's
// GEMM path reads it first).
TEST(Attention, KeyCountFromATensorReadsOnlyThoseKeys) {
  check_kv_len_case({1, 32, 8, 1, 300, 128, 128}, 3796, true, DType::F32, DType::F16, 2e-5);
  check_kv_len_case({1, 4, 2, 1, 1, 8, 8}, 9, true, DType::F32, DType::F32, 1e-5);
  check_kv_len_case({2, 8, 2, 1, 2500, 64, 64}, 100, false, DType::F32, DType::F32, 2e-5);
  check_kv_len_case({1, 8, 2, 4, 300, 128, 128}, 20, true, DType::F32, DType::F16, 2e-5);
  check_kv_len_case({1, 2, 1, 40, 100, 8, 8}, 28, true, DType::F32, DType::F32, 1e-5);
}

void expect_error(const Tensor& q, const Tensor& k, const Tensor& v, ErrorKind kind, const std::string& part,
                  float scale = 1.0f, bool causal = true) {
  test::expect_error([&] { (void)nn::attention(q, k, v, scale, causal); }, kind, {"[attention]", part});
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

TEST(Attention, KeyCountErrors) {
  const Tensor q = Tensor::zeros({1, 4, 2, 8}), k = Tensor::zeros({1, 2, 3, 8}),
               v = Tensor::zeros({1, 2, 3, 8});
  const auto run = [&](const Tensor& len) {
    return [&, len] { (void)nn::attention(q, k, v, 1.0f, true, len); };
  };
  const auto u32 = [](std::vector<uint32_t> x, Device d = Device::cpu()) {
    return Tensor::from_vector(x, {x.size()}, d);
  };
  test::expect_error(run(Tensor::zeros({1}, DType::I32)), ErrorKind::InvalidArgument,
                     {"[attention]", "kv_len [1] i32 must be one u32 element"});
  test::expect_error(run(u32({2, 3})), ErrorKind::InvalidArgument,
                     {"[attention]", "must be one u32 element"});
  test::expect_error(run(Tensor()), ErrorKind::InvalidArgument, {"[attention]", "kv_len"});
  // Out of [T, S]: the CPU raises it at once.
  test::expect_error(run(u32({1})), ErrorKind::IndexOutOfRange,
                     {"[attention]", "kv_len 1 must lie in [2, 3]"});
  test::expect_error(run(u32({4})), ErrorKind::IndexOutOfRange,
                     {"[attention]", "kv_len 4 must lie in [2, 3]"});
  for (Device dev : available_devices()) {
    if (!dev.is_gpu()) continue;
    SCOPED_TRACE(dev.str());
    test::expect_error(run(u32({2}, dev)), ErrorKind::DeviceMismatch,
                       {"[attention]", "[1] u32 on " + dev.str()});
    const Tensor qd = q.to_device(dev), kd = k.to_device(dev), vd = v.to_device(dev);
    // A decode step (one query) reads the count when it runs: raised at the next
    // synchronization, after which the device is usable.
    const Tensor q1 = qd.narrow(2, 0, 1);
    test::expect_error(
        [&] {
          const Tensor o = nn::attention(q1, kd, vd, 1.0f, true, u32({4}, dev));
          synchronize(dev);
        },
        ErrorKind::IndexOutOfRange, {"[attention]", "index 4 out of range for dim 2 of size 3"});
    EXPECT_EQ(nn::attention(q1, kd, vd, 1.0f, true, u32({3}, dev)).to_f64_vector(),
              std::vector<double>(4 * 8, 0.0));
  }
}

// --- rope_kv_cache ---------------------------------------------------------------

// Rotates row x (D values) by the pairs of `interleaved` with table row c / s.
std::vector<double> rotate(const double* x, size_t d, const double* c, const double* s, bool interleaved) {
  std::vector<double> y(d);
  for (size_t i = 0; i < d / 2; ++i) {
    const size_t i0 = interleaved ? 2 * i : i, i1 = interleaved ? 2 * i + 1 : i + d / 2;
    y[i0] = x[i0] * c[i] - x[i1] * s[i];
    y[i1] = x[i0] * s[i] + x[i1] * c[i];
  }
  return y;
}

// `values` rounded to dtype dt (as a tensor of dt on the CPU stores them).
std::vector<double> rounded(const std::vector<double>& values, DType dt) {
  return Tensor::from_vector(values, {values.size()}).to_dtype(dt).to_f64_vector();
}

// q, k, v taken as column ranges of one (T, (H + 2 Hkv) D) projection (the runner's layout,
// strided), written at `pos` of caches of `cache_dt` pre-filled with 7; checks the rotated
// q, the written rows and that no other row changed.
// pos_tensor: the position passed as a u32 tensor on the device.
void check_rope_kv(Device dev, DType dt, DType cache_dt, bool interleaved, size_t pos,
                   bool pos_tensor = false) {
  const size_t t = 3, h = 4, hkv = 2, d = 8, s = 10, cols = (h + 2 * hkv) * d;
  const auto proj = rounded(randoms(t * cols, 11), dt);
  std::vector<double> ang(t * d / 2), cv(ang.size()), sv(ang.size());
  {
    const auto a = randoms(ang.size(), 12);
    for (size_t i = 0; i < a.size(); ++i) cv[i] = std::cos(3 * a[i]), sv[i] = std::sin(3 * a[i]);
  }
  const Tensor pt = Tensor::from_vector(proj, {1, t, cols}, dev).to_dtype(dt);
  const Tensor q = pt.narrow(2, 0, h * d).reshape({1, t, h, d});  // contiguous copy of a strided view
  const Tensor k = pt.narrow(2, h * d, hkv * d).reshape({1, t, hkv, d});
  const Tensor v = pt.narrow(2, (h + hkv) * d, hkv * d).reshape({1, t, hkv, d});
  const Tensor ct = Tensor::from_vector(cv, {t, d / 2}, dev).to_dtype(dt),
               st = Tensor::from_vector(sv, {t, d / 2}, dev).to_dtype(dt);
  const auto cr = ct.to_f64_vector(), sr = st.to_f64_vector();
  Tensor kc = Tensor::full(7.0, {1, hkv, s, d}, cache_dt, dev),
         vc = Tensor::full(7.0, {1, hkv, s, d}, cache_dt, dev);
  const RopeKind kind = interleaved ? RopeKind::Interleaved : RopeKind::HalfSplit;
  const Tensor qr =
      pos_tensor ? nn::rope_kv_cache(q, k, v, ct, st, kind, kc, vc,
                                     Tensor::from_vector(std::vector<uint32_t>{uint32_t(pos)}, {1}, dev))
                 : nn::rope_kv_cache(q, k, v, ct, st, kind, kc, vc, pos);
  ASSERT_EQ(qr.dims(), (std::vector<size_t>{1, h, t, d}));
  EXPECT_EQ(qr.dtype(), dt);
  std::vector<double> want_q(h * t * d), want_k(hkv * s * d, 7.0), want_v(hkv * s * d, 7.0);
  for (size_t ti = 0; ti < t; ++ti) {
    const double* row = &proj[ti * cols];
    for (size_t hi = 0; hi < h; ++hi) {
      const auto y = rotate(row + hi * d, d, &cr[ti * d / 2], &sr[ti * d / 2], interleaved);
      std::copy(y.begin(), y.end(), want_q.begin() + ptrdiff_t((hi * t + ti) * d));
    }
    for (size_t hi = 0; hi < hkv; ++hi) {
      const auto y = rotate(row + (h + hi) * d, d, &cr[ti * d / 2], &sr[ti * d / 2], interleaved);
      std::copy(y.begin(), y.end(), want_k.begin() + ptrdiff_t((hi * s + pos + ti) * d));
      std::copy(row + (h + hkv + hi) * d, row + (h + hkv + hi + 1) * d,
                want_v.begin() + ptrdiff_t((hi * s + pos + ti) * d));
    }
  }
  // Computed in f64, rounded once: exactly the reference rounded to each dtype.
  EXPECT_EQ(qr.to_f64_vector(), rounded(want_q, dt));
  EXPECT_EQ(kc.to_f64_vector(), rounded(want_k, cache_dt));
  EXPECT_EQ(vc.to_f64_vector(), rounded(want_v, cache_dt));
}

TEST(RopeKvCache, RotatesQueriesAndWritesTheCaches) {
  for (Device dev : available_devices()) {
    SCOPED_TRACE(dev.str());
    for (bool inter : {false, true}) {
      check_rope_kv(dev, DType::F32, DType::F16, inter, 4);
      check_rope_kv(dev, DType::F32, DType::F16, inter, 7, true);
      check_rope_kv(dev, DType::F64, DType::F32, inter, 0, true);
      check_rope_kv(dev, DType::F32, DType::F32, inter, 0);
      check_rope_kv(dev, DType::F16, DType::F16, inter, 7);
      check_rope_kv(dev, DType::BF16, DType::F32, inter, 2);
      check_rope_kv(dev, DType::F64, DType::BF16, inter, 1);
    }
  }
}

// Strided inputs: q, k and v straight out of one projection row, no copies.
TEST(RopeKvCache, StridedInputs) {
  for (Device dev : available_devices()) {
    SCOPED_TRACE(dev.str());
    const size_t t = 2, h = 2, hkv = 1, d = 4, cols = (h + 2 * hkv) * d;
    const auto proj = randoms(t * cols, 21);
    const Tensor pt = Tensor::from_vector(proj, {1, t, cols}, dev).to_dtype(DType::F32);
    const auto view = [&](size_t c0, size_t heads) {
      return Tensor(pt.storage(), Layout({1, t, heads, d}, {t * cols, cols, d, 1}, c0), DType::F32, dev);
    };
    const Tensor c = Tensor::ones({t, d / 2}, DType::F32, dev),
                 s = Tensor::zeros({t, d / 2}, DType::F32, dev);
    Tensor kc = Tensor::zeros({1, hkv, 4, d}, DType::F16, dev),
           vc = Tensor::zeros({1, hkv, 4, d}, DType::F16, dev);
    const Tensor q = nn::rope_kv_cache(view(0, h), view(h * d, hkv), view((h + hkv) * d, hkv), c, s,
                                       RopeKind::HalfSplit, kc, vc, 1);
    // cos 1, sin 0: the identity rotation.
    std::vector<double> want_q, want_k(hkv * 4 * d, 0.0), want_v(hkv * 4 * d, 0.0);
    for (size_t hi = 0; hi < h; ++hi)
      for (size_t ti = 0; ti < t; ++ti)
        for (size_t i = 0; i < d; ++i) want_q.push_back(double(float(proj[ti * cols + hi * d + i])));
    for (size_t ti = 0; ti < t; ++ti)
      for (size_t i = 0; i < d; ++i) {
        want_k[(1 + ti) * d + i] = proj[ti * cols + h * d + i];
        want_v[(1 + ti) * d + i] = proj[ti * cols + (h + hkv) * d + i];
      }
    EXPECT_EQ(q.to_f64_vector(), want_q);
    EXPECT_EQ(kc.to_f64_vector(), rounded(want_k, DType::F16));
    EXPECT_EQ(vc.to_f64_vector(), rounded(want_v, DType::F16));
  }
}

template <class F>
void expect_rope_kv_error(F&& f, ErrorKind kind, const std::string& part) {
  test::expect_error(f, kind, {"[rope_kv_cache]", part});
}

TEST(RopeKvCache, Errors) {
  const Tensor q = Tensor::zeros({1, 2, 4, 8}), k = Tensor::zeros({1, 2, 2, 8}),
               v = Tensor::zeros({1, 2, 2, 8});
  const Tensor c = Tensor::zeros({2, 4});
  Tensor kc = Tensor::zeros({1, 2, 5, 8}, DType::F16), vc = Tensor::zeros({1, 2, 5, 8}, DType::F16);
  const auto run = [&](const Tensor& qq, const Tensor& kk, const Tensor& vv, const Tensor& cc, Tensor& kcc,
                       Tensor& vcc, size_t pos, RopeKind kind = RopeKind::HalfSplit) {
    return [&, pos, kind] { (void)nn::rope_kv_cache(qq, kk, vv, cc, cc, kind, kcc, vcc, pos); };
  };
  expect_rope_kv_error(run(q, k, v, c, kc, vc, 4), ErrorKind::ShapeMismatch,
                       "2 tokens at position 4 do not fit the caches");
  expect_rope_kv_error(run(q, k, v, c, kc, vc, 0, RopeKind::Thd), ErrorKind::InvalidArgument,
                       "kind must be HalfSplit or Interleaved");
  expect_rope_kv_error(run(q, Tensor::zeros({1, 3, 2, 8}), v, c, kc, vc, 0), ErrorKind::ShapeMismatch,
                       "same B and T");
  expect_rope_kv_error(run(q, Tensor::zeros({1, 2, 2, 6}), v, c, kc, vc, 0), ErrorKind::ShapeMismatch,
                       "same even head dim");
  expect_rope_kv_error(run(q, k, Tensor::zeros({1, 2, 3, 8}), c, kc, vc, 0), ErrorKind::ShapeMismatch,
                       "k and v must have the same heads");
  expect_rope_kv_error(run(q, k, v, Tensor::zeros({1, 4}), kc, vc, 0), ErrorKind::ShapeMismatch,
                       "cos/sin must be (T', D/2)");
  expect_rope_kv_error(run(q, k, v, Tensor::zeros({2, 4}, DType::F16), kc, vc, 0), ErrorKind::DTypeMismatch,
                       "must share a dtype");
  Tensor wrong = Tensor::zeros({1, 3, 5, 8}, DType::F16);
  expect_rope_kv_error(run(q, k, v, c, wrong, vc, 0), ErrorKind::ShapeMismatch, "the caches must be");
  Tensor strided = Tensor::zeros({1, 2, 8, 5}, DType::F16).transpose(2, 3);
  expect_rope_kv_error(run(q, k, v, c, strided, vc, 0), ErrorKind::InvalidArgument,
                       "the caches must be contiguous");
  Tensor ints = Tensor::zeros({1, 2, 5, 8}, DType::I32);
  expect_rope_kv_error(run(q, k, v, c, ints, vc, 0), ErrorKind::UnsupportedDType, "k_cache");
}

TEST(RopeKvCache, PositionTensorErrors) {
  const Tensor q = Tensor::zeros({1, 2, 4, 8}), k = Tensor::zeros({1, 2, 2, 8}),
               v = Tensor::zeros({1, 2, 2, 8});
  const Tensor c = Tensor::zeros({2, 4});
  for (Device dev : available_devices()) {
    SCOPED_TRACE(dev.str());
    Tensor kc = Tensor::full(7.0, {1, 2, 5, 8}, DType::F16, dev),
           vc = Tensor::full(7.0, {1, 2, 5, 8}, DType::F16, dev);
    const Tensor qd = q.to_device(dev), kd = k.to_device(dev), vd = v.to_device(dev), cd = c.to_device(dev);
    const auto at = [&](const Tensor& pos) {
      return [&, pos] { (void)nn::rope_kv_cache(qd, kd, vd, cd, cd, RopeKind::HalfSplit, kc, vc, pos); };
    };
    test::expect_error(at(Tensor::zeros({1}, DType::I64, dev)), ErrorKind::InvalidArgument,
                       {"[rope_kv_cache]", "pos [1] i64 must be one u32 element"});
    test::expect_error(at(Tensor::zeros({2}, DType::U32, dev)), ErrorKind::InvalidArgument,
                       {"[rope_kv_cache]", "must be one u32 element"});
    const Tensor four = Tensor::from_vector(std::vector<uint32_t>{4}, {1}, dev);
    if (dev.is_cpu()) {
      test::expect_error(at(four), ErrorKind::ShapeMismatch,
                         {"[rope_kv_cache]", "2 tokens at position 4 do not fit"});
    } else {
      test::expect_error(at(Tensor::zeros({1}, DType::U32)), ErrorKind::DeviceMismatch,
                         {"[rope_kv_cache]", "[1] u32 on cpu"});
      // Read when the kernel runs: raised at the next synchronization, nothing written.
      test::expect_error(
          [&] {
            at(four)();
            synchronize(dev);
          },
          ErrorKind::IndexOutOfRange, {"[rope_kv_cache]", "index 5 out of range for dim 2 of size 5"});
    }
    EXPECT_EQ(kc.to_f64_vector(), std::vector<double>(2 * 5 * 8, 7.0));
    EXPECT_EQ(vc.to_f64_vector(), std::vector<double>(2 * 5 * 8, 7.0));
  }
}

TEST(Attention, NonCausalAllowsMoreQueriesThanKeys) {
  const Tensor out = nn::attention(Tensor::ones({1, 2, 5, 4}), Tensor::ones({1, 1, 2, 4}),
                                   Tensor::full(3.0, {1, 1, 2, 4}), 1.0f, false);
  for (double x : out.to_f64_vector()) EXPECT_EQ(x, 3.0);  // equal scores: the mean of equal values
}

}  // namespace
}  // namespace wick
