// Entry points of the REDUCE family: sum / min / max / argmin / argmax over any
// set of dims, and cumsum (kernels/reduce.cu; along the last dim a part of a wave, a
// wave or a block scans each row in coalesced chunks: plan::scan::threads_per_row).
//
// The input's kept dims and reduced dims are collapsed separately; each output
// reduces its reduced positions with `tpr` cooperating threads
// (plan::reduce::threads_per_output): a wave or a block per contiguous reduced run,
// read as 16-byte vectors (kernels/reduce.cu: scan_vec); one thread per output where
// the kept innermost dim has unit stride; else a wave per output.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>

#include "backend/gpu/gpu_ops.h"

namespace wick::gpu {

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
  // A small sum / min / max over the last dims of a contiguous input runs deferred.
  if ((op == ReduceOp::Sum || op == ReduceOp::Min || op == ReduceOp::Max) && l.is_contiguous() &&
      std::is_sorted(is_red.begin(), is_red.end())) {
    batch::Op b;
    b.kind = batch::Kind::Reduce;
    b.op = uint8_t(op);
    b.a = at(l.start_offset());
    b.out = out->raw();
    b.n = uint32_t(std::min<size_t>(n_out, UINT32_MAX));
    b.cols = uint32_t(std::min<size_t>(e, UINT32_MAX));
    // One block of plan::reduce::kBlock threads: the rule of a device with one multiprocessor.
    static_assert(batch::kBlock == plan::reduce::kBlock, "reduce_rows sizes tpr for its own block");
    b.tpr = uint32_t(
        plan::reduce::threads_per_output(wave_size(dev_), 1, plan::reduce::Shape::ContiguousRun, e, n_out));
    if (defer_small(dev_, b, dtype_, out_dt, n_out * e)) return out;
  }
  // The kept and the reduced dims, each collapsed on its own (one stride set each).
  Collapsed k = collapse_dims(kd, ks), r = collapse_dims(rd, rs);
  if (r.dims.empty()) {  // every reduced dim has size 1
    r.dims = {1};
    r.strides[0] = {1};
  }
  using plan::reduce::Shape;
  const Shape shape = r.dims.size() == 1 && r.strides[0][0] == 1    ? Shape::ContiguousRun
                      : !k.dims.empty() && k.strides[0].back() == 1 ? Shape::UnitStrideKept
                                                                    : Shape::Strided;
  size_t tpr = plan::reduce::threads_per_output(
      wave_size(dev_), size_t(std::max(dev_.props().multiprocessors, 0)), shape, e, n_out);
  std::vector<size_t> info = k.info();
  const std::vector<size_t> r_info = r.info();
  info.insert(info.end(), r_info.begin(), r_info.end());
  DeviceBuffer info_buf = upload(dev_, info);
  const size_t* info_ptr = static_cast<const size_t*>(info_buf.get());
  size_t nk = k.dims.size(), nr = r.dims.size();
  const void* x = at(l.start_offset());
  void* o = out->raw();
  void* args[] = {&n_out, &e, &nk, &nr, &info_ptr, &x, &o, &tpr};
  const size_t rpb = plan::reduce::kBlock / tpr;
  const size_t blocks = std::min<size_t>((n_out + rpb - 1) / rpb, size_t(1) << 20);
  static const auto kernels = [] {
    std::array<std::optional<DTypeKernels>, kNumReduceOps> k;
    for (size_t o = 0; o < kNumReduceOps; ++o) k[o].emplace(Module::Reduce, kReduceOpNames[o]);
    return k;
  }();
  dev_.launch((*kernels[size_t(op)])[dtype_], dim3(unsigned(blocks)), dim3(plan::reduce::kBlock), args);
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
  // Along the last dim: plan::scan::threads_per_row threads a row.
  size_t tpr = inner == 1 ? plan::scan::threads_per_row(wave_size(dev_),
                                                        size_t(std::max(dev_.props().multiprocessors, 0)),
                                                        dtype_size(dtype_), len, outer)
                          : 1;
  constexpr size_t block = plan::reduce::kBlock;
  void* args[] = {&outer, &len, &inner, &x, &o, &tpr};
  const size_t blocks =
      inner > 1 ? (outer * inner + block - 1) / block : (outer + block / tpr - 1) / (block / tpr);
  static const DTypeKernels cumsum(Module::Reduce, "cumsum");
  dev_.launch(cumsum[dtype_], dim3(unsigned(std::min<size_t>(blocks, size_t(1) << 20))),
              dim3(unsigned(block)), args);
  return out;
}

}  // namespace wick::gpu
