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

namespace {
bool float_of(DType d, batch::Float& f) {
  switch (d) {
    case DType::F16:
      f = batch::Float::F16;
      return true;
    case DType::BF16:
      f = batch::Float::BF16;
      return true;
    case DType::F32:
      f = batch::Float::F32;
      return true;
    case DType::F64:
      f = batch::Float::F64;
      return true;
    default:
      return false;
  }
}
}  // namespace

bool defer_small(GpuDevice& dev, batch::Op op, DType in, DType out, size_t elems) {
  if (elems > batch::kMaxElements || !float_of(in, op.dtype) || !float_of(out, op.out_dtype)) return false;
  return dev.defer(op);
}

unsigned wave_size(const GpuDevice& dev) { return unsigned(dev.props().wave_size); }

}  // namespace wick::gpu
