#!/usr/bin/env python3
"""Issue-5 speed targets from a BM_GpuQuant Google Benchmark JSON (bench/gpu_quant.cpp).

usage: bench/gpu_quant_report.py bench.json [label]

Prints a Markdown table (host: the host's time to issue one call, bench's host_us
counter): each batch-1 mat-vec's weight bytes per second over the
copy bandwidth (BM_GpuQuantCopy: bytes read + written per second; target >= 70%),
and each batch-512 dequantize + GEMM rate over the bf16 GEMM rate of the same
shape (BM_GpuQuantBf16Gemm of that shape; target >= 50%). A JSON without the
GEMM cases (a mat-vec-only run) gives the mat-vec rows alone.
"""
import json
import sys


def main():
    data = json.load(open(sys.argv[1]))
    label = sys.argv[2] if len(sys.argv) > 2 else ""
    runs = {b["name"]: b for b in data["benchmarks"] if "error_occurred" not in b}

    def find(prefix):
        return [b for n, b in runs.items() if n.startswith(prefix)]

    copy = find("BM_GpuQuantCopy")
    gemm = {b["name"].split("/")[1]: b["TFLOPs"] for b in find("BM_GpuQuantBf16Gemm")}
    if not copy:
        sys.exit("missing BM_GpuQuantCopy in " + sys.argv[1])
    copy_tbps = copy[0]["TBps"]
    shapes = ", ".join(f"512x{s}: {r:.1f} TFLOP/s" for s, r in sorted(gemm.items())) or "not run"
    print(f"copy bandwidth {copy_tbps:.3f} TB/s; bf16 GEMM {shapes} {label}\n")
    print("| case | time (us) | host (us) | rate | ratio | target | met |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for b in find("BM_GpuQuantMatVec"):
        r = b["TBps"] / copy_tbps
        case = b["name"].split("/")[1]
        host = f"{b['host_us']:.1f}" if "host_us" in b else "-"
        print(f"| mat-vec {case} b1 | {b['real_time']:.1f} | {host} | {b['TBps']:.3f} TB/s | {r:.0%} | 70% | {'yes' if r >= 0.7 else 'no'} |")
    for b in find("BM_GpuQuantDequantGemm"):
        case = b["name"].split("/")[1]
        shape = case.split("_", 2)[-1]  # q4_K_14336x4096 -> 14336x4096
        if shape not in gemm:
            print(f"| dequant+GEMM {case} b512 | {b['real_time']:.1f} | - | {b['TFLOPs']:.1f} TFLOP/s | no bf16 GEMM of {shape} | 50% | - |")
            continue
        r = b["TFLOPs"] / gemm[shape]
        host = f"{b['host_us']:.1f}" if "host_us" in b else "-"
        print(f"| dequant+GEMM {case} b512 | {b['real_time']:.1f} | {host} | {b['TFLOPs']:.1f} TFLOP/s | {r:.0%} | 50% | {'yes' if r >= 0.5 else 'no'} |")


if __name__ == "__main__":
    main()
