// conv2d f32 x [4,64,56,56] * w [64,64,3,3], padding 1 (the `wick bench` conv case),
// through oneDNN two ways, for deciding the CPU backend's convolution layouts by one
// run on the target machine. Each call does what src/backend/cpu/conv.cpp does: reorder
// the NCHW input and OIHW weights into the primitive's layouts, convolve, reorder the
// output back to NCHW. Cases (BM_CpuConvAB/...):
//   wick: wick's conv2d itself;
//   any:  source, weights and destination left to oneDNN (format_tag::any), as conv.cpp
//         does (Debian's oneDNN 2.6 picks brgconv on NHWC for 64 channels);
//   nChw16c: source and destination in 16-channel blocks, weights left to oneDNN
//         (the layout PyTorch's oneDNN path picks: jit:avx512_core).
// oneDNN runs on wick's thread count (WICK_NUM_THREADS, else every core this process
// may run on).
#include <benchmark/benchmark.h>
#include <omp.h>
#include <sched.h>

#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <vector>

#include "bench_util.h"
#include "wick/options.h"
#include "wick/tensor.h"

namespace wick {
namespace {

using namespace bench;
using dnnl::memory;
using tag = memory::format_tag;

constexpr memory::dim kB = 4, kC = 64, kH = 56, kW = 56, kK = 3;

int threads() {
  if (options().cpu_threads > 0) return options().cpu_threads;
  cpu_set_t set;
  return sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
}

void BM_CpuConvWick(benchmark::State& state) {
  Tensor x = randn({size_t(kB), size_t(kC), size_t(kH), size_t(kW)}, DType::F32, 1),
         w = randn({size_t(kC), size_t(kC), size_t(kK), size_t(kK)}, DType::F32, 2);
  run(state, 0, 2.0 * double(kB * kC * kH * kW) * double(kC * kK * kK), [&] { return x.conv2d(w, 1); });
}

void BM_CpuConvOneDnn(benchmark::State& state, tag act) {
  omp_set_num_threads(threads());
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream s(eng);
  const memory::dims xd{kB, kC, kH, kW}, wd{kC, kC, kK, kK}, od{kB, kC, kH, kW};
  const memory::desc x_user(xd, memory::data_type::f32, tag::nchw),
      w_user(wd, memory::data_type::f32, tag::oihw), o_user(od, memory::data_type::f32, tag::nchw);
  const memory::desc x_any(xd, memory::data_type::f32, act), w_any(wd, memory::data_type::f32, tag::any),
      o_any(od, memory::data_type::f32, act);
  dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                    x_any, w_any, o_any, {1, 1}, {0, 0}, {1, 1}, {1, 1});
  dnnl::convolution_forward::primitive_desc pd(d, eng);
  state.SetLabel(pd.impl_info_str());
  const std::vector<float>
      xv = randn({size_t(kB), size_t(kC), size_t(kH), size_t(kW)}, DType::F32, 1).to_vector<float>(),
      wv = randn({size_t(kC), size_t(kC), size_t(kK), size_t(kK)}, DType::F32, 2).to_vector<float>();
  std::vector<float> ov(size_t(kB * kC * kH * kW));
  memory xm(x_user, eng, const_cast<float*>(xv.data())), wm(w_user, eng, const_cast<float*>(wv.data())),
      om(o_user, eng, ov.data());
  memory xc(pd.src_desc(), eng), wc(pd.weights_desc(), eng), oc(pd.dst_desc(), eng);
  dnnl::reorder rx(xm, xc), rw(wm, wc), ro(oc, om);
  dnnl::convolution_forward conv(pd);
  auto call = [&] {
    rx.execute(s, xm, xc);
    rw.execute(s, wm, wc);
    conv.execute(s, {{DNNL_ARG_SRC, xc}, {DNNL_ARG_WEIGHTS, wc}, {DNNL_ARG_DST, oc}});
    ro.execute(s, oc, om);
    s.wait();
  };
  call();
  for (auto _ : state) {
    call();
    benchmark::DoNotOptimize(ov.data());
  }
  state.counters["FLOP/s"] =
      benchmark::Counter(2.0 * double(kB * kC * kH * kW) * double(kC * kK * kK) * double(state.iterations()),
                         benchmark::Counter::kIsRate);
}

const int kRegistered = [] {
  auto reg = [](const std::string& name, auto fn, auto... args) {
    benchmark::RegisterBenchmark(("BM_CpuConvAB/" + name).c_str(), fn, args...)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  };
  reg("wick", BM_CpuConvWick);
  reg("any", BM_CpuConvOneDnn, tag::any);
  reg("nChw16c", BM_CpuConvOneDnn, tag::nChw16c);
  return 0;
}();

}  // namespace
}  // namespace wick
