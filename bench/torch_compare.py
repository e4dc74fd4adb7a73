#!/usr/bin/env python3
"""Runs wick's GPU elementwise bench cases through PyTorch on the same GPU and
prints, per case, wick's and PyTorch's bandwidth (bytes read + written per
second), wick / PyTorch, and wick / the device-to-device copy of the same run.

usage: torch_compare.py WICK_BENCH_JSON [--out results.md] [--cases REGEX]
WICK_BENCH_JSON is Google Benchmark's --benchmark_out (format json) of
`wick_bench --benchmark_filter=BM_Gpu`.
"""
import argparse
import re
import sys
import time

import torch
from compare_common import time_op, wick_results

N = 1 << 28
SIDE = 16384
REPEAT = 10



def cases():
    dev = "cuda"
    g = torch.Generator(device=dev).manual_seed(0)
    out = {}
    for name, dt in (("f32", torch.float32), ("bf16", torch.bfloat16)):
        size = torch.tensor([], dtype=dt).element_size()
        x = (torch.rand(N, device=dev, generator=g) * 2 - 1).to(dt)
        y = (torch.rand(N, device=dev, generator=g) * 2 - 1).to(dt)
        c = (torch.rand(N, device=dev, generator=g) * 2).to(torch.uint8).bool()
        out[f"BM_GpuD2DCopy/{name}"] = (2 * N * size, lambda x=x: x.clone())
        out[f"BM_GpuAffine/{name}"] = (2 * N * size, lambda x=x: x * 1.5 + 0.5)
        out[f"BM_GpuExp/{name}"] = (2 * N * size, lambda x=x: torch.exp(x))
        out[f"BM_GpuAdd/{name}"] = (3 * N * size, lambda x=x, y=y: x + y)
        out[f"BM_GpuWhere/{name}"] = (N * (1 + 3 * size), lambda c=c, x=x, y=y: torch.where(c, x, y))
    xf = torch.rand(N, device=dev, generator=g)
    xb = xf.to(torch.bfloat16)
    out["BM_GpuCast/f32_bf16"] = (6 * N, lambda: xf.to(torch.bfloat16))
    out["BM_GpuCast/bf16_f32"] = (6 * N, lambda: xb.to(torch.float32))
    m = torch.rand(SIDE, SIDE, device=dev, generator=g)
    b = torch.rand(SIDE, device=dev, generator=g)
    out["BM_GpuBroadcastAdd/f32"] = (4 * (2 * SIDE * SIDE + SIDE), lambda: m + b)
    out["BM_GpuTransposeCopy/f32"] = (4 * 2 * SIDE * SIDE, lambda: m.t().contiguous())
    return out


def eager_cases():
    """One small op (bench/gpu_elementwise.cpp's BM_GpuEagerOp and BM_GpuEagerQueue): 16 f32
    elements."""
    dev = "cuda"
    g = torch.Generator(device=dev).manual_seed(1)
    x = torch.rand(16, device=dev, generator=g) * 2 - 1
    y = torch.rand(16, device=dev, generator=g) * 2 - 1
    w = torch.rand(16, device=dev, generator=g) + 0.5
    return {
        "BM_GpuEagerOp/add": lambda: x + y,
        "BM_GpuEagerOp/exp": lambda: torch.exp(x),
        "BM_GpuEagerOp/sum": lambda: x.sum(0),
        "BM_GpuEagerOp/rms_norm": lambda: torch.nn.functional.rms_norm(x, (16,), w, 1e-5),
    }


def time_queue(fn, burst=200, trials=50):
    """The host's time to queue one op: `burst` of them after a synchronization, per op,
    the mean over `trials` (as BM_GpuEagerQueue)."""
    fn()
    total = 0.0
    for _ in range(trials):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(burst):
            fn()
        total += (time.perf_counter() - t0) / burst
    torch.cuda.synchronize()
    return total / trials


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("wick_json")
    ap.add_argument("--out")
    ap.add_argument("--cases", default="", help="regex: time only the cases whose name it matches")
    args = ap.parse_args()
    wick = wick_results(args.wick_json)
    torch_cases = cases()
    rows = []
    d2d = {}
    for name, (nbytes, fn) in torch_cases.items():
        if args.cases and not re.search(args.cases, name):
            continue
        t_torch = time_op(fn, REPEAT, trials=15)
        t_wick = wick.get(name)
        w_bw = nbytes / t_wick / 1e12 if t_wick else float("nan")
        t_bw = nbytes / t_torch / 1e12
        rows.append((name, w_bw, t_bw))
        if name.startswith("BM_GpuD2DCopy/"):
            d2d[name.split("/")[1]] = w_bw
    ceiling = max(d2d.values()) if d2d else float("nan")
    lines = [
        f"GPU: {torch.cuda.get_device_name(0)}; torch {torch.__version__}; ceiling = wick's device-to-device "
        f"copy in this run ({ceiling:.2f} TB/s, bytes read + written)",
        "",
        "| case | wick TB/s | torch TB/s | wick / torch | wick / d2d copy |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name, w_bw, t_bw in rows:
        lines.append(f"| {name} | {w_bw:.3f} | {t_bw:.3f} | {w_bw / t_bw:.2f} | {w_bw / ceiling:.1%} |")
    eager = [(n, fn) for n, fn in eager_cases().items() if not args.cases or re.search(args.cases, n)]
    if eager:
        lines += ["", "One small eager op (16 f32 elements, 1000 back to back, microseconds an op):", "",
                  "| case | wick us | torch us | wick / torch (time) |", "| --- | ---: | ---: | ---: |"]
        for name, fn in eager:
            t_torch = time_op(fn, 1000, trials=7)
            t_wick = wick.get(name)
            w_us = t_wick * 1e6 if t_wick else float("nan")
            lines.append(f"| {name} | {w_us:.2f} | {t_torch * 1e6:.2f} | {w_us / (t_torch * 1e6):.2f} |")
        lines += ["", "The host's time to queue one small eager op (16 f32 elements, 200 after a "
                  "synchronization, microseconds an op):", "",
                  "| case | wick us | torch us | wick / torch (time) |", "| --- | ---: | ---: | ---: |"]
        for name, fn in eager:
            qname = name.replace("BM_GpuEagerOp/", "BM_GpuEagerQueue/")
            t_torch = time_queue(fn)
            t_wick = wick.get(qname)
            w_us = t_wick * 1e6 if t_wick else float("nan")
            lines.append(f"| {qname} | {w_us:.2f} | {t_torch * 1e6:.2f} | {w_us / (t_torch * 1e6):.2f} |")
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
