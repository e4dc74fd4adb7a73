// Files (include/wick/io.h): GGUF, safetensors, NumPy .npy / .npz. GGUF metadata
// values come out as Python values (int, float, bool, str, list); going in, a Python
// value takes gguf-py's types (bool, int -> i32 or i64 past its range, float -> f32,
// str, list -> array) and a NumPy scalar its own (np.uint32(32) -> u32).
#include "wick/io.h"

#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "common.h"

namespace wick::py {

namespace {

using namespace nb::literals;

nb::object to_python(const GgufValue& v) {
  return std::visit(
      [](const auto& x) -> nb::object {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) {
          return nb::bool_(x);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return nb::str(x.data(), x.size());
        } else if constexpr (std::is_same_v<T, GgufArray>) {
          nb::list l;
          for (size_t i = 0; i < x.size(); ++i) l.append(to_python(x[i]));
          return l;
        } else if constexpr (std::is_floating_point_v<T>) {
          return nb::float_(double(x));
        } else {
          return nb::int_(x);
        }
      },
      v.v);
}

GgufValue from_python(nb::handle h, const std::string& key) {
  if (PyBool_Check(h.ptr())) return GgufValue(h.ptr() == Py_True);
  if (nb::isinstance<nb::str>(h)) return GgufValue(nb::cast<std::string>(h));
  if (PyLong_Check(h.ptr())) {
    int64_t v = nb::cast<int64_t>(h);
    if (v >= INT32_MIN && v <= INT32_MAX) return GgufValue(int32_t(v));
    return GgufValue(v);
  }
  if (PyFloat_Check(h.ptr())) return GgufValue(float(nb::cast<double>(h)));
  if (nb::hasattr(h, "dtype") && nb::hasattr(h, "item") && nb::hasattr(h, "shape") &&
      nb::len(nb::object(h.attr("shape"))) == 0) {
    const std::string dt = nb::cast<std::string>(h.attr("dtype").attr("name"));
    nb::object item = h.attr("item")();
    if (dt == "uint8") return GgufValue(nb::cast<uint8_t>(item));
    if (dt == "int8") return GgufValue(nb::cast<int8_t>(item));
    if (dt == "uint16") return GgufValue(nb::cast<uint16_t>(item));
    if (dt == "int16") return GgufValue(nb::cast<int16_t>(item));
    if (dt == "uint32") return GgufValue(nb::cast<uint32_t>(item));
    if (dt == "int32") return GgufValue(nb::cast<int32_t>(item));
    if (dt == "uint64") return GgufValue(nb::cast<uint64_t>(item));
    if (dt == "int64") return GgufValue(nb::cast<int64_t>(item));
    if (dt == "float32") return GgufValue(nb::cast<float>(item));
    if (dt == "float64") return GgufValue(nb::cast<double>(item));
    if (dt == "bool") return GgufValue(nb::cast<bool>(item));
  }
  if (nb::isinstance<nb::list>(h) || nb::isinstance<nb::tuple>(h)) {
    std::vector<GgufValue> items;
    for (nb::handle x : nb::iter(h)) items.push_back(from_python(x, key));
    const GgufType elem = items.empty() ? GgufType::U8 : items.front().type();
    for (const GgufValue& x : items) {
      if (x.type() != elem) {
        fail(ErrorKind::InvalidArgument, "gguf",
             "metadata '" + key + "': an array holds " + std::string(gguf_type_name(elem)) + " and " +
                 std::string(gguf_type_name(x.type())) + " items");
      }
    }
    GgufArray a(elem, items);
    return GgufValue(std::move(a));
  }
  fail(ErrorKind::InvalidArgument, "gguf",
       "metadata '" + key + "': a " +
           nb::cast<std::string>(nb::str(nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(h.ptr()))))) +
           " is not a GGUF value (bool, int, float, str, list, a NumPy scalar)");
}

// (key, value) pairs from a dict (in its order) or a sequence of pairs.
std::vector<std::pair<std::string, nb::object>> items_of(nb::handle h) {
  std::vector<std::pair<std::string, nb::object>> out;
  nb::object seq = nb::isinstance<nb::dict>(h) ? nb::object(h.attr("items")()) : nb::borrow(h);
  for (nb::handle kv : nb::iter(seq)) {
    nb::object t = nb::steal(PySequence_Tuple(kv.ptr()));
    if (!t.is_valid()) throw nb::python_error();
    if (nb::len(t) != 2) throw nb::type_error("expected (name, value) pairs or a dict");
    out.emplace_back(nb::cast<std::string>(t[0]), nb::borrow(t[1]));
  }
  return out;
}

std::vector<std::pair<std::string, GgufValue>> metadata_of(nb::handle h) {
  std::vector<std::pair<std::string, GgufValue>> md;
  if (h.is_none()) return md;
  for (auto& [k, v] : items_of(h)) md.emplace_back(k, from_python(v, k));
  return md;
}

std::vector<GgufTensorData> gguf_tensors_of(nb::handle h) {
  std::vector<GgufTensorData> out;
  for (auto& [name, v] : items_of(h)) {
    if (nb::isinstance<QTensor>(v)) {
      out.push_back(GgufTensorData::from_qtensor(name, nb::cast<QTensor>(v)));
    } else {
      out.push_back(GgufTensorData::from_tensor(name, nb::cast<Tensor>(v)));
    }
  }
  return out;
}

std::vector<std::pair<std::string, Tensor>> named_tensors(nb::handle h) {
  std::vector<std::pair<std::string, Tensor>> out;
  for (auto& [name, v] : items_of(h)) out.emplace_back(name, nb::cast<Tensor>(v));
  return out;
}

nb::dict tensor_dict(const std::vector<std::pair<std::string, Tensor>>& v) {
  nb::dict d;
  for (const auto& [k, t] : v) d[nb::str(k.data(), k.size())] = nb::cast(t);
  return d;
}

nb::bytes to_bytes(const std::vector<uint8_t>& v) {
  return nb::bytes(reinterpret_cast<const char*>(v.data()), v.size());
}

nb::tuple shape_tuple(const Shape& s) {
  nb::list l;
  for (size_t d : s.dims()) l.append(d);
  return nb::tuple(l);
}

}  // namespace

void bind_io(nb::module_& m) {
  // ---- GGUF ------------------------------------------------------------------------
  nb::class_<GgufTensorInfo>(m, "GgufTensorInfo")
      .def_ro("name", &GgufTensorInfo::name)
      .def_prop_ro(
          "shape", [](const GgufTensorInfo& i) { return shape_tuple(i.shape()); },
          "wick's order (outermost first)")
      .def_ro("ne", &GgufTensorInfo::ne, "ggml's order (ne[0] innermost)")
      .def_ro("type_id", &GgufTensorInfo::type)
      .def_prop_ro("type_name",
                   [](const GgufTensorInfo& i) { return std::string(ggml_any_type_name(i.type)); })
      .def_ro("offset", &GgufTensorInfo::offset)
      .def_ro("nbytes", &GgufTensorInfo::nbytes)
      .def("__repr__", [](const GgufTensorInfo& i) {
        return "GgufTensorInfo('" + i.name + "', " + i.shape().str() + ", " +
               std::string(ggml_any_type_name(i.type)) + ")";
      });
  nb::class_<GgufFile>(m, "GgufFile", "A GGUF file, memory-mapped and validated (GgufFile.open).")
      .def_static("open", &GgufFile::open, "path"_a, nb::call_guard<nb::gil_scoped_release>())
      .def_static(
          "parse",
          [](nb::bytes data, const std::string& name) {
            return GgufFile::parse(data.c_str(), data.size(), name);
          },
          "data"_a, "name"_a = "<memory>")
      .def_prop_ro("path", &GgufFile::path)
      .def_prop_ro("version", &GgufFile::version)
      .def_prop_ro("alignment", &GgufFile::alignment)
      .def_prop_ro("data_offset", &GgufFile::data_offset)
      .def_prop_ro(
          "metadata",
          [](const GgufFile& f) {
            nb::dict d;
            for (const auto& [k, v] : f.metadata()) d[nb::str(k.data(), k.size())] = to_python(v);
            return d;
          },
          "The key-value pairs, in file order, as Python values.")
      .def(
          "metadata_type",
          [](const GgufFile& f, const std::string& key) {
            const GgufValue* v = f.find(key);
            if (!v) fail(ErrorKind::InvalidArgument, "gguf", "no metadata key '" + key + "' in " + f.path());
            return std::string(gguf_type_name(v->type()));
          },
          "key"_a, "The GGUF type of a metadata value ('u32', 'string', 'array', ...).")
      .def_prop_ro("tensors", &GgufFile::tensors)
      .def(
          "tensor",
          [](const GgufFile& f, const std::string& name, nb::handle device) {
            return f.tensor(name, to_device_or(device, Device::cpu()));
          },
          "name"_a, "device"_a = nb::none(), "A float or integer tensor (quantized ones: qtensor).")
      .def(
          "qtensor",
          [](const GgufFile& f, const std::string& name, nb::handle device) {
            return f.qtensor(name, to_device_or(device, Device::cpu()));
          },
          "name"_a, "device"_a = nb::none(), "Any tensor wick implements, as a QTensor.");
  m.def(
      "gguf_serialize",
      [](nb::handle metadata, nb::handle tensors, uint32_t version) {
        return to_bytes(gguf_serialize(metadata_of(metadata), gguf_tensors_of(tensors), version));
      },
      "metadata"_a, "tensors"_a, "version"_a = 3,
      "A GGUF image: metadata (dict or pairs) and tensors (name -> Tensor or QTensor), as bytes.");
  m.def(
      "write_gguf",
      [](const std::string& path, nb::handle metadata, nb::handle tensors, uint32_t version) {
        write_gguf(path, metadata_of(metadata), gguf_tensors_of(tensors), version);
      },
      "path"_a, "metadata"_a, "tensors"_a, "version"_a = 3);

  // ---- safetensors -------------------------------------------------------------------
  nb::class_<SafetensorsInfo>(m, "SafetensorsInfo")
      .def_ro("name", &SafetensorsInfo::name)
      .def_ro("dtype", &SafetensorsInfo::dtype)
      .def_ro("dtype_name", &SafetensorsInfo::dtype_name)
      .def_prop_ro("shape", [](const SafetensorsInfo& i) { return shape_tuple(i.shape); })
      .def_ro("loadable", &SafetensorsInfo::loadable)
      .def("__repr__", [](const SafetensorsInfo& i) {
        return "SafetensorsInfo('" + i.name + "', " + i.shape.str() + ", " + i.dtype_name + ")";
      });
  nb::class_<SafetensorsFile>(m, "SafetensorsFile", "A safetensors file, memory-mapped and validated.")
      .def_static("open", &SafetensorsFile::open, "path"_a, nb::call_guard<nb::gil_scoped_release>())
      .def_static(
          "parse",
          [](nb::bytes data, const std::string& name) {
            return SafetensorsFile::parse(data.c_str(), data.size(), name);
          },
          "data"_a, "name"_a = "<memory>")
      .def_prop_ro("path", &SafetensorsFile::path)
      .def_prop_ro("metadata", &SafetensorsFile::metadata)
      .def_prop_ro("tensors", &SafetensorsFile::tensors)
      .def(
          "tensor",
          [](const SafetensorsFile& f, const std::string& name, nb::handle device) {
            return f.tensor(name, to_device_or(device, Device::cpu()));
          },
          "name"_a, "device"_a = nb::none());
  m.def(
      "safetensors_serialize",
      [](nb::handle tensors, const std::map<std::string, std::string>& metadata) {
        return to_bytes(safetensors_serialize(named_tensors(tensors), metadata));
      },
      "tensors"_a, "metadata"_a = std::map<std::string, std::string>{});
  m.def(
      "write_safetensors",
      [](const std::string& path, nb::handle tensors, const std::map<std::string, std::string>& metadata) {
        write_safetensors(path, named_tensors(tensors), metadata);
      },
      "path"_a, "tensors"_a, "metadata"_a = std::map<std::string, std::string>{});

  // ---- NumPy files ---------------------------------------------------------------------
  m.def(
      "read_npy",
      [](const std::string& path, nb::handle device) {
        return read_npy(path, to_device_or(device, Device::cpu()));
      },
      "path"_a, "device"_a = nb::none());
  m.def(
      "parse_npy",
      [](nb::bytes data, nb::handle device) {
        return parse_npy(data.c_str(), data.size(), "<memory>", to_device_or(device, Device::cpu()));
      },
      "data"_a, "device"_a = nb::none());
  m.def("write_npy", &write_npy, "path"_a, "tensor"_a);
  m.def(
      "npy_serialize", [](const Tensor& t) { return to_bytes(npy_serialize(t)); }, "tensor"_a);
  m.def(
      "read_npz",
      [](const std::string& path, nb::handle device) {
        return tensor_dict(read_npz(path, to_device_or(device, Device::cpu())));
      },
      "path"_a, "device"_a = nb::none(), "name -> Tensor, in archive order.");
  m.def(
      "parse_npz",
      [](nb::bytes data, nb::handle device) {
        return tensor_dict(
            parse_npz(data.c_str(), data.size(), "<memory>", to_device_or(device, Device::cpu())));
      },
      "data"_a, "device"_a = nb::none());
  m.def(
      "write_npz",
      [](const std::string& path, nb::handle tensors) { write_npz(path, named_tensors(tensors)); }, "path"_a,
      "tensors"_a);
}

}  // namespace wick::py
