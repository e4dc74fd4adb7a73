// Entry points of the QUANTIZED family (kernels/quantized.cu): dequantize
// packed ggml rows, and the quantized matmul by one of two paths (wick/quant.h):
//   MatVec       One row of x with Q4_0, Q8_0, Q4_K or Q6_K weights whose rows are
//                whole 16-byte words and k a multiple of mmvqw's round (1024
//                columns; 2048 for Q4_K and Q6_K) takes mmvqw: one launch, x
//                quantized in each block's shared memory, teams of 32 lanes
//                streaming their rows through shared memory (docs/PERFORMANCE.md).
//                Otherwise x rows -> Q8_1 rows padded to a multiple of 512 elements
//                (ggml's MATRIX_ROW_PADDING, zeros quantized), then one int8 mat-vec
//                launch per 8 rows of x (kernels specialised for 1..8 rows, so each
//                weight row is read once per launch): the mmvqs kernels for Q4_0,
//                Q8_0, Q4_K and Q6_K (split, permuted activations; one wave per
//                weight row), the generic mmvq kernels (row_threads() per row) for
//                every other type or a weight not 4-byte aligned (16 for Q4_K).
//   DequantGemm  the weight dequantized to x's dtype (f32 for f64) in a scratch
//                buffer, then the device GEMM (gemm() of gpu_ops.h) with it transposed.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "backend/gpu/gpu_ops.h"
#include "base/ggml_blocks.h"
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
  // 16 outputs per thread for the types with a dequantize16 kernel, else 8
  const bool by16 = t == GgmlType::Q4_0 || t == GgmlType::Q8_0 || t == GgmlType::Q4_K || t == GgmlType::Q6_K;
  const size_t items = by16 ? n / 16 : (n + 7) / 8;
  dev.launch(fmt::format("dequantize_{}_{}", ggml_type_name(t), dtype_name(dt)), Module::Quantized,
             dim3(dev.grid_for(items)), dim3(dev.block_size()), args);
  return out;
}

// Threads sharing one weight row in the mat-vec: four waves, as ggml's mmvq gives a
// single row at batch 1 (several waves keep enough loads in flight when the
// weight has few rows).
unsigned row_threads(const GpuDevice& dev) { return std::min(4 * wave_size(dev), kQuantBlock); }

// x (m, k) of x's dtype as a kernel dtype: the storage itself or an f32 copy.
const void* x_data(const GpuStorage& xs, const Layout& x_l, std::shared_ptr<BackendStorage>& keep) {
  if (xs.dtype() != DType::F64) return xs.at(x_l.start_offset());
  keep = xs.to_dtype(x_l, DType::F32);
  return GpuStorage::of(*keep).raw();
}

// Kernel names, formatted once: name_table(prefix)[type id][b] = "{prefix}_{type}_b{b}".
using NameTable = std::array<std::array<std::string, kQMatVecMaxBatch + 1>, 32>;
NameTable make_names(std::string_view prefix) {
  NameTable t;
  for (GgmlType g : kAllGgmlTypes)
    for (size_t b = 1; b <= kQMatVecMaxBatch; ++b)
      t[size_t(g)][b] = fmt::format("{}_{}_b{}", prefix, ggml_type_name(g), b);
  return t;
}
const std::string& mmvq_name(GgmlType t, size_t b, bool split) {
  static const NameTable generic = make_names("mmvq"), split_names = make_names("mmvqs");
  return (split ? split_names : generic)[size_t(t)][b];
}

// The activation permutation the mmvqs kernel of type t reads (quantized.cu's
// perm_pos), or -1 where t has no mmvqs kernel.
int split_perm(GgmlType t) {
  switch (t) {
    case GgmlType::Q8_0:
      return 0;
    case GgmlType::Q4_0:
      return 1;
    case GgmlType::Q4_K:
      return 2;
    case GgmlType::Q6_K:
      return 3;
    default:
      return -1;
  }
}
const std::string& quantize_split_name(int perm, DType xd) {
  static const auto names = [] {
    std::array<std::array<std::string, 3>, 4> n;
    const DType dts[] = {DType::F32, DType::F16, DType::BF16};
    for (int p = 0; p < 4; ++p)
      for (int d = 0; d < 3; ++d)
        n[size_t(p)][size_t(d)] = fmt::format("quantize_q8_1s_p{}_{}", p, dtype_name(dts[d]));
    return n;
  }();
  return names[size_t(perm)][xd == DType::F32 ? 0 : xd == DType::F16 ? 1 : 2];
}

bool use_split_kernel(GgmlType t, const uint8_t* w, size_t w_row) {
  if (split_perm(t) < 0) return false;
  const auto addr = reinterpret_cast<uintptr_t>(w);
  if (t == GgmlType::Q4_K) return addr % 16 == 0 && w_row % 16 == 0;
  return addr % 4 == 0;
}

// The major compute capability of an NVIDIA device ("sm_90" -> 9); 0 for others.
int arch_major(const GpuDevice& dev) {
  const std::string& a = dev.props().arch;
  if (a.rfind("sm_", 0) != 0 || a.size() < 5) return 0;
  return std::atoi(a.substr(3, a.size() - 4).c_str());
}

// mmvqw (batch 1, one launch; the default where it applies): teams of 32 lanes, each
// owning a contiguous range of rows, streamed as rounds of 1024 columns (k a multiple
// of 1024; rows whole 16-byte words). Blocks of 16 teams, one per multiprocessor,
// or 8 / 4 teams (two / four per multiprocessor) where the shared memory (the
// activation row, k_pad + k_pad / 32 (d, s) entries, and one tile per team) exceeds
// what a block may take. Kernel constants (quantized.cu, Wide<Q>): the tile words a
// lane and the (d, s) entry size.
struct WidePlan {
  unsigned threads = 0, blocks = 0;
  size_t shmem = 0;
};
constexpr unsigned kWideThreads = 512, kTeamLanes = 32;
constexpr size_t kTeamSlots = 8 * 32 * sizeof(float) + 8 * sizeof(uint64_t);  // finished rows, barriers

bool plan_wide(const GpuDevice& dev, GgmlType t, const uint8_t* w, size_t n, size_t k, size_t k_pad,
               WidePlan& p) {
  // Wide<Q> of quantized.cu: tile bytes (kT rounds of `cols` columns), stages, (d, s) entry bytes.
  size_t tile = 0, stages = 5, ds = 4, cols = 1024;
  switch (t) {
    case GgmlType::Q4_0:
      tile = 4 * 576, ds = 8;
      break;
    case GgmlType::Q8_0:
      tile = 2 * 1088, ds = 8;
      break;
    case GgmlType::Q4_K:
      tile = 2 * 1152, ds = 8, cols = 2048;
      break;
    case GgmlType::Q6_K:
      tile = 1680, ds = 8, cols = 2048, stages = 7;
      break;
    default:
      return false;
  }
  if (reinterpret_cast<uintptr_t>(w) % 16 != 0 || ggml_row_size(t, k) % 16 != 0 || k % cols != 0 ||
      n > size_t(INT32_MAX) || k > size_t(INT32_MAX))
    return false;
  const size_t sms = size_t(std::max(dev.props().multiprocessors, 1));
  for (unsigned threads = kWideThreads; threads >= 128; threads /= 2) {
    const size_t shmem = k_pad + k_pad / 32 * ds + threads / kTeamLanes * (stages * tile + kTeamSlots);
    if (shmem <= std::max(dev.props().shared_per_block, GpuDevice::kSharedDefault)) {
      p.threads = threads;
      p.blocks = unsigned(sms * (kWideThreads / threads));
      p.shmem = shmem;
      return true;
    }
  }
  return false;
}

std::shared_ptr<GpuStorage> matvec_wide(GpuDevice& dev, GgmlType t, const uint8_t* w, size_t n, size_t k,
                                        const void* x, DType xd, size_t k_pad, const WidePlan& p) {
  static const auto names = [] {
    std::array<std::array<std::string, 3>, 32> nm;
    const DType dts[] = {DType::F32, DType::F16, DType::BF16};
    for (GgmlType g : {GgmlType::Q4_0, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K})
      for (size_t d = 0; d < 3; ++d)
        nm[size_t(g)][d] = fmt::format("mmvqw_{}_{}", ggml_type_name(g), dtype_name(dts[d]));
    return nm;
  }();
  auto out = gpu_alloc(dev, n, DType::F32);
  int ni = int(n), ki = int(k), kpi = int(k_pad);
  float* o = static_cast<float*>(out->raw());
  void* args[] = {&ni, &ki, &kpi, const_cast<uint8_t**>(&w), const_cast<void**>(&x), &o};
  const size_t d = xd == DType::F32 ? 0 : xd == DType::F16 ? 1 : 2;
  // A dependent launch on sm_90 and later (whose code waits for the previous kernel,
  // griddepcontrol.wait, before it reads x or writes out): its first weight tiles stream
  // while the previous kernel ends. Sound because a QTensor's bytes are written only by
  // copies, never by a kernel.
  const bool dependent = arch_major(dev) >= 9;
  dev.launch(names[size_t(t)][d], Module::Quantized, dim3(p.blocks), dim3(p.threads), args, p.shmem, dependent);
  return out;
}

// mmvqs: x -> split Q8_1 (qs (m, k_pad) then ds (m, k_pad / 32) words), one wave per row.
std::shared_ptr<GpuStorage> matvec_split(GpuDevice& dev, GgmlType t, const uint8_t* w, size_t n, size_t k,
                                         const void* x, DType xd, size_t m, size_t k_pad) {
  const size_t ds_words = k_pad / 32;
  DeviceBuffer act(dev, m * k_pad + m * ds_words * sizeof(uint32_t));
  int8_t* qs = static_cast<int8_t*>(act.get());
  uint32_t* ds = reinterpret_cast<uint32_t*>(qs + m * k_pad);  // m * k_pad: a multiple of 512
  {
    void* args[] = {&m, &k, &k_pad, const_cast<void**>(&x), &qs, &ds};
    dev.launch(quantize_split_name(split_perm(t), xd), Module::Quantized, dim3(dev.grid_for(m * k_pad)),
               dim3(kQuantBlock), args);
  }
  auto out = gpu_alloc(dev, m * n, DType::F32);
  int ni = int(n), ki = int(k);
  size_t w_row = ggml_row_size(t, k);
  const unsigned rows_per_block = kQuantBlock / wave_size(dev);
  const dim3 grid(unsigned((n + rows_per_block - 1) / rows_per_block));
  for (size_t r0 = 0; r0 < m; r0 += kQMatVecMaxBatch) {
    const size_t b = std::min(kQMatVecMaxBatch, m - r0);
    const int8_t* q = qs + r0 * k_pad;
    const uint32_t* d = ds + r0 * ds_words;
    float* o = static_cast<float*>(out->raw()) + r0 * n;
    void* args[] = {
        &ni,    &ki, const_cast<uint8_t**>(&w), &w_row, const_cast<int8_t**>(&q), const_cast<uint32_t**>(&d),
        &k_pad, &o};
    dev.launch(mmvq_name(t, b, true), Module::Quantized, grid, dim3(kQuantBlock), args);
  }
  return out;
}

StoragePtr matvec(GpuDevice& dev, GgmlType t, const uint8_t* w, size_t n, size_t k, const GpuStorage& xs,
                  const Layout& x_l, size_t m) {
  std::shared_ptr<BackendStorage> keep;
  const void* x = x_data(xs, x_l, keep);
  const DType xd = kernel_dtype(xs.dtype());
  size_t k_pad = (k + kRowPadding - 1) / kRowPadding * kRowPadding;
  size_t w_row = ggml_row_size(t, k);
  std::shared_ptr<GpuStorage> out;
  WidePlan wide;
  if (m == 1 && plan_wide(dev, t, w, n, k, k_pad, wide)) {
    out = matvec_wide(dev, t, w, n, k, x, xd, k_pad, wide);
  } else if (use_split_kernel(t, w, w_row)) {
    out = matvec_split(dev, t, w, n, k, x, xd, m, k_pad);
  } else {
    const size_t act_row = k_pad / 32 * sizeof(quant::BlockQ8_1);
    DeviceBuffer act(dev, m * act_row);
    {
      uint8_t* a = static_cast<uint8_t*>(act.get());
      void* args[] = {&m, &k, &k_pad, const_cast<void**>(&x), &a};
      dev.launch(kname("quantize_q8_1", xd), Module::Quantized, dim3(dev.grid_for(m * k_pad)),
                 dim3(kQuantBlock), args);
    }
    out = gpu_alloc(dev, m * n, DType::F32);
    int ni = int(n), ki = int(k), rt = int(row_threads(dev));
    const unsigned rows_per_block = kQuantBlock / unsigned(rt);
    const dim3 grid(unsigned((n + rows_per_block - 1) / rows_per_block));
    for (size_t r0 = 0; r0 < m; r0 += kQMatVecMaxBatch) {
      const size_t b = std::min(kQMatVecMaxBatch, m - r0);
      const uint8_t* a = static_cast<const uint8_t*>(act.get()) + r0 * act_row;
      float* o = static_cast<float*>(out->raw()) + r0 * n;
      size_t a_row = act_row;
      void* args[] = {&ni,    &ki, &rt, const_cast<uint8_t**>(&w), &w_row, const_cast<uint8_t**>(&a),
                      &a_row, &o};
      dev.launch(mmvq_name(t, b, false), Module::Quantized, grid, dim3(kQuantBlock), args);
    }
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
