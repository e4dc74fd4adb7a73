// CPU fills and copies: try_clone, copy_strided_src, copy2d, const_set. Contiguous copies
// are memcpy and contiguous fills vector stores (simd.h), in pieces across the threads.
#include <algorithm>
#include <cstring>
#include <vector>

#include "backend/common/collapse.h"
#include "backend/cpu/cpu_storage.h"
#include "backend/cpu/simd.h"
#include "backend/cpu/strided.h"
#include "base/dispatch.h"

namespace wick {

namespace {

// Copies and fills move pieces of kPiece bytes that the threads take in turn
// (parallel_chunks): one core's copy does not reach the memory bandwidth of a many-core
// machine, and a thread the system slows leaves its pieces to the others. With a static
// split, a 16 MB copy on 16 cores ran at half the speed of these pieces
// (docs/PERFORMANCE.md). Below 1 MiB one thread copies (a wake-up costs microseconds).
constexpr size_t kPiece = size_t(256) << 10;

void parallel_memcpy(void* dst, const void* src, size_t bytes) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  if (bytes < 4 * kPiece) {
    std::memcpy(d, s, bytes);
    return;
  }
  cpu::parallel_chunks(bytes, kPiece, [&](size_t b, size_t e) { std::memcpy(d + b, s + b, e - b); });
}

}  // namespace

StoragePtr CpuStorage::try_clone(const Layout&) const {
  auto s = cpu_alloc(n_, dtype_);
  parallel_memcpy(s->raw(), data_, n_ * dtype_size(dtype_));
  return s;
}

void CpuStorage::copy_strided_src(BackendStorage& dst_storage, size_t dst_offset, const Layout& src_l) const {
  auto& dst = CpuStorage::of(dst_storage);
  size_t es = dtype_size(dtype_);
  if (src_l.is_contiguous()) {
    size_t n = src_l.elem_count();
    parallel_memcpy(static_cast<char*>(dst.raw()) + dst_offset * es,
                    static_cast<const char*>(data_) + src_l.start_offset() * es, n * es);
    return;
  }
  // Copy by element width: the value bits move unchanged, so one path per size serves every dtype.
  // The source seen through its fewest dims [outer..., rows, cols] (collapse.h) takes one of:
  //  - rows: unit stride along cols: each row is one memcpy;
  //  - transpose: unit stride along rows (a transposed matrix, or a batch of them): 32 x 32 tiles,
  //    each read down its columns and written along its rows, both within the L1 cache;
  //  - general: the element walker.
  const Collapsed c = collapse_dims(src_l.dims(), src_l.strides());
  const size_t rank = c.dims.size();
  auto copy = [&]<class W>() {
    const W* src = static_cast<const W*>(data_);
    W* out = static_cast<W*>(dst.raw()) + dst_offset;
    if (rank >= 2 && (c.strides[0][rank - 1] == 1 || c.strides[0][rank - 2] == 1)) {
      const size_t rows = c.dims[rank - 2], cols = c.dims[rank - 1];
      const size_t s_row = c.strides[0][rank - 2], s_col = c.strides[0][rank - 1];
      const Layout outer(std::vector<size_t>(c.dims.begin(), c.dims.end() - 2),
                         std::vector<size_t>(c.strides[0].begin(), c.strides[0].end() - 2),
                         src_l.start_offset());
      const size_t n_outer = outer.elem_count();
      if (s_col == 1) {
        cpu::parallel_for(n_outer * rows, (size_t(1) << 15) / cols + 1, [&](size_t b, size_t e) {
          for (size_t r = b; r < e; ++r) {
            const size_t off = cpu::strided_offset(r / rows, outer) + (r % rows) * s_row;
            std::memcpy(out + r * cols, src + off, cols * sizeof(W));
          }
        });
        return;
      }
      constexpr size_t kTile = 32;
      const size_t tr = (rows + kTile - 1) / kTile, tc = (cols + kTile - 1) / kTile;
      cpu::parallel_for(n_outer * tr * tc, (size_t(1) << 15) / (kTile * kTile) + 1, [&](size_t b, size_t e) {
        for (size_t t = b; t < e; ++t) {
          const size_t o = t / (tr * tc), r0 = (t / tc) % tr * kTile, c0 = t % tc * kTile;
          const size_t r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + kTile);
          const W* base = src + cpu::strided_offset(o, outer);
          W* y = out + o * rows * cols;
          for (size_t r = r0; r < r1; ++r)
            for (size_t j = c0; j < c1; ++j) y[r * cols + j] = base[r + j * s_col];
        }
      });
      return;
    }
    cpu::for_each_offset(src_l, [&](size_t i, size_t off) { out[i] = src[off]; });
  };
  switch (es) {
    case 1:
      copy.template operator()<uint8_t>();
      break;
    case 2:
      copy.template operator()<uint16_t>();
      break;
    case 4:
      copy.template operator()<uint32_t>();
      break;
    default:
      copy.template operator()<uint64_t>();
      break;
  }
}

void CpuStorage::copy2d(BackendStorage& dst_storage, size_t d1, size_t d2, size_t src_stride1,
                        size_t dst_stride1, size_t src_offset, size_t dst_offset) const {
  auto& dst = CpuStorage::of(dst_storage);
  size_t es = dtype_size(dtype_);
  const char* src = static_cast<const char*>(data_);
  char* out = static_cast<char*>(dst.raw());
  cpu::parallel_for(d1, (size_t(1) << 16) / (d2 ? d2 : 1) + 1, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i)
      std::memcpy(out + (dst_offset + i * dst_stride1) * es, src + (src_offset + i * src_stride1) * es,
                  d2 * es);
  });
}

void CpuStorage::const_set(Scalar v, const Layout& l) {
  dispatch_dtype(dtype_, "const_set", [&]<class T>() {
    T value = v.as<T>();
    T* out = data<T>();
    if (l.is_contiguous()) {
      T* o = out + l.start_offset();
      static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8);
      uint64_t bits = 0;
      std::memcpy(&bits, &value, sizeof(T));
      cpu::parallel_chunks(l.elem_count(), kPiece / sizeof(T),
                           [&](size_t b, size_t e) { cpu::simd::fill(sizeof(T), bits, o + b, e - b); });
      return;
    }
    cpu::for_each_offset(l, [&](size_t, size_t off) { out[off] = value; });
  });
}

}  // namespace wick
