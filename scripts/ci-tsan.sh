#!/usr/bin/env bash
# The ThreadSanitizer run: the tests that drive wick's threads (the CPU backend's OpenMP
# loops, the block cache, the per-device RNG state, in-place ops) built with clang and
# -fsanitize=thread into build-tsan/, any report fatal. OpenMP is LLVM's runtime (libomp)
# with its Archer tool (libarcher.so, Debian's libomp-dev), which tells TSan about
# OpenMP's own synchronization, so a report is a race in wick's code. OpenBLAS runs one
# thread (its workers are not instrumented).
#   WICK_JOBS (default 2)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

jobs=${WICK_JOBS:-2}
cxx=${CXX_TSAN:-clang++}
major=$("$cxx" -dumpversion | cut -d. -f1)
archer=/usr/lib/llvm-$major/lib/libarcher.so
if [ ! -f "$archer" ]; then
  echo "ci-tsan: $archer not found (Debian: apt-get install libomp-dev)" >&2
  exit 1
fi
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi

# The tests whose code runs on several threads, and the parity cases (small sizes).
tests=(test_core test_elementwise test_reduce test_indexing test_sort test_matmul test_conv test_nn test_quant
       test_cpu_alloc test_aliasing test_sizes test_parity)

cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_CXX_FLAGS="-O1 -g -fsanitize=thread -fno-omit-frame-pointer" \
  -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread \
  -DWICK_BUILD_BENCH=OFF "${launcher[@]}"
cmake --build build-tsan -j "$jobs" --target "${tests[@]}"

# allocator_may_return_null: an impossible allocation fails as it does without the sanitizer
# (wick turns it into an OutOfMemory error, which tests check) instead of aborting.
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 ignore_noninstrumented_modules=1 second_deadlock_stack=1 allocator_may_return_null=1"
export OMP_TOOL_LIBRARIES=$archer ARCHER_OPTIONS=verbose=1
export OMP_NUM_THREADS=4 OPENBLAS_NUM_THREADS=1  # more threads than cores: more interleavings
status=0
for t in "${tests[@]}"; do
  args=()
  if [ "$t" = test_parity ]; then args=(--small-cases); fi
  log=build-tsan/$t.log
  start=$SECONDS
  if ./build-tsan/"$t" "${args[@]}" > "$log" 2>&1; then
    echo "== $t: passed ($((SECONDS - start)) s)"
  else
    echo "== $t: FAILED ($((SECONDS - start)) s); the end of $log:"
    tail -n 60 "$log"
    status=1
  fi
done
# Archer announces itself when the OpenMP runtime starts (every test above but the
# shape checks runs parallel loops).
if ! grep -q "Archer detected OpenMP application with TSan" build-tsan/test_elementwise.log; then
  echo "ci-tsan: Archer did not load ($archer): OpenMP's synchronization would read as races" >&2
  status=1
fi
exit $status
