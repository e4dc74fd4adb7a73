// GPU-only behaviour of the indexing, GEMM, sort, convolution, cumsum and
// layer_norm ops that the parity harness cannot express: an out-of-range index
// surfaces as Error(IndexOutOfRange) naming the op at the next synchronization (and
// the device stays usable), sentinel ids skip, the portable GEMM
// (Options::portable_gemm) and the vendor BLAS against float64 references, the TF32
// option (off by default: full f32 precision) for GEMMs and convolutions, argsort's
// register and shared-memory kernels and its global merge (each reached by the row
// lengths and key sizes that select it) against a host stable sort, the row-per-block
// im2col and the vendor DNN library (which convolutions it runs) against float64
// convolutions and the CPU, and cumsum's and layer_norm's kernel paths (reached by
// the shapes and alignments that select them) against float64. Skips when no GPU
// is present.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "wick/check.h"
#include "wick/device.h"
#include "wick/options.h"
#include "wick/tensor.h"

namespace wick {
namespace {

#define REQUIRE_GPU()                                                                                     \
  do {                                                                                                    \
    std::string why_;                                                                                     \
    if (!check::device_present(Device::gpu(0), &why_)) GTEST_SKIP() << "no GPU backend/device: " << why_; \
  } while (0)

const Device kGpu = Device::gpu(0);

// Runs f, expecting Error(IndexOutOfRange) whose message holds every string of `parts`.
template <class F>
void expect_index_error(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::IndexOutOfRange) << e.what();
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

// The device still computes correctly after an index error.
void expect_device_usable() {
  Tensor y = Tensor::full(Scalar(3.0), Shape{5}, DType::F32, kGpu).affine(2.0, 1.0);
  EXPECT_EQ(y.to_vector<float>(), std::vector<float>(5, 7.0f));
}

Tensor src_3x4() {
  std::vector<float> v(12);
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i);
  return Tensor::from_vector(v, Shape{3, 4}, kGpu);
}

TEST(GpuIndexError, IndexSelectOutOfRangeThrowsAtTheNextReadNamingTheOp) {
  REQUIRE_GPU();
  Tensor ids = Tensor::from_vector(std::vector<uint32_t>{0, 7, 1}, Shape{3}, kGpu);
  Tensor out = src_3x4().index_select(ids, 0);  // launches without synchronizing
  expect_index_error([&] { (void)out.to_vector<float>(); }, {"[index_select]", "index 7", "size 3"});
  expect_device_usable();
}

TEST(GpuIndexError, TheErrorIsReportedOnceAndThenCleared) {
  REQUIRE_GPU();
  Tensor ids = Tensor::from_vector(std::vector<int64_t>{3}, Shape{1}, kGpu);
  Tensor out = src_3x4().index_select(ids, 0);
  expect_index_error([&] { (void)out.to_vector<float>(); }, {"[index_select]"});
  // The bad row was not read: its output is zero, and reading it again is fine.
  EXPECT_EQ(out.to_vector<float>(), std::vector<float>(4, 0.0f));
}

TEST(GpuIndexError, NegativeI32IdInGatherThrowsAtSynchronize) {
  REQUIRE_GPU();
  Tensor ids =
      Tensor::from_vector(std::vector<int32_t>{0, 1, -1, 2, 0, 0, 0, 0, 0, 0, 0, 0}, Shape{3, 4}, kGpu);
  Tensor out = src_3x4().gather(ids, 0);
  expect_index_error([&] { synchronize(kGpu); }, {"[gather]", "index -1"});
  expect_device_usable();
}

TEST(GpuIndexError, ScatterAddAndIndexAddNameTheirOps) {
  REQUIRE_GPU();
  Tensor dst = Tensor::zeros(Shape{2, 3}, DType::F32, kGpu);
  Tensor src = Tensor::full(Scalar(1.0), Shape{2, 3}, DType::F32, kGpu);
  Tensor bad = Tensor::from_vector(std::vector<int64_t>{0, 1, 2, 0, 1, 9}, Shape{2, 3}, kGpu);
  Tensor sa = dst.scatter_add(bad, src, 1);
  expect_index_error([&] { (void)sa.to_vector<float>(); }, {"[scatter_add]", "index 9", "size 3"});
  Tensor ids = Tensor::from_vector(std::vector<uint8_t>{1, 4}, Shape{2}, kGpu);
  Tensor ia = dst.index_add(ids, Tensor::full(Scalar(1.0), Shape{2, 2}, DType::F32, kGpu), 1);
  expect_index_error([&] { (void)ia.to_vector<float>(); }, {"[index_add]", "index 4"});
  expect_device_usable();
}

TEST(GpuIndexError, OutOfRangeScatterWritesNothingOutsideTheTensor) {
  REQUIRE_GPU();
  // dst is rows 1..2 of a 4 x 3 buffer of 5s (a contiguous view at an offset): the
  // guard rows 0 and 3 must keep their 5s, and the bad id (100) writes nothing.
  Tensor base = Tensor::full(Scalar(5.0), Shape{4, 3}, DType::F32, kGpu);
  Tensor dst = base.narrow(0, 1, 2);
  Tensor ids = Tensor::from_vector(std::vector<uint32_t>{1, 0, 1, 100, 1, 0}, Shape{2, 3}, kGpu);
  Tensor src = Tensor::full(Scalar(1.0), Shape{2, 3}, DType::F32, kGpu);
  dst.scatter_(ids, src, 0);
  expect_index_error([&] { (void)base.to_vector<float>(); }, {"[scatter]", "index 100", "size 2"});
  // Hand-computed: column 0 gets only src row 0 (at dst row 1); columns 1 and 2 get both rows.
  EXPECT_EQ(base.to_vector<float>(), (std::vector<float>{5, 5, 5, 5, 1, 1, 1, 1, 1, 5, 5, 5}));
}

TEST(GpuIndexing, SentinelIdsSkipForEveryIdsDType) {
  REQUIRE_GPU();
  Tensor src = src_3x4();
  // [row 2, skip]: hand-computed.
  std::vector<float> want = {8, 9, 10, 11, 0, 0, 0, 0};
  EXPECT_EQ(src.index_select(Tensor::from_vector(std::vector<uint8_t>{2, 255}, Shape{2}, kGpu), 0)
                .to_vector<float>(),
            want);
  EXPECT_EQ(src.index_select(Tensor::from_vector(std::vector<uint32_t>{2, 0xffffffffu}, Shape{2}, kGpu), 0)
                .to_vector<float>(),
            want);
  EXPECT_EQ(src.index_select(Tensor::from_vector(std::vector<int32_t>{2, std::numeric_limits<int32_t>::max()},
                                                 Shape{2}, kGpu),
                             0)
                .to_vector<float>(),
            want);
  EXPECT_EQ(src.index_select(Tensor::from_vector(std::vector<int64_t>{2, std::numeric_limits<int64_t>::max()},
                                                 Shape{2}, kGpu),
                             0)
                .to_vector<float>(),
            want);
}

// --- GEMM --------------------------------------------------------------------------

// The options in force with the portable GEMM and TF32 set as given.
Options gemm_options(bool portable, bool tf32) {
  Options o = options();
  o.portable_gemm = portable;
  o.allow_tf32 = tf32;
  return o;
}

std::vector<double> seq_values(size_t n, double scale, uint64_t salt) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * (double((i * 7919 + salt * 104729) % 201) / 100.0 - 1.0);
  return v;
}

// C (b, m, n) = A (b, m, k) x B (b, k, n) in float64 from row-major values.
std::vector<double> ref_matmul(const std::vector<double>& a, const std::vector<double>& b, size_t batch,
                               size_t m, size_t n, size_t k) {
  std::vector<double> c(batch * m * n, 0.0);
  for (size_t p = 0; p < batch; ++p)
    for (size_t i = 0; i < m; ++i)
      for (size_t j = 0; j < n; ++j) {
        double s = 0;
        for (size_t q = 0; q < k; ++q) s += a[(p * m + i) * k + q] * b[(p * k + q) * n + j];
        c[(p * m + i) * n + j] = s;
      }
  return c;
}

// The GEMM of (b, m, k) x (b, k, n) on the GPU (rhs given transposed in memory when
// `rhs_t`) against float64, within the dtype's rounding plus f32 accumulation.
void check_gemm(DType dt, size_t batch, size_t m, size_t n, size_t k, bool rhs_t) {
  std::vector<double> a = check::round_to_dtype(seq_values(batch * m * k, 1.0, 1), dt);
  std::vector<double> b = check::round_to_dtype(seq_values(batch * k * n, 1.0, 2), dt);
  Tensor ta = check::make_input(a, Shape{batch, m, k}, dt, kGpu, check::LayoutKind::Contiguous);
  Tensor tb = check::make_input(b, Shape{batch, k, n}, dt, kGpu,
                                rhs_t ? check::LayoutKind::Transposed : check::LayoutKind::Contiguous);
  Tensor c = ta.matmul(tb).to_dtype(DType::F64);
  std::vector<double> got = c.to_vector<double>(), want = ref_matmul(a, b, batch, m, n, k);
  ASSERT_EQ(got.size(), want.size());
  const double acc = check::float_epsilon(dt == DType::F64 ? DType::F64 : DType::F32);
  for (size_t i = 0; i < got.size(); ++i) {
    double bound = check::float_epsilon(dt) * std::abs(want[i]) + 4 * acc * double(k) + 1e-300;
    ASSERT_LE(std::abs(got[i] - want[i]), bound) << dtype_name(dt) << " element " << i;
  }
}

TEST(GpuGemm, PortableKernelMatchesFloat64ForEveryFloatDType) {
  REQUIRE_GPU();
  ScopedOptions portable(gemm_options(true, false));
  for (DType dt : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    check_gemm(dt, 1, 1, 1, 1, false);
    check_gemm(dt, 2, 33, 65, 17, false);
    check_gemm(dt, 3, 31, 70, 129, true);
  }
}

TEST(GpuGemm, VendorOrDefaultPathMatchesFloat64ForEveryFloatDType) {
  REQUIRE_GPU();
  ScopedOptions vendor(gemm_options(false, false));
  for (DType dt : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    check_gemm(dt, 2, 33, 65, 17, false);
    check_gemm(dt, 3, 31, 70, 129, true);
  }
}

TEST(GpuGemm, PortableKernelHandlesABroadcastBatchOperand) {
  REQUIRE_GPU();
  ScopedOptions portable(gemm_options(true, false));
  // (4, 5, 6) x (6, 7): the rhs is shared by every batch.
  std::vector<double> a = seq_values(4 * 5 * 6, 1.0, 3), b = seq_values(6 * 7, 1.0, 4);
  Tensor ta = check::make_input(a, Shape{4, 5, 6}, DType::F32, kGpu, check::LayoutKind::Contiguous);
  Tensor tb = check::make_input(b, Shape{6, 7}, DType::F32, kGpu, check::LayoutKind::Contiguous);
  std::vector<float> got = ta.matmul(tb).to_vector<float>();
  std::vector<double> bb;
  for (int p = 0; p < 4; ++p) bb.insert(bb.end(), b.begin(), b.end());
  std::vector<double> want = ref_matmul(a, bb, 4, 5, 7, 6);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << i;
}

// Values 1 + j * 2^-20 need more than TF32's 10 mantissa bits: a TF32 product
// drops them, a full-f32 GEMM keeps them.
TEST(GpuGemm, F32UsesFullPrecisionUnlessTf32IsAllowed) {
  REQUIRE_GPU();
  const size_t m = 64, n = 64, k = 64;
  std::vector<float> a(m * k), b(k * n, 1.0f);
  for (size_t i = 0; i < a.size(); ++i) a[i] = 1.0f + float(i % 7) * 0x1.0p-20f;
  Tensor ta = Tensor::from_vector(a, Shape{m, k}, kGpu), tb = Tensor::from_vector(b, Shape{k, n}, kGpu);
  auto max_err = [&](const std::vector<float>& c) {
    double e = 0;
    for (size_t i = 0; i < m; ++i) {
      double want = 0;
      for (size_t q = 0; q < k; ++q) want += double(a[i * k + q]);
      for (size_t j = 0; j < n; ++j) e = std::max(e, std::abs(double(c[i * n + j]) - want));
    }
    return e;
  };
  {
    ScopedOptions full(gemm_options(false, false));
    // f32 accumulation of 64 terms near 1: error a few ulps of 64, far below the
    // 2^-20 steps TF32 would drop (64 * 3 * 2^-20 ~ 1.8e-4 in the worst row).
    EXPECT_LT(max_err(ta.matmul(tb).to_vector<float>()), 64 * 0x1.0p-23 * 8);
  }
  {
    ScopedOptions tf32(gemm_options(false, true));
    // Allowed: results stay within TF32's bound (the vendor may or may not use it).
    EXPECT_LT(max_err(ta.matmul(tb).to_vector<float>()), 64 * 0x1.0p-10);
  }
}

// f16/bf16 through the vendor BLAS and through the portable kernel: both within
// the dtype's rounding of float64, including a batch shared by stride 0 and an
// operand at an offset that is not 256-byte aligned.
TEST(GpuGemm, VendorBlasAndPortableKernelMatchFloat64ForHalfTypes) {
  REQUIRE_GPU();
  for (bool portable : {false, true}) {
    ScopedOptions opts(gemm_options(portable, false));
    for (DType dt : {DType::F16, DType::BF16}) {
      SCOPED_TRACE(std::string(portable ? "portable " : "vendor ") + std::string(dtype_name(dt)));
      check_gemm(dt, 1, 64, 128, 256, false);
      check_gemm(dt, 2, 33, 65, 17, false);
      check_gemm(dt, 3, 31, 70, 129, true);
      // (4, 5, 6) x (6, 8), the rhs shared by every batch; lhs viewed from offset 3.
      std::vector<double> a = check::round_to_dtype(seq_values(3 + 4 * 5 * 6, 1.0, 5), dt);
      std::vector<double> b = check::round_to_dtype(seq_values(6 * 8, 1.0, 6), dt);
      Tensor ta = check::make_input(a, Shape{3 + 4 * 5 * 6}, dt, kGpu, check::LayoutKind::Contiguous)
                      .narrow(0, 3, 4 * 5 * 6)
                      .reshape(Shape{4, 5, 6});
      Tensor tb = check::make_input(b, Shape{6, 8}, dt, kGpu, check::LayoutKind::Contiguous);
      std::vector<double> got = ta.matmul(tb).to_dtype(DType::F64).to_vector<double>();
      std::vector<double> aa(a.begin() + 3, a.end()), bb;
      for (int p = 0; p < 4; ++p) bb.insert(bb.end(), b.begin(), b.end());
      std::vector<double> want = ref_matmul(aa, bb, 4, 5, 8, 6);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_LE(std::abs(got[i] - want[i]),
                  check::float_epsilon(dt) * std::abs(want[i]) + 4 * 0x1.0p-23 * 6)
            << i;
    }
  }
}

// Rows of `n` with few distinct values (ties); floating types get NaN and -0.0 among them.
template <class T>
std::vector<T> tie_rows(size_t rows, size_t n, uint64_t salt) {
  std::vector<T> v(rows * n);
  for (size_t i = 0; i < v.size(); ++i) {
    const uint64_t h = (i * 2654435761u + salt * 40503u) % 1009;
    if constexpr (std::is_floating_point_v<T>)
      v[i] = h < 20 ? std::numeric_limits<T>::quiet_NaN() : h < 40 ? T(-0.0) : T(int(h % 13) - 6);
    else
      v[i] = T(int(h % 13) - 6);
  }
  return v;
}

// Stable argsort of each row, NaN last in both orders, -0.0 equal to 0.0.
template <class T>
std::vector<uint32_t> host_argsort(const std::vector<T>& v, size_t n, bool asc) {
  std::vector<uint32_t> out;
  for (size_t r = 0; r < v.size() / n; ++r) {
    std::vector<uint32_t> idx(n);
    std::iota(idx.begin(), idx.end(), 0u);
    const T* row = v.data() + r * n;
    std::stable_sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) {
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(row[a])) return false;
        if (std::isnan(row[b])) return true;
      }
      return asc ? row[a] < row[b] : row[a] > row[b];
    });
    out.insert(out.end(), idx.begin(), idx.end());
  }
  return out;
}

// Five rows of n elements of T, argsorted on gpu:0 in both orders against the host.
template <class T>
void expect_stable_argsort(size_t n, const char* path) {
  const std::vector<T> v = tie_rows<T>(5, n, n);
  Tensor x = Tensor::from_vector(v, Shape{5, n}, kGpu);
  for (bool asc : {true, false})
    EXPECT_EQ(x.argsort(asc).to_vector<uint32_t>(), host_argsort(v, n, asc))
        << path << ", " << dtype_name(x.dtype()) << " n " << n << " asc " << asc;
}

// 4-byte keys in rows that pad to 512..4096 elements take argsort_reg.
TEST(GpuSort, TheRegisterKernelGivesTheStableOrder) {
  REQUIRE_GPU();
  for (size_t n : {size_t(257), size_t(512), size_t(1500), size_t(4096)}) {
    expect_stable_argsort<float>(n, "register kernel");
    expect_stable_argsort<int32_t>(n, "register kernel");
  }
}

// Rows of at most 256 elements and 8-byte keys (f64, i64) up to 4096 elements take
// the shared-memory kernel argsort_local in one launch.
TEST(GpuSort, TheSharedMemoryKernelGivesTheStableOrder) {
  REQUIRE_GPU();
  for (size_t n : {size_t(1), size_t(100), size_t(256)})
    expect_stable_argsort<float>(n, "shared-memory kernel");
  for (size_t n : {size_t(257), size_t(512), size_t(1500), size_t(4096)}) {
    expect_stable_argsort<double>(n, "shared-memory kernel");
    expect_stable_argsort<int64_t>(n, "shared-memory kernel");
  }
}

// Rows longer than 4096 elements: the global-memory bitonic merge around
// shared-memory passes, for 4- and 8-byte keys.
TEST(GpuSort, TheGlobalMergeGivesTheStableOrder) {
  REQUIRE_GPU();
  for (size_t n : {size_t(4097), size_t(9000)}) {
    expect_stable_argsort<float>(n, "global merge");
    expect_stable_argsort<double>(n, "global merge");
  }
}

// conv2d in float64: x (b, c, h, w), weights (co, c/groups, kh, kw).
std::vector<double> ref_conv2d(const std::vector<double>& x, const std::vector<double>& w, size_t b, size_t c,
                               size_t h, size_t wd, size_t co, size_t kh, size_t kw, size_t pad,
                               size_t stride, size_t dil, size_t groups) {
  const size_t oh = (h + 2 * pad - dil * (kh - 1) - 1) / stride + 1,
               ow = (wd + 2 * pad - dil * (kw - 1) - 1) / stride + 1;
  const size_t cg = c / groups, cog = co / groups;
  std::vector<double> y(b * co * oh * ow, 0.0);
  for (size_t p = 0; p < b; ++p)
    for (size_t o = 0; o < co; ++o)
      for (size_t i = 0; i < oh; ++i)
        for (size_t j = 0; j < ow; ++j) {
          double s = 0;
          for (size_t q = 0; q < cg; ++q)
            for (size_t u = 0; u < kh; ++u)
              for (size_t t = 0; t < kw; ++t) {
                const long long ih = (long long)(i * stride + u * dil) - (long long)pad;
                const long long iw = (long long)(j * stride + t * dil) - (long long)pad;
                if (ih < 0 || iw < 0 || ih >= (long long)h || iw >= (long long)wd) continue;
                const size_t ci = (o / cog) * cg + q;
                s += x[((p * c + ci) * h + size_t(ih)) * wd + size_t(iw)] *
                     w[((o * cg + q) * kh + u) * kw + t];
              }
          y[((p * co + o) * oh + i) * ow + j] = s;
        }
  return y;
}

// How many convolutions the backend module's vendor DNN library ran on gpu:0
// (wick_gpu_dnn_convolutions): -2 when the build has none, -4 when its library
// did not load (the im2col path runs), -3 when no backend module is loaded or the
// hook is missing.
long dnn_convolutions() {
  for (const char* lib : {"libwick-cuda.so", "libwick-rocm.so"}) {
    void* h = ::dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
    if (!h) continue;
    using Fn = long (*)(int);
    auto fn = reinterpret_cast<Fn>(::dlsym(h, "wick_gpu_dnn_convolutions"));
    long n = fn ? fn(0) : -3;
    ::dlclose(h);
    return n;
  }
  return -3;
}

// conv2d specs against float64 under the given options: planes smaller than an
// im2col block (1 and 12 pixels), one of several blocks' worth (2500), strided and
// dilated taps, groups, and an input read through transposed strides; output
// widths that are a multiple of 4 (4 pixels a thread on the im2col path) and ones
// that are not.
void check_conv2d_specs(const Options& opts) {
  ScopedOptions scope(opts);
  struct Spec {
    size_t b, c, h, w, co, k, pad, stride, dil, groups;
    bool transposed;
  };
  const Spec specs[] = {{2, 3, 3, 3, 4, 3, 0, 1, 1, 1, false},     // 1x1 output
                        {2, 4, 5, 7, 6, 3, 1, 2, 1, 2, false},     // 3x4 output, groups
                        {1, 2, 9, 11, 3, 3, 2, 1, 2, 1, true},     // dilation, strided input
                        {2, 3, 50, 50, 5, 3, 1, 1, 1, 1, false},   // 2500 pixels
                        {2, 3, 16, 16, 4, 3, 1, 1, 1, 1, false},   // 16x16: 4 pixels a thread
                        {1, 4, 17, 16, 6, 3, 1, 2, 1, 2, true},    // 9x8, stride 2, groups, strided input
                        {1, 2, 40, 48, 3, 5, 4, 1, 2, 1, false}};  // 40x48, dilation 2, pad 4
  for (const Spec& sp : specs) {
    std::vector<double> x = seq_values(sp.b * sp.c * sp.h * sp.w, 1.0, 7);
    std::vector<double> w = seq_values(sp.co * (sp.c / sp.groups) * sp.k * sp.k, 1.0, 8);
    Tensor tx = sp.transposed ? check::make_input(x, Shape{sp.b, sp.c, sp.h, sp.w}, DType::F32, kGpu,
                                                  check::LayoutKind::Transposed)
                              : check::make_input(x, Shape{sp.b, sp.c, sp.h, sp.w}, DType::F32, kGpu,
                                                  check::LayoutKind::Contiguous);
    Tensor tw = check::make_input(w, Shape{sp.co, sp.c / sp.groups, sp.k, sp.k}, DType::F32, kGpu,
                                  check::LayoutKind::Contiguous);
    std::vector<float> got = tx.conv2d(tw, sp.pad, sp.stride, sp.dil, sp.groups).to_vector<float>();
    std::vector<double> want =
        ref_conv2d(x, w, sp.b, sp.c, sp.h, sp.w, sp.co, sp.k, sp.k, sp.pad, sp.stride, sp.dil, sp.groups);
    ASSERT_EQ(got.size(), want.size()) << sp.h << "x" << sp.w;
    const double terms = double(sp.c / sp.groups * sp.k * sp.k);
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 4 * 0x1.0p-23 * terms * 2 + 0x1.0p-23 * std::abs(want[i]))
          << sp.h << "x" << sp.w << " element " << i;
  }
}

// The portable path: im2col, a block per row of output pixels, and the portable GEMM.
TEST(GpuConv, Im2colRowsMatchFloat64AtEveryPlaneSize) {
  REQUIRE_GPU();
  check_conv2d_specs(gemm_options(true, false));
}

// The vendor path: cuDNN where the build has it, else im2col and the vendor BLAS
// (or the portable GEMM).
TEST(GpuConv, VendorPathMatchesFloat64AtEveryPlaneSize) {
  REQUIRE_GPU();
  check_conv2d_specs(gemm_options(false, false));
}

// Inputs 1 + j * 2^-20 need more than TF32's 10 mantissa bits, weights are 1: a
// TF32 convolution drops the 2^-20 steps, a full-f32 one keeps them. Through the
// vendor path (cuDNN's forward and backward-data convolutions where present).
TEST(GpuConv, F32UsesFullPrecisionUnlessTf32IsAllowed) {
  REQUIRE_GPU();
  const size_t b = 2, c = 16, h = 10, w = 12, co = 8, k = 3;
  std::vector<float> x(b * c * h * w), wt(co * c * k * k, 1.0f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 1.0f + float(i % 7) * 0x1.0p-20f;
  Tensor tx = Tensor::from_vector(x, Shape{b, c, h, w}, kGpu);
  Tensor tw = Tensor::from_vector(wt, Shape{co, c, k, k}, kGpu);
  // conv_transpose2d of the same input with a (c, co, k, k) kernel of ones.
  Tensor twt = Tensor::from_vector(wt, Shape{c, co, k, k}, kGpu);
  std::vector<double> xd(x.begin(), x.end()), wd(wt.begin(), wt.end());
  const std::vector<double> want = ref_conv2d(xd, wd, b, c, h, w, co, k, k, 0, 1, 1, 1);
  // conv_transpose2d, stride 1, no padding: out[o, y, x] = sum of in[ci, y - i, x - j] over the taps inside.
  const size_t th = h + k - 1, tw_ = w + k - 1;
  std::vector<double> want_t(b * co * th * tw_, 0.0);
  for (size_t p = 0; p < b; ++p)
    for (size_t o = 0; o < co; ++o)
      for (size_t y = 0; y < th; ++y)
        for (size_t xx = 0; xx < tw_; ++xx) {
          double s = 0;
          for (size_t ci = 0; ci < c; ++ci)
            for (size_t i = 0; i < k; ++i)
              for (size_t j = 0; j < k; ++j)
                if (y >= i && xx >= j && y - i < h && xx - j < w)
                  s += xd[((p * c + ci) * h + y - i) * w + xx - j];
          want_t[((p * co + o) * th + y) * tw_ + xx] = s;
        }
  auto max_err = [](const std::vector<float>& got, const std::vector<double>& ref) {
    EXPECT_EQ(got.size(), ref.size());
    double e = 0;
    for (size_t i = 0; i < std::min(got.size(), ref.size()); ++i)
      e = std::max(e, std::abs(double(got[i]) - ref[i]));
    return e;
  };
  const double terms = double(c * k * k);  // 144 products: TF32 drops ~144 * 3 * 2^-20 ~ 4e-4
  {
    ScopedOptions full(gemm_options(false, false));
    EXPECT_LT(max_err(tx.conv2d(tw, 0, 1, 1, 1).to_vector<float>(), want), terms * 0x1.0p-23 * 8);
    EXPECT_LT(max_err(tx.conv_transpose2d(twt, 0, 0, 1, 1).to_vector<float>(), want_t),
              terms * 0x1.0p-23 * 8);
  }
  {
    ScopedOptions tf32(gemm_options(false, true));
    // Allowed: results stay within TF32's bound (the vendor may or may not use it).
    EXPECT_LT(max_err(tx.conv2d(tw, 0, 1, 1, 1).to_vector<float>(), want), terms * 0x1.0p-10);
    EXPECT_LT(max_err(tx.conv_transpose2d(twt, 0, 0, 1, 1).to_vector<float>(), want_t), terms * 0x1.0p-10);
  }
}

// In a build with a DNN library, every convolution it covers runs through it
// (conv1d / conv2d forward, conv_transpose1d / 2d backward data, every float
// dtype), and matches the CPU backend; options().portable_gemm and a transposed
// convolution whose output_padding reaches its stride take the im2col path.
TEST(GpuConv, TheDnnLibraryRunsTheConvolutionsItCovers) {
  REQUIRE_GPU();
  ScopedOptions vendor(gemm_options(false, false));
  (void)Tensor::zeros(Shape{1}, DType::F32, kGpu);  // opens the device
  const long before = dnn_convolutions();
  if (before == -2) GTEST_SKIP() << "this build has no DNN library: convolutions run as im2col + GEMM";
  if (before == -4) GTEST_SKIP() << "libcudnn.so.9 did not load: convolutions run as im2col + GEMM";
  ASSERT_GE(before, 0) << "no backend module or hook";
  const Device cpu = Device::cpu();
  long expected = before;
  for (DType dt : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    const double tol = 64 * check::float_epsilon(dt);  // inputs in [-1, 1], at most 24 products
    auto in = [&](const Shape& s, uint64_t salt) {
      return check::make_input(check::round_to_dtype(seq_values(s.elem_count(), 1.0, salt), dt), s, dt, cpu,
                               check::LayoutKind::Contiguous);
    };
    auto same = [&](const Tensor& gpu_out, const Tensor& cpu_out) {
      std::vector<double> g = gpu_out.to_dtype(DType::F64).to_vector<double>();
      std::vector<double> c = cpu_out.to_dtype(DType::F64).to_vector<double>();
      ASSERT_EQ(g.size(), c.size());
      for (size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], c[i], tol * (1 + std::abs(c[i]))) << i;
    };
    Tensor x2 = in(Shape{2, 4, 7, 6}, 11), w2 = in(Shape{6, 2, 3, 2}, 12), x1 = in(Shape{2, 4, 9}, 13),
           w1 = in(Shape{6, 4, 3}, 14), wt2 = in(Shape{4, 3, 2, 3}, 15), wt1 = in(Shape{4, 5, 3}, 16);
    same(x2.to_device(kGpu).conv2d(w2.to_device(kGpu), 1, 1, 1, 2), x2.conv2d(w2, 1, 1, 1, 2));
    EXPECT_EQ(dnn_convolutions(), ++expected) << "conv2d, groups 2";
    same(x1.to_device(kGpu).conv1d(w1.to_device(kGpu), 2, 2, 1, 1), x1.conv1d(w1, 2, 2, 1, 1));
    EXPECT_EQ(dnn_convolutions(), ++expected) << "conv1d, stride 2";
    same(x2.to_device(kGpu).conv_transpose2d(wt2.to_device(kGpu), 1, 1, 2, 1),
         x2.conv_transpose2d(wt2, 1, 1, 2, 1));
    EXPECT_EQ(dnn_convolutions(), ++expected) << "conv_transpose2d, stride 2, output_padding 1";
    same(x1.to_device(kGpu).conv_transpose1d(wt1.to_device(kGpu), 0, 0, 1, 2, 1),
         x1.conv_transpose1d(wt1, 0, 0, 1, 2, 1));
    EXPECT_EQ(dnn_convolutions(), ++expected) << "conv_transpose1d, dilation 2";
    // output_padding 1 with stride 1 (dilation 2 allows it): not cuDNN's.
    same(x1.to_device(kGpu).conv_transpose1d(wt1.to_device(kGpu), 0, 1, 1, 2, 1),
         x1.conv_transpose1d(wt1, 0, 1, 1, 2, 1));
    {
      ScopedOptions portable(gemm_options(true, false));
      same(x2.to_device(kGpu).conv2d(w2.to_device(kGpu), 1, 1, 1, 2), x2.conv2d(w2, 1, 1, 1, 2));
    }
    EXPECT_EQ(dnn_convolutions(), expected);
  }
}

// --- cumsum ---------------------------------------------------------------------

// cumsum along the last dim of a [rows, len] tensor against float64 (floats: within
// f32 accumulation in any order plus the output rounding) or the wrapped integer
// sums. `misaligned`: the tensor is a contiguous view 1 element into its buffer.
void check_cumsum_rows(DType dt, size_t rows, size_t len, bool misaligned = false) {
  SCOPED_TRACE(std::string(dtype_name(dt)) + " [" + std::to_string(rows) + ", " + std::to_string(len) + "]" +
               (misaligned ? " misaligned" : ""));
  const size_t n = rows * len;
  std::vector<double> v = check::random_values(n, 17 + len, -1.0, 1.0);
  const bool is_unsigned = dt == DType::U8 || dt == DType::U32;
  if (is_float(dt)) {
    v = check::round_to_dtype(v, dt);
  } else {
    for (auto& e : v) e = std::floor(e * 100) + (is_unsigned ? 100 : 0);  // -100 .. 99, or 0 .. 199
  }
  Tensor x;
  if (misaligned) {
    std::vector<double> stored(n + 1, 0.0);
    std::copy(v.begin(), v.end(), stored.begin() + 1);
    x = check::make_input(stored, Shape{n + 1}, dt, kGpu, check::LayoutKind::Contiguous)
            .narrow(0, 1, n)
            .reshape(Shape{rows, len});
  } else {
    x = check::make_input(v, Shape{rows, len}, dt, kGpu, check::LayoutKind::Contiguous);
  }
  std::vector<double> got = x.cumsum(1).to_dtype(DType::F64).to_vector<double>();
  ASSERT_EQ(got.size(), n);
  const double u = 0x1.0p-24;  // f32 accumulation (f64 accumulates f64)
  for (size_t r = 0; r < rows; ++r) {
    double s = 0, abs_sum = 0;
    for (size_t j = 0; j < len; ++j) {
      const size_t i = r * len + j;
      if (is_float(dt)) {
        s += v[i];
        abs_sum += std::abs(v[i]);
        const double acc = dt == DType::F64 ? 0x1.0p-53 : u;
        const double bound =
            check::float_epsilon(dt) * std::abs(s) + 2 * double(j + 1) * acc * abs_sum + 1e-300;
        ASSERT_LE(std::abs(got[i] - s), bound) << "row " << r << " element " << j;
      } else {
        s += v[i];  // exact: |s| < 2^53
        // The sum wrapped to the dtype's width (the sums here stay inside i32's range).
        const double want = dt == DType::U8    ? std::fmod(s, 256.0)
                            : dt == DType::U32 ? std::fmod(s, 0x1.0p32)
                                               : s;
        ASSERT_EQ(got[i], want) << "row " << r << " element " << j;
      }
    }
  }
}

// Rows shorter than a wave's chunk (several rows a wave), rows of a block each (few
// long rows), rows of a wave each (many long rows: at least 64 a multiprocessor on
// the GPUs this runs on), lengths that are not whole 16-byte vectors, and a view
// that is not 16-byte aligned.
TEST(GpuCumsum, RowsMatchFloat64OnEveryPath) {
  REQUIRE_GPU();
  for (DType dt :
       {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I32, DType::I64, DType::U8, DType::U32}) {
    check_cumsum_rows(dt, 5, 1);
    check_cumsum_rows(dt, 37, 40);
    check_cumsum_rows(dt, 3, 50000);
    check_cumsum_rows(dt, 4, 1001);
    check_cumsum_rows(dt, 4, 4000, true);
  }
  check_cumsum_rows(DType::F32, 20000, 600);
  check_cumsum_rows(DType::F32, 20000, 603);
  check_cumsum_rows(DType::I64, 20000, 600);
}

// --- layer_norm ---------------------------------------------------------------------

// layer_norm of [rows, cols] against float64: within the parity suite's bound for
// another device (f32: 16 + sqrt(cols) ulps; f16 / bf16: 4 ulps; f64: 64 ulps).
// `offset_params`: alpha and beta are contiguous views 1 element into their buffers.
void check_layer_norm(DType dt, size_t rows, size_t cols, bool alpha, bool beta, bool offset_params) {
  SCOPED_TRACE(std::string(dtype_name(dt)) + " [" + std::to_string(rows) + ", " + std::to_string(cols) + "]" +
               (alpha ? " alpha" : "") + (beta ? " beta" : "") + (offset_params ? " offset" : ""));
  std::vector<double> x = check::round_to_dtype(check::random_values(rows * cols, 21 + cols, -1.0, 1.0), dt);
  std::vector<double> a = check::round_to_dtype(check::random_values(cols, 22, 0.5, 1.5), dt);
  std::vector<double> b = check::round_to_dtype(check::random_values(cols, 23, -1.0, 1.0), dt);
  auto param = [&](const std::vector<double>& p) {
    if (!offset_params) return check::make_input(p, Shape{cols}, dt, kGpu, check::LayoutKind::Contiguous);
    std::vector<double> stored(cols + 1, 0.0);
    std::copy(p.begin(), p.end(), stored.begin() + 1);
    return check::make_input(stored, Shape{cols + 1}, dt, kGpu, check::LayoutKind::Contiguous)
        .narrow(0, 1, cols);
  };
  Tensor tx = check::make_input(x, Shape{rows, cols}, dt, kGpu, check::LayoutKind::Contiguous);
  std::vector<double> got = nn::layer_norm(tx, alpha ? param(a) : Tensor(), beta ? param(b) : Tensor(), 1e-5f)
                                .to_dtype(DType::F64)
                                .to_vector<double>();
  ASSERT_EQ(got.size(), rows * cols);
  const double ulps = dt == DType::F32 ? 16.0 + std::sqrt(double(cols)) : dt == DType::F64 ? 64.0 : 4.0;
  const double tol = ulps * check::float_epsilon(dt);
  for (size_t r = 0; r < rows; ++r) {
    const double* v = &x[r * cols];
    double mean = 0, ss = 0;
    for (size_t i = 0; i < cols; ++i) mean += v[i];
    mean /= double(cols);
    for (size_t i = 0; i < cols; ++i) ss += (v[i] - mean) * (v[i] - mean);
    // eps as the op receives it: the float 1e-5f, not the double 1e-5 (f64 sees the difference).
    const double inv = 1.0 / std::sqrt(ss / double(cols) + double(1e-5f));
    for (size_t i = 0; i < cols; ++i) {
      const double want = (v[i] - mean) * inv * (alpha ? a[i] : 1.0) + (beta ? b[i] : 0.0);
      ASSERT_NEAR(got[r * cols + i], want, tol * (1 + std::abs(want))) << "row " << r << " element " << i;
    }
  }
}

// The row in registers (16-byte vectors; threads holding a full, a partial or no
// share of the row), rows that are not whole vectors and parameters that are not
// 16-byte aligned (both read from global memory), and rows longer than the
// register cache.
TEST(GpuNn, LayerNormMatchesFloat64OnEveryPath) {
  REQUIRE_GPU();
  for (DType dt : {DType::F32, DType::BF16, DType::F16, DType::F64}) {
    check_layer_norm(dt, 3, 1000, true, true, false);
    check_layer_norm(dt, 2, 4096, true, false, false);
    check_layer_norm(dt, 2, 4096, false, true, false);
    check_layer_norm(dt, 3, 24, false, false, false);
    check_layer_norm(dt, 3, 1001, true, true, false);
    check_layer_norm(dt, 3, 1000, true, true, true);
    check_layer_norm(dt, 2, 20000, true, true, false);
  }
}

}  // namespace
}  // namespace wick
