// libFuzzer target: read, write with each writer, read back. The input is read as a
// GGUF, a safetensors file, an .npy and an .npz; whatever parses is written again by
// every writer (GGUF, safetensors, .npy, .npz). A reader may refuse its input and a
// writer what it is given, each with a wick::Error; but what a writer wrote must read
// back, with the same tensors byte for byte (the writers refuse what the readers
// refuse). Any other exception, a crash or a sanitizer report is a bug. Built and run
// by scripts/fuzz.sh.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "wick/io.h"

namespace {

using wick::Tensor;
using Named = std::vector<std::pair<std::string, Tensor>>;
constexpr size_t kMaxBytes = size_t(1) << 20;  // tensors larger than this are left out (speed)

[[noreturn]] void bug(const std::string& what, const wick::Error& e) {
  std::fprintf(stderr, "round trip: %s: %s\n", what.c_str(), e.what());
  std::abort();
}

std::vector<uint8_t> bytes_of(const Tensor& t) {
  std::vector<uint8_t> b(t.elem_count() * wick::dtype_size(t.dtype()));
  t.to_bytes(b.data());
  return b;
}

void expect_same(const Tensor& a, const Tensor& b, const std::string& what) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype() || bytes_of(a) != bytes_of(b)) {
    std::fprintf(stderr, "round trip: %s: %s read back as %s\n", what.c_str(), a.str().c_str(),
                 b.str().c_str());
    std::abort();
  }
}

// Where the .npz writer writes (a path, as write_npz takes): memory-backed when there is one.
std::string npz_path() {
  static const std::string p =
      (std::filesystem::exists("/dev/shm") ? std::string("/dev/shm") : std::string("/tmp")) +
      "/wick_fuzz_roundtrip_" + std::to_string(::getpid()) + ".npz";
  return p;
}

void round_trip(const std::vector<std::pair<std::string, wick::GgufValue>>& meta,
                const std::vector<wick::GgufTensorData>& gguf_tensors, const Named& tensors) {
  // GGUF: metadata and tensors (quantized ones too) as read.
  std::vector<uint8_t> image;
  try {
    image = wick::gguf_serialize(meta, gguf_tensors);
  } catch (const wick::Error&) {
  }
  if (!image.empty()) {
    try {
      wick::GgufFile g = wick::GgufFile::parse(image.data(), image.size(), "written.gguf");
      // Metadata compared through its encoding (bit for bit, NaNs included).
      if (wick::gguf_serialize(g.metadata(), gguf_tensors) != image ||
          g.tensors().size() != gguf_tensors.size()) {
        std::fprintf(stderr, "round trip: GGUF metadata or tensor count differ\n");
        std::abort();
      }
      for (const auto& t : gguf_tensors) {
        const wick::GgufTensorInfo* ti = g.find_tensor(t.name);
        if (!ti || ti->ne != t.ne || ti->type != t.type ||
            std::vector<uint8_t>(g.tensor_data(*ti), g.tensor_data(*ti) + ti->nbytes) != t.bytes) {
          std::fprintf(stderr, "round trip: GGUF tensor differs\n");
          std::abort();
        }
      }
    } catch (const wick::Error& e) {
      bug("the GGUF writer wrote what the reader refuses", e);
    }
  }
  // safetensors.
  std::vector<uint8_t> st;
  try {
    st = wick::safetensors_serialize(tensors);
  } catch (const wick::Error&) {
  }
  if (!st.empty()) {
    try {
      wick::SafetensorsFile f = wick::SafetensorsFile::parse(st.data(), st.size(), "written.safetensors");
      for (const auto& [name, t] : tensors) expect_same(t, f.tensor(name), "safetensors " + name);
    } catch (const wick::Error& e) {
      bug("the safetensors writer wrote what the reader refuses", e);
    }
  }
  // .npy, one tensor at a time, and .npz.
  Named npz;
  for (const auto& [name, t] : tensors) {
    std::vector<uint8_t> npy;
    try {
      npy = wick::npy_serialize(t);
    } catch (const wick::Error&) {
      continue;
    }
    npz.emplace_back(name, t);
    try {
      expect_same(t, wick::parse_npy(npy.data(), npy.size(), "written.npy"), "npy " + name);
    } catch (const wick::Error& e) {
      bug("the npy writer wrote what the reader refuses", e);
    }
  }
  if (npz.empty()) return;
  try {
    wick::write_npz(npz_path(), npz);
  } catch (const wick::Error&) {
    return;
  }
  try {
    const Named back = wick::read_npz(npz_path());
    if (back.size() != npz.size()) {
      std::fprintf(stderr, "round trip: npz entry count differs\n");
      std::abort();
    }
    for (size_t i = 0; i < npz.size(); ++i) expect_same(npz[i].second, back[i].second, "npz " + npz[i].first);
  } catch (const wick::Error& e) {
    bug("the npz writer wrote what the reader refuses", e);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::pair<std::string, wick::GgufValue>> meta;
  std::vector<wick::GgufTensorData> gguf_tensors;
  Named tensors;
  try {
    wick::GgufFile g = wick::GgufFile::parse(data, size, "fuzz.gguf");
    // The writer pads the header and each tensor to general.alignment: past kMaxBytes
    // a fuzzed alignment makes images of up to gigabytes from a few bytes of input
    // (memory), so such files are parsed but not written back.
    const bool write_back = g.alignment() <= kMaxBytes;
    if (write_back) meta = g.metadata();
    for (const auto& ti : g.tensors()) {
      if (!write_back || ti.nbytes > kMaxBytes || !wick::ggml_type_known(ti.type)) continue;
      wick::QTensor q = g.qtensor(ti.name);
      gguf_tensors.push_back(wick::GgufTensorData::from_qtensor(ti.name, q));
      if (!wick::ggml_is_quantized(q.type())) tensors.emplace_back(ti.name, q.dequantize(wick::DType::F32));
    }
  } catch (const wick::Error&) {
  }
  try {
    wick::SafetensorsFile f = wick::SafetensorsFile::parse(data, size, "fuzz.safetensors");
    for (const auto& ti : f.tensors()) {
      if (ti.loadable && ti.end - ti.begin <= kMaxBytes) tensors.emplace_back(ti.name, f.tensor(ti.name));
    }
  } catch (const wick::Error&) {
  }
  try {
    Tensor t = wick::parse_npy(data, size, "fuzz.npy");
    if (t.elem_count() * wick::dtype_size(t.dtype()) <= kMaxBytes) tensors.emplace_back("npy", t);
  } catch (const wick::Error&) {
  }
  try {
    for (auto& [name, t] : wick::parse_npz(data, size, "fuzz.npz")) tensors.emplace_back(name, t);
  } catch (const wick::Error&) {
  }
  if (!meta.empty() || !gguf_tensors.empty() || !tensors.empty()) round_trip(meta, gguf_tensors, tensors);
  return 0;
}
