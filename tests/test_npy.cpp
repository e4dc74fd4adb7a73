// NumPy .npy / .npz: hand-built headers, round trips, files written by NumPy itself
// (C and Fortran order, big-endian, np.savez and np.savez_compressed), files wick
// writes read back by NumPy, and the malformed-file cases.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "test_gguf_util.h"
#include "wick/io.h"

using namespace wick;
namespace fs = std::filesystem;
using wick::test::make_temp_dir;
using wick::test::run_oracle;

namespace {

std::vector<uint8_t> npy_bytes(const std::string& header, const std::vector<uint8_t>& data,
                               uint8_t major = 1) {
  std::vector<uint8_t> b = {0x93, 'N', 'U', 'M', 'P', 'Y', major, 0};
  if (major == 1) {
    b.push_back(uint8_t(header.size() & 0xFF));
    b.push_back(uint8_t(header.size() >> 8));
  } else {
    const uint32_t n = uint32_t(header.size());
    b.resize(b.size() + 4);
    std::memcpy(b.data() + 8, &n, 4);
  }
  b.insert(b.end(), header.begin(), header.end());
  b.insert(b.end(), data.begin(), data.end());
  return b;
}

template <class T>
std::vector<uint8_t> raw(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

void expect_error(ErrorKind kind, const std::vector<uint8_t>& bytes, const std::string& needle) {
  try {
    parse_npy(bytes.data(), bytes.size(), "bad.npy");
    FAIL() << "expected an error mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(Npy, ParsesHandBuiltHeaders) {
  auto c =
      npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }\n", raw<float>({1, 2, 3, 4}));
  Tensor t = parse_npy(c.data(), c.size());
  EXPECT_EQ(t.shape(), (Shape{2, 2}));
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  // v2 header, double quotes, Fortran order: bytes are column-major
  auto b = npy_bytes("{\"descr\": \"<i4\", \"fortran_order\": True, \"shape\": (2, 3)}",
                     raw<int32_t>({0, 3, 1, 4, 2, 5}), 2);
  Tensor f = parse_npy(b.data(), b.size());
  EXPECT_EQ(f.shape(), (Shape{2, 3}));
  EXPECT_EQ(f.to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));
  // big-endian u4 scalar
  auto s = npy_bytes("{'descr': '>u4', 'fortran_order': False, 'shape': (), }", {0, 0, 1, 2});
  Tensor sc = parse_npy(s.data(), s.size());
  EXPECT_EQ(sc.rank(), 0u);
  EXPECT_EQ(sc.to_vector<uint32_t>(), (std::vector<uint32_t>{258}));
}

TEST(Npy, RoundTripEveryNumpyDtype) {
  Tensor base = Tensor::arange(0, 12, 1, DType::F64).reshape(Shape{3, 4});
  for (DType d : kAllDTypes) {
    if (d == DType::BF16) continue;
    Tensor t = base.to_dtype(d);
    auto bytes = npy_serialize(t);
    EXPECT_EQ(((bytes[8] | (bytes[9] << 8)) + 10) % 64, 0) << "data starts 64-aligned";
    Tensor back = parse_npy(bytes.data(), bytes.size());
    EXPECT_EQ(back.dtype(), d);
    EXPECT_EQ(back.to_f64_vector(), t.to_f64_vector());
  }
  Tensor v = Tensor::arange(0, 3, 1, DType::F32);
  auto bytes = npy_serialize(v);
  EXPECT_NE(std::string(bytes.begin(), bytes.end()).find("'shape': (3,)"), std::string::npos);
}

TEST(Npy, Bf16HasNoNumpyDtype) {
  try {
    npy_serialize(Tensor::zeros(Shape{2}, DType::BF16));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::UnsupportedDType);
    EXPECT_NE(std::string(e.what()).find("bf16"), std::string::npos);
  }
}

TEST(NpyBadFile, Cases) {
  const std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  auto good = npy_bytes(h, raw<float>({1, 2}));
  auto bad_magic = good;
  bad_magic[1] = 'X';
  expect_error(ErrorKind::Format, bad_magic, "magic");
  auto bad_version = good;
  bad_version[6] = 9;
  expect_error(ErrorKind::Format, bad_version, "unsupported format version 9");
  expect_error(ErrorKind::Format, npy_bytes(h, raw<float>({1})), "bytes left");
  expect_error(ErrorKind::Format, npy_bytes("{'descr': '<f4', 'shape': (2,)}", raw<float>({1, 2})),
               "fortran_order");
  expect_error(ErrorKind::Format, npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", {}),
               "non-negative");
  expect_error(
      ErrorKind::Format,
      npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999, 99999999999)}",
                {}),
      "overflows");
  expect_error(ErrorKind::UnsupportedDType,
               npy_bytes("{'descr': '<c8', 'fortran_order': False, 'shape': (1,)}", {}), "'<c8'");
  for (size_t n = 0; n < good.size(); ++n) {
    try {
      parse_npy(good.data(), n, "bad.npy");
      ADD_FAILURE() << n;
    } catch (const Error& e) {
      ASSERT_EQ(e.kind(), ErrorKind::Format) << e.what();
    }
  }
}

TEST(Npz, RoundTripAndBadArchives) {
  fs::path dir = make_temp_dir("npz");
  const std::string path = (dir / "a.npz").string();
  std::vector<std::pair<std::string, Tensor>> ts = {
      {"mat", Tensor::arange(0, 6, 1, DType::F32).reshape(Shape{2, 3})},
      {"ints", Tensor::from_vector(std::vector<int64_t>{-1, 0, 1}, Shape{3})}};
  write_npz(path, ts);
  auto back = read_npz(path);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].first, "mat");
  EXPECT_EQ(back[0].second.to_vector<float>(), ts[0].second.to_vector<float>());
  EXPECT_EQ(back[1].second.to_vector<int64_t>(), (std::vector<int64_t>{-1, 0, 1}));

  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto expect_npz_error = [](const std::vector<uint8_t>& b, const std::string& needle) {
    try {
      parse_npz(b.data(), b.size(), "bad.npz");
      FAIL() << needle;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Format) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  auto corrupt = bytes;
  corrupt[30 + 8 + 80] ^= 0xFF;  // inside the first entry's data
  expect_npz_error(corrupt, "CRC-32 mismatch");
  expect_npz_error(std::vector<uint8_t>(bytes.begin(), bytes.begin() + 100), "not a zip file");
  expect_npz_error(std::vector<uint8_t>(10, 0), "too small");
  for (size_t n = 0; n < bytes.size(); n += 7) {
    try {
      parse_npz(bytes.data(), n, "bad.npz");
    } catch (const Error& e) {
      ASSERT_EQ(e.kind(), ErrorKind::Format) << e.what();
    }
  }
  fs::remove_all(dir);
}

TEST(NpyOracle, ReadsWhatNumpyWrites) {
  std::string why;
  if (!wick::test::python_oracle_available(why)) GTEST_SKIP() << why;
  fs::path dir = make_temp_dir("npy_oracle");
  ASSERT_EQ(run_oracle("npy", dir.string()), 0);
  Tensor a = read_npy((dir / "c_f32.npy").string());
  EXPECT_EQ(a.shape(), (Shape{3, 4}));
  auto av = a.to_vector<float>();
  for (size_t i = 0; i < 12; ++i) EXPECT_EQ(av[i], float(i) / 4.0f);
  Tensor f = read_npy((dir / "fortran_i64.npy").string());
  EXPECT_EQ(f.shape(), (Shape{2, 3}));
  EXPECT_EQ(f.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(read_npy((dir / "big_f64.npy").string()).to_vector<double>(),
            (std::vector<double>{1.5, -2.25, 3.0}));
  Tensor h = read_npy((dir / "f16.npy").string());
  EXPECT_EQ(h.dtype(), DType::F16);
  EXPECT_EQ(h.to_f64_vector(), (std::vector<double>{0.5, -1.0}));
  Tensor s = read_npy((dir / "scalar_u8.npy").string());
  EXPECT_EQ(s.rank(), 0u);
  EXPECT_EQ(s.item(), 7.0);
  EXPECT_EQ(read_npy((dir / "bool.npy").string()).to_vector<uint8_t>(), (std::vector<uint8_t>{1, 0, 1}));
  auto z = read_npz((dir / "stored.npz").string());
  ASSERT_EQ(z.size(), 2u);
  EXPECT_EQ(z[0].first, "first");
  EXPECT_EQ(z[0].second.to_vector<float>(), av);
  EXPECT_EQ(z[1].second.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3}));
  // np.savez_compressed (deflate) reads to the same arrays as np.savez
  auto plain = read_npz((dir / "plain.npz").string());
  auto packed = read_npz((dir / "compressed.npz").string());
  ASSERT_EQ(plain.size(), 4u);
  ASSERT_EQ(packed.size(), plain.size());
  for (size_t i = 0; i < plain.size(); ++i) {
    EXPECT_EQ(packed[i].first, plain[i].first);
    EXPECT_EQ(packed[i].second.dtype(), plain[i].second.dtype());
    EXPECT_EQ(packed[i].second.shape(), plain[i].second.shape());
    EXPECT_EQ(packed[i].second.to_f64_vector(), plain[i].second.to_f64_vector()) << plain[i].first;
  }
  // corrupting deflated bytes is a Format error (bad code, size or CRC), never a crash
  std::ifstream in(dir / "compressed.npz", std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // corrupt bytes inside the deflate stream of the large "noise" entry
  for (size_t at = 1000; at < bytes.size() / 2; at += 997) {
    auto bad = bytes;
    bad[at] ^= 0x5A;
    try {
      parse_npz(bad.data(), bad.size(), "bad.npz");
      ADD_FAILURE() << "corruption at " << at << " went unnoticed";
    } catch (const Error& e) {
      ASSERT_EQ(e.kind(), ErrorKind::Format) << e.what();
    }
  }
  fs::remove_all(dir);
}

TEST(NpyOracle, NumpyReadsWhatWickWrites) {
  std::string why;
  if (!wick::test::python_oracle_available(why)) GTEST_SKIP() << why;
  fs::path dir = make_temp_dir("npz_check");
  const std::string path = (dir / "w.npz").string();
  write_npz(path, {{"mat", Tensor::arange(0, 3, 0.5, DType::F32).reshape(Shape{2, 3})},
                   {"ints", Tensor::from_vector(std::vector<int64_t>{-1, 0, int64_t(1) << 40}, Shape{3})}});
  EXPECT_EQ(run_oracle("checknpz", path), 0);
  fs::remove_all(dir);
}
