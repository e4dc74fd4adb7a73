// The CPU reference backend. One storage class; its methods are defined one
// family per file: elementwise.cpp, copy.cpp, reduce.cpp, sort.cpp,
// indexing.cpp, matmul.cpp, conv.cpp, nn.cpp. The device (device.cpp) holds the
// allocation, random and quantized entry points (quantized.cpp).
#pragma once

#include <cstddef>
#include <memory>

#include "backend/backend.h"

namespace wick {

class CpuStorage final : public BackendStorage {
 public:
  CpuStorage(size_t n, DType dtype);  // uninitialised, 64-byte aligned
  ~CpuStorage() override;
  CpuStorage(const CpuStorage&) = delete;
  CpuStorage& operator=(const CpuStorage&) = delete;

  DType dtype() const override { return dtype_; }
  size_t elem_count() const override { return n_; }
  BackendDevice& backend_device() const override;
  void copy_to_host(void* dst, size_t offset, size_t count) const override;

  void* raw() const { return data_; }
  template <class T>
  T* data() const {
    return static_cast<T*>(data_);
  }
  static const CpuStorage& of(const BackendStorage& s) { return static_cast<const CpuStorage&>(s); }
  static CpuStorage& of(BackendStorage& s) { return static_cast<CpuStorage&>(s); }

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
  void* data_ = nullptr;
  size_t capacity_ = 0;  // bytes of the block behind data_ (its size class, device.cpp)
  size_t n_ = 0;
  DType dtype_;
};

class CpuDevice final : public BackendDevice {
 public:
  Device device() const override { return Device::cpu(); }
  std::string name() const override;
  StoragePtr alloc(size_t n, DType dtype) override;
  StoragePtr zeros(size_t n, DType dtype) override;
  StoragePtr from_host(const void* data, size_t n, DType dtype) override;
  StoragePtr rand_uniform(size_t n, DType dtype, double lo, double up, uint64_t seed, uint64_t offset) override;
  StoragePtr rand_normal(size_t n, DType dtype, double mean, double std, uint64_t seed,
                         uint64_t offset) override;
  void synchronize() override {}
  DeviceInfo info() const override;
  MemoryStats memory_stats() const override;

  StoragePtr quantize(GgmlType t, const BackendStorage& x, const Layout& x_l, size_t rows, size_t k) override;
  StoragePtr dequantize(GgmlType t, const BackendStorage& blocks, size_t byte_offset, size_t n,
                        DType out) override;
  StoragePtr qmatmul(GgmlType t, const BackendStorage& w, size_t byte_offset, size_t n, size_t k,
                     const BackendStorage& x, const Layout& x_l, size_t m, QMatmulPath path) override;
};

// A new uninitialised CPU storage of n elements.
std::shared_ptr<CpuStorage> cpu_alloc(size_t n, DType dtype);

}  // namespace wick

namespace wick {
// Philox streams (src/backend/common/philox.h) on the CPU: src/backend/cpu/random.cpp.
StoragePtr cpu_rand_uniform(size_t n, DType dtype, double lo, double up, uint64_t seed, uint64_t offset);
StoragePtr cpu_rand_normal(size_t n, DType dtype, double mean, double std, uint64_t seed, uint64_t offset);
}  // namespace wick
