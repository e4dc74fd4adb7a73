#!/usr/bin/env bash
# Session 4, call 10: mmvqw (bulk copies) in blocks of 16, 8 and 4 teams (WICK_QMV_WIDE_THREADS:
# one, two or four blocks a multiprocessor), three runs each, mat-vec benchmarks only.
# usage: call10.sh <carry dir>
set -uo pipefail
P=$1
export LD_LIBRARY_PATH=$P
O=$OUT/call10
mkdir -p $O
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv; } > $O/gpu.txt 2>&1
for th in 512 256 128; do
  for r in 1 2 3; do
    WICK_QMV_WIDE_THREADS=$th timeout 120 $P/wick_bench --benchmark_filter='BM_GpuQuantMatVec' > $O/t${th}_r$r.log 2>&1
  done
  echo "threads $th"
  paste <(grep MatVec $O/t${th}_r1.log | awk '{print $1, $2}') <(grep MatVec $O/t${th}_r2.log | awk '{print $2}') <(grep MatVec $O/t${th}_r3.log | awk '{print $2}') | sed 's/BM_GpuQuantMatVec.//; s/.iterations:40.manual_time//'
done
cd $OUT && tar czf call10.tgz call10 && rm -rf call10
