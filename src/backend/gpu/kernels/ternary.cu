// TERNARY family: where_{cond}_{dtype}: out = cond != 0 ? t : f, cond u8/u32/i32/i64.
// info = dims | cond strides | t strides | f strides, or null when all three are
// contiguous.
//
// A 1-byte condition with 2-byte values (f16, bf16) on the contiguous path moves
// 16 lanes per step (one 16-byte condition load, two 16-byte loads per value
// operand), so every access is 16 bytes wide; the generic engine (map_n) would
// size its vectors by the values (8 lanes) and read the condition 8 bytes at a
// time (on the H200 where bf16 ran at 4.24 TB/s this way against 3.37 through the
// generic engine: docs/PERFORMANCE.md).
#include "functors.cuh"

namespace wk {
template <class ID, class T>
struct WhereOnStorage {
  __device__ __forceinline__ T operator()(ID c, T t, T f) const { return ::wick::fn::Where{}(c, t, f); }
};

// Contiguous, 16-byte aligned operands: U steps of 16 lanes per thread and grid
// stride (the host sizes the grid for 32 elements per thread). U = 2 carried the
// fewest registers at the copy rate of the ones measured (1, 2, 4).
// Selection on packed words: the 4 condition bytes of `w` become two masks of two
// 16-bit halves each (0xFFFF where the byte is non-zero), so each 32-bit word of
// values is one (t & m) | (f & ~m).
__device__ __forceinline__ void half_masks(uint32_t w, uint32_t& m0, uint32_t& m1) {
  uint32_t b = w | (w >> 4);  // bit 0 of each byte: OR of that byte's bits
  b |= b >> 2;
  b |= b >> 1;
  b &= 0x01010101u;
  m0 = ((b & 1u) | ((b & 0x100u) << 8)) * 0xFFFFu;
  m1 = (((b >> 16) & 1u) | ((b >> 8) & 0x10000u)) * 0xFFFFu;
}

template <class ID, class T, int U = 2>
__device__ void where_wide(size_t n, const ID* c, const T* t, const T* f, T* out) {
  static_assert(sizeof(ID) == 1 && sizeof(T) == 2, "where_wide: u8 condition, 2-byte values");
  constexpr int L = 16;  // elements per step: one uint4 of conditions, two of each value operand
  static_assert(L * U == int(plan::kVectorBytes / sizeof(T)) * plan::elementwise::kVectorsPerThread,
                "where_wide: the host sizes the grid as for map_n over the values");
  const size_t tid = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t nthreads = size_t(gridDim.x) * blockDim.x;
  const size_t nvec = n / L;
  const uint4* cv = reinterpret_cast<const uint4*>(c);
  const uint4* tv = reinterpret_cast<const uint4*>(t);
  const uint4* fv = reinterpret_cast<const uint4*>(f);
  uint4* ov = reinterpret_cast<uint4*>(out);
  for (size_t v0 = tid; v0 < nvec; v0 += size_t(U) * nthreads) {
    uint4 cc[U], tt[U][2], ff[U][2];
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
        const uint32_t cw[4] = {cc[u].x, cc[u].y, cc[u].z, cc[u].w};
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          uint32_t m[4];
          half_masks(cw[2 * h], m[0], m[1]);
          half_masks(cw[2 * h + 1], m[2], m[3]);
          const uint4 a = tt[u][h], b = ff[u][h];
          ov[2 * v + h] = make_uint4((a.x & m[0]) | (b.x & ~m[0]), (a.y & m[1]) | (b.y & ~m[1]),
                                     (a.z & m[2]) | (b.z & ~m[2]), (a.w & m[3]) | (b.w & ~m[3]));
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

#define WHERE_OP(T, SFX, ID, IDS)                                                                   \
  WICK_KERNEL where_##IDS##_##SFX(size_t numel, size_t num_dims, const size_t* info, const ID* ids, \
                                  const T* t, const T* f, T* out) {                                 \
    wk::where_any(numel, num_dims, info, ids, t, f, out);                                           \
  }
#define WHERE_COND(ID, IDS) WK_ALL_DTYPES(WHERE_OP, ID, IDS)

WHERE_COND(uint8_t, u8)
WHERE_COND(uint32_t, u32)
WHERE_COND(int32_t, i32)
WHERE_COND(int64_t, i64)
