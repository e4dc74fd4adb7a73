#!/usr/bin/env bash
# Session 4, call 15: tiles of 2 rounds (Q4_0, 9 stages) and 1 round (Q4_K, 9 stages), two first tiles before the
# wait for the previous kernel: mat-vec tests, the mat-vec benchmarks (two runs, and one with an
# ordinary launch).
# usage: call15.sh <carry dir>
set -uo pipefail
P=$1
export LD_LIBRARY_PATH=$P
O=$OUT/call15
mkdir -p $O
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv; } > $O/gpu.txt 2>&1
timeout 200 $P/test_gpu_quant --gtest_filter='GpuQmatmul*' > $O/test_gpu_quant.log 2>&1; tail -1 $O/test_gpu_quant.log
for r in 1 2; do
  timeout 120 $P/wick_bench --benchmark_filter='BM_GpuQuantMatVec' > $O/pdl_r$r.log 2>&1
done
WICK_QMV_NO_PDL=1 timeout 120 $P/wick_bench --benchmark_filter='BM_GpuQuantMatVec' > $O/nopdl_r1.log 2>&1
echo "case pdl1 pdl2 nopdl"
paste <(grep MatVec $O/pdl_r1.log | awk '{print $1, $2}') <(grep MatVec $O/pdl_r2.log | awk '{print $2}') <(grep MatVec $O/nopdl_r1.log | awk '{print $2}') | sed 's/BM_GpuQuantMatVec.//; s/.iterations:40.manual_time//'
cd $OUT && tar czf call15.tgz call15 && rm -rf call15
