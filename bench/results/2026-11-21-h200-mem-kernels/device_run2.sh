#!/bin/bash
# Second device call (engineer "mem"): tests of the changed kernels (parity with the
# new reduce default and with every long row forced onto one wave), then wick's
# figures and PyTorch's for the same cases (PyTorch's elementwise figures twice).
# Run from the repo root with the stripped binaries in build-gpu4-carry.
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
timeout 30 "$C/test_gpu_ops" >"$OUT/tests.log" 2>&1
echo "test_gpu_ops: exit $? $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)" | tee -a "$S"
WICK_PARITY_SMALL=1 timeout 30 "$C/test_parity" --gtest_filter='*gpu_0*' >"$OUT/parity.log" 2>&1
echo "test_parity gpu_0 (small): exit $?" | tee -a "$S"
timeout 30 "$C/test_parity" --gtest_filter='*reduce_gpu_0*:*nn_gpu_0*:*gpu_sizes_gpu_0*' >>"$OUT/parity.log" 2>&1
echo "test_parity reduce/nn/gpu_sizes with bench sizes: exit $?" | tee -a "$S"
WICK_REDUCE_TPR=32 timeout 30 "$C/test_parity" --gtest_filter='*reduce_gpu_0*:*gpu_sizes_gpu_0*' >>"$OUT/parity.log" 2>&1
echo "test_parity reduce/gpu_sizes, WICK_REDUCE_TPR=32 (one wave per long row): exit $?" | tee -a "$S"
grep -E "^\[ +(OK|FAILED) +\]|^\[  (PASSED|FAILED)" "$OUT/parity.log" | tee -a "$S"
grep -E " on gpu:0: " "$OUT/parity.log" | head -20 | tee -a "$S"
log "wick benchmarks"
F='BM_GpuD2DCopy/f32|BM_GpuOpsReduce/|BM_GpuOps(Softmax|RmsNorm)/f32/|BM_GpuOpsIndexSelect/|BM_GpuWhere/bf16|BM_GpuExp/|BM_GpuAdd/bf16'
timeout 90 "$C/wick_bench" --benchmark_filter="$F" --benchmark_out="$OUT/wick_bench.json" \
  --benchmark_out_format=json >/tmp/bench.log 2>&1
grep -E "^BM_|rror" /tmp/bench.log | awk '{print $1, $2, $3, $NF}' | tee -a "$S"
log "torch (ops)"
PYTHONUNBUFFERED=1 timeout 40 python3 bench/gpu_ops_compare.py "$OUT/wick_bench.json" \
  --cases 'Reduce/|Softmax/f32$|RmsNorm/f32$|IndexSelect/' --out "$OUT/ops_compare.md" >/dev/null 2>>"$S"
cat "$OUT/ops_compare.md" >>"$S"
log "torch (elementwise), twice"
for k in 1 2; do
  PYTHONUNBUFFERED=1 timeout 40 python3 bench/torch_compare.py "$OUT/wick_bench.json" \
    --cases '^BM_Gpu(D2DCopy/f32|Exp/|Add/bf16|Where/bf16)' --out "$OUT/ew_compare_$k.md" >/dev/null 2>>"$S"
  cat "$OUT/ew_compare_$k.md" >>"$S"
done
log "done"
