// The ggml type table (names, block sizes, block bytes, activation partners) and
// the row-level dispatch of quantize / dequantize / vec_dot by type.
#include <array>
#include <cctype>
#include <string>

#include "quant/quants.h"
#include "wick/error.h"
#include "wick/quant.h"

namespace wick {

namespace {

using quant::BlockQ2_K;
using quant::BlockQ3_K;
using quant::BlockQ4_0;
using quant::BlockQ4_1;
using quant::BlockQ4_K;
using quant::BlockQ5_0;
using quant::BlockQ5_1;
using quant::BlockQ5_K;
using quant::BlockQ6_K;
using quant::BlockQ8_0;
using quant::BlockQ8_1;
using quant::BlockQ8_K;

struct TypeTraits {
  GgmlType type;
  std::string_view name;
  size_t block;
  size_t bytes;
  GgmlType vec_dot_type;
  void (*quantize)(const float*, void*, size_t);
  void (*dequantize)(const void*, float*, size_t);
  // one weight row against n_act activation rows (back to back): out[r] = w . act_r
  void (*vec_dot)(size_t n, const void* w, const void* act, size_t n_act, float* out);
};

// Adapts a typed block kernel to the void* table signature.
template <class B, void (*F)(const float*, B*, size_t)>
void q_fn(const float* x, void* y, size_t n) {
  F(x, static_cast<B*>(y), n);
}
template <class B, void (*F)(const B*, float*, size_t)>
void dq_fn(const void* x, float* y, size_t n) {
  F(static_cast<const B*>(x), y, n);
}
template <class B, class A, void (*F)(size_t, const B*, const A*, size_t, float*)>
void dot_fn(size_t n, const void* x, const void* y, size_t ny, float* s) {
  F(n, static_cast<const B*>(x), static_cast<const A*>(y), ny, s);
}

void q_f32(const float* x, void* y, size_t n) { std::memcpy(y, x, n * 4); }
void dq_f32(const void* x, float* y, size_t n) { std::memcpy(y, x, n * 4); }
void q_f16(const float* x, void* y, size_t n) {
  auto* h = static_cast<uint16_t*>(y);
  for (size_t i = 0; i < n; ++i) h[i] = f32_to_f16_bits(x[i]);
}
void dq_f16(const void* x, float* y, size_t n) {
  const auto* h = static_cast<const uint16_t*>(x);
  for (size_t i = 0; i < n; ++i) y[i] = f16_bits_to_f32(h[i]);
}
void q_bf16(const float* x, void* y, size_t n) {
  auto* h = static_cast<uint16_t*>(y);
  for (size_t i = 0; i < n; ++i) h[i] = f32_to_bf16_bits(x[i]);
}
void dq_bf16(const void* x, float* y, size_t n) {
  const auto* h = static_cast<const uint16_t*>(x);
  for (size_t i = 0; i < n; ++i) y[i] = bf16_bits_to_f32(h[i]);
}
// Float rows accumulate in double (as ggml does for f16 dots).
template <float (*Load)(const void*, size_t), size_t kBytes>
void dot_float(size_t n, const void* x, const void* y, size_t ny, float* out) {
  for (size_t r = 0; r < ny; ++r) {
    const void* yr = static_cast<const uint8_t*>(y) + r * n * kBytes;
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += double(Load(x, i)) * double(Load(yr, i));
    out[r] = float(s);
  }
}
float load_f32(const void* p, size_t i) { return static_cast<const float*>(p)[i]; }
float load_f16(const void* p, size_t i) { return f16_bits_to_f32(static_cast<const uint16_t*>(p)[i]); }
float load_bf16(const void* p, size_t i) { return bf16_bits_to_f32(static_cast<const uint16_t*>(p)[i]); }

using namespace quant;
const std::array<TypeTraits, 15> kTraits = {{
    {GgmlType::F32, "f32", 1, 4, GgmlType::F32, q_f32, dq_f32, dot_float<load_f32, 4>},
    {GgmlType::F16, "f16", 1, 2, GgmlType::F16, q_f16, dq_f16, dot_float<load_f16, 2>},
    {GgmlType::Q4_0, "q4_0", 32, sizeof(BlockQ4_0), GgmlType::Q8_0, q_fn<BlockQ4_0, quantize_q4_0>,
     dq_fn<BlockQ4_0, dequantize_q4_0>, dot_fn<BlockQ4_0, BlockQ8_0, vec_dot_q4_0_q8_0>},
    {GgmlType::Q4_1, "q4_1", 32, sizeof(BlockQ4_1), GgmlType::Q8_1, q_fn<BlockQ4_1, quantize_q4_1>,
     dq_fn<BlockQ4_1, dequantize_q4_1>, dot_fn<BlockQ4_1, BlockQ8_1, vec_dot_q4_1_q8_1>},
    {GgmlType::Q5_0, "q5_0", 32, sizeof(BlockQ5_0), GgmlType::Q8_0, q_fn<BlockQ5_0, quantize_q5_0>,
     dq_fn<BlockQ5_0, dequantize_q5_0>, dot_fn<BlockQ5_0, BlockQ8_0, vec_dot_q5_0_q8_0>},
    {GgmlType::Q5_1, "q5_1", 32, sizeof(BlockQ5_1), GgmlType::Q8_1, q_fn<BlockQ5_1, quantize_q5_1>,
     dq_fn<BlockQ5_1, dequantize_q5_1>, dot_fn<BlockQ5_1, BlockQ8_1, vec_dot_q5_1_q8_1>},
    {GgmlType::Q8_0, "q8_0", 32, sizeof(BlockQ8_0), GgmlType::Q8_0, q_fn<BlockQ8_0, quantize_q8_0>,
     dq_fn<BlockQ8_0, dequantize_q8_0>, dot_fn<BlockQ8_0, BlockQ8_0, vec_dot_q8_0_q8_0>},
    {GgmlType::Q8_1, "q8_1", 32, sizeof(BlockQ8_1), GgmlType::Q8_1, q_fn<BlockQ8_1, quantize_q8_1>,
     dq_fn<BlockQ8_1, dequantize_q8_1>, dot_fn<BlockQ8_1, BlockQ8_1, vec_dot_q8_1_q8_1>},
    {GgmlType::Q2_K, "q2_K", 256, sizeof(BlockQ2_K), GgmlType::Q8_K, q_fn<BlockQ2_K, quantize_q2_k>,
     dq_fn<BlockQ2_K, dequantize_q2_k>, dot_fn<BlockQ2_K, BlockQ8_K, vec_dot_q2_k_q8_k>},
    {GgmlType::Q3_K, "q3_K", 256, sizeof(BlockQ3_K), GgmlType::Q8_K, q_fn<BlockQ3_K, quantize_q3_k>,
     dq_fn<BlockQ3_K, dequantize_q3_k>, dot_fn<BlockQ3_K, BlockQ8_K, vec_dot_q3_k_q8_k>},
    {GgmlType::Q4_K, "q4_K", 256, sizeof(BlockQ4_K), GgmlType::Q8_K, q_fn<BlockQ4_K, quantize_q4_k>,
     dq_fn<BlockQ4_K, dequantize_q4_k>, dot_fn<BlockQ4_K, BlockQ8_K, vec_dot_q4_k_q8_k>},
    {GgmlType::Q5_K, "q5_K", 256, sizeof(BlockQ5_K), GgmlType::Q8_K, q_fn<BlockQ5_K, quantize_q5_k>,
     dq_fn<BlockQ5_K, dequantize_q5_k>, dot_fn<BlockQ5_K, BlockQ8_K, vec_dot_q5_k_q8_k>},
    {GgmlType::Q6_K, "q6_K", 256, sizeof(BlockQ6_K), GgmlType::Q8_K, q_fn<BlockQ6_K, quantize_q6_k>,
     dq_fn<BlockQ6_K, dequantize_q6_k>, dot_fn<BlockQ6_K, BlockQ8_K, vec_dot_q6_k_q8_k>},
    {GgmlType::Q8_K, "q8_K", 256, sizeof(BlockQ8_K), GgmlType::Q8_K, q_fn<BlockQ8_K, quantize_q8_k>,
     dq_fn<BlockQ8_K, dequantize_q8_k>, dot_fn<BlockQ8_K, BlockQ8_K, vec_dot_q8_k_q8_k>},
    {GgmlType::BF16, "bf16", 1, 2, GgmlType::BF16, q_bf16, dq_bf16, dot_float<load_bf16, 2>},
}};
static_assert(std::size(kAllGgmlTypes) == kTraits.size(), "one traits row per GgmlType");

const TypeTraits* find_traits(uint32_t id) {
  for (const auto& t : kTraits) {
    if (uint32_t(t.type) == id) return &t;
  }
  return nullptr;
}

const TypeTraits& traits(GgmlType t) {
  const TypeTraits* tr = find_traits(uint32_t(t));
  if (!tr)
    throw_error(ErrorKind::InvalidArgument, "ggml_type",
                "unknown ggml type id " + std::to_string(uint32_t(t)));
  return *tr;
}

void check_row(const TypeTraits& tr, size_t n, const char* op) {
  if (n % tr.block != 0) {
    throw_error(ErrorKind::InvalidArgument, op,
                std::string(tr.name) + ": " + std::to_string(n) +
                    " elements is not a multiple of the block size " + std::to_string(tr.block));
  }
}

}  // namespace

bool ggml_type_known(uint32_t id) { return find_traits(id) != nullptr; }
std::string_view ggml_type_name(GgmlType t) {
  const TypeTraits* tr = find_traits(uint32_t(t));
  return tr ? tr->name : std::string_view("unknown");
}
size_t ggml_block_size(GgmlType t) { return traits(t).block; }
size_t ggml_type_size(GgmlType t) { return traits(t).bytes; }
bool ggml_is_quantized(GgmlType t) { return traits(t).block > 1; }
GgmlType ggml_vec_dot_type(GgmlType t) { return traits(t).vec_dot_type; }

size_t ggml_row_size(GgmlType t, size_t n) {
  const TypeTraits& tr = traits(t);
  check_row(tr, n, "ggml_row_size");
  return n / tr.block * tr.bytes;
}

GgmlType parse_ggml_type(std::string_view name) {
  std::string lower;
  for (char c : name) lower += char(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& t : kTraits) {
    std::string tn;
    for (char c : t.name) tn += char(std::tolower(static_cast<unsigned char>(c)));
    if (tn == lower) return t.type;
  }
  throw_error(
      ErrorKind::InvalidArgument, "parse_ggml_type",
      "unknown type '" + std::string(name) +
          "' (expected one of f32 f16 bf16 q4_0 q4_1 q5_0 q5_1 q8_0 q8_1 q2_k q3_k q4_k q5_k q6_k q8_k)");
}

namespace quant {

void quantize_row(GgmlType t, const float* x, void* y, size_t n) {
  const TypeTraits& tr = traits(t);
  check_row(tr, n, "quantize");
  tr.quantize(x, y, n);
}

void dequantize_row(GgmlType t, const void* x, float* y, size_t n) {
  const TypeTraits& tr = traits(t);
  check_row(tr, n, "dequantize");
  tr.dequantize(x, y, n);
}

void vec_dot_rows(GgmlType t, size_t n, const void* w, const void* acts, size_t n_acts, float* out) {
  const TypeTraits& tr = traits(t);
  check_row(tr, n, "vec_dot");
  tr.vec_dot(n, w, acts, n_acts, out);
}

float vec_dot(GgmlType t, size_t n, const void* w, const void* act) {
  float s;
  vec_dot_rows(t, n, w, act, 1, &s);
  return s;
}

}  // namespace quant
}  // namespace wick
