// NN family (fused ops, kept apart from REDUCE): softmax_{dtype},
// log_softmax_{dtype}, rms_norm_{dtype}, add_rms_norm_{dtype}, layer_norm_{dtype} (one block per row
// of a contiguous [rows, cols] input) and rope_{dtype} / rope_i_{dtype} /
// rope_thd_{dtype} (one thread per rotated pair). Float dtypes only.
//
// Row ops read a row once: while cols <= kCache * blockDim.x (the host sizes the
// block so that this holds up to 16384 columns) the row stays in registers
// between its reduction and its output pass; longer rows are read again from
// global memory for every pass (softmax: one online max/sum pass, then the
// output pass; layer_norm caches only rows it reads in 16-byte vectors). (Kernels
// without the register cache, with few registers and several blocks per SM, ran
// slower on the H200: docs/PERFORMANCE.md.) layer_norm combines each thread's
// (count, mean, squared deviations) in one block reduction.
// f16/bf16/f32 compute in f32, f64 in f64, with
// the formulas of src/backend/cpu/nn.cpp. rope computes in f64 for every dtype
// (as the CPU does), so its results match the CPU's bit for bit.
#include "nn_rows.cuh"

// The cached softmax and layer_norm kernels ask for MINB resident blocks of 512 threads per
// multiprocessor (at most 64 registers per thread for MINB 2): at one block per
// SM (126 registers before) the SM issues no loads while its block reduces.
#define WICK_NN_KERNEL(MINB) extern "C" __global__ void __launch_bounds__(WICK_MAX_BLOCK, MINB)
#define NN_OPS(T, SFX, MINB)                                                                            \
  WICK_NN_KERNEL(MINB) softmax_##SFX(size_t rows, size_t n, const T* x, T* y) {                         \
    wk::softmax_rows<T>(rows, n, x, y, false);                                                          \
  }                                                                                                     \
  WICK_NN_KERNEL(MINB) log_softmax_##SFX(size_t rows, size_t n, const T* x, T* y) {                     \
    wk::softmax_rows<T>(rows, n, x, y, true);                                                           \
  }                                                                                                     \
  WICK_KERNEL rms_norm_##SFX(size_t rows, size_t n, const T* x, const T* alpha, T* y, float eps) {      \
    wk::rms_norm_rows<T>(rows, n, x, alpha, y, eps);                                                    \
  }                                                                                                     \
  WICK_KERNEL add_rms_norm_##SFX(size_t rows, size_t n, const T* x, const T* r, const T* alpha, T* sum, T* y, \
                                 float eps) {                                                                  \
    wk::add_rms_norm_rows<T>(rows, n, x, r, alpha, sum, y, eps);                                                \
  }                                                                                                            \
  WICK_NN_KERNEL(MINB)                                                                                  \
  layer_norm_##SFX(size_t rows, size_t n, const T* x, const T* alpha, const T* beta, T* y, float eps) { \
    wk::layer_norm_rows(rows, n, x, alpha, beta, y, eps);                                               \
  }                                                                                                     \
  WICK_KERNEL rope_##SFX(size_t kind, size_t n, size_t h, size_t t, size_t d, size_t bs, const T* x,    \
                         const T* cos, const T* sin, T* y) {                                            \
    wk::rope(int(kind), n, h, t, d, bs, x, cos, sin, y);                                                \
  }

NN_OPS(wk::f16s, f16, 2)
NN_OPS(wk::bf16s, bf16, 2)
NN_OPS(float, f32, 2)
NN_OPS(double, f64, 1)
