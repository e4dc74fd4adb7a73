// Host helpers of gpu_ops.h (GEMM lives in matmul.cpp).
#include "backend/gpu/gpu_ops.h"

#include <fmt/format.h>

namespace wick::gpu {

const void* contiguous_data(const GpuStorage& s, const Layout& l, std::shared_ptr<GpuStorage>& keep) {
  if (l.is_contiguous()) return s.at(l.start_offset());
  keep = gpu_alloc(s.dev(), l.elem_count(), s.dtype());
  s.copy_strided_src(*keep, 0, l);
  return keep->raw();
}

unsigned wave_size(const GpuDevice& dev) { return unsigned(dev.props().wave_size); }

}  // namespace wick::gpu
