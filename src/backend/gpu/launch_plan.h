// Launch plans: the geometry a kernel is written for and the host code that
// launches it must agree on (tile shapes, items per thread, block bounds). Read
// by the host compiler, nvcc and hipcc alike; constants only, no device code.
// Measured reasons for the numbers: docs/PERFORMANCE.md.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace wick::gpu::plan {

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
// argsort_reg: pairs each thread holds in registers (kRegBits position bits),
// and the smallest padded row it takes (a block of one 32-lane wave).
inline constexpr uint32_t kRegBits = 4, kRegItems = 1u << kRegBits;
inline constexpr size_t kRegMin = 32 * kRegItems;
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

// cumsum along the last dim (kernels/reduce.cu: scan_rows): items (16-byte
// vectors, or elements) each lane scans per chunk of a row; the host sizes the
// threads a row takes by it.
namespace scan {
inline constexpr int kItemsPerLane = 4;
}

// Row ops of the NN family (kernels/nn.cu): elements each thread keeps in
// registers, so a row of up to kMaxBlock * kRowCache columns is read once.
namespace nn {
inline constexpr int kRowCache = 32;
}

}  // namespace wick::gpu::plan
