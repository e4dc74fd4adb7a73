// The launch plans of the QUANTIZED kernels: every constant that the host launchers
// (quantized.cpp) and the kernels (kernels/quantized/) must agree on, in one header
// that the host compiler, nvcc and hipcc all read. Types are ggml's numeric ids
// (base/ggml_blocks.h).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "backend/common/hd.h"
#include "backend/gpu/launch_plan.h"
#include "base/ggml_blocks.h"

namespace wick::gpu::qplan {

using namespace ::wick::quant::type_id;

// Threads of a block of the Q8_1 quantizers and of the mmvq / mmvqs mat-vecs: a
// multiple of every wave size (32, 64).
inline constexpr unsigned kQuantBlock = 256;
static_assert(kQuantBlock % plan::kWideWave == 0, "Q8_1 / mat-vec blocks are whole waves");
// mmvq: threads sharing one weight row, four waves (as ggml's mmvq gives a single
// row at batch 1: several waves keep enough loads in flight when the weight has
// few rows), at most the block; the rows a block takes.
WICK_HD constexpr unsigned mmvq_row_threads(unsigned wave) {
  return 4 * wave < kQuantBlock ? 4 * wave : kQuantBlock;
}
WICK_HD constexpr unsigned mmvq_rows_per_block(unsigned wave) { return kQuantBlock / mmvq_row_threads(wave); }
// mmvqs: one wave a weight row; the rows a block takes.
WICK_HD constexpr unsigned mmvqs_rows_per_block(unsigned wave) { return kQuantBlock / wave; }
// Quantized activation rows are padded to a multiple of this many columns (ggml's
// MATRIX_ROW_PADDING), the padding quantizing zeros: every 32-column group is whole,
// and whole waves (a column or 8 columns a lane) fall in or out of a row.
inline constexpr size_t kRowPadding = 512;
// The mmvq / mmvqs kernels exist for 1..kMaxBatch activation rows
// (wick::kQMatVecMaxBatch).
inline constexpr int kMaxBatch = 8;

// dequantize: the types whose kernel decodes 16 elements of one block a thread
// (dequantize16); the others decode 8 elements a thread.
WICK_HD constexpr bool dequantize_by16(int type) {
  return type == kQ4_0 || type == kQ8_0 || type == kQ4_K || type == kQ6_K;
}

// mmvqs: the column permutation (perm_pos P, 0 <= P < kSplitPerms) of the split
// activations that type's kernel reads, or -1 where the type has no mmvqs kernel.
inline constexpr int kSplitPerms = 4;
WICK_HD constexpr int split_perm(int type) {
  return type == kQ8_0 ? 0 : type == kQ4_0 ? 1 : type == kQ4_K ? 2 : type == kQ6_K ? 3 : -1;
}
// The alignment (bytes) that type's mmvqs kernel needs of the weight: Q4_K blocks are
// read as 16-byte words (144-byte blocks keep every row aligned), the others as
// aligned 32-bit words.
WICK_HD constexpr size_t split_align(int type) { return type == kQ4_K ? 16 : 4; }

// ---- mmvqw: batch 1 in one launch ---------------------------------------------------------
// Teams of kTeam lanes in blocks of up to kWideThreads threads (one block a
// multiprocessor: the kernel's launch bounds).
inline constexpr unsigned kWideThreads = 512;
inline constexpr int kTeam = 32;
static_assert(plan::kWideWave % kTeam == 0 && kTeam % plan::kNarrowWave == 0,
              "a team is a wave of 32 lanes or half a wave of 64");
// A team keeps kTeamRows finished rows' lane sums (kTeam floats each) before it
// writes them, and at most kTeamBarriers mbarriers (one a stage).
inline constexpr int kTeamRows = 8, kTeamBarriers = 8;
inline constexpr size_t kTeamSlotBytes =
    size_t(kTeamRows) * kTeam * sizeof(float) + kTeamBarriers * sizeof(uint64_t);
// One (d, S * s) float pair of the quantized x a 32-column group.
inline constexpr size_t kWideDsBytes = 2 * sizeof(float);
// x's padded length up to which one pass of a full block quantizes it (8 columns a
// thread).
inline constexpr int kWideOnePass = 8 * int(kWideThreads);

// Per type: rounds of round_cols columns (one part a lane), tile_rounds rounds a
// tile, `stages` tiles of shared memory a team (stages - 1 in flight while one is
// computed), and the first `prefetch` tiles issued before the wait for the previous
// kernel (sm_90+). The tuning was measured on the H200 (docs/PERFORMANCE.md).
// round_cols == 0: the type has no mmvqw kernel.
struct WideShape {
  int round_cols = 0, tile_rounds = 0, stages = 0, prefetch = 0;
};
WICK_HD constexpr WideShape wide_shape(int type) {
  if (type == kQ4_0) return {1024, 4, 5, 1};
  if (type == kQ8_0) return {1024, 2, 5, 2};
  if (type == kQ4_K) return {2048, 2, 5, 1};
  if (type == kQ6_K) return {2048, 1, 7, 2};
  return {};
}
// Dynamic shared memory of an mmvqw block of `threads` threads: x quantized (k_pad
// int8 quants, then k_pad / 32 (d, s) pairs), then each team's `stages` tiles, then
// each team's slots (finished rows, barriers).
WICK_HD constexpr size_t wide_shared_bytes(size_t k_pad, unsigned threads, size_t tile_bytes, int stages) {
  return k_pad + k_pad / 32 * kWideDsBytes + threads / kTeam * (size_t(stages) * tile_bytes + kTeamSlotBytes);
}
// The smallest mmvqw block: 4 teams.
inline constexpr unsigned kWideMinThreads = 4 * kTeam;
// An mmvqw launch: `blocks` blocks of `threads` threads with `shmem` bytes of
// dynamic shared memory; threads == 0 where no block fits.
struct WideLaunch {
  unsigned threads = 0, blocks = 0;
  size_t shmem = 0;
};
// Blocks of kWideThreads threads (16 teams), one a multiprocessor, or of half / a
// quarter of that (two / four a multiprocessor) where the shared memory a block may
// take (`shared_per_block` bytes) is less than the larger block needs. A block is
// whole waves, each wave whole teams (one team a wave of 32, two a wave of 64).
WICK_HD constexpr WideLaunch wide_launch(unsigned wave, size_t multiprocessors, size_t shared_per_block,
                                         size_t k_pad, size_t tile_bytes, int stages) {
  for (unsigned threads = kWideThreads; threads >= kWideMinThreads && threads >= wave; threads /= 2) {
    const size_t shmem = wide_shared_bytes(k_pad, threads, tile_bytes, stages);
    if (shmem <= shared_per_block)
      return WideLaunch{threads, unsigned((multiprocessors ? multiprocessors : 1) * (kWideThreads / threads)),
                        shmem};
  }
  return WideLaunch{};
}

}  // namespace wick::gpu::qplan
