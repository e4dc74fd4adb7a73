// The CPU row kernels of every ggml type (quantize / dequantize / vec_dot), and
// the row-level dispatch of wick::quant's functions by type.
#include <array>
#include <cctype>
#include <string>

#include "backend/cpu/quants.h"
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

// The row kernels of one type (quants.cpp, kquants.cpp).
struct RowKernels {
  GgmlType type;
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
const std::array<RowKernels, 15> kKernels = {{
    {GgmlType::F32, q_f32, dq_f32, dot_float<load_f32, 4>},
    {GgmlType::F16, q_f16, dq_f16, dot_float<load_f16, 2>},
    {GgmlType::Q4_0, q_fn<BlockQ4_0, quantize_q4_0>,
     dq_fn<BlockQ4_0, dequantize_q4_0>, dot_fn<BlockQ4_0, BlockQ8_0, vec_dot_q4_0_q8_0>},
    {GgmlType::Q4_1, q_fn<BlockQ4_1, quantize_q4_1>,
     dq_fn<BlockQ4_1, dequantize_q4_1>, dot_fn<BlockQ4_1, BlockQ8_1, vec_dot_q4_1_q8_1>},
    {GgmlType::Q5_0, q_fn<BlockQ5_0, quantize_q5_0>,
     dq_fn<BlockQ5_0, dequantize_q5_0>, dot_fn<BlockQ5_0, BlockQ8_0, vec_dot_q5_0_q8_0>},
    {GgmlType::Q5_1, q_fn<BlockQ5_1, quantize_q5_1>,
     dq_fn<BlockQ5_1, dequantize_q5_1>, dot_fn<BlockQ5_1, BlockQ8_1, vec_dot_q5_1_q8_1>},
    {GgmlType::Q8_0, q_fn<BlockQ8_0, quantize_q8_0>,
     dq_fn<BlockQ8_0, dequantize_q8_0>, dot_fn<BlockQ8_0, BlockQ8_0, vec_dot_q8_0_q8_0>},
    {GgmlType::Q8_1, q_fn<BlockQ8_1, quantize_q8_1>,
     dq_fn<BlockQ8_1, dequantize_q8_1>, dot_fn<BlockQ8_1, BlockQ8_1, vec_dot_q8_1_q8_1>},
    {GgmlType::Q2_K, q_fn<BlockQ2_K, quantize_q2_k>,
     dq_fn<BlockQ2_K, dequantize_q2_k>, dot_fn<BlockQ2_K, BlockQ8_K, vec_dot_q2_k_q8_k>},
    {GgmlType::Q3_K, q_fn<BlockQ3_K, quantize_q3_k>,
     dq_fn<BlockQ3_K, dequantize_q3_k>, dot_fn<BlockQ3_K, BlockQ8_K, vec_dot_q3_k_q8_k>},
    {GgmlType::Q4_K, q_fn<BlockQ4_K, quantize_q4_k>,
     dq_fn<BlockQ4_K, dequantize_q4_k>, dot_fn<BlockQ4_K, BlockQ8_K, vec_dot_q4_k_q8_k>},
    {GgmlType::Q5_K, q_fn<BlockQ5_K, quantize_q5_k>,
     dq_fn<BlockQ5_K, dequantize_q5_k>, dot_fn<BlockQ5_K, BlockQ8_K, vec_dot_q5_k_q8_k>},
    {GgmlType::Q6_K, q_fn<BlockQ6_K, quantize_q6_k>,
     dq_fn<BlockQ6_K, dequantize_q6_k>, dot_fn<BlockQ6_K, BlockQ8_K, vec_dot_q6_k_q8_k>},
    {GgmlType::Q8_K, q_fn<BlockQ8_K, quantize_q8_k>,
     dq_fn<BlockQ8_K, dequantize_q8_k>, dot_fn<BlockQ8_K, BlockQ8_K, vec_dot_q8_k_q8_k>},
    {GgmlType::BF16, q_bf16, dq_bf16, dot_float<load_bf16, 2>},
}};
static_assert(std::size(kAllGgmlTypes) == kKernels.size(), "one row of kernels per GgmlType");

const RowKernels& kernels(GgmlType t, size_t n, const char* op) {
  check_ggml_row(t, n, op);  // also rejects an unknown type
  for (const auto& k : kKernels)
    if (k.type == t) return k;
  throw_error(ErrorKind::InvalidArgument, op, "no row kernels for ggml type id " + std::to_string(uint32_t(t)));
}

}  // namespace

namespace quant {

void quantize_row(GgmlType t, const float* x, void* y, size_t n) {
  kernels(t, n, "quantize").quantize(x, y, n);
}

void dequantize_row(GgmlType t, const void* x, float* y, size_t n) {
  kernels(t, n, "dequantize").dequantize(x, y, n);
}

void vec_dot_rows(GgmlType t, size_t n, const void* w, const void* acts, size_t n_acts, float* out) {
  kernels(t, n, "vec_dot").vec_dot(n, w, acts, n_acts, out);
}

float vec_dot(GgmlType t, size_t n, const void* w, const void* act) {
  float s;
  vec_dot_rows(t, n, w, act, 1, &s);
  return s;
}

}  // namespace quant
}  // namespace wick
