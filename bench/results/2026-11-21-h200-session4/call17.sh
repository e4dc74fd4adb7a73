#!/usr/bin/env bash
# Session 4, call 17: after the block-reduction clean-up (same arithmetic): scripts/gpu-check.sh test
# (every GPU test, parity, wick check, memcheck), then softmax / rms_norm / sum and the mat-vec benchmarks.
# usage: call17.sh <carry dir>
set -uo pipefail
P=$1
OUT=$OUT/call17 WICK_GPU_PREBUILT=$P bash scripts/gpu-check.sh test > /tmp/gc17.log 2>&1; echo "gpu-check test rc $?"
O=$OUT/call17
export LD_LIBRARY_PATH=$P
grep -E "PASSED|FAILED|PASS:|ERROR SUMMARY" $O/summary.txt | head -30
timeout 120 $P/wick_bench --benchmark_filter='BM_GpuOps(Softmax|RmsNorm)/f32/|BM_GpuOpsReduce/sum|BM_GpuD2DCopy/f32/|BM_GpuQuant(Copy|MatVec)' > $O/bench.log 2>&1
grep -E "^BM_" $O/bench.log | awk '{print $1, $2, $3, $NF, $(NF-1)}'
cd $OUT && tar czf call17.tgz call17 && rm -rf call17
