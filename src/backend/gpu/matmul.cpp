// Entry point of matmul and the GEMM every GPU matmul and convolution goes
// through (gpu_ops.h): cuBLAS (cublasGemmStridedBatchedEx with a 32 MiB workspace)
// in the CUDA build, the portable tiled kernels of kernels/matmul.cu otherwise (the
// ROCm build, which has no rocBLAS on Debian) or when options().portable_gemm.
// (cuBLASLt with a heuristic algorithm ran 8192^3 bf16 at the classic call's rate
// on the H200 and costs a query per call: docs/PERFORMANCE.md.)
//
// Operands: the last two dims go to the GEMM in place when a transpose flag and a
// leading dim describe them (row stride >= row length, unit column stride, or the
// transpose of that); the batch dims must collapse to one stride (0 for a
// broadcast batch). Any other layout is copied contiguous first. f32 runs in full
// f32 (CUBLAS_COMPUTE_32F) unless options().allow_tf32; f16/bf16 multiply with f32
// accumulation and round once; f64 in f64.
#include <fmt/format.h>

#include <algorithm>
#include <climits>

#include "backend/common/operand_views.h"
#include "backend/gpu/gpu_ops.h"
#include "base/dispatch.h"
#include "wick/options.h"

namespace wick::gpu {

#if defined(WICK_GPU_BLAS)
[[noreturn]] void throw_blas_error(gpublasStatus_t st, const char* call, const char* file, int line) {
  const char* base = file;
  for (const char* p = file; *p; ++p)
    if (*p == '/') base = p + 1;
  throw_error(ErrorKind::GpuRuntime, "gpu",
              fmt::format("{} failed at {}:{}: {}", call, base, line, gpublasGetStatusString(st)));
}
#endif

void* GpuDevice::blas_handle() {
#if defined(WICK_GPU_BLAS)
  flush();  // the handle queues on the stream: the deferred ops go first
  std::lock_guard<std::mutex> lock(lazy_mu_);
  if (!blas_handle_) {
    set_device(local_);
    gpublasHandle_t h = nullptr;
    WICK_GPU_BLAS_CHECK(gpublasCreate(&h));
    WICK_GPU_BLAS_CHECK(gpublasSetStream(h, stream_));
    if (!blas_workspace_) WICK_GPU_CHECK(gpuMalloc(&blas_workspace_, kBlasWorkspaceBytes));
    WICK_GPU_BLAS_CHECK(gpublasSetWorkspace(h, blas_workspace_, kBlasWorkspaceBytes));
    blas_handle_ = h;
  }
  return blas_handle_;
#else
  return nullptr;
#endif
}

bool allow_tf32() { return options().allow_tf32; }

bool use_portable_gemm() {
#if defined(WICK_GPU_BLAS)
  return options().portable_gemm;
#else
  return true;
#endif
}

namespace {

#if defined(WICK_GPU_BLAS)
gpuDataType_t blas_type(DType dt) {
  switch (dt) {
    case DType::F16:
      return GPU_R_16F;
    case DType::BF16:
      return GPU_R_16BF;
    case DType::F64:
      return GPU_R_64F;
    default:
      return GPU_R_32F;
  }
}

int blas_int(size_t v) {
  if (v > size_t(INT_MAX))
    throw_error(ErrorKind::InvalidArgument, "matmul",
                fmt::format("GEMM dimension {} exceeds the BLAS int range", v));
  return int(v);
}
#endif

}  // namespace

void gemm(GpuDevice& dev, DType dt, DType c_dt, bool trans_a, bool trans_b, size_t m, size_t n, size_t k,
          const void* a, size_t lda, size_t stride_a, const void* b, size_t ldb, size_t stride_b, void* c,
          size_t ldc, size_t stride_c, size_t batch) {
  if (m == 0 || n == 0 || batch == 0) return;
  set_device(dev.ordinal());
  if (k == 0) {  // C = 0 (C is dense: ldc == n and stride_c == m*n at every call site)
    WICK_GPU_CHECK(gpuMemsetAsync(c, 0, batch * m * n * dtype_size(c_dt), dev.stream()));
    return;
  }
#if defined(WICK_GPU_BLAS)
  if (!use_portable_gemm()) {
    auto h = static_cast<gpublasHandle_t>(dev.blas_handle());
    // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands.
    const gpublasOperation_t op_a = trans_a ? GPUBLAS_OP_T : GPUBLAS_OP_N;
    const gpublasOperation_t op_b = trans_b ? GPUBLAS_OP_T : GPUBLAS_OP_N;
    const float one_f = 1.0f, zero_f = 0.0f;
    const double one_d = 1.0, zero_d = 0.0;
    const bool f64 = dt == DType::F64;
    const gpublasComputeType_t ct = f64 ? GPUBLAS_COMPUTE_64F
                                    : dt == DType::F32 && allow_tf32()
                                        ? GPUBLAS_COMPUTE_32F_FAST_TF32
                                        : GPUBLAS_COMPUTE_32F;
    for (size_t p0 = 0; p0 < batch; p0 += size_t(INT_MAX)) {
      const size_t nb = std::min(batch - p0, size_t(INT_MAX));
      const size_t ia = dtype_size(dt), ic = dtype_size(c_dt);
      WICK_GPU_BLAS_CHECK(gpublasGemmStridedBatchedEx(
          h, op_b, op_a, blas_int(n), blas_int(m), blas_int(k),
          f64 ? static_cast<const void*>(&one_d) : &one_f, static_cast<const char*>(b) + p0 * stride_b * ia,
          blas_type(dt), blas_int(ldb), (long long)stride_b, static_cast<const char*>(a) + p0 * stride_a * ia,
          blas_type(dt), blas_int(lda), (long long)stride_a,
          f64 ? static_cast<const void*>(&zero_d) : &zero_f, static_cast<char*>(c) + p0 * stride_c * ic,
          blas_type(c_dt), blas_int(ldc), (long long)stride_c, int(nb), ct, GPUBLAS_GEMM_DEFAULT));
    }
    return;
  }
#endif
  size_t sa_r = trans_a ? 1 : lda, sa_c = trans_a ? lda : 1;
  size_t sb_r = trans_b ? 1 : ldb, sb_c = trans_b ? ldb : 1;
  void* args[] = {&m,        &n,    &k,    &a, &stride_a, &sa_r, &sa_c, &b,
                  &stride_b, &sb_r, &sb_c, &c, &stride_c, &ldc,  &batch};
  constexpr size_t kTileM = plan::gemm::kTileM, kTileN = plan::gemm::kTileN;
  dim3 grid(unsigned((n + kTileN - 1) / kTileN), unsigned(std::min<size_t>((m + kTileM - 1) / kTileM, 65535)),
            unsigned(std::min<size_t>(batch, 65535)));
  if ((m + kTileM - 1) / kTileM > 65535)
    throw_error(ErrorKind::InvalidArgument, "matmul",
                fmt::format("portable GEMM: {} rows exceed the grid", m));
  static const DTypePairKernels kernels(Module::Matmul, "gemm");
  dev.launch(kernels(dt, c_dt), grid, dim3(plan::gemm::kThreads), args);
}

namespace {

// One operand of a batched GEMM: pointer, transpose flag, leading dim, batch stride.
struct Operand {
  const void* ptr = nullptr;
  bool trans = false;
  size_t ld = 0, stride = 0;
  std::shared_ptr<GpuStorage> keep;
};

Operand operand(const GpuStorage& s, const Layout& l, size_t rows, size_t cols, size_t batch) {
  const size_t r = l.rank();
  Operand o;
  BlasView v = blas_view(rows, cols, l.strides()[r - 2], l.strides()[r - 1]);
  Collapsed bd = collapse_dims(std::vector<size_t>(l.dims().begin(), l.dims().end() - 2),
                               std::vector<size_t>(l.strides().begin(), l.strides().end() - 2));
  const size_t own_batch = l.elem_count() / std::max<size_t>(rows * cols, 1);
  bool uniform = bd.dims.size() <= 1;
  if (v.ok && uniform) {
    o.ptr = s.at(l.start_offset());
    o.trans = v.trans;
    o.ld = v.ld;
    o.stride = bd.dims.empty() ? 0 : bd.strides[0][0];
    if (own_batch == 1 && batch > 1) o.stride = 0;
    return o;
  }
  o.keep = gpu_alloc(s.dev(), l.elem_count(), s.dtype());
  s.copy_strided_src(*o.keep, 0, l);
  o.ptr = o.keep->raw();
  o.ld = std::max<size_t>(cols, 1);
  o.stride = own_batch == 1 ? 0 : rows * cols;
  return o;
}

}  // namespace

StoragePtr GpuStorage::matmul(const BackendStorage& rhs_s, const MatmulDims& d, const Layout& lhs_l,
                              const Layout& rhs_l) const {
  if (!is_float(dtype_)) throw_unsupported_dtype("matmul", dtype_);
  auto out = gpu_alloc(dev_, d.b * d.m * d.n, dtype_);
  if (out->elem_count() == 0) return out;
  Operand a = operand(*this, lhs_l, d.m, d.k, d.b), b = operand(of(rhs_s), rhs_l, d.k, d.n, d.b);
  gemm(dev_, dtype_, dtype_, a.trans, b.trans, d.m, d.n, d.k, a.ptr, a.ld, a.stride, b.ptr, b.ld, b.stride,
       out->raw(), d.n, d.m * d.n, d.b);
  return out;
}

}  // namespace wick::gpu
