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

// The row kernels of one type (quants.cpp, kquants.cpp).
struct RowKernels {
  GgmlType type;
  void (*quantize)(const float*, void*, size_t);
  void (*dequantize)(const void*, float*, size_t);
  quant::VecDotFn vec_dot;  // the scalar reference
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
#define WICK_ROW_KERNELS(type, B, sfx, A, asfx) \
  {GgmlType::type, q_fn<B, quantize_##sfx>, dq_fn<B, dequantize_##sfx>, dot_fn<B, A, vec_dot_##sfx##_##asfx>},
    WICK_CPU_QUANT_TYPES(WICK_ROW_KERNELS)
#undef WICK_ROW_KERNELS
        {GgmlType::BF16, q_bf16, dq_bf16, dot_float<load_bf16, 2>},
}};
static_assert(std::size(kAllGgmlTypes) == kKernels.size(), "one row of kernels per GgmlType");

const RowKernels& kernels(GgmlType t, size_t n, const char* op) {
  check_ggml_row(t, n, op);  // also rejects an unknown type
  for (const auto& k : kKernels)
    if (k.type == t) return k;
  throw_error(ErrorKind::InvalidArgument, op,
              "no row kernels for ggml type id " + std::to_string(uint32_t(t)));
}

}  // namespace

namespace quant {

void quantize_row(GgmlType t, const float* x, void* y, size_t n) {
  const RowKernels& k = kernels(t, n, "quantize");
  const QuantizeFn simd = quantize_simd(t, cpu::isa());
  (simd ? simd : k.quantize)(x, y, n);
}

void dequantize_row(GgmlType t, const void* x, float* y, size_t n) {
  kernels(t, n, "dequantize").dequantize(x, y, n);
}

VecDotFn vec_dot_kernel(GgmlType t, size_t n) {
  const RowKernels& k = kernels(t, n, "vec_dot");
  const VecDotFn simd = vec_dot_simd(t, cpu::isa());
  return simd ? simd : k.vec_dot;
}

void vec_dot_rows(GgmlType t, size_t n, const void* w, const void* acts, size_t n_acts, float* out) {
  vec_dot_kernel(t, n)(n, w, acts, n_acts, out);
}

float vec_dot(GgmlType t, size_t n, const void* w, const void* act) {
  float s;
  vec_dot_rows(t, n, w, act, 1, &s);
  return s;
}

}  // namespace quant
}  // namespace wick
