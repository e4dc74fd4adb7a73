// Entry points of the CONV family: convolutions as im2col / col2im kernels plus the
// shared GEMM (gpu_ops.h), pooling and upsampling (kernels/conv.cu).
//
// conv1d / conv2d: col = im2col(x) for a chunk of batches (all channels; at most
// ~1 GiB of columns), then per group one strided-batched GEMM
//   out[b, g*Cout/G .. ] (Cout/G x OH*OW) = W_g (Cout/G x Cin/G*KH*KW) x col[b, g]
// with W_g shared by every batch (batch stride 0), landing in NCHW directly.
// conv_transpose1d / 2d: cols[b] = W^T x X[b] (W viewed Cin x Cout*KH*KW, X[b] Cin x
// H*W; cols in the compute type), then col2im gathers each output's taps.
// 1-D ops run as 2-D with H = KH = 1. Float dtypes; compute in f32 (f64 for f64).
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "backend/gpu/conv_geom.h"
#include "backend/gpu/gpu_ops.h"
#include "base/dispatch.h"

namespace wick::gpu {

namespace {

constexpr size_t kColBytes = size_t(1) << 30;  // column scratch per chunk of batches
constexpr size_t kMaxRows = size_t(1) << 20;   // im2col grid cap (grid-stride over column rows)

ConvGeomK geom_2d(size_t c_in, size_t h, size_t w, size_t c_out, size_t k_h, size_t k_w, size_t pad,
                  size_t stride, size_t dil, size_t out_h, size_t out_w) {
  ConvGeomK g{};
  g.c_in = c_in, g.h = h, g.w = w, g.c_out = c_out, g.k_h = k_h, g.k_w = k_w;
  g.pad_h = g.pad_w = pad, g.stride_h = g.stride_w = stride, g.dil_h = g.dil_w = dil;
  g.out_h = out_h, g.out_w = out_w;
  return g;
}

ConvGeomK geom_1d(size_t c_in, size_t l_in, size_t c_out, size_t k, size_t pad, size_t stride, size_t dil,
                  size_t l_out) {
  ConvGeomK g = geom_2d(c_in, 1, l_in, c_out, 1, k, pad, stride, dil, 1, l_out);
  g.pad_h = 0, g.stride_h = 1, g.dil_h = 1;
  return g;
}

void set_strides(ConvGeomK& g, const Layout& l) {
  const auto& s = l.strides();
  if (l.rank() == 3) {
    g.s_b = s[0], g.s_c = s[1], g.s_h = 0, g.s_w = s[2];
  } else {
    g.s_b = s[0], g.s_c = s[1], g.s_h = s[2], g.s_w = s[3];
  }
}

PlanesK planes_of(const Layout& l) {
  const auto& s = l.strides();
  if (l.rank() == 3) return {l.dims()[1], s[0], s[1], 0, s[2]};
  return {l.dims()[1], s[0], s[1], s[2], s[3]};
}

StoragePtr conv_forward(const char* op, const GpuStorage& x, const Layout& l, const BackendStorage& kernel,
                        const Layout& k_l, ConvGeomK g, size_t batch, size_t groups) {
  const DType dt = x.dtype();
  if (!is_float(dt)) throw_unsupported_dtype(op, dt);
  GpuDevice& dev = x.dev();
  const size_t npix = g.out_h * g.out_w, kpos = g.k_h * g.k_w;
  auto out = gpu_alloc(dev, batch * g.c_out * npix, dt);
  if (out->elem_count() == 0) return out;
  set_strides(g, l);
  std::shared_ptr<GpuStorage> keep_w;
  const char* w = static_cast<const char*>(contiguous_data(GpuStorage::of(kernel), k_l, keep_w));
  const size_t cin_g = g.c_in / groups, cout_g = g.c_out / groups, kk = cin_g * kpos, es = dtype_size(dt);
  const size_t per_batch = g.c_in * kpos * npix;
  // Batches per im2col + GEMM round: as many as kColBytes of columns hold, split
  // evenly over the rounds (32 batches of 37.7 MB: 16 + 16, not 28 + 4).
  const size_t most = std::clamp<size_t>(kColBytes / std::max<size_t>(per_batch * es, 1), 1, batch);
  const size_t rounds = (batch + most - 1) / most, chunk = (batch + rounds - 1) / rounds;
  if (npix > size_t(UINT32_MAX))
    throw_error(ErrorKind::InvalidArgument, op,
                fmt::format("output plane of {}x{} pixels exceeds the GPU im2col's 32-bit pixel index",
                            g.out_h, g.out_w));
  // im2col: a block per column row; a small plane gets a smaller block.
  constexpr size_t kQuad = plan::im2col::kPixelsPerThread;
  const size_t row_items = g.out_w % kQuad == 0 ? npix / kQuad : npix;
  unsigned im2col_block = 64;
  while (im2col_block < 256 && im2col_block < row_items) im2col_block *= 2;
  DeviceBuffer col(dev, std::min(chunk, batch) * per_batch * es);
  const void* xp = x.at(l.start_offset());
  for (size_t b0 = 0; b0 < batch; b0 += chunk) {
    size_t nb = std::min(chunk, batch - b0);
    void* colp = col.get();
    void* args[] = {&g, &b0, &nb, &xp, &colp};
    dev.launch(kname("im2col", dt), Module::Conv,
               dim3(unsigned(std::min<size_t>(nb * kk * groups, kMaxRows))), dim3(im2col_block), args);
    for (size_t grp = 0; grp < groups; ++grp) {
      gemm(dev, dt, dt, false, false, cout_g, npix, kk, w + grp * cout_g * kk * es, kk, 0,
           static_cast<const char*>(colp) + grp * kk * npix * es, npix, per_batch,
           static_cast<char*>(out->raw()) + ((b0 * g.c_out + grp * cout_g) * npix) * es, npix, g.c_out * npix,
           nb);
    }
  }
  return out;
}

StoragePtr conv_transposed(const char* op, const GpuStorage& x, const Layout& l, const BackendStorage& kernel,
                           const Layout& k_l, ConvGeomK g, size_t batch) {
  const DType dt = x.dtype();
  if (!is_float(dt)) throw_unsupported_dtype(op, dt);
  GpuDevice& dev = x.dev();
  const size_t npix = g.out_h * g.out_w, kpos = g.k_h * g.k_w, hw = g.h * g.w, rows = g.c_out * kpos;
  auto out = gpu_alloc(dev, batch * g.c_out * npix, dt);
  if (out->elem_count() == 0) return out;
  std::shared_ptr<GpuStorage> keep_x, keep_w;
  const char* xp = static_cast<const char*>(contiguous_data(x, l, keep_x));
  const void* w = contiguous_data(GpuStorage::of(kernel), k_l, keep_w);
  const DType c_dt = dt == DType::F64 ? DType::F64 : DType::F32;
  const size_t es = dtype_size(dt), cs = dtype_size(c_dt);
  const size_t per_batch = rows * hw;
  const size_t chunk = std::clamp<size_t>(kColBytes / std::max<size_t>(per_batch * cs, 1), 1, batch);
  DeviceBuffer cols(dev, std::min(chunk, batch) * per_batch * cs);
  for (size_t b0 = 0; b0 < batch; b0 += chunk) {
    size_t nb = std::min(chunk, batch - b0);
    void* colp = cols.get();
    gemm(dev, dt, c_dt, true, false, rows, hw, g.c_in, w, rows, 0, xp + b0 * g.c_in * hw * es, hw,
         g.c_in * hw, colp, hw, per_batch, nb);
    void* o = static_cast<char*>(out->raw()) + b0 * g.c_out * npix * es;
    void* args[] = {&g, &nb, &colp, &o};
    dev.launch(kname("col2im", dt), Module::Conv, dim3(dev.grid_for(nb * g.c_out * npix)),
               dim3(dev.block_size()), args);
  }
  return out;
}

}  // namespace

StoragePtr GpuStorage::conv1d(const Layout& l, const BackendStorage& kernel, const Layout& k_l,
                              const Conv1dParams& p) const {
  ConvGeomK g = geom_1d(p.c_in, p.l_in, p.c_out, p.k_size, p.padding, p.stride, p.dilation, p.l_out());
  return conv_forward("conv1d", *this, l, kernel, k_l, g, p.b_size, p.groups);
}

StoragePtr GpuStorage::conv2d(const Layout& l, const BackendStorage& kernel, const Layout& k_l,
                              const Conv2dParams& p) const {
  ConvGeomK g = geom_2d(p.c_in, p.i_h, p.i_w, p.c_out, p.k_h, p.k_w, p.padding, p.stride, p.dilation,
                        p.out_h(), p.out_w());
  return conv_forward("conv2d", *this, l, kernel, k_l, g, p.b_size, p.groups);
}

StoragePtr GpuStorage::conv_transpose1d(const Layout& l, const BackendStorage& kernel, const Layout& k_l,
                                        const ConvTranspose1dParams& p) const {
  ConvGeomK g = geom_1d(p.c_in, p.l_in, p.c_out, p.k_size, p.padding, p.stride, p.dilation, p.l_out());
  return conv_transposed("conv_transpose1d", *this, l, kernel, k_l, g, p.b_size);
}

StoragePtr GpuStorage::conv_transpose2d(const Layout& l, const BackendStorage& kernel, const Layout& k_l,
                                        const ConvTranspose2dParams& p) const {
  ConvGeomK g = geom_2d(p.c_in, p.i_h, p.i_w, p.c_out, p.k_h, p.k_w, p.padding, p.stride, p.dilation,
                        p.out_h(), p.out_w());
  return conv_transposed("conv_transpose2d", *this, l, kernel, k_l, g, p.b_size);
}

StoragePtr GpuStorage::pool2d(PoolOp op, const Layout& l, std::array<size_t, 2> kernel,
                              std::array<size_t, 2> stride) const {
  const auto& d = l.dims();
  size_t oh = (d[2] - kernel[0]) / stride[0] + 1, ow = (d[3] - kernel[1]) / stride[1] + 1;
  size_t n = d[0] * d[1] * oh * ow;
  auto out = gpu_alloc(dev_, n, dtype_);
  if (n == 0) return out;
  PlanesK pl = planes_of(l);
  const void* x = at(l.start_offset());
  void* o = out->raw();
  size_t kh = kernel[0], kw = kernel[1], sh = stride[0], sw = stride[1];
  void* args[] = {&n, &pl, &oh, &ow, &kh, &kw, &sh, &sw, &x, &o};
  dev_.launch(kname(op == PoolOp::Avg ? "avg_pool2d" : "max_pool2d", dtype_), Module::Conv,
              dim3(dev_.grid_for(n)), dim3(dev_.block_size()), args);
  return out;
}

namespace {

StoragePtr upsample_nearest(const GpuStorage& s, const Layout& l, size_t ih, size_t iw, size_t oh,
                            size_t ow) {
  const auto& d = l.dims();
  size_t n = d[0] * d[1] * oh * ow;
  auto out = gpu_alloc(s.dev(), n, s.dtype());
  if (n == 0) return out;
  PlanesK pl = planes_of(l);
  const void* x = s.at(l.start_offset());
  void* o = out->raw();
  void* args[] = {&n, &pl, &ih, &iw, &oh, &ow, &x, &o};
  s.dev().launch(kname("upsample_nearest", s.dtype()), Module::Conv, dim3(s.dev().grid_for(n)),
                 dim3(s.dev().block_size()), args);
  return out;
}

}  // namespace

StoragePtr GpuStorage::upsample_nearest1d(const Layout& l, size_t target_len) const {
  return upsample_nearest(*this, l, 1, l.dims()[2], 1, target_len);
}

StoragePtr GpuStorage::upsample_nearest2d(const Layout& l, size_t target_h, size_t target_w) const {
  return upsample_nearest(*this, l, l.dims()[2], l.dims()[3], target_h, target_w);
}

StoragePtr GpuStorage::upsample_bilinear2d(const Layout& l, const BilinearParams& p) const {
  const auto& d = l.dims();
  size_t n = d[0] * d[1] * p.out_h * p.out_w;
  auto out = gpu_alloc(dev_, n, dtype_);
  if (n == 0) return out;
  PlanesK pl = planes_of(l);
  const void* x = at(l.start_offset());
  void* o = out->raw();
  size_t ih = d[2], iw = d[3], oh = p.out_h, ow = p.out_w, align = p.align_corners ? 1 : 0;
  double sh = p.scale_h.value_or(0.0), sw = p.scale_w.value_or(0.0);
  void* args[] = {&n, &pl, &ih, &iw, &oh, &ow, &align, &sh, &sw, &x, &o};
  dev_.launch(kname("upsample_bilinear", dtype_), Module::Conv, dim3(dev_.grid_for(n)),
              dim3(dev_.block_size()), args);
  return out;
}

}  // namespace wick::gpu
