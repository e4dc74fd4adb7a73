// The REDUCE family as block-level device functions (grid-stride over outputs):
// the reducers RSum / RMin / RMax / RArgMin / RArgMax, reduce_rows and cumsum,
// instantiated by kernels/reduce.cu and run for small eager ops by
// kernels/batch.cu. See kernels/reduce.cu for their semantics and ABI.
#pragma once

#include <limits>

#include "wave.cuh"
#include "wick/op_table.h"

namespace wk {

template <class T>
struct SumAccOf {
  using type = compute_t<T>;
};
template <>
struct SumAccOf<uint8_t> {
  using type = uint8_t;
};
template <>
struct SumAccOf<uint32_t> {
  using type = uint32_t;
};
template <>
struct SumAccOf<int32_t> {
  using type = uint32_t;
};
template <>
struct SumAccOf<int64_t> {
  using type = uint64_t;
};

template <class T>
struct RSum {
  using A = typename SumAccOf<T>::type;
  using Out = T;
  struct S {
    A s;
  };
  __device__ __forceinline__ S init() const { return S{A(0)}; }
  __device__ __forceinline__ S load(T x, uint32_t) const { return S{A(to_c(x))}; }
  __device__ __forceinline__ S operator()(S a, S b) const { return S{A(a.s + b.s)}; }
  __device__ __forceinline__ Out finish(S a) const { return from_c<T>(compute_t<T>(a.s)); }
  // Lane scan (see scan_vec): a running sum.
  using L = S;
  __device__ __forceinline__ L lane_init() const { return init(); }
  __device__ __forceinline__ void step(L& l, uint32_t&, T x, uint32_t) const { l.s = A(l.s + A(to_c(x))); }
  __device__ __forceinline__ S lane_state(const L& l, uint32_t, const T*, size_t, int, int, int) const {
    return l;
  }
};

template <class C>
__device__ __forceinline__ C extreme_identity(bool is_max) {
  if constexpr (is_floating_v<C>) {
    return is_max ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity();
  } else {
    return is_max ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max();
  }
}

// NaN for a float compute type (integers never carry the lane scans' NaN flag).
template <class C>
__device__ __forceinline__ C quiet_nan_c() {
  if constexpr (is_floating_v<C>) {
    return std::numeric_limits<C>::quiet_NaN();
  } else {
    return C(0);
  }
}

// max / min that ignore NaN (the lane scans keep a NaN flag beside them); on
// floats one instruction.
template <bool IsMax, class C>
__device__ __forceinline__ C better_of(C a, C b) {
  if constexpr (std::is_same<C, float>::value) {
    return IsMax ? fmaxf(a, b) : fminf(a, b);
  } else if constexpr (std::is_same<C, double>::value) {
    return IsMax ? fmax(a, b) : fmin(a, b);
  } else {
    return (IsMax ? b > a : b < a) ? b : a;
  }
}

template <class T, bool IsMax>
struct RExt {
  using C = compute_t<T>;
  using Out = T;
  struct S {
    C m;
  };
  __device__ __forceinline__ S init() const { return S{extreme_identity<C>(IsMax)}; }
  __device__ __forceinline__ S load(T x, uint32_t) const { return S{to_c(x)}; }
  // NaN wins; otherwise the better value.
  __device__ __forceinline__ S operator()(S a, S b) const {
    if (is_nan_c(a.m)) return a;
    if (is_nan_c(b.m)) return b;
    return (IsMax ? b.m > a.m : b.m < a.m) ? b : a;
  }
  __device__ __forceinline__ Out finish(S a) const { return from_c<T>(a.m); }
  // Lane scan: the NaN-ignoring extreme; `nan` (shared by the lanes) is set by a NaN.
  using L = S;
  __device__ __forceinline__ L lane_init() const { return init(); }
  __device__ __forceinline__ void step(L& l, uint32_t& nan, T x, uint32_t) const {
    const C v = to_c(x);
    nan |= uint32_t(is_nan_c(v));
    l.m = better_of<IsMax>(l.m, v);
  }
  __device__ __forceinline__ S lane_state(const L& l, uint32_t nan, const T*, size_t, int, int, int) const {
    return S{nan ? quiet_nan_c<C>() : l.m};
  }
};

template <class T, bool IsMax>
struct RArg {
  using C = compute_t<T>;
  using Out = uint32_t;
  static constexpr uint32_t kEmpty = 0xffffffffu;
  struct S {
    C m;
    uint32_t idx;
  };
  __device__ __forceinline__ S init() const { return S{extreme_identity<C>(IsMax), kEmpty}; }
  __device__ __forceinline__ S load(T x, uint32_t i) const { return S{to_c(x), i}; }
  // The first NaN, else the better value, ties to the lower index: associative and
  // commutative, so any combination order gives the CPU's sequential answer.
  __device__ __forceinline__ S operator()(S a, S b) const {
    if (a.idx == kEmpty) return b;
    if (b.idx == kEmpty) return a;
    const bool an = is_nan_c(a.m), bn = is_nan_c(b.m);
    if (an || bn) {
      if (an && bn) return a.idx < b.idx ? a : b;
      return an ? a : b;
    }
    if (IsMax ? b.m > a.m : b.m < a.m) return b;
    if (IsMax ? a.m > b.m : a.m < b.m) return a;
    return a.idx < b.idx ? a : b;
  }
  __device__ __forceinline__ Out finish(S a) const { return a.idx == kEmpty ? 0u : a.idx; }
  // Lane scan over increasing indices: a strictly better value moves the index
  // (so ties keep the first); `nan` (shared by the lanes) is set by a NaN. A lane
  // of only the identity value (-inf for argmax) keeps its first index; when the
  // thread saw a NaN, each lane is read again for its first NaN (rare).
  using L = S;
  __device__ __forceinline__ L lane_init() const { return init(); }
  __device__ __forceinline__ void step(L& l, uint32_t& nan, T x, uint32_t i) const {
    const C v = to_c(x);
    nan |= uint32_t(is_nan_c(v));
    const bool b = IsMax ? v > l.m : v < l.m;
    l.m = b ? v : l.m;
    l.idx = b ? i : l.idx;
  }
  // Lane j of thread `lane` saw elements (v * V + j) for v = lane, lane + tpr, ... < nv.
  __device__ S lane_state(const L& l, uint32_t nan, const T* p, size_t nv, int lane, int tpr, int j) const {
    constexpr int V = int(plan::kVectorBytes / sizeof(T));
    if (size_t(lane) >= nv) return init();
    if (nan) {
      for (size_t v = size_t(lane); v < nv; v += size_t(tpr)) {
        const uint32_t i = uint32_t(v * V + size_t(j));
        if (is_nan_c(to_c(p[i]))) return S{quiet_nan_c<C>(), i};
      }
    }
    return S{l.m, l.idx == kEmpty ? uint32_t(size_t(lane) * V + size_t(j)) : l.idx};
  }
};

// A contiguous row part read as 16-byte vectors: thread `lane` takes vectors lane,
// lane + tpr, ...; lane j of those vectors is its own sequential scan (V
// independent chains, indices increasing along each, a cheap update per
// element); U vectors are loaded before any is used; the V chains become one
// state at the end.
template <class R, class T>
__device__ __forceinline__ typename R::S scan_vec(const R& r, const T* p, size_t nv, int lane, int tpr) {
  constexpr int V = int(plan::kVectorBytes / sizeof(T));
  constexpr int U = 4;
  using L = typename R::L;
  const Vec<T, V>* pv = reinterpret_cast<const Vec<T, V>*>(p);
  L ln[V];
  uint32_t nan = 0;
#pragma unroll
  for (int j = 0; j < V; ++j) ln[j] = r.lane_init();
  const size_t step = size_t(tpr);
  size_t v = size_t(lane);
  for (; v + (U - 1) * step < nv; v += U * step) {
    Vec<T, V> w[U];
#pragma unroll
    for (int u = 0; u < U; ++u) w[u] = pv[v + size_t(u) * step];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const uint32_t i0 = uint32_t((v + size_t(u) * step) * V);
#pragma unroll
      for (int j = 0; j < V; ++j) r.step(ln[j], nan, w[u].v[j], i0 + uint32_t(j));
    }
  }
  for (; v < nv; v += step) {
    const Vec<T, V> w = pv[v];
    const uint32_t i0 = uint32_t(v * V);
#pragma unroll
    for (int j = 0; j < V; ++j) r.step(ln[j], nan, w.v[j], i0 + uint32_t(j));
  }
  typename R::S st = r.lane_state(ln[0], nan, p, nv, lane, tpr, 0);
#pragma unroll
  for (int j = 1; j < V; ++j) st = r(st, r.lane_state(ln[j], nan, p, nv, lane, tpr, j));
  return st;
}

template <class R, class T>
__device__ void reduce_rows(size_t n_out, size_t e, int nk, int nr, const size_t* info, const T* x,
                            typename R::Out* out, int tpr) {
  const R r{};
  using S = typename R::S;
  const size_t *kd = info, *ks = info + nk, *rd = info + 2 * nk, *rs = info + 2 * nk + nr;
  const bool contig = nr == 1 && rs[0] == 1;
  constexpr int V = int(plan::kVectorBytes / sizeof(T));
  const int rpb = int(blockDim.x) / tpr;  // outputs per block
  const int g = int(threadIdx.x) / tpr, lane = int(threadIdx.x) % tpr;
  // The loop is uniform across the block (group reductions need every lane).
  for (size_t base = size_t(blockIdx.x) * rpb; base < n_out; base += size_t(gridDim.x) * rpb) {
    const size_t row = base + g;
    const bool active = row < n_out;
    S st = r.init();
    if (active) {
      const T* p = x + (nk ? strided_offset<size_t>(row, nk, kd, ks) : 0);
      if (contig) {
        if (V > 1 && e % V == 0 && aligned16(p)) {
          st = scan_vec(r, p, e / V, lane, tpr);
        } else {
#pragma unroll 4
          for (size_t i = lane; i < e; i += tpr) st = r(st, r.load(p[i], uint32_t(i)));
        }
      } else {
        for (size_t i = lane; i < e; i += tpr)
          st = r(st, r.load(p[strided_offset<size_t>(i, nr, rd, rs)], uint32_t(i)));
      }
    }
    if (tpr > 1) st = group_or_block_allreduce(st, tpr, r);
    if (active && lane == 0) out[row] = r.finish(st);
  }
}

// Inclusive scan of contiguous rows of `len` elements, running sums in the sum
// accumulator, rounded at each output. `tpr` threads take a row (a power of two up
// to the wave size, or the whole block); they walk it in chunks of U items a lane,
// an item being IV elements (one 16-byte vector, or one element). Item u of lane
// l in a chunk is item u * tpr + l, so every load and store is coalesced. Each
// lane scans its items in registers; an exclusive prefix across the lanes comes
// from a butterfly (every lane ends with the same group total, so the row's carry
// stays uniform); with several waves a row, the wave totals meet in shared memory
// (double-buffered: one barrier a chunk).
template <class T, int IV>
__device__ __forceinline__ void scan_rows(size_t rows, size_t len, const T* x, T* out, int tpr) {
  using A = typename SumAccOf<T>::type;
  using Item = Vec<T, IV>;
  constexpr int U = plan::scan::kItemsPerLane;
  __shared__ uint4 raw[2 * U * kMaxWaves * sizeof(A) / 16];
  A(*totals)[U][kMaxWaves] = reinterpret_cast<A(*)[U][kMaxWaves]>(raw);
  const int t = int(threadIdx.x), lane = t % warpSize;
  const int width = tpr < warpSize ? tpr : warpSize;  // lanes of one butterfly
  const int waves = tpr > warpSize ? tpr / warpSize : 1, wave = (t % tpr) / warpSize;
  const int rpb = int(blockDim.x) / tpr, g = t / tpr;
  const size_t items = len / IV;
  int buf = 0;
  for (size_t base = size_t(blockIdx.x) * rpb; base < rows; base += size_t(gridDim.x) * rpb) {
    const size_t row = base + g;
    const bool active = row < rows;  // every lane runs the chunks: shuffles and barriers
    const Item* px = reinterpret_cast<const Item*>(x + (active ? row : 0) * len);
    Item* po = reinterpret_cast<Item*>(out + (active ? row : 0) * len);
    A carry = A(0);
    for (size_t c0 = 0; c0 < items; c0 += size_t(U) * tpr) {
      Item w[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const size_t i = c0 + size_t(u) * tpr + size_t(t % tpr);
        w[u] = active && i < items ? px[i] : Item{};
      }
      A run[U][IV], tot[U], pre[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        A a = A(0);
#pragma unroll
        for (int j = 0; j < IV; ++j) {
          a = A(a + A(to_c(w[u].v[j])));
          run[u][j] = a;
        }
        tot[u] = a;
        pre[u] = A(0);
      }
      for (int m = 1; m < width; m <<= 1) {
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const A o = shfl_xor_any(tot[u], m);
          if (lane & m) pre[u] = A(pre[u] + o);
          tot[u] = A(tot[u] + o);
        }
      }
      if (waves > 1) {
        if (lane == 0) {
#pragma unroll
          for (int u = 0; u < U; ++u) totals[buf][u][wave] = tot[u];
        }
        __syncthreads();
#pragma unroll
        for (int u = 0; u < U; ++u) {
          A before = A(0), all = A(0);
          for (int k = 0; k < waves; ++k) {
            const A v = totals[buf][u][k];
            if (k < wave) before = A(before + v);
            all = A(all + v);
          }
          pre[u] = A(before + pre[u]);
          tot[u] = all;
        }
        buf ^= 1;
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const A b = A(carry + pre[u]);
        Item o;
#pragma unroll
        for (int j = 0; j < IV; ++j) o.v[j] = from_c<T>(compute_t<T>(A(b + run[u][j])));
        const size_t i = c0 + size_t(u) * tpr + size_t(t % tpr);
        if (active && i < items) po[i] = o;
        carry = A(carry + tot[u]);
      }
    }
  }
}

// Inclusive scan of x viewed [outer, len, inner] (contiguous). inner > 1: one
// thread per (outer, inner) column; inner == 1: scan_rows, on 16-byte vectors when
// the rows allow.
template <class T>
__device__ void cumsum(size_t outer, size_t len, size_t inner, const T* x, T* out, int tpr) {
  using A = typename SumAccOf<T>::type;
  if (inner > 1) {
    const size_t n = outer * inner;
    for (size_t t = size_t(blockIdx.x) * blockDim.x + threadIdx.x; t < n;
         t += size_t(gridDim.x) * blockDim.x) {
      const size_t o = t / inner, i = t - o * inner;
      const T* px = x + o * len * inner + i;
      T* po = out + o * len * inner + i;
      A acc = A(0);
      for (size_t j = 0; j < len; ++j) {
        acc = A(acc + A(to_c(px[j * inner])));
        po[j * inner] = from_c<T>(compute_t<T>(acc));
      }
    }
    return;
  }
  constexpr int V = int(plan::kVectorBytes / sizeof(T));
  if (len % V == 0 && aligned16(x) && aligned16(out)) {
    scan_rows<T, V>(outer, len, x, out, tpr);
  } else {
    scan_rows<T, 1>(outer, len, x, out, tpr);
  }
}

template <class T>
using RMin = RExt<T, false>;
template <class T>
using RMax = RExt<T, true>;
template <class T>
using RArgMin = RArg<T, false>;
template <class T>
using RArgMax = RArg<T, true>;

}  // namespace wk
