#!/usr/bin/env bash
# Session 4, call 11: mmvqw launched as a programmatic dependent launch (its first two tiles
# stream before it waits for the previous kernel; then x), against WICK_QMV_NO_PDL=1 (an
# ordinary launch, same kernel): every quantized test (both ways), the mat-vec benchmarks
# (two runs each), memcheck of the mat-vec tests.
# usage: call11.sh <carry dir>
set -uo pipefail
P=$1
export LD_LIBRARY_PATH=$P
O=$OUT/call11
mkdir -p $O
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv; } > $O/gpu.txt 2>&1
timeout 200 $P/test_gpu_quant > $O/test_gpu_quant.log 2>&1; tail -1 $O/test_gpu_quant.log
grep -E "FAILED|Failure" $O/test_gpu_quant.log | head -20
WICK_QMV_NO_PDL=1 timeout 200 $P/test_gpu_quant --gtest_filter='GpuQmatmul*' > $O/test_gpu_quant_nopdl.log 2>&1; tail -1 $O/test_gpu_quant_nopdl.log
for r in 1 2; do
  timeout 120 $P/wick_bench --benchmark_filter='BM_GpuQuant(Copy|MatVec)' --benchmark_out=$O/quant$r.json --benchmark_out_format=json > $O/pdl_r$r.log 2>&1
  WICK_QMV_NO_PDL=1 timeout 120 $P/wick_bench --benchmark_filter='BM_GpuQuantMatVec' > $O/nopdl_r$r.log 2>&1
done
python3 bench/gpu_quant_report.py $O/quant1.json > $O/quant_report.md 2>&1
echo "case pdl1 pdl2 nopdl1 nopdl2"
paste <(grep MatVec $O/pdl_r1.log | awk '{print $1, $2}') <(grep MatVec $O/pdl_r2.log | awk '{print $2}') <(grep MatVec $O/nopdl_r1.log | awk '{print $2}') <(grep MatVec $O/nopdl_r2.log | awk '{print $2}') | sed 's/BM_GpuQuantMatVec.//; s/.iterations:40.manual_time//'
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 99 $P/test_gpu_quant --gtest_filter='GpuQmatmul*' > $O/memcheck.log 2>&1; echo "memcheck exit $?"; grep "ERROR SUMMARY" $O/memcheck.log | tail -1
cd $OUT && tar czf call11.tgz call11 && rm -rf call11
