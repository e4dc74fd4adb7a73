"""Runs the wick CLI's model commands for the Python parity scripts.

The commands these scripts expect from wick:
  WICK tokenize MODEL TEXT --json
      prints the prompt's token ids as JSON on stdout: a list of ints ([1, 2, 3]); also accepted:
      {"ids": [...]} / {"tokens": [...]} / {"token_ids": [...]}, or a list of {"id": n, ...} objects.
      The ids include BOS when the model's tokenizer.ggml.add_bos_token says so.
  WICK generate MODEL -p TEXT -n 1 --temp 0 --dump-logits OUT.npy -d DEVICE
      writes the float32 logits of the last prompt position to OUT.npy (n_vocab values; any shape
      that flattens to n_vocab) and exits 0.
"""
import json
import subprocess

import numpy as np

TIMEOUT_S = 300


class WickError(RuntimeError):
    pass


def run(cmd, timeout=TIMEOUT_S):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise WickError(f"timed out after {timeout} s: {' '.join(cmd)}")
    except OSError as e:
        raise WickError(f"cannot run {cmd[0]}: {e}")
    if r.returncode != 0:
        tail = (r.stderr or r.stdout)[-3000:]
        raise WickError(f"exit status {r.returncode}: {' '.join(cmd)}\n{tail}")
    return r.stdout


def parse_tokenize_json(text):
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise WickError(f"tokenize --json printed no JSON ({e}): {text[:200]!r}")
    if isinstance(data, dict):
        for key in ("ids", "tokens", "token_ids"):
            if key in data:
                data = data[key]
                break
        else:
            raise WickError(f"tokenize --json: no ids/tokens key in {sorted(data)}")
    if not isinstance(data, list):
        raise WickError(f"tokenize --json: expected a list, got {type(data).__name__}")
    ids = []
    for item in data:
        if isinstance(item, dict):
            item = item.get("id")
        if not isinstance(item, int) or isinstance(item, bool):
            raise WickError(f"tokenize --json: not a token id: {item!r}")
        ids.append(item)
    return ids


def tokenize(wick, model, text):
    return parse_tokenize_json(run([wick, "tokenize", model, text, "--json"]))


def generate_logits(wick, model, text, device, out_npy):
    """The last prompt position's logits as a flat float64 array."""
    run([wick, "generate", model, "-p", text, "-n", "1", "--temp", "0", "--dump-logits", out_npy, "-d", device])
    try:
        x = np.load(out_npy)
    except (OSError, ValueError) as e:
        raise WickError(f"cannot read the --dump-logits file {out_npy}: {e}")
    return np.asarray(x, dtype=np.float64).ravel()
