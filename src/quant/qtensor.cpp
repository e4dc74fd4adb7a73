// QTensor (block-packed bytes + ggml type + logical shape) and the CPU quantized
// matmul. The packed bytes live in a 1-D u8 Tensor, so moving a QTensor between
// devices is a byte copy and GPU code receives ordinary device storage.
#include <fmt/format.h>

#include <vector>

#include "backend/cpu/cpu_storage.h"
#include "backend/cpu/strided.h"
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

// Host pointer to the packed bytes when they live on the CPU, else nullptr.
const uint8_t* cpu_bytes(const Tensor& bytes) {
  if (!bytes.device().is_cpu()) return nullptr;
  return CpuStorage::of(*bytes.storage()).data<uint8_t>() + bytes.layout().start_offset();
}

// The elements of a float tensor, row-major, as f32 on the host.
std::vector<float> as_f32(const Tensor& t) {
  return t.dtype() == DType::F32 ? t.to_vector<float>() : t.to_dtype(DType::F32).to_vector<float>();
}

}  // namespace

QTensor QTensor::quantize(const Tensor& src, GgmlType type) {
  if (!src.defined()) throw_error(ErrorKind::InvalidArgument, "quantize", "undefined tensor");
  if (!is_float(src.dtype())) {
    throw_error(ErrorKind::UnsupportedDType, "quantize",
                fmt::format("{} {}: only float tensors can be quantized", src.shape().str(),
                            dtype_name(src.dtype())));
  }
  const size_t nbytes = checked_nbytes("quantize", type, src.shape());
  const std::vector<float> x = as_f32(src);
  std::vector<uint8_t> out(nbytes);
  const size_t k = src.shape()[src.rank() - 1];
  const size_t rows = k ? x.size() / k : 0;
  const size_t row_bytes = ggml_row_size(type, k);
  cpu::parallel_for(rows, 16, [&](size_t b, size_t e) {
    for (size_t r = b; r < e; ++r) quant::quantize_row(type, x.data() + r * k, out.data() + r * row_bytes, k);
  });
  QTensor q;
  q.type_ = type;
  q.shape_ = src.shape();
  q.bytes_ = Tensor::from_bytes(out.data(), out.size(), Shape{out.size()}, DType::U8, src.device());
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
  const uint8_t* src = cpu_bytes(bytes_);
  if (!src) {  // a GPU: its QUANTIZED kernels (backend.h)
    StoragePtr s = backend_device(device()).dequantize(type_, *bytes_.storage(), bytes_.layout().start_offset(),
                                                       elem_count(), dtype);
    return Tensor(std::move(s), Layout(shape_), dtype, device());
  }
  std::vector<float> y(elem_count());
  const size_t k = shape_[shape_.rank() - 1];
  const size_t rows = k ? y.size() / k : 0;
  const size_t row_bytes = ggml_row_size(type_, k);
  cpu::parallel_for(rows, 16, [&](size_t b, size_t e) {
    for (size_t r = b; r < e; ++r) quant::dequantize_row(type_, src + r * row_bytes, y.data() + r * k, k);
  });
  Tensor t = Tensor::from_vector(y, shape_, device());
  return dtype == DType::F32 ? t : t.to_dtype(dtype);
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
  const size_t m = k ? x.elem_count() / k : 0;
  if (!x.device().is_cpu()) {  // a GPU: its QUANTIZED kernels (backend.h)
    const Tensor xc = x.contiguous();
    StoragePtr s = backend_device(x.device())
                       .qmatmul(w.type(), *w.bytes().storage(), w.bytes().layout().start_offset(), n, k,
                                *xc.storage(), xc.layout(), m, path);
    return Tensor(std::move(s), Layout(Shape(out_dims)), x.dtype(), x.device());
  }
  const std::vector<float> xs = as_f32(x);
  const GgmlType at = ggml_vec_dot_type(w.type());
  const size_t act_row = ggml_row_size(at, k), w_row = ggml_row_size(w.type(), k);
  std::vector<uint8_t> act(m * act_row);
  cpu::parallel_for(m, 4, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) quant::quantize_row(at, xs.data() + i * k, act.data() + i * act_row, k);
  });
  const uint8_t* wb = cpu_bytes(w.bytes());
  std::vector<float> out(m * n);
  // Threads split the weight rows; each weight row is unpacked once per block and
  // dotted with every activation row (m rows of k bytes stay in cache).
  cpu::parallel_for(n, 8, [&](size_t b, size_t e) {
    std::vector<float> col(m);
    for (size_t j = b; j < e; ++j) {
      quant::vec_dot_rows(w.type(), k, wb + j * w_row, act.data(), m, col.data());
      for (size_t i = 0; i < m; ++i) out[i * n + j] = col[i];
    }
  });
  Tensor t = Tensor::from_vector(out, Shape(out_dims), x.device());
  return x.dtype() == DType::F32 ? t : t.to_dtype(x.dtype());
}

}  // namespace wick
