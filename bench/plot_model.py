#!/usr/bin/env python3
"""Plots a model run's tokens per second, wick beside llama.cpp, per weight type.

usage: plot_model.py RUN_JSON OUT_PNG
RUN_JSON is a bench/results/*-model.json record (wick bench-model's figures and the peer's).
Needs matplotlib.
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    rec = json.load(open(sys.argv[1]))
    rows = rec["rows"]
    names = [r["weights"] for r in rows]
    x = range(len(rows))
    w = 0.38
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, (test, peer_key, title) in zip(axes, (("tg128", "peer_tg128", "decode, tg128"),
                                                  ("pp512", "peer_pp512", "prefill, pp512"))):
        wick = [r[test] for r in rows]
        peer = [r[peer_key] for r in rows]
        ax.bar([i - w / 2 for i in x], wick, w, yerr=[r[test + "_sd"] for r in rows], label="wick")
        ax.bar([i + w / 2 for i in x], peer, w, label=rec["peer"]["name"])
        if test == "tg128":
            ax.plot([i - w / 2 for i in x], [r["tg128_d4096"] for r in rows], "kv", label="wick @ depth 4096")
        ax.set_xticks(list(x), names)
        ax.set_ylabel("tokens/s")
        ax.set_title(title)
        ax.legend(fontsize=8)
    fig.suptitle(f"{rec['models']}\n{rec['device'].split(',')[0]}, {rec['date']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=80)
    return 0


if __name__ == "__main__":
    sys.exit(main())
