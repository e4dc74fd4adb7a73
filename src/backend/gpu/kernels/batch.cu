// BATCH family: eager_batch(Batch), small eager ops run together in one launch of one
// block (batch_ops.h). Each record runs the device function of its own family's
// kernel (map_n with the same functor, reduce_rows, rms_norm_rows, softmax_rows) on
// this one block, so its result is the one its own kernel gives; a block barrier
// between two records makes every record's output visible to the next. A strided map
// op's dims and strides go to shared memory first, where map_n_staged reads them as
// `info`.
#include "../batch_ops.h"
#include "functors.cuh"
#include "nn_rows.cuh"
#include "reduce_rows.cuh"
#include "wick/op_table.h"

namespace wk {

using ::wick::gpu::batch::Batch;
using ::wick::gpu::batch::Float;
using ::wick::gpu::batch::Kind;
using ::wick::gpu::batch::Op;

// The ops' positions in their tables (the order of wick/op_table.h, as the host's enums).
#define WK_BATCH_ENUM(OP, ...) k##OP,
enum UnaryIndex { WICK_UNARY_OPS(WK_BATCH_ENUM) };
enum BinaryIndex { WICK_BINARY_OPS(WK_BATCH_ENUM) };
enum ReduceIndex { WICK_REDUCE_OPS(WK_BATCH_ENUM) };
#undef WK_BATCH_ENUM

// A map op's collapsed dims and its inputs' strides (map_n's nd and info), or one dim
// and no info when its operands are contiguous.
struct Map {
  size_t nd = 1;
  const size_t* info = nullptr;
};

template <class T>
__device__ __noinline__ void run_unary(const Op& op, const Map& m) {
  const T* a = static_cast<const T*>(op.a);
  T* out = static_cast<T*>(op.out);
  switch (op.op) {
#define WK_BATCH_UNARY(OP, ...)                                               \
  case k##OP:                                                                 \
    map_n_staged(op.n, m.nd, m.info, out, OnStorage<T, ::wick::fn::OP>{}, a); \
    break;
    WICK_UNARY_OPS(WK_BATCH_UNARY)
#undef WK_BATCH_UNARY
  }
}

template <class T>
__device__ __noinline__ void run_binary(const Op& op, const Map& m) {
  const T* a = static_cast<const T*>(op.a);
  const T* b = static_cast<const T*>(op.b);
  T* out = static_cast<T*>(op.out);
  if (op.kind == Kind::Swiglu) {
    map_n_staged(op.n, m.nd, m.info, out, BinOnStorage<T, ::wick::fn::SiluMul>{}, a, b);
    return;
  }
  switch (op.op) {
#define WK_BATCH_BINARY(OP, ...)                                                    \
  case k##OP:                                                                       \
    map_n_staged(op.n, m.nd, m.info, out, BinOnStorage<T, ::wick::fn::OP>{}, a, b); \
    break;
    WICK_BINARY_OPS(WK_BATCH_BINARY)
#undef WK_BATCH_BINARY
  }
}

template <class From, class To>
__device__ void run_cast_to(const Op& op, const Map& m) {
  map_n_staged(op.n, m.nd, m.info, static_cast<To*>(op.out), Cast<To, From>{},
               static_cast<const From*>(op.a));
}

template <class T>
__device__ __noinline__ void run_cast(const Op& op, const Map& m) {
  switch (op.out_dtype) {
    case Float::F16:
      return run_cast_to<T, f16s>(op, m);
    case Float::BF16:
      return run_cast_to<T, bf16s>(op, m);
    case Float::F32:
      return run_cast_to<T, float>(op, m);
    case Float::F64:
      return run_cast_to<T, double>(op, m);
  }
}

// info: four size_t of shared memory (reduce_rows reads its dims and strides there).
template <class T>
__device__ __noinline__ void run_reduce(const Op& op, size_t* info) {
  // One kept dim of op.n outputs, op.cols apart; one reduced run of op.cols.
  if (threadIdx.x == 0) {
    info[0] = op.n;
    info[1] = op.cols;
    info[2] = op.cols;
    info[3] = 1;
  }
  __syncthreads();
  const T* x = static_cast<const T*>(op.a);
  T* out = static_cast<T*>(op.out);
  switch (op.op) {
    case kSum:
      reduce_rows<RSum<T>, T>(op.n, op.cols, 1, 1, info, x, out, int(op.tpr));
      break;
    case kMin:
      reduce_rows<RMin<T>, T>(op.n, op.cols, 1, 1, info, x, out, int(op.tpr));
      break;
    case kMax:
      reduce_rows<RMax<T>, T>(op.n, op.cols, 1, 1, info, x, out, int(op.tpr));
      break;
  }
}

template <class T>
__device__ __noinline__ void run_op(const Op& op, const Map& m, size_t* info) {
  const T* a = static_cast<const T*>(op.a);
  T* out = static_cast<T*>(op.out);
  switch (op.kind) {
    case Kind::Unary:
      return run_unary<T>(op, m);
    case Kind::Powf:
      return map_n_staged(op.n, m.nd, m.info, out, OnStorage<T, ::wick::fn::Powf>{{op.p0}}, a);
    case Kind::Elu:
      return map_n_staged(op.n, m.nd, m.info, out, OnStorage<T, ::wick::fn::Elu>{{op.p0}}, a);
    case Kind::Affine:
      return map_n_staged(op.n, m.nd, m.info, out, OnStorage<T, ::wick::fn::Affine>{{op.p0, op.p1}}, a);
    case Kind::Binary:
    case Kind::Swiglu:
      return run_binary<T>(op, m);
    case Kind::Cast:
      return run_cast<T>(op, m);
    case Kind::Reduce:
      return run_reduce<T>(op, info);
    case Kind::RmsNorm:
      return rms_norm_rows<T>(op.n, op.cols, a, static_cast<const T*>(op.b), out, float(op.p0));
    case Kind::Softmax:
    case Kind::LogSoftmax:
      return softmax_rows<T>(op.n, op.cols, a, out, op.kind == Kind::LogSoftmax);
  }
}

}  // namespace wk

extern "C" __global__ void __launch_bounds__(::wick::gpu::batch::kBlock) eager_batch(wk::Batch batch) {
  constexpr int kDims = ::wick::gpu::batch::kMaxDims;
  // A strided map op's info (dims, then each input's strides), or reduce_rows' four.
  __shared__ size_t info[3 * kDims];
  // The records, a thread each, to shared memory first: one wait for all of them rather
  // than one for each record's read of the parameter space.
  // (Raw storage: a __shared__ array of a type with member initializers does not compile
  // everywhere.)
  static_assert(alignof(wk::Op) <= sizeof(uint64_t), "8-byte words hold the records aligned");
  __shared__ uint64_t ops_raw[(sizeof(wk::Op) * ::wick::gpu::batch::kMaxOps + 7) / 8];
  wk::Op* ops = reinterpret_cast<wk::Op*>(ops_raw);
  for (uint32_t i = threadIdx.x; i < batch.count; i += blockDim.x) ops[i] = batch.ops[i];
  __syncthreads();
  for (uint32_t i = 0; i < batch.count; ++i) {
    const wk::Op& op = ops[i];
    wk::Map m;
    if (op.nd) {  // uniform across the block, as every branch below
      if (threadIdx.x == 0) {
        for (int d = 0; d < op.nd; ++d) {
          info[d] = op.dims[d];
          info[op.nd + d] = op.strides[0][d];
          info[2 * op.nd + d] = op.strides[1][d];
        }
      }
      __syncthreads();
      m = wk::Map{op.nd, info};
    }
    switch (op.dtype) {
      case wk::Float::F16:
        wk::run_op<wk::f16s>(op, m, info);
        break;
      case wk::Float::BF16:
        wk::run_op<wk::bf16s>(op, m, info);
        break;
      case wk::Float::F32:
        wk::run_op<float>(op, m, info);
        break;
      case wk::Float::F64:
        wk::run_op<double>(op, m, info);
        break;
    }
    __syncthreads();
  }
}
