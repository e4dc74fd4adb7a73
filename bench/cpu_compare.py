#!/usr/bin/env python3
"""wick's CPU benchmarks beside PyTorch CPU on the same cores, in one call.

For each case of CASES (one line each: the table's name, the wick_bench case of
bench/cpu_ops.cpp, the PyTorch expression), runs that wick_bench case, then PyTorch
on the same shapes and dtypes, back to back; then every case of `wick bench --device
cpu` that has a PyTorch equivalent in CLI_CASES. Each side runs --rounds times,
alternating (wick, PyTorch, wick, ...; for the CLI, a whole `wick bench` pass, then
PyTorch on its cases), and each side's figure is the median of its rounds: one
machine's state drifts over a run by more than the gaps being judged. Both sides run on the same number of
threads: WICK_NUM_THREADS for wick (its thread pool, oneDNN and OpenBLAS), and
torch.set_num_threads for PyTorch. Prints a Markdown table (case, wick ms, PyTorch
ms, wick / PyTorch time, met: wick at least as fast) and writes it with a JSON record.

The quantized mat-vec has no PyTorch peer: its row gives the GB/s of weights read
and the share of `add`'s GB/s in the same run (BM_CpuAdd/f32: bytes read + written),
met at >= 70%.

usage: cpu_compare.py --build BUILD [--wick WICK] [--threads N] [--cases REGEX] [--no-cli]
                      [--out-md FILE] [--out-json FILE] [--min-time S] [--rounds R]
"""
import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

DT = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
N26 = 1 << 26
SQ8K = (8192, 8192)
SQ4K = (4096, 4096)
QMV_TARGET = 0.70  # quantized mat-vec: share of add's GB/s to reach


class Inputs:
    """The PyTorch side's inputs, made once per (kind, shape, dtype, seed)."""

    def __init__(self):
        self.cache = {}

    def _get(self, key, make):
        if key not in self.cache:
            self.cache[key] = make()
        return self.cache[key]

    def randn(self, *shape, dt="f32", seed=1):
        def make():
            g = torch.Generator().manual_seed(seed)
            return torch.randn(*shape, generator=g).to(DT[dt])

        return self._get(("randn", shape, dt, seed), make)

    def cond(self, *shape):  # a bool mask (1 byte per element, as wick's u8 condition)
        return self._get(("cond", shape), lambda: self.randn(*shape, seed=1) > self.randn(*shape, seed=2))

    def ids(self, n, hi):  # the index pattern of bench/cpu_ops.cpp
        return self._get(("ids", n, hi), lambda: torch.tensor([(i * 2654435761) % hi for i in range(n)]))

    def rotating(self, *shape, dt="f32", seed=2):
        """The next of the copies of one randn matrix that together span at least 256 MB, one
        per call: bench/bench_util.h's copies_for, so that PyTorch reads its mat-vec matrix
        from DRAM as wick_bench's BM_CpuMatVec does, not partly from a large L3."""
        def make():
            w = self.randn(*shape, dt=dt, seed=seed)
            n = int(256e6 / (w.numel() * w.element_size())) + 1
            return {"ws": [w] + [w.clone() for _ in range(n - 1)], "next": 0}

        r = self._get(("rotating", shape, dt, seed), make)
        w = r["ws"][r["next"] % len(r["ws"])]
        r["next"] += 1
        return w

    def scalar(self, v):
        return self._get(("scalar", v), lambda: torch.tensor(v))

    def clear(self):
        self.cache.clear()


def rms(x, a):
    return F.rms_norm(x, (x.shape[-1],), a, 1e-5)


# (name, wick_bench case, PyTorch expression on the inputs `t`, or None: no peer)
CASES = [
    ("copy f32 2^26", "BM_CpuCopy/f32", lambda t: t.randn(N26).clone()),
    ("transposed copy f32 [4096,4096]", "BM_CpuCopyTransposed/f32", lambda t: t.randn(*SQ4K).t().contiguous()),
    ("affine f32 [4096,4096]", "BM_CpuAffine/f32",
     lambda t: torch.add(t.scalar(-2.25), t.randn(*SQ4K), alpha=1.5)),
    ("exp f32 2^26", "BM_CpuExp/f32", lambda t: torch.exp(t.randn(N26))),
    ("exp bf16 2^26", "BM_CpuExp/bf16", lambda t: torch.exp(t.randn(N26, dt="bf16"))),
    ("exp f16 2^26", "BM_CpuExp/f16", lambda t: torch.exp(t.randn(N26, dt="f16"))),
    ("silu f32 2^26", "BM_CpuSilu/f32", lambda t: F.silu(t.randn(N26))),
    ("silu bf16 2^26", "BM_CpuSilu/bf16", lambda t: F.silu(t.randn(N26, dt="bf16"))),
    ("silu f16 2^26", "BM_CpuSilu/f16", lambda t: F.silu(t.randn(N26, dt="f16"))),
    ("add f32 [4096,4096]", "BM_CpuAdd/f32", lambda t: t.randn(*SQ4K, seed=1) + t.randn(*SQ4K, seed=2)),
    ("add bf16 [4096,4096]", "BM_CpuAdd/bf16",
     lambda t: t.randn(*SQ4K, dt="bf16", seed=1) + t.randn(*SQ4K, dt="bf16", seed=2)),
    ("broadcast add f32 [4096,4096] + [4096]", "BM_CpuBroadcastAdd/f32",
     lambda t: t.randn(*SQ4K, seed=1) + t.randn(4096, seed=2)),
    ("where f32 [4096,4096]", "BM_CpuWhere/f32",
     lambda t: torch.where(t.cond(*SQ4K), t.randn(*SQ4K, seed=1), t.randn(*SQ4K, seed=2))),
    ("cast f32->f16 [8192,8192]", "BM_CpuCast/f32_f16", lambda t: t.randn(*SQ8K).to(torch.float16)),
    ("cast f16->f32 [8192,8192]", "BM_CpuCast/f16_f32", lambda t: t.randn(*SQ8K, dt="f16").to(torch.float32)),
    ("cast f32->bf16 [8192,8192]", "BM_CpuCast/f32_bf16", lambda t: t.randn(*SQ8K).to(torch.bfloat16)),
    ("cast bf16->f32 [8192,8192]", "BM_CpuCast/bf16_f32", lambda t: t.randn(*SQ8K, dt="bf16").to(torch.float32)),
    ("sum last dim f32 [8192,8192]", "BM_CpuSum/f32", lambda t: t.randn(*SQ8K).sum(-1)),
    ("sum last dim bf16 [8192,8192]", "BM_CpuSum/bf16", lambda t: t.randn(*SQ8K, dt="bf16").sum(-1)),
    ("sum last dim f16 [8192,8192]", "BM_CpuSum/f16", lambda t: t.randn(*SQ8K, dt="f16").sum(-1)),
    ("sum first dim f32 [8192,8192]", "BM_CpuSumFirstDim/f32", lambda t: t.randn(*SQ8K).sum(0)),
    ("max last dim f32 [2048,4096]", "BM_CpuMax/f32", lambda t: t.randn(2048, 4096).amax(-1)),
    ("max last dim bf16 [2048,4096]", "BM_CpuMax/bf16", lambda t: t.randn(2048, 4096, dt="bf16").amax(-1)),
    ("max last dim f16 [2048,4096]", "BM_CpuMax/f16", lambda t: t.randn(2048, 4096, dt="f16").amax(-1)),
    ("argmax last dim f32 [2048,4096]", "BM_CpuArgmax/f32", lambda t: t.randn(2048, 4096).argmax(-1)),
    ("argmax last dim bf16 [2048,4096]", "BM_CpuArgmax/bf16",
     lambda t: t.randn(2048, 4096, dt="bf16").argmax(-1)),
    ("argmax last dim f16 [2048,4096]", "BM_CpuArgmax/f16", lambda t: t.randn(2048, 4096, dt="f16").argmax(-1)),
    ("cumsum last dim f32 [4096,4096]", "BM_CpuCumsum/f32", lambda t: t.randn(*SQ4K).cumsum(-1)),
    ("softmax last dim f32 [8192,8192]", "BM_CpuSoftmax/f32", lambda t: torch.softmax(t.randn(*SQ8K), -1)),
    ("softmax last dim bf16 [8192,8192]", "BM_CpuSoftmax/bf16",
     lambda t: torch.softmax(t.randn(*SQ8K, dt="bf16"), -1)),
    ("rms_norm f32 [4096,4096]", "BM_CpuRmsNorm/f32", lambda t: rms(t.randn(*SQ4K), t.randn(4096, seed=3))),
    ("rms_norm bf16 [4096,4096]", "BM_CpuRmsNorm/bf16",
     lambda t: rms(t.randn(*SQ4K, dt="bf16"), t.randn(4096, dt="bf16", seed=3))),
    ("layer_norm f32 [4096,4096]", "BM_CpuLayerNorm/f32",
     lambda t: F.layer_norm(t.randn(*SQ4K), (4096,), t.randn(4096, seed=3), t.randn(4096, seed=4), 1e-5)),
    ("index_select 4096 rows of [16384,1024] f32", "BM_CpuIndexSelect/f32",
     lambda t: t.randn(16384, 1024).index_select(0, t.ids(4096, 16384))),
    ("index_select 4096 rows of [16384,1024] f16", "BM_CpuIndexSelect/f16",
     lambda t: t.randn(16384, 1024, dt="f16").index_select(0, t.ids(4096, 16384))),
    ("argsort f32 [1024,4096], stable", "BM_CpuArgsort/f32",
     lambda t: torch.argsort(t.randn(1024, 4096), dim=-1, stable=True)),
    ("matmul 2048^3 f32", "BM_CpuMatmul/f32", lambda t: t.randn(2048, 2048, seed=1) @ t.randn(2048, 2048, seed=2)),
    ("matmul 2048^3 bf16", "BM_CpuMatmul/bf16",
     lambda t: t.randn(2048, 2048, dt="bf16", seed=1) @ t.randn(2048, 2048, dt="bf16", seed=2)),
    ("matmul 2048^3 f16", "BM_CpuMatmul/f16",
     lambda t: t.randn(2048, 2048, dt="f16", seed=1) @ t.randn(2048, 2048, dt="f16", seed=2)),
    ("linear [512,4096] x [4096,4096]^T f32", "BM_CpuLinear/f32",
     lambda t: F.linear(t.randn(512, 4096, seed=1), t.randn(4096, 4096, seed=2))),
    ("linear [512,4096] x [4096,4096]^T bf16", "BM_CpuLinear/bf16",
     lambda t: F.linear(t.randn(512, 4096, dt="bf16", seed=1), t.randn(4096, 4096, dt="bf16", seed=2))),
    ("linear [512,4096] x [4096,4096]^T f16", "BM_CpuLinear/f16",
     lambda t: F.linear(t.randn(512, 4096, dt="f16", seed=1), t.randn(4096, 4096, dt="f16", seed=2))),
    ("matmul batched 32x[128,64]x[64,128] f32", "BM_CpuMatmulBatched/f32",
     lambda t: t.randn(32, 128, 64, seed=1) @ t.randn(32, 64, 128, seed=2)),
    ("matvec [14336x4096] f32", "BM_CpuMatVec/f32",
     lambda t: F.linear(t.randn(1, 4096, seed=1), t.rotating(14336, 4096))),
    ("matvec [14336x4096] bf16", "BM_CpuMatVec/bf16",
     lambda t: F.linear(t.randn(1, 4096, dt="bf16", seed=1), t.rotating(14336, 4096, dt="bf16"))),
    ("matvec [14336x4096] f16", "BM_CpuMatVec/f16",
     lambda t: F.linear(t.randn(1, 4096, dt="f16", seed=1), t.rotating(14336, 4096, dt="f16"))),
    ("conv2d 8x64x64x64, k 128x64x3x3, pad 1, f32", "BM_CpuConv2d/f32",
     lambda t: F.conv2d(t.randn(8, 64, 64, 64, seed=1), t.randn(128, 64, 3, 3, seed=2), padding=1)),
    ("quantized mat-vec q4_0 [14336x4096], f32 x", "BM_CpuQMatVec/q4_0", None),
    ("quantized mat-vec q4_K [14336x4096], f32 x", "BM_CpuQMatVec/q4_K", None),
    ("quantized mat-vec q6_K [14336x4096], f32 x", "BM_CpuQMatVec/q6_K", None),
    ("quantized mat-vec q8_0 [14336x4096], f32 x", "BM_CpuQMatVec/q8_0", None),
]

# `wick bench --device cpu` cases (family, case) -> PyTorch expression on the same inputs'
# shapes and dtypes; a case not listed is reported without a peer.
CLI_CASES = {
    ("copy", "contiguous f32 contiguous [2048,2048]"): lambda t: t.randn(2048, 2048).clone(),
    ("copy", "contiguous f32 transposed [2048,2048]"): lambda t: t.randn(2048, 2048).t().contiguous(),
    ("copy", "full f32 [2048,2048] with 1.5"): lambda t: torch.full((2048, 2048), 1.5),
    ("affine", "affine(1.5,-2.25) f32 contiguous [4096,4096]"):
        lambda t: torch.add(t.scalar(-2.25), t.randn(*SQ4K), alpha=1.5),
    ("unary", "exp f32 contiguous [4096,4096]"): lambda t: torch.exp(t.randn(*SQ4K)),
    ("binary", "add f32 contiguous [4096,4096]"): lambda t: t.randn(*SQ4K, seed=1) + t.randn(*SQ4K, seed=2),
    ("binary", "add bf16 contiguous [4096,4096]"):
        lambda t: t.randn(*SQ4K, dt="bf16", seed=1) + t.randn(*SQ4K, dt="bf16", seed=2),
    ("where", "where cond u8 f32 contiguous [4096,4096]"):
        lambda t: torch.where(t.cond(*SQ4K), t.randn(*SQ4K, seed=1), t.randn(*SQ4K, seed=2)),
    ("cast", "cast f32->f16 f32 contiguous [4096,4096]"): lambda t: t.randn(*SQ4K).to(torch.float16),
    ("cast", "cast f16->f32 f16 contiguous [4096,4096]"): lambda t: t.randn(*SQ4K, dt="f16").to(torch.float32),
    ("cast", "cast f32->bf16 f32 contiguous [4096,4096]"): lambda t: t.randn(*SQ4K).to(torch.bfloat16),
    ("indexing", "index_select f32 contiguous [16384,1024] dim 0 ids u32 contiguous"):
        lambda t: t.randn(16384, 1024).index_select(0, t.ids(4096, 16384)),
    ("indexing", "index_select f16 contiguous [16384,1024] dim 0 ids u32 contiguous"):
        lambda t: t.randn(16384, 1024, dt="f16").index_select(0, t.ids(4096, 16384)),
    ("matmul", "matmul f32 contiguous [1024,1024]x[1024,1024]"):
        lambda t: t.randn(1024, 1024, seed=1) @ t.randn(1024, 1024, seed=2),
    ("matmul", "matmul f16 contiguous [1024,1024]x[1024,1024]"):
        lambda t: t.randn(1024, 1024, dt="f16", seed=1) @ t.randn(1024, 1024, dt="f16", seed=2),
    ("matmul", "matmul bf16 contiguous [1024,1024]x[1024,1024]"):
        lambda t: t.randn(1024, 1024, dt="bf16", seed=1) @ t.randn(1024, 1024, dt="bf16", seed=2),
    ("matmul", "matmul f32 contiguous [32,128,64]x[32,64,128]"):
        lambda t: t.randn(32, 128, 64, seed=1) @ t.randn(32, 64, 128, seed=2),
    ("conv", "conv2d f32 contiguous x [4,64,56,56] k [64,64,3,3] pad 1 stride 1 dil 1 groups 1 out_pad 0"):
        lambda t: F.conv2d(t.randn(4, 64, 56, 56, seed=1), t.randn(64, 64, 3, 3, seed=2), padding=1),
    ("conv", "conv2d f16 contiguous x [4,64,56,56] k [64,64,3,3] pad 1 stride 1 dil 1 groups 1 out_pad 0"):
        lambda t: F.conv2d(t.randn(4, 64, 56, 56, dt="f16", seed=1), t.randn(64, 64, 3, 3, dt="f16", seed=2),
                           padding=1),
    ("nn", "softmax_last_dim f32 contiguous [4096,4096]"): lambda t: torch.softmax(t.randn(*SQ4K), -1),
    ("nn", "softmax_last_dim bf16 contiguous [4096,4096]"): lambda t: torch.softmax(t.randn(*SQ4K, dt="bf16"), -1),
    ("nn", "rms_norm f32 contiguous [4096,4096] alpha"): lambda t: rms(t.randn(*SQ4K), t.randn(4096, seed=3)),
    ("nn", "rms_norm bf16 contiguous [4096,4096] alpha"):
        lambda t: rms(t.randn(*SQ4K, dt="bf16"), t.randn(4096, dt="bf16", seed=3)),
    ("nn", "layer_norm f32 contiguous [4096,4096] alpha beta"):
        lambda t: F.layer_norm(t.randn(*SQ4K), (4096,), t.randn(4096, seed=3), t.randn(4096, seed=4), 1e-5),
    ("reduce", "sum f32 contiguous [8388608] dims 0"): lambda t: t.randn(8388608).sum(0),
    ("reduce", "sum f32 contiguous [4096,2048] dims 0"): lambda t: t.randn(4096, 2048).sum(0),
    ("sort", "argsort asc f32 contiguous [1024,4096]"):
        lambda t: torch.argsort(t.randn(1024, 4096), dim=-1, stable=True),
    ("sort", "argsort asc bf16 contiguous [1024,4096]"):
        lambda t: torch.argsort(t.randn(1024, 4096, dt="bf16"), dim=-1, stable=True),
}
for _dt in ("f32", "f16", "bf16"):
    for _op, _fn in (("sum", lambda x: x.sum(-1)), ("max", lambda x: x.amax(-1)), ("argmax", lambda x: x.argmax(-1))):
        CLI_CASES[("reduce", f"{_op} {_dt} contiguous [2048,4096] dims -1")] = (
            lambda t, dt=_dt, fn=_fn: fn(t.randn(2048, 4096, dt=dt)))


def time_torch(fn, min_time, trials=5):
    """Median seconds per call over `trials` batches (at least min_time in all), after a warm-up."""
    fn()
    t0 = time.perf_counter()
    fn()
    once = max(time.perf_counter() - t0, 1e-7)
    repeat = max(1, int(min_time / trials / once))
    times = []
    for _ in range(trials):
        t0 = time.perf_counter()
        for _ in range(repeat):
            fn()
        times.append((time.perf_counter() - t0) / repeat)
    return statistics.median(times)


def run_wick_bench(exe, case, env, min_time, reps):
    """Median seconds per call of one wick_bench case (None and the reason if it failed)."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        cmd = [exe, f"--benchmark_filter=^{re.escape(case)}(/real_time)?$", f"--benchmark_min_time={min_time}",
               f"--benchmark_repetitions={reps}", "--benchmark_report_aggregates_only=true",
               f"--benchmark_out={out.name}", "--benchmark_out_format=json"]
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
        try:
            with open(out.name) as f:
                data = json.load(f)
        except (OSError, ValueError):
            return None, f"wick_bench exit {p.returncode}: {p.stderr.strip()[-200:]}"
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    runs, medians = [], []
    for b in data.get("benchmarks", []):
        if b.get("error_occurred"):
            return None, b.get("error_message", "error")
        t = b["real_time"] * scale[b.get("time_unit", "ns")]
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                medians.append(t)
        else:
            runs.append(t)
    if medians or runs:
        return (medians or [statistics.median(runs)])[0], ""
    return None, "no such case in wick_bench"


def ms(s):
    return f"{s * 1e3:.3f}" if s else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="folder holding wick_bench and wick (or bin/wick)")
    ap.add_argument("--wick", help="the wick CLI (default: BUILD/wick, else BUILD/bin/wick)")
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--cases", default="", help="regex: only the cases whose name or wick_bench case matches")
    ap.add_argument("--no-cli", action="store_true", help="leave out `wick bench --device cpu`")
    ap.add_argument("--min-time", type=float, default=0.2, help="seconds of timed calls per case and side")
    ap.add_argument("--reps", type=int, default=1, help="wick_bench repetitions a round (their median)")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds of each side (their median)")
    ap.add_argument("--out-md")
    ap.add_argument("--out-json")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    env = dict(os.environ, WICK_NUM_THREADS=str(args.threads))
    exe = os.path.join(args.build, "wick_bench")
    cli_exe = args.wick or next((p for p in (os.path.join(args.build, "wick"), os.path.join(args.build, "bin", "wick"))
                                 if os.path.isfile(p) and os.access(p, os.X_OK)), os.path.join(args.build, "bin", "wick"))
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    head = (f"CPU: {cpu}, {len(os.sched_getaffinity(0))} cores usable; {args.threads} threads on both sides; "
            f"torch {torch.__version__} ({torch.backends.cpu.get_cpu_capability()})")
    lines = [head, "", "| case | wick ms | PyTorch ms | wick / PyTorch | met |", "| --- | ---: | ---: | ---: | --- |"]
    print("\n".join(lines), flush=True)
    record = {"cpu": cpu, "threads": args.threads, "torch": torch.__version__, "rows": [], "cli_rows": []}

    def emit(row, text):
        lines.append(text)
        print(text, flush=True)

    t_in = Inputs()
    quant = []
    add_bw = None
    for name, case, torch_fn in CASES:
        if args.cases and not (re.search(args.cases, name) or re.search(args.cases, case)):
            continue
        ws, ts, err = [], [], ""
        row = {"case": name, "wick_bench": case}
        for _ in range(args.rounds):
            w, e = run_wick_bench(exe, case, env, args.min_time, args.reps)
            if w:
                ws.append(w)
            err = err or e
            if torch_fn is not None and "torch_error" not in row:
                try:
                    ts.append(time_torch(lambda: torch_fn(t_in), args.min_time))
                except Exception as e:  # one failing PyTorch call must not lose the other rows
                    row["torch_error"] = f"{type(e).__name__}: {e}"
        t_in.clear()
        w = statistics.median(ws) if ws else None
        row.update({"wick_s": w, "torch_s": statistics.median(ts) if ts else None, "ratio": None, "met": None,
                    "wick_rounds_s": ws, "torch_rounds_s": ts})
        if err:
            row["error"] = err
        if case == "BM_CpuAdd/f32" and w:
            add_bw = 3 * 4 * SQ4K[0] * SQ4K[1] / w
        if torch_fn is None:
            quant.append(row)
            record["rows"].append(row)
            continue
        if w and row["torch_s"]:
            row["ratio"] = w / row["torch_s"]
            row["met"] = row["ratio"] <= 1.0
        met = {True: "yes", False: "NO", None: err or row.get("torch_error", "-")}[row["met"]]
        ratio = f"{row['ratio']:.2f}" if row["ratio"] else "-"
        emit(row, f"| {name} | {ms(w)} | {ms(row['torch_s'])} | {ratio} | {met} |")
        record["rows"].append(row)

    if quant:
        emit(None, "")
        emit(None, f"Quantized mat-vec, weight bytes read per second against add f32 [4096,4096] "
                   f"({add_bw / 1e9:.1f} GB/s, read + write, same run); target >= {QMV_TARGET:.0%}"
             if add_bw else "Quantized mat-vec (add f32 not run: no bandwidth reference)")
        emit(None, "")
        emit(None, "| case | wick ms | GB/s of weights | share of add | met |")
        emit(None, "| --- | ---: | ---: | ---: | --- |")
        for row in quant:
            qt = row["wick_bench"].split("/")[1]
            bpw = {"q4_0": 18 / 32, "q4_K": 144 / 256, "q6_K": 210 / 256, "q8_0": 34 / 32}[qt]
            w = row["wick_s"]
            gbs = 14336 * 4096 * bpw / w if w else None
            row["weights_gbs"] = gbs / 1e9 if gbs else None
            share = gbs / add_bw if gbs and add_bw else None
            row["share_of_add"] = share
            row["met"] = share >= QMV_TARGET if share else None
            met = {True: "yes", False: "NO", None: row.get("error", "-")}[row["met"]]
            emit(row, f"| {row['case']} | {ms(w)} | {gbs / 1e9:.1f} | {share:.0%} | {met} |" if share else
                 f"| {row['case']} | {ms(w)} | - | - | {met} |")

    if not args.no_cli:
        emit(None, "")
        emit(None, "`wick bench --device cpu` (its median per case) beside PyTorch")
        emit(None, "")
        emit(None, "| family | case | wick ms | PyTorch ms | wick / PyTorch | met |")
        emit(None, "| --- | --- | ---: | ---: | ---: | --- |")
        # Rounds: a whole `wick bench` pass, then PyTorch on the cases it ran.
        order, runs, peer, notes = [], {}, {}, {}
        for _ in range(args.rounds):
            p = subprocess.run([cli_exe, "bench", "--device", "cpu", "--json", "--min-time",
                                str(args.min_time)], env=env, capture_output=True, text=True)
            try:
                cli = json.loads(p.stdout)["results"]
            except ValueError:
                emit(None, f"wick bench failed (exit {p.returncode}): {p.stderr.strip()[-300:]}")
                break
            for r in cli:
                key = (r["family"], r["case"])
                if args.cases and not re.search(args.cases, r["case"]):
                    continue
                if key not in runs:
                    order.append(key)
                    runs[key], peer[key] = [], []
                    notes[key] = r.get("error", "no PyTorch peer listed")
                if "median_us" in r:
                    runs[key].append(r["median_us"] * 1e-6)
                fn = CLI_CASES.get(key)
                if fn and not notes[key].startswith("PyTorch:"):
                    try:
                        peer[key].append(time_torch(lambda: fn(t_in), args.min_time))
                    except Exception as e:
                        notes[key] = f"PyTorch: {type(e).__name__}"
                    t_in.clear()
        for key in order:
            w = statistics.median(runs[key]) if runs[key] else None
            row = {"family": key[0], "case": key[1], "wick_s": w,
                   "torch_s": statistics.median(peer[key]) if peer[key] else None, "ratio": None, "met": None,
                   "wick_rounds_s": runs[key], "torch_rounds_s": peer[key]}
            note = notes[key]
            if w and row["torch_s"]:
                row["ratio"] = w / row["torch_s"]
                row["met"] = row["ratio"] <= 1.0
            met = {True: "yes", False: "NO", None: note}[row["met"]]
            ratio = f"{row['ratio']:.2f}" if row["ratio"] else "-"
            emit(row, f"| {key[0]} | {key[1]} | {ms(w)} | {ms(row['torch_s'])} | {ratio} | {met} |")
            record["cli_rows"].append(row)

    missed = [r["case"] for r in record["rows"] + record["cli_rows"] if r["met"] is False]
    emit(None, "")
    emit(None, f"{len(missed)} case(s) not met" + (": " + "; ".join(missed) if missed else ""))
    if args.out_md:
        with open(args.out_md, "w") as f:
            f.write("\n".join(lines) + "\n")
    if args.out_json:
        with open(args.out_json, "w") as f:
            json.dump(record, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
