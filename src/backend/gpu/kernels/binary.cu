// BINARY family: b{op}_{dtype} for every op of WICK_BINARY_OPS and the
// comparisons {op}_{dtype} of WICK_CMP_OPS (u8 output), every dtype
// (wick/op_table.h). info = dims | lhs strides | rhs strides, or null when both
// are contiguous; broadcasting arrives as stride 0. Also swiglu_{dtype} (float dtypes).
#include "functors.cuh"
#include "wick/op_table.h"

#define BINARY_OP(T, SFX, OP, NAME)                                                                          \
  WICK_KERNEL b##NAME##_##SFX(size_t numel, size_t num_dims, const size_t* info, const T* lhs, const T* rhs, \
                              T* out) {                                                                      \
    wk::map_n(numel, num_dims, info, out, wk::BinOnStorage<T, ::wick::fn::OP>{}, lhs, rhs);                  \
  }
#define BINARY_ROW(OP, NAME) WK_ALL_DTYPES(BINARY_OP, OP, NAME)
WICK_BINARY_OPS(BINARY_ROW)

#define CMP_OP(T, SFX, OP, NAME)                                                                          \
  WICK_KERNEL NAME##_##SFX(size_t numel, size_t num_dims, const size_t* info, const T* lhs, const T* rhs, \
                           uint8_t* out) {                                                                \
    wk::map_n(numel, num_dims, info, out, wk::CmpOnStorage<T, ::wick::fn::OP>{}, lhs, rhs);               \
  }
#define CMP_ROW(OP, NAME) WK_ALL_DTYPES(CMP_OP, OP, NAME)
WICK_CMP_OPS(CMP_ROW)

// swiglu_{dtype}: silu(gate) * up (nn::swiglu), float dtypes, any layouts (binary's info).
#define SWIGLU_OP(T, SFX, ...)                                                                               \
  WICK_KERNEL swiglu_##SFX(size_t numel, size_t num_dims, const size_t* info, const T* gate, const T* up, \
                           T* out) {                                                                         \
    wk::map_n(numel, num_dims, info, out, wk::BinOnStorage<T, ::wick::fn::SiluMul>{}, gate, up);             \
  }
WK_FLOAT_DTYPES(SWIGLU_OP, )
