// AFFINE family: affine_{dtype}(numel, num_dims, info, inp, out, mul, add) with
// the semantics of wick::fn::Affine: floats compute x * mul + add in their compute
// type (float for f16/bf16); integers compute in double and convert like a cast.
// x = inp[strided(i)], or out[i] (in place) when inp is null. mul and add are
// passed as double (Candle passes T; a double keeps integer affine exact).
#include "functors.cuh"

#define AFFINE_OP(T, SFX, ...)                                                                      \
  WICK_KERNEL affine_##SFX(size_t numel, size_t num_dims, const size_t* info, const T* inp, T* out, \
                           double mul, double add) {                                                \
    wk::map_n(numel, num_dims, info, out, wk::OnStorage<T, ::wick::fn::Affine>{{mul, add}},         \
              inp ? inp : out);                                                                     \
  }

WK_ALL_DTYPES(AFFINE_OP, )
