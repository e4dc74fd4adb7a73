#!/usr/bin/env bash
# Session 3, call 8: mmvqw with rounds of one slice a lane the same for the whole wave (no
# pair-then-leftover divergence) and the tile size chosen by lane rounds per row: every
# quantized test, memcheck of the quantized tests, the quantized benchmarks.
# usage: call8.sh <carry dir>
set -uo pipefail
P=$1
export LD_LIBRARY_PATH=$P
O=$OUT/call8
mkdir -p $O
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv; } > $O/gpu.txt 2>&1
timeout 200 $P/test_gpu_quant > $O/test_gpu_quant.log 2>&1; tail -1 $O/test_gpu_quant.log
grep -E "FAILED|Failure" $O/test_gpu_quant.log | head -10
f='BM_GpuQuant(Copy|MatVec)'
timeout 120 $P/wick_bench --benchmark_filter="$f" --benchmark_out=$O/quant.json --benchmark_out_format=json > $O/quant.log 2>&1
python3 bench/gpu_quant_report.py $O/quant.json > $O/quant_report.md 2>&1
WICK_QMV_KERNEL=wide timeout 60 $P/wick_bench --benchmark_filter="BM_GpuQuantMatVec/q4_K" > $O/quant_wide_q4K.log 2>&1
grep -E "MatVec|Copy" $O/quant.log $O/quant_wide_q4K.log | sed 's/manual_time//' | sed 's/iterations:40.//'
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 99 $P/test_gpu_quant --gtest_filter='*q4_0*:*q4_K*:*q6_K*:*q8_0*:*Row*:*Dtype*:*Hand*:GpuQmatmulWide.Unaligned*:GpuQmatmulKernels.*' > $O/memcheck.log 2>&1; echo "memcheck exit $?"; grep "ERROR SUMMARY" $O/memcheck.log | tail -1
cd $OUT && tar czf call8.tgz call8 && rm -rf call8
