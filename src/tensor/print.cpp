// Tensor::str and operator<<: the values formatted as PyTorch's repr does
// (torch/_tensor_str.py with its default print options: precision 4, threshold 1000,
// edgeitems 3, linewidth 80), dtype and device named as wick names them.
//
// Floats: one format for the whole tensor, chosen from its non-zero finite values:
// integers only -> "2." (scientific when max/min > 1000 or max > 1e8); otherwise
// "%.4f", or "%.4e" when max/min > 1000, max > 1e8 or min < 1e-4. Every element is
// right-aligned to the widest. Past `threshold` elements each dim longer than
// 2 * edgeitems shows its first and last edgeitems entries around "...", and the
// format is chosen from the shown values only. Only those are copied to the host.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ostream>

#include "base/dispatch.h"
#include "tensor/checks.h"

namespace wick {

namespace {

constexpr size_t kPrecision = 4, kThreshold = 1000, kEdgeItems = 3, kLineWidth = 80;

// The elements of a (summarized) tensor, row-major, as f64 or (integer dtypes) i64.
struct HostValues {
  bool floating = false;
  std::vector<double> f;
  std::vector<int64_t> i;
  size_t size() const { return floating ? f.size() : i.size(); }
};

class Formatter {
 public:
  explicit Formatter(const HostValues& v) : v_(v) {
    if (!v.floating) {
      for (int64_t x : v.i) width_ = std::max(width_, std::to_string(x).size());
      return;
    }
    std::vector<double> nz;
    for (double x : v.f)
      if (std::isfinite(x) && x != 0) nz.push_back(x);
    if (nz.empty()) return;
    double lo = std::fabs(nz[0]), hi = lo;
    for (double x : nz) {
      lo = std::min(lo, std::fabs(x));
      hi = std::max(hi, std::fabs(x));
      int_mode_ = int_mode_ && x == std::ceil(x);
    }
    sci_ = hi / lo > 1000.0 || hi > 1.0e8 || (!int_mode_ && lo < 1.0e-4);
    for (double x : nz) width_ = std::max(width_, raw(x).size() + (int_mode_ && !sci_ ? 1 : 0));
  }
  size_t width() const { return width_; }
  // Element k, right-aligned to the width.
  std::string operator()(size_t k) const {
    std::string s = v_.floating ? raw(v_.f[k]) : std::to_string(v_.i[k]);
    if (v_.floating && int_mode_ && !sci_ && std::isfinite(v_.f[k])) s += ".";
    return std::string(width_ > s.size() ? width_ - s.size() : 0, ' ') + s;
  }

 private:
  // A float without the int-mode "." (NaN has no sign, as in Python).
  std::string raw(double x) const {
    if (std::isnan(x)) return "nan";
    if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
    if (sci_) return fmt::format("{:.{}e}", x, kPrecision);
    if (int_mode_) return fmt::format("{:.0f}", x);
    return fmt::format("{:.{}f}", x, kPrecision);
  }
  const HostValues& v_;
  bool int_mode_ = true, sci_ = false;
  size_t width_ = 1;
};

// Walks the host copy: dims of the copy, and per dim whether the middle was elided
// (the copy then holds the first and last kEdgeItems entries of that dim).
struct Printer {
  const Formatter& fmt;
  std::vector<size_t> dims, strides;
  std::vector<bool> elided;

  std::string vector_str(size_t base, size_t indent) const {
    const size_t n = dims.back(), stride = strides.back();
    const size_t element = fmt.width() + 2;
    const size_t per_line = std::max<size_t>(1, kLineWidth > indent ? (kLineWidth - indent) / element : 0);
    std::vector<std::string> items;
    for (size_t k = 0; k < n; ++k) {
      if (elided.back() && k == kEdgeItems) items.push_back(" ...");
      items.push_back(fmt(base + k * stride));
    }
    std::string out = "[";
    for (size_t k = 0; k < items.size(); ++k) {
      if (k > 0) out += k % per_line == 0 ? ",\n" + std::string(indent + 1, ' ') : ", ";
      out += items[k];
    }
    return out + "]";
  }

  std::string str(size_t dim, size_t base, size_t indent) const {
    const size_t left = dims.size() - dim;
    if (left == 0) return fmt(base);
    if (left == 1) return vector_str(base, indent);
    const std::string sep = "," + std::string(left - 1, '\n') + std::string(indent + 1, ' ');
    std::string out = "[";
    for (size_t k = 0; k < dims[dim]; ++k) {
      if (k > 0) out += sep;
      if (elided[dim] && k == kEdgeItems) out += "..." + sep;
      out += str(dim + 1, base + k * strides[dim], indent + 1);
    }
    return out + "]";
  }
};

// PyTorch's _add_suffixes: ", suffix" on the last line while it fits the line width.
std::string add_suffixes(std::string s, const std::vector<std::string>& suffixes, size_t indent) {
  const size_t nl = s.rfind('\n');
  size_t last = nl == std::string::npos ? s.size() + 2 : s.size() - nl + 1;
  for (const auto& suffix : suffixes) {
    if (last + suffix.size() + 2 > kLineWidth) {
      s += ",\n" + std::string(indent, ' ') + suffix;
      last = indent + suffix.size();
    } else {
      s += ", " + suffix;
      last += suffix.size() + 2;
    }
  }
  return s + ")";
}

}  // namespace

std::string Tensor::str() const {
  front::check_defined("str", *this, "tensor");
  const std::string prefix = "tensor(";
  std::vector<std::string> suffixes;
  if (!device_.is_cpu()) suffixes.push_back("device=" + device_.str());
  const std::string dtype_suffix = fmt::format("dtype={}", dtype_name(dtype_));
  if (elem_count() == 0) {
    if (rank() != 1) {
      std::string size = "size=(";
      for (size_t k = 0; k < rank(); ++k) size += (k ? ", " : "") + std::to_string(dims()[k]);
      suffixes.push_back(size + ")");
    }
    if (dtype_ != DType::F32) suffixes.push_back(dtype_suffix);
    return add_suffixes(prefix + "[]", suffixes, prefix.size());
  }
  if (dtype_ != DType::F32 && dtype_ != DType::I64) suffixes.push_back(dtype_suffix);

  // Summarize on the device: keep the first and last kEdgeItems of every long dim.
  const bool summarize = elem_count() > kThreshold;
  Tensor shown = *this;
  std::vector<bool> elided(rank(), false);
  for (size_t d = 0; summarize && d < rank(); ++d) {
    const size_t n = dims()[d];
    if (n <= 2 * kEdgeItems) continue;
    elided[d] = true;
    shown =
        cat({shown.narrow(int64_t(d), 0, kEdgeItems), shown.narrow(int64_t(d), n - kEdgeItems, kEdgeItems)},
            int64_t(d));
  }
  HostValues v;
  v.floating = is_float(dtype_);
  if (v.floating) {
    v.f = shown.to_f64_vector();
  } else {
    v.i = shown.to_dtype(DType::I64).to_vector<int64_t>();
  }
  Formatter f(v);
  Printer p{f, shown.dims(), shown.shape().contiguous_strides(), elided};
  return add_suffixes(prefix + p.str(0, 0, prefix.size()), suffixes, prefix.size());
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.str(); }

}  // namespace wick
