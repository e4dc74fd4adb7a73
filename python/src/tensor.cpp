// wick.Tensor: properties, creation, views, elementwise ops and operators,
// reductions, indexing, matmul / convolution / resampling, and wick.nn. Each method
// is the C++ method of the same name (include/wick/tensor.h); arguments take
// Python's forms (dims as ints or tuples, dtypes and devices by name, numbers as
// weak scalars). Indexing, NumPy conversions and true division live in
// python/wick/__init__.py.
#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cmath>

#include "common.h"

namespace wick::py {

namespace {

using namespace nb::literals;

// A shape given as f(2, 3) or f((2, 3)) or f([2, 3]).
std::vector<size_t> shape_from_args(const nb::args& args, const char* what) {
  if (args.size() == 1 && !PyLong_Check(args[0].ptr()) && !PyIndex_Check(args[0].ptr())) {
    return to_shape(args[0], what);
  }
  return to_shape(args, what);
}

std::vector<int64_t> ints_from_args(const nb::args& args, const char* what) {
  if (args.size() == 1 && !PyLong_Check(args[0].ptr()) && !PyIndex_Check(args[0].ptr())) {
    return to_int_list(args[0], what);
  }
  return to_int_list(args, what);
}

// The other operand of a binary operator: a Tensor, a weak scalar, or (through
// wick._as_operand: NumPy arrays, lists) a tensor on `device`. Null when the object
// is none of these (the operator then returns NotImplemented).
struct Operand {
  std::optional<Tensor> tensor;
  std::optional<Scalar> scalar;
};
Operand operand(nb::handle h, Device device) {
  if (nb::isinstance<Tensor>(h)) return {nb::cast<Tensor>(h), std::nullopt};
  if (auto s = as_scalar(h)) return {std::nullopt, s};
  nb::object t = nb::module_::import_("wick").attr("_as_operand")(h, device);
  if (t.is_none()) return {};
  return {nb::cast<Tensor>(t), std::nullopt};
}

nb::object not_implemented() { return nb::borrow(Py_NotImplemented); }

nb::object binop(const Tensor& a, nb::handle b, BinaryOp op, bool reflected) {
  Operand o = operand(b, a.device());
  if (o.tensor) return wrap(reflected ? o.tensor->binary(op, a) : a.binary(op, *o.tensor));
  if (o.scalar) return wrap(reflected ? binary(op, *o.scalar, a) : binary(op, a, *o.scalar));
  return not_implemented();
}

nb::object cmpop(const Tensor& a, nb::handle b, CmpOp op) {
  Operand o = operand(b, a.device());
  if (o.tensor) return wrap(a.cmp(op, *o.tensor));
  if (o.scalar) return wrap(cmp(op, a, *o.scalar));
  return not_implemented();
}

// A Tensor or a number (broadcast as a weak scalar) where an op takes either.
Tensor tensor_or_full(nb::handle h, const Tensor& like, const char* what) {
  if (nb::isinstance<Tensor>(h)) return nb::cast<Tensor>(h);
  Scalar s = to_scalar(h, what);
  return Tensor::full(s, Shape{}, like.dtype(), like.device());
}

double item_of(const Tensor& t, const char* op) {
  if (t.elem_count() != 1) {
    fail(ErrorKind::InvalidArgument, op,
         "a tensor of " + std::to_string(t.elem_count()) + " elements " + t.shape().str() +
             " has no single value (take an element first)");
  }
  return t.item();
}

nb::object python_item(const Tensor& t) {
  double v = item_of(t, "item");
  if (is_float(t.dtype())) return nb::float_(v);
  if (t.dtype() == DType::I64) return nb::int_(t.to_vector<int64_t>()[0]);
  return nb::int_(int64_t(v));
}

nb::object reduce_dims(const Tensor& t, nb::handle dim, bool keepdim, ReduceOp op) {
  if (dim.is_none() && !keepdim) {
    switch (op) {
      case ReduceOp::Sum:
        return wrap(t.sum_all());
      case ReduceOp::Min:
        return wrap(t.min());
      case ReduceOp::Max:
        return wrap(t.max());
      case ReduceOp::ArgMin:
        return wrap(t.argmin());
      case ReduceOp::ArgMax:
        return wrap(t.argmax());
    }
  }
  return wrap(t.reduce(op, to_dims(dim, t.rank()), keepdim));
}

std::array<size_t, 2> pair_arg(nb::handle h, const char* what) {
  std::vector<size_t> v = to_shape(h, what);
  if (v.size() == 1) return {v[0], v[0]};
  if (v.size() != 2)
    fail(ErrorKind::InvalidArgument, what, "needs one or two sizes, got " + std::to_string(v.size()));
  return {v[0], v[1]};
}

void bind_unary(nb::class_<Tensor>& c) {
#define WICK_PY_UNARY(op, name, dtypes) \
  c.def(                                \
      #name, [](const Tensor& t) { return t.unary(UnaryOp::op); }, "Elementwise " #name ".");
  WICK_UNARY_OPS(WICK_PY_UNARY)
#undef WICK_PY_UNARY
}

}  // namespace

void bind_tensor(nb::module_& m) {
  nb::class_<Tensor> c(
      m, "Tensor",
      "An n-dimensional array on a device (include/wick/tensor.h). wick.tensor(data) makes one "
      "from Python values or any array; operators broadcast and promote as NumPy's do.");
  c.def(
      "__init__",
      [](Tensor* self, nb::handle data, nb::handle dtype, nb::handle device) {
        nb::object t =
            nb::module_::import_("wick").attr("tensor")(data, "dtype"_a = dtype, "device"_a = device);
        new (self) Tensor(nb::cast<Tensor>(t));
      },
      "data"_a, "dtype"_a = nb::none(), "device"_a = nb::none());

  // ---- properties --------------------------------------------------------------
  c.def_prop_ro("shape", [](const Tensor& t) {
    nb::list l;
    for (size_t d : t.dims()) l.append(d);
    return nb::tuple(l);
  });
  c.def_prop_ro("ndim", &Tensor::rank);
  c.def_prop_ro("dtype", &Tensor::dtype);
  c.def_prop_ro("device", &Tensor::device);
  c.def_prop_ro("itemsize", [](const Tensor& t) { return dtype_size(t.dtype()); });
  c.def_prop_ro("nbytes", [](const Tensor& t) { return t.elem_count() * dtype_size(t.dtype()); });
  c.def_prop_ro(
      "strides",
      [](const Tensor& t) {
        nb::list l;
        for (size_t s : t.layout().strides()) l.append(s);
        return nb::tuple(l);
      },
      "Strides in elements (PyTorch's stride(), not NumPy's bytes).");
  c.def_prop_ro("storage_offset", [](const Tensor& t) { return t.layout().start_offset(); });
  c.def_prop_ro(
      "data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()); },
      "The address of element 0 (a device pointer on a GPU).");
  c.def_prop_ro(
      "_storage_extent", [](const Tensor& t) { return t.layout().storage_extent(); },
      "The largest storage index the tensor reaches, plus one.");
  c.def(
      "as_strided",
      [](const Tensor& t, nb::handle shape, nb::handle strides, std::optional<size_t> offset) {
        std::vector<size_t> dims = to_shape(shape, "as_strided"), st = to_shape(strides, "as_strided");
        size_t off = offset.value_or(t.layout().start_offset());
        if (dims.size() != st.size()) {
          fail(ErrorKind::InvalidArgument, "as_strided",
               std::to_string(dims.size()) + " sizes but " + std::to_string(st.size()) + " strides");
        }
        Layout l(dims, st, off);
        // Within the elements this tensor reaches (its storage may hold more, but wick does
        // not say how much).
        if (l.elem_count() > 0 &&
            (off < t.layout().start_offset() || l.storage_extent() > t.layout().storage_extent())) {
          fail(ErrorKind::IndexOutOfRange, "as_strided",
               l.str() + " reaches outside the elements " + std::to_string(t.layout().start_offset()) +
                   " .. " + std::to_string(t.layout().storage_extent()) + " of the tensor's storage that " +
                   t.layout().str() + " reaches");
        }
        return Tensor(t.storage(), l, t.dtype(), t.device());
      },
      "size"_a, "stride"_a, "storage_offset"_a = nb::none(),
      "A view of the same storage with the given sizes, strides (in elements) and storage offset, inside the "
      "range of storage this tensor reaches.");
  c.def(
      "tolist",
      [](const Tensor& t) -> nb::object {
        // Exact for every dtype: i64 through int64, the others through double.
        const size_t n = t.elem_count();
        std::vector<nb::object> flat(n);
        if (t.dtype() == DType::I64) {
          std::vector<int64_t> v = t.contiguous().to_vector<int64_t>();
          for (size_t i = 0; i < n; ++i) flat[i] = nb::int_(v[i]);
        } else {
          std::vector<double> v = t.to_f64_vector();
          for (size_t i = 0; i < n; ++i)
            flat[i] =
                is_float(t.dtype()) ? nb::object(nb::float_(v[i])) : nb::object(nb::int_(int64_t(v[i])));
        }
        if (t.rank() == 0) return flat[0];
        // Nest row-major: innermost lists first.
        std::vector<nb::object> level = std::move(flat);
        for (size_t k = t.rank(); k-- > 0;) {
          size_t d = t.dims()[k];
          std::vector<nb::object> up;
          size_t groups = 1;
          for (size_t j = 0; j < k; ++j) groups *= t.dims()[j];
          for (size_t g = 0; g < groups; ++g) {
            nb::list l;
            for (size_t i = 0; i < d; ++i) l.append(level[g * d + i]);
            up.push_back(l);
          }
          level = std::move(up);
        }
        return level[0];
      },
      "The values as nested Python lists (a number for a 0-d tensor).");
  c.def("numel", &Tensor::elem_count);
  c.def(
      "dim", [](const Tensor& t, int64_t d) { return t.dim(d); }, "d"_a, "The size of dim d.");
  c.def("is_contiguous", &Tensor::is_contiguous);
  c.def("__len__", [](const Tensor& t) {
    if (t.rank() == 0) throw nb::type_error("len() of a 0-d tensor");
    return t.dims()[0];
  });
  c.def("__repr__", &Tensor::str);
  c.def("__str__", &Tensor::str);
  c.def("item", &python_item, "The only element, as a Python number.");
  c.def("__float__", [](const Tensor& t) { return item_of(t, "float"); });
  c.def("__int__", [](const Tensor& t) { return nb::int_(python_item(t)); });
  c.def("__index__", [](const Tensor& t) {
    if (is_float(t.dtype()))
      throw nb::type_error("only integer tensors of one element can be used as an index");
    return nb::int_(python_item(t));
  });
  c.def("__bool__", [](const Tensor& t) {
    if (t.elem_count() != 1) {
      throw nb::value_error(("the truth value of a tensor of " + std::to_string(t.elem_count()) +
                             " elements is ambiguous (use .any() or .all())")
                                .c_str());
    }
    return t.item() != 0.0;
  });
  c.def("__hash__", [](nb::handle self) { return reinterpret_cast<intptr_t>(self.ptr()) >> 4; });
  c.def("__copy__", [](const Tensor& t) { return t.copy(); });
  c.def(
      "__deepcopy__", [](const Tensor& t, nb::handle) { return t.copy(); }, "memo"_a);
  c.def(
      "to_bytes",
      [](const Tensor& t) {
        std::string buf(t.elem_count() * dtype_size(t.dtype()), '\0');
        t.to_bytes(buf.data());
        return nb::bytes(buf.data(), buf.size());
      },
      "The elements, row-major, as bytes.");

  // ---- device and dtype --------------------------------------------------------
  c.def(
      "to_device", [](const Tensor& t, nb::handle d) { return t.to_device(to_device(d)); }, "device"_a);
  c.def(
      "to_dtype", [](const Tensor& t, nb::handle d) { return t.to_dtype(to_dtype(d)); }, "dtype"_a);
  c.def(
      "astype", [](const Tensor& t, nb::handle d) { return t.to_dtype(to_dtype(d)); }, "dtype"_a);
  c.def("cpu", [](const Tensor& t) { return t.to_device(Device::cpu()); });

  // ---- views and shape ops -----------------------------------------------------
  c.def("narrow", &Tensor::narrow, "dim"_a, "start"_a, "length"_a);
  c.def("transpose", &Tensor::transpose, "dim0"_a, "dim1"_a);
  c.def("t", &Tensor::t, "The transpose of the last two dims.");
  c.def_prop_ro("mT", &Tensor::t, "The transpose of the last two dims.");
  c.def_prop_ro(
      "T",
      [](const Tensor& t) {
        std::vector<int64_t> order(t.rank());
        for (size_t i = 0; i < t.rank(); ++i) order[i] = int64_t(t.rank() - 1 - i);
        return t.permute(order);
      },
      "The dims reversed (NumPy's .T).");
  c.def("permute", [](const Tensor& t, nb::args dims) { return t.permute(ints_from_args(dims, "permute")); });
  c.def("reshape", [](const Tensor& t, nb::args args) {
    std::vector<int64_t> want = ints_from_args(args, "reshape");
    // One -1 takes what the others leave (NumPy's rule).
    size_t known = 1;
    int infer = -1;
    for (size_t i = 0; i < want.size(); ++i) {
      if (want[i] == -1 && infer < 0) {
        infer = int(i);
      } else if (want[i] < 0) {
        fail(ErrorKind::InvalidArgument, "reshape",
             "bad size " + std::to_string(want[i]) + " in the new shape");
      } else {
        known *= size_t(want[i]);
      }
    }
    std::vector<size_t> shape(want.size());
    for (size_t i = 0; i < want.size(); ++i) shape[i] = size_t(want[i]);
    if (infer >= 0) {
      if (known == 0 || t.elem_count() % known != 0) {
        fail(ErrorKind::ShapeMismatch, "reshape",
             t.shape().str() + " (" + std::to_string(t.elem_count()) +
                 " elements) cannot take a shape with -1 and " + std::to_string(known) +
                 " elements in the other dims");
      }
      shape[size_t(infer)] = t.elem_count() / known;
    }
    return t.reshape(Shape(shape));
  });
  c.def("flatten", &Tensor::flatten, "start_dim"_a = 0, "end_dim"_a = -1);
  c.def(
      "squeeze",
      [](const Tensor& t, nb::handle dim) {
        if (!dim.is_none()) {
          std::vector<int64_t> ds = to_int_list(dim, "squeeze");
          std::vector<size_t> resolved;
          for (int64_t d : ds) resolved.push_back(resolve_dim(d, t.rank(), "squeeze"));
          std::sort(resolved.rbegin(), resolved.rend());
          Tensor r = t;
          for (size_t d : resolved) r = r.squeeze(int64_t(d));
          return r;
        }
        Tensor r = t;  // every dim of size 1
        for (size_t i = t.rank(); i-- > 0;) {
          if (t.dims()[i] == 1) r = r.squeeze(int64_t(i));
        }
        return r;
      },
      "dim"_a = nb::none());
  c.def("unsqueeze", &Tensor::unsqueeze, "dim"_a);
  c.def("expand", [](const Tensor& t, nb::args sizes) { return t.expand(ints_from_args(sizes, "expand")); });
  c.def(
      "broadcast_to",
      [](const Tensor& t, nb::handle shape) {
        return t.broadcast_as(Shape(to_shape(shape, "broadcast_to")));
      },
      "shape"_a);
  c.def("repeat", [](const Tensor& t, nb::args reps) { return t.repeat(shape_from_args(reps, "repeat")); });
  c.def(
      "pad",
      [](const Tensor& t, const std::vector<std::array<size_t, 2>>& widths, nb::handle value) {
        return t.pad(widths, to_scalar(value, "pad value"));
      },
      "pad_width"_a, "value"_a = 0,
      "Constant padding: one (before, after) pair per dim (NumPy's pad_width).");
  c.def(
      "split",
      [](const Tensor& t, nb::handle size, int64_t dim) {
        if (PyLong_Check(size.ptr())) return t.split(nb::cast<size_t>(size), dim);
        return t.split_with_sizes(to_shape(size, "split"), dim);
      },
      "split_size_or_sections"_a, "dim"_a = 0);
  c.def("chunk", &Tensor::chunk, "chunks"_a, "dim"_a = 0);
  c.def("tril", &Tensor::tril, "diagonal"_a = 0);
  c.def("triu", &Tensor::triu, "diagonal"_a = 0);
  c.def("contiguous", &Tensor::contiguous);
  c.def("copy", &Tensor::copy, "A new contiguous tensor with the same values.");
  c.def("clone", &Tensor::copy);
  c.def(
      "fill_",
      [](Tensor& t, nb::handle v) {
        t.fill_(to_scalar(v, "fill value"));
        return t;
      },
      "value"_a, "In place: every element = value (writes through shared storage).");
  c.def("slice_set_", &Tensor::slice_set_, "src"_a, "dim"_a, "start"_a);

  // ---- elementwise ---------------------------------------------------------------
  bind_unary(c);
  c.def("affine", &Tensor::affine, "mul"_a, "add"_a, "x * mul + add");
  c.def("elu", &Tensor::elu, "alpha"_a = 1.0);
  c.def(
      "pow",
      [](const Tensor& t, nb::handle e) {
        if (nb::isinstance<Tensor>(e)) return t.pow(nb::cast<Tensor>(e));
        return t.pow(to_scalar(e, "exponent"));
      },
      "exponent"_a);
  c.def(
      "clamp",
      [](const Tensor& t, nb::handle lo, nb::handle hi) {
        if (lo.is_none() && hi.is_none()) fail(ErrorKind::InvalidArgument, "clamp", "needs min or max");
        if (nb::isinstance<Tensor>(lo) || nb::isinstance<Tensor>(hi)) {
          if (lo.is_none()) return t.minimum(tensor_or_full(hi, t, "max"));
          if (hi.is_none()) return t.maximum(tensor_or_full(lo, t, "min"));
          return t.clamp(tensor_or_full(lo, t, "min"), tensor_or_full(hi, t, "max"));
        }
        if (lo.is_none()) return binary(BinaryOp::Minimum, t, to_scalar(hi, "max"));
        if (hi.is_none()) return binary(BinaryOp::Maximum, t, to_scalar(lo, "min"));
        return t.clamp(to_scalar(lo, "min"), to_scalar(hi, "max"));
      },
      "min"_a = nb::none(), "max"_a = nb::none());
  c.def(
      "maximum", [](const Tensor& t, nb::handle o) { return binop(t, o, BinaryOp::Maximum, false); },
      "other"_a);
  c.def(
      "minimum", [](const Tensor& t, nb::handle o) { return binop(t, o, BinaryOp::Minimum, false); },
      "other"_a);
  c.def(
      "masked_fill",
      [](const Tensor& t, const Tensor& mask, nb::handle v) {
        return t.masked_fill(mask, to_scalar(v, "fill value"));
      },
      "mask"_a, "value"_a);
  c.def(
      "where",
      [](const Tensor& cond, nb::handle a, nb::handle b) {
        bool ta = nb::isinstance<Tensor>(a), tb = nb::isinstance<Tensor>(b);
        if (ta && tb) return cond.where_cond(nb::cast<Tensor>(a), nb::cast<Tensor>(b));
        if (ta) return cond.where_cond(nb::cast<Tensor>(a), to_scalar(b, "where's y"));
        if (tb) return cond.where_cond(to_scalar(a, "where's x"), nb::cast<Tensor>(b));
        return cond.where_cond(to_scalar(a, "where's x"), to_scalar(b, "where's y"));
      },
      "x"_a, "y"_a, "x where this condition is non-zero, else y.");

  // ---- operators (NumPy's broadcasting and promotion; numbers are weak scalars) --
  c.def("__add__", [](const Tensor& a, nb::handle b) { return binop(a, b, BinaryOp::Add, false); });
  c.def("__radd__", [](const Tensor& a, nb::handle b) { return binop(a, b, BinaryOp::Add, true); });
  c.def("__sub__", [](const Tensor& a, nb::handle b) { return binop(a, b, BinaryOp::Sub, false); });
  c.def("__rsub__", [](const Tensor& a, nb::handle b) { return binop(a, b, BinaryOp::Sub, true); });
  c.def("__mul__", [](const Tensor& a, nb::handle b) { return binop(a, b, BinaryOp::Mul, false); });
  c.def("__rmul__", [](const Tensor& a, nb::handle b) { return binop(a, b, BinaryOp::Mul, true); });
  c.def("__pow__", [](const Tensor& a, nb::handle b) { return binop(a, b, BinaryOp::Pow, false); });
  c.def("__rpow__", [](const Tensor& a, nb::handle b) { return binop(a, b, BinaryOp::Pow, true); });
  c.def(
      "_div", [](const Tensor& a, nb::handle b) { return binop(a, b, BinaryOp::Div, false); },
      "C++'s division: truncates on integer dtypes.");
  c.def("_rdiv", [](const Tensor& a, nb::handle b) { return binop(a, b, BinaryOp::Div, true); });
  c.def("__eq__", [](const Tensor& a, nb::handle b) { return cmpop(a, b, CmpOp::Eq); });
  c.def("__ne__", [](const Tensor& a, nb::handle b) { return cmpop(a, b, CmpOp::Ne); });
  c.def("__lt__", [](const Tensor& a, nb::handle b) { return cmpop(a, b, CmpOp::Lt); });
  c.def("__le__", [](const Tensor& a, nb::handle b) { return cmpop(a, b, CmpOp::Le); });
  c.def("__gt__", [](const Tensor& a, nb::handle b) { return cmpop(a, b, CmpOp::Gt); });
  c.def("__ge__", [](const Tensor& a, nb::handle b) { return cmpop(a, b, CmpOp::Ge); });
  c.def("__neg__", [](const Tensor& a) { return -a; });
  c.def("__pos__", [](const Tensor& a) { return a; });
  c.def("__abs__", [](const Tensor& a) { return a.abs(); });
  c.def("__matmul__", [](const Tensor& a, nb::handle b) {
    Operand o = operand(b, a.device());
    if (!o.tensor) return not_implemented();
    return wrap(a.matmul(*o.tensor));
  });
  c.def("__rmatmul__", [](const Tensor& a, nb::handle b) {
    Operand o = operand(b, a.device());
    if (!o.tensor) return not_implemented();
    return wrap(o.tensor->matmul(a));
  });
  c.attr("__array_priority__") = 1000;  // NumPy defers `ndarray + tensor` to Tensor.__radd__

  // ---- reductions, scans, sort ---------------------------------------------------
  c.def(
      "sum",
      [](const Tensor& t, nb::handle dim, bool keepdim) {
        return reduce_dims(t, dim, keepdim, ReduceOp::Sum);
      },
      "dim"_a = nb::none(), "keepdim"_a = false);
  c.def(
      "min",
      [](const Tensor& t, nb::handle dim, bool keepdim) {
        return reduce_dims(t, dim, keepdim, ReduceOp::Min);
      },
      "dim"_a = nb::none(), "keepdim"_a = false);
  c.def(
      "max",
      [](const Tensor& t, nb::handle dim, bool keepdim) {
        return reduce_dims(t, dim, keepdim, ReduceOp::Max);
      },
      "dim"_a = nb::none(), "keepdim"_a = false);
  c.def(
      "argmin",
      [](const Tensor& t, nb::handle dim, bool keepdim) {
        return reduce_dims(t, dim, keepdim, ReduceOp::ArgMin);
      },
      "dim"_a = nb::none(), "keepdim"_a = false,
      "u32 index within the row-major flattening of the reduced dims; first among ties.");
  c.def(
      "argmax",
      [](const Tensor& t, nb::handle dim, bool keepdim) {
        return reduce_dims(t, dim, keepdim, ReduceOp::ArgMax);
      },
      "dim"_a = nb::none(), "keepdim"_a = false);
  c.def(
      "mean",
      [](const Tensor& t, nb::handle dim, bool keepdim) {
        if (dim.is_none() && !keepdim) return t.mean();
        return t.mean(to_dims(dim, t.rank()), keepdim);
      },
      "dim"_a = nb::none(), "keepdim"_a = false);
  c.def(
      "var",
      [](const Tensor& t, nb::handle dim, bool keepdim, double correction) {
        return t.var(to_dims(dim, t.rank()), keepdim, correction);
      },
      "dim"_a = nb::none(), "keepdim"_a = false, "correction"_a = 1.0,
      "sum((x - mean)^2) / (n - correction): correction 1 (PyTorch's default) or 0 (NumPy's).");
  c.def(
      "std",
      [](const Tensor& t, nb::handle dim, bool keepdim, double correction) {
        return t.var(to_dims(dim, t.rank()), keepdim, correction).sqrt();
      },
      "dim"_a = nb::none(), "keepdim"_a = false, "correction"_a = 1.0);
  c.def(
      "logsumexp",
      [](const Tensor& t, nb::handle dim, bool keepdim) {
        return t.log_sum_exp(to_dims(dim, t.rank()), keepdim);
      },
      "dim"_a = nb::none(), "keepdim"_a = false);
  c.def("topk", &Tensor::topk, "k"_a, "dim"_a = -1, "largest"_a = true, "(values, u32 indices), sorted.");
  c.def("cumsum", &Tensor::cumsum, "dim"_a);
  c.def(
      "sort",
      [](const Tensor& t, int64_t dim, bool descending) {
        size_t d = resolve_dim(dim, t.rank(), "sort");
        if (d + 1 == t.rank()) return t.sort(!descending);
        auto [v, i] = t.transpose(int64_t(d), -1).sort(!descending);
        return std::pair<Tensor, Tensor>(v.transpose(int64_t(d), -1), i.transpose(int64_t(d), -1));
      },
      "dim"_a = -1, "descending"_a = false, "(values, u32 indices), stable.");
  c.def(
      "argsort",
      [](const Tensor& t, int64_t dim, bool descending) {
        size_t d = resolve_dim(dim, t.rank(), "argsort");
        if (d + 1 == t.rank()) return t.argsort(!descending);
        return t.transpose(int64_t(d), -1).argsort(!descending).transpose(int64_t(d), -1);
      },
      "dim"_a = -1, "descending"_a = false, "u32 indices, stable.");

  // ---- indexing ------------------------------------------------------------------
  c.def("index_select", &Tensor::index_select, "index"_a, "dim"_a);
  c.def("gather", &Tensor::gather, "index"_a, "dim"_a);
  c.def("scatter", &Tensor::scatter, "index"_a, "src"_a, "dim"_a);
  c.def("scatter_add", &Tensor::scatter_add, "index"_a, "src"_a, "dim"_a);
  c.def("index_add", &Tensor::index_add, "index"_a, "src"_a, "dim"_a);
  c.def(
      "scatter_",
      [](Tensor& t, const Tensor& ids, const Tensor& src, int64_t dim) {
        t.scatter_(ids, src, dim);
        return t;
      },
      "index"_a, "src"_a, "dim"_a);
  c.def(
      "scatter_add_",
      [](Tensor& t, const Tensor& ids, const Tensor& src, int64_t dim) {
        t.scatter_add_(ids, src, dim);
        return t;
      },
      "index"_a, "src"_a, "dim"_a);

  // ---- matmul, convolution, resampling ---------------------------------------------
  c.def("matmul", &Tensor::matmul, "other"_a, nb::call_guard<nb::gil_scoped_release>());
  c.def("conv1d", &Tensor::conv1d, "weight"_a, "padding"_a = 0, "stride"_a = 1, "dilation"_a = 1,
        "groups"_a = 1, nb::call_guard<nb::gil_scoped_release>());
  c.def("conv_transpose1d", &Tensor::conv_transpose1d, "weight"_a, "padding"_a = 0, "output_padding"_a = 0,
        "stride"_a = 1, "dilation"_a = 1, "groups"_a = 1, nb::call_guard<nb::gil_scoped_release>());
  c.def("conv2d", &Tensor::conv2d, "weight"_a, "padding"_a = 0, "stride"_a = 1, "dilation"_a = 1,
        "groups"_a = 1, nb::call_guard<nb::gil_scoped_release>());
  c.def("conv_transpose2d", &Tensor::conv_transpose2d, "weight"_a, "padding"_a = 0, "output_padding"_a = 0,
        "stride"_a = 1, "dilation"_a = 1, nb::call_guard<nb::gil_scoped_release>());
  c.def(
      "avg_pool2d",
      [](const Tensor& t, nb::handle kernel, nb::handle stride) {
        auto k = pair_arg(kernel, "avg_pool2d");
        return t.avg_pool2d(k, stride.is_none() ? k : pair_arg(stride, "avg_pool2d"));
      },
      "kernel_size"_a, "stride"_a = nb::none());
  c.def(
      "max_pool2d",
      [](const Tensor& t, nb::handle kernel, nb::handle stride) {
        auto k = pair_arg(kernel, "max_pool2d");
        return t.max_pool2d(k, stride.is_none() ? k : pair_arg(stride, "max_pool2d"));
      },
      "kernel_size"_a, "stride"_a = nb::none());
  c.def("upsample_nearest1d", &Tensor::upsample_nearest1d, "size"_a);
  c.def("upsample_nearest2d", &Tensor::upsample_nearest2d, "height"_a, "width"_a);
  c.def("upsample_bilinear2d", &Tensor::upsample_bilinear2d, "height"_a, "width"_a, "align_corners"_a = false,
        "scale_h"_a = nb::none(), "scale_w"_a = nb::none());
  c.def(
      "softmax", [](const Tensor& t, int64_t dim) { return nn::softmax(t, dim); }, "dim"_a = -1);
  c.def(
      "log_softmax", [](const Tensor& t, int64_t dim) { return nn::log_softmax(t, dim); }, "dim"_a = -1);

  // ---- creation ----------------------------------------------------------------------
  m.def(
      "zeros",
      [](nb::args shape, nb::handle dtype, nb::handle device) {
        return Tensor::zeros(Shape(shape_from_args(shape, "zeros")), to_dtype_or(dtype, DType::F32),
                             to_device_or(device, Device::cpu()));
      },
      "shape"_a, "dtype"_a = nb::none(), "device"_a = nb::none());
  m.def(
      "ones",
      [](nb::args shape, nb::handle dtype, nb::handle device) {
        return Tensor::ones(Shape(shape_from_args(shape, "ones")), to_dtype_or(dtype, DType::F32),
                            to_device_or(device, Device::cpu()));
      },
      "shape"_a, "dtype"_a = nb::none(), "device"_a = nb::none());
  m.def(
      "empty",
      [](nb::args shape, nb::handle dtype, nb::handle device) {
        return Tensor::empty(Shape(shape_from_args(shape, "empty")), to_dtype_or(dtype, DType::F32),
                             to_device_or(device, Device::cpu()));
      },
      "shape"_a, "dtype"_a = nb::none(), "device"_a = nb::none());
  m.def(
      "full",
      [](nb::handle shape, nb::handle value, nb::handle dtype, nb::handle device) {
        Scalar s = to_scalar(value, "fill value");
        DType dt = to_dtype_or(dtype, s.is_int ? DType::I64 : DType::F32);
        return Tensor::full(s, Shape(to_shape(shape, "full")), dt, to_device_or(device, Device::cpu()));
      },
      "shape"_a, "fill_value"_a, "dtype"_a = nb::none(), "device"_a = nb::none(),
      "A tensor of `shape` filled with the value (dtype: i64 for an int, else f32).");
  m.def(
      "arange",
      [](double start, std::optional<double> end, double step, nb::handle dtype, nb::handle device) {
        double lo = end ? start : 0.0, hi = end ? *end : start;
        bool integral = lo == std::floor(lo) && hi == std::floor(hi) && step == std::floor(step);
        return Tensor::arange(lo, hi, step, to_dtype_or(dtype, integral ? DType::I64 : DType::F32),
                              to_device_or(device, Device::cpu()));
      },
      "start"_a, "end"_a = nb::none(), "step"_a = 1.0, "dtype"_a = nb::none(), "device"_a = nb::none(),
      "[start, end) by step; arange(n) is [0, n). dtype: i64 when every bound is whole, else f32.");
  m.def(
      "linspace",
      [](double start, double end, size_t steps, nb::handle dtype, nb::handle device) {
        return Tensor::linspace(start, end, steps, to_dtype_or(dtype, DType::F32),
                                to_device_or(device, Device::cpu()));
      },
      "start"_a, "end"_a, "steps"_a, "dtype"_a = nb::none(), "device"_a = nb::none());
  m.def(
      "eye",
      [](size_t n, std::optional<size_t> mcols, nb::handle dtype, nb::handle device) {
        return Tensor::eye(n, mcols.value_or(n), to_dtype_or(dtype, DType::F32),
                           to_device_or(device, Device::cpu()));
      },
      "n"_a, "m"_a = nb::none(), "dtype"_a = nb::none(), "device"_a = nb::none());
  m.def(
      "zeros_like",
      [](const Tensor& t, nb::handle dtype) {
        return Tensor::zeros(t.shape(), to_dtype_or(dtype, t.dtype()), t.device());
      },
      "t"_a, "dtype"_a = nb::none());
  m.def(
      "ones_like",
      [](const Tensor& t, nb::handle dtype) {
        return Tensor::ones(t.shape(), to_dtype_or(dtype, t.dtype()), t.device());
      },
      "t"_a, "dtype"_a = nb::none());
  m.def(
      "full_like",
      [](const Tensor& t, nb::handle v, nb::handle dtype) {
        return Tensor::full(to_scalar(v, "fill value"), t.shape(), to_dtype_or(dtype, t.dtype()), t.device());
      },
      "t"_a, "fill_value"_a, "dtype"_a = nb::none());
  m.def(
      "rand",
      [](nb::args shape, nb::handle dtype, nb::handle device, double low, double high) {
        return Tensor::rand(Shape(shape_from_args(shape, "rand")), to_dtype_or(dtype, DType::F32),
                            to_device_or(device, Device::cpu()), low, high);
      },
      "shape"_a, "dtype"_a = nb::none(), "device"_a = nb::none(), "low"_a = 0.0, "high"_a = 1.0,
      "Uniform in [low, high), seeded per device by manual_seed.");
  m.def(
      "randn",
      [](nb::args shape, nb::handle dtype, nb::handle device, double mean, double std) {
        return Tensor::randn(Shape(shape_from_args(shape, "randn")), to_dtype_or(dtype, DType::F32),
                             to_device_or(device, Device::cpu()), mean, std);
      },
      "shape"_a, "dtype"_a = nb::none(), "device"_a = nb::none(), "mean"_a = 0.0, "std"_a = 1.0);
  m.def(
      "manual_seed",
      [](uint64_t seed, nb::handle device) {
        Tensor::manual_seed(seed, to_device_or(device, Device::cpu()));
      },
      "seed"_a, "device"_a = nb::none());
  m.def(
      "_from_bytes",
      [](nb::bytes data, nb::handle shape, nb::handle dtype, nb::handle device) {
        DType dt = to_dtype(dtype);
        std::vector<size_t> s = to_shape(shape, "from_bytes");
        size_t n = Shape(s).elem_count();
        if (data.size() != n * dtype_size(dt)) {
          fail(ErrorKind::InvalidArgument, "from_bytes",
               std::to_string(data.size()) + " bytes for " + Shape(s).str() + " " +
                   std::string(dtype_name(dt)) + " (" + std::to_string(n * dtype_size(dt)) + " bytes)");
        }
        return Tensor::from_bytes(data.c_str(), n, Shape(s), dt, to_device_or(device, Device::cpu()));
      },
      "data"_a, "shape"_a, "dtype"_a, "device"_a = nb::none());
  m.def("cat", &Tensor::cat, "tensors"_a, "dim"_a = 0);
  m.def("stack", &Tensor::stack, "tensors"_a, "dim"_a = 0);
  m.def(
      "pow", [](nb::handle base, const Tensor& e) { return pow(to_scalar(base, "base"), e); }, "base"_a,
      "exponent"_a);

  bind_dlpack(m, c);

  // ---- wick.nn: fused neural-network ops ---------------------------------------------
  nb::module_ n = m.def_submodule("nn", "Fused neural-network ops (float dtypes)");
  n.def("softmax", &nn::softmax, "x"_a, "dim"_a = -1);
  n.def("log_softmax", &nn::log_softmax, "x"_a, "dim"_a = -1);
  n.def("softmax_last_dim", &nn::softmax_last_dim, "x"_a);
  n.def("log_softmax_last_dim", &nn::log_softmax_last_dim, "x"_a);
  n.def(
      "rms_norm",
      [](const Tensor& x, std::optional<Tensor> alpha, float eps) {
        return nn::rms_norm(x, alpha.value_or(Tensor()), eps);
      },
      "x"_a, "weight"_a = nb::none(), "eps"_a = 1e-5f,
      "x / sqrt(mean(x^2) + eps) * weight over the last dim.");
  n.def(
      "layer_norm",
      [](const Tensor& x, std::optional<Tensor> alpha, std::optional<Tensor> beta, float eps) {
        return nn::layer_norm(x, alpha.value_or(Tensor()), beta.value_or(Tensor()), eps);
      },
      "x"_a, "weight"_a = nb::none(), "bias"_a = nb::none(), "eps"_a = 1e-5f);
  n.def("rope", &nn::rope, "x"_a, "cos"_a, "sin"_a, "Half-split pairs (i, i + D/2) on (B, H, T, D).");
  n.def("rope_i", &nn::rope_i, "x"_a, "cos"_a, "sin"_a, "Interleaved pairs (2i, 2i + 1) on (B, H, T, D).");
  n.def("rope_thd", &nn::rope_thd, "x"_a, "cos"_a, "sin"_a, "Half-split pairs on (B, T, H, D).");
  n.def(
      "attention",
      [](const Tensor& q, const Tensor& k, const Tensor& v, float scale, bool causal,
         std::optional<Tensor> kv_len) {
        return kv_len ? nn::attention(q, k, v, scale, causal, *kv_len)
                      : nn::attention(q, k, v, scale, causal);
      },
      "q"_a, "k"_a, "v"_a, "scale"_a, "causal"_a = false, "kv_len"_a = nb::none(),
      nb::call_guard<nb::gil_scoped_release>(),
      "softmax(scale * q k^T [+ causal mask]) v; q (B, H, T, D), k (B, Hkv, S, D), v (B, Hkv, S, Dv); "
      "kv_len: a one-element u32 tensor on q's device, the keys used (the first kv_len).");
}

}  // namespace wick::py
