// CPU indexing: index_select, gather, scatter (set / add, in place) and index_add.
//
// Every op first reads all ids through their layout and validates them (Candle's sentinel: the ids
// dtype's max value means "skip"; any other value outside [0, dim size) throws IndexOutOfRange before
// anything is written). Strided value inputs are copied to contiguous scratch first, after which every op
// sees its tensors as [left, dim, right] blocks: left = product of the dims before `dim`, right = product
// of the dims after it.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

#include "backend/common/operand_views.h"
#include "backend/cpu/cpu_storage.h"
#include "backend/cpu/strided.h"
#include "base/dispatch.h"

namespace wick {

namespace {

// Marks a skipped id after reading (the i64 sentinel itself, so no valid id collides with it).
constexpr int64_t kSkip = std::numeric_limits<int64_t>::max();
constexpr size_t kGrainElems = 1 << 15;
// index_select: bytes of output rows per piece a thread takes, and how far ahead (and
// how much of a row) the source rows are prefetched.
constexpr size_t kChunkBytes = size_t(64) << 10;
constexpr size_t kPrefetchBytes = size_t(4) << 10;

// All ids of `ids` (read through `ids_l`, row-major) as int64, sentinel mapped to kSkip. Throws
// IndexOutOfRange for the first id (in row-major order) that is negative or >= dim_size.
std::vector<int64_t> read_ids(const BackendStorage& ids, const Layout& ids_l, size_t dim, size_t dim_size,
                              const char* op) {
  const auto& s = CpuStorage::of(ids);
  std::vector<int64_t> v(ids_l.elem_count());
  dispatch_dtype<kIndexDTypes>(s.dtype(), op, [&]<class I>() {
    const I* p = s.data<I>();
    cpu::for_each_offset(ids_l, [&](size_t i, size_t off) {
      I x = p[off];
      v[i] = x == std::numeric_limits<I>::max() ? kSkip : int64_t(x);
    });
  });
  // Validation runs serially after the parallel read: a pass without an early exit (it
  // vectorises), then, only if it found one, the first bad index, the one reported.
  auto bad = [dim_size](int64_t x) { return x != kSkip && uint64_t(x) >= dim_size; };  // x < 0 wraps high
  bool any_bad = false;
  for (int64_t x : v) any_bad |= bad(x);
  if (any_bad) {
    const int64_t x = *std::find_if(v.begin(), v.end(), bad);
    throw_error(ErrorKind::IndexOutOfRange, op,
                fmt::format("index {} out of range for dim {} of size {} (ids {})", x, dim, dim_size,
                            dtype_name(s.dtype())));
  }
  return v;
}

// The data of `s` viewed through `l` as a contiguous run: `s` itself when `l` is contiguous, else a
// copy held in `keep`.
const void* contiguous_data(const CpuStorage& s, const Layout& l, std::shared_ptr<CpuStorage>& keep) {
  if (l.is_contiguous()) return static_cast<const char*>(s.raw()) + l.start_offset() * dtype_size(s.dtype());
  keep = cpu_alloc(l.elem_count(), s.dtype());
  s.copy_strided_src(*keep, 0, l);
  return keep->raw();
}

// Runs f(left index, r0, r1) for every (left index, block [r0, r1) of right positions) in parallel, for
// the ops that write into [left, dim, right] through ids (scatter, index_add). Tasks write disjoint
// elements (a task owns its right positions in every dst row), and each walks its `rows` source rows in
// order, so duplicate ids resolve in source order (the last one wins a set) on any thread count.
template <class F>
void for_each_column_block(const Blocks& bl, size_t rows, F&& f) {
  constexpr size_t kBlock = 256;
  size_t nblk = (bl.right + kBlock - 1) / kBlock;
  cpu::parallel_for(bl.left * nblk, kGrainElems / (rows * std::min(bl.right, kBlock)) + 1,
                    [&](size_t b, size_t e) {
                      for (size_t t = b; t < e; ++t) {
                        size_t li = t / nblk, r0 = (t % nblk) * kBlock;
                        f(li, r0, std::min(bl.right, r0 + kBlock));
                      }
                    });
}

// a + b in the dtype: integers wrap (through the unsigned type), f16/bf16 add in f32 and round once.
template <class T>
T add_elem(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return T(U(U(a) + U(b)));
  } else {
    using C = compute_t<T>;
    return T(C(a) + C(b));
  }
}

}  // namespace

StoragePtr CpuStorage::index_select(const BackendStorage& ids, const Layout& l, const Layout& ids_l,
                                    size_t dim) const {
  size_t src_dim = l.dims()[dim];
  std::vector<int64_t> id = read_ids(ids, ids_l, dim, src_dim, "index_select");
  Blocks bl = blocks_of(l.dims(), dim);
  size_t n_ids = id.size();
  auto out = cpu_alloc(bl.left * n_ids * bl.right, dtype_);
  if (out->elem_count() == 0) return out;
  std::shared_ptr<CpuStorage> keep;
  const char* src = static_cast<const char*>(contiguous_data(*this, l, keep));
  char* dst = static_cast<char*>(out->raw());
  size_t row_bytes = bl.right * dtype_size(dtype_);
  // The source of output row (li, j), or null for a skipped id.
  auto src_row = [&](size_t li, size_t j) -> const char* {
    return id[j] == kSkip ? nullptr : src + (li * src_dim + size_t(id[j])) * row_bytes;
  };
  // The rows the ids pick lie anywhere in the source: the hardware prefetchers cannot
  // see the next one coming, so each row's first kPrefetchBytes are prefetched about
  // kPrefetchBytes of output ahead (docs/PERFORMANCE.md).
  const size_t ahead = std::max<size_t>(1, kPrefetchBytes / std::max<size_t>(row_bytes, 1));
  const size_t pf_bytes = std::min(row_bytes, kPrefetchBytes);
  // Output rows t in [b, e) (a memcpy each, or zeros for a skipped id), t = li * n_ids + j
  // walked as the pair (li, j), and the pair `ahead` rows on for the prefetch.
  auto copy_rows = [&](size_t b, size_t e) {
    size_t li = b / n_ids, j = b % n_ids;
    size_t pl = (b + ahead) / n_ids, pj = (b + ahead) % n_ids;
    for (size_t t = b; t < e; ++t) {
      if (t + ahead < e) {
        if (const char* q = src_row(pl, pj))
          for (size_t off = 0; off < pf_bytes; off += 64) __builtin_prefetch(q + off);
        if (++pj == n_ids) pj = 0, ++pl;
      }
      char* o = dst + t * row_bytes;
      if (const char* s = src_row(li, j)) {
        std::memcpy(o, s, row_bytes);
      } else {
        std::memset(o, 0, row_bytes);
      }
      if (++j == n_ids) j = 0, ++li;
    }
  };
  // Pieces of about kChunkBytes of output: each thread takes the same pieces at every
  // call (cpu::parallel_chunks), so a table that fits the cores' caches stays in them.
  cpu::parallel_chunks(bl.left * n_ids, std::max<size_t>(1, kChunkBytes / std::max<size_t>(row_bytes, 1)),
                       copy_rows);
  return out;
}

StoragePtr CpuStorage::gather(const Layout& l, const BackendStorage& ids, const Layout& ids_l,
                              size_t dim) const {
  size_t src_dim = l.dims()[dim];
  std::vector<int64_t> id = read_ids(ids, ids_l, dim, src_dim, "gather");
  // ids dims equal the source dims except at `dim` (front end), so left/right are shared.
  Blocks bl = blocks_of(l.dims(), dim);
  size_t ids_dim = ids_l.dims()[dim];
  auto out = cpu_alloc(id.size(), dtype_);
  if (id.empty()) return out;
  std::shared_ptr<CpuStorage> keep;
  const void* src_raw = contiguous_data(*this, l, keep);
  dispatch_dtype(dtype_, "gather", [&]<class T>() {
    const T* src = static_cast<const T*>(src_raw);
    T* o = out->data<T>();
    size_t per_left = ids_dim * bl.right;
    cpu::for_each_offset(Layout(Shape{id.size()}), [&](size_t i, size_t) {
      size_t li = i / per_left, r = i % bl.right;
      o[i] = id[i] == kSkip ? T{} : src[(li * src_dim + size_t(id[i])) * bl.right + r];
    });
  });
  return out;
}

void CpuStorage::scatter(ScatterMode mode, const Layout& l, const BackendStorage& ids, const Layout& ids_l,
                         const BackendStorage& src, const Layout& src_l, size_t dim) {
  size_t dst_dim = l.dims()[dim];
  const char* op = mode == ScatterMode::Set ? "scatter" : "scatter_add";
  std::vector<int64_t> id = read_ids(ids, ids_l, dim, dst_dim, op);
  if (id.empty()) return;
  Blocks bl = blocks_of(l.dims(), dim);
  size_t src_dim = src_l.dims()[dim];
  std::shared_ptr<CpuStorage> keep;
  const void* src_raw = contiguous_data(CpuStorage::of(src), src_l, keep);
  dispatch_dtype(dtype_, op, [&]<class T>() {
    const T* s = static_cast<const T*>(src_raw);
    T* d = data<T>() + l.start_offset();
    for_each_column_block(bl, src_dim, [&](size_t li, size_t r0, size_t r1) {
      for (size_t j = 0; j < src_dim; ++j) {
        size_t srow = (li * src_dim + j) * bl.right;
        for (size_t r = r0; r < r1; ++r) {
          int64_t k = id[srow + r];
          if (k == kSkip) continue;
          T& dst = d[(li * dst_dim + size_t(k)) * bl.right + r];
          dst = mode == ScatterMode::Set ? s[srow + r] : add_elem(dst, s[srow + r]);
        }
      }
    });
  });
}

StoragePtr CpuStorage::index_add(const Layout& l, const BackendStorage& ids, const Layout& ids_l,
                                 const BackendStorage& src, const Layout& src_l, size_t dim) const {
  size_t dst_dim = l.dims()[dim];
  std::vector<int64_t> id = read_ids(ids, ids_l, dim, dst_dim, "index_add");
  auto out = cpu_alloc(l.elem_count(), dtype_);
  if (out->elem_count() == 0) return out;
  copy_strided_src(*out, 0, l);
  Blocks bl = blocks_of(l.dims(), dim);
  size_t n_ids = id.size();
  if (n_ids == 0 || bl.right == 0) return out;
  std::shared_ptr<CpuStorage> keep;
  const void* src_raw = contiguous_data(CpuStorage::of(src), src_l, keep);
  dispatch_dtype(dtype_, "index_add", [&]<class T>() {
    const T* s = static_cast<const T*>(src_raw);
    T* d = out->data<T>();
    for_each_column_block(bl, n_ids, [&](size_t li, size_t r0, size_t r1) {
      for (size_t j = 0; j < n_ids; ++j) {
        if (id[j] == kSkip) continue;
        const T* srow = s + (li * n_ids + j) * bl.right;
        T* drow = d + (li * dst_dim + size_t(id[j])) * bl.right;
        for (size_t r = r0; r < r1; ++r) drow[r] = add_elem(drow[r], srow[r]);
      }
    });
  });
  return out;
}

}  // namespace wick
