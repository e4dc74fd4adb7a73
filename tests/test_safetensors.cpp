// safetensors reader and writer: round trips of every dtype, files built by hand
// from the format description, metadata, and every malformed-header case.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "wick/io.h"

using namespace wick;
namespace fs = std::filesystem;

namespace {

// Hand-built file: 8-byte LE header length, the JSON text, then `data`.
std::vector<uint8_t> build(const std::string& json, const std::vector<uint8_t>& data) {
  const uint64_t n = json.size();
  std::vector<uint8_t> b(8 + json.size() + data.size());
  std::memcpy(b.data(), &n, 8);
  std::memcpy(b.data() + 8, json.data(), json.size());
  if (!data.empty()) std::memcpy(b.data() + 8 + json.size(), data.data(), data.size());
  return b;
}

void expect_format_error(const std::vector<uint8_t>& bytes, const std::string& needle) {
  try {
    SafetensorsFile::parse(bytes.data(), bytes.size(), "bad.safetensors");
    FAIL() << "expected a Format error mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Format) << e.what();
    const std::string msg = e.what();
    EXPECT_NE(msg.find("[safetensors] bad.safetensors"), std::string::npos) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
  }
}

}  // namespace

TEST(Safetensors, ReadsAHandBuiltFile) {
  // a: f32 [2] = {1.5, -2}; b: i64 [1] = {7}; c: u8 [3]
  std::vector<uint8_t> data(8 + 8 + 3);
  const float a[2] = {1.5f, -2.0f};
  const int64_t b = 7;
  std::memcpy(data.data(), a, 8);
  std::memcpy(data.data() + 8, &b, 8);
  data[16] = 1;
  data[17] = 2;
  data[18] = 255;
  const std::string json =
      R"({"b":{"dtype":"I64","shape":[1],"data_offsets":[8,16]},"__metadata__":{"format":"pt"},)"
      R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"c":{"dtype":"BOOL","shape":[3,1],"data_offsets":[16,19]}})";
  auto bytes = build(json, data);
  SafetensorsFile f = SafetensorsFile::parse(bytes.data(), bytes.size());
  ASSERT_EQ(f.tensors().size(), 3u);
  EXPECT_EQ(f.tensors()[0].name, "a");  // data-offset order
  EXPECT_EQ(f.metadata().at("format"), "pt");
  EXPECT_EQ(f.tensor("a").to_vector<float>(), (std::vector<float>{1.5f, -2.0f}));
  EXPECT_EQ(f.tensor("b").to_vector<int64_t>(), (std::vector<int64_t>{7}));
  Tensor c = f.tensor("c");
  EXPECT_EQ(c.shape(), (Shape{3, 1}));
  EXPECT_EQ(c.to_vector<uint8_t>(), (std::vector<uint8_t>{1, 2, 255}));
}

TEST(Safetensors, RoundTripEveryDtype) {
  std::vector<std::pair<std::string, Tensor>> ts;
  Tensor base = Tensor::arange(0, 24, 1, DType::F64).reshape(Shape{2, 3, 4});
  for (DType d : kAllDTypes)
    ts.emplace_back(std::string("t_") + std::string(dtype_name(d)), base.to_dtype(d));
  ts.emplace_back("empty", Tensor::zeros(Shape{0, 5}));
  ts.emplace_back("transposed", base.to_dtype(DType::F32).transpose(0, 2));
  fs::path dir = fs::temp_directory_path() / ("wick_st_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "m.safetensors").string();
  write_safetensors(path, ts, {{"who", "wick"}});
  SafetensorsFile f = SafetensorsFile::open(path);
  EXPECT_EQ(f.metadata().at("who"), "wick");
  for (const auto& [name, t] : ts) {
    Tensor back = f.tensor(name);
    EXPECT_EQ(back.dtype(), t.dtype()) << name;
    EXPECT_EQ(back.shape(), t.shape()) << name;
    EXPECT_EQ(back.to_f64_vector(), t.to_f64_vector()) << name;
  }
  // the data section starts 8-aligned and the file re-serializes identically
  uint64_t n;
  std::memcpy(&n, safetensors_serialize(ts, {{"who", "wick"}}).data(), 8);
  EXPECT_EQ(n % 8, 0u);
  fs::remove_all(dir);
}

TEST(Safetensors, UnsupportedDtypeListsButDoesNotLoad) {
  auto bytes = build(R"({"x":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}})", std::vector<uint8_t>(4));
  SafetensorsFile f = SafetensorsFile::parse(bytes.data(), bytes.size());
  EXPECT_FALSE(f.tensors()[0].loadable);
  try {
    f.tensor("x");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::UnsupportedDType);
    EXPECT_NE(std::string(e.what()).find("I16"), std::string::npos);
  }
}

TEST(SafetensorsBadFile, HeaderLength) {
  expect_format_error({1, 2, 3}, "header length");
  auto b = build("{}", {});
  const uint64_t huge = 1ull << 40;
  std::memcpy(b.data(), &huge, 8);
  expect_format_error(b, "exceeds the 100000000-byte limit");
  const uint64_t past = 100;
  std::memcpy(b.data(), &past, 8);
  expect_format_error(b, "exceeds the 2 bytes left");
}

TEST(SafetensorsBadFile, HeaderJson) {
  expect_format_error(build("{not json", {}), "not valid JSON");
  expect_format_error(build("[1,2]", {}), "not an object");
  expect_format_error(build(R"({"a":5})", {}), "entry is not an object");
  expect_format_error(build(R"({"__metadata__":{"k":1}})", {}), "is not a string");
}

TEST(SafetensorsBadFile, Entries) {
  const std::vector<uint8_t> d8(8);
  expect_format_error(build(R"({"a":{"shape":[2],"data_offsets":[0,8]}})", d8), "dtype");
  expect_format_error(build(R"({"a":{"dtype":"Q4","shape":[2],"data_offsets":[0,8]}})", d8),
                      "unknown dtype 'Q4'");
  expect_format_error(build(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", d8),
                      "non-negative");
  expect_format_error(build(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", d8), "not a pair");
  expect_format_error(build(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", d8), "needs 12");
  expect_format_error(build(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", d8), "not inside");
  expect_format_error(build(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", d8), "not inside");
  expect_format_error(
      build(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296,4294967296],"data_offsets":[0,8]}})", d8),
      "overflows");
}

TEST(SafetensorsBadFile, OffsetsMustTileTheData) {
  const std::vector<uint8_t> d16(16);
  expect_format_error(build(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                            R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                            d16),
                      "starts at 4, expected 8");
  expect_format_error(build(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", d16),
                      "cover 8 bytes");
  expect_format_error(build(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})", d16), "expected 0");
}

TEST(SafetensorsBadFile, DuplicateNames) {
  expect_format_error(build(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                            R"("a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
                            std::vector<uint8_t>(2)),
                      "duplicate tensor name 'a'");
}

TEST(SafetensorsBadFile, EveryTruncationIsAFormatError) {
  const auto good = safetensors_serialize({{"w", Tensor::ones(Shape{3, 3})}});
  for (size_t n = 0; n < good.size(); ++n) {
    try {
      SafetensorsFile::parse(good.data(), n, "bad.safetensors");
      ADD_FAILURE() << "prefix of " << n << " bytes parsed";
    } catch (const Error& e) {
      ASSERT_EQ(e.kind(), ErrorKind::Format) << e.what();
    }
  }
}

TEST(SafetensorsBadFile, OpenMissingFileIsIo) {
  try {
    SafetensorsFile::open("/nonexistent/x.safetensors");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/x.safetensors"), std::string::npos);
  }
}
