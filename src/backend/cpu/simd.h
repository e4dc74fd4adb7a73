// Vector kernels of the CPU backend on contiguous runs. One source serves every x86
// vector target (Highway: SSE4, AVX2, AVX-512); the best target the running CPU
// supports is chosen at run time (HWY_DYNAMIC_DISPATCH), so one binary runs on every
// x86-64 machine and an AVX-512 path never runs on a CPU without it. Other targets
// (and other architectures) take scalar loops with the same semantics.
//
// - Transcendental functions are SLEEF's vector functions with a 1.0-ulp bound
//   (exp, log, sin, cos, tanh, erf); silu, sigmoid, gelu and gelu_erf are written on
//   them with the formulas of backend/common/functors.h.
// - f32 <-> f16 / bf16 conversions round to nearest even and give exactly the bits of
//   wick/dtype.h's scalar conversions: F16C for f16; bf16 by integer rounding (AVX-512
//   BF16's VCVTNEPS2BF16 flushes f32 subnormals to zero, so it is not used). One
//   difference: F16C widens a signaling f16 NaN to a quiet f32 NaN (same payload).
// - Sums accumulate f16/bf16/f32 in f32, pairwise over blocks (error grows like log n).
// - Min / max propagate NaN; f16 / bf16 widen to f32 exactly, so their extremes are exact.
// - Softmax rows compute in f64 (SLEEF's f64 exp), as precise as the float64 reference.
// - rms_norm / layer_norm rows compute in f64 and round once to the dtype.
#pragma once

#include <cstddef>
#include <cstdint>

#include "wick/dtype.h"
#include "wick/ops.h"

namespace wick::cpu::simd {

// f16 / bf16 bits -> f32 and back (rounded to nearest even), n elements. `half` is
// DType::F16 or DType::BF16.
void widen(DType half, const uint16_t* x, float* y, size_t n);
void narrow(DType half, const float* x, uint16_t* y, size_t n);

// True when unary_run has a vector kernel for op on dtype dt (f32, f16 or bf16).
bool has_unary(UnaryOp op, DType dt);
// y[i] = op(x[i]) over n elements of dtype dt; requires has_unary(op, dt).
void unary_run(UnaryOp op, DType dt, const void* x, void* y, size_t n);

// Sum of n elements of dt (f32, f16 or bf16) accumulated in f32, pairwise.
float sum_run(DType dt, const void* x, size_t n);
// Column sums of `rows` rows of n elements of dt (f32, f16 or bf16), row r at x + r *
// stride elements, added into acc[0, n) in f32: acc[i] += ((x0 + x1) + (x2 + x3)) for
// each four rows in order, then the rows left one at a time.
void sum_rows(DType dt, const void* x, size_t stride, size_t rows, float* acc, size_t n);

// Max (is_max) or min of n > 0 elements of dt (f32, f16 or bf16), exact in f32; NaN
// when any element is NaN.
float extreme_run(DType dt, const void* x, size_t n, bool is_max);
// Index of the first of n elements of dt (f32, f16 or bf16) equal to v, or of the
// first NaN when v is NaN; n when there is none.
size_t find_run(DType dt, const void* x, size_t n, float v);

// Softmax (or log-softmax) of one row of n elements of dt (f32, f16 or bf16), in f64
// as the float64 reference (x - max is exact there; SLEEF's f64 exp), rounded once to
// f32 on store (then to f16/bf16). `scratch` holds softmax_scratch(n) doubles. A NaN
// in the row makes the whole row NaN.
void softmax_row(DType dt, const void* x, void* y, size_t n, bool log, double* scratch);
// Doubles of scratch softmax_row needs for a row of n: n rounded up to whole vectors.
inline size_t softmax_scratch(size_t n) { return (n + 63) / 64 * 64; }

// Rows of rms_norm / layer_norm (f32, f16 or bf16), in f64 as the float64 reference:
// the sum over n elements of (x - center), or of (x - center)^2 when `square`.
double moment_row(DType dt, const void* x, size_t n, double center, bool square);
// y = ((x - center) * mul) * alpha + beta in f64 (alpha, beta: n doubles, or null for
// none), rounded once to dt (f16 / bf16 through f32 rounded to odd: one rounding).
void scale_row(DType dt, const void* x, void* y, size_t n, double center, double mul, const double* alpha,
               const double* beta);
// n elements of elem_bytes (1, 2, 4 or 8) bytes each set to the low bytes of `bits`.
void fill(size_t elem_bytes, uint64_t bits, void* y, size_t n);
// y = a + b in f32, rounded once to dt (add's semantics), n elements.
void add_row(DType dt, const void* a, const void* b, void* y, size_t n);

}  // namespace wick::cpu::simd
