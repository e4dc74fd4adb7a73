// DLPack both ways, without a copy, through nanobind's ndarray (nb::ndarray).
//
// Export (Tensor.__dlpack__): a capsule over the tensor's own memory (data_ptr(),
// dims, strides in elements) whose owner is the Python Tensor. On a GPU, wick's work
// runs on one stream per device; unless the consumer passes stream=-1 ("no
// synchronization"), that stream is drained before the capsule is handed out, so the
// values are final whatever stream the consumer reads them on.
//
// Import (_import_dlpack): wraps the producer's memory with Tensor::from_blob over
// the range its strides reach and a Layout with those strides; the DLPack object
// stays alive until the last wick tensor over it goes (a GPU one after wick's stream
// has drained). The Python side (from_dlpack in python/wick/__init__.py) asks the
// producer for a capsule with wick's stream as the consumer stream, so the producer
// orders its pending writes before wick's work. A layout wick cannot hold (negative
// strides, an address not aligned to the element size) or read-only memory is copied,
// or refused when copy=False.
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>

#include <cstring>

#include "common.h"

namespace wick::py {

namespace {

using namespace nb::literals;
namespace dl = nb::dlpack;

dl::dtype to_dl(DType dt) {
  const uint8_t bits = uint8_t(8 * dtype_size(dt));
  switch (dt) {
    case DType::U8:
    case DType::U32:
      return {uint8_t(dl::dtype_code::UInt), bits, 1};
    case DType::I32:
    case DType::I64:
      return {uint8_t(dl::dtype_code::Int), bits, 1};
    case DType::BF16:
      return {uint8_t(dl::dtype_code::Bfloat), bits, 1};
    case DType::F16:
    case DType::F32:
    case DType::F64:
      return {uint8_t(dl::dtype_code::Float), bits, 1};
  }
  return {};
}

std::string dl_name(dl::dtype t) {
  const char* code = "code ";
  switch (dl::dtype_code(t.code)) {
    case dl::dtype_code::Int:
      code = "int";
      break;
    case dl::dtype_code::UInt:
      code = "uint";
      break;
    case dl::dtype_code::Float:
      code = "float";
      break;
    case dl::dtype_code::Bfloat:
      code = "bfloat";
      break;
    case dl::dtype_code::Bool:
      code = "bool";
      break;
    case dl::dtype_code::Complex:
      code = "complex";
      break;
    default:
      return "code " + std::to_string(t.code) + " bits " + std::to_string(t.bits);
  }
  return code + std::to_string(t.bits) + (t.lanes != 1 ? "x" + std::to_string(t.lanes) : "");
}

DType from_dl(dl::dtype t) {
  if (t.lanes == 1) {
    for (DType d : kAllDTypes) {
      if (to_dl(d) == t) return d;
    }
    if (t.code == uint8_t(dl::dtype_code::Bool) && t.bits == 8) return DType::U8;
  }
  fail(ErrorKind::UnsupportedDType, "from_dlpack",
       "DLPack dtype " + dl_name(t) + " has no wick dtype (u8, u32, i32, i64, f16, bf16, f32, f64)");
}

// The tensor as a nanobind ndarray over its memory, owned by the Python object `owner`.
// `as_u16`: bf16 elements labelled uint16 (for NumPy, which has no bfloat16).
template <class... Framework>
nb::object ndarray_of(const Tensor& t, nb::handle owner, bool as_u16) {
  std::vector<size_t> shape(t.dims());
  std::vector<int64_t> strides(t.layout().strides().begin(), t.layout().strides().end());
  auto [type, id] = dlpack_device(t.device());
  dl::dtype dt =
      as_u16 && t.dtype() == DType::BF16 ? dl::dtype{uint8_t(dl::dtype_code::UInt), 16, 1} : to_dl(t.dtype());
  nb::ndarray<Framework...> a(t.data_ptr(), t.rank(), shape.data(), owner, strides.data(), dt, type, id);
  return a.cast(nb::rv_policy::reference);
}

bool is_minus_one(nb::handle h) {
  return PyLong_Check(h.ptr()) && PyLong_AsLongLong(h.ptr()) == -1 && !PyErr_Occurred();
}

nb::object dlpack_export(nb::handle self, nb::handle stream, nb::handle max_version, nb::handle dl_device,
                         nb::handle copy) {
  Tensor t = nb::cast<Tensor>(self);
  nb::object owner = nb::borrow(self);
  if (!dl_device.is_none()) {
    auto want = nb::cast<std::pair<int, int>>(dl_device);
    if (want != dlpack_device(t.device())) {
      if (!copy.is_none() && nb::cast<bool>(copy) == false) {
        throw nb::buffer_error("__dlpack__: dl_device differs from the tensor's and copy=False");
      }
      t = t.to_device(device_from_dlpack(want.first, want.second));
      owner = wrap(t);
    }
  }
  if (!copy.is_none() && nb::cast<bool>(copy) && owner.is(self)) {
    t = t.copy();
    owner = wrap(t);
  }
  if (t.device().is_gpu() && !is_minus_one(stream)) {
    if (!stream.is_none() && !PyLong_Check(stream.ptr()))
      throw nb::type_error("__dlpack__: stream must be an int or None");
    nb::gil_scoped_release unlocked;
    synchronize(t.device());
  } else if (t.device().is_gpu()) {
    (void)native_stream(t.device());  // queues wick's deferred small ops on its stream
  }
  nb::object a = ndarray_of<nb::array_api>(t, owner, false);
  return a.attr("__dlpack__")("max_version"_a = max_version);
}

// Copies n elements of `itemsize` bytes lying at `src` with the given strides (in
// elements) into a contiguous host buffer.
void gather_host(const char* src, const std::vector<size_t>& dims, const std::vector<int64_t>& strides,
                 size_t itemsize, char* dst) {
  size_t n = Shape(dims).elem_count();
  std::vector<size_t> idx(dims.size(), 0);
  for (size_t e = 0; e < n; ++e) {
    int64_t off = 0;
    for (size_t k = 0; k < dims.size(); ++k) off += int64_t(idx[k]) * strides[k];
    std::memcpy(dst + e * itemsize, src + off * int64_t(itemsize), itemsize);
    for (size_t k = dims.size(); k-- > 0;) {
      if (++idx[k] < dims[k]) break;
      idx[k] = 0;
    }
  }
}

Tensor dlpack_import(nb::handle obj, std::optional<bool> copy, nb::handle dtype_override) {
  nb::ndarray<> a;
  bool read_only = false;
  if (!nb::try_cast(obj, a, false)) {
    nb::ndarray<nb::ro> r;
    if (!nb::try_cast(obj, r, false)) {
      throw nb::type_error(
          "from_dlpack: the object exports no DLPack capsule, buffer or array nanobind can read");
    }
    a = nb::ndarray<>(r);
    read_only = true;
  }
  DType dt;
  if (dtype_override.is_none()) {
    dt = from_dl(a.dtype());
  } else {  // the same bytes read as another dtype of their size (bf16 held as uint16)
    dt = to_dtype(dtype_override);
    if (a.dtype().lanes != 1 || a.dtype().bits != 8 * dtype_size(dt)) {
      fail(ErrorKind::InvalidArgument, "from_dlpack",
           "cannot read " + dl_name(a.dtype()) + " as " + std::string(dtype_name(dt)));
    }
  }
  Device dev = device_from_dlpack(a.device_type(), a.device_id());
  const size_t rank = a.ndim(), itemsize = dtype_size(dt);
  std::vector<size_t> dims(rank);
  std::vector<int64_t> strides(rank);
  for (size_t k = 0; k < rank; ++k) dims[k] = a.shape(k);
  if (a.stride_ptr()) {
    for (size_t k = 0; k < rank; ++k) strides[k] = a.stride(k);
  } else {
    int64_t s = 1;
    for (size_t k = rank; k-- > 0;) {
      strides[k] = s;
      s *= int64_t(dims[k]);
    }
  }
  const Shape shape(dims);
  if (shape.elem_count() == 0) return Tensor::zeros(shape, dt, dev);

  char* data = static_cast<char*>(a.data());
  // The range of elements the strides reach, relative to element 0.
  int64_t lo = 0, hi = 0;
  bool negative = false;
  for (size_t k = 0; k < rank; ++k) {
    int64_t span = int64_t(dims[k] - 1) * strides[k];
    (strides[k] < 0 ? lo : hi) += span;
    negative |= strides[k] < 0;
  }
  const bool aligned = reinterpret_cast<uintptr_t>(data) % itemsize == 0;
  const bool must_copy = negative || !aligned || read_only;
  if (must_copy && copy == false) {
    const std::string why = read_only  ? "is read-only"
                            : negative ? "has negative strides"
                                       : "is not aligned to its element size";
    throw nb::buffer_error(
        ("from_dlpack: copy=False but the memory " + why + ", which a wick tensor cannot wrap without a copy")
            .c_str());
  }
  if (!aligned) {
    if (dev.is_gpu()) {
      fail(ErrorKind::InvalidArgument, "from_dlpack",
           "GPU memory not aligned to the element size (" + std::to_string(itemsize) + " bytes)");
    }
    std::vector<char> buf(shape.elem_count() * itemsize);
    gather_host(data, dims, strides, itemsize, buf.data());
    return Tensor::from_bytes(buf.data(), shape.elem_count(), shape, dt, dev);
  }

  // The DLPack object lives as long as the storage wrapping its memory.
  auto* holder = new nb::ndarray<>(a);
  auto release = [holder](void*) {
    nb::gil_scoped_acquire gil;
    delete holder;
  };
  char* base = data + lo * int64_t(itemsize);
  Tensor flat = Tensor::from_blob(base, Shape{size_t(hi - lo + 1)}, dt, dev, release);
  std::vector<size_t> abs_strides(rank);
  for (size_t k = 0; k < rank; ++k) abs_strides[k] = size_t(strides[k] < 0 ? -strides[k] : strides[k]);
  // With |strides| from `base`, a dim of negative stride reads in reverse: flip it back.
  Tensor t(flat.storage(), Layout(dims, abs_strides, 0), dt, dev);
  for (size_t k = 0; k < rank; ++k) {
    if (strides[k] < 0 && dims[k] > 1) {
      Tensor rev = Tensor::arange(double(dims[k] - 1), -1.0, -1.0, DType::I64, dev);
      t = t.index_select(rev, int64_t(k));
    }
  }
  if (copy == true || (read_only && !negative)) t = t.copy();
  return t;
}

}  // namespace

void bind_dlpack(nb::module_& m, nb::class_<Tensor>& c) {
  c.def("__dlpack__", &dlpack_export, "stream"_a = nb::none(), "max_version"_a = nb::none(),
        "dl_device"_a = nb::none(), "copy"_a = nb::none(),
        "A DLPack capsule over the tensor's memory (no copy). On a GPU, wick's stream is drained first "
        "unless stream=-1.");
  c.def("__dlpack_device__", [](const Tensor& t) { return dlpack_device(t.device()); });
  c.def(
      "_numpy_view",
      [](nb::handle self) { return ndarray_of<nb::numpy>(nb::cast<Tensor>(self), self, true); },
      "The CPU tensor as a NumPy array over the same memory (bf16 as uint16).");
  m.def("_device_from_dlpack", &device_from_dlpack, "type"_a, "id"_a);
  m.def("_import_dlpack", &dlpack_import, "obj"_a, "copy"_a = nb::none(), "dtype"_a = nb::none(),
        "A tensor over the memory of a DLPack capsule or of an object nanobind reads (buffer, __dlpack__).");
}

}  // namespace wick::py
