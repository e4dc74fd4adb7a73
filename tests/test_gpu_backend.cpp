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

TEST(GpuModuleStore, AThousandAffineCallsLoadTheAffineModuleOnce) {
  REQUIRE_GPU();
  Tensor x = Tensor::full(Scalar(2.0), Shape{64}, DType::F32, kGpu);
  for (int i = 0; i < 1000; ++i) x = x.affine(1.0, 1.0);
  EXPECT_EQ(x.to_vector<float>()[0], 1002.0f);
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
