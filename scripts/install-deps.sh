#!/usr/bin/env bash
# Installs what wick needs to build and test on Debian (12 or later), as root (CI
# runs as root; there is no sudo here). Idempotent: installed packages are skipped,
# and nothing runs when everything is present.
#   build + test:  build-essential cmake ninja-build ccache pkg-config libopenblas-dev
#                  libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev libfmt-dev
#                  nlohmann-json3-dev libpcre2-dev (the tokenizer's Unicode regexes)
#                  zlib1g-dev (the deflated entries of .npz archives)
#                  libdnnl-dev (oneDNN: the CPU backend's GEMM and convolutions)
#                  libhwy-dev libsleef-dev (the CPU backend's vector kernels: Highway's
#                  run-time target dispatch, SLEEF's vector math)
#                  python3-pip (also fetches the test models: scripts/fetch-test-data.sh)
#                  python3-venv python3-dev (the Python package's wheel, built in a
#                  virtual environment: scripts/python-test.sh)
#                  clang libclang-rt-dev (libFuzzer + ASan + TSan runtimes; clang only
#                  recommends them) libomp-dev (LLVM's OpenMP and its Archer tool, for
#                  the ThreadSanitizer run)
#   ROCm compile:  hipcc libamdhip64-dev rocm-device-libs (Debian's HIP), clang-19 lld-19
#                  clang-tools-19 (the clang toolchain for gfx942, gfx1100, gfx1151; its
#                  device libraries come from scripts/fetch-rocm-device-libs.sh). Optional:
#                  a release without them only loses the ROCm compile checks
#   python:        numpy gguf (the GGUF reference in tests/python)
set -euo pipefail

core=(build-essential cmake ninja-build ccache pkg-config libopenblas-dev libgtest-dev libgmock-dev libbenchmark-dev
      libcli11-dev libfmt-dev nlohmann-json3-dev libpcre2-dev zlib1g-dev libdnnl-dev libhwy-dev libsleef-dev
      python3-pip python3-venv python3-dev clang libclang-rt-dev libomp-dev)
rocm=(hipcc libamdhip64-dev rocm-device-libs clang-19 lld-19 clang-tools-19)

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing() { local p out=(); for p in "$@"; do installed "$p" || out+=("$p"); done; echo "${out[@]}"; }

# Without root or without a package registry (the GPU machine has neither), the
# missing packages are reported and the script goes on: the tools may be present
# outside dpkg, and CMake then names anything that is really missing.
can_install() {
  if [ "$(id -u)" != 0 ]; then
    echo "install-deps: missing $*; run this script as root to install them (continuing)" >&2
    return 1
  fi
}

read -r -a miss_core <<<"$(missing "${core[@]}")"
read -r -a miss_rocm <<<"$(missing "${rocm[@]}")"
if ((${#miss_core[@]} + ${#miss_rocm[@]})); then
  if can_install "${miss_core[@]}" "${miss_rocm[@]}"; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q || echo "install-deps: apt-get update failed (no registry?); continuing" >&2
    if ((${#miss_core[@]})); then
      apt-get install -y -q --no-install-recommends "${miss_core[@]}" ||
        echo "install-deps: could not install ${miss_core[*]}; continuing (the build will say what is missing)" >&2
    fi
    if ((${#miss_rocm[@]})); then
      # Not every Debian release or architecture carries HIP; its absence is not fatal.
      apt-get install -y -q --no-install-recommends "${miss_rocm[@]}" ||
        echo "install-deps: HIP packages (${miss_rocm[*]}) not installable here; the ROCm compile check will be skipped" >&2
    fi
  fi
else
  echo "install-deps: all Debian packages present"
fi

if ! python3 -c "import numpy, gguf" 2>/dev/null; then
  # Debian marks its Python as externally managed (PEP 668); these two are test-only.
  flags=()
  if python3 -m pip install --help 2>/dev/null | grep -q -- --break-system-packages; then
    flags+=(--break-system-packages)
  fi
  python3 -m pip install -q "${flags[@]}" numpy gguf ||
    echo "install-deps: pip could not install numpy/gguf; the Python oracle tests will report it" >&2
else
  echo "install-deps: numpy and gguf present"
fi
