// Device helpers shared by every kernel family: element storage types, exact
// f16/bf16 conversions, strided indexing, and the one elementwise engine
// (map_n) that every unary, binary, ternary, affine and cast kernel is an
// instantiation of. Compiled unchanged by nvcc and hipcc.
//
// Kernel ABI (Candle's): (numel, num_dims, info, inputs..., out, params...).
// `info` is dims[num_dims] then one stride set per input (in elements), or null
// when every operand is contiguous. Input pointers arrive pre-offset by the
// layout's start offset; the output is contiguous.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <tuple>
#include <type_traits>
#include <utility>

#include "../launch_plan.h"
#include "../vendor.h"

// Every kernel's launch bound: the largest block the host launches (launch_plan.h).
#define WICK_MAX_BLOCK (::wick::gpu::plan::kMaxBlock)
#define WICK_KERNEL extern "C" __global__ void __launch_bounds__(WICK_MAX_BLOCK)

// M(storage type, kernel suffix, args...) for each dtype of a set: every kernel
// family instantiates its kernels (and the op tables of wick/op_table.h) over these.
// clang-format off
#define WK_FLOAT_DTYPES(M, ...)     \
  M(wk::f16s, f16, __VA_ARGS__)     \
  M(wk::bf16s, bf16, __VA_ARGS__)   \
  M(float, f32, __VA_ARGS__)        \
  M(double, f64, __VA_ARGS__)
#define WK_INT_DTYPES(M, ...)       \
  M(uint8_t, u8, __VA_ARGS__)       \
  M(uint32_t, u32, __VA_ARGS__)     \
  M(int32_t, i32, __VA_ARGS__)      \
  M(int64_t, i64, __VA_ARGS__)
// clang-format on
#define WK_ALL_DTYPES(M, ...) WK_INT_DTYPES(M, __VA_ARGS__) WK_FLOAT_DTYPES(M, __VA_ARGS__)

namespace wk {

// The launch geometry shared with the host code (launch_plan.h).
namespace plan = ::wick::gpu::plan;

// ---- element storage types ---------------------------------------------------------
// f16 and bf16 are stored as raw bits; arithmetic happens in float (compute type),
// exactly as the CPU backend does, with round-to-nearest-even conversions below.
struct f16s {
  uint16_t bits;
};
struct bf16s {
  uint16_t bits;
};

__device__ __forceinline__ uint32_t f2u(float f) { return __float_as_uint(f); }
__device__ __forceinline__ float u2f(uint32_t u) { return __uint_as_float(u); }
__device__ __forceinline__ uint64_t d2u(double d) { return uint64_t(__double_as_longlong(d)); }

__device__ __forceinline__ float f16_to_f32(uint16_t h) {
#if defined(WICK_HW_HALF_CVT)
  return wick_f16_bits_to_f32(h);
#endif
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t em = h & 0x7fffu;
  if (em >= 0x7c00u) return u2f(sign | 0x7f800000u | ((em & 0x3ffu) << 13));  // inf, NaN
  if (em < 0x400u) {                                                          // zero, subnormal: em * 2^-24
    float f = float(em) * 5.9604644775390625e-8f;
    return sign ? -f : f;
  }
  return u2f(sign | ((em + ((127u - 15u) << 10)) << 13));
}

// float -> f16, round to nearest even (F. Giesen's float_to_half_fast3_rtne);
// needs IEEE float adds with subnormals (no flush-to-zero), the compilers' default.
__device__ __forceinline__ uint16_t f32_to_f16(float f) {
#if defined(WICK_HW_HALF_CVT)
  return wick_f32_to_f16_bits(f);
#endif
  const uint32_t f32infty = 255u << 23, f16max = (127u + 16u) << 23;
  const float denorm_magic = u2f(((127u - 15u) + (23u - 10u) + 1u) << 23);
  uint32_t u = f2u(f);
  uint32_t sign = u & 0x80000000u;
  u ^= sign;
  uint32_t o;
  if (u >= f16max) {
    o = u > f32infty ? (0x7e00u | ((u >> 13) & 0x3ffu)) : 0x7c00u;
  } else if (u < (113u << 23)) {
    o = f2u(u2f(u) + denorm_magic) - f2u(denorm_magic);
  } else {
    uint32_t mant_odd = (u >> 13) & 1u;
    u += ((15u - 127u) << 23) + 0xfffu;
    u += mant_odd;
    o = u >> 13;
  }
  return uint16_t(o | (sign >> 16));
}

__device__ __forceinline__ float bf16_to_f32(uint16_t b) { return u2f(uint32_t(b) << 16); }
__device__ __forceinline__ uint16_t f32_to_bf16(float f) {
#if defined(WICK_HW_HALF_CVT)
  return wick_f32_to_bf16_bits(f);
#endif
  uint32_t u = f2u(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);  // quiet NaN
  return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// double -> a 16-bit float with E exponent and M mantissa bits, one rounding
// (to nearest even), the way the host's f64_to_f16_bits / f64_to_bf16_bits do.
template <int E, int M>
__device__ __forceinline__ uint16_t f64_to_small(double d) {
  uint64_t u = d2u(d);
  const uint16_t sign = uint16_t((u >> 48) & 0x8000u);
  u &= 0x7fffffffffffffffull;
  const uint32_t inf = ((1u << E) - 1u) << M;
  if (u > 0x7ff0000000000000ull) return uint16_t(sign | inf | (1u << (M - 1)));
  const int bias = (1 << (E - 1)) - 1, emin = 1 - bias;
  const int e = int(u >> 52) - 1023;
  if (e > bias) return uint16_t(sign | inf);
  uint64_t m = u & 0xfffffffffffffull;
  int shift;
  uint64_t base;
  if (e >= emin) {
    shift = 52 - M;
    base = uint64_t(e + bias) << M;
  } else {
    if (e > -1023) m |= 1ull << 52;
    shift = 52 - M + (emin - e);
    base = 0;
    if (shift > 63) return sign;
  }
  uint64_t res = base + (m >> shift);
  const uint64_t rem = m & ((1ull << shift) - 1), half = 1ull << (shift - 1);
  if (rem > half || (rem == half && (res & 1u))) ++res;
  if (res >= inf) return uint16_t(sign | inf);
  return uint16_t(sign | uint16_t(res));
}

// ---- compute types and conversions ----------------------------------------------------
template <class T>
struct ComputeOf {
  using type = T;
};
template <>
struct ComputeOf<f16s> {
  using type = float;
};
template <>
struct ComputeOf<bf16s> {
  using type = float;
};
template <class T>
using compute_t = typename ComputeOf<T>::type;

template <class T>
__device__ __forceinline__ compute_t<T> to_c(T x) {
  return x;
}
template <>
__device__ __forceinline__ float to_c<f16s>(f16s x) {
  return f16_to_f32(x.bits);
}
template <>
__device__ __forceinline__ float to_c<bf16s>(bf16s x) {
  return bf16_to_f32(x.bits);
}
template <class T>
__device__ __forceinline__ T from_c(compute_t<T> x) {
  return x;
}
template <>
__device__ __forceinline__ f16s from_c<f16s>(float x) {
  return f16s{f32_to_f16(x)};
}
template <>
__device__ __forceinline__ bf16s from_c<bf16s>(float x) {
  return bf16s{f32_to_bf16(x)};
}

// Exact widening to f64 and one rounding back (the f64 paths: rope, rope_kv).
__device__ __forceinline__ double to_d(f16s x) { return double(f16_to_f32(x.bits)); }
__device__ __forceinline__ double to_d(bf16s x) { return double(bf16_to_f32(x.bits)); }
__device__ __forceinline__ double to_d(float x) { return double(x); }
__device__ __forceinline__ double to_d(double x) { return x; }
template <class T>
__device__ __forceinline__ T from_d(double d) {
  if constexpr (std::is_same<T, f16s>::value)
    return f16s{f64_to_small<5, 10>(d)};
  else if constexpr (std::is_same<T, bf16s>::value)
    return bf16s{f64_to_small<8, 7>(d)};
  else
    return T(d);
}

template <class T>
inline constexpr bool is_half_v = false;
template <>
inline constexpr bool is_half_v<f16s> = true;
template <>
inline constexpr bool is_half_v<bf16s> = true;
template <class T>
inline constexpr bool is_floating_v = is_half_v<T>;
template <>
inline constexpr bool is_floating_v<float> = true;
template <>
inline constexpr bool is_floating_v<double> = true;
template <class T>
inline constexpr bool is_signed_v = T(-1) < T(0);
template <>
inline constexpr bool is_signed_v<f16s> = true;
template <>
inline constexpr bool is_signed_v<bf16s> = true;

// ---- strided indexing ------------------------------------------------------------------
// Storage offset (elements) of row-major linear index i in a layout of nd dims.
template <class I>
__device__ __forceinline__ I strided_offset(I i, int nd, const size_t* dims, const size_t* strides) {
  I off = 0;
  for (int d = nd - 1; d >= 0; --d) {
    const I dd = I(dims[d]);
    const I q = i / dd;
    off += (i - q * dd) * I(strides[d]);
    i = q;
  }
  return off;
}

// Offsets of row-major linear index i in K layouts of the same dims: the index is
// decomposed once (nd - 1 divisions) and each operand's strides applied to it.
template <class I, int K>
__device__ __forceinline__ void strided_offsets(I i, int nd, const size_t* dims,
                                                const size_t* const (&strides)[K], I (&off)[K]) {
#pragma unroll
  for (int k = 0; k < K; ++k) off[k] = 0;
  for (int d = nd - 1; d > 0; --d) {
    const I dd = I(dims[d]);
    const I q = i / dd;
    const I r = i - q * dd;
#pragma unroll
    for (int k = 0; k < K; ++k) off[k] += r * I(strides[k][d]);
    i = q;
  }
  if (nd > 0) {
#pragma unroll
    for (int k = 0; k < K; ++k) off[k] += i * I(strides[k][0]);
  }
}

// Largest offset (plus one) a layout reaches; decides whether 32-bit index math is safe.
__device__ __forceinline__ size_t strided_extent(int nd, const size_t* dims, const size_t* strides) {
  size_t e = 1;
  for (int d = 0; d < nd; ++d) e += (dims[d] ? dims[d] - 1 : 0) * strides[d];
  return e;
}

// aligned16, Vec and the uint4 accesses of the families are written for this size.
static_assert(plan::kVectorBytes == 16, "16-byte vectors");

__device__ __forceinline__ bool aligned16(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

template <class T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

// The bits of a vector as 32-bit words.
template <int N>
struct alignas(4 * N) Words {
  uint32_t w[N];
};

// U vectors of one operand, loaded before any is used (bytes in flight). AsWords:
// vectors of 1- and 2-byte elements are held as 32-bit words and split into
// elements only where they are used (held as elements, each value takes a register
// of its own from the load on).
template <class T, int V, int U, bool AsWords>
struct VecArr {
  using Slot = std::conditional_t<AsWords && sizeof(T) < 4 && sizeof(Vec<T, V>) % 4 == 0,
                                  Words<int(sizeof(Vec<T, V>) / 4)>, Vec<T, V>>;
  Slot r[U];
  __device__ __forceinline__ void load(int u, const Vec<T, V>* p) {
    r[u] = *reinterpret_cast<const Slot*>(p);
  }
  __device__ __forceinline__ Vec<T, V> get(int u) const {
    Vec<T, V> v;
    __builtin_memcpy(&v, &r[u], sizeof(v));
    return v;
  }
};

template <class... Ts>
constexpr size_t max_size_of() {
  size_t m = 1;
  ((m = sizeof(Ts) > m ? sizeof(Ts) : m), ...);
  return m;
}

// Info arrays up to this many size_t words are staged in shared memory.
constexpr int kMaxSharedInfo = 64;

template <int V, class Out, class Op, class... VIn>
__device__ __forceinline__ void apply_vec(Vec<Out, V>& o, const Op& op, const VIn&... vin) {
#pragma unroll
  for (int j = 0; j < V; ++j) o.v[j] = op(vin.v[j]...);
}

// Stage: copy a strided op's info to shared memory first (false: it lies there already).
template <bool Stage, class Out, class Op, class... In, size_t... Is>
__device__ __forceinline__ void map_impl(std::index_sequence<Is...>, size_t n, int nd, const size_t* info,
                                         Out* out, const Op& op, const In*... in) {
  constexpr int K = int(sizeof...(In));
  // 16-byte accesses for the widest operand (narrower operands move V*size bytes).
  constexpr int V = int(plan::kVectorBytes / max_size_of<Out, In...>());
  const size_t tid = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t nthreads = size_t(gridDim.x) * blockDim.x;

  if (info == nullptr) {
    if (aligned16(out) && (aligned16(in) && ...)) {
      const size_t nvec = n / V;
      constexpr int U = plan::elementwise::kVectorsPerThread;
      // Words for one operand (unary, affine, cast): exp bf16 then takes 50
      // registers instead of 58 and 10% fewer instructions. Kernels of several
      // operands keep their elements, and so their register count and occupancy
      // (where bf16 measured slower at a higher occupancy: docs/PERFORMANCE.md).
      constexpr bool kWords = K == 1;
      for (size_t v0 = tid; v0 < nvec; v0 += size_t(U) * nthreads) {
        std::tuple<VecArr<In, V, U, kWords>...> regs;
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const size_t v = v0 + size_t(u) * nthreads;
          if (v < nvec) (std::get<Is>(regs).load(u, reinterpret_cast<const Vec<In, V>*>(in) + v), ...);
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const size_t v = v0 + size_t(u) * nthreads;
          if (v < nvec) {
            Vec<Out, V> o;
            apply_vec<V>(o, op, std::get<Is>(regs).get(u)...);
            reinterpret_cast<Vec<Out, V>*>(out)[v] = o;
          }
        }
      }
      for (size_t i = nvec * V + tid; i < n; i += nthreads) out[i] = op(in[i]...);
    } else {
      for (size_t i = tid; i < n; i += nthreads) out[i] = op(in[i]...);
    }
    return;
  }

  // Strided: stage dims and strides in shared memory when they fit.
  const size_t* dims = info;
  if constexpr (Stage) {
    __shared__ size_t sh_info[kMaxSharedInfo];
    if (size_t(nd) * (K + 1) <= size_t(kMaxSharedInfo)) {
      for (int j = threadIdx.x; j < nd * (K + 1); j += blockDim.x) sh_info[j] = info[j];
      __syncthreads();
      dims = sh_info;
    }
  }
  const size_t* const strides[K] = {(dims + size_t(nd) * (Is + 1))...};

  // 32-bit offsets where every offset fits; a caller that staged its info guarantees so
  // (so only the 32-bit loops are compiled for it).
  bool fits32 = !Stage;
  if constexpr (Stage) {
    fits32 = n <= 0xffffffffull;
    ((fits32 = fits32 && strided_extent(nd, dims, strides[Is]) <= 0xffffffffull), ...);
  }

  // Inner-contiguous vector path: the last dim is unit-stride in every operand and
  // vectors never straddle a row, so one index computation serves V elements.
  bool inner = nd > 0 && dims[nd - 1] % V == 0 && aligned16(out) && (aligned16(in) && ...);
  for (int k = 0; k < K && inner; ++k) {
    inner = strides[k][nd - 1] == 1;
    for (int d = 0; d + 1 < nd && inner; ++d) inner = strides[k][d] % V == 0;
  }
  if (inner && V > 1) {
    const size_t nvec = n / V;
    for (size_t v = tid; v < nvec; v += nthreads) {
      Vec<Out, V> o;
      if (fits32) {
        uint32_t off[K];
        strided_offsets<uint32_t, K>(uint32_t(v * V), nd, dims, strides, off);
        apply_vec<V>(o, op, *reinterpret_cast<const Vec<In, V>*>(in + off[Is])...);
      } else {
        size_t off[K];
        strided_offsets<size_t, K>(v * V, nd, dims, strides, off);
        apply_vec<V>(o, op, *reinterpret_cast<const Vec<In, V>*>(in + off[Is])...);
      }
      reinterpret_cast<Vec<Out, V>*>(out)[v] = o;
    }
    return;
  }
  if (fits32) {
    for (size_t i = tid; i < n; i += nthreads) {
      uint32_t off[K];
      strided_offsets<uint32_t, K>(uint32_t(i), nd, dims, strides, off);
      out[i] = op(in[off[Is]]...);
    }
  } else {
    for (size_t i = tid; i < n; i += nthreads) {
      size_t off[K];
      strided_offsets<size_t, K>(i, nd, dims, strides, off);
      out[i] = op(in[off[Is]]...);
    }
  }
}

// out[i] = op(in_0[..], in_1[..], ...) for i < n; op takes and returns storage values.
template <class Out, class Op, class... In>
__device__ __forceinline__ void map_n(size_t n, size_t nd, const size_t* info, Out* out, const Op& op,
                                      const In*... in) {
  map_impl<true>(std::index_sequence_for<In...>{}, n, int(nd), info, out, op, in...);
}
// map_n with `info` in shared memory already (the caller staged it; kernels/batch.cu),
// and every offset within 32 bits.
template <class Out, class Op, class... In>
__device__ __forceinline__ void map_n_staged(size_t n, size_t nd, const size_t* info, Out* out, const Op& op,
                                             const In*... in) {
  map_impl<false>(std::index_sequence_for<In...>{}, n, int(nd), info, out, op, in...);
}

}  // namespace wk
