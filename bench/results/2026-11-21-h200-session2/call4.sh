#!/usr/bin/env bash
# Fourth call: where with a u8 condition and bf16 values through the new
# contiguous-only kernels (where_wide{1,2,4}_u8_*, packed-word selection) against
# the combined where_u8_* kernel and PyTorch, with the where tests under every
# variant first; then softmax's clocks: SM clock and power sampled while its
# benchmark runs back to back (is the sustained run slower than one isolated launch
# because the clock drops?).
# usage: call4.sh PREBUILT_DIR   (logs to $OUT)
set -uo pipefail
P=$1
export LD_LIBRARY_PATH="$P${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for v in "" WICK_WHERE_U=1 WICK_WHERE_U=4 WICK_WHERE_WIDE=0; do
  env $v timeout 60 "$P/test_gpu_elementwise" --gtest_filter='GpuWhere.*' 2>&1 | grep -E "^\[  (PASSED|FAILED)" |
    sed "s/^/test_gpu_elementwise where [${v:-default}]: /"
  env $v timeout 60 "$P/test_parity" --gtest_filter='*where_gpu_0*' 2>&1 | grep -E "^\[  (PASSED|FAILED)" |
    sed "s/^/test_parity where (bench sizes) [${v:-default}]: /"
done
timeout 60 "$P/wick_bench" --benchmark_filter='BM_Gpu(D2DCopy/f32|Where/bf16|WhereVariant/)' \
  --benchmark_out="$OUT/where.json" --benchmark_out_format=json >"$OUT/where-bench.log" 2>&1
grep -E "^BM_" "$OUT/where-bench.log" | awk '{print $1, $2, $(NF-1), $NF}'
PYTHONUNBUFFERED=1 timeout 60 python3 bench/torch_compare.py "$OUT/where.json" --cases 'BM_Gpu(D2DCopy/f32|Where/bf16)' \
  --out "$OUT/where-torch.md" 2>&1 | tail -5
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread
timeout 60 ncu --clock-control none --metrics $M -k regex:'^where_' -c 3 "$P/wick_bench" \
  --benchmark_filter='BM_GpuWhere/bf16/|BM_GpuWhereVariant/bf16_(u1|combined)/' --benchmark_min_time=0.01 \
  >"$OUT/ncu-where.txt" 2>&1
grep -E "^  where_|gpu__time|dram__throughput|warps_active|registers" "$OUT/ncu-where.txt"
# softmax: clocks while the benchmark runs (3 s), and rms_norm for comparison
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 \
  >"$OUT/smi-softmax.csv" 2>&1 &
S=$!
timeout 60 "$P/wick_bench" --benchmark_filter='BM_GpuOps(Softmax|RmsNorm)/f32/' --benchmark_min_time=1.5 \
  >"$OUT/softmax-bench.log" 2>&1
kill $S
grep -E "^BM_" "$OUT/softmax-bench.log" | awk '{print $1, $2, $NF}'
awk -F', ' 'NR>1 {print $2, $4}' "$OUT/smi-softmax.csv" | sort | uniq -c | sort -rn | head -12
