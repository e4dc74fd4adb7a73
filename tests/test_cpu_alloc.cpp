// The CPU backend's block cache (src/backend/cpu/device.cpp): blocks of 1 MiB and more
// are reused after their tensor dies, so nothing may depend on fresh memory being zero,
// and a reused block must hold exactly what the new tensor wrote.
#include <gtest/gtest.h>

#include <vector>

#include "wick/device.h"
#include "wick/options.h"
#include "wick/tensor.h"

namespace wick {
namespace {

constexpr size_t kBig = size_t(1) << 19;  // 2 MiB of f32: above the caching threshold

TEST(CpuBlockCache, ZerosOnAReusedDirtyBlockAreZero) {
  for (int round = 0; round < 3; ++round) {
    { Tensor dirty = Tensor::full(Scalar(7.0), Shape{kBig}, DType::F32); }  // freed: its block is cached
    Tensor z = Tensor::zeros(Shape{kBig}, DType::F32);
    std::vector<float> v = z.to_vector<float>();
    size_t nonzero = 0;
    for (float x : v) nonzero += x != 0.0f;
    EXPECT_EQ(nonzero, 0u) << "round " << round;
  }
}

TEST(CpuBlockCache, ReusedBlocksOfNeighbouringSizesKeepTheirOwnValues) {
  // Sizes in one size class and across classes, allocated and freed in turn; each
  // tensor must read back exactly the values written into it.
  for (size_t n : {kBig, kBig + 1, kBig + 4096, kBig * 5 / 4, kBig * 3, kBig / 2}) {
    std::vector<float> want(n);
    for (size_t i = 0; i < n; ++i) want[i] = float(i % 1000) - float(n % 7);
    Tensor t = Tensor::from_vector(want, Shape{n});
    Tensor u = t.affine(2.0, 1.0);  // a second live block while t holds one
    std::vector<float> got = u.to_vector<float>();
    ASSERT_EQ(got.size(), n);
    for (size_t i = 0; i < n; i += 997) ASSERT_EQ(got[i], 2.0f * want[i] + 1.0f) << "n " << n << " i " << i;
    EXPECT_EQ(t.to_vector<float>(), want) << "n " << n;
  }
}

// Under AddressSanitizer the cache keeps nothing (every block goes back at once, so
// that the sanitizer sees a use after free): the counts below are then all 0.
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kCaching = 0;
#else
constexpr size_t kCaching = 1;
#endif

TEST(CpuBlockCache, AFullCacheEvictsTheBlocksReleasedLongestAgo) {
  // An 8 MiB cache: two 4 MiB blocks fill it; a 2 MiB block released next is kept and
  // the older 4 MiB block goes (6 MiB cached), so the size used last stays cached.
  const Options saved = options();
  Options o = saved;
  o.cpu_cache_bytes = size_t(8) << 20;
  set_options(o);
  const size_t four = size_t(1) << 20, two = size_t(1) << 19;  // f32 elements of 4 and 2 MiB
  auto cached = [] { return memory_stats(Device::cpu()).cached; };
  { Tensor a = Tensor::zeros(Shape{four}), b = Tensor::zeros(Shape{four}); }
  EXPECT_EQ(cached(), kCaching * (size_t(8) << 20));
  { Tensor c = Tensor::zeros(Shape{two}); }
  EXPECT_EQ(cached(), kCaching * (size_t(6) << 20));
  {
    Tensor d = Tensor::zeros(Shape{four});  // the 4 MiB block left in the cache
    EXPECT_EQ(cached(), kCaching * (size_t(2) << 20));
    std::vector<float> v = d.to_vector<float>();
    size_t nonzero = 0;
    for (float x : v) nonzero += x != 0.0f;
    EXPECT_EQ(nonzero, 0u);
  }
  EXPECT_EQ(cached(), kCaching * (size_t(6) << 20));
  set_options(saved);
}

}  // namespace
}  // namespace wick
