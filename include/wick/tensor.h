// wick::Tensor: shared storage + layout + dtype + device. Copying a Tensor is
// cheap (shared ownership); views (narrow, transpose, permute, broadcast_as,
// expand, squeeze, unsqueeze, split, reshape of a contiguous tensor) share
// storage. Every op validates its arguments and throws wick::Error before
// touching data.
//
// Mixed dtypes. Binary ops, comparisons and where_cond promote their operands to
// promote_types(lhs, rhs) (NumPy's rules, below) before computing. A C++ number
// next to a tensor is weakly typed, as a Python scalar is in NumPy 2 and PyTorch:
// it takes the tensor's dtype (f16 tensor * 2.0 stays f16; an integer scalar must
// fit an integer tensor's dtype, else InvalidArgument), except that a float scalar
// with an integer tensor gives f32, wick's default float dtype (NumPy gives f64).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "wick/device.h"
#include "wick/dtype.h"
#include "wick/error.h"
#include "wick/layout.h"
#include "wick/ops.h"

namespace wick {

class BackendStorage;

// The dtype two tensors of dtypes a and b promote to: NumPy 2's np.promote_types on
// u8, u32, i32, i64, f16, f32, f64 (an integer with a float gives the smallest float
// holding every value of the integer dtype: u8 + f16 = f16, i32 + f16 = f64, i32 + f32 =
// f64; u32 + i32 = i64). NumPy has no bf16: it is placed by the same rule (as
// ml_dtypes does where it defines a promotion): u8 + bf16 = bf16, other integers + bf16
// = f64, f16 + bf16 = f32 (as in PyTorch and JAX), bf16 + f32 = f32.
DType promote_types(DType a, DType b);

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
  // Wraps shape.elem_count() contiguous row-major elements at `data` without a copy: host
  // memory for the CPU, a device pointer of that device for a GPU (not checked). `data`
  // must be aligned to the element size. The memory must stay valid while any tensor
  // sharing it lives; when the last one goes, `deleter(data)` is called if given (on a
  // GPU after the device's stream has drained; it must not throw). Ops read and write
  // it in place like any storage (fill_, slice_set_, scatter_). When from_blob throws, the
  // deleter is not called: the memory stays the caller's.
  static Tensor from_blob(void* data, const Shape& shape, DType dtype, Device device = Device::cpu(),
                          std::function<void(void*)> deleter = {});
  // The n x m matrix (m = n by default) with ones on the diagonal.
  static Tensor eye(size_t n, DType dtype = DType::F32, Device device = Device::cpu());
  static Tensor eye(size_t n, size_t m, DType dtype = DType::F32, Device device = Device::cpu());
  // `steps` values from start to end inclusive, evenly spaced (PyTorch's linspace: the
  // first half counts up from start, the second down from end, computed in f64).
  static Tensor linspace(double start, double end, size_t steps, DType dtype = DType::F32,
                         Device device = Device::cpu());
  // New contiguous tensors of t's shape, dtype and device.
  static Tensor zeros_like(const Tensor& t);
  static Tensor ones_like(const Tensor& t);
  static Tensor full_like(const Tensor& t, Scalar value);
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
  // The address of the first element (a device pointer on a GPU): elements lie at
  // data_ptr() + sum(index[k] * strides[k]) * dtype_size, strides from layout(). GPU
  // work is asynchronous: synchronize(device()) before other code reads it.
  void* data_ptr() const;
  template <class T>
  T* data_ptr() const {
    check_host_type(dtype_of<T>, "data_ptr");
    return static_cast<T*>(data_ptr());
  }
  // The values, formatted like PyTorch's repr: "tensor([[1.0000, 2.5000],\n        [3.0000,
  // 4.0000]], device=gpu:0, dtype=f16)". The device is named unless the CPU, the dtype
  // unless f32 or i64; past 1000 elements only the first and last 3 of each dim are shown.
  std::string str() const;

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
  // PyTorch's expand: a view with size-1 dims (and new leading dims) broadcast to
  // `sizes`; -1 keeps a dim's size.
  Tensor expand(const std::vector<int64_t>& sizes) const;
  // PyTorch's repeat: tiles the tensor reps[k] times along dim k (reps may be longer
  // than rank: the tensor gains leading dims). A new contiguous tensor.
  Tensor repeat(const std::vector<size_t>& reps) const;
  // Constant padding, one {before, after} pair per dim in dim order (NumPy's pad_width,
  // not PyTorch's last-dim-first list). A new contiguous tensor.
  Tensor pad(const std::vector<std::array<size_t, 2>>& widths, Scalar value = 0) const;
  // Views of consecutive pieces along dim: of `size` each (the last may be shorter), or
  // of the given sizes (they must add up to the dim's size).
  std::vector<Tensor> split(size_t size, int64_t dim = 0) const;
  std::vector<Tensor> split_with_sizes(const std::vector<size_t>& sizes, int64_t dim = 0) const;
  // The lower / upper triangle of the last two dims (row i keeps column j when j - i <= k
  // / j - i >= k); the rest is 0.
  Tensor tril(int64_t k = 0) const;
  Tensor triu(int64_t k = 0) const;
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
  // Elementwise power. Float dtypes: C's pow (a negative base with an integer exponent is
  // defined). Integer dtypes: exact and wrapping; a negative exponent truncates 1 / x^-e
  // toward zero (1 for x = 1, +-1 for x = -1, else 0).
  Tensor pow(const Tensor& exponent) const { return binary(BinaryOp::Pow, exponent); }
  Tensor pow(Scalar exponent) const;
  // min(max(x, lo), hi): NaN stays NaN; lo > hi gives hi everywhere (PyTorch's clamp).
  Tensor clamp(Scalar lo, Scalar hi) const;
  Tensor clamp(const Tensor& lo, const Tensor& hi) const;
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
  // this is the condition (u8/u32/i32/i64); the three broadcast together; the values
  // promote. Scalars are weakly typed; two scalars give i64 when both are integers,
  // else f32.
  Tensor where_cond(const Tensor& on_true, const Tensor& on_false) const;
  Tensor where_cond(const Tensor& on_true, Scalar on_false) const;
  Tensor where_cond(Scalar on_true, const Tensor& on_false) const;
  Tensor where_cond(Scalar on_true, Scalar on_false) const;
  // A copy with `value` (converted to this dtype) where mask (u8/u32/i32/i64, broadcast
  // to this shape) is non-zero.
  Tensor masked_fill(const Tensor& mask, Scalar value) const;
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
  // Over every element (rank 0 results): sum, min, max; argmin / argmax as a u32 index
  // into the row-major flattening.
  Tensor sum() const { return sum_all(); }
  Tensor min() const;
  Tensor max() const;
  Tensor argmin() const;
  Tensor argmax() const;
  // Float dtypes. mean = sum / n, f16/bf16 widened to f32 for the sum and the division
  // and rounded once at the end; an empty reduction gives NaN.
  Tensor mean(const std::vector<int64_t>& dims, bool keepdim = false) const;
  Tensor mean() const;
  // sum((x - mean)^2) / max(0, n - correction), two passes, f32 inside for f16/bf16.
  // correction 1 (the default, PyTorch's) is the unbiased estimate; 0 the population one.
  Tensor var(const std::vector<int64_t>& dims, bool keepdim = false, double correction = 1.0) const;
  Tensor var() const;
  // log(sum(exp(x))) over dims, shifted by the max for range (PyTorch's logsumexp: an
  // infinite max is not subtracted). Float dtypes.
  Tensor log_sum_exp(const std::vector<int64_t>& dims, bool keepdim = false) const;
  // The k largest (or smallest) along dim, sorted, and their u32 indices. Ties keep
  // the lower index first; NaN ranks after every number in both directions (argsort's
  // order), so it is picked only when fewer than k numbers remain.
  std::pair<Tensor, Tensor> topk(size_t k, int64_t dim = -1, bool largest = true) const;
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
  // (.., m, k) x (.., k, n); batch dims broadcast. NumPy's rules for 1-D operands: a
  // 1-D lhs (k) is a row (1, k), a 1-D rhs (k) a column (k, 1), and the added dim is
  // dropped from the result ((m, k) x (k) -> (m); (k) x (k) -> a rank-0 tensor).
  // Both operands have one float dtype (no promotion).
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
  // PyTorch's upsample_bilinear2d: with a scale factor given (and align_corners false),
  // source positions step by 1 / scale instead of in / out, as interpolate(scale_factor=s)
  // does for an output of floor(in * s). Scales must be finite and positive.
  Tensor upsample_bilinear2d(size_t out_h, size_t out_w, bool align_corners = false,
                             std::optional<double> scale_h = std::nullopt,
                             std::optional<double> scale_w = std::nullopt) const;

  // Throws DTypeMismatch unless dtype() == expected (used by to_vector).
  void check_host_type(DType expected, const char* op) const;

 private:
  std::shared_ptr<BackendStorage> storage_;
  Layout layout_;
  DType dtype_ = DType::F32;
  Device device_ = Device::cpu();
};

// Operators: elementwise, broadcasting and promoting like the named ops (a + b is
// a.add(b); a / b is div, which truncates on integer dtypes as C++ does). A number on
// either side is a weak scalar (see the top of this file). The comparisons return u8
// 0/1 tensors (== and != too, as in libtorch: Tensor has no conversion to bool, so
// `if (a == b)` does not compile). There are no compound assignments (+= ...): a Tensor
// is a shared handle, and whether += should write through to other handles and views
// (PyTorch) or rebind this one is a question better not left to a reader's guess.
Tensor operator-(const Tensor& a);
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, Scalar b);
Tensor operator-(const Tensor& a, Scalar b);
Tensor operator*(const Tensor& a, Scalar b);
Tensor operator/(const Tensor& a, Scalar b);
Tensor operator+(Scalar a, const Tensor& b);
Tensor operator-(Scalar a, const Tensor& b);
Tensor operator*(Scalar a, const Tensor& b);
Tensor operator/(Scalar a, const Tensor& b);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, Scalar b);
Tensor operator!=(const Tensor& a, Scalar b);
Tensor operator<(const Tensor& a, Scalar b);
Tensor operator<=(const Tensor& a, Scalar b);
Tensor operator>(const Tensor& a, Scalar b);
Tensor operator>=(const Tensor& a, Scalar b);
Tensor operator==(Scalar a, const Tensor& b);
Tensor operator!=(Scalar a, const Tensor& b);
Tensor operator<(Scalar a, const Tensor& b);
Tensor operator<=(Scalar a, const Tensor& b);
Tensor operator>(Scalar a, const Tensor& b);
Tensor operator>=(Scalar a, const Tensor& b);
// Tensor-scalar arithmetic and comparison by op (what the operators call). A scalar
// compares exactly with an integer tensor: u8 < 300 is all 1, i32 == 1.5 all 0.
Tensor binary(BinaryOp op, const Tensor& a, Scalar b);
Tensor binary(BinaryOp op, Scalar a, const Tensor& b);
Tensor cmp(CmpOp op, const Tensor& a, Scalar b);
// base^exponent elementwise, the scalar base weakly typed.
Tensor pow(Scalar base, const Tensor& exponent);
// Writes t.str().
std::ostream& operator<<(std::ostream& os, const Tensor& t);

// Fused neural-network ops (Candle's candle-nn custom ops), float dtypes.
namespace nn {
Tensor softmax_last_dim(const Tensor& x);
Tensor log_softmax_last_dim(const Tensor& x);
// Along any dim (negative from the end): the last-dim kernel on a transposed copy when
// dim is not the last; the result has x's shape (a transposed view in that case).
Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);
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
// Any layouts (a narrowed cache needs no copy). Where a backend materializes the scores
// (a GPU with many queries), it does so for a range of queries at a time, at most
// kAttentionScoreBlock of them (B * H * rows * S) at once, which bounds the memory the op
// takes; few queries (decoding) run as one fused pass over the keys.
Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, float scale, bool causal);
// The same over the first kv_len keys of k and v (S = kv_len above), kv_len one u32
// element on q's device that must lie in [max(T, 1), S]. A GPU reads it when the work
// runs, so one recorded graph serves every length (a value out of range is raised as
// IndexOutOfRange at the next synchronization); the CPU reads it at once.
Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, float scale, bool causal,
                 const Tensor& kv_len);
inline constexpr size_t kAttentionScoreBlock = size_t(1) << 22;
// silu(gate) * up, elementwise (the gate of a SwiGLU feed-forward): same shape and dtype,
// a float dtype, any layouts.
Tensor swiglu(const Tensor& gate, const Tensor& up);
// The residual add and RMS norm of a pre-norm block in one pass: {x + r, rms_norm(x + r,
// alpha, eps)}, x and r of one shape and float dtype (alpha as rms_norm's). The sum is
// rounded to the dtype before it is normalized, as add then rms_norm do.
std::pair<Tensor, Tensor> add_rms_norm(const Tensor& x, const Tensor& r, const Tensor& alpha, float eps);
// One attention layer's rotary embedding and KV-cache write in one pass. q (B, T, H, D),
// k (B, T, Hkv, D), v (B, T, Hkv, Dv) of one float dtype (any layouts); cos/sin (T', D/2)
// of that dtype with T' >= T, row t for token t; kind HalfSplit (rope's pairs) or
// Interleaved (rope_i's). Returns rope(q) as (B, H, T, D), and writes rope(k) and v,
// converted to the caches' dtypes, to rows [pos, pos + T) of k_cache (B, Hkv, S, D) and
// v_cache (B, Hkv, S, Dv) (contiguous, float dtypes). Rotations are computed in f64 and
// rounded once to each output's dtype.
Tensor rope_kv_cache(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& cos, const Tensor& sin,
                     RopeKind kind, Tensor& k_cache, Tensor& v_cache, size_t pos);
// The same at the position `pos` holds: one u32 element on q's device, read by a GPU
// when the work runs (rows past the caches are raised as IndexOutOfRange at the next
// synchronization, and nothing is written), by the CPU at once.
Tensor rope_kv_cache(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& cos, const Tensor& sin,
                     RopeKind kind, Tensor& k_cache, Tensor& v_cache, const Tensor& pos);
}  // namespace nn

}  // namespace wick
