#!/bin/bash
# One device call: correctness first (test_gpu_ops, parity of the sort / matmul / conv /
# gpu_sizes families on gpu:0 with the bench-sized cases, matmul again with
# WICK_GEMM=lt), then wick's benchmarks (clock and power logged), PyTorch, and
# per-kernel times of the conv under ncu.
# Usage (repo root, on the device): bash bench/results/2026-11-21-h200-sort-gemm-conv/run_device.sh <carry dir>
C=$(cd "$1" && pwd)
R=bench/results/2026-11-21-h200-sort-gemm-conv
export LD_LIBRARY_PATH=$C
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv >"$OUT/gpu.txt" 2>&1
{
  echo "== test_gpu_ops"
  timeout 30 "$C/test_gpu_ops" 2>&1 | grep -E "^\[ +(OK|FAILED|PASSED|SKIPPED) +\]|tests ran|Failure|error" | head -40
  echo "== test_parity sort/matmul/conv/gpu_sizes on gpu:0 (bench-sized included)"
  timeout 70 "$C/test_parity" --gtest_filter='*sort_gpu_0*:*matmul_gpu_0*:*conv_gpu_0*:*gpu_sizes_gpu_0*' 2>&1 |
    grep -E "^\[ +(OK|FAILED|PASSED) +\]|tests ran| on gpu:0: " | head -60
  echo "== test_parity matmul with WICK_GEMM=lt"
  WICK_GEMM=lt timeout 25 "$C/test_parity" --gtest_filter='*matmul_gpu_0*' 2>&1 |
    grep -E "^\[ +(OK|FAILED|PASSED) +\]|tests ran| on gpu:0: " | head -20
} >"$OUT/tests.log" 2>&1
cat "$OUT/tests.log"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,power.limit,temperature.gpu --format=csv -lms 250 \
  >"$OUT/smi.log" 2>&1 &
SMI=$!
timeout 45 "$C/wick_bench" --benchmark_filter='BM_GpuOps(Argsort|Matmul|Conv2d)|BM_GpuD2DCopy/f32' \
  --benchmark_out="$OUT/wick_bench.json" --benchmark_out_format=json >"$OUT/bench.log" 2>&1
grep -E "^BM_" "$OUT/bench.log"
echo "== torch" >>"$OUT/smi.log"
PYTHONUNBUFFERED=1 timeout 60 python3 $R/torch_side.py >"$OUT/torch.log" 2>&1
cat "$OUT/torch.log"
kill $SMI
{
  echo "== ncu conv2d (first launches: inputs, warm-up op, ops)"
  timeout 25 ncu --clock-control none --metrics gpu__time_duration.sum --launch-count 16 \
    "$C/wick_bench" --benchmark_filter='BM_GpuOpsConv2d/f32' 2>&1 | grep -E "^  [a-zA-Z_].*\(|gpu__time_duration"
} >"$OUT/ncu.log" 2>&1
cat "$OUT/ncu.log"
