#!/usr/bin/env bash
# The GPU machine's check: builds the CUDA backend (sm_90) with tests and
# benchmarks, or uses binaries built elsewhere, then
#   test:  every GPU test (backend, elementwise, ops, quant), the CPU tests of the
#          AVX-512 kernels (test_matmul, test_quant), every parity family on
#          gpu:0 with the bench-sized cases, `wick devices`, `wick check --device
#          gpu:0`, and (after any benchmarks) the GPU tests again under
#          compute-sanitizer memcheck;
#   bench: every GPU benchmark (wick_bench --benchmark_filter=BM_Gpu), PyTorch on
#          the same cases in the same run (bench/torch_compare.py,
#          bench/gpu_ops_compare.py), the quantized targets
#          (bench/gpu_quant_report.py: the batch-1 mat-vec back to back and after
#          an ordinary kernel), and `wick bench --device gpu:0`;
#   model: the model runner on gpu:0: its tests (SmolLM2's greedy tokens on the GPU
#          equal the CPU's), the logits of tiny models of every architecture and
#          weight type against the float64 NumPy reference, SmolLM2's logits against
#          Hugging Face transformers, `wick generate` (memory figure) and
#          `wick bench-model` on SmolLM2. Needs the files of scripts/fetch-test-data.sh
#          in the folder the tests were built to read (WICK_TEST_DATA_DIR of the build),
#          given here as WICK_GPU_DATA, and the Python package gguf (the GPU machine has
#          no registry: install its wheel first).
#   cpu:   the CPU backend beside PyTorch CPU on the same cores in the same run
#          (bench/cpu_compare.py: the bench/cpu_ops.cpp cases and `wick bench --device
#          cpu`), WICK_CPU_THREADS threads on both sides (default 16), WICK_CPU_CASES (a
#          regex: only those cases) if set; needs only libwick.so, wick_bench and wick
#          (no GPU). Its tables are Markdown, ready to paste (cpu_compare.md).
#   python: the Python package's tests (tests/python_api, pytest) with their tensors on
#          gpu:0 (--device gpu:0), PyTorch's CUDA tensors through DLPack included; the
#          package is <build>/python-package (CMake target _wick, -DWICK_PYTHON=ON: this
#          script adds it to its own build when python3 has nanobind; otherwise build it
#          elsewhere against a Python 3.12 and carry it). The SmolLM2 tests read
#          WICK_GPU_DATA as the model part does.
# Output in $OUT, at most 8 files: summary.txt (the digest), the Markdown reports
# (torch_compare.md, gpu_ops_compare.md, gpu_quant_report.md, cpu_compare.md) and gpu-check.tgz,
# which holds every log and benchmark JSON.
#
# usage: scripts/gpu-check.sh [all|PART[,PART...]]   PART: test bench ops quant model cpu python (default all)
#   ops / quant: tests and benchmarks of the reduce, nn, indexing, sort, GEMM and
#                convolution families / of the QUANTIZED module
#   WICK_GPU_PREBUILT=<dir>: a folder holding libwick.so, libwick-cuda.so and the
#     executables (test_*, wick_bench, wick or bin/wick) built for sm_90 elsewhere (strip them to
#     carry them; add libbenchmark.so.1* when the machine lacks it); used when they
#     load here, else the script builds. The cpu part alone needs libwick.so* (its
#     SONAME libwick.so.MAJOR.MINOR), wick_bench and wick, and the shared libraries
#     libwick.so links that the machine lacks, in <dir>/lib (put on LD_LIBRARY_PATH
#     when present): the CPU backend's libdnnl.so.2, libsleef.so.3, libhwy.so.1 and
#     libdnnl's libOpenCL.so.1 (Debian 12: libdnnl2, libsleef3, libhwy1,
#     ocl-icd-libopencl1), e.g.
#       mkdir -p P/lib && for l in libdnnl.so.2 libsleef.so.3 libhwy.so.1 libOpenCL.so.1; do
#         cp -L /usr/lib/x86_64-linux-gnu/$l P/lib/; done
#     The python part needs python-package/ in <dir> (or nanobind here to build it).
#   WICK_GPU_BUILD=<dir>: the build folder (default build-h200).
set -uo pipefail
MODE=${1:-all}
OUT=${OUT:-$PWD/gpu-check-out}
B=${WICK_GPU_BUILD:-build-h200}
mkdir -p "$OUT"
S="$OUT/summary.txt"
log() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$S"; }
# At exit, every file of $OUT but the digest and the reports goes into gpu-check.tgz.
pack() {
  local files=()
  for f in "$OUT"/*; do
    case "${f##*/}" in
      summary.txt | torch_compare.md | gpu_ops_compare.md | gpu_quant_report.md | cpu_compare.md | gpu-check.tgz) ;;
      *) [ -e "$f" ] && files+=("${f##*/}") ;;
    esac
  done
  [ ${#files[@]} -gt 0 ] && tar -czf "$OUT/gpu-check.tgz" -C "$OUT" --remove-files "${files[@]}"
}
trap pack EXIT
# Does MODE (a part, or parts joined by commas) include one of these parts?
want() {
  [ "$MODE" = all ] && return 0
  local p
  for p in "$@"; do [[ ",$MODE," == *",$p,"* ]] && return 0; done
  return 1
}

# cuDNN: libwick-cuda.so dlopens libcudnn.so.9 for the convolutions (im2col + GEMM
# when it does not load). On the GPU machine the wheel PyTorch runs on
# (nvidia-cudnn-cu*) holds it: CMake (its header) and the loader look there.
cudnn_dir=$(python3 -c 'import nvidia.cudnn as m; print(list(m.__path__)[0])' 2>/dev/null || true)
if [ -n "$cudnn_dir" ] && [ -d "$cudnn_dir/lib" ]; then
  export LD_LIBRARY_PATH="$cudnn_dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export CUDNN_ROOT=${CUDNN_ROOT:-$cudnn_dir}
fi

{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
  nvcc --version | tail -2
  git rev-parse HEAD 2>/dev/null || true
  git status --short 2>/dev/null | head -20 || true
  echo "cuDNN folder: ${cudnn_dir:-none found}"
} >"$S" 2>&1

# ---- binaries ------------------------------------------------------------------------
P=${WICK_GPU_PREBUILT:-}
# Shared libraries carried with the prebuilt binaries (see the usage above).
if [ -n "$P" ] && [ -d "$P/lib" ]; then
  export LD_LIBRARY_PATH="$P/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
# The parts that need the GPU backend (all but cpu).
gpu_parts() { want test bench ops quant model python; }
prebuilt_loads() {
  if gpu_parts; then
    LD_LIBRARY_PATH="$P${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$P/test_gpu_backend" --gtest_list_tests >/dev/null 2>&1 &&
      ! LD_LIBRARY_PATH="$P${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ldd "$P/libwick-cuda.so" | grep -q "not found"
  else
    LD_LIBRARY_PATH="$P${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$P/wick_bench" --benchmark_list_tests >/dev/null 2>&1
  fi
}
if [ -n "$P" ] && prebuilt_loads; then
  B="$P"
  export LD_LIBRARY_PATH="$P${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  W="$P/wick"
  log "using prebuilt binaries in $P"
else
  if [ -n "$P" ]; then
    log "prebuilt binaries in $P do not load here; missing: $(LD_LIBRARY_PATH="$P${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      ldd "$P/libwick.so" "$P/wick_bench" 2>&1 | grep "not found" | sort -u | awk '{print $1}' | tr '\n' ' ')"
  fi
  log "configure + build"
  py=(-DWICK_PYTHON=OFF)
  pyt=()
  if python3 -c "import nanobind" 2>/dev/null; then py=(-DWICK_PYTHON=ON) pyt=(_wick); fi
  cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWICK_CUDA=ON -DWICK_CUDA_ARCHS=90 \
    -DWICK_BUILD_BENCH=ON "${py[@]}" >"$OUT/build.log" 2>&1 || { log "configure FAILED"; tail -30 "$OUT/build.log"; exit 1; }
  targets=(wick wick_cli wick_bench)
  gpu_parts && targets+=(wick-cuda test_gpu_backend test_gpu_elementwise test_gpu_ops test_gpu_quant test_parity test_api_print test_api_shape
    test_model test_model_attention test_model_tp test_comm test_model_smollm test_matmul test_quant "${pyt[@]}")
  ninja -C "$B" -j16 "${targets[@]}" >>"$OUT/build.log" 2>&1 ||
    { log "build FAILED"; grep -E "error|FAILED" "$OUT/build.log" | head -40; exit 1; }
  log "built: $(stat -c %s "$B/libwick-cuda.so") bytes libwick-cuda.so"
fi
# The CLI: bin/wick in a build tree (the target `wick` is the library).
[ -x "${W:-}" ] || W="$B/bin/wick"

rc=0
gtest() {  # name timeout [gtest args...]: runs one test binary, digest to the summary
  local t=$1 secs=$2
  shift 2
  [ -x "$B/$t" ] || { log "$t: not built"; rc=1; return; }
  timeout "$secs" "$B/$t" "$@" >"$OUT/$t.log" 2>&1
  local r=$?
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran|^\[  FAILED" "$OUT/$t.log" | sed "s/^/$t: /" | tee -a "$S"
  [ $r = 0 ] || { echo "$t: exit $r" | tee -a "$S"; rc=1; }
}
memcheck() {  # name timeout [gtest args...]; MEMCHECK_OPTS: more compute-sanitizer options
  local t=$1 secs=$2
  shift 2
  [ -x "$B/$t" ] || return
  local log="$OUT/memcheck-$t${MEMCHECK_LOG_SUFFIX:-}.log"
  # shellcheck disable=SC2086
  timeout "$secs" compute-sanitizer --tool memcheck --error-exitcode 99 ${MEMCHECK_OPTS:-} "$B/$t" "$@" >"$log" 2>&1
  local r=$?
  echo "$t${MEMCHECK_LOG_SUFFIX:-} under memcheck: exit $r; $(grep "ERROR SUMMARY" "$log" | tail -1)" | tee -a "$S"
  [ $r = 0 ] || rc=1
}

# ---- tests ---------------------------------------------------------------------------
if want test ops quant; then
  log "GPU tests"
  if want test; then
    gtest test_gpu_backend 150
    gtest test_gpu_elementwise 150
    gtest test_api_print 60 --gtest_filter='*Gpu*:*GPU*'
    gtest test_api_shape 60 --gtest_filter='*Gpu*:*GPU*'
    # The CPU's AVX-512 kernels (the f16 GEMM, the mat-vecs): CI's machine has no AVX-512.
    gtest test_matmul 120
    gtest test_quant 300
  fi
  want test ops && gtest test_gpu_ops 120
  want test quant && gtest test_gpu_quant 120
  if want test ops; then
    log "parity on gpu:0 (every family, bench-sized cases included)"
    timeout 150 "$B/test_parity" --gtest_filter='*gpu_0*' >"$OUT/test_parity.log" 2>&1 || rc=1
    grep -E "^\[ +(OK|FAILED) +\]|PASSED|FAILED" "$OUT/test_parity.log" | tee -a "$S"
    grep -E " on gpu:0: " "$OUT/test_parity.log" | head -40 >>"$S"
  fi
  if want test && [ -x "$W" ]; then
    log "wick devices; wick check --device gpu:0"
    { timeout 20 "$W" devices; timeout 150 "$W" check --device gpu:0; } >"$OUT/wick-check.log" 2>&1 ||
      rc=1
    grep -v "^  " "$OUT/wick-check.log" | tail -25 | tee -a "$S"
  fi
fi

# ---- benchmarks ----------------------------------------------------------------------
bench() {  # filter json-name timeout
  timeout "$3" "$B/wick_bench" --benchmark_filter="$1" --benchmark_out="$OUT/$2" --benchmark_out_format=json \
    >"$OUT/${2%.json}.log" 2>&1 || { echo "wick_bench $1: exit $?" | tee -a "$S"; rc=1; }
  grep -E "^BM_" "$OUT/${2%.json}.log" | tee -a "$S"
}
if want bench ops quant; then
  log "benchmarks"
  if want bench; then
    f='BM_Gpu(D2DCopy|Affine|Exp|Add|Where|Cast|BroadcastAdd|TransposeCopy|EagerOp|EagerQueue)/'
    bench "$f" wick_bench_elementwise.json 120
    log "torch_compare (elementwise, PyTorch in the same run)"
    PYTHONUNBUFFERED=1 timeout 120 python3 bench/torch_compare.py "$OUT/wick_bench_elementwise.json" \
      --out "$OUT/torch_compare.md" 2>&1 | tail -33 | tee -a "$S"
  fi
  if want bench ops; then
    f='BM_GpuOps|BM_GpuD2DCopy/f32'
    bench "$f" wick_bench_ops.json 150
    log "gpu_ops_compare (PyTorch in the same run)"
    PYTHONUNBUFFERED=1 timeout 120 python3 bench/gpu_ops_compare.py "$OUT/wick_bench_ops.json" \
      --out "$OUT/gpu_ops_compare.md" 2>&1 | tail -40 | tee -a "$S"
  fi
  if want bench quant; then
    bench 'BM_GpuQuant' wick_bench_quant.json 200
    python3 bench/gpu_quant_report.py "$OUT/wick_bench_quant.json" | tee "$OUT/gpu_quant_report.md" | tee -a "$S"
    # the read ceiling of the mat-vec weights (one kernel, back to back; standalone CUDA)
    qc=$(mktemp)
    if command -v nvcc >/dev/null && nvcc -O3 -arch=sm_90 -o "$qc" bench/qmv_ceiling.cu >"$OUT/qmv_ceiling.log" 2>&1; then
      timeout 60 "$qc" >>"$OUT/qmv_ceiling.log" 2>&1 || rc=1
      grep -E "empty|read_words<1>|tiny" "$OUT/qmv_ceiling.log" | tee -a "$S"
    fi
    rm -f "$qc"
  fi
  if want bench && [ -x "$W" ]; then
    log "wick bench --device gpu:0"
    timeout 120 "$W" bench --device gpu:0 --min-time 0.05 >"$OUT/wick-bench-cli.log" 2>&1 || rc=1
    tail -15 "$OUT/wick-bench-cli.log" | tee -a "$S"
  fi
fi

# ---- the model runner ------------------------------------------------------------------
if want model; then
  D=${WICK_GPU_DATA:-$B/test-data}
  smol="$D/SmolLM2-135M-Instruct.Q4_1.gguf"
  log "model runner on gpu:0 (test data in $D)"
  gtest test_model 300
  gtest test_model_attention 120
  gtest test_model_tp 300
  gtest test_comm 60
  gtest test_model_smollm 300
  log "tiny models' logits on gpu:0 against the float64 NumPy reference"
  PYTHONUNBUFFERED=1 timeout 300 python3 tests/python/check_logits.py --wick "$W" --device gpu:0 \
    >"$OUT/check_logits_gpu.log" 2>&1 || rc=1
  tail -1 "$OUT/check_logits_gpu.log" | tee -a "$S"
  if [ -f "$smol" ]; then
    log "SmolLM2 on gpu:0 against Hugging Face transformers"
    PYTHONUNBUFFERED=1 timeout 300 python3 tests/python/hf_compare.py "$smol" --wick "$W" --device gpu:0 \
      --prompt "The capital of France is" >"$OUT/hf_compare.log" 2>&1 || rc=1
    tail -6 "$OUT/hf_compare.log" | tee -a "$S"
    log "wick generate / bench-model on gpu:0"
    timeout 120 "$W" generate "$smol" -p "The capital of France is" -n 32 --temp 0 -d gpu:0 \
      >"$OUT/generate_gpu.log" 2>&1 || rc=1
    tail -8 "$OUT/generate_gpu.log" | tee -a "$S"
    timeout 300 "$W" bench-model "$smol" -p 512 -n 128 -d gpu:0 >"$OUT/bench_model_smollm.log" 2>&1 || rc=1
    tail -6 "$OUT/bench_model_smollm.log" | tee -a "$S"
  else
    log "no $smol: SmolLM2 checks not run"
    rc=1
  fi
fi

# ---- the CPU beside PyTorch CPU -------------------------------------------------------
if want cpu; then
  T=${WICK_CPU_THREADS:-16}
  log "CPU benchmarks beside PyTorch CPU, $T threads each (bench/cpu_compare.py)"
  lscpu | grep -E "^Model name|^CPU\(s\)|^Flags" | cut -c1-400 >>"$S"
  PYTHONUNBUFFERED=1 timeout 540 python3 bench/cpu_compare.py --build "$B" --wick "$W" --threads "$T" ${WICK_CPU_CASES:+--cases "$WICK_CPU_CASES"} \
    --out-md "$OUT/cpu_compare.md" --out-json "$OUT/cpu_compare.json" >"$OUT/cpu_compare.log" 2>&1 || rc=1
  grep -E "^CPU:|^\||not met|failed" "$OUT/cpu_compare.log" | tee -a "$S"
fi

# ---- the Python package ----------------------------------------------------------------
if want python; then
  pkg="$B/python-package"
  log "Python package on gpu:0: pytest tests/python_api --device gpu:0 ($pkg)"
  if [ ! -f "$pkg/wick/__init__.py" ]; then
    log "no $pkg: build the target _wick with -DWICK_PYTHON=ON (Python 3.12) and carry it"
    rc=1
  elif ! python3 -c "import pytest, numpy" 2>/dev/null; then
    log "python3 cannot import pytest and numpy: Python tests not run"
    rc=1
  else
    D=${WICK_GPU_DATA:-$B/test-data}
    sel=(--test-data "$D")
    if [ ! -f "$D/SmolLM2-135M-Instruct.Q4_1.gguf" ]; then
      log "no SmolLM2 in $D: its tests left out (-m 'not smollm')"
      sel+=(-m "not smollm")
      rc=1
    fi
    PYTHONPATH="$pkg${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1 timeout 400 python3 -m pytest \
      -p no:cacheprovider -rfEs tests/python_api --device gpu:0 "${sel[@]}" >"$OUT/pytest-gpu.log" 2>&1 || rc=1
    grep -E "^wick .* from |^(FAILED|ERROR) |^SKIPPED|[0-9]+ (passed|failed)" "$OUT/pytest-gpu.log" | tail -40 |
      tee -a "$S"
  fi
fi

# ---- memcheck (last: the slowest part, and the one a time limit can best cut short) ----
if want test ops quant; then
  log "compute-sanitizer memcheck"
  if want test; then
    # GpuErrors.*, the impossible allocation and the capture that waits for the device
    # provoke failing runtime calls on purpose
    # (memcheck counts each as an error); GpuLarge.* takes minutes under the tool.
    memcheck test_gpu_backend 150 --gtest_filter='-GpuLarge.*:GpuAllocator.AnImpossible*:GpuErrors.*:Graphs.Waiting*:GpuDeferred.AFailedAllocation*'
    # The allocation that fails on purpose with deferred ops waiting: its failing runtime
    # calls not reported, any read of the memory it frees still is.
    MEMCHECK_OPTS="--report-api-errors no" MEMCHECK_LOG_SUFFIX="-failed-allocation" \
      memcheck test_gpu_backend 60 --gtest_filter='GpuDeferred.AFailedAllocation*'
    # the elementwise and fused families through their small parity cases (every op,
    # dtype and layout; test_gpu_elementwise repeats them at larger sizes)
    memcheck test_parity 200 --small-cases \
      --gtest_filter='*where_gpu_0*:*cast_gpu_0*:*reduce_gpu_0*:*nn_gpu_0*:*indexing_gpu_0*:*sort_gpu_0*'
  fi
  want test ops && memcheck test_gpu_ops 180
  want test quant && memcheck test_gpu_quant 150 --gtest_filter='*q4_0*:*q4_K*:*q6_K*:*q8_0*:*Row*:*Dtype*:*Hand*'
fi

log "done (rc $rc)"
exit $rc
