// Entry points of the ATTENTION family (kernels/attention.cu): attention and the fused
// rope + KV-cache write.
//
// attention takes one of two ways by the number of queries T:
//  - T <= plan::attention::kMaxDecodeQueries (decoding): flash decoding. The keys are
//    cut into splits sized so that the grid fills the device (about kBlocksPerSm
//    blocks a multiprocessor); each block reads its keys and values once for up to
//    kGroup query heads, straight from the cache in its dtype (f16 / bf16 / f32 for
//    f32 queries; other pairs are converted to q's dtype first), and writes its
//    output, or its partial softmax state that attn_combine merges. Bytes: each K and V
//    row once (per group of kGroup heads); no scores in memory.
//  - more queries (prefill): the scores through the device GEMM (f32 for f16 / bf16 /
//    f32 inputs, f64 for f64), a masked, scaled softmax to probabilities in q's dtype,
//    and a second GEMM with the values, for pieces of queries whose scores stay within
//    nn::kAttentionScoreBlock. The G = H / Hkv query heads of a key/value head are one
//    GEMM row block when a piece holds every query, else one GEMM each. f32 queries over
//    an f16 cache take the split path (attention_split): both GEMMs on f16 operands,
//    (hi, lo) pairs for the f32 side.
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "backend/gpu/gpu_ops.h"
#include "base/dispatch.h"
#include "wick/tensor.h"

namespace wick::gpu {

namespace {

namespace ap = plan::attention;

// The largest number of splits of one decode (the combine keeps a weight a split in
// shared memory).
constexpr size_t kMaxSplits = 256;
static_assert(kMaxSplits <= size_t(ap::kCombineGroups) * plan::kWideWave, "the combine: a thread a split");

// An operand as the kernels read it: pointer and strides (elements) of a rank-4 layout
// with unit inner stride, in dtype `dt` (a converted or contiguous copy when needed).
struct Operand4 {
  const void* ptr = nullptr;
  size_t s0 = 0, s1 = 0, s2 = 0;
  StoragePtr keep;
};

Operand4 operand4(const GpuStorage& s, const Layout& l, DType dt) {
  Operand4 o;
  if (s.dtype() != dt) {
    o.keep = s.to_dtype(l, dt);  // contiguous
  } else if (l.strides()[3] != 1 && l.dims()[3] > 1) {
    auto c = gpu_alloc(s.dev(), l.elem_count(), dt);
    s.copy_strided_src(*c, 0, l);
    o.keep = std::move(c);
  }
  if (o.keep) {
    const auto& d = l.dims();
    o.ptr = GpuStorage::of(*o.keep).raw();
    o.s2 = d[3];
    o.s1 = d[2] * d[3];
    o.s0 = d[1] * d[2] * d[3];
  } else {
    o.ptr = s.at(l.start_offset());
    o.s0 = l.strides()[0];
    o.s1 = l.strides()[1];
    o.s2 = l.strides()[2];
  }
  return o;
}

// The (q, k/v) dtype pairs with a decode kernel (kernels/attention.cu: ATTN_DECODE).
bool decode_pair(DType q, DType kv) {
  return q == kv || (q == DType::F32 && (kv == DType::F16 || kv == DType::BF16));
}

bool fits_int(size_t v) { return v <= size_t(INT_MAX); }

// The queries of one piece of the GEMM paths: scores of at most
// nn::kAttentionScoreBlock in memory at once.
size_t piece_rows(size_t b, size_t h, size_t s, size_t t) {
  return std::clamp<size_t>(nn::kAttentionScoreBlock / std::max<size_t>(b * h * s, 1), 1, t);
}

// The masked softmax of one piece (kernels/attention.cu: a wave a row of up to
// kSoftmaxWaveKeys keys, else a block): bk * g * n rows of `seen` scores at x, queries
// t0 .. t0 + n of t over s keys, probabilities to y.
void launch_softmax(GpuDevice& dev, const Kernel& kernel, size_t bk, size_t g, size_t n, size_t t0, size_t t,
                    size_t s, size_t seen, bool causal, float scale, const void* x, void* y) {
  size_t rows = bk * g * n, m_rows = g * n;
  int causal_i = causal ? 1 : 0;
  void* args[] = {&rows, &m_rows, &n, &t0, &t, &s, &seen, &causal_i, &scale, &x, &y};
  const size_t per_block = seen <= ap::kSoftmaxWaveKeys ? ap::kSoftmaxThreads / wave_size(dev) : 1;
  const unsigned grid = unsigned(std::min<size_t>((rows + per_block - 1) / per_block, size_t(1) << 20));
  dev.launch(kernel, dim3(grid), dim3(ap::kSoftmaxThreads), args);
}

StoragePtr attention_decode(const GpuStorage& qs, const Layout& q_l, const GpuStorage& ks, const Layout& k_l,
                            const GpuStorage& vs, const Layout& v_l, float scale, bool causal,
                            DeviceU32 kv_len) {
  GpuDevice& dev = qs.dev();
  const DType dt = qs.dtype(),
              kvt = decode_pair(dt, ks.dtype()) && ks.dtype() == vs.dtype() ? ks.dtype() : dt;
  const auto& qd = q_l.dims();
  const size_t b = qd[0], h = qd[1], t = qd[2], d = qd[3];
  const size_t hkv = k_l.dims()[1], s = k_l.dims()[2], dv = v_l.dims()[3];
  const size_t g_total = h / hkv, g_chunks = (g_total + ap::kGroup - 1) / ap::kGroup;
  const Operand4 q = operand4(qs, q_l, dt), k = operand4(ks, k_l, kvt), v = operand4(vs, v_l, kvt);
  auto out = gpu_alloc(dev, b * h * t * dv, dt);

  // Splits: about kBlocksPerSm blocks a multiprocessor, at least one pass of the
  // block's waves (`step` keys) each, at most kMaxSplits. (With the key count in device
  // memory the kernel shares the keys it gives evenly among these splits.)
  const size_t wave = wave_size(dev), n_waves = ap::kThreads / wave, step = n_waves * wave;
  const size_t base = b * hkv * g_chunks * t;
  const size_t sms = size_t(std::max(dev.props().multiprocessors, 1));
  const size_t want = std::max<size_t>(1, ap::kBlocksPerSm * sms / base);
  size_t kps = std::max((s + want - 1) / want, step);
  kps = std::max(kps, (s + kMaxSplits - 1) / kMaxSplits);
  kps = (kps + step - 1) / step * step;
  const size_t n_splits = (s + kps - 1) / kps;

  const DType ct = dt == DType::F64 ? DType::F64 : DType::F32;
  const size_t cs = dtype_size(ct);
  DeviceBuffer part;
  if (n_splits > 1) part = DeviceBuffer(dev, b * h * t * n_splits * (dv + 2) * cs);
  int hi = int(h), ti = int(t), hkvi = int(hkv), si = int(s), di = int(d), dvi = int(dv);
  // The query rows and the waves' probabilities; with staging, a tile of the kThreads
  // keys a block takes at a time: K rows 16 bytes longer each, and V rows (the kernel).
  const size_t kvs = dtype_size(kvt), sm_qp = (ap::kGroup * d + n_waves * wave) * cs;
  const size_t tile = ap::kThreads * (d * kvs + 16 + dv * kvs);
  const bool rows16 =
      d * kvs % 16 == 0 && dv * kvs % 16 == 0 && k.s0 * kvs % 16 == 0 && k.s1 * kvs % 16 == 0 &&
      k.s2 * kvs % 16 == 0 && v.s0 * kvs % 16 == 0 && v.s1 * kvs % 16 == 0 && v.s2 * kvs % 16 == 0 &&
      reinterpret_cast<uintptr_t>(k.ptr) % 16 == 0 && reinterpret_cast<uintptr_t>(v.ptr) % 16 == 0;
  const size_t sm_staged = (sm_qp + 15) / 16 * 16 + tile;
  const bool stage = rows16 && sm_staged <= dev.props().shared_per_block;
  const size_t shmem = stage ? sm_staged : sm_qp;
  int causal_i = causal ? 1 : 0, kps_i = int(kps), splits_i = int(n_splits), stage_i = stage ? 1 : 0;
  const void* qp = q.ptr;
  const void* kp = k.ptr;
  const void* vp = v.ptr;
  const void* lenp = kv_len ? GpuStorage::of(*kv_len.storage).at(kv_len.offset) : nullptr;
  size_t q0 = q.s0, q1 = q.s1, q2 = q.s2, k0 = k.s0, k1 = k.s1, k2 = k.s2, v0 = v.s0, v1 = v.s1, v2 = v.s2;
  void* op = out->raw();
  void* pp = part.get();
  void* err = dev.index_error_record();
  void* args[] = {&hi, &ti,    &hkvi,     &si,    &lenp,     &di,      &dvi, &qp, &q0,
                  &q1, &q2,    &kp,       &k0,    &k1,       &k2,      &vp,  &v0, &v1,
                  &v2, &scale, &causal_i, &kps_i, &splits_i, &stage_i, &op,  &pp, &err};
  static const DTypePairKernels decode(Module::Attention, "attn_decode");
  dev.launch(decode(dt, kvt), dim3(unsigned(n_splits), unsigned(b * hkv * g_chunks), unsigned(t)),
             dim3(ap::kThreads), args, shmem);
  if (n_splits > 1) {
    size_t rows = b * h * t;
    const void* pc = part.get();
    void* cargs[] = {&rows, &dvi, &splits_i, &pc, &op};
    static const DTypeKernels combine(Module::Attention, "attn_combine");
    dev.launch(combine[dt], dim3(unsigned(std::min<size_t>(rows, size_t(1) << 20))),
               dim3(ap::kCombineGroups * ap::combine_block(dv)), cargs,
               (n_splits + ap::kCombineGroups * dv) * cs);
  }
  return out;
}

// The GEMM path for f32 queries over f16 keys and values, on f16 tensor cores at about
// f32's accuracy: scale * q as (hi, lo) f16 pairs against each key element twice, so a
// score sums exact f16 products of q's 22 bits in f32; the probabilities as (hi, lo)
// pairs the same way against each value row twice. (The f32 GEMMs of the general path
// ran on FMA units: a third of an 8B model's prefill, docs/PERFORMANCE.md.)
StoragePtr attention_split(const GpuStorage& qs, const Layout& q_l, const GpuStorage& ks, const Layout& k_l,
                           const GpuStorage& vs, const Layout& v_l, float scale, bool causal) {
  GpuDevice& dev = qs.dev();
  const auto& qd = q_l.dims();
  const size_t b = qd[0], h = qd[1], t = qd[2], d = qd[3];
  const size_t hkv = k_l.dims()[1], s = k_l.dims()[2], dv = v_l.dims()[3], g = h / hkv, bk = b * hkv;
  constexpr size_t es = 2;  // f16
  std::shared_ptr<GpuStorage> keep_q;
  const void* q = contiguous_data(qs, q_l, keep_q);
  DeviceBuffer q2(dev, b * h * t * d * 2 * es);
  {
    size_t n = b * h * t * d;
    void* y = q2.get();
    void* args[] = {&n, &q, &scale, &y};
    static const Kernel split(Module::Attention, "attn_split_f32");
    dev.launch(split, dim3(dev.grid_for(n)), dim3(dev.block_size()), args);
  }
  // K (bk, s, 2d) with each element twice; V (bk, 2s, dv) with each row twice.
  DeviceBuffer k2(dev, bk * s * d * 2 * es), v2(dev, bk * s * dv * 2 * es);
  const auto twice = [&](const GpuStorage& src, const Layout& l, size_t cols, int per_element, void* dst) {
    const Operand4 o = operand4(src, l, DType::F16);
    size_t bkv = bk, hk = hkv, rows = s, c = cols, s0 = o.s0, s1 = o.s1, s2 = o.s2, n = bk * s * cols;
    const void* in = o.ptr;
    void* args[] = {&bkv, &hk, &rows, &c, &in, &s0, &s1, &s2, &per_element, &dst};
    static const Kernel k(Module::Attention, "attn_twice_f16");
    dev.launch(k, dim3(dev.grid_for(n)), dim3(dev.block_size()), args);
  };
  twice(ks, k_l, d, 1, k2.get());
  twice(vs, v_l, dv, 0, v2.get());
  auto out = gpu_alloc(dev, b * h * t * dv, DType::F32);
  char* o = static_cast<char*>(out->raw());
  const char* qp = static_cast<const char*>(q2.get());
  const size_t rows = piece_rows(b, h, s, t);
  DeviceBuffer scores(dev, bk * g * rows * s * sizeof(float)), probs(dev, bk * g * rows * s * 2 * es);
  static const Kernel softmax(Module::Attention, "attn_softmax_split_f32");
  for (size_t t0 = 0; t0 < t; t0 += rows) {
    const size_t n = std::min(rows, t - t0);
    const size_t seen = causal ? s - t + t0 + n : s;  // these queries see no key past it
    const size_t gs = n == t ? g : 1;                 // heads a GEMM takes: their rows are adjacent
    char* sc = static_cast<char*>(scores.get());
    char* pr = static_cast<char*>(probs.get());
    for (size_t g0 = 0; g0 < g; g0 += gs) {
      gemm(dev, DType::F16, DType::F32, false, true, gs * n, seen, 2 * d, qp + (g0 * t + t0) * 2 * d * es,
           2 * d, g * t * 2 * d, k2.get(), 2 * d, s * 2 * d, sc + g0 * n * seen * sizeof(float), seen,
           g * n * seen, bk);
    }
    launch_softmax(dev, softmax, bk, g, n, t0, t, s, seen, causal, 1.0f, sc,
                   pr);  // the scale is in q's pairs
    for (size_t g0 = 0; g0 < g; g0 += gs) {
      gemm(dev, DType::F16, DType::F32, false, false, gs * n, dv, 2 * seen, pr + g0 * n * 2 * seen * es,
           2 * seen, g * n * 2 * seen, v2.get(), dv, 2 * s * dv, o + (g0 * t + t0) * dv * sizeof(float), dv,
           g * t * dv, bk);
    }
  }
  return out;
}

StoragePtr attention_gemm(const GpuStorage& qs, const Layout& q_l, const GpuStorage& ks, const Layout& k_l,
                          const GpuStorage& vs, const Layout& v_l, float scale, bool causal) {
  GpuDevice& dev = qs.dev();
  const DType dt = qs.dtype();
  if (dt == DType::F32 && ks.dtype() == DType::F16 && vs.dtype() == DType::F16 && q_l.dims()[3] > 0)
    return attention_split(qs, q_l, ks, k_l, vs, v_l, scale, causal);
  const auto& qd = q_l.dims();
  const size_t b = qd[0], h = qd[1], t = qd[2], d = qd[3];
  const size_t hkv = k_l.dims()[1], s = k_l.dims()[2], dv = v_l.dims()[3], g = h / hkv;
  std::shared_ptr<GpuStorage> keep_q;
  const char* q = static_cast<const char*>(contiguous_data(qs, q_l, keep_q));
  Operand4 k = operand4(ks, k_l, dt), v = operand4(vs, v_l, dt);
  // One stride across (batch, kv head) pairs, as the strided-batched GEMM takes.
  // (Copies made by operand4 are contiguous, so only the storage's own view can need it.)
  const auto batched = [&](Operand4& o, const GpuStorage& src, const Layout& l) {
    if (b == 1 || o.s0 == hkv * o.s1) return;
    auto c = gpu_alloc(dev, l.elem_count(), dt);
    src.copy_strided_src(*c, 0, l);
    const auto& dd = l.dims();
    o = Operand4{c->raw(), dd[1] * dd[2] * dd[3], dd[2] * dd[3], dd[3], c};
  };
  batched(k, ks, k_l);
  batched(v, vs, v_l);
  const DType sdt = dt == DType::F64 ? DType::F64 : DType::F32;  // scores
  const size_t es = dtype_size(dt), ss = dtype_size(sdt);
  auto out = gpu_alloc(dev, b * h * t * dv, dt);
  char* o = static_cast<char*>(out->raw());
  const size_t bk = b * hkv;
  const size_t rows = piece_rows(b, h, s, t);
  DeviceBuffer scores(dev, bk * g * rows * s * ss);
  DeviceBuffer probs;
  if (sdt != dt) probs = DeviceBuffer(dev, bk * g * rows * s * es);
  static const DTypePairKernels softmax(Module::Attention, "attn_softmax");
  for (size_t t0 = 0; t0 < t; t0 += rows) {
    const size_t n = std::min(rows, t - t0);
    const size_t seen = causal ? s - t + t0 + n : s;  // these queries see no key past it
    const size_t gs = n == t ? g : 1;                 // heads a GEMM takes: their rows are adjacent
    char* sc = static_cast<char*>(scores.get());
    char* pr = probs.get() ? static_cast<char*>(probs.get()) : sc;
    for (size_t g0 = 0; g0 < g; g0 += gs) {
      if (d == 0) break;
      gemm(dev, dt, sdt, false, true, gs * n, seen, d, q + (g0 * t + t0) * d * es, d, g * t * d, k.ptr, k.s2,
           k.s1, sc + g0 * n * seen * ss, seen, g * n * seen, bk);
    }
    if (d == 0) {
      set_device(dev.ordinal());
      WICK_GPU_CHECK(gpuMemsetAsync(sc, 0, bk * g * n * seen * ss, dev.stream()));
    }
    launch_softmax(dev, softmax(sdt, dt), bk, g, n, t0, t, s, seen, causal, scale, sc, pr);
    for (size_t g0 = 0; g0 < g; g0 += gs) {
      gemm(dev, dt, dt, false, false, gs * n, dv, seen, pr + g0 * n * seen * es, seen, g * n * seen, v.ptr,
           v.s2, v.s1, o + (g0 * t + t0) * dv * es, dv, g * t * dv, bk);
    }
  }
  return out;
}

}  // namespace

StoragePtr GpuStorage::attention(const Layout& q_l, const BackendStorage& k_s, const Layout& k_l,
                                 const BackendStorage& v_s, const Layout& v_l, float scale, bool causal,
                                 DeviceU32 kv_len) const {
  dispatch_dtype<kFloatDTypes>(dtype_, "attention", []<class T>() {});
  const GpuStorage &ks = of(k_s), &vs = of(v_s);
  const auto& qd = q_l.dims();
  const size_t b = qd[0], h = qd[1], t = qd[2], d = qd[3];
  const size_t hkv = k_l.dims()[1], s = k_l.dims()[2], dv = v_l.dims()[3];
  // Flash decoding where the kernels serve: few queries, rows of at most a wave's lanes
  // times chunk() elements, dims within int, a grid within the launch limits.
  const DType kvt = decode_pair(dtype_, ks.dtype()) && ks.dtype() == vs.dtype() ? ks.dtype() : dtype_;
  const size_t row_max = wave_size(dev_) * ap::chunk(dtype_size(kvt));
  const size_t g_chunks = (h / hkv + ap::kGroup - 1) / ap::kGroup;
  const bool decode = t <= ap::kMaxDecodeQueries && std::max(d, dv) <= row_max && fits_int(h) &&
                      fits_int(s) && fits_int(d) && fits_int(dv) && b * hkv * g_chunks <= 65535;
  if (decode) return attention_decode(*this, q_l, ks, k_l, vs, v_l, scale, causal, kv_len);
  if (!kv_len) return attention_gemm(*this, q_l, ks, k_l, vs, v_l, scale, causal);
  // The GEMM path sizes its work by the key count: read it (this synchronizes).
  uint32_t n = 0;
  kv_len.storage->copy_to_host(&n, kv_len.offset, 1);
  if (n < std::max<size_t>(t, 1) || n > s) {
    throw_error(ErrorKind::IndexOutOfRange, "attention",
                fmt::format("kv_len {} must lie in [{}, {}]", n, std::max<size_t>(t, 1), s));
  }
  const auto first = [n](const Layout& l) {
    std::vector<size_t> dims = l.dims();
    dims[2] = n;
    return Layout(std::move(dims), l.strides(), l.start_offset());
  };
  return attention_gemm(*this, q_l, ks, first(k_l), vs, first(v_l), scale, causal);
}

StoragePtr GpuStorage::rope_kv_cache(RopeKind kind, const Layout& q_l, const BackendStorage& cos_s,
                                     const Layout& cos_l, const BackendStorage& sin_s, const Layout& sin_l,
                                     const KvCacheWrite& w) const {
  dispatch_dtype<kFloatDTypes>(dtype_, "rope_kv_cache", []<class T>() {});
  const auto& qd = q_l.dims();
  size_t b = qd[0], t = qd[1], h = qd[2], d = qd[3];
  size_t hkv = w.k_l->dims()[2], dv = w.v_l->dims()[3];
  size_t s_k = w.k_cache_l->dims()[2], s_v = w.v_cache_l->dims()[2], pos = w.pos;
  const void* pos_dev = w.pos_dev ? of(*w.pos_dev.storage).at(w.pos_dev.offset) : nullptr;
  void* err = dev_.index_error_record();
  auto out = gpu_alloc(dev_, b * h * t * d, dtype_);
  const GpuStorage &kc = of(*w.k_cache), &vc = of(*w.v_cache);
  const void* q = at(q_l.start_offset());
  const void* k = of(*w.k).at(w.k_l->start_offset());
  const void* v = of(*w.v).at(w.v_l->start_offset());
  const void* c = of(cos_s).at(cos_l.start_offset());
  const void* sn = of(sin_s).at(sin_l.start_offset());
  size_t q0 = q_l.strides()[0], q1 = q_l.strides()[1], q2 = q_l.strides()[2];
  size_t k0 = w.k_l->strides()[0], k1 = w.k_l->strides()[1], k2 = w.k_l->strides()[2];
  size_t v0 = w.v_l->strides()[0], v1 = w.v_l->strides()[1], v2 = w.v_l->strides()[2];
  int kind_i = kind == RopeKind::Interleaved ? 1 : 0;
  static const DTypePairKernels kernels(Module::Attention, "rope_kv");
  // One launch for q, k and v when the caches share a dtype, else one for q and k and
  // one for v.
  const auto run = [&](int what, DType cache_dt, void* kcp, void* vcp) {
    void* qo = what & 1 ? out->raw() : nullptr;
    const size_t items =
        b * t *
        (((what & 1) ? h * (d / 2) : 0) + ((what & 2) ? hkv * (d / 2) : 0) + ((what & 4) ? hkv * dv : 0));
    if (items == 0) return;
    void* args[] = {&what, &kind_i, &b,  &t,  &h,  &hkv, &d,  &dv,  &pos, &pos_dev,
                    &s_k,  &s_v,    &q,  &q0, &q1, &q2,  &k,  &k0,  &k1,  &k2,
                    &v,    &v0,     &v1, &v2, &c,  &sn,  &qo, &kcp, &vcp, &err};
    dev_.launch(kernels(dtype_, cache_dt), dim3(dev_.grid_for(items)), dim3(dev_.block_size()), args);
  };
  void* kcp = kc.at(w.k_cache_l->start_offset());
  void* vcp = vc.at(w.v_cache_l->start_offset());
  if (kc.dtype() == vc.dtype()) {
    run(7, kc.dtype(), kcp, vcp);
  } else {
    run(3, kc.dtype(), kcp, nullptr);
    run(4, vc.dtype(), nullptr, vcp);
  }
  return out;
}

}  // namespace wick::gpu
