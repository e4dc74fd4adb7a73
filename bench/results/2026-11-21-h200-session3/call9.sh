#!/usr/bin/env bash
# Session 3, call 9: the final mat-vec code (Whole<Q> as one template reading through ldw; the
# unaligned-x tests merged): every quantized test, memcheck of the quantized tests, the
# quantized benchmarks.
# usage: call9.sh <carry dir>
set -uo pipefail
P=$1
export LD_LIBRARY_PATH=$P
O=$OUT/call9
mkdir -p $O
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv; } > $O/gpu.txt 2>&1
timeout 200 $P/test_gpu_quant > $O/test_gpu_quant.log 2>&1; tail -1 $O/test_gpu_quant.log
grep -E "FAILED|Failure" $O/test_gpu_quant.log | head -10
f='BM_GpuQuant(Copy|MatVec)'
timeout 120 $P/wick_bench --benchmark_filter="$f" --benchmark_out=$O/quant.json --benchmark_out_format=json > $O/quant.log 2>&1
python3 bench/gpu_quant_report.py $O/quant.json > $O/quant_report.md 2>&1
grep -E "MatVec|Copy" $O/quant.log | sed 's/manual_time//' | sed 's/iterations:40.//'
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 99 $P/test_gpu_quant --gtest_filter='*q4_0*:*q4_K*:*q6_K*:*q8_0*:*Row*:*Dtype*:*Hand*:GpuQmatmul*Unaligned*:GpuQmatmulWide.Repeated*:GpuQmatmulKernels.*' > $O/memcheck.log 2>&1; echo "memcheck exit $?"; grep "ERROR SUMMARY" $O/memcheck.log | tail -1
cd $OUT && tar czf call9.tgz call9 && rm -rf call9
