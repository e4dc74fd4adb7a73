"""Shared by the benchmark comparisons (bench/torch_compare.py, bench/gpu_ops_compare.py):
reading wick_bench's JSON, and one timing method for PyTorch (CUDA events around batches)."""
import json
import statistics
import time

import torch


def time_op(fn, repeat, trials=7, warm_s=0.0, min_s=0.0):
    """Median seconds per op over `trials` event-timed batches of `repeat` ops (more
    batches until they add up to min_s), after one op, or after warm_s seconds of ops."""
    fn()
    torch.cuda.synchronize()
    t_end = time.perf_counter() + warm_s
    while time.perf_counter() < t_end:
        for _ in range(repeat):
            fn()
        torch.cuda.synchronize()
    times = []
    while len(times) < trials or sum(times) * repeat < min_s:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(repeat):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / repeat)
    return statistics.median(times)


def wick_results(path):
    """Seconds per op of each wick_bench case in a Google Benchmark JSON, by its first two
    name parts ("BM_X/capture/min_time:.../manual_time" -> "BM_X/capture"); real_time is in the
    case's time_unit."""
    with open(path) as f:
        data = json.load(f)
    res = {}
    for b in data["benchmarks"]:
        if b.get("error_occurred"):
            continue
        scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b.get("time_unit", "ms")]
        res["/".join(b["name"].split("/")[:2])] = b["real_time"] * scale
    return res
