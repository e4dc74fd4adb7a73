// CPU fills and copies: try_clone, copy_strided_src, copy2d, const_set. Contiguous copies
// are memcpy split across the threads.
#include <cstring>

#include "backend/cpu/cpu_storage.h"
#include "backend/cpu/strided.h"
#include "base/dispatch.h"

namespace wick {

namespace {

// memcpy split across the threads: one core's copy does not reach the memory bandwidth
// of a many-core machine. At least 1 MiB per thread (the wake-up of a thread costs
// microseconds; a MiB takes tens).
void parallel_memcpy(void* dst, const void* src, size_t bytes) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  cpu::parallel_for(bytes, size_t(1) << 20, [&](size_t b, size_t e) { std::memcpy(d + b, s + b, e - b); });
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
  auto copy = [&]<class W>() {
    const W* src = static_cast<const W*>(data_);
    W* out = static_cast<W*>(dst.raw()) + dst_offset;
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
    cpu::for_each_offset(l, [&](size_t, size_t off) { out[off] = value; });
  });
}

}  // namespace wick
