// The parity suite: every registered op case on every device (one test per family
// and device: the CPU against the float64 references, each GPU against the CPU),
// and tests of the harness itself (layouts it builds, how it compares, failures it
// must report).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "check/philox_ref.h"
#include "wick/check.h"

namespace wick::check {
namespace {

// --small-cases (the sanitizer runs) leaves out the bench-sized cases (those
// declaring bytes or flops): the same code paths run on the smaller cases, and the
// Release run covers the large ones.
bool g_small_cases_only = false;

// --- the registered cases, per family and device --------------------------------

struct FamilyDevice {
  std::string family;
  Device device;
};

// Families x (the CPU, then each GPU present, or gpu:0 as a skip when none is).
std::vector<FamilyDevice> family_devices() {
  std::vector<Device> devs = available_devices();
  if (devs.size() == 1) devs.push_back(Device::gpu(0));
  std::vector<FamilyDevice> out;
  for (const auto& f : families())
    for (const Device& d : devs) out.push_back({f, d});
  return out;
}

// How ctest and gtest print a parameter ("copy on cpu").
void PrintTo(const FamilyDevice& p, std::ostream* os) { *os << p.family << " on " << p.device.str(); }

class Parity : public ::testing::TestWithParam<FamilyDevice> {};

TEST_P(Parity, EveryCasePasses) {
  const auto& [family, dev] = GetParam();
  std::string why;
  if (!device_present(dev, &why)) GTEST_SKIP() << "no GPU: " << why;
  size_t n = 0, left_out = 0;
  for (const OpCase& c : all_cases()) {
    if (c.family != family) continue;
    if (g_small_cases_only && (c.bytes > 0 || c.flops > 0)) {
      ++left_out;
      continue;
    }
    ++n;
    CaseResult r = run_case(c, dev);
    EXPECT_TRUE(r.pass) << c.name << " on " << dev.str() << ": " << r.detail;
  }
  EXPECT_GT(n, 0u);
  if (left_out) std::printf("%zu bench-sized %s cases left out (--small-cases)\n", left_out, family.c_str());
}

INSTANTIATE_TEST_SUITE_P(Cases, Parity, ::testing::ValuesIn(family_devices()),
                         [](const ::testing::TestParamInfo<FamilyDevice>& info) {
                           std::string s = info.param.family + "_" + info.param.device.str();
                           for (char& ch : s)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return s;
                         });

TEST(ParityRegistry, TheCopyFamilyIsRegistered) {
  auto fs = families();
  EXPECT_NE(std::find(fs.begin(), fs.end(), "copy"), fs.end());
  for (const OpCase& c : all_cases()) {
    EXPECT_FALSE(c.family.empty()) << c.name;
    EXPECT_TRUE(c.run) << c.name;
    EXPECT_TRUE(c.reference) << c.name;
  }
}

// --- make_input -------------------------------------------------------------------

std::vector<double> iota(size_t n) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = double(i);
  return v;
}

TEST(MakeInput, TransposedIsAStridedViewOfTheSameValues) {
  Tensor t = make_input(iota(6), Shape{2, 3}, DType::F32, Device::cpu(), LayoutKind::Transposed);
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.layout().strides(), (std::vector<size_t>{1, 2}));
  EXPECT_EQ(t.to_f64_vector(), iota(6));
}

TEST(MakeInput, TransposedKeepsBatchesApart) {
  Tensor t = make_input(iota(24), Shape{2, 3, 4}, DType::I32, Device::cpu(), LayoutKind::Transposed);
  EXPECT_EQ(t.layout().strides(), (std::vector<size_t>{12, 1, 3}));
  EXPECT_EQ(t.to_f64_vector(), iota(24));
}

TEST(MakeInput, NarrowedSitsAtAnOffsetInsideWiderRows) {
  Tensor t = make_input(iota(12), Shape{3, 4}, DType::F64, Device::cpu(), LayoutKind::Narrowed);
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.layout().start_offset(), 1u);
  EXPECT_EQ(t.layout().strides(), (std::vector<size_t>{7, 1}));
  EXPECT_EQ(t.to_f64_vector(), iota(12));
}

TEST(MakeInput, NarrowedVectorIsContiguousWithAnOffset) {
  Tensor t = make_input(iota(5), Shape{5}, DType::U8, Device::cpu(), LayoutKind::Narrowed);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.layout().start_offset(), 2u);
  EXPECT_EQ(t.to_f64_vector(), iota(5));
}

TEST(MakeInput, BroadcastHasStrideZeroAlongDim0) {
  std::vector<double> v = {1, 2, 3, 1, 2, 3};
  Tensor t = make_input(v, Shape{2, 3}, DType::F16, Device::cpu(), LayoutKind::Broadcast);
  EXPECT_EQ(t.layout().strides(), (std::vector<size_t>{0, 1}));
  EXPECT_EQ(t.to_f64_vector(), v);
}

TEST(MakeInput, ConvertsToTheDtype) {
  Tensor t = make_input({1.7, -2.5, 300.0}, Shape{3}, DType::U8, Device::cpu(), LayoutKind::Contiguous);
  EXPECT_EQ(t.dtype(), DType::U8);
  // float -> u8 truncates toward zero and saturates
  EXPECT_EQ(t.to_vector<uint8_t>(), (std::vector<uint8_t>{1, 0, 255}));
  EXPECT_EQ(round_to_dtype({1.7, -2.5, 300.0}, DType::U8), (std::vector<double>{1, 0, 255}));
  EXPECT_EQ(round_to_dtype({1.0 + 0x1.0p-12}, DType::F16), (std::vector<double>{1.0}));
}

TEST(MakeInput, RejectsBadRequests) {
  try {
    make_input(iota(5), Shape{2, 3}, DType::F32, Device::cpu(), LayoutKind::Contiguous);
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ShapeMismatch);
    EXPECT_NE(std::string(e.what()).find("[make_input] 5 values for shape [2,3]"), std::string::npos)
        << e.what();
  }
  try {
    make_input(iota(6), Shape{2, 3}, DType::F32, Device::cpu(), LayoutKind::Broadcast);
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("values differ along dim 0"), std::string::npos) << e.what();
  }
  try {
    make_input(iota(3), Shape{3}, DType::F32, Device::cpu(), LayoutKind::Transposed);
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("needs rank >= 2"), std::string::npos) << e.what();
  }
}

TEST(RandomValues, SeededAndInRange) {
  auto a = random_values(1000, 5, -1.0, 3.0), b = random_values(1000, 5, -1.0, 3.0),
       c = random_values(1000, 6, -1.0, 3.0);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  double mean = 0;
  for (double x : a) {
    EXPECT_GE(x, -1.0);
    EXPECT_LT(x, 3.0);
    mean += x / 1000;
  }
  EXPECT_NEAR(mean, 1.0, 0.15);  // uniform mean 1, std of the mean 4/sqrt(12*1000) ~ 0.04
}

// --- comparison -------------------------------------------------------------------

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(CompareValues, ExactMeansBitEqualAndNaNMatchesNaN) {
  auto exact = Tolerance::exact_match();
  EXPECT_TRUE(compare_values({1, kNaN, -kInf}, {1, kNaN, -kInf}, exact).pass);
  CaseResult r = compare_values({1, 2, 3}, {1, 2, 3.5}, exact);
  EXPECT_FALSE(r.pass);
  EXPECT_NE(r.detail.find("element 2"), std::string::npos) << r.detail;
  EXPECT_DOUBLE_EQ(r.max_abs_err, 0.5);
  EXPECT_FALSE(compare_values({-0.0}, {0.0}, exact).pass);
  EXPECT_FALSE(compare_values({kNaN}, {1.0}, exact).pass);
}

TEST(CompareValues, CloseUsesAtolPlusRtol) {
  auto tol = Tolerance::close(0.1, 0.01);
  EXPECT_TRUE(compare_values({10.19}, {10.0}, tol).pass);   // 0.19 <= 0.1 + 0.1
  EXPECT_FALSE(compare_values({10.21}, {10.0}, tol).pass);  // 0.21 > 0.2
  EXPECT_TRUE(compare_values({kNaN, kInf}, {kNaN, kInf}, tol).pass);
  EXPECT_FALSE(compare_values({kInf}, {1e300}, tol).pass);
  EXPECT_FALSE(compare_values({1.0}, {kNaN}, tol).pass);
  EXPECT_FALSE(compare_values({1, 2}, {1}, tol).pass);
}

TEST(CompareValues, NmseBoundIsEnforced) {
  // errors 0.1 on values 1: NMSE = (2 * 0.01) / 2 = 0.01
  CaseResult r = compare_values({1.1, 0.9}, {1, 1}, Tolerance::close(1, 0, 0.001));
  EXPECT_FALSE(r.pass);
  EXPECT_NEAR(r.nmse, 0.01, 1e-12);
  EXPECT_NE(r.detail.find("NMSE"), std::string::npos) << r.detail;
  EXPECT_TRUE(compare_values({1.1, 0.9}, {1, 1}, Tolerance::close(1, 0, 0.02)).pass);
}

TEST(FloatTolerance, ScalesWithTheDtypeEpsilon) {
  EXPECT_TRUE(float_tolerance(DType::I32).exact);
  EXPECT_DOUBLE_EQ(float_tolerance(DType::F32, 1).rtol, 0x1.0p-23);
  EXPECT_DOUBLE_EQ(float_tolerance(DType::BF16, 2).atol, 0x1.0p-6);
  EXPECT_DOUBLE_EQ(float_tolerance(DType::F16, 1).nmse, 0x1.0p-10);
  EXPECT_LT(float_tolerance(DType::F64).rtol, float_tolerance(DType::F16).rtol);
}

// --- run_case ---------------------------------------------------------------------

OpCase synthetic(std::function<std::vector<Tensor>(Device, uint64_t)> run, std::vector<double> expected) {
  OpCase c;
  c.family = "harness-self-test";
  c.name = "synthetic";
  c.vs_reference = c.vs_cpu = Tolerance::exact_match();
  c.run = std::move(run);
  c.reference = [expected](uint64_t) { return std::vector<std::vector<double>>{expected}; };
  return c;
}

TEST(RunCase, PassesWhenTheOutputMatchesTheReference) {
  OpCase c = synthetic(
      [](Device d, uint64_t) { return std::vector<Tensor>{Tensor::arange(0, 4, 1, DType::F32, d)}; },
      {0, 1, 2, 3});
  CaseResult r = run_case(c, Device::cpu());
  EXPECT_TRUE(r.pass) << r.detail;
  EXPECT_EQ(r.max_abs_err, 0.0);
}

TEST(RunCase, FailsOnAWrongValueAndNamesItsIndex) {
  OpCase c = synthetic(
      [](Device d, uint64_t) {
        return std::vector<Tensor>{Tensor::from_vector(std::vector<float>{0, 1, 2, 9}, Shape{2, 2}, d)};
      },
      {0, 1, 2, 3});
  CaseResult r = run_case(c, Device::cpu());
  EXPECT_FALSE(r.pass);
  EXPECT_NE(r.detail.find("output 0 [2,2] f32: element 3: got 9 expected 3 at [1,1]"), std::string::npos)
      << r.detail;
}

TEST(RunCase, AnOpThatThrowsIsAFailureWithItsMessage) {
  OpCase c = synthetic(
      [](Device d, uint64_t) {
        return std::vector<Tensor>{Tensor::zeros(Shape{2}, DType::F32, d).narrow(0, 1, 5)};
      },
      {0});
  CaseResult r = run_case(c, Device::cpu());
  EXPECT_FALSE(r.pass);
  EXPECT_NE(r.detail.find("threw index out of range: [narrow] start 1 len 5"), std::string::npos) << r.detail;
  EXPECT_NE(r.detail.find("[narrow]"), std::string::npos) << r.detail;
}

TEST(RunCase, AWrongNumberOfOutputsFails) {
  OpCase c = synthetic([](Device d, uint64_t) { return std::vector<Tensor>{}; }, {1});
  CaseResult r = run_case(c, Device::cpu());
  EXPECT_FALSE(r.pass);
  EXPECT_NE(r.detail.find("0 outputs, expected 1"), std::string::npos) << r.detail;
}

TEST(RunCase, TheSeedReachesTheCase) {
  OpCase c;
  c.vs_reference = Tolerance::exact_match();
  c.run = [](Device d, uint64_t seed) {
    return std::vector<Tensor>{Tensor::full(Scalar(double(seed)), Shape{1}, DType::F64, d)};
  };
  c.reference = [](uint64_t seed) { return std::vector<std::vector<double>>{{double(seed)}}; };
  EXPECT_TRUE(run_case(c, Device::cpu(), 77).pass);
  c.reference = [](uint64_t) { return std::vector<std::vector<double>>{{77.0}}; };
  EXPECT_FALSE(run_case(c, Device::cpu(), 78).pass);
}

TEST(RunCase, AnAbsentGpuIsASkipWithAReason) {
  Device far = Device::gpu(64);
  OpCase c = synthetic(
      [](Device d, uint64_t) { return std::vector<Tensor>{Tensor::zeros(Shape{1}, DType::F32, d)}; }, {0});
  CaseResult r = run_case(c, far);
  EXPECT_TRUE(r.skipped);
  EXPECT_FALSE(r.pass);
  EXPECT_NE(r.detail.find("gpu:64 is not present"), std::string::npos) << r.detail;
}

// --- the independent Philox used by the rand cases ------------------------------------

TEST(PhiloxReference, MatchesRandom123KnownAnswers) {
  // Random123 kat_vectors: philox4x32 10 rounds.
  auto z = philox_ref::philox4x32_10({0, 0, 0, 0}, {0, 0});
  EXPECT_EQ(z, (std::array<uint32_t, 4>{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  auto f = philox_ref::philox4x32_10({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
                                     {0xffffffffu, 0xffffffffu});
  EXPECT_EQ(f, (std::array<uint32_t, 4>{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  auto p = philox_ref::philox4x32_10({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
                                     {0xa4093822u, 0x299f31d0u});
  EXPECT_EQ(p, (std::array<uint32_t, 4>{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

}  // namespace
}  // namespace wick::check

// test_parity [--small-cases] [GoogleTest flags]
int main(int argc, char** argv) {
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--small-cases") == 0)
      wick::check::g_small_cases_only = true;
    else
      argv[kept++] = argv[i];
  }
  argc = kept;
  argv[argc] = nullptr;
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
