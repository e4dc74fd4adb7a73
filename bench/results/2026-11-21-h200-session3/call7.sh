#!/usr/bin/env bash
# Session 3, call 7: mmvqwb (blocks of up to 768 threads, U = 2, ring of 3; WICK_QMV_WIDE=b)
# against mmvqw: the mat-vec tests under both, the quantized benchmarks under both, and
# ncu's stall reasons (smsp__average_warps_issue_stalled_*) for one launch of each on
# q4_0 [14336 x 4096]. usage: call7.sh <carry dir>
set -uo pipefail
P=$1
export LD_LIBRARY_PATH=$P
O=$OUT/call7
mkdir -p $O
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv; } > $O/gpu.txt 2>&1
WICK_QMV_WIDE=b timeout 200 $P/test_gpu_quant --gtest_filter='GpuQmatmul*' > $O/test_gpu_quant_b.log 2>&1; tail -1 $O/test_gpu_quant_b.log
grep -E "FAILED|Failure" $O/test_gpu_quant_b.log | head -10
f='BM_GpuQuant(Copy|MatVec)'
timeout 120 $P/wick_bench --benchmark_filter="$f" --benchmark_out=$O/quant.json --benchmark_out_format=json > $O/quant.log 2>&1
WICK_QMV_WIDE=b timeout 120 $P/wick_bench --benchmark_filter="$f" --benchmark_out=$O/quant_b.json --benchmark_out_format=json > $O/quant_b.log 2>&1
WICK_QMV_WIDE=b WICK_QMV_KERNEL=wide timeout 60 $P/wick_bench --benchmark_filter="BM_GpuQuantMatVec/q4_K" > $O/quant_b_q4K.log 2>&1
grep -E "MatVec|Copy" $O/quant.log $O/quant_b.log $O/quant_b_q4K.log | sed 's/manual_time//' | sed 's/iterations:40.//'
ncu --query-metrics 2>/dev/null | grep -E "issue_stalled" | awk '{print $1}' | head -40 > $O/stall_metric_names.txt
M=$(grep -E "^smsp__average_warps_issue_stalled_[a-z_]+_per_issue_active$" $O/stall_metric_names.txt | sed 's/$/.ratio/' | paste -sd, -)
[ -z "$M" ] && M=$(grep -E "^smsp__average_warp_latency_issue_stalled_[a-z_]+$" $O/stall_metric_names.txt | sed 's/$/.ratio/' | paste -sd, -)
echo "metrics: $M" > $O/ncu_stalls.txt
for v in a b; do
  WICK_QMV_WIDE=$v WICK_BENCH_REPEAT=1 timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,$M -k regex:mmvqw --launch-skip 5 --launch-count 1 \
    $P/wick_bench --benchmark_filter="BM_GpuQuantMatVec/q4_0_14336" >> $O/ncu_stalls.txt 2>&1
done
grep -E "mmvqw|duration|issue_active" $O/ncu_stalls.txt
grep -E "stalled" $O/ncu_stalls.txt | awk '$NF+0 > 0.3' | head -30
cd $OUT && tar czf call7.tgz call7 && rm -rf call7
