// What the binding files share: conversions of Python arguments to wick's types. A
// dtype, device or scalar argument accepts what a NumPy or PyTorch user would pass;
// a value that names nothing wick has is a wick.Error (UnsupportedDType,
// InvalidArgument) naming the argument, as the C++ API would give.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "wick/device.h"
#include "wick/dtype.h"
#include "wick/error.h"
#include "wick/tensor.h"

namespace wick::py {

namespace nb = nanobind;

// wick.DType, a name ("f32", "float32", "bfloat16"), a NumPy dtype or scalar type, a
// torch.dtype, or Python's bool / int / float (u8, i64, f64, as NumPy reads them).
DType to_dtype(nb::handle h);
// `fallback` when h is None.
DType to_dtype_or(nb::handle h, DType fallback);
// wick.Device, "cpu", "gpu", "gpu:N", or "cuda[:N]" / "rocm[:N]" (that vendor's N-th
// GPU, as torch.device names it).
Device to_device(nb::handle h);
Device to_device_or(nb::handle h, Device fallback);
// A Python or NumPy number (bool, int, float, a 0-d array); nullopt for anything else.
std::optional<Scalar> as_scalar(nb::handle h);
Scalar to_scalar(nb::handle h, const char* what);
// An int or a sequence of ints (a shape: non-negative).
std::vector<size_t> to_shape(nb::handle h, const char* what);
std::vector<int64_t> to_int_list(nb::handle h, const char* what);
// A dim argument: None -> every dim of a tensor of `rank`, an int, or a sequence.
std::vector<int64_t> to_dims(nb::handle h, size_t rank);

// The DLPack device (type, id) of a wick device: (kDLCPU, 0), or (kDLCUDA / kDLROCM,
// the ordinal of the GPU among its vendor's devices). wick counts GPUs over every
// loaded backend, CUDA's first, so gpu:N is CUDA device N when CUDA serves it.
std::pair<int, int> dlpack_device(Device d);
// The wick device of a DLPack (type, id); InvalidArgument when wick has none.
Device device_from_dlpack(int type, int id);

// The Python object of wick.Tensor for a C++ tensor.
inline nb::object wrap(Tensor t) { return nb::cast(std::move(t)); }
// A Python-side error with the C++ API's form: "[op] message", of the given kind.
[[noreturn]] void fail(ErrorKind kind, const char* op, const std::string& message);

// The module's parts (one file each).
void bind_core(nb::module_& m);                           // errors, dtypes, devices, options
void bind_tensor(nb::module_& m);                         // Tensor, creation, ops, nn
void bind_dlpack(nb::module_& m, nb::class_<Tensor>& c);  // DLPack export / import
void bind_quant(nb::module_& m);                          // GgmlType, QTensor, qmatmul
void bind_io(nb::module_& m);                             // GGUF, safetensors, npy / npz
void bind_model(nb::module_& m);                          // Model, Tokenizer

}  // namespace wick::py
