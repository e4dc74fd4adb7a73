// Entry points of the QUANTIZED family (kernels/quantized/, one module a mat-vec
// generation and one for dequantize): dequantize packed ggml rows, and the quantized
// matmul by one of two paths (wick/quant.h):
//   MatVec       One row of x with Q4_0, Q8_0, Q4_K or Q6_K weights whose rows are
//                whole 16-byte words and k a multiple of mmvqw's round (1024
//                columns; 2048 for Q4_K and Q6_K) takes mmvqw: one launch, x
//                quantized in each block's shared memory, teams of 32 lanes
//                streaming their rows through shared memory (docs/PERFORMANCE.md);
//                qmatvec_fused is the same launch with the row formed in each block
//                (rms_norm(x + r) * alpha, or silu(x) * r).
//                Otherwise x rows -> Q8_1 rows padded to a multiple of 512 elements
//                (ggml's MATRIX_ROW_PADDING, zeros quantized), then one int8 mat-vec
//                launch per 8 rows of x (kernels specialised for 1..8 rows, so each
//                weight row is read once per launch): the mmvqs kernels for Q4_0,
//                Q8_0, Q4_K and Q6_K (split, permuted activations; one wave per
//                weight row), the generic mmvq kernels (four waves per row) for
//                every other type or a weight not 4-byte aligned (16 for Q4_K).
//   DequantGemm  the weight dequantized to x's dtype (f32 for f64) in a scratch
//                buffer, then the device GEMM (gemm() of gpu_ops.h) with it transposed.
// The constants these launches share with the kernels are quantized_plan.h's.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>

#include "backend/gpu/gpu_ops.h"
#include "backend/gpu/quantized_plan.h"
#include "base/ggml_blocks.h"
#include "wick/quant.h"

namespace wick::gpu {

// The kernels and their plans name ggml types by the ids of base/ggml_blocks.h.
static_assert(
    [] {
      using namespace quant::type_id;
      constexpr std::pair<GgmlType, int> kIds[] = {
          {GgmlType::F32, kF32},   {GgmlType::F16, kF16},   {GgmlType::Q4_0, kQ4_0}, {GgmlType::Q4_1, kQ4_1},
          {GgmlType::Q5_0, kQ5_0}, {GgmlType::Q5_1, kQ5_1}, {GgmlType::Q8_0, kQ8_0}, {GgmlType::Q8_1, kQ8_1},
          {GgmlType::Q2_K, kQ2_K}, {GgmlType::Q3_K, kQ3_K}, {GgmlType::Q4_K, kQ4_K}, {GgmlType::Q5_K, kQ5_K},
          {GgmlType::Q6_K, kQ6_K}, {GgmlType::Q8_K, kQ8_K}, {GgmlType::BF16, kBF16}};
      if (std::size(kIds) != std::size(kAllGgmlTypes)) return false;
      for (const auto& [t, id] : kIds)
        if (int(t) != id) return false;
      return true;
    }(),
    "quant::type_id agrees with GgmlType");
static_assert(qplan::kMaxBatch == int(kQMatVecMaxBatch), "mat-vec kernels for 1..kQMatVecMaxBatch rows");

namespace {

using qplan::kQuantBlock;
using qplan::kRowPadding;

// The dtypes the kernels write or read directly; f64 goes through f32.
DType kernel_dtype(DType d) { return d == DType::F64 ? DType::F32 : d; }

std::shared_ptr<GpuStorage> dequantize_to(GpuDevice& dev, GgmlType t, const void* src, size_t n, DType dt) {
  auto out = gpu_alloc(dev, n, dt);
  if (n == 0) return out;
  void* o = out->raw();
  void* args[] = {&n, const_cast<void**>(&src), &o};
  // 16 outputs per thread for the types with a dequantize16 kernel, else 8
  const size_t items = qplan::dequantize_by16(int(t)) ? n / 16 : (n + 7) / 8;
  static const auto kernels = [] {
    std::array<std::array<Kernel, kNumDTypes>, 32> k;
    for (GgmlType g : kAllGgmlTypes)
      for (DType d : kAllDTypes)
        k[size_t(g)][size_t(d)] = Kernel(Module::QuantizedDequantize,
                                         fmt::format("dequantize_{}_{}", ggml_type_name(g), dtype_name(d)));
    return k;
  }();
  dev.launch(kernels[size_t(t)][size_t(dt)], dim3(dev.grid_for(items)), dim3(dev.block_size()), args);
  return out;
}

// x (m, k) of x's dtype as a kernel dtype: the storage itself or an f32 copy.
const void* x_data(const GpuStorage& xs, const Layout& x_l, std::shared_ptr<BackendStorage>& keep) {
  if (xs.dtype() != DType::F64) return xs.at(x_l.start_offset());
  keep = xs.to_dtype(x_l, DType::F32);
  return GpuStorage::of(*keep).raw();
}

// Kernels registered once: kernel_table(prefix)[type id][b] = "{prefix}_{type}_b{b}".
using KernelTable = std::array<std::array<Kernel, kQMatVecMaxBatch + 1>, 32>;
KernelTable make_kernels(Module m, std::string_view prefix) {
  KernelTable t;
  for (GgmlType g : kAllGgmlTypes)
    for (size_t b = 1; b <= kQMatVecMaxBatch; ++b)
      t[size_t(g)][b] = Kernel(m, fmt::format("{}_{}_b{}", prefix, ggml_type_name(g), b));
  return t;
}
const Kernel& mmvq_kernel(GgmlType t, size_t b, bool split) {
  static const KernelTable generic = make_kernels(Module::QuantizedMmvq, "mmvq"),
                           split_kernels = make_kernels(Module::QuantizedMmvqs, "mmvqs");
  return (split ? split_kernels : generic)[size_t(t)][b];
}

const Kernel& quantize_split_kernel(int perm, DType xd) {
  static const auto kernels = [] {
    std::array<std::array<Kernel, 3>, qplan::kSplitPerms> n;
    const DType dts[] = {DType::F32, DType::F16, DType::BF16};
    for (int p = 0; p < qplan::kSplitPerms; ++p)
      for (int d = 0; d < 3; ++d)
        n[size_t(p)][size_t(d)] =
            Kernel(Module::QuantizedMmvqs, fmt::format("quantize_q8_1s_p{}_{}", p, dtype_name(dts[d])));
    return n;
  }();
  return kernels[size_t(perm)][xd == DType::F32 ? 0 : xd == DType::F16 ? 1 : 2];
}

bool use_split_kernel(GgmlType t, const uint8_t* w) {
  return qplan::split_perm(int(t)) >= 0 && reinterpret_cast<uintptr_t>(w) % qplan::split_align(int(t)) == 0;
}

// The major compute capability of an NVIDIA device ("sm_90" -> 9); 0 for others.
int arch_major(const GpuDevice& dev) {
  const std::string& a = dev.props().arch;
  if (a.rfind("sm_", 0) != 0 || a.size() < 5) return 0;
  return std::atoi(a.substr(3, a.size() - 4).c_str());
}

// mmvqw (batch 1, one launch; the default where it applies): teams of 32 lanes
// streaming rows as rounds of the plan's columns (k a multiple of them; rows whole
// 16-byte words), in blocks of qplan::wide_launch (the quantized x and each team's
// tiles in shared memory).
bool plan_wide(const GpuDevice& dev, GgmlType t, const uint8_t* w, size_t n, size_t k, size_t k_pad,
               qplan::WideLaunch& p) {
  const qplan::WideShape shape = qplan::wide_shape(int(t));
  if (shape.round_cols == 0) return false;
  const size_t cols = size_t(shape.round_cols), tile = size_t(shape.tile_rounds) * ggml_row_size(t, cols);
  if (reinterpret_cast<uintptr_t>(w) % 16 != 0 || ggml_row_size(t, k) % 16 != 0 || k % cols != 0 ||
      n > size_t(INT32_MAX) || k > size_t(INT32_MAX))
    return false;
  p = qplan::wide_launch(wave_size(dev), size_t(std::max(dev.props().multiprocessors, 0)),
                         std::max(dev.props().shared_per_block, GpuDevice::kSharedDefault), k_pad, tile,
                         shape.stages);
  return p.threads > 0;
}

// Launches an mmvqw kernel by the plan: dependent on sm_90 and later (its code waits
// for the previous kernel, griddepcontrol.wait, before it reads x or writes out), so
// that its first weight tiles stream while the previous kernel ends. Sound because a
// QTensor's bytes are written only by copies, never by a kernel.
void launch_wide(GpuDevice& dev, const Kernel& kernel, const qplan::WideLaunch& p, void** args) {
  dev.launch(kernel, dim3(p.blocks), dim3(p.threads), args, p.shmem, arch_major(dev) >= 9);
}

std::shared_ptr<GpuStorage> matvec_wide(GpuDevice& dev, GgmlType t, const uint8_t* w, size_t n, size_t k,
                                        const void* x, DType xd, size_t k_pad, const qplan::WideLaunch& p) {
  static const auto kernels = [] {
    std::array<std::array<Kernel, 3>, 32> nm;
    const DType dts[] = {DType::F32, DType::F16, DType::BF16};
    for (GgmlType g : kAllGgmlTypes)
      for (size_t d = 0; d < 3 && qplan::wide_shape(int(g)).round_cols > 0; ++d)
        nm[size_t(g)][d] =
            Kernel(Module::QuantizedMmvqw, fmt::format("mmvqw_{}_{}", ggml_type_name(g), dtype_name(dts[d])));
    return nm;
  }();
  auto out = gpu_alloc(dev, n, DType::F32);
  int ni = int(n), ki = int(k), kpi = int(k_pad);
  float* o = static_cast<float*>(out->raw());
  void* args[] = {&ni, &ki, &kpi, const_cast<uint8_t**>(&w), const_cast<void**>(&x), &o};
  const size_t d = xd == DType::F32 ? 0 : xd == DType::F16 ? 1 : 2;
  launch_wide(dev, kernels[size_t(t)][d], p, args);
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
    dev.launch(quantize_split_kernel(qplan::split_perm(int(t)), xd), dim3(dev.grid_for(m * k_pad)),
               dim3(kQuantBlock), args);
  }
  auto out = gpu_alloc(dev, m * n, DType::F32);
  int ni = int(n), ki = int(k);
  size_t w_row = ggml_row_size(t, k);
  const unsigned rows_per_block = qplan::mmvqs_rows_per_block(wave_size(dev));
  const dim3 grid(unsigned((n + rows_per_block - 1) / rows_per_block));
  for (size_t r0 = 0; r0 < m; r0 += kQMatVecMaxBatch) {
    const size_t b = std::min(kQMatVecMaxBatch, m - r0);
    const int8_t* q = qs + r0 * k_pad;
    const uint32_t* d = ds + r0 * ds_words;
    float* o = static_cast<float*>(out->raw()) + r0 * n;
    void* args[] = {
        &ni,    &ki, const_cast<uint8_t**>(&w), &w_row, const_cast<int8_t**>(&q), const_cast<uint32_t**>(&d),
        &k_pad, &o};
    dev.launch(mmvq_kernel(t, b, true), grid, dim3(kQuantBlock), args);
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
  qplan::WideLaunch wide;
  if (m == 1 && plan_wide(dev, t, w, n, k, k_pad, wide)) {
    out = matvec_wide(dev, t, w, n, k, x, xd, k_pad, wide);
  } else if (use_split_kernel(t, w)) {
    out = matvec_split(dev, t, w, n, k, x, xd, m, k_pad);
  } else {
    const size_t act_row = k_pad / 32 * sizeof(quant::BlockQ8_1);
    DeviceBuffer act(dev, m * act_row);
    {
      uint8_t* a = static_cast<uint8_t*>(act.get());
      void* args[] = {&m, &k, &k_pad, const_cast<void**>(&x), &a};
      static const DTypeKernels quantize(Module::QuantizedMmvq, "quantize_q8_1");
      dev.launch(quantize[xd], dim3(dev.grid_for(m * k_pad)), dim3(kQuantBlock), args);
    }
    out = gpu_alloc(dev, m * n, DType::F32);
    int ni = int(n), ki = int(k), rt = int(qplan::mmvq_row_threads(wave_size(dev)));
    const unsigned rows_per_block = qplan::mmvq_rows_per_block(wave_size(dev));
    const dim3 grid(unsigned((n + rows_per_block - 1) / rows_per_block));
    for (size_t r0 = 0; r0 < m; r0 += kQMatVecMaxBatch) {
      const size_t b = std::min(kQMatVecMaxBatch, m - r0);
      const uint8_t* a = static_cast<const uint8_t*>(act.get()) + r0 * act_row;
      float* o = static_cast<float*>(out->raw()) + r0 * n;
      size_t a_row = act_row;
      void* args[] = {&ni,    &ki, &rt, const_cast<uint8_t**>(&w), &w_row, const_cast<uint8_t**>(&a),
                      &a_row, &o};
      dev.launch(mmvq_kernel(t, b, false), grid, dim3(kQuantBlock), args);
    }
  }
  if (xs.dtype() == DType::F32) return out;
  return out->to_dtype(Layout(Shape{m * n}), xs.dtype());
}

// bf16: x (f32 or f64) and the weight are multiplied as bf16 with f32 accumulation,
// C in f32; otherwise both in x's kernel dtype.
StoragePtr dequant_gemm(GpuDevice& dev, GgmlType t, const uint8_t* w, size_t n, size_t k,
                        const GpuStorage& xs, const Layout& x_l, size_t m, bool bf16) {
  std::shared_ptr<BackendStorage> keep;
  const DType cd = kernel_dtype(xs.dtype());
  const void* x = nullptr;
  DType gd = cd;
  if (bf16 && cd == DType::F32) {
    keep = xs.to_dtype(x_l, DType::BF16);
    x = GpuStorage::of(*keep).raw();
    gd = DType::BF16;
  } else {
    x = x_data(xs, x_l, keep);
  }
  auto wd = dequantize_to(dev, t, w, n * k, gd);  // (n, k) row-major = B^T
  auto c = gpu_alloc(dev, m * n, cd);
  gemm(dev, gd, cd, false, true, m, n, k, x, k, 0, wd->raw(), k, 0, c->raw(), n, 0, 1);
  if (xs.dtype() == cd) return c;
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
  // Auto with quantized weights: bf16 operands (x rounded to 8 mantissa bits, each
  // element on its own scale: finer than MatVec's Q8_1 x, whose 8 bits span a block's
  // largest element), f32 accumulation; the bf16 GEMM runs at twice TF32's rate and
  // the dequantized weight is half the f32 bytes (docs/PERFORMANCE.md).
  return dequant_gemm(*this, t, wp, n, k, xs, x_l, m, path == QMatmulPath::Auto && ggml_is_quantized(t));
}

StoragePair GpuDevice::qmatvec_fused(const FusedRow& row, GgmlType t, const BackendStorage& w,
                                     size_t byte_offset, size_t n, size_t k) {
  const uint8_t* wp = static_cast<const uint8_t*>(GpuStorage::of(w).at(byte_offset));
  const size_t k_pad = (k + kRowPadding - 1) / kRowPadding * kRowPadding;
  qplan::WideLaunch wide;
  if (n == 0 || !plan_wide(*this, t, wp, n, k, k_pad, wide)) return {};
  const auto f32_at = [](const BackendStorage* s, size_t off) {
    return s ? static_cast<const float*>(GpuStorage::of(*s).at(off)) : nullptr;
  };
  const float *x = f32_at(row.x, row.x_off), *r = f32_at(row.r, row.r_off),
              *a = f32_at(row.alpha, row.alpha_off);
  // The fused rows read 16-byte words (k is a multiple of the plan's 1024 columns).
  for (const float* p : {x, r, a})
    if (reinterpret_cast<uintptr_t>(p) % 16 != 0) return {};
  static const auto kernels = [] {
    std::array<std::array<Kernel, 2>, 32> nm;
    for (GgmlType g : kAllGgmlTypes)
      if (qplan::wide_shape(int(g)).round_cols > 0)
        for (size_t i = 0; i < 2; ++i)
          nm[size_t(g)][i] = Kernel(Module::QuantizedMmvqw, fmt::format("mmvqw_{}_{}", ggml_type_name(g),
                                                                        i == 0 ? "addnorm" : "swiglu"));
    return nm;
  }();
  auto out = gpu_alloc(*this, n, DType::F32);
  int ni = int(n), ki = int(k), kpi = int(k_pad);
  float* o = static_cast<float*>(out->raw());
  if (row.kind == FusedRow::Kind::Swiglu) {
    void* args[] = {&ni, &ki, &kpi, const_cast<uint8_t**>(&wp), &x, &r, &o};
    launch_wide(*this, kernels[size_t(t)][1], wide, args);
    return {nullptr, out};
  }
  auto sum = gpu_alloc(*this, k, DType::F32);
  float* sp = static_cast<float*>(sum->raw());
  float eps = row.eps;
  void* args[] = {&ni, &ki, &kpi, const_cast<uint8_t**>(&wp), &x, &r, &a, &eps, &sp, &o};
  launch_wide(*this, kernels[size_t(t)][0], wide, args);
  return {sum, out};
}

}  // namespace wick::gpu
