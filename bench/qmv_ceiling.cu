// The read ceiling behind the batch-1 quantized mat-vec target: how fast
// one kernel can read a weight of 33 / 48 / 62 MB (Q4_0 / Q6_K / Q8_0 at 14336 x
// 4096) from HBM, back to back, with calls cycling through copies spanning 256 MB as
// bench/gpu_quant.cpp does. Also: an empty kernel back to back, the host's time to
// queue one, and a tiny kernel before each read (what a separate activation-quantize
// launch costs a call).
// Standalone (CUDA only, not part of the library): scripts/gpu-check.sh builds it
// with nvcc on the GPU machine.
//   nvcc -O3 -arch=sm_90 -o qmv_ceiling bench/qmv_ceiling.cu && ./qmv_ceiling
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <vector>

#define CK(x)                                                                  \
  do {                                                                         \
    cudaError_t e = (x);                                                       \
    if (e != cudaSuccess) {                                                    \
      std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); \
      return 1;                                                                \
    }                                                                          \
  } while (0)

// One 16-byte word per thread per step, U steps in flight, grid-stride.
template <int U>
__global__ void read_words(const uint4* __restrict__ p, size_t words, unsigned* out) {
  unsigned acc = 0;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < words; i += U * stride) {
    uint4 r[U];
#pragma unroll
    for (int u = 0; u < U; ++u) r[u] = i + u * stride < words ? __ldg(p + i + u * stride) : make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int u = 0; u < U; ++u) acc ^= r[u].x ^ r[u].y ^ r[u].z ^ r[u].w;
  }
  if (acc == 0x12345678u) out[0] = acc;  // keeps the loads
}

// Each warp reads a contiguous range (as a persistent mat-vec warp owning rows
// would), U words per lane in flight.
template <int U>
__global__ void read_ranges(const uint4* __restrict__ p, size_t words, unsigned* out) {
  const int lane = threadIdx.x % 32;
  const size_t warps = size_t(gridDim.x) * blockDim.x / 32;
  const size_t wid = (size_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const size_t per = (words + warps - 1) / warps;
  const size_t b = wid * per, e = b + per < words ? b + per : words;
  unsigned acc = 0;
  for (size_t i = b + lane; i < e; i += U * 32) {
    uint4 r[U];
#pragma unroll
    for (int u = 0; u < U; ++u) r[u] = i + u * 32 < e ? __ldg(p + i + u * 32) : make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int u = 0; u < U; ++u) acc ^= r[u].x ^ r[u].y ^ r[u].z ^ r[u].w;
  }
  if (acc == 0x12345678u) out[0] = acc;
}

__global__ void tiny(unsigned* out) {
  if (threadIdx.x == 1000) out[1] = 1;
}

int main() {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const size_t span = size_t(256) << 20;
  uint4* buf = nullptr;
  unsigned* out = nullptr;
  CK(cudaMalloc(&buf, span + (size_t(64) << 20)));
  CK(cudaMalloc(&out, 64));
  CK(cudaMemset(buf, 1, span + (size_t(64) << 20)));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  const int calls = 400;
  auto time = [&](auto&& launch) {
    for (int i = 0; i < 20; ++i) launch(i);
    cudaEventRecord(e0);
    for (int i = 0; i < calls; ++i) launch(i);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    return double(ms) * 1e3 / calls;  // us per call
  };
  std::printf("GPU SMs %d\n", sms);
  std::printf("empty kernel back to back: %.2f us\n", time([&](int) { tiny<<<1, 32>>>(out); }));
  {  // the host's time to queue one launch: 200 after a synchronization, the mean of 50
    double total = 0;
    for (int r = 0; r < 50; ++r) {
      CK(cudaDeviceSynchronize());
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 200; ++i) tiny<<<1, 32>>>(out);
      total += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 200;
    }
    CK(cudaDeviceSynchronize());
    std::printf("empty kernel, the host's time to queue one: %.2f us\n", total / 50);
  }
  const double sizes[] = {33030144, 48168960, 62390272};  // q4_0, q6_K, q8_0 [14336 x 4096]
  const char* names[] = {"q4_0 33.0 MB", "q6_K 48.2 MB", "q8_0 62.4 MB"};
  for (int s = 0; s < 3; ++s) {
    const size_t bytes = size_t(sizes[s]), words = bytes / 16;
    const size_t copies = span / bytes;
    auto at = [&](int i) { return buf + (size_t(i) % copies) * words; };
    auto report = [&](const char* what, double us) {
      std::printf("%-14s %-44s %7.2f us  %.3f TB/s\n", names[s], what, us, double(bytes) / us * 1e-6);
    };
    report("read_words<1>, one word per thread", time([&](int i) {
             read_words<1><<<unsigned((words + 255) / 256), 256>>>(at(i), words, out);
           }));
    for (int bps : {2, 4, 8}) {
      char t[64];
      std::snprintf(t, sizeof t, "read_words<4>, %d x 256-thread blocks/SM", bps);
      report(t, time([&](int i) { read_words<4><<<sms * bps, 256>>>(at(i), words, out); }));
      std::snprintf(t, sizeof t, "read_ranges<4>, %d x 256-thread blocks/SM", bps);
      report(t, time([&](int i) { read_ranges<4><<<sms * bps, 256>>>(at(i), words, out); }));
      std::snprintf(t, sizeof t, "read_ranges<8>, %d x 256-thread blocks/SM", bps);
      report(t, time([&](int i) { read_ranges<8><<<sms * bps, 256>>>(at(i), words, out); }));
    }
    report("tiny kernel + read_ranges<4>, 4 blocks/SM", time([&](int i) {
             tiny<<<16, 256>>>(out);
             read_ranges<4><<<sms * 4, 256>>>(at(i), words, out);
           }));
  }
  // 1 GiB copy-sized read for scale
  {
    const size_t words = span / 16;
    const double us = time([&](int) { read_words<4><<<sms * 8, 256>>>(buf, words, out); });
    std::printf("read 256 MiB (read_words<4>, 8 blocks/SM): %.2f us %.3f TB/s\n", us, double(span) / us * 1e-6);
  }
  CK(cudaGetLastError());
  return 0;
}
