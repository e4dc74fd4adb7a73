// Helpers shared by the benchmark files of wick_bench: random inputs, the CPU cases'
// timing loop with its byte and FLOP counters, the copies a mat-vec cycles through,
// and the GPU cases' check that a GPU is there.
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>

#include "wick/device.h"
#include "wick/tensor.h"

namespace wick::bench {

// Standard normal values of shape s in dtype dt (drawn in f32, then converted).
inline Tensor randn(const Shape& s, DType dt = DType::F32, uint64_t seed = 1) {
  Tensor::manual_seed(seed);
  return Tensor::randn(s, DType::F32).to_dtype(dt);
}

// Runs `op` per iteration after one warm-up call (which also takes oneDNN's kernel
// generation); `bytes` and `flops` are per call (0 = not reported). An op that throws
// marks its case as an error instead of aborting.
inline void run(benchmark::State& state, double bytes, double flops, const std::function<Tensor()>& op) {
  try {
    (void)op();  // warm-up: first-use costs
    for (auto _ : state) {
      // Each output is released before the next call, as the peer's loop drops its
      // result, so the allocator hands the same block back: keeping it across the
      // call would make every call write a block the previous call did not.
      Tensor out = op();
      benchmark::DoNotOptimize(out);
    }
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  if (bytes > 0) state.SetBytesProcessed(int64_t(bytes * double(state.iterations())));
  if (flops > 0)
    state.counters["FLOP/s"] =
        benchmark::Counter(flops * double(state.iterations()), benchmark::Counter::kIsRate);
}

// The mat-vecs cycle through copies of their matrix that together span at least 256 MB,
// so every call reads the matrix from DRAM, not from a server CPU's L3 (tens of MB,
// larger than a quantized [14336 x 4096]): the figure the model runner's decode sees.
// How many copies of a `bytes`-byte matrix that takes.
inline size_t copies_for(double bytes) { return size_t(256e6 / bytes) + 1; }

inline bool have_gpu() {
  for (const Device& d : available_devices())
    if (d.is_gpu()) return true;
  return false;
}

}  // namespace wick::bench

// The first statement of a GPU case: without a GPU the case is an error, not a crash.
#define REQUIRE_GPU_BENCH() \
  if (!::wick::bench::have_gpu()) return state.SkipWithError("no GPU backend/device")
