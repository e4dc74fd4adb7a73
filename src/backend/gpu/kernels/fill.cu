// FILL family: const_set_{dtype} (in place on a possibly strided view),
// copy2d_{dtype} (a d1 x d2 block between row-strided buffers; used by cat and
// slice_set), rand_uniform_{dtype} / rand_normal_{dtype} (Philox-4x32-10, the
// stream of src/backend/common/philox.h, shared with the CPU backend).
#include "../../common/philox.h"
#include "common.cuh"

namespace wk {

template <class T>
__device__ void const_set(size_t numel, int nd, const size_t* info, T value, T* out) {
  const size_t tid = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t nthreads = size_t(gridDim.x) * blockDim.x;
  if (info == nullptr) {
    constexpr int V = int(plan::kVectorBytes / sizeof(T));
    if (aligned16(out)) {
      Vec<T, V> vv;
#pragma unroll
      for (int j = 0; j < V; ++j) vv.v[j] = value;
      const size_t nvec = numel / V;
      for (size_t v = tid; v < nvec; v += nthreads) reinterpret_cast<Vec<T, V>*>(out)[v] = vv;
      for (size_t i = nvec * V + tid; i < numel; i += nthreads) out[i] = value;
    } else {
      for (size_t i = tid; i < numel; i += nthreads) out[i] = value;
    }
    return;
  }
  const size_t* dims = info;
  const size_t* strides = info + nd;
  if (numel <= 0xffffffffull && strided_extent(nd, dims, strides) <= 0xffffffffull) {
    for (size_t i = tid; i < numel; i += nthreads)
      out[strided_offset<uint32_t>(uint32_t(i), nd, dims, strides)] = value;
  } else {
    for (size_t i = tid; i < numel; i += nthreads) out[strided_offset<size_t>(i, nd, dims, strides)] = value;
  }
}

// dst[i*dst_s + j] = src[i*src_s + j] for i < d1, j < d2 (pointers pre-offset).
template <class T>
__device__ void copy2d(const T* src, T* dst, size_t d1, size_t d2, size_t src_s, size_t dst_s) {
  const size_t tid = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t nthreads = size_t(gridDim.x) * blockDim.x;
  constexpr int V = int(plan::kVectorBytes / sizeof(T));
  const bool vec = d2 % V == 0 && src_s % V == 0 && dst_s % V == 0 && aligned16(src) && aligned16(dst);
  const size_t w = vec ? d2 / V : d2;  // row width in work items
  const size_t n = d1 * w;
  const bool small = n <= 0xffffffffull;
  for (size_t k = tid; k < n; k += nthreads) {
    size_t i, j;
    if (small) {
      i = uint32_t(k) / uint32_t(w);
      j = uint32_t(k) - uint32_t(i) * uint32_t(w);
    } else {
      i = k / w;
      j = k - i * w;
    }
    if (vec) {
      reinterpret_cast<Vec<T, V>*>(dst + i * dst_s)[j] =
          reinterpret_cast<const Vec<T, V>*>(src + i * src_s)[j];
    } else {
      dst[i * dst_s + j] = src[i * src_s + j];
    }
  }
}

template <class T>
__device__ __forceinline__ T round_from_double(double d) {
  if constexpr (std::is_same<T, f16s>::value)
    return f16s{f64_to_small<5, 10>(d)};
  else if constexpr (std::is_same<T, bf16s>::value)
    return bf16s{f64_to_small<8, 7>(d)};
  else
    return T(d);
}

template <class T>
__device__ void rand_uniform(size_t numel, double lo, double up, uint64_t seed, uint64_t offset, T* out) {
  const size_t tid = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t nthreads = size_t(gridDim.x) * blockDim.x;
  for (size_t i = tid; i < numel; i += nthreads) {
    const ::wick::philox::Words w = ::wick::philox::philox4x32_10(i, offset, seed);
    const double u =
        std::is_same<T, double>::value ? ::wick::philox::uniform53(w) : ::wick::philox::uniform24(w);
    out[i] = round_from_double<T>(fma(u, up - lo, lo));
  }
}

template <class T>
__device__ void rand_normal(size_t numel, double mean, double std, uint64_t seed, uint64_t offset, T* out) {
  const size_t tid = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t nthreads = size_t(gridDim.x) * blockDim.x;
  const double two_pi = 6.283185307179586476925286766559;
  for (size_t i = tid; i < numel; i += nthreads) {
    const ::wick::philox::Words w = ::wick::philox::philox4x32_10(i, offset, seed);
    const double u1 = ::wick::philox::open01(w.w[0]), u2 = ::wick::philox::open01(w.w[1]);
    const double z = sqrt(-2.0 * log(u1)) * cos(two_pi * u2);
    out[i] = round_from_double<T>(fma(z, std, mean));
  }
}

}  // namespace wk

#define FILL_OPS(T, SFX, ...)                                                                             \
  WICK_KERNEL const_set_##SFX(size_t numel, size_t num_dims, const size_t* info, const T value, T* out) { \
    wk::const_set(numel, int(num_dims), info, value, out);                                                \
  }                                                                                                       \
  WICK_KERNEL copy2d_##SFX(const T* src, T* dst, size_t d1, size_t d2, size_t src_s, size_t dst_s) {      \
    wk::copy2d(src, dst, d1, d2, src_s, dst_s);                                                           \
  }
#define RAND_OPS(T, SFX, ...)                                                                          \
  WICK_KERNEL rand_uniform_##SFX(size_t numel, double lo, double up, uint64_t seed, uint64_t offset,   \
                                 T* out) {                                                             \
    wk::rand_uniform(numel, lo, up, seed, offset, out);                                                \
  }                                                                                                    \
  WICK_KERNEL rand_normal_##SFX(size_t numel, double mean, double std, uint64_t seed, uint64_t offset, \
                                T* out) {                                                              \
    wk::rand_normal(numel, mean, std, seed, offset, out);                                              \
  }

WK_ALL_DTYPES(FILL_OPS, )
WK_FLOAT_DTYPES(RAND_OPS, )
