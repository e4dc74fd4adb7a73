#!/usr/bin/env python3
"""One machine-readable record per full run: the figures of docs/PERFORMANCE.md as JSON.

usage:
  bench/results_json.py gpu OUT_DIR --date YYYY-MM-DD --device h200 --commit HASH --command CMD
                        [--build TEXT] [--gpu NAME] [--gpu-memory TEXT] [--driver V] [--cuda V]
                        [--host-cpu NAME] [--host-cores N] [--peer-version V] [--test NAME=PASSED] ...
                        [--parity PASSED/TOTAL] [--wick-check TEXT] [--gpu-check-rc N]
                        [--note TEXT] [-o FILE] [--markdown]
  bench/results_json.py cpu --wick-bench FILE [--gbench FILE] --date YYYY-MM-DD --device NAME
                        --commit HASH --command CMD [--host-cpu NAME] [--host-cores N]
                        [--note TEXT] [-o FILE] [--markdown]

gpu: OUT_DIR is the $OUT of `scripts/gpu-check.sh all`. Read from it:
  torch_compare.md        elementwise bandwidth, wick and PyTorch (bench/torch_compare.py)
  gpu_ops_compare.md      the other GPU ops, wick and PyTorch (bench/gpu_ops_compare.py)
  gpu_quant_report.md     batch-1 mat-vec and batch-512 dequantize + GEMM (bench/gpu_quant_report.py)
  gpu_quant_report_nopdl.md   the mat-vec as an ordinary launch, where the run has it
  qmv_ceiling.log         the read ceiling of the mat-vec weights (bench/qmv_ceiling.cu)
  summary.txt             GPU name, driver, memory, CUDA release, the script's exit status
  test_*.log, wick-check.log, memcheck-*.log   the correctness of the same run
  wick_bench_*.json       Google Benchmark's context (host cores)
Options given on the command line take precedence over what the folder says; a run
whose folder lacks a log (an older run kept only its reports) gets those facts
from the options.
cpu: FILE is the text output of `wick bench --device cpu`; --gbench the console output
of `wick_bench` (bench/cpu_ops.cpp cases).

Writes bench/results/<date>-<device>-<commit>.json (or -o FILE); --markdown prints the
tables of docs/PERFORMANCE.md made from the same record.
"""
import argparse
import glob
import json
import os
import re
import sys

SCHEMA = "wick-run/1"

# ggml block layouts of the benchmarked types: (elements per block, bytes per block).
BLOCK = {"q4_0": (32, 18), "q8_0": (32, 34), "q4_K": (256, 144), "q6_K": (256, 210)}

CASE_NAMES = {
    "BM_GpuD2DCopy/f32": "copy f32",
    "BM_GpuD2DCopy/bf16": "copy bf16",
    "BM_GpuAffine/f32": "affine f32 (x * 1.5 + 0.5)",
    "BM_GpuAffine/bf16": "affine bf16",
    "BM_GpuExp/f32": "exp f32",
    "BM_GpuExp/bf16": "exp bf16",
    "BM_GpuAdd/f32": "add f32",
    "BM_GpuAdd/bf16": "add bf16",
    "BM_GpuWhere/f32": "where f32 (u8 condition)",
    "BM_GpuWhere/bf16": "where bf16 (u8 condition)",
    "BM_GpuCast/f32_bf16": "cast f32 -> bf16",
    "BM_GpuCast/bf16_f32": "cast bf16 -> f32",
    "BM_GpuBroadcastAdd/f32": "broadcast add [16384,16384] + [16384] f32",
    "BM_GpuTransposeCopy/f32": "transposed copy [16384,16384] f32",
    "BM_GpuOpsReduce/sum": "sum over the last dim, [16384,16384] f32",
    "BM_GpuOpsReduce/max": "max over the last dim, [16384,16384] f32",
    "BM_GpuOpsReduce/argmax": "argmax over the last dim, [16384,16384] f32",
    "BM_GpuOpsSoftmax/f32": "softmax_last_dim [16384,16384] f32",
    "BM_GpuOpsRmsNorm/f32": "rms_norm [16384,16384] f32",
    "BM_GpuOpsLayerNorm/f32": "layer_norm [16384,16384] f32, alpha and beta",
    "BM_GpuOpsCumsum/f32": "cumsum over the last dim, [16384,16384] f32",
    "BM_GpuOpsIndexSelect/f32": "index_select, 8192 rows of [16384,16384] f32",
    "BM_GpuOpsArgsort/f32": "argsort [4096,4096] f32, stable",
    "BM_GpuOpsMatmul/bf16": "matmul 8192^3 bf16 (cuBLAS)",
    "BM_GpuOpsMatmul/f32": "matmul 8192^3 f32, TF32 off (cuBLAS)",
    "BM_GpuOpsMatmul/f32_portable": "matmul 8192^3 f32, portable GEMM (peer: PyTorch f32)",
    "BM_GpuOpsConv2d/f32": "conv2d [32,64,128,128] x [128,64,3,3], pad 1, f32, TF32 off",
    "BM_GpuOpsConv2d/f32_tf32": "conv2d [32,64,128,128] x [128,64,3,3], pad 1, f32, TF32 allowed",
    "BM_GpuOpsConv2d/bf16": "conv2d [32,64,128,128] x [128,64,3,3], pad 1, bf16",
}


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def num(s):
    """A table cell as a number ("4.222", "98.9%")."""
    return float(s.strip().rstrip("%"))


def rnd(x):  # ratios kept to 4 decimals
    return None if x is None else round(x, 4)


def md_rows(text):
    """Data rows of the Markdown tables in text, as lists of cell strings."""
    rows = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] == "case":  # a header row
            continue
        rows.append(cells)
    return rows


# ---- GPU -----------------------------------------------------------------------------


def elementwise(out_dir):
    p = os.path.join(out_dir, "torch_compare.md")
    if not os.path.exists(p):
        return None, None
    text = read(p)
    peer = re.search(r"torch (\S+?);", text)
    rows, seen = [], set()
    copy = None
    eager, queue = [], []
    for c in md_rows(text):
        if not c[0].startswith("BM_") or c[0] in seen:
            continue
        seen.add(c[0])
        wick, torch = num(c[1]), num(c[2])
        if c[0].startswith("BM_GpuEagerOp/"):  # one small op back to back, microseconds
            eager.append({"bench": c[0], "case": c[0].split("/")[1] + " [16] f32, back to back", "unit": "us",
                          "wick": wick, "peer": torch, "ratio": num(c[3])})
            continue
        if c[0].startswith("BM_GpuEagerQueue/"):  # the host's time to queue one, microseconds
            queue.append({"bench": c[0], "case": c[0].split("/")[1] + " [16] f32, host time to queue",
                          "unit": "us", "wick": wick, "peer": torch, "ratio": num(c[3])})
            continue
        if c[0] == "BM_GpuD2DCopy/f32":
            copy = wick
        rows.append({"bench": c[0], "case": CASE_NAMES.get(c[0], c[0]), "unit": "TB/s", "wick": wick,
                     "peer": torch, "ratio": num(c[3]), "vs_copy": rnd(num(c[4]) / 100)})
    sec = {"peer": "PyTorch", "ceiling": {"what": "wick device-to-device copy f32 (bytes read + written)",
                                          "unit": "TB/s", "value": copy}, "rows": rows}
    if eager:
        sec["eager_host_time"] = eager
    if queue:
        sec["eager_queue_time"] = queue
    return sec, (peer.group(1) if peer else None)


def ops(out_dir):
    p = os.path.join(out_dir, "gpu_ops_compare.md")
    if not os.path.exists(p):
        return None
    text = read(p)
    copy = re.search(r"copy in this run: ([\d.]+) TB/s", text)
    rows, seen = [], set()
    for c in md_rows(text):
        if not c[0].startswith("BM_") or c[0] in seen:
            continue
        seen.add(c[0])
        unit, wick, torch = c[1], num(c[2]), num(c[3])
        row = {"bench": c[0], "case": CASE_NAMES.get(c[0], c[0]), "unit": unit, "wick": wick, "peer": torch,
               "ratio": num(c[4]), "vs_copy": rnd(num(c[5]) / 100) if c[5] not in ("-", "") else None}
        if c[0].startswith("BM_GpuOpsArgsort"):  # bytes counted: 4-byte key read + 4-byte index written
            row["wick_ms"] = rnd(8 * 4096 * 4096 / (wick * 1e12) * 1e3)
            row["peer_ms"] = rnd(8 * 4096 * 4096 / (torch * 1e12) * 1e3)
        rows.append(row)
    return {"peer": "PyTorch", "ceiling": {"what": "wick device-to-device copy f32", "unit": "TB/s",
                                           "value": num(copy.group(1)) if copy else None}, "rows": rows}


def weight_bytes(case):
    m = re.match(r"(q\d_[0K])_(\d+)x(\d+)", case)
    t, n, k = m.group(1), int(m.group(2)), int(m.group(3))
    qk, b = BLOCK[t]
    return t, n, k, n * (k // qk) * b


def quant_report(path):
    text = read(path)
    head = re.search(r"copy bandwidth ([\d.]+) TB/s", text)
    gemm = dict(re.findall(r"512x(\d+x\d+): ([\d.]+) TFLOP/s", text))
    matvec, dq = [], []
    for c in md_rows(text):
        m = re.match(r"(mat-vec|dequant\+GEMM) (\S+) b(\d+)", c[0])
        if not m:
            continue
        t, n, k, wb = weight_bytes(m.group(2))
        time_us = num(c[1])
        host = None if c[2] == "-" else num(c[2])
        rate = num(c[3].split()[0])
        if m.group(1) == "mat-vec":
            after = "after a write" in c[0]
            matvec.append({"case": f"{t} [{n} x {k}] batch 1" + (", after a write" if after else ", back to back"),
                           "type": t, "n": n, "k": k,
                           "weight_mb": round(wb / 1e6, 1), "unit": "us", "wick": time_us, "host_us": host,
                           "weight_tbps": rate, "ratio": rnd(num(c[4]) / 100),
                           "ratio_of": "weight bytes per second / copy bandwidth", "peer": None})
        else:
            g = gemm.get(f"{n}x{k}")
            dq.append({"case": f"{t} [{n} x {k}] batch 512", "type": t, "n": n, "k": k, "unit": "TFLOP/s",
                       "wick": rate, "time_us": time_us, "host_us": host,
                       "peer": float(g) if g else None, "peer_is": "wick's bf16 GEMM of the same shape",
                       "ratio": rnd(num(c[4]) / 100) if g else None})
    return num(head.group(1)) if head else None, {k: float(v) for k, v in gemm.items()}, matvec, dq


def ceiling(path, copy):
    text = read(path)
    rows = []
    for t, mb, us, tb in re.findall(r"^(q\d_[0K]) ([\d.]+) MB\s+read_words<1>.*?([\d.]+) us\s+([\d.]+) TB/s",
                                    text, re.M):
        two = re.search(rf"^{t} {re.escape(mb)} MB\s+tiny kernel.*?([\d.]+) us\s+([\d.]+) TB/s", text, re.M)
        label = "q4_0 / q4_K" if t == "q4_0" else t  # the same bytes at these shapes
        rows.append({"case": f"{label} weights, {mb} MB", "type": t, "weight_mb": float(mb), "unit": "us",
                     "wick": float(us), "read_tbps": float(tb), "ratio": rnd(float(tb) / copy) if copy else None,
                     "ratio_of": "read rate / copy bandwidth (one read-only kernel, back to back)",
                     "two_launches_us": float(two.group(1)) if two else None})
    empty = re.search(r"empty kernel back to back: ([\d.]+) us", text)
    queue = re.search(r"empty kernel, the host's time to queue one: ([\d.]+) us", text)
    big = re.search(r"read 256 MiB.*?([\d.]+) us ([\d.]+) TB/s", text)
    out = {"rows": rows, "empty_kernel_us": float(empty.group(1)) if empty else None,
           "read_256mib_tbps": float(big.group(2)) if big else None}
    if queue:
        out["empty_kernel_queue_us"] = float(queue.group(1))
    return out


def gtest_count(path):
    text = read(path)
    p = re.findall(r"\[  PASSED  \] (\d+) test", text)
    f = re.findall(r"\[  FAILED  \] (\d+) test", text)
    return {"passed": int(p[-1]) if p else 0, "failed": int(f[-1]) if f else 0}


def correctness(out_dir, a):
    c = {"tests": {}, "parity": None, "wick_check": None, "memcheck": {}, "gpu_check_rc": None}
    for p in sorted(glob.glob(os.path.join(out_dir, "test_gpu_*.log"))):
        c["tests"][os.path.basename(p)[:-4]] = gtest_count(p)
    p = os.path.join(out_dir, "test_parity.log")
    if os.path.exists(p):
        g = gtest_count(p)
        c["parity"] = {"families_passed": g["passed"], "families": g["passed"] + g["failed"]}
    p = os.path.join(out_dir, "wick-check.log")
    if os.path.exists(p):
        m = re.search(r"(PASS|FAIL): (\d+) cases on .*?(\d+) failed", read(p))
        if m:
            c["wick_check"] = {"status": m.group(1).lower(), "cases": int(m.group(2)), "failed": int(m.group(3))}
    for p in sorted(glob.glob(os.path.join(out_dir, "memcheck-*.log"))):
        m = re.findall(r"ERROR SUMMARY: (\d+) error", read(p))
        c["memcheck"][os.path.basename(p)[len("memcheck-"):-4]] = {"errors": int(m[-1]) if m else None}
    p = os.path.join(out_dir, "summary.txt")
    if os.path.exists(p):
        m = re.findall(r"done \(rc (\d+)\)", read(p))
        if m:
            c["gpu_check_rc"] = int(m[-1])
    for t in a.test or []:
        name, passed = t.split("=")
        c["tests"][name] = {"passed": int(passed), "failed": 0}
    if a.parity:
        p, n = a.parity.split("/")
        c["parity"] = {"families_passed": int(p), "families": int(n)}
    if a.wick_check:
        c["wick_check"] = {"status": a.wick_check}
    if a.gpu_check_rc is not None:
        c["gpu_check_rc"] = a.gpu_check_rc
    return c


def gpu_device(out_dir, a, peer_version):
    d = {"gpu": None, "gpu_memory": None, "driver": None, "cuda": None, "host_cpu": a.host_cpu,
         "host_cores": a.host_cores, "peer": None}
    p = os.path.join(out_dir, "summary.txt")
    if os.path.exists(p):
        text = read(p)
        m = re.search(r"^(NVIDIA [^,]+), ([\d.]+), (\d+) MiB", text, re.M)
        if m:
            d["gpu"], d["driver"], d["gpu_memory"] = m.group(1), m.group(2), m.group(3) + " MiB"
        m = re.search(r"release ([\d.]+)", text)
        if m:
            d["cuda"] = m.group(1)
    if d["host_cores"] is None:
        for p in sorted(glob.glob(os.path.join(out_dir, "wick_bench_*.json"))):
            try:
                d["host_cores"] = json.load(open(p))["context"]["num_cpus"]
                break
            except (ValueError, KeyError):
                pass
    d["gpu"] = a.gpu or d["gpu"]
    d["gpu_memory"] = a.gpu_memory or d["gpu_memory"]
    d["driver"] = a.driver or d["driver"]
    d["cuda"] = a.cuda or d["cuda"]
    v = a.peer_version or peer_version
    d["peer"] = f"PyTorch {v}" if v else None
    return d


def gpu_record(a):
    out = a.out_dir
    ew, peer_version = elementwise(out)
    sections = {}
    if ew:
        sections["gpu_elementwise"] = ew
    o = ops(out)
    if o:
        sections["gpu_ops"] = o
    copy = None
    p = os.path.join(out, "gpu_quant_report.md")
    if os.path.exists(p):
        copy, gemm, matvec, dq = quant_report(p)
        sections["quantized_matvec"] = {"peer": None, "ceiling": {"what": "wick device copy (bytes read + written)",
                                                                  "unit": "TB/s", "value": copy}, "rows": matvec}
        sections["quantized_dequant_gemm"] = {"peer": "wick bf16 GEMM, same shape", "bf16_gemm_tflops": gemm,
                                              "rows": dq}
    p = os.path.join(out, "gpu_quant_report_nopdl.md")
    if os.path.exists(p):
        c2, _, matvec2, _ = quant_report(p)
        sections["quantized_matvec_ordinary_launch"] = {
            "ceiling": {"what": "wick device copy", "unit": "TB/s", "value": c2}, "rows": matvec2}
    p = os.path.join(out, "qmv_ceiling.log")
    if os.path.exists(p):
        sections["quantized_read_ceiling"] = ceiling(p, copy)
    return {"schema": SCHEMA, "kind": "gpu", "date": a.date, "device_name": a.device, "commit": a.commit,
            "command": a.command, "build": a.build, "note": a.note, "device": gpu_device(out, a, peer_version),
            "correctness": correctness(out, a), "sections": sections}


# ---- CPU -----------------------------------------------------------------------------


def wick_bench_text(path):
    text = read(path)
    head = re.search(r"device (\S+) \((.*)\), copy bandwidth ([\d.]+) GB/s", text)
    rows = []
    for line in text.splitlines():
        m = re.match(r"^(\w+)\s+(.+?)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+|-)\s+([\d.]+)$", line)
        if not m or line.startswith("family"):
            continue
        rows.append({"family": m.group(1), "case": m.group(2), "unit": "GB/s", "median_us": float(m.group(3)),
                     "wick": float(m.group(4)),
                     "gflops": None if m.group(5) == "-" else float(m.group(5)), "vs_copy": float(m.group(6)),
                     "peer": None})
    return {"device": head.group(2) if head else None,
            "copy_bandwidth_gbs": float(head.group(3)) if head else None, "rows": rows}


SI = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
IEC = {"": 1, "k": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def gbench_console(path):
    rows = []
    for line in read(path).splitlines():
        m = re.match(r"^(BM_\S+)\s+([\d.]+) (\w+)\s+([\d.]+) \w+\s+(\d+)\s*(.*)$", line)
        if not m:
            continue
        row = {"bench": m.group(1).replace("/real_time", ""), "time": float(m.group(2)), "time_unit": m.group(3),
               "peer": None}
        for key, val, pre in re.findall(r"(\w+/?s?)=([\d.]+)([kMGT]?)", m.group(6)):
            if key == "bytes_per_second":  # Google Benchmark prints bytes/s in powers of 1024
                row["unit"], row["wick"] = "GB/s", round(float(val) * IEC[pre] / 1e9, 3)
            elif key.startswith("FLOP"):
                row["unit"], row["wick"] = "GFLOP/s", round(float(val) * SI[pre] / 1e9, 3)
        rows.append(row)
    return rows


def cpu_record(a):
    wb = wick_bench_text(a.wick_bench)
    sections = {"cpu_wick_bench": {"peer": None, "ceiling": {"what": "wick 256 MiB f32 copy (read + write)",
                                                              "unit": "GB/s", "value": wb["copy_bandwidth_gbs"]},
                                   "rows": wb["rows"]}}
    if a.gbench:
        sections["cpu_ops_bench"] = {"peer": None, "rows": gbench_console(a.gbench)}
    dev = {"cpu": a.host_cpu or wb["device"], "cores": a.host_cores}
    return {"schema": SCHEMA, "kind": "cpu", "date": a.date, "device_name": a.device, "commit": a.commit,
            "command": a.command, "build": a.build, "note": a.note, "device": dev, "sections": sections}


# ---- Markdown ------------------------------------------------------------------------


def f(x, nd=3):
    return "-" if x is None else f"{x:.{nd}f}"


def pct(x, nd=0):
    return "-" if x is None else f"{x * 100:.{nd}f}%"


def markdown(rec):
    """The run's section of docs/PERFORMANCE.md: its facts, then one table per section."""
    s, d = rec["sections"], rec["device"]
    lines = []

    def table(title, head, rows, note=None):
        lines.append(f"#### {title}\n")
        if note:
            lines.append(note + "\n")
        lines.append("| " + " | ".join(head) + " |")
        lines.append("| --- | " + " | ".join(["---:"] * (len(head) - 1)) + " |")
        for r in rows:
            lines.append("| " + " | ".join(r) + " |")
        lines.append("")

    lines.append(f"- Date: {rec['date']}; commit `{rec['commit']}`.")
    if rec["kind"] == "gpu":
        mem = f" ({d['gpu_memory']})" if d.get("gpu_memory") else ""
        lines.append(f"- GPU: {d['gpu']}{mem}, driver {d['driver']}, CUDA {d['cuda']}; peer: {d['peer']}.")
        cpu = d.get("host_cpu") or "model not recorded"
        lines.append(f"- Host: {d.get('host_cores')} cores, {cpu}.")
    else:
        lines.append(f"- CPU: {d['cpu']}, {d['cores']} cores.")
    if rec.get("build"):
        lines.append(f"- Build: {rec['build']}.")
    lines.append(f"- Command: `{rec['command']}`.")
    if rec.get("note"):
        lines.append(f"- Note: {rec['note']}.")
    lines.append("")

    if "gpu_elementwise" in s:
        e = s["gpu_elementwise"]
        table("GPU elementwise bandwidth",
              ["case", "wick TB/s", "PyTorch TB/s", "wick / PyTorch", "wick / copy"],
              [[r["case"], f(r["wick"]), f(r["peer"]), f(r["ratio"], 2), pct(r["vs_copy"], 1)] for r in e["rows"]],
              f"2^28 elements; copy = wick's device-to-device f32 copy in this run, {f(e['ceiling']['value'])} TB/s.")
        if e.get("eager_host_time"):
            table("GPU: one small eager op back to back",
                  ["case", "wick us", "PyTorch us", "wick / PyTorch (time)"],
                  [[r["case"], f(r["wick"], 2), f(r["peer"], 2), f(r["ratio"], 2)] for r in e["eager_host_time"]],
                  "1000 ops on 16 f32 elements between two synchronizations: the time an op of the "
                  "slower of the host and the GPU running such kernels back to back.")
        if e.get("eager_queue_time"):
            table("GPU: the host's time to queue one small eager op",
                  ["case", "wick us", "PyTorch us", "wick / PyTorch (time)"],
                  [[r["case"], f(r["wick"], 2), f(r["peer"], 2), f(r["ratio"], 2)] for r in e["eager_queue_time"]],
                  "200 ops on 16 f32 elements queued after a synchronization, the host's time an op.")
    if "gpu_ops" in s:
        table("GPU ops", ["case", "unit", "wick", "PyTorch", "wick / PyTorch", "wick / copy"],
              [[r["case"], r["unit"], f(r["wick"]), f(r["peer"]), f(r["ratio"], 2), pct(r["vs_copy"], 1)]
               for r in s["gpu_ops"]["rows"]],
              "TF32 off on both sides. argsort's TB/s counts the 4-byte keys read and the 4-byte indices written.")
    if "quantized_matvec" in s:
        q = s["quantized_matvec"]
        ordinary = {r["case"]: r for r in s.get("quantized_matvec_ordinary_launch", {}).get("rows", [])}
        head = ["weight", "MB", "us per call", "weight TB/s", "% of copy"]
        if ordinary:
            head += ["ordinary launch: us", "% of copy"]
        rows = []
        for r in q["rows"]:
            row = [r["case"].replace(" batch 1,", ","), f(r["weight_mb"], 1), f(r["wick"], 1), f(r["weight_tbps"]),
                   pct(r["ratio"])]
            if ordinary:
                o = ordinary.get(r["case"])
                row += [f(o["wick"], 1), pct(o["ratio"])] if o else ["-", "-"]
            rows.append(row)
        table("Quantized: batch-1 mat-vec", head, rows,
              f"f32 x; back to back: calls queued back to back; after a write: each call after a kernel that writes its x, the mat-vec's share of the pair; copy = {f(q['ceiling']['value'])} TB/s in the same process.")
    if "quantized_dequant_gemm" in s:
        table("Quantized: batch 512, dequantize + GEMM", ["case", "us", "wick TFLOP/s", "bf16 GEMM TFLOP/s", "ratio"],
              [[r["case"].replace(" batch 512", ""), f(r["time_us"], 1), f(r["wick"], 1), f(r["peer"], 1),
                pct(r["ratio"])] for r in s["quantized_dequant_gemm"]["rows"]],
              "bf16 activations; the ratio is to wick's bf16 GEMM of the same shape in the same process.")
    if "quantized_read_ceiling" in s:
        c = s["quantized_read_ceiling"]
        table("Quantized: the read ceiling", ["weights", "read-only kernel us", "TB/s", "% of copy",
                                              "tiny kernel + read us"],
              [[r["case"], f(r["wick"], 2), f(r["read_tbps"]), pct(r["ratio"]), f(r["two_launches_us"], 2)]
               for r in c["rows"]],
              f"bench/qmv_ceiling.cu: one kernel that only reads the weight bytes, back to back; an empty kernel "
              f"back to back takes {f(c['empty_kernel_us'], 2)} us"
              + (f", and the host's time to queue one {f(c['empty_kernel_queue_us'], 2)} us."
                 if c.get("empty_kernel_queue_us") is not None else "."))
    if "correctness" in rec:
        c = rec["correctness"]
        rows = [[name, f"{t['passed']} passed, {t['failed']} failed"] for name, t in c["tests"].items()]
        if c.get("parity"):
            rows.append(["test_parity on gpu:0 (every family, bench-sized cases)",
                         f"{c['parity']['families_passed']} / {c['parity']['families']} families"])
        w = c.get("wick_check")
        if w:
            detail = f": {w['cases']} cases, {w['failed']} failed" if "cases" in w else ""
            rows.append(["wick check --device gpu:0", w["status"] + detail])
        for name, m in c.get("memcheck", {}).items():
            rows.append([f"compute-sanitizer memcheck, {name}", f"{m['errors']} errors"])
        if c.get("gpu_check_rc") is not None:
            rows.append(["scripts/gpu-check.sh exit status", str(c["gpu_check_rc"])])
        table("Correctness in the same run", ["check", "result"], rows)
    if "cpu_wick_bench" in s:
        w = s["cpu_wick_bench"]
        table("wick bench --device cpu", ["family", "case", "median us", "GB/s", "GFLOP/s", "vs copy"],
              [[r["family"], r["case"], f(r["median_us"], 1), f(r["wick"], 2), f(r["gflops"], 2),
                f(r["vs_copy"], 2)] for r in w["rows"]],
              f"copy = a 256 MiB f32 copy in the same run, {f(w['ceiling']['value'], 1)} GB/s (read + write).")
    if "cpu_ops_bench" in s:
        table("Google Benchmark, bench/cpu_ops.cpp", ["case", "time", "rate"],
              [[r["bench"], f"{r['time']:g} {r['time_unit']}", f"{f(r.get('wick'), 1)} {r.get('unit', '')}"]
               for r in s["cpu_ops_bench"]["rows"]],
              "Wall time per op; GB/s = 10^9 bytes/s (Google Benchmark prints bytes/s in powers of 1024).")
    return "\n".join(lines)


def dump(v, ind=""):
    """JSON with one line per flat object (a table row), nested objects indented."""
    def flat(x):
        return not isinstance(x, (dict, list)) or (isinstance(x, dict) and not x)

    if isinstance(v, dict) and v and not all(flat(x) for x in v.values()):
        items = [f'{ind} {json.dumps(k)}: {dump(x, ind + " ")}' for k, x in v.items()]
        return "{\n" + ",\n".join(items) + "\n" + ind + "}"
    if isinstance(v, list) and any(isinstance(x, (dict, list)) for x in v):
        return "[\n" + ",\n".join(ind + " " + dump(x, ind + " ") for x in v) + "\n" + ind + "]"
    return json.dumps(v)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="kind", required=True)
    for name in ("gpu", "cpu"):
        p = sub.add_parser(name)
        if name == "gpu":
            p.add_argument("out_dir")
            p.add_argument("--gpu")
            p.add_argument("--gpu-memory")
            p.add_argument("--driver")
            p.add_argument("--cuda")
            p.add_argument("--peer-version")
            p.add_argument("--test", action="append", help="NAME=PASSED, for a run without its test logs")
            p.add_argument("--parity", help="PASSED/TOTAL families, for a run without test_parity.log")
            p.add_argument("--wick-check", help="the result, for a run without wick-check.log")
            p.add_argument("--gpu-check-rc", type=int)
        else:
            p.add_argument("--wick-bench", required=True)
            p.add_argument("--gbench")
        p.add_argument("--date", required=True)
        p.add_argument("--device", required=True, help="short name for the file name: h200, devvm-cpu, ...")
        p.add_argument("--commit", required=True)
        p.add_argument("--command", required=True)
        p.add_argument("--build")
        p.add_argument("--host-cpu")
        p.add_argument("--host-cores", type=int)
        p.add_argument("--note")
        p.add_argument("-o", "--output")
        p.add_argument("--markdown", action="store_true", help="also print the tables to stdout")
    a = ap.parse_args()
    rec = gpu_record(a) if a.kind == "gpu" else cpu_record(a)
    here = os.path.dirname(os.path.abspath(__file__))
    path = a.output or os.path.join(here, "results", f"{a.date}-{a.device}-{a.commit}.json")
    with open(path, "w", encoding="utf-8") as out:
        out.write(dump(rec) + "\n")
    print(f"wrote {path}", file=sys.stderr)
    if a.markdown:
        print(markdown(rec))


if __name__ == "__main__":
    main()
