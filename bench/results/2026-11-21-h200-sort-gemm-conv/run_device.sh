#!/bin/bash
# One device call: correctness first (test_gpu_ops, parity of the sort / matmul / conv /
# gpu_sizes families on gpu:0 with the bench-sized cases, matmul again with
# WICK_GEMM=blas), then wick's benchmarks, per-kernel times under ncu, and PyTorch.
# Usage (repo root, on the device): bash bench/results/2026-11-21-h200-sort-gemm-conv/run_device.sh <carry dir>
C=$(cd "$1" && pwd)
R=bench/results/2026-11-21-h200-sort-gemm-conv
export LD_LIBRARY_PATH=$C
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv >"$OUT/gpu.txt" 2>&1
{
  echo "== test_gpu_ops"
  timeout 60 "$C/test_gpu_ops" 2>&1 | grep -E "^\[ +(OK|FAILED|PASSED|SKIPPED) +\]|tests ran|Failure|error" | head -40
  echo "== test_parity sort/matmul/conv/gpu_sizes on gpu:0 (bench-sized included)"
  timeout 150 "$C/test_parity" --gtest_filter='*sort_gpu_0*:*matmul_gpu_0*:*conv_gpu_0*:*gpu_sizes_gpu_0*' 2>&1 |
    grep -E "^\[ +(OK|FAILED|PASSED) +\]|tests ran| on gpu:0: " | head -60
  echo "== test_parity matmul with WICK_GEMM=blas"
  WICK_GEMM=blas timeout 60 "$C/test_parity" --gtest_filter='*matmul_gpu_0*' 2>&1 |
    grep -E "^\[ +(OK|FAILED|PASSED) +\]|tests ran| on gpu:0: " | head -20
} >"$OUT/tests.log" 2>&1
cat "$OUT/tests.log"
timeout 120 "$C/wick_bench" --benchmark_filter='BM_GpuOps(Argsort|Matmul|Conv2d)|BM_GpuD2DCopy/f32' \
  --benchmark_out="$OUT/wick_bench.json" --benchmark_out_format=json >"$OUT/bench.log" 2>&1
grep -E "^BM_" "$OUT/bench.log"
{
  echo "== ncu conv2d (first launches: inputs, warm-up op, ops)"
  timeout 90 ncu --clock-control none --metrics gpu__time_duration.sum --launch-count 24 \
    "$C/wick_bench" --benchmark_filter='BM_GpuOpsConv2d/f32' 2>&1 | grep -E "^  [a-zA-Z_].*\(|gpu__time_duration"
  echo "== ncu argsort kernels"
  timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:argsort --launch-count 3 \
    "$C/wick_bench" --benchmark_filter='BM_GpuOpsArgsort' 2>&1 | grep -E "^  [a-zA-Z_].*\(|gpu__time_duration"
  echo "== ncu bf16 GEMM (Lt default, then WICK_GEMM=blas)"
  for f in 'BM_GpuOpsMatmul/bf16$' 'BM_GpuOpsMatmul/bf16_blas$'; do
    echo "-- $f"
    timeout 40 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:'gemm|sm90|cutlass|xmma' \
      --launch-count 2 "$C/wick_bench" --benchmark_filter="$f" 2>&1 | grep -E "^  [a-zA-Z_].*\(|gpu__time_duration"
  done
} >"$OUT/ncu.log" 2>&1
tail -40 "$OUT/ncu.log"
PYTHONUNBUFFERED=1 timeout 90 python3 $R/torch_side.py >"$OUT/torch.log" 2>&1
cat "$OUT/torch.log"
