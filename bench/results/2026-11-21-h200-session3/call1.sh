#!/usr/bin/env bash
# Session 3, call 1: the read ceiling of the batch-1 mat-vec sizes (bench/qmv_ceiling.cu),
# the softmax with exp2 (nn parity family on gpu:0, then softmax / rms_norm against
# PyTorch, twice). usage: call1.sh <carry dir>
set -uo pipefail
P=$1
export LD_LIBRARY_PATH=$P
O=$OUT/call1
mkdir -p $O
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv; } > $O/gpu.txt 2>&1
nvcc -O3 -arch=sm_90 -o /tmp/qmv_ceiling bench/qmv_ceiling.cu > $O/ceiling.log 2>&1 && /tmp/qmv_ceiling >> $O/ceiling.log 2>&1
$P/test_parity --gtest_filter='*nn_gpu_0*' > $O/parity_nn.log 2>&1; tail -3 $O/parity_nn.log
f='BM_GpuOps(Softmax|RmsNorm)/f32$|BM_GpuD2DCopy/f32$'
for r in 1 2; do
  (nvidia-smi --query-gpu=timestamp,power.draw,clocks.sm,clocks.mem,clocks_throttle_reasons.active --format=csv -lms 200 > $O/smi$r.csv 2>&1 &
   echo $! > /tmp/smi.pid)
  $P/wick_bench --benchmark_filter="$f" --benchmark_out=$O/ops$r.json --benchmark_out_format=json > $O/ops$r.log 2>&1
  kill $(cat /tmp/smi.pid) 2>/dev/null
  PYTHONUNBUFFERED=1 timeout 100 python3 bench/gpu_ops_compare.py $O/ops$r.json --out $O/compare$r.md > $O/compare$r.log 2>&1
done
cat $O/ceiling.log; grep -E "softmax|Softmax|RmsNorm|Copy" $O/compare*.md
cd $OUT && tar czf call1.tgz call1 && rm -rf call1
