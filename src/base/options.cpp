// The one place that reads the environment (wick/options.h).
#include "wick/options.h"

#include <fmt/format.h>

#include <cstdlib>
#include <mutex>
#include <string_view>

#include "wick/error.h"
#include "wick/quant.h"

namespace wick {

namespace {

std::string_view env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string_view(v) : std::string_view();
}

// A non-negative integer, or `fallback` when unset; anything else is an error
// naming the variable (a typo should not pass silently).
uint64_t env_count(const char* name, uint64_t fallback) {
  const std::string_view v = env(name);
  if (v.empty()) return fallback;
  uint64_t x = 0;
  for (char c : v) {
    if (c < '0' || c > '9' || x > (UINT64_MAX - 9) / 10)
      throw_error(ErrorKind::InvalidArgument, "options", fmt::format("{}={}: expected a non-negative integer", name, v));
    x = x * 10 + uint64_t(c - '0');
  }
  return x;
}

QMatmulPath parse_qmatmul_path(std::string_view v) {
  if (v.empty() || v == "auto") return QMatmulPath::Auto;
  if (v == "matvec") return QMatmulPath::MatVec;
  if (v == "dequant_gemm") return QMatmulPath::DequantGemm;
  throw_error(ErrorKind::InvalidArgument, "options",
              fmt::format("WICK_QMATMUL={}: expected auto, matvec or dequant_gemm", v));
}

struct State {
  std::mutex mu;
  Options current;
};

State& state() {
  static State* s = [] {
    auto* st = new State;  // never destroyed: read during static destruction too
    st->current = options_from_environment();
    return st;
  }();
  return *s;
}

}  // namespace

Options options_from_environment() {
  Options o;
  o.portable_gemm = env("WICK_GEMM") == "portable";
  o.allow_tf32 = env("WICK_ALLOW_TF32") == "1";
  o.qmatmul_path = parse_qmatmul_path(env("WICK_QMATMUL"));
  o.backend_path = std::string(env("WICK_BACKEND_PATH"));
  o.cpu_threads = int(std::min<uint64_t>(env_count("WICK_NUM_THREADS", 0), 1u << 16));
  o.cpu_cache_bytes = size_t(env_count("WICK_CPU_CACHE_BYTES", o.cpu_cache_bytes));
  return o;
}

Options options() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.current;
}

void set_options(const Options& o) {
  if (o.cpu_threads < 0)
    throw_error(ErrorKind::InvalidArgument, "options", fmt::format("cpu_threads {} is negative", o.cpu_threads));
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.current = o;
}

}  // namespace wick
