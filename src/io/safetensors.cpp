// safetensors reader and writer: an 8-byte little-endian header length, a JSON
// header (parsed with nlohmann-json) and the raw data section. The reader checks
// what the reference implementation checks: header inside the file, valid JSON
// object, unique names, known dtypes, byte ranges that match the shapes and tile
// the data section exactly (contiguous, no overlap, no gap, nothing left over). The
// writer applies the same limits (header size, shapes, UTF-8 names), so every file it
// writes reads back. Parsing is linear in the header: see parse_image.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "base/checked.h"
#include "base/error_boundary.h"
#include "io/file.h"
#include "wick/io.h"

namespace wick {

namespace {

constexpr const char* kOp = "safetensors";
constexpr uint64_t kMaxHeader = 100'000'000;  // the reference implementation's limit

struct StDtype {
  const char* name;
  DType dtype;
  size_t size;
  bool loadable;
};
constexpr StDtype kStDtypes[] = {
    {"F64", DType::F64, 8, true},   {"F32", DType::F32, 4, true},     {"F16", DType::F16, 2, true},
    {"BF16", DType::BF16, 2, true}, {"I64", DType::I64, 8, true},     {"I32", DType::I32, 4, true},
    {"U32", DType::U32, 4, true},   {"U8", DType::U8, 1, true},       {"BOOL", DType::U8, 1, true},
    {"I8", DType::U8, 1, false},    {"I16", DType::U8, 2, false},     {"U16", DType::U8, 2, false},
    {"U64", DType::U8, 8, false},   {"F8_E4M3", DType::U8, 1, false}, {"F8_E5M2", DType::U8, 1, false},
};

const StDtype* find_dtype(const std::string& name) {
  for (const auto& d : kStDtypes) {
    if (name == d.name) return &d;
  }
  return nullptr;
}

const char* dtype_tag(DType d) {
  switch (d) {
    case DType::U8:
      return "U8";
    case DType::U32:
      return "U32";
    case DType::I32:
      return "I32";
    case DType::I64:
      return "I64";
    case DType::F16:
      return "F16";
    case DType::BF16:
      return "BF16";
    case DType::F32:
      return "F32";
    case DType::F64:
      return "F64";
  }
  return "?";
}

// The names of a JSON object's members, in order (a SAX pass: linear, no document built).
class TopLevelKeys final : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::vector<std::string> keys;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return ++depth_, true; }
  bool key(string_t& k) override {
    if (depth_ == 1) keys.push_back(k);
    return true;
  }
  bool end_object() override { return --depth_, true; }
  bool start_array(std::size_t) override { return ++depth_, true; }
  bool end_array() override { return --depth_, true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  int depth_ = 0;
};

// s as a JSON string literal; InvalidArgument naming `what` when s is not UTF-8 (the
// header is JSON, which readers parse strictly).
std::string json_string(const std::string& s, const std::string& what) {
  try {
    return nlohmann::json(s).dump();
  } catch (const nlohmann::json::exception&) {
    const std::string shown = nlohmann::json(s).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
    throw_error(ErrorKind::InvalidArgument, "safetensors_write",
                fmt::format("{} {} is not valid UTF-8 (the header is JSON)", what, shown));
  }
}

}  // namespace

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  return guarded(kOp, ErrorKind::Format, [&] { return load(io::map_file(path, kOp), path); });
}

SafetensorsFile SafetensorsFile::parse(const void* data, size_t size, const std::string& name) {
  return guarded(kOp, ErrorKind::Format, [&] { return load(io::copy_buffer(data, size), name); });
}

SafetensorsFile SafetensorsFile::load(io::Mapping m, const std::string& path) {
  SafetensorsFile f;
  f.path_ = path;
  f.base_ = m.data;
  f.size_ = m.size;
  f.holder_ = std::move(m.holder);
  f.parse_image();
  return f;
}

void SafetensorsFile::parse_image() {
  io::Cursor c(base_, size_, kOp, path_);
  const uint64_t n = c.read<uint64_t>("header length");
  if (n > kMaxHeader) c.fail("header length", fmt::format("{} exceeds the {}-byte limit", n, kMaxHeader));
  if (n > c.remaining()) {
    c.fail("header length", fmt::format("{} exceeds the {} bytes left in the file", n, c.remaining()));
  }
  const char* h = reinterpret_cast<const char*>(c.here());
  data_start_ = 8 + n;
  // nlohmann keeps the last of a repeated key silently, so the top-level names are
  // collected by a SAX pass first and checked for duplicates; then the document is
  // parsed without a callback. Both passes are linear in the header, where nlohmann's
  // parser callback (which did this before) takes quadratic time in the number of
  // tensors (40k tensors: 39 s, docs/PERFORMANCE.md).
  TopLevelKeys top;
  if (!nlohmann::json::sax_parse(h, h + n, &top)) c.fail("header", "not valid JSON");
  std::sort(top.keys.begin(), top.keys.end());
  const auto dup = std::adjacent_find(top.keys.begin(), top.keys.end());
  if (dup != top.keys.end()) c.fail("header", fmt::format("duplicate tensor name '{}'", *dup));
  top.keys = {};
  nlohmann::json j = nlohmann::json::parse(h, h + n, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) c.fail("header", "not valid JSON");
  if (!j.is_object()) c.fail("header", "JSON is not an object");
  const uint64_t data_size = size_ - data_start_;

  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& name = it.key();
    const nlohmann::json& v = it.value();
    if (name == "__metadata__") {
      if (!v.is_object()) c.fail("__metadata__", "is not an object");
      for (auto m = v.begin(); m != v.end(); ++m) {
        if (!m.value().is_string())
          c.fail("__metadata__", fmt::format("value of '{}' is not a string", m.key()));
        metadata_[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    const std::string where = fmt::format("tensor '{}'", name);
    if (!v.is_object()) c.fail(where, "entry is not an object");
    if (!v.contains("dtype") || !v["dtype"].is_string()) c.fail(where + " dtype", "missing or not a string");
    if (!v.contains("shape") || !v["shape"].is_array()) c.fail(where + " shape", "missing or not an array");
    if (!v.contains("data_offsets") || !v["data_offsets"].is_array() || v["data_offsets"].size() != 2) {
      c.fail(where + " data_offsets", "missing or not a pair");
    }
    SafetensorsInfo ti;
    ti.name = name;
    ti.dtype_name = v["dtype"].get<std::string>();
    const StDtype* dt = find_dtype(ti.dtype_name);
    if (!dt) c.fail(where + " dtype", fmt::format("unknown dtype '{}'", ti.dtype_name));
    ti.dtype = dt->dtype;
    ti.loadable = dt->loadable;
    std::vector<size_t> dims;
    for (const auto& d : v["shape"]) {
      if (!d.is_number_unsigned()) c.fail(where + " shape", "dims must be non-negative integers");
      dims.push_back(size_t(d.get<uint64_t>()));
    }
    uint64_t count = 0;
    if (!shape_fits(dims, dt->size, count)) c.fail(where + " shape", "element count overflows");
    ti.shape = Shape(std::move(dims));
    for (const auto& o : v["data_offsets"]) {
      if (!o.is_number_unsigned()) c.fail(where + " data_offsets", "offsets must be non-negative integers");
    }
    ti.begin = v["data_offsets"][0].get<uint64_t>();
    ti.end = v["data_offsets"][1].get<uint64_t>();
    if (ti.begin > ti.end || ti.end > data_size) {
      c.fail(where + " data_offsets",
             fmt::format("[{}, {}) is not inside the {}-byte data section", ti.begin, ti.end, data_size));
    }
    const uint64_t bytes = count * dt->size;  // fits: shape_fits above
    if (bytes != ti.end - ti.begin) {
      c.fail(where + " data_offsets",
             fmt::format("[{}, {}) holds {} bytes, shape {} of {} needs {}", ti.begin, ti.end,
                         ti.end - ti.begin, ti.shape.str(), ti.dtype_name, uint64_t(bytes)));
    }
    tensors_.push_back(std::move(ti));
  }
  std::sort(tensors_.begin(), tensors_.end(), [](const SafetensorsInfo& a, const SafetensorsInfo& b) {
    return a.begin < b.begin || (a.begin == b.begin && a.end < b.end);
  });
  uint64_t at = 0;
  for (const auto& t : tensors_) {
    if (t.begin != at) {
      c.fail("tensor '" + t.name + "' data_offsets",
             fmt::format("starts at {}, expected {} (ranges must tile the data section)", t.begin, at));
    }
    at = t.end;
  }
  if (at != data_size) {
    c.fail("data section", fmt::format("tensors cover {} bytes, the data section has {}", at, data_size));
  }
  by_name_.resize(tensors_.size());
  for (size_t i = 0; i < by_name_.size(); ++i) by_name_[i] = i;
  std::sort(by_name_.begin(), by_name_.end(),
            [&](size_t a, size_t b) { return tensors_[a].name < tensors_[b].name; });
}

const SafetensorsInfo* SafetensorsFile::find_tensor(const std::string& name) const {
  const auto it = std::lower_bound(by_name_.begin(), by_name_.end(), name,
                                   [&](size_t i, const std::string& n) { return tensors_[i].name < n; });
  return it != by_name_.end() && tensors_[*it].name == name ? &tensors_[*it] : nullptr;
}

Tensor SafetensorsFile::tensor(const std::string& name, Device device) const {
  const SafetensorsInfo* ti = find_tensor(name);
  if (!ti) throw_error(ErrorKind::InvalidArgument, kOp, fmt::format("{}: no tensor named '{}'", path_, name));
  if (!ti->loadable) {
    throw_error(
        ErrorKind::UnsupportedDType, kOp,
        fmt::format("{}: tensor '{}' has dtype {}, which wick does not have", path_, name, ti->dtype_name));
  }
  return Tensor::from_bytes(base_ + data_start_ + ti->begin, ti->shape.elem_count(), ti->shape, ti->dtype,
                            device);
}

namespace {

std::vector<uint8_t> serialize(const std::vector<std::pair<std::string, Tensor>>& tensors,
                               const std::map<std::string, std::string>& metadata) {
  const char* op = "safetensors_write";
  // The header is built as text (an ordered_json object takes linear time per member).
  std::string h = "{";
  if (!metadata.empty()) {
    h += "\"__metadata__\":{";
    for (const auto& [k, v] : metadata) {
      if (h.back() != '{') h += ',';
      h += json_string(k, "metadata key") + ":" + json_string(v, "metadata value of " + k);
    }
    h += '}';
  }
  std::unordered_set<std::string_view> names;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    if (name == "__metadata__" || !names.insert(name).second) {
      throw_error(ErrorKind::InvalidArgument, op, fmt::format("duplicate or reserved name '{}'", name));
    }
    const StDtype* dt = find_dtype(dtype_tag(t.dtype()));
    uint64_t count = 0;
    if (!shape_fits(t.dims(), dt->size, count)) {
      throw_error(ErrorKind::InvalidArgument, op,
                  fmt::format("tensor '{}' {}: element count overflows", name, t.shape().str()));
    }
    const uint64_t nbytes = count * dt->size;
    const uint64_t end = checked_add(offset, nbytes, ErrorKind::InvalidArgument, op, "the data section");
    if (h.back() != '{') h += ',';
    h += fmt::format("{}:{{\"dtype\":\"{}\",\"shape\":[{}],\"data_offsets\":[{},{}]}}",
                     json_string(name, "tensor name"), dt->name, fmt::join(t.dims(), ","), offset, end);
    offset = end;
  }
  h += '}';
  h.resize((h.size() + 7) / 8 * 8, ' ');  // pad with spaces so the data starts 8-aligned
  if (h.size() > kMaxHeader) {
    throw_error(ErrorKind::InvalidArgument, op,
                fmt::format("a header of {} bytes exceeds the readers' limit of {}", h.size(), kMaxHeader));
  }
  std::vector<uint8_t> out;
  out.reserve(8 + h.size() + offset);
  io::put<uint64_t>(out, h.size());
  io::put_bytes(out, h.data(), h.size());
  for (const auto& [name, t] : tensors) {
    const size_t at = out.size();
    out.resize(at + t.elem_count() * dtype_size(t.dtype()));
    if (t.elem_count()) t.to_bytes(out.data() + at);
  }
  return out;
}

}  // namespace

std::vector<uint8_t> safetensors_serialize(const std::vector<std::pair<std::string, Tensor>>& tensors,
                                           const std::map<std::string, std::string>& metadata) {
  return guarded("safetensors_write", ErrorKind::InvalidArgument,
                 [&] { return serialize(tensors, metadata); });
}

void write_safetensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  guarded("safetensors_write", ErrorKind::InvalidArgument,
          [&] { io::write_file(path, serialize(tensors, metadata), "safetensors_write"); });
}

}  // namespace wick
