#!/usr/bin/env bash
# Session 3, call 6: mmvqw with shared (not generic) loads and one funnel shift a word in its
# block readers (mat-vec tests), benchmarks of mmvqw (default) and mmvqs (split), ncu warp-state
# sections for mmvqw q4_0. usage: call6.sh <carry dir>
set -uo pipefail
P=$1
export LD_LIBRARY_PATH=$P
O=$OUT/call6
mkdir -p $O
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv; } > $O/gpu.txt 2>&1
timeout 200 $P/test_gpu_quant --gtest_filter='GpuQmatmul*' > $O/test_gpu_quant.log 2>&1; tail -2 $O/test_gpu_quant.log
grep -E "FAILED|Failure" $O/test_gpu_quant.log | head -20
f='BM_GpuQuant(Copy|MatVec)'
timeout 120 $P/wick_bench --benchmark_filter="$f" --benchmark_out=$O/quant.json --benchmark_out_format=json > $O/quant.log 2>&1
WICK_QMV_KERNEL=split timeout 120 $P/wick_bench --benchmark_filter="$f" --benchmark_out=$O/quant_split.json --benchmark_out_format=json > $O/quant_split.log 2>&1
grep -E "MatVec|Copy" $O/quant.log $O/quant_split.log | sed 's/manual_time//'
S="--section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy"
for q in q4_0; do
  WICK_BENCH_REPEAT=1 timeout 60 ncu --clock-control none $S -k regex:mmvqw_$q --launch-skip 5 --launch-count 1 \
    $P/wick_bench --benchmark_filter="BM_GpuQuantMatVec/${q}_14336" > $O/ncu_mmvqw_$q.txt 2>&1
done
grep -E "Duration|Issued Warp|Eligible Warps|Warp Cycles Per Issued" $O/ncu_mmvqw_q4_0.txt | head -10
cd $OUT && tar czf call6.tgz call6 && rm -rf call6
