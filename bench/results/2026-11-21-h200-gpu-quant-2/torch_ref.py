"""PyTorch's figures for the issue-5 comparison: device copy bandwidth (bytes read +
written) and the bf16 GEMM rate of x (512, k) @ w (n, k)^T, median of CUDA-event timings."""
import torch


def timed(fn, reps=20, inner=10):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(inner):
            fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) / inner * 1e-3)
    ts.sort()
    return ts[len(ts) // 2]


print(torch.__version__, torch.cuda.get_device_name(0))
x = torch.randn(1 << 28, device="cuda")
y = torch.empty_like(x)
t = timed(lambda: y.copy_(x))
print(f"torch copy 1 GiB f32: {t*1e6:.1f} us, {2*4*x.numel()/t/1e12:.3f} TB/s (read+write)")
del x, y
for n, k in ((14336, 4096), (4096, 14336)):
    a = torch.randn(512, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    t = timed(lambda: a @ w.t())
    print(f"torch bf16 GEMM 512x{n}x{k}: {t*1e6:.1f} us, {2*512*n*k/t/1e12:.1f} TFLOP/s")
