// QTensor (block-packed bytes + ggml type + logical shape) and the quantized
// matmul's front end: validation, then each device's quantized entry points
// (backend.h). The packed bytes live in a 1-D u8 Tensor, so moving a QTensor
// between devices is a byte copy and a backend receives ordinary storage.
#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "backend/backend.h"
#include "wick/options.h"
#include "wick/quant.h"

namespace wick {

namespace {

size_t checked_nbytes(const char* op, GgmlType type, const Shape& shape) {
  if (!ggml_type_known(uint32_t(type))) {
    throw_error(ErrorKind::InvalidArgument, op, fmt::format("unknown ggml type id {}", uint32_t(type)));
  }
  if (shape.rank() == 0) throw_error(ErrorKind::InvalidArgument, op, "a QTensor needs at least one dim");
  const size_t row = shape[shape.rank() - 1];
  if (row % ggml_block_size(type) != 0) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("{} {}: last dim {} is not a multiple of the block size {}", shape.str(),
                            ggml_type_name(type), row, ggml_block_size(type)));
  }
  return shape.elem_count() / ggml_block_size(type) * ggml_type_size(type);
}

}  // namespace

QTensor QTensor::quantize(const Tensor& src, GgmlType type) {
  if (!src.defined()) throw_error(ErrorKind::InvalidArgument, "quantize", "undefined tensor");
  if (!is_float(src.dtype())) {
    throw_error(ErrorKind::UnsupportedDType, "quantize",
                fmt::format("{} {}: only float tensors can be quantized", src.shape().str(),
                            dtype_name(src.dtype())));
  }
  checked_nbytes("quantize", type, src.shape());
  // Packed on the CPU (the GPU backends have no quantize kernels), then copied.
  const Tensor x = src.to_device(Device::cpu()).to_dtype(DType::F32).contiguous();
  const size_t k = x.dim(-1);
  const size_t rows = k ? x.elem_count() / k : 0;
  StoragePtr s = backend_device(Device::cpu()).quantize(type, *x.storage(), x.layout(), rows, k);
  QTensor q;
  q.type_ = type;
  q.shape_ = src.shape();
  q.bytes_ = Tensor(std::move(s), Layout(Shape{rows * ggml_row_size(type, k)}), DType::U8, Device::cpu())
                 .to_device(src.device());
  return q;
}

QTensor QTensor::from_bytes(GgmlType type, const Shape& shape, const void* data, size_t nbytes,
                            Device device) {
  const size_t expect = checked_nbytes("qtensor_from_bytes", type, shape);
  if (nbytes != expect) {
    throw_error(
        ErrorKind::InvalidArgument, "qtensor_from_bytes",
        fmt::format("{} {} needs {} bytes, got {}", shape.str(), ggml_type_name(type), expect, nbytes));
  }
  QTensor q;
  q.type_ = type;
  q.shape_ = shape;
  q.bytes_ = Tensor::from_bytes(data, nbytes, Shape{nbytes}, DType::U8, device);
  return q;
}

std::vector<uint8_t> QTensor::to_host_bytes() const {
  if (!defined()) return {};
  return bytes_.to_vector<uint8_t>();
}

Tensor QTensor::dequantize(DType dtype) const {
  if (!defined()) throw_error(ErrorKind::InvalidArgument, "dequantize", "undefined QTensor");
  if (!is_float(dtype)) {
    throw_error(ErrorKind::UnsupportedDType, "dequantize",
                fmt::format("{} {}: target dtype {} is not a float dtype", shape_.str(),
                            ggml_type_name(type_), dtype_name(dtype)));
  }
  if (elem_count() == 0) return Tensor::empty(shape_, dtype, device());  // no blocks to read
  StoragePtr s = backend_device(device()).dequantize(type_, *bytes_.storage(), bytes_.layout().start_offset(),
                                                     elem_count(), dtype);
  return Tensor(std::move(s), Layout(shape_), dtype, device());
}

QTensor QTensor::to_device(Device device) const {
  QTensor q = *this;
  if (defined()) q.bytes_ = bytes_.to_device(device);
  return q;
}

std::string QTensor::str() const {
  return fmt::format("QTensor{} {} {}", shape_.str(), ggml_type_name(type_), device().str());
}

Tensor qmatmul(const Tensor& x, const QTensor& w, QMatmulPath path) {
  const char* op = "qmatmul";
  if (!x.defined() || !w.defined()) throw_error(ErrorKind::InvalidArgument, op, "undefined operand");
  if (w.shape().rank() != 2) {
    throw_error(
        ErrorKind::ShapeMismatch, op,
        fmt::format("weight {} {}: expected rank 2 (n, k)", w.shape().str(), ggml_type_name(w.type())));
  }
  if (!is_float(x.dtype())) {
    throw_error(ErrorKind::UnsupportedDType, op,
                fmt::format("x {} {}: expected a float dtype", x.shape().str(), dtype_name(x.dtype())));
  }
  const size_t n = w.shape()[0], k = w.shape()[1];
  if (x.rank() == 0 || x.dim(-1) != k) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("x {} {} weight {} {}: inner dims differ", x.shape().str(), dtype_name(x.dtype()),
                            w.shape().str(), ggml_type_name(w.type())));
  }
  if (x.device() != w.device()) {
    throw_error(ErrorKind::DeviceMismatch, op,
                fmt::format("x on {}, weight on {}", x.device().str(), w.device().str()));
  }
  std::vector<size_t> out_dims = x.dims();
  out_dims.back() = n;
  if (k == 0) return Tensor::zeros(Shape(out_dims), x.dtype(), x.device());  // sums of nothing
  const size_t m = x.elem_count() / k;
  if (m == 0 || n == 0) return Tensor::empty(Shape(out_dims), x.dtype(), x.device());
  if (path == QMatmulPath::Auto) path = options().qmatmul_path;
  const Tensor xc = x.contiguous();
  StoragePtr s = backend_device(x.device())
                     .qmatmul(w.type(), *w.bytes().storage(), w.bytes().layout().start_offset(), n, k,
                              *xc.storage(), xc.layout(), m, path);
  return Tensor(std::move(s), Layout(Shape(out_dims)), x.dtype(), x.device());
}

namespace {

// Whether the device's fused mat-vec may take these rows: each k contiguous f32
// elements on the weight's device (alpha: rank 1 or undefined), a quantized weight of
// rank 2 on the MatVec path, a valid eps.
bool fusable(const Tensor& x, const Tensor& r, const Tensor& alpha, float eps, const QTensor& w,
             QMatmulPath path) {
  if (!x.defined() || !r.defined() || !w.defined() || w.shape().rank() != 2) return false;
  if (path == QMatmulPath::Auto) path = options().qmatmul_path;
  if (path == QMatmulPath::DequantGemm || !ggml_is_quantized(w.type())) return false;
  const size_t k = w.shape()[1];
  const auto row = [&](const Tensor& t) {
    return t.dtype() == DType::F32 && t.device() == w.device() && t.is_contiguous() && t.rank() > 0 &&
           t.dim(-1) == k && t.elem_count() == k;
  };
  return k > 0 && w.shape()[0] > 0 && row(x) && row(r) && x.shape() == r.shape() &&
         (!alpha.defined() || (alpha.rank() == 1 && row(alpha))) && eps >= 0.0f && std::isfinite(eps);
}

StoragePair fused(FusedRow::Kind kind, const Tensor& x, const Tensor& r, const Tensor& alpha, float eps,
                  const QTensor& w) {
  FusedRow row;
  row.kind = kind;
  row.x = x.storage().get();
  row.x_off = x.layout().start_offset();
  row.r = r.storage().get();
  row.r_off = r.layout().start_offset();
  if (alpha.defined()) {
    row.alpha = alpha.storage().get();
    row.alpha_off = alpha.layout().start_offset();
  }
  row.eps = eps;
  return backend_device(w.device())
      .qmatvec_fused(row, w.type(), *w.bytes().storage(), w.bytes().layout().start_offset(), w.shape()[0],
                     w.shape()[1]);
}

// x's dims with the last one n.
Shape out_shape(const Tensor& x, size_t n) {
  std::vector<size_t> d = x.dims();
  d.back() = n;
  return Shape(d);
}

}  // namespace

std::pair<Tensor, Tensor> add_rms_norm_qmatmul(const Tensor& x, const Tensor& r, const Tensor& alpha,
                                               float eps, const QTensor& w, QMatmulPath path) {
  if (fusable(x, r, alpha, eps, w, path)) {
    auto [sum, y] = fused(FusedRow::Kind::AddRmsNorm, x, r, alpha, eps, w);
    if (y) {
      return {Tensor(std::move(sum), Layout(x.shape()), DType::F32, x.device()),
              Tensor(std::move(y), Layout(out_shape(x, w.shape()[0])), DType::F32, x.device())};
    }
  }
  auto [sum, h] = nn::add_rms_norm(x, r, alpha, eps);
  return {sum, qmatmul(h, w, path)};
}

Tensor swiglu_qmatmul(const Tensor& gate, const Tensor& up, const QTensor& w, QMatmulPath path) {
  if (fusable(gate, up, Tensor(), 0.0f, w, path)) {
    auto y = fused(FusedRow::Kind::Swiglu, gate, up, Tensor(), 0.0f, w).second;
    if (y) return Tensor(std::move(y), Layout(out_shape(gate, w.shape()[0])), DType::F32, gate.device());
  }
  return qmatmul(nn::swiglu(gate, up), w, path);
}

}  // namespace wick
