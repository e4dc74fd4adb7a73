#!/bin/bash
# One device call for the memory-bound kernels (engineer "mem"): GPU tests first,
# then wick's benchmarks of every variant, PyTorch's figures for the same cases,
# and ncu kernel times. Run from the repo root with the stripped binaries in
# build-gpu4-carry (LD_LIBRARY_PATH); every log goes under $OUT.
#   usage: bench/results/2026-11-21-h200-mem-kernels/device_run.sh [PASS]
set -uo pipefail
C=$PWD/build-gpu4-carry
export LD_LIBRARY_PATH=$C
S=$OUT/summary.txt
log() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$S"; }
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
  cat "$C/COMMIT" 2>/dev/null
} >"$S" 2>&1
log "tests"
for t in test_gpu_ops test_gpu_elementwise; do
  timeout 60 "$C/$t" >>"$OUT/tests.log" 2>&1
  echo "$t: exit $? $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)" | tee -a "$S"
done
WICK_PARITY_SMALL=1 timeout 60 "$C/test_parity" --gtest_filter='*gpu_0*' >"$OUT/parity.log" 2>&1
echo "test_parity gpu_0 (small): exit $?" | tee -a "$S"
timeout 60 "$C/test_parity" --gtest_filter='*reduce_gpu_0*:*indexing_gpu_0*:*nn_gpu_0*:*gpu_sizes_gpu_0*:*where_gpu_0*' \
  >>"$OUT/parity.log" 2>&1
echo "test_parity issue-3/4 families with bench sizes: exit $?" | tee -a "$S"
grep -E "^\[ +(OK|FAILED) +\]|^\[  (PASSED|FAILED)|tests ran" "$OUT/parity.log" | tee -a "$S"
grep -E " on gpu:0: " "$OUT/parity.log" | head -20 | tee -a "$S"
log "wick benchmarks"
F='BM_GpuOps(Reduce|ReduceTpr|Softmax|RmsNorm|IndexSelect|IndexSelect1d)/|BM_GpuD2DCopy|BM_Gpu(Exp|Add|Where|WhereV8)/'
timeout 120 "$C/wick_bench" --benchmark_filter="$F" --benchmark_out="$OUT/wick_bench.json" \
  --benchmark_out_format=json >/tmp/bench.log 2>&1
grep -E "^BM_|rror" /tmp/bench.log | awk '{print $1, $2, $3, $NF}' | tee -a "$S"
log "torch (ops)"
PYTHONUNBUFFERED=1 timeout 60 python3 bench/gpu_ops_compare.py "$OUT/wick_bench.json" \
  --cases 'Reduce|Softmax|RmsNorm|IndexSelect' --out "$OUT/ops_compare.md" >/dev/null 2>>"$S"
cat "$OUT/ops_compare.md" >>"$S"
log "torch (elementwise), twice"
for k in 1 2; do
  PYTHONUNBUFFERED=1 timeout 60 python3 bench/torch_compare.py "$OUT/wick_bench.json" \
    --cases '^BM_Gpu(D2DCopy|Exp|Add|Where)/' --out "$OUT/ew_compare_$k.md" >/dev/null 2>>"$S"
  cat "$OUT/ew_compare_$k.md" >>"$S"
done
log "ncu kernel times"
for f in 'BM_GpuOpsReduce/sum' 'BM_GpuOpsReduce/max' 'BM_GpuOpsReduce/argmax' 'BM_GpuOpsSoftmax/f32/' \
  'BM_GpuOpsIndexSelect/f32' 'BM_GpuWhere/bf16'; do
  echo "### $f" >>"$OUT/ncu.txt"
  timeout 40 ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
    -k 'regex:^(sum|max|argmax|softmax|isr|where)_' --launch-skip 2 --launch-count 3 \
    "$C/wick_bench" --benchmark_filter="$f" >>"$OUT/ncu.txt" 2>&1
done
grep -E "^###|^  [a-z_0-9]+_(f32|bf16)|gpu__time|dram__bytes|ERR" "$OUT/ncu.txt" >>"$S"
log "done"
