#!/usr/bin/env bash
# Session 4, call 13 (temporary kernels mmvqwkp*): how many first tiles mmvqw issues before it
# waits for the previous kernel (kP = 0, 1, 2 (the default), 3), mat-vec benchmarks, two runs each.
# usage: call13.sh <carry dir>
set -uo pipefail
P=$1
export LD_LIBRARY_PATH=$P
O=$OUT/call13
mkdir -p $O
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv; } > $O/gpu.txt 2>&1
for kp in 0 1 2 3; do
  for r in 1 2; do
    if [ $kp = 2 ]; then timeout 120 $P/wick_bench --benchmark_filter='BM_GpuQuantMatVec' > $O/kp${kp}_r$r.log 2>&1
    else WICK_QMV_KP=$kp timeout 120 $P/wick_bench --benchmark_filter='BM_GpuQuantMatVec' > $O/kp${kp}_r$r.log 2>&1; fi
  done
  echo "kP $kp"
  paste <(grep MatVec $O/kp${kp}_r1.log | awk '{print $1, $2}') <(grep MatVec $O/kp${kp}_r2.log | awk '{print $2}') | sed 's/BM_GpuQuantMatVec.//; s/.iterations:40.manual_time//'
done
cd $OUT && tar czf call13.tgz call13 && rm -rf call13
