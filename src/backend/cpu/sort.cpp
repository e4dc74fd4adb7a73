// CPU argsort along the last dim of a contiguous input, rows split across threads.
//
// Each value maps to an unsigned key whose integer order is the wanted order: floats by their bits
// (sign-flipped so integer order is numeric order, -0.0 folded onto 0.0, every NaN onto the largest key
// so it sorts last in both directions), signed integers by flipping the sign bit, and the key inverted
// for a descending sort (before NaN is placed). 32-bit keys pack with the index into one u64, so a plain
// integer sort gives the stable order (ties fall back to the index); 64-bit keys sort as (key, index)
// pairs, the same order.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "backend/cpu/cpu_storage.h"
#include "backend/cpu/strided.h"
#include "base/dispatch.h"

namespace wick {

namespace {

// The key type of an element type: 64 bits for f64/i64, 32 bits for the rest.
template <class T>
using key_t = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;

template <class T>
key_t<T> sort_key(T x, bool asc) {
  using K = key_t<T>;
  constexpr K kSign = K(1) << (sizeof(K) * 8 - 1);
  K k;
  if constexpr (std::is_integral_v<T>) {
    k = std::is_signed_v<T> ? K(std::make_unsigned_t<T>(x)) ^ (K(1) << (sizeof(T) * 8 - 1)) : K(x);
  } else {
    using F = std::conditional_t<sizeof(T) == 8, double, float>;
    F f = F(x);
    if (std::isnan(f)) return ~K(0);  // last in both orders; NaNs tie and keep their input order
    if (f == F(0)) f = F(0);          // -0.0 sorts with 0.0
    K bits = std::bit_cast<K>(f);
    k = (bits & kSign) ? ~bits : bits | kSign;
  }
  // Inverting never yields ~0 for a non-NaN float (the largest such key is that of -inf, inverted).
  return asc ? k : ~k;
}

template <class T>
void argsort_rows(const T* x, uint32_t* out, size_t rows, size_t n, bool asc) {
  cpu::parallel_for(rows, (size_t(1) << 16) / n + 1, [&](size_t b, size_t e) {
    if constexpr (sizeof(key_t<T>) == 4) {
      std::vector<uint64_t> buf(n);
      for (size_t r = b; r < e; ++r) {
        const T* row = x + r * n;
        for (size_t i = 0; i < n; ++i) buf[i] = (uint64_t(sort_key(row[i], asc)) << 32) | uint64_t(i);
        std::sort(buf.begin(), buf.end());
        uint32_t* o = out + r * n;
        for (size_t i = 0; i < n; ++i) o[i] = uint32_t(buf[i]);
      }
    } else {
      std::vector<std::pair<uint64_t, uint32_t>> buf(n);
      for (size_t r = b; r < e; ++r) {
        const T* row = x + r * n;
        for (size_t i = 0; i < n; ++i) buf[i] = {sort_key(row[i], asc), uint32_t(i)};
        std::sort(buf.begin(), buf.end());
        uint32_t* o = out + r * n;
        for (size_t i = 0; i < n; ++i) o[i] = buf[i].second;
      }
    }
  });
}

}  // namespace

StoragePtr CpuStorage::argsort(const Layout& l, bool ascending) const {
  size_t total = l.elem_count();
  auto out = cpu_alloc(total, DType::U32);
  size_t n = l.rank() ? l.dims().back() : 1;
  if (total == 0) return out;
  size_t rows = total / n;
  dispatch_dtype(dtype_, "argsort", [&]<class T>() {
    argsort_rows(data<T>() + l.start_offset(), out->data<uint32_t>(), rows, n, ascending);
  });
  return out;
}

}  // namespace wick
