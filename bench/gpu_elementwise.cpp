// GPU elementwise bandwidth (the elementwise speed targets) on gpu:0: each case runs
// kRepeat ops back to back between two synchronizations and reports the bytes it
// must move (each input read once, the output written once) per second. The
// device-to-device copy measured in the same run is the ceiling the others are
// compared with (bench/torch_compare.py prints the ratios and PyTorch's figures).
// Cases skip with a message when no GPU is present.
#include <benchmark/benchmark.h>

#include <chrono>
#include <functional>

#include "bench_util.h"
#include "wick/device.h"
#include "wick/tensor.h"

namespace wick {
namespace {

constexpr int kRepeat = 10;
constexpr size_t kN = size_t(1) << 28;
constexpr size_t kSide = 16384;

// Times `op` (after one warm-up) in kRepeat-op batches; `bytes` per op.
void run_case(benchmark::State& state, double bytes, const std::function<Tensor()>& setup_and_op) {
  REQUIRE_GPU_BENCH();
  const Device gpu = Device::gpu(0);
  Tensor out = setup_and_op();  // warm-up: module load, allocator fill
  synchronize(gpu);
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kRepeat; ++i) out = setup_and_op();
    synchronize(gpu);
    auto t1 = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count() / kRepeat);
  }
  state.SetBytesProcessed(int64_t(bytes * double(state.iterations())));
  state.counters["TBps"] =
      benchmark::Counter(bytes * double(state.iterations()) / 1e12, benchmark::Counter::kIsRate);
}

Tensor input(DType dt, double lo, double hi, uint64_t seed, const Shape& s = Shape{kN}) {
  Tensor::manual_seed(seed, Device::gpu(0));
  return Tensor::rand(s, DType::F32, Device::gpu(0), lo, hi).to_dtype(dt);
}

void BM_GpuD2DCopy(benchmark::State& state, DType dt) {
  REQUIRE_GPU_BENCH();
  Tensor x = input(dt, -1, 1, 1);
  run_case(state, 2.0 * kN * dtype_size(dt), [&] { return x.copy(); });
}
void BM_GpuAffine(benchmark::State& state, DType dt) {
  REQUIRE_GPU_BENCH();
  Tensor x = input(dt, -1, 1, 2);
  run_case(state, 2.0 * kN * dtype_size(dt), [&] { return x.affine(1.5, 0.5); });
}
void BM_GpuExp(benchmark::State& state, DType dt) {
  REQUIRE_GPU_BENCH();
  Tensor x = input(dt, -1, 1, 3);
  run_case(state, 2.0 * kN * dtype_size(dt), [&] { return x.exp(); });
}
void BM_GpuAdd(benchmark::State& state, DType dt) {
  REQUIRE_GPU_BENCH();
  Tensor x = input(dt, -1, 1, 4), y = input(dt, -1, 1, 5);
  run_case(state, 3.0 * kN * dtype_size(dt), [&] { return x.add(y); });
}
void BM_GpuWhere(benchmark::State& state, DType dt) {
  REQUIRE_GPU_BENCH();
  Tensor x = input(dt, -1, 1, 6), y = input(dt, -1, 1, 7);
  Tensor c = input(DType::F32, 0, 2, 8).to_dtype(DType::U8);
  run_case(state, double(kN) * (1 + 3 * dtype_size(dt)), [&] { return c.where_cond(x, y); });
}
void BM_GpuCast(benchmark::State& state, DType from, DType to) {
  REQUIRE_GPU_BENCH();
  Tensor x = input(from, -1, 1, 9);
  run_case(state, double(kN) * double(dtype_size(from) + dtype_size(to)), [&] { return x.to_dtype(to); });
}
void BM_GpuBroadcastAdd(benchmark::State& state, DType dt) {
  REQUIRE_GPU_BENCH();
  Tensor x = input(dt, -1, 1, 10, Shape{kSide, kSide}), b = input(dt, -1, 1, 11, Shape{kSide});
  run_case(state, double(dtype_size(dt)) * (2.0 * kSide * kSide + kSide), [&] { return x.add(b); });
}
void BM_GpuTransposeCopy(benchmark::State& state, DType dt) {
  REQUIRE_GPU_BENCH();
  Tensor x = input(dt, -1, 1, 12, Shape{kSide, kSide});
  run_case(state, double(dtype_size(dt)) * 2.0 * kSide * kSide, [&] { return x.t().copy(); });
}

// One small eager op: kEager ops on 16 f32 elements between two synchronizations, the
// time per op. It is the host's (the tensor front end, the backend, the launch) where the
// host is slower than the GPU runs such kernels back to back, else the GPU's.
// bench/torch_compare.py times PyTorch's ops the same way.
constexpr int kEager = 1000;
enum class EagerOp { Add, Exp, Sum, RmsNorm };
struct EagerInputs {
  Tensor x = input(DType::F32, -1, 1, 13, Shape{16}), y = input(DType::F32, -1, 1, 14, Shape{16});
  Tensor w = input(DType::F32, 0.5, 1.5, 15, Shape{16});
  Tensor run(EagerOp which) const {
    switch (which) {
      case EagerOp::Add:
        return x.add(y);
      case EagerOp::Exp:
        return x.exp();
      case EagerOp::Sum:
        return x.sum({0});
      case EagerOp::RmsNorm:
        return nn::rms_norm(x, w, 1e-5f);
    }
    return x;
  }
};
void BM_GpuEagerOp(benchmark::State& state, EagerOp which) {
  REQUIRE_GPU_BENCH();
  const Device gpu = Device::gpu(0);
  const EagerInputs in;
  Tensor out = in.run(which);
  synchronize(gpu);
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kEager; ++i) out = in.run(which);
    synchronize(gpu);
    auto t1 = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count() / kEager);
  }
}

// The host's own time for one small eager op: the time to queue kBurst of them after a
// synchronization, per op (the launches return while the device's queue has room, so
// the GPU's speed does not enter).
constexpr int kBurst = 200;
void BM_GpuEagerQueue(benchmark::State& state, EagerOp which) {
  REQUIRE_GPU_BENCH();
  const Device gpu = Device::gpu(0);
  const EagerInputs in;
  Tensor out = in.run(which);
  for (auto _ : state) {
    synchronize(gpu);
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kBurst; ++i) out = in.run(which);
    auto t1 = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count() / kBurst);
  }
  synchronize(gpu);
}

#define WICK_GPU_BENCH(fn, ...) \
  BENCHMARK_CAPTURE(fn, __VA_ARGS__)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.3)

WICK_GPU_BENCH(BM_GpuD2DCopy, f32, DType::F32);
WICK_GPU_BENCH(BM_GpuD2DCopy, bf16, DType::BF16);
WICK_GPU_BENCH(BM_GpuAffine, f32, DType::F32);
WICK_GPU_BENCH(BM_GpuAffine, bf16, DType::BF16);
WICK_GPU_BENCH(BM_GpuExp, f32, DType::F32);
WICK_GPU_BENCH(BM_GpuExp, bf16, DType::BF16);
WICK_GPU_BENCH(BM_GpuAdd, f32, DType::F32);
WICK_GPU_BENCH(BM_GpuAdd, bf16, DType::BF16);
WICK_GPU_BENCH(BM_GpuWhere, f32, DType::F32);
WICK_GPU_BENCH(BM_GpuWhere, bf16, DType::BF16);
WICK_GPU_BENCH(BM_GpuCast, f32_bf16, DType::F32, DType::BF16);
WICK_GPU_BENCH(BM_GpuCast, bf16_f32, DType::BF16, DType::F32);
WICK_GPU_BENCH(BM_GpuBroadcastAdd, f32, DType::F32);
WICK_GPU_BENCH(BM_GpuTransposeCopy, f32, DType::F32);
// A fixed count of batches: the manual time is per op, so a minimum time would ask
// for that much time per op.
#define WICK_GPU_EAGER_BENCH(fn, name, op) \
  BENCHMARK_CAPTURE(fn, name, op)->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(50)
WICK_GPU_EAGER_BENCH(BM_GpuEagerOp, add, EagerOp::Add);
WICK_GPU_EAGER_BENCH(BM_GpuEagerOp, exp, EagerOp::Exp);
WICK_GPU_EAGER_BENCH(BM_GpuEagerOp, sum, EagerOp::Sum);
WICK_GPU_EAGER_BENCH(BM_GpuEagerOp, rms_norm, EagerOp::RmsNorm);
WICK_GPU_EAGER_BENCH(BM_GpuEagerQueue, add, EagerOp::Add);
WICK_GPU_EAGER_BENCH(BM_GpuEagerQueue, exp, EagerOp::Exp);
WICK_GPU_EAGER_BENCH(BM_GpuEagerQueue, sum, EagerOp::Sum);
WICK_GPU_EAGER_BENCH(BM_GpuEagerQueue, rms_norm, EagerOp::RmsNorm);

}  // namespace
}  // namespace wick
