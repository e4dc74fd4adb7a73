#!/usr/bin/env bash
# Installs what the ROCm backend build (-DWICK_ROCM=ON) needs on Debian 12 / Ubuntu:
# hipcc (clang with HIP), the HIP runtime and headers, and the device bitcode
# libraries. No AMD GPU is needed to build; rocBLAS is not packaged by Debian. For
# targets Debian's hipcc 5.2 does not know (gfx942, gfx1100, gfx1151, ...) the clang
# toolchain also needs clang-19 lld-19 clang-tools-19 and the device libraries of
# scripts/fetch-rocm-device-libs.sh (README: Building for another AMD target).
set -euo pipefail
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends hipcc libamdhip64-dev rocm-device-libs
hipcc --version | head -3
