// Entry points of the elementwise families (AFFINE, UNARY, BINARY, TERNARY, CAST):
// collapse the operands' layouts, upload `info` when any operand is strided, and
// launch the `{op}_{dtype}` kernel with Candle's ABI.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <span>
#include <utility>

#include "backend/gpu/gpu_ops.h"

namespace wick::gpu {

namespace {

// out = kernel(numel, num_dims, info, [param,] inputs..., out[, params...]) over
// the (identical) dims of `layouts`, one layout per input (at most three).
struct MapLaunch {
  const Kernel& kernel;
  DType out_dtype;
  std::array<const Layout*, 3> layouts{};
  std::array<const GpuStorage*, 3> inputs{};
  size_t n_inputs = 1;
  void* param_before = nullptr;         // upowf, uelu
  std::array<void*, 2> params_after{};  // affine
  // The op as a deferred small op (batch_ops.h: kind, op and parameters; the operands
  // are filled in here), or none where the batch kernel does not run it.
  std::optional<batch::Op> small{};
};

StoragePtr run_map(GpuDevice& dev, const MapLaunch& m) {
  const size_t n = m.layouts[0]->elem_count();
  auto out = gpu_alloc(dev, n, m.out_dtype);
  if (n == 0) return out;
  const std::span<const Layout* const> layouts(m.layouts.data(), m.n_inputs);
  // Every operand contiguous: no info, one dim (the kernels ignore num_dims then).
  const bool all_contiguous =
      std::all_of(layouts.begin(), layouts.end(), [](const Layout* l) { return l->is_contiguous(); });
  Collapsed c;
  if (!all_contiguous) c = collapse(layouts);
  if (m.small && n <= batch::kMaxElements) {
    batch::Op op = *m.small;
    op.a = m.inputs[0]->at(m.layouts[0]->start_offset());
    if (m.n_inputs > 1) op.b = m.inputs[1]->at(m.layouts[1]->start_offset());
    op.out = out->raw();
    op.n = uint32_t(n);
    // Strided operands: their collapsed dims and strides travel in the record, each
    // input's offsets within 32 bits (map_n_staged).
    bool fits = true;
    if (!all_contiguous && !c.contiguous) {
      fits = c.dims.size() <= size_t(batch::kMaxDims);
      std::array<size_t, 2> extent{};
      for (size_t d = 0; fits && d < c.dims.size(); ++d) {
        op.dims[d] = uint32_t(c.dims[d]);
        for (size_t j = 0; j < m.n_inputs; ++j) {
          fits = fits && c.strides[j][d] <= UINT32_MAX;
          extent[j] += (c.dims[d] - 1) * std::min<size_t>(c.strides[j][d], UINT32_MAX);
          op.strides[j][d] = uint32_t(c.strides[j][d]);
        }
      }
      fits = fits && extent[0] <= UINT32_MAX && extent[1] <= UINT32_MAX;
      op.nd = uint8_t(c.dims.size());
    }
    if (fits && defer_small(dev, op, m.inputs[0]->dtype(), m.out_dtype, n)) return out;
  }
  DeviceBuffer info_buf;
  const size_t* info = nullptr;
  size_t numel = n, nd = 1;
  if (!all_contiguous) {
    nd = c.dims.size();
    if (!c.contiguous) {
      info_buf = upload(dev, c.info());
      info = static_cast<const size_t*>(info_buf.get());
    }
  }
  std::array<const void*, 3> in_ptrs{};
  size_t max_bytes = dtype_size(m.out_dtype);
  for (size_t j = 0; j < m.n_inputs; ++j) {
    in_ptrs[j] = m.inputs[j]->at(m.layouts[j]->start_offset());
    max_bytes = std::max(max_bytes, dtype_size(m.inputs[j]->dtype()));
  }
  void* out_ptr = out->raw();
  std::array<void*, 10> args{};
  size_t na = 0;
  args[na++] = &numel;
  args[na++] = &nd;
  args[na++] = &info;
  if (m.param_before) args[na++] = m.param_before;
  for (size_t j = 0; j < m.n_inputs; ++j) args[na++] = &in_ptrs[j];
  args[na++] = &out_ptr;
  for (void* p : m.params_after)
    if (p) args[na++] = p;

  // Work items: 16-byte vectors on the contiguous and inner-contiguous paths.
  const bool contiguous = info == nullptr;
  const size_t v = vector_lanes(max_bytes);
  bool inner = contiguous;
  if (!inner && c.dims.back() % v == 0) {
    inner = std::all_of(c.strides.begin(), c.strides.end(), [](const auto& s) { return s.back() == 1; });
  }
  size_t items = inner ? vector_items(n, max_bytes) : n;
  constexpr size_t kPerThread = plan::elementwise::kVectorsPerThread;
  if (contiguous) items = (items + kPerThread - 1) / kPerThread;
  const unsigned grid = contiguous ? dev.grid_for(items) : strided_grid(dev, items);
  dev.launch(m.kernel, dim3(grid), dim3(dev.block_size()), args.data());
  return out;
}

// The deferred form of an op (MapLaunch::small).
batch::Op small(batch::Kind kind, uint8_t op, double p0 = 0, double p1 = 0) {
  batch::Op o;
  o.kind = kind;
  o.op = op;
  o.p0 = p0;
  o.p1 = p1;
  return o;
}

// The kernels of a table row, one per dtype: "{prefix}{name}_{dtype}".
template <size_t N>
std::array<DTypeKernels, N> kernel_rows(Module m, std::string_view prefix,
                                        const std::array<std::string_view, N>& names) {
  return [&]<size_t... I>(std::index_sequence<I...>) {
    return std::array<DTypeKernels, N>{DTypeKernels(m, fmt::format("{}{}", prefix, names[I]))...};
  }
  (std::make_index_sequence<N>{});
}

}  // namespace

StoragePtr GpuStorage::affine(const Layout& l, double mul, double add) const {
  static const DTypeKernels k(Module::Affine, "affine");
  return run_map(
      dev_,
      {k[dtype_], dtype_, {&l}, {this}, 1, nullptr, {&mul, &add}, small(batch::Kind::Affine, 0, mul, add)});
}

StoragePtr GpuStorage::powf(const Layout& l, double e) const {
  static const DTypeKernels k(Module::Unary, "upowf");
  return run_map(dev_, {k[dtype_], dtype_, {&l}, {this}, 1, &e, {}, small(batch::Kind::Powf, 0, e)});
}

StoragePtr GpuStorage::elu(const Layout& l, double alpha) const {
  static const DTypeKernels k(Module::Unary, "uelu");
  return run_map(dev_, {k[dtype_], dtype_, {&l}, {this}, 1, &alpha, {}, small(batch::Kind::Elu, 0, alpha)});
}

StoragePtr GpuStorage::unary(UnaryOp op, const Layout& l) const {
  static const auto k = kernel_rows(Module::Unary, "u", kUnaryOpNames);
  return run_map(
      dev_,
      {k[size_t(op)][dtype_], dtype_, {&l}, {this}, 1, nullptr, {}, small(batch::Kind::Unary, uint8_t(op))});
}

StoragePtr GpuStorage::binary(BinaryOp op, const BackendStorage& rhs, const Layout& lhs_l,
                              const Layout& rhs_l) const {
  static const auto k = kernel_rows(Module::Binary, "b", kBinaryOpNames);
  return run_map(dev_, {k[size_t(op)][dtype_],
                        dtype_,
                        {&lhs_l, &rhs_l},
                        {this, &of(rhs)},
                        2,
                        nullptr,
                        {},
                        small(batch::Kind::Binary, uint8_t(op))});
}

StoragePtr GpuStorage::swiglu(const Layout& l, const BackendStorage& up, const Layout& up_l) const {
  // kernels/binary.cu: swiglu_{dtype}, float dtypes (the front end checks).
  static const DTypeKernels k(Module::Binary, "swiglu");
  return run_map(
      dev_, {k[dtype_], dtype_, {&l, &up_l}, {this, &of(up)}, 2, nullptr, {}, small(batch::Kind::Swiglu, 0)});
}

StoragePtr GpuStorage::cmp(CmpOp op, const BackendStorage& rhs, const Layout& lhs_l,
                           const Layout& rhs_l) const {
  static const auto k = kernel_rows(Module::Binary, "", kCmpOpNames);
  return run_map(dev_,
                 {k[size_t(op)][dtype_], DType::U8, {&lhs_l, &rhs_l}, {this, &of(rhs)}, 2, nullptr, {}});
}

StoragePtr GpuStorage::where_cond(const Layout& l, const BackendStorage& t, const Layout& t_l,
                                  const BackendStorage& f, const Layout& f_l) const {
  // A u8 condition with f16/bf16 values moves 16 lanes a step on the contiguous path
  // (kernels/ternary.cu: where_wide).
  static const DTypePairKernels k(Module::Ternary, "where");
  const DType vt = t.dtype();
  return run_map(dev_, {k(dtype_, vt), vt, {&l, &t_l, &f_l}, {this, &of(t), &of(f)}, 3, nullptr, {}});
}

StoragePtr GpuStorage::to_dtype(const Layout& l, DType dtype) const {
  static const DTypePairKernels k(Module::Cast, "cast");
  return run_map(dev_, {k(dtype_, dtype), dtype, {&l}, {this}, 1, nullptr, {}, small(batch::Kind::Cast, 0)});
}

}  // namespace wick::gpu
