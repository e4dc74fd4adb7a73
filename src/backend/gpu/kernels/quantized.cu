// QUANTIZED family (issue 5): ggml block types on the GPU.
//   dequantize_{type}_{f32|f16|bf16}(n, src, out): n elements of packed rows of
//       ggml type `type` (q4_0 ... q8_K, f32, f16, bf16) to floats, equal to the CPU's
//       dequantize_row (then one rounding to f16/bf16).
//   quantize_q8_1_{f32|f16|bf16}(m, k, k_pad, x, out): rows of x (m, k) to Q8_1
//       rows of k_pad elements (k rounded up to 512, ggml's MATRIX_ROW_PADDING; the
//       padding quantizes zeros), the reference algorithm of quantize_row_q8_1.
//   mmvq_{type}_b{B}(n, k, row_threads, w, w_row_bytes, act, act_row_bytes, out):
//       out (B, n) f32 = B Q8_1 activation rows times n weight rows, int8 dot
//       products (wick_dp4a); row_threads threads per weight row, 16 elements each per step.
#include "quantized.cuh"
#include "wave.cuh"

namespace wk::q {

template <class T>
__device__ __forceinline__ void store_f(T* p, float v) {
  if constexpr (std::is_same_v<T, float>) {
    *p = v;
  } else if constexpr (std::is_same_v<T, f16s>) {
    p->bits = f32_to_f16(v);
  } else {
    p->bits = f32_to_bf16(v);
  }
}

template <class T>
__device__ __forceinline__ float load_f(const T* p) {
  if constexpr (std::is_same_v<T, float>) {
    return *p;
  } else if constexpr (std::is_same_v<T, f16s>) {
    return f16_to_f32(p->bits);
  } else {
    return bf16_to_f32(p->bits);
  }
}

// Each thread writes 8 consecutive outputs (one 16-byte store for f16/bf16).
template <int Q, class T>
__device__ void dequantize(size_t n, const uint8_t* src, T* out) {
  constexpr int kQK = Traits<Q>::kQK;
  constexpr size_t kBytes = sizeof(typename Traits<Q>::Block);
  const size_t items = (n + 7) / 8;
  for (size_t it = size_t(blockIdx.x) * blockDim.x + threadIdx.x; it < items;
       it += size_t(gridDim.x) * blockDim.x) {
    const size_t e0 = it * 8;
    alignas(16) T v[8];
#pragma unroll
    for (int t = 0; t < 8; ++t) {
      const size_t e = e0 + t;
      float f = 0.f;
      if (kQK > 1 || e < n) f = deq<Q>(src + (e / kQK) * kBytes, int(e % kQK));
      store_f(&v[t], f);
    }
    if (e0 + 8 <= n) {
      if constexpr (sizeof(T) == 2) {
        *reinterpret_cast<uint4*>(out + e0) = *reinterpret_cast<const uint4*>(v);
      } else {
        reinterpret_cast<uint4*>(out + e0)[0] = reinterpret_cast<const uint4*>(v)[0];
        reinterpret_cast<uint4*>(out + e0)[1] = reinterpret_cast<const uint4*>(v)[1];
      }
    } else {
#pragma unroll
      for (int t = 0; t < 8; ++t)
        if (e0 + t < n) out[e0 + t] = v[t];
    }
  }
}

// One thread per element of the padded rows; 32 aligned lanes make one block.
template <class T>
__device__ void quantize_q8_1(size_t m, size_t k, size_t k_pad, const T* x, uint8_t* out) {
  const size_t total = m * k_pad;  // a multiple of 512: every wave is wholly in or out
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += size_t(gridDim.x) * blockDim.x) {
    const size_t r = i / k_pad, c = i % k_pad;
    const float v = c < k ? load_f(x + r * k + c) : 0.f;
    const float amax = group_allreduce(fabsf(v), 32, [](float a, float b) { return fmaxf(a, b); });
    const float d = amax / 127.f;
    const float id = d != 0.f ? 1.f / d : 0.f;
    const int q = int(roundf(v * id));
    const int sum = group_allreduce(q, 32, [](int a, int b) { return a + b; });
    BlockQ8_1* blk = reinterpret_cast<BlockQ8_1*>(out + r * (k_pad / 32) * sizeof(BlockQ8_1)) + c / 32;
    blk->qs[c % 32] = int8_t(q);
    if (c % 32 == 0) {
      blk->d = f32_to_f16(d);
      blk->s = f32_to_f16(float(sum) * d);
    }
  }
}

// `row_threads` threads (whole waves, dividing blockDim.x) share one weight row,
// each taking 16 elements per step; partial sums meet through the waves' shuffles
// and, for a row wider than a wave, shared memory.
template <int Q, int B>
__device__ void mmvq(int n, int k, int row_threads, const uint8_t* w, size_t w_row_bytes, const uint8_t* act,
                     size_t act_row_bytes, float* out) {
  __shared__ float partial[kMaxWaves][B];
  const int wave = warpSize, lane = int(threadIdx.x) % wave, wave_id = int(threadIdx.x) / wave;
  const int t = int(threadIdx.x) % row_threads;
  const int row = int(blockIdx.x) * (int(blockDim.x) / row_threads) + int(threadIdx.x) / row_threads;
  const bool valid = row < n;  // no early return: the block synchronizes below
  const uint8_t* wr = w + size_t(valid ? row : 0) * w_row_bytes;
  float acc[B];
#pragma unroll
  for (int b = 0; b < B; ++b) acc[b] = 0.f;
  for (int e = t * 16; valid && e < k; e += row_threads * 16) {
    const Chunk16 c = unpack16<Q>(wr, e);
#pragma unroll
    for (int b = 0; b < B; ++b) {
      const BlockQ8_1* ab = reinterpret_cast<const BlockQ8_1*>(act + size_t(b) * act_row_bytes) + e / 32;
      const int* a = reinterpret_cast<const int*>(ab->qs + e % 32);  // 4-byte aligned (36-byte blocks)
      int sq = 0, sa = 0;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int ai = a[i];
        sq = wick_dp4a(c.q[i], ai, sq);
        sa = wick_dp4a(0x01010101, ai, sa);
      }
      acc[b] += h2f(ab->d) * (c.scale * float(sq) + c.min * float(sa));
    }
  }
#pragma unroll
  for (int b = 0; b < B; ++b) acc[b] = group_allreduce(acc[b], wave, [](float x, float y) { return x + y; });
  if (row_threads > wave) {
    if (lane == 0) {
#pragma unroll
      for (int b = 0; b < B; ++b) partial[wave_id][b] = acc[b];
    }
    __syncthreads();
    if (t == 0) {
      const int w0 = wave_id, nw = row_threads / wave;
#pragma unroll
      for (int b = 0; b < B; ++b) {
        float s = partial[w0][b];
        for (int i = 1; i < nw; ++i) s += partial[w0 + i][b];
        acc[b] = s;
      }
    }
  }
  if (valid && t == 0) {
#pragma unroll
    for (int b = 0; b < B; ++b) out[size_t(b) * size_t(n) + size_t(row)] = acc[b];
  }
}

}  // namespace wk::q

#define DEQ_KERNEL(Q, QS, T, TS)                                             \
  WICK_KERNEL dequantize_##QS##_##TS(size_t n, const uint8_t* src, T* out) { \
    wk::q::dequantize<Q>(n, src, out);                                       \
  }
#define DEQ_KERNELS(Q, QS)         \
  DEQ_KERNEL(Q, QS, float, f32)    \
  DEQ_KERNEL(Q, QS, wk::f16s, f16) \
  DEQ_KERNEL(Q, QS, wk::bf16s, bf16)

#define MMVQ_KERNEL(Q, QS, B)                                                                       \
  WICK_KERNEL mmvq_##QS##_b##B(int n, int k, int row_threads, const uint8_t* w, size_t w_row_bytes, \
                               const uint8_t* act, size_t act_row_bytes, float* out) {              \
    wk::q::mmvq<Q, B>(n, k, row_threads, w, w_row_bytes, act, act_row_bytes, out);                  \
  }
#define MMVQ_KERNELS(Q, QS) \
  MMVQ_KERNEL(Q, QS, 1)     \
  MMVQ_KERNEL(Q, QS, 2)     \
  MMVQ_KERNEL(Q, QS, 3)     \
  MMVQ_KERNEL(Q, QS, 4)     \
  MMVQ_KERNEL(Q, QS, 5)     \
  MMVQ_KERNEL(Q, QS, 6)     \
  MMVQ_KERNEL(Q, QS, 7)     \
  MMVQ_KERNEL(Q, QS, 8)

#define Q_TYPE(Q, QS) DEQ_KERNELS(Q, QS) MMVQ_KERNELS(Q, QS)

DEQ_KERNELS(wk::q::kF32, f32)
DEQ_KERNELS(wk::q::kF16, f16)
DEQ_KERNELS(wk::q::kBF16, bf16)
Q_TYPE(wk::q::kQ4_0, q4_0)
Q_TYPE(wk::q::kQ4_1, q4_1)
Q_TYPE(wk::q::kQ5_0, q5_0)
Q_TYPE(wk::q::kQ5_1, q5_1)
Q_TYPE(wk::q::kQ8_0, q8_0)
Q_TYPE(wk::q::kQ8_1, q8_1)
Q_TYPE(wk::q::kQ2_K, q2_K)
Q_TYPE(wk::q::kQ3_K, q3_K)
Q_TYPE(wk::q::kQ4_K, q4_K)
Q_TYPE(wk::q::kQ5_K, q5_K)
Q_TYPE(wk::q::kQ6_K, q6_K)
Q_TYPE(wk::q::kQ8_K, q8_K)

WICK_KERNEL quantize_q8_1_f32(size_t m, size_t k, size_t k_pad, const float* x, uint8_t* out) {
  wk::q::quantize_q8_1(m, k, k_pad, x, out);
}
WICK_KERNEL quantize_q8_1_f16(size_t m, size_t k, size_t k_pad, const wk::f16s* x, uint8_t* out) {
  wk::q::quantize_q8_1(m, k, k_pad, x, out);
}
WICK_KERNEL quantize_q8_1_bf16(size_t m, size_t k, size_t k_pad, const wk::bf16s* x, uint8_t* out) {
  wk::q::quantize_q8_1(m, k, k_pad, x, out);
}
