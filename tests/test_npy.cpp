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

// ---- .npz entries built by hand: deflate streams written from RFC 1951, zip64 -------

namespace {

// The zip CRC-32, bit by bit (the reflected polynomial 0xEDB88320).
uint32_t crc32_bitwise(const std::vector<uint8_t>& b) {
  uint32_t c = 0xFFFFFFFFu;
  for (uint8_t x : b) {
    c ^= x;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
  }
  return c ^ 0xFFFFFFFFu;
}

// A deflate bit stream (RFC 1951 3.1.1): values LSB first, Huffman codes MSB first.
struct DeflateBits {
  std::vector<uint8_t> out;
  int used = 8;
  void put(uint32_t v, int len) {
    for (int i = 0; i < len; ++i) {
      if (used == 8) {
        out.push_back(0);
        used = 0;
      }
      out.back() |= uint8_t(((v >> i) & 1) << used++);
    }
  }
  void code(uint32_t c, int len) {
    for (int i = len - 1; i >= 0; --i) put((c >> i) & 1, 1);
  }
  // The fixed Huffman code (RFC 1951 3.2.6) of a literal/length symbol.
  void symbol(int s) {
    if (s < 144) {
      code(0x30 + s, 8);
    } else if (s < 256) {
      code(0x190 + s - 144, 9);
    } else if (s < 280) {
      code(s - 256, 7);
    } else {
      code(0xC0 + s - 280, 8);
    }
  }
};

// One final fixed-Huffman block: `lit` as literals, then a copy of `len` (11 or 12)
// bytes from `dist` (1-4) bytes back.
std::vector<uint8_t> deflate_fixed(const std::vector<uint8_t>& lit, int len, int dist) {
  DeflateBits b;
  b.put(1, 1);  // BFINAL
  b.put(1, 2);  // BTYPE 01: fixed Huffman codes
  for (uint8_t x : lit) b.symbol(x);
  b.symbol(265);  // lengths 11-12, one extra bit
  b.put(uint32_t(len - 11), 1);
  b.code(uint32_t(dist - 1), 5);  // distance codes 0-3 are distances 1-4, no extra bits
  b.symbol(256);                  // end of block
  return b.out;
}

// Stored blocks (BTYPE 00) of the given pieces, the last one final.
std::vector<uint8_t> deflate_stored(const std::vector<std::vector<uint8_t>>& pieces) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const uint16_t n = uint16_t(pieces[i].size());
    out.insert(out.end(), {uint8_t(i + 1 == pieces.size()), uint8_t(n), uint8_t(n >> 8), uint8_t(~n),
                           uint8_t(uint16_t(~n) >> 8)});
    out.insert(out.end(), pieces[i].begin(), pieces[i].end());
  }
  return out;
}

template <class T>
void put_le(std::vector<uint8_t>& b, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) b.push_back(uint8_t(uint64_t(v) >> (8 * i)));
}

struct ZipEntry {
  std::string name;
  uint16_t method;  // 0 stored, 8 deflate
  std::vector<uint8_t> body;
  uint32_t crc;
  uint64_t usize;
};

// A zip of the entries, sizes and offsets in the central directory as they are, or
// (zip64) all behind 0xFFFFFFFF with the zip64 extra field, record and locator.
std::vector<uint8_t> make_zip(const std::vector<ZipEntry>& entries, bool zip64 = false) {
  std::vector<uint8_t> out, cd;
  for (const ZipEntry& e : entries) {
    const uint64_t off = out.size();
    put_le<uint32_t>(out, 0x04034b50u);
    put_le<uint16_t>(out, 20);
    put_le<uint16_t>(out, 0);
    put_le<uint16_t>(out, e.method);
    put_le<uint32_t>(out, 0x00210000u);  // DOS time and date
    put_le<uint32_t>(out, e.crc);
    put_le<uint32_t>(out, uint32_t(e.body.size()));
    put_le<uint32_t>(out, uint32_t(e.usize));
    put_le<uint16_t>(out, uint16_t(e.name.size()));
    put_le<uint16_t>(out, 0);
    out.insert(out.end(), e.name.begin(), e.name.end());
    out.insert(out.end(), e.body.begin(), e.body.end());

    put_le<uint32_t>(cd, 0x02014b50u);
    put_le<uint16_t>(cd, zip64 ? 45 : 20);
    put_le<uint16_t>(cd, zip64 ? 45 : 20);
    put_le<uint16_t>(cd, 0);
    put_le<uint16_t>(cd, e.method);
    put_le<uint32_t>(cd, 0x00210000u);
    put_le<uint32_t>(cd, e.crc);
    put_le<uint32_t>(cd, zip64 ? 0xFFFFFFFFu : uint32_t(e.body.size()));
    put_le<uint32_t>(cd, zip64 ? 0xFFFFFFFFu : uint32_t(e.usize));
    put_le<uint16_t>(cd, uint16_t(e.name.size()));
    put_le<uint16_t>(cd, zip64 ? 28 : 0);
    put_le<uint16_t>(cd, 0);
    put_le<uint16_t>(cd, 0);
    put_le<uint16_t>(cd, 0);
    put_le<uint32_t>(cd, 0);
    put_le<uint32_t>(cd, zip64 ? 0xFFFFFFFFu : uint32_t(off));
    cd.insert(cd.end(), e.name.begin(), e.name.end());
    if (zip64) {  // extra field 0x0001: uncompressed size, compressed size, offset
      put_le<uint16_t>(cd, 1);
      put_le<uint16_t>(cd, 24);
      put_le<uint64_t>(cd, e.usize);
      put_le<uint64_t>(cd, e.body.size());
      put_le<uint64_t>(cd, off);
    }
  }
  const uint64_t cd_off = out.size();
  out.insert(out.end(), cd.begin(), cd.end());
  if (zip64) {
    const uint64_t record = out.size();
    put_le<uint32_t>(out, 0x06064b50u);
    put_le<uint64_t>(out, 44);  // size of the rest of the record
    put_le<uint16_t>(out, 45);
    put_le<uint16_t>(out, 45);
    put_le<uint32_t>(out, 0);
    put_le<uint32_t>(out, 0);
    put_le<uint64_t>(out, entries.size());
    put_le<uint64_t>(out, entries.size());
    put_le<uint64_t>(out, cd.size());
    put_le<uint64_t>(out, cd_off);
    put_le<uint32_t>(out, 0x07064b50u);  // locator
    put_le<uint32_t>(out, 0);
    put_le<uint64_t>(out, record);
    put_le<uint32_t>(out, 1);
  }
  put_le<uint32_t>(out, 0x06054b50u);
  put_le<uint16_t>(out, 0);
  put_le<uint16_t>(out, 0);
  put_le<uint16_t>(out, zip64 ? 0xFFFF : uint16_t(entries.size()));
  put_le<uint16_t>(out, zip64 ? 0xFFFF : uint16_t(entries.size()));
  put_le<uint32_t>(out, zip64 ? 0xFFFFFFFFu : uint32_t(cd.size()));
  put_le<uint32_t>(out, zip64 ? 0xFFFFFFFFu : uint32_t(cd_off));
  put_le<uint16_t>(out, 0);
  return out;
}

// [2.5, 2.5, 2.5, 2.5] f32 as .npy: the header, then one element and a copy of 12 bytes
// from 4 back.
const std::vector<uint8_t> kRepeatNpy = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }",
                                                  raw<float>({2.5f, 2.5f, 2.5f, 2.5f}));

ZipEntry repeat_entry() {
  const std::vector<uint8_t> lit(kRepeatNpy.begin(), kRepeatNpy.end() - 12);
  return {"r.npy", 8, deflate_fixed(lit, 12, 4), crc32_bitwise(kRepeatNpy), kRepeatNpy.size()};
}

std::vector<std::pair<std::string, Tensor>> read_zip(const std::vector<uint8_t>& zip) {
  return parse_npz(zip.data(), zip.size(), "hand.npz");
}

void expect_npz_error(const std::vector<uint8_t>& zip, const std::string& needle) {
  try {
    read_zip(zip);
    ADD_FAILURE() << "expected an error mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Format) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(NpzByHand, Crc32MatchesTheCheckValue) {
  const std::vector<uint8_t> digits = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  EXPECT_EQ(crc32_bitwise(digits), 0xCBF43926u);  // the published CRC-32 check value
  // a zip of a stored entry whose CRC is the check value's reads; one bit off does not
  const std::vector<uint8_t> npy =
      npy_bytes("{'descr': '|u1', 'fortran_order': False, 'shape': (9,), }", digits);
  auto back = read_zip(make_zip({{"d.npy", 0, npy, crc32_bitwise(npy), npy.size()}}));
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].first, "d");
  EXPECT_EQ(back[0].second.to_vector<uint8_t>(), digits);
  expect_npz_error(make_zip({{"d.npy", 0, npy, crc32_bitwise(npy) ^ 1u, npy.size()}}), "CRC-32 mismatch");
}

TEST(NpzByHand, FixedHuffmanBlockWithABackReference) {
  auto back = read_zip(make_zip({repeat_entry()}));
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].first, "r");
  EXPECT_EQ(back[0].second.shape(), (Shape{4}));
  EXPECT_EQ(back[0].second.to_vector<float>(), (std::vector<float>{2.5f, 2.5f, 2.5f, 2.5f}));
}

TEST(NpzByHand, StoredBlocksAndZip64) {
  const std::vector<uint8_t> npy =
      npy_bytes("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }", raw<int32_t>({1, -2, 3, -4}));
  const std::vector<uint8_t> head(npy.begin(), npy.begin() + 20), tail(npy.begin() + 20, npy.end());
  const ZipEntry split{"s.npy", 8, deflate_stored({head, tail}), crc32_bitwise(npy), npy.size()};
  const ZipEntry stored{"plain.npy", 0, npy, crc32_bitwise(npy), npy.size()};
  for (bool zip64 : {false, true}) {
    auto back = read_zip(make_zip({split, repeat_entry(), stored}, zip64));
    ASSERT_EQ(back.size(), 3u) << "zip64 " << zip64;
    EXPECT_EQ(back[0].first, "s");
    EXPECT_EQ(back[0].second.shape(), (Shape{2, 2}));
    EXPECT_EQ(back[0].second.to_vector<int32_t>(), (std::vector<int32_t>{1, -2, 3, -4}));
    EXPECT_EQ(back[1].second.to_vector<float>(), (std::vector<float>{2.5f, 2.5f, 2.5f, 2.5f}));
    EXPECT_EQ(back[2].first, "plain");
    EXPECT_EQ(back[2].second.to_vector<int32_t>(), (std::vector<int32_t>{1, -2, 3, -4}));
  }
}

TEST(NpzByHand, BadDeflateDataIsAFormatError) {
  ZipEntry e = repeat_entry();
  e.usize += 4;  // the stream ends 4 bytes short of the declared size
  expect_npz_error(make_zip({e}), "inflated to " + std::to_string(kRepeatNpy.size()) +
                                      " bytes, the archive says " + std::to_string(kRepeatNpy.size() + 4));
  e = repeat_entry();
  e.usize -= 1;  // the stream needs one byte more than declared
  expect_npz_error(make_zip({e}),
                   "output exceeds the declared size " + std::to_string(kRepeatNpy.size() - 1));
  e = repeat_entry();
  e.body.resize(e.body.size() - 3);  // cut before the end of the block
  expect_npz_error(make_zip({e}), "truncated");
  e = repeat_entry();
  e.body[0] |= 0x06;  // BTYPE 11 is reserved
  expect_npz_error(make_zip({e}), "invalid block type");
  e = {"s.npy", 8, deflate_stored({kRepeatNpy}), crc32_bitwise(kRepeatNpy), kRepeatNpy.size()};
  e.body[3] ^= 0x01;  // NLEN is no longer the complement of LEN
  expect_npz_error(make_zip({e}), "invalid stored block lengths");
  e = repeat_entry();
  e.usize = 0xF0000000u;  // far beyond deflate's ratio for so few bytes
  expect_npz_error(make_zip({e}), "beyond what deflate can produce");
  e = repeat_entry();
  e.crc ^= 0x80000000u;  // a sound stream, a wrong CRC
  expect_npz_error(make_zip({e}), "CRC-32 mismatch");
}
