#!/usr/bin/env python3
"""Runs the GPU op benchmarks of bench/gpu_ops.cpp (BM_GpuOps*: reduce, cumsum, fused nn,
indexing, sort, GEMM, convolution) through PyTorch on the same GPU and prints one
table: wick's and PyTorch's figure (TB/s of bytes read + written, or TFLOP/s),
wick / PyTorch, the ratio to the device-to-device copy of the same run
(BM_GpuD2DCopy/f32 from bench/gpu_elementwise.cpp) for the bandwidth cases, and
each case's target with PASS / MISS.

usage: gpu_ops_compare.py WICK_BENCH_JSON [--out results.md] [--cases REGEX]
TF32 is off on both sides (torch.backends.{cuda.matmul,cudnn}.allow_tf32 = False;
bench/gpu_ops.cpp sets Options::allow_tf32 off) except in the cases named *_tf32,
where both sides allow it.

Both sides get the same inputs' distribution (uniform [-1, 1), as bench/gpu_ops.cpp)
and, for the GEMM and conv cases, the same regime: wick_bench times them after
Google Benchmark's ramp-up, about a second of back-to-back products, by when the
H200 sits at its power limit with a lower clock (docs/PERFORMANCE.md); torch gets
one second of the same products before its timed batches (at least 0.3 s of them,
wick_bench's MinTime). A short burst from a cool GPU runs faster on either side.
"""
import argparse
import re
import sys

import torch
from compare_common import time_op, wick_results

SIDE = 16384



def cases():
    """name -> (kind 'bw'|'flops', amount per op, torch fn, repeat, target description, check(w, t, copy))."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = "cuda"
    g = torch.Generator(device=dev).manual_seed(0)
    out = {}
    x = torch.rand(SIDE, SIDE, device=dev, generator=g) * 2 - 1
    red_bytes = 4 * SIDE * SIDE + 4 * SIDE
    copy90 = ("0.90 x copy", lambda w, t, c: w >= 0.9 * c)
    out["BM_GpuOpsReduce/sum"] = ("bw", red_bytes, lambda: x.sum(-1), 10, *copy90)
    out["BM_GpuOpsReduce/max"] = ("bw", red_bytes, lambda: x.amax(-1), 10, *copy90)
    out["BM_GpuOpsReduce/argmax"] = ("bw", red_bytes, lambda: x.argmax(-1), 10, *copy90)
    fused = ("> torch and >= 3.8 TB/s", lambda w, t, c: w > t and w >= 3.8)
    out["BM_GpuOpsSoftmax/f32"] = ("bw", 8 * SIDE * SIDE, lambda: torch.softmax(x, -1), 10, *fused)
    alpha = torch.rand(SIDE, device=dev, generator=g) + 0.5

    def rms():
        if hasattr(torch.nn.functional, "rms_norm"):  # torch >= 2.4
            return torch.nn.functional.rms_norm(x, (SIDE,), alpha, 1e-5)
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * alpha

    out["BM_GpuOpsRmsNorm/f32"] = ("bw", 8 * SIDE * SIDE + 4 * SIDE, rms, 10, *fused)
    gamma = torch.rand(SIDE, device=dev, generator=g) + 0.5
    beta = torch.rand(SIDE, device=dev, generator=g) * 2 - 1
    notslower = ("not slower than torch", lambda w, t, c: w >= t)
    out["BM_GpuOpsLayerNorm/f32"] = ("bw", 8 * SIDE * SIDE + 8 * SIDE,
                                     lambda: torch.nn.functional.layer_norm(x, (SIDE,), gamma, beta, 1e-5), 10,
                                     *notslower)
    out["BM_GpuOpsCumsum/f32"] = ("bw", 8 * SIDE * SIDE, lambda: torch.cumsum(x, -1), 10, *notslower)
    ids = torch.randint(0, SIDE, (8192,), device=dev, generator=g)
    out["BM_GpuOpsIndexSelect/f32"] = ("bw", 8 * 8192 * SIDE + 4 * 8192, lambda: x.index_select(0, ids), 10,
                                       *notslower)
    xs = torch.rand(4096, 4096, device=dev, generator=g) * 2 - 1
    out["BM_GpuOpsArgsort/f32"] = ("bw", 8 * 4096 * 4096, lambda: torch.argsort(xs, dim=-1, stable=True), 10,
                                   *notslower)
    n = 8192
    def u(*shape):
        return torch.rand(*shape, device=dev, generator=g) * 2 - 1

    ab, bb = u(n, n).to(torch.bfloat16), u(n, n).to(torch.bfloat16)
    af, bf = u(n, n), u(n, n)
    gemm95 = (">= 0.95 x torch", lambda w, t, c: w >= 0.95 * t)
    out["BM_GpuOpsMatmul/bf16"] = ("flops", 2.0 * n**3, lambda: ab @ bb, 5, *gemm95)
    out["BM_GpuOpsMatmul/f32"] = ("flops", 2.0 * n**3, lambda: af @ bf, 5, *gemm95)
    out["BM_GpuOpsMatmul/f32_portable"] = ("flops", 2.0 * n**3, lambda: af @ bf, 5, "recorded beside cuBLAS",
                                           lambda w, t, c: True)
    xc, wc = u(32, 64, 128, 128), u(128, 64, 3, 3)
    xcb, wcb = xc.to(torch.bfloat16), wc.to(torch.bfloat16)
    conv_flops = 2.0 * 32 * 128 * 128 * 128 * 64 * 9
    conv80 = (">= 0.8 x torch", lambda w, t, c: w >= 0.8 * t)

    def conv_tf32():  # cuDNN may use TF32 for this call only (PyTorch's default for convolutions)
        torch.backends.cudnn.allow_tf32 = True
        try:
            return torch.nn.functional.conv2d(xc, wc, padding=1)
        finally:
            torch.backends.cudnn.allow_tf32 = False

    out["BM_GpuOpsConv2d/f32"] = ("flops", conv_flops, lambda: torch.nn.functional.conv2d(xc, wc, padding=1), 5,
                                  *conv80)
    out["BM_GpuOpsConv2d/f32_tf32"] = ("flops", conv_flops, conv_tf32, 5, *conv80)
    out["BM_GpuOpsConv2d/bf16"] = ("flops", conv_flops, lambda: torch.nn.functional.conv2d(xcb, wcb, padding=1), 5,
                                   *conv80)
    return out



def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("wick_json")
    ap.add_argument("--out")
    ap.add_argument("--cases", default="", help="regex: time only the cases whose name it matches")
    args = ap.parse_args()
    wick = wick_results(args.wick_json)
    copy_t = wick.get("BM_GpuD2DCopy/f32")
    copy_bw = (2 * 4 * (1 << 28)) / copy_t / 1e12 if copy_t else float("nan")
    lines = [
        f"GPU: {torch.cuda.get_device_name(0)}; torch {torch.__version__}; TF32 off on both sides but in *_tf32; "
        f"copy = wick's device-to-device copy in this run: {copy_bw:.2f} TB/s (bytes read + written)",
        "",
        "| case | unit | wick | torch | wick / torch | wick / copy | target | met |",
        "| --- | --- | ---: | ---: | ---: | ---: | --- | --- |",
    ]
    for name, (kind, amount, fn, repeat, target, check) in cases().items():
        if args.cases and not re.search(args.cases, name):
            continue
        if name not in wick:  # a variant this run of wick_bench left out
            continue
        try:
            t_torch = time_op(fn, repeat, warm_s=1.0, min_s=0.3) if kind == "flops" else time_op(fn, repeat)
        except Exception as e:  # one failing torch call must not lose the other rows
            lines.append(f"| {name} | - | - | - | - | - | {target} | torch failed: {type(e).__name__} |")
            print(lines[-1], flush=True)
            continue
        t_wick = wick.get(name)
        unit = "TB/s" if kind == "bw" else "TFLOP/s"
        w = amount / t_wick / 1e12 if t_wick else float("nan")
        t = amount / t_torch / 1e12
        vs_copy = f"{w / copy_bw:.1%}" if kind == "bw" else "-"
        met = ("PASS" if check(w, t, copy_bw) else "MISS") if t_wick else "no wick figure"
        lines.append(f"| {name} | {unit} | {w:.3f} | {t:.3f} | {w / t:.2f} | {vs_copy} | {target} | {met} |")
        print(lines[-1], flush=True)
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
