#!/usr/bin/env bash
# Session 4, call 1: mmvqw rewritten as teams of 32 lanes streaming rounds of 1024 columns
# (whole Q4_0 / Q8_0 blocks a lane read by byte permutations; Q4_K / Q6_K mmvqs slices),
# now the batch-1 default for all four types: every quantized test, the mat-vec benchmarks
# (default, then WICK_QMV_KERNEL=split for comparison), ncu issue/stall figures.
# usage: call1.sh <carry dir>
set -uo pipefail
P=$1
export LD_LIBRARY_PATH=$P
O=$OUT/call1
mkdir -p $O
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv; } > $O/gpu.txt 2>&1
timeout 200 $P/test_gpu_quant > $O/test_gpu_quant.log 2>&1; tail -1 $O/test_gpu_quant.log
grep -E "FAILED|Failure" $O/test_gpu_quant.log | head -20
f='BM_GpuQuant(Copy|MatVec)'
timeout 120 $P/wick_bench --benchmark_filter="$f" --benchmark_out=$O/quant.json --benchmark_out_format=json > $O/quant.log 2>&1
python3 bench/gpu_quant_report.py $O/quant.json > $O/quant_report.md 2>&1
grep -E "MatVec|Copy" $O/quant.log | sed 's/manual_time//' | sed 's/iterations:40.//'
WICK_QMV_KERNEL=split timeout 120 $P/wick_bench --benchmark_filter='BM_GpuQuantMatVec' > $O/quant_split.log 2>&1
grep -E "MatVec" $O/quant_split.log | sed 's/manual_time//' | sed 's/iterations:40.//'
m=gpu__time_duration.sum,dram__bytes_read.sum,launch__registers_per_thread,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__warps_active.avg.per_cycle_active,smsp__warps_eligible.avg.per_cycle_active
for s in long_scoreboard wait short_scoreboard barrier membar math_pipe_throttle lg_throttle mio_throttle not_selected; do m=$m,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio; done
for q in q4_0 q8_0 q4_K q6_K; do
  WICK_BENCH_REPEAT=1 timeout 60 ncu --clock-control none --metrics $m -k regex:mmvqw_$q --launch-skip 5 --launch-count 1 \
    $P/wick_bench --benchmark_filter="BM_GpuQuantMatVec/${q}_14336" > $O/ncu_$q.txt 2>&1
done
grep -E "mmvqw|duration|issue_active|inst_exec|warps_|registers" $O/ncu_*.txt | sed 's/  */ /g' | head -60
cd $OUT && tar czf call1.tgz call1 && rm -rf call1
