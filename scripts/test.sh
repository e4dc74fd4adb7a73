#!/usr/bin/env bash
# Builds and runs every test: the Release build (tests and benchmarks) under ctest,
# then wick used as a dependency (tests/consumer/run.sh: that build installed to a
# prefix, a program built against it through find_package, pkg-config and
# add_subdirectory), the Python package (scripts/python-test.sh: its wheel built and
# installed in a virtual environment, pytest tests/python_api), the sanitizer build
# (scripts/ci-sanitize.sh: ASan + UBSan, zero reports), the ThreadSanitizer run of the
# threaded tests (scripts/ci-tsan.sh), then compile-and-link checks of the GPU backends
# for each toolchain present, one target of each kind the sources branch on (wave64 and
# wave32, the sdot4 and sudot4 dot products): nvcc for sm_90 (WICK_CUDA=ON); hipcc 5.2
# (clang 15) for gfx90a; clang-19 for gfx1151 (libwick-rocm.so alone, with the
# device libraries of scripts/fetch-rocm-device-libs.sh). Every other target compiles the
# same sources; WICK_ROCM_ARCHS / WICK_CUDA_ARCHS pick them. No GPU is needed, none is used.
# Every build here but the sanitizers' is warning-free (-DWICK_WERROR=ON): with the same
# flags, ccache gives each later build the CPU library's objects of the first.
# Between them, the libFuzzer targets of the file parsers and the read-write-read round
# trip (scripts/fuzz.sh, clang) run for a bounded time each.
#   WICK_JOBS (default 2), WICK_SKIP_PYTHON=1, WICK_SKIP_SANITIZE=1, WICK_SKIP_TSAN=1,
#   WICK_SKIP_GPU_BUILDS=1, WICK_SKIP_FUZZ=1, WICK_FUZZ_SECONDS (per target, default 20)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh

jobs=${WICK_JOBS:-2}
# The flags every build but the sanitizers' shares (the CPU library's objects are then ccache's).
common=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DWICK_WERROR=ON)
if command -v ccache >/dev/null; then common+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
t0=$SECONDS
step() { echo "== $* ($((SECONDS - t0)) s)"; }

step "release build: tests and benchmarks"
cmake -S . -B build-test "${common[@]}" -DWICK_BUILD_TESTS=ON -DWICK_BUILD_BENCH=ON
cmake --build build-test -j "$jobs"
step "release ctest"
(cd build-test && ctest --output-on-failure -j 2)
step "wick as a dependency: install, find_package, pkg-config, add_subdirectory"
bash tests/consumer/run.sh build-test

if [ "${WICK_SKIP_PYTHON:-0}" != 1 ]; then
  step "Python package: wheel in a virtual environment, pytest"
  WICK_TEST_DATA_DIR="$PWD/build-test/test-data" WICK_JOBS="$jobs" bash scripts/python-test.sh
fi

if [ "${WICK_SKIP_SANITIZE:-0}" != 1 ]; then
  step "sanitizer build and ctest"
  bash scripts/ci-sanitize.sh
fi

if [ "${WICK_SKIP_TSAN:-0}" != 1 ]; then
  step "ThreadSanitizer build and the threaded tests"
  bash scripts/ci-tsan.sh
fi

if [ "${WICK_SKIP_FUZZ:-0}" != 1 ]; then
  step "libFuzzer targets (${WICK_FUZZ_SECONDS:-20} s each)"
  FUZZ_JOBS="$jobs" bash scripts/fuzz.sh "${WICK_FUZZ_SECONDS:-20}" "$PWD/build-fuzz"
fi

if [ "${WICK_SKIP_GPU_BUILDS:-0}" != 1 ]; then
  gpu_build() {  # name, build target ("all" for everything), cmake options...
    local name=$1 target=$2
    shift 2
    step "$name compile check ($*)"
    cmake -S . -B "build-$name" "${common[@]}" -DWICK_BUILD_TESTS=OFF -DWICK_BUILD_BENCH=OFF "$@"
    cmake --build "build-$name" -j "$jobs" --target "$target"
  }
  if command -v nvcc >/dev/null; then gpu_build cuda all -DWICK_CUDA=ON -DWICK_CUDA_ARCHS=90; else step "nvcc not on PATH: CUDA compile check skipped"; fi
  if command -v hipcc >/dev/null; then
    gpu_build rocm all -DWICK_ROCM=ON -DWICK_ROCM_TOOLCHAIN=hipcc -DWICK_ROCM_ARCHS=gfx90a
  else
    step "hipcc not found: ROCm (hipcc) compile check skipped"
  fi
  if command -v clang++-19 >/dev/null && [ -f /usr/include/hip/hip_runtime.h ]; then
    step "device libraries for clang-19 (Debian 13's rocm-device-libs-17)"
    libs=$(bash scripts/fetch-rocm-device-libs.sh "$PWD/build-rocm-clang/device-libs")
    gpu_build rocm-clang wick-rocm -DWICK_ROCM=ON -DWICK_ROCM_TOOLCHAIN=clang -DWICK_ROCM_CLANG=clang++-19 \
      -DWICK_ROCM_DEVICE_LIBS="$libs" -DWICK_ROCM_ARCHS=gfx1151
  else
    step "clang++-19 or the HIP headers not found: ROCm (clang) compile check skipped"
  fi
fi
step "all tests passed"
