#!/usr/bin/env bash
# Session 4, call 8 (diagnostic, temporary kernels): mmvqw's time without its dot products
# (WICK_QMV_DEBUG=1: the tiles still stream through shared memory), without the quantization
# of x (2), and without either (3), for Q4_0 and Q8_0; the read ceiling (bench/qmv_ceiling.cu).
# usage: call8.sh <carry dir>
set -uo pipefail
P=$1
export LD_LIBRARY_PATH=$P
O=$OUT/call8
mkdir -p $O
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv; } > $O/gpu.txt 2>&1
for m in 0 1 2 3; do
  f='BM_GpuQuantMatVec/q(4_0|8_0)'
  [ $m = 2 ] && f='BM_GpuQuantMatVec/q4_0'
  if [ $m = 0 ]; then timeout 120 $P/wick_bench --benchmark_filter="$f" > $O/mode$m.log 2>&1
  else WICK_QMV_DEBUG=$m timeout 120 $P/wick_bench --benchmark_filter="$f" > $O/mode$m.log 2>&1; fi
  echo "mode $m"; grep -E "MatVec" $O/mode$m.log | sed 's/manual_time//; s/iterations:40.//' | awk '{print $1, $2, $3}'
done
export PATH=/usr/local/cuda/bin:$PATH
nvcc -O3 -arch=sm_90 -o /tmp/qmv_ceiling bench/qmv_ceiling.cu > $O/ceiling_build.log 2>&1 && /tmp/qmv_ceiling > $O/ceiling.log 2>&1
grep -E "empty|q4_0|q8_0" $O/ceiling.log | grep -E "empty|words<1>|8 x" 
cd $OUT && tar czf call8.tgz call8 && rm -rf call8
