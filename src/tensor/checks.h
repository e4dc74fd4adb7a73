// Front-end validation helpers shared by every op family (src/tensor/ops_*.cpp).
// Each throws wick::Error with "[op] ..." naming the shapes and dtypes.
#pragma once

#include <string>
#include <vector>

#include "backend/backend.h"
#include "wick/tensor.h"

namespace wick::front {

// "[2,3] f32"
std::string describe(const Tensor& t);
void check_defined(const char* op, const Tensor& t, const char* what);
void check_same_device(const char* op, const Tensor& a, const Tensor& b);
void check_same_dtype(const char* op, const Tensor& a, const Tensor& b);
// dtype must be in `allowed` (a DTypeSet from backend/dispatch.h); names the op and the dtype.
void check_dtype_in(const char* op, const Tensor& t, uint32_t allowed, const char* what);
// The element count of a new tensor of `shape` and `dtype`; ShapeMismatch naming op when its
// size does not fit (base/checked.h: non-zero dims times the element size above 2^63-1).
// Every op checks each shape it creates with this before dispatch.
size_t check_shape(const char* op, const Shape& shape, DType dtype);
// NumPy broadcasting of two shapes; ShapeMismatch when not broadcastable.
Shape broadcast_shape(const char* op, const Shape& a, const Shape& b);
// Resolves dims (negative from the end), sorts, rejects duplicates and out-of-range.
std::vector<size_t> resolve_dims(const char* op, const std::vector<int64_t>& dims, size_t rank);
// True when a and b share storage and the element ranges their layouts span intersect: an
// in-place op copies such a source out before writing (aliasing would change what it reads).
bool overlaps(const Tensor& a, const Tensor& b);
// The backend storage of t (never null for a defined tensor).
inline BackendStorage& storage_of(const Tensor& t) { return *t.storage(); }
// A tensor over new contiguous storage `s` of `shape` on t's device.
Tensor wrap(StoragePtr s, const Shape& shape, DType dtype, Device device);

}  // namespace wick::front
