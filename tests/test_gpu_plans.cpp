// The GPU backend's launch plans and its code-object check, evaluated on the CPU: the
// plans are plain C++ (launch_plan.h, quantized_plan.h) taking the device's wave size,
// so they run here for a simulated 32-lane device (NVIDIA, RDNA) and a 64-lane one
// (CDNA: MI300). Expected values are worked out by hand from each plan's rule, with
// the device figures of real GPUs (H200: 132 SMs, 227 KiB of shared memory a block;
// MI300X: 304 CUs, 64 KiB of LDS) and of a 32-lane device with 64 KiB (RDNA3).
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "backend/gpu/arch_support.h"
#include "backend/gpu/launch_plan.h"
#include "backend/gpu/quantized_plan.h"

namespace {

namespace plan = wick::gpu::plan;
namespace qplan = wick::gpu::qplan;

constexpr unsigned kWaves[] = {plan::kNarrowWave, plan::kWideWave};

bool is_pow2(size_t v) { return v && (v & (v - 1)) == 0; }

// ---- NN row ops -------------------------------------------------------------------

TEST(GpuPlans, RowBlockIsEightColumnsAThreadInWholeWaves) {
  struct Case {
    size_t cols;
    unsigned wave32, wave64;
  };
  // The smallest power-of-two multiple of the wave with block * 8 >= cols, at most 512.
  const Case cases[] = {
      {1, 32, 64},      {256, 32, 64},    {257, 64, 64},    {512, 64, 64},      {513, 128, 128},
      {1000, 128, 128}, {2048, 256, 256}, {4096, 512, 512}, {100000, 512, 512},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(plan::nn::row_block(32, c.cols), c.wave32) << c.cols << " columns";
    EXPECT_EQ(plan::nn::row_block(64, c.cols), c.wave64) << c.cols << " columns";
  }
}

TEST(GpuPlans, RowBlockFitsTheBlockReductionForEitherWave) {
  for (unsigned wave : kWaves) {
    for (size_t cols = 1; cols <= 20000; cols += 7) {
      const unsigned b = plan::nn::row_block(wave, cols);
      ASSERT_EQ(b % wave, 0u) << "wave " << wave << ", " << cols << " columns";
      ASSERT_LE(b / wave, wave) << "the waves' results are combined by one wave";
      ASSERT_LE(b, unsigned(plan::kMaxBlock));
      ASSERT_TRUE(is_pow2(b));
      if (b < unsigned(plan::kMaxBlock)) {
        ASSERT_GE(size_t(b) * 8, cols) << "8 columns a thread at most";
      }
    }
  }
}

// ---- ATTENTION ----------------------------------------------------------------------

TEST(GpuPlans, AttentionCombineBlockIsWholeWavesCoveringTheRow) {
  // dv rounded up to a power of two, at least 64 (whole waves of either size), at most 256.
  const std::pair<size_t, unsigned> cases[] = {{1, 64},    {12, 64},   {64, 64},   {65, 128},
                                               {128, 128}, {129, 256}, {256, 256}, {1000, 256}};
  for (const auto& [dv, want] : cases) EXPECT_EQ(plan::attention::combine_block(dv), want) << dv;
}

// ---- REDUCE -------------------------------------------------------------------------

TEST(GpuPlans, ReduceThreadsPerOutputFollowTheWave) {
  using S = plan::reduce::Shape;
  const auto tpr = plan::reduce::threads_per_output;
  // Short contiguous runs: the run rounded up to a power of two, at most a wave.
  EXPECT_EQ(tpr(32, 132, S::ContiguousRun, 5, 10), 8u);
  EXPECT_EQ(tpr(64, 304, S::ContiguousRun, 5, 10), 8u);
  EXPECT_EQ(tpr(32, 132, S::ContiguousRun, 100, 10), 32u);
  EXPECT_EQ(tpr(64, 304, S::ContiguousRun, 100, 10), 64u);
  // Long runs: a wave per output from 64 outputs a multiprocessor (132 * 64 = 8448 on
  // the H200, 304 * 64 = 19456 on the MI300X), else the 256-thread block.
  EXPECT_EQ(tpr(32, 132, S::ContiguousRun, 4096, 8448), 32u);
  EXPECT_EQ(tpr(32, 132, S::ContiguousRun, 4096, 8447), 256u);
  EXPECT_EQ(tpr(64, 304, S::ContiguousRun, 4096, 19456), 64u);
  EXPECT_EQ(tpr(64, 304, S::ContiguousRun, 4096, 8448), 256u);
  // Unit-stride kept dims: a thread per output from 4096 outputs, else up to a wave.
  EXPECT_EQ(tpr(64, 304, S::UnitStrideKept, 100, 4096), 1u);
  EXPECT_EQ(tpr(64, 304, S::UnitStrideKept, 100, 4095), 64u);
  EXPECT_EQ(tpr(32, 132, S::UnitStrideKept, 100, 4095), 32u);
  // Anything else.
  EXPECT_EQ(tpr(32, 132, S::Strided, 3, 1 << 20), 4u);
  EXPECT_EQ(tpr(64, 304, S::Strided, 1 << 20, 1), 64u);
}

TEST(GpuPlans, ReduceGroupsAreWithinAWaveOrTheWholeBlock) {
  using S = plan::reduce::Shape;
  ASSERT_EQ(plan::reduce::kBlock % 64, 0u);
  for (unsigned wave : kWaves)
    for (S shape : {S::ContiguousRun, S::UnitStrideKept, S::Strided})
      for (size_t e : {1, 2, 3, 31, 33, 64, 65, 1023, 1024, 5000})
        for (size_t outputs : {1, 100, 4096, 100000}) {
          const size_t t = plan::reduce::threads_per_output(wave, 100, shape, e, outputs);
          ASSERT_TRUE(t == plan::reduce::kBlock || (is_pow2(t) && t <= wave))
              << "wave " << wave << ": " << t << " threads an output";
          ASSERT_EQ(plan::reduce::kBlock % t, 0u);
        }
}

// ---- cumsum ---------------------------------------------------------------------------

TEST(GpuPlans, ScanThreadsPerRowFollowTheWave) {
  const auto tpr = plan::scan::threads_per_row;
  // Rows one chunk of a wave covers (4 vectors a lane: 16 f32, 8 f64, 64 u8): the
  // lanes they need, rounded up to a power of two.
  EXPECT_EQ(tpr(32, 132, 4, 1, 5), 1u);
  EXPECT_EQ(tpr(64, 304, 4, 1, 5), 1u);
  EXPECT_EQ(tpr(32, 132, 4, 40, 37), 4u);  // 3 lanes
  EXPECT_EQ(tpr(64, 304, 4, 40, 37), 4u);
  EXPECT_EQ(tpr(32, 132, 8, 256, 3), 32u);  // 32 lanes of f64
  EXPECT_EQ(tpr(64, 304, 8, 256, 3), 32u);
  EXPECT_EQ(tpr(32, 132, 1, 64, 3), 1u);  // one lane of u8
  // 600 f32: 38 lanes, more than a 32-lane wave: a wave a row from 8448 rows on the
  // H200, else the block; within a 64-lane wave.
  EXPECT_EQ(tpr(32, 132, 4, 600, 20000), 32u);
  EXPECT_EQ(tpr(32, 132, 4, 600, 8447), 256u);
  EXPECT_EQ(tpr(64, 304, 4, 600, 20000), 64u);
  // [16384, 16384] f32: a wave a row on the H200 (16384 >= 8448); a block a row on the
  // MI300X (16384 < 19456).
  EXPECT_EQ(tpr(32, 132, 4, 16384, 16384), 32u);
  EXPECT_EQ(tpr(64, 304, 4, 16384, 16384), 256u);
  EXPECT_EQ(tpr(32, 132, 4, 50000, 3), 256u);
}

TEST(GpuPlans, ScanGroupsAreWithinAWaveOrTheWholeBlock) {
  for (unsigned wave : kWaves)
    for (size_t bytes : {1, 2, 4, 8})
      for (size_t len : {1, 2, 15, 16, 17, 500, 513, 1024, 2049, 100000})
        for (size_t rows : {1, 100, 8448, 100000}) {
          const size_t t = plan::scan::threads_per_row(wave, 132, bytes, len, rows);
          ASSERT_TRUE(t == plan::reduce::kBlock || (is_pow2(t) && t <= wave))
              << "wave " << wave << ": " << t << " threads a row";
          ASSERT_EQ(plan::reduce::kBlock % t, 0u);
        }
}

// ---- SORT ---------------------------------------------------------------------------

TEST(GpuPlans, SortBlocksAreAtLeastAWave) {
  // argsort_reg: 16 pairs a thread, a block of at least one wave.
  EXPECT_EQ(plan::sort::reg_min(32), 512u);
  EXPECT_EQ(plan::sort::reg_min(64), 1024u);
  // argsort_local: a thread a compare-exchange (half the chunk), one wave to 512.
  EXPECT_EQ(plan::sort::local_threads(32, 2), 32u);
  EXPECT_EQ(plan::sort::local_threads(64, 2), 64u);
  EXPECT_EQ(plan::sort::local_threads(64, 256), 128u);
  EXPECT_EQ(plan::sort::local_threads(32, 4096), 512u);
  EXPECT_EQ(plan::sort::local_threads(64, 4096), 512u);
}

// ---- QUANTIZED ----------------------------------------------------------------------

TEST(GpuPlans, MatVecRowsFollowTheWave) {
  // mmvq: four waves a weight row in blocks of 256 threads.
  EXPECT_EQ(qplan::mmvq_row_threads(32), 128u);
  EXPECT_EQ(qplan::mmvq_rows_per_block(32), 2u);
  EXPECT_EQ(qplan::mmvq_row_threads(64), 256u);
  EXPECT_EQ(qplan::mmvq_rows_per_block(64), 1u);
  // mmvqs: one wave a weight row.
  EXPECT_EQ(qplan::mmvqs_rows_per_block(32), 8u);
  EXPECT_EQ(qplan::mmvqs_rows_per_block(64), 4u);
  for (unsigned wave : kWaves) {
    EXPECT_EQ(qplan::kQuantBlock % wave, 0u);
    EXPECT_EQ(qplan::mmvq_row_threads(wave) % wave, 0u);
    EXPECT_EQ(qplan::kQuantBlock % qplan::mmvq_row_threads(wave), 0u);
    // A padded row is whole waves at one column a lane and at eight.
    EXPECT_EQ(qplan::kRowPadding % (8 * wave), 0u);
  }
}

// Q4_K's mmvqw plan: rounds of 2048 columns (8 blocks of 144 bytes), 2 rounds a tile,
// 5 stages. A block of T threads takes 4096 + 4096 / 32 * 8 bytes for x and T / 32
// teams of 5 * 2304 + (8 * 32 * 4 + 8 * 8) = 12608 bytes: 206848 (512 threads), 105984
// (256), 55552 (128) for k = 4096.
constexpr size_t kQ4KTile = 2 * 8 * 144;

TEST(GpuPlans, WideMatVecFitsTheSharedMemoryOfEachDevice) {
  const qplan::WideShape q4k = qplan::wide_shape(wick::quant::type_id::kQ4_K);
  ASSERT_EQ(q4k.round_cols, 2048);
  ASSERT_EQ(q4k.tile_rounds, 2);
  ASSERT_EQ(q4k.stages, 5);
  // H200: one 512-thread block a multiprocessor.
  qplan::WideLaunch h200 = qplan::wide_launch(32, 132, 232448, 4096, kQ4KTile, 5);
  EXPECT_EQ(h200.threads, 512u);
  EXPECT_EQ(h200.blocks, 132u);
  EXPECT_EQ(h200.shmem, 206848u);
  // MI300X (wave 64, 64 KiB): four 128-thread blocks (two waves of two teams each) a CU.
  qplan::WideLaunch mi300 = qplan::wide_launch(64, 304, 65536, 4096, kQ4KTile, 5);
  EXPECT_EQ(mi300.threads, 128u);
  EXPECT_EQ(mi300.blocks, 304u * 4);
  EXPECT_EQ(mi300.shmem, 55552u);
  // A 32-lane device with 64 KiB (RDNA3): the same block, four waves of one team.
  qplan::WideLaunch rdna3 = qplan::wide_launch(32, 48, 65536, 4096, kQ4KTile, 5);
  EXPECT_EQ(rdna3.threads, 128u);
  EXPECT_EQ(rdna3.blocks, 48u * 4);
  // Q6_K with k = 32768 fits no block in 64 KiB: 32768 + 8192 + 4 * (7 * 1680 + 1088).
  const qplan::WideShape q6k = qplan::wide_shape(wick::quant::type_id::kQ6_K);
  ASSERT_EQ(q6k.stages, 7);
  EXPECT_EQ(qplan::wide_launch(64, 304, 65536, 32768, 8 * 210, 7).threads, 0u);
}

TEST(GpuPlans, WideMatVecBlocksAreWholeWavesOfWholeTeams) {
  for (unsigned wave : kWaves) {
    ASSERT_EQ(wave % unsigned(qplan::kTeam), 0u) << "a team lies within one wave";
    for (size_t shared : {size_t(48) << 10, size_t(64) << 10, size_t(100) << 10, size_t(227) << 10})
      for (size_t k_pad : {512, 4096, 14336}) {
        const qplan::WideLaunch p = qplan::wide_launch(wave, 100, shared, k_pad, kQ4KTile, 5);
        if (p.threads == 0) continue;
        EXPECT_EQ(p.threads % wave, 0u) << "wave " << wave;
        EXPECT_LE(p.shmem, shared);
        EXPECT_EQ(size_t(p.blocks) * p.threads, size_t(100) * qplan::kWideThreads);
      }
  }
}

// ---- code objects -------------------------------------------------------------------

TEST(GpuArchSupport, RocmTargetDropsTheFeatureFlags) {
  EXPECT_EQ(wick::gpu::rocm_target("gfx90a:sramecc+:xnack-"), "gfx90a");
  EXPECT_EQ(wick::gpu::rocm_target("gfx1100"), "gfx1100");
}

TEST(GpuArchSupport, RocmServesOnlyTheTargetsBuilt) {
  const std::string built = "gfx90a;gfx942;gfx1030;gfx1100;gfx1151";
  for (const char* t : {"gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1151"})
    EXPECT_EQ(wick::gpu::rocm_missing_target(t, built), "") << t;
  // A target with a built one as its prefix is not that target.
  EXPECT_NE(wick::gpu::rocm_missing_target("gfx90", "gfx90a"), "");
  EXPECT_NE(wick::gpu::rocm_missing_target("gfx11", built), "");
}

TEST(GpuArchSupport, RocmNamesTheMissingTargetAndHowToBuildIt) {
  EXPECT_EQ(wick::gpu::rocm_missing_target("gfx1101", "gfx906;gfx908;gfx90a;gfx1030"),
            "no code object for gfx1101 (built for gfx906;gfx908;gfx90a;gfx1030); build libwick-rocm.so with "
            "gfx1101 in WICK_ROCM_ARCHS (README: Building for another AMD target)");
}

TEST(GpuArchSupport, CudaRunsFromTheLowestArchUp) {
  EXPECT_EQ(wick::gpu::cuda_missing_target(90, "80;90"), "");
  EXPECT_EQ(wick::gpu::cuda_missing_target(86, "80;90"), "");  // sm_80 SASS
  EXPECT_EQ(wick::gpu::cuda_missing_target(120, "90"), "");    // compute_90 PTX
  EXPECT_EQ(
      wick::gpu::cuda_missing_target(75, "80;90"),
      "no code object for sm_75 (built for sm 80;90); build libwick-cuda.so with 75 in WICK_CUDA_ARCHS");
  EXPECT_NE(wick::gpu::cuda_missing_target(89, "90"), "");
}

}  // namespace
