// Entry points of the fused nn ops (kernels/nn.cu): softmax / log-softmax over the
// last dim, rms_norm, add_rms_norm, layer_norm (one block per row), rope in its three
// layouts.
//
// Row block size: plan::nn::row_block (whole waves, 8 columns a thread up to
// plan::kMaxBlock threads); every row of up to kMaxBlock * plan::nn::kRowCache
// columns then stays in registers between its reduction and its output pass.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "backend/gpu/gpu_ops.h"
#include "base/dispatch.h"

namespace wick::gpu {

namespace {

unsigned row_block(const GpuDevice& dev, size_t cols) { return plan::nn::row_block(wave_size(dev), cols); }

unsigned row_grid(size_t rows) { return unsigned(std::min<size_t>(rows, size_t(1) << 20)); }

void check_float(DType dt, const char* op) {
  dispatch_dtype<kFloatDTypes>(dt, op, []<class T>() {});
}

// A row op (softmax, rms_norm) on contiguous rows, deferred (batch_ops.h).
batch::Op row_op(batch::Kind kind, const void* x, const void* alpha, void* y, size_t rows, size_t cols,
                 double p0 = 0) {
  batch::Op o;
  o.kind = kind;
  o.a = x;
  o.b = alpha;
  o.out = y;
  o.n = uint32_t(std::min<size_t>(rows, UINT32_MAX));
  o.cols = uint32_t(std::min<size_t>(cols, UINT32_MAX));
  o.p0 = p0;
  return o;
}

}  // namespace

StoragePtr GpuStorage::softmax_last_dim(const Layout& l, bool log) const {
  const char* op = log ? "log_softmax_last_dim" : "softmax_last_dim";
  check_float(dtype_, op);
  size_t n = l.elem_count(), cols = l.dims().back(), rows = cols ? n / cols : 0;
  auto out = gpu_alloc(dev_, n, dtype_);
  if (n == 0) return out;
  const void* x = at(l.start_offset());
  void* y = out->raw();
  if (defer_small(dev_,
                  row_op(log ? batch::Kind::LogSoftmax : batch::Kind::Softmax, x, nullptr, y, rows, cols),
                  dtype_, dtype_, n))
    return out;
  void* args[] = {&rows, &cols, &x, &y};
  static const DTypeKernels softmax(Module::Nn, "softmax"), log_softmax(Module::Nn, "log_softmax");
  dev_.launch((log ? log_softmax : softmax)[dtype_], dim3(row_grid(rows)), dim3(row_block(dev_, cols)), args);
  return out;
}

StoragePtr GpuStorage::rms_norm(const Layout& l, const BackendStorage* alpha, const Layout* alpha_l,
                                float eps) const {
  check_float(dtype_, "rms_norm");
  size_t n = l.elem_count(), cols = l.dims().back(), rows = cols ? n / cols : 0;
  auto out = gpu_alloc(dev_, n, dtype_);
  if (n == 0) return out;
  std::shared_ptr<GpuStorage> keep;
  const void* a = alpha ? contiguous_data(of(*alpha), *alpha_l, keep) : nullptr;
  const void* x = at(l.start_offset());
  void* y = out->raw();
  if (defer_small(dev_, row_op(batch::Kind::RmsNorm, x, a, y, rows, cols, eps), dtype_, dtype_, n))
    return out;
  void* args[] = {&rows, &cols, &x, &a, &y, &eps};
  static const DTypeKernels k(Module::Nn, "rms_norm");
  dev_.launch(k[dtype_], dim3(row_grid(rows)), dim3(row_block(dev_, cols)), args);
  return out;
}

StoragePair GpuStorage::add_rms_norm(const Layout& l, const BackendStorage& r_s, const Layout& r_l,
                                     const BackendStorage* alpha, const Layout* alpha_l, float eps) const {
  check_float(dtype_, "add_rms_norm");
  size_t n = l.elem_count(), cols = l.dims().back(), rows = cols ? n / cols : 0;
  auto sum = gpu_alloc(dev_, n, dtype_), out = gpu_alloc(dev_, n, dtype_);
  if (n == 0) return {sum, out};
  std::shared_ptr<GpuStorage> keep;
  const void* a = alpha ? contiguous_data(of(*alpha), *alpha_l, keep) : nullptr;
  const void* x = at(l.start_offset());
  const void* r = of(r_s).at(r_l.start_offset());
  void* sp = sum->raw();
  void* y = out->raw();
  void* args[] = {&rows, &cols, &x, &r, &a, &sp, &y, &eps};
  static const DTypeKernels k(Module::Nn, "add_rms_norm");
  dev_.launch(k[dtype_], dim3(row_grid(rows)), dim3(row_block(dev_, cols)), args);
  return {sum, out};
}

StoragePtr GpuStorage::layer_norm(const Layout& l, const BackendStorage* alpha, const Layout* alpha_l,
                                  const BackendStorage* beta, const Layout* beta_l, float eps) const {
  check_float(dtype_, "layer_norm");
  size_t n = l.elem_count(), cols = l.dims().back(), rows = cols ? n / cols : 0;
  auto out = gpu_alloc(dev_, n, dtype_);
  if (n == 0) return out;
  std::shared_ptr<GpuStorage> keep_a, keep_b;
  const void* a = alpha ? contiguous_data(of(*alpha), *alpha_l, keep_a) : nullptr;
  const void* b = beta ? contiguous_data(of(*beta), *beta_l, keep_b) : nullptr;
  const void* x = at(l.start_offset());
  void* y = out->raw();
  void* args[] = {&rows, &cols, &x, &a, &b, &y, &eps};
  static const DTypeKernels k(Module::Nn, "layer_norm");
  dev_.launch(k[dtype_], dim3(row_grid(rows)), dim3(row_block(dev_, cols)), args);
  return out;
}

StoragePtr GpuStorage::rope(RopeKind kind, const Layout& l, const BackendStorage& cos_s, const Layout& cos_l,
                            const BackendStorage& sin_s, const Layout& sin_l) const {
  check_float(dtype_, "rope");
  const auto& d = l.dims();  // (B,H,T,D), or (B,T,H,D) for Thd
  size_t n = l.elem_count(), dd = d[3], half = dd / 2;
  size_t t = kind == RopeKind::Thd ? d[1] : d[2], h = kind == RopeKind::Thd ? d[2] : d[1];
  size_t t_table = cos_l.dims()[cos_l.rank() - 2];
  size_t batch_stride = cos_l.rank() == 3 ? t_table * half : 0;
  auto out = gpu_alloc(dev_, n, dtype_);
  if (n == 0 || half == 0) return out;
  std::shared_ptr<GpuStorage> keep_c, keep_s;
  const void* c = contiguous_data(of(cos_s), cos_l, keep_c);
  const void* s = contiguous_data(of(sin_s), sin_l, keep_s);
  const void* x = at(l.start_offset());
  void* y = out->raw();
  size_t k = kind == RopeKind::HalfSplit ? 0 : kind == RopeKind::Interleaved ? 1 : 2;
  void* args[] = {&k, &n, &h, &t, &dd, &batch_stride, &x, &c, &s, &y};
  static const DTypeKernels kernels(Module::Nn, "rope");
  dev_.launch(kernels[dtype_], dim3(dev_.grid_for(n / 2)), dim3(dev_.block_size()), args);
  return out;
}

}  // namespace wick::gpu
