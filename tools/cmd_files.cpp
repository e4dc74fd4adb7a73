// The model-file subcommands: inspect (gguf-dump style), quantize and export.
#include "cmd_files.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "progress.h"
#include "wick/io.h"

namespace wick::cli {

namespace {

bool is_gguf(const std::string& path) {
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

nlohmann::json value_json(const GgufValue& v) {
  return std::visit(
      [](const auto& x) -> nlohmann::json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, GgufArray>) {
          nlohmann::json a = nlohmann::json::array();
          for (const auto& item : x.items) a.push_back(value_json(item));
          return a;
        } else {
          return x;
        }
      },
      v.v);
}

int inspect_gguf(const std::string& file, bool json) {
  GgufFile g = GgufFile::open(file);
  if (json) {
    nlohmann::ordered_json out;
    out["format"] = "gguf";
    out["version"] = g.version();
    out["alignment"] = g.alignment();
    out["data_offset"] = g.data_offset();
    nlohmann::ordered_json kv = nlohmann::ordered_json::object();
    for (const auto& [k, v] : g.metadata()) {
      kv[k] = {{"type", gguf_type_name(v.type())}, {"value", value_json(v)}};
    }
    out["metadata"] = kv;
    nlohmann::ordered_json ts = nlohmann::ordered_json::array();
    for (const auto& t : g.tensors()) {
      ts.push_back({{"name", t.name},
                    {"type", ggml_any_type_name(t.type)},
                    {"ne", t.ne},
                    {"offset", t.offset},
                    {"nbytes", t.nbytes}});
    }
    out["tensors"] = ts;
    fmt::print("{}\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
    return 0;
  }
  fmt::print("* File is GGUF v{}, alignment {}, data at offset {}\n", g.version(), g.alignment(),
             g.data_offset());
  fmt::print("* Dumping {} key/value pair(s)\n", g.metadata().size());
  for (size_t i = 0; i < g.metadata().size(); ++i) {
    const auto& [k, v] = g.metadata()[i];
    fmt::print("{:6}: {:>8} | {} = {}\n", i + 1, gguf_type_name(v.type()), k, v.str());
  }
  fmt::print("* Dumping {} tensor(s)\n", g.tensors().size());
  uint64_t total = 0;
  for (size_t i = 0; i < g.tensors().size(); ++i) {
    const auto& t = g.tensors()[i];
    uint64_t n = 1;
    for (uint64_t d : t.ne) n *= d;
    total += n;
    fmt::print("{:6}: {:>11} | {:<24} {:<7} {:>12} bytes | {}\n", i + 1, n, "[" + ne_str(t.ne) + "]",
               ggml_any_type_name(t.type), t.nbytes, t.name);
  }
  fmt::print("* {} elements in total\n", total);
  return 0;
}

int inspect_safetensors(const std::string& file, bool json) {
  SafetensorsFile s = SafetensorsFile::open(file);
  if (json) {
    nlohmann::ordered_json out;
    out["format"] = "safetensors";
    out["metadata"] = s.metadata();
    nlohmann::ordered_json ts = nlohmann::ordered_json::array();
    for (const auto& t : s.tensors()) {
      ts.push_back({{"name", t.name},
                    {"dtype", t.dtype_name},
                    {"shape", t.shape.dims()},
                    {"data_offsets", {t.begin, t.end}}});
    }
    out["tensors"] = ts;
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  fmt::print("* File is safetensors with {} metadata entr{}\n", s.metadata().size(),
             s.metadata().size() == 1 ? "y" : "ies");
  for (const auto& [k, v] : s.metadata()) fmt::print("        {} = {}\n", k, v);
  fmt::print("* Dumping {} tensor(s)\n", s.tensors().size());
  for (size_t i = 0; i < s.tensors().size(); ++i) {
    const auto& t = s.tensors()[i];
    fmt::print("{:6}: {:>11} | {:<24} {:<7} {:>12} bytes | {}\n", i + 1, t.shape.elem_count(), t.shape.str(),
               t.dtype_name, t.end - t.begin, t.name);
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
  if (is_gguf(in)) {
    GgufFile g = GgufFile::open(in);
    for (const auto& kv : g.metadata()) {
      if (kv.first != "general.file_type" && kv.first != "general.quantization_version") meta.push_back(kv);
    }
    Progress progress(g.tensors().size());
    for (size_t i = 0; i < g.tensors().size(); ++i) {
      const auto& ti = g.tensors()[i];
      progress.step(i, ti.name);
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
    SafetensorsFile s = SafetensorsFile::open(in);
    meta.emplace_back("general.architecture", std::string("unknown"));
    for (const auto& [k, v] : s.metadata()) meta.emplace_back("safetensors." + k, v);
    Progress progress(s.tensors().size());
    for (size_t i = 0; i < s.tensors().size(); ++i) {
      const auto& ti = s.tensors()[i];
      progress.step(i, ti.name);
      Tensor t = s.tensor(ti.name);
      if (t.dtype() == DType::U8 || t.dtype() == DType::U32) {
        fmt::print(stderr, "wick quantize: skipping '{}' ({}): GGUF has no such type\n", ti.name,
                   ti.dtype_name);
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
  if (is_gguf(file)) {
    GgufFile g = GgufFile::open(file);
    const GgufTensorInfo* ti = g.find_tensor(tensor);
    if (ti && (ti->type == 0 || ti->type == 1 || ti->type == 26 || ti->type == 27 || ti->type == 28)) {
      t = g.tensor(tensor);
    } else {
      t = g.qtensor(tensor).dequantize(DType::F32);  // throws naming the tensor when absent
    }
  } else {
    t = SafetensorsFile::open(file).tensor(tensor);
  }
  if (t.dtype() == DType::BF16) t = t.to_dtype(DType::F32);  // NumPy has no bf16
  write_npy(out, t);
  fmt::print(stderr, "wick export: {} {} {} -> {}\n", tensor, t.shape().str(), dtype_name(t.dtype()), out);
  return 0;
}

}  // namespace wick::cli
