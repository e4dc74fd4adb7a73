#!/usr/bin/env bash
# The GPU machine's check (issue 3), in one call of the `device` tool:
#   build the CUDA backend (sm_90) with tests and benchmarks, run the GPU tests,
#   run them again under compute-sanitizer memcheck, run the GPU benchmarks and
#   bench/torch_compare.py. Logs go to $OUT (at most 8 files come back).
# usage: scripts/gpu-check.sh [all|test|bench|ops]   (default all; the launch-shape sweep runs in bench only;
#        ops: the issue-4 op families, see below)
set -uo pipefail
MODE=${1:-all}
OUT=${OUT:-$PWD/gpu-check-out}
B=${WICK_GPU_BUILD:-build-h200}
mkdir -p "$OUT"
log() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$OUT/summary.txt"; }

{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
  nvcc --version | tail -2
  git rev-parse HEAD 2>/dev/null || true
  git status --short 2>/dev/null | head -20 || true
} >"$OUT/summary.txt" 2>&1

# ---- issue 4 (gpu4): `ops` mode checks reduce/sort/indexing/matmul/conv/nn --------
# Runs test_gpu_ops, every parity case on gpu:0, test_gpu_ops under memcheck, the
# BM_GpuOps benchmarks (+ the d2d copy) and bench/gpu_ops_compare.py. With
# WICK_GPU_PREBUILT=<dir> holding libwick.so, libwick-cuda.so, test_gpu_ops,
# test_parity and wick_bench built elsewhere, it skips the build when they run here.
if [ "$MODE" = ops ]; then
  P=${WICK_GPU_PREBUILT:-}
  if [ -n "$P" ] && LD_LIBRARY_PATH="$P" "$P/test_gpu_ops" --gtest_list_tests >/dev/null 2>&1 &&
    ! LD_LIBRARY_PATH="$P" ldd "$P/libwick-cuda.so" | grep -q "not found"; then
    B="$P"
    export LD_LIBRARY_PATH="$P${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    log "using prebuilt binaries in $P"
  else
    log "configure + build (ops)"
    cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWICK_CUDA=ON -DWICK_CUDA_ARCHS=90 \
      -DWICK_BUILD_BENCH=ON >"$OUT/build.log" 2>&1 || { log "configure FAILED"; tail -30 "$OUT/build.log"; exit 1; }
    ninja -C "$B" -j16 wick wick-cuda test_gpu_ops test_parity wick_bench >>"$OUT/build.log" 2>&1 ||
      { log "build FAILED"; grep -E "error|FAILED" "$OUT/build.log" | head -40; exit 1; }
  fi
  rc=0
  log "test_gpu_ops"
  timeout 40 "$B/test_gpu_ops" 2>&1 | tee -a "$OUT/tests.log" | grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran" |
    sed "s/^/test_gpu_ops: /" | tee -a "$OUT/summary.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
  log "parity on gpu:0 (every family, bench-sized cases left out)"
  WICK_PARITY_SMALL=1 timeout 80 "$B/test_parity" --gtest_filter='*gpu_0*' >"$OUT/parity.log" 2>&1 || rc=1
  grep -E "^\[ +(OK|FAILED) +\]|tests ran|PASSED" "$OUT/parity.log" | tee -a "$OUT/summary.txt"
  grep -E " on gpu:0: " "$OUT/parity.log" | head -80 >>"$OUT/summary.txt"
  log "benchmarks (BM_GpuOps)"
  timeout 90 "$B/wick_bench" --benchmark_filter='BM_GpuOps|BM_GpuD2DCopy/f32' \
    --benchmark_out="$OUT/wick_bench.json" --benchmark_out_format=json >"$OUT/bench.log" 2>&1
  grep -E "^BM_" "$OUT/bench.log" | tee -a "$OUT/summary.txt"
  log "gpu_ops_compare"
  PYTHONUNBUFFERED=1 timeout 75 python3 bench/gpu_ops_compare.py "$OUT/wick_bench.json" \
    --out "$OUT/gpu_ops_compare.md" 2>&1 | tail -60 | tee -a "$OUT/summary.txt"
  log "parity, bench-sized cases of the issue-4 families"
  timeout 50 "$B/test_parity" --gtest_filter='*reduce_gpu_0*:*sort_gpu_0*:*indexing_gpu_0*:*nn_gpu_0*:*gpu_sizes_gpu_0*' \
    >"$OUT/parity_full.log" 2>&1 || rc=1
  grep -E "^\[ +(OK|FAILED) +\]" "$OUT/parity_full.log" | sed "s/^/full: /" | tee -a "$OUT/summary.txt"
  grep -E " on gpu:0: " "$OUT/parity_full.log" | head -30 | sed "s/^/full: /" >>"$OUT/summary.txt"
  log "test_gpu_ops under memcheck"
  timeout 30 compute-sanitizer --tool memcheck --error-exitcode 99 "$B/test_gpu_ops" >"$OUT/sanitizer.log" 2>&1
  echo "test_gpu_ops under memcheck: exit $?" | tee -a "$OUT/summary.txt"
  grep "ERROR SUMMARY" "$OUT/sanitizer.log" | tee -a "$OUT/summary.txt"
  log "done (ops rc $rc)"
  exit $rc
fi

log "configure + build"
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWICK_CUDA=ON -DWICK_CUDA_ARCHS=90 \
  -DWICK_BUILD_BENCH=ON >"$OUT/build.log" 2>&1 || { log "configure FAILED"; tail -30 "$OUT/build.log"; exit 1; }
targets="wick wick-cuda test_gpu_backend test_gpu_elementwise"
[ "$MODE" != test ] && targets="$targets wick_bench"
[ -f tests/test_parity.cpp ] && targets="$targets test_parity"
ninja -C "$B" -j16 $targets >>"$OUT/build.log" 2>&1 || { log "build FAILED"; grep -E "error|FAILED" "$OUT/build.log" | head -40; exit 1; }
log "built: $(ls -la $B/libwick-cuda.so | awk '{print $5}') bytes libwick-cuda.so"

rc=0
if [ "$MODE" != bench ]; then
  log "GPU tests"
  for t in test_gpu_backend test_gpu_elementwise; do
    timeout 150 "$B/$t" 2>&1 | tee -a "$OUT/tests.log" | grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran" | sed "s/^/$t: /" | tee -a "$OUT/summary.txt"
    [ "${PIPESTATUS[0]}" = 0 ] || rc=1
  done
  if [ -x "$B/test_parity" ]; then
    timeout 90 "$B/test_parity" --gtest_filter='*gpu*' 2>&1 | tee -a "$OUT/tests.log" | grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran" | sed "s/^/test_parity(gpu): /" | tee -a "$OUT/summary.txt"
  fi
  log "compute-sanitizer memcheck"
  for t in test_gpu_backend test_gpu_elementwise; do
    timeout 150 compute-sanitizer --tool memcheck --error-exitcode 99 "$B/$t" \
      --gtest_filter='-GpuLarge.*:GpuAllocator.AnImpossible*' >>"$OUT/sanitizer.log" 2>&1
    echo "$t under memcheck: exit $? ($(grep -c 'Invalid\|ERROR SUMMARY: [1-9]' "$OUT/sanitizer.log") error lines so far)" | tee -a "$OUT/summary.txt"
  done
  grep "ERROR SUMMARY" "$OUT/sanitizer.log" | tee -a "$OUT/summary.txt"
fi

if [ "$MODE" != test ]; then
  log "benchmarks"
  timeout 120 "$B/wick_bench" --benchmark_filter=BM_Gpu --benchmark_out="$OUT/wick_bench.json" \
    --benchmark_out_format=json >"$OUT/bench.log" 2>&1
  log "torch_compare"
  PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_compare.py "$OUT/wick_bench.json" --out "$OUT/torch_compare.md" \
    2>&1 | tee -a "$OUT/summary.txt"
  if [ "$MODE" = bench ]; then
  log "launch-shape sweep (block x blocks-per-SM cap; 0 = uncapped)"
  for blk in 128 256 512; do
    for cap in 0 4 16; do
      WICK_GPU_BLOCK=$blk WICK_GPU_BLOCKS_PER_SM=$cap timeout 60 "$B/wick_bench" \
        --benchmark_filter='BM_Gpu(Affine|Add|Exp)/(f32|bf16)|BM_GpuBroadcastAdd' --benchmark_min_time=0.1 2>&1 |
        grep -E "^BM_" | awk -v b=$blk -v c=$cap '{print "block " b " cap " c ": " $0}' >>"$OUT/bench.log"
    done
  done
  grep "^block" "$OUT/bench.log" | awk '{print $1,$2,$3,$4,$5,$(NF-1)}' | tee -a "$OUT/summary.txt" | tail -40
  fi
  if [ -x "$B/wick" ]; then
    timeout 120 "$B/wick" bench --device gpu:0 >>"$OUT/bench.log" 2>&1 || true
  fi
fi
log "done (tests rc $rc)"
exit $rc
