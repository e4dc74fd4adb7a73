// ggml's block types, QTensor and qmatmul (include/wick/quant.h). A type is given as
// a wick.GgmlType or by name ("q4_K", "Q8_0", "f16").
#include "wick/quant.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "common.h"

namespace wick::py {

namespace {

using namespace nb::literals;

GgmlType to_ggml_type(nb::handle h) {
  if (nb::isinstance<GgmlType>(h)) return nb::cast<GgmlType>(h);
  return parse_ggml_type(nb::cast<std::string>(nb::str(h)));
}

QMatmulPath to_path(nb::handle h) {
  if (nb::isinstance<QMatmulPath>(h)) return nb::cast<QMatmulPath>(h);
  const std::string s = nb::cast<std::string>(nb::str(h));
  if (s == "auto") return QMatmulPath::Auto;
  if (s == "matvec") return QMatmulPath::MatVec;
  if (s == "dequant_gemm") return QMatmulPath::DequantGemm;
  fail(ErrorKind::InvalidArgument, "qmatmul", "path '" + s + "' is not auto, matvec or dequant_gemm");
}

}  // namespace

void bind_quant(nb::module_& m) {
  auto gt = nb::enum_<GgmlType>(m, "GgmlType", "ggml's tensor types (ggml's numeric ids)");
  for (GgmlType t : kAllGgmlTypes) gt.value(std::string(ggml_type_name(t)).c_str(), t);
  m.def("ggml_type", &to_ggml_type, "name"_a, "The GgmlType of a name (case-insensitive: 'q4_k', 'Q8_0').");
  m.def(
      "ggml_block_size", [](nb::handle t) { return ggml_block_size(to_ggml_type(t)); }, "type"_a,
      "Elements per block.");
  m.def(
      "ggml_type_size", [](nb::handle t) { return ggml_type_size(to_ggml_type(t)); }, "type"_a,
      "Bytes per block.");
  m.def(
      "ggml_row_size", [](nb::handle t, size_t n) { return ggml_row_size(to_ggml_type(t), n); }, "type"_a,
      "n"_a, "Bytes of a row of n elements.");
  m.def(
      "ggml_is_quantized", [](nb::handle t) { return ggml_is_quantized(to_ggml_type(t)); }, "type"_a);

  nb::class_<QTensor>(
      m, "QTensor",
      "A tensor of ggml blocks (q4_0 ... q8_K, f16, bf16, f32) with a logical shape; rows never "
      "split a block.")
      .def_static(
          "quantize",
          [](const Tensor& src, nb::handle type) {
            GgmlType t = to_ggml_type(type);
            nb::gil_scoped_release unlocked;
            return QTensor::quantize(src, t);
          },
          "src"_a, "type"_a, "Quantizes a float tensor (ggml's reference quantizers) on its device.")
      .def_static(
          "from_bytes",
          [](nb::handle type, nb::handle shape, nb::bytes data, nb::handle device) {
            return QTensor::from_bytes(to_ggml_type(type), Shape(to_shape(shape, "QTensor.from_bytes")),
                                       data.c_str(), data.size(), to_device_or(device, Device::cpu()));
          },
          "type"_a, "shape"_a, "data"_a, "device"_a = nb::none(), "Packed blocks (copied).")
      .def_prop_ro("type", &QTensor::type)
      .def_prop_ro("shape",
                   [](const QTensor& q) {
                     nb::list l;
                     for (size_t d : q.shape().dims()) l.append(d);
                     return nb::tuple(l);
                   })
      .def_prop_ro("device", &QTensor::device)
      .def_prop_ro("nbytes", &QTensor::nbytes)
      .def("numel", &QTensor::elem_count)
      .def_prop_ro("bytes", &QTensor::bytes, "The packed blocks as a 1-D u8 tensor on its device (shared).")
      .def("to_bytes",
           [](const QTensor& q) {
             std::vector<uint8_t> b = q.to_host_bytes();
             return nb::bytes(reinterpret_cast<const char*>(b.data()), b.size());
           })
      .def(
          "dequantize",
          [](const QTensor& q, nb::handle dtype) { return q.dequantize(to_dtype_or(dtype, DType::F32)); },
          "dtype"_a = nb::none())
      .def(
          "to_device", [](const QTensor& q, nb::handle d) { return q.to_device(to_device(d)); }, "device"_a)
      .def("__repr__", &QTensor::str);

  m.def(
      "qmatmul",
      [](const Tensor& x, const QTensor& w, nb::handle path) {
        QMatmulPath p = to_path(path);
        nb::gil_scoped_release unlocked;
        return qmatmul(x, w, p);
      },
      "x"_a, "w"_a, "path"_a = "auto",
      "x (..., k) times w (n, k) quantized -> (..., n) in x's dtype; path: auto, matvec, dequant_gemm.");
  m.def(
      "add_rms_norm_qmatmul",
      [](const Tensor& x, const Tensor& r, const std::optional<Tensor>& alpha, float eps, const QTensor& w,
         nb::handle path) {
        QMatmulPath p = to_path(path);
        nb::gil_scoped_release unlocked;
        return add_rms_norm_qmatmul(x, r, alpha.value_or(Tensor()), eps, w, p);
      },
      "x"_a, "r"_a, "alpha"_a.none(), "eps"_a, "w"_a, "path"_a = "auto",
      "(x + r, qmatmul(rms_norm(x + r) * alpha, w)); one launch on a GPU for one f32 row.");
  m.def(
      "swiglu_qmatmul",
      [](const Tensor& gate, const Tensor& up, const QTensor& w, nb::handle path) {
        QMatmulPath p = to_path(path);
        nb::gil_scoped_release unlocked;
        return swiglu_qmatmul(gate, up, w, p);
      },
      "gate"_a, "up"_a, "w"_a, "path"_a = "auto",
      "qmatmul(silu(gate) * up, w); one launch on a GPU for one f32 row.");
}

}  // namespace wick::py
