// Mixed dtypes and scalars: promote_types (NumPy's table), weakly typed scalars next to
// tensors, the arithmetic and comparison operators, pow, clamp, where_cond with scalars and
// masked_fill. Everything here composes the elementwise families (ops_elementwise.cpp):
//  - a float tensor plus, minus or times a scalar is one affine (the scalar first rounded
//    to the dtype, so the result is the binary op's: x*1 + s is x + s, x*(-1) + s is
//    s - x, x*s + (-0) is x*s including the sign of a zero product);
//  - anything else broadcasts a rank-0 tensor of the scalar through the binary op;
//  - a scalar compares exactly with an integer tensor (bounds outside the dtype give a
//    constant result, a fraction is replaced by the integer on the right side of it).
#include <fmt/format.h>

#include <cmath>
#include <initializer_list>
#include <limits>

#include "base/dispatch.h"
#include "tensor/checks.h"

namespace wick {

using front::describe;

namespace {

constexpr DType U8 = DType::U8, U32 = DType::U32, I32 = DType::I32, I64 = DType::I64, F16 = DType::F16,
                BF16 = DType::BF16, F32 = DType::F32, F64 = DType::F64;

// Rows and columns in DType order (u8, u32, i32, i64, f16, bf16, f32, f64).
constexpr DType kPromote[kNumDTypes][kNumDTypes] = {{U8, U32, I32, I64, F16, BF16, F32, F64},    // u8
                                                    {U32, U32, I64, I64, F64, F64, F64, F64},    // u32
                                                    {I32, I64, I32, I64, F64, F64, F64, F64},    // i32
                                                    {I64, I64, I64, I64, F64, F64, F64, F64},    // i64
                                                    {F16, F64, F64, F64, F16, F32, F32, F64},    // f16
                                                    {BF16, F64, F64, F64, F32, BF16, F32, F64},  // bf16
                                                    {F32, F64, F64, F64, F32, F32, F32, F64},    // f32
                                                    {F64, F64, F64, F64, F64, F64, F64, F64}};   // f64

// Whether integer value v lies in the range of integer dtype dt.
bool int_fits(DType dt, int64_t v) {
  return dispatch_dtype<kIntDTypes>(dt, "scalar", [&]<class T>() {
    return v >= int64_t(std::numeric_limits<T>::min()) &&
           (v < 0 || uint64_t(v) <= uint64_t(std::numeric_limits<T>::max()));
  });
}

// The dtype of tensor t computed with weak scalars: t's dtype, or f32 for an integer
// tensor with a float scalar. An integer scalar must fit an integer result dtype.
DType weak_dtype(const char* op, const Tensor& t, std::initializer_list<Scalar> scalars) {
  DType dt = t.dtype();
  if (is_float(dt)) return dt;
  for (Scalar s : scalars)
    if (!s.is_int) return F32;
  for (Scalar s : scalars) {
    if (!int_fits(dt, s.i)) {
      throw_error(ErrorKind::InvalidArgument, op,
                  fmt::format("scalar {} is out of range for tensor {}", s.i, describe(t)));
    }
  }
  return dt;
}

// s stored in float dtype dt and read back (the value a binary op would see).
double rounded_in(DType dt, Scalar s) {
  return dispatch_dtype<kFloatDTypes>(dt, "scalar", [&]<class T>() { return convert<double, T>(s.as<T>()); });
}

Tensor scalar_tensor(Scalar s, DType dt, Device d) { return Tensor::full(s, Shape{}, dt, d); }

const char* binary_name(BinaryOp op) {
  if (size_t(op) >= kNumBinaryOps) {
    throw_error(ErrorKind::InvalidArgument, "binary", fmt::format("unknown binary op {}", int(op)));
  }
  return binary_op_name(op).data();  // names are string literals
}

// t op s (scalar_first: s op t).
Tensor binary_scalar(BinaryOp op, const Tensor& t, Scalar s, bool scalar_first) {
  const char* name = binary_name(op);
  front::check_defined(name, t, scalar_first ? "rhs" : "lhs");
  DType dt = weak_dtype(name, t, {s});
  Tensor x = t.to_dtype(dt);
  if (is_float(dt)) {
    double v = rounded_in(dt, s);
    switch (op) {
      case BinaryOp::Add:
        return x.affine(1.0, v);
      case BinaryOp::Sub:
        return scalar_first ? x.affine(-1.0, v) : x.affine(1.0, -v);
      case BinaryOp::Mul:
        return x.affine(v, -0.0);
      case BinaryOp::Pow:
        if (!scalar_first) return x.powf(v);
        break;
      default:
        break;
    }
  }
  Tensor st = scalar_tensor(s, dt, t.device());
  return scalar_first ? st.binary(op, x) : x.binary(op, st);
}

// The comparison with its operands swapped (s < t is t > s).
CmpOp swapped(CmpOp op) {
  switch (op) {
    case CmpOp::Lt:
      return CmpOp::Gt;
    case CmpOp::Le:
      return CmpOp::Ge;
    case CmpOp::Gt:
      return CmpOp::Lt;
    case CmpOp::Ge:
      return CmpOp::Le;
    default:
      return op;
  }
}

}  // namespace

DType promote_types(DType a, DType b) {
  for (DType d : {a, b}) {
    if (size_t(d) >= size_t(kNumDTypes)) {
      throw_error(ErrorKind::UnsupportedDType, "promote_types", fmt::format("unknown dtype {}", int(d)));
    }
  }
  return kPromote[size_t(a)][size_t(b)];
}

Tensor binary(BinaryOp op, const Tensor& a, Scalar b) { return binary_scalar(op, a, b, false); }
Tensor binary(BinaryOp op, Scalar a, const Tensor& b) { return binary_scalar(op, b, a, true); }

Tensor cmp(CmpOp op, const Tensor& t, Scalar s) {
  if (size_t(op) >= kNumCmpOps) {
    throw_error(ErrorKind::InvalidArgument, "cmp", fmt::format("unknown comparison op {}", int(op)));
  }
  const char* name = cmp_op_name(op).data();
  front::check_defined(name, t, "lhs");
  DType dt = t.dtype();
  if (is_float(dt)) return t.cmp(op, scalar_tensor(s, dt, t.device()));
  auto constant = [&](bool v) { return Tensor::full(int64_t(v), t.shape(), U8, t.device()); };
  // An integer tensor: compare with the integer that gives the same answer.
  if (!s.is_int) {
    double f = s.f;
    if (std::isnan(f)) return constant(op == CmpOp::Ne);
    if (std::isfinite(f) && f != std::floor(f)) {
      if (op == CmpOp::Eq || op == CmpOp::Ne) return constant(op == CmpOp::Ne);
      bool below = op == CmpOp::Lt || op == CmpOp::Le;  // x < 1.5 is x <= 1; x > 1.5 is x >= 2
      op = below ? CmpOp::Le : CmpOp::Ge;
      f = below ? std::floor(f) : std::ceil(f);
    }
    constexpr double kTwo63 = 9223372036854775808.0;
    if (f >= -kTwo63 && f < kTwo63) {
      s = Scalar(int64_t(f));
    } else {  // beyond every integer dtype (infinities included)
      bool above = f > 0;
      if (op == CmpOp::Eq || op == CmpOp::Ne) return constant(op == CmpOp::Ne);
      return constant((op == CmpOp::Lt || op == CmpOp::Le) == above);
    }
  }
  if (!int_fits(dt, s.i)) {
    bool above = s.i > 0;
    if (op == CmpOp::Eq || op == CmpOp::Ne) return constant(op == CmpOp::Ne);
    return constant((op == CmpOp::Lt || op == CmpOp::Le) == above);
  }
  return t.cmp(op, scalar_tensor(s, dt, t.device()));
}

Tensor pow(Scalar base, const Tensor& exponent) { return binary_scalar(BinaryOp::Pow, exponent, base, true); }

// --- operators ---------------------------------------------------------------------

Tensor operator-(const Tensor& a) { return a.neg(); }
Tensor operator+(const Tensor& a, const Tensor& b) { return a.add(b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return a.sub(b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return a.mul(b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return a.div(b); }
Tensor operator+(const Tensor& a, Scalar b) { return binary(BinaryOp::Add, a, b); }
Tensor operator-(const Tensor& a, Scalar b) { return binary(BinaryOp::Sub, a, b); }
Tensor operator*(const Tensor& a, Scalar b) { return binary(BinaryOp::Mul, a, b); }
Tensor operator/(const Tensor& a, Scalar b) { return binary(BinaryOp::Div, a, b); }
Tensor operator+(Scalar a, const Tensor& b) { return binary(BinaryOp::Add, a, b); }
Tensor operator-(Scalar a, const Tensor& b) { return binary(BinaryOp::Sub, a, b); }
Tensor operator*(Scalar a, const Tensor& b) { return binary(BinaryOp::Mul, a, b); }
Tensor operator/(Scalar a, const Tensor& b) { return binary(BinaryOp::Div, a, b); }
Tensor operator==(const Tensor& a, const Tensor& b) { return a.eq(b); }
Tensor operator!=(const Tensor& a, const Tensor& b) { return a.ne(b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return a.lt(b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return a.le(b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return a.gt(b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return a.ge(b); }
Tensor operator==(const Tensor& a, Scalar b) { return cmp(CmpOp::Eq, a, b); }
Tensor operator!=(const Tensor& a, Scalar b) { return cmp(CmpOp::Ne, a, b); }
Tensor operator<(const Tensor& a, Scalar b) { return cmp(CmpOp::Lt, a, b); }
Tensor operator<=(const Tensor& a, Scalar b) { return cmp(CmpOp::Le, a, b); }
Tensor operator>(const Tensor& a, Scalar b) { return cmp(CmpOp::Gt, a, b); }
Tensor operator>=(const Tensor& a, Scalar b) { return cmp(CmpOp::Ge, a, b); }
Tensor operator==(Scalar a, const Tensor& b) { return cmp(swapped(CmpOp::Eq), b, a); }
Tensor operator!=(Scalar a, const Tensor& b) { return cmp(swapped(CmpOp::Ne), b, a); }
Tensor operator<(Scalar a, const Tensor& b) { return cmp(swapped(CmpOp::Lt), b, a); }
Tensor operator<=(Scalar a, const Tensor& b) { return cmp(swapped(CmpOp::Le), b, a); }
Tensor operator>(Scalar a, const Tensor& b) { return cmp(swapped(CmpOp::Gt), b, a); }
Tensor operator>=(Scalar a, const Tensor& b) { return cmp(swapped(CmpOp::Ge), b, a); }

// --- pow, clamp ----------------------------------------------------------------------

Tensor Tensor::pow(Scalar exponent) const { return binary_scalar(BinaryOp::Pow, *this, exponent, false); }

Tensor Tensor::clamp(Scalar lo, Scalar hi) const {
  front::check_defined("clamp", *this, "tensor");
  Tensor x = to_dtype(weak_dtype("clamp", *this, {lo, hi}));
  return wick::binary(BinaryOp::Minimum, wick::binary(BinaryOp::Maximum, x, lo), hi);
}

Tensor Tensor::clamp(const Tensor& lo, const Tensor& hi) const { return maximum(lo).minimum(hi); }

// --- where_cond with scalars, masked_fill -----------------------------------------------

Tensor Tensor::where_cond(const Tensor& on_true, Scalar on_false) const {
  front::check_defined("where_cond", on_true, "on_true");
  DType dt = weak_dtype("where_cond", on_true, {on_false});
  return where_cond(on_true.to_dtype(dt), scalar_tensor(on_false, dt, on_true.device()));
}

Tensor Tensor::where_cond(Scalar on_true, const Tensor& on_false) const {
  front::check_defined("where_cond", on_false, "on_false");
  DType dt = weak_dtype("where_cond", on_false, {on_true});
  return where_cond(scalar_tensor(on_true, dt, on_false.device()), on_false.to_dtype(dt));
}

Tensor Tensor::where_cond(Scalar on_true, Scalar on_false) const {
  front::check_defined("where_cond", *this, "condition");
  DType dt = on_true.is_int && on_false.is_int ? I64 : F32;
  return where_cond(scalar_tensor(on_true, dt, device_), scalar_tensor(on_false, dt, device_));
}

Tensor Tensor::masked_fill(const Tensor& mask, Scalar value) const {
  const char* op = "masked_fill";
  front::check_defined(op, *this, "tensor");
  front::check_defined(op, mask, "mask");
  front::check_same_device(op, *this, mask);
  front::check_dtype_in(op, mask, kIndexDTypes, "mask");
  bool fits = mask.rank() <= rank();
  for (size_t k = 0; fits && k < mask.rank(); ++k) {
    size_t m = mask.dims()[mask.rank() - 1 - k];
    fits = m == 1 || m == dims()[rank() - 1 - k];
  }
  if (!fits) {
    throw_error(ErrorKind::ShapeMismatch, op,
                fmt::format("mask {} does not broadcast to tensor {}", describe(mask), describe(*this)));
  }
  return mask.where_cond(scalar_tensor(value, dtype_, device_), *this);
}

}  // namespace wick
