#!/bin/bash
# The one device call of engineer q2 (issue 5, batch-1 mat-vec): tests, then the
# copy + mat-vec benchmarks with the default kernel (mmvqt, U = 4), U = 8, and the
# previous default mmvqs (WICK_QMV_KERNEL=split), then ncu kernel times and DRAM
# read rates. Run from the repo root with the prebuilt carry dir build-q2-carry;
# logs in $OUT/logs.tgz (and the main files beside it).
set -o pipefail
C=$PWD/build-q2-carry
S=$PWD/bench/results/2026-11-21-h200-gpu-quant-3
export LD_LIBRARY_PATH=$C
R=/tmp/r; rm -rf $R; mkdir -p $R
cd $C
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv; } > $R/gpu.txt 2>&1
cat $R/gpu.txt
F='BM_GpuQuant(Copy|MatVec)'
sumb() { grep -E "^BM_" $1 | sed -E 's/ +/ /g; s/\/iterations:[0-9]+\/manual_time//' | cut -c1-120; }
T0=$SECONDS
timeout 50 ./test_gpu_quant --gtest_brief=1 > $R/test_gpu_quant.log 2>&1; echo "test rc=$? ($((SECONDS-T0)) s)"; grep -E "FAILED|Failure|Expected|nmse|PASSED|SKIPPED|tests from" $R/test_gpu_quant.log | head -20
T0=$SECONDS
timeout 30 ./wick_bench --benchmark_filter="$F" --benchmark_out=$R/bench.json --benchmark_out_format=json > $R/bench.log 2>&1; echo "bench rc=$? ($((SECONDS-T0)) s)"; sumb $R/bench.log
T0=$SECONDS
WICK_QMV_KERNEL=split timeout 22 ./wick_bench --benchmark_filter="$F" --benchmark_out=$R/bench_split.json --benchmark_out_format=json > $R/bench_split.log 2>&1; echo "split rc=$? ($((SECONDS-T0)) s)"; sumb $R/bench_split.log
T0=$SECONDS
WICK_QMV_TILE_U=8 timeout 22 ./wick_bench --benchmark_filter="$F" --benchmark_out=$R/bench_u8.json --benchmark_out_format=json > $R/bench_u8.log 2>&1; echo "u8 rc=$? ($((SECONDS-T0)) s)"; sumb $R/bench_u8.log
T0=$SECONDS
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_read.sum.per_second,launch__shared_mem_per_block_dynamic
WICK_BENCH_REPEAT=1 timeout 35 ncu --clock-control none --metrics $M -k regex:mmvqt -c 170 --csv ./wick_bench --benchmark_filter="GpuQuantMatVec/(q4_0|q8_0)_" > $R/ncu_mmvqt.csv 2> $R/ncu_mmvqt.err; echo "ncu mmvqt rc=$? ($((SECONDS-T0)) s)"
T0=$SECONDS
WICK_QMV_KERNEL=split WICK_BENCH_REPEAT=1 timeout 20 ncu --clock-control none --metrics $M -k regex:'mmvqs|quantize_q8_1s' -c 170 --csv ./wick_bench --benchmark_filter='GpuQuantMatVec/q4_0_' > $R/ncu_split.csv 2> $R/ncu_split.err; echo "ncu split rc=$? ($((SECONDS-T0)) s)"
cd $OLDPWD
for j in bench bench_split bench_u8; do python3 bench/gpu_quant_report.py $R/$j.json $j; echo; done > $R/report.md 2>&1; cat $R/report.md
python3 $S/ncu_summary.py $R/ncu_mmvqt.csv $R/ncu_split.csv > $R/ncu_summary.txt 2>&1; cat $R/ncu_summary.txt
tar czf $OUT/logs.tgz -C /tmp r; cp $R/report.md $R/ncu_summary.txt $R/test_gpu_quant.log $OUT/ 2>/dev/null; true
