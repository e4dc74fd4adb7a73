// Entry points of the REDUCE family: sum / min / max / argmin / argmax over any
// set of dims, and cumsum (kernels/reduce.cu; along the last dim a wave or a block
// scans each row in coalesced chunks, shorter rows sharing a wave).
//
// The input's kept dims and reduced dims are collapsed separately; each output
// reduces its reduced positions with `tpr` cooperating threads:
//  - a contiguous reduced run (the last dims of a contiguous tensor): a wave per
//    output for short runs and for runs of 1024 and more when there are many
//    outputs, else a 256-thread block, reading 16-byte vectors
//    (kernels/reduce.cu: scan_vec);
//  - a strided reduction whose kept innermost dim has unit stride (a sum over dim
//    0 of a matrix): one thread per output, neighbouring threads reading
//    neighbouring elements;
//  - anything else: a wave per output.
#include <fmt/format.h>

#include <algorithm>

#include "backend/gpu/gpu_ops.h"

namespace wick::gpu {

namespace {

constexpr unsigned kReduceBlock = 256;

size_t pow2_ceil(size_t v) {
  size_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

// Threads per output for contiguous rows of 1024 and more. Many rows (at least
// 64 per multiprocessor): one wave per row, several rows per block, no block
// reduction (measured on the H200, [16384, 16384] f32: sum / max / argmax 4.34 /
// 4.48 / 4.34 TB/s against 4.11 / 4.38 / 3.67 with a block per row; see
// docs/PERFORMANCE.md). Fewer rows: the whole block per row.
size_t long_row_tpr(const GpuDevice& dev, unsigned wave, size_t n_out) {
  const size_t sms = size_t(std::max(dev.props().multiprocessors, 1));
  return n_out >= 64 * sms ? wave : kReduceBlock;
}

}  // namespace

StoragePtr GpuStorage::reduce(ReduceOp op, const Layout& l, const std::vector<size_t>& dims) const {
  std::vector<bool> is_red(l.rank(), false);
  for (size_t d : dims) is_red[d] = true;
  std::vector<size_t> kd, ks, rd, rs;
  size_t e = 1, n_out = 1;
  for (size_t k = 0; k < l.rank(); ++k) {
    (is_red[k] ? rd : kd).push_back(l.dims()[k]);
    (is_red[k] ? rs : ks).push_back(l.strides()[k]);
    (is_red[k] ? e : n_out) *= l.dims()[k];
  }
  const bool arg = op == ReduceOp::ArgMin || op == ReduceOp::ArgMax;
  const DType out_dt = arg ? DType::U32 : dtype_;
  auto out = gpu_alloc(dev_, n_out, out_dt);
  if (n_out == 0) return out;
  set_device(dev_.ordinal());
  if (e == 0) {  // only sum reaches here (the front end rejects empty min/max/arg*)
    WICK_GPU_CHECK(gpuMemsetAsync(out->raw(), 0, n_out * dtype_size(out_dt), dev_.stream()));
    return out;
  }
  // The kept and the reduced dims, each collapsed on its own (one stride set each).
  Collapsed k = collapse_dims(kd, ks), r = collapse_dims(rd, rs);
  if (r.dims.empty()) {  // every reduced dim has size 1
    r.dims = {1};
    r.strides[0] = {1};
  }
  const unsigned wave = wave_size(dev_);
  const bool contig = r.dims.size() == 1 && r.strides[0][0] == 1;
  size_t tpr;
  if (contig) {
    tpr = e >= 1024 ? long_row_tpr(dev_, wave, n_out) : std::min<size_t>(wave, pow2_ceil(e));
  } else if (!k.dims.empty() && k.strides[0].back() == 1 && n_out >= 4096) {
    tpr = 1;
  } else {
    tpr = std::min<size_t>(wave, pow2_ceil(e));
  }
  std::vector<size_t> info = k.info();
  const std::vector<size_t> r_info = r.info();
  info.insert(info.end(), r_info.begin(), r_info.end());
  DeviceBuffer info_buf = upload(dev_, info);
  const size_t* info_ptr = static_cast<const size_t*>(info_buf.get());
  size_t nk = k.dims.size(), nr = r.dims.size();
  const void* x = at(l.start_offset());
  void* o = out->raw();
  void* args[] = {&n_out, &e, &nk, &nr, &info_ptr, &x, &o, &tpr};
  const size_t rpb = kReduceBlock / tpr;
  const size_t blocks = std::min<size_t>((n_out + rpb - 1) / rpb, size_t(1) << 20);
  dev_.launch(kname(reduce_op_name(op), dtype_), Module::Reduce, dim3(unsigned(blocks)), dim3(kReduceBlock),
              args);
  return out;
}

StoragePtr GpuStorage::cumsum(const Layout& l, size_t dim) const {
  const size_t n = l.elem_count();
  auto out = gpu_alloc(dev_, n, dtype_);
  if (n == 0) return out;
  std::shared_ptr<GpuStorage> keep;
  const void* x = contiguous_data(*this, l, keep);
  const auto& d = l.dims();
  size_t outer = 1, len = d[dim], inner = 1;
  for (size_t k = 0; k < dim; ++k) outer *= d[k];
  for (size_t k = dim + 1; k < d.size(); ++k) inner *= d[k];
  void* o = out->raw();
  // Along the last dim: the lanes a row's chunk needs (16-byte vectors of
  // kItemsPerLane a lane), rounded up to a power of two, when a wave holds them;
  // longer rows get a wave each when rows are many (as long_row_tpr), else a block.
  size_t tpr = 1;
  if (inner == 1) {
    const unsigned wave = wave_size(dev_);
    const size_t per_lane = size_t(plan::scan::kItemsPerLane) * (plan::kVectorBytes / dtype_size(dtype_));
    const size_t lanes = (len + per_lane - 1) / per_lane;
    tpr = lanes <= wave ? pow2_ceil(lanes) : long_row_tpr(dev_, wave, outer);
  }
  void* args[] = {&outer, &len, &inner, &x, &o, &tpr};
  const size_t blocks = inner > 1 ? (outer * inner + kReduceBlock - 1) / kReduceBlock
                                  : (outer + kReduceBlock / tpr - 1) / (kReduceBlock / tpr);
  dev_.launch(kname("cumsum", dtype_), Module::Reduce,
              dim3(unsigned(std::min<size_t>(blocks, size_t(1) << 20))), dim3(kReduceBlock), args);
  return out;
}

}  // namespace wick::gpu
