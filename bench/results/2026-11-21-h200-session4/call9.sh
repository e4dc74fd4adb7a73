#!/usr/bin/env bash
# Session 4, call 9: mmvqw tiles by one bulk copy each (cp.async.bulk on sm_90, issued by lane 0, an mbarrier
# a stage): tests, benchmarks, ncu, Q4_0 stalls.
#
# usage: call9.sh <carry dir>
set -uo pipefail
P=$1
export LD_LIBRARY_PATH=$P
O=$OUT/call9
mkdir -p $O
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv; } > $O/gpu.txt 2>&1
timeout 200 $P/test_gpu_quant  > $O/test_gpu_quant.log 2>&1; tail -1 $O/test_gpu_quant.log
grep -E "FAILED|Failure" $O/test_gpu_quant.log | head -20
f='BM_GpuQuant(Copy|MatVec)'
timeout 120 $P/wick_bench --benchmark_filter="$f" --benchmark_out=$O/quant.json --benchmark_out_format=json > $O/quant.log 2>&1
python3 bench/gpu_quant_report.py $O/quant.json > $O/quant_report.md 2>&1
grep -E "MatVec|Copy" $O/quant.log | sed 's/manual_time//' | sed 's/iterations:40.//'
m=gpu__time_duration.sum,dram__bytes_read.sum,launch__registers_per_thread,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__warps_active.avg.per_cycle_active,smsp__warps_eligible.avg.per_cycle_active,dram__throughput.avg.pct_of_peak_sustained_elapsed
for s in long_scoreboard wait short_scoreboard barrier membar math_pipe_throttle lg_throttle mio_throttle not_selected; do m=$m,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio; done
for q in q4_0 q4_K q6_K q8_0; do
  WICK_BENCH_REPEAT=1 timeout 60 ncu --clock-control none --metrics $m -k regex:mmvqw_$q --launch-skip 5 --launch-count 1 \
    $P/wick_bench --benchmark_filter="BM_GpuQuantMatVec/${q}_14336" > $O/ncu_$q.txt 2>&1
done
grep -E "duration|issue_active|inst_exec|long_score|wait_per|short_score|eligible|dram__thr" $O/ncu_*.txt | sed 's/  */ /g; s/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | head -60
WICK_BENCH_REPEAT=1 timeout 120 ncu --clock-control none --section SourceCounters --section WarpStateStats -k regex:mmvqw_q4_0 --launch-skip 5 --launch-count 1 -o $O/q40 \
  $P/wick_bench --benchmark_filter="BM_GpuQuantMatVec/q4_0_14336" > $O/ncu_src.log 2>&1
timeout 60 ncu --import $O/q40.ncu-rep --page source --csv --print-source sass > $O/q40_sass.csv 2>&1; echo "source page rc $? $(wc -l < $O/q40_sass.csv) lines"
cd $OUT && tar czf call9.tgz call9 && rm -rf call9
