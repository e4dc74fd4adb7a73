// The module wick._wick: errors, dtypes, devices, options, and the argument
// conversions every binding file uses (common.h). The Pythonic layer on top of it
// is python/wick/__init__.py.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "common.h"
#include "wick/options.h"
#include "wick/quant.h"

namespace wick::py {

namespace {

// wick.Error, created at import. Kept for the life of the process: exception
// translation may run while the interpreter shuts down.
PyObject* g_error_type = nullptr;

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::optional<DType> dtype_named(const std::string& name) {
  static const std::pair<const char*, DType> kNames[] = {
      {"u8", DType::U8},       {"uint8", DType::U8},    {"bool", DType::U8},   {"u32", DType::U32},
      {"uint32", DType::U32},  {"i32", DType::I32},     {"int32", DType::I32}, {"i64", DType::I64},
      {"int64", DType::I64},   {"int", DType::I64},     {"long", DType::I64},  {"f16", DType::F16},
      {"float16", DType::F16}, {"half", DType::F16},    {"bf16", DType::BF16}, {"bfloat16", DType::BF16},
      {"f32", DType::F32},     {"float32", DType::F32}, {"f64", DType::F64},   {"float64", DType::F64},
      {"double", DType::F64},  {"float", DType::F64},
  };
  for (const auto& [n, dt] : kNames) {
    if (name == n) return dt;
  }
  return std::nullopt;
}

}  // namespace

void fail(ErrorKind kind, const char* op, const std::string& message) { throw_error(kind, op, message); }

DType to_dtype(nb::handle h) {
  if (nb::isinstance<DType>(h)) return nb::cast<DType>(h);
  std::string name;
  if (nb::isinstance<nb::str>(h)) {
    name = nb::cast<std::string>(h);
  } else if (PyType_Check(h.ptr())) {
    // Python's own types as NumPy reads them (bool -> u8, int -> i64, float -> f64);
    // NumPy's scalar types and ml_dtypes.bfloat16 by their names.
    if (h.is(reinterpret_cast<PyObject*>(&PyBool_Type))) {
      name = "bool";
    } else if (h.is(reinterpret_cast<PyObject*>(&PyLong_Type))) {
      name = "int64";
    } else if (h.is(reinterpret_cast<PyObject*>(&PyFloat_Type))) {
      name = "float64";
    } else if (nb::hasattr(h, "__name__")) {
      name = nb::cast<std::string>(nb::str(h.attr("__name__")));
    }
  } else if (nb::hasattr(h, "name") && nb::isinstance<nb::str>(h.attr("name"))) {
    name = nb::cast<std::string>(h.attr("name"));  // a NumPy dtype
  } else {
    name = nb::cast<std::string>(nb::str(h));  // torch.float32
  }
  std::string key = lower(name);
  if (key.rfind("torch.", 0) == 0) key = key.substr(6);
  if (auto dt = dtype_named(key)) return *dt;
  fail(ErrorKind::UnsupportedDType, "dtype",
       "'" + name + "' is not a wick dtype (u8, u32, i32, i64, f16, bf16, f32, f64)");
}

DType to_dtype_or(nb::handle h, DType fallback) { return h.is_none() ? fallback : to_dtype(h); }

Device to_device(nb::handle h) {
  if (nb::isinstance<Device>(h)) return nb::cast<Device>(h);
  std::string s = nb::cast<std::string>(nb::str(h));
  for (const char* vendor : {"cuda", "rocm"}) {
    size_t n = std::strlen(vendor);
    if (s.compare(0, n, vendor) != 0 || (s.size() > n && s[n] != ':')) continue;
    int want = 0;
    if (s.size() > n + 1) {
      const std::string digits = s.substr(n + 1);
      if (digits.empty() || !std::all_of(digits.begin(), digits.end(), ::isdigit)) break;
      want = std::stoi(digits);
    }
    for (const Device& d : available_devices()) {
      if (d.is_gpu() && device_info(d).backend == vendor && dlpack_device(d).second == want) return d;
    }
    fail(ErrorKind::InvalidArgument, "device",
         s + " is not available (" + std::to_string(available_devices().size() - 1) + " GPU(s) present)");
  }
  return Device::parse(s);
}

Device to_device_or(nb::handle h, Device fallback) { return h.is_none() ? fallback : to_device(h); }

std::optional<Scalar> as_scalar(nb::handle h) {
  PyObject* o = h.ptr();
  if (PyBool_Check(o)) return Scalar(int64_t(o == Py_True));
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (!overflow) return Scalar(int64_t(v));
    PyErr_Clear();
    unsigned long long u = PyLong_AsUnsignedLongLong(o);
    if (!PyErr_Occurred()) return Scalar(uint64_t(u));
    PyErr_Clear();
    return Scalar(PyLong_AsDouble(o));  // beyond 64 bits: held as a double (inf past its range)
  }
  if (PyFloat_Check(o)) return Scalar(PyFloat_AsDouble(o));
  if (nb::isinstance<Tensor>(h) || PyUnicode_Check(o) || PyBytes_Check(o)) return std::nullopt;
  // NumPy scalars and 0-d arrays: shape () with an int or float value.
  if (nb::hasattr(h, "shape") && nb::hasattr(h, "dtype")) {
    nb::object shape = h.attr("shape");
    if (!nb::isinstance<nb::tuple>(shape) || nb::len(shape) != 0) return std::nullopt;
    nb::object item = h.attr("item")();
    if (PyBool_Check(item.ptr()) || PyLong_Check(item.ptr()) || PyFloat_Check(item.ptr()))
      return as_scalar(item);
    return std::nullopt;
  }
  if (PyIndex_Check(o)) return as_scalar(nb::steal(PyNumber_Index(o)));
  return std::nullopt;
}

Scalar to_scalar(nb::handle h, const char* what) {
  if (auto s = as_scalar(h)) return *s;
  throw nb::type_error(
      (std::string(what) + " must be a number, not " +
       nb::cast<std::string>(nb::str(nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(h.ptr()))))))
          .c_str());
}

std::vector<int64_t> to_int_list(nb::handle h, const char* what) {
  if (PyLong_Check(h.ptr()) || PyIndex_Check(h.ptr())) return {nb::cast<int64_t>(nb::int_(h))};
  if (!PySequence_Check(h.ptr()) || nb::isinstance<nb::str>(h)) {
    throw nb::type_error((std::string(what) + " must be an int or a sequence of ints").c_str());
  }
  std::vector<int64_t> v;
  for (nb::handle x : nb::iter(h)) {
    if (!PyLong_Check(x.ptr()) && !PyIndex_Check(x.ptr())) {
      throw nb::type_error((std::string(what) + " must be an int or a sequence of ints").c_str());
    }
    v.push_back(nb::cast<int64_t>(nb::int_(x)));
  }
  return v;
}

std::vector<size_t> to_shape(nb::handle h, const char* what) {
  std::vector<size_t> s;
  for (int64_t d : to_int_list(h, what)) {
    if (d < 0) fail(ErrorKind::InvalidArgument, what, "negative size " + std::to_string(d));
    s.push_back(size_t(d));
  }
  return s;
}

std::vector<int64_t> to_dims(nb::handle h, size_t rank) {
  if (h.is_none()) {
    std::vector<int64_t> all(rank);
    for (size_t i = 0; i < rank; ++i) all[i] = int64_t(i);
    return all;
  }
  return to_int_list(h, "dim");
}

// DLPack's device types (dlpack.h: DLDeviceType).
constexpr int kDLCPU = 1, kDLCUDA = 2, kDLROCM = 10;

std::pair<int, int> dlpack_device(Device d) {
  if (d.is_cpu()) return {kDLCPU, 0};
  const std::string vendor = device_info(d).backend;
  int local = 0;
  for (const Device& o : available_devices()) {
    if (o.is_gpu() && o.ordinal < d.ordinal && device_info(o).backend == vendor) ++local;
  }
  return {vendor == "rocm" ? kDLROCM : kDLCUDA, local};
}

Device device_from_dlpack(int type, int id) {
  if (type == kDLCPU) return Device::cpu();
  if (type == kDLCUDA || type == kDLROCM) {
    const char* vendor = type == kDLCUDA ? "cuda" : "rocm";
    for (const Device& d : available_devices()) {
      if (d.is_gpu() && device_info(d).backend == vendor && dlpack_device(d).second == id) return d;
    }
    fail(ErrorKind::InvalidArgument, "from_dlpack",
         std::string(vendor) + " device " + std::to_string(id) + " is not served by a loaded wick backend");
  }
  fail(ErrorKind::InvalidArgument, "from_dlpack",
       "DLPack device type " + std::to_string(type) + " is not one wick has (CPU, CUDA, ROCm)");
}

void bind_core(nb::module_& m) {
  // ---- errors: wick::Error -> wick.Error (a RuntimeError) with .kind --------------
  nb::enum_<ErrorKind>(m, "ErrorKind", "The kind of a wick.Error (error.h)")
      .value("ShapeMismatch", ErrorKind::ShapeMismatch)
      .value("DTypeMismatch", ErrorKind::DTypeMismatch)
      .value("DeviceMismatch", ErrorKind::DeviceMismatch)
      .value("DimOutOfRange", ErrorKind::DimOutOfRange)
      .value("IndexOutOfRange", ErrorKind::IndexOutOfRange)
      .value("UnsupportedDType", ErrorKind::UnsupportedDType)
      .value("OutOfMemory", ErrorKind::OutOfMemory)
      .value("GpuRuntime", ErrorKind::GpuRuntime)
      .value("Io", ErrorKind::Io)
      .value("Format", ErrorKind::Format)
      .value("InvalidArgument", ErrorKind::InvalidArgument);
  g_error_type = PyErr_NewExceptionWithDoc(
      "wick.Error",
      "wick's error: the message names the op, the shapes and the dtypes, as the C++ library's "
      "wick::Error does; .kind is a wick.ErrorKind.",
      PyExc_RuntimeError, nullptr);
  m.attr("Error") = nb::handle(g_error_type);
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      nb::object exc = nb::steal(PyObject_CallFunction(g_error_type, "s", e.what()));
      if (!exc.is_valid()) return;  // the call set its own error
      exc.attr("kind") = nb::cast(e.kind());
      PyErr_SetObject(g_error_type, exc.ptr());
    }
  });
  m.def(
      "_raise",
      [](ErrorKind kind, const std::string& op, const std::string& msg) { throw_error(kind, op, msg); },
      "Raises wick.Error('[op] msg') of the given kind (for the Python layer's own checks).");

  // ---- dtypes --------------------------------------------------------------------
  auto dt = nb::enum_<DType>(m, "DType", "Element types: u8, u32, i32, i64, f16, bf16, f32, f64");
  for (DType d : kAllDTypes) dt.value(std::string(dtype_name(d)).c_str(), d);
  m.def("dtype", &to_dtype, nb::arg("like"),
        "The wick.DType a name, NumPy dtype, torch.dtype or Python type stands for.");
  m.def(
      "dtype_size", [](nb::handle d) { return dtype_size(to_dtype(d)); }, nb::arg("dtype"),
      "Bytes per element.");
  m.def(
      "is_floating_point", [](nb::handle d) { return is_float(to_dtype(d)); }, nb::arg("dtype"));
  m.def(
      "promote_types", [](nb::handle a, nb::handle b) { return promote_types(to_dtype(a), to_dtype(b)); },
      nb::arg("a"), nb::arg("b"), "The dtype two dtypes promote to (NumPy's rules; bf16 placed by them).");

  // ---- devices -------------------------------------------------------------------
  nb::class_<Device>(m, "Device", "A device: wick.Device('cpu'), wick.Device('gpu:0')")
      .def(
          "__init__", [](Device* self, nb::handle spec) { new (self) Device(to_device(spec)); },
          nb::arg("spec"))
      .def_static("cpu", &Device::cpu)
      .def_static("gpu", &Device::gpu, nb::arg("ordinal") = 0)
      .def_prop_ro("type", [](const Device& d) { return d.is_cpu() ? "cpu" : "gpu"; })
      .def_prop_ro("index", [](const Device& d) { return d.ordinal; })
      .def_prop_ro("is_cpu", &Device::is_cpu)
      .def_prop_ro("is_gpu", &Device::is_gpu)
      .def("__str__", &Device::str)
      .def("__repr__", [](const Device& d) { return "wick.Device('" + d.str() + "')"; })
      .def("__eq__",
           [](const Device& a, nb::handle b) {
             try {
               return a == to_device(b);
             } catch (const std::exception&) {
               return false;
             }
           })
      .def("__hash__", [](const Device& d) { return int(d.kind) * 1024 + d.ordinal; })
      .def("__dlpack_device__", [](const Device& d) { return dlpack_device(d); });
  nb::class_<DeviceInfo>(m, "DeviceInfo")
      .def_ro("device", &DeviceInfo::device)
      .def_ro("name", &DeviceInfo::name)
      .def_ro("backend", &DeviceInfo::backend)
      .def_ro("arch", &DeviceInfo::arch)
      .def_ro("total_memory", &DeviceInfo::total_memory)
      .def_ro("wave_size", &DeviceInfo::wave_size)
      .def_ro("multiprocessors", &DeviceInfo::multiprocessors)
      .def_ro("shared_per_block", &DeviceInfo::shared_per_block)
      .def("__repr__", [](const DeviceInfo& i) {
        return "DeviceInfo(" + i.device.str() + ", '" + i.name + "', backend='" + i.backend + "')";
      });
  nb::class_<MemoryStats>(m, "MemoryStats")
      .def_ro("in_use", &MemoryStats::in_use)
      .def_ro("cached", &MemoryStats::cached)
      .def_ro("peak", &MemoryStats::peak)
      .def_ro("free", &MemoryStats::free);
  nb::class_<BackendStatus>(m, "BackendStatus")
      .def_ro("name", &BackendStatus::name)
      .def_ro("loaded", &BackendStatus::loaded)
      .def_ro("detail", &BackendStatus::detail)
      .def("__repr__", [](const BackendStatus& b) {
        return "BackendStatus('" + b.name + "', loaded=" + (b.loaded ? "True" : "False") + ", '" + b.detail +
               "')";
      });
  m.def("available_devices", &available_devices, "The CPU, then each GPU of each loaded backend.");
  m.def(
      "device_info", [](nb::handle d) { return device_info(to_device(d)); }, nb::arg("device"));
  m.def(
      "memory_stats", [](nb::handle d) { return memory_stats(to_device(d)); }, nb::arg("device"));
  m.def(
      "synchronize",
      [](nb::handle d) {
        Device dev = to_device(d);
        nb::gil_scoped_release unlocked;
        synchronize(dev);
      },
      nb::arg("device"), "Waits until the work queued on the device is done.");
  m.def(
      "native_stream", [](nb::handle d) { return reinterpret_cast<uintptr_t>(native_stream(to_device(d))); },
      nb::arg("device"),
      "The address of the runtime stream wick queues the device's work on (0 for the CPU).");
  m.def("gpu_backend_status", &gpu_backend_status);

  // ---- options -------------------------------------------------------------------
  nb::enum_<QMatmulPath>(m, "QMatmulPath")
      .value("auto", QMatmulPath::Auto)
      .value("matvec", QMatmulPath::MatVec)
      .value("dequant_gemm", QMatmulPath::DequantGemm);
  nb::class_<Options>(m, "Options", "Run-time options (options.h); wick.set_options applies them.")
      .def(nb::init<>())
      .def_rw("portable_gemm", &Options::portable_gemm)
      .def_rw("allow_tf32", &Options::allow_tf32)
      .def_rw("qmatmul_path", &Options::qmatmul_path)
      .def_rw("backend_path", &Options::backend_path)
      .def_rw("cpu_threads", &Options::cpu_threads)
      .def_rw("cpu_cache_bytes", &Options::cpu_cache_bytes)
      .def("__repr__", [](const Options& o) {
        return "Options(portable_gemm=" + std::string(o.portable_gemm ? "True" : "False") +
               ", allow_tf32=" + (o.allow_tf32 ? "True" : "False") +
               ", qmatmul_path=" + std::to_string(int(o.qmatmul_path)) + ", backend_path='" + o.backend_path +
               "', cpu_threads=" + std::to_string(o.cpu_threads) +
               ", cpu_cache_bytes=" + std::to_string(o.cpu_cache_bytes) + ")";
      });
  m.def("options", &options, "A copy of the options in force.");
  m.def("set_options", &set_options, nb::arg("options"));
  m.def("options_from_environment", &options_from_environment);
}

}  // namespace wick::py

NB_MODULE(_wick, m) {
  m.doc() = "wick's C++ library (the package wick wraps it)";
  wick::py::bind_core(m);
  wick::py::bind_tensor(m);
  wick::py::bind_quant(m);
  wick::py::bind_io(m);
  wick::py::bind_model(m);
}
