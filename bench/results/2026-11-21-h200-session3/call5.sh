#!/usr/bin/env bash
# Session 3, call 5: mmvqw with the activation halves swizzled for the whole-block
# readers (mat-vec tests, benchmarks), and ncu's warp-state, scheduler and memory
# sections for one launch of mmvqw q4_0 / q6_K and mmvqs q4_0 (what stalls the waves).
# usage: call5.sh <carry dir>
set -uo pipefail
P=$1
export LD_LIBRARY_PATH=$P
O=$OUT/call5
mkdir -p $O
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv; } > $O/gpu.txt 2>&1
timeout 200 $P/test_gpu_quant --gtest_filter='GpuQmatmul*' > $O/test_gpu_quant.log 2>&1; tail -2 $O/test_gpu_quant.log
grep -E "FAILED|Failure" $O/test_gpu_quant.log | head -20
f='BM_GpuQuant(Copy|MatVec)'
timeout 120 $P/wick_bench --benchmark_filter="$f" --benchmark_out=$O/quant.json --benchmark_out_format=json > $O/quant.log 2>&1
grep -E "MatVec|Copy" $O/quant.log | sed 's/manual_time//'
S="--section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy"
for q in q4_0 q6_K; do
  WICK_BENCH_REPEAT=1 timeout 60 ncu --clock-control none $S -k regex:mmvqw_$q --launch-skip 5 --launch-count 1 \
    $P/wick_bench --benchmark_filter="BM_GpuQuantMatVec/${q}_14336" > $O/ncu_mmvqw_$q.txt 2>&1
done
WICK_QMV_KERNEL=split WICK_BENCH_REPEAT=1 timeout 60 ncu --clock-control none $S -k regex:mmvqs_q4_0 --launch-skip 5 --launch-count 1 \
    $P/wick_bench --benchmark_filter="BM_GpuQuantMatVec/q4_0_14336" > $O/ncu_mmvqs_q4_0.txt 2>&1
grep -E "Duration|Stall|Issue|Eligible|Active Warps|Throughput|Bank|Registers|Achieved" $O/ncu_mmvqw_q4_0.txt | head -40
cd $OUT && tar czf call5.tgz call5 && rm -rf call5
