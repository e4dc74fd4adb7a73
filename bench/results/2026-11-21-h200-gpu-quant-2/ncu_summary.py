"""Median kernel time per (kernel, grid) from ncu --csv logs (gpu__time_duration.sum).
usage: ncu_summary.py a.csv [b.csv ...]"""
import csv
import statistics
import sys

BYTES = {"q4_0": 18 / 32, "q8_0": 34 / 32, "q4_K": 144 / 256, "q6_K": 210 / 256}

for path in sys.argv[1:]:
    rows = {}
    try:
        lines = [l for l in open(path) if l.startswith('"')]
    except OSError as e:
        print(path, e)
        continue
    for r in csv.DictReader(lines):
        if r.get("Metric Name") != "gpu__time_duration.sum":
            continue
        v = float(r["Metric Value"].replace(",", ""))
        unit = r.get("Metric Unit", "")
        us = v / 1e3 if unit.startswith("ns") or unit == "nsecond" else v * 1e3 if unit in ("ms", "msecond") else v
        rows.setdefault((r["Kernel Name"][:60], r["Grid Size"]), []).append(us)
    print(f"== {path}")
    for (name, grid), ts in sorted(rows.items()):
        med = statistics.median(ts)
        extra = ""
        if name.startswith("mmvq"):
            typ = name.split("_")[1] + "_" + name.split("_")[2]
            g = int(grid.strip("()").split(",")[0])
            if name.startswith("mmvqf"):  # 132 SMs x 32 waves: 4 rows per wave at n = 14336, 1 at n = 4096
                n = 14336 if g == 448 else 4096 if g == 512 else 0
            else:  # rows per 256-thread block: 8 (mmvqs, wave 32), 2 (generic, 4 waves per row)
                n = g * 8 if name.startswith("mmvqs") else g * 2
            k = 4096 if n == 14336 else 14336
            if typ in BYTES:
                extra = f"  n={n} k={k} weight {BYTES[typ]*n*k/med/1e6:.3f} TB/s"
        print(f"{name:60s} grid {grid:16s} n={len(ts):5d} median {med:9.2f} us min {min(ts):9.2f}{extra}")
