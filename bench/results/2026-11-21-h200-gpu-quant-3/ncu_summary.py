"""Median kernel time and DRAM read rate per (kernel, case) from an ncu --csv log of
the BM_GpuQuantMatVec cases (metrics gpu__time_duration.sum, dram__bytes_read.sum,
dram__bytes_read.sum.per_second, launch__shared_mem_per_block_dynamic).
The case of an mmvqt launch is told by its dynamic shared memory (k = 4096 or
14336 activation row, so n = 14336 or 4096); of an mmvqs launch by its grid (n / 8
blocks of 8 waves). usage: ncu_summary.py a.csv [b.csv ...]"""
import csv
import statistics
import sys

BYTES = {"q4_0": 18 / 32, "q8_0": 34 / 32, "q4_K": 144 / 256, "q6_K": 210 / 256}


def to_us(v, unit):
    return v / 1e3 if unit.startswith("ns") or unit == "nsecond" else v * 1e3 if unit in ("ms", "msecond") else v


def to_tbps(v, unit):
    scale = {"byte/second": 1e-12, "Kbyte/second": 1e-9, "Mbyte/second": 1e-6, "Gbyte/second": 1e-3,
             "Tbyte/second": 1.0, "byte/s": 1e-12, "B/s": 1e-12, "KB/s": 1e-9, "MB/s": 1e-6, "GB/s": 1e-3, "TB/s": 1.0}
    return v * scale.get(unit, float("nan"))


for path in sys.argv[1:]:
    launches = {}
    try:
        lines = [l for l in open(path) if l.startswith('"')]
    except OSError as e:
        print(path, e)
        continue
    for r in csv.DictReader(lines):
        key = r["ID"]
        d = launches.setdefault(key, {"name": r["Kernel Name"][:40], "grid": r["Grid Size"]})
        d[r["Metric Name"]] = (float(r["Metric Value"].replace(",", "")), r.get("Metric Unit", ""))
    groups = {}
    for d in launches.values():
        name = d["name"]
        case = ""
        if name.startswith("mmvq"):
            typ = "_".join(name.split("_")[1:3])
            if name.startswith("mmvqt"):
                smem = d.get("launch__shared_mem_per_block_dynamic", (0, ""))[0]
                unit = d.get("launch__shared_mem_per_block_dynamic", (0, ""))[1]
                smem = smem * 1024 if unit.lower().startswith("kbyte") else smem
                k = 14336 if smem >= 16128 + 16384 else 4096
            else:
                g = int(d["grid"].strip("()").split(",")[0])
                k = 4096 if g * 8 == 14336 else 14336
            n = 14336 if k == 4096 else 4096
            case = f"{typ} [{n} x {k}]"
        groups.setdefault((name, case), []).append(d)
    print(f"== {path}")
    for (name, case), ds in sorted(groups.items()):
        t = [to_us(*d["gpu__time_duration.sum"]) for d in ds if "gpu__time_duration.sum" in d]
        bw = [to_tbps(*d["dram__bytes_read.sum.per_second"]) for d in ds if "dram__bytes_read.sum.per_second" in d]
        med = statistics.median(t) if t else float("nan")
        extra = ""
        if case:
            typ = name.split("_")[1] + "_" + name.split("_")[2]
            n, k = (14336, 4096) if "[14336" in case else (4096, 14336)
            extra = f" weight {BYTES[typ] * n * k / med / 1e6:.3f} TB/s"
        dram = f" dram read {statistics.median(bw):.3f} TB/s" if bw else ""
        print(f"{name:28s} {case:22s} n={len(t):4d} median {med:8.2f} us min {min(t) if t else 0:8.2f}{extra}{dram}")
