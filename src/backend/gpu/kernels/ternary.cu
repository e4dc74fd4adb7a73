// TERNARY family: where_{cond}_{dtype}: out = cond != 0 ? t : f, cond u8/u32/i32/i64.
// info = dims | cond strides | t strides | f strides, or null when all three are
// contiguous.
//
// A 1-byte condition with 2-byte values (f16, bf16) on the contiguous path moves
// 16 lanes per step (one 16-byte condition load, two 16-byte loads per value
// operand), so every access is 16 bytes wide; the generic engine (map_n) would
// size its vectors by the values (8 lanes) and read the condition 8 bytes at a
// time. where_v8_u8_{f16,bf16} keep the generic kernel (WICK_WHERE_V8=1, for the
// benchmarks).
#include "functors.cuh"

namespace wk {
template <class ID, class T>
struct WhereOnStorage {
  __device__ __forceinline__ T operator()(ID c, T t, T f) const { return ::wick::fn::Where{}(c, t, f); }
};

// Contiguous, 16-byte aligned operands: U steps of 16 lanes per thread and grid
// stride (the host sizes the grid for 32 elements per thread).
template <class ID, class T>
__device__ void where_wide(size_t n, const ID* c, const T* t, const T* f, T* out) {
  static_assert(sizeof(ID) == 1 && sizeof(T) == 2, "where_wide: u8 condition, 2-byte values");
  constexpr int L = 16, H = 8, U = 2;
  const size_t tid = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t nthreads = size_t(gridDim.x) * blockDim.x;
  const size_t nvec = n / L;
  const Vec<ID, L>* cv = reinterpret_cast<const Vec<ID, L>*>(c);
  const Vec<T, H>* tv = reinterpret_cast<const Vec<T, H>*>(t);
  const Vec<T, H>* fv = reinterpret_cast<const Vec<T, H>*>(f);
  Vec<T, H>* ov = reinterpret_cast<Vec<T, H>*>(out);
  for (size_t v0 = tid; v0 < nvec; v0 += size_t(U) * nthreads) {
    Vec<ID, L> cc[U];
    Vec<T, H> tt[U][2], ff[U][2];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const size_t v = v0 + size_t(u) * nthreads;
      if (v < nvec) {
        cc[u] = cv[v];
        tt[u][0] = tv[2 * v];
        tt[u][1] = tv[2 * v + 1];
        ff[u][0] = fv[2 * v];
        ff[u][1] = fv[2 * v + 1];
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const size_t v = v0 + size_t(u) * nthreads;
      if (v < nvec) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          Vec<T, H> o;
#pragma unroll
          for (int k = 0; k < H; ++k) o.v[k] = cc[u].v[h * H + k] != ID(0) ? tt[u][h].v[k] : ff[u][h].v[k];
          ov[2 * v + h] = o;
        }
      }
    }
  }
  for (size_t i = nvec * L + tid; i < n; i += nthreads) out[i] = c[i] != ID(0) ? t[i] : f[i];
}

template <class ID, class T>
__device__ __forceinline__ void where_any(size_t numel, size_t num_dims, const size_t* info, const ID* ids,
                                          const T* t, const T* f, T* out) {
  if constexpr (sizeof(ID) == 1 && sizeof(T) == 2) {
    if (info == nullptr && aligned16(ids) && aligned16(t) && aligned16(f) && aligned16(out)) {
      where_wide(numel, ids, t, f, out);
      return;
    }
  }
  map_n(numel, num_dims, info, out, WhereOnStorage<ID, T>{}, ids, t, f);
}
}  // namespace wk

#define WHERE_OP(ID, IDS, T, SFX)                                                                   \
  WICK_KERNEL where_##IDS##_##SFX(size_t numel, size_t num_dims, const size_t* info, const ID* ids, \
                                  const T* t, const T* f, T* out) {                                 \
    wk::where_any(numel, num_dims, info, ids, t, f, out);                                           \
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

// The generic engine for u8 / 2-byte values (WICK_WHERE_V8=1).
#define WHERE_V8(T, SFX)                                                                               \
  WICK_KERNEL where_v8_u8_##SFX(size_t numel, size_t num_dims, const size_t* info, const uint8_t* ids, \
                                const T* t, const T* f, T* out) {                                      \
    wk::map_n(numel, num_dims, info, out, wk::WhereOnStorage<uint8_t, T>{}, ids, t, f);                \
  }
WHERE_V8(wk::f16s, f16)
WHERE_V8(wk::bf16s, bf16)
