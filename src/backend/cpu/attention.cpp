// CPU attention and the fused rope + KV-cache write: direct loops in f64, each
// output rounded once to its dtype (the reference backend).
//
// attention: one query row (b, h, i) at a time, rows in parallel: its scores
// against the visible keys, their softmax and the weighted sum of the values, all
// in f64. Keys and values of another dtype than q are first converted to q's dtype
// (the op reads them as q's dtype), then read through their layouts as they are.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backend/cpu/cpu_storage.h"
#include "backend/cpu/strided.h"
#include "base/dispatch.h"

namespace wick {

namespace {

template <class T>
inline double ld(const T& x) {
  return convert<double, T>(x);
}

// k or v as q's dtype: the storage itself, or a contiguous converted copy.
struct AsDtype {
  const CpuStorage* s;
  Layout l;
  StoragePtr keep;
};
AsDtype as_dtype(const BackendStorage& s, const Layout& l, DType dt) {
  if (s.dtype() == dt) return {&CpuStorage::of(s), l, nullptr};
  StoragePtr c = s.to_dtype(l, dt);
  const CpuStorage* p = &CpuStorage::of(*c);
  return {p, Layout(l.shape()), std::move(c)};
}

}  // namespace

StoragePtr CpuStorage::attention(const Layout& q_l, const BackendStorage& k_s, const Layout& k_l0,
                                 const BackendStorage& v_s, const Layout& v_l0, float scale, bool causal,
                                 DeviceU32 kv_len) const {
  if (kv_len) throw_error(ErrorKind::InvalidArgument, "attention", "kv_len reaches the CPU backend");
  const auto& qd = q_l.dims();
  const size_t b = qd[0], h = qd[1], t = qd[2], d = qd[3];
  const size_t hkv = k_l0.dims()[1], s = k_l0.dims()[2], dv = v_l0.dims()[3];
  const size_t g = h / hkv;
  auto out = cpu_alloc(b * h * t * dv, dtype_);
  const AsDtype kc = as_dtype(k_s, k_l0, dtype_), vc = as_dtype(v_s, v_l0, dtype_);
  dispatch_dtype<kFloatDTypes>(dtype_, "attention", [&]<class T>() {
    const T* q = data<T>() + q_l.start_offset();
    const T* k = kc.s->data<T>() + kc.l.start_offset();
    const T* v = vc.s->data<T>() + vc.l.start_offset();
    const auto& qs = q_l.strides();
    const auto& ks = kc.l.strides();
    const auto& vs = vc.l.strides();
    T* o = out->data<T>();
    const size_t rows = b * h * t;
    cpu::parallel_for(rows, std::max<size_t>(1, (size_t(1) << 16) / std::max<size_t>(s * (d + dv), 1)),
                      [&](size_t r0, size_t r1) {
                        std::vector<double> p(s), acc(dv), qv(d);
                        for (size_t r = r0; r < r1; ++r) {
                          const size_t bi = r / (h * t), hi = (r / t) % h, i = r % t, kh = hi / g;
                          const size_t visible = causal ? s - t + i + 1 : s;
                          const T* qr = q + bi * qs[0] + hi * qs[1] + i * qs[2];
                          for (size_t c = 0; c < d; ++c) qv[c] = ld(qr[c * qs[3]]);
                          const T* kb = k + bi * ks[0] + kh * ks[1];
                          const T* vb = v + bi * vs[0] + kh * vs[1];
                          double m = -std::numeric_limits<double>::infinity();
                          for (size_t j = 0; j < visible; ++j) {
                            const T* kr = kb + j * ks[2];
                            double dot = 0.0;
                            for (size_t c = 0; c < d; ++c) dot += qv[c] * ld(kr[c * ks[3]]);
                            p[j] = double(scale) * dot;
                            m = std::isnan(p[j]) || std::isnan(m) ? std::numeric_limits<double>::quiet_NaN()
                                                                  : std::max(m, p[j]);
                          }
                          double sum = 0.0;
                          for (size_t j = 0; j < visible; ++j) sum += p[j] = std::exp(p[j] - m);
                          std::fill(acc.begin(), acc.end(), 0.0);
                          for (size_t j = 0; j < visible; ++j) {
                            const T* vr = vb + j * vs[2];
                            for (size_t c = 0; c < dv; ++c) acc[c] += p[j] * ld(vr[c * vs[3]]);
                          }
                          T* orow = o + r * dv;
                          for (size_t c = 0; c < dv; ++c) orow[c] = convert<T, double>(acc[c] / sum);
                        }
                      });
  });
  return out;
}

StoragePtr CpuStorage::rope_kv_cache(RopeKind kind, const Layout& q_l, const BackendStorage& cos_s,
                                     const Layout& cos_l, const BackendStorage& sin_s, const Layout& sin_l,
                                     const KvCacheWrite& w) const {
  const auto& qd = q_l.dims();
  const size_t b = qd[0], t = qd[1], h = qd[2], d = qd[3], half = d / 2;
  const size_t hkv = w.k_l->dims()[2], dv = w.v_l->dims()[3];
  const size_t s_k = w.k_cache_l->dims()[2], s_v = w.v_cache_l->dims()[2];
  const bool inter = kind == RopeKind::Interleaved;
  auto out = cpu_alloc(b * h * t * d, dtype_);
  dispatch_dtype<kFloatDTypes>(dtype_, "rope_kv_cache", [&]<class T>() {
    const T* cs = CpuStorage::of(cos_s).data<T>() + cos_l.start_offset();
    const T* sn = CpuStorage::of(sin_s).data<T>() + sin_l.start_offset();
    // Rotates row x (D elements, unit stride) of token ti into y (unit stride).
    auto rotate = [&]<class Y>(const T* x, size_t ti, Y* y) {
      for (size_t i = 0; i < half; ++i) {
        const size_t i0 = inter ? 2 * i : i, i1 = inter ? 2 * i + 1 : i + half;
        const double x0 = ld(x[i0]), x1 = ld(x[i1]), c = ld(cs[ti * half + i]), sv = ld(sn[ti * half + i]);
        y[i0] = convert<Y, double>(x0 * c - x1 * sv);
        y[i1] = convert<Y, double>(x0 * sv + x1 * c);
      }
    };
    const T* q = data<T>() + q_l.start_offset();
    const auto& qs = q_l.strides();
    T* o = out->data<T>();
    for (size_t bi = 0; bi < b; ++bi)
      for (size_t hi = 0; hi < h; ++hi)
        for (size_t ti = 0; ti < t; ++ti)
          rotate(q + bi * qs[0] + ti * qs[1] + hi * qs[2], ti, o + ((bi * h + hi) * t + ti) * d);
    const T* k = CpuStorage::of(*w.k).data<T>() + w.k_l->start_offset();
    const T* v = CpuStorage::of(*w.v).data<T>() + w.v_l->start_offset();
    const auto& ks = w.k_l->strides();
    const auto& vs = w.v_l->strides();
    dispatch_dtype<kFloatDTypes>(w.k_cache->dtype(), "rope_kv_cache", [&]<class K>() {
      K* kc = CpuStorage::of(*w.k_cache).data<K>() + w.k_cache_l->start_offset();
      for (size_t bi = 0; bi < b; ++bi)
        for (size_t hi = 0; hi < hkv; ++hi)
          for (size_t ti = 0; ti < t; ++ti)
            rotate(k + bi * ks[0] + ti * ks[1] + hi * ks[2], ti,
                   kc + ((bi * hkv + hi) * s_k + w.pos + ti) * d);
    });
    dispatch_dtype<kFloatDTypes>(w.v_cache->dtype(), "rope_kv_cache", [&]<class V>() {
      V* vc = CpuStorage::of(*w.v_cache).data<V>() + w.v_cache_l->start_offset();
      for (size_t bi = 0; bi < b; ++bi)
        for (size_t hi = 0; hi < hkv; ++hi)
          for (size_t ti = 0; ti < t; ++ti) {
            const T* x = v + bi * vs[0] + ti * vs[1] + hi * vs[2];
            V* y = vc + ((bi * hkv + hi) * s_v + w.pos + ti) * dv;
            for (size_t c = 0; c < dv; ++c) y[c] = convert<V, double>(ld(x[c]));
          }
    });
  });
  return out;
}

}  // namespace wick
