// The backend seam: one abstract interface for every device (Candle's
// BackendStorage / BackendDevice), shaped by op family so a new unary op adds a
// row to wick/op_table.h, never a method here.
//
// Contract for implementers:
// - The front end (src/tensor) validates shapes, dtypes, devices, dims and geometry
//   before calling; a backend may assume well-formed arguments. It still checks
//   index *values* (they live in device data): an out-of-range index throws
//   Error(IndexOutOfRange) naming the op (the GPU at the next synchronization).
// - Layouts carry dims, strides in elements and a start offset in elements.
// - Methods returning StoragePtr return new contiguous row-major storage of the
//   output shape (for reduce: the input dims with reduced dims set to 1).
// - Ops marked "contiguous" receive layouts with is_contiguous() true (the front
//   end copies first); the offset may still be non-zero.
// - All storages passed to one call live on the same device as `this`.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "wick/device.h"
#include "wick/dtype.h"
#include "wick/error.h"
#include "wick/layout.h"
#include "wick/ops.h"

namespace wick {

class BackendDevice;
class BackendStorage;
enum class GgmlType : uint32_t;    // wick/quant.h
enum class QMatmulPath : uint8_t;  // wick/quant.h
using StoragePtr = std::shared_ptr<BackendStorage>;
using StoragePair = std::pair<StoragePtr, StoragePtr>;

// A u32 in device memory that work reads when it runs (a position or a length, so that
// one recorded graph serves every value): element `offset` of `storage`; unset when
// storage is null.
struct DeviceU32 {
  const BackendStorage* storage = nullptr;
  size_t offset = 0;
  explicit operator bool() const { return storage != nullptr; }
};

// A row formed on the way into a batch-1 quantized mat-vec (wick/quant.h:
// add_rms_norm_qmatmul, swiglu_qmatmul): rms_norm(x + r) * alpha (alpha null: 1), or
// silu(x) * r. x, r and alpha: k contiguous f32 elements at element offsets of their
// storages.
struct FusedRow {
  enum class Kind : uint8_t { AddRmsNorm, Swiglu } kind = Kind::AddRmsNorm;
  const BackendStorage* x = nullptr;
  size_t x_off = 0;
  const BackendStorage* r = nullptr;
  size_t r_off = 0;
  const BackendStorage* alpha = nullptr;
  size_t alpha_off = 0;
  float eps = 0.f;
};

// The KV-cache half of rope_kv_cache: k (B, T, Hkv, D) and v (B, T, Hkv, Dv) in q's
// dtype, inner stride 1; the caches (B, Hkv, S, D) and (B, Hkv, S, Dv), contiguous, each
// of its own float dtype. Tokens t < T go to cache rows pos + t, or (pos_dev set: GPUs
// only) pos_dev + t, out of range reported at the next synchronization.
struct KvCacheWrite {
  const BackendStorage* k = nullptr;
  const Layout* k_l = nullptr;
  const BackendStorage* v = nullptr;
  const Layout* v_l = nullptr;
  BackendStorage* k_cache = nullptr;
  const Layout* k_cache_l = nullptr;
  BackendStorage* v_cache = nullptr;
  const Layout* v_cache_l = nullptr;
  size_t pos = 0;
  DeviceU32 pos_dev;
};

// The op methods of BackendStorage, one X(return type, name, (parameters),
// qualifier) row each: the seam declares them pure virtual and every backend's
// storage declares its overrides from the same rows (WICK_STORAGE_OVERRIDES).
#define WICK_STORAGE_OPS(X)                                                                                  \
  /* --- elementwise ------------------------------------------------------------------------------------ */ \
  X(StoragePtr, affine, (const Layout& l, double mul, double add), const) /* x*mul+add */                    \
  X(StoragePtr, powf, (const Layout& l, double e), const)                 /* float dtypes */                 \
  X(StoragePtr, elu, (const Layout& l, double alpha), const)              /* float dtypes */                 \
  X(StoragePtr, unary, (UnaryOp op, const Layout& l), const)                                                 \
  /* Both layouts have the output dims (broadcast already expressed by stride 0). */                         \
  X(StoragePtr, binary, (BinaryOp op, const BackendStorage& rhs, const Layout& lhs_l, const Layout& rhs_l),  \
    const)                                                                                                   \
  X(StoragePtr, cmp, (CmpOp op, const BackendStorage& rhs, const Layout& lhs_l, const Layout& rhs_l),        \
    const) /* output u8 */                                                                                   \
  /* `this` is the condition (u8/u32/i32/i64): out = cond != 0 ? t : f. Same dims for all three. */          \
  X(StoragePtr, where_cond,                                                                                  \
    (const Layout& l, const BackendStorage& t, const Layout& t_l, const BackendStorage& f,                   \
     const Layout& f_l),                                                                                     \
    const)                                                                                                   \
  X(StoragePtr, to_dtype, (const Layout& l, DType dtype), const)                                             \
                                                                                                             \
  /* --- fills and copies ------------------------------------------------------------------------------- */ \
  /* Copies the whole allocation (the layout is informational). */                                           \
  X(StoragePtr, try_clone, (const Layout& l), const)                                                         \
  /* Writes the strided view `src_l` of this into `dst` (contiguous) from element dst_offset. */             \
  X(void, copy_strided_src, (BackendStorage & dst, size_t dst_offset, const Layout& src_l), const)           \
  /* for i<d1, j<d2: dst[dst_offset + i*dst_stride1 + j] = src[src_offset + i*src_stride1 + j] */            \
  X(void, copy2d,                                                                                            \
    (BackendStorage & dst, size_t d1, size_t d2, size_t src_stride1, size_t dst_stride1, size_t src_offset,  \
     size_t dst_offset),                                                                                     \
    const)                                                                                                   \
  /* In place: every element of the (possibly strided) view `l` of this = v. */                              \
  X(void, const_set, (Scalar v, const Layout& l), )                                                          \
                                                                                                             \
  /* --- reductions, scans, sort ----------------------------------------------------------------------- */  \
  /* Reduce over `dims` (sorted, unique, non-empty); output keeps rank with those dims = 1.                  \
     ArgMin/ArgMax: output u32, index within the row-major flattening of the reduced dims,                   \
     first index among ties. Min/Max/Arg* never see an empty reduction (front end rejects). */               \
  X(StoragePtr, reduce, (ReduceOp op, const Layout& l, const std::vector<size_t>& dims), const)              \
  X(StoragePtr, cumsum, (const Layout& l, size_t dim), const) /* inclusive */                                \
  /* Last dim, contiguous; output u32 indices; stable (ties keep input order); NaN sorts last. */            \
  X(StoragePtr, argsort, (const Layout& l, bool ascending), const)                                           \
                                                                                                             \
  /* --- indexing (ids u8/u32/i32/i64; the ids dtype's max value = skip) ------------------------------- */  \
  /* ids 1-D: out dim `dim` has len(ids); skipped ids give 0. */                                             \
  X(StoragePtr, index_select, (const BackendStorage& ids, const Layout& l, const Layout& ids_l, size_t dim), \
    const)                                                                                                   \
  /* out shape = ids shape; out[..i..] = this[.., ids[..i..], ..] along dim; skipped ids give 0. */          \
  X(StoragePtr, gather, (const Layout& l, const BackendStorage& ids, const Layout& ids_l, size_t dim),       \
    const)                                                                                                   \
  /* In place on this (layout l contiguous): this[.., ids[p], ..] (=|+=) src[p]; ids shape == src shape. */  \
  X(void, scatter,                                                                                           \
    (ScatterMode mode, const Layout& l, const BackendStorage& ids, const Layout& ids_l,                      \
     const BackendStorage& src, const Layout& src_l, size_t dim), )                                          \
  /* Copy of this with src slices added at positions ids (ids 1-D, len = src.dims[dim]). */                  \
  X(StoragePtr, index_add,                                                                                   \
    (const Layout& l, const BackendStorage& ids, const Layout& ids_l, const BackendStorage& src,             \
     const Layout& src_l, size_t dim),                                                                       \
    const)                                                                                                   \
                                                                                                             \
  /* --- matmul, convolution, resampling -------------------------------------------------------------- */   \
  /* lhs (b.., m, k) x rhs (b.., k, n) -> (b, m, n) contiguous; batch dims may be strided or stride 0. */    \
  X(StoragePtr, matmul,                                                                                      \
    (const BackendStorage& rhs, const MatmulDims& d, const Layout& lhs_l, const Layout& rhs_l), const)       \
  X(StoragePtr, conv1d,                                                                                      \
    (const Layout& l, const BackendStorage& kernel, const Layout& k_l, const Conv1dParams& p), const)        \
  X(StoragePtr, conv_transpose1d,                                                                            \
    (const Layout& l, const BackendStorage& kernel, const Layout& k_l, const ConvTranspose1dParams& p),      \
    const)                                                                                                   \
  X(StoragePtr, conv2d,                                                                                      \
    (const Layout& l, const BackendStorage& kernel, const Layout& k_l, const Conv2dParams& p), const)        \
  X(StoragePtr, conv_transpose2d,                                                                            \
    (const Layout& l, const BackendStorage& kernel, const Layout& k_l, const ConvTranspose2dParams& p),      \
    const)                                                                                                   \
  /* NCHW; kernel/stride [h, w]; no padding; floor output size. */                                           \
  X(StoragePtr, pool2d,                                                                                      \
    (PoolOp op, const Layout& l, std::array<size_t, 2> kernel, std::array<size_t, 2> stride), const)         \
  X(StoragePtr, upsample_nearest1d, (const Layout& l, size_t target_len), const)                             \
  X(StoragePtr, upsample_nearest2d, (const Layout& l, size_t target_h, size_t target_w), const)              \
  X(StoragePtr, upsample_bilinear2d, (const Layout& l, const BilinearParams& p), const)                      \
                                                                                                             \
  /* --- fused nn (contiguous; f16/bf16 accumulate in f32) --------------------------------------------- */  \
  X(StoragePtr, softmax_last_dim, (const Layout& l, bool log), const)                                        \
  /* alpha: 1-D, len = last dim, or null for no scale. */                                                    \
  X(StoragePtr, rms_norm, (const Layout& l, const BackendStorage* alpha, const Layout* alpha_l, float eps),  \
    const)                                                                                                   \
  X(StoragePtr, layer_norm,                                                                                  \
    (const Layout& l, const BackendStorage* alpha, const Layout* alpha_l, const BackendStorage* beta,        \
     const Layout* beta_l, float eps),                                                                       \
    const)                                                                                                   \
  /* cos/sin: (T', D/2) or (B, T', D/2) with T' >= T. */                                                     \
  X(StoragePtr, rope,                                                                                        \
    (RopeKind kind, const Layout& l, const BackendStorage& cos, const Layout& cos_l,                         \
     const BackendStorage& sin, const Layout& sin_l),                                                        \
    const)                                                                                                   \
  /* {this + r, rms_norm(this + r) * alpha}: both contiguous of the same dims; the sum rounded to            \
     this dtype first, the norm of the rounded sum (as add then rms_norm). */                                \
  X(StoragePair, add_rms_norm,                                                                               \
    (const Layout& l, const BackendStorage& r, const Layout& r_l, const BackendStorage* alpha,               \
     const Layout* alpha_l, float eps),                                                                      \
    const)                                                                                                   \
  /* silu(this) * up over identical dims (any strides, as binary); float dtypes. */                          \
  X(StoragePtr, swiglu, (const Layout& l, const BackendStorage& up, const Layout& up_l), const)              \
  /* softmax(scale q k^T [causal mask]) v: this = q (B, H, T, D); k (B, Hkv, S, D) and v (B, Hkv, S, Dv)     \
     any strides, float dtypes of their own (read as q's); output (B, H, T, Dv) in q's dtype. Query i        \
     sits at position S - T + i (causal: sees keys 0 .. S - T + i). Never empty (front end). kv_len: S from  \
     device memory (the first kv_len rows of k and v); only GPUs receive one (the front end reads it for     \
     the CPU). */                                                                                            \
  X(StoragePtr, attention,                                                                                   \
    (const Layout& q_l, const BackendStorage& k, const Layout& k_l, const BackendStorage& v,                 \
     const Layout& v_l, float scale, bool causal, DeviceU32 kv_len),                                         \
    const)                                                                                                   \
  /* this = q (B, T, H, D), inner stride 1: returns rope(q) as (B, H, T, D) and writes rope(k) and v (see    \
     KvCacheWrite) into the caches. kind HalfSplit or Interleaved; cos/sin (T', D/2) contiguous in q's       \
     dtype, row t for token t. Computed in f64, rounded once to each output's dtype. */                      \
  X(StoragePtr, rope_kv_cache,                                                                               \
    (RopeKind kind, const Layout& q_l, const BackendStorage& cos, const Layout& cos_l,                       \
     const BackendStorage& sin, const Layout& sin_l, const KvCacheWrite& w),                                 \
    const)

#define WICK_STORAGE_PURE_VIRTUAL(ret, name, params, qualifier) virtual ret name params qualifier = 0;
#define WICK_STORAGE_OVERRIDE(ret, name, params, qualifier) ret name params qualifier override;
// Inside a storage class: the override declarations of every op method.
#define WICK_STORAGE_OVERRIDES WICK_STORAGE_OPS(WICK_STORAGE_OVERRIDE)

class BackendStorage {
 public:
  virtual ~BackendStorage() = default;

  virtual DType dtype() const = 0;
  virtual size_t elem_count() const = 0;  // elements allocated
  virtual BackendDevice& backend_device() const = 0;
  // Copies `count` elements starting at element `offset` to host memory (synchronizes).
  virtual void copy_to_host(void* dst, size_t offset, size_t count) const = 0;
  // The address of element 0 (a device pointer on a GPU); null when nothing is allocated.
  virtual void* base_ptr() const = 0;

  WICK_STORAGE_OPS(WICK_STORAGE_PURE_VIRTUAL)
};

// Work recorded on a device (BackendDevice::begin_capture), queued again by replay().
class DeviceGraph {
 public:
  virtual ~DeviceGraph() = default;
  virtual void replay() = 0;
};

class BackendDevice {
 public:
  virtual ~BackendDevice() = default;
  virtual Device device() const = 0;
  virtual std::string name() const = 0;
  virtual StoragePtr alloc(size_t n, DType dtype) = 0;  // uninitialised
  virtual StoragePtr zeros(size_t n, DType dtype) = 0;
  virtual StoragePtr from_host(const void* data, size_t n, DType dtype) = 0;
  // Storage over n elements of external memory at ptr (this device's memory, aligned to
  // the element size) without a copy. The caching allocator never sees it: when the
  // storage goes, deleter(ptr) is called if set, after the device's queued work is done.
  virtual StoragePtr wrap(void* ptr, size_t n, DType dtype, std::function<void(void*)> deleter) = 0;
  // Counter-based (Philox-4x32-10) streams: element i of a call draws from counter
  // (i, offset); the same (seed, offset) gives the same numbers on every device.
  virtual StoragePtr rand_uniform(size_t n, DType dtype, double lo, double up, uint64_t seed,
                                  uint64_t offset) = 0;
  virtual StoragePtr rand_normal(size_t n, DType dtype, double mean, double std, uint64_t seed,
                                 uint64_t offset) = 0;
  virtual void synchronize() = 0;
  // The runtime stream this device's work is queued on; null where there is none (the CPU).
  virtual void* native_stream() { return nullptr; }
  virtual DeviceInfo info() const = 0;
  virtual MemoryStats memory_stats() const = 0;

  // --- graphs ------------------------------------------------------------------
  // From begin_capture to end_capture the work the calling thread queues on this device
  // is recorded as a graph instead of run; replay() queues it again, with the same
  // arguments and buffers (change inputs by writing into buffers the work reads). The
  // buffers allocated while recording stay the graph's until it is destroyed, so its
  // replays never write over another tensor. Nothing may wait for the device or read
  // its memory while recording: such a call fails the capture with Error(GpuRuntime),
  // after which abort_capture() drops what was recorded. A device without a queue (the
  // CPU) throws InvalidArgument.
  virtual void begin_capture();
  virtual std::unique_ptr<DeviceGraph> end_capture();
  virtual void abort_capture() {}

  // --- quantized tensors (ggml block types, wick/quant.h) --------------------
  // Packs `rows` rows of k elements of the contiguous f32 view x_l of x into u8
  // storage of type t. The GPU backends have no quantize kernels: QTensor::quantize
  // packs on the CPU and copies the bytes.
  virtual StoragePtr quantize(GgmlType t, const BackendStorage& x, const Layout& x_l, size_t rows, size_t k);
  // `blocks` is u8 storage of packed rows of type t starting at byte `byte_offset`.
  // Returns its n elements dequantized to `out` (a float dtype).
  virtual StoragePtr dequantize(GgmlType t, const BackendStorage& blocks, size_t byte_offset, size_t n,
                                DType out) = 0;
  // x (m, k) contiguous float (layout x_l) times w (n, k) packed rows of type t at
  // byte_offset of `w` -> (m, n) contiguous in x's dtype, through `path` where the
  // backend has more than one.
  virtual StoragePtr qmatmul(GgmlType t, const BackendStorage& w, size_t byte_offset, size_t n, size_t k,
                             const BackendStorage& x, const Layout& x_l, size_t m, QMatmulPath path) = 0;
  // The fused row times w (n, k) packed rows of type t at byte_offset, as MatVec
  // computes it, in one launch: {x + r for AddRmsNorm (else null), (1, n) f32}; {null,
  // null} where the device has no such kernel for these operands (the front end then
  // runs the ops one by one).
  virtual StoragePair qmatvec_fused(const FusedRow& row, GgmlType t, const BackendStorage& w,
                                    size_t byte_offset, size_t n, size_t k) {
    (void)row, (void)t, (void)w, (void)byte_offset, (void)n, (void)k;
    return {};
  }
};

inline void BackendDevice::begin_capture() {
  throw_error(ErrorKind::InvalidArgument, "capture", name() + ": the device has no queue to record");
}
inline std::unique_ptr<DeviceGraph> BackendDevice::end_capture() {
  throw_error(ErrorKind::InvalidArgument, "capture", name() + ": the device has no queue to record");
}

inline StoragePtr BackendDevice::quantize(GgmlType t, const BackendStorage&, const Layout&, size_t, size_t) {
  throw_error(ErrorKind::UnsupportedDType, "quantize",
              name() + ": no quantize kernels for ggml type id " + std::to_string(uint32_t(t)));
}

// What a loadable GPU backend (libwick-cuda.so, libwick-rocm.so) exports through
// `extern "C" wick::GpuBackend* wick_gpu_backend_create(std::string* why_not)`
// (returns null and fills why_not when it cannot serve: no driver, no device, no
// code object for the GPU's target...; when it serves some GPUs and skips others,
// why_not names those skipped and why).
class GpuBackend {
 public:
  virtual ~GpuBackend() = default;
  virtual std::string vendor() const = 0;  // "cuda" or "rocm"
  virtual int device_count() const = 0;
  virtual DeviceInfo info(int ordinal) const = 0;  // device = the backend's own ordinal
  // `global_ordinal` is the wick Device ordinal this backend's device `ordinal` is served as.
  virtual BackendDevice& device(int ordinal, int global_ordinal) = 0;
};

// The process-wide registry (src/backend/registry.cpp).
BackendDevice& backend_device(Device d);  // throws InvalidArgument for an absent device
// The CPU backend (src/backend/cpu).
BackendDevice& cpu_backend_device();

}  // namespace wick
