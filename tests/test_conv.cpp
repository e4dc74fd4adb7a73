// conv1d / conv2d / conv_transpose1d / conv_transpose2d, pooling and upsampling on
// the CPU: hand-computed cases, f64 reference loops written here (direct
// definitions, not im2col), every float dtype, strided kernels and inputs (NHWC
// permuted to NCHW, narrowed channels), groups, dilation, padding, stride,
// output_padding, integer pooling/upsampling rules, and every error path.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <limits>

#include "mmconv_test_helpers.h"

namespace wick {
namespace {

using namespace mmtest;

struct Ref {
  Values val, tol;
};

void push(Ref& r, double s, double abs_s, size_t terms, DType dt) {
  r.val.push_back(s);
  r.tol.push_back(2 * unit_roundoff(dt) * std::fabs(s) + double(terms + 2) * gemm_roundoff(dt) * abs_s);
}

struct Geom {
  size_t pad = 0, stride = 1, dil = 1, groups = 1;
};

// Direct 2-D convolution: x (B,C,H,W), w (Co, C/groups, KH, KW), row-major values.
Ref ref_conv2d(const Values& x, std::array<size_t, 4> xd, const Values& w, std::array<size_t, 4> wd, Geom g,
               DType dt) {
  auto [b, c, h, wi] = xd;
  auto [co, cig, kh, kw] = wd;
  size_t oh = (h + 2 * g.pad - g.dil * (kh - 1) - 1) / g.stride + 1;
  size_t ow = (wi + 2 * g.pad - g.dil * (kw - 1) - 1) / g.stride + 1;
  size_t cog = co / g.groups;
  Ref r;
  for (size_t bi = 0; bi < b; ++bi)
    for (size_t o = 0; o < co; ++o)
      for (size_t y = 0; y < oh; ++y)
        for (size_t xx = 0; xx < ow; ++xx) {
          double s = 0, a = 0;
          for (size_t ci = 0; ci < cig; ++ci)
            for (size_t i = 0; i < kh; ++i)
              for (size_t j = 0; j < kw; ++j) {
                long iy = long(y * g.stride + i * g.dil) - long(g.pad);
                long ix = long(xx * g.stride + j * g.dil) - long(g.pad);
                if (iy < 0 || ix < 0 || iy >= long(h) || ix >= long(wi)) continue;
                size_t cin = (o / cog) * cig + ci;
                double p = x[((bi * c + cin) * h + size_t(iy)) * wi + size_t(ix)] *
                           w[((o * cig + ci) * kh + i) * kw + j];
                s += p;
                a += std::fabs(p);
              }
          push(r, s, a, cig * kh * kw, dt);
        }
  return r;
}

// Direct transposed convolution by scattering every input element: x (B,Ci,H,W),
// w (Ci, Co/groups, KH, KW); out (B, Co, OH, OW).
Ref ref_conv_transpose2d(const Values& x, std::array<size_t, 4> xd, const Values& w, std::array<size_t, 4> wd,
                         Geom g, size_t out_pad, DType dt) {
  auto [b, ci, h, wi] = xd;
  auto [ci_w, cog, kh, kw] = wd;
  size_t co = cog * g.groups, cig = ci / g.groups;
  size_t oh = (h - 1) * g.stride + g.dil * (kh - 1) + out_pad + 1 - 2 * g.pad;
  size_t ow = (wi - 1) * g.stride + g.dil * (kw - 1) + out_pad + 1 - 2 * g.pad;
  Values s(b * co * oh * ow, 0.0), a(s.size(), 0.0);
  for (size_t bi = 0; bi < b; ++bi)
    for (size_t c = 0; c < ci; ++c)
      for (size_t y = 0; y < h; ++y)
        for (size_t xx = 0; xx < wi; ++xx)
          for (size_t oc = 0; oc < cog; ++oc)
            for (size_t i = 0; i < kh; ++i)
              for (size_t j = 0; j < kw; ++j) {
                long oy = long(y * g.stride + i * g.dil) - long(g.pad);
                long ox = long(xx * g.stride + j * g.dil) - long(g.pad);
                if (oy < 0 || ox < 0 || oy >= long(oh) || ox >= long(ow)) continue;
                size_t o = (c / cig) * cog + oc;
                double p = x[((bi * ci + c) * h + y) * wi + xx] * w[((c * cog + oc) * kh + i) * kw + j];
                size_t idx = ((bi * co + o) * oh + size_t(oy)) * ow + size_t(ox);
                s[idx] += p;
                a[idx] += std::fabs(p);
              }
  Ref r;
  for (size_t i = 0; i < s.size(); ++i) push(r, s[i], a[i], cig * kh * kw, dt);
  return r;
}

// NCHW values stored as NHWC and permuted back: a strided input with the same logical values.
Tensor nhwc_view(const Values& v, std::array<size_t, 4> d, DType dt) {
  auto [b, c, h, w] = d;
  Values st(v.size());
  for (size_t bi = 0; bi < b; ++bi)
    for (size_t ci = 0; ci < c; ++ci)
      for (size_t y = 0; y < h; ++y)
        for (size_t x = 0; x < w; ++x)
          st[((bi * h + y) * w + x) * c + ci] = v[((bi * c + ci) * h + y) * w + x];
  return make(st, {b, h, w, c}, dt).permute({0, 3, 1, 2});
}

std::string name(DType dt, const char* what) { return fmt::format("{} {}", dtype_name(dt), what); }

// --- conv1d ------------------------------------------------------------------

TEST(Conv1d, HandComputedDifferenceKernel) {
  for (DType dt : kFloatTypes) {
    Tensor x = make({1, 2, 3, 4, 5}, {1, 1, 5}, dt), w = make({1, 0, -1}, {1, 1, 3}, dt);
    EXPECT_EQ(x.conv1d(w).to_f64_vector(), (Values{-2, -2, -2})) << dtype_name(dt);
    EXPECT_EQ(x.conv1d(w, 1).to_f64_vector(), (Values{-2, -2, -2, -2, 4})) << dtype_name(dt);
    EXPECT_EQ(x.conv1d(w, 1, 2).to_f64_vector(), (Values{-2, -2, 4})) << dtype_name(dt);
    // dilation 2: taps x[l], x[l+4]
    EXPECT_EQ(x.conv1d(w, 0, 1, 2).to_f64_vector(), (Values{-4})) << dtype_name(dt);
  }
}

TEST(Conv1d, RandomGeometriesEveryDtype) {
  struct C {
    size_t b, c, l, co, k;
    Geom g;
  };
  for (DType dt : kFloatTypes) {
    for (const C& t : {C{2, 4, 11, 6, 3, {1, 2, 1, 1}}, C{1, 6, 9, 4, 2, {0, 1, 2, 2}},
                       C{3, 3, 7, 3, 3, {2, 3, 1, 3}}, C{1, 1, 1, 1, 1, {0, 1, 1, 1}}}) {
      Values xv = rand_values(t.b * t.c * t.l, 21, dt),
             wv = rand_values(t.co * (t.c / t.g.groups) * t.k, 22, dt);
      Tensor y =
          make(xv, {t.b, t.c, t.l}, dt)
              .conv1d(make(wv, {t.co, t.c / t.g.groups, t.k}, dt), t.g.pad, t.g.stride, t.g.dil, t.g.groups);
      // Direct 1-D definition (padding along L only).
      size_t lo = (t.l + 2 * t.g.pad - t.g.dil * (t.k - 1) - 1) / t.g.stride + 1;
      size_t cig = t.c / t.g.groups, cog = t.co / t.g.groups;
      Ref r1;
      for (size_t bi = 0; bi < t.b; ++bi)
        for (size_t o = 0; o < t.co; ++o)
          for (size_t l = 0; l < lo; ++l) {
            double s = 0, a = 0;
            for (size_t ci = 0; ci < cig; ++ci)
              for (size_t k = 0; k < t.k; ++k) {
                long il = long(l * t.g.stride + k * t.g.dil) - long(t.g.pad);
                if (il < 0 || il >= long(t.l)) continue;
                double p =
                    xv[(bi * t.c + (o / cog) * cig + ci) * t.l + size_t(il)] * wv[(o * cig + ci) * t.k + k];
                s += p;
                a += std::fabs(p);
              }
            push(r1, s, a, cig * t.k, dt);
          }
      EXPECT_EQ(y.shape(), (Shape{t.b, t.co, lo}));
      expect_close(y, r1.val, r1.tol, name(dt, "conv1d"));
    }
  }
}

TEST(Conv1d, StridedInputAndKernel) {
  // Input: channels 1..4 of a 6-channel tensor (offset, channel stride); kernel stored (K, C, Co) and
  // permuted.
  for (DType dt : {DType::F32, DType::F16}) {
    size_t b = 2, c = 4, l = 9, co = 3, k = 3;
    Values big = rand_values(b * 6 * l, 23, dt), wv = rand_values(co * c * k, 24, dt);
    Tensor x = make(big, {b, 6, l}, dt).narrow(1, 1, c);
    Values wst(wv.size());
    for (size_t o = 0; o < co; ++o)
      for (size_t ci = 0; ci < c; ++ci)
        for (size_t kk = 0; kk < k; ++kk) wst[(kk * c + ci) * co + o] = wv[(o * c + ci) * k + kk];
    Tensor w = make(wst, {k, c, co}, dt).permute({2, 1, 0});
    ASSERT_FALSE(w.is_contiguous());
    Values xv;
    for (size_t bi = 0; bi < b; ++bi)
      for (size_t ci = 0; ci < c; ++ci)
        for (size_t i = 0; i < l; ++i) xv.push_back(big[(bi * 6 + 1 + ci) * l + i]);
    Ref r = ref_conv2d(xv, {b, c, 1, l}, wv, {co, c, 1, k}, Geom{}, dt);
    expect_close(x.conv1d(w), r.val, r.tol, name(dt, "strided conv1d"));
  }
}

// --- conv2d ------------------------------------------------------------------

TEST(Conv2d, HandComputedBoxKernel) {
  for (DType dt : kFloatTypes) {
    Tensor x = make({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 1, 3, 3}, dt), w = make({1, 1, 1, 1}, {1, 1, 2, 2}, dt);
    EXPECT_EQ(x.conv2d(w).to_f64_vector(), (Values{12, 16, 24, 28})) << dtype_name(dt);
    // padding 1, stride 2: corners of the padded 4x4 sums
    EXPECT_EQ(x.conv2d(w, 1, 2).to_f64_vector(), (Values{1, 5, 11, 28})) << dtype_name(dt);
  }
}

TEST(Conv2d, RandomGeometriesEveryDtype) {
  struct C {
    std::array<size_t, 4> x;
    size_t co, kh, kw;
    Geom g;
  };
  for (DType dt : kFloatTypes) {
    for (const C& t : {C{{2, 3, 7, 9}, 4, 3, 3, {1, 1, 1, 1}}, C{{1, 4, 8, 5}, 6, 2, 3, {2, 2, 1, 2}},
                       C{{1, 6, 9, 9}, 6, 3, 2, {1, 2, 2, 3}}, C{{3, 2, 5, 4}, 2, 1, 1, {0, 1, 1, 1}},
                       C{{1, 4, 6, 6}, 4, 3, 3, {1, 1, 1, 4}}}) {
      size_t cig = t.x[1] / t.g.groups;
      Values xv = rand_values(t.x[0] * t.x[1] * t.x[2] * t.x[3], 25, dt),
             wv = rand_values(t.co * cig * t.kh * t.kw, 26, dt);
      Tensor y = make(xv, {t.x[0], t.x[1], t.x[2], t.x[3]}, dt)
                     .conv2d(make(wv, {t.co, cig, t.kh, t.kw}, dt), t.g.pad, t.g.stride, t.g.dil, t.g.groups);
      Ref r = ref_conv2d(xv, t.x, wv, {t.co, cig, t.kh, t.kw}, t.g, dt);
      expect_close(y, r.val, r.tol,
                   fmt::format("{} conv2d x {} groups {}", dtype_name(dt),
                               Shape({t.x[0], t.x[1], t.x[2], t.x[3]}).str(), t.g.groups));
    }
  }
}

TEST(Conv2d, NhwcPermutedInput) {
  for (DType dt : {DType::F32, DType::BF16, DType::F64}) {
    std::array<size_t, 4> xd{2, 5, 6, 7};
    Values xv = rand_values(2 * 5 * 6 * 7, 27, dt), wv = rand_values(3 * 5 * 3 * 3, 28, dt);
    Tensor x = nhwc_view(xv, xd, dt);
    ASSERT_FALSE(x.is_contiguous());
    Ref r = ref_conv2d(xv, xd, wv, {3, 5, 3, 3}, Geom{1, 2, 1, 1}, dt);
    expect_close(x.conv2d(make(wv, {3, 5, 3, 3}, dt), 1, 2), r.val, r.tol, name(dt, "NHWC conv2d"));
  }
}

TEST(Conv2d, BlockedChannelCountsWithGroupsAndAPermutedKernel) {
  // Channel counts that oneDNN stores in 16-wide blocks (and one that is not a
  // multiple of 16), groups, stride, dilation and padding together; the kernel is a
  // permuted view (its KW and KH stored swapped) and the input NHWC.
  for (DType dt : {DType::F32, DType::BF16, DType::F16}) {
    std::array<size_t, 4> xd{2, 40, 9, 11};
    const size_t co = 48, groups = 2, cig = 20, kh = 3, kw = 2;
    Values xv = rand_values(2 * 40 * 9 * 11, 40, dt), wv = rand_values(co * cig * kh * kw, 41, dt);
    Values w_swapped(wv.size());
    for (size_t o = 0; o < co * cig; ++o)
      for (size_t i = 0; i < kh; ++i)
        for (size_t j = 0; j < kw; ++j) w_swapped[(o * kw + j) * kh + i] = wv[(o * kh + i) * kw + j];
    Tensor w = make(w_swapped, {co, cig, kw, kh}, dt).transpose(2, 3);
    ASSERT_FALSE(w.is_contiguous());
    Geom g{2, 2, 2, groups};
    Ref r = ref_conv2d(xv, xd, wv, {co, cig, kh, kw}, g, dt);
    expect_close(nhwc_view(xv, xd, dt).conv2d(w, g.pad, g.stride, g.dil, g.groups), r.val, r.tol,
                 name(dt, "blocked channels"));
  }
}

TEST(Conv2d, WholeBlocksOfChannelsInOneGroup) {
  // f32 with channel counts in whole 16-wide blocks and one group: source and destination
  // in 16-channel blocks on AVX-512 CPUs; stride, dilation and padding, an NHWC input.
  for (DType dt : {DType::F32, DType::BF16}) {
    std::array<size_t, 4> xd{2, 32, 10, 9};
    const size_t co = 48, ci = 32, kh = 3, kw = 3;
    Values xv = rand_values(2 * 32 * 10 * 9, 42, dt), wv = rand_values(co * ci * kh * kw, 43, dt);
    for (const Geom& g : {Geom{1, 1, 1, 1}, Geom{2, 2, 2, 1}}) {
      Ref r = ref_conv2d(xv, xd, wv, {co, ci, kh, kw}, g, dt);
      expect_close(
          nhwc_view(xv, xd, dt).conv2d(make(wv, {co, ci, kh, kw}, dt), g.pad, g.stride, g.dil, g.groups),
          r.val, r.tol, name(dt, "16-channel blocks"));
    }
  }
}

TEST(Conv2d, EmptyBatchGivesEmptyOutput) {
  Tensor y = Tensor::zeros({0, 2, 5, 5}).conv2d(Tensor::ones({3, 2, 3, 3}));
  EXPECT_EQ(y.shape(), (Shape{0, 3, 3, 3}));
}

// --- transposed convolutions -------------------------------------------------

TEST(ConvTranspose1d, HandComputed) {
  for (DType dt : kFloatTypes) {
    Tensor x = make({1, 2, 3}, {1, 1, 3}, dt);
    EXPECT_EQ(x.conv_transpose1d(make({1, 1}, {1, 1, 2}, dt), 0, 0, 2).to_f64_vector(),
              (Values{1, 1, 2, 2, 3, 3}))
        << dtype_name(dt);
    EXPECT_EQ(x.conv_transpose1d(make({1, 2, 3}, {1, 1, 3}, dt)).to_f64_vector(), (Values{1, 4, 10, 12, 9}))
        << dtype_name(dt);
    // padding 1 trims one element from each end
    EXPECT_EQ(x.conv_transpose1d(make({1, 2, 3}, {1, 1, 3}, dt), 1).to_f64_vector(), (Values{4, 10, 12}))
        << dtype_name(dt);
  }
}

TEST(ConvTranspose1d, RandomGeometriesWithGroupsEveryDtype) {
  struct C {
    size_t b, ci, l, cog, k, out_pad;
    Geom g;
  };
  for (DType dt : kFloatTypes) {
    for (const C& t : {C{2, 4, 6, 3, 3, 0, {0, 1, 1, 1}}, C{1, 3, 5, 2, 4, 1, {1, 2, 1, 1}},
                       C{2, 4, 7, 2, 3, 1, {2, 3, 2, 2}}, C{1, 6, 4, 1, 2, 0, {0, 2, 3, 3}}}) {
      Values xv = rand_values(t.b * t.ci * t.l, 29, dt), wv = rand_values(t.ci * t.cog * t.k, 30, dt);
      Tensor y = make(xv, {t.b, t.ci, t.l}, dt)
                     .conv_transpose1d(make(wv, {t.ci, t.cog, t.k}, dt), t.g.pad, t.out_pad, t.g.stride,
                                       t.g.dil, t.g.groups);
      // 1-D as 2-D with H = 1 needs no H padding: pad 0 only along H is what Geom cannot say, so build
      // W-only.
      size_t lo = (t.l - 1) * t.g.stride + t.g.dil * (t.k - 1) + t.out_pad + 1 - 2 * t.g.pad;
      size_t co = t.cog * t.g.groups, cig = t.ci / t.g.groups;
      Values s(t.b * co * lo, 0.0), a(s.size(), 0.0);
      for (size_t bi = 0; bi < t.b; ++bi)
        for (size_t c = 0; c < t.ci; ++c)
          for (size_t i = 0; i < t.l; ++i)
            for (size_t oc = 0; oc < t.cog; ++oc)
              for (size_t k = 0; k < t.k; ++k) {
                long ol = long(i * t.g.stride + k * t.g.dil) - long(t.g.pad);
                if (ol < 0 || ol >= long(lo)) continue;
                double p = xv[(bi * t.ci + c) * t.l + i] * wv[(c * t.cog + oc) * t.k + k];
                size_t idx = (bi * co + (c / cig) * t.cog + oc) * lo + size_t(ol);
                s[idx] += p;
                a[idx] += std::fabs(p);
              }
      Ref r;
      for (size_t i = 0; i < s.size(); ++i) push(r, s[i], a[i], cig * t.k, dt);
      EXPECT_EQ(y.shape(), (Shape{t.b, co, lo}));
      expect_close(y, r.val, r.tol, fmt::format("{} conv_transpose1d groups {}", dtype_name(dt), t.g.groups));
    }
  }
}

TEST(ConvTranspose2d, HandComputedStride2) {
  // Each input pixel stamps the 2x2 kernel at (2y, 2x).
  Tensor x = make({1, 2, 3, 4}, {1, 1, 2, 2}, DType::F32),
         w = make({1, 10, 100, 1000}, {1, 1, 2, 2}, DType::F32);
  EXPECT_EQ(x.conv_transpose2d(w, 0, 0, 2).to_f64_vector(),
            (Values{1, 10, 2, 20, 100, 1000, 200, 2000, 3, 30, 4, 40, 300, 3000, 400, 4000}));
}

TEST(ConvTranspose2d, RandomGeometriesEveryDtype) {
  struct C {
    std::array<size_t, 4> x;
    size_t co, kh, kw, out_pad;
    Geom g;
  };
  for (DType dt : kFloatTypes) {
    for (const C& t :
         {C{{2, 3, 4, 5}, 4, 3, 3, 0, {0, 1, 1, 1}}, C{{1, 2, 5, 3}, 3, 3, 2, 1, {1, 2, 1, 1}},
          C{{1, 4, 3, 3}, 2, 2, 3, 1, {2, 2, 2, 1}}, C{{2, 2, 1, 1}, 3, 1, 1, 0, {0, 1, 1, 1}}}) {
      Values xv = rand_values(t.x[0] * t.x[1] * t.x[2] * t.x[3], 31, dt),
             wv = rand_values(t.x[1] * t.co * t.kh * t.kw, 32, dt);
      Tensor y = make(xv, {t.x[0], t.x[1], t.x[2], t.x[3]}, dt)
                     .conv_transpose2d(make(wv, {t.x[1], t.co, t.kh, t.kw}, dt), t.g.pad, t.out_pad,
                                       t.g.stride, t.g.dil);
      Ref r = ref_conv_transpose2d(xv, t.x, wv, {t.x[1], t.co, t.kh, t.kw}, t.g, t.out_pad, dt);
      expect_close(y, r.val, r.tol, name(dt, "conv_transpose2d"));
    }
  }
}

TEST(ConvTranspose2d, StridedInputAndKernel) {
  for (DType dt : {DType::F32, DType::F16}) {
    std::array<size_t, 4> xd{2, 3, 4, 5};
    Values xv = rand_values(2 * 3 * 4 * 5, 33, dt), wv = rand_values(3 * 2 * 3 * 3, 34, dt);
    // kernel stored with its spatial dims swapped, viewed back by transpose
    Values wst(wv.size());
    for (size_t p = 0; p < 6; ++p)
      for (size_t i = 0; i < 3; ++i)
        for (size_t j = 0; j < 3; ++j) wst[p * 9 + j * 3 + i] = wv[p * 9 + i * 3 + j];
    Tensor w = make(wst, {3, 2, 3, 3}, dt).transpose(2, 3);
    Ref r = ref_conv_transpose2d(xv, xd, wv, {3, 2, 3, 3}, Geom{1, 2, 1, 1}, 1, dt);
    expect_close(nhwc_view(xv, xd, dt).conv_transpose2d(w, 1, 1, 2), r.val, r.tol, name(dt, "strided"));
  }
}

// --- convolution errors ------------------------------------------------------

TEST(ConvErrors, RanksAndDtypes) {
  expect_error(
      [] {
        Tensor::zeros({3, 5}).conv1d(Tensor::zeros({1, 3, 2}));
      },
      ErrorKind::ShapeMismatch, "[conv1d] input [3,5] f32 must be (B, C_in, L)");
  expect_error(
      [] {
        Tensor::zeros({1, 3, 5}).conv1d(Tensor::zeros({3, 2}));
      },
      ErrorKind::ShapeMismatch, "[conv1d] kernel [3,2] f32 must be (C_out, C_in/groups, K)");
  expect_error(
      [] {
        Tensor::zeros({1, 3, 5, 5}).conv2d(Tensor::zeros({1, 3, 2}));
      },
      ErrorKind::ShapeMismatch, "[conv2d] kernel [1,3,2] f32 must be");
  expect_error(
      [] {
        Tensor::zeros({1, 3, 5}).conv1d(Tensor::zeros({1, 3, 2}, DType::F64));
      },
      ErrorKind::DTypeMismatch, "[conv1d] input [1,3,5] f32 kernel [1,3,2] f64: dtypes differ");
  expect_error(
      [] {
        Tensor::zeros({1, 3, 5}, DType::I32).conv1d(Tensor::zeros({1, 3, 2}, DType::I32));
      },
      ErrorKind::UnsupportedDType, "[conv1d] input [1,3,5] i32: dtype i32 is not supported");
  expect_error(
      [] {
        Tensor().conv2d(Tensor::zeros({1, 3, 2, 2}));
      },
      ErrorKind::InvalidArgument, "[conv2d] input is an undefined tensor");
}

TEST(ConvErrors, ChannelsAndGroups) {
  expect_error(
      [] {
        Tensor::zeros({1, 4, 5}).conv1d(Tensor::zeros({2, 3, 2}));
      },
      ErrorKind::ShapeMismatch,
      "[conv1d] input [1,4,5] f32 kernel [2,3,2] f32: kernel has 3 input channels, expected C_in/groups = 4");
  expect_error(
      [] {
        Tensor::zeros({1, 4, 5, 5}).conv2d(Tensor::zeros({3, 2, 2, 2}), 0, 1, 1, 2);
      },
      ErrorKind::InvalidArgument, "groups 2 must divide C_in 4 and C_out 3");
  expect_error(
      [] {
        Tensor::zeros({1, 3, 5}).conv1d(Tensor::zeros({2, 3, 2}), 0, 1, 1, 0);
      },
      ErrorKind::InvalidArgument, "[conv1d] groups must be positive");
  expect_error(
      [] {
        Tensor::zeros({1, 3, 5}).conv_transpose1d(Tensor::zeros({2, 3, 2}));
      },
      ErrorKind::ShapeMismatch,
      "[conv_transpose1d] input [1,3,5] f32 kernel [2,3,2] f32: kernel dim 0 must equal C_in 3");
  expect_error(
      [] {
        Tensor::zeros({1, 3, 5, 5}).conv_transpose2d(Tensor::zeros({2, 3, 2, 2}));
      },
      ErrorKind::ShapeMismatch, "kernel dim 0 must equal C_in 3");
  expect_error(
      [] {
        Tensor::zeros({1, 3, 5}).conv_transpose1d(Tensor::zeros({3, 1, 2}), 0, 0, 1, 1, 2);
      },
      ErrorKind::InvalidArgument, "groups 2 must divide C_in 3");
}

TEST(ConvErrors, Geometry) {
  expect_error(
      [] {
        Tensor::zeros({1, 1, 3}).conv1d(Tensor::zeros({1, 1, 5}));
      },
      ErrorKind::InvalidArgument,
      "[conv1d] input [1,1,3] f32 kernel [1,1,5] f32 padding 0 dilation 1: the dilated kernel (5) is larger "
      "than the padded input (3), no output positions");
  expect_error(
      [] {
        Tensor::zeros({1, 1, 4, 4}).conv2d(Tensor::zeros({1, 1, 3, 3}), 0, 1, 2);
      },
      ErrorKind::InvalidArgument, "no output positions");
  expect_error(
      [] {
        Tensor::zeros({1, 1, 4}).conv1d(Tensor::zeros({1, 1, 2}), 0, 0);
      },
      ErrorKind::InvalidArgument, "[conv1d] stride must be positive");
  expect_error(
      [] {
        Tensor::zeros({1, 1, 4, 4}).conv2d(Tensor::zeros({1, 1, 2, 2}), 0, 1, 0);
      },
      ErrorKind::InvalidArgument, "[conv2d] dilation must be positive");
  expect_error(
      [] {
        Tensor::zeros({1, 1, 4}).conv1d(Tensor::zeros({1, 1, 0}));
      },
      ErrorKind::InvalidArgument, "[conv1d] kernel size must be positive");
  expect_error(
      [] {
        Tensor::zeros({1, 1, 4}).conv_transpose1d(Tensor::zeros({1, 1, 2}), 0, 2, 2);
      },
      ErrorKind::InvalidArgument, "output_padding 2 must be smaller than stride 2 or dilation 1");
  expect_error(
      [] {
        Tensor::zeros({1, 1, 1}).conv_transpose1d(Tensor::zeros({1, 1, 1}), 1);
      },
      ErrorKind::InvalidArgument,
      "[conv_transpose1d] input [1,1,1] f32 kernel [1,1,1] f32 padding 1 stride 1 dilation 1: no output "
      "positions");
  expect_error(
      [] {
        Tensor::zeros({1, 1, 2, 2}).conv_transpose2d(Tensor::zeros({1, 1, 1, 1}), 2);
      },
      ErrorKind::InvalidArgument, "[conv_transpose2d] input [1,1,2,2] f32 kernel [1,1,1,1] f32 padding 2");
}

// --- pooling -----------------------------------------------------------------

// Pool reference over (B*C planes, H, W), row-major values.
Values ref_pool(const Values& x, size_t planes, size_t h, size_t w, std::array<size_t, 2> k,
                std::array<size_t, 2> s, bool avg) {
  size_t oh = (h - k[0]) / s[0] + 1, ow = (w - k[1]) / s[1] + 1;
  Values out;
  for (size_t p = 0; p < planes; ++p)
    for (size_t y = 0; y < oh; ++y)
      for (size_t xx = 0; xx < ow; ++xx) {
        double acc = avg ? 0.0 : -std::numeric_limits<double>::infinity();
        for (size_t i = 0; i < k[0]; ++i)
          for (size_t j = 0; j < k[1]; ++j) {
            double v = x[(p * h + y * s[0] + i) * w + xx * s[1] + j];
            acc = avg ? acc + v : std::max(acc, v);
          }
        out.push_back(avg ? acc / double(k[0] * k[1]) : acc);
      }
  return out;
}

TEST(Pool2d, HandComputed) {
  Tensor x = make({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, {1, 1, 4, 4}, DType::F32);
  EXPECT_EQ(x.max_pool2d({2, 2}, {2, 2}).to_f64_vector(), (Values{6, 8, 14, 16}));
  EXPECT_EQ(x.avg_pool2d({2, 2}, {2, 2}).to_f64_vector(), (Values{3.5, 5.5, 11.5, 13.5}));
  // 3x2 window, stride [1, 2], floor size: (4-3)/1+1 = 2 rows, (4-2)/2+1 = 2 cols
  EXPECT_EQ(x.max_pool2d({3, 2}, {1, 2}).to_f64_vector(), (Values{10, 12, 14, 16}));
  // floor: 3x3 kernel stride 2 on 4x4 -> 1x1
  EXPECT_EQ(x.avg_pool2d({3, 3}, {2, 2}).to_f64_vector(), (Values{6}));
}

TEST(Pool2d, RandomEveryFloatDtypeStridedInput) {
  for (DType dt : kFloatTypes) {
    std::array<size_t, 4> d{2, 3, 7, 9};
    Values xv = rand_values(2 * 3 * 7 * 9, 35, dt);
    Tensor x = nhwc_view(xv, d, dt);
    for (bool avg : {false, true}) {
      Tensor y = avg ? x.avg_pool2d({3, 2}, {2, 3}) : x.max_pool2d({3, 2}, {2, 3});
      EXPECT_EQ(y.shape(), (Shape{2, 3, 3, 3}));
      Values want = ref_pool(xv, 6, 7, 9, {3, 2}, {2, 3}, avg);
      expect_close(y, want, rounding_tol(want, dt, 2.0, 1e-15), name(dt, avg ? "avg" : "max"));
    }
  }
}

TEST(Pool2d, MaxPropagatesNaN) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  for (DType dt : kFloatTypes) {
    Tensor x = make({1, nan, 3, 4, 5, 6, 7, 8}, {1, 1, 2, 4}, dt);
    Values y = x.max_pool2d({2, 2}, {2, 2}).to_f64_vector();
    ASSERT_EQ(y.size(), 2u);
    EXPECT_TRUE(std::isnan(y[0])) << dtype_name(dt);
    EXPECT_EQ(y[1], 8) << dtype_name(dt);
  }
}

TEST(Pool2d, IntegerAvgTruncatesTowardZeroWithoutOverflow) {
  Tensor u = make({255, 255, 1, 2, 255, 255, 2, 2}, {1, 1, 2, 4}, DType::U8);
  EXPECT_EQ(u.avg_pool2d({2, 2}, {2, 2}).to_f64_vector(), (Values{255, 1}));  // 1020/4, 7/4 -> 1
  Tensor i = make({-1, -2, -2, -2}, {1, 1, 2, 2}, DType::I32);
  EXPECT_EQ(i.avg_pool2d({2, 2}, {2, 2}).to_f64_vector(), (Values{-1}));  // -7/4 -> -1
  Tensor u32 = make({4000000000.0, 4000000000.0, 4000000000.0, 1}, {1, 1, 2, 2}, DType::U32);
  EXPECT_EQ(u32.avg_pool2d({2, 2}, {2, 2}).to_f64_vector(), (Values{3000000000.0}));  // 12000000001/4
}

TEST(Pool2d, IntegerMaxIsExact) {
  // i64 values beyond 2^53 differ only in the last bit: a max through f64 would tie them.
  std::vector<int64_t> v = {(int64_t(1) << 60) + 1, int64_t(1) << 60, -5, 7};
  Tensor x = Tensor::from_vector(v, {1, 1, 2, 2});
  EXPECT_EQ(x.max_pool2d({2, 2}, {2, 2}).to_vector<int64_t>(),
            (std::vector<int64_t>{(int64_t(1) << 60) + 1}));
  Tensor u = make({3, 200, 17, 9}, {1, 1, 1, 4}, DType::U8);
  EXPECT_EQ(u.max_pool2d({1, 2}, {1, 2}).to_f64_vector(), (Values{200, 17}));
}

TEST(Pool2dErrors, KernelAndShape) {
  expect_error(
      [] {
        Tensor::zeros({1, 1, 2, 5}).max_pool2d({3, 3}, {1, 1});
      },
      ErrorKind::InvalidArgument, "[max_pool2d] kernel [3,3] is larger than the input [1,1,2,5] f32");
  expect_error(
      [] {
        Tensor::zeros({1, 1, 4, 4}).avg_pool2d({0, 2}, {1, 1});
      },
      ErrorKind::InvalidArgument,
      "[avg_pool2d] input [1,1,4,4] f32: kernel [0,2] and stride [1,1] must be positive");
  expect_error(
      [] {
        Tensor::zeros({1, 1, 4, 4}).avg_pool2d({2, 2}, {2, 0});
      },
      ErrorKind::InvalidArgument, "must be positive");
  expect_error(
      [] {
        Tensor::zeros({4, 4}).avg_pool2d({2, 2}, {2, 2});
      },
      ErrorKind::ShapeMismatch, "[avg_pool2d] input [4,4] f32 must be (B, C, H, W)");
}

// --- upsampling --------------------------------------------------------------

TEST(Upsample, Nearest1dHandComputed) {
  Tensor x = make({10, 20, 30}, {1, 1, 3}, DType::F32);
  EXPECT_EQ(x.upsample_nearest1d(5).to_f64_vector(), (Values{10, 10, 20, 20, 30}));  // floor(i*3/5)
  EXPECT_EQ(x.upsample_nearest1d(2).to_f64_vector(), (Values{10, 20}));              // floor(i*3/2) = 0, 1
  EXPECT_EQ(make({10, 20, 30, 40, 50}, {1, 1, 5}, DType::U8).upsample_nearest1d(2).to_f64_vector(),
            (Values{10, 30}));
}

TEST(Upsample, Nearest2dEveryDtypeStrided) {
  for (DType dt : kAllDTypes) {
    std::array<size_t, 4> d{2, 3, 4, 5};
    Values xv = rand_values(2 * 3 * 4 * 5, 36, dt, 0.0, 100.0);
    Tensor y = nhwc_view(xv, d, dt).upsample_nearest2d(7, 3);
    Values want;
    for (size_t p = 0; p < 6; ++p)
      for (size_t i = 0; i < 7; ++i)
        for (size_t j = 0; j < 3; ++j) want.push_back(xv[(p * 4 + i * 4 / 7) * 5 + j * 5 / 3]);
    EXPECT_EQ(y.shape(), (Shape{2, 3, 7, 3}));
    EXPECT_EQ(y.to_f64_vector(), want) << dtype_name(dt);
  }
}

TEST(Upsample, BilinearMatchesPyTorchPublishedValues) {
  // torch.nn.functional.interpolate([[1,2],[3,4]], size=4, mode="bilinear", align_corners=False)
  Tensor x = make({1, 2, 3, 4}, {1, 1, 2, 2}, DType::F32);
  EXPECT_EQ(x.upsample_bilinear2d(4, 4).to_f64_vector(),
            (Values{1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4}));
  // align_corners=True, size 3
  EXPECT_EQ(x.upsample_bilinear2d(3, 3, true).to_f64_vector(), (Values{1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4}));
}

TEST(Upsample, BilinearDownsampleHandComputed) {
  // in 4 -> out 3, scale 4/3: src = 4/3*(i+0.5)-0.5 = 1/6, 3/2, 17/6 on values 0,1,2,3
  Tensor x = make({0, 1, 2, 3}, {1, 1, 1, 4}, DType::F64);
  Values want{1.0 / 6, 1.5, 17.0 / 6};
  expect_close(x.upsample_bilinear2d(1, 3), want, Values(3, 1e-15), "downsample");
  // align_corners with one output: the first pixel
  EXPECT_EQ(x.upsample_bilinear2d(1, 1, true).to_f64_vector(), (Values{0}));
}

// Bilinear reference with PyTorch's rules, one axis at a time.
struct Axis {
  std::vector<size_t> i0, i1;
  Values l1;
};
Axis axis(size_t in, size_t out, bool ac) {
  Axis a;
  double scale = ac ? (out > 1 ? double(in - 1) / double(out - 1) : 0.0) : double(in) / double(out);
  for (size_t i = 0; i < out; ++i) {
    double src = ac ? scale * double(i) : std::max(scale * (double(i) + 0.5) - 0.5, 0.0);
    size_t lo = std::min(size_t(std::floor(src)), in - 1);
    a.i0.push_back(lo);
    a.i1.push_back(std::min(lo + 1, in - 1));
    a.l1.push_back(src - double(lo));
  }
  return a;
}

TEST(Upsample, BilinearRandomEveryFloatDtype) {
  for (DType dt : kFloatTypes) {
    for (bool ac : {false, true}) {
      std::array<size_t, 4> d{2, 2, 5, 4};
      Values xv = rand_values(2 * 2 * 5 * 4, 37, dt);
      size_t oh = 8, ow = 3;
      Tensor y = nhwc_view(xv, d, dt).upsample_bilinear2d(oh, ow, ac);
      Axis ay = axis(5, oh, ac), ax = axis(4, ow, ac);
      Values want;
      for (size_t p = 0; p < 4; ++p)
        for (size_t i = 0; i < oh; ++i)
          for (size_t j = 0; j < ow; ++j) {
            auto v = [&](size_t yy, size_t xx) { return xv[(p * 5 + yy) * 4 + xx]; };
            double top = (1 - ax.l1[j]) * v(ay.i0[i], ax.i0[j]) + ax.l1[j] * v(ay.i0[i], ax.i1[j]);
            double bot = (1 - ax.l1[j]) * v(ay.i1[i], ax.i0[j]) + ax.l1[j] * v(ay.i1[i], ax.i1[j]);
            want.push_back((1 - ay.l1[i]) * top + ay.l1[i] * bot);
          }
      expect_close(y, want, rounding_tol(want, dt, 2.0, 1e-12),
                   name(dt, ac ? "align_corners" : "half-pixel"));
    }
  }
}

TEST(Upsample, BilinearHonoursScaleFactors) {
  // PyTorch interpolate(size 3 -> scale_factor 2.5): output floor(3 * 2.5) = 7 columns, and the
  // source scale is 1 / 2.5 = 0.4 (not 3 / 7).
  Tensor x = make({0, 10, 20}, {1, 1, 1, 3}, DType::F64);
  Tensor y = x.upsample_bilinear2d(1, 7, false, std::nullopt, 2.5);
  Values want;
  for (size_t i = 0; i < 7; ++i) {
    double src = std::max(0.4 * (double(i) + 0.5) - 0.5, 0.0);
    size_t i0 = std::min<size_t>(size_t(src), 2), i1 = std::min<size_t>(i0 + 1, 2);
    double l1 = src - double(i0);
    want.push_back((1 - l1) * 10.0 * double(i0) + l1 * 10.0 * double(i1));
  }
  EXPECT_NEAR(want[6], 20.0, 1e-12);  // src 2.1 clamps to the last pixel
  EXPECT_NEAR(want[1], 1.0, 1e-12);   // src 0.1
  expect_close(y, want, Values(7, 1e-12), "scale_w 2.5");
  // Without the scale, in / out = 3 / 7 steps the sources: another result.
  EXPECT_GT(std::fabs(x.upsample_bilinear2d(1, 7).to_f64_vector()[1] - want[1]), 0.1);
  // scale_h on rows: 2 rows -> 3 with scale 1.5 steps by 1 / 1.5
  Tensor c = make({0, 30}, {1, 1, 2, 1}, DType::F64);
  Values wc;
  for (size_t i = 0; i < 3; ++i) {
    double src = std::max((double(i) + 0.5) / 1.5 - 0.5, 0.0);
    size_t i0 = std::min<size_t>(size_t(src), 1), i1 = std::min<size_t>(i0 + 1, 1);
    wc.push_back((1 - (src - double(i0))) * 30.0 * double(i0) + (src - double(i0)) * 30.0 * double(i1));
  }
  expect_close(c.upsample_bilinear2d(3, 1, false, 1.5), wc, Values(3, 1e-12), "scale_h 1.5");
}

TEST(Upsample, BilinearScaleFactorsMustBePositive) {
  Tensor x = Tensor::zeros({1, 1, 2, 2});
  expect_error([&] { (void)x.upsample_bilinear2d(4, 4, false, 0.0); }, ErrorKind::InvalidArgument,
               "[upsample_bilinear2d] input [1,1,2,2] f32: scale_h 0 must be finite and positive");
  expect_error([&] { (void)x.upsample_bilinear2d(4, 4, false, 2.0, -1.0); }, ErrorKind::InvalidArgument,
               "scale_w -1 must be finite and positive");
}

TEST(Upsample, BilinearIntegerRoundsHalfAwayFromZero) {
  // 2 -> 4 columns of [0, 10]: 0, 2.5, 7.5, 10 -> 0, 3, 8, 10
  Tensor x = make({0, 10}, {1, 1, 1, 2}, DType::U8);
  EXPECT_EQ(x.upsample_bilinear2d(1, 4).to_f64_vector(), (Values{0, 3, 8, 10}));
  Tensor xi = make({0, -10}, {1, 1, 1, 2}, DType::I64);
  EXPECT_EQ(xi.upsample_bilinear2d(1, 4).to_f64_vector(), (Values{0, -3, -8, -10}));
}

TEST(UpsampleErrors, SizesAndRanks) {
  expect_error(
      [] {
        Tensor::zeros({1, 1, 3}).upsample_nearest1d(0);
      },
      ErrorKind::InvalidArgument, "[upsample_nearest1d] input [1,1,3] f32: output size 0");
  expect_error(
      [] {
        Tensor::zeros({1, 1, 3, 3}).upsample_nearest2d(2, 0);
      },
      ErrorKind::InvalidArgument, "[upsample_nearest2d] input [1,1,3,3] f32: output size 0");
  expect_error(
      [] {
        Tensor::zeros({1, 1, 0, 3}).upsample_bilinear2d(2, 2);
      },
      ErrorKind::InvalidArgument,
      "[upsample_bilinear2d] input [1,1,0,3] f32: spatial dim 2 is empty, nothing to sample");
  expect_error(
      [] {
        Tensor::zeros({1, 3}).upsample_nearest1d(4);
      },
      ErrorKind::ShapeMismatch, "[upsample_nearest1d] input [1,3] f32 must be (B, C, L)");
  expect_error(
      [] {
        Tensor::zeros({1, 1, 3}).upsample_bilinear2d(4, 4);
      },
      ErrorKind::ShapeMismatch, "[upsample_bilinear2d] input [1,1,3] f32 must be (B, C, H, W)");
}

}  // namespace
}  // namespace wick
