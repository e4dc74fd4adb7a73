// ATTENTION family: flash decoding over a KV cache (attn_decode_{q}_{kv} and the
// combine of its splits, attn_combine_{q}), the scaled masked softmax of the GEMM path
// (attn_softmax_{scores}_{probs}; attn_softmax_split_f32, attn_split_f32 and
// attn_twice_f16 of the split path), and the fused rotary embedding + KV-cache write
// (rope_kv_{dtype}_{cache dtype}). The host side is src/backend/gpu/attention.cpp.
//
// Flash decoding (launch_plan.h: attention): block (split, (batch, kv head, group
// chunk), query) serves up to kGroup query heads that share one key/value head, so each
// K and V row is read from the cache once for all of them, in its own dtype (staged in
// shared memory where the rows allow). Each wave of the block serves one head (or
// more, with 64-lane waves) and keeps its online softmax (running max m, sum l,
// weighted values acc); the block writes the output (one split) or each head's
// (m, l, acc) for attn_combine. Compute in f32 (f64 for f64 queries).
#include "../index_error.h"
#include "../vendor_async.cuh"
#include "wave.cuh"

namespace wk {

using ::wick::gpu::IndexErrorRecord;

namespace ap = plan::attention;

// Elements of K a lane owns in a row (launch_plan.h: attention::chunk).
template <class K>
inline constexpr int kChunk = int(ap::chunk(sizeof(K)));

// Elements [c0, c0 + E) of a row of n elements, zeros past n. vec: the row starts
// aligned to E elements and n is a multiple of E (one vector load).
template <class K>
__device__ __forceinline__ Vec<K, kChunk<K>> load_chunk(const K* row, int c0, int n, bool vec) {
  constexpr int E = kChunk<K>;
  Vec<K, E> w;
  if (vec && c0 < n) return *reinterpret_cast<const Vec<K, E>*>(row + c0);
#pragma unroll
  for (int j = 0; j < E; ++j) w.v[j] = c0 + j < n ? row[c0 + j] : K{};
  return w;
}

// Bytes bytes (a multiple of 16) from 16-byte aligned shared memory into registers.
template <size_t Bytes, class T>
__device__ __forceinline__ void copy16(T* dst, const T* src) {
  static_assert(Bytes % 16 == 0, "copy16: whole 16-byte words");
#pragma unroll
  for (size_t i = 0; i < Bytes / 16; ++i)
    reinterpret_cast<uint4*>(dst)[i] = reinterpret_cast<const uint4*>(src)[i];
}

template <class C>
struct AddC {
  __device__ __forceinline__ C operator()(C a, C b) const { return a + b; }
};

template <class C>
__device__ __forceinline__ C neg_inf() {
  return -C(INFINITY);
}
// max ignoring NaN (fmax).
__device__ __forceinline__ float max_c(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double max_c(double a, double b) { return fmax(a, b); }
template <class C>
struct MaxC {
  __device__ __forceinline__ C operator()(C a, C b) const { return max_c(a, b); }
};

// One (split, kv head group chunk, query) block. Dims fit int (the host checks).
// Strides in elements; the last dim of q, k and v has unit stride.
// kv_len (when not null): the keys are the first *kv_len rows of the s given, which
// must hold t_count..s of them (else reported, and the keys clamped to that range).
//
// Wave w serves the query heads w, w + n_waves, ... of the block's group (one head a
// wave on NVIDIA: kGroup heads, kGroup waves), so a head's keys are one wave's chain
// of instructions a quarter as long as one wave serving every head, and the waves need
// no merge. The block takes its split's keys kThreads at a time: with staging (the
// host checks 16-byte rows and that the tile fits), their K and V rows are copied into
// shared memory at once by asynchronous copies (every row in flight together) and read
// there by every wave. A wave takes W keys at a time (W = the wave size): lane i
// computes the score of key j0 + i against its head's query row (in shared memory),
// one wave-wide max updates the online softmax, then the lanes, each owning E elements
// of the value rows, take the W keys' value rows one after the other with their
// probabilities from shared memory. So a key costs no shuffle, and a head a wave-wide
// max per W keys.
template <class Q, class K>
__device__ void attn_decode(int h, int t_count, int hkv, int s, const uint32_t* kv_len, int d, int dv,
                            const Q* q, size_t q_sb, size_t q_sh, size_t q_st, const K* k, size_t k_sb,
                            size_t k_sh, size_t k_ss, const K* v, size_t v_sb, size_t v_sh, size_t v_ss,
                            float scale, int causal, int keys_per_split, int n_splits, int stage, Q* out,
                            compute_t<Q>* part, IndexErrorRecord* err) {
  using C = compute_t<Q>;
#if defined(WICK_BULK_COPY)
  wick_grid_launch_dependents();  // a dependent next kernel may start its own reads (see attn_combine)
#endif
  constexpr int E = kChunk<K>, G = ap::kGroup, V = int(16 / sizeof(K));
  // Heads a wave serves at most: G over the fewest waves a block has (64-lane waves).
  constexpr int kHeads = (G * int(plan::kWideWave) + ap::kThreads - 1) / ap::kThreads;
  extern __shared__ uint4 attn_smem[];
  const int W = warpSize;
  const int g_total = h / hkv, g_chunks = (g_total + G - 1) / G;
  const int split = int(blockIdx.x), ti = int(blockIdx.z);
  const int gc = int(blockIdx.y) % g_chunks;
  const int kvh = (int(blockIdx.y) / g_chunks) % hkv;
  const int bi = int(blockIdx.y) / (g_chunks * hkv);
  const int g0 = gc * G, gn = min(G, g_total - g0);
  const int lane = int(threadIdx.x) % W, wv = int(threadIdx.x) / W, n_waves = int(blockDim.x) / W;
  // Keys a block takes at a time (the staging tile's rows).
  const int c0 = lane * E, chunk = int(blockDim.x);

  // Shared memory: the group's query rows, scaled (G x d), each wave's probabilities
  // (W keys), then (stage) the tile of `chunk` keys: K rows 16 bytes apart more than
  // their length (the lanes' 16-byte reads of their own rows hit distinct banks), then
  // V rows. The first tile's copies go out before the query rows' loads (kQ a thread
  // in flight).
  C* qs = reinterpret_cast<C*>(attn_smem);
  C* ps = qs + G * d + wv * W;
  // The key count (kv_len: from device memory) and the split's keys: with kv_len, the
  // splits share its keys evenly (whole waves' widths each, at most the launch's
  // keys_per_split), so a short cache still spreads over several blocks.
  int kps = keys_per_split;
  if (kv_len) {
    const uint32_t len = *kv_len;
    if (len < uint32_t(t_count) || len > uint32_t(s)) {
      if (threadIdx.x == 0)
        ::wick::gpu::report_index_error(err, ::wick::gpu::kKvLength, int64_t(len), size_t(s), 2);
    }
    s = int(min(max(len, uint32_t(t_count)), uint32_t(s)));
    kps = min(keys_per_split, max(W, ((s + n_splits - 1) / n_splits + W - 1) / W * W));
  }
  const int j_begin = split * kps;
  const int visible = causal ? s - t_count + ti + 1 : s;
  const int j_end = min(visible, j_begin + kps);
  const K* kb = k + size_t(bi) * k_sb + size_t(kvh) * k_sh;
  const K* vb = v + size_t(bi) * v_sb + size_t(kvh) * v_sh;
  const int kw = d * int(sizeof(K)) / 16, vw = dv * int(sizeof(K)) / 16, kst = kw + 1;
  uint4* kt = reinterpret_cast<uint4*>(attn_smem) + (size_t(G * d + n_waves * W) * sizeof(C) + 15) / 16;
  uint4* vt = kt + size_t(chunk) * kst;
  auto issue = [&](int j0, int limit) {  // rows j0 .. min(j0 + chunk, limit) by the block
    const int n = min(chunk, limit - j0);
    for (int i = int(threadIdx.x); i < n * kw; i += chunk)
      wick_copy16_async(kt + (i / kw) * kst + i % kw,
                        reinterpret_cast<const uint4*>(kb + size_t(j0 + i / kw) * k_ss) + i % kw);
    for (int i = int(threadIdx.x); i < n * vw; i += chunk)
      wick_copy16_async(vt + i, reinterpret_cast<const uint4*>(vb + size_t(j0 + i / vw) * v_ss) + i % vw);
    wick_async_commit();
  };
  if (stage && j_begin < j_end) issue(j_begin, j_end);
  constexpr int kQ = 4;
  for (int i0 = int(threadIdx.x); i0 < G * d; i0 += kQ * int(blockDim.x)) {
    C qv[kQ];
#pragma unroll
    for (int u = 0; u < kQ; ++u) {
      const int i = i0 + u * int(blockDim.x), g = i / d, c = i % d;
      const Q* row =
          q + size_t(bi) * q_sb + size_t(kvh * g_total + g0 + min(g, gn - 1)) * q_sh + size_t(ti) * q_st;
      qv[u] = i < G * d && g < gn ? to_c(row[c]) * C(scale) : C(0);
    }
#pragma unroll
    for (int u = 0; u < kQ; ++u)
      if (i0 + u * int(blockDim.x) < G * d) qs[i0 + u * int(blockDim.x)] = qv[u];
  }
  const bool vec_k = stage || (d % V == 0 && reinterpret_cast<uintptr_t>(kb) % 16 == 0 && k_ss % V == 0);
  const bool vec_v =
      stage || (dv % E == 0 && reinterpret_cast<uintptr_t>(vb) % sizeof(Vec<K, E>) == 0 && v_ss % E == 0);
  const K* ktile = reinterpret_cast<const K*>(kt);
  const K* vtile = reinterpret_cast<const K*>(vt);
  const size_t kst_e = size_t(kst) * 16 / sizeof(K);  // a staged K row's stride in elements

  // The wave's heads i (head g = wv + i * n_waves of the group): m the running max, l
  // this lane's share of the sum, acc its elements of the weighted values.
  C m[kHeads], l[kHeads], acc[kHeads][E];
#pragma unroll
  for (int i = 0; i < kHeads; ++i) {
    m[i] = neg_inf<C>();
    l[i] = C(0);
#pragma unroll
    for (int e = 0; e < E; ++e) acc[i][e] = C(0);
  }
  __syncthreads();                                   // the query rows
  for (int jc = j_begin; jc < j_end; jc += chunk) {  // the same trip count for the whole block
    if (stage) {
      if (jc > j_begin) {
        __syncthreads();  // every wave done with the previous tile
        issue(jc, j_end);
      }
      wick_async_wait<0>();  // this thread's copies landed
      __syncthreads();       // every thread's
    }
    const int n_keys = min(chunk, j_end - jc);
#pragma unroll
    for (int i = 0; i < kHeads; ++i) {
      const int g = wv + i * n_waves;
      if (g >= gn) break;
      const C* qg = qs + g * d;
      for (int u0 = 0; u0 < n_keys; u0 += W) {
        const int u = u0 + lane, j = jc + u;
        const bool in = u < n_keys;
        C sc = C(0);
        if (in) {
          const K* kr = stage ? ktile + size_t(u) * kst_e : kb + size_t(j) * k_ss;
          if (vec_k) {
            C s1 = C(0);  // two chains of dependent products
#pragma unroll 4
            for (int c = 0; c < d; c += V) {
              const Vec<K, V> w = *reinterpret_cast<const Vec<K, V>*>(kr + c);
              alignas(16) C qv[V];  // 16-byte shared loads: qg + c starts a 16-byte word (d % V == 0)
              copy16<V * sizeof(C)>(qv, qg + c);
#pragma unroll
              for (int e = 0; e < V; e += 2) {
                sc += qv[e] * to_c(w.v[e]);
                s1 += qv[e + 1] * to_c(w.v[e + 1]);
              }
            }
            sc += s1;
          } else {
            for (int c = 0; c < d; ++c) sc += qg[c] * to_c(kr[c]);
          }
        }
        // max ignores NaN; a NaN score still makes l NaN below
        const C mx = max_c(m[i], group_allreduce(in ? sc : neg_inf<C>(), W, MaxC<C>{}));
        const C corr = mx == neg_inf<C>() ? C(1) : exp_c(m[i] - mx);  // 0 for the first keys (m = -inf)
        const C p = in ? exp_c(sc - mx) : C(0);
        l[i] = l[i] * corr + p;
#pragma unroll
        for (int e = 0; e < E; ++e) acc[i][e] *= corr;
        m[i] = mx;
        ps[lane] = p;
        wick_wave_sync();
        if (c0 < dv) {
          const int nk = min(W, n_keys - u0);
#pragma unroll 4
          for (int x = 0; x < nk; ++x) {
            const K* vr = stage ? vtile + size_t(u0 + x) * dv : vb + size_t(jc + u0 + x) * v_ss;
            const Vec<K, E> w = load_chunk(vr, c0, dv, vec_v);
            const C px = ps[x];
#pragma unroll
            for (int e = 0; e < E; ++e) acc[i][e] += px * to_c(w.v[e]);
          }
        }
        wick_wave_sync();  // ps is rewritten by the next keys
      }
    }
  }
#pragma unroll
  for (int i = 0; i < kHeads; ++i) {
    const int g = wv + i * n_waves;
    if (g >= gn) break;
    l[i] = group_allreduce(l[i], W, AddC<C>{});
    const size_t row = (size_t(bi) * h + size_t(kvh * g_total + g0 + g)) * size_t(t_count) + size_t(ti);
    if (n_splits == 1) {
#pragma unroll
      for (int e = 0; e < E; ++e)
        if (c0 + e < dv) out[row * size_t(dv) + size_t(c0 + e)] = from_c<Q>(acc[i][e] / l[i]);
    } else {
      C* pr = part + (row * size_t(n_splits) + size_t(split)) * size_t(dv + 2);
      if (lane == 0) {
        pr[0] = m[i];
        pr[1] = l[i];
      }
#pragma unroll
      for (int e = 0; e < E; ++e)
        if (c0 + e < dv) pr[2 + c0 + e] = acc[i][e];
    }
  }
  if (stage) wick_async_wait<0>();  // no copy outlives the block (a split past the keys)
}

// out row r = sum over splits of acc * exp(m - M) / sum of l * exp(m - M). A block a
// row: a thread a split for (m, l) (the host keeps n_splits <= blockDim.x), then
// kCombineGroups groups of threads each summing every kCombineGroups-th split of the
// weighted values, and group 0 adding the groups' sums.
template <class Q>
__device__ void attn_combine(size_t rows, int dv, int n_splits, const compute_t<Q>* part, Q* out) {
  using C = compute_t<Q>;
#if defined(WICK_BULK_COPY)
  // The next kernel, where it is launched dependent (the decode step's attn_output
  // mat-vec), may launch now: it streams its first weight tiles while this one runs,
  // and waits for this one's writes before it reads them.
  wick_grid_launch_dependents();
#endif
  constexpr int kGroups = ap::kCombineGroups;
  extern __shared__ uint4 attn_smem[];
  C* w = reinterpret_cast<C*>(attn_smem);  // n_splits weights
  C* sums = w + n_splits;                  // kGroups x dv
  const int cw = int(blockDim.x) / kGroups, grp = int(threadIdx.x) / cw, c0 = int(threadIdx.x) % cw;
  const int sp = int(threadIdx.x);
  const size_t stride = size_t(dv) + 2;
  for (size_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const C* p = part + r * size_t(n_splits) * stride;
    const C ms = sp < n_splits ? p[size_t(sp) * stride] : neg_inf<C>();
    const C ls = sp < n_splits ? p[size_t(sp) * stride + 1] : C(0);
    const C mm = block_allreduce(ms, MaxC<C>{});  // (synchronizes: the previous row's w and sums read)
    const C ws = ms == neg_inf<C>() ? C(0) : exp_c(ms - mm);
    if (sp < n_splits) w[sp] = ws;
    const C ll = block_allreduce(ls * ws, AddC<C>{});  // (synchronizes: w visible)
    for (int c = c0; c < dv; c += cw) {
      C aa = C(0);
#pragma unroll 8
      for (int s = grp; s < n_splits; s += kGroups) aa += p[size_t(s) * stride + 2 + size_t(c)] * w[s];
      sums[grp * dv + c] = aa;
    }
    __syncthreads();
    if (grp == 0) {
      for (int c = c0; c < dv; c += cw) {
        C aa = sums[c];
#pragma unroll
        for (int g = 1; g < kGroups; ++g) aa += sums[g * dv + c];
        out[r * size_t(dv) + size_t(c)] = from_c<Q>(aa / ll);
      }
    }
  }
}

// The GEMM path's softmax: row r of `rows` rows of s_seen scores (batch r / m_rows,
// row i = r % m_rows, query t0 + i % n of t_count) -> probabilities of scale * x over
// the keys it sees (causal: 0 .. s_total - t_count + query), zeros elsewhere; a wave
// a row of up to kSoftmaxWaveKeys keys, a block a longer row. Split:
// each probability p as the f16 pair (hi, lo) = (f16(p), f16(p - hi)) at 2j, 2j + 1 of
// a row of 2 s_seen (the split path of attention.cpp).
template <class S, class P, bool Split = false>
__device__ void attn_softmax(size_t rows, size_t m_rows, size_t n, size_t t0, size_t t_count, size_t s_total,
                             size_t s_seen, int causal, float scale, const S* x, P* y) {
  using C = compute_t<S>;
  const C ninf = neg_inf<C>();
  // A wave a row up to kSoftmaxWaveKeys keys, else the block (launch_plan.h).
  const size_t W = s_seen <= ap::kSoftmaxWaveKeys ? size_t(warpSize) : blockDim.x;
  const size_t lane = threadIdx.x % W, per_block = blockDim.x / W;
  for (size_t r = blockIdx.x * per_block + threadIdx.x / W; r < rows; r += size_t(gridDim.x) * per_block) {
    const size_t qi = t0 + (r % m_rows) % n;
    const size_t last = s_total - t_count + qi + 1;  // keys a causal query sees
    const size_t vis = causal && last < s_seen ? last : s_seen;
    const S* px = x + r * s_seen;
    P* py = y + r * s_seen * (Split ? 2 : 1);
    MaxSum<C> st{ninf, C(0)};
    bool nan = false;
    for (size_t j = lane; j < vis; j += W) {
      const C v = C(scale) * to_c(px[j]);
      if (v != v) {
        nan = true;
      } else if (v > st.m) {
        st.s = st.s * exp_c(st.m - v) + exp_c(v - v);  // NaN for v = +inf, as the CPU gets
        st.m = v;
      } else if (v != ninf) {
        st.s += exp_c(v - st.m);
      }
    }
    if (nan) st = MaxSum<C>{C(NAN), C(NAN)};
    st = group_or_block_allreduce(st, int(W), MaxSumOp<C>{});
    const C inv = C(1) / st.s;
    for (size_t j = lane; j < s_seen; j += W) {
      const C p = j < vis ? exp_c(C(scale) * to_c(px[j]) - st.m) * inv : C(0);
      if constexpr (Split) {
        const P hi = from_c<P>(p);
        py[2 * j] = hi;
        py[2 * j + 1] = from_c<P>(p - to_c(hi));
      } else {
        py[j] = from_c<P>(p);
      }
    }
  }
}

// The split path's operands (attention.cpp): scale * x (n f32) as (hi, lo) f16 pairs
// (beyond f16's range, 65504, they overflow, as keys do in an f16 cache); and the
// f16 view (bk = B * Hkv, rows, cols) (strides s0 a batch, s1 a kv head, s2 a row;
// columns contiguous) copied contiguous with each element twice (per_element: K, read
// against the query pairs) or each row twice (V, read against the probability pairs).
__device__ void attn_split(size_t n, const float* x, float scale, f16s* y) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const float v = scale * x[i];
    const f16s hi = from_c<f16s>(v);
    y[2 * i] = hi;
    y[2 * i + 1] = from_c<f16s>(v - to_c(hi));
  }
}

__device__ void attn_twice(size_t bk, size_t hkv, size_t rows, size_t cols, const f16s* in, size_t s0,
                           size_t s1, size_t s2, int per_element, f16s* out) {
  const size_t total = bk * rows * cols;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += size_t(gridDim.x) * blockDim.x) {
    const size_t c = i % cols, r = (i / cols) % rows, b = i / (cols * rows);
    const f16s v = in[(b / hkv) * s0 + (b % hkv) * s1 + r * s2 + c];
    if (per_element) {
      out[2 * i] = v;
      out[2 * i + 1] = v;
    } else {
      const size_t o = ((b * rows + r) * 2) * cols + c;
      out[o] = v;
      out[o + cols] = v;
    }
  }
}

// rope_kv: work items q pairs (B, T, H, D/2), then k pairs (B, T, Hkv, D/2), then v
// elements (B, T, Hkv, Dv); `what` bits 1 / 2 / 4 select q / k / v. kind 0: pairs (i,
// i + D/2), 1: (2i, 2i + 1). f64 math, one rounding to each output (as the CPU).
template <class T, class CT>
__device__ void rope_kv(int what, int kind, size_t b, size_t t, size_t h, size_t hkv, size_t d, size_t dv,
                        size_t pos, const uint32_t* pos_dev, size_t s_k, size_t s_v, const T* q, size_t q_sb,
                        size_t q_st, size_t q_sh, const T* k, size_t k_sb, size_t k_st, size_t k_sh,
                        const T* v, size_t v_sb, size_t v_st, size_t v_sh, const T* cos, const T* sin,
                        T* q_out, CT* k_cache, CT* v_cache, IndexErrorRecord* err) {
  const size_t half = d / 2;
  if (pos_dev) {
    // The position from device memory: rows pos .. pos + t - 1 must lie in both caches.
    pos = *pos_dev;
    const size_t rows = min(s_k, s_v);
    if (pos + t > rows) {
      if (blockIdx.x == 0 && threadIdx.x == 0)
        ::wick::gpu::report_index_error(err, ::wick::gpu::kKvPosition, int64_t(pos + t - 1), rows, 2);
      return;
    }
  }
  const size_t nq = (what & 1) ? b * t * h * half : 0, nk = (what & 2) ? b * t * hkv * half : 0;
  const size_t nv = (what & 4) ? b * t * hkv * dv : 0, total = nq + nk + nv;
  for (size_t idx = size_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += size_t(gridDim.x) * blockDim.x) {
    if (idx < nq + nk) {
      const bool is_q = idx < nq;
      const size_t heads = is_q ? h : hkv;
      size_t r = is_q ? idx : idx - nq;
      const size_t i = r % half;
      r /= half;
      const size_t hi = r % heads;
      r /= heads;
      const size_t ti = r % t, bi = r / t;
      const T* x = is_q ? q + bi * q_sb + ti * q_st + hi * q_sh : k + bi * k_sb + ti * k_st + hi * k_sh;
      const size_t i0 = kind == 1 ? 2 * i : i, i1 = kind == 1 ? 2 * i + 1 : i + half;
      const double x0 = to_d(x[i0]), x1 = to_d(x[i1]);
      const double c = to_d(cos[ti * half + i]), s = to_d(sin[ti * half + i]);
      const double y0 = x0 * c - x1 * s, y1 = x0 * s + x1 * c;
      if (is_q) {
        T* y = q_out + ((bi * h + hi) * t + ti) * d;
        y[i0] = from_d<T>(y0);
        y[i1] = from_d<T>(y1);
      } else {
        CT* y = k_cache + ((bi * hkv + hi) * s_k + pos + ti) * d;
        y[i0] = from_d<CT>(y0);
        y[i1] = from_d<CT>(y1);
      }
    } else {
      size_t r = idx - nq - nk;
      const size_t c = r % dv;
      r /= dv;
      const size_t hi = r % hkv;
      r /= hkv;
      const size_t ti = r % t, bi = r / t;
      v_cache[((bi * hkv + hi) * s_v + pos + ti) * dv + c] =
          from_d<CT>(to_d(v[bi * v_sb + ti * v_st + hi * v_sh + c]));
    }
  }
}

}  // namespace wk

#define ATTN_DECODE(Q, QS, K, KS)                                                                           \
  extern "C" __global__ void __launch_bounds__(wk::ap::kThreads, wk::ap::kMinBlocks)                        \
      attn_decode_##QS##_##KS(int h, int t, int hkv, int s, const uint32_t* kv_len, int d, int dv,          \
                              const Q* q, size_t q_sb, size_t q_sh, size_t q_st, const K* k, size_t k_sb,   \
                              size_t k_sh, size_t k_ss, const K* v, size_t v_sb, size_t v_sh, size_t v_ss,  \
                              float scale, int causal, int keys_per_split, int n_splits, int stage, Q* out, \
                              wk::compute_t<Q>* part, wk::IndexErrorRecord* err) {                          \
    wk::attn_decode<Q, K>(h, t, hkv, s, kv_len, d, dv, q, q_sb, q_sh, q_st, k, k_sb, k_sh, k_ss, v, v_sb,   \
                          v_sh, v_ss, scale, causal, keys_per_split, n_splits, stage, out, part, err);      \
  }
ATTN_DECODE(float, f32, float, f32)
ATTN_DECODE(float, f32, wk::f16s, f16)
ATTN_DECODE(float, f32, wk::bf16s, bf16)
ATTN_DECODE(wk::f16s, f16, wk::f16s, f16)
ATTN_DECODE(wk::bf16s, bf16, wk::bf16s, bf16)
ATTN_DECODE(double, f64, double, f64)

#define ATTN_COMBINE(Q, QS, ...)                                                                           \
  WICK_KERNEL attn_combine_##QS(size_t rows, int dv, int n_splits, const wk::compute_t<Q>* part, Q* out) { \
    wk::attn_combine<Q>(rows, dv, n_splits, part, out);                                                    \
  }
WK_FLOAT_DTYPES(ATTN_COMBINE, )

#define ATTN_SOFTMAX(S, SS, P, PS)                                                                         \
  WICK_KERNEL attn_softmax_##SS##_##PS(size_t rows, size_t m_rows, size_t n, size_t t0, size_t t_count,    \
                                       size_t s_total, size_t s_seen, int causal, float scale, const S* x, \
                                       P* y) {                                                             \
    wk::attn_softmax<S, P>(rows, m_rows, n, t0, t_count, s_total, s_seen, causal, scale, x, y);            \
  }
ATTN_SOFTMAX(float, f32, float, f32)
ATTN_SOFTMAX(float, f32, wk::f16s, f16)
ATTN_SOFTMAX(float, f32, wk::bf16s, bf16)
ATTN_SOFTMAX(double, f64, double, f64)
WICK_KERNEL attn_softmax_split_f32(size_t rows, size_t m_rows, size_t n, size_t t0, size_t t_count,
                                   size_t s_total, size_t s_seen, int causal, float scale, const float* x,
                                   wk::f16s* y) {
  wk::attn_softmax<float, wk::f16s, true>(rows, m_rows, n, t0, t_count, s_total, s_seen, causal, scale, x, y);
}
WICK_KERNEL attn_split_f32(size_t n, const float* x, float scale, wk::f16s* y) {
  wk::attn_split(n, x, scale, y);
}
WICK_KERNEL attn_twice_f16(size_t bk, size_t hkv, size_t rows, size_t cols, const wk::f16s* in, size_t s0,
                           size_t s1, size_t s2, int per_element, wk::f16s* out) {
  wk::attn_twice(bk, hkv, rows, cols, in, s0, s1, s2, per_element, out);
}

#define ROPE_KV(T, TS, CT, CS)                                                                              \
  WICK_KERNEL rope_kv_##TS##_##CS(                                                                          \
      int what, int kind, size_t b, size_t t, size_t h, size_t hkv, size_t d, size_t dv, size_t pos,        \
      const uint32_t* pos_dev, size_t s_k, size_t s_v, const T* q, size_t q_sb, size_t q_st, size_t q_sh,   \
      const T* k, size_t k_sb, size_t k_st, size_t k_sh, const T* v, size_t v_sb, size_t v_st, size_t v_sh, \
      const T* cos, const T* sin, T* q_out, CT* k_cache, CT* v_cache, wk::IndexErrorRecord* err) {          \
    wk::rope_kv<T, CT>(what, kind, b, t, h, hkv, d, dv, pos, pos_dev, s_k, s_v, q, q_sb, q_st, q_sh, k,     \
                       k_sb, k_st, k_sh, v, v_sb, v_st, v_sh, cos, sin, q_out, k_cache, v_cache, err);      \
  }
#define ROPE_KV_ROW(T, TS, ...) \
  ROPE_KV(T, TS, wk::f16s, f16) \
  ROPE_KV(T, TS, wk::bf16s, bf16) ROPE_KV(T, TS, float, f32) ROPE_KV(T, TS, double, f64)
WK_FLOAT_DTYPES(ROPE_KV_ROW, )
