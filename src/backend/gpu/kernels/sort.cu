// SORT family: argsort of the last dim of a contiguous [rows, n] input, output
// u32 indices; stable (ties keep input order), NaN last in both orders, -0.0 equal
// to 0.0: the order of src/backend/cpu/sort.cpp.
//
// Every value maps to an unsigned key (32 bits; 64 for f64/i64) whose integer
// order is the wanted order (descending inverts it; NaN maps to the largest key in
// both orders). Rows are padded to a power of two P with (largest key, index >= n)
// and sorted as (key, index) pairs by a bitonic network, so ties resolve by index:
// exactly the stable order.
//  - argsort_local_{dtype}: sorts chunks of L = min(P, plan::sort::kLocal) pairs
//    in shared memory (dynamic: L * (key + 4) bytes <= 48 KiB). With the input pointer set
//    it builds keys from the values; with the output pointer set (P == L) it
//    writes the indices straight out: a row that fits is sorted in one launch.
//  - longer rows: argsort_init_{dtype} writes keys to scratch, the local kernel
//    sorts chunks, then for each merge size k > L the steps j >= L run as
//    argsort_step_{dtype} launches over global memory and the steps j < L as one
//    local launch; argsort_finish copies the first n indices of each row out.
//  - argsort_reg_{dtype} (32-bit keys, 512 <= P <= 4096): the same network with the
//    pair packed in one u64 (key << 32 | index: integer order = (key, index) order)
//    and each of P/16 threads holding 16 pairs in registers. A thread's 16 pairs
//    differ in four adjacent position bits [g, g+4) (the "layout" g); every step
//    whose partner bit is in the layout is a register compare-exchange, and the
//    block changes layout through shared memory between groups of steps: 22
//    exchanges for P = 4096 instead of 78 shared-memory steps.
#include "common.cuh"

namespace wk {

// 64-bit keys for the 8-byte dtypes (f64, i64), 32-bit keys for the rest.
template <class T>
using key_t = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;

template <class T>
__device__ __forceinline__ key_t<T> sort_key(T x, bool asc) {
  using K = key_t<T>;
  constexpr K kSign = K(1) << (sizeof(K) * 8 - 1);
  K k;
  if constexpr (!is_floating_v<T>) {
    if constexpr (is_signed_v<T>) {
      k = K(x) ^ (K(1) << (sizeof(T) * 8 - 1));
      if constexpr (sizeof(T) < sizeof(K)) k &= (K(1) << (sizeof(T) * 8)) - 1;
    } else {
      k = K(x);
    }
  } else if constexpr (sizeof(K) == 8) {
    double f = to_c(x);
    if (f != f) return ~K(0);
    if (f == 0.0) f = 0.0;
    const K bits = K(__double_as_longlong(f));
    k = (bits & kSign) ? ~bits : bits | kSign;
  } else {
    float f = to_c(x);
    if (f != f) return ~K(0);
    if (f == 0.0f) f = 0.0f;
    const K bits = __float_as_uint(f);
    k = (bits & kSign) ? ~bits : bits | kSign;
  }
  return asc ? k : ~k;
}

template <class K>
__device__ __forceinline__ bool pair_less(K ka, uint32_t ia, K kb, uint32_t ib) {
  return ka < kb || (ka == kb && ia < ib);
}

// One compare-exchange of the bitonic network at (global in-row) position i with
// partner i + j for merge size k.
template <class K>
__device__ __forceinline__ void cmp_swap(K* keys, uint32_t* idx, size_t a, size_t b, bool up) {
  const K ka = keys[a], kb = keys[b];
  const uint32_t ia = idx[a], ib = idx[b];
  if (pair_less(kb, ib, ka, ia) == up) {
    keys[a] = kb;
    keys[b] = ka;
    idx[a] = ib;
    idx[b] = ia;
  }
}

// Block per chunk of L pairs (chunk c of row r covers in-row positions [c*L, c*L+L)).
// Runs merge sizes k = k_start, 2*k_start, ..., k_end; for each, steps j from
// min(k, L)/2 down to 1.
template <class T>
__device__ void argsort_local(size_t rows, size_t n, size_t P, size_t L, size_t k_start, size_t k_end,
                              bool asc, const T* x, key_t<T>* g_keys, uint32_t* g_idx, uint32_t* out) {
  using K = key_t<T>;
  extern __shared__ uint4 smem[];
  K* keys = reinterpret_cast<K*>(smem);
  uint32_t* idx = reinterpret_cast<uint32_t*>(keys + L);
  const size_t chunks = P / L;
  for (size_t blk = blockIdx.x; blk < rows * chunks; blk += gridDim.x) {
    const size_t r = blk / chunks, base = (blk - r * chunks) * L;
    for (size_t i = threadIdx.x; i < L; i += blockDim.x) {
      const size_t gi = base + i;
      if (x) {
        keys[i] = gi < n ? sort_key(x[r * n + gi], asc) : ~K(0);
        idx[i] = uint32_t(gi);
      } else {
        keys[i] = g_keys[r * P + gi];
        idx[i] = g_idx[r * P + gi];
      }
    }
    __syncthreads();
    for (size_t k = k_start; k <= k_end; k <<= 1) {
      for (size_t j = (k < L ? k : L) / 2; j > 0; j >>= 1) {
        for (size_t t = threadIdx.x; t < L / 2; t += blockDim.x) {
          const size_t a = (t / j) * 2 * j + (t % j);
          cmp_swap(keys, idx, a, a + j, ((base + a) & k) == 0);
        }
        __syncthreads();
      }
    }
    for (size_t i = threadIdx.x; i < L; i += blockDim.x) {
      const size_t gi = base + i;
      if (out) {
        if (gi < n) out[r * n + gi] = idx[i];
      } else {
        g_keys[r * P + gi] = keys[i];
        g_idx[r * P + gi] = idx[i];
      }
    }
    __syncthreads();
  }
}

template <class T>
__device__ void argsort_init(size_t rows, size_t n, size_t P, bool asc, const T* x, key_t<T>* keys,
                             uint32_t* idx) {
  const size_t total = rows * P;
  for (size_t t = size_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total;
       t += size_t(gridDim.x) * blockDim.x) {
    const size_t r = t / P, i = t - r * P;
    keys[t] = i < n ? sort_key(x[r * n + i], asc) : ~key_t<T>(0);
    idx[t] = uint32_t(i);
  }
}

template <class K>
__device__ void argsort_step(size_t rows, size_t P, size_t k, size_t j, K* keys, uint32_t* idx) {
  const size_t half = P / 2, total = rows * half;
  for (size_t t = size_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total;
       t += size_t(gridDim.x) * blockDim.x) {
    const size_t r = t / half, u = t - r * half;
    const size_t a = (u / j) * 2 * j + (u % j);
    cmp_swap(keys + r * P, idx + r * P, a, a + j, (a & k) == 0);
  }
}

// ---- argsort_reg: rows of P = 2^log_p packed pairs, 16 per thread -------------------
constexpr uint32_t kRegItems = plan::sort::kRegItems;  // pairs per thread
static_assert(plan::sort::kRegBits == 4, "reg_pos, reg_slot and reg_steps are written for 4 position bits");

// In-row position of register i of thread t in layout g (bits [g, g+4) from i).
__device__ __forceinline__ uint32_t reg_pos(uint32_t t, uint32_t i, uint32_t g) {
  return (t & ((1u << g) - 1u)) | (i << g) | ((t >> g) << (g + 4));
}
// Shared-memory slot of a position: one pad slot per 16 keeps the lanes of every
// layout on distinct banks.
__device__ __forceinline__ uint32_t reg_slot(uint32_t pos) { return pos + (pos >> 4); }

// Moves the block's pairs from layout `from` to layout `to` through shared memory.
__device__ __forceinline__ void reg_exchange(uint64_t (&v)[kRegItems], uint64_t* sh, uint32_t from,
                                             uint32_t to) {
  const uint32_t t = threadIdx.x;
#pragma unroll
  for (uint32_t i = 0; i < kRegItems; ++i) sh[reg_slot(reg_pos(t, i, from))] = v[i];
  __syncthreads();
#pragma unroll
  for (uint32_t i = 0; i < kRegItems; ++i) v[i] = sh[reg_slot(reg_pos(t, i, to))];
  __syncthreads();
}

// One bitonic step of merge size 2^m whose partner bit is g + S (register bit S).
template <uint32_t S>
__device__ __forceinline__ void reg_step(uint64_t (&v)[kRegItems], uint32_t m, uint32_t g) {
  const uint32_t base = reg_pos(threadIdx.x, 0, g);
#pragma unroll
  for (uint32_t i = 0; i < kRegItems; ++i) {
    if (i & (1u << S)) continue;
    const uint32_t j = i | (1u << S);
    const bool up = (((base | (i << g)) >> m) & 1u) == 0;
    const uint64_t a = v[i], b = v[j];
    const bool swap = (b < a) == up;
    v[i] = swap ? b : a;
    v[j] = swap ? a : b;
  }
}

// The steps of merge 2^m with partner bits h down to g (all inside layout g).
__device__ __forceinline__ void reg_steps(uint64_t (&v)[kRegItems], uint32_t m, uint32_t g, uint32_t h) {
  if (g + 3 <= h) reg_step<3>(v, m, g);
  if (g + 2 <= h) reg_step<2>(v, m, g);
  if (g + 1 <= h) reg_step<1>(v, m, g);
  reg_step<0>(v, m, g);
}

template <class T>
__device__ void argsort_reg(size_t rows, size_t n, uint32_t log_p, bool asc, const T* x, uint32_t* out) {
  extern __shared__ uint64_t sh_pairs[];  // P + P/16 slots
  const uint32_t t = threadIdx.x, top = log_p - 4;
  uint64_t v[kRegItems];
  for (size_t r = blockIdx.x; r < rows; r += gridDim.x) {
    // Layout `top`: register i of thread t is position t + i * P/16 (coalesced).
#pragma unroll
    for (uint32_t i = 0; i < kRegItems; ++i) {
      const uint32_t pos = reg_pos(t, i, top);
      const uint32_t key = pos < n ? sort_key(x[r * n + pos], asc) : ~0u;
      v[i] = (uint64_t(key) << 32) | pos;
    }
    reg_exchange(v, sh_pairs, top, 0);
    for (uint32_t m = 1; m <= 4; ++m) reg_steps(v, m, 0, m - 1);  // sorted runs of 16
    uint32_t cur = 0;
    for (uint32_t m = 5; m <= log_p; ++m) {
      for (uint32_t h = m - 1; h >= 4;) {  // partner bits h .. 4, four at a time
        const uint32_t g = h >= 7 ? h - 3 : 4;
        reg_exchange(v, sh_pairs, cur, g);
        cur = g;
        reg_steps(v, m, g, h);
        h = g - 1;
      }
      reg_exchange(v, sh_pairs, cur, 0);
      cur = 0;
      reg_steps(v, m, 0, 3);
    }
    reg_exchange(v, sh_pairs, 0, top);
#pragma unroll
    for (uint32_t i = 0; i < kRegItems; ++i) {
      const uint32_t pos = reg_pos(t, i, top);
      if (pos < n) out[r * n + pos] = uint32_t(v[i]);
    }
  }
}

}  // namespace wk

WICK_KERNEL argsort_finish(size_t rows, size_t n, size_t P, const uint32_t* idx, uint32_t* out) {
  const size_t total = rows * n;
  for (size_t t = size_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total;
       t += size_t(gridDim.x) * blockDim.x) {
    const size_t r = t / n, i = t - r * n;
    out[t] = idx[r * P + i];
  }
}
WICK_KERNEL argsort_step_k32(size_t rows, size_t P, size_t k, size_t j, uint32_t* keys, uint32_t* idx) {
  wk::argsort_step(rows, P, k, j, keys, idx);
}
WICK_KERNEL argsort_step_k64(size_t rows, size_t P, size_t k, size_t j, uint64_t* keys, uint32_t* idx) {
  wk::argsort_step(rows, P, k, j, keys, idx);
}

#define SORT_OPS(T, SFX, ...)                                                                              \
  WICK_KERNEL argsort_local_##SFX(size_t rows, size_t n, size_t P, size_t L, size_t k_start, size_t k_end, \
                                  size_t asc, const T* x, wk::key_t<T>* keys, uint32_t* idx,               \
                                  uint32_t* out) {                                                         \
    wk::argsort_local<T>(rows, n, P, L, k_start, k_end, asc != 0, x, keys, idx, out);                      \
  }                                                                                                        \
  WICK_KERNEL argsort_init_##SFX(size_t rows, size_t n, size_t P, size_t asc, const T* x,                  \
                                 wk::key_t<T>* keys, uint32_t* idx) {                                      \
    wk::argsort_init<T>(rows, n, P, asc != 0, x, keys, idx);                                               \
  }
#define SORT_REG_OPS(T, SFX)                                                                 \
  WICK_KERNEL argsort_reg_##SFX(size_t rows, size_t n, size_t log_p, size_t asc, const T* x, \
                                uint32_t* out) {                                             \
    wk::argsort_reg<T>(rows, n, uint32_t(log_p), asc != 0, x, out);                          \
  }

WK_ALL_DTYPES(SORT_OPS, )
// argsort_reg: the dtypes with 32-bit keys.
SORT_REG_OPS(uint8_t, u8)
SORT_REG_OPS(uint32_t, u32)
SORT_REG_OPS(int32_t, i32)
SORT_REG_OPS(wk::f16s, f16)
SORT_REG_OPS(wk::bf16s, bf16)
SORT_REG_OPS(float, f32)
