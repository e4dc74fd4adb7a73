// CPU reductions (sum, min, max, argmin, argmax over any set of dims) and cumsum.
//
// Paths, chosen from the layout after dropping size-1 dims and merging adjacent dims that are both kept or
// both reduced:
//  - rows: contiguous input whose reduced dims are the trailing ones ([kept, reduced]): each output reduces
//    one contiguous row with the vectorisable row kernels below; rows go to the threads in pieces, and a long
//    row is cut into fixed chunks whose partial results merge in order, so the result does not depend on
//    the thread count.
//  - columns: contiguous input of the form [outer, reduced, inner] with inner > 1 (a sum over dim 0 of a
//    matrix): a block of outputs accumulates whole input rows, reading memory in order (f32, f16 and
//    bf16 sums four rows a pass in the vector kernel of simd.h).
//  - general: any other layout. Kept dims first, reduced dims last (Candle's order); each output walks its
//    reduced elements with a StridedWalker, gathering chunks into a buffer for the row kernels.
//
// Numerics (the contract every backend is compared against):
//  - Sum accumulates f16/bf16/f32 in f32 (the vector kernel of simd.h) and f64 in f64, pairwise within a
//    chunk of a row (error grows like log n) and in blocks of rows on the column path; integer sums wrap in
//    the dtype (computed in the unsigned type of the same width, so signed overflow is defined).
//  - Min/Max propagate NaN: any NaN in the reduction gives NaN.
//  - ArgMin/ArgMax give the first index of the extreme value; a reduction holding a NaN gives the index of
//    its first NaN (NaN counts as the extreme, as in PyTorch). The index is row-major over the reduced dims.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "backend/cpu/cpu_storage.h"
#include "backend/cpu/simd.h"
#include "backend/cpu/strided.h"
#include "base/dispatch.h"

namespace wick {

namespace {

// Elements per chunk of a row: the unit of work splitting and of the general path's gather buffer.
constexpr size_t kChunk = 1 << 14;
// Elements of work below which a task is not split further across threads.
constexpr size_t kGrainElems = 1 << 15;
// Input bytes of the rows path's pieces of rows, taken by the threads through
// cpu::parallel_chunks (each its own share, then what the others left), as the
// mat-vec's: a thread the system slows leaves its rows to the others.
constexpr size_t kRowsChunkBytes = size_t(128) << 10;

template <class T>
constexpr bool kIsFloat = !std::is_integral_v<T>;

// The type a Sum accumulates in: f32 for f16/bf16/f32, f64 for f64, the unsigned twin for integers.
template <class T>
struct SumAccOf {
  using type = compute_t<T>;
};
template <class T>
requires std::is_integral_v<T>
struct SumAccOf<T> {
  using type = std::make_unsigned_t<T>;
};
template <class T>
using sum_acc_t = typename SumAccOf<T>::type;

// Pairwise sum of a contiguous run: blocks of up to 256 elements in 8 independent lanes (vectorisable),
// halves combined recursively.
template <class A, class T>
A sum_pairwise(const T* x, size_t n) {
  if (n <= 256) {
    A lane[8] = {};
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      for (size_t k = 0; k < 8; ++k) lane[k] = A(lane[k] + A(x[i + k]));
    }
    for (size_t k = 0; i < n; ++i, ++k) lane[k] = A(lane[k] + A(x[i]));
    return A(A(A(lane[0] + lane[1]) + A(lane[2] + lane[3])) + A(A(lane[4] + lane[5]) + A(lane[6] + lane[7])));
  }
  size_t half = (n / 2) & ~size_t(7);
  return A(sum_pairwise<A>(x, half) + sum_pairwise<A>(x + half, n - half));
}

template <class C>
bool is_nan(C v) {
  if constexpr (kIsFloat<C>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// v replaces m when it is better or NaN; once m is NaN nothing replaces it, so NaN propagates without a
// separate flag (the select vectorises: compare, unordered-compare, blend).
template <bool IsMax, class C>
C pick(C v, C m) {
  bool better = IsMax ? v > m : v < m;
  if constexpr (kIsFloat<C>) better = better || v != v;
  return better ? v : m;
}

// f32, f16 and bf16: the vector kernels of simd.h.
template <class T>
constexpr bool kHasVector = std::is_same_v<T, float> || std::is_same_v<T, f16> || std::is_same_v<T, bf16>;

// Max (IsMax) or min of a non-empty contiguous run in the compute type; NaN if the run holds one.
template <bool IsMax, class T>
compute_t<T> extreme_row(const T* x, size_t n) {
  using C = compute_t<T>;
  if constexpr (kHasVector<T>) return cpu::simd::extreme_run(dtype_of<T>, x, n, IsMax);
  C lane[8];
  for (size_t k = 0; k < 8; ++k) lane[k] = C(x[0]);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (size_t k = 0; k < 8; ++k) lane[k] = pick<IsMax>(C(x[i + k]), lane[k]);
  }
  for (; i < n; ++i) lane[0] = pick<IsMax>(C(x[i]), lane[0]);
  C m = lane[0];
  for (size_t k = 1; k < 8; ++k) m = pick<IsMax>(lane[k], m);
  return m;
}

// Each reduction as a fold over (value, index) pairs in row-major order, plus a fast fold of a whole
// contiguous run. States of consecutive chunks merge left to right.
template <ReduceOp Op, class T>
struct Reducer;

template <class T>
struct Reducer<ReduceOp::Sum, T> {
  using A = sum_acc_t<T>;
  using Out = T;
  struct State {
    A s = A(0);
  };
  static void run(State& st, const T* x, size_t n, size_t) {
    if constexpr (std::is_same_v<A, float>) {  // f32, f16, bf16: the vector kernel (simd.h)
      st.s = st.s + cpu::simd::sum_run(dtype_of<T>, x, n);
    } else {
      st.s = A(st.s + sum_pairwise<A>(x, n));
    }
  }
  static void fold(State& st, compute_t<T> v, size_t) { st.s = A(st.s + A(v)); }
  static void merge(State& a, const State& b) { a.s = A(a.s + b.s); }
  static Out finish(const State& st) { return T(st.s); }
};

template <bool IsMax, class T>
struct ExtremeBase {
  using C = compute_t<T>;
  // The identity: every value (and NaN, handled apart) replaces it or equals it.
  static C identity() {
    if constexpr (kIsFloat<C>) {
      return IsMax ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity();
    } else {
      return IsMax ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max();
    }
  }
  static bool better(C v, C m) { return IsMax ? v > m : v < m; }
};

template <bool IsMax, class T>
struct MinMaxReducer : ExtremeBase<IsMax, T> {
  using B = ExtremeBase<IsMax, T>;
  using C = compute_t<T>;
  using Out = T;
  struct State {
    C m = B::identity();
    bool nan = false;
  };
  static void fold(State& st, C v, size_t) {
    if (is_nan(v)) {
      st.nan = true;
    } else if (B::better(v, st.m)) {
      st.m = v;
    }
  }
  static void run(State& st, const T* x, size_t n, size_t) { fold(st, extreme_row<IsMax>(x, n), 0); }
  static void merge(State& a, const State& b) {
    a.nan |= b.nan;
    if (B::better(b.m, a.m)) a.m = b.m;
  }
  static Out finish(const State& st) {
    if constexpr (kIsFloat<C>) {
      if (st.nan) return T(std::numeric_limits<C>::quiet_NaN());
    }
    return T(st.m);
  }
};

template <bool IsMax, class T>
struct ArgReducer : ExtremeBase<IsMax, T> {
  using B = ExtremeBase<IsMax, T>;
  using C = compute_t<T>;
  using Out = uint32_t;
  // idx starts at 0: a reduction whose values all equal the identity reports its first index.
  struct State {
    C m = B::identity();
    size_t idx = 0;
    bool nan = false;
  };
  static void fold(State& st, C v, size_t idx) {
    if (st.nan) return;
    if (is_nan(v)) {
      st.nan = true;
      st.idx = idx;
    } else if (B::better(v, st.m)) {
      st.m = v;
      st.idx = idx;
    }
  }
  // Two passes: the (vectorised) extreme, then the first element equal to it (or the first NaN).
  static void run(State& st, const T* x, size_t n, size_t base) {
    C m = extreme_row<IsMax>(x, n);
    bool nan = is_nan(m);
    size_t i = 0;
    if constexpr (kHasVector<T>) {
      i = cpu::simd::find_run(dtype_of<T>, x, n, m);  // m is an element of the run: i < n
    } else if (nan) {
      while (!is_nan(C(x[i]))) ++i;  // rare: scalar
    } else {
      // Blocks of 16 tested without an early exit (vectorised), then the hit located in its block.
      for (; i + 16 <= n; i += 16) {
        int any = 0;
#pragma omp simd reduction(| : any)
        for (size_t k = 0; k < 16; ++k) any |= int(C(x[i + k]) == m);
        if (any) break;
      }
      while (!(C(x[i]) == m)) ++i;  // m is an element of the run, so this stops inside it
    }
    fold(st, m, base + i);
  }
  static void merge(State& a, const State& b) {
    if (b.nan) {
      fold(a, std::numeric_limits<C>::quiet_NaN(), b.idx);
    } else {
      fold(a, b.m, b.idx);
    }
  }
  static Out finish(const State& st) { return uint32_t(st.idx); }
};

template <class T>
struct Reducer<ReduceOp::Min, T> : MinMaxReducer<false, T> {};
template <class T>
struct Reducer<ReduceOp::Max, T> : MinMaxReducer<true, T> {};
template <class T>
struct Reducer<ReduceOp::ArgMin, T> : ArgReducer<false, T> {};
template <class T>
struct Reducer<ReduceOp::ArgMax, T> : ArgReducer<true, T> {};

// The input's dims with size-1 dims dropped and adjacent dims of the same kind (kept / reduced) merged.
struct MergedDim {
  size_t size;
  bool reduced;
};
std::vector<MergedDim> merge_dims(const std::vector<size_t>& dims, const std::vector<bool>& reduced) {
  std::vector<MergedDim> m;
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] == 1) continue;
    if (!m.empty() && m.back().reduced == reduced[k]) {
      m.back().size *= dims[k];
    } else {
      m.push_back({dims[k], reduced[k]});
    }
  }
  return m;
}

// Rows path: out[r] = reduce(x[r*e .. (r+1)*e)).
template <class R, class T>
void reduce_rows(const T* x, typename R::Out* out, size_t rows, size_t e) {
  using State = typename R::State;
  size_t nch = (e + kChunk - 1) / kChunk;
  if (nch <= 1) {
    // Rows in pieces of about kRowsChunkBytes that the threads take in turn.
    const size_t per_row = std::max<size_t>(e * sizeof(T), 1);
    cpu::parallel_chunks(rows, std::max<size_t>(1, kRowsChunkBytes / per_row), [&](size_t b, size_t end) {
      for (size_t r = b; r < end; ++r) {
        State st;
        R::run(st, x + r * e, e, 0);
        out[r] = R::finish(st);
      }
    });
    return;
  }
  // Long rows: every (row, chunk) pair is a task, taken in turn by the threads (a slowed thread's tasks
  // go to the others: twice the speed of a static split on a 32 MB sum, docs/PERFORMANCE.md); partials
  // merge in order afterwards, so the result does not depend on which thread ran a task.
  std::vector<State> part(rows * nch);
  cpu::parallel_chunks(rows * nch, kGrainElems / kChunk + 1, [&](size_t b, size_t end) {
    for (size_t t = b; t < end; ++t) {
      size_t r = t / nch, c = t % nch;
      size_t lo = c * kChunk, n = std::min(kChunk, e - lo);
      R::run(part[t], x + r * e + lo, n, lo);
    }
  });
  for (size_t r = 0; r < rows; ++r) {
    State st = part[r * nch];
    for (size_t c = 1; c < nch; ++c) R::merge(st, part[r * nch + c]);
    out[r] = R::finish(st);
  }
}

// Columns path: x is [outer, e, inner]; out[o, i] = reduce over j of x[o, j, i]. A task owns a block
// of up to kColBlock outputs (their states stay in L1) and a range of rows, reading each row's block in
// order. When outer x blocks gives fewer tasks than threads, the rows split into ranges too, and the
// ranges' states merge in row order afterwards.
template <class R, class T>
void reduce_columns(const T* x, typename R::Out* out, size_t outer, size_t e, size_t inner) {
  using State = typename R::State;
  using C = compute_t<T>;
  constexpr size_t kColBlock = 2048;
  constexpr size_t kRowBlock = 64;  // rows summed into a partial before it joins the total (accuracy)
  size_t nblk = (inner + kColBlock - 1) / kColBlock, tasks = outer * nblk;
  size_t threads = size_t(cpu::max_threads());
  size_t nsplit = tasks >= threads ? 1 : std::min((threads + tasks - 1) / tasks, e / kRowBlock + 1);
  size_t rows_per = (e + nsplit - 1) / nsplit;
  // States of rows [j0, j1) for outputs [i0, i0 + w) of outer index o.
  auto accumulate = [&](State* st, size_t o, size_t i0, size_t w, size_t j0, size_t j1) {
    const T* base = x + o * e * inner + i0;
    for (size_t i = 0; i < w; ++i) st[i] = State{};
    if constexpr (std::is_same_v<R, Reducer<ReduceOp::Sum, T>>) {
      using A = typename R::A;
      A partial[kColBlock];
      for (size_t b = j0; b < j1; b += kRowBlock) {
        for (size_t i = 0; i < w; ++i) partial[i] = A(0);
        const size_t je = std::min(j1, b + kRowBlock);
        if constexpr (kHasVector<T>) {  // f32, f16, bf16: the vector kernel (simd.h)
          cpu::simd::sum_rows(dtype_of<T>, base + b * inner, inner, je - b, partial, w);
        } else {
          for (size_t j = b; j < je; ++j) {
            const T* row = base + j * inner;
            // omp simd: -O2's cost model leaves this loop scalar otherwise (measured 8x slower).
#pragma omp simd
            for (size_t i = 0; i < w; ++i) partial[i] = A(partial[i] + A(row[i]));
          }
        }
        for (size_t i = 0; i < w; ++i) st[i].s = A(st[i].s + partial[i]);
      }
    } else {
      for (size_t j = j0; j < j1; ++j) {
        const T* row = base + j * inner;
        for (size_t i = 0; i < w; ++i) R::fold(st[i], C(row[i]), j);
      }
    }
  };
  size_t grain = kGrainElems / (std::min(rows_per, e) * std::min(inner, kColBlock)) + 1;
  if (nsplit == 1) {
    cpu::parallel_for(tasks, grain, [&](size_t b, size_t end) {
      std::vector<State> st(std::min(inner, kColBlock));
      for (size_t t = b; t < end; ++t) {
        size_t o = t / nblk, i0 = (t % nblk) * kColBlock, w = std::min(kColBlock, inner - i0);
        accumulate(st.data(), o, i0, w, 0, e);
        for (size_t i = 0; i < w; ++i) out[o * inner + i0 + i] = R::finish(st[i]);
      }
    });
    return;
  }
  std::vector<State> part(nsplit * outer * inner);  // [split][o][i]
  cpu::parallel_for(tasks * nsplit, 1, [&](size_t b, size_t end) {
    for (size_t t = b; t < end; ++t) {
      size_t sp = t / tasks, o = (t % tasks) / nblk, i0 = (t % nblk) * kColBlock;
      size_t w = std::min(kColBlock, inner - i0), j0 = std::min(e, sp * rows_per),
             j1 = std::min(e, j0 + rows_per);
      accumulate(part.data() + (sp * outer + o) * inner + i0, o, i0, w, j0, j1);
    }
  });
  size_t n_out = outer * inner;
  cpu::parallel_for(n_out, kGrainElems / nsplit + 1, [&](size_t b, size_t end) {
    for (size_t k = b; k < end; ++k) {
      State st = part[k];
      for (size_t sp = 1; sp < nsplit; ++sp) R::merge(st, part[sp * n_out + k]);
      out[k] = R::finish(st);
    }
  });
}

// General path: any layout. `kept` and `red` are sub-layouts (dims, strides) of the input; output o's
// elements are `red` shifted by the storage offset of kept element o.
template <class R, class T>
void reduce_general(const T* x, typename R::Out* out, const Layout& kept, const Layout& red, size_t e) {
  using State = typename R::State;
  size_t n_out = kept.elem_count();
  // Short reductions share one table of relative offsets; long ones walk per output.
  std::vector<size_t> table;
  if (!red.is_contiguous() && e <= kChunk) {
    table.resize(e);
    cpu::StridedWalker<1> rw({&red}, 0);
    for (size_t i = 0; i < e; ++i, rw.next()) table[i] = rw.offset[0];
  }
  cpu::parallel_for(n_out, kGrainElems / e + 1, [&](size_t b, size_t end) {
    std::vector<T> buf(red.is_contiguous() ? 0 : std::min(e, kChunk));
    cpu::StridedWalker<1> kw({&kept}, b);
    for (size_t o = b; o < end; ++o, kw.next()) {
      const T* base = x + kw.offset[0];
      State st;
      if (red.is_contiguous()) {
        R::run(st, base, e, 0);
      } else if (!table.empty()) {
        for (size_t i = 0; i < e; ++i) buf[i] = base[table[i]];
        R::run(st, buf.data(), e, 0);
      } else {
        cpu::StridedWalker<1> rw({&red}, 0);
        for (size_t lo = 0; lo < e; lo += kChunk) {
          size_t n = std::min(kChunk, e - lo);
          for (size_t i = 0; i < n; ++i, rw.next()) buf[i] = base[rw.offset[0]];
          State part;
          R::run(part, buf.data(), n, lo);
          R::merge(st, part);
        }
      }
      out[o] = R::finish(st);
    }
  });
}

template <ReduceOp Op, class T>
void reduce_typed(const T* x, typename Reducer<Op, T>::Out* out, const Layout& l,
                  const std::vector<bool>& is_red) {
  using R = Reducer<Op, T>;
  const auto& dims = l.dims();
  size_t e = 1;
  for (size_t k = 0; k < dims.size(); ++k) e *= is_red[k] ? dims[k] : 1;
  size_t n_out = l.elem_count() / e;
  if (l.is_contiguous()) {
    auto m = merge_dims(dims, is_red);
    const T* xs = x + l.start_offset();
    // Merged dims alternate kept / reduced: [R] or [K, R] is the rows path, [R, K] or [K, R, K] columns.
    bool rows = e == 1 || m.empty() || (m.back().reduced && m.size() <= 2);
    if (rows) {
      reduce_rows<R>(xs, out, n_out, e);
      return;
    }
    if (m.size() == 2 && m[0].reduced) {
      reduce_columns<R>(xs, out, 1, m[0].size, m[1].size);
      return;
    }
    if (m.size() == 3 && m[1].reduced) {
      reduce_columns<R>(xs, out, m[0].size, m[1].size, m[2].size);
      return;
    }
  }
  std::vector<size_t> kd, ks, rd, rs;
  for (size_t k = 0; k < dims.size(); ++k) {
    (is_red[k] ? rd : kd).push_back(dims[k]);
    (is_red[k] ? rs : ks).push_back(l.strides()[k]);
  }
  reduce_general<R>(x, out, Layout(kd, ks, l.start_offset()), Layout(rd, rs, 0), e);
}

}  // namespace

StoragePtr CpuStorage::reduce(ReduceOp op, const Layout& l, const std::vector<size_t>& dims) const {
  std::vector<bool> is_red(l.rank(), false);
  for (size_t d : dims) is_red[d] = true;
  size_t e = 1;
  for (size_t d : dims) e *= l.dims()[d];
  size_t n_out = e ? l.elem_count() / e : 1;
  for (size_t k = 0; e == 0 && k < l.rank(); ++k) n_out *= is_red[k] ? 1 : l.dims()[k];
  bool arg = op == ReduceOp::ArgMin || op == ReduceOp::ArgMax;
  auto out = cpu_alloc(n_out, arg ? DType::U32 : dtype_);
  if (n_out == 0) return out;
  if (e == 0) {  // only Sum reaches here (the front end rejects empty min/max/arg*)
    std::memset(out->raw(), 0, n_out * dtype_size(dtype_));
    return out;
  }
  dispatch_dtype(dtype_, "reduce", [&]<class T>() {
    const T* x = data<T>();
    switch (op) {  // generated from wick/op_table.h
#define WICK_REDUCE_CASE(op_, name)                                                                  \
  case ReduceOp::op_:                                                                                \
    reduce_typed<ReduceOp::op_>(x, out->data<typename Reducer<ReduceOp::op_, T>::Out>(), l, is_red); \
    break;
      WICK_REDUCE_OPS(WICK_REDUCE_CASE)
#undef WICK_REDUCE_CASE
    }
  });
  return out;
}

// Inclusive scan along `dim` of the input viewed as [outer, len, inner]: running sums in the Sum
// accumulator type (f32 for f16/bf16, wrapping integers), rounded to the dtype at each output.
StoragePtr CpuStorage::cumsum(const Layout& l, size_t dim) const {
  size_t n = l.elem_count();
  auto out = cpu_alloc(n, dtype_);
  if (n == 0) return out;
  // Scan a contiguous copy when the input is strided (one extra pass, simple indexing after).
  std::shared_ptr<CpuStorage> tmp;
  const CpuStorage* src = this;
  size_t off = l.start_offset();
  if (!l.is_contiguous()) {
    tmp = cpu_alloc(n, dtype_);
    copy_strided_src(*tmp, 0, l);
    src = tmp.get();
    off = 0;
  }
  const auto& d = l.dims();
  size_t outer = 1, len = d[dim], inner = 1;
  for (size_t k = 0; k < dim; ++k) outer *= d[k];
  for (size_t k = dim + 1; k < d.size(); ++k) inner *= d[k];
  dispatch_dtype(dtype_, "cumsum", [&]<class T>() {
    using A = sum_acc_t<T>;
    const T* x = src->data<T>() + off;
    T* y = out->data<T>();
    constexpr size_t kBlock = 1024;  // inner positions scanned together by one task
    size_t nblk = (inner + kBlock - 1) / kBlock;
    cpu::parallel_for(outer * nblk, kGrainElems / (len * std::min(inner, kBlock)) + 1,
                      [&](size_t b, size_t e) {
                        A acc[kBlock];
                        for (size_t t = b; t < e; ++t) {
                          size_t o = t / nblk, i0 = (t % nblk) * kBlock, w = std::min(kBlock, inner - i0);
                          for (size_t i = 0; i < w; ++i) acc[i] = A(0);
                          for (size_t j = 0; j < len; ++j) {
                            size_t row = (o * len + j) * inner + i0;
#pragma omp simd
                            for (size_t i = 0; i < w; ++i) {
                              acc[i] = A(acc[i] + A(x[row + i]));
                              y[row + i] = T(acc[i]);
                            }
                          }
                        }
                      });
  });
  return out;
}

}  // namespace wick
