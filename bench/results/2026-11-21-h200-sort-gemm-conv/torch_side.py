#!/usr/bin/env python3
"""PyTorch's figures for the cases of this folder, on the data wick's bench uses
(uniform [-1, 1), bench/gpu_ops.cpp) and, for the bf16 GEMM, also on [0, 1) (what
bench/gpu_ops_compare.py feeds torch) and N(0, 1). TF32 off. Median of 7 trials of
event-timed batches after a warm-up. Prints one line per case. The bf16 GEMM is
also timed "sustained": 260 batches of 5 products (about 2 s, what wick_bench's
BM_GpuOpsMatmul runs), since a short burst runs before the power limit lowers the
clock."""
import statistics

import torch

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
dev = "cuda"
g = torch.Generator(device=dev)
g.manual_seed(0)


def time_op(fn, repeat, trials=7):
    fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(trials):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(repeat):
            fn()
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e) / repeat)
    return statistics.median(ts)  # ms


def u(*shape, lo=-1.0, hi=1.0, dtype=torch.float32):
    return (torch.rand(*shape, device=dev, generator=g) * (hi - lo) + lo).to(dtype)


xs = u(4096, 4096)
ms = time_op(lambda: torch.argsort(xs, dim=-1, stable=True), 20)
print(f"torch argsort [4096,4096] f32 stable: {ms:.4f} ms")
ms = time_op(lambda: torch.argsort(xs, dim=-1, descending=True, stable=True), 20)
print(f"torch argsort [4096,4096] f32 stable descending: {ms:.4f} ms")

n = 8192
fl = 2.0 * n**3
for name, (a, b) in {
    "uniform[-1,1)": (u(n, n, dtype=torch.bfloat16), u(n, n, dtype=torch.bfloat16)),
    "uniform[0,1)": (u(n, n, lo=0, dtype=torch.bfloat16), u(n, n, lo=0, dtype=torch.bfloat16)),
    "normal(0,1)": (torch.randn(n, n, device=dev, generator=g).bfloat16(),
                    torch.randn(n, n, device=dev, generator=g).bfloat16()),
}.items():
    ms = time_op(lambda: a @ b, 10)
    print(f"torch matmul 8192^3 bf16 {name}: {ms:.4f} ms = {fl / ms / 1e9:.1f} TFLOP/s")
    if name != "normal(0,1)":
        ms = time_op(lambda: a @ b, 5, trials=260)
        print(f"torch matmul 8192^3 bf16 {name} sustained (260 x 5): {ms:.4f} ms = {fl / ms / 1e9:.1f} TFLOP/s")
    del a, b
af, bf = u(n, n), u(n, n)
ms = time_op(lambda: af @ bf, 5)
print(f"torch matmul 8192^3 f32 (TF32 off) uniform[-1,1): {ms:.4f} ms = {fl / ms / 1e9:.1f} TFLOP/s")
del af, bf

xc, wc = u(32, 64, 128, 128), u(128, 64, 3, 3)
cfl = 2.0 * 32 * 128 * 128 * 128 * 64 * 9
ms = time_op(lambda: torch.nn.functional.conv2d(xc, wc, padding=1), 10)
print(f"torch conv2d [32,64,128,128]x[128,64,3,3] pad 1 f32 (TF32 off): {ms:.4f} ms = {cfl / ms / 1e9:.1f} TFLOP/s")
