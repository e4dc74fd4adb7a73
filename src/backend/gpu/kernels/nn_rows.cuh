// The row ops of the NN family as block-level device functions (one block a row,
// grid-stride over rows): softmax_rows, rms_norm_rows, add_rms_norm_rows,
// layer_norm_rows and rope, instantiated by kernels/nn.cu and run for small eager
// ops by kernels/batch.cu. See kernels/nn.cu for their semantics.
#pragma once

#include "wave.cuh"

namespace wk {

// Elements each thread keeps in registers (launch_plan.h).
constexpr int kCache = plan::nn::kRowCache;

template <class C>
struct MaxNan {
  __device__ __forceinline__ C operator()(C a, C b) const {
    if (a != a) return a;
    if (b != b) return b;
    return b > a ? b : a;
  }
};
struct Add {
  template <class C>
  __device__ __forceinline__ C operator()(C a, C b) const {
    return a + b;
  }
};

// exp(d) for the cached softmax's d = x - max <= 0 (or NaN): expf (exp2f(d * log2 e)
// was measured no faster once the block combine was cheap, and costs up to |d| *
// 2^-24 relative error).
__device__ __forceinline__ float exp_shift(float d) { return expf(d); }
__device__ __forceinline__ double exp_shift(double d) { return exp(d); }
__device__ __forceinline__ float fmax_c(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double fmax_c(double a, double b) { return fmax(a, b); }
__device__ __forceinline__ float log_c(float x) { return logf(x); }
__device__ __forceinline__ double log_c(double x) { return log(x); }
__device__ __forceinline__ float sqrt_c(float x) { return sqrtf(x); }
// a / b within 2 ulps for f32 (no slow path for special operands); f64 divides.
__device__ __forceinline__ float div_approx(float a, float b) { return __fdividef(a, b); }
__device__ __forceinline__ double div_approx(double a, double b) { return a / b; }
__device__ __forceinline__ double sqrt_c(double x) { return sqrt(x); }

// One row held by the block: slot s of thread t is element
//   vector path: (t + (s / V) * blockDim) * V + s % V   (16-byte loads)
//   scalar path: t + s * blockDim
template <class T>
struct RowCache {
  using C = compute_t<T>;
  static constexpr int V = int(plan::kVectorBytes / sizeof(T));
  C v[kCache];
  bool vec;

  __device__ __forceinline__ void load(const T* p, size_t n, C fill) {
    if (vec) {
      const Vec<T, V>* pv = reinterpret_cast<const Vec<T, V>*>(p);
      const size_t nv = n / V;
#pragma unroll
      for (int k = 0; k < kCache / V; ++k) {
        const size_t vi = threadIdx.x + size_t(k) * blockDim.x;
        if (vi < nv) {
          const Vec<T, V> w = pv[vi];
#pragma unroll
          for (int j = 0; j < V; ++j) v[k * V + j] = to_c(w.v[j]);
        } else {
#pragma unroll
          for (int j = 0; j < V; ++j) v[k * V + j] = fill;
        }
      }
    } else {
#pragma unroll
      for (int s = 0; s < kCache; ++s) {
        const size_t i = threadIdx.x + size_t(s) * blockDim.x;
        v[s] = i < n ? to_c(p[i]) : fill;
      }
    }
  }
  // q[index(s)] = f(v[s], index(s)) for every slot inside the row.
  template <class F>
  __device__ __forceinline__ void store(T* q, size_t n, const F& f) const {
    if (vec) {
      Vec<T, V>* qv = reinterpret_cast<Vec<T, V>*>(q);
      const size_t nv = n / V;
#pragma unroll
      for (int k = 0; k < kCache / V; ++k) {
        const size_t vi = threadIdx.x + size_t(k) * blockDim.x;
        if (vi < nv) {
          Vec<T, V> w;
#pragma unroll
          for (int j = 0; j < V; ++j) w.v[j] = from_c<T>(f(v[k * V + j], vi * V + j));
          qv[vi] = w;
        }
      }
    } else {
#pragma unroll
      for (int s = 0; s < kCache; ++s) {
        const size_t i = threadIdx.x + size_t(s) * blockDim.x;
        if (i < n) q[i] = from_c<T>(f(v[s], i));
      }
    }
  }
  // Vector path only: q = (v - mean) * rstd, times alpha, plus beta (n values
  // each, or null, 16-byte aligned) for every slot inside the row.
  __device__ __forceinline__ void store_norm(T* q, size_t n, const T* alpha, const T* beta, C mean,
                                             C rstd) const {
    const Vec<T, V>*pa = reinterpret_cast<const Vec<T, V>*>(alpha),
                 *pb = reinterpret_cast<const Vec<T, V>*>(beta);
    Vec<T, V>* qv = reinterpret_cast<Vec<T, V>*>(q);
    const size_t nv = n / V;
#pragma unroll
    for (int k = 0; k < kCache / V; ++k) {
      const size_t vi = threadIdx.x + size_t(k) * blockDim.x;
      if (vi < nv) {
        Vec<T, V> a{}, b{}, w;
        if (alpha) a = pa[vi];
        if (beta) b = pb[vi];
#pragma unroll
        for (int j = 0; j < V; ++j) {
          C o = (v[k * V + j] - mean) * rstd;
          if (alpha) o *= to_c(a.v[j]);
          if (beta) o += to_c(b.v[j]);
          w.v[j] = from_c<T>(o);
        }
        qv[vi] = w;
      }
    }
  }
  // Vector path only: how many of this thread's slots lie inside a row of n (<=
  // kCache * blockDim) elements; the inside slots are the first ones.
  __device__ __forceinline__ int inside(size_t n) const {
    const uint32_t nv = uint32_t(n) / V;
    int c = 0;
#pragma unroll
    for (int k = 0; k < kCache / V; ++k) c += threadIdx.x + uint32_t(k) * blockDim.x < nv ? V : 0;
    return c;
  }
  template <class Op>
  __device__ __forceinline__ C fold(C init, const Op& op) const {
    C a = init;
#pragma unroll
    for (int s = 0; s < kCache; ++s) a = op(a, v[s]);
    return a;
  }
};

template <class T>
__device__ __forceinline__ bool cacheable(size_t n) {
  return n <= size_t(kCache) * blockDim.x;
}
template <class T>
__device__ __forceinline__ bool use_vec(const T* p, const T* q, size_t n) {
  constexpr int V = int(plan::kVectorBytes / sizeof(T));
  return n % V == 0 && aligned16(p) && aligned16(q);
}

// Fold f(x_i) over a row in global memory (the long-row path).
template <class T, class F, class Op>
__device__ __forceinline__ compute_t<T> fold_global(const T* p, size_t n, compute_t<T> init, const F& f,
                                                    const Op& op) {
  compute_t<T> a = init;
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) a = op(a, f(to_c(p[i])));
  return a;
}

// Count, mean and sum of squared deviations from the mean of a row part; parts
// combine by Chan et al.'s pairwise update (an empty part adds nothing).
template <class C>
struct MeanM2 {
  C n, mean, m2;
};
template <class C>
struct MeanM2Op {
  __device__ __forceinline__ MeanM2<C> operator()(MeanM2<C> a, MeanM2<C> b) const {
    if (b.n == C(0)) return a;
    if (a.n == C(0)) return b;
    const C n = a.n + b.n, d = b.mean - a.mean, f = div_approx(b.n, n);
    return MeanM2<C>{n, a.mean + d * f, a.m2 + b.m2 + d * d * a.n * f};
  }
};

// block_allreduce with the cross-wave step as a tree in the first wave (log2 of
// the wave count combines on the critical path instead of one per wave).
template <class T, class Op>
__device__ __forceinline__ T block_allreduce_tree(T v, T identity, const Op& op) {
  __shared__ uint4 raw[kMaxWaves * ((sizeof(T) + 15) / 16) + (sizeof(T) + 15) / 16];
  T* buf = reinterpret_cast<T*>(raw);
  T* res = buf + kMaxWaves;
  const int wave = int(threadIdx.x) / warpSize, lane = int(threadIdx.x) % warpSize;
  const int nwaves = int(blockDim.x) / warpSize;
  v = group_allreduce(v, warpSize, op);
  __syncthreads();  // buf may still be read by a previous call
  if (lane == 0) buf[wave] = v;
  __syncthreads();
  if (wave == 0) {
    T r = lane < nwaves ? buf[lane] : identity;
    r = group_allreduce(r, warpSize, op);
    if (lane == 0) *res = r;
  }
  __syncthreads();
  return *res;
}

// Rows up to kCache * blockDim stay in registers; longer ones take one online
// (max, sum) pass and one output pass over global memory (the second read mostly
// hits L2).
template <class T>
__device__ void softmax_rows(size_t rows, size_t n, const T* x, T* y, bool log) {
  using C = compute_t<T>;
  const C ninf = -C(INFINITY);
  for (size_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* p = x + r * n;
    T* q = y + r * n;
    {
      if (cacheable<T>(n)) {
        RowCache<T> rc;
        rc.vec = use_vec(p, q, n);
        rc.load(p, n, ninf);
        // Online softmax over the cache: each thread takes the max of its slots and
        // the sum of exp(x - that max), and one block combine gives the row's
        // (max, sum) (one block reduction, one exp per element). Slots past the row
        // hold -inf and add exp(-inf) = 0; a thread holding only -inf uses 0 as its
        // shift and adds 0. NaN anywhere, a +inf max or an all -inf row give NaN, as
        // on the CPU.
        // The thread's max. f32: a NaN-ignoring max (one instruction a slot): a NaN
        // slot still makes the thread's sum exp(NaN - max) = NaN, and a NaN sum makes
        // the row's sum and every output NaN. The other dtypes keep the NaN-testing
        // fold, which stays within 64 registers without spilling for them.
        C mt = ninf;
        if constexpr (std::is_same<T, float>::value) {
#pragma unroll
          for (int k = 0; k < kCache; ++k) mt = fmax_c(mt, rc.v[k]);
        } else {
          mt = rc.fold(ninf, MaxNan<C>{});
        }
        const C base = mt == ninf ? C(0) : mt;
        C st = C(0);
#pragma unroll
        for (int k = 0; k < kCache; ++k) {
          const C e = exp_shift(rc.v[k] - base);
          st += e;
          if (!log) rc.v[k] = e;
        }
        const MaxSum<C> ms = block_allreduce_tree(MaxSum<C>{mt, st}, MaxSum<C>{ninf, C(0)}, MaxSumOp<C>{});
        if (log) {
          const C lse = ms.m + log_c(ms.s);
          rc.store(q, n, [&](C v, size_t) { return v - lse; });
        } else {
          // exp(x - m) / s = exp(x - mt) * (exp(mt - m) / s); exp(-inf - m) = 0 for
          // a thread of -inf only (NaN when m is -inf too).
          const C scale = exp_c(mt - ms.m) * (C(1) / ms.s);
          rc.store(q, n, [&](C e, size_t) { return e * scale; });
        }
        continue;
      }
    }
    MaxSum<C> st{ninf, C(0)};
    bool nan = false;
    for (size_t i = threadIdx.x; i < n; i += blockDim.x) {
      const C v = to_c(p[i]);
      if (v != v) {
        nan = true;
      } else if (v > st.m) {
        st.s = st.s * exp_c(st.m - v) + exp_c(v - v);  // exp(v - v): NaN for v = +inf, as the CPU gets
        st.m = v;
      } else if (v != ninf) {
        st.s += exp_c(v - st.m);
      }
    }
    if (nan) st = MaxSum<C>{C(NAN), C(NAN)};
    st = block_allreduce(st, MaxSumOp<C>{});
    const C m = st.m, lse = m + log_c(st.s), inv = C(1) / st.s;
    for (size_t i = threadIdx.x; i < n; i += blockDim.x) {
      const C v = to_c(p[i]);
      q[i] = from_c<T>(log ? v - lse : exp_c(v - m) * inv);
    }
  }
}

// alpha / beta: contiguous vectors of n, or null.
template <class T>
__device__ __forceinline__ compute_t<T> param(const T* a, size_t i, compute_t<T> dflt) {
  return a ? to_c(a[i]) : dflt;
}

template <class T>
__device__ void rms_norm_rows(size_t rows, size_t n, const T* x, const T* alpha, T* y, float eps) {
  using C = compute_t<T>;
  for (size_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* p = x + r * n;
    T* q = y + r * n;
    {
      if (cacheable<T>(n)) {
        RowCache<T> rc;
        rc.vec = use_vec(p, q, n);
        rc.load(p, n, C(0));
        C ss = C(0);
#pragma unroll
        for (int k = 0; k < kCache; ++k) ss += rc.v[k] * rc.v[k];
        ss = block_allreduce(ss, Add{});
        const C scale = C(1) / sqrt_c(ss / C(n) + C(eps));
        rc.store(q, n, [&](C v, size_t i) { return v * scale * param(alpha, i, C(1)); });
        continue;
      }
    }
    {
      const C ss = block_allreduce(fold_global(
                                       p, n, C(0), [](C v) { return v * v; }, Add{}),
                                   Add{});
      const C scale = C(1) / sqrt_c(ss / C(n) + C(eps));
      for (size_t i = threadIdx.x; i < n; i += blockDim.x)
        q[i] = from_c<T>(to_c(p[i]) * scale * param(alpha, i, C(1)));
    }
  }
}

// sum = x + r (rounded to T, as add), y = rms_norm(sum) * alpha: rms_norm_rows over the
// rounded sum, which is also written out.
template <class T>
__device__ void add_rms_norm_rows(size_t rows, size_t n, const T* x, const T* r, const T* alpha, T* sum, T* y,
                                  float eps) {
  using C = compute_t<T>;
  const auto round = [](C v) { return to_c(from_c<T>(v)); };
  for (size_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* p = x + row * n;
    const T* pr = r + row * n;
    T* ps = sum + row * n;
    T* q = y + row * n;
    if (cacheable<T>(n)) {
      RowCache<T> rc, rr;
      rc.vec = rr.vec = use_vec(p, q, n) && aligned16(pr) && aligned16(ps);
      rc.load(p, n, C(0));
      rr.load(pr, n, C(0));
      C ss = C(0);
#pragma unroll
      for (int k = 0; k < kCache; ++k) {
        rc.v[k] = round(rc.v[k] + rr.v[k]);
        ss += rc.v[k] * rc.v[k];
      }
      rc.store(ps, n, [](C v, size_t) { return v; });
      ss = block_allreduce(ss, Add{});
      const C scale = C(1) / sqrt_c(ss / C(n) + C(eps));
      rc.store(q, n, [&](C v, size_t i) { return v * scale * param(alpha, i, C(1)); });
      continue;
    }
    // Long rows: each thread writes the sums of its elements, then reads them back.
    C ss = C(0);
    for (size_t i = threadIdx.x; i < n; i += blockDim.x) {
      const C v = round(to_c(p[i]) + to_c(pr[i]));
      ps[i] = from_c<T>(v);
      ss += v * v;
    }
    ss = block_allreduce(ss, Add{});
    const C scale = C(1) / sqrt_c(ss / C(n) + C(eps));
    for (size_t i = threadIdx.x; i < n; i += blockDim.x) q[i] = from_c<T>(to_c(ps[i]) * scale * param(alpha, i, C(1)));
  }
}

template <class T>
__device__ void layer_norm_rows(size_t rows, size_t n, const T* x, const T* alpha, const T* beta, T* y,
                                float eps) {
  using C = compute_t<T>;
  for (size_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* p = x + r * n;
    T* q = y + r * n;
    auto finish = [&](C v, size_t i, C mean, C rstd) {
      C o = (v - mean) * rstd;
      if (alpha) o *= to_c(alpha[i]);
      if (beta) o += to_c(beta[i]);
      return o;
    };
    // A row of 16-byte vectors (alpha and beta too) that fits the register cache.
    // (Rows read element by element take the global path: a scalar register cache
    // beside the vector one exceeds the 64 registers of two resident blocks.)
    if (cacheable<T>(n) && use_vec(p, q, n) && (!alpha || aligned16(alpha)) && (!beta || aligned16(beta))) {
      RowCache<T> rc;
      rc.vec = true;
      rc.load(p, n, C(0));
      // Each thread's mean and squared deviations over its own slots (two passes
      // over its registers), then one block combine of (count, mean, m2).
      const int c = rc.inside(n);
      const C mt = c ? div_approx(rc.fold(C(0), Add{}), C(c)) : C(0);
      C m2 = C(0);
#pragma unroll
      for (int k = 0; k < kCache; ++k) {
        if (k < c) m2 += (rc.v[k] - mt) * (rc.v[k] - mt);
      }
      const MeanM2<C> st =
          block_allreduce_tree(MeanM2<C>{C(c), mt, m2}, MeanM2<C>{C(0), C(0), C(0)}, MeanM2Op<C>{});
      // Biased variance: the mean of the squared deviations.
      const C rstd = C(1) / sqrt_c(st.m2 / C(n) + C(eps));
      rc.store_norm(q, n, alpha, beta, st.mean, rstd);
    } else {
      const C mean = block_allreduce(fold_global(
                                         p, n, C(0), [](C v) { return v; }, Add{}),
                                     Add{}) /
                     C(n);
      const C var = block_allreduce(fold_global(
                                        p, n, C(0), [&](C v) { return (v - mean) * (v - mean); }, Add{}),
                                    Add{});
      const C rstd = C(1) / sqrt_c(var / C(n) + C(eps));
      for (size_t i = threadIdx.x; i < n; i += blockDim.x)
        q[i] = from_c<T>(finish(to_c(p[i]), i, mean, rstd));
    }
  }
}

// kind: 0 half-split (B,H,T,D), 1 interleaved (B,H,T,D), 2 half-split (B,T,H,D).
// cos/sin rows of D/2; batch_stride 0 for a (T', D/2) table.
template <class T>
__device__ void rope(int kind, size_t n, size_t h, size_t t, size_t d, size_t batch_stride, const T* x,
                     const T* cos, const T* sin, T* y) {
  const size_t half = d / 2, pairs = n / 2;
  for (size_t q = size_t(blockIdx.x) * blockDim.x + threadIdx.x; q < pairs;
       q += size_t(gridDim.x) * blockDim.x) {
    const size_t r = q / half, i = q - r * half;
    const size_t bi = r / (h * t), ti = kind == 2 ? (r / h) % t : r % t;
    const size_t ci = bi * batch_stride + ti * half + i;
    const size_t i0 = kind == 1 ? 2 * i : i, i1 = kind == 1 ? 2 * i + 1 : i + half;
    const T* px = x + r * d;
    T* py = y + r * d;
    const double x0 = to_d(px[i0]), x1 = to_d(px[i1]), cv = to_d(cos[ci]), sv = to_d(sin[ci]);
    py[i0] = from_d<T>(x0 * cv - x1 * sv);
    py[i1] = from_d<T>(x0 * sv + x1 * cv);
  }
}

}  // namespace wk
