// The tensor core: f16/bf16 conversions, views (no copies), creation, cat/stack,
// reshape copying only when it must, chunk, to_device on the CPU, rand/randn
// (determinism per seed, bounds, moments, the documented Philox stream), and the
// core's error paths (kind and message).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "check/philox_ref.h"
#include "wick/tensor.h"

namespace wick {
namespace {

// Asserts that `expr` throws wick::Error of `kind` whose message contains `part`.
#define EXPECT_WICK_ERROR(expr, want_kind, want_part)                        \
  do {                                                                       \
    try {                                                                    \
      (void)(expr);                                                          \
      ADD_FAILURE() << #expr << " did not throw";                            \
    } catch (const Error& err_) {                                            \
      EXPECT_EQ(err_.kind(), want_kind) << err_.what();                      \
      EXPECT_NE(std::string(err_.what()).find(want_part), std::string::npos) \
          << err_.what() << "\nwanted: " << want_part;                       \
    }                                                                        \
  } while (0)

std::vector<float> iota_f(size_t n, float start = 0) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + float(i);
  return v;
}

Tensor iota_tensor(const Shape& s) { return Tensor::from_vector(iota_f(s.elem_count()), s); }

// --- f16 / bf16 ---------------------------------------------------------------------

TEST(Half, F16KnownBitPatterns) {
  EXPECT_EQ(f32_to_f16_bits(1.0f), 0x3C00);
  EXPECT_EQ(f32_to_f16_bits(-2.0f), 0xC000);
  EXPECT_EQ(f32_to_f16_bits(65504.0f), 0x7BFF);               // largest finite
  EXPECT_EQ(f32_to_f16_bits(65520.0f), 0x7C00);               // halfway to 2^16 rounds to inf
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.0f, -26)), 0x0000);  // below half of it: zero
  EXPECT_EQ(f32_to_f16_bits(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_f16_bits(INFINITY), 0x7C00);
  EXPECT_EQ(f16_bits_to_f32(0x3555), 0.333251953125f);
  EXPECT_EQ(f16_bits_to_f32(0x0001), std::ldexp(1.0f, -24));
}

TEST(Half, F16RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties go to the even mantissa (1.0).
  EXPECT_EQ(f32_to_f16_bits(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even).
  EXPECT_EQ(f32_to_f16_bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  // f64 -> f16 rounds once: 1 + 2^-11 + 2^-40 is just above halfway, so it rounds up
  // (through f32 it would first round to 1 + 2^-11 and then tie down to 1.0).
  EXPECT_EQ(f64_to_f16_bits(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)), 0x3C01);
}

TEST(Half, NaNStaysNaN) {
  uint16_t h = f32_to_f16_bits(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(h & 0x7C00, 0x7C00);
  EXPECT_NE(h & 0x03FF, 0);
  EXPECT_TRUE(std::isnan(f16_bits_to_f32(h)));
  uint16_t b = f32_to_bf16_bits(std::numeric_limits<float>::quiet_NaN());
  EXPECT_TRUE(std::isnan(bf16_bits_to_f32(b)));
  EXPECT_TRUE(std::isnan(bf16_bits_to_f32(f64_to_bf16_bits(std::nan("")))));
}

TEST(Half, Bf16KnownBitPatternsAndRounding) {
  EXPECT_EQ(f32_to_bf16_bits(1.0f), 0x3F80);
  EXPECT_EQ(f32_to_bf16_bits(-INFINITY), 0xFF80);
  EXPECT_EQ(f32_to_bf16_bits(1.0f + std::ldexp(1.0f, -8)), 0x3F80);      // tie to even
  EXPECT_EQ(f32_to_bf16_bits(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);  // tie to even (up)
  EXPECT_EQ(f32_to_bf16_bits(3.0e38f * 1.2f), 0x7F80);                   // f32 inf stays inf
  EXPECT_EQ(bf16_bits_to_f32(0x4049), 3.140625f);
}

TEST(Half, EveryF16BitPatternRoundTrips) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    float f = f16_bits_to_f32(uint16_t(b));
    if (std::isnan(f)) continue;
    ASSERT_EQ(f32_to_f16_bits(f), b) << std::hex << b;
  }
}

// --- views share storage and move no data ----------------------------------------------

TEST(Views, NarrowIsAnOffsetView) {
  Tensor x = iota_tensor({4, 5});
  Tensor n = x.narrow(0, 1, 2);
  EXPECT_EQ(n.storage(), x.storage());
  EXPECT_EQ(n.layout().start_offset(), 5u);
  EXPECT_TRUE(n.is_contiguous());
  EXPECT_EQ(n.to_vector<float>(), iota_f(10, 5));
  Tensor c = x.narrow(1, 3, 2);
  EXPECT_FALSE(c.is_contiguous());
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{3, 4, 8, 9, 13, 14, 18, 19}));
}

TEST(Views, TransposeAndPermuteSwapStrides) {
  Tensor x = iota_tensor({2, 3, 4});
  Tensor t = x.transpose(0, 2);
  EXPECT_EQ(t.storage(), x.storage());
  EXPECT_EQ(t.dims(), (std::vector<size_t>{4, 3, 2}));
  EXPECT_EQ(t.layout().strides(), (std::vector<size_t>{1, 4, 12}));
  Tensor p = x.permute({1, 2, 0});
  EXPECT_EQ(p.dims(), (std::vector<size_t>{3, 4, 2}));
  EXPECT_EQ(p.layout().strides(), (std::vector<size_t>{4, 1, 12}));
  // p[i][j][k] = x[k][i][j] = 12k + 4i + j
  auto v = p.to_vector<float>();
  for (size_t i = 0; i < 3; ++i)
    for (size_t j = 0; j < 4; ++j)
      for (size_t k = 0; k < 2; ++k) EXPECT_EQ(v[(i * 4 + j) * 2 + k], float(12 * k + 4 * i + j));
  Tensor m = iota_tensor({2, 3}).t();
  EXPECT_EQ(m.to_vector<float>(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

TEST(Views, BroadcastAsUsesStrideZero) {
  Tensor row = Tensor::from_vector(std::vector<float>{1, 2, 3}, Shape{3});
  Tensor b = row.broadcast_as({2, 3});
  EXPECT_EQ(b.storage(), row.storage());
  EXPECT_EQ(b.layout().strides(), (std::vector<size_t>{0, 1}));
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{1, 2, 3, 1, 2, 3}));
  Tensor col = Tensor::from_vector(std::vector<float>{1, 2}, Shape{2, 1}).broadcast_as({2, 3});
  EXPECT_EQ(col.to_vector<float>(), (std::vector<float>{1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(row.broadcast_left({2}).dims(), (std::vector<size_t>{2, 3}));
}

TEST(Views, SqueezeUnsqueezeFlatten) {
  Tensor x = iota_tensor({2, 1, 3});
  EXPECT_EQ(x.squeeze(1).dims(), (std::vector<size_t>{2, 3}));
  EXPECT_EQ(x.squeeze(-2).storage(), x.storage());
  EXPECT_EQ(x.unsqueeze(0).dims(), (std::vector<size_t>{1, 2, 1, 3}));
  EXPECT_EQ(x.unsqueeze(-1).dims(), (std::vector<size_t>{2, 1, 3, 1}));
  EXPECT_EQ(x.flatten_all().dims(), (std::vector<size_t>{6}));
  EXPECT_EQ(iota_tensor({2, 3, 4}).flatten(1, 2).dims(), (std::vector<size_t>{2, 12}));
  EXPECT_EQ(iota_tensor({2, 3, 4}).flatten(0, 1).dims(), (std::vector<size_t>{6, 4}));
}

TEST(Views, ChunkSplitsIntoViews) {
  Tensor x = iota_tensor({5, 2});
  auto cs = x.chunk(2, 0);
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_EQ(cs[0].dims(), (std::vector<size_t>{3, 2}));
  EXPECT_EQ(cs[1].dims(), (std::vector<size_t>{2, 2}));
  EXPECT_EQ(cs[1].storage(), x.storage());
  EXPECT_EQ(cs[1].to_vector<float>(), (std::vector<float>{6, 7, 8, 9}));
  auto cols = x.chunk(2, 1);
  ASSERT_EQ(cols.size(), 2u);
  EXPECT_EQ(cols[1].to_vector<float>(), (std::vector<float>{1, 3, 5, 7, 9}));
  EXPECT_EQ(x.chunk(7, 0).size(), 5u);  // never an empty chunk
}

TEST(Views, ContiguousCopiesOnlyWhenNeeded) {
  Tensor x = iota_tensor({3, 4});
  EXPECT_EQ(x.contiguous().storage(), x.storage());
  Tensor t = x.t();
  Tensor c = t.contiguous();
  EXPECT_NE(c.storage(), x.storage());
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.to_vector<float>(), t.to_vector<float>());
  EXPECT_NE(x.copy().storage(), x.storage());
}

TEST(Views, ContiguousOfPermutedNarrowedAndTransposedLayouts) {
  // x[b, i, j] = its flat index, in dtypes of 2, 4 and 8 bytes; each copy against index math.
  const size_t B = 3, R = 37, C = 45;
  std::vector<double> v(B * R * C);
  for (size_t k = 0; k < v.size(); ++k) v[k] = double(k % 2048);
  for (DType dt : {DType::F16, DType::F32, DType::I64}) {
    Tensor x = Tensor::from_vector(v, {B, R, C}).to_dtype(dt);
    auto at = [&](size_t b, size_t i, size_t j) { return double((b * R * C + i * C + j) % 2048); };
    // a batch of transposed matrices: the tiled path, tiles cut at both edges
    std::vector<double> got = x.permute({0, 2, 1}).contiguous().to_dtype(DType::F64).to_vector<double>();
    size_t bad = 0;
    for (size_t b = 0; b < B; ++b)
      for (size_t j = 0; j < C; ++j)
        for (size_t i = 0; i < R; ++i) bad += got[(b * C + j) * R + i] != at(b, i, j);
    EXPECT_EQ(bad, 0u) << "permute " << dtype_name(dt);
    // rows with an offset and a row stride: one copy per row
    got = x.narrow(2, 3, 40).narrow(1, 2, 30).contiguous().to_dtype(DType::F64).to_vector<double>();
    bad = 0;
    for (size_t b = 0; b < B; ++b)
      for (size_t i = 0; i < 30; ++i)
        for (size_t j = 0; j < 40; ++j) bad += got[(b * 30 + i) * 40 + j] != at(b, i + 2, j + 3);
    EXPECT_EQ(bad, 0u) << "narrow " << dtype_name(dt);
    // a transposed narrowed matrix (an offset, no batch)
    got = x.narrow(0, 1, 1)
              .squeeze(0)
              .narrow(1, 5, 33)
              .t()
              .contiguous()
              .to_dtype(DType::F64)
              .to_vector<double>();
    bad = 0;
    for (size_t j = 0; j < 33; ++j)
      for (size_t i = 0; i < R; ++i) bad += got[j * R + i] != at(1, i, j + 5);
    EXPECT_EQ(bad, 0u) << "transposed narrow " << dtype_name(dt);
  }
}

TEST(Views, ReshapeCopiesOnlyWhenNotContiguous) {
  Tensor x = iota_tensor({3, 4});
  Tensor r = x.reshape({2, 6});
  EXPECT_EQ(r.storage(), x.storage());
  EXPECT_EQ(r.to_vector<float>(), iota_f(12));
  Tensor n = x.narrow(0, 1, 2).reshape({8});  // contiguous with an offset: still a view
  EXPECT_EQ(n.storage(), x.storage());
  EXPECT_EQ(n.to_vector<float>(), iota_f(8, 4));
  Tensor t = x.t().reshape({12});
  EXPECT_NE(t.storage(), x.storage());
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
}

TEST(Views, WritesThroughAViewReachTheBase) {
  Tensor x = Tensor::zeros({3, 3});
  x.narrow(1, 1, 1).fill_(Scalar(5.0));
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{0, 5, 0, 0, 5, 0, 0, 5, 0}));
  x.slice_set_(Tensor::ones({1, 3}), 0, 2);
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{0, 5, 0, 0, 5, 0, 1, 1, 1}));
}

// --- creation -------------------------------------------------------------------------

TEST(Creation, ZerosOnesFull) {
  EXPECT_EQ(Tensor::zeros({2, 2}, DType::I64).to_vector<int64_t>(), (std::vector<int64_t>(4, 0)));
  EXPECT_EQ(Tensor::ones({3}, DType::U8).to_vector<uint8_t>(), (std::vector<uint8_t>(3, 1)));
  EXPECT_EQ(Tensor::full(Scalar(-2.5), {2}, DType::F64).to_vector<double>(),
            (std::vector<double>{-2.5, -2.5}));
  auto h = Tensor::full(Scalar(0.1), {1}, DType::F16).to_vector<f16>();
  EXPECT_EQ(h[0].bits, 0x2E66);  // 0.1 in f16 (0.0999755859375)
  int64_t big = (int64_t(1) << 60) + 1;
  EXPECT_EQ(Tensor::full(Scalar(big), {1}, DType::I64).to_vector<int64_t>()[0], big);
}

TEST(Creation, FullAndZerosOfEveryDTypeAtLengthsAroundTheVectorAndThreadPieces) {
  // Lengths around one vector (up to 64 bytes), four unrolled vectors, and the 256 KiB pieces
  // the threads share, so every tail and piece boundary is written once with the value's bits.
  for (size_t n : {size_t(1), size_t(15), size_t(63), size_t(64), size_t(257), (size_t(1) << 18) + 3,
                   (size_t(3) << 20) / 2 + 7}) {
    auto all = [&](const auto& v, auto want) {
      return std::all_of(v.begin(), v.end(), [&](auto x) { return std::memcmp(&x, &want, sizeof x) == 0; });
    };
    EXPECT_TRUE(all(Tensor::full(Scalar(200.0), {n}, DType::U8).to_vector<uint8_t>(), uint8_t(200))) << n;
    EXPECT_TRUE(all(Tensor::full(Scalar(-7.0), {n}, DType::I32).to_vector<int32_t>(), int32_t(-7))) << n;
    EXPECT_TRUE(
        all(Tensor::full(Scalar(int64_t(-3) << 40), {n}, DType::I64).to_vector<int64_t>(), int64_t(-3) << 40))
        << n;
    // -2.5 is 0xC100 in f16 and 0xC020 in bf16
    EXPECT_TRUE(all(Tensor::full(Scalar(-2.5), {n}, DType::F16).to_vector<f16>(), f16::from_bits(0xC100)))
        << n;
    EXPECT_TRUE(all(Tensor::full(Scalar(-2.5), {n}, DType::BF16).to_vector<bf16>(), bf16::from_bits(0xC020)))
        << n;
    EXPECT_TRUE(all(Tensor::full(Scalar(1.5), {n}, DType::F32).to_vector<float>(), 1.5f)) << n;
    EXPECT_TRUE(all(Tensor::full(Scalar(0.1), {n}, DType::F64).to_vector<double>(), 0.1)) << n;
    // zeros in a block that held other values (the allocator hands the block just freed back)
    (void)Tensor::full(Scalar(-1.0), {n}, DType::I64);
    EXPECT_TRUE(all(Tensor::zeros({n}, DType::I64).to_vector<int64_t>(), int64_t(0))) << n;
    (void)Tensor::full(Scalar(-1.0), {n}, DType::F16);
    EXPECT_TRUE(all(Tensor::zeros({n}, DType::F16).to_vector<f16>(), f16::from_bits(0))) << n;
  }
  // A fill of a view writes the view only.
  Tensor x = Tensor::zeros({3, size_t(1) << 18});
  x.narrow(0, 1, 1).fill_(Scalar(4.0));
  auto v = x.to_vector<float>();
  const size_t row = size_t(1) << 18;
  EXPECT_EQ(std::count(v.begin(), v.end(), 4.0f), std::ptrdiff_t(row));
  EXPECT_TRUE(std::all_of(v.begin() + std::ptrdiff_t(row), v.begin() + std::ptrdiff_t(2 * row),
                          [](float f) { return f == 4.0f; }));
}

TEST(Creation, CopiesOfLargeOddSizesMatchTheSource) {
  // Sizes below, at and above the 1 MiB where copies go to the threads, in 256 KiB pieces, with
  // tails that are no whole piece; each element is its own index.
  for (size_t n : {size_t(1000), (size_t(1) << 18) - 1, (size_t(1) << 18) + 5, (size_t(5) << 18) + 4097}) {
    Tensor src = Tensor::arange(0, double(n), 1, DType::I32);
    auto got = src.copy().to_vector<int32_t>();
    ASSERT_EQ(got.size(), n);
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) bad += got[i] != int32_t(i);
    EXPECT_EQ(bad, 0u) << n;
  }
}

TEST(Creation, Arange) {
  EXPECT_EQ(Tensor::arange(0, 5).to_vector<float>(), iota_f(5));
  EXPECT_EQ(Tensor::arange(1, 2, 0.25, DType::F64).to_vector<double>(),
            (std::vector<double>{1, 1.25, 1.5, 1.75}));
  EXPECT_EQ(Tensor::arange(5, 0, -2, DType::I32).to_vector<int32_t>(), (std::vector<int32_t>{5, 3, 1}));
  EXPECT_EQ(Tensor::arange(3, 3).elem_count(), 0u);
}

TEST(Creation, FromVectorToVectorEveryDtype) {
  EXPECT_EQ(Tensor::from_vector(std::vector<uint8_t>{1, 255}, {2}).to_vector<uint8_t>(),
            (std::vector<uint8_t>{1, 255}));
  EXPECT_EQ(Tensor::from_vector(std::vector<uint32_t>{4000000000u}, {1}).to_vector<uint32_t>()[0],
            4000000000u);
  EXPECT_EQ(Tensor::from_vector(std::vector<int32_t>{-7, 7}, {2}).to_vector<int32_t>(),
            (std::vector<int32_t>{-7, 7}));
  EXPECT_EQ(Tensor::from_vector(std::vector<int64_t>{-(int64_t(1) << 62)}, {1}).to_vector<int64_t>()[0],
            -(int64_t(1) << 62));
  EXPECT_EQ(Tensor::from_vector(std::vector<f16>{f16(1.5f)}, {1}).to_vector<f16>()[0].bits, 0x3E00);
  EXPECT_EQ(Tensor::from_vector(std::vector<bf16>{bf16(-1.0f)}, {1}).to_vector<bf16>()[0].bits, 0xBF80);
  EXPECT_EQ(Tensor::from_vector(std::vector<double>{1e300}, {1}).to_vector<double>()[0], 1e300);
  Tensor e = Tensor::from_vector(std::vector<float>{}, {0, 3});
  EXPECT_EQ(e.elem_count(), 0u);
  EXPECT_TRUE(e.to_vector<float>().empty());
  EXPECT_EQ(Tensor::from_vector(std::vector<float>{4}, Shape{}).item(), 4.0);
}

TEST(Creation, StrPrintsTheValues) {
  // PyTorch prints torch.zeros(2, 3, dtype=torch.bfloat16) the same way (dtype named as wick names it).
  EXPECT_EQ(Tensor::zeros({2, 3}, DType::BF16).str(),
            "tensor([[0., 0., 0.],\n        [0., 0., 0.]], dtype=bf16)");
}

TEST(Creation, ToDeviceOnTheCpuIsTheSameTensor) {
  Tensor x = iota_tensor({2, 2});
  Tensor y = x.to_device(Device::cpu());
  EXPECT_EQ(y.storage(), x.storage());
  EXPECT_EQ(y.device(), Device::cpu());
  EXPECT_EQ(Device::cpu().str(), "cpu");
  EXPECT_EQ(Device::parse("gpu:2"), Device::gpu(2));
  EXPECT_EQ(available_devices().front(), Device::cpu());
}

// --- cat and stack ------------------------------------------------------------------------

TEST(CatStack, CatAlongEachDim) {
  Tensor a = iota_tensor({2, 2}), b = Tensor::from_vector(iota_f(2, 10), {2, 1});
  EXPECT_EQ(Tensor::cat({a, b}, 1).to_vector<float>(), (std::vector<float>{0, 1, 10, 2, 3, 11}));
  Tensor c = Tensor::from_vector(iota_f(2, 20), {1, 2});
  EXPECT_EQ(Tensor::cat({a, c}, 0).to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 20, 21}));
  EXPECT_EQ(Tensor::cat({a, c}, -2).dims(), (std::vector<size_t>{3, 2}));
  // a transposed input is read through its strides
  EXPECT_EQ(Tensor::cat({a.t(), a}, 0).to_vector<float>(), (std::vector<float>{0, 2, 1, 3, 0, 1, 2, 3}));
  // an empty input contributes nothing
  EXPECT_EQ(Tensor::cat({a, Tensor::zeros({0, 2})}, 0).to_vector<float>(), iota_f(4));
}

TEST(CatStack, StackAddsADim) {
  Tensor a = Tensor::from_vector(std::vector<int32_t>{1, 2}, {2}),
         b = Tensor::from_vector(std::vector<int32_t>{3, 4}, {2});
  Tensor s0 = Tensor::stack({a, b}, 0), s1 = Tensor::stack({a, b}, 1);
  EXPECT_EQ(s0.dims(), (std::vector<size_t>{2, 2}));
  EXPECT_EQ(s0.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3, 4}));
  EXPECT_EQ(s1.to_vector<int32_t>(), (std::vector<int32_t>{1, 3, 2, 4}));
}

// --- rand / randn ------------------------------------------------------------------------

TEST(Random, SameSeedSameNumbersAndCallsAdvance) {
  Tensor::manual_seed(42);
  auto a = Tensor::rand({1000}).to_vector<float>();
  auto b = Tensor::rand({1000}).to_vector<float>();
  Tensor::manual_seed(42);
  auto a2 = Tensor::rand({1000}).to_vector<float>();
  Tensor::manual_seed(43);
  auto c = Tensor::rand({1000}).to_vector<float>();
  EXPECT_EQ(a, a2);
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
}

TEST(Random, FollowsTheDocumentedPhiloxStream) {
  Tensor::manual_seed(7);
  auto u = Tensor::rand({64}, DType::F64, Device::cpu(), -1.0, 3.0).to_vector<double>();
  auto u32 = Tensor::rand({64}, DType::F32, Device::cpu(), 0.0, 1.0).to_vector<float>();  // counter offset 1
  for (size_t i = 0; i < 64; ++i) {
    EXPECT_EQ(u[i], check::philox_ref::uniform(i, 0, 7, true, -1.0, 3.0)) << i;
    EXPECT_EQ(u32[i], float(check::philox_ref::uniform(i, 1, 7, false, 0.0, 1.0))) << i;
  }
}

TEST(Random, UniformBoundsAndMoments) {
  Tensor::manual_seed(1);
  const size_t n = 200000;
  auto v = Tensor::rand({n}, DType::F64, Device::cpu(), 2.0, 6.0).to_vector<double>();
  double mean = 0, var = 0;
  for (double x : v) {
    ASSERT_GE(x, 2.0);
    ASSERT_LT(x, 6.0);
    mean += x / double(n);
  }
  for (double x : v) var += (x - mean) * (x - mean) / double(n);
  // U(2,6): mean 4 (std of the mean 1.155/sqrt(n) ~ 0.0026), variance 16/12 = 1.333
  EXPECT_NEAR(mean, 4.0, 0.015);
  EXPECT_NEAR(var, 16.0 / 12.0, 0.02);
}

TEST(Random, NormalMoments) {
  Tensor::manual_seed(2);
  const size_t n = 200000;
  for (DType dt : {DType::F32, DType::F64}) {
    auto v = Tensor::randn({n}, dt, Device::cpu(), 1.5, 2.0).to_f64_vector();
    double mean = 0, m2 = 0, m4 = 0;
    for (double x : v) mean += x / double(n);
    for (double x : v) {
      double d = (x - mean) * (x - mean);
      m2 += d / double(n);
      m4 += d * d / double(n);
    }
    // N(1.5, 2^2): mean 1.5 (std of the mean 2/sqrt(n) ~ 0.0045), variance 4, kurtosis 3
    EXPECT_NEAR(mean, 1.5, 0.025) << dtype_name(dt);
    EXPECT_NEAR(m2, 4.0, 0.06) << dtype_name(dt);
    EXPECT_NEAR(m4 / (m2 * m2), 3.0, 0.06) << dtype_name(dt);
  }
}

TEST(Random, HalfDtypesRoundTheSameStream) {
  Tensor::manual_seed(9);
  auto h = Tensor::rand({256}, DType::BF16).to_vector<bf16>();
  for (size_t i = 0; i < 256; ++i)
    EXPECT_EQ(h[i].bits, bf16(check::philox_ref::uniform(i, 0, 9, false, 0.0, 1.0)).bits) << i;
}

// --- error paths -----------------------------------------------------------------------

TEST(CoreErrors, ReshapeElementCountMismatch) {
  EXPECT_WICK_ERROR(iota_tensor({2, 3}).reshape({4, 2}), ErrorKind::ShapeMismatch,
                    "[reshape] cannot reshape [2,3] f32 (6 elements) to [4,2] (8 elements)");
}

TEST(CoreErrors, NarrowPastTheEnd) {
  EXPECT_WICK_ERROR(iota_tensor({4, 5}).narrow(1, 3, 3), ErrorKind::IndexOutOfRange,
                    "[narrow] start 3 len 3 past the end of dim 1 (size 5) of [4,5] f32");
  EXPECT_WICK_ERROR(iota_tensor({4}).narrow(0, 5, 0), ErrorKind::IndexOutOfRange, "[narrow] start 5 len 0");
}

TEST(CoreErrors, DimsOutOfRange) {
  Tensor x = iota_tensor({2, 3});
  EXPECT_WICK_ERROR(x.narrow(2, 0, 1), ErrorKind::DimOutOfRange, "[narrow] dim 2 out of range for rank 2");
  EXPECT_WICK_ERROR(x.transpose(0, -3), ErrorKind::DimOutOfRange,
                    "[transpose] dim -3 out of range for rank 2");
  EXPECT_WICK_ERROR(x.squeeze(5), ErrorKind::DimOutOfRange, "[squeeze] dim 5 out of range");
  EXPECT_WICK_ERROR(x.unsqueeze(4), ErrorKind::DimOutOfRange, "[unsqueeze] dim 4 out of range for rank 3");
  EXPECT_WICK_ERROR(x.chunk(2, 2), ErrorKind::DimOutOfRange, "[chunk] dim 2");
  EXPECT_WICK_ERROR(x.dim(-3), ErrorKind::DimOutOfRange, "[dim] dim -3");
  EXPECT_WICK_ERROR(Tensor::cat({x, x}, 2), ErrorKind::DimOutOfRange, "[cat] dim 2 out of range for rank 2");
  EXPECT_WICK_ERROR(Tensor::stack({x, x}, 3), ErrorKind::DimOutOfRange,
                    "[stack] dim 3 out of range for rank 3");
  EXPECT_WICK_ERROR(x.permute({0, 2}), ErrorKind::DimOutOfRange, "[permute] dim 2 out of range");
  EXPECT_WICK_ERROR(iota_tensor({3}).t(), ErrorKind::DimOutOfRange, "[t] tensor [3] f32 has rank < 2");
}

TEST(CoreErrors, SqueezeOfANonOneDim) {
  EXPECT_WICK_ERROR(iota_tensor({2, 3}).squeeze(0), ErrorKind::ShapeMismatch,
                    "[squeeze] dim 0 of [2,3] f32 has size 2, not 1");
}

TEST(CoreErrors, FromVectorCountMismatch) {
  EXPECT_WICK_ERROR(Tensor::from_vector(std::vector<int32_t>{1, 2, 3, 4, 5}, {2, 3}),
                    ErrorKind::ShapeMismatch,
                    "[from_vector] 5 elements given for shape [2,3] (6 elements) i32");
}

TEST(CoreErrors, CatMismatches) {
  Tensor a = iota_tensor({2, 3});
  EXPECT_WICK_ERROR(Tensor::cat({a, iota_tensor({2, 4})}, 0), ErrorKind::ShapeMismatch,
                    "[cat] tensor 1 is [2,4] f32, tensor 0 is [2,3] f32: dims differ outside dim 0");
  EXPECT_WICK_ERROR(Tensor::cat({a, iota_tensor({2, 3, 1})}, 0), ErrorKind::ShapeMismatch,
                    "[cat] tensor 1 is [2,3,1]");
  EXPECT_WICK_ERROR(Tensor::cat({a, Tensor::zeros({2, 3}, DType::F64)}, 0), ErrorKind::DTypeMismatch,
                    "[cat] lhs [2,3] f32 rhs [2,3] f64: dtypes differ");
  EXPECT_WICK_ERROR(Tensor::cat({}, 0), ErrorKind::InvalidArgument, "[cat] no tensors given");
  EXPECT_WICK_ERROR(Tensor::cat({a, Tensor()}, 0), ErrorKind::InvalidArgument,
                    "[cat] tensor is an undefined tensor");
  EXPECT_WICK_ERROR(Tensor::stack({a, iota_tensor({3, 2})}, 0), ErrorKind::ShapeMismatch,
                    "[stack] tensor 1 is [3,2] f32, tensor 0 is [2,3] f32");
  EXPECT_WICK_ERROR(Tensor::stack({}, 0), ErrorKind::InvalidArgument, "[stack] no tensors given");
}

TEST(CoreErrors, ToVectorWithTheWrongType) {
  EXPECT_WICK_ERROR(iota_tensor({2}).to_vector<int32_t>(), ErrorKind::DTypeMismatch,
                    "[to_vector] tensor [2] f32 read as i32");
  EXPECT_WICK_ERROR(Tensor::zeros({1}, DType::BF16).to_vector<f16>(), ErrorKind::DTypeMismatch,
                    "[to_vector] tensor [1] bf16 read as f16");
}

TEST(CoreErrors, OtherMalformedCalls) {
  Tensor x = iota_tensor({2, 3});
  EXPECT_WICK_ERROR(x.broadcast_as({3, 3}), ErrorKind::ShapeMismatch,
                    "[broadcast_as] cannot broadcast [2,3] to [3,3]");
  EXPECT_WICK_ERROR(x.broadcast_as({3}), ErrorKind::ShapeMismatch,
                    "[broadcast_as] cannot broadcast [2,3] to [3]");
  EXPECT_WICK_ERROR(x.permute({0}), ErrorKind::ShapeMismatch, "[permute] 1 dims given for tensor [2,3] f32");
  EXPECT_WICK_ERROR(x.permute({1, 1}), ErrorKind::InvalidArgument, "[permute] dim 1 repeated");
  EXPECT_WICK_ERROR(x.chunk(0, 0), ErrorKind::InvalidArgument, "[chunk] 0 chunks of [2,3] f32");
  EXPECT_WICK_ERROR(x.flatten(1, 0), ErrorKind::InvalidArgument, "[flatten] start dim 1 after end dim 0");
  EXPECT_WICK_ERROR(x.item(), ErrorKind::ShapeMismatch, "[item] tensor [2,3] f32 has 6 elements, not 1");
  EXPECT_WICK_ERROR(Tensor::arange(0, 1, 0), ErrorKind::InvalidArgument, "[arange] start 0 end 1 step 0");
  EXPECT_WICK_ERROR(Tensor::rand({2}, DType::I32), ErrorKind::UnsupportedDType,
                    "[rand] dtype i32 is not supported");
  EXPECT_WICK_ERROR(Tensor::randn({2}, DType::U8), ErrorKind::UnsupportedDType, "[randn] dtype u8");
  EXPECT_WICK_ERROR(Tensor::rand({2}, DType::F32, Device::cpu(), 1.0, 0.0), ErrorKind::InvalidArgument,
                    "[rand] bounds [1, 0) f32");
  EXPECT_WICK_ERROR(Tensor::randn({2}, DType::F32, Device::cpu(), 0.0, -1.0), ErrorKind::InvalidArgument,
                    "[randn] mean 0 std -1 f32");
  EXPECT_WICK_ERROR(x.slice_set_(iota_tensor({2, 2}), 0, 1), ErrorKind::ShapeMismatch,
                    "[slice_set_] src [2,2] f32 does not fit in [2,3] f32 at dim 0 start 1");
  EXPECT_WICK_ERROR(x.t().slice_set_(iota_tensor({1, 2}), 0, 0), ErrorKind::InvalidArgument,
                    "[slice_set_] destination [3,2] f32 is not contiguous");
  EXPECT_WICK_ERROR(x.slice_set_(Tensor::zeros({2, 1}, DType::I32), 1, 0), ErrorKind::DTypeMismatch,
                    "[slice_set_] lhs [2,3] f32 rhs [2,1] i32: dtypes differ");
  EXPECT_WICK_ERROR(Tensor().reshape({1}), ErrorKind::InvalidArgument,
                    "[reshape] tensor is an undefined tensor");
  EXPECT_WICK_ERROR(Tensor::zeros({1}, DType::F32, Device::gpu(9)), ErrorKind::InvalidArgument,
                    "[device] gpu:9 is not available");
  EXPECT_WICK_ERROR(Device::parse("tpu"), ErrorKind::InvalidArgument, "[device] cannot parse device 'tpu'");
  EXPECT_WICK_ERROR(parse_dtype("f8"), ErrorKind::UnsupportedDType, "[dtype] unknown dtype 'f8'");
}

}  // namespace
}  // namespace wick
