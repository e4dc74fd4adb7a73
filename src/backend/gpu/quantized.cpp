// Entry points of the QUANTIZED family (issue 5; kernels/quantized.cu): dequantize
// packed ggml rows, and the quantized matmul by one of two paths (wick/quant.h):
//   MatVec       x rows -> Q8_1 rows padded to a multiple of 512 elements (ggml's
//                MATRIX_ROW_PADDING, zeros quantized), then one int8 mat-vec
//                launch per 8 rows of x (kernels specialised for 1..8 rows, so each
//                weight row is read once per launch; row_threads() per row);
//   DequantGemm  the weight dequantized to x's dtype (f32 for f64) in a scratch
//                buffer, then the device GEMM (gemm() of gpu_ops.h) with it transposed.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "backend/gpu/gpu_ops.h"
#include "quant/blocks.h"
#include "wick/quant.h"

namespace wick::gpu {

namespace {

// The dtypes the kernels write or read directly; f64 goes through f32.
DType kernel_dtype(DType d) { return d == DType::F64 ? DType::F32 : d; }

constexpr unsigned kQuantBlock = 256;  // a multiple of every wave size (32, 64)
constexpr size_t kRowPadding = 512;    // ggml's MATRIX_ROW_PADDING

std::shared_ptr<GpuStorage> dequantize_to(GpuDevice& dev, GgmlType t, const void* src, size_t n, DType dt) {
  auto out = gpu_alloc(dev, n, dt);
  if (n == 0) return out;
  void* o = out->raw();
  void* args[] = {&n, const_cast<void**>(&src), &o};
  const size_t items = (n + 7) / 8;  // 8 outputs per thread
  dev.launch(fmt::format("dequantize_{}_{}", ggml_type_name(t), dtype_name(dt)), Module::Quantized,
             dim3(dev.grid_for(items)), dim3(dev.block_size()), args);
  return out;
}

// Threads sharing one weight row in the mat-vec: four waves, as ggml's mmvq gives a
// single row at batch 1 (several waves keep enough loads in flight when the
// weight has few rows); WICK_QMV_ROW_THREADS (whole waves dividing 256) overrides.
unsigned row_threads(const GpuDevice& dev) {
  const unsigned wave = wave_size(dev);
  unsigned rt = std::min(4 * wave, kQuantBlock);
  if (const char* env = std::getenv("WICK_QMV_ROW_THREADS")) {
    const unsigned v = unsigned(std::strtoul(env, nullptr, 10));
    if (v >= wave && v % wave == 0 && kQuantBlock % v == 0) rt = v;
  }
  return rt;
}

// x (m, k) of x's dtype as a kernel dtype: the storage itself or an f32 copy.
const void* x_data(const GpuStorage& xs, const Layout& x_l, std::shared_ptr<BackendStorage>& keep) {
  if (xs.dtype() != DType::F64) return xs.at(x_l.start_offset());
  keep = xs.to_dtype(x_l, DType::F32);
  return GpuStorage::of(*keep).raw();
}

StoragePtr matvec(GpuDevice& dev, GgmlType t, const uint8_t* w, size_t n, size_t k, const GpuStorage& xs,
                  const Layout& x_l, size_t m) {
  std::shared_ptr<BackendStorage> keep;
  const void* x = x_data(xs, x_l, keep);
  const DType xd = kernel_dtype(xs.dtype());
  size_t k_pad = (k + kRowPadding - 1) / kRowPadding * kRowPadding;
  const size_t act_row = k_pad / 32 * sizeof(quant::BlockQ8_1);
  DeviceBuffer act(dev, m * act_row);
  {
    uint8_t* a = static_cast<uint8_t*>(act.get());
    void* args[] = {&m, &k, &k_pad, const_cast<void**>(&x), &a};
    dev.launch(kname("quantize_q8_1", xd), Module::Quantized, dim3(dev.grid_for(m * k_pad)),
               dim3(kQuantBlock), args);
  }
  auto out = gpu_alloc(dev, m * n, DType::F32);
  int ni = int(n), ki = int(k), rt = int(row_threads(dev));
  size_t w_row = ggml_row_size(t, k);
  const unsigned rows_per_block = kQuantBlock / unsigned(rt);
  const dim3 grid(unsigned((n + rows_per_block - 1) / rows_per_block));
  for (size_t r0 = 0; r0 < m; r0 += kQMatVecMaxBatch) {
    const size_t b = std::min(kQMatVecMaxBatch, m - r0);
    const uint8_t* a = static_cast<const uint8_t*>(act.get()) + r0 * act_row;
    float* o = static_cast<float*>(out->raw()) + r0 * n;
    size_t a_row = act_row;
    void* args[] = {&ni, &ki, &rt, const_cast<uint8_t**>(&w), &w_row, const_cast<uint8_t**>(&a), &a_row, &o};
    dev.launch(fmt::format("mmvq_{}_b{}", ggml_type_name(t), b), Module::Quantized, grid, dim3(kQuantBlock),
               args);
  }
  if (xs.dtype() == DType::F32) return out;
  return out->to_dtype(Layout(Shape{m * n}), xs.dtype());
}

StoragePtr dequant_gemm(GpuDevice& dev, GgmlType t, const uint8_t* w, size_t n, size_t k,
                        const GpuStorage& xs, const Layout& x_l, size_t m) {
  std::shared_ptr<BackendStorage> keep;
  const void* x = x_data(xs, x_l, keep);
  const DType gd = kernel_dtype(xs.dtype());
  auto wd = dequantize_to(dev, t, w, n * k, gd);  // (n, k) row-major = B^T
  auto c = gpu_alloc(dev, m * n, gd);
  gemm(dev, gd, gd, false, true, m, n, k, x, k, 0, wd->raw(), k, 0, c->raw(), n, 0, 1);
  if (xs.dtype() == gd) return c;
  return c->to_dtype(Layout(Shape{m * n}), xs.dtype());
}

}  // namespace

StoragePtr GpuDevice::dequantize(GgmlType t, const BackendStorage& blocks, size_t byte_offset, size_t n,
                                 DType out) {
  const void* src = GpuStorage::of(blocks).at(byte_offset);
  auto s = dequantize_to(*this, t, src, n, kernel_dtype(out));
  if (out == s->dtype()) return s;
  return s->to_dtype(Layout(Shape{n}), out);
}

StoragePtr GpuDevice::qmatmul(GgmlType t, const BackendStorage& w, size_t byte_offset, size_t n, size_t k,
                              const BackendStorage& x, const Layout& x_l, size_t m, QMatmulPath path) {
  const GpuStorage& xs = GpuStorage::of(x);
  if (m == 0 || n == 0) return gpu_alloc(*this, m * n, xs.dtype());
  if (k == 0) return zeros(m * n, xs.dtype());
  const uint8_t* wp = static_cast<const uint8_t*>(GpuStorage::of(w).at(byte_offset));
  const bool use_matvec = ggml_is_quantized(t) && (path == QMatmulPath::MatVec ||
                                                   (path == QMatmulPath::Auto && m <= kQMatVecMaxBatch));
  if (use_matvec) return matvec(*this, t, wp, n, k, xs, x_l, m);
  return dequant_gemm(*this, t, wp, n, k, xs, x_l, m);
}

}  // namespace wick::gpu
