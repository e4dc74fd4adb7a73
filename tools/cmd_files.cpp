// The model-file subcommands: inspect (gguf-dump style), quantize and export.
#include "cmd_files.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>

#include "printable.h"
#include "progress.h"
#include "wick/io.h"

namespace wick::cli {

namespace {

// Refused before anything opens the path: opening a FIFO waits for a writer.
void check_regular_file(const std::string& path, const char* op) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw_error(ErrorKind::Io, op, path + ": cannot open: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw_error(ErrorKind::Io, op, path + ": not a regular file");
}

bool is_gguf(const std::string& path) {
  check_regular_file(path, "inspect");
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw_error(ErrorKind::Io, "inspect", path + ": cannot open: " + std::strerror(errno));
  char magic[4] = {};
  const size_t n = std::fread(magic, 1, 4, f);
  std::fclose(f);
  return n == 4 && std::memcmp(magic, "GGUF", 4) == 0;
}

std::string ne_str(const std::vector<uint64_t>& ne) {
  std::string s;
  for (size_t i = 0; i < ne.size(); ++i) s += fmt::format("{}{}", i ? ", " : "", ne[i]);
  return s;
}

// JSON written to stdout as it is produced, laid out as nlohmann's dump(2): a file with
// millions of metadata items or keys needs no document in memory, and each member is
// appended in constant time (an ordered_json object searches its members on insert,
// which made `inspect --json` of 100k keys take 35 s).
class JsonOut {
 public:
  ~JsonOut() { flush(); }
  void begin_object() { open('{'); }
  void end_object() { close('}'); }
  void begin_array() { open('['); }
  void end_array() { close(']'); }
  void key(std::string_view k) {
    next();
    string_literal(k);
    buf_ += ": ";
    after_key_ = true;
  }
  void string(std::string_view s) {
    next();
    string_literal(s);
  }
  template <class T>
  void number(T x) {
    next();
    if constexpr (std::is_floating_point_v<T>) {
      buf_ += std::isfinite(x) ? fmt::format("{}", double(x)) : "null";  // as nlohmann writes floats
    } else {
      fmt::format_to(std::back_inserter(buf_), "{}", x);
    }
  }
  void boolean(bool b) {
    next();
    buf_ += b ? "true" : "false";
  }
  void end_document() {
    buf_ += '\n';
    flush();
  }
  void flush() {
    std::fwrite(buf_.data(), 1, buf_.size(), stdout);
    buf_.clear();
  }

 private:
  // Separator and indentation before a member or an item (nothing right after a key).
  void next() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (first_.empty()) return;
    buf_ += first_.back() ? "\n" : ",\n";
    first_.back() = false;
    buf_.append(2 * first_.size(), ' ');
    if (buf_.size() > (1u << 16)) flush();
  }
  void open(char c) {
    next();
    buf_ += c;
    first_.push_back(true);
  }
  void close(char c) {
    const bool empty = first_.back();
    first_.pop_back();
    if (!empty) {
      buf_ += '\n';
      buf_.append(2 * first_.size(), ' ');
    }
    buf_ += c;
  }
  // Bytes that are not UTF-8 print as U+FFFD, as nlohmann's error_handler_t::replace does.
  void string_literal(std::string_view s) {
    buf_ += nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  std::string buf_;
  std::vector<bool> first_;  // per open container: no member written yet
  bool after_key_ = false;
};

void json_value(JsonOut& j, const GgufValue& v) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, GgufArray>) {
          j.begin_array();
          for (size_t i = 0; i < x.size(); ++i) {
            if (x.elem_type() == GgufType::String) {
              j.string(x.string(i));
            } else if (x.elem_type() == GgufType::Array) {
              json_value(j, GgufValue(x.array(i)));
            } else {
              json_value(j, x[i]);
            }
          }
          j.end_array();
        } else if constexpr (std::is_same_v<T, std::string>) {
          j.string(x);
        } else if constexpr (std::is_same_v<T, bool>) {
          j.boolean(x);
        } else {
          j.number(x);
        }
      },
      v.v);
}

int inspect_gguf(const std::string& file, bool json) {
  GgufFile g = GgufFile::open(file);
  if (json) {
    JsonOut j;
    j.begin_object();
    j.key("format"), j.string("gguf");
    j.key("version"), j.number(g.version());
    j.key("alignment"), j.number(g.alignment());
    j.key("data_offset"), j.number(g.data_offset());
    j.key("metadata"), j.begin_object();
    for (const auto& [k, v] : g.metadata()) {
      j.key(k), j.begin_object();
      j.key("type"), j.string(gguf_type_name(v.type()));
      j.key("value"), json_value(j, v);
      j.end_object();
    }
    j.end_object();
    j.key("tensors"), j.begin_array();
    for (const auto& t : g.tensors()) {
      j.begin_object();
      j.key("name"), j.string(t.name);
      j.key("type"), j.string(ggml_any_type_name(t.type));
      j.key("ne"), j.begin_array();
      for (uint64_t d : t.ne) j.number(d);
      j.end_array();
      j.key("offset"), j.number(t.offset);
      j.key("nbytes"), j.number(t.nbytes);
      j.end_object();
    }
    j.end_array();
    j.end_object();
    j.end_document();
    return 0;
  }
  fmt::print("* File is GGUF v{}, alignment {}, data at offset {}\n", g.version(), g.alignment(),
             g.data_offset());
  fmt::print("* Dumping {} key/value pair(s)\n", g.metadata().size());
  for (size_t i = 0; i < g.metadata().size(); ++i) {
    const auto& [k, v] = g.metadata()[i];
    fmt::print("{:6}: {:>8} | {} = {}\n", i + 1, gguf_type_name(v.type()), printable(k), printable(v.str()));
  }
  fmt::print("* Dumping {} tensor(s)\n", g.tensors().size());
  uint64_t total = 0;
  for (size_t i = 0; i < g.tensors().size(); ++i) {
    const auto& t = g.tensors()[i];
    uint64_t n = 1;
    for (uint64_t d : t.ne) n *= d;
    total += n;
    fmt::print("{:6}: {:>11} | {:<24} {:<7} {:>12} bytes | {}\n", i + 1, n, "[" + ne_str(t.ne) + "]",
               ggml_any_type_name(t.type), t.nbytes, printable(t.name));
  }
  fmt::print("* {} elements in total\n", total);
  return 0;
}

int inspect_safetensors(const std::string& file, bool json) {
  SafetensorsFile s = SafetensorsFile::open(file);
  if (json) {
    JsonOut j;
    j.begin_object();
    j.key("format"), j.string("safetensors");
    j.key("metadata"), j.begin_object();
    for (const auto& [k, v] : s.metadata()) j.key(k), j.string(v);
    j.end_object();
    j.key("tensors"), j.begin_array();
    for (const auto& t : s.tensors()) {
      j.begin_object();
      j.key("name"), j.string(t.name);
      j.key("dtype"), j.string(t.dtype_name);
      j.key("shape"), j.begin_array();
      for (size_t d : t.shape.dims()) j.number(d);
      j.end_array();
      j.key("data_offsets"), j.begin_array();
      j.number(t.begin), j.number(t.end);
      j.end_array();
      j.end_object();
    }
    j.end_array();
    j.end_object();
    j.end_document();
    return 0;
  }
  fmt::print("* File is safetensors with {} metadata entr{}\n", s.metadata().size(),
             s.metadata().size() == 1 ? "y" : "ies");
  for (const auto& [k, v] : s.metadata()) fmt::print("        {} = {}\n", printable(k), printable(v));
  fmt::print("* Dumping {} tensor(s)\n", s.tensors().size());
  for (size_t i = 0; i < s.tensors().size(); ++i) {
    const auto& t = s.tensors()[i];
    fmt::print("{:6}: {:>11} | {:<24} {:<7} {:>12} bytes | {}\n", i + 1, t.shape.elem_count(), t.shape.str(),
               printable(t.dtype_name), t.end - t.begin, printable(t.name));
  }
  return 0;
}

// llama.cpp's general.file_type for a model that is (mostly) of type t.
uint32_t file_type_of(GgmlType t) {
  switch (t) {
    case GgmlType::F32:
      return 0;
    case GgmlType::F16:
      return 1;
    case GgmlType::Q4_0:
      return 2;
    case GgmlType::Q4_1:
      return 3;
    case GgmlType::Q8_0:
      return 7;
    case GgmlType::Q5_0:
      return 8;
    case GgmlType::Q5_1:
      return 9;
    case GgmlType::Q2_K:
      return 10;
    case GgmlType::Q3_K:
      return 11;  // Q3_K_S
    case GgmlType::Q4_K:
      return 14;  // Q4_K_S
    case GgmlType::Q5_K:
      return 16;  // Q5_K_S
    case GgmlType::Q6_K:
      return 18;
    case GgmlType::BF16:
      return 32;
    default:
      return 0;
  }
}

}  // namespace

int cmd_inspect(const std::string& file, bool json) {
  return is_gguf(file) ? inspect_gguf(file, json) : inspect_safetensors(file, json);
}

int cmd_quantize(const std::string& in, const std::string& out, const std::string& type) {
  const GgmlType target = parse_ggml_type(type);
  if (target == GgmlType::Q8_1 || target == GgmlType::Q8_K) {
    fmt::print(stderr, "wick quantize: {} is an activation format; pick a weight type\n",
               ggml_type_name(target));
    return 2;
  }
  std::vector<std::pair<std::string, GgufValue>> meta;
  std::vector<GgufTensorData> tensors;
  size_t quantized = 0;
  // Quantizes one float tensor when it qualifies, else keeps it.
  auto add = [&](const std::string& name, const Tensor& t) {
    const bool eligible = t.rank() >= 2 && is_float(t.dtype()) && t.dim(-1) % ggml_block_size(target) == 0;
    if (eligible) {
      tensors.push_back(GgufTensorData::from_qtensor(name, QTensor::quantize(t, target)));
      ++quantized;
    } else {
      tensors.push_back(GgufTensorData::from_tensor(name, t));
    }
  };
  // The input stays open (mapped) until the output is written: the writer then refuses an
  // output path that is the input file, and check_output_path says so before any work.
  std::optional<GgufFile> gguf_in;
  std::optional<SafetensorsFile> st_in;
  if (is_gguf(in)) {
    const GgufFile& g = gguf_in.emplace(GgufFile::open(in));
    check_output_path(out, "quantize");
    for (const auto& kv : g.metadata()) {
      if (kv.first != "general.file_type" && kv.first != "general.quantization_version") meta.push_back(kv);
    }
    Progress progress(g.tensors().size());
    for (size_t i = 0; i < g.tensors().size(); ++i) {
      const auto& ti = g.tensors()[i];
      progress.step(i, printable(ti.name));
      if (!ggml_type_known(ti.type)) {
        throw_error(ErrorKind::UnsupportedDType, "quantize",
                    fmt::format("{}: tensor '{}' has type {}, which wick cannot re-quantize", in, ti.name,
                                ggml_any_type_name(ti.type)));
      }
      const GgmlType src = GgmlType(ti.type);
      const bool plain = ti.type == 26 || ti.type == 27 || ti.type == 28;  // i32, i64, f64 stay plain
      add(ti.name, plain ? g.tensor(ti.name)
                         : g.qtensor(ti.name).dequantize(src == GgmlType::F16 ? DType::F16 : DType::F32));
    }
  } else {
    const SafetensorsFile& s = st_in.emplace(SafetensorsFile::open(in));
    check_output_path(out, "quantize");
    meta.emplace_back("general.architecture", std::string("unknown"));
    for (const auto& [k, v] : s.metadata()) meta.emplace_back("safetensors." + k, v);
    Progress progress(s.tensors().size());
    for (size_t i = 0; i < s.tensors().size(); ++i) {
      const auto& ti = s.tensors()[i];
      progress.step(i, printable(ti.name));
      Tensor t = s.tensor(ti.name);
      if (t.dtype() == DType::U8 || t.dtype() == DType::U32) {
        fmt::print(stderr, "wick quantize: skipping '{}' ({}): GGUF has no such type\n", printable(ti.name),
                   printable(ti.dtype_name));
        continue;
      }
      add(ti.name, t);
    }
  }
  meta.emplace_back("general.file_type", uint32_t(file_type_of(target)));
  if (ggml_is_quantized(target)) meta.emplace_back("general.quantization_version", uint32_t(2));
  write_gguf(out, meta, tensors);
  fmt::print(stderr, "wick quantize: {} of {} tensors to {}, wrote {}\n", quantized, tensors.size(),
             ggml_type_name(target), out);
  return 0;
}

int cmd_export(const std::string& file, const std::string& tensor, const std::string& out) {
  Tensor t;
  // The input stays open until the output is written (see cmd_quantize).
  std::optional<GgufFile> gguf_in;
  std::optional<SafetensorsFile> st_in;
  if (is_gguf(file)) {
    const GgufFile& g = gguf_in.emplace(GgufFile::open(file));
    check_output_path(out, "export");
    const GgufTensorInfo* ti = g.find_tensor(tensor);
    if (ti && (ti->type == 0 || ti->type == 1 || ti->type == 26 || ti->type == 27 || ti->type == 28)) {
      t = g.tensor(tensor);
    } else {
      t = g.qtensor(tensor).dequantize(DType::F32);  // throws naming the tensor when absent
    }
  } else {
    check_output_path(out, "export");
    t = st_in.emplace(SafetensorsFile::open(file)).tensor(tensor);
  }
  if (t.dtype() == DType::BF16) t = t.to_dtype(DType::F32);  // NumPy has no bf16
  write_npy(out, t);
  fmt::print(stderr, "wick export: {} {} {} -> {}\n", printable(tensor), t.shape().str(),
             dtype_name(t.dtype()), printable(out));
  return 0;
}

}  // namespace wick::cli
