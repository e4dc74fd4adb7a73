// Tensor core: creation, host transfer, views, copies, cat/stack. Op families
// live in ops_<family>.cpp beside this file.
#include "wick/tensor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>
#include <numeric>

#include "backend/backend.h"
#include "base/checked.h"
#include "base/dispatch.h"
#include "tensor/checks.h"

namespace wick {

using front::describe;

namespace {

// Per-device RNG state: the seed and the counter offset of the next call.
struct RngState {
  uint64_t seed = 299792458;  // Candle's default seed
  uint64_t offset = 0;
};
std::mutex g_rng_mutex;
std::map<std::pair<int, int>, RngState>& rng_states() {
  static std::map<std::pair<int, int>, RngState> m;
  return m;
}
std::pair<uint64_t, uint64_t> next_rng(Device d) {
  std::lock_guard<std::mutex> lock(g_rng_mutex);
  RngState& s = rng_states()[{int(d.kind), d.ordinal}];
  return {s.seed, s.offset++};
}

}  // namespace

Tensor::Tensor(std::shared_ptr<BackendStorage> storage, Layout layout, DType dtype, Device device)
    : storage_(std::move(storage)), layout_(std::move(layout)), dtype_(dtype), device_(device) {}

// --- creation ------------------------------------------------------------------

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  auto s = backend_device(device).alloc(front::check_shape("empty", shape, dtype), dtype);
  return Tensor(std::move(s), Layout(shape), dtype, device);
}

Tensor Tensor::zeros(const Shape& shape, DType dtype, Device device) {
  auto s = backend_device(device).zeros(front::check_shape("zeros", shape, dtype), dtype);
  return Tensor(std::move(s), Layout(shape), dtype, device);
}

Tensor Tensor::full(Scalar value, const Shape& shape, DType dtype, Device device) {
  front::check_shape("full", shape, dtype);
  Tensor t = empty(shape, dtype, device);
  if (t.elem_count() > 0) t.storage_->const_set(value, t.layout_);
  return t;
}

Tensor Tensor::ones(const Shape& shape, DType dtype, Device device) { return full(Scalar(1.0), shape, dtype, device); }

Tensor Tensor::arange(double start, double end, double step, DType dtype, Device device) {
  if (step == 0.0 || !std::isfinite(start) || !std::isfinite(end) || !std::isfinite(step)) {
    throw_error(ErrorKind::InvalidArgument, "arange",
                fmt::format("start {} end {} step {}: step must be non-zero and all finite", start, end, step));
  }
  // ceil(span) elements; a span beyond 2^63 (or infinite: end - start can overflow) is
  // refused before it converts to an integer.
  const double span = (end - start) / step;
  if (!(span < 0x1p63)) {
    throw_error(ErrorKind::InvalidArgument, "arange",
                fmt::format("start {} end {} step {}: {} elements exceed 2^63-1", start, end, step, span));
  }
  const size_t n = span > 0 ? size_t(std::ceil(span)) : 0;
  const Shape shape{n};
  front::check_shape("arange", shape, DType::F64);  // the values are built in f64 on the host
  front::check_shape("arange", shape, dtype);
  // A malloc'd buffer: its failure is an OutOfMemory error (as the storage's own allocation is).
  std::unique_ptr<double, decltype(&std::free)> v(static_cast<double*>(std::malloc(n * sizeof(double))),
                                                  &std::free);
  if (n > 0 && !v) {
    throw_error(ErrorKind::OutOfMemory, "arange",
                fmt::format("cannot allocate {} f64 values ({} bytes) on the host", n, n * sizeof(double)));
  }
  for (size_t i = 0; i < n; ++i) v.get()[i] = start + double(i) * step;
  return from_bytes(v.get(), n, shape, DType::F64, Device::cpu()).to_dtype(dtype).to_device(device);
}

Tensor Tensor::from_bytes(const void* data, size_t count, const Shape& shape, DType dtype, Device device) {
  if (count != front::check_shape("from_vector", shape, dtype)) {
    throw_error(ErrorKind::ShapeMismatch, "from_vector",
                fmt::format("{} elements given for shape {} ({} elements) {}", count, shape.str(),
                            shape.elem_count(), dtype_name(dtype)));
  }
  auto s = backend_device(device).from_host(data, count, dtype);
  return Tensor(std::move(s), Layout(shape), dtype, device);
}

Tensor Tensor::rand(const Shape& shape, DType dtype, Device device, double lo, double hi) {
  if (!is_float(dtype)) throw_unsupported_dtype("rand", dtype);
  if (!(lo <= hi) || !std::isfinite(lo) || !std::isfinite(hi)) {
    throw_error(ErrorKind::InvalidArgument, "rand", fmt::format("bounds [{}, {}) {}: need finite lo <= hi", lo, hi,
                                                                dtype_name(dtype)));
  }
  auto [seed, offset] = next_rng(device);
  auto s = backend_device(device).rand_uniform(front::check_shape("rand", shape, dtype), dtype, lo, hi, seed,
                                               offset);
  return Tensor(std::move(s), Layout(shape), dtype, device);
}

Tensor Tensor::randn(const Shape& shape, DType dtype, Device device, double mean, double std) {
  if (!is_float(dtype)) throw_unsupported_dtype("randn", dtype);
  if (!(std >= 0) || !std::isfinite(mean) || !std::isfinite(std)) {
    throw_error(ErrorKind::InvalidArgument, "randn",
                fmt::format("mean {} std {} {}: need finite mean and std >= 0", mean, std, dtype_name(dtype)));
  }
  auto [seed, offset] = next_rng(device);
  auto s = backend_device(device).rand_normal(front::check_shape("randn", shape, dtype), dtype, mean, std,
                                              seed, offset);
  return Tensor(std::move(s), Layout(shape), dtype, device);
}

void Tensor::manual_seed(uint64_t seed, Device device) {
  std::lock_guard<std::mutex> lock(g_rng_mutex);
  rng_states()[{int(device.kind), device.ordinal}] = RngState{seed, 0};
}

// --- host transfer -----------------------------------------------------------------

void Tensor::check_host_type(DType expected, const char* op) const {
  front::check_defined(op, *this, "tensor");
  if (dtype_ != expected) {
    throw_error(ErrorKind::DTypeMismatch, op,
                fmt::format("tensor {} read as {}", describe(*this), dtype_name(expected)));
  }
}

void Tensor::to_bytes(void* dst) const {
  front::check_defined("to_bytes", *this, "tensor");
  if (elem_count() == 0) return;
  Tensor c = contiguous();
  c.storage_->copy_to_host(dst, c.layout_.start_offset(), c.elem_count());
}

std::vector<double> Tensor::to_f64_vector() const {
  front::check_defined("to_f64_vector", *this, "tensor");
  return dispatch_dtype(dtype_, "to_f64_vector", [&]<class T>() {
    std::vector<T> raw(elem_count());
    to_bytes(raw.data());
    std::vector<double> out(raw.size());
    for (size_t i = 0; i < raw.size(); ++i) out[i] = convert<double, T>(raw[i]);
    return out;
  });
}

double Tensor::item() const {
  if (elem_count() != 1) {
    throw_error(ErrorKind::ShapeMismatch, "item", fmt::format("tensor {} has {} elements, not 1", describe(*this),
                                                              elem_count()));
  }
  return to_f64_vector()[0];
}

Tensor Tensor::to_device(Device device) const {
  front::check_defined("to_device", *this, "tensor");
  if (device == device_) return *this;
  BackendDevice& target = backend_device(device);
  Tensor c = contiguous();
  std::vector<unsigned char> host(c.elem_count() * dtype_size(dtype_));
  if (!host.empty()) c.storage_->copy_to_host(host.data(), c.layout_.start_offset(), c.elem_count());
  auto s = target.from_host(host.data(), c.elem_count(), dtype_);
  return Tensor(std::move(s), Layout(shape()), dtype_, device);
}

// --- properties ----------------------------------------------------------------

size_t Tensor::dim(int64_t d) const { return dims()[resolve_dim(d, rank(), "dim")]; }

// --- views ------------------------------------------------------------------------

Tensor Tensor::narrow(int64_t dim, size_t start, size_t len) const {
  front::check_defined("narrow", *this, "tensor");
  size_t d = resolve_dim(dim, rank(), "narrow");
  if (start > dims()[d] || len > dims()[d] - start) {
    throw_error(ErrorKind::IndexOutOfRange, "narrow",
                fmt::format("start {} len {} past the end of dim {} (size {}) of {}", start, len, d, dims()[d],
                            describe(*this)));
  }
  return Tensor(storage_, layout_.narrow(d, start, len), dtype_, device_);
}

Tensor Tensor::transpose(int64_t d0, int64_t d1) const {
  front::check_defined("transpose", *this, "tensor");
  size_t a = resolve_dim(d0, rank(), "transpose"), b = resolve_dim(d1, rank(), "transpose");
  return Tensor(storage_, layout_.transpose(a, b), dtype_, device_);
}

Tensor Tensor::t() const {
  if (rank() < 2) {
    throw_error(ErrorKind::DimOutOfRange, "t", fmt::format("tensor {} has rank < 2", describe(*this)));
  }
  return transpose(-2, -1);
}

Tensor Tensor::permute(const std::vector<int64_t>& order) const {
  front::check_defined("permute", *this, "tensor");
  if (order.size() != rank()) {
    throw_error(ErrorKind::ShapeMismatch, "permute",
                fmt::format("{} dims given for tensor {}", order.size(), describe(*this)));
  }
  std::vector<size_t> o(order.size());
  std::vector<bool> seen(order.size(), false);
  for (size_t k = 0; k < order.size(); ++k) {
    o[k] = resolve_dim(order[k], rank(), "permute");
    if (seen[o[k]]) {
      throw_error(ErrorKind::InvalidArgument, "permute",
                  fmt::format("dim {} repeated in the order for {}", o[k], describe(*this)));
    }
    seen[o[k]] = true;
  }
  return Tensor(storage_, layout_.permute(o), dtype_, device_);
}

Tensor Tensor::broadcast_as(const Shape& shape) const {
  front::check_defined("broadcast_as", *this, "tensor");
  front::check_shape("broadcast_as", shape, dtype_);
  return Tensor(storage_, layout_.broadcast_as(shape), dtype_, device_);
}

Tensor Tensor::broadcast_left(const std::vector<size_t>& left_dims) const {
  std::vector<size_t> d(left_dims);
  d.insert(d.end(), dims().begin(), dims().end());
  return broadcast_as(Shape(d));
}

Tensor Tensor::squeeze(int64_t dim) const {
  front::check_defined("squeeze", *this, "tensor");
  size_t d = resolve_dim(dim, rank(), "squeeze");
  if (dims()[d] != 1) {
    throw_error(ErrorKind::ShapeMismatch, "squeeze",
                fmt::format("dim {} of {} has size {}, not 1", d, describe(*this), dims()[d]));
  }
  return Tensor(storage_, layout_.squeeze(d), dtype_, device_);
}

Tensor Tensor::unsqueeze(int64_t dim) const {
  front::check_defined("unsqueeze", *this, "tensor");
  size_t d = resolve_dim(dim, rank() + 1, "unsqueeze");
  return Tensor(storage_, layout_.unsqueeze(d), dtype_, device_);
}

Tensor Tensor::reshape(const Shape& shape) const {
  front::check_defined("reshape", *this, "tensor");
  if (front::check_shape("reshape", shape, dtype_) != elem_count()) {
    throw_error(ErrorKind::ShapeMismatch, "reshape",
                fmt::format("cannot reshape {} ({} elements) to {} ({} elements)", describe(*this), elem_count(),
                            shape.str(), shape.elem_count()));
  }
  if (is_contiguous()) return Tensor(storage_, Layout(shape, layout_.start_offset()), dtype_, device_);
  return contiguous().reshape(shape);
}

Tensor Tensor::flatten(int64_t start, int64_t end) const {
  front::check_defined("flatten", *this, "tensor");
  if (rank() == 0) return reshape(Shape{1});
  size_t s = resolve_dim(start, rank(), "flatten"), e = resolve_dim(end, rank(), "flatten");
  if (s > e) {
    throw_error(ErrorKind::InvalidArgument, "flatten",
                fmt::format("start dim {} after end dim {} for {}", s, e, describe(*this)));
  }
  std::vector<size_t> d(dims().begin(), dims().begin() + std::ptrdiff_t(s));
  size_t mid = 1;
  for (size_t k = s; k <= e; ++k) mid *= dims()[k];
  d.push_back(mid);
  d.insert(d.end(), dims().begin() + std::ptrdiff_t(e) + 1, dims().end());
  return reshape(Shape(d));
}

std::vector<Tensor> Tensor::chunk(size_t n, int64_t dim) const {
  front::check_defined("chunk", *this, "tensor");
  size_t d = resolve_dim(dim, rank(), "chunk");
  if (n == 0) throw_error(ErrorKind::InvalidArgument, "chunk", fmt::format("0 chunks of {}", describe(*this)));
  size_t size = dims()[d];
  std::vector<Tensor> out;
  if (size == 0) return {*this};
  size_t per = (size + n - 1) / n;
  for (size_t start = 0; start < size; start += per) out.push_back(narrow(int64_t(d), start, std::min(per, size - start)));
  return out;
}

Tensor Tensor::copy() const {
  front::check_defined("copy", *this, "tensor");
  auto s = backend_device(device_).alloc(elem_count(), dtype_);
  if (elem_count() > 0) storage_->copy_strided_src(*s, 0, layout_);
  return Tensor(std::move(s), Layout(shape()), dtype_, device_);
}

Tensor Tensor::contiguous() const {
  front::check_defined("contiguous", *this, "tensor");
  if (is_contiguous()) return *this;
  return copy();
}

// cat along `dim` as one copy2d per input: each input is d1 rows of d2 contiguous
// elements landing at column offset `col` of rows of width out_d2 in the output.
Tensor Tensor::cat(const std::vector<Tensor>& ts, int64_t dim) {
  if (ts.empty()) throw_error(ErrorKind::InvalidArgument, "cat", "no tensors given");
  const Tensor& first = ts[0];
  front::check_defined("cat", first, "tensor 0");
  size_t d = resolve_dim(dim, first.rank(), "cat");
  std::vector<size_t> out_dims = first.dims();
  out_dims[d] = 0;
  for (size_t i = 0; i < ts.size(); ++i) {
    const Tensor& t = ts[i];
    front::check_defined("cat", t, "tensor");
    front::check_same_device("cat", first, t);
    front::check_same_dtype("cat", first, t);
    bool ok = t.rank() == first.rank();
    for (size_t k = 0; ok && k < t.rank(); ++k) ok = k == d || t.dims()[k] == first.dims()[k];
    if (!ok) {
      throw_error(ErrorKind::ShapeMismatch, "cat",
                  fmt::format("tensor {} is {}, tensor 0 is {}: dims differ outside dim {}", i, describe(t),
                              describe(first), d));
    }
    out_dims[d] = checked_add(out_dims[d], t.dims()[d], ErrorKind::ShapeMismatch, "cat", "the joined dim");
  }
  Shape out_shape(out_dims);
  front::check_shape("cat", out_shape, first.dtype());
  auto out = backend_device(first.device()).alloc(out_shape.elem_count(), first.dtype());
  size_t d1 = 1, inner = 1;
  for (size_t k = 0; k < d; ++k) d1 *= out_dims[k];
  for (size_t k = d + 1; k < out_dims.size(); ++k) inner *= out_dims[k];
  size_t out_d2 = out_dims[d] * inner, col = 0;
  for (const Tensor& t : ts) {
    size_t d2 = t.dims()[d] * inner;
    if (d1 > 0 && d2 > 0) {
      Tensor c = t.contiguous();
      c.storage_->copy2d(*out, d1, d2, d2, out_d2, c.layout_.start_offset(), col);
    }
    col += d2;
  }
  return Tensor(std::move(out), Layout(out_shape), first.dtype(), first.device());
}

Tensor Tensor::stack(const std::vector<Tensor>& ts, int64_t dim) {
  if (ts.empty()) throw_error(ErrorKind::InvalidArgument, "stack", "no tensors given");
  front::check_defined("stack", ts[0], "tensor 0");
  size_t d = resolve_dim(dim, ts[0].rank() + 1, "stack");
  std::vector<Tensor> us;
  for (size_t i = 0; i < ts.size(); ++i) {
    front::check_defined("stack", ts[i], "tensor");
    if (ts[i].shape() != ts[0].shape()) {
      throw_error(ErrorKind::ShapeMismatch, "stack",
                  fmt::format("tensor {} is {}, tensor 0 is {}", i, describe(ts[i]), describe(ts[0])));
    }
    us.push_back(ts[i].unsqueeze(int64_t(d)));
  }
  return cat(us, int64_t(d));
}

void Tensor::fill_(Scalar v) {
  front::check_defined("fill_", *this, "tensor");
  for (size_t k = 0; k < rank(); ++k) {
    if (dims()[k] > 1 && layout_.strides()[k] == 0) {
      throw_error(ErrorKind::InvalidArgument, "fill_",
                  fmt::format("{} ({}) is a broadcast view: dim {} repeats one element {} times; fill the "
                              "tensor it was broadcast from",
                              describe(*this), layout_.str(), k, dims()[k]));
    }
  }
  if (elem_count() > 0) storage_->const_set(v, layout_);
}

void Tensor::slice_set_(const Tensor& src, int64_t dim, size_t start) {
  front::check_defined("slice_set_", *this, "tensor");
  front::check_defined("slice_set_", src, "src");
  front::check_same_device("slice_set_", *this, src);
  front::check_same_dtype("slice_set_", *this, src);
  size_t d = resolve_dim(dim, rank(), "slice_set_");
  bool ok = src.rank() == rank();
  for (size_t k = 0; ok && k < rank(); ++k) ok = k == d || src.dims()[k] == dims()[k];
  if (!ok || start > dims()[d] || src.dims()[d] > dims()[d] - start) {
    throw_error(ErrorKind::ShapeMismatch, "slice_set_",
                fmt::format("src {} does not fit in {} at dim {} start {}", describe(src), describe(*this), d, start));
  }
  if (!is_contiguous()) {
    throw_error(ErrorKind::InvalidArgument, "slice_set_", fmt::format("destination {} is not contiguous", describe(*this)));
  }
  size_t d1 = 1, inner = 1;
  for (size_t k = 0; k < d; ++k) d1 *= dims()[k];
  for (size_t k = d + 1; k < rank(); ++k) inner *= dims()[k];
  size_t d2 = src.dims()[d] * inner;
  if (d1 == 0 || d2 == 0) return;
  // A source that shares elements with the destination is copied out first (copy2d is a memcpy).
  Tensor c = front::overlaps(*this, src) ? src.copy() : src.contiguous();
  c.storage_->copy2d(*storage_, d1, d2, d2, dims()[d] * inner, c.layout_.start_offset(),
                     layout_.start_offset() + start * inner);
}

// --- shared checks ------------------------------------------------------------------

namespace front {

std::string describe(const Tensor& t) {
  if (!t.defined()) return "(undefined)";
  return fmt::format("{} {}", t.shape().str(), dtype_name(t.dtype()));
}

void check_defined(const char* op, const Tensor& t, const char* what) {
  if (!t.defined()) throw_error(ErrorKind::InvalidArgument, op, fmt::format("{} is an undefined tensor", what));
}

void check_same_device(const char* op, const Tensor& a, const Tensor& b) {
  if (a.device() != b.device()) {
    throw_error(ErrorKind::DeviceMismatch, op,
                fmt::format("{} on {} and {} on {}", describe(a), a.device().str(), describe(b), b.device().str()));
  }
}

void check_same_dtype(const char* op, const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype()) {
    throw_error(ErrorKind::DTypeMismatch, op, fmt::format("lhs {} rhs {}: dtypes differ", describe(a), describe(b)));
  }
}

void check_dtype_in(const char* op, const Tensor& t, uint32_t allowed, const char* what) {
  if ((allowed & dtype_bit(t.dtype())) == 0) {
    throw_error(ErrorKind::UnsupportedDType, op, fmt::format("{} {}: dtype {} is not supported", what, describe(t),
                                                             dtype_name(t.dtype())));
  }
}

size_t check_shape(const char* op, const Shape& shape, DType dtype) {
  uint64_t n = 0;
  if (!shape_fits(shape.dims(), dtype_size(dtype), n)) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("shape {} {} is too large: its non-zero dims times {} bytes exceed 2^63-1",
                            shape.str(), dtype_name(dtype), dtype_size(dtype)));
  }
  return n;
}

Shape broadcast_shape(const char* op, const Shape& a, const Shape& b) {
  size_t r = std::max(a.rank(), b.rank());
  std::vector<size_t> out(r);
  for (size_t k = 0; k < r; ++k) {
    size_t da = k + a.rank() >= r ? a[k + a.rank() - r] : 1;
    size_t db = k + b.rank() >= r ? b[k + b.rank() - r] : 1;
    if (da != db && da != 1 && db != 1) {
      throw_error(ErrorKind::ShapeMismatch, op,
                  fmt::format("shapes {} and {} are not broadcastable", a.str(), b.str()));
    }
    out[k] = da == 1 ? db : da;
  }
  return Shape(out);
}

std::vector<size_t> resolve_dims(const char* op, const std::vector<int64_t>& dims, size_t rank) {
  std::vector<size_t> v;
  for (int64_t d : dims) v.push_back(resolve_dim(d, rank, op));
  std::sort(v.begin(), v.end());
  if (std::adjacent_find(v.begin(), v.end()) != v.end()) {
    throw_error(ErrorKind::InvalidArgument, op, "a dim is listed twice");
  }
  return v;
}

bool overlaps(const Tensor& a, const Tensor& b) {
  if (a.storage() != b.storage() || a.elem_count() == 0 || b.elem_count() == 0) return false;
  const Layout &la = a.layout(), &lb = b.layout();
  return la.start_offset() < lb.storage_extent() && lb.start_offset() < la.storage_extent();
}

Tensor wrap(StoragePtr s, const Shape& shape, DType dtype, Device device) {
  return Tensor(std::move(s), Layout(shape), dtype, device);
}

}  // namespace front
}  // namespace wick
