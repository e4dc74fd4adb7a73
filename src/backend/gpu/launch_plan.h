// Launch plans: the geometry a kernel is written for and the host code that
// launches it must agree on (tile shapes, items per thread, block bounds). Read
// by the host compiler, nvcc and hipcc alike; no device code. A plan that involves
// waves is a function of the device's wave size (32 lanes on NVIDIA and RDNA, 64 on
// CDNA), never of a literal 32 or 64, so tests/test_gpu_plans.cpp evaluates it for
// both on the CPU. Measured reasons for the numbers: docs/PERFORMANCE.md.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace wick::gpu::plan {

// The wave sizes a device may have; every block the host launches is whole waves of
// either (a multiple of kWideWave).
inline constexpr unsigned kNarrowWave = 32, kWideWave = 64;

// Bytes one thread moves per vector access (a 128-bit load or store): the work
// item of the vectorized kernels, which the host counts when it sizes their grids.
inline constexpr size_t kVectorBytes = 16;

// Largest block the host launches; every kernel declares it as its launch bound,
// so the compiler keeps register use within what such a block may have.
inline constexpr int kMaxBlock = 512;

// The elementwise engine (kernels/common.cuh: map_n).
namespace elementwise {
// 16-byte vectors a thread handles per grid-stride step on the contiguous path;
// the host divides its grid by the same number.
inline constexpr int kVectorsPerThread = 4;
// Strided kernels stage `info` in shared memory once per block, so past a few
// blocks per multiprocessor more blocks only repeat that work: the host caps a
// strided grid at this many blocks per multiprocessor. On the H200 broadcast add
// [16384,16384]+[16384] f32 ran at 2.1 TB/s with one 16-byte item per thread and
// 3.6 TB/s with the cap (docs/PERFORMANCE.md).
inline constexpr unsigned kStridedBlocksPerSm = 16;
}  // namespace elementwise

// The tiled copy of a transposed view (kernels/unary.cu: utranspose): a kTile x
// kTile shared tile, blocks of (kTile, kRows) threads. A shape choice, not a
// wave-size assumption.
namespace transpose {
inline constexpr int kTile = 32, kRows = 8;
}

// The portable GEMM (kernels/matmul.cu): a block of kThreads computes a kTileM x
// kTileN tile of C, stepping k by kTileK.
namespace gemm {
inline constexpr int kTileM = 64, kTileN = 64, kTileK = 16, kThreads = 256;
}

// argsort (kernels/sort.cu).
namespace sort {
// Pairs one block sorts in shared memory: kLocal * (8-byte key + 4-byte index)
// is the 48 KiB every device gives a block.
inline constexpr size_t kLocal = 4096;
// argsort_reg: pairs each thread holds in registers (kRegBits position bits).
inline constexpr uint32_t kRegBits = 4, kRegItems = 1u << kRegBits;
// The smallest padded row argsort_reg takes: a block of one wave.
constexpr size_t reg_min(unsigned wave) { return size_t(wave) * kRegItems; }
// Threads of an argsort_local block over chunks of `chunk` pairs: one a
// compare-exchange (chunk / 2), at least one wave, at most kMaxBlock.
constexpr unsigned local_threads(unsigned wave, size_t chunk) {
  const size_t t = chunk / 2;
  return unsigned(t < wave ? wave : t > size_t(kMaxBlock) ? size_t(kMaxBlock) : t);
}
}  // namespace sort

// im2col (kernels/conv.cu): a thread writes this many consecutive pixels of one
// output row with one vector store when the row length is a multiple of it.
namespace im2col {
inline constexpr uint32_t kPixelsPerThread = 4;
}

// index_select of long rows (kernels/indexing.cu: index_select_rows): grid x
// splits a row into stretches of kRowItemsPerThread items per thread.
namespace indexing {
inline constexpr int kRowItemsPerThread = 4;
}

// Row ops of the NN family (kernels/nn.cu): elements each thread keeps in
// registers, so a row of up to kMaxBlock * kRowCache columns is read once.
namespace nn {
inline constexpr int kRowCache = 32;
static_assert(kRowCache >= 8, "a row of 8 * block columns must fit the register cache");
// Threads of the block of a row of `cols` columns: the smallest power-of-two
// multiple of the wave with at most 8 columns a thread, at most kMaxBlock. Whole
// waves, and at most `wave` of them (the block reduction combines the waves'
// results in one wave: kernels/nn.cu).
constexpr unsigned row_block(unsigned wave, size_t cols) {
  size_t b = wave;
  while (b < size_t(kMaxBlock) && b * 8 < cols) b <<= 1;
  return unsigned(b);
}
}  // namespace nn

// The REDUCE kernel (kernels/reduce.cu): blocks of kBlock threads, `tpr` threads
// cooperating on one output (1, a power of two up to the wave, or kBlock).
namespace reduce {
inline constexpr unsigned kBlock = 256;
// How an output's reduced elements lie: one contiguous run (the last dims of a
// contiguous tensor), strided with the kept innermost dim of unit stride (a sum
// over dim 0 of a matrix: neighbouring outputs read neighbouring elements), or
// anything else.
enum class Shape { ContiguousRun, UnitStrideKept, Strided };
// tpr for `outputs` outputs of `elems` elements each on a device with `sms`
// multiprocessors:
//  - a contiguous run: a wave per output for short runs, and for runs of 1024 and
//    more when there are many outputs (at least 64 per multiprocessor: several rows
//    a block, no block reduction; measured on the H200, [16384, 16384] f32: sum /
//    max / argmax 4.34 / 4.48 / 4.34 TB/s against 4.11 / 4.38 / 3.67 with a block
//    per row, docs/PERFORMANCE.md), else the whole block;
//  - unit-stride kept dims and at least 4096 outputs: one thread per output;
//  - anything else: a wave (fewer lanes for fewer elements).
constexpr size_t threads_per_output(unsigned wave, size_t sms, Shape shape, size_t elems, size_t outputs) {
  size_t pow2 = 1;
  while (pow2 < elems && pow2 < wave) pow2 <<= 1;  // min(wave, elems rounded up to a power of two)
  if (shape == Shape::ContiguousRun && elems >= 1024) return outputs >= 64 * (sms ? sms : 1) ? wave : kBlock;
  if (shape == Shape::UnitStrideKept && outputs >= 4096) return 1;
  return pow2;
}
}  // namespace reduce

// cumsum along the last dim (kernels/reduce.cu: scan_rows), in blocks of
// reduce::kBlock threads: each lane scans kItemsPerLane items (16-byte vectors, or
// elements where the rows are not whole aligned vectors) per chunk of a row.
namespace scan {
inline constexpr int kItemsPerLane = 4;
// Threads a row of `len` elements of `elem_bytes` bytes takes, with `rows` rows on
// `sms` multiprocessors: the lanes one chunk of vectors covering the row needs,
// rounded up to a power of two, while a wave holds them (several rows a wave);
// longer rows a wave each when rows are many (at least 64 a multiprocessor, the
// contiguous reductions' rule), else the whole block.
constexpr size_t threads_per_row(unsigned wave, size_t sms, size_t elem_bytes, size_t len, size_t rows) {
  const size_t per_lane = size_t(kItemsPerLane) * (kVectorBytes / elem_bytes);
  const size_t lanes = (len + per_lane - 1) / per_lane;
  if (lanes <= wave) {
    size_t p = 1;
    while (p < lanes) p <<= 1;
    return p;
  }
  return rows >= 64 * (sms ? sms : 1) ? wave : reduce::kBlock;
}
}  // namespace scan

static_assert(kMaxBlock % kWideWave == 0 && reduce::kBlock % kWideWave == 0 &&
                  gemm::kThreads % kWideWave == 0 && transpose::kTile * transpose::kRows % kWideWave == 0,
              "fixed blocks are whole waves of 32 and of 64 lanes");

// Attention (kernels/attention.cu). Flash decoding: a block of kThreads serves up to
// kGroup query heads of one key/value head and one query position over a range of keys
// (a split); each wave takes a wave's width of keys at a time (a lane a key for the
// scores, a lane E = chunk() elements of each value row for the weighted sum). Splits
// are sized so that the grid holds about kBlocksPerSm blocks a multiprocessor, at
// least one pass of the block's waves each; several splits are combined by a second
// kernel.
namespace attention {
inline constexpr int kThreads = 128, kGroup = 4;
// Elements of a value row a lane owns: 4 (8 bytes of a 16-bit cache, 16 of f32), 2 of
// f64; rows of up to a wave's lanes times this many elements take the decode kernels.
inline constexpr size_t chunk(size_t elem_bytes) { return elem_bytes >= 8 ? 2 : 4; }
// Resident decode blocks a multiprocessor the kernels are compiled for (at most 128
// registers a thread on sm_90).
inline constexpr int kMinBlocks = 4;
inline constexpr size_t kBlocksPerSm = 4;
// Query positions (T) up to which the decode kernels serve; more take the GEMM path
// (scores through the device GEMM, a masked softmax, a second GEMM).
inline constexpr size_t kMaxDecodeQueries = 8;
// Threads of a masked-softmax block: a wave a row of up to kSoftmaxWaveKeys keys, the
// block a longer row. On 512-key rows of an 8B model's prefill a wave a row took 19.5
// against 50 us a launch; on rows of up to 4096 keys it was slower than the block
// (docs/PERFORMANCE.md).
inline constexpr int kSoftmaxThreads = 256;
inline constexpr size_t kSoftmaxWaveKeys = 1024;
// Threads of a group of the split combine (one block an output row of dv values, in
// kCombineGroups groups that each sum a share of the splits): dv rounded up to a power
// of two, whole waves of either size, at most 256.
inline constexpr int kCombineGroups = 4;
constexpr unsigned combine_block(size_t dv) {
  size_t b = kWideWave;
  while (b < dv && b < 256) b <<= 1;
  return unsigned(b);
}
static_assert(kThreads % kWideWave == 0 && kSoftmaxThreads % kWideWave == 0,
              "attention blocks are whole waves of 32 and of 64 lanes");
}  // namespace attention

}  // namespace wick::gpu::plan
