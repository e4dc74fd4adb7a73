// Op enumerations and parameter structs shared by the front end and every
// backend. Adding an op to a family adds a row to its table in wick/op_table.h
// (which generates the enum and the names here), never a backend method.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "wick/op_table.h"

namespace wick {

// The enums and names below are generated from the rows of wick/op_table.h.
#define WICK_OP_ENUMERATOR(op, ...) op,
#define WICK_OP_NAME(op, name, ...) #name,
#define WICK_OP_COUNT(...) +1

// Kernel name "u{name}_{dtype}".
enum class UnaryOp : uint8_t { WICK_UNARY_OPS(WICK_OP_ENUMERATOR) };
inline constexpr size_t kNumUnaryOps = 0 WICK_UNARY_OPS(WICK_OP_COUNT);
inline constexpr std::array<std::string_view, kNumUnaryOps> kUnaryOpNames = {WICK_UNARY_OPS(WICK_OP_NAME)};
inline constexpr std::string_view unary_op_name(UnaryOp op) { return kUnaryOpNames[size_t(op)]; }
// Ops defined for integer dtypes too (the rows marked `all`: exact on integers).
constexpr bool unary_op_allows_int(UnaryOp op) {
#define WICK_OP_ALLOWS_INT_floats false
#define WICK_OP_ALLOWS_INT_all true
#define WICK_OP_ALLOWS_INT(op, name, dtypes) WICK_OP_ALLOWS_INT_##dtypes,
  constexpr bool kAllowsInt[] = {WICK_UNARY_OPS(WICK_OP_ALLOWS_INT)};
#undef WICK_OP_ALLOWS_INT
#undef WICK_OP_ALLOWS_INT_all
#undef WICK_OP_ALLOWS_INT_floats
  return kAllowsInt[size_t(op)];
}

// Kernel name "b{name}_{dtype}".
enum class BinaryOp : uint8_t { WICK_BINARY_OPS(WICK_OP_ENUMERATOR) };
inline constexpr size_t kNumBinaryOps = 0 WICK_BINARY_OPS(WICK_OP_COUNT);
inline constexpr std::array<std::string_view, kNumBinaryOps> kBinaryOpNames = {WICK_BINARY_OPS(WICK_OP_NAME)};
inline constexpr std::string_view binary_op_name(BinaryOp op) { return kBinaryOpNames[size_t(op)]; }

// Output u8 (0/1). Kernel name "{name}_{dtype}".
enum class CmpOp : uint8_t { WICK_CMP_OPS(WICK_OP_ENUMERATOR) };
inline constexpr size_t kNumCmpOps = 0 WICK_CMP_OPS(WICK_OP_COUNT);
inline constexpr std::array<std::string_view, kNumCmpOps> kCmpOpNames = {WICK_CMP_OPS(WICK_OP_NAME)};
inline constexpr std::string_view cmp_op_name(CmpOp op) { return kCmpOpNames[size_t(op)]; }

// ArgMin/ArgMax return u32 (first index among ties).
enum class ReduceOp : uint8_t { WICK_REDUCE_OPS(WICK_OP_ENUMERATOR) };
inline constexpr size_t kNumReduceOps = 0 WICK_REDUCE_OPS(WICK_OP_COUNT);
inline constexpr std::array<std::string_view, kNumReduceOps> kReduceOpNames = {WICK_REDUCE_OPS(WICK_OP_NAME)};
inline constexpr std::string_view reduce_op_name(ReduceOp op) { return kReduceOpNames[size_t(op)]; }

#undef WICK_OP_COUNT
#undef WICK_OP_NAME
#undef WICK_OP_ENUMERATOR

enum class PoolOp : uint8_t { Avg, Max };

// scatter: dst[.., ids[p], ..] = src[p] (Set) or += src[p] (Add).
enum class ScatterMode : uint8_t { Set, Add };

// rope: half-split pairs (i, i+D/2) on (B,H,T,D); rope_i: interleaved pairs on (B,H,T,D);
// rope_thd: half-split pairs on (B,T,H,D).
enum class RopeKind : uint8_t { HalfSplit, Interleaved, Thd };

// Batched GEMM geometry: lhs (b, m, k) x rhs (b, k, n) -> (b, m, n).
struct MatmulDims {
  size_t b = 1, m = 0, n = 0, k = 0;
};

// Input (B, C_in, L); kernel (C_out, C_in/groups, K).
struct Conv1dParams {
  size_t b_size = 0, l_in = 0, c_out = 0, c_in = 0, k_size = 0;
  size_t padding = 0, stride = 1, dilation = 1, groups = 1;
  size_t l_out() const { return (l_in + 2 * padding - dilation * (k_size - 1) - 1) / stride + 1; }
};

// Input (B, C_in, L); kernel (C_in, C_out, K).
struct ConvTranspose1dParams {
  size_t b_size = 0, l_in = 0, c_out = 0, c_in = 0, k_size = 0;
  size_t padding = 0, output_padding = 0, stride = 1, dilation = 1;
  size_t l_out() const {
    return (l_in - 1) * stride - 2 * padding + dilation * (k_size - 1) + output_padding + 1;
  }
};

// Input (B, C_in, H, W); kernel (C_out, C_in/groups, KH, KW).
struct Conv2dParams {
  size_t b_size = 0, i_h = 0, i_w = 0, k_h = 0, k_w = 0, c_out = 0, c_in = 0;
  size_t padding = 0, stride = 1, dilation = 1, groups = 1;
  size_t out_h() const { return (i_h + 2 * padding - dilation * (k_h - 1) - 1) / stride + 1; }
  size_t out_w() const { return (i_w + 2 * padding - dilation * (k_w - 1) - 1) / stride + 1; }
};

// Input (B, C_in, H, W); kernel (C_in, C_out, KH, KW).
struct ConvTranspose2dParams {
  size_t b_size = 0, i_h = 0, i_w = 0, k_h = 0, k_w = 0, c_out = 0, c_in = 0;
  size_t padding = 0, output_padding = 0, stride = 1, dilation = 1;
  size_t out_h() const {
    return (i_h - 1) * stride + dilation * (k_h - 1) + output_padding + 1 - 2 * padding;
  }
  size_t out_w() const {
    return (i_w - 1) * stride + dilation * (k_w - 1) + output_padding + 1 - 2 * padding;
  }
};

// PyTorch-compatible bilinear upsampling (NCHW).
struct BilinearParams {
  size_t out_h = 0, out_w = 0;
  bool align_corners = false;
  std::optional<double> scale_h, scale_w;
};

}  // namespace wick
