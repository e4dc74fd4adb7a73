// The op tables of the elementwise and reduction families: one row per op, in
// enum order. What names an op is generated from these rows (the enums and names
// of wick/ops.h, the CPU backend's dispatch, the GPU kernels' instantiations in
// kernels/unary.cu, binary.cu and reduce.cu) or checked against them (the
// float64 references' switches). Adding an op is a row here, its functor in
// src/backend/common/functors.h (named as the enumerator; for a reduction, its
// reducers in src/backend/cpu/reduce.cpp and kernels/reduce.cu) and its reference
// in src/check/elementwise_ref.h (reduce_refs.h); a missing one fails the build.
//
// Preprocessor only (no includes): the host compiler, nvcc and hipcc all read it.
// Each table calls X once per row.
#pragma once

// X(Enumerator, name, dtypes): kernel "u{name}_{dtype}"; dtypes is `floats` (float
// dtypes only) or `all` (exact on integers too). Candle's 19 unary ops plus sigmoid.
#define WICK_UNARY_OPS(X)      \
  X(Exp, exp, floats)          \
  X(Log, log, floats)          \
  X(Sin, sin, floats)          \
  X(Cos, cos, floats)          \
  X(Abs, abs, all)             \
  X(Neg, neg, all)             \
  X(Recip, recip, floats)      \
  X(Sqr, sqr, all)             \
  X(Sqrt, sqrt, floats)        \
  X(Gelu, gelu, floats)        \
  X(GeluErf, gelu_erf, floats) \
  X(Erf, erf, floats)          \
  X(Relu, relu, all)           \
  X(Silu, silu, floats)        \
  X(Tanh, tanh, floats)        \
  X(Floor, floor, all)         \
  X(Ceil, ceil, all)           \
  X(Round, round, all)         \
  X(Sign, sign, all)           \
  X(Sigmoid, sigmoid, floats)

// X(Enumerator, name): kernel "b{name}_{dtype}", every dtype.
#define WICK_BINARY_OPS(X) \
  X(Add, add)              \
  X(Sub, sub)              \
  X(Mul, mul)              \
  X(Div, div)              \
  X(Maximum, maximum)      \
  X(Minimum, minimum)      \
  X(Pow, pow)

// X(Enumerator, name): kernel "{name}_{dtype}", every dtype, u8 (0/1) output.
#define WICK_CMP_OPS(X) \
  X(Eq, eq)             \
  X(Ne, ne)             \
  X(Lt, lt)             \
  X(Le, le)             \
  X(Gt, gt)             \
  X(Ge, ge)

// X(Enumerator, name): kernel "{name}_{dtype}", every dtype; ArgMin/ArgMax output
// u32 (the first index among ties).
#define WICK_REDUCE_OPS(X) \
  X(Sum, sum)              \
  X(Min, min)              \
  X(Max, max)              \
  X(ArgMin, argmin)        \
  X(ArgMax, argmax)
