// wick::Tensor: shared storage + layout + dtype + device. Copying a Tensor is
// cheap (shared ownership); views (narrow, transpose, permute, broadcast_as,
// squeeze, unsqueeze, reshape of a contiguous tensor) share storage. Every op
// validates its arguments and throws wick::Error before touching data.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "wick/device.h"
#include "wick/dtype.h"
#include "wick/error.h"
#include "wick/layout.h"
#include "wick/ops.h"

namespace wick {

class BackendStorage;

class Tensor {
 public:
  Tensor() = default;
  Tensor(std::shared_ptr<BackendStorage> storage, Layout layout, DType dtype, Device device);

  // --- creation --------------------------------------------------------------
  static Tensor zeros(const Shape& shape, DType dtype = DType::F32, Device device = Device::cpu());
  static Tensor ones(const Shape& shape, DType dtype = DType::F32, Device device = Device::cpu());
  static Tensor full(Scalar value, const Shape& shape, DType dtype = DType::F32,
                     Device device = Device::cpu());
  // [start, end) by step (step may be negative; not zero).
  static Tensor arange(double start, double end, double step = 1.0, DType dtype = DType::F32,
                       Device device = Device::cpu());
  // Uninitialised (contents unspecified).
  static Tensor empty(const Shape& shape, DType dtype = DType::F32, Device device = Device::cpu());
  template <class T>
  static Tensor from_vector(const std::vector<T>& data, const Shape& shape, Device device = Device::cpu()) {
    return from_bytes(data.data(), data.size(), shape, dtype_of<T>, device);
  }
  // `count` elements of `dtype` at `data`; count must equal shape.elem_count().
  static Tensor from_bytes(const void* data, size_t count, const Shape& shape, DType dtype,
                           Device device = Device::cpu());
  // Uniform in [lo, hi) / normal(mean, std), float dtypes. Seeded per device with
  // manual_seed; successive calls advance a counter. Same seed, same numbers on every device.
  static Tensor rand(const Shape& shape, DType dtype = DType::F32, Device device = Device::cpu(),
                     double lo = 0.0, double hi = 1.0);
  static Tensor randn(const Shape& shape, DType dtype = DType::F32, Device device = Device::cpu(),
                      double mean = 0.0, double std = 1.0);
  static void manual_seed(uint64_t seed, Device device = Device::cpu());

  // Host values out, in row-major order. T must match dtype() (DTypeMismatch otherwise).
  template <class T>
  std::vector<T> to_vector() const {
    check_host_type(dtype_of<T>, "to_vector");
    std::vector<T> v(elem_count());
    to_bytes(v.data());
    return v;
  }
  // The elements, row-major, as f64 (any dtype).
  std::vector<double> to_f64_vector() const;
  void to_bytes(void* dst) const;
  // The only element of a one-element tensor, as f64.
  double item() const;
  Tensor to_device(Device device) const;

  // --- properties ------------------------------------------------------------
  bool defined() const { return storage_ != nullptr; }
  Shape shape() const { return layout_.shape(); }
  const std::vector<size_t>& dims() const { return layout_.dims(); }
  size_t rank() const { return layout_.rank(); }
  size_t dim(int64_t d) const;  // size of dim d (negative counts from the end)
  size_t elem_count() const { return layout_.elem_count(); }
  DType dtype() const { return dtype_; }
  Device device() const { return device_; }
  const Layout& layout() const { return layout_; }
  bool is_contiguous() const { return layout_.is_contiguous(); }
  const std::shared_ptr<BackendStorage>& storage() const { return storage_; }
  std::string str() const;  // "Tensor[2,3] f32 cpu"

  // --- views and shape ops ---------------------------------------------------
  Tensor narrow(int64_t dim, size_t start, size_t len) const;
  Tensor transpose(int64_t d0, int64_t d1) const;
  Tensor t() const;  // transpose of the last two dims
  Tensor permute(const std::vector<int64_t>& order) const;
  Tensor broadcast_as(const Shape& shape) const;
  Tensor broadcast_left(const std::vector<size_t>& left_dims) const;
  Tensor squeeze(int64_t dim) const;  // dim must have size 1
  Tensor unsqueeze(int64_t dim) const;
  Tensor reshape(const Shape& shape) const;  // copies only when not contiguous
  Tensor flatten(int64_t start = 0, int64_t end = -1) const;
  Tensor flatten_all() const { return flatten(0, -1); }
  std::vector<Tensor> chunk(size_t n, int64_t dim) const;
  Tensor contiguous() const;  // this when already contiguous, else a copy
  Tensor copy() const;        // always a new contiguous tensor
  static Tensor cat(const std::vector<Tensor>& ts, int64_t dim);
  static Tensor stack(const std::vector<Tensor>& ts, int64_t dim);
  // In place: every element of this view = v (writes through shared storage). A
  // broadcast view (a dim of size > 1 with stride 0) is refused: it repeats elements.
  void fill_(Scalar v);
  // In place: this[dim: start .. start+src.dim(dim)] = src (this must be contiguous; a src
  // sharing this's elements is read as it was before).
  void slice_set_(const Tensor& src, int64_t dim, size_t start);

  // --- elementwise -----------------------------------------------------------
  Tensor affine(double mul, double add) const;
  Tensor powf(double e) const;
  Tensor elu(double alpha) const;
  Tensor unary(UnaryOp op) const;
  Tensor exp() const { return unary(UnaryOp::Exp); }
  Tensor log() const { return unary(UnaryOp::Log); }
  Tensor sin() const { return unary(UnaryOp::Sin); }
  Tensor cos() const { return unary(UnaryOp::Cos); }
  Tensor abs() const { return unary(UnaryOp::Abs); }
  Tensor neg() const { return unary(UnaryOp::Neg); }
  Tensor recip() const { return unary(UnaryOp::Recip); }
  Tensor sqr() const { return unary(UnaryOp::Sqr); }
  Tensor sqrt() const { return unary(UnaryOp::Sqrt); }
  Tensor gelu() const { return unary(UnaryOp::Gelu); }
  Tensor gelu_erf() const { return unary(UnaryOp::GeluErf); }
  Tensor erf() const { return unary(UnaryOp::Erf); }
  Tensor relu() const { return unary(UnaryOp::Relu); }
  Tensor silu() const { return unary(UnaryOp::Silu); }
  Tensor tanh() const { return unary(UnaryOp::Tanh); }
  Tensor floor() const { return unary(UnaryOp::Floor); }
  Tensor ceil() const { return unary(UnaryOp::Ceil); }
  Tensor round() const { return unary(UnaryOp::Round); }
  Tensor sign() const { return unary(UnaryOp::Sign); }
  Tensor sigmoid() const { return unary(UnaryOp::Sigmoid); }

  // Binary ops and comparisons broadcast NumPy-style (broadcast_* are the same ops).
  Tensor binary(BinaryOp op, const Tensor& rhs) const;
  Tensor add(const Tensor& rhs) const { return binary(BinaryOp::Add, rhs); }
  Tensor sub(const Tensor& rhs) const { return binary(BinaryOp::Sub, rhs); }
  Tensor mul(const Tensor& rhs) const { return binary(BinaryOp::Mul, rhs); }
  Tensor div(const Tensor& rhs) const { return binary(BinaryOp::Div, rhs); }
  Tensor maximum(const Tensor& rhs) const { return binary(BinaryOp::Maximum, rhs); }
  Tensor minimum(const Tensor& rhs) const { return binary(BinaryOp::Minimum, rhs); }
  Tensor broadcast_add(const Tensor& rhs) const { return add(rhs); }
  Tensor broadcast_sub(const Tensor& rhs) const { return sub(rhs); }
  Tensor broadcast_mul(const Tensor& rhs) const { return mul(rhs); }
  Tensor broadcast_div(const Tensor& rhs) const { return div(rhs); }
  Tensor cmp(CmpOp op, const Tensor& rhs) const;  // u8 0/1
  Tensor eq(const Tensor& rhs) const { return cmp(CmpOp::Eq, rhs); }
  Tensor ne(const Tensor& rhs) const { return cmp(CmpOp::Ne, rhs); }
  Tensor lt(const Tensor& rhs) const { return cmp(CmpOp::Lt, rhs); }
  Tensor le(const Tensor& rhs) const { return cmp(CmpOp::Le, rhs); }
  Tensor gt(const Tensor& rhs) const { return cmp(CmpOp::Gt, rhs); }
  Tensor ge(const Tensor& rhs) const { return cmp(CmpOp::Ge, rhs); }
  // this is the condition (u8/u32/i32/i64); the three broadcast together.
  Tensor where_cond(const Tensor& on_true, const Tensor& on_false) const;
  Tensor to_dtype(DType dtype) const;

  // --- reductions, scans, sort -----------------------------------------------
  Tensor sum(const std::vector<int64_t>& dims, bool keepdim = false) const;
  Tensor min(const std::vector<int64_t>& dims, bool keepdim = false) const;
  Tensor max(const std::vector<int64_t>& dims, bool keepdim = false) const;
  // u32 index within the row-major flattening of the reduced dims; first among ties.
  Tensor argmin(const std::vector<int64_t>& dims, bool keepdim = false) const;
  Tensor argmax(const std::vector<int64_t>& dims, bool keepdim = false) const;
  Tensor reduce(ReduceOp op, const std::vector<int64_t>& dims, bool keepdim) const;
  Tensor sum_all() const;
  Tensor cumsum(int64_t dim) const;
  Tensor argsort(bool ascending = true) const;                  // last dim, u32, stable
  std::pair<Tensor, Tensor> sort(bool ascending = true) const;  // (values, indices)

  // --- indexing --------------------------------------------------------------
  // ids are u8, u32, i32 or i64. An id equal to its dtype's maximum (255 for u8,
  // 4294967295 for u32, 2^31-1 for i32, 2^63-1 for i64) means "skip", as in Candle,
  // where it marks padding: index_select and gather give 0 for it, scatter,
  // scatter_add and index_add leave the destination as it is, even where a row with
  // that index exists (a u8 id of 255 into 256 rows). Any other id outside [0, size of
  // dim) throws IndexOutOfRange (on a GPU, at the next synchronization).
  // index_select: ids 1-D; the output has len(ids) along dim.
  Tensor index_select(const Tensor& ids, int64_t dim) const;
  // gather: ids has this rank and these dims except at dim; out[..i..] = this[.., ids[..i..], ..].
  Tensor gather(const Tensor& ids, int64_t dim) const;
  // scatter: this[.., ids[p], ..] = src[p] (scatter_add: +=); ids and src have one shape.
  Tensor scatter(const Tensor& ids, const Tensor& src, int64_t dim) const;      // copy, set
  Tensor scatter_add(const Tensor& ids, const Tensor& src, int64_t dim) const;  // copy, add
  // In place (this contiguous); a src or ids sharing this's elements is read as it was before.
  void scatter_(const Tensor& ids, const Tensor& src, int64_t dim);
  void scatter_add_(const Tensor& ids, const Tensor& src, int64_t dim);
  // A copy of this with src's slices added at the positions ids (1-D, len = src.dim(dim)).
  Tensor index_add(const Tensor& ids, const Tensor& src, int64_t dim) const;

  // --- matmul, convolution, resampling -----------------------------------------
  // (.., m, k) x (.., k, n); batch dims broadcast.
  Tensor matmul(const Tensor& rhs) const;
  Tensor conv1d(const Tensor& kernel, size_t padding = 0, size_t stride = 1, size_t dilation = 1,
                size_t groups = 1) const;
  Tensor conv_transpose1d(const Tensor& kernel, size_t padding = 0, size_t output_padding = 0,
                          size_t stride = 1, size_t dilation = 1, size_t groups = 1) const;
  Tensor conv2d(const Tensor& kernel, size_t padding = 0, size_t stride = 1, size_t dilation = 1,
                size_t groups = 1) const;
  Tensor conv_transpose2d(const Tensor& kernel, size_t padding = 0, size_t output_padding = 0,
                          size_t stride = 1, size_t dilation = 1) const;
  Tensor avg_pool2d(std::array<size_t, 2> kernel, std::array<size_t, 2> stride) const;
  Tensor max_pool2d(std::array<size_t, 2> kernel, std::array<size_t, 2> stride) const;
  Tensor upsample_nearest1d(size_t target_len) const;
  Tensor upsample_nearest2d(size_t target_h, size_t target_w) const;
  Tensor upsample_bilinear2d(size_t out_h, size_t out_w, bool align_corners = false) const;

  // Throws DTypeMismatch unless dtype() == expected (used by to_vector).
  void check_host_type(DType expected, const char* op) const;

 private:
  std::shared_ptr<BackendStorage> storage_;
  Layout layout_;
  DType dtype_ = DType::F32;
  Device device_ = Device::cpu();
};

// Fused neural-network ops (Candle's candle-nn custom ops), float dtypes.
namespace nn {
Tensor softmax_last_dim(const Tensor& x);
Tensor log_softmax_last_dim(const Tensor& x);
// alpha: 1-D, len = last dim (an undefined Tensor for no scale).
Tensor rms_norm(const Tensor& x, const Tensor& alpha, float eps);
Tensor layer_norm(const Tensor& x, const Tensor& alpha, const Tensor& beta, float eps);
// x (B,H,T,D) for rope / rope_i, (B,T,H,D) for rope_thd; cos/sin (T',D/2) or (B,T',D/2), T' >= T.
Tensor rope(const Tensor& x, const Tensor& cos, const Tensor& sin);
Tensor rope_i(const Tensor& x, const Tensor& cos, const Tensor& sin);
Tensor rope_thd(const Tensor& x, const Tensor& cos, const Tensor& sin);
// Scaled dot-product attention softmax(scale * q k^T [+ causal mask]) v.
// q (B, H, T, D), k (B, Hkv, S, D), v (B, Hkv, S, Dv), H a multiple of Hkv: query head h
// reads key/value head h / (H / Hkv) (grouped-query attention). k and v may hold another
// float dtype than q (an f16 cache); they are read as q's dtype. causal: query i sits at
// position S - T + i and sees keys 0 .. S - T + i (needs S >= T). Returns (B, H, T, Dv).
// The scores are computed for a range of queries at a time, at most kAttentionScoreBlock
// of them (B * H * rows * S) at once, which bounds the memory the op takes.
Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, float scale, bool causal);
inline constexpr size_t kAttentionScoreBlock = size_t(1) << 19;
}  // namespace nn

}  // namespace wick
