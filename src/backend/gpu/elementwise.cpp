// Entry points of the elementwise families (AFFINE, UNARY, BINARY, TERNARY, CAST):
// collapse the operands' layouts, upload `info` when any operand is strided, and
// launch the `{op}_{dtype}` kernel with Candle's ABI.
#include <fmt/format.h>

#include <algorithm>

#include "backend/gpu/gpu_storage.h"

namespace wick::gpu {

namespace {

// out = kernel(numel, num_dims, info, [param,] inputs..., out[, params...]) over
// the (identical) dims of `layouts`, one layout per input.
struct MapLaunch {
  std::string name;
  Module module;
  DType out_dtype;
  std::vector<const Layout*> layouts;
  std::vector<const GpuStorage*> inputs;
  std::vector<void*> params_before;  // scalar params before the pointers (upowf, uelu)
  std::vector<void*> params_after;   // after the output pointer (affine)
};

StoragePtr run_map(GpuDevice& dev, const MapLaunch& m) {
  const size_t n = m.layouts[0]->elem_count();
  auto out = gpu_alloc(dev, n, m.out_dtype);
  if (n == 0) return out;
  Collapsed c = collapse(m.layouts);
  DeviceBuffer info_buf;
  const size_t* info = nullptr;
  if (!c.contiguous) {
    info_buf = upload(dev, c.info());
    info = static_cast<const size_t*>(info_buf.get());
  }
  size_t numel = n, nd = c.dims.size();
  std::vector<const void*> in_ptrs;
  size_t max_bytes = dtype_size(m.out_dtype);
  for (size_t j = 0; j < m.inputs.size(); ++j) {
    in_ptrs.push_back(m.inputs[j]->at(m.layouts[j]->start_offset()));
    max_bytes = std::max(max_bytes, dtype_size(m.inputs[j]->dtype()));
  }
  void* out_ptr = out->raw();
  std::vector<void*> args = {&numel, &nd, &info};
  args.insert(args.end(), m.params_before.begin(), m.params_before.end());
  for (auto& p : in_ptrs) args.push_back(&p);
  args.push_back(&out_ptr);
  args.insert(args.end(), m.params_after.begin(), m.params_after.end());

  // Work items: 16-byte vectors on the contiguous and inner-contiguous paths.
  const size_t v = vector_lanes(max_bytes);
  bool inner = c.contiguous;
  if (!inner && c.dims.back() % v == 0) {
    inner = std::all_of(c.strides.begin(), c.strides.end(), [](const auto& s) { return s.back() == 1; });
  }
  size_t items = inner ? vector_items(n, max_bytes) : n;
  constexpr size_t kPerThread = plan::elementwise::kVectorsPerThread;
  if (c.contiguous) items = (items + kPerThread - 1) / kPerThread;
  const unsigned grid = c.contiguous ? dev.grid_for(items) : strided_grid(dev, items);
  dev.launch(m.name, m.module, dim3(grid), dim3(dev.block_size()), args.data());
  return out;
}

std::string sfx(DType d) { return std::string(dtype_name(d)); }

}  // namespace

StoragePtr GpuStorage::affine(const Layout& l, double mul, double add) const {
  return run_map(dev_, {"affine_" + sfx(dtype_), Module::Affine, dtype_, {&l}, {this}, {}, {&mul, &add}});
}

StoragePtr GpuStorage::powf(const Layout& l, double e) const {
  return run_map(dev_, {"upowf_" + sfx(dtype_), Module::Unary, dtype_, {&l}, {this}, {&e}, {}});
}

StoragePtr GpuStorage::elu(const Layout& l, double alpha) const {
  return run_map(dev_, {"uelu_" + sfx(dtype_), Module::Unary, dtype_, {&l}, {this}, {&alpha}, {}});
}

StoragePtr GpuStorage::unary(UnaryOp op, const Layout& l) const {
  return run_map(
      dev_,
      {fmt::format("u{}_{}", unary_op_name(op), sfx(dtype_)), Module::Unary, dtype_, {&l}, {this}, {}, {}});
}

StoragePtr GpuStorage::binary(BinaryOp op, const BackendStorage& rhs, const Layout& lhs_l,
                              const Layout& rhs_l) const {
  return run_map(dev_, {fmt::format("b{}_{}", binary_op_name(op), sfx(dtype_)),
                        Module::Binary,
                        dtype_,
                        {&lhs_l, &rhs_l},
                        {this, &of(rhs)},
                        {},
                        {}});
}

StoragePtr GpuStorage::cmp(CmpOp op, const BackendStorage& rhs, const Layout& lhs_l,
                           const Layout& rhs_l) const {
  return run_map(dev_, {fmt::format("{}_{}", cmp_op_name(op), sfx(dtype_)),
                        Module::Binary,
                        DType::U8,
                        {&lhs_l, &rhs_l},
                        {this, &of(rhs)},
                        {},
                        {}});
}

StoragePtr GpuStorage::where_cond(const Layout& l, const BackendStorage& t, const Layout& t_l,
                                  const BackendStorage& f, const Layout& f_l) const {
  // A u8 condition with f16/bf16 values moves 16 lanes a step on the contiguous path
  // (kernels/ternary.cu: where_wide).
  const DType vt = t.dtype();
  return run_map(dev_, {fmt::format("where_{}_{}", sfx(dtype_), sfx(vt)),
                        Module::Ternary,
                        vt,
                        {&l, &t_l, &f_l},
                        {this, &of(t), &of(f)},
                        {},
                        {}});
}

StoragePtr GpuStorage::to_dtype(const Layout& l, DType dtype) const {
  return run_map(
      dev_, {fmt::format("cast_{}_{}", sfx(dtype_), sfx(dtype)), Module::Cast, dtype, {&l}, {this}, {}, {}});
}

}  // namespace wick::gpu
