// UNARY family: u{op}_{dtype} for every unary op (float dtypes; integer dtypes for
// the ops exact on integers), upowf / uelu (a scalar parameter before the
// pointers, as in Candle; passed as double), usigmoid, ucopy (strided copy) and utranspose (tiled
// copy of a transposed view).
#include "functors.cuh"

namespace wk {

struct Identity {
  template <class T>
  __device__ __forceinline__ T operator()(T x) const {
    return x;
  }
};

// dst[b, r, c] (contiguous [B, R, C]) = src[b*sB + r*sR + c*sC] through a shared
// tile, so that both the reads (along r, unit stride in a transposed view) and the
// writes (along c) are coalesced. Block (kTile, kTileRows); the tile is a shape
// choice, not a wave-size assumption: the code is correct for any wave size.
constexpr int kTile = 32, kTileRows = 8;

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

#define UNARY_OP(NAME, FUNC, T, SFX)                                                                     \
  WICK_KERNEL u##NAME##_##SFX(size_t numel, size_t num_dims, const size_t* info, const T* inp, T* out) { \
    wk::map_n(numel, num_dims, info, out, wk::OnStorage<T, ::wick::fn::FUNC>{}, inp ? inp : out);        \
  }

#define UNARY_FLOAT_ONLY(T, SFX)                                                                        \
  UNARY_OP(exp, Exp, T, SFX)                                                                            \
  UNARY_OP(log, Log, T, SFX)                                                                            \
  UNARY_OP(sin, Sin, T, SFX)                                                                            \
  UNARY_OP(cos, Cos, T, SFX)                                                                            \
  UNARY_OP(recip, Recip, T, SFX)                                                                        \
  UNARY_OP(sqrt, Sqrt, T, SFX)                                                                          \
  UNARY_OP(gelu, Gelu, T, SFX)                                                                          \
  UNARY_OP(gelu_erf, GeluErf, T, SFX)                                                                   \
  UNARY_OP(erf, Erf, T, SFX)                                                                            \
  UNARY_OP(silu, Silu, T, SFX)                                                                          \
  UNARY_OP(tanh, Tanh, T, SFX)                                                                          \
  UNARY_OP(sigmoid, Sigmoid, T, SFX)                                                                    \
  WICK_KERNEL upowf_##SFX(size_t numel, size_t num_dims, const size_t* info, double e, const T* inp,    \
                          T* out) {                                                                     \
    wk::map_n(numel, num_dims, info, out, wk::OnStorage<T, ::wick::fn::Powf>{{e}}, inp ? inp : out);    \
  }                                                                                                     \
  WICK_KERNEL uelu_##SFX(size_t numel, size_t num_dims, const size_t* info, double alpha, const T* inp, \
                         T* out) {                                                                      \
    wk::map_n(numel, num_dims, info, out, wk::OnStorage<T, ::wick::fn::Elu>{{alpha}}, inp ? inp : out); \
  }

#define UNARY_ANY(T, SFX)                                                                            \
  UNARY_OP(abs, Abs, T, SFX)                                                                         \
  UNARY_OP(neg, Neg, T, SFX)                                                                         \
  UNARY_OP(sqr, Sqr, T, SFX)                                                                         \
  UNARY_OP(relu, Relu, T, SFX)                                                                       \
  UNARY_OP(sign, Sign, T, SFX)                                                                       \
  UNARY_OP(floor, Floor, T, SFX)                                                                     \
  UNARY_OP(ceil, Ceil, T, SFX)                                                                       \
  UNARY_OP(round, Round, T, SFX)                                                                     \
  WICK_KERNEL ucopy_##SFX(size_t numel, size_t num_dims, const size_t* info, const T* inp, T* out) { \
    wk::map_n(numel, num_dims, info, out, wk::Identity{}, inp);                                      \
  }                                                                                                  \
  extern "C" __global__ void __launch_bounds__(wk::kTile* wk::kTileRows) utranspose_##SFX(           \
      size_t B, size_t R, size_t C, size_t sB, size_t sR, size_t sC, const T* src, T* dst) {         \
    wk::transpose_copy(B, R, C, sB, sR, sC, src, dst);                                               \
  }

UNARY_FLOAT_ONLY(wk::f16s, f16)
UNARY_FLOAT_ONLY(wk::bf16s, bf16)
UNARY_FLOAT_ONLY(float, f32)
UNARY_FLOAT_ONLY(double, f64)
UNARY_ANY(wk::f16s, f16)
UNARY_ANY(wk::bf16s, bf16)
UNARY_ANY(float, f32)
UNARY_ANY(double, f64)
UNARY_ANY(uint8_t, u8)
UNARY_ANY(uint32_t, u32)
UNARY_ANY(int32_t, i32)
UNARY_ANY(int64_t, i64)
