// GGUF v2/v3 reader and writer. Validation follows ggml's gguf.cpp (reference
// ggml-gguf.md 1.3): known versions only, bounded counts and string lengths,
// general.alignment a u32 power of two, n_dims <= 4, non-negative dims whose size
// fits int64, known tensor types whose rows hold whole blocks, unique keys and
// names, and tensor offsets contiguous in file order with alignment padding. The
// writer applies the same limits (the constants and checks below serve both), so
// every file it writes reads back.
//
// Memory: the reader reserves nothing from a count before the bytes behind it were
// read; arrays of numbers are one copy of their bytes and arrays of strings one buffer
// (GgufArray), so parsing is linear in the file and its memory proportional to it.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <unordered_set>

#include "base/checked.h"
#include "base/error_boundary.h"
#include "io/file.h"
#include "wick/io.h"

namespace wick {

namespace {

constexpr const char* kOp = "gguf";
constexpr uint32_t kMagic = 0x46554747;  // "GGUF" little-endian
constexpr uint32_t kDefaultAlignment = 32;
constexpr size_t kMaxDims = 4;
constexpr size_t kMaxNameLen = 63;  // ggml: strlen(name) < GGML_MAX_NAME (64)
constexpr int kMaxArrayDepth = 16;  // an array value at this depth of nesting is refused

struct AnyType {
  const char* name;
  uint32_t block, bytes;  // block 0: removed / undefined id
};
// Every ggml_type id (ggml.h), with block elements and bytes (ggml-common.h).
constexpr AnyType kAnyTypes[] = {
    {"f32", 1, 4},      {"f16", 1, 2},        {"q4_0", 32, 18},    {"q4_1", 32, 20},     {"", 0, 0},
    {"", 0, 0},         {"q5_0", 32, 22},     {"q5_1", 32, 24},    {"q8_0", 32, 34},     {"q8_1", 32, 36},
    {"q2_K", 256, 84},  {"q3_K", 256, 110},   {"q4_K", 256, 144},  {"q5_K", 256, 176},   {"q6_K", 256, 210},
    {"q8_K", 256, 292}, {"iq2_xxs", 256, 66}, {"iq2_xs", 256, 74}, {"iq3_xxs", 256, 98}, {"iq1_s", 256, 50},
    {"iq4_nl", 32, 18}, {"iq3_s", 256, 110},  {"iq2_s", 256, 82},  {"iq4_xs", 256, 136}, {"i8", 1, 1},
    {"i16", 1, 2},      {"i32", 1, 4},        {"i64", 1, 8},       {"f64", 1, 8},        {"iq1_m", 256, 56},
    {"bf16", 1, 2},     {"", 0, 0},           {"", 0, 0},          {"", 0, 0},           {"tq1_0", 256, 54},
    {"tq2_0", 256, 66}, {"", 0, 0},           {"", 0, 0},          {"", 0, 0},           {"mxfp4", 32, 17},
    {"nvfp4", 64, 36},  {"q1_0", 128, 18},    {"q2_0", 64, 18},
};
constexpr uint32_t kNumAnyTypes = uint32_t(std::size(kAnyTypes));

const AnyType* any_type(uint32_t id) {
  if (id >= kNumAnyTypes || kAnyTypes[id].block == 0) return nullptr;
  return &kAnyTypes[id];
}

uint64_t pad_to(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

// What is wrong with a tensor info, shared by the reader (Format) and the writer
// (InvalidArgument): `field` (a suffix of "tensor 'name'") and `problem` stay empty when
// it is valid, and nbytes is then its size. 1..kMaxDims dims, each at most 2^63-1, a
// known type whose rows hold whole blocks, and a size within 2^63-1 (base/checked.h:
// the non-zero dims, then the bytes).
struct TensorInfoCheck {
  std::string field, problem;
  uint64_t nbytes = 0;
};
TensorInfoCheck check_tensor_info(uint32_t type, const std::vector<uint64_t>& ne) {
  TensorInfoCheck r;
  if (ne.empty() || ne.size() > kMaxDims) {
    r.field = " n_dims";
    r.problem = fmt::format("{} is not in 1..{}", ne.size(), kMaxDims);
    return r;
  }
  for (size_t d = 0; d < ne.size(); ++d) {
    if (ne[d] > kMaxSize) {
      r.field = fmt::format(" ne[{}]", d);
      r.problem = fmt::format("negative dim {}", int64_t(ne[d]));
      return r;
    }
  }
  const AnyType* at = any_type(type);
  if (!at) {
    r.field = " type";
    r.problem = fmt::format("unknown or removed ggml type {}", type);
    return r;
  }
  if (ne[0] % at->block != 0) {
    r.field = " ne[0]";
    r.problem = fmt::format("row of {} elements splits a {} block of {}", ne[0], at->name, at->block);
    return r;
  }
  uint64_t elems = 0;
  if (!shape_fits(ne, 1, elems) || !mul_fits(elems / at->block, at->bytes, r.nbytes)) {
    r.field = " dims";
    r.problem = "element count overflows int64";
  }
  return r;
}

// Smallest encoding of one value of type t (bounds array counts before allocating).
uint64_t min_value_size(GgufType t) {
  switch (t) {
    case GgufType::U8:
    case GgufType::I8:
    case GgufType::Bool:
      return 1;
    case GgufType::U16:
    case GgufType::I16:
      return 2;
    case GgufType::U32:
    case GgufType::I32:
    case GgufType::F32:
      return 4;
    case GgufType::String:
    case GgufType::U64:
    case GgufType::I64:
    case GgufType::F64:
      return 8;
    case GgufType::Array:
      return 12;
  }
  return 1;
}

// Bytes of one packed item of a number or bool array; 0 for strings and arrays.
size_t packed_size(GgufType t) {
  switch (t) {
    case GgufType::String:
    case GgufType::Array:
      return 0;
    default:
      return size_t(min_value_size(t));
  }
}

}  // namespace

// Builds arrays from the file's bytes (a friend of GgufArray).
class GgufReader {
 public:
  GgufReader(const uint8_t* data, size_t size, const std::string& file) : c_(data, size, kOp, file) {}
  io::Cursor c_;

  std::string_view read_string_view(const std::string& field) {
    const uint64_t len = c_.read<uint64_t>(field + " length");
    if (len > c_.remaining()) {
      c_.fail(field,
              fmt::format("string length {} exceeds the {} bytes left in the file", len, c_.remaining()));
    }
    std::string_view s(reinterpret_cast<const char*>(c_.here()), size_t(len));
    c_.skip(len, field);
    return s;
  }

  std::string read_string(const std::string& field) { return std::string(read_string_view(field)); }

  GgufType read_type(const std::string& field) {
    const int32_t t = c_.read<int32_t>(field);
    if (t < 0 || t > int32_t(GgufType::F64)) c_.fail(field, fmt::format("unknown value type {}", t));
    return GgufType(t);
  }

  GgufValue read_value(GgufType t, const std::string& field, int depth) {
    switch (t) {
      case GgufType::U8:
        return c_.read<uint8_t>(field);
      case GgufType::I8:
        return c_.read<int8_t>(field);
      case GgufType::U16:
        return c_.read<uint16_t>(field);
      case GgufType::I16:
        return c_.read<int16_t>(field);
      case GgufType::U32:
        return c_.read<uint32_t>(field);
      case GgufType::I32:
        return c_.read<int32_t>(field);
      case GgufType::F32:
        return c_.read<float>(field);
      case GgufType::U64:
        return c_.read<uint64_t>(field);
      case GgufType::I64:
        return c_.read<int64_t>(field);
      case GgufType::F64:
        return c_.read<double>(field);
      case GgufType::Bool: {
        const uint8_t b = c_.read<uint8_t>(field);
        if (b > 1) c_.fail(field, fmt::format("bool value {} is neither 0 nor 1", b));
        return bool(b);
      }
      case GgufType::String:
        return read_string(field);
      case GgufType::Array: {
        if (depth >= kMaxArrayDepth)
          c_.fail(field, fmt::format("arrays nested deeper than {}", kMaxArrayDepth));
        GgufArray a(read_type(field + " element type"));
        const uint64_t n = c_.read<uint64_t>(field + " element count");
        if (n > c_.remaining() / min_value_size(a.elem_type_)) {
          c_.fail(field, fmt::format("array of {} {} values cannot fit in the {} bytes left", n,
                                     gguf_type_name(a.elem_type_), c_.remaining()));
        }
        if (const size_t es = packed_size(a.elem_type_)) {
          // The items are in the file (checked above): one copy of their bytes.
          const uint8_t* p = c_.here();
          c_.skip(n * es, field);
          if (a.elem_type_ == GgufType::Bool) {
            for (uint64_t i = 0; i < n; ++i) {
              if (p[i] > 1) c_.fail(field, fmt::format("bool value {} is neither 0 nor 1", p[i]));
            }
          }
          a.bytes_.assign(p, p + n * es);
        } else if (a.elem_type_ == GgufType::String) {
          for (uint64_t i = 0; i < n; ++i) {
            const std::string_view s = read_string_view(field);
            a.bytes_.insert(a.bytes_.end(), s.begin(), s.end());
            a.ends_.push_back(a.bytes_.size());
          }
        } else {
          for (uint64_t i = 0; i < n; ++i) {
            a.arrays_.push_back(std::get<GgufArray>(read_value(GgufType::Array, field, depth + 1).v));
          }
        }
        return a;
      }
    }
    c_.fail(field, "unknown value type");
  }
};

// ---- GgufArray -------------------------------------------------------------------

namespace {

template <class T>
constexpr GgufType gguf_type_of() {
  if constexpr (std::is_same_v<T, uint8_t>) return GgufType::U8;
  if constexpr (std::is_same_v<T, int8_t>) return GgufType::I8;
  if constexpr (std::is_same_v<T, uint16_t>) return GgufType::U16;
  if constexpr (std::is_same_v<T, int16_t>) return GgufType::I16;
  if constexpr (std::is_same_v<T, uint32_t>) return GgufType::U32;
  if constexpr (std::is_same_v<T, int32_t>) return GgufType::I32;
  if constexpr (std::is_same_v<T, float>) return GgufType::F32;
  if constexpr (std::is_same_v<T, bool>) return GgufType::Bool;
  if constexpr (std::is_same_v<T, uint64_t>) return GgufType::U64;
  if constexpr (std::is_same_v<T, int64_t>) return GgufType::I64;
  if constexpr (std::is_same_v<T, double>) return GgufType::F64;
}

[[noreturn]] void array_type_error(GgufType have, GgufType want) {
  throw_error(ErrorKind::InvalidArgument, "gguf_value",
              fmt::format("array of {} read as {}", gguf_type_name(have), gguf_type_name(want)));
}

}  // namespace

GgufArray::GgufArray(GgufType elem_type, const std::vector<GgufValue>& items) : elem_type_(elem_type) {
  for (const auto& item : items) push_back(item);
}

size_t GgufArray::size() const {
  if (const size_t es = packed_size(elem_type_)) return bytes_.size() / es;
  return elem_type_ == GgufType::String ? ends_.size() : arrays_.size();
}

void GgufArray::push_back(const GgufValue& item) {
  if (item.type() != elem_type_) {
    throw_error(
        ErrorKind::InvalidArgument, "gguf_value",
        fmt::format("array of {} given a {} item", gguf_type_name(elem_type_), gguf_type_name(item.type())));
  }
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>) {
          bytes_.insert(bytes_.end(), x.begin(), x.end());
          ends_.push_back(bytes_.size());
        } else if constexpr (std::is_same_v<T, GgufArray>) {
          arrays_.push_back(x);
        } else {
          const uint8_t b[sizeof(T)] = {};
          const size_t at = bytes_.size();
          bytes_.insert(bytes_.end(), b, b + sizeof(T));
          std::memcpy(bytes_.data() + at, &x, sizeof(T));
        }
      },
      item.v);
}

void GgufArray::check_index(size_t i, GgufType want) const {
  if (elem_type_ != want) array_type_error(elem_type_, want);
  if (i >= size()) {
    throw_error(ErrorKind::IndexOutOfRange, "gguf_value",
                fmt::format("item {} of an array of {} {}", i, size(), gguf_type_name(elem_type_)));
  }
}

template <class T>
T GgufArray::get(size_t i) const {
  check_index(i, gguf_type_of<T>());
  T v;
  std::memcpy(&v, bytes_.data() + i * sizeof(T), sizeof(T));
  return v;
}
template uint8_t GgufArray::get<uint8_t>(size_t) const;
template int8_t GgufArray::get<int8_t>(size_t) const;
template uint16_t GgufArray::get<uint16_t>(size_t) const;
template int16_t GgufArray::get<int16_t>(size_t) const;
template uint32_t GgufArray::get<uint32_t>(size_t) const;
template int32_t GgufArray::get<int32_t>(size_t) const;
template float GgufArray::get<float>(size_t) const;
template bool GgufArray::get<bool>(size_t) const;
template uint64_t GgufArray::get<uint64_t>(size_t) const;
template int64_t GgufArray::get<int64_t>(size_t) const;
template double GgufArray::get<double>(size_t) const;

std::string_view GgufArray::string(size_t i) const {
  check_index(i, GgufType::String);
  const size_t begin = i ? size_t(ends_[i - 1]) : 0;
  return {reinterpret_cast<const char*>(bytes_.data()) + begin, size_t(ends_[i]) - begin};
}

const GgufArray& GgufArray::array(size_t i) const {
  check_index(i, GgufType::Array);
  return arrays_[i];
}

GgufValue GgufArray::operator[](size_t i) const {
  switch (elem_type_) {
    case GgufType::U8:
      return get<uint8_t>(i);
    case GgufType::I8:
      return get<int8_t>(i);
    case GgufType::U16:
      return get<uint16_t>(i);
    case GgufType::I16:
      return get<int16_t>(i);
    case GgufType::U32:
      return get<uint32_t>(i);
    case GgufType::I32:
      return get<int32_t>(i);
    case GgufType::F32:
      return get<float>(i);
    case GgufType::Bool:
      return get<bool>(i);
    case GgufType::String:
      return std::string(string(i));
    case GgufType::Array:
      return array(i);
    case GgufType::U64:
      return get<uint64_t>(i);
    case GgufType::I64:
      return get<int64_t>(i);
    case GgufType::F64:
      return get<double>(i);
  }
  array_type_error(elem_type_, elem_type_);
}

bool GgufArray::operator==(const GgufArray& o) const {
  return elem_type_ == o.elem_type_ && bytes_ == o.bytes_ && ends_ == o.ends_ && arrays_ == o.arrays_;
}

std::string_view gguf_type_name(GgufType t) {
  static constexpr std::string_view names[] = {"u8",   "i8",  "u16",   "i16", "u32", "i32", "f32",
                                               "bool", "str", "array", "u64", "i64", "f64"};
  const auto i = size_t(t);
  return i < std::size(names) ? names[i] : std::string_view("?");
}

std::string_view ggml_any_type_name(uint32_t id) {
  const AnyType* t = any_type(id);
  return t ? std::string_view(t->name) : std::string_view();
}

template <class T>
const T& GgufValue::get() const {
  if (const T* p = std::get_if<T>(&v)) return *p;
  throw_error(ErrorKind::InvalidArgument, "gguf_value",
              fmt::format("value is {}, not the requested type", gguf_type_name(type())));
}
template const uint8_t& GgufValue::get<uint8_t>() const;
template const int8_t& GgufValue::get<int8_t>() const;
template const uint16_t& GgufValue::get<uint16_t>() const;
template const int16_t& GgufValue::get<int16_t>() const;
template const uint32_t& GgufValue::get<uint32_t>() const;
template const int32_t& GgufValue::get<int32_t>() const;
template const float& GgufValue::get<float>() const;
template const bool& GgufValue::get<bool>() const;
template const std::string& GgufValue::get<std::string>() const;
template const GgufArray& GgufValue::get<GgufArray>() const;
template const uint64_t& GgufValue::get<uint64_t>() const;
template const int64_t& GgufValue::get<int64_t>() const;
template const double& GgufValue::get<double>() const;

int64_t GgufValue::as_int() const {
  return std::visit(
      [&](const auto& x) -> int64_t {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, uint64_t>) {
          if (x > uint64_t(std::numeric_limits<int64_t>::max())) {
            throw_error(ErrorKind::InvalidArgument, "gguf_value",
                        fmt::format("u64 {} does not fit int64", x));
          }
          return int64_t(x);
        } else if constexpr (std::is_integral_v<T>) {
          return int64_t(x);
        } else {
          throw_error(ErrorKind::InvalidArgument, "gguf_value",
                      fmt::format("value is {}, not an integer", gguf_type_name(type())));
        }
      },
      v);
}

uint64_t GgufValue::as_uint() const {
  if (const auto* p = std::get_if<uint64_t>(&v)) return *p;
  const int64_t i = as_int();
  if (i < 0) throw_error(ErrorKind::InvalidArgument, "gguf_value", fmt::format("{} is negative", i));
  return uint64_t(i);
}

double GgufValue::as_float() const {
  if (const auto* p = std::get_if<float>(&v)) return *p;
  if (const auto* p = std::get_if<double>(&v)) return *p;
  throw_error(ErrorKind::InvalidArgument, "gguf_value",
              fmt::format("value is {}, not a float", gguf_type_name(type())));
}

bool GgufValue::operator==(const GgufValue& o) const { return v == o.v; }

std::string GgufValue::str(size_t max_items) const {
  return std::visit(
      [&](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return fmt::format("\"{}\"", x.size() > 60 ? x.substr(0, 57) + "..." : x);
        } else if constexpr (std::is_same_v<T, GgufArray>) {
          std::string s = fmt::format("[{} x {}:", gguf_type_name(x.elem_type()), x.size());
          for (size_t i = 0; i < x.size() && i < max_items; ++i) s += (i ? ", " : " ") + x[i].str(max_items);
          if (x.size() > max_items) s += ", ...";
          return s + "]";
        } else if constexpr (std::is_same_v<T, bool>) {
          return x ? "true" : "false";
        } else if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>) {
          return fmt::format("{}", int(x));
        } else {
          return fmt::format("{}", x);
        }
      },
      v);
}

Shape GgufTensorInfo::shape() const {
  std::vector<size_t> d(ne.rbegin(), ne.rend());
  return Shape(std::move(d));
}

GgufFile GgufFile::open(const std::string& path) {
  return guarded(kOp, ErrorKind::Format, [&] { return load(io::map_file(path, kOp), path); });
}

GgufFile GgufFile::parse(const void* data, size_t size, const std::string& name) {
  return guarded(kOp, ErrorKind::Format, [&] { return load(io::copy_buffer(data, size), name); });
}

GgufFile GgufFile::load(io::Mapping m, const std::string& path) {
  GgufFile f;
  f.path_ = path;
  f.base_ = m.data;
  f.size_ = m.size;
  f.holder_ = std::move(m.holder);
  f.parse_image();
  return f;
}

void GgufFile::parse_image() {
  GgufReader p(base_, size_, path_);
  io::Cursor& c = p.c_;
  const uint32_t magic = c.read<uint32_t>("magic");
  if (magic != kMagic) c.fail("magic", fmt::format("0x{:08x} is not \"GGUF\"", magic));
  version_ = c.read<uint32_t>("version");
  if (version_ == 1) c.fail("version", "GGUF v1 is no longer supported (ggml rejects it too)");
  if ((version_ & 0xFFFF) == 0) {
    c.fail("version", fmt::format("0x{:08x}: the file looks big-endian (byte-swapped version)", version_));
  }
  if (version_ < 2 || version_ > 3)
    c.fail("version", fmt::format("unsupported version {} (2 and 3 are)", version_));
  const int64_t n_tensors = c.read<int64_t>("tensor_count");
  const int64_t n_kv = c.read<int64_t>("kv_count");
  // each key/value needs at least 8+4+1 bytes, each tensor info 8+4+4+8
  if (n_tensors < 0 || uint64_t(n_tensors) > c.remaining() / 24) {
    c.fail("tensor_count",
           fmt::format("{} tensors cannot fit in the {} bytes left", n_tensors, c.remaining()));
  }
  if (n_kv < 0 || uint64_t(n_kv) > c.remaining() / 13) {
    c.fail("kv_count",
           fmt::format("{} key/value pairs cannot fit in the {} bytes left", n_kv, c.remaining()));
  }

  // Nothing is reserved from the counts: a count is only bounded by the bytes left, and
  // each entry takes more memory than its smallest encoding.
  for (int64_t i = 0; i < n_kv; ++i) {
    const std::string where = fmt::format("kv[{}]", i);
    const std::string_view key = p.read_string_view(where + " key");
    if (!key_index_.emplace(key, kv_.size()).second)
      c.fail(where + " key", fmt::format("duplicate key '{}'", key));
    const std::string name(key);
    const GgufType t = p.read_type("key '" + name + "' value type");
    GgufValue v = p.read_value(t, "key '" + name + "' value", 0);
    kv_.emplace_back(name, std::move(v));
  }

  alignment_ = kDefaultAlignment;
  if (const GgufValue* a = find("general.alignment")) {
    if (a->type() != GgufType::U32) {
      c.fail("general.alignment", fmt::format("must be u32, is {}", gguf_type_name(a->type())));
    }
    const uint32_t al = a->get<uint32_t>();
    if (al == 0 || (al & (al - 1)) != 0)
      c.fail("general.alignment", fmt::format("{} is not a power of two", al));
    alignment_ = al;
  }

  uint64_t expected_offset = 0;
  for (int64_t i = 0; i < n_tensors; ++i) {
    GgufTensorInfo ti;
    const std::string_view name = p.read_string_view(fmt::format("tensor[{}] name", i));
    ti.name = std::string(name);
    const std::string where = fmt::format("tensor '{}'", ti.name);
    if (ti.name.size() > kMaxNameLen) {
      c.fail(where + " name", fmt::format("{} bytes long, the limit is {}", ti.name.size(), kMaxNameLen));
    }
    if (!tensor_index_.emplace(name, tensors_.size()).second)
      c.fail(where + " name", "duplicate tensor name");
    const uint32_t n_dims = c.read<uint32_t>(where + " n_dims");
    if (n_dims == 0 || n_dims > kMaxDims)
      c.fail(where + " n_dims", fmt::format("{} is not in 1..{}", n_dims, kMaxDims));
    for (uint32_t d = 0; d < n_dims; ++d)
      ti.ne.push_back(uint64_t(c.read<int64_t>(fmt::format("{} ne[{}]", where, d))));
    ti.type = c.read<uint32_t>(where + " type");
    const TensorInfoCheck chk = check_tensor_info(ti.type, ti.ne);
    if (!chk.problem.empty()) c.fail(where + chk.field, chk.problem);
    ti.nbytes = chk.nbytes;
    ti.offset = c.read<uint64_t>(where + " offset");
    if (ti.offset != expected_offset) {
      c.fail(where + " offset",
             fmt::format("has offset {}, expected {} (tensors must be contiguous, aligned to {})", ti.offset,
                         expected_offset, alignment_));
    }
    uint64_t end = 0;
    if (!add_fits(ti.offset, ti.nbytes, end))
      c.fail(where + " offset", "the data section exceeds 2^63-1 bytes");
    expected_offset = pad_to(end, alignment_);
    tensors_.push_back(std::move(ti));
  }
  data_offset_ = pad_to(c.pos(), alignment_);
  for (const auto& ti : tensors_) {
    if (data_offset_ > size_ || ti.offset + ti.nbytes > size_ - data_offset_) {
      c.fail("tensor '" + ti.name + "' data",
             fmt::format("bytes [{}, {}) of the data section at {} run past the end of the {}-byte file",
                         ti.offset, ti.offset + ti.nbytes, data_offset_, size_));
    }
  }
}

const GgufValue* GgufFile::find(const std::string& key) const {
  const auto it = key_index_.find(key);
  return it == key_index_.end() ? nullptr : &kv_[it->second].second;
}

const GgufTensorInfo* GgufFile::find_tensor(const std::string& name) const {
  const auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const uint8_t* GgufFile::tensor_data(const GgufTensorInfo& info) const {
  return base_ + data_offset_ + info.offset;
}

namespace {
const GgufTensorInfo& need_tensor(const GgufFile& f, const std::string& name) {
  const GgufTensorInfo* ti = f.find_tensor(name);
  if (!ti)
    throw_error(ErrorKind::InvalidArgument, kOp, fmt::format("{}: no tensor named '{}'", f.path(), name));
  return *ti;
}
}  // namespace

Tensor GgufFile::tensor(const std::string& name, Device device) const {
  const GgufTensorInfo& ti = need_tensor(*this, name);
  DType dt;
  switch (ti.type) {
    case 0:
      dt = DType::F32;
      break;
    case 1:
      dt = DType::F16;
      break;
    case 30:
      dt = DType::BF16;
      break;
    case 28:
      dt = DType::F64;
      break;
    case 26:
      dt = DType::I32;
      break;
    case 27:
      dt = DType::I64;
      break;
    default:
      throw_error(ErrorKind::UnsupportedDType, kOp,
                  fmt::format("{}: tensor '{}' is {}, not a plain dtype; load it with qtensor()", path_, name,
                              ggml_any_type_name(ti.type)));
  }
  const Shape shape = ti.shape();
  return Tensor::from_bytes(tensor_data(ti), shape.elem_count(), shape, dt, device);
}

QTensor GgufFile::qtensor(const std::string& name, Device device) const {
  const GgufTensorInfo& ti = need_tensor(*this, name);
  if (!ggml_type_known(ti.type)) {
    throw_error(ErrorKind::UnsupportedDType, kOp,
                fmt::format("{}: tensor '{}' has type {}, which wick does not implement", path_, name,
                            ggml_any_type_name(ti.type)));
  }
  return QTensor::from_bytes(GgmlType(ti.type), ti.shape(), tensor_data(ti), size_t(ti.nbytes), device);
}

// ---- writer ---------------------------------------------------------------------

namespace {

void put_string(std::vector<uint8_t>& out, const std::string& s) {
  io::put<uint64_t>(out, s.size());
  io::put_bytes(out, s.data(), s.size());
}

void put_value(std::vector<uint8_t>& out, const GgufValue& val, const std::string& key, int depth);

// An array's element type, count and items (arrays of arrays recurse); `depth` as the
// reader counts it (kMaxArrayDepth is the same limit on both sides).
void put_items(std::vector<uint8_t>& out, const GgufArray& a, const std::string& key, int depth) {
  if (depth >= kMaxArrayDepth) {
    throw_error(ErrorKind::InvalidArgument, "gguf_write",
                fmt::format("key '{}': arrays nested deeper than {}", key, kMaxArrayDepth));
  }
  io::put<int32_t>(out, int32_t(a.elem_type()));
  io::put<uint64_t>(out, a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    if (a.elem_type() == GgufType::String) {
      const std::string_view s = a.string(i);
      io::put<uint64_t>(out, s.size());
      io::put_bytes(out, s.data(), s.size());
    } else if (a.elem_type() == GgufType::Array) {
      put_items(out, a.array(i), key, depth + 1);
    } else {
      put_value(out, a[i], key, depth + 1);
    }
  }
}

void put_value(std::vector<uint8_t>& out, const GgufValue& val, const std::string& key, int depth) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>) {
          put_string(out, x);
        } else if constexpr (std::is_same_v<T, GgufArray>) {
          put_items(out, x, key, depth);
        } else if constexpr (std::is_same_v<T, bool>) {
          io::put<uint8_t>(out, x ? 1 : 0);
        } else {
          io::put<T>(out, x);
        }
      },
      val.v);
}

}  // namespace

namespace {

std::vector<uint8_t> serialize(const std::vector<std::pair<std::string, GgufValue>>& metadata,
                               const std::vector<GgufTensorData>& tensors, uint32_t version) {
  const char* op = "gguf_write";
  if (version != 2 && version != 3) {
    throw_error(ErrorKind::InvalidArgument, op, fmt::format("version {} (2 or 3 are written)", version));
  }
  uint32_t alignment = kDefaultAlignment;
  std::unordered_set<std::string_view> keys;
  for (const auto& [k, v] : metadata) {
    if (!keys.insert(k).second)
      throw_error(ErrorKind::InvalidArgument, op, fmt::format("duplicate key '{}'", k));
    if (k == "general.alignment") {
      if (v.type() != GgufType::U32) {
        throw_error(ErrorKind::InvalidArgument, op,
                    fmt::format("general.alignment must be u32, is {}", gguf_type_name(v.type())));
      }
      alignment = v.get<uint32_t>();
      if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
        throw_error(ErrorKind::InvalidArgument, op,
                    fmt::format("general.alignment {} is not a power of two", alignment));
      }
    }
  }
  std::vector<uint8_t> out;
  io::put<uint32_t>(out, kMagic);
  io::put<uint32_t>(out, version);
  io::put<int64_t>(out, int64_t(tensors.size()));
  io::put<int64_t>(out, int64_t(metadata.size()));
  for (const auto& [k, v] : metadata) {
    put_string(out, k);
    io::put<int32_t>(out, int32_t(v.type()));
    put_value(out, v, k, 0);
  }
  std::unordered_set<std::string_view> names;
  uint64_t offset = 0;
  for (const auto& t : tensors) {
    if (t.name.size() > kMaxNameLen) {
      throw_error(
          ErrorKind::InvalidArgument, op,
          fmt::format("tensor name '{}' is {} bytes, the limit is {}", t.name, t.name.size(), kMaxNameLen));
    }
    if (!names.insert(t.name).second) {
      throw_error(ErrorKind::InvalidArgument, op, fmt::format("duplicate tensor name '{}'", t.name));
    }
    const TensorInfoCheck chk = check_tensor_info(t.type, t.ne);
    if (!chk.problem.empty()) {
      throw_error(ErrorKind::InvalidArgument, op,
                  fmt::format("tensor '{}'{}: {}", t.name, chk.field, chk.problem));
    }
    const uint64_t nbytes = chk.nbytes;
    if (nbytes != t.bytes.size()) {
      throw_error(ErrorKind::InvalidArgument, op,
                  fmt::format("tensor '{}': {} dims of type {} do not match {} data bytes", t.name,
                              t.ne.size(), any_type(t.type)->name, t.bytes.size()));
    }
    put_string(out, t.name);
    io::put<uint32_t>(out, uint32_t(t.ne.size()));
    for (uint64_t d : t.ne) io::put<int64_t>(out, int64_t(d));
    io::put<uint32_t>(out, t.type);
    io::put<uint64_t>(out, offset);
    offset =
        pad_to(checked_add(offset, nbytes, ErrorKind::InvalidArgument, op, "the data section"), alignment);
  }
  out.resize(size_t(pad_to(out.size(), alignment)), 0);
  for (const auto& t : tensors) {
    io::put_bytes(out, t.bytes.data(), t.bytes.size());
    out.resize(size_t(pad_to(out.size(), alignment)), 0);
  }
  return out;
}

// A tensor of `rank` dims must fit GGUF's kMaxDims (checked when the data is built, before the
// work of converting or quantizing it is wasted).
void check_rank(const std::string& name, const Shape& shape, const std::string& type) {
  if (shape.rank() > kMaxDims) {
    throw_error(ErrorKind::InvalidArgument, "gguf_write",
                fmt::format("tensor '{}' {} {}: rank {}, GGUF holds at most {} dims", name, shape.str(), type,
                            shape.rank(), kMaxDims));
  }
}

}  // namespace

std::vector<uint8_t> gguf_serialize(const std::vector<std::pair<std::string, GgufValue>>& metadata,
                                    const std::vector<GgufTensorData>& tensors, uint32_t version) {
  return guarded("gguf_write", ErrorKind::InvalidArgument,
                 [&] { return serialize(metadata, tensors, version); });
}

void write_gguf(const std::string& path, const std::vector<std::pair<std::string, GgufValue>>& metadata,
                const std::vector<GgufTensorData>& tensors, uint32_t version) {
  guarded("gguf_write", ErrorKind::InvalidArgument,
          [&] { io::write_file(path, serialize(metadata, tensors, version), "gguf_write"); });
}

GgufTensorData GgufTensorData::from_tensor(const std::string& name, const Tensor& t) {
  uint32_t type;
  switch (t.dtype()) {
    case DType::F32:
      type = 0;
      break;
    case DType::F16:
      type = 1;
      break;
    case DType::BF16:
      type = 30;
      break;
    case DType::F64:
      type = 28;
      break;
    case DType::I32:
      type = 26;
      break;
    case DType::I64:
      type = 27;
      break;
    default:
      throw_error(ErrorKind::UnsupportedDType, "gguf_write",
                  fmt::format("tensor '{}' {} {}: GGUF has no such type", name, t.shape().str(),
                              dtype_name(t.dtype())));
  }
  check_rank(name, t.shape(), std::string(dtype_name(t.dtype())));
  GgufTensorData d;
  d.name = name;
  d.type = type;
  if (t.rank() == 0) d.ne = {1};
  for (size_t i = t.rank(); i-- > 0;) d.ne.push_back(t.dims()[i]);
  d.bytes.resize(t.elem_count() * dtype_size(t.dtype()));
  t.to_bytes(d.bytes.data());
  return d;
}

GgufTensorData GgufTensorData::from_qtensor(const std::string& name, const QTensor& t) {
  check_rank(name, t.shape(), std::string(ggml_type_name(t.type())));
  GgufTensorData d;
  d.name = name;
  d.type = uint32_t(t.type());
  for (size_t i = t.shape().rank(); i-- > 0;) d.ne.push_back(t.shape()[i]);
  d.bytes = t.to_host_bytes();
  return d;
}

}  // namespace wick
