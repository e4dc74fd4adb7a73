// CPU elementwise families: affine, powf, elu, unary, binary, cmp, where_cond,
// to_dtype. One engine serves them all: operands of identical dims are walked as
// rows (dims collapsed where every operand is contiguous across them, size-1
// dims dropped), and each row runs a plain loop vectorized when the operand's inner
// stride is 1 (or 0, a broadcast scalar). The loops carry `omp simd`: GCC's -O2 cost
// model leaves runtime-length loops scalar (measured: f32 add not vectorized without it);
// outputs are fresh storage, so no iteration depends on another. Op semantics live in the
// functors of backend/common/functors.h, which the GPU kernels share.
#include <algorithm>
#include <array>
#include <cstring>
#include <utility>
#include <vector>

#include "backend/common/collapse.h"
#include "backend/common/functors.h"
#include "backend/cpu/cpu_storage.h"
#include "backend/cpu/simd.h"
#include "backend/cpu/strided.h"
#include "base/dispatch.h"

namespace wick {

namespace {

// Elements per thread chunk below which a loop stays serial.
constexpr size_t kGrain = size_t(1) << 15;

// K operands of identical dims as rows: `outer` layouts (all dims but the last
// collapsed one, each operand's strides and start offset) and the inner run.
template <size_t K>
struct RowPlan {
  std::array<Layout, K> outer;
  size_t inner = 1;                      // elements per row
  std::array<size_t, K> inner_stride{};  // elements between row neighbours, per operand
};

template <size_t K>
RowPlan<K> plan_rows(const std::array<const Layout*, K>& ls) {
  Collapsed c = collapse(ls);
  RowPlan<K> p;
  if (!c.dims.empty()) {
    p.inner = c.dims.back();
    c.dims.pop_back();
    for (size_t j = 0; j < K; ++j) {
      p.inner_stride[j] = c.strides[j].back();
      c.strides[j].pop_back();
    }
  }
  for (size_t j = 0; j < K; ++j) p.outer[j] = Layout(c.dims, std::move(c.strides[j]), ls[j]->start_offset());
  return p;
}

// Calls row(out_begin, offsets, inner_strides, len) for every row segment of the
// operands `ls` (identical dims); out_begin is the segment's row-major index. Work
// is split by elements, not rows, so one long contiguous row still spans threads.
template <size_t K, class Row>
void for_each_row(const std::array<const Layout*, K>& ls, Row&& row) {
  size_t n = ls[0]->elem_count();
  if (n == 0) return;
  RowPlan<K> p = plan_rows(ls);
  const size_t inner = p.inner;
  cpu::parallel_for(n, kGrain, [&](size_t b, size_t e) {
    std::array<const Layout*, K> outer;
    for (size_t j = 0; j < K; ++j) outer[j] = &p.outer[j];
    size_t r = b / inner;
    cpu::StridedWalker<K> w(outer, r);
    for (size_t c0 = b % inner; r * inner < e; ++r, w.next(), c0 = 0) {
      size_t c1 = std::min(inner, e - r * inner);
      std::array<size_t, K> off;
      for (size_t j = 0; j < K; ++j) off[j] = w.offset[j] + c0 * p.inner_stride[j];
      row(r * inner + c0, off, p.inner_stride, c1 - c0);
    }
  });
}

// Element type <-> compute type: f16/bf16 compute in float and round once on the way out.
template <class T>
compute_t<T> load(T x) {
  return compute_t<T>(x);
}
template <class T, class C>
T store(C x) {
  if constexpr (std::is_same_v<T, C>) {
    return x;
  } else {
    return T(x);
  }
}

// out[i] = f(in[i]) over a strided input; Out = In unless given.
template <class In, class Out, class F>
StoragePtr map1(const CpuStorage& in, const Layout& l, F f) {
  auto out = cpu_alloc(l.elem_count(), dtype_of<Out>);
  const In* src = in.data<In>();
  Out* dst = out->template data<Out>();
  for_each_row<1>(
      {&l}, [&](size_t o, const std::array<size_t, 1>& off, const std::array<size_t, 1>& st, size_t len) {
        const In* a = src + off[0];
        Out* y = dst + o;
        if (st[0] == 1) {
#pragma omp simd
          for (size_t i = 0; i < len; ++i) y[i] = f(a[i]);
        } else {
#pragma omp simd
          for (size_t i = 0; i < len; ++i) y[i] = f(a[i * st[0]]);
        }
      });
  return out;
}

// out[i] = f(a[i], b[i]); the inner-stride cases a broadcast produces get their own loops.
template <class In, class Out, class F>
StoragePtr map2(const CpuStorage& lhs, const CpuStorage& rhs, const Layout& ll, const Layout& rl, F f) {
  auto out = cpu_alloc(ll.elem_count(), dtype_of<Out>);
  const In* lp = lhs.data<In>();
  const In* rp = rhs.data<In>();
  Out* dst = out->template data<Out>();
  for_each_row<2>({&ll, &rl}, [&](size_t o, const std::array<size_t, 2>& off, const std::array<size_t, 2>& st,
                                  size_t len) {
    const In* a = lp + off[0];
    const In* b = rp + off[1];
    Out* y = dst + o;
    if (st[0] == 1 && st[1] == 1) {
#pragma omp simd
      for (size_t i = 0; i < len; ++i) y[i] = f(a[i], b[i]);
    } else if (st[0] == 1 && st[1] == 0) {
      const In bv = b[0];
#pragma omp simd
      for (size_t i = 0; i < len; ++i) y[i] = f(a[i], bv);
    } else if (st[0] == 0 && st[1] == 1) {
      const In av = a[0];
#pragma omp simd
      for (size_t i = 0; i < len; ++i) y[i] = f(av, b[i]);
    } else {
#pragma omp simd
      for (size_t i = 0; i < len; ++i) y[i] = f(a[i * st[0]], b[i * st[1]]);
    }
  });
  return out;
}

// A unary functor lifted to element types (compute type in between).
template <class T, class Op>
auto lift1(Op op) {
  return [op](T x) { return store<T>(op(load(x))); };
}

// Elements of a strided row gathered per step of a vector kernel.
constexpr size_t kGather = 1024;

// out[i] = run(in[i]) where run(x, y, n) is a vector kernel on contiguous runs of
// element type T; strided rows are gathered into a buffer first, so every layout takes
// the same kernel (and gives the same bits).
template <class T, class U, class Run>
void map1_runs(const CpuStorage& in, const Layout& l, U* dst, Run run) {
  const T* src = in.data<T>();
  for_each_row<1>(
      {&l}, [&](size_t o, const std::array<size_t, 1>& off, const std::array<size_t, 1>& st, size_t len) {
        const T* a = src + off[0];
        if (st[0] == 1) {
          run(a, dst + o, len);
          return;
        }
        T buf[kGather];
        for (size_t b = 0; b < len; b += kGather) {
          size_t m = std::min(kGather, len - b);
          for (size_t i = 0; i < m; ++i) buf[i] = a[(b + i) * st[0]];
          run(buf, dst + o + b, m);
        }
      });
}

template <DTypeSet Set, class Op>
StoragePtr unary_family(const CpuStorage& s, const Layout& l, Op op, const char* name) {
  return dispatch_dtype<Set>(s.dtype(), name, [&]<class T>() { return map1<T, T>(s, l, lift1<T>(op)); });
}

}  // namespace

StoragePtr CpuStorage::affine(const Layout& l, double mul, double add) const {
  return unary_family<kAllDTypeSet>(*this, l, fn::Affine{mul, add}, "affine");
}

StoragePtr CpuStorage::powf(const Layout& l, double e) const {
  return unary_family<kFloatDTypes>(*this, l, fn::Powf{e}, "powf");
}

StoragePtr CpuStorage::elu(const Layout& l, double alpha) const {
  return unary_family<kFloatDTypes>(*this, l, fn::Elu{alpha}, "elu");
}

// The switches below are generated from wick/op_table.h: each op's functor is the
// fn:: struct named as its enumerator.
StoragePtr CpuStorage::unary(UnaryOp op, const Layout& l) const {
  if (cpu::simd::has_unary(op, dtype_)) {  // the transcendental ops on f32/f16/bf16: SLEEF
    auto out = cpu_alloc(l.elem_count(), dtype_);
    dispatch_dtype<kFloatDTypes>(dtype_, "unary", [&]<class T>() {
      map1_runs<T>(*this, l, out->data<T>(),
                   [&](const T* x, T* y, size_t n) { cpu::simd::unary_run(op, dtype_, x, y, n); });
    });
    return out;
  }
  switch (op) {
#define WICK_UNARY_CASE(op_, name, dtypes)                                                    \
  case UnaryOp::op_: {                                                                        \
    constexpr DTypeSet set = unary_op_allows_int(UnaryOp::op_) ? kAllDTypeSet : kFloatDTypes; \
    return unary_family<set>(*this, l, fn::op_{}, #name);                                     \
  }
    WICK_UNARY_OPS(WICK_UNARY_CASE)
#undef WICK_UNARY_CASE
  }
  return nullptr;  // not reached: the front end rejects values outside the enum
}

StoragePtr CpuStorage::binary(BinaryOp op, const BackendStorage& rhs, const Layout& lhs_l,
                              const Layout& rhs_l) const {
  const auto run = [&]<class Op>(Op, const char* name) {
    return dispatch_dtype(dtype_, name, [&]<class T>() {
      auto f = [](T a, T b) { return store<T>(Op{}(load(a), load(b))); };
      return map2<T, T>(*this, CpuStorage::of(rhs), lhs_l, rhs_l, f);
    });
  };
  switch (op) {
#define WICK_BINARY_CASE(op_, name) \
  case BinaryOp::op_:               \
    return run(fn::op_{}, #name);
    WICK_BINARY_OPS(WICK_BINARY_CASE)
#undef WICK_BINARY_CASE
  }
  return nullptr;
}

StoragePtr CpuStorage::swiglu(const Layout& l, const BackendStorage& up, const Layout& up_l) const {
  return dispatch_dtype<kFloatDTypes>(dtype_, "swiglu", [&]<class T>() {
    auto f = [](T g, T u) { return store<T>(fn::SiluMul{}(load(g), load(u))); };
    return map2<T, T>(*this, CpuStorage::of(up), l, up_l, f);
  });
}

StoragePtr CpuStorage::cmp(CmpOp op, const BackendStorage& rhs, const Layout& lhs_l,
                           const Layout& rhs_l) const {
  const auto run = [&]<class Op>(Op, const char* name) {
    return dispatch_dtype(dtype_, name, [&]<class T>() {
      auto f = [](T a, T b) { return uint8_t(Op{}(load(a), load(b))); };
      return map2<T, uint8_t>(*this, CpuStorage::of(rhs), lhs_l, rhs_l, f);
    });
  };
  switch (op) {
#define WICK_CMP_CASE(op_, name) \
  case CmpOp::op_:               \
    return run(fn::op_{}, #name);
    WICK_CMP_OPS(WICK_CMP_CASE)
#undef WICK_CMP_CASE
  }
  return nullptr;
}

StoragePtr CpuStorage::where_cond(const Layout& l, const BackendStorage& t, const Layout& t_l,
                                  const BackendStorage& f, const Layout& f_l) const {
  const auto& ts = CpuStorage::of(t);
  const auto& fs = CpuStorage::of(f);
  return dispatch_dtype<kIndexDTypes>(dtype_, "where_cond", [&]<class C>() {
    return dispatch_dtype(ts.dtype(), "where_cond", [&]<class T>() -> StoragePtr {
      auto out = cpu_alloc(l.elem_count(), dtype_of<T>);
      const C* cp = data<C>();
      const T* tp = ts.data<T>();
      const T* fp = fs.data<T>();
      T* dst = out->template data<T>();
      const fn::Where where;
      for_each_row<3>({&l, &t_l, &f_l}, [&](size_t o, const std::array<size_t, 3>& off,
                                            const std::array<size_t, 3>& st, size_t len) {
        const C* c = cp + off[0];
        const T* a = tp + off[1];
        const T* b = fp + off[2];
        T* y = dst + o;
        if (st[0] == 1 && st[1] == 1 && st[2] == 1) {
#pragma omp simd
          for (size_t i = 0; i < len; ++i) y[i] = where(c[i], a[i], b[i]);
        } else {
#pragma omp simd
          for (size_t i = 0; i < len; ++i) y[i] = where(c[i * st[0]], a[i * st[1]], b[i * st[2]]);
        }
      });
      return out;
    });
  });
}

StoragePtr CpuStorage::to_dtype(const Layout& l, DType dtype) const {
  // f32 <-> f16 / bf16: the vector conversions (bit-identical to the scalar ones).
  const bool half_out = dtype_ == DType::F32 && (dtype == DType::F16 || dtype == DType::BF16);
  const bool half_in = dtype == DType::F32 && (dtype_ == DType::F16 || dtype_ == DType::BF16);
  if (half_out) {
    auto out = cpu_alloc(l.elem_count(), dtype);
    map1_runs<float>(*this, l, out->data<uint16_t>(),
                     [&](const float* x, uint16_t* y, size_t n) { cpu::simd::narrow(dtype, x, y, n); });
    return out;
  }
  if (half_in) {
    auto out = cpu_alloc(l.elem_count(), dtype);
    map1_runs<uint16_t>(*this, l, out->data<float>(),
                        [&](const uint16_t* x, float* y, size_t n) { cpu::simd::widen(dtype_, x, y, n); });
    return out;
  }
  return dispatch_dtype(dtype_, "to_dtype", [&]<class From>() {
    return dispatch_dtype(dtype, "to_dtype", [&]<class To>() {
      return map1<From, To>(*this, l, [](From x) { return convert<To, From>(x); });
    });
  });
}

}  // namespace wick
