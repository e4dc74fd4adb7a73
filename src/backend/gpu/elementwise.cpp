// Entry points of the elementwise families (AFFINE, UNARY, BINARY, TERNARY, CAST):
// collapse the operands' layouts, upload `info` when any operand is strided, and
// launch the `{op}_{dtype}` kernel with Candle's ABI.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

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
  // A kernel of the same ABI compiled for contiguous, 16-byte aligned operands only,
  // used instead of `name` when they are (fewer registers than the kernel that also
  // carries the strided paths); empty: always `name`.
  std::string contiguous_name = {};
};

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

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
  const size_t v = std::max<size_t>(1, 16 / max_bytes);
  bool inner = c.contiguous;
  if (!inner && c.dims.back() % v == 0) {
    inner = std::all_of(c.strides.begin(), c.strides.end(), [](const auto& s) { return s.back() == 1; });
  }
  size_t items = inner ? vector_items(n, max_bytes) : n;
  if (c.contiguous) items = (items + kVectorsPerThread - 1) / kVectorsPerThread;
  const unsigned grid = c.contiguous ? dev.grid_for(items) : strided_grid(dev, items);
  const bool wide = !m.contiguous_name.empty() && c.contiguous && aligned16(out_ptr) &&
                    std::all_of(in_ptrs.begin(), in_ptrs.end(), [](const void* p) { return aligned16(p); });
  dev.launch(wide ? m.contiguous_name : m.name, m.module, dim3(grid), dim3(dev.block_size()), args.data());
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
  const DType vt = t.dtype();
  // A u8 condition with f16/bf16 values: where_u8_* takes contiguous aligned operands
  // 16 lanes a step, two steps a thread, selecting on packed words (kernels/ternary.cu;
  // H200: 4.39 TB/s, 1.01x PyTorch, bench/results/2026-11-21-h200-session2). Variants
  // kept for the benchmarks: WICK_WHERE_V8=1 the generic 8-lane engine, WICK_WHERE_U=1|2|4
  // the contiguous-only where_wide{U}_u8_* (fewer registers; measured slower for U 1, 2).
  const bool narrow = dtype_ == DType::U8 && (vt == DType::F16 || vt == DType::BF16);
  std::string name = fmt::format("where_{}_{}", sfx(dtype_), sfx(vt)), wide;
  if (narrow) {
    auto env_is = [](const char* k, const char* v) {
      const char* e = std::getenv(k);
      return e && std::string_view(e) == v;
    };
    if (env_is("WICK_WHERE_V8", "1")) {
      name = "where_v8_u8_" + sfx(vt);
    } else {
      for (const char* u : {"1", "2", "4"})
        if (env_is("WICK_WHERE_U", u)) wide = fmt::format("where_wide{}_u8_{}", u, sfx(vt));
    }
  }
  return run_map(dev_, {name, Module::Ternary, vt, {&l, &t_l, &f_l}, {this, &of(t), &of(f)}, {}, {}, wide});
}

StoragePtr GpuStorage::to_dtype(const Layout& l, DType dtype) const {
  return run_map(
      dev_, {fmt::format("cast_{}_{}", sfx(dtype_), sfx(dtype)), Module::Cast, dtype, {&l}, {this}, {}, {}});
}

}  // namespace wick::gpu
