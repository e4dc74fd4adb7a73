#!/usr/bin/env bash
# Builds the libFuzzer targets in tests/fuzz/ (clang, -fsanitize=fuzzer,address) and
# runs each for a bounded time. CI: scripts/fuzz.sh 60
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET=60] [BUILD_DIR=build-fuzz] [TARGET...]
#
# Exit status is non-zero if any target crashes, leaks, times out on an input or
# trips a sanitizer; the reproducer is left in BUILD_DIR/artifacts/.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-60}
build=${2:-$root/build-fuzz}
shift $(( $# > 2 ? 2 : $# )) || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=()
  for f in "$root"/tests/fuzz/fuzz_*.cpp; do targets+=("$(basename "$f" .cpp)"); done
fi

cxx=${CXX_FUZZ:-clang++}
jobs=${FUZZ_JOBS:-2}
cblas=$(dirname "$(find /usr/include -name cblas.h -path '*openblas*' | head -n1)")
flags=(-std=c++20 -O1 -g -w -fno-omit-frame-pointer -fopenmp -fsanitize=address,fuzzer-no-link
       -I"$root/include" -I"$root/src" -I"$cblas" -DWICK_BACKEND_DIR="\"$build\"")
mkdir -p "$build/obj" "$build/artifacts"

# The library, instrumented (objects are rebuilt only when their source is newer).
compile() {
  local src=$1 obj
  obj="$build/obj/$(echo "${src#"$root"/}" | tr / _).o"
  if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ]; then "$cxx" "${flags[@]}" -c "$src" -o "$obj"; fi
}
pids=()
for src in "$root"/src/core/*.cpp "$root"/src/backend/cpu/*.cpp "$root"/src/quant/*.cpp "$root"/src/io/*.cpp; do
  compile "$src" &
  pids+=($!)
  if [ ${#pids[@]} -ge "$jobs" ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p"; done
libs=(-lfmt -lopenblas -ldl)

# Seed corpora: tiny valid files of each format (plus the oracle's files when gguf-py is there).
seeds=$build/seeds
mkdir -p "$seeds/fuzz_gguf" "$seeds/fuzz_safetensors" "$seeds/fuzz_npy"
python3 - "$seeds" <<'PY' || echo "fuzz.sh: python3 seed generation failed; fuzzing from empty corpora"
import json, os, struct, sys
d = sys.argv[1]
def w(sub, name, b):
    open(os.path.join(d, sub, name), "wb").write(b)
def s(x):
    return struct.pack("<Q", len(x)) + x
g = b"GGUF" + struct.pack("<Iqq", 3, 1, 2)
g += s(b"general.architecture") + struct.pack("<i", 8) + s(b"llama")
g += s(b"general.alignment") + struct.pack("<iI", 4, 32)
g += s(b"w") + struct.pack("<Iqqiq", 2, 32, 2, 8, 0)
g += b"\0" * (-len(g) % 32) + b"\x00\x3c" + bytes(range(32)) + b"\x00\x38" + bytes(range(32, 64))
w("fuzz_gguf", "q8_0.gguf", g)
h = json.dumps({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                "__metadata__": {"k": "v"}}).encode()
w("fuzz_safetensors", "a.safetensors", struct.pack("<Q", len(h)) + h + struct.pack("<2f", 1.5, -2))
hd = b"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"
hd += b" " * (-(len(hd) + 11) % 64) + b"\n"
w("fuzz_npy", "a.npy", b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hd)) + hd + struct.pack("<2f", 1, 2))
try:
    import numpy as np
    p = os.path.join(d, "fuzz_npy", "a.npz")
    np.savez(p, x=np.arange(4, dtype=np.float32))
    np.savez_compressed(os.path.join(d, "fuzz_npy", "c.npz"), x=np.arange(64, dtype=np.float32), y=np.ones(9))
except ImportError:
    pass
PY

status=0
for t in "${targets[@]}"; do
  echo "== $t: building"
  "$cxx" "${flags[@]}" -fsanitize=fuzzer "$root/tests/fuzz/$t.cpp" "$build"/obj/*.o "${libs[@]}" -o "$build/$t"
  mkdir -p "$build/corpus/$t"
  echo "== $t: fuzzing for ${secs}s"
  if ! OMP_NUM_THREADS=1 "$build/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -artifact_prefix="$build/artifacts/$t-" "$build/corpus/$t" "$seeds/$t"; then
    echo "== $t: FAILED (see $build/artifacts/)"
    status=1
  fi
done
exit $status
