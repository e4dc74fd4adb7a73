#!/usr/bin/env bash
# Session 3, call 2: mmvqw (the one-launch batch-1 mat-vec) tested (test_gpu_quant),
# then the quantized benchmarks with mmvqw (default) and mmvqs (WICK_QMV_KERNEL=split),
# ncu kernel times of mmvqw, and softmax / rms_norm against PyTorch.
# usage: call2.sh <carry dir>
set -uo pipefail
P=$1
export LD_LIBRARY_PATH=$P
O=$OUT/call2
mkdir -p $O
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv; } > $O/gpu.txt 2>&1
timeout 240 $P/test_gpu_quant --gtest_filter='GpuQmatmul*' > $O/test_gpu_quant.log 2>&1; tail -4 $O/test_gpu_quant.log
grep -E "FAILED|Failure" $O/test_gpu_quant.log | head -20
f='BM_GpuQuant(Copy|MatVec)'
timeout 120 $P/wick_bench --benchmark_filter="$f" --benchmark_out=$O/quant.json --benchmark_out_format=json > $O/quant.log 2>&1
WICK_QMV_KERNEL=split timeout 120 $P/wick_bench --benchmark_filter="$f" --benchmark_out=$O/quant_split.json --benchmark_out_format=json > $O/quant_split.log 2>&1
python3 bench/gpu_quant_report.py $O/quant.json > $O/quant_report.md 2>&1
python3 bench/gpu_quant_report.py $O/quant_split.json > $O/quant_split_report.md 2>&1
grep -E "MatVec|Copy" $O/quant.log $O/quant_split.log | sed 's/manual_time//'
WICK_BENCH_REPEAT=1 timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,launch__registers_per_thread -k regex:mmvqw --launch-count 40 \
  $P/wick_bench --benchmark_filter='BM_GpuQuantMatVec' > $O/ncu_mmvqw.txt 2>&1
grep -E "mmvqw|gpu__time" $O/ncu_mmvqw.txt | head -40
f='BM_GpuOps(Softmax|RmsNorm)/f32/|BM_GpuD2DCopy/f32/'
timeout 100 $P/wick_bench --benchmark_filter="$f" --benchmark_out=$O/ops.json --benchmark_out_format=json > $O/ops.log 2>&1
PYTHONUNBUFFERED=1 timeout 100 python3 bench/gpu_ops_compare.py $O/ops.json --out $O/compare.md > $O/compare.log 2>&1
cat $O/compare.md | grep -E "Softmax|RmsNorm|Copy|copy"
cd $OUT && tar czf call2.tgz call2 && rm -rf call2
