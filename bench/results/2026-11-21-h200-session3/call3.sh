#!/usr/bin/env bash
# Session 3, call 3: mmvqw with a ring of 4 tiles and the quantization loads issued
# together (test_gpu_quant mat-vec tests, quantized benchmarks, ncu kernel times), the
# softmax with one exp per combine and a tree across waves (nn parity family on
# gpu:0, softmax / rms_norm against PyTorch twice). usage: call3.sh <carry dir>
set -uo pipefail
P=$1
export LD_LIBRARY_PATH=$P
O=$OUT/call3
mkdir -p $O
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv; } > $O/gpu.txt 2>&1
timeout 200 $P/test_gpu_quant --gtest_filter='GpuQmatmul*' > $O/test_gpu_quant.log 2>&1; tail -2 $O/test_gpu_quant.log
grep -E "FAILED|Failure" $O/test_gpu_quant.log | head -20
f='BM_GpuQuant(Copy|MatVec)'
timeout 120 $P/wick_bench --benchmark_filter="$f" --benchmark_out=$O/quant.json --benchmark_out_format=json > $O/quant.log 2>&1
python3 bench/gpu_quant_report.py $O/quant.json > $O/quant_report.md 2>&1
grep -E "MatVec|Copy" $O/quant.log | sed 's/manual_time//'
WICK_BENCH_REPEAT=1 timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,launch__registers_per_thread,smsp__warps_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warps_issue_stalled_barrier_per_warp_active.pct,smsp__warps_issue_stalled_short_scoreboard_per_warp_active.pct,smsp__issue_active.avg.pct_of_peak_sustained_active -k regex:mmvqw --launch-skip 5 --launch-count 3 \
  $P/wick_bench --benchmark_filter='BM_GpuQuantMatVec/q4_0_14336' > $O/ncu_mmvqw.txt 2>&1
grep -E "mmvqw|duration|stalled|issue_active|dram" $O/ncu_mmvqw.txt | head -30
timeout 60 $P/test_parity --gtest_filter='*nn_gpu_0*' > $O/parity_nn.log 2>&1; tail -1 $O/parity_nn.log
f='BM_GpuOps(Softmax|RmsNorm)/f32/|BM_GpuD2DCopy/f32/'
for r in 1 2; do
  timeout 100 $P/wick_bench --benchmark_filter="$f" --benchmark_out=$O/ops$r.json --benchmark_out_format=json > $O/ops$r.log 2>&1
  PYTHONUNBUFFERED=1 timeout 100 python3 bench/gpu_ops_compare.py $O/ops$r.json --out $O/compare$r.md > $O/compare$r.log 2>&1
  grep -E "Softmax|RmsNorm" $O/compare$r.md
done
cd $OUT && tar czf call3.tgz call3 && rm -rf call3
