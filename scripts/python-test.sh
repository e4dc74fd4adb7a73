#!/usr/bin/env bash
# The Python package as a user gets it: a virtual environment (build-python/venv) with
# the build requirements and the test tools from PyPI, the wheel built from the repo
# (`pip wheel .`: scikit-build-core, nanobind), that wheel installed, then pytest
# tests/python_api against the installed package (CPU tensors; PyTorch's tests run when
# torch is importable). The build folder (build-python/<wheel tag>, pyproject.toml) is
# kept and compiles through ccache when it is on PATH, so a second run rebuilds only
# what changed.
#   scripts/python-test.sh [pytest args...]
#   WICK_PY: the interpreter (default python3; Debian: python3-venv, python3-dev)
#   WICK_TEST_DATA_DIR: the folder of scripts/fetch-test-data.sh (default: the tests
#     fetch into build-python/test-data)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

py=${WICK_PY:-python3}
venv=build-python/venv
dist=build-python/dist
t0=$SECONDS
step() { echo "== python: $* ($((SECONDS - t0)) s)"; }

step "virtual environment $venv ($($py --version))"
[ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
vpy=$PWD/$venv/bin/python
"$vpy" -m pip install -q --disable-pip-version-check "scikit-build-core>=0.10" "nanobind>=2.2" pytest numpy \
  ml_dtypes gguf

step "pip wheel . (build folder build-python/<wheel tag>)"
# ccache: the library's objects are those of scripts/test.sh's build when the flags agree:
# the same compiler name (CMake's default c++; scikit-build-core would take Python's g++, and
# ccache keys on the name) and warnings as errors, as there.
command -v ccache >/dev/null && export CMAKE_CXX_COMPILER_LAUNCHER=ccache
export CXX=${CXX:-c++} CMAKE_ARGS="${CMAKE_ARGS:-} -DWICK_WERROR=ON"
export CMAKE_BUILD_PARALLEL_LEVEL=${WICK_JOBS:-2}
rm -rf "$dist"
"$vpy" -m pip wheel -q --disable-pip-version-check --no-build-isolation --no-deps -w "$dist" .
wheel=$(ls "$dist"/wick-*.whl)
step "built $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB); installing it"
"$vpy" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$wheel"

step "pytest tests/python_api (wick from $(cd / && "$vpy" -c 'import os, wick; print(os.path.dirname(wick.__file__))'))"
data=()
[ -n "${WICK_TEST_DATA_DIR:-}" ] && data=(--test-data "$WICK_TEST_DATA_DIR")
# From the repo's root: `import wick` finds the installed package (the sources are in python/wick).
"$vpy" -m pytest -q -p no:cacheprovider tests/python_api "${data[@]}" "$@"
step "done"
