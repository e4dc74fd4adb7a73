#!/usr/bin/env bash
# Session 4, call 16: the simplified code (same arithmetic): every quantized test, memcheck of the
# mat-vec tests, the quantized benchmarks (both launches).
# usage: call16.sh <carry dir>
set -uo pipefail
P=$1
export LD_LIBRARY_PATH=$P
O=$OUT/call16
mkdir -p $O
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv; git rev-parse HEAD; } > $O/gpu.txt 2>&1
timeout 200 $P/test_gpu_quant > $O/test_gpu_quant.log 2>&1; tail -1 $O/test_gpu_quant.log
grep -E "FAILED|Failure" $O/test_gpu_quant.log | head -20
timeout 200 $P/wick_bench --benchmark_filter='BM_GpuQuant(Copy|MatVec)' --benchmark_out=$O/quant.json --benchmark_out_format=json > $O/quant.log 2>&1
python3 bench/gpu_quant_report.py $O/quant.json > $O/quant_report.md 2>&1
WICK_QMV_NO_PDL=1 timeout 120 $P/wick_bench --benchmark_filter='BM_GpuQuant(Copy|MatVec)' --benchmark_out=$O/quant_nopdl.json --benchmark_out_format=json > $O/quant_nopdl.log 2>&1
python3 bench/gpu_quant_report.py $O/quant_nopdl.json > $O/quant_report_nopdl.md 2>&1
paste <(grep "mat-vec" $O/quant_report.md | cut -d'|' -f2,3,6) <(grep "mat-vec" $O/quant_report_nopdl.md | cut -d'|' -f3,6)
timeout 240 compute-sanitizer --tool memcheck --error-exitcode 99 $P/test_gpu_quant --gtest_filter='GpuQmatmul*' > $O/memcheck.log 2>&1; echo "memcheck exit $?"; grep "ERROR SUMMARY" $O/memcheck.log | tail -1
cd $OUT && tar czf call16.tgz call16 && rm -rf call16
