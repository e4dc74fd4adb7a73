// Quantized tensors with ggml's block types. A quantized weight is not a DType:
// it is a QTensor, a block-packed byte buffer with a GgmlType and a logical shape
// (row-major, last dim = a row; a row never splits a block). The numeric ids are
// ggml's (`enum ggml_type`), so GGUF type fields convert by a cast.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "wick/tensor.h"

namespace wick {

enum class GgmlType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  BF16 = 30,
};

// Every type wick implements, in id order.
inline constexpr GgmlType kAllGgmlTypes[] = {GgmlType::F32,  GgmlType::F16,  GgmlType::Q4_0, GgmlType::Q4_1,
                                             GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::Q8_1,
                                             GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K,
                                             GgmlType::Q6_K, GgmlType::Q8_K, GgmlType::BF16};

// True when `id` names one of the types above.
bool ggml_type_known(uint32_t id);
// "q4_0", "q4_K" style names as ggml prints them ("f32", "bf16", "q4_K").
std::string_view ggml_type_name(GgmlType t);
// Case-insensitive parse of a type name ("q4_k", "Q8_0", "f16"); throws InvalidArgument.
GgmlType parse_ggml_type(std::string_view name);
// Elements per block (1 for F32/F16/BF16, 32 or 256 otherwise).
size_t ggml_block_size(GgmlType t);
// Bytes per block.
size_t ggml_type_size(GgmlType t);
// Bytes of a row of n elements; throws InvalidArgument unless n is a multiple of the block size.
size_t ggml_row_size(GgmlType t, size_t n);
// Throws InvalidArgument naming `op` unless n is a multiple of t's block size.
void check_ggml_row(GgmlType t, size_t n, const char* op);
// True for the block-quantized types (everything but F32, F16, BF16).
bool ggml_is_quantized(GgmlType t);
// The activation type a weight of type t is dotted against on the CPU (ggml's
// vec_dot_type): Q8_0 for Q4_0/Q5_0/Q8_0, Q8_1 for Q4_1/Q5_1/Q8_1, Q8_K for the
// K-quants, the type itself for F32/F16/BF16.
GgmlType ggml_vec_dot_type(GgmlType t);

namespace quant {
// Raw rows. n is the element count, a multiple of ggml_block_size(t) (InvalidArgument otherwise).
// quantize_row uses ggml's reference quantizers (quantize_row_*_ref): the 32-element
// types are bit-identical to ggml; the K-quants follow the same reference method.
void quantize_row(GgmlType t, const float* x, void* y, size_t n);
void dequantize_row(GgmlType t, const void* x, float* y, size_t n);
// Dot product of a row of type t with a row of ggml_vec_dot_type(t), n elements.
float vec_dot(GgmlType t, size_t n, const void* w, const void* act);
// One weight row against n_acts activation rows stored back to back (each
// ggml_row_size(ggml_vec_dot_type(t), n) bytes): out[r] = vec_dot(t, n, w, act_r),
// bit for bit, with each weight block unpacked once for all rows.
void vec_dot_rows(GgmlType t, size_t n, const void* w, const void* acts, size_t n_acts, float* out);
}  // namespace quant

class QTensor {
 public:
  QTensor() = default;
  // Quantizes a float tensor (f16/bf16/f32/f64, any layout); the last dim must be a
  // multiple of the block size. The result lives on src's device.
  static QTensor quantize(const Tensor& src, GgmlType type);
  // Wraps `nbytes` of already-packed blocks of `shape` (copied); nbytes must match.
  static QTensor from_bytes(GgmlType type, const Shape& shape, const void* data, size_t nbytes,
                            Device device = Device::cpu());

  bool defined() const { return bytes_.defined(); }
  GgmlType type() const { return type_; }
  const Shape& shape() const { return shape_; }
  Device device() const { return bytes_.device(); }
  size_t elem_count() const { return shape_.elem_count(); }
  size_t nbytes() const { return bytes_.elem_count(); }
  // The packed blocks as a 1-D u8 tensor on device() (shared, not copied).
  const Tensor& bytes() const { return bytes_; }
  // A host copy of the packed blocks.
  std::vector<uint8_t> to_host_bytes() const;
  // Dequantized values of shape() on device() (on a GPU by its QUANTIZED kernels).
  Tensor dequantize(DType dtype = DType::F32) const;
  QTensor to_device(Device device) const;
  std::string str() const;  // "QTensor[4096,4096] q4_K cpu"

 private:
  GgmlType type_ = GgmlType::F32;
  Shape shape_;
  Tensor bytes_;
};

// How qmatmul computes. MatVec quantizes x to the weight's activation type and takes
// int8 dot products (ggml's way: fast, with the rounding of x as its error);
// DequantGemm dequantizes the weight and multiplies x as it is (the reference path:
// f32 on the CPU, x's dtype through the GPU's GEMM). Auto takes options().qmatmul_path,
// and where that is Auto too: on a GPU MatVec for at most kQMatVecMaxBatch rows of x,
// else DequantGemm where the weights are quantized, with f32 x and the weight
// multiplied as bf16 (f32 accumulation; x rounded to 8 mantissa bits per element:
// finer than MatVec's Q8_1 rounding against a block's largest element); on the CPU MatVec
// (weights of type F32/F16/BF16 always take DequantGemm on a GPU).
enum class QMatmulPath : uint8_t { Auto, MatVec, DequantGemm };
inline constexpr size_t kQMatVecMaxBatch = 8;

// x (..., k) float times w (n, k) quantized -> (..., n), in x's dtype, by `path`. On
// the CPU MatVec quantizes the rows of x to ggml_vec_dot_type(w.type()) and dots them
// block by block, threaded over output rows; on a GPU: the QUANTIZED module.
Tensor qmatmul(const Tensor& x, const QTensor& w, QMatmulPath path = QMatmulPath::Auto);

// qmatmul of a row formed on the way in, one launch on a GPU where one row of f32 x
// meets a weight the batch-1 mat-vec takes (MatVec's result), else the ops one by one
// (so every shape, dtype and device nn::add_rms_norm / nn::swiglu and qmatmul take):
//   add_rms_norm_qmatmul: {x + r, qmatmul(rms_norm(x + r) * alpha, w)}, nn::add_rms_norm's
//       sum and the product of its normed output;
//   swiglu_qmatmul: qmatmul(nn::swiglu(gate, up), w).
std::pair<Tensor, Tensor> add_rms_norm_qmatmul(const Tensor& x, const Tensor& r, const Tensor& alpha,
                                               float eps, const QTensor& w,
                                               QMatmulPath path = QMatmulPath::Auto);
Tensor swiglu_qmatmul(const Tensor& gate, const Tensor& up, const QTensor& w,
                      QMatmulPath path = QMatmulPath::Auto);

}  // namespace wick
