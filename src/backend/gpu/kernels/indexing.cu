// INDEXING family: is_{ids}_{dtype} and isr_{ids}_{dtype} (index_select: one
// thread per item, or a 2-D grid over long rows), gather_{ids}_{dtype},
// scatter_{ids}_{dtype}, scatter_add_{ids}_{dtype}, index_add_{ids}_{dtype};
// ids u8/u32/i32/i64, every value dtype. Tensors are viewed as [left, dim, right]
// blocks (value operands contiguous; index_select's 1-D ids may be strided).
//
// The ids dtype's max value means "skip" (Candle's sentinel): a skipped select or
// gather gives 0, a skipped scatter / add writes nothing. Any other id outside
// [0, dim size) writes nothing out of bounds (it is treated as skipped) and is
// reported through the IndexErrorRecord (first one wins), which the host turns
// into Error(IndexOutOfRange) at the next synchronization.
//
// scatter and index_add give one thread each (left, right) column and walk the
// source rows in order, so duplicate ids resolve exactly as on the CPU (the last
// write wins for scatter; adds happen in id order) without atomics.
#include <limits>

#include "../index_error.h"
#include "common.cuh"

namespace wk {

using ::wick::gpu::IndexErrorRecord;

// The id as a position in [0, size), or -1 for the sentinel and for an id out of
// range (reported).
template <class I>
__device__ __forceinline__ int64_t checked_id(I v, size_t size, IndexErrorRecord* err, uint32_t op,
                                              size_t dim) {
  if (v == std::numeric_limits<I>::max()) return -1;
  const int64_t id = int64_t(v);
  if (id >= 0 && uint64_t(id) < size) return id;
  ::wick::gpu::report_index_error(err, op, id, size, dim);
  return -1;
}

template <class T>
__device__ __forceinline__ T add_elem(T a, T b) {
  if constexpr (is_floating_v<T>) {
    return from_c<T>(to_c(a) + to_c(b));
  } else if constexpr (sizeof(T) == 8) {
    return T(uint64_t(a) + uint64_t(b));
  } else {
    return T(uint32_t(a) + uint32_t(b));
  }
}

// out[li, j, r] = src[li, ids[j * ids_stride], r]; rows of `right` elements move as
// 16-byte vectors when they allow.
template <class I, class T>
__device__ void index_select(size_t left, size_t src_dim, size_t n_ids, size_t right, const I* ids,
                             size_t ids_stride, const T* src, T* out, IndexErrorRecord* err, size_t dim) {
  constexpr int V = int(plan::kVectorBytes / sizeof(T));
  const bool vec = V > 1 && right % V == 0 && aligned16(src) && aligned16(out);
  const size_t w = vec ? right / V : right;  // items per row
  const size_t n = left * n_ids * w;
  const bool small = n <= 0xffffffffull;
  for (size_t k = size_t(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += size_t(gridDim.x) * blockDim.x) {
    size_t row, c, li, j;
    if (small) {  // 32-bit division where it suffices (a 64-bit one costs several times more)
      const uint32_t r32 = uint32_t(k) / uint32_t(w), l32 = r32 / uint32_t(n_ids);
      row = r32, c = k - size_t(r32) * w, li = l32, j = r32 - l32 * uint32_t(n_ids);
    } else {
      row = k / w, c = k - row * w, li = row / n_ids, j = row - li * n_ids;
    }
    const int64_t id = checked_id(ids[j * ids_stride], src_dim, err, ::wick::gpu::kIndexSelect, dim);
    if (vec) {
      Vec<T, V> v;
      if (id >= 0) {
        v = reinterpret_cast<const Vec<T, V>*>(src + (li * src_dim + size_t(id)) * right)[c];
      } else {
#pragma unroll
        for (int q = 0; q < V; ++q) v.v[q] = T{};
      }
      reinterpret_cast<Vec<T, V>*>(out + row * right)[c] = v;
    } else {
      out[row * right + c] = id >= 0 ? src[(li * src_dim + size_t(id)) * right + c] : T{};
    }
  }
}

// Copies w items of row s (null: zeros) to row o: block x of the grid takes a
// stretch of U * blockDim items, U loads in flight per thread.
template <class E>
__device__ __forceinline__ void copy_row(const E* s, E* o, size_t w) {
  constexpr int U = plan::indexing::kRowItemsPerThread;
  const size_t bd = blockDim.x;
  for (size_t c0 = size_t(blockIdx.x) * bd * U + threadIdx.x; c0 < w; c0 += size_t(gridDim.x) * bd * U) {
    E r[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const size_t c = c0 + size_t(u) * bd;
      if (c < w) r[u] = s ? s[c] : E{};
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const size_t c = c0 + size_t(u) * bd;
      if (c < w) o[c] = r[u];
    }
  }
}

// index_select for long rows (the host picks it when a row holds at least a block
// of items): grid y walks the output rows [left * n_ids], each row's id read once
// (the whole block reads the same word), grid x splits the row.
template <class I, class T>
__device__ void index_select_rows(size_t left, size_t src_dim, size_t n_ids, size_t right, const I* ids,
                                  size_t ids_stride, const T* src, T* out, IndexErrorRecord* err,
                                  size_t dim) {
  constexpr int V = int(plan::kVectorBytes / sizeof(T));
  const bool vec = V > 1 && right % V == 0 && aligned16(src) && aligned16(out);
  const size_t rows = left * n_ids;
  for (size_t row = blockIdx.y; row < rows; row += gridDim.y) {
    const size_t li = row / n_ids, j = row - li * n_ids;
    const int64_t id = checked_id(ids[j * ids_stride], src_dim, err, ::wick::gpu::kIndexSelect, dim);
    const T* s = id >= 0 ? src + (li * src_dim + size_t(id)) * right : nullptr;
    T* o = out + row * right;
    if (vec) {
      copy_row(reinterpret_cast<const Vec<T, V>*>(s), reinterpret_cast<Vec<T, V>*>(o), right / V);
    } else {
      copy_row(s, o, right);
    }
  }
}

// out[t] = src[li, ids[t], r] for every t of the (contiguous) ids [left, ids_dim, right].
template <class I, class T>
__device__ void gather(size_t n, size_t src_dim, size_t ids_dim, size_t right, const I* ids, const T* src,
                       T* out, IndexErrorRecord* err, size_t dim) {
  for (size_t t = size_t(blockIdx.x) * blockDim.x + threadIdx.x; t < n; t += size_t(gridDim.x) * blockDim.x) {
    const size_t li = t / (ids_dim * right), r = t % right;
    const int64_t id = checked_id(ids[t], src_dim, err, ::wick::gpu::kGather, dim);
    out[t] = id >= 0 ? src[(li * src_dim + size_t(id)) * right + r] : T{};
  }
}

// dst[li, ids[li, j, r], r] (= | +=) src[li, j, r], j in order.
template <class I, class T, bool Add>
__device__ void scatter(size_t left, size_t dst_dim, size_t src_dim, size_t right, const I* ids, const T* src,
                        T* dst, IndexErrorRecord* err, size_t dim) {
  const size_t n = left * right;
  for (size_t t = size_t(blockIdx.x) * blockDim.x + threadIdx.x; t < n; t += size_t(gridDim.x) * blockDim.x) {
    const size_t li = t / right, r = t - li * right;
    for (size_t j = 0; j < src_dim; ++j) {
      const size_t s = (li * src_dim + j) * right + r;
      const int64_t id =
          checked_id(ids[s], dst_dim, err, Add ? ::wick::gpu::kScatterAdd : ::wick::gpu::kScatter, dim);
      if (id < 0) continue;
      T& d = dst[(li * dst_dim + size_t(id)) * right + r];
      d = Add ? add_elem(d, src[s]) : src[s];
    }
  }
}

// out[li, ids[j], r] += src[li, j, r] (out already holds the input), j in order.
template <class I, class T>
__device__ void index_add(size_t left, size_t dst_dim, size_t n_ids, size_t right, const I* ids, const T* src,
                          T* out, IndexErrorRecord* err, size_t dim) {
  const size_t n = left * right;
  for (size_t t = size_t(blockIdx.x) * blockDim.x + threadIdx.x; t < n; t += size_t(gridDim.x) * blockDim.x) {
    const size_t li = t / right, r = t - li * right;
    for (size_t j = 0; j < n_ids; ++j) {
      const int64_t id = checked_id(ids[j], dst_dim, err, ::wick::gpu::kIndexAdd, dim);
      if (id < 0) continue;
      T& d = out[(li * dst_dim + size_t(id)) * right + r];
      d = add_elem(d, src[(li * n_ids + j) * right + r]);
    }
  }
}

}  // namespace wk

#define INDEXING_OPS(T, SFX, I, ISFX)                                                                     \
  WICK_KERNEL is_##ISFX##_##SFX(size_t left, size_t src_dim, size_t n_ids, size_t right, const I* ids,    \
                                size_t ids_stride, const T* src, T* out, wk::IndexErrorRecord* err,       \
                                size_t dim) {                                                             \
    wk::index_select(left, src_dim, n_ids, right, ids, ids_stride, src, out, err, dim);                   \
  }                                                                                                       \
  WICK_KERNEL isr_##ISFX##_##SFX(size_t left, size_t src_dim, size_t n_ids, size_t right, const I* ids,   \
                                 size_t ids_stride, const T* src, T* out, wk::IndexErrorRecord* err,      \
                                 size_t dim) {                                                            \
    wk::index_select_rows(left, src_dim, n_ids, right, ids, ids_stride, src, out, err, dim);              \
  }                                                                                                       \
  WICK_KERNEL gather_##ISFX##_##SFX(size_t n, size_t src_dim, size_t ids_dim, size_t right, const I* ids, \
                                    const T* src, T* out, wk::IndexErrorRecord* err, size_t dim) {        \
    wk::gather(n, src_dim, ids_dim, right, ids, src, out, err, dim);                                      \
  }                                                                                                       \
  WICK_KERNEL scatter_##ISFX##_##SFX(size_t left, size_t dst_dim, size_t src_dim, size_t right,           \
                                     const I* ids, const T* src, T* dst, wk::IndexErrorRecord* err,       \
                                     size_t dim) {                                                        \
    wk::scatter<I, T, false>(left, dst_dim, src_dim, right, ids, src, dst, err, dim);                     \
  }                                                                                                       \
  WICK_KERNEL scatter_add_##ISFX##_##SFX(size_t left, size_t dst_dim, size_t src_dim, size_t right,       \
                                         const I* ids, const T* src, T* dst, wk::IndexErrorRecord* err,   \
                                         size_t dim) {                                                    \
    wk::scatter<I, T, true>(left, dst_dim, src_dim, right, ids, src, dst, err, dim);                      \
  }                                                                                                       \
  WICK_KERNEL index_add_##ISFX##_##SFX(size_t left, size_t dst_dim, size_t n_ids, size_t right,           \
                                       const I* ids, const T* src, T* out, wk::IndexErrorRecord* err,     \
                                       size_t dim) {                                                      \
    wk::index_add(left, dst_dim, n_ids, right, ids, src, out, err, dim);                                  \
  }

#define INDEXING_IDS(I, ISFX) WK_ALL_DTYPES(INDEXING_OPS, I, ISFX)

INDEXING_IDS(uint8_t, u8)
INDEXING_IDS(uint32_t, u32)
INDEXING_IDS(int32_t, i32)
INDEXING_IDS(int64_t, i64)
