// GpuStorage: a device allocation of one dtype on one GpuDevice. Methods are
// defined one family per file: elementwise.cpp (affine, powf, elu, unary,
// binary, cmp, where, to_dtype), copy.cpp (clone, strided copy, copy2d,
// const_set, transfers), and (issue 4) reduce.cpp, sort.cpp, indexing.cpp,
// matmul.cpp, conv.cpp, nn.cpp.
#pragma once

#include <cstddef>
#include <memory>

#include "backend/backend.h"
#include "backend/gpu/gpu_device.h"

namespace wick::gpu {

class GpuStorage final : public BackendStorage {
 public:
  GpuStorage(GpuDevice& dev, size_t n, DType dtype);  // uninitialised
  ~GpuStorage() override;
  GpuStorage(const GpuStorage&) = delete;
  GpuStorage& operator=(const GpuStorage&) = delete;

  DType dtype() const override { return dtype_; }
  size_t elem_count() const override { return n_; }
  BackendDevice& backend_device() const override { return dev_; }
  void copy_to_host(void* dst, size_t offset, size_t count) const override;

  GpuDevice& dev() const { return dev_; }
  void* raw() const { return ptr_; }
  // Address of element `offset` (elements of this storage's dtype).
  void* at(size_t offset) const { return static_cast<char*>(ptr_) + offset * dtype_size(dtype_); }
  static const GpuStorage& of(const BackendStorage& s) { return static_cast<const GpuStorage&>(s); }
  static GpuStorage& of(BackendStorage& s) { return static_cast<GpuStorage&>(s); }

  StoragePtr affine(const Layout& l, double mul, double add) const override;
  StoragePtr powf(const Layout& l, double e) const override;
  StoragePtr elu(const Layout& l, double alpha) const override;
  StoragePtr unary(UnaryOp op, const Layout& l) const override;
  StoragePtr binary(BinaryOp op, const BackendStorage& rhs, const Layout& lhs_l,
                    const Layout& rhs_l) const override;
  StoragePtr cmp(CmpOp op, const BackendStorage& rhs, const Layout& lhs_l,
                 const Layout& rhs_l) const override;
  StoragePtr where_cond(const Layout& l, const BackendStorage& t, const Layout& t_l, const BackendStorage& f,
                        const Layout& f_l) const override;
  StoragePtr to_dtype(const Layout& l, DType dtype) const override;

  StoragePtr try_clone(const Layout& l) const override;
  void copy_strided_src(BackendStorage& dst, size_t dst_offset, const Layout& src_l) const override;
  void copy2d(BackendStorage& dst, size_t d1, size_t d2, size_t src_stride1, size_t dst_stride1,
              size_t src_offset, size_t dst_offset) const override;
  void const_set(Scalar v, const Layout& l) override;

  StoragePtr reduce(ReduceOp op, const Layout& l, const std::vector<size_t>& dims) const override;
  StoragePtr cumsum(const Layout& l, size_t dim) const override;
  StoragePtr argsort(const Layout& l, bool ascending) const override;
  StoragePtr index_select(const BackendStorage& ids, const Layout& l, const Layout& ids_l,
                          size_t dim) const override;
  StoragePtr gather(const Layout& l, const BackendStorage& ids, const Layout& ids_l,
                    size_t dim) const override;
  void scatter(ScatterMode mode, const Layout& l, const BackendStorage& ids, const Layout& ids_l,
               const BackendStorage& src, const Layout& src_l, size_t dim) override;
  StoragePtr index_add(const Layout& l, const BackendStorage& ids, const Layout& ids_l,
                       const BackendStorage& src, const Layout& src_l, size_t dim) const override;
  StoragePtr matmul(const BackendStorage& rhs, const MatmulDims& d, const Layout& lhs_l,
                    const Layout& rhs_l) const override;
  StoragePtr conv1d(const Layout& l, const BackendStorage& kernel, const Layout& k_l,
                    const Conv1dParams& p) const override;
  StoragePtr conv_transpose1d(const Layout& l, const BackendStorage& kernel, const Layout& k_l,
                              const ConvTranspose1dParams& p) const override;
  StoragePtr conv2d(const Layout& l, const BackendStorage& kernel, const Layout& k_l,
                    const Conv2dParams& p) const override;
  StoragePtr conv_transpose2d(const Layout& l, const BackendStorage& kernel, const Layout& k_l,
                              const ConvTranspose2dParams& p) const override;
  StoragePtr pool2d(PoolOp op, const Layout& l, std::array<size_t, 2> kernel,
                    std::array<size_t, 2> stride) const override;
  StoragePtr upsample_nearest1d(const Layout& l, size_t target_len) const override;
  StoragePtr upsample_nearest2d(const Layout& l, size_t target_h, size_t target_w) const override;
  StoragePtr upsample_bilinear2d(const Layout& l, const BilinearParams& p) const override;
  StoragePtr softmax_last_dim(const Layout& l, bool log) const override;
  StoragePtr rms_norm(const Layout& l, const BackendStorage* alpha, const Layout* alpha_l,
                      float eps) const override;
  StoragePtr layer_norm(const Layout& l, const BackendStorage* alpha, const Layout* alpha_l,
                        const BackendStorage* beta, const Layout* beta_l, float eps) const override;
  StoragePtr rope(RopeKind kind, const Layout& l, const BackendStorage& cos, const Layout& cos_l,
                  const BackendStorage& sin, const Layout& sin_l) const override;

 private:
  GpuDevice& dev_;
  void* ptr_ = nullptr;
  size_t n_ = 0;
  DType dtype_;
};

std::shared_ptr<GpuStorage> gpu_alloc(GpuDevice& dev, size_t n, DType dtype);

// Operand geometry after collapsing: size-1 dims dropped and adjacent dims merged
// where every operand allows it. `contiguous` when every operand is row-major
// dense (the kernels then get a null info pointer).
struct Collapsed {
  std::vector<size_t> dims;
  std::vector<std::vector<size_t>> strides;  // one set per operand
  bool contiguous = true;
  // dims then each stride set: the kernels' `info` array.
  std::vector<size_t> info() const;
};
Collapsed collapse(const std::vector<const Layout*>& layouts);

// 16-byte vectors each thread handles per grid-stride step on the contiguous path
// of the elementwise kernels (kernels/common.cuh: kUnroll).
inline constexpr size_t kVectorsPerThread = 4;

// Strided kernels stage `info` in shared memory once per block, so past a few
// blocks per multiprocessor more blocks only repeat that work. Measured on the
// H200 (bench/results/2026-11-21-h200-gpu-elementwise): broadcast add
// [16384,16384]+[16384] f32 ran at 2.1 TB/s with one 16-byte item per thread and
// 3.6 TB/s with the grid capped at 16 blocks per multiprocessor.
inline constexpr unsigned kStridedBlocksPerSm = 16;
inline unsigned strided_grid(const GpuDevice& dev, size_t items) {
  unsigned cap =
      kStridedBlocksPerSm * unsigned(dev.props().multiprocessors > 0 ? dev.props().multiprocessors : 1);
  unsigned g = dev.grid_for(items);
  return g < cap ? g : cap;
}

// Work items of a contiguous elementwise kernel over n elements whose widest
// operand is `max_elem_bytes` (the kernels move 16 bytes per item).
size_t vector_items(size_t n, size_t max_elem_bytes);

}  // namespace wick::gpu
