#!/usr/bin/env python3
"""A stand-in for the wick CLI's tokenize and generate commands, to test check_logits.py itself.

  fake_wick.py tokenize MODEL TEXT --json
  fake_wick.py generate MODEL -p TEXT -n 1 --temp 0 --dump-logits OUT.npy -d DEVICE
It tokenizes with gen_tiny_gguf.tokenize (so only the tiny models' vocabulary) and computes the
logits with ref_forward in float64 with ggml's activation rounding, written as float32: a runner
that does what the bound assumes. FAKE_WICK_BREAK=<mutation name of check_logits.MUTATIONS> makes
it compute a wrong forward pass instead; FAKE_WICK_BREAK=tokenizer drops the first id.
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_tiny_gguf as gen  # noqa: E402
import ref_forward as ref  # noqa: E402


def ids_of(model_path, text):
    m = ref.Model(model_path)
    ids = gen.tokenize(text, bool(m.meta.get("tokenizer.ggml.add_bos_token", False)))
    if os.environ.get("FAKE_WICK_BREAK") == "tokenizer":
        ids = ids[1:]
    return ids


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("tokenize")
    t.add_argument("model")
    t.add_argument("text")
    t.add_argument("--json", action="store_true")
    g = sub.add_parser("generate")
    g.add_argument("model")
    g.add_argument("-p", required=True)
    g.add_argument("-n", type=int, required=True)
    g.add_argument("--temp", type=float, required=True)
    g.add_argument("--dump-logits", required=True)
    g.add_argument("-d", default="cpu")
    a = p.parse_args()
    if a.cmd == "tokenize":
        print(json.dumps(ids_of(a.model, a.text)))
        return 0
    m = ref.Model(a.model)
    broken = os.environ.get("FAKE_WICK_BREAK")
    if broken and broken != "tokenizer":
        import check_logits
        check_logits.MUTATIONS[broken](m)
    logits = ref.forward(m, ids_of(a.model, a.p), act_quant=True)[-1]
    np.save(a.dump_logits, logits.astype(np.float32))
    return 0


if __name__ == "__main__":
    sys.exit(main())
