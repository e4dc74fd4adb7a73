#!/usr/bin/env python3
"""The quantized speed targets from a BM_GpuQuant Google Benchmark JSON (bench/gpu_quant.cpp).

usage: bench/gpu_quant_report.py bench.json [label]

Prints a Markdown table (host: the host's time to issue one call, bench's host_us
counter): each batch-1 mat-vec's weight bytes per second over the copy bandwidth
(BM_GpuQuantCopy: bytes read + written per second; target >= 70%), twice: run back
to back (BM_GpuQuantMatVec) and after an ordinary kernel that writes its x
(BM_GpuQuantMatVecAfterWrite: the mat-vec's share of each affine + mat-vec pair,
its matvec_us and matvec_TBps counters); and each batch-512 dequantize + GEMM rate
over the bf16 GEMM rate of the same shape (BM_GpuQuantBf16Gemm of that shape;
target >= 50%). A JSON without some of the cases (a mat-vec-only run) gives the
rows it can.
"""
import json
import sys

MATVEC_TARGET = 0.7
GEMM_TARGET = 0.5


def main():
    data = json.load(open(sys.argv[1]))
    label = sys.argv[2] if len(sys.argv) > 2 else ""
    runs = [b for b in data["benchmarks"] if not b.get("error_occurred")]

    def find(fn):
        """fn's cases by their case name: "BM_X/case/iterations:40/manual_time" -> "case"."""
        return {b["name"].split("/")[1]: b for b in runs if b["name"].split("/")[0] == fn}

    copy = [b for b in runs if b["name"].split("/")[0] == "BM_GpuQuantCopy"]
    gemm = {s: b["TFLOPs"] for s, b in find("BM_GpuQuantBf16Gemm").items()}
    if not copy:
        sys.exit("missing BM_GpuQuantCopy in " + sys.argv[1])
    copy_tbps = copy[0]["TBps"]
    shapes = ", ".join(f"512x{s}: {r:.1f} TFLOP/s" for s, r in sorted(gemm.items())) or "not run"
    print(f"copy bandwidth {copy_tbps:.3f} TB/s; bf16 GEMM {shapes} {label}\n")

    def met(r, target):
        return "yes" if r >= target else "no"

    print("| case | time (us) | host (us) | rate | ratio | target | met |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    back_to_back = find("BM_GpuQuantMatVec")
    after_write = find("BM_GpuQuantMatVecAfterWrite")
    for case in list(back_to_back) + [c for c in after_write if c not in back_to_back]:
        b = back_to_back.get(case)
        if b:
            r = b["TBps"] / copy_tbps
            host = f"{b['host_us']:.1f}" if "host_us" in b else "-"
            print(f"| mat-vec {case} b1, back to back | {b['real_time']:.1f} | {host} | {b['TBps']:.3f} TB/s "
                  f"| {r:.0%} | 70% | {met(r, MATVEC_TARGET)} |")
        a = after_write.get(case)
        if a and "matvec_TBps" in a:
            r = a["matvec_TBps"] / copy_tbps
            print(f"| mat-vec {case} b1, after a write (affine {a['affine_us']:.1f} us alone) "
                  f"| {a['matvec_us']:.1f} | - | {a['matvec_TBps']:.3f} TB/s | {r:.0%} | 70% "
                  f"| {met(r, MATVEC_TARGET)} |")
        elif a:
            print(f"| mat-vec {case} b1, after a write | - | - | pair no slower than the affine alone "
                  f"| - | 70% | - |")
    for case, b in find("BM_GpuQuantDequantGemm").items():
        shape = case.split("_", 2)[-1]  # q4_K_14336x4096 -> 14336x4096
        host = f"{b['host_us']:.1f}" if "host_us" in b else "-"
        if shape not in gemm:
            print(f"| dequant+GEMM {case} b512 | {b['real_time']:.1f} | {host} | {b['TFLOPs']:.1f} TFLOP/s "
                  f"| no bf16 GEMM of {shape} | 50% | - |")
            continue
        r = b["TFLOPs"] / gemm[shape]
        print(f"| dequant+GEMM {case} b512 | {b['real_time']:.1f} | {host} | {b['TFLOPs']:.1f} TFLOP/s "
              f"| {r:.0%} | 50% | {met(r, GEMM_TARGET)} |")


if __name__ == "__main__":
    main()
