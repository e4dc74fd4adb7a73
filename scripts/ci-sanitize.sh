#!/usr/bin/env bash
# The sanitizer run: the `asan` preset (Debug, asserts on, the library at -O1;
# AddressSanitizer + UndefinedBehaviorSanitizer, build-asan/) and ctest with any report
# fatal, leaks included (the parity suite runs its small cases only: the build passes it
# --small-cases).
#   WICK_JOBS (default 2)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

jobs=${WICK_JOBS:-2}
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi

cmake --preset asan "${launcher[@]}"
cmake --build --preset asan -j "$jobs"

# allocator_may_return_null: an impossible allocation fails as it does without the sanitizer
# (wick turns it into an OutOfMemory error, which tests check) instead of aborting.
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=0:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
cd build-asan
ctest --output-on-failure -j 2
