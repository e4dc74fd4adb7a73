// The model-file subcommands: inspect (gguf-dump style), quantize and export.
#include "cmd_files.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>

#include "commands.h"
#include "hf_llama.h"
#include "printable.h"
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

enum class FileKind { Gguf, Safetensors, Npy };

// What a file is, from its first bytes: GGUF's magic, NumPy's, or a safetensors header
// (a little-endian u64 length that fits the file, then a JSON object). Anything else is
// a Format error naming the formats `op` reads.
FileKind file_kind(const std::string& path, const char* op, bool npy_ok) {
  check_regular_file(path, op);
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw_error(ErrorKind::Io, op, path + ": cannot open: " + std::strerror(errno));
  uint8_t head[16] = {};
  const size_t n = std::fread(head, 1, sizeof head, f);
  std::fseek(f, 0, SEEK_END);
  const long size = std::ftell(f);
  std::fclose(f);
  if (n >= 4 && std::memcmp(head, "GGUF", 4) == 0) return FileKind::Gguf;
  if (npy_ok && n >= 6 && std::memcmp(head, "\x93NUMPY", 6) == 0) return FileKind::Npy;
  if (n >= 9) {
    uint64_t len = 0;
    std::memcpy(&len, head, 8);
    size_t i = 8;
    while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r')) ++i;
    if (len >= 2 && size >= 8 && len <= uint64_t(size) - 8 && i < n && head[i] == '{')
      return FileKind::Safetensors;
  }
  std::string start;
  for (size_t i = 0; i < std::min<size_t>(n, 8); ++i) start += fmt::format("{:02x}", head[i]);
  throw_error(ErrorKind::Format, op,
              fmt::format("{}: not a {} file (it starts with bytes {})", path,
                          npy_ok ? "GGUF, safetensors or npy" : "GGUF or safetensors",
                          start.empty() ? "none: it is empty" : start));
}

std::string ne_str(const std::vector<uint64_t>& ne) {
  std::string s;
  for (size_t i = 0; i < ne.size(); ++i) s += fmt::format("{}{}", i ? ", " : "", ne[i]);
  return s;
}

// A row-major shape written as ne_str writes ggml dims: "[4, 256]".
std::string dims_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.rank(); ++i) out += fmt::format("{}{}", i ? ", " : "", s.dims()[i]);
  return out + "]";
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
      j.key("ne"), j.begin_array();  // ggml order: the row length first
      for (uint64_t d : t.ne) j.number(d);
      j.end_array();
      j.key("shape"), j.begin_array();  // row-major: the outermost dim first
      for (size_t d = t.ne.size(); d-- > 0;) j.number(t.ne[d]);
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
  fmt::print("* Dumping {} tensor(s); dims in ggml order (ne[0], the row length, first)\n",
             g.tensors().size());
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
  fmt::print("* Dumping {} tensor(s); shapes row-major (the outermost dim first)\n", s.tensors().size());
  for (size_t i = 0; i < s.tensors().size(); ++i) {
    const auto& t = s.tensors()[i];
    fmt::print("{:6}: {:>11} | {:<24} {:<7} {:>12} bytes | {}\n", i + 1, t.shape.elem_count(),
               dims_str(t.shape), printable(t.dtype_name), t.end - t.begin, printable(t.name));
  }
  return 0;
}

int inspect_npy(const std::string& file, bool json) {
  const Tensor t = read_npy(file);
  if (json) {
    JsonOut j;
    j.begin_object();
    j.key("format"), j.string("npy");
    j.key("dtype"), j.string(dtype_name(t.dtype()));
    j.key("shape"), j.begin_array();
    for (size_t d : t.dims()) j.number(d);
    j.end_array();
    j.end_object();
    j.end_document();
    return 0;
  }
  fmt::print("* File is npy: one tensor, shape row-major (the outermost dim first)\n");
  fmt::print("{:6}: {:>11} | {:<24} {:<7} {:>12} bytes\n", 1, t.elem_count(), dims_str(t.shape()),
             dtype_name(t.dtype()), t.elem_count() * dtype_size(t.dtype()));
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

// What quantize makes of one input tensor.
struct TensorPlan {
  enum class Action {
    Quantize,  // converted to out_type (quantized or a float type) from its float values
    Copy,      // its bytes copied as they are (a GGUF input's tensor kept in its type)
    Convert,   // a safetensors tensor written in the GGUF type of its dtype (widened if needed)
    Skip,      // not written (a dtype wick cannot read)
  };
  std::string name, out_name;
  std::vector<uint64_t> ne;  // ggml order
  std::string src_type;      // as the input names it
  uint64_t src_bytes = 0;
  uint32_t src_id = 0;  // GGUF type id (of the dtype, for a safetensors tensor)
  Action action = Action::Skip;
  uint32_t out_type = 0;
  std::string note;  // why the tensor does not get the target type ("" when it does)
};

bool is_float_type(uint32_t id) { return id == 0 || id == 1 || id == 30; }  // f32, f16, bf16

// llama.cpp's fallback when a row does not hold whole blocks of `t` (llama-quant.cpp), then f16
// when the row does not hold whole blocks of that either.
GgmlType fallback_type(GgmlType t, uint64_t row) {
  GgmlType f = GgmlType::F16;
  switch (t) {
    case GgmlType::Q2_K:
    case GgmlType::Q3_K:
      f = GgmlType::Q4_0;  // llama.cpp takes iq4_nl, which wick does not implement
      break;
    case GgmlType::Q4_K:
      f = GgmlType::Q5_0;
      break;
    case GgmlType::Q5_K:
      f = GgmlType::Q5_1;
      break;
    case GgmlType::Q6_K:
      f = GgmlType::Q8_0;
      break;
    default:
      break;
  }
  return row % ggml_block_size(f) == 0 ? f : GgmlType::F16;
}

// The output type of a tensor of rank >= 2 meant to become `want`: `want` when its rows hold
// whole blocks, else the fallback (with the reason in plan.note). A tensor that has that type
// already is copied (`same`: Copy from a GGUF, Convert from safetensors).
void choose_type(TensorPlan& plan, GgmlType want, TensorPlan::Action same) {
  const uint64_t row = plan.ne[0];
  GgmlType t = want;
  if (row % ggml_block_size(want) != 0) {
    t = fallback_type(want, row);
    plan.note = fmt::format("rows of {} are not whole {}-element blocks of {}: {} instead", row,
                            ggml_block_size(want), ggml_type_name(want), ggml_type_name(t));
  }
  plan.out_type = uint32_t(t);
  plan.action = plan.out_type == plan.src_id ? same : TensorPlan::Action::Quantize;
}

// Dims as ggml counts them: trailing 1s do not count (a [4096, 1] norm is 1-D).
size_t ggml_n_dims(const std::vector<uint64_t>& ne) {
  size_t n = ne.size();
  while (n > 1 && ne[n - 1] == 1) --n;
  return n;
}

// Bytes as llama-quantize prints them (MiB), in B or KiB below a MiB.
std::string size_str(uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (bytes < (1u << 20)) return fmt::format("{:.2f} KiB", double(bytes) / 1024.0);
  return fmt::format("{:.2f} MiB", double(bytes) / double(1u << 20));
}

std::string ne_list(const std::vector<uint64_t>& ne) { return "[" + ne_str(ne) + "]"; }

// The GGUF type of a tensor written through GgufTensorData::from_tensor.
uint32_t gguf_type_of(DType d) {
  switch (d) {
    case DType::F32:
      return 0;
    case DType::F16:
      return 1;
    case DType::BF16:
      return 30;
    case DType::F64:
      return 28;
    case DType::I32:
      return 26;
    default:
      return 27;  // i64
  }
}

bool is_output_tensor(const std::string& name) { return name == "output.weight" || name == "lm_head.weight"; }

}  // namespace

int cmd_inspect(const std::string& file, bool json) {
  switch (file_kind(file, "inspect", true)) {
    case FileKind::Gguf:
      return inspect_gguf(file, json);
    case FileKind::Safetensors:
      return inspect_safetensors(file, json);
    case FileKind::Npy:
      return inspect_npy(file, json);
  }
  return kExitFailure;
}

int cmd_quantize(const QuantizeOptions& o) {
  const auto weight_type = [](const std::string& name, const char* flag) {
    GgmlType t{};
    try {
      t = parse_ggml_type(name);
    } catch (const Error& e) {
      throw UsageError(fmt::format("{} {}: {}", flag, name, e.what()));
    }
    if (t == GgmlType::Q8_1 || t == GgmlType::Q8_K)
      throw UsageError(fmt::format("{} {}: an activation format; pick a weight type", flag, name));
    return t;
  };
  const GgmlType target = weight_type(o.type, "--type");
  const GgmlType output_target =
      o.output_type.empty() ? target : weight_type(o.output_type, "--output-tensor-type");

  // Plan every tensor from the headers alone, so that a refusal comes before any work and the
  // output's header can be written first; then each tensor is converted and written in turn
  // (one at a time in memory) to a temporary file renamed over the output at the end. The input
  // stays open (mapped) until then: the writer refuses an output that is the input file, and
  // check_output_path says so before any work.
  std::optional<GgufFile> gguf_in;
  std::optional<SafetensorsFile> st_in;
  std::optional<HfLlama> hf;
  std::vector<std::pair<std::string, GgufValue>> meta;
  std::vector<TensorPlan> plans;
  using Action = TensorPlan::Action;
  const FileKind kind = file_kind(o.in, "quantize", false);
  if (kind == FileKind::Gguf) {
    const GgufFile& g = gguf_in.emplace(GgufFile::open(o.in));
    check_output_path(o.out, "quantize");
    for (const auto& kv : g.metadata()) {
      if (kv.first != "general.file_type" && kv.first != "general.quantization_version") meta.push_back(kv);
    }
    for (const auto& ti : g.tensors()) {
      TensorPlan p;
      p.name = p.out_name = ti.name;
      p.ne = ti.ne;
      p.src_type = std::string(ggml_any_type_name(ti.type));
      p.src_bytes = ti.nbytes;
      p.src_id = p.out_type = ti.type;
      p.action = Action::Copy;
      const bool known = ggml_type_known(ti.type);
      if (!known && ti.type >= 24 && ti.type <= 28) {
        p.note = "not a float type: kept";
      } else if (!known) {
        p.note = fmt::format("wick cannot decode {}: copied as it is", p.src_type);
      } else if (ggml_n_dims(p.ne) < 2) {
        p.note = "1-D: kept";
      } else {
        choose_type(p, is_output_tensor(p.name) ? output_target : target, Action::Copy);
        if (p.action == Action::Quantize && ggml_is_quantized(GgmlType(ti.type))) {
          if (!o.allow_requantize) {
            throw UsageError(fmt::format(
                "tensor '{}' is {} already: quantizing it again adds to its error; pass --allow-requantize",
                ti.name, p.src_type));
          }
          p.note = (p.note.empty() ? "" : p.note + "; ") + "re-quantized";
        }
      }
      plans.push_back(std::move(p));
    }
  } else {
    const SafetensorsFile& s = st_in.emplace(SafetensorsFile::open(o.in));
    check_output_path(o.out, "quantize");
    std::string why;
    hf = HfLlama::detect(s, o.in, why);
    if (!why.empty()) fmt::print(stderr, "wick quantize: {}\n", printable(why));
    if (hf) {
      meta = hf->metadata();
    } else {
      meta.emplace_back("general.architecture", std::string("unknown"));
    }
    for (const auto& [k, v] : s.metadata()) meta.emplace_back("safetensors." + k, v);
    for (const auto& ti : s.tensors()) {
      if (ti.shape.rank() > 4) {  // an input GGUF cannot hold
        throw_error(ErrorKind::Format, "quantize",
                    fmt::format("tensor '{}' {} {}: rank {}, GGUF holds at most 4 dims", ti.name,
                                ti.shape.str(), ti.dtype_name, ti.shape.rank()));
      }
      TensorPlan p;
      p.name = ti.name;
      p.out_name = hf ? hf->gguf_name(ti.name) : ti.name;
      for (size_t d = ti.shape.rank(); d-- > 0;) p.ne.push_back(ti.shape.dims()[d]);
      if (p.ne.empty()) p.ne = {1};
      p.src_type = ti.dtype_name;
      p.src_bytes = ti.end - ti.begin;
      p.action = Action::Convert;
      if (p.out_name.empty()) {
        p.out_name = ti.name;
        p.action = Action::Skip;
        p.note = "llama.cpp does not load it: skipped";
      } else if (!ti.loadable) {
        p.action = Action::Skip;
        p.note = fmt::format("wick cannot read {}: skipped", ti.dtype_name);
      } else if (ti.dtype == DType::U8) {
        p.out_type = gguf_type_of(DType::I32);
        p.note = "GGUF has no u8 type: widened to i32";
      } else if (ti.dtype == DType::U32) {
        p.out_type = gguf_type_of(DType::I64);
        p.note = "GGUF has no u32 type: widened to i64";
      } else {
        p.src_id = p.out_type = gguf_type_of(ti.dtype);
        if (!is_float_type(p.src_id)) {
          p.note = "not a float type: kept";
        } else if (ggml_n_dims(p.ne) < 2) {
          p.note = "1-D: kept";
        } else {
          choose_type(p, is_output_tensor(p.out_name) ? output_target : target, Action::Convert);
        }
      }
      plans.push_back(std::move(p));
    }
  }
  meta.emplace_back("general.file_type", uint32_t(file_type_of(target)));
  if (ggml_is_quantized(target)) meta.emplace_back("general.quantization_version", uint32_t(2));

  std::vector<GgufWriter::TensorDecl> decls;
  for (const auto& p : plans)
    if (p.action != Action::Skip) decls.push_back({p.out_name, p.out_type, p.ne});
  GgufWriter writer(o.out, meta, decls);

  fmt::print("wick quantize: {} -> {} as {}; dims in ggml order (ne[0], the row length, first)\n",
             printable(o.in), printable(o.out), ggml_type_name(target));
  const int width = int(std::to_string(plans.size()).size());
  uint64_t before = 0, after = 0;
  size_t n_target = 0, n_other = 0, n_skipped = 0;
  for (size_t i = 0; i < plans.size(); ++i) {
    const TensorPlan& p = plans[i];
    before += p.src_bytes;
    const std::string head = fmt::format("[{:>{}}/{}] {:<32} {:<20} {:>6} -> ", i + 1, width, plans.size(),
                                         printable(p.out_name), ne_list(p.ne), printable(p.src_type));
    if (p.action == Action::Skip) {
      ++n_skipped;
      fmt::print("{}{:<6} {:>12}             ({})\n", head, "-", size_str(p.src_bytes), p.note);
      continue;
    }
    GgufTensorData d;
    if (p.action == Action::Copy) {
      const GgufFile& g = *gguf_in;
      const GgufTensorInfo& ti = *g.find_tensor(p.name);
      const uint8_t* bytes = g.tensor_data(ti);
      d.name = p.out_name;
      d.type = p.out_type;
      d.ne = p.ne;
      d.bytes.assign(bytes, bytes + ti.nbytes);
    } else {
      Tensor t;
      if (gguf_in) {
        t = gguf_in->qtensor(p.name).dequantize(p.src_id == 1 ? DType::F16 : DType::F32);
      } else {
        t = st_in->tensor(p.name);
        if (t.dtype() == DType::U8) t = t.to_dtype(DType::I32);
        if (t.dtype() == DType::U32) t = t.to_dtype(DType::I64);
        if (hf) t = hf->convert(p.name, t);
      }
      const auto type = GgmlType(p.out_type);
      if (p.action == Action::Convert) {
        d = GgufTensorData::from_tensor(p.out_name, t);
      } else if (type == GgmlType::F32 || type == GgmlType::F16 || type == GgmlType::BF16) {
        const DType dt = type == GgmlType::F32   ? DType::F32
                         : type == GgmlType::F16 ? DType::F16
                                                 : DType::BF16;
        d = GgufTensorData::from_tensor(p.out_name, t.to_dtype(dt));
      } else {
        d = GgufTensorData::from_qtensor(p.out_name, QTensor::quantize(t, type));
      }
    }
    if (p.out_type == uint32_t(target)) {
      ++n_target;
    } else {
      ++n_other;
    }
    after += d.bytes.size();
    fmt::print("{}{:<6} {:>12} -> {:>12}{}\n", head, ggml_any_type_name(p.out_type), size_str(p.src_bytes),
               size_str(d.bytes.size()), p.note.empty() ? "" : "  (" + p.note + ")");
    writer.add(d);
  }
  writer.commit();
  fmt::print(
      "wick quantize: model size {} -> {}; {} tensor(s) {}, {} kept or given another type, {} skipped; "
      "wrote {}\n",
      size_str(before), size_str(after), n_target, ggml_type_name(target), n_other, n_skipped,
      printable(o.out));
  return 0;
}

int cmd_export(const std::string& file, const std::string& tensor, const std::string& out) {
  Tensor t;
  // The input stays open until the output is written (see cmd_quantize).
  std::optional<GgufFile> gguf_in;
  std::optional<SafetensorsFile> st_in;
  if (file_kind(file, "export", false) == FileKind::Gguf) {
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
