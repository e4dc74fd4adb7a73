#!/usr/bin/env python3
"""Time the `wick` CLI's file commands against the number of keys and tensors in a file.

Parsing and printing must take time linear in the file: going from 10k to 160k items
(16x), each command's time must grow about 16x, not 256x. The files are generated here
(GGUF with N metadata keys, GGUF with N tensors, safetensors with N tensors), each
command runs once per size, and the table gives seconds and microseconds per item.

    bench/io_scaling.py BUILD/wick [--sizes 10000,40000,160000] [--json]
"""
import argparse
import json
import os
import resource
import struct
import subprocess
import sys
import tempfile
import time


def gguf_string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def gguf_keys(path, n):
    """A GGUF with n u32 metadata keys and no tensors."""
    out = [b"GGUF", struct.pack("<Iqq", 3, 0, n)]
    for i in range(n):
        out.append(gguf_string(f"key.{i:08d}") + struct.pack("<iI", 4, i))
    with open(path, "wb") as f:
        f.write(b"".join(out))


def gguf_tensors(path, n):
    """A GGUF with n f32 tensors of [1, 32] (each quantizable to q8_0)."""
    out = [b"GGUF", struct.pack("<Iqq", 3, n, 1), gguf_string("general.architecture"),
           struct.pack("<i", 8), gguf_string("llama")]
    for i in range(n):
        out.append(gguf_string(f"t.{i:08d}") + struct.pack("<Iqqi Q", 2, 32, 1, 0, i * 128))
    head = b"".join(out)
    head += b"\0" * (-len(head) % 32)
    with open(path, "wb") as f:
        f.write(head)
        f.write(struct.pack("<32f", *range(32)) * n)


def safetensors_tensors(path, n):
    """A safetensors file with n f32 tensors of [1, 32]."""
    header = {f"t.{i:08d}": {"dtype": "F32", "shape": [1, 32], "data_offsets": [i * 128, (i + 1) * 128]}
              for i in range(n)}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        f.write(struct.pack("<32f", *range(32)) * n)


GENERATORS = {"keys": gguf_keys, "tensors": gguf_tensors, "safetensors": safetensors_tensors}


def generate(kind, path, n):
    """Writes the file in a child process: a child forked from a process that grew large
    reports that process's peak as its own (ru_maxrss), so this one stays small."""
    subprocess.run([sys.executable, __file__, "--generate", kind, path, str(n)], check=True)


def run(cmd):
    """Seconds and peak RSS (MB) of one run; stdout discarded."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    secs = time.perf_counter() - t0
    if status != 0:
        sys.exit(f"failed ({status}): {' '.join(cmd)}\n{p.stderr.read().decode(errors='replace')}")
    return secs, ru.ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("wick")
    ap.add_argument("--sizes", default="10000,40000,160000")
    ap.add_argument("--json", action="store_true")
    if len(sys.argv) == 5 and sys.argv[1] == "--generate":
        GENERATORS[sys.argv[2]](sys.argv[3], int(sys.argv[4]))
        return
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for n in sizes:
            keys, tens, st = (os.path.join(d, f"{k}{n}") for k in ("keys.gguf", "tensors.gguf", "tensors.st"))
            generate("keys", keys, n)
            generate("tensors", tens, n)
            generate("safetensors", st, n)
            out = os.path.join(d, "out.gguf")
            cases = [
                ("gguf keys: inspect --json", keys, [a.wick, "inspect", "--json", keys]),
                ("gguf keys: inspect", keys, [a.wick, "inspect", keys]),
                ("gguf tensors: inspect --json", tens, [a.wick, "inspect", "--json", tens]),
                ("gguf tensors: quantize q8_0", tens, [a.wick, "quantize", tens, out, "--type", "q8_0"]),
                ("safetensors: inspect --json", st, [a.wick, "inspect", "--json", st]),
                ("safetensors: quantize q8_0", st, [a.wick, "quantize", st, out, "--type", "q8_0"]),
            ]
            for name, f, cmd in cases:
                secs, rss = run(cmd)
                rows.append({"case": name, "items": n, "file_mb": os.path.getsize(f) / 1e6, "seconds": secs,
                             "us_per_item": secs / n * 1e6, "peak_rss_mb": rss})
    if a.json:
        print(json.dumps(rows, indent=1))
        return
    print(f"{'case':32} {'items':>8} {'file MB':>8} {'s':>8} {'us/item':>8} {'RSS MB':>7}")
    for r in sorted(rows, key=lambda r: (r["case"], r["items"])):
        print(f"{r['case']:32} {r['items']:>8} {r['file_mb']:>8.2f} {r['seconds']:>8.3f} {r['us_per_item']:>8.2f} "
              f"{r['peak_rss_mb']:>7.0f}")
    lo, hi = min(sizes), max(sizes)
    print(f"\ntime ratio {hi} / {lo} items (linear: {hi / lo:.0f}):")
    for case in dict.fromkeys(r["case"] for r in rows):
        t = {r["items"]: r["seconds"] for r in rows if r["case"] == case}
        print(f"  {case:32} {t[hi] / t[lo]:6.1f}")


if __name__ == "__main__":
    main()
