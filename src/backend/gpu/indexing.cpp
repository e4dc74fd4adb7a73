// Entry points of the INDEXING family (kernels/indexing.cu): index_select,
// gather, scatter (set / add, in place), index_add; and the device's index-error
// record. Value operands are staged contiguous; each op then sees [left, dim,
// right] blocks as the CPU backend does.
//
// Bad ids: kernels never read or write out of bounds for them and report the
// first one in an IndexErrorRecord in mapped host memory. The host checks it
// whenever the stream synchronizes (GpuDevice::synchronize, copy_to_host) and
// throws Error(IndexOutOfRange) naming the op: the error surfaces at the next
// synchronization, the context stays usable, and the fast path costs no sync.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "backend/common/operand_views.h"
#include "backend/gpu/gpu_ops.h"
#include "backend/gpu/index_error.h"

namespace wick::gpu {

namespace {

constexpr std::array<std::string_view, kNumIndexOps> kIndexOpNames = {
    "index_select", "gather", "scatter", "scatter_add", "index_add", "rope_kv_cache", "attention"};

// Kernels "{op}_{ids dtype}_{dtype}".
const DTypePairKernels kIsrKernels(Module::Indexing, "isr"), kIsKernels(Module::Indexing, "is"),
    kGatherKernels(Module::Indexing, "gather"), kScatterKernels(Module::Indexing, "scatter"),
    kScatterAddKernels(Module::Indexing, "scatter_add"), kIndexAddKernels(Module::Indexing, "index_add");

}  // namespace

void* GpuDevice::index_error_record() {
  std::lock_guard<std::mutex> lock(lazy_mu_);
  if (!index_error_dev_) {
    set_device(local_);
    void* host = nullptr;
    WICK_GPU_CHECK(gpuHostAllocMapped(&host, sizeof(IndexErrorRecord)));
    std::memset(host, 0, sizeof(IndexErrorRecord));
    void* dev = nullptr;
    WICK_GPU_CHECK(gpuHostGetDevicePointer(&dev, host, 0));
    index_error_host_ = host;
    index_error_dev_ = dev;
  }
  return index_error_dev_;
}

void GpuDevice::check_index_error() {
  auto* rec = static_cast<volatile IndexErrorRecord*>(index_error_host_);
  if (!rec || rec->flag == 0) return;
  const uint32_t op = rec->op;
  const int64_t index = rec->index;
  const uint64_t size = rec->dim_size, dim = rec->dim;
  rec->op = 0;
  rec->flag = 0;
  throw_error(ErrorKind::IndexOutOfRange,
              std::string(op < kNumIndexOps ? kIndexOpNames[op] : "indexing").c_str(),
              fmt::format("index {} out of range for dim {} of size {} (found on the GPU at synchronization)",
                          index, dim, size));
}

StoragePtr GpuStorage::index_select(const BackendStorage& ids_s, const Layout& l, const Layout& ids_l,
                                    size_t dim) const {
  size_t src_dim = l.dims()[dim];
  Blocks bl = blocks_of(l.dims(), dim);
  size_t n_ids = ids_l.elem_count();
  auto out = gpu_alloc(dev_, bl.left * n_ids * bl.right, dtype_);
  if (out->elem_count() == 0) return out;
  std::shared_ptr<GpuStorage> keep;
  const void* src = contiguous_data(*this, l, keep);
  const GpuStorage& ids = of(ids_s);
  const void* idp = ids.at(ids_l.start_offset());
  size_t ids_stride = ids_l.rank() ? ids_l.strides()[0] : 1;
  void* o = out->raw();
  void* err = dev_.index_error_record();
  size_t left = bl.left, right = bl.right;
  void* args[] = {&left, &src_dim, &n_ids, &right, &idp, &ids_stride, &src, &o, &err, &dim};
  const size_t v = vector_lanes(dtype_size(dtype_));
  const size_t items = right % v == 0 ? out->elem_count() / v : out->elem_count();
  const size_t row_items = right % v == 0 ? right / v : right, rows = bl.left * n_ids;
  const size_t block = dev_.block_size();
  // Rows of at least a block of items: a 2-D grid (rows x row stretches of
  // kRowItemsPerThread items per thread), the id read once per row and no division
  // per item (faster than one thread per item on the H200: docs/PERFORMANCE.md);
  // shorter rows: one thread per item.
  if (row_items >= block) {
    const size_t stretch = size_t(plan::indexing::kRowItemsPerThread) * block;
    const size_t gx = std::min<size_t>((row_items + stretch - 1) / stretch, 65535);
    const size_t gy = std::min<size_t>(rows, 65535);
    dev_.launch(kIsrKernels(ids.dtype(), dtype_), dim3(unsigned(gx), unsigned(gy)), dim3(unsigned(block)),
                args);
    return out;
  }
  dev_.launch(kIsKernels(ids.dtype(), dtype_), dim3(dev_.grid_for(items)), dim3(dev_.block_size()), args);
  return out;
}

StoragePtr GpuStorage::gather(const Layout& l, const BackendStorage& ids_s, const Layout& ids_l,
                              size_t dim) const {
  size_t src_dim = l.dims()[dim];
  Blocks bl = blocks_of(l.dims(), dim);
  size_t n = ids_l.elem_count(), ids_dim = ids_l.dims()[dim];
  auto out = gpu_alloc(dev_, n, dtype_);
  if (n == 0) return out;
  std::shared_ptr<GpuStorage> keep, keep_ids;
  const void* src = contiguous_data(*this, l, keep);
  const GpuStorage& ids = of(ids_s);
  const void* idp = contiguous_data(ids, ids_l, keep_ids);
  void* o = out->raw();
  void* err = dev_.index_error_record();
  size_t right = bl.right;
  void* args[] = {&n, &src_dim, &ids_dim, &right, &idp, &src, &o, &err, &dim};
  dev_.launch(kGatherKernels(ids.dtype(), dtype_), dim3(dev_.grid_for(n)), dim3(dev_.block_size()), args);
  return out;
}

void GpuStorage::scatter(ScatterMode mode, const Layout& l, const BackendStorage& ids_s, const Layout& ids_l,
                         const BackendStorage& src_s, const Layout& src_l, size_t dim) {
  if (ids_l.elem_count() == 0) return;
  size_t dst_dim = l.dims()[dim], src_dim = src_l.dims()[dim];
  Blocks bl = blocks_of(l.dims(), dim);
  std::shared_ptr<GpuStorage> keep_ids, keep_src;
  const GpuStorage& ids = of(ids_s);
  const void* idp = contiguous_data(ids, ids_l, keep_ids);
  const void* src = contiguous_data(of(src_s), src_l, keep_src);
  void* d = at(l.start_offset());
  void* err = dev_.index_error_record();
  size_t left = bl.left, right = bl.right;
  void* args[] = {&left, &dst_dim, &src_dim, &right, &idp, &src, &d, &err, &dim};
  dev_.launch((mode == ScatterMode::Set ? kScatterKernels : kScatterAddKernels)(ids.dtype(), dtype_),
              dim3(dev_.grid_for(left * right)), dim3(dev_.block_size()), args);
}

StoragePtr GpuStorage::index_add(const Layout& l, const BackendStorage& ids_s, const Layout& ids_l,
                                 const BackendStorage& src_s, const Layout& src_l, size_t dim) const {
  size_t dst_dim = l.dims()[dim];
  auto out = gpu_alloc(dev_, l.elem_count(), dtype_);
  if (out->elem_count() == 0) return out;
  copy_strided_src(*out, 0, l);
  Blocks bl = blocks_of(l.dims(), dim);
  size_t n_ids = ids_l.elem_count();
  if (n_ids == 0 || bl.right == 0) return out;
  std::shared_ptr<GpuStorage> keep_ids, keep_src;
  const GpuStorage& ids = of(ids_s);
  const void* idp = contiguous_data(ids, ids_l, keep_ids);
  const void* src = contiguous_data(of(src_s), src_l, keep_src);
  void* o = out->raw();
  void* err = dev_.index_error_record();
  size_t left = bl.left, right = bl.right;
  void* args[] = {&left, &dst_dim, &n_ids, &right, &idp, &src, &o, &err, &dim};
  dev_.launch(kIndexAddKernels(ids.dtype(), dtype_), dim3(dev_.grid_for(left * right)),
              dim3(dev_.block_size()), args);
  return out;
}

}  // namespace wick::gpu
