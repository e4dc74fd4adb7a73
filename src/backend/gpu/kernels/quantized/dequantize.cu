// QUANTIZED, module quantized_dequantize: dequantize_{type}_{f32|f16|bf16}(n, src,
// out): n elements of packed rows of ggml type `type` (q4_0 ... q8_K, f32, f16,
// bf16) to floats, equal to the CPU's dequantize_row (then one rounding to f16/bf16).
#include "dequantize.cuh"

#define DEQ_KERNEL(T, TS, Q, QS)                                             \
  WICK_KERNEL dequantize_##QS##_##TS(size_t n, const uint8_t* src, T* out) { \
    if constexpr (wk::q::qplan::dequantize_by16(wk::q::Q)) {                 \
      wk::q::dequantize16<wk::q::Q>(n, src, out);                            \
    } else {                                                                 \
      wk::q::dequantize<wk::q::Q>(n, src, out);                              \
    }                                                                        \
  }
#define DEQ_KERNELS(Q, QS) WICK_Q_DTYPES(DEQ_KERNEL, Q, QS)
WICK_Q_FLOAT_TYPES(DEQ_KERNELS)
WICK_Q_QUANTIZED_TYPES(DEQ_KERNELS)
