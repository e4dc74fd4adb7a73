// UNARY family: u{op}_{dtype} for every op of wick/op_table.h (float dtypes;
// integer dtypes too for the ops exact on integers), upowf / uelu (a scalar
// parameter before the pointers, as in Candle; passed as double), ucopy (strided
// copy) and utranspose (tiled copy of a transposed view).
#include "functors.cuh"
#include "wick/op_table.h"

namespace wk {

struct Identity {
  template <class T>
  __device__ __forceinline__ T operator()(T x) const {
    return x;
  }
};

// dst[b, r, c] (contiguous [B, R, C]) = src[b*sB + r*sR + c*sC] through a shared
// tile, so that both the reads (along r, unit stride in a transposed view) and the
// writes (along c) are coalesced. Block (kTile, kTileRows) (launch_plan.h); the
// code is correct for any wave size.
constexpr int kTile = plan::transpose::kTile, kTileRows = plan::transpose::kRows;

template <class T>
__device__ void transpose_copy(size_t B, size_t R, size_t C, size_t sB, size_t sR, size_t sC, const T* src,
                               T* dst) {
  __shared__ T tile[kTile][kTile + 1];
  const size_t r_tiles = (R + kTile - 1) / kTile;
  for (size_t b = blockIdx.z; b < B; b += gridDim.z) {
    for (size_t rt = blockIdx.y; rt < r_tiles; rt += gridDim.y) {
      const size_t r0 = rt * kTile, c0 = size_t(blockIdx.x) * kTile;
      const T* s = src + b * sB;
      for (int j = threadIdx.y; j < kTile; j += kTileRows) {
        const size_t r = r0 + threadIdx.x, c = c0 + j;
        if (r < R && c < C) tile[j][threadIdx.x] = s[r * sR + c * sC];
      }
      __syncthreads();
      T* d = dst + b * R * C;
      for (int j = threadIdx.y; j < kTile; j += kTileRows) {
        const size_t r = r0 + j, c = c0 + threadIdx.x;
        if (r < R && c < C) d[r * C + c] = tile[threadIdx.x][j];
      }
      __syncthreads();
    }
  }
}

}  // namespace wk

// u{name}_{dtype} for every row of WICK_UNARY_OPS, over the dtypes its row names.
#define UNARY_OP(T, SFX, OP, NAME)                                                                       \
  WICK_KERNEL u##NAME##_##SFX(size_t numel, size_t num_dims, const size_t* info, const T* inp, T* out) { \
    wk::map_n(numel, num_dims, info, out, wk::OnStorage<T, ::wick::fn::OP>{}, inp ? inp : out);          \
  }
#define UNARY_DTYPES_floats WK_FLOAT_DTYPES
#define UNARY_DTYPES_all WK_ALL_DTYPES
#define UNARY_ROW(OP, NAME, DTYPES) UNARY_DTYPES_##DTYPES(UNARY_OP, OP, NAME)
WICK_UNARY_OPS(UNARY_ROW)

// upowf / uelu (float dtypes; the scalar parameter before the pointers, as in Candle).
#define UNARY_PARAM_OP(T, SFX, NAME, FUNC, PARAM)                                                            \
  WICK_KERNEL u##NAME##_##SFX(size_t numel, size_t num_dims, const size_t* info, double PARAM, const T* inp, \
                              T* out) {                                                                      \
    wk::map_n(numel, num_dims, info, out, wk::OnStorage<T, ::wick::fn::FUNC>{{PARAM}}, inp ? inp : out);     \
  }
WK_FLOAT_DTYPES(UNARY_PARAM_OP, powf, Powf, e)
WK_FLOAT_DTYPES(UNARY_PARAM_OP, elu, Elu, alpha)

// ucopy (strided copy) and utranspose (tiled copy of a transposed view), every dtype.
#define COPY_OPS(T, SFX, ...)                                                                        \
  WICK_KERNEL ucopy_##SFX(size_t numel, size_t num_dims, const size_t* info, const T* inp, T* out) { \
    wk::map_n(numel, num_dims, info, out, wk::Identity{}, inp);                                      \
  }                                                                                                  \
  extern "C" __global__ void __launch_bounds__(wk::kTile* wk::kTileRows) utranspose_##SFX(           \
      size_t B, size_t R, size_t C, size_t sB, size_t sR, size_t sC, const T* src, T* dst) {         \
    wk::transpose_copy(B, R, C, sB, sR, sC, src, dst);                                               \
  }
WK_ALL_DTYPES(COPY_OPS, )
