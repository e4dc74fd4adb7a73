// Model and array files: GGUF (v2, v3), safetensors, NumPy .npy / .npz.
//
// Readers memory-map the file, validate every field before use (a malformed file
// is an Error of kind Format naming the file and the field; never a crash or an
// allocation larger than the file) and copy tensor data out on request.
// Shapes are wick's (row-major, outermost first); GGUF stores ne[0] innermost, so
// a GGUF tensor with ne = [k, n] is a wick tensor of shape [n, k].
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "wick/quant.h"
#include "wick/tensor.h"

namespace wick {

// Writers replace their output atomically: the bytes go to a temporary file in the
// output's directory, renamed over the output only once all of them were written and
// synced (a full disk or a file-size limit leaves the old file as it was). They refuse
// an output that is not a regular file, or that is a file this process has open for
// reading (a live GgufFile or SafetensorsFile maps it; compared by device and inode).
// check_output_path runs those checks alone, for tools that write after long work.
void check_output_path(const std::string& path, const std::string& op);

namespace io {
struct Mapping;  // src/io/file.h: a file's mapped bytes or a private copy of a buffer
}

// ---- GGUF -------------------------------------------------------------------------

// Metadata value types; the numbering is the file's (gguf_type).
enum class GgufType : uint32_t {
  U8 = 0,
  I8 = 1,
  U16 = 2,
  I16 = 3,
  U32 = 4,
  I32 = 5,
  F32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
  U64 = 10,
  I64 = 11,
  F64 = 12,
};
std::string_view gguf_type_name(GgufType t);

struct GgufValue;
// An array value: items of one element type (arrays nest). Numbers and bools are kept
// packed as the file stores them and strings back to back in one buffer, so an array
// takes about the memory of its encoding (a 16M-item u8 array: 16 MB).
class GgufArray {
 public:
  GgufArray() = default;
  explicit GgufArray(GgufType elem_type) : elem_type_(elem_type) {}
  // Every item must be of elem_type (InvalidArgument naming both types otherwise).
  GgufArray(GgufType elem_type, const std::vector<GgufValue>& items);

  GgufType elem_type() const { return elem_type_; }
  size_t size() const;
  bool empty() const { return size() == 0; }
  // Appends an item of elem_type (InvalidArgument naming both types otherwise).
  void push_back(const GgufValue& item);
  // Item i as a value (a copy), any element type. IndexOutOfRange past the end.
  GgufValue operator[](size_t i) const;
  // Item i of a number or bool array as T, the element type's C++ type (uint8_t for U8,
  // float for F32, bool for Bool, ...); InvalidArgument for another T.
  template <class T>
  T get(size_t i) const;
  // Item i of a string array (a view into the array) / of an array of arrays.
  std::string_view string(size_t i) const;
  const GgufArray& array(size_t i) const;
  bool operator==(const GgufArray& o) const;

 private:
  friend class GgufReader;
  void check_index(size_t i, GgufType want) const;
  GgufType elem_type_ = GgufType::U8;
  std::vector<uint8_t> bytes_;     // numbers and bools packed little-endian; strings back to back
  std::vector<uint64_t> ends_;     // strings: the end of each in bytes_
  std::vector<GgufArray> arrays_;  // arrays of arrays
};

// One metadata value. The variant's index equals the GgufType id.
struct GgufValue {
  using Variant = std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float, bool,
                               std::string, GgufArray, uint64_t, int64_t, double>;
  Variant v;

  GgufValue() = default;
  template <class T>
  GgufValue(T x) : v(std::move(x)) {}
  GgufValue(const char* s) : v(std::string(s)) {}
  GgufType type() const { return GgufType(v.index()); }
  // Typed access; throws InvalidArgument naming both types on a mismatch.
  template <class T>
  const T& get() const;
  // Any integer type as int64 / uint64 (range-checked), any float as double.
  int64_t as_int() const;
  uint64_t as_uint() const;
  double as_float() const;
  const std::string& as_string() const { return get<std::string>(); }
  const GgufArray& as_array() const { return get<GgufArray>(); }
  // Short human form: 42, 0.5, "llama", [u32 x 3: 1, 2, 3] (long arrays abbreviated).
  std::string str(size_t max_items = 8) const;
  bool operator==(const GgufValue& o) const;
};

// ggml's name for a tensor type id, including types wick cannot compute with
// ("iq2_xxs"); "" for an id ggml does not define.
std::string_view ggml_any_type_name(uint32_t id);

struct GgufTensorInfo {
  std::string name;
  std::vector<uint64_t> ne;  // ggml order: ne[0] is the row length (innermost)
  uint32_t type = 0;         // ggml_type id (may be a type wick does not implement)
  uint64_t offset = 0;       // bytes from the start of the data section
  uint64_t nbytes = 0;
  // wick shape: ne reversed (outermost first).
  Shape shape() const;
};

class GgufFile {
 public:
  // Maps and validates a file. Io error if it cannot be opened, Format if malformed.
  static GgufFile open(const std::string& path);
  // Validates an in-memory image (copied); `name` stands for the file in messages.
  static GgufFile parse(const void* data, size_t size, const std::string& name = "<memory>");

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  uint32_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }
  // Metadata in file order.
  const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return kv_; }
  const GgufValue* find(const std::string& key) const;  // nullptr when absent
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* find_tensor(const std::string& name) const;
  // Raw bytes of a tensor inside the mapping (valid while this GgufFile lives).
  const uint8_t* tensor_data(const GgufTensorInfo& info) const;

  // A float/int tensor (F32, F16, BF16, F64, I32, I64 in the file) on `device`.
  // Quantized types throw UnsupportedDType: use qtensor().
  Tensor tensor(const std::string& name, Device device = Device::cpu()) const;
  // Any type wick implements (quantized or not) as a QTensor on `device`.
  QTensor qtensor(const std::string& name, Device device = Device::cpu()) const;

 private:
  std::string path_;
  std::shared_ptr<const void> holder_;  // keeps the mapping / buffer alive
  const uint8_t* base_ = nullptr;
  size_t size_ = 0;
  uint32_t version_ = 3, alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string, GgufValue>> kv_;
  std::vector<GgufTensorInfo> tensors_;
  // Positions in kv_ / tensors_ by key / name; the views point into the mapped image.
  std::unordered_map<std::string_view, size_t> key_index_, tensor_index_;
  // Takes ownership of the image `m` (named `path` in messages) and parses it.
  static GgufFile load(io::Mapping m, const std::string& path);
  void parse_image();
};

// A tensor to write: raw packed bytes of `type` with ggml dims.
struct GgufTensorData {
  std::string name;
  uint32_t type = 0;
  std::vector<uint64_t> ne;
  std::vector<uint8_t> bytes;
  static GgufTensorData from_tensor(const std::string& name, const Tensor& t);    // f32/f16/bf16/f64/i32/i64
  static GgufTensorData from_qtensor(const std::string& name, const QTensor& t);  // any type
};

// Serializes a GGUF image: metadata in the given order, then tensor infos, data
// aligned to general.alignment (a u32 in `metadata`) or 32. Validates names,
// duplicate keys/names, alignment and byte counts (InvalidArgument).
std::vector<uint8_t> gguf_serialize(const std::vector<std::pair<std::string, GgufValue>>& metadata,
                                    const std::vector<GgufTensorData>& tensors, uint32_t version = 3);
// gguf_serialize, written to `path` (Io error on failure).
void write_gguf(const std::string& path, const std::vector<std::pair<std::string, GgufValue>>& metadata,
                const std::vector<GgufTensorData>& tensors, uint32_t version = 3);

// ---- safetensors ------------------------------------------------------------------

struct SafetensorsInfo {
  std::string name;
  DType dtype = DType::F32;
  std::string dtype_name;  // as in the file: "F32", "BF16", "BOOL" (read as u8)
  Shape shape;
  uint64_t begin = 0, end = 0;  // byte range inside the data section
  bool loadable = true;         // false for dtypes wick lacks (I8, I16, U16, U64, F8_*)
};

class SafetensorsFile {
 public:
  static SafetensorsFile open(const std::string& path);
  static SafetensorsFile parse(const void* data, size_t size, const std::string& name = "<memory>");

  const std::string& path() const { return path_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // In data-offset order.
  const std::vector<SafetensorsInfo>& tensors() const { return tensors_; }
  const SafetensorsInfo* find_tensor(const std::string& name) const;
  Tensor tensor(const std::string& name, Device device = Device::cpu()) const;

 private:
  std::string path_;
  std::shared_ptr<const void> holder_;
  const uint8_t* base_ = nullptr;
  size_t size_ = 0;
  uint64_t data_start_ = 0;
  std::map<std::string, std::string> metadata_;
  std::vector<SafetensorsInfo> tensors_;
  std::vector<size_t> by_name_;  // positions in tensors_, sorted by name
  // Takes ownership of the image `m` (named `path` in messages) and parses it.
  static SafetensorsFile load(io::Mapping m, const std::string& path);
  void parse_image();
};

// Writes tensors (any dtype, any device; stored contiguous, in the given order).
std::vector<uint8_t> safetensors_serialize(const std::vector<std::pair<std::string, Tensor>>& tensors,
                                           const std::map<std::string, std::string>& metadata = {});
void write_safetensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

// ---- NumPy -------------------------------------------------------------------------

// .npy v1/v2/v3: dtypes f2 f4 f8 i4 i8 u4 u1 b1 (as u8), either byte order, C or
// Fortran order. bf16 has no NumPy dtype: writing one throws UnsupportedDType.
Tensor read_npy(const std::string& path, Device device = Device::cpu());
Tensor parse_npy(const void* data, size_t size, const std::string& name = "<memory>",
                 Device device = Device::cpu());
void write_npy(const std::string& path, const Tensor& t);
std::vector<uint8_t> npy_serialize(const Tensor& t);

// .npz (a zip of .npy): reads stored (np.savez) and deflated (np.savez_compressed)
// entries, zip64 included; writes stored entries. Names drop ".npy".
std::vector<std::pair<std::string, Tensor>> read_npz(const std::string& path, Device device = Device::cpu());
std::vector<std::pair<std::string, Tensor>> parse_npz(const void* data, size_t size,
                                                      const std::string& name = "<memory>",
                                                      Device device = Device::cpu());
void write_npz(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors);

}  // namespace wick
