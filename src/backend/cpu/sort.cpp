// CPU argsort along the last dim of a contiguous input, rows split across threads.
//
// Each row sorts (key, index) pairs with the index as tie-breaker: that total order is exactly the
// stable order, and sorting packed pairs is faster than an indirect std::stable_sort. NaN sorts last
// in both orders (NaNs keep their input order among themselves); -0.0 and 0.0 compare equal.
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "backend/cpu/cpu_storage.h"
#include "backend/cpu/strided.h"
#include "backend/dispatch.h"

namespace wick {

namespace {

template <class C>
bool key_nan(C v) {
  if constexpr (std::is_floating_point_v<C>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// Strict "a goes before b" for keys, NaN last in both orders.
template <bool Asc, class C>
bool key_before(C a, C b) {
  if (key_nan(a)) return false;
  if (key_nan(b)) return true;
  return Asc ? a < b : a > b;
}

template <bool Asc, class T>
void argsort_rows(const T* x, uint32_t* out, size_t rows, size_t n) {
  using C = compute_t<T>;
  using Pair = std::pair<C, uint32_t>;
  cpu::parallel_for(rows, (size_t(1) << 16) / n + 1, [&](size_t b, size_t e) {
    std::vector<Pair> buf(n);
    for (size_t r = b; r < e; ++r) {
      const T* row = x + r * n;
      for (size_t i = 0; i < n; ++i) buf[i] = {C(row[i]), uint32_t(i)};
      std::sort(buf.begin(), buf.end(), [](const Pair& p, const Pair& q) {
        if (key_before<Asc>(p.first, q.first)) return true;
        if (key_before<Asc>(q.first, p.first)) return false;
        return p.second < q.second;
      });
      uint32_t* o = out + r * n;
      for (size_t i = 0; i < n; ++i) o[i] = buf[i].second;
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
    const T* x = data<T>() + l.start_offset();
    if (ascending) {
      argsort_rows<true>(x, out->data<uint32_t>(), rows, n);
    } else {
      argsort_rows<false>(x, out->data<uint32_t>(), rows, n);
    }
  });
  return out;
}

}  // namespace wick
