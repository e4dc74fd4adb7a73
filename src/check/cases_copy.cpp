// Parity cases of the copy family: strided copies through contiguous()/copy()
// (transposed, narrowed, broadcast, permuted), cat, stack, fill_, slice_set_,
// to_device round trips, and rand/randn (same numbers on every device).
// References are host loops over the row-major values; every comparison is exact
// except randn (Box-Muller through the math library).
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "wick/check.h"
#include "check/philox_ref.h"

namespace wick::check {
namespace {

using Values = std::vector<double>;

// Seeded values suited to a dtype; float inputs carry a NaN, an infinity and a -0
// so copies are seen to move them bit for bit.
Values values_for(DType dt, size_t n, uint64_t seed) {
  Values v;
  if (dt == DType::U8) {
    v = random_values(n, seed, 0.0, 256.0);
  } else if (dt == DType::U32) {
    v = random_values(n, seed, 0.0, 4.0e9);
  } else if (is_float(dt)) {
    v = random_values(n, seed, -100.0, 100.0);
    if (n > 3) {
      v[0] = std::numeric_limits<double>::quiet_NaN();
      v[1] = -std::numeric_limits<double>::infinity();
      v[2] = -0.0;
    }
  } else {
    v = random_values(n, seed, -2.0e9, 2.0e9);
  }
  return round_to_dtype(v, dt);
}

// Values constant along dim 0 (what a Broadcast input needs).
Values broadcast_values(DType dt, const Shape& shape, uint64_t seed) {
  size_t inner = shape.rank() && shape[0] ? shape.elem_count() / shape[0] : 0;
  Values row = values_for(dt, inner, seed), v(shape.elem_count());
  for (size_t i = 0; i < v.size(); ++i) v[i] = row[i % inner];
  return v;
}

Values inputs(DType dt, const Shape& shape, LayoutKind lk, uint64_t seed) {
  return lk == LayoutKind::Broadcast ? broadcast_values(dt, shape, seed)
                                     : values_for(dt, shape.elem_count(), seed);
}

// Cases at least this large declare bytes, so `wick bench` times them.
constexpr size_t kBenchElems = size_t(1) << 20;

double bytes_of(const Shape& s, DType dt) { return double(s.elem_count() * dtype_size(dt)); }

// contiguous() of a view (copy() when the view is already contiguous, so a copy
// kernel runs either way): the output equals the input values.
OpCase layout_copy_case(DType dt, LayoutKind lk, const Shape& shape) {
  OpCase c;
  c.family = "copy";
  c.name = fmt::format("contiguous {} {} {}", dtype_name(dt), layout_kind_name(lk), shape.str());
  c.dtype = dt;
  c.layout = lk;
  c.vs_reference = c.vs_cpu = Tolerance::exact_match();
  c.run = [=](Device dev, uint64_t seed) {
    Tensor x = make_input(inputs(dt, shape, lk, seed), shape, dt, dev, lk);
    return std::vector<Tensor>{x.is_contiguous() ? x.copy() : x.contiguous()};
  };
  c.reference = [=](uint64_t seed) { return std::vector<Values>{inputs(dt, shape, lk, seed)}; };
  c.prepare = [=](Device dev, uint64_t seed) {
    Tensor x = make_input(inputs(dt, shape, lk, seed), shape, dt, dev, lk);
    return std::function<std::vector<Tensor>()>([x] { return std::vector<Tensor>{x.copy()}; });
  };
  // Only bench-sized copies are `wick bench` cases (small ones measure call overhead).
  if (shape.elem_count() >= kBenchElems) c.bytes = 2 * bytes_of(shape, dt);
  return c;
}

// permute(order).contiguous() of a contiguous [a,b,c] input.
OpCase permute_case(DType dt, const Shape& shape, std::vector<int64_t> order) {
  OpCase c;
  c.family = "copy";
  c.name =
      fmt::format("permute {} {} order {},{},{}", dtype_name(dt), shape.str(), order[0], order[1], order[2]);
  c.dtype = dt;
  c.vs_reference = c.vs_cpu = Tolerance::exact_match();
  c.run = [=](Device dev, uint64_t seed) {
    Tensor x = make_input(values_for(dt, shape.elem_count(), seed), shape, dt, dev, LayoutKind::Contiguous);
    return std::vector<Tensor>{x.permute(order).contiguous()};
  };
  c.reference = [=](uint64_t seed) {
    Values v = values_for(dt, shape.elem_count(), seed), out(v.size());
    size_t in_strides[3] = {shape[1] * shape[2], shape[2], 1};
    size_t od[3] = {shape[size_t(order[0])], shape[size_t(order[1])], shape[size_t(order[2])]};
    size_t o = 0;
    for (size_t i = 0; i < od[0]; ++i)
      for (size_t j = 0; j < od[1]; ++j)
        for (size_t k = 0; k < od[2]; ++k)
          out[o++] = v[i * in_strides[order[0]] + j * in_strides[order[1]] + k * in_strides[order[2]]];
    return std::vector<Values>{out};
  };
  return c;
}

// cat of inputs that differ along `dim`; input 1 is transposed, input 2 narrowed,
// so cat copies strided sources too.
OpCase cat_case(DType dt, int64_t dim, bool stack) {
  const size_t rank = 3;
  size_t d = size_t(dim);
  std::vector<Shape> shapes;
  for (size_t i = 0; i < 3; ++i) {
    std::vector<size_t> s = {3, 4, 5};
    if (!stack) s[d] = 2 + i;  // 2, 3, 4 along the cat dim
    shapes.push_back(Shape(s));
  }
  const LayoutKind lks[3] = {LayoutKind::Contiguous, LayoutKind::Transposed, LayoutKind::Narrowed};
  OpCase c;
  c.family = "copy";
  c.name = fmt::format("{} {} dim {} of 3 (contiguous, transposed, narrowed)", stack ? "stack" : "cat",
                       dtype_name(dt), dim);
  c.dtype = dt;
  c.vs_reference = c.vs_cpu = Tolerance::exact_match();
  c.run = [=](Device dev, uint64_t seed) {
    std::vector<Tensor> xs;
    for (size_t i = 0; i < 3; ++i)
      xs.push_back(make_input(values_for(dt, shapes[i].elem_count(), seed + i), shapes[i], dt, dev, lks[i]));
    return std::vector<Tensor>{stack ? Tensor::stack(xs, dim) : Tensor::cat(xs, dim)};
  };
  c.reference = [=](uint64_t seed) {
    // Output index (outer, along, inner) reads input i at its own (outer, along - start_i, inner).
    Values out;
    std::vector<Values> in;
    for (size_t i = 0; i < 3; ++i) in.push_back(values_for(dt, shapes[i].elem_count(), seed + i));
    size_t outer = 1, inner = 1;
    // stack inserts a new dim of size 3 at `dim`: the inputs are [outer, 1, inner] slabs.
    for (size_t k = 0; k < d; ++k) outer *= shapes[0][k];
    for (size_t k = stack ? d : d + 1; k < rank; ++k) inner *= shapes[0][k];
    for (size_t o = 0; o < outer; ++o)
      for (size_t i = 0; i < 3; ++i) {
        size_t along = stack ? 1 : shapes[i][d];
        for (size_t a = 0; a < along; ++a)
          for (size_t k = 0; k < inner; ++k) out.push_back(in[i][(o * along + a) * inner + k]);
      }
    return std::vector<Values>{out};
  };
  return c;
}

// fill_ of a strided view (columns 2..4 of a [6,8] tensor) writes only the view.
OpCase fill_case(DType dt, double value) {
  OpCase c;
  c.family = "copy";
  c.name = fmt::format("fill_ {} columns 2..4 of [6,8] with {}", dtype_name(dt), value);
  c.dtype = dt;
  c.layout = LayoutKind::Narrowed;
  c.vs_reference = c.vs_cpu = Tolerance::exact_match();
  c.run = [=](Device dev, uint64_t seed) {
    Tensor x = make_input(values_for(dt, 48, seed), Shape{6, 8}, dt, dev, LayoutKind::Contiguous);
    Tensor view = x.narrow(1, 2, 3);
    view.fill_(Scalar(value));
    return std::vector<Tensor>{x};
  };
  c.reference = [=](uint64_t seed) {
    Values v = values_for(dt, 48, seed);
    double stored = round_to_dtype({value}, dt)[0];
    for (size_t r = 0; r < 6; ++r)
      for (size_t j = 2; j < 5; ++j) v[r * 8 + j] = stored;
    return std::vector<Values>{v};
  };
  return c;
}

// Tensor::full of a whole tensor (const_set on a contiguous layout).
OpCase full_case(DType dt, double value, const Shape& shape) {
  OpCase c;
  c.family = "copy";
  c.name = fmt::format("full {} {} with {}", dtype_name(dt), shape.str(), value);
  c.dtype = dt;
  c.vs_reference = c.vs_cpu = Tolerance::exact_match();
  c.run = [=](Device dev, uint64_t) {
    return std::vector<Tensor>{Tensor::full(Scalar(value), shape, dt, dev)};
  };
  c.reference = [=](uint64_t) {
    return std::vector<Values>{Values(shape.elem_count(), round_to_dtype({value}, dt)[0])};
  };
  c.prepare = [=](Device dev, uint64_t) {
    return std::function<std::vector<Tensor>()>(
        [=] { return std::vector<Tensor>{Tensor::full(Scalar(value), shape, dt, dev)}; });
  };
  if (shape.elem_count() >= kBenchElems) c.bytes = bytes_of(shape, dt);
  return c;
}

// slice_set_ of a transposed [rows, 3] source into a contiguous [6,8] destination at
// dim `dim` (1: columns 2..4; 0: rows 2..4).
OpCase slice_set_case(DType dt, int64_t dim) {
  Shape src_shape = dim == 1 ? Shape{6, 3} : Shape{3, 8};
  OpCase c;
  c.family = "copy";
  c.name =
      fmt::format("slice_set_ {} transposed {} into [6,8] dim {} at 2", dtype_name(dt), src_shape.str(), dim);
  c.dtype = dt;
  c.layout = LayoutKind::Transposed;
  c.vs_reference = c.vs_cpu = Tolerance::exact_match();
  c.run = [=](Device dev, uint64_t seed) {
    Tensor dst = make_input(values_for(dt, 48, seed), Shape{6, 8}, dt, dev, LayoutKind::Contiguous);
    Tensor src = make_input(values_for(dt, src_shape.elem_count(), seed + 7), src_shape, dt, dev,
                            LayoutKind::Transposed);
    dst.slice_set_(src, dim, 2);
    return std::vector<Tensor>{dst};
  };
  c.reference = [=](uint64_t seed) {
    Values v = values_for(dt, 48, seed), s = values_for(dt, src_shape.elem_count(), seed + 7);
    for (size_t r = 0; r < src_shape[0]; ++r)
      for (size_t j = 0; j < src_shape[1]; ++j) {
        size_t dr = dim == 0 ? r + 2 : r, dc = dim == 1 ? j + 2 : j;
        v[dr * 8 + dc] = s[r * src_shape[1] + j];
      }
    return std::vector<Values>{v};
  };
  return c;
}

// A transposed CPU tensor sent to the device, back to the CPU and out again.
OpCase round_trip_case(DType dt) {
  Shape shape{9, 14};
  OpCase c;
  c.family = "copy";
  c.name = fmt::format("to_device round trip {} transposed {}", dtype_name(dt), shape.str());
  c.dtype = dt;
  c.layout = LayoutKind::Transposed;
  c.vs_reference = c.vs_cpu = Tolerance::exact_match();
  c.run = [=](Device dev, uint64_t seed) {
    Tensor host = make_input(values_for(dt, shape.elem_count(), seed), shape, dt, Device::cpu(),
                             LayoutKind::Transposed);
    Tensor there = host.to_device(dev);
    Tensor back = there.to_device(Device::cpu());
    return std::vector<Tensor>{back.to_device(dev)};
  };
  c.reference = [=](uint64_t seed) { return std::vector<Values>{values_for(dt, shape.elem_count(), seed)}; };
  return c;
}

// rand / randn after manual_seed: the documented Philox stream, counter offset 0.
OpCase rand_case(DType dt, bool normal) {
  const size_t n = 4099;  // not a multiple of 4 or of a block
  const double a = normal ? 0.5 : -3.0, b = normal ? 2.0 : 5.0;
  OpCase c;
  c.family = "copy";
  c.name = fmt::format("{} {} [{}] ({} {})", normal ? "randn" : "rand", dtype_name(dt), n, a, b);
  c.dtype = dt;
  // rand is a fixed formula rounded once: exact. randn goes through log/cos/sqrt of
  // the platform's math library, which may differ in the last bit of a double.
  c.vs_reference = c.vs_cpu = normal ? float_tolerance(dt, 2.0) : Tolerance::exact_match();
  if (normal && dt == DType::F64) c.vs_reference = c.vs_cpu = Tolerance::close(1e-12, 1e-12);
  c.run = [=](Device dev, uint64_t seed) {
    Tensor::manual_seed(seed, dev);
    Tensor t = normal ? Tensor::randn(Shape{n}, dt, dev, a, b) : Tensor::rand(Shape{n}, dt, dev, a, b);
    return std::vector<Tensor>{t};
  };
  c.reference = [=](uint64_t seed) {
    Values v(n);
    for (size_t i = 0; i < n; ++i)
      v[i] = normal ? philox_ref::normal(i, 0, seed, a, b)
                    : philox_ref::uniform(i, 0, seed, dt == DType::F64, a, b);
    return std::vector<Values>{round_to_dtype(v, dt)};
  };
  return c;
}

std::vector<OpCase> copy_cases() {
  std::vector<OpCase> cases;
  for (DType dt : kAllDTypes) {
    cases.push_back(layout_copy_case(dt, LayoutKind::Contiguous, Shape{33, 17}));
    cases.push_back(layout_copy_case(dt, LayoutKind::Transposed, Shape{33, 17}));
    cases.push_back(layout_copy_case(dt, LayoutKind::Transposed, Shape{3, 16, 5}));
    cases.push_back(layout_copy_case(dt, LayoutKind::Narrowed, Shape{7, 33}));
    cases.push_back(layout_copy_case(dt, LayoutKind::Narrowed, Shape{1000}));
    cases.push_back(layout_copy_case(dt, LayoutKind::Broadcast, Shape{5, 4, 9}));
    cases.push_back(layout_copy_case(dt, LayoutKind::Size1, Shape{1, 1}));
    cases.push_back(layout_copy_case(dt, LayoutKind::Empty, Shape{0, 5}));
    cases.push_back(permute_case(dt, Shape{4, 5, 6}, {2, 0, 1}));
    cases.push_back(fill_case(dt, 7.0));
    cases.push_back(full_case(dt, -3.0, Shape{5, 13}));
    cases.push_back(slice_set_case(dt, 0));
    cases.push_back(slice_set_case(dt, 1));
    cases.push_back(round_trip_case(dt));
  }
  for (DType dt : {DType::U8, DType::I64, DType::F16, DType::F32}) {
    for (int64_t dim : {0, 1, 2}) {
      cases.push_back(cat_case(dt, dim, false));
      cases.push_back(cat_case(dt, dim, true));
    }
  }
  for (DType dt : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    cases.push_back(rand_case(dt, false));
    cases.push_back(rand_case(dt, true));
  }
  // Bench-sized copies (a plain copy and a transposed one) for `wick bench`.
  cases.push_back(layout_copy_case(DType::F32, LayoutKind::Contiguous, Shape{2048, 2048}));
  cases.push_back(layout_copy_case(DType::F32, LayoutKind::Transposed, Shape{2048, 2048}));
  cases.push_back(full_case(DType::F32, 1.5, Shape{2048, 2048}));
  return cases;
}

const bool kRegistered = register_cases(copy_cases());

}  // namespace
}  // namespace wick::check
