// CONV family: the non-GEMM parts of convolution, pooling and resampling, with the
// rules of src/backend/cpu/conv.cpp.
//   im2col_{dtype}: col[p, c*KH*KW + kh*KW + kw, oh*OW + ow] for batches [b0, b0+nb)
//     of a (possibly strided) NCHW input, 0 in the padding; conv = W x col (GEMM).
//     A block per column row (grid-stride over rows), threads over its pixels
//     (plan::im2col::kPixelsPerThread at a time, one vector store, when out_w is a
//     multiple of it; the scratch is 256-byte aligned).
//   col2im_{dtype}: out[p, co, oh, ow] = sum over (kh, kw) of cols[p, co*KH*KW +
//     kh*KW + kw, ih*W + iw] where oh = ih*stride + kh*dil - pad (likewise w),
//     gathered per output (no atomics), cols in the compute type.
//   avg_pool2d_{dtype} / max_pool2d_{dtype}: no padding; float avg sums in f64,
//     integer avg in i64 truncated; max propagates NaN.
//   upsample_nearest_{dtype}: src = floor(dst * in / out) exactly (1-D: h = 1).
//   upsample_bilinear_{dtype}: PyTorch's source-index rules in f64; integers round
//     half away from zero.
// Every other kernel is a grid-stride loop over its contiguous output.
#include "../conv_geom.h"
#include "functors.cuh"

namespace wk {

using ::wick::gpu::ConvGeomK;

#define WK_GRID_LOOP(t, n) \
  for (size_t t = size_t(blockIdx.x) * blockDim.x + threadIdx.x; t < (n); t += size_t(gridDim.x) * blockDim.x)

// The pixels one im2col thread writes with one vector store (launch_plan.h).
constexpr uint32_t kQuad = plan::im2col::kPixelsPerThread;

// kQuad consecutive elements, stored with one vector store.
template <class T>
struct alignas(sizeof(T) * kQuad) Quad {
  T v[kQuad];
};

// One block per column row (p, c, kh, kw) at a time, its threads over the row's
// output pixels: the row's source plane and tap offsets are computed once, and a
// pixel costs one 32-bit division (npix < 2^32: checked by the host). When out_w
// is a multiple of kQuad, a thread takes kQuad pixels of one output row (one
// division, one row check, one vector store).
template <class T>
__device__ void im2col(ConvGeomK g, size_t b0, size_t nb, const T* x, T* col) {
  const size_t kpos = g.k_h * g.k_w, kk = g.c_in * kpos;
  const uint32_t out_w = uint32_t(g.out_w), npix = uint32_t(g.out_h * g.out_w);
  const bool quad = out_w % kQuad == 0;
  for (size_t row = blockIdx.x; row < nb * kk; row += gridDim.x) {
    const size_t p = row / kk, rr = row - p * kk;
    const size_t c = rr / kpos, kr = rr - c * kpos;
    const size_t kh = kr / g.k_w, kw = kr - kh * g.k_w;
    const T* plane = x + (b0 + p) * g.s_b + c * g.s_c;
    const long long h0 = (long long)(kh * g.dil_h) - (long long)g.pad_h;
    const long long w0 = (long long)(kw * g.dil_w) - (long long)g.pad_w;
    T* dst = col + row * npix;
    if (quad) {
      for (uint32_t q = threadIdx.x; q < npix / kQuad; q += blockDim.x) {
        const uint32_t pix = q * kQuad, oh = pix / out_w, ow = pix - oh * out_w;
        const long long ih = (long long)oh * (long long)g.stride_h + h0;
        const bool row_ok = ih >= 0 && (unsigned long long)ih < g.h;
        const T* src = plane + (row_ok ? size_t(ih) * g.s_h : 0);
        Quad<T> o;
#pragma unroll
        for (uint32_t e = 0; e < kQuad; ++e) {
          const long long iw = (long long)(ow + e) * (long long)g.stride_w + w0;
          T v{};
          if (row_ok && iw >= 0 && (unsigned long long)iw < g.w) v = src[size_t(iw) * g.s_w];
          o.v[e] = v;
        }
        reinterpret_cast<Quad<T>*>(dst)[q] = o;
      }
      continue;
    }
    for (uint32_t pix = threadIdx.x; pix < npix; pix += blockDim.x) {
      const uint32_t oh = pix / out_w, ow = pix - oh * out_w;
      const long long ih = (long long)oh * (long long)g.stride_h + h0;
      const long long iw = (long long)ow * (long long)g.stride_w + w0;
      T v{};
      if (ih >= 0 && (unsigned long long)ih < g.h && iw >= 0 && (unsigned long long)iw < g.w)
        v = plane[size_t(ih) * g.s_h + size_t(iw) * g.s_w];
      dst[pix] = v;
    }
  }
}

template <class T>
__device__ void col2im(ConvGeomK g, size_t nb, const compute_t<T>* cols, T* out) {
  using C = compute_t<T>;
  const size_t kpos = g.k_h * g.k_w, hw = g.h * g.w, npix = g.out_h * g.out_w;
  WK_GRID_LOOP(t, nb * g.c_out * npix) {
    const size_t pix = t % npix, co = (t / npix) % g.c_out, p = t / (npix * g.c_out);
    const size_t oh = pix / g.out_w, ow = pix % g.out_w;
    const C* base = cols + (p * g.c_out + co) * kpos * hw;
    C acc = C(0);
    for (size_t kh = 0; kh < g.k_h; ++kh) {
      const long long nh = (long long)(oh + g.pad_h) - (long long)(kh * g.dil_h);
      if (nh < 0 || nh % (long long)g.stride_h != 0) continue;
      const size_t ih = size_t(nh) / g.stride_h;
      if (ih >= g.h) continue;
      for (size_t kw = 0; kw < g.k_w; ++kw) {
        const long long nw = (long long)(ow + g.pad_w) - (long long)(kw * g.dil_w);
        if (nw < 0 || nw % (long long)g.stride_w != 0) continue;
        const size_t iw = size_t(nw) / g.stride_w;
        if (iw >= g.w) continue;
        acc += base[(kh * g.k_w + kw) * hw + ih * g.w + iw];
      }
    }
    out[t] = from_c<T>(acc);
  }
}

using Planes = ::wick::gpu::PlanesK;
__device__ __forceinline__ size_t plane_offset(const Planes& pl, size_t p) {
  return size_t((p / pl.c) * pl.s_b + (p % pl.c) * pl.s_c);
}

template <class T, bool Max>
__device__ void pool2d(size_t n, Planes pl, size_t oh, size_t ow, size_t kh, size_t kw, size_t sh, size_t sw,
                       const T* x, T* out) {
  WK_GRID_LOOP(t, n) {
    const size_t xo = t % ow, yo = (t / ow) % oh, p = t / (ow * oh);
    const T* win = x + plane_offset(pl, p) + yo * sh * pl.s_h + xo * sw * pl.s_w;
    if constexpr (Max) {
      T m = win[0];
      for (size_t i = 0; i < kh; ++i) {
        for (size_t j = 0; j < kw; ++j) {
          const T v = win[i * pl.s_h + j * pl.s_w];
          if constexpr (is_floating_v<T>) {
            const auto dv = to_c(v), dm = to_c(m);
            if (dv != dv || (dm == dm && dv > dm)) m = v;
          } else {
            m = v > m ? v : m;
          }
        }
      }
      out[t] = m;
    } else if constexpr (is_floating_v<T>) {
      double s = 0;
      for (size_t i = 0; i < kh; ++i)
        for (size_t j = 0; j < kw; ++j) s += double(to_c(win[i * pl.s_h + j * pl.s_w]));
      out[t] = convert<T, double>(s / double(kh * kw));
    } else {
      long long s = 0;
      for (size_t i = 0; i < kh; ++i)
        for (size_t j = 0; j < kw; ++j) s += (long long)(win[i * pl.s_h + j * pl.s_w]);
      out[t] = T(s / (long long)(kh * kw));
    }
  }
}

template <class T>
__device__ void upsample_nearest(size_t n, Planes pl, size_t ih, size_t iw, size_t oh, size_t ow, const T* x,
                                 T* out) {
  WK_GRID_LOOP(t, n) {
    const size_t xo = t % ow, yo = (t / ow) % oh, p = t / (ow * oh);
    const size_t ys = yo * ih / oh, xs = xo * iw / ow;
    out[t] = x[plane_offset(pl, p) + ys * pl.s_h + xs * pl.s_w];
  }
}

struct Tap {
  size_t i0, i1;
  double l0, l1;
};

// PyTorch's area_pixel_compute_scale / area_pixel_compute_source_index (linear).
__device__ __forceinline__ Tap bilinear_tap(size_t in, size_t out, bool align, double sf, size_t i) {
  double scale;
  if (align) {
    scale = out > 1 ? double(in - 1) / double(out - 1) : 0.0;
  } else {
    scale = sf > 0 ? 1.0 / sf : double(in) / double(out);
  }
  double src = align ? scale * double(i) : scale * (double(i) + 0.5) - 0.5;
  if (!align && src < 0.0) src = 0.0;
  size_t i0 = size_t(src);
  if (i0 > in - 1) i0 = in - 1;
  const size_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
  double l1 = src - double(i0);
  l1 = l1 < 0.0 ? 0.0 : (l1 > 1.0 ? 1.0 : l1);
  return Tap{i0, i1, 1.0 - l1, l1};
}

template <class T>
__device__ void upsample_bilinear(size_t n, Planes pl, size_t ih, size_t iw, size_t oh, size_t ow,
                                  size_t align, double sh, double sw, const T* x, T* out) {
  WK_GRID_LOOP(t, n) {
    const size_t xo = t % ow, yo = (t / ow) % oh, p = t / (ow * oh);
    const Tap a = bilinear_tap(ih, oh, align != 0, sh, yo), b = bilinear_tap(iw, ow, align != 0, sw, xo);
    const T* plane = x + plane_offset(pl, p);
    auto at = [&](size_t y, size_t xx) { return double(to_c(plane[y * pl.s_h + xx * pl.s_w])); };
    double v = a.l0 * (b.l0 * at(a.i0, b.i0) + b.l1 * at(a.i0, b.i1)) +
               a.l1 * (b.l0 * at(a.i1, b.i0) + b.l1 * at(a.i1, b.i1));
    if constexpr (!is_floating_v<T>) v = round(v);
    out[t] = convert<T, double>(v);
  }
}

}  // namespace wk

#define CONV_ALL(T, SFX, ...)                                                                              \
  WICK_KERNEL avg_pool2d_##SFX(size_t n, wk::Planes pl, size_t oh, size_t ow, size_t kh, size_t kw,        \
                               size_t sh, size_t sw, const T* x, T* out) {                                 \
    wk::pool2d<T, false>(n, pl, oh, ow, kh, kw, sh, sw, x, out);                                           \
  }                                                                                                        \
  WICK_KERNEL max_pool2d_##SFX(size_t n, wk::Planes pl, size_t oh, size_t ow, size_t kh, size_t kw,        \
                               size_t sh, size_t sw, const T* x, T* out) {                                 \
    wk::pool2d<T, true>(n, pl, oh, ow, kh, kw, sh, sw, x, out);                                            \
  }                                                                                                        \
  WICK_KERNEL upsample_nearest_##SFX(size_t n, wk::Planes pl, size_t ih, size_t iw, size_t oh, size_t ow,  \
                                     const T* x, T* out) {                                                 \
    wk::upsample_nearest(n, pl, ih, iw, oh, ow, x, out);                                                   \
  }                                                                                                        \
  WICK_KERNEL upsample_bilinear_##SFX(size_t n, wk::Planes pl, size_t ih, size_t iw, size_t oh, size_t ow, \
                                      size_t align, double sh, double sw, const T* x, T* out) {            \
    wk::upsample_bilinear(n, pl, ih, iw, oh, ow, align, sh, sw, x, out);                                   \
  }
#define CONV_FLOAT(T, SFX, ...)                                                                \
  WICK_KERNEL im2col_##SFX(wk::ConvGeomK g, size_t b0, size_t nb, const T* x, T* col) {        \
    wk::im2col(g, b0, nb, x, col);                                                             \
  }                                                                                            \
  WICK_KERNEL col2im_##SFX(wk::ConvGeomK g, size_t nb, const wk::compute_t<T>* cols, T* out) { \
    wk::col2im(g, nb, cols, out);                                                              \
  }

WK_ALL_DTYPES(CONV_ALL, )
WK_FLOAT_DTYPES(CONV_FLOAT, )
