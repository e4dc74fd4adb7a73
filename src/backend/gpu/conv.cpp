// Entry points of the CONV family: convolutions through the vendor DNN library
// (cuDNN) where the build has one and it loads, else as im2col / col2im kernels
// plus the shared GEMM (gpu_ops.h); pooling and upsampling (kernels/conv.cu).
//
// cuDNN is dlopen'ed on the first convolution (dnn_api: libcudnn.so.9 on the
// loader's path, then the one CMake found), not linked: without it the module
// still loads and every convolution takes the im2col path.
// cuDNN: conv1d / conv2d are its forward convolution, conv_transpose1d / 2d its
// backward-data convolution (1-D as 2-D with H = 1), on NCHW tensors. The first
// call of a shape times cuDNN's algorithms on the call's own buffers
// (FindConvolution*AlgorithmEx, run twice, the second ranking kept; the workspace
// from the device's caching allocator) and keeps the fastest of those that compute each output as one sum of
// products (implicit / precomputed-implicit / explicit GEMM, direct; not FFT or Winograd, whose rounding the
// GEMM error bound of the tests does not describe). f16 / bf16 multiply on tensor cores and accumulate in
// f32; f32 is full f32 (FMA math) unless options().allow_tf32; f64 in f64. A shape cuDNN does not cover (a
// tensor of 2^31 elements or more, a transposed convolution whose output_padding reaches its stride, or no
// GEMM-like algorithm) takes the im2col path, and so does every call while options().portable_gemm is set.
//
// im2col: conv1d / conv2d: col = im2col(x) for a chunk of batches (all channels; at most
// ~1 GiB of columns), then per group one strided-batched GEMM
//   out[b, g*Cout/G .. ] (Cout/G x OH*OW) = W_g (Cout/G x Cin/G*KH*KW) x col[b, g]
// with W_g shared by every batch (batch stride 0), landing in NCHW directly.
// conv_transpose1d / 2d: cols[b] = W^T x X[b] (W viewed Cin x Cout*KH*KW, X[b] Cin x
// H*W; cols in the compute type), then col2im gathers each output's taps.
// 1-D ops run as 2-D with H = KH = 1. Float dtypes; compute in f32 (f64 for f64).
#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <compare>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "backend/gpu/conv_geom.h"
#include "backend/gpu/gpu_ops.h"
#include "base/dispatch.h"

namespace wick::gpu {

namespace {

// Column scratch per chunk of batches (im2col), and the least workspace the cuDNN
// algorithm search is offered (dnn_find_bytes).
constexpr size_t kColBytes = size_t(1) << 30;
constexpr size_t kMaxRows = size_t(1) << 20;  // im2col grid cap (grid-stride over column rows)

ConvGeomK geom_2d(size_t c_in, size_t h, size_t w, size_t c_out, size_t k_h, size_t k_w, size_t pad,
                  size_t stride, size_t dil, size_t out_h, size_t out_w) {
  ConvGeomK g{};
  g.c_in = c_in, g.h = h, g.w = w, g.c_out = c_out, g.k_h = k_h, g.k_w = k_w;
  g.pad_h = g.pad_w = pad, g.stride_h = g.stride_w = stride, g.dil_h = g.dil_w = dil;
  g.out_h = out_h, g.out_w = out_w;
  return g;
}

ConvGeomK geom_1d(size_t c_in, size_t l_in, size_t c_out, size_t k, size_t pad, size_t stride, size_t dil,
                  size_t l_out) {
  ConvGeomK g = geom_2d(c_in, 1, l_in, c_out, 1, k, pad, stride, dil, 1, l_out);
  g.pad_h = 0, g.stride_h = 1, g.dil_h = 1;
  return g;
}

void set_strides(ConvGeomK& g, const Layout& l) {
  const auto& s = l.strides();
  if (l.rank() == 3) {
    g.s_b = s[0], g.s_c = s[1], g.s_h = 0, g.s_w = s[2];
  } else {
    g.s_b = s[0], g.s_c = s[1], g.s_h = s[2], g.s_w = s[3];
  }
}

PlanesK planes_of(const Layout& l) {
  const auto& s = l.strides();
  if (l.rank() == 3) return {l.dims()[1], s[0], s[1], 0, s[2]};
  return {l.dims()[1], s[0], s[1], s[2], s[3]};
}

}  // namespace

#if defined(WICK_GPU_DNN)
const DnnApi* dnn_api() {
  static const DnnApi* const api = []() -> const DnnApi* {
    // The loader's path (LD_LIBRARY_PATH, a cuDNN already loaded), then the library
    // CMake found; its sub-libraries load from its own folder.
    void* lib = ::dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
#if defined(WICK_CUDNN_LIBRARY_PATH)
    if (!lib) lib = ::dlopen(WICK_CUDNN_LIBRARY_PATH, RTLD_NOW | RTLD_LOCAL);
#endif
    if (!lib) return nullptr;
    static DnnApi a;
    bool all = true;
#define WICK_GPUDNN_RESOLVE(name)                                           \
  a.name = reinterpret_cast<decltype(a.name)>(::dlsym(lib, "cudnn" #name)); \
  all = all && a.name != nullptr;
    WICK_GPUDNN_FUNCS(WICK_GPUDNN_RESOLVE)
#undef WICK_GPUDNN_RESOLVE
    if (!all || int(a.GetVersion() / 10000) != GPUDNN_HEADER_MAJOR) {
      ::dlclose(lib);
      return nullptr;
    }
    return &a;
  }();
  return api;
}

[[noreturn]] void throw_dnn_error(gpudnnStatus_t st, const char* call, const char* file, int line) {
  const char* base = file;
  for (const char* p = file; *p; ++p)
    if (*p == '/') base = p + 1;
  throw_error(ErrorKind::GpuRuntime, "gpu",
              fmt::format("{} failed at {}:{}: {}", call, base, line, gpudnnGetErrorString(st)));
}

// A convolution as cuDNN's forward convolution sees it: input (n, c, h, w), filter
// (k, c / groups, r, s), NCHW; a transposed convolution is the backward-data pass
// of the forward convolution from its output to its input. `align`: the lowest
// alignment of the three buffers (at most 16 bytes), as an algorithm timed on
// aligned buffers may refuse others.
struct DnnConvKey {
  bool transposed = false, tf32 = false;
  DType dt = DType::F32;
  int n = 0, c = 0, h = 0, w = 0, k = 0, r = 0, s = 0, pad_h = 0, pad_w = 0, stride_h = 0, stride_w = 0,
      dil_h = 0, dil_w = 0, groups = 0;
  unsigned align = 0;
  auto operator<=>(const DnnConvKey&) const = default;
};

// The descriptors of one key and the algorithm chosen for it (algo < 0: cuDNN
// has no GEMM-like algorithm for it, the im2col path runs it).
struct DnnConvPlan {
  gpudnnTensorDescriptor_t in = nullptr, out = nullptr;  // the forward convolution's input and output
  gpudnnFilterDescriptor_t filter = nullptr;
  gpudnnConvolutionDescriptor_t conv = nullptr;
  int algo = -1;
  size_t workspace = 0;
  DnnConvPlan() = default;
  DnnConvPlan(const DnnConvPlan&) = delete;
  DnnConvPlan& operator=(const DnnConvPlan&) = delete;
  ~DnnConvPlan() {  // best effort
    if (in) (void)gpudnnDestroyTensorDescriptor(in);
    if (out) (void)gpudnnDestroyTensorDescriptor(out);
    if (filter) (void)gpudnnDestroyFilterDescriptor(filter);
    if (conv) (void)gpudnnDestroyConvolutionDescriptor(conv);
  }
};

struct GpuDevice::DnnState {
  gpudnnHandle_t handle = nullptr;
  std::mutex mu;  // the handle's calls, the plans and the count
  std::map<DnnConvKey, std::unique_ptr<DnnConvPlan>> plans;
  long convolutions = 0;
};

GpuDevice::DnnState& GpuDevice::dnn_state() {
  flush();  // the handle queues on the stream: the deferred ops go first
  std::lock_guard<std::mutex> lock(lazy_mu_);
  if (!dnn_) {
    set_device(local_);
    auto st = std::make_shared<DnnState>();
    WICK_GPU_DNN_CHECK(gpudnnCreate(&st->handle));
    WICK_GPU_DNN_CHECK(gpudnnSetStream(st->handle, stream_));
    dnn_ = std::move(st);
  }
  return *dnn_;
}

long dnn_convolutions(GpuDevice& dev) {
  if (!dnn_api()) return -4;
  GpuDevice::DnnState& st = dev.dnn_state();
  std::lock_guard<std::mutex> lock(st.mu);
  return st.convolutions;
}

namespace {

gpudnnDataType_t dnn_type(DType dt) {
  switch (dt) {
    case DType::F16:
      return GPUDNN_DATA_HALF;
    case DType::BF16:
      return GPUDNN_DATA_BFLOAT16;
    case DType::F64:
      return GPUDNN_DATA_DOUBLE;
    default:
      return GPUDNN_DATA_FLOAT;
  }
}

// WICK_GPU_DNN_CHECK, except that a status saying cuDNN does not take the case
// makes the enclosing function return false.
#define WICK_DNN_CASE_CHECK(call)                                    \
  do {                                                               \
    const gpudnnStatus_t wick_dnn_case_st_ = (call);                 \
    if (gpudnn_case_unsupported(wick_dnn_case_st_)) return false;    \
    if (wick_dnn_case_st_ != GPUDNN_STATUS_SUCCESS)                  \
      throw_dnn_error(wick_dnn_case_st_, #call, __FILE__, __LINE__); \
  } while (0)

// The workspace the algorithm search hands cuDNN: at least what the largest
// GEMM-like algorithm reports (`asked`) and kColBytes, as an algorithm's own
// report can understate what its fastest kernels take (a layout transpose), at
// most half the memory the device has free (its free memory plus the caching
// allocator's idle blocks).
size_t dnn_find_bytes(GpuDevice& dev, size_t asked) {
  const MemoryStats m = dev.memory_stats();
  return std::min(std::max(asked, kColBytes), (m.free + m.cached) / 2);
}

// Sets up p's descriptors for `k` and picks its algorithm: cuDNN times each
// algorithm on the call's buffers (fwd_in, filter, fwd_out: the forward
// convolution's; the output buffer is written) with the workspace dnn_find_bytes
// gives. False when cuDNN does not take the case.
bool plan_convolution(GpuDevice& dev, gpudnnHandle_t h, const DnnConvKey& k, void* fwd_in, const void* filter,
                      void* fwd_out, DnnConvPlan* p) {
  const gpudnnDataType_t dt = dnn_type(k.dt),
                         acc = k.dt == DType::F64 ? GPUDNN_DATA_DOUBLE : GPUDNN_DATA_FLOAT;
  const int oh = (k.h + 2 * k.pad_h - k.dil_h * (k.r - 1) - 1) / k.stride_h + 1;
  const int ow = (k.w + 2 * k.pad_w - k.dil_w * (k.s - 1) - 1) / k.stride_w + 1;
  WICK_GPU_DNN_CHECK(gpudnnCreateTensorDescriptor(&p->in));
  WICK_GPU_DNN_CHECK(gpudnnCreateTensorDescriptor(&p->out));
  WICK_GPU_DNN_CHECK(gpudnnCreateFilterDescriptor(&p->filter));
  WICK_GPU_DNN_CHECK(gpudnnCreateConvolutionDescriptor(&p->conv));
  WICK_DNN_CASE_CHECK(gpudnnSetTensor4dDescriptor(p->in, GPUDNN_TENSOR_NCHW, dt, k.n, k.c, k.h, k.w));
  WICK_DNN_CASE_CHECK(gpudnnSetTensor4dDescriptor(p->out, GPUDNN_TENSOR_NCHW, dt, k.n, k.k, oh, ow));
  WICK_DNN_CASE_CHECK(
      gpudnnSetFilter4dDescriptor(p->filter, dt, GPUDNN_TENSOR_NCHW, k.k, k.c / k.groups, k.r, k.s));
  WICK_DNN_CASE_CHECK(gpudnnSetConvolution2dDescriptor(p->conv, k.pad_h, k.pad_w, k.stride_h, k.stride_w,
                                                       k.dil_h, k.dil_w, GPUDNN_CROSS_CORRELATION, acc));
  WICK_DNN_CASE_CHECK(gpudnnSetConvolutionGroupCount(p->conv, k.groups));
  // f16 / bf16: tensor cores (f32 accumulation); f32: FMA only unless TF32 is allowed.
  const bool half = k.dt == DType::F16 || k.dt == DType::BF16;
  const bool fma_only = k.dt == DType::F32 && !k.tf32;
  WICK_DNN_CASE_CHECK(gpudnnSetConvolutionMathType(p->conv, half       ? GPUDNN_TENSOR_OP_MATH
                                                            : fma_only ? GPUDNN_FMA_MATH
                                                                       : GPUDNN_DEFAULT_MATH));
  size_t ws_bytes = 0;
  auto take = [&](gpudnnStatus_t st, size_t bytes) {  // an algorithm's workspace, if it runs the case
    if (st == GPUDNN_STATUS_SUCCESS) ws_bytes = std::max(ws_bytes, bytes);
  };
  // The fastest GEMM-like algorithm that ran (the results come fastest first).
  auto pick = [&](const auto* perf, int count, const auto& gemm_like) {
    for (int i = 0; i < count; ++i) {
      const bool listed =
          std::find(std::begin(gemm_like), std::end(gemm_like), perf[i].algo) != std::end(gemm_like);
      if (perf[i].status != GPUDNN_STATUS_SUCCESS || !listed || perf[i].memory > ws_bytes) continue;
      if (fma_only && perf[i].mathType != GPUDNN_FMA_MATH) continue;
      WICK_GPU_DNN_CHECK(gpudnnSetConvolutionMathType(p->conv, perf[i].mathType));
      p->algo = int(perf[i].algo);
      p->workspace = perf[i].memory;
      return;
    }
  };
  // Each search runs twice and the second ranking counts: the first pays for
  // loading each candidate's kernels (lazily loaded modules), which can put a
  // slow algorithm ahead of a fast one that loads later.
  if (!k.transposed) {
    for (gpudnnConvolutionFwdAlgo_t a : GPUDNN_FWD_GEMM_ALGOS) {
      size_t bytes = 0;
      take(gpudnnGetConvolutionForwardWorkspaceSize(h, p->in, p->filter, p->conv, p->out, a, &bytes), bytes);
    }
    ws_bytes = dnn_find_bytes(dev, ws_bytes);
    DeviceBuffer ws(dev, ws_bytes);
    gpudnnConvolutionFwdAlgoPerf_t perf[2 * GPUDNN_FWD_ALGO_COUNT];
    int count = 0;
    for (int round = 0; round < 2; ++round)
      WICK_DNN_CASE_CHECK(gpudnnFindConvolutionForwardAlgorithmEx(
          h, p->in, fwd_in, p->filter, filter, p->conv, p->out, fwd_out, 2 * GPUDNN_FWD_ALGO_COUNT, &count,
          perf, ws.get(), ws_bytes));
    pick(perf, count, GPUDNN_FWD_GEMM_ALGOS);
  } else {
    for (gpudnnConvolutionBwdDataAlgo_t a : GPUDNN_BWD_DATA_GEMM_ALGOS) {
      size_t bytes = 0;
      take(gpudnnGetConvolutionBackwardDataWorkspaceSize(h, p->filter, p->out, p->conv, p->in, a, &bytes),
           bytes);
    }
    ws_bytes = dnn_find_bytes(dev, ws_bytes);
    DeviceBuffer ws(dev, ws_bytes);
    gpudnnConvolutionBwdDataAlgoPerf_t perf[2 * GPUDNN_BWD_DATA_ALGO_COUNT];
    int count = 0;
    for (int round = 0; round < 2; ++round)
      WICK_DNN_CASE_CHECK(gpudnnFindConvolutionBackwardDataAlgorithmEx(
          h, p->filter, filter, p->out, fwd_out, p->conv, p->in, fwd_in, 2 * GPUDNN_BWD_DATA_ALGO_COUNT,
          &count, perf, ws.get(), ws_bytes));
    pick(perf, count, GPUDNN_BWD_DATA_GEMM_ALGOS);
  }
  return p->algo >= 0;
}
#undef WICK_DNN_CASE_CHECK

// The forward convolution of a transposed convolution's output must give its input
// (an output_padding that reaches the stride breaks this), and cuDNN's tensors hold
// fewer than 2^31 elements.
bool dnn_shape_ok(bool transposed, const ConvGeomK& g, size_t batch, size_t groups) {
  if (transposed && ((g.out_h + 2 * g.pad_h - g.dil_h * (g.k_h - 1) - 1) / g.stride_h + 1 != g.h ||
                     (g.out_w + 2 * g.pad_w - g.dil_w * (g.k_w - 1) - 1) / g.stride_w + 1 != g.w))
    return false;
  const size_t sizes[] = {batch * g.c_in * g.h * g.w, batch * g.c_out * g.out_h * g.out_w,
                          g.c_out * (g.c_in / groups) * g.k_h * g.k_w};
  for (size_t v : sizes)
    if (v > size_t(INT_MAX)) return false;
  return true;
}

// The convolution through cuDNN (a shape dnn_shape_ok takes): conv (transposed
// false) y = conv(x, w), or transposed y = conv_transpose(x, w), every operand
// contiguous NCHW; false when cuDNN does not take the case (nothing written then).
bool dnn_convolution(GpuDevice& dev, bool transposed, DType dt, const ConvGeomK& g, size_t batch,
                     size_t groups, const void* x, const void* w, void* y) {
  // The forward convolution's input and output: conv: x -> y; transposed: y -> x.
  DnnConvKey k;
  k.transposed = transposed;
  k.tf32 = dt == DType::F32 && allow_tf32();
  k.dt = dt;
  k.n = int(batch), k.c = int(transposed ? g.c_out : g.c_in), k.h = int(transposed ? g.out_h : g.h);
  k.w = int(transposed ? g.out_w : g.w), k.k = int(transposed ? g.c_in : g.c_out);
  k.r = int(g.k_h), k.s = int(g.k_w), k.pad_h = int(g.pad_h), k.pad_w = int(g.pad_w);
  k.stride_h = int(g.stride_h), k.stride_w = int(g.stride_w), k.dil_h = int(g.dil_h), k.dil_w = int(g.dil_w);
  k.groups = int(groups);
  const uintptr_t bits =
      reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(w) | reinterpret_cast<uintptr_t>(y) | 16u;
  k.align = unsigned(bits & (~bits + 1));
  void* fwd_in = transposed ? y : const_cast<void*>(x);
  void* fwd_out = transposed ? const_cast<void*>(x) : y;
  GpuDevice::DnnState& st = dev.dnn_state();
  std::lock_guard<std::mutex> lock(st.mu);
  set_device(dev.ordinal());
  auto it = st.plans.find(k);
  if (it == st.plans.end()) {
    auto p = std::make_unique<DnnConvPlan>();
    if (!plan_convolution(dev, st.handle, k, fwd_in, w, fwd_out, p.get())) p->algo = -1;
    it = st.plans.emplace(k, std::move(p)).first;
  }
  const DnnConvPlan& p = *it->second;
  if (p.algo < 0) return false;
  DeviceBuffer ws(dev, p.workspace);
  const float one_f = 1.0f, zero_f = 0.0f;
  const double one_d = 1.0, zero_d = 0.0;
  const void* one = dt == DType::F64 ? static_cast<const void*>(&one_d) : &one_f;
  const void* zero = dt == DType::F64 ? static_cast<const void*>(&zero_d) : &zero_f;
  if (!transposed) {
    WICK_GPU_DNN_CHECK(gpudnnConvolutionForward(st.handle, one, p.in, x, p.filter, w, p.conv,
                                                gpudnnConvolutionFwdAlgo_t(p.algo), ws.get(), p.workspace,
                                                zero, p.out, y));
  } else {
    WICK_GPU_DNN_CHECK(gpudnnConvolutionBackwardData(st.handle, one, p.filter, w, p.out, x, p.conv,
                                                     gpudnnConvolutionBwdDataAlgo_t(p.algo), ws.get(),
                                                     p.workspace, zero, p.in, y));
  }
  ++st.convolutions;
  return true;
}

}  // namespace
#else
long dnn_convolutions(GpuDevice&) { return -2; }
#endif

namespace {

StoragePtr conv_forward(const char* op, const GpuStorage& x, const Layout& l, const BackendStorage& kernel,
                        const Layout& k_l, ConvGeomK g, size_t batch, size_t groups) {
  const DType dt = x.dtype();
  if (!is_float(dt)) throw_unsupported_dtype(op, dt);
  GpuDevice& dev = x.dev();
  const size_t npix = g.out_h * g.out_w, kpos = g.k_h * g.k_w;
  auto out = gpu_alloc(dev, batch * g.c_out * npix, dt);
  if (out->elem_count() == 0) return out;
  std::shared_ptr<GpuStorage> keep_w;
  const char* w = static_cast<const char*>(contiguous_data(GpuStorage::of(kernel), k_l, keep_w));
#if defined(WICK_GPU_DNN)
  if (!use_portable_gemm() && dnn_api() && dnn_shape_ok(false, g, batch, groups)) {
    std::shared_ptr<GpuStorage> keep_x;
    const void* xc = contiguous_data(x, l, keep_x);
    if (dnn_convolution(dev, false, dt, g, batch, groups, xc, w, out->raw())) return out;
  }
#endif
  set_strides(g, l);
  const size_t cin_g = g.c_in / groups, cout_g = g.c_out / groups, kk = cin_g * kpos, es = dtype_size(dt);
  const size_t per_batch = g.c_in * kpos * npix;
  // Batches per im2col + GEMM round: as many as kColBytes of columns hold, split
  // evenly over the rounds (32 batches of 37.7 MB: 16 + 16, not 28 + 4).
  const size_t most = std::clamp<size_t>(kColBytes / std::max<size_t>(per_batch * es, 1), 1, batch);
  const size_t rounds = (batch + most - 1) / most, chunk = (batch + rounds - 1) / rounds;
  if (npix > size_t(UINT32_MAX))
    throw_error(ErrorKind::InvalidArgument, op,
                fmt::format("output plane of {}x{} pixels exceeds the GPU im2col's 32-bit pixel index",
                            g.out_h, g.out_w));
  // im2col: a block per column row; a small plane gets a smaller block.
  constexpr size_t kQuad = plan::im2col::kPixelsPerThread;
  const size_t row_items = g.out_w % kQuad == 0 ? npix / kQuad : npix;
  unsigned im2col_block = 64;
  while (im2col_block < 256 && im2col_block < row_items) im2col_block *= 2;
  DeviceBuffer col(dev, std::min(chunk, batch) * per_batch * es);
  const void* xp = x.at(l.start_offset());
  for (size_t b0 = 0; b0 < batch; b0 += chunk) {
    size_t nb = std::min(chunk, batch - b0);
    void* colp = col.get();
    void* args[] = {&g, &b0, &nb, &xp, &colp};
    static const DTypeKernels im2col(Module::Conv, "im2col");
    dev.launch(im2col[dt], dim3(unsigned(std::min<size_t>(nb * kk * groups, kMaxRows))), dim3(im2col_block),
               args);
    for (size_t grp = 0; grp < groups; ++grp) {
      gemm(dev, dt, dt, false, false, cout_g, npix, kk, w + grp * cout_g * kk * es, kk, 0,
           static_cast<const char*>(colp) + grp * kk * npix * es, npix, per_batch,
           static_cast<char*>(out->raw()) + ((b0 * g.c_out + grp * cout_g) * npix) * es, npix, g.c_out * npix,
           nb);
    }
  }
  return out;
}

StoragePtr conv_transposed(const char* op, const GpuStorage& x, const Layout& l, const BackendStorage& kernel,
                           const Layout& k_l, ConvGeomK g, size_t batch) {
  const DType dt = x.dtype();
  if (!is_float(dt)) throw_unsupported_dtype(op, dt);
  GpuDevice& dev = x.dev();
  const size_t npix = g.out_h * g.out_w, kpos = g.k_h * g.k_w, hw = g.h * g.w, rows = g.c_out * kpos;
  auto out = gpu_alloc(dev, batch * g.c_out * npix, dt);
  if (out->elem_count() == 0) return out;
  std::shared_ptr<GpuStorage> keep_x, keep_w;
  const char* xp = static_cast<const char*>(contiguous_data(x, l, keep_x));
  const void* w = contiguous_data(GpuStorage::of(kernel), k_l, keep_w);
#if defined(WICK_GPU_DNN)
  if (!use_portable_gemm() && dnn_api() && dnn_shape_ok(true, g, batch, 1) &&
      dnn_convolution(dev, true, dt, g, batch, 1, xp, w, out->raw()))
    return out;
#endif
  const DType c_dt = dt == DType::F64 ? DType::F64 : DType::F32;
  const size_t es = dtype_size(dt), cs = dtype_size(c_dt);
  const size_t per_batch = rows * hw;
  const size_t chunk = std::clamp<size_t>(kColBytes / std::max<size_t>(per_batch * cs, 1), 1, batch);
  DeviceBuffer cols(dev, std::min(chunk, batch) * per_batch * cs);
  for (size_t b0 = 0; b0 < batch; b0 += chunk) {
    size_t nb = std::min(chunk, batch - b0);
    void* colp = cols.get();
    gemm(dev, dt, c_dt, true, false, rows, hw, g.c_in, w, rows, 0, xp + b0 * g.c_in * hw * es, hw,
         g.c_in * hw, colp, hw, per_batch, nb);
    void* o = static_cast<char*>(out->raw()) + b0 * g.c_out * npix * es;
    void* args[] = {&g, &nb, &colp, &o};
    static const DTypeKernels col2im(Module::Conv, "col2im");
    dev.launch(col2im[dt], dim3(dev.grid_for(nb * g.c_out * npix)), dim3(dev.block_size()), args);
  }
  return out;
}

}  // namespace

StoragePtr GpuStorage::conv1d(const Layout& l, const BackendStorage& kernel, const Layout& k_l,
                              const Conv1dParams& p) const {
  ConvGeomK g = geom_1d(p.c_in, p.l_in, p.c_out, p.k_size, p.padding, p.stride, p.dilation, p.l_out());
  return conv_forward("conv1d", *this, l, kernel, k_l, g, p.b_size, p.groups);
}

StoragePtr GpuStorage::conv2d(const Layout& l, const BackendStorage& kernel, const Layout& k_l,
                              const Conv2dParams& p) const {
  ConvGeomK g = geom_2d(p.c_in, p.i_h, p.i_w, p.c_out, p.k_h, p.k_w, p.padding, p.stride, p.dilation,
                        p.out_h(), p.out_w());
  return conv_forward("conv2d", *this, l, kernel, k_l, g, p.b_size, p.groups);
}

StoragePtr GpuStorage::conv_transpose1d(const Layout& l, const BackendStorage& kernel, const Layout& k_l,
                                        const ConvTranspose1dParams& p) const {
  ConvGeomK g = geom_1d(p.c_in, p.l_in, p.c_out, p.k_size, p.padding, p.stride, p.dilation, p.l_out());
  return conv_transposed("conv_transpose1d", *this, l, kernel, k_l, g, p.b_size);
}

StoragePtr GpuStorage::conv_transpose2d(const Layout& l, const BackendStorage& kernel, const Layout& k_l,
                                        const ConvTranspose2dParams& p) const {
  ConvGeomK g = geom_2d(p.c_in, p.i_h, p.i_w, p.c_out, p.k_h, p.k_w, p.padding, p.stride, p.dilation,
                        p.out_h(), p.out_w());
  return conv_transposed("conv_transpose2d", *this, l, kernel, k_l, g, p.b_size);
}

StoragePtr GpuStorage::pool2d(PoolOp op, const Layout& l, std::array<size_t, 2> kernel,
                              std::array<size_t, 2> stride) const {
  const auto& d = l.dims();
  size_t oh = (d[2] - kernel[0]) / stride[0] + 1, ow = (d[3] - kernel[1]) / stride[1] + 1;
  size_t n = d[0] * d[1] * oh * ow;
  auto out = gpu_alloc(dev_, n, dtype_);
  if (n == 0) return out;
  PlanesK pl = planes_of(l);
  const void* x = at(l.start_offset());
  void* o = out->raw();
  size_t kh = kernel[0], kw = kernel[1], sh = stride[0], sw = stride[1];
  void* args[] = {&n, &pl, &oh, &ow, &kh, &kw, &sh, &sw, &x, &o};
  static const DTypeKernels avg(Module::Conv, "avg_pool2d"), max(Module::Conv, "max_pool2d");
  dev_.launch((op == PoolOp::Avg ? avg : max)[dtype_], dim3(dev_.grid_for(n)), dim3(dev_.block_size()), args);
  return out;
}

namespace {

StoragePtr upsample_nearest(const GpuStorage& s, const Layout& l, size_t ih, size_t iw, size_t oh,
                            size_t ow) {
  const auto& d = l.dims();
  size_t n = d[0] * d[1] * oh * ow;
  auto out = gpu_alloc(s.dev(), n, s.dtype());
  if (n == 0) return out;
  PlanesK pl = planes_of(l);
  const void* x = s.at(l.start_offset());
  void* o = out->raw();
  void* args[] = {&n, &pl, &ih, &iw, &oh, &ow, &x, &o};
  static const DTypeKernels k(Module::Conv, "upsample_nearest");
  s.dev().launch(k[s.dtype()], dim3(s.dev().grid_for(n)), dim3(s.dev().block_size()), args);
  return out;
}

}  // namespace

StoragePtr GpuStorage::upsample_nearest1d(const Layout& l, size_t target_len) const {
  return upsample_nearest(*this, l, 1, l.dims()[2], 1, target_len);
}

StoragePtr GpuStorage::upsample_nearest2d(const Layout& l, size_t target_h, size_t target_w) const {
  return upsample_nearest(*this, l, l.dims()[2], l.dims()[3], target_h, target_w);
}

StoragePtr GpuStorage::upsample_bilinear2d(const Layout& l, const BilinearParams& p) const {
  const auto& d = l.dims();
  size_t n = d[0] * d[1] * p.out_h * p.out_w;
  auto out = gpu_alloc(dev_, n, dtype_);
  if (n == 0) return out;
  PlanesK pl = planes_of(l);
  const void* x = at(l.start_offset());
  void* o = out->raw();
  size_t ih = d[2], iw = d[3], oh = p.out_h, ow = p.out_w, align = p.align_corners ? 1 : 0;
  double sh = p.scale_h.value_or(0.0), sw = p.scale_w.value_or(0.0);
  void* args[] = {&n, &pl, &ih, &iw, &oh, &ow, &align, &sh, &sw, &x, &o};
  static const DTypeKernels k(Module::Conv, "upsample_bilinear");
  dev_.launch(k[dtype_], dim3(dev_.grid_for(n)), dim3(dev_.block_size()), args);
  return out;
}

}  // namespace wick::gpu
