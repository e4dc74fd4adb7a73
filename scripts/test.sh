#!/usr/bin/env bash
# Builds and runs every test: the Release build (tests and benchmarks) under ctest,
# then wick used as a dependency (tests/consumer/run.sh: that build installed to a
# prefix, a program built against it through find_package, pkg-config and
# add_subdirectory), then the sanitizer build (scripts/ci-sanitize.sh: ASan + UBSan,
# zero reports), the ThreadSanitizer run of the threaded tests (scripts/ci-tsan.sh:
# clang, LLVM's OpenMP with Archer), then compile-and-link checks of the GPU backends
# for each toolchain present (nvcc: WICK_CUDA=ON, hipcc: WICK_ROCM=ON; no GPU is
# needed, none is used). Between them, the libFuzzer targets of the file parsers and the
# read-write-read round trip (scripts/fuzz.sh, clang) run for a bounded time each.
#   WICK_JOBS (default 2), WICK_SKIP_SANITIZE=1, WICK_SKIP_TSAN=1, WICK_SKIP_GPU_BUILDS=1,
#   WICK_SKIP_FUZZ=1, WICK_FUZZ_SECONDS (per target, default 45)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh

jobs=${WICK_JOBS:-2}
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
t0=$SECONDS
step() { echo "== $* ($((SECONDS - t0)) s)"; }

step "release build: tests and benchmarks"
cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=Release -DWICK_BUILD_TESTS=ON -DWICK_BUILD_BENCH=ON "${launcher[@]}"
cmake --build build-test -j "$jobs"
step "release ctest"
(cd build-test && ctest --output-on-failure -j 2)
step "wick as a dependency: install, find_package, pkg-config, add_subdirectory"
bash tests/consumer/run.sh build-test

if [ "${WICK_SKIP_SANITIZE:-0}" != 1 ]; then
  step "sanitizer build and ctest"
  bash scripts/ci-sanitize.sh
fi

if [ "${WICK_SKIP_TSAN:-0}" != 1 ]; then
  step "ThreadSanitizer build and the threaded tests"
  bash scripts/ci-tsan.sh
fi

if [ "${WICK_SKIP_FUZZ:-0}" != 1 ]; then
  step "libFuzzer targets (${WICK_FUZZ_SECONDS:-45} s each)"
  FUZZ_JOBS="$jobs" bash scripts/fuzz.sh "${WICK_FUZZ_SECONDS:-45}" "$PWD/build-fuzz"
fi

if [ "${WICK_SKIP_GPU_BUILDS:-0}" != 1 ]; then
  gpu_build() {  # name, cmake option
    step "$1 compile check ($2)"
    cmake -S . -B "build-$1" -G Ninja -DCMAKE_BUILD_TYPE=Release -D"$2"=ON -DWICK_BUILD_TESTS=OFF \
      -DWICK_BUILD_BENCH=OFF "${launcher[@]}"
    cmake --build "build-$1" -j "$jobs"
  }
  if command -v nvcc >/dev/null; then gpu_build cuda WICK_CUDA; else step "nvcc not on PATH: CUDA compile check skipped"; fi
  if command -v hipcc >/dev/null; then gpu_build rocm WICK_ROCM; else step "hipcc not found: ROCm compile check skipped"; fi
fi
step "all tests passed"
