// CPU fused nn ops: softmax / log-softmax over the last dim, rms_norm, layer_norm
// and rotary embeddings. Inputs are contiguous (the front end copies first; the
// start offset may be non-zero). Rows run in parallel on the CPU backend's threads.
// Every dtype computes and accumulates in f64 and rounds once on store (the
// reference backend: f16/bf16 accumulate at least as wide as f32, as required);
// softmax, rms_norm, add_rms_norm and layer_norm on f32/f16/bf16 through the vector
// row kernels of simd.h (the f64 loops below, in vectors: the f64 loops' per-element
// f64 -> f16/bf16 rounding made bf16 rms_norm 13x slower than f32).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backend/cpu/cpu_storage.h"
#include "backend/cpu/simd.h"
#include "backend/cpu/strided.h"
#include "base/dispatch.h"

namespace wick {
namespace {

// Runs f(row) for each of `rows` rows of `cols` elements, ~16k elements per chunk.
template <class F>
void for_rows(size_t rows, size_t cols, F&& f) {
  cpu::parallel_for(rows, (size_t(1) << 14) / std::max<size_t>(cols, 1) + 1, [&](size_t b, size_t e) {
    for (size_t r = b; r < e; ++r) f(r);
  });
}

template <class T>
inline double ld(const T& x) {
  return convert<double, T>(x);
}

// The 1-D parameter vector (alpha or beta) in f64, or empty when absent.
template <class T>
std::vector<double> param_vector(const BackendStorage* s, const Layout* l) {
  if (!s) return {};
  const T* p = CpuStorage::of(*s).data<T>() + l->start_offset();
  std::vector<double> v(l->elem_count());
  for (size_t i = 0; i < v.size(); ++i) v[i] = ld(p[i]);
  return v;
}

// The dtypes whose norm rows run through the vector row kernels of simd.h (f64 math,
// one rounding: the results of the f64 loops below, in vectors).
bool has_row_kernels(DType dt) { return dt == DType::F32 || dt == DType::F16 || dt == DType::BF16; }

// The 1-D parameter vector (alpha or beta) of a dtype with row kernels, in f64, or
// empty when absent.
std::vector<double> param_f64(const BackendStorage* s, const Layout* l) {
  if (!s) return {};
  std::vector<double> v;
  dispatch_dtype<kFloatDTypes>(CpuStorage::of(*s).dtype(), "norm",
                               [&]<class T>() { v = param_vector<T>(s, l); });
  return v;
}

}  // namespace

StoragePtr CpuStorage::softmax_last_dim(const Layout& l, bool log) const {
  size_t n = l.elem_count(), cols = l.dims().back(), rows = cols ? n / cols : 0;
  auto out = cpu_alloc(n, dtype_);
  if (n == 0) return out;
  if (dtype_ == DType::F32 || dtype_ == DType::F16 || dtype_ == DType::BF16) {
    const size_t es = dtype_size(dtype_);
    const char* src = static_cast<const char*>(raw()) + l.start_offset() * es;
    char* dst = static_cast<char*>(out->raw());
    for_rows(rows, cols, [&](size_t r) {
      thread_local std::vector<double> e;  // exp(x - max) of the row
      e.resize(cpu::simd::softmax_scratch(cols));
      cpu::simd::softmax_row(dtype_, src + r * cols * es, dst + r * cols * es, cols, log, e.data());
    });
    return out;
  }
  dispatch_dtype<kFloatDTypes>(dtype_, log ? "log_softmax_last_dim" : "softmax_last_dim", [&]<class T>() {
    const T* src = data<T>() + l.start_offset();
    T* dst = out->data<T>();
    for_rows(rows, cols, [&](size_t r) {
      const T* x = src + r * cols;
      T* y = dst + r * cols;
      double m = -std::numeric_limits<double>::infinity();
      bool nan = false;
      for (size_t i = 0; i < cols; ++i) {
        double v = ld(x[i]);
        nan |= std::isnan(v);
        m = std::max(m, v);
      }
      if (nan) m = std::numeric_limits<double>::quiet_NaN();
      thread_local std::vector<double> e;  // exp(x - max) of the row, computed once
      e.resize(cols);
      double sum = 0;
      for (size_t i = 0; i < cols; ++i) sum += e[i] = std::exp(ld(x[i]) - m);
      if (log) {
        double lse = m + std::log(sum);
        for (size_t i = 0; i < cols; ++i) y[i] = convert<T, double>(ld(x[i]) - lse);
      } else {
        double inv = 1.0 / sum;
        for (size_t i = 0; i < cols; ++i) y[i] = convert<T, double>(e[i] * inv);
      }
    });
  });
  return out;
}

StoragePtr CpuStorage::rms_norm(const Layout& l, const BackendStorage* alpha, const Layout* alpha_l,
                                float eps) const {
  size_t n = l.elem_count(), cols = l.dims().back(), rows = cols ? n / cols : 0;
  auto out = cpu_alloc(n, dtype_);
  if (n == 0) return out;
  if (has_row_kernels(dtype_)) {
    const size_t es = dtype_size(dtype_);
    const char* src = static_cast<const char*>(raw()) + l.start_offset() * es;
    char* dst = static_cast<char*>(out->raw());
    const std::vector<double> a = param_f64(alpha, alpha_l);
    for_rows(rows, cols, [&](size_t r) {
      const char* x = src + r * cols * es;
      const double ss = cpu::simd::moment_row(dtype_, x, cols, 0.0, true);
      const double scale = 1.0 / std::sqrt(ss / double(cols) + double(eps));
      cpu::simd::scale_row(dtype_, x, dst + r * cols * es, cols, 0.0, scale, a.empty() ? nullptr : a.data(),
                           nullptr);
    });
    return out;
  }
  dispatch_dtype<kFloatDTypes>(dtype_, "rms_norm", [&]<class T>() {
    const T* src = data<T>() + l.start_offset();
    T* dst = out->data<T>();
    std::vector<double> a = param_vector<T>(alpha, alpha_l);
    for_rows(rows, cols, [&](size_t r) {
      const T* x = src + r * cols;
      T* y = dst + r * cols;
      double ss = 0;
      for (size_t i = 0; i < cols; ++i) ss += ld(x[i]) * ld(x[i]);
      double scale = 1.0 / std::sqrt(ss / double(cols) + double(eps));
      for (size_t i = 0; i < cols; ++i)
        y[i] = convert<T, double>(ld(x[i]) * scale * (a.empty() ? 1.0 : a[i]));
    });
  });
  return out;
}

StoragePair CpuStorage::add_rms_norm(const Layout& l, const BackendStorage& r_s, const Layout& r_l,
                                     const BackendStorage* alpha, const Layout* alpha_l, float eps) const {
  size_t n = l.elem_count(), cols = l.dims().back(), rows = cols ? n / cols : 0;
  auto sum = cpu_alloc(n, dtype_), out = cpu_alloc(n, dtype_);
  if (n == 0) return {sum, out};
  if (has_row_kernels(dtype_)) {
    const size_t es = dtype_size(dtype_);
    const char* xs = static_cast<const char*>(raw()) + l.start_offset() * es;
    const char* rs = static_cast<const char*>(CpuStorage::of(r_s).raw()) + r_l.start_offset() * es;
    char* ps = static_cast<char*>(sum->raw());
    char* dst = static_cast<char*>(out->raw());
    const std::vector<double> a = param_f64(alpha, alpha_l);
    for_rows(rows, cols, [&](size_t r) {
      const size_t off = r * cols * es;
      cpu::simd::add_row(dtype_, xs + off, rs + off, ps + off, cols);  // as add
      const double ss = cpu::simd::moment_row(dtype_, ps + off, cols, 0.0, true);
      const double scale = 1.0 / std::sqrt(ss / double(cols) + double(eps));
      cpu::simd::scale_row(dtype_, ps + off, dst + off, cols, 0.0, scale, a.empty() ? nullptr : a.data(),
                           nullptr);
    });
    return {sum, out};
  }
  dispatch_dtype<kFloatDTypes>(dtype_, "add_rms_norm", [&]<class T>() {
    using C = compute_t<T>;
    const T* xs = data<T>() + l.start_offset();
    const T* rs = CpuStorage::of(r_s).data<T>() + r_l.start_offset();
    T* ps = sum->data<T>();
    T* dst = out->data<T>();
    std::vector<double> a = param_vector<T>(alpha, alpha_l);
    for_rows(rows, cols, [&](size_t r) {
      const T* x = xs + r * cols;
      const T* rr = rs + r * cols;
      T* p = ps + r * cols;
      T* y = dst + r * cols;
      double ss = 0;
      for (size_t i = 0; i < cols; ++i) {
        p[i] = T(C(x[i]) + C(rr[i]));  // as add: in the compute type, rounded once
        ss += ld(p[i]) * ld(p[i]);
      }
      double scale = 1.0 / std::sqrt(ss / double(cols) + double(eps));
      for (size_t i = 0; i < cols; ++i)
        y[i] = convert<T, double>(ld(p[i]) * scale * (a.empty() ? 1.0 : a[i]));
    });
  });
  return {sum, out};
}

StoragePtr CpuStorage::layer_norm(const Layout& l, const BackendStorage* alpha, const Layout* alpha_l,
                                  const BackendStorage* beta, const Layout* beta_l, float eps) const {
  size_t n = l.elem_count(), cols = l.dims().back(), rows = cols ? n / cols : 0;
  auto out = cpu_alloc(n, dtype_);
  if (n == 0) return out;
  if (has_row_kernels(dtype_)) {
    const size_t es = dtype_size(dtype_);
    const char* src = static_cast<const char*>(raw()) + l.start_offset() * es;
    char* dst = static_cast<char*>(out->raw());
    const std::vector<double> a = param_f64(alpha, alpha_l), b = param_f64(beta, beta_l);
    for_rows(rows, cols, [&](size_t r) {
      const char* x = src + r * cols * es;
      const double mean = cpu::simd::moment_row(dtype_, x, cols, 0.0, false) / double(cols);
      // biased: the mean of squared deviations (two passes, no cancellation)
      const double var = cpu::simd::moment_row(dtype_, x, cols, mean, true);
      const double rstd = 1.0 / std::sqrt(var / double(cols) + double(eps));
      cpu::simd::scale_row(dtype_, x, dst + r * cols * es, cols, mean, rstd, a.empty() ? nullptr : a.data(),
                           b.empty() ? nullptr : b.data());
    });
    return out;
  }
  dispatch_dtype<kFloatDTypes>(dtype_, "layer_norm", [&]<class T>() {
    const T* src = data<T>() + l.start_offset();
    T* dst = out->data<T>();
    std::vector<double> a = param_vector<T>(alpha, alpha_l), b = param_vector<T>(beta, beta_l);
    for_rows(rows, cols, [&](size_t r) {
      const T* x = src + r * cols;
      T* y = dst + r * cols;
      double mean = 0;
      for (size_t i = 0; i < cols; ++i) mean += ld(x[i]);
      mean /= double(cols);
      double var = 0;  // biased: the mean of squared deviations (two passes, no cancellation)
      for (size_t i = 0; i < cols; ++i) var += (ld(x[i]) - mean) * (ld(x[i]) - mean);
      double rstd = 1.0 / std::sqrt(var / double(cols) + double(eps));
      for (size_t i = 0; i < cols; ++i) {
        double v = (ld(x[i]) - mean) * rstd;
        if (!a.empty()) v *= a[i];
        if (!b.empty()) v += b[i];
        y[i] = convert<T, double>(v);
      }
    });
  });
  return out;
}

StoragePtr CpuStorage::rope(RopeKind kind, const Layout& l, const BackendStorage& cos_s, const Layout& cos_l,
                            const BackendStorage& sin_s, const Layout& sin_l) const {
  const auto& d = l.dims();  // (B,H,T,D), or (B,T,H,D) for Thd
  size_t n = l.elem_count(), dd = d[3], half = dd / 2;
  size_t t = kind == RopeKind::Thd ? d[1] : d[2], h = kind == RopeKind::Thd ? d[2] : d[1];
  size_t t_table = cos_l.dims()[cos_l.rank() - 2];  // T' >= T rows; row i serves position i
  size_t batch_stride = cos_l.rank() == 3 ? t_table * half : 0;
  auto out = cpu_alloc(n, dtype_);
  if (n == 0 || half == 0) return out;
  dispatch_dtype<kFloatDTypes>(dtype_, "rope", [&]<class T>() {
    const T* src = data<T>() + l.start_offset();
    const T* cos = CpuStorage::of(cos_s).data<T>() + cos_l.start_offset();
    const T* sin = CpuStorage::of(sin_s).data<T>() + sin_l.start_offset();
    T* dst = out->data<T>();
    for_rows(n / dd, dd, [&](size_t r) {
      size_t bi = r / (h * t), ti = kind == RopeKind::Thd ? (r / h) % t : r % t;
      const T* c = cos + bi * batch_stride + ti * half;
      const T* s = sin + bi * batch_stride + ti * half;
      const T* x = src + r * dd;
      T* y = dst + r * dd;
      for (size_t i = 0; i < half; ++i) {
        // half-split pairs (i, i + D/2); interleaved pairs (2i, 2i + 1)
        size_t i0 = kind == RopeKind::Interleaved ? 2 * i : i;
        size_t i1 = kind == RopeKind::Interleaved ? 2 * i + 1 : i + half;
        double x0 = ld(x[i0]), x1 = ld(x[i1]), cv = ld(c[i]), sv = ld(s[i]);
        y[i0] = convert<T, double>(x0 * cv - x1 * sv);
        y[i1] = convert<T, double>(x0 * sv + x1 * cv);
      }
    });
  });
  return out;
}

}  // namespace wick
