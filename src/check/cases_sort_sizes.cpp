// Parity cases for argsort at the row lengths where the GPU changes kernel: the
// register kernel (argsort_reg: 32-bit keys, rows padded to 512..4096, so 257..4096
// elements) at its edges and in between (257, 300, 512, 513, 1000, 2048, 2049, 4000,
// 4096), the shared-memory kernel below it (256) and the global merge above it (4097,
// 8192). Inputs have many ties (a few distinct values, so the stable order shows),
// NaN, +-inf and -0.0 (equal to 0.0); both orders; every 32-bit-key dtype, and i64 /
// f64 (64-bit keys) for contrast. The reference is a float64 stable sort with NaN
// last (refs::argsort).
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "wick/check.h"
#include "check/reduce_refs.h"

namespace wick::check {
namespace {

using Values = std::vector<double>;

// Few distinct values per dtype (ties everywhere); floats add NaN, +-inf and -0.0 at
// seeded positions.
Values tie_values(DType dt, size_t count, uint64_t seed) {
  const bool is_signed = dt != DType::U8 && dt != DType::U32;
  Values v = random_values(count, seed, is_signed ? -8.0 : 0.0, 8.0);
  for (auto& x : v) x = std::floor(x);
  if (!is_float(dt)) return v;
  Values pick = random_values(count, seed ^ 0x5eedull, 0.0, 1.0);
  for (size_t i = 0; i < count; ++i) {
    if (pick[i] < 0.03)
      v[i] = std::numeric_limits<double>::quiet_NaN();
    else if (pick[i] < 0.04)
      v[i] = pick[i] < 0.035 ? INFINITY : -INFINITY;
    else if (pick[i] < 0.10 && v[i] == 0.0)
      v[i] = -0.0;
  }
  return v;
}

OpCase argsort_size_case(DType dt, size_t rows, size_t n, bool asc) {
  Shape s{rows, n};
  OpCase c;
  c.family = "sort";
  c.name = fmt::format("argsort sizes {} {} rows {} x {}", asc ? "asc" : "desc", dtype_name(dt), rows, n);
  c.dtype = dt;
  c.vs_reference = c.vs_cpu = Tolerance::exact_match();
  c.run = [=](Device dev, uint64_t seed) {
    Tensor x = make_input(tie_values(dt, s.elem_count(), seed), s, dt, dev, LayoutKind::Contiguous);
    return std::vector<Tensor>{x.argsort(asc)};
  };
  c.reference = [=](uint64_t seed) {
    auto idx = refs::argsort(tie_values(dt, s.elem_count(), seed), n, asc);
    return std::vector<Values>{Values(idx.begin(), idx.end())};
  };
  return c;
}

std::vector<OpCase> build() {
  std::vector<OpCase> cs;
  const size_t sizes[] = {256, 257, 300, 512, 513, 1000, 2048, 2049, 4000, 4096, 4097, 8192};
  for (size_t n : sizes) {
    for (bool asc : {true, false}) {
      cs.push_back(argsort_size_case(DType::F32, 3, n, asc));
      cs.push_back(argsort_size_case(DType::BF16, 2, n, asc));
    }
    cs.push_back(argsort_size_case(DType::F16, 2, n, false));
    cs.push_back(argsort_size_case(DType::I32, 2, n, true));
    cs.push_back(argsort_size_case(DType::U32, 2, n, false));
    cs.push_back(argsort_size_case(DType::U8, 2, n, true));
  }
  for (size_t n : {size_t(2048), size_t(4096)}) {
    cs.push_back(argsort_size_case(DType::I64, 2, n, false));
    cs.push_back(argsort_size_case(DType::F64, 2, n, true));
  }
  // Many rows: more rows than the grid-stride loop's blocks take at once on small GPUs.
  cs.push_back(argsort_size_case(DType::F32, 700, 4096, true));
  cs.push_back(argsort_size_case(DType::F32, 1500, 600, false));
  return cs;
}

const bool kRegistered = register_cases(build());

}  // namespace
}  // namespace wick::check
