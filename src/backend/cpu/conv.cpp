// CPU convolutions, pooling and upsampling (NCL / NCHW).
//
// conv1d / conv2d in f32, bf16 and f16: oneDNN's convolution primitive (a 1-D
// convolution is a 2-D one with H = KH = 1). The input and kernel are handed over as
// they lie (any strides, groups as a leading kernel dim), reordered into the blocked
// layouts oneDNN picks for this CPU, and the output reordered back to NCHW. bf16 runs
// in bf16 (f32 accumulation) where oneDNN has a bf16 kernel for the CPU; f16, and bf16
// elsewhere, are converted to f32 first and the output rounded back once (oneDNN
// 2.6 has no f16 convolution on CPUs). docs/PERFORMANCE.md has the measurements.
// conv1d / conv2d in f64 (no oneDNN type): im2col + GEMM per (batch, group). The
// column matrix is (C_in/groups * KH * KW, OH * OW), so W_g (C_out/groups,
// C_in/groups*KH*KW) x col lands directly in the NCHW output without a permute.
// conv_transpose1d / conv_transpose2d: GEMM + col2im per batch: cols = W^T x X with
// W viewed (C_in, C_out*KH*KW) and X (C_in, H*W), then each column entry is added
// at oh = ih*stride + kh*dilation - padding (likewise w) when inside the output.
// Any stride, padding, output_padding and dilation; groups are split in the front end.
// 1-D ops run as the 2-D code with H = KH = 1. Compute type: f32 for f16/bf16/f32
// (rounded back once), f64 for f64. Inputs and kernels may be strided.
//
// pool2d: no padding, floor output size. Float avg sums in f64; integer avg sums in
// i64 and divides with truncation toward zero (C++ integer division). Max
// propagates NaN (any NaN in the window gives NaN, as PyTorch).
// upsample_nearest1d/2d: src = floor(dst * in / out) in exact integer math.
// upsample_bilinear2d: PyTorch's area_pixel_compute_scale / source index rules in
// f64; integer dtypes round the interpolated value half away from zero.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "backend/cpu/cpu_storage.h"
#include "backend/cpu/gemm.h"
#include "backend/cpu/isa.h"
#include "backend/cpu/onednn.h"
#include "backend/cpu/strided.h"
#include "base/dispatch.h"

namespace wick {
namespace {

// 2-D convolution geometry; a 1-D op sets h = k_h = 1, pad_h = 0, stride_h = dil_h = 1.
struct ConvGeom {
  size_t b = 0, c_in = 0, h = 0, w = 0;
  size_t c_out = 0, k_h = 0, k_w = 0;
  size_t pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  size_t groups = 1;
  size_t out_h = 0, out_w = 0;
  // input strides (b, c, h, w) and start offset, in elements
  size_t s_b = 0, s_c = 0, s_h = 0, s_w = 0, offset = 0;
};

void set_input_layout(ConvGeom& g, const Layout& l) {
  const auto& s = l.strides();
  g.offset = l.start_offset();
  if (l.rank() == 3) {
    g.s_b = s[0], g.s_c = s[1], g.s_h = 0, g.s_w = s[2];
  } else {
    g.s_b = s[0], g.s_c = s[1], g.s_h = s[2], g.s_w = s[3];
  }
}

// The kernel's elements in row-major order of its dims, in compute type C.
template <class T, class C>
std::vector<C> pack_kernel(const T* data, const Layout& k_l) {
  std::vector<C> w(k_l.elem_count());
  cpu::for_each_offset(k_l, [&](size_t i, size_t off) { w[i] = convert<C, T>(data[off]); });
  return w;
}

template <class T, class C>
void store(const C* src, T* dst, size_t n) {
  cpu::parallel_for(n, size_t(1) << 15, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) dst[i] = convert<T, C>(src[i]);
  });
}

// Source coordinate o*stride + k*dil - pad, or -1 when it falls in the padding.
inline ptrdiff_t src_coord(size_t o, size_t k, size_t stride, size_t dil, size_t pad, size_t len) {
  ptrdiff_t i = ptrdiff_t(o * stride + k * dil) - ptrdiff_t(pad);
  return i >= 0 && size_t(i) < len ? i : -1;
}

template <class T>
void conv_forward(const T* src, const ConvGeom& g, const T* kdata, const Layout& k_l, T* dst) {
  using C = compute_t<T>;
  size_t cin_g = g.c_in / g.groups, cout_g = g.c_out / g.groups;
  size_t kpos = g.k_h * g.k_w, kk = cin_g * kpos, npix = g.out_h * g.out_w;
  std::vector<C> wk = pack_kernel<T, C>(kdata, k_l);  // (c_out, cin_g * kh * kw)
  std::vector<C> col(std::max<size_t>(kk * npix, 1));
  std::vector<C> obuf(std::is_same_v<T, C> ? 0 : cout_g * npix);
  for (size_t b = 0; b < g.b; ++b) {
    for (size_t grp = 0; grp < g.groups; ++grp) {
      cpu::parallel_for(kk, (size_t(1) << 14) / std::max<size_t>(npix, 1) + 1, [&](size_t rb, size_t re) {
        for (size_t r = rb; r < re; ++r) {
          size_t c = r / kpos, kh = (r % kpos) / g.k_w, kw = r % g.k_w;
          const T* base = src + g.offset + b * g.s_b + (grp * cin_g + c) * g.s_c;
          C* row = col.data() + r * npix;
          for (size_t oh = 0; oh < g.out_h; ++oh) {
            C* orow = row + oh * g.out_w;
            ptrdiff_t ih = src_coord(oh, kh, g.stride_h, g.dil_h, g.pad_h, g.h);
            if (ih < 0) {
              std::fill(orow, orow + g.out_w, C(0));
              continue;
            }
            const T* line = base + size_t(ih) * g.s_h;
            for (size_t ow = 0; ow < g.out_w; ++ow) {
              ptrdiff_t iw = src_coord(ow, kw, g.stride_w, g.dil_w, g.pad_w, g.w);
              orow[ow] = iw < 0 ? C(0) : convert<C, T>(line[size_t(iw) * g.s_w]);
            }
          }
        }
      });
      T* out = dst + (b * g.c_out + grp * cout_g) * npix;
      C* o = std::is_same_v<T, C> ? reinterpret_cast<C*>(out) : obuf.data();
      cpu::gemm(false, false, cout_g, npix, kk, wk.data() + grp * cout_g * kk, std::max<size_t>(kk, 1),
                col.data(), std::max<size_t>(npix, 1), o, std::max<size_t>(npix, 1));
      if constexpr (!std::is_same_v<T, C>) store<T, C>(obuf.data(), out, cout_g * npix);
    }
  }
}

// Transposed convolution: kernel (c_in, c_out, kh, kw); pad_h/pad_w are the
// padding subtracted from the scattered position (output_padding only sizes the output).
template <class T>
void conv_transpose(const T* src, const ConvGeom& g, const T* kdata, const Layout& k_l, T* dst) {
  using C = compute_t<T>;
  size_t kpos = g.k_h * g.k_w, rows = g.c_out * kpos, hw = g.h * g.w, npix = g.out_h * g.out_w;
  std::vector<C> wk = pack_kernel<T, C>(kdata, k_l);  // (c_in, c_out * kh * kw)
  std::vector<C> x(std::max<size_t>(g.c_in * hw, 1)), cols(std::max<size_t>(rows * hw, 1)),
      obuf(g.c_out * npix);
  for (size_t b = 0; b < g.b; ++b) {
    cpu::parallel_for(g.c_in, (size_t(1) << 14) / std::max<size_t>(hw, 1) + 1, [&](size_t cb, size_t ce) {
      for (size_t c = cb; c < ce; ++c) {
        const T* base = src + g.offset + b * g.s_b + c * g.s_c;
        for (size_t ih = 0; ih < g.h; ++ih)
          for (size_t iw = 0; iw < g.w; ++iw)
            x[c * hw + ih * g.w + iw] = convert<C, T>(base[ih * g.s_h + iw * g.s_w]);
      }
    });
    cpu::gemm(true, false, rows, hw, g.c_in, wk.data(), std::max<size_t>(rows, 1), x.data(),
              std::max<size_t>(hw, 1), cols.data(), std::max<size_t>(hw, 1));
    // col2im: each output channel is owned by one thread, so the sums are race-free.
    cpu::parallel_for(
        g.c_out, (size_t(1) << 14) / std::max<size_t>(kpos * hw, 1) + 1, [&](size_t cb, size_t ce) {
          for (size_t co = cb; co < ce; ++co) {
            C* o = obuf.data() + co * npix;
            std::fill(o, o + npix, C(0));
            for (size_t kh = 0; kh < g.k_h; ++kh) {
              for (size_t kw = 0; kw < g.k_w; ++kw) {
                const C* crow = cols.data() + (co * kpos + kh * g.k_w + kw) * hw;
                for (size_t ih = 0; ih < g.h; ++ih) {
                  ptrdiff_t oh = ptrdiff_t(ih * g.stride_h + kh * g.dil_h) - ptrdiff_t(g.pad_h);
                  if (oh < 0 || size_t(oh) >= g.out_h) continue;
                  for (size_t iw = 0; iw < g.w; ++iw) {
                    ptrdiff_t ow = ptrdiff_t(iw * g.stride_w + kw * g.dil_w) - ptrdiff_t(g.pad_w);
                    if (ow < 0 || size_t(ow) >= g.out_w) continue;
                    o[size_t(oh) * g.out_w + size_t(ow)] += crow[ih * g.w + iw];
                  }
                }
              }
            }
          }
        });
    store<T, C>(obuf.data(), dst + b * g.c_out * npix, g.c_out * npix);
  }
}

// NCHW (or NCL viewed with H = 1) input planes: offset of plane p = (b, c).
struct Planes {
  size_t c, s_b, s_c, s_h, s_w, offset;
  size_t plane_offset(size_t p) const { return offset + (p / c) * s_b + (p % c) * s_c; }
};

Planes planes_of(const Layout& l) {
  const auto& s = l.strides();
  if (l.rank() == 3) return {l.dims()[1], s[0], s[1], 0, s[2], l.start_offset()};
  return {l.dims()[1], s[0], s[1], s[2], s[3], l.start_offset()};
}

// Runs f(plane, b, e) over output planes in parallel chunks of ~32k output elements.
template <class F>
void for_planes(size_t n_planes, size_t plane_size, F&& f) {
  cpu::parallel_for(n_planes, (size_t(1) << 15) / std::max<size_t>(plane_size, 1) + 1,
                    [&](size_t b, size_t e) {
                      for (size_t p = b; p < e; ++p) f(p);
                    });
}

template <class T>
inline constexpr bool is_int_v = std::is_integral_v<T>;

}  // namespace

namespace {

using dnnl::memory;

// Multiply-adds per thread, at least, as for the GEMM (gemm.cpp).
constexpr double kMacsPerThread = double(1 << 20);

// The convolution primitive of geometry g in type t (null where oneDNN has none, or
// only its reference loops), with weights in the layout it picks. Source and
// destination: on AVX-512 CPUs, 16-channel blocks (nChw16c, a vector of channels) for f32
// with whole blocks of channels and one group; else the layouts it picks (Debian's
// oneDNN 2.6 picks NHWC for f32, 0.2 ms slower on [4,64,56,56] x [64,64,3,3] on the
// 16-core Xeon: docs/PERFORMANCE.md).
std::shared_ptr<const cpu::onednn::Primitive> conv_primitive(const ConvGeom& g, memory::data_type t) {
  using D = memory::dim;
  const auto any = memory::format_tag::any;
  const bool blocks16 = cpu::isa() == cpu::Isa::Avx512 && t == memory::data_type::f32 && g.groups == 1 &&
                        g.c_in % 16 == 0 && g.c_out % 16 == 0;
  const auto act = blocks16 ? memory::format_tag::nChw16c : any;
  const memory::desc src({D(g.b), D(g.c_in), D(g.h), D(g.w)}, t, act),
      dst({D(g.b), D(g.c_out), D(g.out_h), D(g.out_w)}, t, act);
  const memory::desc wei =
      g.groups > 1
          ? memory::desc({D(g.groups), D(g.c_out / g.groups), D(g.c_in / g.groups), D(g.k_h), D(g.k_w)}, t,
                         any)
          : memory::desc({D(g.c_out), D(g.c_in), D(g.k_h), D(g.k_w)}, t, any);
  const memory::dims strides{D(g.stride_h), D(g.stride_w)}, dil{D(g.dil_h) - 1, D(g.dil_w) - 1},
      pad{D(g.pad_h), D(g.pad_w)};
  // The right padding that gives out_h / out_w (floor division leaves part of the
  // left padding's mirror unused when the stride does not divide).
  const memory::dims pad_r{D((g.out_h - 1) * g.stride_h + (g.k_h - 1) * g.dil_h + 1) - D(g.h) - D(g.pad_h),
                           D((g.out_w - 1) * g.stride_w + (g.k_w - 1) * g.dil_w + 1) - D(g.w) - D(g.pad_w)};
  const double macs = double(g.b * g.c_out * g.out_h * g.out_w) * double(g.c_in / g.groups * g.k_h * g.k_w);
  cpu::onednn::Key key("conv");
  key.add(src).add(wei).add(dst);
  for (D v : {strides[0], strides[1], dil[0], dil[1], pad[0], pad[1], pad_r[0], pad_r[1]}) key.add(v);
  auto p = cpu::onednn::primitive(
      key.str(),
      [&](const dnnl::primitive_attr& attr) {
        dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference,
                                          dnnl::algorithm::convolution_direct, src, wei, dst, strides, dil,
                                          pad, pad_r);
        return dnnl::convolution_forward::primitive_desc(d, attr, cpu::onednn::engine());
      },
      cpu::onednn::threads_for(macs, kMacsPerThread), "conv2d");
  return p && !p->reference ? p : nullptr;
}

// The bytes of `d` in a new buffer when it differs from `user` (reordered from
// `data`), else `data` itself.
const void* as_layout(const memory::desc& user, const void* data, const memory::desc& d,
                      std::shared_ptr<CpuStorage>& keep, const char* op) {
  if (user == d) return data;
  keep = cpu_alloc(d.get_size(), DType::U8);
  cpu::onednn::reorder(user, data, d, keep->raw(), op);
  return keep->raw();
}

// conv1d / conv2d of the float tensor x (its layout in g) through oneDNN, in x's type;
// null when oneDNN has no kernel for it.
StoragePtr conv_onednn(const char* op, const ConvGeom& g, const CpuStorage& x, const CpuStorage& k,
                       const Layout& k_l) {
  const DType t = x.dtype();
  auto p = conv_primitive(g, cpu::onednn::data_type(t));
  if (!p) return nullptr;
  using D = memory::dim;
  const auto dt = cpu::onednn::data_type(t);
  const size_t es = dtype_size(t);
  const memory::desc x_user({D(g.b), D(g.c_in), D(g.h), D(g.w)}, dt,
                            {D(g.s_b), D(g.s_c), D(g.s_h), D(g.s_w)});
  const auto& ks = k_l.strides();
  const bool one_d = k_l.rank() == 3;
  const D kh_s = one_d ? 0 : D(ks[2]), kw_s = D(ks[one_d ? 2 : 3]);
  const size_t cout_g = g.c_out / g.groups;
  const memory::desc k_user =
      g.groups > 1
          ? memory::desc({D(g.groups), D(cout_g), D(g.c_in / g.groups), D(g.k_h), D(g.k_w)}, dt,
                         {D(cout_g * ks[0]), D(ks[0]), D(ks[1]), kh_s, kw_s})
          : memory::desc({D(g.c_out), D(g.c_in), D(g.k_h), D(g.k_w)}, dt, {D(ks[0]), D(ks[1]), kh_s, kw_s});
  const memory::desc out_user({D(g.b), D(g.c_out), D(g.out_h), D(g.out_w)}, dt, memory::format_tag::nchw);
  std::shared_ptr<CpuStorage> x_keep, k_keep, o_keep;
  const void* xp =
      as_layout(x_user, static_cast<const uint8_t*>(x.raw()) + g.offset * es, p->src, x_keep, op);
  const void* kp = as_layout(k_user, static_cast<const uint8_t*>(k.raw()) + k_l.start_offset() * es,
                             p->weights, k_keep, op);
  auto out = cpu_alloc(g.b * g.c_out * g.out_h * g.out_w, t);
  void* op_dst = out->raw();
  if (p->dst != out_user) {
    o_keep = cpu_alloc(p->dst.get_size(), DType::U8);
    op_dst = o_keep->raw();
  }
  auto& e = cpu::onednn::engine();
  cpu::onednn::execute(*p,
                       {{DNNL_ARG_SRC, memory(p->src, e, const_cast<void*>(xp))},
                        {DNNL_ARG_WEIGHTS, memory(p->weights, e, const_cast<void*>(kp))},
                        {DNNL_ARG_DST, memory(p->dst, e, op_dst)}},
                       op);
  if (o_keep) cpu::onednn::reorder(p->dst, op_dst, out_user, out->raw(), op);
  return out;
}

// The four convolution entry points: geometry in, new NCHW (or NCL) storage out.
StoragePtr run_conv(const char* op, bool transposed, ConvGeom g, const CpuStorage& x, const Layout& l,
                    const BackendStorage& kernel, const Layout& k_l) {
  set_input_layout(g, l);
  if (g.b * g.c_out * g.out_h * g.out_w == 0) return cpu_alloc(0, x.dtype());
  const DType dt = x.dtype();
  const auto& k = CpuStorage::of(kernel);
  if (!transposed && dt != DType::F64 && g.c_in > 0) {
    if (dt != DType::F16) {
      if (auto out = conv_onednn(op, g, x, k, k_l)) return out;
    }
    if (dt != DType::F32) {  // f16, or bf16 without a kernel: as f32, rounded back once
      const auto xf = cpu_alloc(l.elem_count(), DType::F32), kf = cpu_alloc(k_l.elem_count(), DType::F32);
      cpu::onednn::widen(dt, x.raw(), l, xf->data<float>());
      cpu::onednn::widen(dt, k.raw(), k_l, kf->data<float>());
      ConvGeom gf = g;
      set_input_layout(gf, Layout(l.shape()));
      if (auto out = conv_onednn(op, gf, *xf, *kf, Layout(k_l.shape()))) {
        auto rounded = cpu_alloc(out->elem_count(), dt);
        cpu::onednn::narrow(dt, CpuStorage::of(*out).data<float>(), rounded->raw(), out->elem_count());
        return rounded;
      }
    }
  }
  auto out = cpu_alloc(g.b * g.c_out * g.out_h * g.out_w, dt);
  dispatch_dtype<kFloatDTypes>(dt, op, [&]<class T>() {
    const T* kd = k.data<T>();
    if (transposed) {
      conv_transpose<T>(x.data<T>(), g, kd, k_l, out->data<T>());
    } else {
      conv_forward<T>(x.data<T>(), g, kd, k_l, out->data<T>());
    }
  });
  return out;
}

// 1-D geometry as 2-D with H = KH = 1 (no padding, stride or dilation along H).
ConvGeom geom_1d(size_t b, size_t c_in, size_t l_in, size_t c_out, size_t k, size_t pad, size_t stride,
                 size_t dil, size_t l_out) {
  ConvGeom g;
  g.b = b, g.c_in = c_in, g.h = 1, g.w = l_in, g.c_out = c_out, g.k_h = 1, g.k_w = k;
  g.pad_w = pad, g.stride_w = stride, g.dil_w = dil, g.out_h = 1, g.out_w = l_out;
  return g;
}

ConvGeom geom_2d(size_t b, size_t c_in, size_t h, size_t w, size_t c_out, size_t k_h, size_t k_w, size_t pad,
                 size_t stride, size_t dil, size_t out_h, size_t out_w) {
  ConvGeom g;
  g.b = b, g.c_in = c_in, g.h = h, g.w = w, g.c_out = c_out, g.k_h = k_h, g.k_w = k_w;
  g.pad_h = g.pad_w = pad, g.stride_h = g.stride_w = stride, g.dil_h = g.dil_w = dil;
  g.out_h = out_h, g.out_w = out_w;
  return g;
}

}  // namespace

StoragePtr CpuStorage::conv1d(const Layout& l, const BackendStorage& kernel, const Layout& k_l,
                              const Conv1dParams& p) const {
  ConvGeom g =
      geom_1d(p.b_size, p.c_in, p.l_in, p.c_out, p.k_size, p.padding, p.stride, p.dilation, p.l_out());
  g.groups = p.groups;
  return run_conv("conv1d", false, g, *this, l, kernel, k_l);
}

StoragePtr CpuStorage::conv2d(const Layout& l, const BackendStorage& kernel, const Layout& k_l,
                              const Conv2dParams& p) const {
  ConvGeom g = geom_2d(p.b_size, p.c_in, p.i_h, p.i_w, p.c_out, p.k_h, p.k_w, p.padding, p.stride, p.dilation,
                       p.out_h(), p.out_w());
  g.groups = p.groups;
  return run_conv("conv2d", false, g, *this, l, kernel, k_l);
}

StoragePtr CpuStorage::conv_transpose1d(const Layout& l, const BackendStorage& kernel, const Layout& k_l,
                                        const ConvTranspose1dParams& p) const {
  ConvGeom g =
      geom_1d(p.b_size, p.c_in, p.l_in, p.c_out, p.k_size, p.padding, p.stride, p.dilation, p.l_out());
  return run_conv("conv_transpose1d", true, g, *this, l, kernel, k_l);
}

StoragePtr CpuStorage::conv_transpose2d(const Layout& l, const BackendStorage& kernel, const Layout& k_l,
                                        const ConvTranspose2dParams& p) const {
  ConvGeom g = geom_2d(p.b_size, p.c_in, p.i_h, p.i_w, p.c_out, p.k_h, p.k_w, p.padding, p.stride, p.dilation,
                       p.out_h(), p.out_w());
  return run_conv("conv_transpose2d", true, g, *this, l, kernel, k_l);
}

StoragePtr CpuStorage::pool2d(PoolOp op, const Layout& l, std::array<size_t, 2> kernel,
                              std::array<size_t, 2> stride) const {
  const auto& d = l.dims();
  size_t n_planes = d[0] * d[1], oh = (d[2] - kernel[0]) / stride[0] + 1,
         ow = (d[3] - kernel[1]) / stride[1] + 1;
  auto out = cpu_alloc(n_planes * oh * ow, dtype_);
  if (out->elem_count() == 0) return out;
  Planes pl = planes_of(l);
  dispatch_dtype(dtype_, "pool2d", [&]<class T>() {
    const T* src = data<T>();
    T* dst = out->data<T>();
    for_planes(n_planes, oh * ow, [&](size_t p) {
      const T* plane = src + pl.plane_offset(p);
      T* o = dst + p * oh * ow;
      for (size_t y = 0; y < oh; ++y) {
        for (size_t x = 0; x < ow; ++x) {
          const T* win = plane + y * stride[0] * pl.s_h + x * stride[1] * pl.s_w;
          if (op == PoolOp::Max) {
            T m = win[0];
            for (size_t i = 0; i < kernel[0]; ++i) {
              for (size_t j = 0; j < kernel[1]; ++j) {
                T v = win[i * pl.s_h + j * pl.s_w];
                if constexpr (is_int_v<T>) {
                  m = v > m ? v : m;
                } else {
                  double dv = convert<double, T>(v), dm = convert<double, T>(m);
                  if (std::isnan(dv) || (!std::isnan(dm) && dv > dm)) m = v;
                }
              }
            }
            o[y * ow + x] = m;
          } else if constexpr (is_int_v<T>) {
            int64_t sum = 0;
            for (size_t i = 0; i < kernel[0]; ++i)
              for (size_t j = 0; j < kernel[1]; ++j) sum += int64_t(win[i * pl.s_h + j * pl.s_w]);
            o[y * ow + x] = T(sum / int64_t(kernel[0] * kernel[1]));
          } else {
            double sum = 0;
            for (size_t i = 0; i < kernel[0]; ++i)
              for (size_t j = 0; j < kernel[1]; ++j) sum += convert<double, T>(win[i * pl.s_h + j * pl.s_w]);
            o[y * ow + x] = convert<T, double>(sum / double(kernel[0] * kernel[1]));
          }
        }
      }
    });
  });
  return out;
}

namespace {

// Nearest source index of each output index: floor(dst * in / out), exact.
std::vector<size_t> nearest_index(size_t in, size_t out) {
  std::vector<size_t> idx(out);
  for (size_t i = 0; i < out; ++i) idx[i] = i * in / out;
  return idx;
}

// Copies src[plane, ys[y], xs[x]] into a contiguous (planes, ys.size(), xs.size()) output.
template <class T>
void gather_planes(const T* src, const Planes& pl, size_t n_planes, const std::vector<size_t>& ys,
                   const std::vector<size_t>& xs, T* dst) {
  size_t plane_size = ys.size() * xs.size();
  for_planes(n_planes, plane_size, [&](size_t p) {
    const T* plane = src + pl.plane_offset(p);
    T* o = dst + p * plane_size;
    for (size_t y = 0; y < ys.size(); ++y)
      for (size_t x = 0; x < xs.size(); ++x) o[y * xs.size() + x] = plane[ys[y] * pl.s_h + xs[x] * pl.s_w];
  });
}

}  // namespace

StoragePtr CpuStorage::upsample_nearest1d(const Layout& l, size_t target_len) const {
  const auto& d = l.dims();
  size_t n_planes = d[0] * d[1];
  auto out = cpu_alloc(n_planes * target_len, dtype_);
  if (out->elem_count() == 0) return out;
  std::vector<size_t> ys{0}, xs = nearest_index(d[2], target_len);
  dispatch_dtype(dtype_, "upsample_nearest1d", [&]<class T>() {
    gather_planes(data<T>(), planes_of(l), n_planes, ys, xs, out->data<T>());
  });
  return out;
}

StoragePtr CpuStorage::upsample_nearest2d(const Layout& l, size_t target_h, size_t target_w) const {
  const auto& d = l.dims();
  size_t n_planes = d[0] * d[1];
  auto out = cpu_alloc(n_planes * target_h * target_w, dtype_);
  if (out->elem_count() == 0) return out;
  std::vector<size_t> ys = nearest_index(d[2], target_h), xs = nearest_index(d[3], target_w);
  dispatch_dtype(dtype_, "upsample_nearest2d", [&]<class T>() {
    gather_planes(data<T>(), planes_of(l), n_planes, ys, xs, out->data<T>());
  });
  return out;
}

namespace {

// PyTorch's linear interpolation taps along one axis: (i0, i1, lambda0, lambda1).
struct Taps {
  size_t i0, i1;
  double l0, l1;
};

std::vector<Taps> bilinear_taps(size_t in, size_t out, bool align_corners,
                                std::optional<double> scale_factor) {
  // area_pixel_compute_scale
  double scale;
  if (align_corners) {
    scale = out > 1 ? double(in - 1) / double(out - 1) : 0.0;
  } else {
    scale = scale_factor && *scale_factor > 0 ? 1.0 / *scale_factor : double(in) / double(out);
  }
  std::vector<Taps> taps(out);
  for (size_t i = 0; i < out; ++i) {
    // area_pixel_compute_source_index (linear: clamped at 0 when not align_corners)
    double src = align_corners ? scale * double(i) : std::max(scale * (double(i) + 0.5) - 0.5, 0.0);
    size_t i0 = std::min(size_t(src), in - 1);
    size_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
    double l1 = std::clamp(src - double(i0), 0.0, 1.0);
    taps[i] = {i0, i1, 1.0 - l1, l1};
  }
  return taps;
}

}  // namespace

StoragePtr CpuStorage::upsample_bilinear2d(const Layout& l, const BilinearParams& p) const {
  const auto& d = l.dims();
  size_t n_planes = d[0] * d[1];
  auto out = cpu_alloc(n_planes * p.out_h * p.out_w, dtype_);
  if (out->elem_count() == 0) return out;
  std::vector<Taps> ty = bilinear_taps(d[2], p.out_h, p.align_corners, p.scale_h);
  std::vector<Taps> tx = bilinear_taps(d[3], p.out_w, p.align_corners, p.scale_w);
  Planes pl = planes_of(l);
  dispatch_dtype(dtype_, "upsample_bilinear2d", [&]<class T>() {
    const T* src = data<T>();
    T* dst = out->data<T>();
    size_t plane_size = p.out_h * p.out_w;
    for_planes(n_planes, plane_size, [&](size_t pi) {
      const T* plane = src + pl.plane_offset(pi);
      T* o = dst + pi * plane_size;
      auto at = [&](size_t y, size_t x) { return convert<double, T>(plane[y * pl.s_h + x * pl.s_w]); };
      for (size_t y = 0; y < p.out_h; ++y) {
        const Taps& a = ty[y];
        for (size_t x = 0; x < p.out_w; ++x) {
          const Taps& b = tx[x];
          double v = a.l0 * (b.l0 * at(a.i0, b.i0) + b.l1 * at(a.i0, b.i1)) +
                     a.l1 * (b.l0 * at(a.i1, b.i0) + b.l1 * at(a.i1, b.i1));
          if constexpr (is_int_v<T>) v = std::round(v);
          o[y * p.out_w + x] = convert<T, double>(v);
        }
      }
    });
  });
  return out;
}

}  // namespace wick
