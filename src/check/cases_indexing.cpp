// Parity cases of the indexing family: index_select, gather, scatter, scatter_add (copying and in place)
// and index_add, over every value dtype x layout and every ids dtype (contiguous and strided ids), with
// Candle's sentinel ids (the ids dtype's max value: index_select/gather write 0, the others skip).
// References are host loops over row-major values; every comparison is exact except the float adds of
// scatter_add / index_add, which the reference rounds to the dtype after each add in source order.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "wick/check.h"
#include "check/reduce_refs.h"

namespace wick::check {
namespace {

using Values = std::vector<double>;
using refs::kSkipId;  // in host ids lists: the ids dtype's max value (the sentinel)

// `count` ids in [0, n), about one in eight the sentinel.
std::vector<int64_t> ids_for(size_t count, size_t n, uint64_t seed) {
  Values r = random_values(count, seed, 0.0, 8.0 * double(n));
  std::vector<int64_t> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = r[i] >= 7.0 * double(n) ? kSkipId : int64_t(r[i] / 7.0);
  return v;
}

// The ids tensor on `dev`: kSkipId becomes the dtype's max value.
Tensor ids_tensor(const std::vector<int64_t>& ids, const Shape& shape, DType idt, Device dev, LayoutKind lk) {
  double sentinel = idt == DType::U8    ? 255.0
                    : idt == DType::U32 ? 4294967295.0
                    : idt == DType::I32 ? 2147483647.0
                                        : 9.3e18;  // saturates to INT64_MAX
  Values v(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) v[i] = ids[i] == kSkipId ? sentinel : double(ids[i]);
  return make_input(v, shape, idt, dev, lk);
}

double add_in(DType dt, double a, double b) {
  double s = a + b;
  if (dt == DType::U8) return std::fmod(s, 256.0);
  return round_to_dtype({s}, dt)[0];  // seeded integer sums stay in range; floats round per add
}

enum class Op { IndexSelect, Gather, Scatter, ScatterAdd, ScatterInPlace, IndexAdd };
const char* op_name(Op op) {
  switch (op) {
    case Op::IndexSelect:
      return "index_select";
    case Op::Gather:
      return "gather";
    case Op::Scatter:
      return "scatter";
    case Op::ScatterAdd:
      return "scatter_add";
    case Op::ScatterInPlace:
      return "scatter_add_ (in place)";
    case Op::IndexAdd:
      return "index_add";
  }
  return "?";
}

// Geometry of one case: self dims, dim, the ids shape and (for scatter / index_add) the src shape.
struct Geometry {
  std::vector<size_t> self, ids, src;
  size_t dim;
};

// index_select takes n_sel ids; gather 6 along dim; scatter 2 source slices; index_add 3.
Geometry geometry(Op op, const Shape& self, size_t dim, size_t n_sel) {
  Geometry g{self.dims(), {}, {}, dim};
  switch (op) {
    case Op::IndexSelect: {
      g.ids = {n_sel};
      break;
    }
    case Op::Gather: {
      g.ids = g.self;
      g.ids[dim] = 6;
      break;
    }
    case Op::Scatter:
    case Op::ScatterAdd:
    case Op::ScatterInPlace: {
      g.ids = g.self;
      g.ids[dim] = 2;
      g.src = g.ids;
      break;
    }
    case Op::IndexAdd: {
      g.ids = {3};
      g.src = g.self;
      g.src[dim] = 3;
      break;
    }
  }
  return g;
}

Values reference(Op op, const Geometry& g, const Values& self, const std::vector<int64_t>& ids,
                 const Values& src, DType dt) {
  auto add = [dt](double a, double b) { return add_in(dt, a, b); };
  switch (op) {
    case Op::IndexSelect:
      return refs::index_select(self, g.self, g.dim, ids);
    case Op::Gather:
      return refs::gather(self, g.self, g.dim, ids, g.ids);
    case Op::Scatter:
      return refs::scatter(self, g.self, g.dim, ids, src, g.src);
    case Op::ScatterAdd:
    case Op::ScatterInPlace:
      return refs::scatter(self, g.self, g.dim, ids, src, g.src, add);
    case Op::IndexAdd:
      return refs::index_add(self, g.self, g.dim, ids, src, g.src, add);
  }
  return {};
}

// One case: self of dtype dt in layout lk; ids of dtype idt in layout ids_lk (Narrowed for 1-D ids,
// Transposed for gather / scatter ids); src (when any) transposed when the ids are strided.
OpCase indexing_case(Op op, DType dt, LayoutKind lk, const Shape& shape, size_t dim, DType idt,
                     LayoutKind ids_lk = LayoutKind::Contiguous, size_t n_sel = 7, bool bench = false) {
  Geometry g = geometry(op, shape, dim, n_sel);
  LayoutKind src_lk = ids_lk == LayoutKind::Contiguous ? LayoutKind::Contiguous : LayoutKind::Transposed;
  if (g.src.size() < 2) src_lk = LayoutKind::Contiguous;
  OpCase c;
  c.family = "indexing";
  c.name = fmt::format("{} {} {} {} dim {} ids {} {}", op_name(op), dtype_name(dt), layout_kind_name(lk),
                       shape.str(), dim, dtype_name(idt), layout_kind_name(ids_lk));
  c.dtype = dt;
  c.layout = lk;
  c.vs_reference = c.vs_cpu = Tolerance::exact_match();
  auto ids_of = [=](uint64_t seed) { return ids_for(Shape(g.ids).elem_count(), g.self[dim], seed + 1); };
  auto src_of = [=](uint64_t seed) { return refs::seeded_values(dt, Shape(g.src).elem_count(), seed + 2); };
  auto build = [=](Device dev, uint64_t seed) {
    Tensor x = make_input(refs::seeded_inputs(dt, shape, lk, seed), shape, dt, dev, lk);
    Tensor ids = ids_tensor(ids_of(seed), Shape(g.ids), idt, dev, ids_lk);
    Tensor src = g.src.empty() ? Tensor() : make_input(src_of(seed), Shape(g.src), dt, dev, src_lk);
    return std::make_tuple(x, ids, src);
  };
  auto apply = [=](const Tensor& x, const Tensor& ids, const Tensor& src) {
    switch (op) {
      case Op::IndexSelect:
        return x.index_select(ids, int64_t(dim));
      case Op::Gather:
        return x.gather(ids, int64_t(dim));
      case Op::Scatter:
        return x.scatter(ids, src, int64_t(dim));
      case Op::ScatterAdd:
        return x.scatter_add(ids, src, int64_t(dim));
      case Op::ScatterInPlace: {
        Tensor y = x.copy();
        y.scatter_add_(ids, src, int64_t(dim));
        return y;
      }
      case Op::IndexAdd:
        return x.index_add(ids, src, int64_t(dim));
    }
    return Tensor();
  };
  c.run = [=](Device dev, uint64_t seed) {
    auto [x, ids, src] = build(dev, seed);
    return std::vector<Tensor>{apply(x, ids, src)};
  };
  c.reference = [=](uint64_t seed) {
    return std::vector<Values>{
        reference(op, g, refs::seeded_inputs(dt, shape, lk, seed), ids_of(seed), src_of(seed), dt)};
  };
  if (bench) {
    // Each selected slice is read once and written once, plus the ids.
    size_t n_ids = Shape(g.ids).elem_count(), slice = shape.elem_count() / shape[dim];
    c.bytes = double(2 * n_ids * slice * dtype_size(dt) + n_ids * dtype_size(idt));
    c.prepare = [=](Device dev, uint64_t seed) {
      // Named tensors, not a structured binding: clang 14 cannot capture one.
      const auto built = build(dev, seed);
      const Tensor x = std::get<0>(built), ids_t = std::get<1>(built), src = std::get<2>(built);
      return std::function<std::vector<Tensor>()>([=] { return std::vector<Tensor>{apply(x, ids_t, src)}; });
    };
  }
  return c;
}

std::vector<OpCase> indexing_cases() {
  std::vector<OpCase> cs;
  const Op ops[] = {Op::IndexSelect, Op::Gather,         Op::Scatter,
                    Op::ScatterAdd,  Op::ScatterInPlace, Op::IndexAdd};
  const LayoutKind layouts[] = {LayoutKind::Contiguous, LayoutKind::Transposed, LayoutKind::Broadcast,
                                LayoutKind::Narrowed,   LayoutKind::Size1,      LayoutKind::Empty};
  // Every value dtype x layout x dim (u32 ids); the Empty shape indexes its non-empty dims only.
  for (DType dt : kAllDTypes) {
    for (LayoutKind lk : layouts) {
      Shape s = lk == LayoutKind::Size1   ? Shape{5, 1, 33}
                : lk == LayoutKind::Empty ? Shape{5, 0, 33}
                                          : Shape{5, 17, 33};
      for (Op op : ops) {
        for (size_t dim = 0; dim < 3; ++dim) {
          if (s[dim] == 0) continue;
          cs.push_back(indexing_case(op, dt, lk, s, dim, DType::U32));
        }
      }
    }
  }
  // Every ids dtype, contiguous and strided ids.
  for (DType idt : {DType::U8, DType::U32, DType::I32, DType::I64}) {
    for (Op op : ops) {
      for (size_t dim = 0; dim < 3; ++dim) {
        LayoutKind strided =
            op == Op::IndexSelect || op == Op::IndexAdd ? LayoutKind::Narrowed : LayoutKind::Transposed;
        cs.push_back(indexing_case(op, DType::F32, LayoutKind::Contiguous, Shape{5, 17, 33}, dim, idt));
        cs.push_back(
            indexing_case(op, DType::BF16, LayoutKind::Contiguous, Shape{5, 17, 33}, dim, idt, strided));
      }
    }
  }
  // Bench: an embedding lookup (4096 rows of 1024 from a 16384-row table) in f32 and f16.
  for (DType dt : {DType::F32, DType::F16}) {
    cs.push_back(indexing_case(Op::IndexSelect, dt, LayoutKind::Contiguous, Shape{16384, 1024}, 0, DType::U32,
                               LayoutKind::Contiguous, 4096, true));
  }
  return cs;
}

const bool kRegistered = register_cases(indexing_cases());

}  // namespace
}  // namespace wick::check
