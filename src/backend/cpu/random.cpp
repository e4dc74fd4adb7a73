// rand / randn on the CPU: the Philox stream of src/backend/common/philox.h.
#include <cmath>

#include "backend/common/philox.h"
#include "backend/cpu/cpu_storage.h"
#include "backend/cpu/strided.h"
#include "base/dispatch.h"

namespace wick {

StoragePtr cpu_rand_uniform(size_t n, DType dtype, double lo, double up, uint64_t seed, uint64_t offset) {
  auto s = cpu_alloc(n, dtype);
  dispatch_dtype<kFloatDTypes>(dtype, "rand", [&]<class T>() {
    T* out = s->data<T>();
    cpu::parallel_for(n, 1 << 14, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) {
        philox::Words r = philox::philox4x32_10(i, offset, seed);
        double u = std::is_same_v<T, double> ? philox::uniform53(r) : philox::uniform24(r);
        out[i] = convert<T, double>(std::fma(u, up - lo, lo));
      }
    });
  });
  return s;
}

StoragePtr cpu_rand_normal(size_t n, DType dtype, double mean, double std, uint64_t seed, uint64_t offset) {
  auto s = cpu_alloc(n, dtype);
  dispatch_dtype<kFloatDTypes>(dtype, "randn", [&]<class T>() {
    T* out = s->data<T>();
    cpu::parallel_for(n, 1 << 14, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) {
        philox::Words r = philox::philox4x32_10(i, offset, seed);
        double u1 = philox::open01(r.w[0]), u2 = philox::open01(r.w[1]);
        double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586476925286766559 * u2);
        out[i] = convert<T, double>(std::fma(z, std, mean));
      }
    });
  });
  return s;
}

}  // namespace wick
