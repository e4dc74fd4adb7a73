// GGUF reader and writer: round trips (writer output reads back and re-serializes
// byte for byte), v2 and v3, alignment, tensor loading, every bad-file case of the
// strict reader, and files written by the independent `gguf` Python package.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "test_gguf_util.h"
#include "wick/io.h"

using namespace wick;
namespace fs = std::filesystem;
using wick::test::Bytes;
using wick::test::make_temp_dir;
using wick::test::run_oracle;

namespace {

// Header with the given counts.
Bytes header(uint32_t version, int64_t n_tensors, int64_t n_kv) {
  Bytes x;
  x.put<uint32_t>(0x46554747).put<uint32_t>(version).put<int64_t>(n_tensors).put<int64_t>(n_kv);
  return x;
}

// One f32 tensor [2 x 32] named "w" with a string kv: a small valid file.
Bytes valid_file() {
  Bytes x = header(3, 1, 1);
  x.str("general.architecture").put<int32_t>(8).str("llama");
  x.str("w").put<uint32_t>(2).put<int64_t>(32).put<int64_t>(2).put<uint32_t>(0).put<uint64_t>(0);
  x.pad(32);
  for (int i = 0; i < 64; ++i) x.put<float>(float(i) * 0.5f);
  return x;
}

void expect_format_error(const std::vector<uint8_t>& bytes, const std::string& needle) {
  try {
    GgufFile::parse(bytes.data(), bytes.size(), "bad.gguf");
    FAIL() << "expected a Format error mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Format) << e.what();
    const std::string msg = e.what();
    EXPECT_NE(msg.find("[gguf] bad.gguf"), std::string::npos) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
  }
}

std::vector<std::pair<std::string, GgufValue>> all_kinds_metadata() {
  GgufArray nested{GgufType::Array,
                   {GgufValue(GgufArray{GgufType::I32, {int32_t(1), int32_t(2)}}),
                    GgufValue(GgufArray{GgufType::I32, {int32_t(3)}})}};
  return {
      {"general.architecture", "wick-test"},
      {"wick.u8", uint8_t(250)},
      {"wick.i8", int8_t(-7)},
      {"wick.u16", uint16_t(65000)},
      {"wick.i16", int16_t(-1234)},
      {"wick.u32", uint32_t(123456)},
      {"wick.i32", int32_t(-99)},
      {"wick.f32", 1.5f},
      {"wick.bool", false},
      {"wick.str", "text"},
      {"wick.u64", uint64_t(1) << 60},
      {"wick.i64", int64_t(-5)},
      {"wick.f64", 0.25},
      {"wick.names", GgufArray{GgufType::String, {GgufValue("x"), GgufValue("yy")}}},
      {"wick.nested", nested},
  };
}

std::vector<float> ramp(size_t rows, size_t cols) {
  std::vector<float> v(rows * cols);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) v[r * cols + c] = float(r) * 0.25f + float(c) / 256.0f;
  }
  return v;
}

}  // namespace

TEST(Gguf, RoundTripEveryValueTypeByteForByte) {
  auto meta = all_kinds_metadata();
  Tensor f = Tensor::from_vector(ramp(2, 256), Shape{2, 256});
  std::vector<GgufTensorData> ts = {
      GgufTensorData::from_tensor("w.f32", f),
      GgufTensorData::from_qtensor("w.q8_0", QTensor::quantize(f, GgmlType::Q8_0)),
      GgufTensorData::from_qtensor("w.q4_k", QTensor::quantize(f, GgmlType::Q4_K))};
  const auto bytes = gguf_serialize(meta, ts);
  GgufFile g = GgufFile::parse(bytes.data(), bytes.size());
  EXPECT_EQ(g.version(), 3u);
  ASSERT_EQ(g.metadata().size(), meta.size());
  for (size_t i = 0; i < meta.size(); ++i) {
    EXPECT_EQ(g.metadata()[i].first, meta[i].first);
    EXPECT_TRUE(g.metadata()[i].second == meta[i].second)
        << meta[i].first << " " << g.metadata()[i].second.str();
  }
  EXPECT_EQ(g.find("wick.u64")->as_uint(), uint64_t(1) << 60);
  EXPECT_EQ(g.find("wick.i8")->as_int(), -7);
  EXPECT_EQ(g.find("wick.f32")->as_float(), 1.5);
  EXPECT_EQ(g.find("wick.nested")->as_array().array(0).get<int32_t>(1), 2);
  ASSERT_EQ(g.tensors().size(), 3u);
  EXPECT_EQ(g.tensors()[1].ne, (std::vector<uint64_t>{256, 2}));
  EXPECT_EQ(g.tensors()[2].type, 12u);
  EXPECT_EQ(g.data_offset() % 32, 0u);
  // re-serializing what was read gives the same bytes
  std::vector<GgufTensorData> again;
  for (const auto& ti : g.tensors()) {
    GgufTensorData d;
    d.name = ti.name;
    d.type = ti.type;
    d.ne = ti.ne;
    d.bytes.assign(g.tensor_data(ti), g.tensor_data(ti) + ti.nbytes);
    again.push_back(d);
  }
  EXPECT_EQ(gguf_serialize(g.metadata(), again), bytes);
}

TEST(Gguf, LoadsTensorsAndQTensors) {
  const auto v = ramp(2, 256);
  Tensor f = Tensor::from_vector(v, Shape{2, 256});
  QTensor q = QTensor::quantize(f, GgmlType::Q6_K);
  const auto bytes =
      gguf_serialize({{"general.architecture", "x"}},
                     {GgufTensorData::from_tensor("f", f), GgufTensorData::from_qtensor("q", q),
                      GgufTensorData::from_tensor("h", f.to_dtype(DType::F16))});
  GgufFile g = GgufFile::parse(bytes.data(), bytes.size());
  Tensor back = g.tensor("f");
  EXPECT_EQ(back.shape(), (Shape{2, 256}));
  EXPECT_EQ(back.to_vector<float>(), v);
  EXPECT_EQ(g.tensor("h").dtype(), DType::F16);
  QTensor qb = g.qtensor("q");
  EXPECT_EQ(qb.type(), GgmlType::Q6_K);
  EXPECT_EQ(qb.to_host_bytes(), q.to_host_bytes());
  EXPECT_EQ(g.qtensor("f").type(), GgmlType::F32);
  try {
    g.tensor("q");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::UnsupportedDType);
    EXPECT_NE(std::string(e.what()).find("q6_K"), std::string::npos);
  }
  try {
    g.tensor("nope");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("no tensor named 'nope'"), std::string::npos);
  }
}

TEST(Gguf, VersionTwoAndCustomAlignment) {
  Tensor f = Tensor::from_vector(ramp(1, 32), Shape{1, 32});
  std::vector<std::pair<std::string, GgufValue>> meta = {{"general.alignment", uint32_t(64)}};
  const auto bytes = gguf_serialize(
      meta,
      {GgufTensorData::from_tensor("a", f.narrow(1, 0, 3).contiguous()), GgufTensorData::from_tensor("b", f)},
      2);
  uint32_t version;
  std::memcpy(&version, bytes.data() + 4, 4);
  EXPECT_EQ(version, 2u);
  GgufFile g = GgufFile::parse(bytes.data(), bytes.size());
  EXPECT_EQ(g.version(), 2u);
  EXPECT_EQ(g.alignment(), 64u);
  EXPECT_EQ(g.data_offset() % 64, 0u);
  EXPECT_EQ(g.tensors()[1].offset, 64u);  // 12 bytes of "a" padded to 64
  EXPECT_EQ(g.tensor("b").to_vector<float>(), f.to_vector<float>());
}

TEST(Gguf, WritesAndMapsAFile) {
  fs::path dir = make_temp_dir("gguf_file");
  const std::string path = (dir / "m.gguf").string();
  Tensor f = Tensor::from_vector(ramp(4, 64), Shape{4, 64});
  write_gguf(path, {{"general.architecture", "x"}}, {GgufTensorData::from_tensor("t", f)});
  GgufFile g = GgufFile::open(path);
  EXPECT_EQ(g.path(), path);
  EXPECT_EQ(g.tensor("t").to_vector<float>(), f.to_vector<float>());
  fs::remove_all(dir);
  try {
    GgufFile::open(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io);
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
  }
}

TEST(Gguf, WriterRejectsBadInput) {
  auto expect_invalid = [](const std::vector<std::pair<std::string, GgufValue>>& meta,
                           const std::vector<GgufTensorData>& ts, const std::string& needle) {
    try {
      gguf_serialize(meta, ts);
      FAIL() << needle;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_invalid({{"a", uint8_t(1)}, {"a", uint8_t(2)}}, {}, "duplicate key 'a'");
  expect_invalid({{"general.alignment", uint32_t(48)}}, {}, "not a power of two");
  expect_invalid({{"general.alignment", uint64_t(64)}}, {}, "must be u32");
  GgufTensorData t{"t", 0, {4}, std::vector<uint8_t>(16)};
  expect_invalid({}, {t, t}, "duplicate tensor name 't'");
  GgufTensorData short_data{"s", 0, {4}, std::vector<uint8_t>(15)};
  expect_invalid({}, {short_data}, "do not match 15 data bytes");
  GgufTensorData long_name{std::string(64, 'n'), 0, {4}, std::vector<uint8_t>(16)};
  expect_invalid({}, {long_name}, "the limit is 63");
  try {
    GgufArray mixed(GgufType::U8, {GgufValue(int8_t(1))});
    FAIL() << "an i8 item in a u8 array";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("array of u8 given a i8 item"), std::string::npos) << e.what();
  }
  // Arrays nest as deep as the reader reads (an array at depth 16 is refused by both).
  auto nest = [](int levels) {
    GgufValue v = GgufArray(GgufType::U8, {GgufValue(uint8_t(7))});
    for (int i = 0; i < levels; ++i) v = GgufArray(GgufType::Array, {v});
    return v;
  };
  const GgufValue deepest = nest(15);
  const auto image = gguf_serialize({{"k", deepest}}, {});
  EXPECT_EQ(*GgufFile::parse(image.data(), image.size()).find("k"), deepest);
  expect_invalid({{"k", nest(16)}}, {}, "key 'k': arrays nested deeper than 16");
  // A 5-dim tensor is refused for its rank, before its data are converted.
  try {
    GgufTensorData::from_tensor("t5", Tensor::zeros(Shape{1, 2, 1, 2, 32}));
    FAIL() << "5 dims";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("rank 5, GGUF holds at most 4 dims"), std::string::npos) << e.what();
  }
  GgufTensorData five{"t5", 0, {4, 1, 1, 1, 1}, std::vector<uint8_t>(16)};
  expect_invalid({}, {five}, "tensor 't5' n_dims: 5 is not in 1..4");
}

// ---- bad files --------------------------------------------------------------------

TEST(GgufBadFile, ValidBaseFileParses) {
  auto x = valid_file();
  GgufFile g = GgufFile::parse(x.b.data(), x.b.size(), "bad.gguf");
  EXPECT_EQ(g.tensor("w").to_vector<float>()[3], 1.5f);
}

TEST(GgufBadFile, EveryTruncationIsAFormatError) {
  const auto x = valid_file();
  for (size_t n = 0; n < x.b.size(); ++n) {
    try {
      GgufFile::parse(x.b.data(), n, "bad.gguf");
      ADD_FAILURE() << "prefix of " << n << " bytes parsed";
    } catch (const Error& e) {
      ASSERT_EQ(e.kind(), ErrorKind::Format) << n << ": " << e.what();
    }
  }
}

TEST(GgufBadFile, TruncatedNamesTheField) {
  const auto x = valid_file();
  expect_format_error(std::vector<uint8_t>(x.b.begin(), x.b.begin() + 10), "tensor_count");
  expect_format_error(std::vector<uint8_t>(x.b.begin(), x.b.end() - 4), "tensor 'w' data");
}

TEST(GgufBadFile, BadMagic) {
  auto x = valid_file();
  x.b[0] = 'X';
  expect_format_error(x.b, "magic");
}

TEST(GgufBadFile, UnknownVersions) {
  for (uint32_t v : {1u, 4u, 0x03000000u}) {
    auto x = valid_file();
    std::memcpy(x.b.data() + 4, &v, 4);
    expect_format_error(x.b, "version");
  }
  auto x = valid_file();
  uint32_t big = 0x03000000u;
  std::memcpy(x.b.data() + 4, &big, 4);
  expect_format_error(x.b, "big-endian");
}

TEST(GgufBadFile, CountsThatOverflow) {
  for (int64_t n : {int64_t(-1), std::numeric_limits<int64_t>::max(), int64_t(1) << 40}) {
    auto x = header(3, n, 0);
    expect_format_error(x.b, "tensor_count");
    auto y = header(3, 0, n);
    expect_format_error(y.b, "kv_count");
  }
}

TEST(GgufBadFile, UnknownValueType) {
  auto x = header(3, 0, 1);
  x.str("k").put<int32_t>(13).put<uint32_t>(0);
  expect_format_error(x.b, "unknown value type 13");
}

TEST(GgufBadFile, BoolMustBeZeroOrOne) {
  auto x = header(3, 0, 1);
  x.str("k").put<int32_t>(7).put<uint8_t>(2);
  expect_format_error(x.b, "neither 0 nor 1");
}

TEST(GgufBadFile, StringLongerThanFile) {
  auto x = header(3, 0, 1);
  x.put<uint64_t>(1000).b.resize(x.b.size() + 20, 'k');
  expect_format_error(x.b, "kv[0] key: string length 1000 exceeds the 20 bytes left");
  auto y = header(3, 0, 1);
  y.str("k").put<int32_t>(8).put<uint64_t>(std::numeric_limits<uint64_t>::max());
  expect_format_error(y.b, "key 'k' value");
}

TEST(GgufBadFile, ArrayCountLargerThanFile) {
  auto x = header(3, 0, 1);
  x.str("k").put<int32_t>(9).put<int32_t>(4).put<uint64_t>(uint64_t(1) << 61);
  expect_format_error(x.b, "cannot fit");
}

TEST(Gguf, LargeNumberArraysAreReadWhole) {
  // 2^24 + 1 one-byte values (once over a value budget, now one packed copy).
  const size_t n = (size_t(1) << 24) + 1;
  auto x = header(3, 0, 1);
  x.str("k").put<int32_t>(9).put<int32_t>(0).put<uint64_t>(n);
  const size_t at = x.b.size();
  x.b.resize(at + n);
  for (size_t i = 0; i < n; ++i) x.b[at + i] = uint8_t(i * 7);
  GgufFile g = GgufFile::parse(x.b.data(), x.b.size(), "big.gguf");
  const GgufArray& a = g.find("k")->as_array();
  ASSERT_EQ(a.size(), n);
  for (size_t i : {size_t(0), size_t(1), size_t(255), n / 2, n - 1})
    EXPECT_EQ(a.get<uint8_t>(i), uint8_t(i * 7));
}

TEST(GgufBadFile, ArraysNestedTooDeep) {
  auto x = header(3, 0, 1);
  x.str("k").put<int32_t>(9);
  for (int i = 0; i < 40; ++i) x.put<int32_t>(9).put<uint64_t>(1);
  x.put<int32_t>(0).put<uint64_t>(0);
  expect_format_error(x.b, "nested deeper");
}

TEST(GgufBadFile, DuplicateKey) {
  auto x = header(3, 0, 2);
  x.str("k").put<int32_t>(0).put<uint8_t>(1);
  x.str("k").put<int32_t>(0).put<uint8_t>(2);
  expect_format_error(x.b, "duplicate key 'k'");
}

TEST(GgufBadFile, AlignmentMustBeU32PowerOfTwo) {
  auto x = header(3, 0, 1);
  x.str("general.alignment").put<int32_t>(4).put<uint32_t>(24);
  expect_format_error(x.b, "not a power of two");
  auto y = header(3, 0, 1);
  y.str("general.alignment").put<int32_t>(10).put<uint64_t>(32);
  expect_format_error(y.b, "must be u32");
}

namespace {
// A file with one tensor info given by the caller and `data` bytes of data.
Bytes one_tensor(const std::string& name, const std::vector<int64_t>& ne, uint32_t type, uint64_t offset,
                 size_t data, int n_tensors = 1) {
  auto x = header(3, n_tensors, 0);
  x.str(name).put<uint32_t>(uint32_t(ne.size()));
  for (int64_t d : ne) x.put<int64_t>(d);
  x.put<uint32_t>(type).put<uint64_t>(offset);
  x.pad(32);
  x.b.resize(x.b.size() + data, 0);
  return x;
}
}  // namespace

TEST(GgufBadFile, TensorInfoFields) {
  expect_format_error(one_tensor("t", {4, 1, 1, 1, 1}, 0, 0, 16).b, "n_dims");
  expect_format_error(one_tensor("t", {4, -2}, 0, 0, 16).b, "negative dim");
  expect_format_error(one_tensor("t", {int64_t(1) << 40, int64_t(1) << 40}, 0, 0, 16).b, "overflows");
  expect_format_error(one_tensor("t", {32}, 4, 0, 64).b, "unknown or removed ggml type 4");
  expect_format_error(one_tensor("t", {32}, 99, 0, 64).b, "unknown or removed ggml type 99");
  expect_format_error(one_tensor("t", {48}, 2, 0, 64).b, "splits a q4_0 block");
  expect_format_error(one_tensor(std::string(64, 'n'), {4}, 0, 0, 16).b, "the limit is 63");
}

TEST(GgufBadFile, OffsetsMisalignedOrPastTheEnd) {
  expect_format_error(one_tensor("t", {4}, 0, 8, 64).b, "has offset 8, expected 0");
  expect_format_error(one_tensor("t", {64}, 0, 0, 100).b, "run past the end");
  // second tensor must start at PAD(16, 32) = 32
  auto x = header(3, 2, 0);
  x.str("a").put<uint32_t>(1).put<int64_t>(4).put<uint32_t>(0).put<uint64_t>(0);
  x.str("b").put<uint32_t>(1).put<int64_t>(4).put<uint32_t>(0).put<uint64_t>(16);
  x.pad(32);
  x.b.resize(x.b.size() + 64);
  expect_format_error(x.b, "has offset 16, expected 32");
}

TEST(GgufBadFile, DuplicateTensorName) {
  auto x = header(3, 2, 0);
  x.str("a").put<uint32_t>(1).put<int64_t>(4).put<uint32_t>(0).put<uint64_t>(0);
  x.str("a").put<uint32_t>(1).put<int64_t>(4).put<uint32_t>(0).put<uint64_t>(32);
  x.pad(32);
  x.b.resize(x.b.size() + 64);
  expect_format_error(x.b, "duplicate tensor name");
}

TEST(GgufBadFile, RandomCorruptionNeverCrashes) {
  // flip bytes of a real file; each result either parses or throws Format
  auto meta = all_kinds_metadata();
  Tensor f = Tensor::from_vector(ramp(2, 256), Shape{2, 256});
  const auto good =
      gguf_serialize(meta, {GgufTensorData::from_qtensor("q", QTensor::quantize(f, GgmlType::Q4_0))});
  uint32_t s = 12345;
  for (int trial = 0; trial < 2000; ++trial) {
    auto b = good;
    for (int k = 0; k < 3; ++k) {
      s = s * 1664525u + 1013904223u;
      b[(s >> 8) % b.size()] = uint8_t(s >> 24);
    }
    try {
      GgufFile::parse(b.data(), b.size(), "fuzz.gguf");
    } catch (const Error& e) {
      ASSERT_EQ(e.kind(), ErrorKind::Format) << e.what();
    }
  }
}

// ---- the independent oracle: gguf-py ---------------------------------------------

TEST(GgufOracle, ReadsFilesWrittenByGgufPy) {
  std::string why;
  if (!wick::test::python_oracle_available(why)) GTEST_SKIP() << why;
  fs::path dir = make_temp_dir("gguf_oracle");
  ASSERT_EQ(run_oracle("write", dir.string()), 0);
  GgufFile g = GgufFile::open((dir / "oracle.gguf").string());
  EXPECT_EQ(g.find("general.architecture")->as_string(), "llama");
  EXPECT_EQ(g.find("test.u8")->get<uint8_t>(), 200);
  EXPECT_EQ(g.find("test.i8")->get<int8_t>(), -100);
  EXPECT_EQ(g.find("test.u16")->get<uint16_t>(), 60000);
  EXPECT_EQ(g.find("test.i16")->get<int16_t>(), -30000);
  EXPECT_EQ(g.find("test.u32")->get<uint32_t>(), 4000000000u);
  EXPECT_EQ(g.find("test.i32")->get<int32_t>(), -2000000000);
  EXPECT_EQ(g.find("test.f32")->get<float>(), 0.5f);
  EXPECT_EQ(g.find("test.u64")->get<uint64_t>(), 18000000000000000000ull);
  EXPECT_EQ(g.find("test.i64")->get<int64_t>(), -9000000000000000000ll);
  EXPECT_EQ(g.find("test.f64")->get<double>(), 0.125);
  EXPECT_EQ(g.find("test.bool")->get<bool>(), true);
  EXPECT_EQ(g.find("test.str")->as_string(), "h\xc3\xa9llo wick");
  const auto& strs = g.find("test.arr_str")->as_array();
  ASSERT_EQ(strs.size(), 3u);
  EXPECT_EQ(strs.string(1), "bc");
  EXPECT_EQ(strs.string(2), "");
  EXPECT_EQ(g.find("test.arr_f32")->as_array().get<float>(1), -2.0f);
  const auto& nested = g.find("test.nested")->as_array();
  ASSERT_EQ(nested.elem_type(), GgufType::Array);
  EXPECT_EQ(nested[1].as_array()[2].as_int(), 5);
  const char* names[] = {"f32",  "f16",  "bf16", "q4_0", "q4_1", "q5_0", "q5_1",
                         "q8_0", "q2_k", "q3_k", "q4_k", "q5_k", "q6_k"};
  for (const char* n : names) {
    const std::string tname = std::string("t.") + n;
    QTensor q = g.qtensor(tname);
    EXPECT_EQ(q.shape(), (Shape{4, 512})) << tname;
    const auto got = q.dequantize().to_vector<float>();
    const auto want = read_npy((dir / (tname + ".npy")).string()).to_vector<float>();
    ASSERT_EQ(got.size(), want.size());
    size_t mismatches = 0;
    for (size_t i = 0; i < got.size(); ++i) mismatches += got[i] != want[i];
    EXPECT_EQ(mismatches, 0u) << tname << ": dequantized values differ from gguf.quants.dequantize";
  }
  fs::remove_all(dir);
}

TEST(GgufOracle, ReferenceQuantizersAreBitIdenticalToGgufPy) {
  std::string why;
  if (!wick::test::python_oracle_available(why)) GTEST_SKIP() << why;
  fs::path dir = make_temp_dir("quant_oracle");
  ASSERT_EQ(run_oracle("quantize", dir.string()), 0);
  Tensor x = read_npy((dir / "x.npy").string());
  const std::pair<const char*, GgmlType> types[] = {
      {"q4_0", GgmlType::Q4_0}, {"q4_1", GgmlType::Q4_1}, {"q5_0", GgmlType::Q5_0}, {"q5_1", GgmlType::Q5_1},
      {"q8_0", GgmlType::Q8_0}, {"bf16", GgmlType::BF16}, {"f16", GgmlType::F16}};
  for (const auto& [name, t] : types) {
    std::ifstream in(dir / (std::string(name) + ".bin"), std::ios::binary);
    std::vector<uint8_t> want((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto got = QTensor::quantize(x, t).to_host_bytes();
    ASSERT_EQ(got.size(), want.size()) << name;
    size_t first = got.size();
    for (size_t i = 0; i < got.size() && first == got.size(); ++i) {
      if (got[i] != want[i]) first = i;
    }
    EXPECT_EQ(first, got.size()) << name << ": first differing byte";
  }
  fs::remove_all(dir);
}

TEST(GgufOracle, GgufPyReadsWhatWickWrites) {
  std::string why;
  if (!wick::test::python_oracle_available(why)) GTEST_SKIP() << why;
  fs::path dir = make_temp_dir("gguf_check");
  Tensor f = Tensor::from_vector(ramp(2, 256), Shape{2, 256});
  const std::string path = (dir / "wick.gguf").string();
  write_gguf(path, all_kinds_metadata(),
             {GgufTensorData::from_tensor("w.f32", f),
              GgufTensorData::from_qtensor("w.q8_0", QTensor::quantize(f, GgmlType::Q8_0)),
              GgufTensorData::from_qtensor("w.q4_k", QTensor::quantize(f, GgmlType::Q4_K))});
  EXPECT_EQ(run_oracle("check", path), 0);
  fs::remove_all(dir);
}
