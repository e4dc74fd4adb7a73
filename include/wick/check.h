// The parity harness (ggml's test-backend-ops idea): op cases with seeded random
// inputs, run on every available device. On the CPU a case is checked against its
// float64 reference written here (not through any backend); on a GPU against the
// CPU backend. Shared by tests (tests/test_parity.cpp), `wick check` and `wick bench`.
//
// Families register cases in src/check/cases_<family>.cpp with
//   static const bool kRegistered = wick::check::register_cases({...});
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "wick/tensor.h"

namespace wick::check {

// How an input is laid out: the case builds a tensor of the logical shape with
// that memory arrangement (values identical for every layout).
enum class LayoutKind { Contiguous, Transposed, Broadcast, Narrowed, Size1, Empty };
const char* layout_kind_name(LayoutKind k);

// Host-side seeded input values (deterministic across devices and runs).
std::vector<double> random_values(size_t n, uint64_t seed, double lo = -2.0, double hi = 2.0);
// A tensor of `shape` and `dtype` on `dev` holding `values` (row-major, converted to
// dtype), laid out as `kind`: Transposed stores the last two dims swapped and returns
// the transposed view; Narrowed stores it inside a larger buffer at an offset;
// Broadcast returns a stride-0 view (values must then be constant along dim 0);
// Contiguous / Size1 / Empty are plain.
Tensor make_input(const std::vector<double>& values, const Shape& shape, DType dtype, Device dev,
                  LayoutKind kind);

// A comparison bound. Exact: every element bit-equal after conversion to f64
// (NaN matches NaN). Otherwise an element passes if |a-b| <= atol + rtol*|b|, and the
// whole output must have NMSE <= nmse (0 = unchecked).
struct Tolerance {
  bool exact = false;
  double atol = 0, rtol = 0, nmse = 0;
  static Tolerance exact_match() { return {true, 0, 0, 0}; }
  static Tolerance close(double atol, double rtol, double nmse = 0) { return {false, atol, rtol, nmse}; }
};
// The machine epsilon of a float dtype, the gap between 1 and the next value:
// 2^-10 (f16), 2^-7 (bf16), 2^-23 (f32), 2^-52 (f64); 0 for integer dtypes.
// Every per-dtype tolerance of the harness and the tests is built on it.
double float_epsilon(DType dt);
// The usual bound for a float dtype's rounding (f16/bf16/f32/f64), scaled by `ulps`.
Tolerance float_tolerance(DType dt, double ulps = 4.0);

struct OpCase {
  std::string family;  // "unary", "binary", "reduce", ...
  std::string name;    // "exp f32 transposed [33,17]"
  DType dtype = DType::F32;
  LayoutKind layout = LayoutKind::Contiguous;
  Tolerance vs_reference;  // CPU output vs the float64 reference
  Tolerance vs_cpu;        // another device's output vs the CPU output
  // Runs the op on `dev` with inputs built from `seed`; returns its outputs.
  std::function<std::vector<Tensor>(Device dev, uint64_t seed)> run;
  // The expected outputs in float64, computed on the host without wick ops.
  std::function<std::vector<std::vector<double>>(uint64_t seed)> reference;
  // Bytes moved and flops done by one run (for `wick bench`); 0 = not a bench case.
  double bytes = 0, flops = 0;
  // Optional, for `wick bench`: builds the inputs on `dev` once and returns a closure
  // that runs only the op (so timing excludes input creation and host transfers).
  // When unset, `wick bench` times `run` as a whole.
  std::function<std::function<std::vector<Tensor>()>(Device dev, uint64_t seed)> prepare;
};

bool register_cases(std::vector<OpCase> cases);
const std::vector<OpCase>& all_cases();

struct CaseResult {
  bool pass = false;
  bool skipped = false;
  double max_abs_err = 0;
  double nmse = 0;
  std::string detail;  // first mismatch, or the error message an op threw
};

// Runs one case on `dev` (CPU: against the reference; GPU: against the CPU).
CaseResult run_case(const OpCase& c, Device dev, uint64_t seed = 1234);

// --- helpers for case writers and runners (additions) ---------------------------
// `values` as they read back after storing them in `dtype` (the rounding / truncation
// / saturation of a cast), so a reference can start from exactly what the op saw.
std::vector<double> round_to_dtype(const std::vector<double>& values, DType dtype);
// Compares `got` with `expected` (row-major, same count) under `tol`; fills
// max_abs_err, nmse, pass and (on failure) detail naming the first bad element.
CaseResult compare_values(const std::vector<double>& got, const std::vector<double>& expected,
                          const Tolerance& tol);
// The distinct family names of the registered cases, in registration order.
std::vector<std::string> families();
// Whether `dev` is present in this process; when not, `why` says why (for skips).
bool device_present(Device dev, std::string* why = nullptr);

}  // namespace wick::check
