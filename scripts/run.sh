#!/usr/bin/env bash
# The main job: builds the `wick` CLI (Release), then runs `wick check` (every op
# case on every device present) and `wick bench` on the best device present (the
# first GPU, else the CPU). A GPU backend is built when its toolchain and a GPU of
# that vendor are both present. Exit status: non-zero when the check or the bench
# fails (the bench still runs after a failed check).
#   WICK_BUILD_DIR (default build-run), WICK_JOBS (default: all cores),
#   WICK_CMAKE_ARGS (extra configure arguments)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh

build=${WICK_BUILD_DIR:-build-run}
jobs=${WICK_JOBS:-$(nproc)}
args=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DWICK_BUILD_TESTS=OFF -DWICK_BUILD_BENCH=OFF)
if command -v ccache >/dev/null; then args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
if command -v nvcc >/dev/null && nvidia-smi -L >/dev/null 2>&1; then args+=(-DWICK_CUDA=ON); fi
if command -v hipcc >/dev/null && [ -e /dev/kfd ]; then args+=(-DWICK_ROCM=ON); fi
# shellcheck disable=SC2206
args+=(${WICK_CMAKE_ARGS:-})

cmake -S . -B "$build" "${args[@]}"
cmake --build "$build" -j "$jobs" --target wick_cli

status=0
"$build/bin/wick" devices
"$build/bin/wick" check || status=$?
"$build/bin/wick" bench || status=$?
exit $status
