// QUANTIZED: the generic int8 mat-vec, every quantized type.
//   mmvq<Q, B>: out (B, n) f32 = B Q8_1 activation rows (quantize_q8_1) times n
//       weight rows of type Q, int8 dot products (wick_dp4a) on unpack16's chunks;
//       row_threads threads per weight row, 16 elements each per step.
#pragma once

#include "../wave.cuh"
#include "blocks.cuh"

namespace wk::q {

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
