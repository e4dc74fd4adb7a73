// Entry point of the SORT family: argsort of the last dim (kernels/sort.cu).
// A row of up to plan::sort::kLocal (4096) elements is sorted in one launch, in
// shared memory: with 32-bit keys and rows padded to at least plan::sort::reg_min
// (a block of one wave) by argsort_reg (kRegItems pairs per thread in registers), otherwise by
// argsort_local. Longer rows go through a global-memory bitonic merge
// (log2(P)^2 / 2 step launches at most, P the row length rounded up to a power
// of two) with shared-memory passes for the steps that stay inside a
// kLocal-element chunk.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "backend/gpu/gpu_ops.h"

namespace wick::gpu {

StoragePtr GpuStorage::argsort(const Layout& l, bool ascending) const {
  const size_t total = l.elem_count();
  auto out = gpu_alloc(dev_, total, DType::U32);
  if (total == 0) return out;
  size_t n = l.rank() ? l.dims().back() : 1, rows = total / n;
  size_t P = 1;
  while (P < n) P <<= 1;
  using plan::sort::kLocal, plan::sort::kRegItems;
  const unsigned wave = wave_size(dev_);
  size_t L = std::min(P, kLocal);
  const size_t ksize = dtype_size(dtype_) == 8 ? 8 : 4;
  const size_t shmem = L * (ksize + 4);
  const unsigned threads = plan::sort::local_threads(wave, L);
  size_t asc = ascending ? 1 : 0;
  const void* x = at(l.start_offset());
  if (ksize == 4 && P >= plan::sort::reg_min(wave) && P <= kLocal) {
    size_t log_p = 0;
    while ((size_t(1) << log_p) < P) ++log_p;
    void* o = out->raw();
    void* args[] = {&rows, &n, &log_p, &asc, &x, &o};
    static const DTypeKernels reg(Module::Sort, "argsort_reg");
    dev_.launch(reg[dtype_], dim3(unsigned(std::min<size_t>(rows, size_t(1) << 20))),
                dim3(unsigned(P / kRegItems)), args, (P + P / kRegItems) * sizeof(uint64_t));
    return out;
  }
  static const DTypeKernels locals(Module::Sort, "argsort_local"), inits(Module::Sort, "argsort_init");
  static const Kernel step64(Module::Sort, "argsort_step_k64"), step32(Module::Sort, "argsort_step_k32"),
      finish(Module::Sort, "argsort_finish");
  const Kernel& local = locals[dtype_];
  if (P == L) {
    void* keys = nullptr;
    void* idx = nullptr;
    void* o = out->raw();
    size_t k_start = 2, k_end = P;
    void* args[] = {&rows, &n, &P, &L, &k_start, &k_end, &asc, &x, &keys, &idx, &o};
    dev_.launch(local, dim3(unsigned(std::min<size_t>(rows, size_t(1) << 20))), dim3(threads), args, shmem);
    return out;
  }
  DeviceBuffer keys_buf(dev_, rows * P * ksize), idx_buf(dev_, rows * P * 4);
  void* keys = keys_buf.get();
  void* idx = idx_buf.get();
  {
    void* args[] = {&rows, &n, &P, &asc, &x, &keys, &idx};
    dev_.launch(inits[dtype_], dim3(dev_.grid_for(rows * P)), dim3(dev_.block_size()), args);
  }
  const void* no_x = nullptr;
  void* no_out = nullptr;
  const unsigned local_grid = unsigned(std::min<size_t>(rows * (P / L), size_t(1) << 20));
  auto run_local = [&](size_t k_start, size_t k_end) {
    void* args[] = {&rows, &n, &P, &L, &k_start, &k_end, &asc, &no_x, &keys, &idx, &no_out};
    dev_.launch(local, dim3(local_grid), dim3(threads), args, shmem);
  };
  run_local(2, L);
  const Kernel& step = ksize == 8 ? step64 : step32;
  for (size_t k = 2 * L; k <= P; k <<= 1) {
    for (size_t j = k / 2; j >= L; j >>= 1) {
      void* args[] = {&rows, &P, &k, &j, &keys, &idx};
      dev_.launch(step, dim3(dev_.grid_for(rows * P / 2)), dim3(dev_.block_size()), args);
    }
    run_local(k, k);
  }
  void* o = out->raw();
  void* args[] = {&rows, &n, &P, &idx, &o};
  dev_.launch(finish, dim3(dev_.grid_for(total)), dim3(dev_.block_size()), args);
  return out;
}

}  // namespace wick::gpu
