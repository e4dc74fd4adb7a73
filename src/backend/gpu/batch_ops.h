// Small eager ops run together: the record of one deferred op, shared by the host
// (GpuDevice::defer, the entry points that batch) and kernels/batch.cu.
//
// An eager op on a few elements costs the host a kernel launch, which on the H200
// machine takes longer than the GPU's run of it (docs/PERFORMANCE.md: 3.7-4.3 us to
// queue an empty kernel). Such ops are therefore recorded, not launched: a record says
// what to compute on which operands, and one launch of `eager_batch` (one block, kBlock
// threads) runs up to kMaxOps of them in their order, a block barrier between two. The
// records travel in the launch's parameters.
//
// An op is batched when its dtypes are float dtypes, its input and output hold at most
// kMaxElements elements, and the device's stream is not being recorded into a graph. A
// map op's operands may be strided views and broadcasts (stride 0) whose dims collapse
// to at most kMaxDims; every other op's operands are contiguous. The ops: every unary
// op, powf, elu, affine, every binary op, swiglu, casts between float dtypes, sum / min
// / max over a contiguous run, rms_norm, softmax and log_softmax over the last dim. Each
// runs the device function of its own kernel on one block: the same formulas, and for
// the reductions the order of a one-block grid.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace wick::gpu::batch {

enum class Kind : uint8_t {
  Unary,
  Powf,
  Elu,
  Affine,
  Binary,
  Swiglu,
  Cast,
  Reduce,
  RmsNorm,
  Softmax,
  LogSoftmax
};

// The float dtypes of a record (DType f16, bf16, f32, f64).
enum class Float : uint8_t { F16, BF16, F32, F64 };

inline constexpr unsigned kBlock = 256;
inline constexpr size_t kMaxElements = 4096;
inline constexpr uint32_t kMaxOps = 40;
inline constexpr int kMaxDims = 3;

struct Op {
  const void* a = nullptr;  // the input (row ops: x; binary: lhs)
  const void* b = nullptr;  // binary and swiglu: rhs; rms_norm: alpha or null
  void* out = nullptr;
  double p0 = 0, p1 = 0;  // affine: mul, add; powf: e; elu: alpha; rms_norm: eps
  uint32_t n = 0;         // map ops: elements; reduce: outputs; row ops: rows
  uint32_t cols = 0;      // reduce: elements an output; row ops: the row's length
  uint32_t tpr = 0;       // reduce: threads an output (plan::reduce::threads_per_output)
  // Map ops on strided operands: nd collapsed dims (0: every operand contiguous), and
  // each input's strides in elements (the kernels' `info`, common.cuh).
  uint32_t dims[kMaxDims] = {};
  uint32_t strides[2][kMaxDims] = {};
  uint8_t nd = 0;
  Kind kind = Kind::Unary;
  uint8_t op = 0;  // the UnaryOp, BinaryOp or ReduceOp
  Float dtype = Float::F32, out_dtype = Float::F32;
};

// The launch's one parameter.
struct Batch {
  uint32_t count = 0;
  Op ops[kMaxOps];
};
static_assert(sizeof(Batch) <= 4000, "a batch fits the launch parameters of every vendor (4 KB)");

}  // namespace wick::gpu::batch
