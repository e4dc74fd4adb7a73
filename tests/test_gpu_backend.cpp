// The GPU backend's machinery on gpu:0: the module store loads a family once, the
// caching allocator returns to its baseline, transfers are exact, random streams
// equal the CPU's, in-place writes stay inside their view (guard bytes), a tensor
// above 2^32 elements (4 GiB) works, and the error paths name what failed.
// Skips (with the reason) when no GPU backend or device is present.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "wick/check.h"
#include "wick/device.h"
#include "wick/tensor.h"

namespace wick {
namespace {

#define REQUIRE_GPU()                                                                                     \
  do {                                                                                                    \
    std::string why_;                                                                                     \
    if (!check::device_present(Device::gpu(0), &why_)) GTEST_SKIP() << "no GPU backend/device: " << why_; \
  } while (0)

const Device kGpu = Device::gpu(0);

// How the launch error message spells a 1-D launch shape.
std::string fmt_grid(unsigned grid, unsigned block) {
  return "grid " + std::to_string(grid) + "x1x1, block " + std::to_string(block) + "x1x1";
}

// wick_gpu_module_load_count from whichever backend module the registry loaded.
long module_loads(int module) {
  for (const char* lib : {"libwick-cuda.so", "libwick-rocm.so"}) {
    void* h = ::dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
    if (!h) continue;
    using Fn = long (*)(int, int);
    auto fn = reinterpret_cast<Fn>(::dlsym(h, "wick_gpu_module_load_count"));
    long n = fn ? fn(0, module) : -2;
    ::dlclose(h);
    return n;
  }
  return -3;
}
constexpr int kAffineModule = 0;  // index of "affine" in the backend's module list

// wick_gpu_deferred_ops: how many small ops ran deferred on gpu:0 (-1 when none ran,
// -2 when the hook is missing, -3 when no backend module is loaded).
long deferred_ops() {
  for (const char* lib : {"libwick-cuda.so", "libwick-rocm.so"}) {
    void* h = ::dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
    if (!h) continue;
    using Fn = long (*)(int);
    auto fn = reinterpret_cast<Fn>(::dlsym(h, "wick_gpu_deferred_ops"));
    long n = fn ? fn(0) : -2;
    ::dlclose(h);
    return n;
  }
  return -3;
}

// On 8192 elements: more than a deferred small op holds (those run in the BATCH module).
TEST(GpuModuleStore, AThousandAffineCallsLoadTheAffineModuleOnce) {
  REQUIRE_GPU();
  Tensor x = Tensor::full(Scalar(2.0), Shape{8192}, DType::F32, kGpu);
  for (int i = 0; i < 1000; ++i) x = x.affine(1.0, 1.0);
  EXPECT_EQ(x.to_vector<float>()[8191], 1002.0f);
  EXPECT_EQ(module_loads(kAffineModule), 1);
}

TEST(GpuAllocator, InUseReturnsToItsBaselineAfterAllocateFreeLoops) {
  REQUIRE_GPU();
  synchronize(kGpu);
  const size_t baseline = memory_stats(kGpu).in_use;
  for (int i = 0; i < 200; ++i) {
    size_t n = 1 + size_t(i) * 997 % 100000;
    Tensor a = Tensor::full(Scalar(1.0), Shape{n}, DType::F32, kGpu);
    Tensor b = a.affine(2.0, 0.0).add(a).exp().to_dtype(DType::BF16);
    EXPECT_GT(memory_stats(kGpu).in_use, baseline);
  }
  synchronize(kGpu);
  MemoryStats s = memory_stats(kGpu);
  EXPECT_EQ(s.in_use, baseline);
  EXPECT_GT(s.cached, 0u);
  EXPECT_GE(s.peak, baseline + 100000 * 4);
}

TEST(GpuAllocator, AnImpossibleAllocationThrowsOutOfMemory) {
  REQUIRE_GPU();
  try {
    Tensor t = Tensor::empty(Shape{size_t(1) << 50}, DType::F32, kGpu);  // 4 PiB
    FAIL() << "allocated 4 PiB";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory);
    EXPECT_NE(std::string(e.what()).find("out of memory"), std::string::npos) << e.what();
  }
  // The device still works afterwards.
  EXPECT_EQ(Tensor::full(Scalar(3.0), Shape{4}, DType::F32, kGpu).to_vector<float>()[3], 3.0f);
}

TEST(GpuTransfer, HostDeviceRoundTripsAreBitExactForEveryDtype) {
  REQUIRE_GPU();
  for (DType dt : kAllDTypes) {
    std::vector<uint8_t> bytes(1000 * dtype_size(dt));
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t(i * 131 + 7);
    Tensor g = Tensor::from_bytes(bytes.data(), 1000, Shape{10, 100}, dt, kGpu);
    EXPECT_EQ(g.device(), kGpu);
    Tensor back = g.to_device(Device::cpu());
    std::vector<uint8_t> out(bytes.size());
    back.to_bytes(out.data());
    EXPECT_EQ(out, bytes) << dtype_name(dt);
    // device -> device (a strided view copies through the GPU) and back.
    Tensor t = g.t().copy();
    std::vector<uint8_t> tb(bytes.size());
    t.to_device(Device::cpu()).to_bytes(tb.data());
    const size_t es = dtype_size(dt);
    for (size_t r = 0; r < 10; ++r)
      for (size_t c = 0; c < 100; ++c)
        ASSERT_EQ(std::memcmp(&tb[(c * 10 + r) * es], &bytes[(r * 100 + c) * es], es), 0) << dtype_name(dt);
  }
}

// Device-to-host copies of every size around the staging path's bounds (under
// kStagedCopyMin direct; from it on through the pinned buffer in 256 KiB chunks, one
// chunk, two, an odd count with a short last one), from an offset into the storage, and
// queued after the kernel that writes the data: each byte as written on the host.
TEST(GpuTransfer, LargeCopiesToTheHostAreBitExact) {
  REQUIRE_GPU();
  constexpr size_t kChunk = size_t(256) << 10;
  for (size_t n :
       {size_t(64 << 10) - 1, size_t(64 << 10), kChunk, kChunk + 1, 2 * kChunk, 5 * kChunk + 4097}) {
    SCOPED_TRACE(n);
    std::vector<uint8_t> bytes(n + 3);
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t((i * 2654435761u) >> 13);
    const Tensor g = Tensor::from_bytes(bytes.data(), bytes.size(), Shape{bytes.size()}, DType::U8, kGpu);
    // The view from byte 3 on, through a kernel (a copy on the device) queued before the read.
    std::vector<uint8_t> out(n);
    g.narrow(0, 3, n).copy().to_bytes(out.data());
    ASSERT_TRUE(std::equal(out.begin(), out.end(), bytes.begin() + 3));
    // Straight from the storage at an offset (the narrowed view read in place).
    const std::vector<uint8_t> direct = g.narrow(0, 3, n).to_vector<uint8_t>();
    ASSERT_TRUE(std::equal(direct.begin(), direct.end(), bytes.begin() + 3));
  }
}

// Tensor::rand / randn of n elements on `dev` after manual_seed(seed, dev), taken
// second, after a draw of 5 elements: the stream's position is counted per device.
std::vector<double> seeded_draw(Device dev, DType dt, uint64_t seed, bool normal, double a, double b,
                                size_t n) {
  Tensor::manual_seed(seed, dev);
  (void)(normal ? Tensor::randn(Shape{5}, dt, dev, a, b) : Tensor::rand(Shape{5}, dt, dev, a, b));
  Tensor t = normal ? Tensor::randn(Shape{n}, dt, dev, a, b) : Tensor::rand(Shape{n}, dt, dev, a, b);
  return t.to_f64_vector();
}

// Same seed, same Philox stream: gpu:0 and the CPU draw the same uniform values.
TEST(GpuRandom, UniformStreamsAreBitIdenticalToTheCpu) {
  REQUIRE_GPU();
  const size_t n = 100003;
  for (DType dt : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    auto g = seeded_draw(kGpu, dt, 42, false, -3.0, 5.0, n);
    auto c = seeded_draw(Device::cpu(), dt, 42, false, -3.0, 5.0, n);
    ASSERT_EQ(g.size(), n);
    size_t mismatches = 0;
    for (size_t i = 0; i < n; ++i) mismatches += g[i] != c[i];
    EXPECT_EQ(mismatches, 0u) << dtype_name(dt);
    for (double x : g) ASSERT_TRUE(x >= -3.0 && x <= 5.0) << x;
  }
}

// 2 ulp for f32, f16 and bf16 (the double-precision Box-Muller result is rounded
// once to the narrower dtype). For f64 the result carries the last bits of two
// libms (CUDA/ROCm device log/cos vs glibc, each within 1 ulp), amplified by
// sqrt(-2 ln u1) * cos(2 pi u2): 8 ulp is the bound.
TEST(GpuRandom, NormalStreamsMatchTheCpuWithinTwoUlpBelowF64) {
  REQUIRE_GPU();
  const size_t n = 100003;
  for (DType dt : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    auto g = seeded_draw(kGpu, dt, 9, true, 1.0, 2.0, n);
    auto c = seeded_draw(Device::cpu(), dt, 9, true, 1.0, 2.0, n);
    ASSERT_EQ(g.size(), n);
    const double eps = check::float_epsilon(dt);
    const double ulps = dt == DType::F64 ? 8.0 : 2.0;
    double mean = 0;
    for (size_t i = 0; i < n; ++i) {
      ASSERT_LE(std::fabs(g[i] - c[i]), ulps * eps * std::max(1.0, std::fabs(c[i])))
          << dtype_name(dt) << " at " << i;
      mean += g[i];
    }
    EXPECT_NEAR(mean / double(n), 1.0, 0.05) << dtype_name(dt);
  }
}

// Guard bytes: in-place writes into a view of a larger buffer leave the rest alone.
TEST(GpuGuard, ConstSetOnAStridedViewWritesOnlyThatView) {
  REQUIRE_GPU();
  for (DType dt : kAllDTypes) {
    Tensor base = Tensor::full(Scalar(9), Shape{12, 10}, dt, kGpu);
    Tensor view = base.narrow(0, 2, 7).narrow(1, 3, 4).t();  // strided, offset
    view.fill_(Scalar(5));
    auto v = base.to_f64_vector();
    for (size_t r = 0; r < 12; ++r)
      for (size_t c = 0; c < 10; ++c) {
        bool inside = r >= 2 && r < 9 && c >= 3 && c < 7;
        ASSERT_EQ(v[r * 10 + c], inside ? 5.0 : 9.0) << dtype_name(dt) << " r " << r << " c " << c;
      }
  }
}

TEST(GpuGuard, SliceSetAndCatWriteExactlyTheirBlock) {
  REQUIRE_GPU();
  for (DType dt : kAllDTypes) {
    Tensor dst = Tensor::full(Scalar(7), Shape{5, 9}, dt, kGpu);
    Tensor src = Tensor::arange(0, 10, 1, DType::F64).reshape(Shape{5, 2}).to_dtype(dt).to_device(kGpu);
    dst.slice_set_(src, 1, 4);  // copy2d into columns 4..5
    auto v = dst.to_f64_vector();
    for (size_t r = 0; r < 5; ++r)
      for (size_t c = 0; c < 9; ++c) {
        double want = (c == 4 || c == 5) ? double(r * 2 + (c - 4)) : 7.0;
        ASSERT_EQ(v[r * 9 + c], want) << dtype_name(dt) << " r " << r << " c " << c;
      }
    Tensor a = Tensor::full(Scalar(1), Shape{3, 5}, dt, kGpu),
           b = Tensor::full(Scalar(2), Shape{3, 3}, dt, kGpu);
    auto cat = Tensor::cat({a, b}, 1).to_f64_vector();
    ASSERT_EQ(cat.size(), 24u);
    for (size_t r = 0; r < 3; ++r)
      for (size_t c = 0; c < 8; ++c) ASSERT_EQ(cat[r * 8 + c], c < 5 ? 1.0 : 2.0) << dtype_name(dt);
  }
}

// One case above 2^32 elements (4 GiB of u8): 64-bit indexing in the contiguous,
// strided and tiled-transpose paths. Expected values are hand-computed constants.
TEST(GpuLarge, AU8TensorAbove4GiBComputesEveryElement) {
  REQUIRE_GPU();
  const size_t n = (size_t(1) << 32) + 64;
  Tensor a = Tensor::full(Scalar(3), Shape{n}, DType::U8, kGpu);
  Tensor b = a.affine(2.0, 1.0);  // 7 everywhere
  std::vector<uint8_t> hb = b.to_vector<uint8_t>();
  ASSERT_EQ(hb.size(), n);
  size_t bad = 0;
  for (uint8_t x : hb) bad += x != 7;
  EXPECT_EQ(bad, 0u);
  hb = {};
  // Narrow across the 2^32 boundary, then a strided add with a broadcast scalar.
  Tensor tail = b.narrow(0, (size_t(1) << 32) - 32, 96);
  auto tv = tail.add(Tensor::full(Scalar(1), Shape{1}, DType::U8, kGpu).broadcast_as(Shape{96}))
                .to_vector<uint8_t>();
  for (uint8_t x : tv) ASSERT_EQ(x, 8);
  // Transposed copy of a [2, n/2] view: row 0 = 7, row 1 = 9.
  Tensor m = b.reshape(Shape{2, n / 2});
  m.narrow(0, 1, 1).fill_(Scalar(9));
  auto t = m.t().copy().narrow(0, n / 2 - 4, 4).to_vector<uint8_t>();
  EXPECT_EQ(t, (std::vector<uint8_t>{7, 9, 7, 9, 7, 9, 7, 9}));
}

// wick_gpu_test_launch_affine (gpu_device.cpp) from the loaded backend module:
// the launch path's error handling, driven with launch shapes no op produces.
struct LaunchResult {
  int code = -3;  // -3: no backend module loaded; -2: hook missing; -1: device not open
  std::string msg;
};
LaunchResult test_launch(const char* kernel, unsigned grid, unsigned block) {
  LaunchResult r;
  for (const char* lib : {"libwick-cuda.so", "libwick-rocm.so"}) {
    void* h = ::dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
    if (!h) continue;
    using Fn = int (*)(int, const char*, unsigned, unsigned, char*, size_t);
    auto fn = reinterpret_cast<Fn>(::dlsym(h, "wick_gpu_test_launch_affine"));
    char buf[512] = {};
    r.code = fn ? fn(0, kernel, grid, block, buf, sizeof buf) : -2;
    r.msg = buf;
    ::dlclose(h);
    return r;
  }
  return r;
}

TEST(GpuErrors, AFailedLaunchThrowsGpuRuntimeNamingTheKernelAndTheDeviceStaysUsable) {
  REQUIRE_GPU();
  Tensor x = Tensor::full(Scalar(3.0), Shape{8}, DType::F32, kGpu);  // opens the device
  ASSERT_EQ(test_launch("affine_f32", 1, 64).code, 0);               // the hook itself works
  for (auto [grid, block] : {std::pair<unsigned, unsigned>{1, 4096}, {0, 64}}) {
    LaunchResult r = test_launch("affine_f32", grid, block);
    EXPECT_EQ(r.code, int(ErrorKind::GpuRuntime)) << r.msg;
    EXPECT_NE(r.msg.find("launch of kernel affine_f32"), std::string::npos) << r.msg;
    EXPECT_NE(r.msg.find(fmt_grid(grid, block)), std::string::npos) << r.msg;
  }
  // A bad launch configuration is not sticky: later work runs and is right.
  std::vector<double> got = x.affine(2.0, 1.0).to_f64_vector();
  EXPECT_EQ(got, std::vector<double>(8, 7.0));
}

TEST(GpuErrors, AnUnknownKernelNameThrowsNamingItAndItsModule) {
  REQUIRE_GPU();
  Tensor x = Tensor::full(Scalar(1.0), Shape{4}, DType::F32, kGpu);
  LaunchResult r = test_launch("affine_q9", 1, 64);
  EXPECT_EQ(r.code, int(ErrorKind::GpuRuntime)) << r.msg;
  EXPECT_NE(r.msg.find("kernel affine_q9 not found in module affine"), std::string::npos) << r.msg;
  EXPECT_EQ(x.sum_all().to_f64_vector(), std::vector<double>{4.0});
}

TEST(GpuDevices, TheBackendReportsItsGpu) {
  REQUIRE_GPU();
  bool loaded = false;
  for (const auto& b : gpu_backend_status()) loaded = loaded || b.loaded;
  EXPECT_TRUE(loaded);
  const DeviceInfo info = device_info(kGpu);
  EXPECT_FALSE(info.name.empty());
  EXPECT_EQ(info.device, kGpu);
  EXPECT_TRUE(info.backend == "cuda" || info.backend == "rocm") << info.backend;
  EXPECT_GT(info.total_memory, 0u);
  EXPECT_TRUE(info.wave_size == 32 || info.wave_size == 64) << info.wave_size;
  EXPECT_GT(info.multiprocessors, 0);
}

// --- graphs -----------------------------------------------------------------------

TEST(Graphs, TheCpuHasNoQueueToRecord) {
  try {
    (void)Graph::capture(Device::cpu(), [] {});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("no queue to record"), std::string::npos) << e.what();
  }
  try {
    Graph().replay();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
  }
}

// ---- small ops run deferred ---------------------------------------------------------------

// The relative precision of a float dtype's rounding.
double unit_roundoff(DType dt) {
  switch (dt) {
    case DType::F16:
      return std::ldexp(1.0, -11);
    case DType::BF16:
      return std::ldexp(1.0, -8);
    case DType::F32:
      return std::ldexp(1.0, -24);
    default:
      return std::ldexp(1.0, -53);
  }
}

// Each op of the deferred families on a few elements, queued together before anything
// is read, every float dtype: each result against float64 math on the values its
// inputs hold (read back), within a few roundings of the dtype.
TEST(GpuDeferred, SmallOpsQueuedTogetherGiveTheirOwnResults) {
  REQUIRE_GPU();
  constexpr size_t kRows = 3, kCols = 20;
  std::vector<float> xv(kRows * kCols), yv(kRows * kCols), wv(kCols);
  for (size_t i = 0; i < xv.size(); ++i) {
    xv[i] = float(0.37 * double(int(i * 7 % 23) - 11) / 11.0);
    yv[i] = float(0.5 + 0.25 * double(i % 5));
  }
  for (size_t j = 0; j < kCols; ++j) wv[j] = float(0.5 + 0.05 * double(j));
  for (DType dt : {DType::F32, DType::F16, DType::BF16, DType::F64}) {
    SCOPED_TRACE(dtype_name(dt));
    const Tensor x = Tensor::from_vector(xv, {kRows, kCols}, kGpu).to_dtype(dt);
    const Tensor y = Tensor::from_vector(yv, {kRows, kCols}, kGpu).to_dtype(dt);
    const Tensor w = Tensor::from_vector(wv, {kCols}, kGpu).to_dtype(dt);
    synchronize(kGpu);
    const long before = deferred_ops();
    const Tensor e = x.exp();
    const Tensor s = e.add(y);
    const Tensor q = s.div(y);
    const Tensor a = q.affine(0.5, -1.0);
    const Tensor p = y.powf(1.5);
    const Tensor el = x.elu(0.7);
    const Tensor g = x.silu();
    const Tensor c = a.to_dtype(dt == DType::F32 ? DType::BF16 : DType::F32);
    const Tensor sum = a.sum({1});
    const Tensor mx = a.max({1});
    const Tensor mn = a.min({1});
    const Tensor all = a.sum_all();
    const Tensor rn = nn::rms_norm(a, w, 1e-5f);
    const Tensor sm = nn::softmax_last_dim(a);
    const Tensor lsm = nn::log_softmax_last_dim(a);
    EXPECT_EQ(deferred_ops() - before, 15) << "every op above qualifies";

    const double u = unit_roundoff(dt);
    const std::vector<double> X = x.to_f64_vector(), Y = y.to_f64_vector(), W = w.to_f64_vector();
    const std::vector<double> E = e.to_f64_vector(), S = s.to_f64_vector(), Q = q.to_f64_vector();
    const std::vector<double> A = a.to_f64_vector();
    const auto near = [&](const std::vector<double>& got, size_t i, double want, double ulps,
                          const char* what) {
      EXPECT_NEAR(got[i], want, ulps * u * std::max(1.0, std::abs(want))) << what << " " << i;
    };
    const std::vector<double> P = p.to_f64_vector(), EL = el.to_f64_vector(), G = g.to_f64_vector();
    const std::vector<double> C = c.to_f64_vector();
    for (size_t i = 0; i < X.size(); ++i) {
      near(E, i, std::exp(X[i]), 4, "exp");
      near(S, i, E[i] + Y[i], 2, "add");
      near(Q, i, S[i] / Y[i], 2, "div");
      near(A, i, Q[i] * 0.5 - 1.0, 2, "affine");
      near(P, i, std::pow(Y[i], 1.5), 4, "powf");
      near(EL, i, X[i] >= 0 ? X[i] : 0.7 * (std::exp(X[i]) - 1.0), 4, "elu");
      near(G, i, X[i] / (1.0 + std::exp(-X[i])), 4, "silu");
      EXPECT_NEAR(C[i], A[i], std::abs(A[i]) * std::ldexp(1.0, -8) + 1e-30) << "cast " << i;
    }
    const std::vector<double> SUM = sum.to_f64_vector(), MX = mx.to_f64_vector(), MN = mn.to_f64_vector();
    const std::vector<double> RN = rn.to_f64_vector(), SM = sm.to_f64_vector(), LSM = lsm.to_f64_vector();
    double total = 0;
    for (size_t r = 0; r < kRows; ++r) {
      double rs = 0, ss = 0, hi = -INFINITY, lo = INFINITY, se = 0, abs_sum = 0;
      for (size_t j = 0; j < kCols; ++j) {
        const double v = A[r * kCols + j];
        rs += v;
        abs_sum += std::abs(v);
        ss += v * v;
        hi = std::max(hi, v);
        lo = std::min(lo, v);
      }
      for (size_t j = 0; j < kCols; ++j) se += std::exp(A[r * kCols + j] - hi);
      total += rs;
      EXPECT_NEAR(SUM[r], rs, (2 * kCols) * u * abs_sum) << "sum " << r;
      EXPECT_EQ(MX[r], hi) << "max " << r;
      EXPECT_EQ(MN[r], lo) << "min " << r;
      const double scale = 1.0 / std::sqrt(ss / double(kCols) + double(1e-5f));
      for (size_t j = 0; j < kCols; ++j) {
        const size_t i = r * kCols + j;
        near(RN, i, A[i] * scale * W[j], 8, "rms_norm");
        near(SM, i, std::exp(A[i] - hi) / se, 8, "softmax");
        near(LSM, i, A[i] - hi - std::log(se), 8, "log_softmax");
      }
    }
    double abs_total = 0;
    for (double v : A) abs_total += std::abs(v);
    EXPECT_NEAR(all.to_f64_vector()[0], total, double(2 * A.size()) * u * abs_total) << "sum_all";
  }
}

// A chain of dependent small ops longer than one launch holds (so several launches run
// it, each op reading its predecessor's output): every step against float64.
TEST(GpuDeferred, AChainLongerThanOneLaunchKeepsItsOrder) {
  REQUIRE_GPU();
  constexpr int kSteps = 300;
  std::vector<float> v(100);
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i) * 0.01f - 0.5f;
  Tensor x = Tensor::from_vector(v, {100}, kGpu);
  synchronize(kGpu);
  const long before = deferred_ops();
  std::vector<Tensor> steps;
  for (int k = 0; k < kSteps; ++k) {
    x = k % 3 == 2 ? x.tanh() : x.affine(1.01, k % 2 ? 0.125 : -0.0625);
    steps.push_back(x);
  }
  EXPECT_EQ(deferred_ops() - before, kSteps);
  std::vector<double> want(v.begin(), v.end());
  for (int k = 0; k < kSteps; ++k) {
    const std::vector<double> got = steps[size_t(k)].to_f64_vector();
    // Each step from the previous step's f32 values as the device held them.
    const std::vector<double> prev =
        k == 0 ? std::vector<double>(v.begin(), v.end()) : steps[size_t(k) - 1].to_f64_vector();
    for (size_t i = 0; i < want.size(); ++i) {
      const double in = prev[i];
      want[i] = k % 3 == 2 ? std::tanh(in) : in * 1.01 + (k % 2 ? 0.125 : -0.0625);
      ASSERT_NEAR(got[i], want[i], 4e-7 * std::max(1.0, std::abs(want[i])))
          << "step " << k << " element " << i;
    }
  }
}

// Work that is not deferred runs after the deferred ops queued before it: a GEMM (the
// vendor BLAS's own queueing), a strided copy, a cumsum, a read to the host, a copy from
// the host into a block a deferred op's input freed, zeros into another such block.
TEST(GpuDeferred, OtherWorkRunsAfterTheDeferredOpsBeforeIt) {
  REQUIRE_GPU();
  constexpr size_t n = 8;
  std::vector<float> xv(n * n);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = float(int(i % 9) - 4) * 0.125f;
  const Tensor x = Tensor::from_vector(xv, {n, n}, kGpu);
  synchronize(kGpu);
  const long before = deferred_ops();
  const Tensor e = x.exp();                 // deferred
  const Tensor mm = e.matmul(e);            // the GEMM reads e
  const Tensor tr = e.t().contiguous();     // a strided copy of e
  const Tensor cs = e.cumsum(1);            // cumsum of e
  const Tensor back = mm.affine(2.0, 0.0);  // deferred again, after the GEMM
  EXPECT_EQ(deferred_ops() - before, 2);
  const std::vector<double> MM = mm.to_f64_vector(), TR = tr.to_f64_vector(), CS = cs.to_f64_vector();
  const std::vector<double> BACK = back.to_f64_vector();
  for (size_t i = 0; i < n; ++i) {
    double run = 0;
    for (size_t j = 0; j < n; ++j) {
      double want = 0;
      for (size_t k = 0; k < n; ++k)
        want += std::exp(double(xv[i * n + k])) * std::exp(double(xv[k * n + j]));
      EXPECT_NEAR(MM[i * n + j], want, 1e-3 * std::abs(want)) << i << " " << j;  // TF32 allowed or not
      EXPECT_EQ(BACK[i * n + j], 2.0 * MM[i * n + j]);
      EXPECT_NEAR(TR[j * n + i], std::exp(double(xv[i * n + j])), 1e-6 * std::exp(double(xv[i * n + j])));
      run += std::exp(double(xv[i * n + j]));
      EXPECT_NEAR(CS[i * n + j], run, 1e-5 * run) << i << " " << j;
    }
  }
  // Blocks freed while a deferred op still reads them, then taken by the host's copy and
  // by zeros: the deferred op reads the old values.
  for (int round = 0; round < 2; ++round) {
    std::vector<float> a(64), b(64, 7.0f);
    for (size_t i = 0; i < a.size(); ++i) a[i] = float(i) * 0.03125f;
    Tensor t = Tensor::from_vector(a, {64}, kGpu);
    const Tensor y = t.exp();
    t = Tensor();
    const Tensor fresh =
        round == 0 ? Tensor::from_vector(b, {64}, kGpu) : Tensor::zeros({64}, DType::F32, kGpu);
    const std::vector<float> got = y.to_vector<float>(), f = fresh.to_vector<float>();
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_NEAR(double(got[i]), std::exp(double(a[i])), 1e-6 * std::exp(double(a[i]))) << round << " " << i;
      EXPECT_EQ(f[i], round == 0 ? 7.0f : 0.0f) << round << " " << i;
    }
  }
}

// An allocation the device cannot hold returns the cached blocks to the runtime before
// it fails: a deferred op still reading such a block runs first, on the old values
// (compute-sanitizer memcheck in scripts/gpu-check.sh sees any read of freed memory).
TEST(GpuDeferred, AFailedAllocationRunsTheDeferredOpsBeforeFreeingTheCache) {
  REQUIRE_GPU();
  std::vector<float> a(256);
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(i) * 0.015625f - 2.0f;
  Tensor t = Tensor::from_vector(a, {256}, kGpu);
  synchronize(kGpu);
  const long before = deferred_ops();
  const Tensor y = t.exp();
  t = Tensor();  // its block goes to the cache while the deferred exp still reads it
  EXPECT_EQ(deferred_ops() - before, 1);
  EXPECT_THROW((void)Tensor::empty(Shape{size_t(1) << 38}, DType::F32, kGpu), Error);  // 1 TiB
  const std::vector<float> got = y.to_vector<float>();
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_NEAR(double(got[i]), std::exp(double(a[i])), 1e-6 * std::exp(double(a[i]))) << i;
}

// Map ops on strided views and broadcasts run deferred too (their collapsed dims and
// strides travel with the op): a transposed view, a view from an offset, a row and a
// column broadcast, a broadcast scalar, a 3-D permuted view, in f32 and f16. Each
// against float64 on the values the inputs hold.
TEST(GpuDeferred, StridedAndBroadcastMapOpsGiveTheirOwnResults) {
  REQUIRE_GPU();
  const auto ramp = [](size_t n, double scale) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = float(double(int(i * 5 % 19) - 9) * scale);
    return v;
  };
  for (DType dt : {DType::F32, DType::F16}) {
    SCOPED_TRACE(dtype_name(dt));
    const double tol = dt == DType::F32 ? 1e-6 : 2e-3;
    const Tensor m = Tensor::from_vector(ramp(12 * 10, 0.1), {12, 10}, kGpu).to_dtype(dt);
    const Tensor row = Tensor::from_vector(ramp(10, 0.25), {10}, kGpu).to_dtype(dt);
    const Tensor col = Tensor::from_vector(ramp(12, 0.5), {12, 1}, kGpu).to_dtype(dt).affine(1.0, 6.0);
    const Tensor one = Tensor::from_vector(std::vector<float>{1.5f}, {1}, kGpu).to_dtype(dt);
    const Tensor cube = Tensor::from_vector(ramp(4 * 5 * 6, 0.05), {4, 5, 6}, kGpu).to_dtype(dt);
    synchronize(kGpu);
    const long before = deferred_ops();
    const Tensor t_exp = m.t().exp();                    // [10, 12], transposed
    const Tensor n_neg = m.narrow(1, 3, 5).neg();        // [12, 5] from column 3
    const Tensor r_add = m.add(row);                     // row broadcast
    const Tensor c_div = m.div(col);                     // column broadcast
    const Tensor s_mul = m.mul(one);                     // a broadcast scalar
    const Tensor p_sqr = cube.permute({2, 0, 1}).sqr();  // [6, 4, 5]
    EXPECT_EQ(deferred_ops() - before, 6);
    const std::vector<double> M = m.to_f64_vector(), R = row.to_f64_vector(), C = col.to_f64_vector();
    const std::vector<double> K = cube.to_f64_vector();
    const double s = one.to_f64_vector()[0];
    const std::vector<double> TE = t_exp.to_f64_vector(), NN = n_neg.to_f64_vector(),
                              RA = r_add.to_f64_vector();
    const std::vector<double> CD = c_div.to_f64_vector(), SM = s_mul.to_f64_vector(),
                              PS = p_sqr.to_f64_vector();
    const auto near = [&](double got, double want, const char* what, size_t i) {
      EXPECT_NEAR(got, want, tol * std::max(1.0, std::abs(want))) << what << " " << i;
    };
    for (size_t i = 0; i < 12; ++i) {
      for (size_t j = 0; j < 10; ++j) {
        const double x = M[i * 10 + j];
        near(TE[j * 12 + i], std::exp(x), "transposed exp", i * 10 + j);
        if (j >= 3 && j < 8) near(NN[i * 5 + (j - 3)], -x, "narrowed neg", i * 10 + j);
        near(RA[i * 10 + j], x + R[j], "row broadcast add", i * 10 + j);
        near(CD[i * 10 + j], x / C[i], "column broadcast div", i * 10 + j);
        near(SM[i * 10 + j], x * s, "scalar broadcast mul", i * 10 + j);
      }
    }
    for (size_t a = 0; a < 4; ++a)
      for (size_t b = 0; b < 5; ++b)
        for (size_t c = 0; c < 6; ++c) {
          const double x = K[(a * 5 + b) * 6 + c];
          near(PS[(c * 4 + a) * 5 + b], x * x, "permuted sqr", (a * 5 + b) * 6 + c);
        }
  }
}

// What does not qualify runs its own kernel, with the same results: more elements than
// a deferred op holds (one past the bound; the bound itself is deferred), a view whose
// dims collapse to more than three, an integer dtype, a reduction over a leading dim.
TEST(GpuDeferred, OpsThatDoNotQualifyRunTheirOwnKernel) {
  REQUIRE_GPU();
  constexpr size_t kBound = 4096;
  const auto ramp = [](size_t n) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = float(int(i % 17) - 8) * 0.0625f;
    return v;
  };
  const std::vector<float> big = ramp(kBound + 1), edge = ramp(kBound), sq = ramp(64),
                           hyper = ramp(2 * 3 * 4 * 5);
  const Tensor tb = Tensor::from_vector(big, {kBound + 1}, kGpu);
  const Tensor te = Tensor::from_vector(edge, {kBound}, kGpu);
  const Tensor m = Tensor::from_vector(sq, {8, 8}, kGpu);
  const Tensor h = Tensor::from_vector(hyper, {2, 3, 4, 5}, kGpu);
  const Tensor ints = Tensor::from_vector(std::vector<int32_t>{-3, 4, -5, 6}, {4}, kGpu);
  synchronize(kGpu);
  long before = deferred_ops();
  const Tensor eb = tb.exp(), hp = h.permute({3, 2, 1, 0}).exp(), ia = ints.abs(), s0 = m.sum({0});
  EXPECT_EQ(deferred_ops() - before, 0);
  before = deferred_ops();
  const Tensor ee = te.exp();
  EXPECT_EQ(deferred_ops() - before, 1);
  const std::vector<float> EB = eb.to_vector<float>(), EE = ee.to_vector<float>();
  for (size_t i = 0; i < big.size(); ++i)
    EXPECT_NEAR(double(EB[i]), std::exp(double(big[i])), 1e-6 * std::exp(double(big[i]))) << i;
  for (size_t i = 0; i < edge.size(); ++i)
    EXPECT_NEAR(double(EE[i]), std::exp(double(edge[i])), 1e-6 * std::exp(double(edge[i]))) << i;
  const std::vector<float> HP = hp.to_vector<float>(), S0 = s0.to_vector<float>();
  for (size_t a = 0; a < 2; ++a)
    for (size_t b = 0; b < 3; ++b)
      for (size_t c = 0; c < 4; ++c)
        for (size_t d = 0; d < 5; ++d) {
          const double x = double(hyper[((a * 3 + b) * 4 + c) * 5 + d]);
          EXPECT_NEAR(double(HP[((d * 4 + c) * 3 + b) * 2 + a]), std::exp(x), 1e-6 * std::exp(x));
        }
  for (size_t i = 0; i < 8; ++i) {
    double col = 0;
    for (size_t j = 0; j < 8; ++j) col += double(sq[j * 8 + i]);
    EXPECT_NEAR(double(S0[i]), col, 1e-6);
  }
  EXPECT_EQ(ia.to_vector<int32_t>(), (std::vector<int32_t>{3, 4, 5, 6}));
}

// A recorded chain of ops (elementwise, a strided copy that uploads its layout, a
// reduction, a matmul) replayed after its input changed gives the ops' results on the new
// input, computed here in float64.
TEST(Graphs, AReplayRecomputesFromTheInputsItReads) {
  REQUIRE_GPU();
  const size_t n = 6;
  Tensor x = Tensor::zeros({n, n}, DType::F32, kGpu);
  Tensor y, s;
  const Graph g = Graph::capture(kGpu, [&] {
    const Tensor t = x.transpose(0, 1).contiguous();
    y = x.exp().add(t).matmul(x);
    s = y.sum({1});
  });
  for (int round = 0; round < 3; ++round) {
    std::vector<float> xv(n * n);
    for (size_t i = 0; i < xv.size(); ++i)
      xv[i] = float(0.1 * double((i * 7 + size_t(round) * 5) % 11) - 0.5);
    x.slice_set_(Tensor::from_vector(xv, {n, n}, kGpu), 0, 0);
    g.replay();
    const std::vector<double> got = y.to_f64_vector(), sums = s.to_f64_vector();
    for (size_t i = 0; i < n; ++i) {
      double row = 0.0;
      for (size_t j = 0; j < n; ++j) {
        double want = 0.0;
        for (size_t c = 0; c < n; ++c)
          want += (std::exp(double(xv[i * n + c])) + double(xv[c * n + i])) * double(xv[c * n + j]);
        EXPECT_NEAR(got[i * n + j], want, 1e-5) << round << " " << i << " " << j;
        row += got[i * n + j];
      }
      EXPECT_NEAR(sums[i], row, 1e-5);
    }
  }
}

// Small ops queued before a recording run once, before it, and none is deferred while
// the device's queue records (the graph holds each op's own kernel): after two replays
// of y = x * 2 + 1 on the prepared x, y holds that of x as prepared.
TEST(Graphs, OpsDeferredBeforeARecordingRunOnceAndNoneWhileItRecords) {
  REQUIRE_GPU();
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, {4}, kGpu).affine(1.0, 0.5);  // deferred
  Tensor y;
  const long before = deferred_ops();
  const Graph g = Graph::capture(kGpu, [&] { y = x.affine(2.0, 1.0); });
  EXPECT_EQ(deferred_ops(), before) << "an op was deferred while recording";
  g.replay();
  g.replay();
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{4, 6, 8, 10}));
}

// The buffers made while recording stay the graph's: tensors made after it never share
// them, so a replay leaves them alone; when the graph goes, its memory returns.
TEST(Graphs, AReplayWritesOnlyTheGraphsOwnBuffers) {
  REQUIRE_GPU();
  synchronize(kGpu);
  const size_t baseline = memory_stats(kGpu).in_use;
  {
    Tensor x = Tensor::full(Scalar(2.0), Shape{4096}, DType::F32, kGpu);
    Tensor out;
    Graph g = Graph::capture(kGpu, [&] {
      Tensor a = x.affine(3.0, 0.0);  // released inside the recording
      out = a.add(x);
    });
    std::vector<Tensor> others;
    for (int i = 0; i < 8; ++i)
      others.push_back(Tensor::full(Scalar(double(i)), Shape{4096}, DType::F32, kGpu));
    g.replay();
    g.replay();
    EXPECT_EQ(out.to_f64_vector(), std::vector<double>(4096, 8.0));
    for (int i = 0; i < 8; ++i)
      EXPECT_EQ(others[size_t(i)].to_f64_vector(), std::vector<double>(4096, double(i)));
  }
  synchronize(kGpu);
  EXPECT_EQ(memory_stats(kGpu).in_use, baseline);
}

// Reading device memory while recording fails the capture with GpuRuntime; the device
// then works as before.
TEST(Graphs, WaitingForTheDeviceWhileRecordingFailsTheCapture) {
  REQUIRE_GPU();
  const Tensor x = Tensor::full(Scalar(1.5), Shape{8}, DType::F32, kGpu);
  try {
    (void)Graph::capture(kGpu, [&] { (void)x.exp().to_vector<float>(); });
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::GpuRuntime) << e.what();
  }
  EXPECT_EQ(x.add(x).to_f64_vector(), std::vector<double>(8, 3.0));
  const Graph g = Graph::capture(kGpu, [] {});
  g.replay();
  synchronize(kGpu);
}

}  // namespace
}  // namespace wick
