// BATCH family: eager_batch(Batch), small eager ops run together in one launch of one
// block (batch_ops.h). Each record runs the device function of its own family's
// kernel (map_n with the same functor, reduce_rows, rms_norm_rows, softmax_rows) on
// this one block, so its result is the one its own kernel gives; a block barrier
// between two records makes every record's output visible to the next.
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

template <class T>
__device__ __noinline__ void run_unary(const Op& op) {
  const T* a = static_cast<const T*>(op.a);
  T* out = static_cast<T*>(op.out);
  switch (op.op) {
#define WK_BATCH_UNARY(OP, ...)                                      \
  case k##OP:                                                        \
    map_n(op.n, 1, nullptr, out, OnStorage<T, ::wick::fn::OP>{}, a); \
    break;
    WICK_UNARY_OPS(WK_BATCH_UNARY)
#undef WK_BATCH_UNARY
  }
}

template <class T>
__device__ __noinline__ void run_binary(const Op& op) {
  const T* a = static_cast<const T*>(op.a);
  const T* b = static_cast<const T*>(op.b);
  T* out = static_cast<T*>(op.out);
  if (op.kind == Kind::Swiglu) {
    map_n(op.n, 1, nullptr, out, BinOnStorage<T, ::wick::fn::SiluMul>{}, a, b);
    return;
  }
  switch (op.op) {
#define WK_BATCH_BINARY(OP, ...)                                           \
  case k##OP:                                                              \
    map_n(op.n, 1, nullptr, out, BinOnStorage<T, ::wick::fn::OP>{}, a, b); \
    break;
    WICK_BINARY_OPS(WK_BATCH_BINARY)
#undef WK_BATCH_BINARY
  }
}

template <class From, class To>
__device__ void run_cast_to(const Op& op) {
  map_n(op.n, 1, nullptr, static_cast<To*>(op.out), Cast<To, From>{}, static_cast<const From*>(op.a));
}

template <class T>
__device__ __noinline__ void run_cast(const Op& op) {
  switch (op.out_dtype) {
    case Float::F16:
      return run_cast_to<T, f16s>(op);
    case Float::BF16:
      return run_cast_to<T, bf16s>(op);
    case Float::F32:
      return run_cast_to<T, float>(op);
    case Float::F64:
      return run_cast_to<T, double>(op);
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
__device__ __noinline__ void run_op(const Op& op, size_t* info) {
  const T* a = static_cast<const T*>(op.a);
  T* out = static_cast<T*>(op.out);
  switch (op.kind) {
    case Kind::Unary:
      return run_unary<T>(op);
    case Kind::Powf:
      return map_n(op.n, 1, nullptr, out, OnStorage<T, ::wick::fn::Powf>{{op.p0}}, a);
    case Kind::Elu:
      return map_n(op.n, 1, nullptr, out, OnStorage<T, ::wick::fn::Elu>{{op.p0}}, a);
    case Kind::Affine:
      return map_n(op.n, 1, nullptr, out, OnStorage<T, ::wick::fn::Affine>{{op.p0, op.p1}}, a);
    case Kind::Binary:
    case Kind::Swiglu:
      return run_binary<T>(op);
    case Kind::Cast:
      return run_cast<T>(op);
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
  __shared__ size_t info[4];
  for (uint32_t i = 0; i < batch.count; ++i) {
    const wk::Op op = batch.ops[i];  // a copy: the records stay in the parameter space
    switch (op.dtype) {
      case wk::Float::F16:
        wk::run_op<wk::f16s>(op, info);
        break;
      case wk::Float::BF16:
        wk::run_op<wk::bf16s>(op, info);
        break;
      case wk::Float::F32:
        wk::run_op<float>(op, info);
        break;
      case wk::Float::F64:
        wk::run_op<double>(op, info);
        break;
    }
    __syncthreads();
  }
}
