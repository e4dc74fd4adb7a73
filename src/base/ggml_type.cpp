// The ggml type table: names, block sizes, block bytes and the activation type each
// weight type is dotted against (ggml's type_traits). Row kernels live with the
// backends (src/backend/cpu/quant_types.cpp, src/backend/gpu/kernels/quantized).
#include <array>
#include <cctype>
#include <string>

#include "base/ggml_blocks.h"
#include "wick/error.h"
#include "wick/quant.h"

namespace wick {

namespace {

struct TypeTraits {
  GgmlType type;
  std::string_view name;
  size_t block;
  size_t bytes;
  GgmlType vec_dot_type;
};

using namespace quant;
constexpr std::array<TypeTraits, 15> kTraits = {{
    {GgmlType::F32, "f32", 1, 4, GgmlType::F32},
    {GgmlType::F16, "f16", 1, 2, GgmlType::F16},
    {GgmlType::Q4_0, "q4_0", 32, sizeof(BlockQ4_0), GgmlType::Q8_0},
    {GgmlType::Q4_1, "q4_1", 32, sizeof(BlockQ4_1), GgmlType::Q8_1},
    {GgmlType::Q5_0, "q5_0", 32, sizeof(BlockQ5_0), GgmlType::Q8_0},
    {GgmlType::Q5_1, "q5_1", 32, sizeof(BlockQ5_1), GgmlType::Q8_1},
    {GgmlType::Q8_0, "q8_0", 32, sizeof(BlockQ8_0), GgmlType::Q8_0},
    {GgmlType::Q8_1, "q8_1", 32, sizeof(BlockQ8_1), GgmlType::Q8_1},
    {GgmlType::Q2_K, "q2_K", 256, sizeof(BlockQ2_K), GgmlType::Q8_K},
    {GgmlType::Q3_K, "q3_K", 256, sizeof(BlockQ3_K), GgmlType::Q8_K},
    {GgmlType::Q4_K, "q4_K", 256, sizeof(BlockQ4_K), GgmlType::Q8_K},
    {GgmlType::Q5_K, "q5_K", 256, sizeof(BlockQ5_K), GgmlType::Q8_K},
    {GgmlType::Q6_K, "q6_K", 256, sizeof(BlockQ6_K), GgmlType::Q8_K},
    {GgmlType::Q8_K, "q8_K", 256, sizeof(BlockQ8_K), GgmlType::Q8_K},
    {GgmlType::BF16, "bf16", 1, 2, GgmlType::BF16},
}};
static_assert(std::size(kAllGgmlTypes) == kTraits.size(), "one traits row per GgmlType");
static_assert([] {
  for (size_t i = 0; i < kTraits.size(); ++i)
    if (kTraits[i].type != kAllGgmlTypes[i]) return false;
  return true;
}(), "the traits rows follow kAllGgmlTypes");

const TypeTraits* find_traits(uint32_t id) {
  for (const auto& t : kTraits) {
    if (uint32_t(t.type) == id) return &t;
  }
  return nullptr;
}

const TypeTraits& traits(GgmlType t) {
  const TypeTraits* tr = find_traits(uint32_t(t));
  if (!tr)
    throw_error(ErrorKind::InvalidArgument, "ggml_type", "unknown ggml type id " + std::to_string(uint32_t(t)));
  return *tr;
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

void check_ggml_row(GgmlType t, size_t n, const char* op) {
  const TypeTraits& tr = traits(t);
  if (n % tr.block != 0) {
    throw_error(ErrorKind::InvalidArgument, op,
                std::string(tr.name) + ": " + std::to_string(n) + " elements is not a multiple of the block size " +
                    std::to_string(tr.block));
  }
}

size_t ggml_row_size(GgmlType t, size_t n) {
  check_ggml_row(t, n, "ggml_row_size");
  const TypeTraits& tr = traits(t);
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
  throw_error(ErrorKind::InvalidArgument, "parse_ggml_type",
              "unknown type '" + std::string(name) +
                  "' (expected one of f32 f16 bf16 q4_0 q4_1 q5_0 q5_1 q8_0 q8_1 q2_k q3_k q4_k q5_k q6_k q8_k)");
}

}  // namespace wick
