// TERNARY family: where_{cond}_{dtype}: out = cond != 0 ? t : f, cond u8/u32/i32/i64.
// info = dims | cond strides | t strides | f strides, or null when all three are
// contiguous.
#include "functors.cuh"

namespace wk {
template <class ID, class T>
struct WhereOnStorage {
  __device__ __forceinline__ T operator()(ID c, T t, T f) const { return ::wick::fn::Where{}(c, t, f); }
};
}  // namespace wk

#define WHERE_OP(ID, IDS, T, SFX)                                                                   \
  WICK_KERNEL where_##IDS##_##SFX(size_t numel, size_t num_dims, const size_t* info, const ID* ids, \
                                  const T* t, const T* f, T* out) {                                 \
    wk::map_n(numel, num_dims, info, out, wk::WhereOnStorage<ID, T>{}, ids, t, f);                  \
  }
#define WHERE_COND(ID, IDS)          \
  WHERE_OP(ID, IDS, uint8_t, u8)     \
  WHERE_OP(ID, IDS, uint32_t, u32)   \
  WHERE_OP(ID, IDS, int32_t, i32)    \
  WHERE_OP(ID, IDS, int64_t, i64)    \
  WHERE_OP(ID, IDS, wk::f16s, f16)   \
  WHERE_OP(ID, IDS, wk::bf16s, bf16) \
  WHERE_OP(ID, IDS, float, f32)      \
  WHERE_OP(ID, IDS, double, f64)

WHERE_COND(uint8_t, u8)
WHERE_COND(uint32_t, u32)
WHERE_COND(int32_t, i32)
WHERE_COND(int64_t, i64)
