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
common=(-std=c++20 -w -fopenmp -I"$root/include" -I"$root/src" -I"$cblas" -DWICK_BACKEND_DIR="\"$build\"")
# What the targets feed bytes into (the file parsers and the quant blocks they
# dequantize) is instrumented for coverage and AddressSanitizer; the rest of the
# library (tensor core, CPU backend) is plain -O0: it only receives tensors the
# parsers built, and instrumenting its templates would cost minutes of CI per run.
fuzzed=(-O1 -g -fno-omit-frame-pointer -fsanitize=address,fuzzer-no-link)
plain=(-O0)
flags=("${common[@]}" "${fuzzed[@]}")
mkdir -p "$build/obj" "$build/artifacts"

# The library (objects are rebuilt only when their source, or how it is built, changed).
compile() {
  local src=$1 obj mode
  case "$src" in "$root"/src/io/* | "$root"/src/quant/*) mode=fuzzed ;; *) mode=plain ;; esac
  obj="$build/obj/$(echo "${src#"$root"/}" | tr / _).$mode.o"
  if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ]; then
    if [ $mode = fuzzed ]; then "$cxx" "${flags[@]}" -c "$src" -o "$obj"; else "$cxx" "${common[@]}" "${plain[@]}" -c "$src" -o "$obj"; fi
  fi
}
pids=()
for src in "$root"/src/base/*.cpp "$root"/src/backend/registry.cpp "$root"/src/backend/cpu/*.cpp "$root"/src/tensor/*.cpp "$root"/src/quant/*.cpp "$root"/src/io/*.cpp; do
  compile "$src" &
  pids+=($!)
  if [ ${#pids[@]} -ge "$jobs" ]; then wait "${pids[0]}" || exit 1; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p" || exit 1; done
libs=(-lfmt -lopenblas -ldnnl -lhwy -lsleef -lz -ldl)

# Seed corpora: tiny valid files of each format (plus the oracle's files when gguf-py is there);
# fuzz_roundtrip (read, write with every writer, read back) starts from all of them.
seeds=$build/seeds
mkdir -p "$seeds/fuzz_gguf" "$seeds/fuzz_safetensors" "$seeds/fuzz_npy" "$seeds/fuzz_roundtrip"
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
g = b"GGUF" + struct.pack("<Iqq", 3, 1, 3)
g += s(b"general.architecture") + struct.pack("<i", 8) + s(b"llama")
g += s(b"tokenizer.ggml.tokens") + struct.pack("<iiQ", 9, 8, 2) + s(b"a") + s(b"\xe2\x96\x81b")
g += s(b"k.u8") + struct.pack("<iiQ", 9, 0, 3) + bytes([1, 2, 3])
g += s(b"x") + struct.pack("<Iqiq", 1, 4, 0, 0)
g += b"\0" * (-len(g) % 32) + struct.pack("<4f", 1, -2, 0.5, 8)
w("fuzz_gguf", "f32.gguf", g)
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
cp "$seeds"/fuzz_gguf/* "$seeds"/fuzz_safetensors/* "$seeds"/fuzz_npy/* "$seeds/fuzz_roundtrip/" 2>/dev/null || true

status=0
for t in "${targets[@]}"; do
  echo "== $t: building"
  "$cxx" "${flags[@]}" -fsanitize=fuzzer "$root/tests/fuzz/$t.cpp" "$build"/obj/*.fuzzed.o "$build"/obj/*.plain.o "${libs[@]}" -o "$build/$t"
  mkdir -p "$build/corpus/$t"
  echo "== $t: fuzzing for ${secs}s"
  if ! OMP_NUM_THREADS=1 "$build/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -artifact_prefix="$build/artifacts/$t-" "$build/corpus/$t" "$seeds/$t"; then
    echo "== $t: FAILED (see $build/artifacts/)"
    status=1
  fi
done
exit $status
