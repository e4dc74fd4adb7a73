#!/usr/bin/env python3
"""Float64 NumPy forward pass of a GGUF llama / qwen2 / qwen3 model, written from the math.

The reference that the model runner's logits are checked against. It reads the file with
gguf.GGUFReader, dequantizes every tensor with gguf.quants.dequantize, and computes in float64:

  x = token_embd[tokens]
  per layer:  h = rmsnorm(x) * attn_norm
              q, k, v = Wq h (+ bq), Wk h (+ bk), Wv h (+ bv)          biases: qwen2
              q, k = rmsnorm(q_head) * attn_q_norm, rmsnorm(k_head) * attn_k_norm    qwen3
              q, k = rope(q), rope(k) at positions 0..T-1
              o = softmax(q k^T / sqrt(head_dim) + causal mask) v, query head h reading kv head
                  h // (n_head / n_head_kv)
              x = x + Wo o
              x = x + W_down(silu(W_gate h2) * W_up h2),  h2 = rmsnorm(x) * ffn_norm
  logits = W_out (rmsnorm(x) * output_norm), W_out = output.weight or, when absent, token_embd.weight
  rmsnorm(v) = v / sqrt(mean(v^2) + eps), eps = {arch}.attention.layer_norm_rms_epsilon

RoPE: angle_i = pos * freq_base^(-2i/n_rot) / rope_freqs[i] (rope_freqs.weight when present,
otherwise 1), i = 0 .. n_rot/2-1; (a, b) -> (a cos - b sin, a sin + b cos).
  llama: ggml's NORM mode, pair i = (x[2i], x[2i+1]). GGUF llama files hold Q/K rows permuted by
         the converter so that this equals Hugging Face's rotate-half on the original weights.
  qwen2, qwen3: NEOX mode, pair i = (x[i], x[i + n_rot/2]).

act_quant=True additionally simulates ggml's CPU matmul, which rounds the activations (the right
operand) of a weight of type T to T's "vec_dot type" before the dot products: Q8_0 for
Q4_0/Q5_0/Q8_0, Q8_1 for Q4_1/Q5_1 (the same 8-bit rounding as Q8_0, plus an f16 block sum),
Q8_K for the K-quants, f16 for F16 and bf16 for BF16; F32 weights see f32 activations. It
reproduces quantize_row_q8_0/q8_1/q8_K_ref:
  Q8_0/Q8_1 (32 per block): d = amax/127 (f32); q = roundf(x/d) (half away from zero); x' = q*f16(d)
  Q8_K (256 per block): m = the element of largest |x| (signed); s = -127/m;
                        q = min(127, rint(s*x)); x' = q/s
and, for Q4_1/Q5_1, the dot's min term m * s with Q8_1's s = f16(d * sum(q)) (f32 d) in place of
m * f16(d) * sum(q). Against llama.cpp's CPU backend (x86, AVX2) on check_logits.py's models this
reproduces the logits to NMSE ~1e-14, except where a few activations that the two computations
(f32 there, float64 here) place on either side of a rounding boundary round differently.
check_logits.py uses it to size the error allowed to a runner that quantizes activations.

  ref_forward.py MODEL --tokens 1,2,3 [--out logits.npy] [--all-positions] [--act-quant]
Without --all-positions the output is the last position's logits, shape (n_vocab,), float32 when
written to .npy (float64 with --f64). Needs numpy and gguf-py (PyPI `gguf`).
"""
import argparse
import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q
from gguf import quants

ROPE_MODE = {"llama": "norm", "qwen2": "neox", "qwen3": "neox"}
ACT_TYPE = {
    Q.F32: None, Q.F16: "f16", Q.BF16: "bf16",
    Q.Q4_0: "q8_0", Q.Q5_0: "q8_0", Q.Q8_0: "q8_0", Q.Q4_1: "q8_1", Q.Q5_1: "q8_1",
    Q.Q2_K: "q8_k", Q.Q3_K: "q8_k", Q.Q4_K: "q8_k", Q.Q5_K: "q8_k", Q.Q6_K: "q8_k",
}


class Model:
    """Hyper-parameters and float64 tensors of a GGUF model, in the row-major shapes of the math
    (a weight of GGUF shape [ne0, ne1] is a matrix of ne1 rows of ne0 elements)."""

    def __init__(self, path):
        self.reader = gguf.GGUFReader(path)
        self.meta = {k: f.contents() for k, f in self.reader.fields.items() if not k.startswith("GGUF.")}
        self.tensors = {t.name: t for t in self.reader.tensors}
        self._cache = {}
        a = self.arch = self.meta["general.architecture"]
        if a not in ROPE_MODE:
            raise ValueError(f"unsupported architecture {a!r} (have {sorted(ROPE_MODE)})")
        m = self.meta
        self.n_embd = int(m[f"{a}.embedding_length"])
        self.n_layer = int(m[f"{a}.block_count"])
        self.n_head = int(m[f"{a}.attention.head_count"])
        self.n_head_kv = int(m.get(f"{a}.attention.head_count_kv", self.n_head))
        self.head_dim = int(m.get(f"{a}.attention.key_length", self.n_embd // self.n_head))
        self.head_dim_v = int(m.get(f"{a}.attention.value_length", self.head_dim))
        self.n_rot = int(m.get(f"{a}.rope.dimension_count", self.head_dim))
        self.eps = float(m[f"{a}.attention.layer_norm_rms_epsilon"])
        self.freq_base = float(m.get(f"{a}.rope.freq_base", 10000.0))
        self.freq_scale = 1.0
        scaling = m.get(f"{a}.rope.scaling.type", "none")
        if scaling == "linear":
            self.freq_scale = 1.0 / float(m[f"{a}.rope.scaling.factor"])
        elif scaling != "none":
            raise ValueError(f"rope scaling {scaling!r} is not implemented by the reference")
        if self.n_head % self.n_head_kv:
            raise ValueError(f"n_head {self.n_head} is not a multiple of n_head_kv {self.n_head_kv}")
        if self.n_rot % 2 or self.n_rot > self.head_dim:
            raise ValueError(f"rope dimension count {self.n_rot} vs head dim {self.head_dim}")
        self.rope_mode = ROPE_MODE[a]
        self.attn_scale = 1.0 / np.sqrt(self.head_dim)
        self.n_vocab = int(self.tensors["token_embd.weight"].shape[1])

    def kv_head(self, h):
        return h // (self.n_head // self.n_head_kv)

    def has(self, name):
        return name in self.tensors

    def qtype(self, name):
        return self.tensors[name].tensor_type

    def get(self, name):
        if name not in self._cache:
            t = self.tensors[name]
            x = quants.dequantize(np.asarray(t.data), t.tensor_type)
            shape = tuple(int(n) for n in reversed(t.shape))
            self._cache[name] = np.asarray(x, dtype=np.float64).reshape(shape)
        return self._cache[name]

    def block_mins(self, name):
        """The f16 min m of every 32-element block of a Q4_1 / Q5_1 weight, (rows, blocks)."""
        t = self.tensors[name]
        size = gguf.GGML_QUANT_SIZES[t.tensor_type][1]
        raw = np.ascontiguousarray(np.asarray(t.data)).reshape(int(t.shape[1]), -1, size)
        return raw[:, :, 2:4].copy().view(np.float16)[..., 0].astype(np.float64)

    def output_name(self):
        return "output.weight" if self.has("output.weight") else "token_embd.weight"


# ---------------------------------------------------------------------------------------------
# activation rounding of ggml's CPU matmul (act_quant=True)


def _round_half_away(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def _f16(x):
    return np.asarray(x, dtype=np.float32).astype(np.float16).astype(np.float64)


def _bf16(x):
    return quants.dequantize(quants.quantize(np.asarray(x, dtype=np.float32), Q.BF16), Q.BF16).astype(np.float64)


def round_activations(x, act):
    """x (rows, n) float64 -> the values ggml's matmul sees after rounding to `act`."""
    if act is None:
        return x
    if act == "f16":
        return _f16(x)
    if act == "bf16":
        return _bf16(x)
    x32 = np.asarray(x, dtype=np.float32)
    if act in ("q8_0", "q8_1"):
        b = x32.reshape(*x32.shape[:-1], -1, 32)
        d = np.max(np.abs(b), axis=-1, keepdims=True) / np.float32(127)
        with np.errstate(divide="ignore"):
            inv = np.where(d > 0, np.float32(1) / d, np.float32(0)).astype(np.float32)
        q = _round_half_away((b * inv).astype(np.float32).astype(np.float64))
        return (q * _f16(d)).reshape(x.shape)
    if act == "q8_k":
        b = x32.reshape(*x32.shape[:-1], -1, 256)
        idx = np.argmax(np.abs(b), axis=-1)[..., None]
        m = np.take_along_axis(b, idx, axis=-1)
        with np.errstate(divide="ignore"):
            s = np.where(m != 0, np.float32(-127) / m, np.float32(0)).astype(np.float32)
            d = np.where(m != 0, np.float32(1) / s, np.float32(0)).astype(np.float32)
        q = np.minimum(127, np.rint((s * b).astype(np.float32).astype(np.float64)))
        return (q * d.astype(np.float64)).reshape(x.shape)
    raise ValueError(f"unknown activation type {act!r}")


def q8_1_sum_correction(x, mins):
    """ggml's Q4_1/Q5_1 x Q8_1 dot adds m * s per block, s = f16(d * sum(q)) with the f32 d, where
    the dequantized product has m * f16(d) * sum(q): returns the difference, (rows, out)."""
    b = np.asarray(x, dtype=np.float32).reshape(*x.shape[:-1], -1, 32)
    d = np.max(np.abs(b), axis=-1) / np.float32(127)
    with np.errstate(divide="ignore"):
        inv = np.where(d > 0, np.float32(1) / d, np.float32(0)).astype(np.float32)
    sumq = _round_half_away((b * inv[..., None]).astype(np.float32).astype(np.float64)).sum(axis=-1)
    s = _f16((d * sumq.astype(np.float32)).astype(np.float32))
    return (s - _f16(d) * sumq) @ mins.T


# ---------------------------------------------------------------------------------------------
# the forward pass


def rmsnorm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def rope(x, positions, model):
    """x (T, heads, head_dim): rotates the first n_rot dims of every head."""
    n_rot = model.n_rot
    i = np.arange(n_rot // 2, dtype=np.float64)
    inv_freq = model.freq_base ** (-2.0 * i / n_rot) * model.freq_scale
    if model.has("rope_freqs.weight"):
        inv_freq = inv_freq / model.get("rope_freqs.weight")
    ang = np.asarray(positions, dtype=np.float64)[:, None] * inv_freq[None, :]  # (T, n_rot/2)
    cos, sin = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
    out = x.copy()
    if model.rope_mode == "norm":
        a, b = x[..., 0:n_rot:2], x[..., 1:n_rot:2]
        out[..., 0:n_rot:2] = a * cos - b * sin
        out[..., 1:n_rot:2] = a * sin + b * cos
    else:
        half = n_rot // 2
        a, b = x[..., :half], x[..., half:n_rot]
        out[..., :half] = a * cos - b * sin
        out[..., half:n_rot] = a * sin + b * cos
    return out


def forward(model, tokens, act_quant=False, act_types=None):
    """Logits of every position, (T, n_vocab) float64. act_types: {weight type: activation type}
    for act_quant, default ggml's CPU pairing (ACT_TYPE)."""
    act_types = ACT_TYPE if act_types is None else act_types
    tokens = np.asarray(tokens, dtype=np.int64)
    if tokens.ndim != 1 or len(tokens) == 0:
        raise ValueError("tokens must be a non-empty 1-D sequence")
    if tokens.min() < 0 or tokens.max() >= model.n_vocab:
        raise ValueError(f"token id out of range 0..{model.n_vocab - 1}")
    T = len(tokens)
    pos = np.arange(T)
    eps = model.eps

    def mm(x, name):
        w = model.get(name)
        if act_quant:
            qt = model.qtype(name)
            y = round_activations(x, act_types[qt]) @ w.T
            if act_types[qt] == "q8_1" and qt in (Q.Q4_1, Q.Q5_1):
                y += q8_1_sum_correction(x, model.block_mins(name))
        else:
            y = x @ w.T
        bias = name[:-len("weight")] + "bias"
        if model.has(bias):
            y = y + model.get(bias)
        return y

    x = model.get("token_embd.weight")[tokens]
    mask = np.triu(np.full((T, T), -np.inf), k=1)
    hd, hdv = model.head_dim, model.head_dim_v
    for l in range(model.n_layer):
        b = f"blk.{l}."
        h = rmsnorm(x, model.get(b + "attn_norm.weight"), eps)
        q = mm(h, b + "attn_q.weight").reshape(T, model.n_head, hd)
        k = mm(h, b + "attn_k.weight").reshape(T, model.n_head_kv, hd)
        v = mm(h, b + "attn_v.weight").reshape(T, model.n_head_kv, hdv)
        if model.has(b + "attn_q_norm.weight"):
            q = rmsnorm(q, model.get(b + "attn_q_norm.weight"), eps)
        if model.has(b + "attn_k_norm.weight"):
            k = rmsnorm(k, model.get(b + "attn_k_norm.weight"), eps)
        q, k = rope(q, pos, model), rope(k, pos, model)
        o = np.empty((T, model.n_head, hdv))
        for hh in range(model.n_head):
            g = model.kv_head(hh)
            s = q[:, hh, :] @ k[:, g, :].T * model.attn_scale + mask
            p = np.exp(s - s.max(axis=-1, keepdims=True))
            p /= p.sum(axis=-1, keepdims=True)
            o[:, hh, :] = p @ v[:, g, :]
        x = x + mm(o.reshape(T, model.n_head * hdv), b + "attn_output.weight")
        h = rmsnorm(x, model.get(b + "ffn_norm.weight"), eps)
        gate = mm(h, b + "ffn_gate.weight")
        up = mm(h, b + "ffn_up.weight")
        x = x + mm(gate / (1.0 + np.exp(-gate)) * up, b + "ffn_down.weight")
    x = rmsnorm(x, model.get("output_norm.weight"), eps)
    return mm(x, model.output_name())


def parse_tokens(s):
    try:
        return [int(t) for t in s.replace(" ", "").split(",") if t != ""]
    except ValueError:
        raise argparse.ArgumentTypeError(f"token ids must be comma-separated integers, got {s!r}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("model")
    p.add_argument("--tokens", required=True, type=parse_tokens, help="comma-separated token ids")
    p.add_argument("--out", help="write the logits to this .npy file")
    p.add_argument("--all-positions", action="store_true", help="logits of every position, (T, n_vocab)")
    p.add_argument("--act-quant", action="store_true", help="simulate ggml's CPU activation quantization")
    p.add_argument("--f64", action="store_true", help="write float64 instead of float32")
    a = p.parse_args(argv)
    try:
        model = Model(a.model)
        logits = forward(model, a.tokens, act_quant=a.act_quant)
    except (ValueError, KeyError) as e:
        print(f"ref_forward: {e}", file=sys.stderr)
        return 2
    out = logits if a.all_positions else logits[-1]
    if a.out:
        np.save(a.out, out if a.f64 else out.astype(np.float32))
    last = logits[-1]
    top = np.argsort(-last)[:5]
    print(f"{model.arch}: {len(a.tokens)} tokens, n_vocab {model.n_vocab}; last position argmax {top[0]}, "
          f"top5 {top.tolist()}, logits mean {last.mean():.4f} std {last.std():.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
