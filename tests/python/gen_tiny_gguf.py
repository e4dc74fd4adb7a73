#!/usr/bin/env python3
"""Writes tiny random-weight GGUF language models for the model-runner parity tests.

Architectures (llama.cpp's GGUF conventions for keys and tensor names):
  llama  Llama 2/3: untied by default; --tied drops output.weight (the output projection is then
         token_embd.weight); --rope-freqs adds rope_freqs.weight, the per-pair frequency factors of
         Llama 3.1's rope scaling (computed with its formula, on a short original context so that the
         factors change the rotation angles of short prompts)
  qwen2  q/k/v projection biases (attn_q.bias, attn_k.bias, attn_v.bias), NEOX rope
  qwen3  per-head RMS norms of q and k (attn_q_norm / attn_k_norm), head dim from
         qwen3.attention.key_length (64, not n_embd / n_head = 32), NEOX rope
All three use grouped-query attention (n_head_kv < n_head).

Weight types: f32 f16 bf16 q4_0 q4_1 q5_0 q5_1 q8_0 q2_k q3_k q4_k q5_k q6_k. The 2-D weights take
--type; token_embd and output may take another (--embd-type, --output-type), as real files mix
them. 1-D tensors (norm weights, biases, rope_freqs) stay F32, as llama.cpp keeps them.

How the weights are made: every tensor draws from its own generator, seeded from (--seed, tensor
name), so two models with the same seed and different types share their float weights.
  f32/f16/bf16 and the 32-element quants: Gaussian floats (a per-tensor standard deviation of about
  1/sqrt(fan_in)), rounded (f16, bf16) or quantized with gguf.quants.quantize.
  K-quants (no quantizer in gguf-py): random block bytes, then every super-block's f16 scale d (and
  dmin, for the types with mins) is overwritten with a finite normal f16 so that the tensor has the
  same standard deviation as the Gaussian one, varied by +-25 % per super-block. dmin is tied to d so
  that the expected weight is zero (Q2_K: q in 0..3, dmin = 1.5 d; Q4_K: q in 0..15, dmin = 7.5 d;
  Q5_K: q in 0..31, dmin = 15.5 d). Q6_K's int8 sub-block scales are redrawn in -32..31 so that d
  stays well above the f16 subnormal range.
K-quant rows are 256 elements long, so every row length (n_embd, n_ff, n_head * head_dim) is a
multiple of 256 in every architecture: the three shapes below serve every type.

Tokenizer: byte-level BPE (tokenizer.ggml.model = gpt2, pre = gpt-2): the 256 byte tokens in GPT-2's
order (so a token id is not its byte value), a few merges and their tokens, and four control tokens.
tokenize() below is a plain implementation of that tokenizer for ASCII text (GPT-2's pre-token regex
with \\p{L} = [A-Za-z], \\p{N} = [0-9]) that the tests compare the runner's tokenizer with.

  gen_tiny_gguf.py --arch llama --type q4_k [--embd-type q8_0] [--output-type q6_k] [--tied]
                   [--rope-freqs] [--layers N] [--seed N] --out model.gguf
Needs numpy and gguf-py (PyPI `gguf`).
"""
import argparse
import math
import re
import sys
import zlib

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q
from gguf import quants

WEIGHT_TYPES = ["f32", "f16", "bf16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0",
                "q2_k", "q3_k", "q4_k", "q5_k", "q6_k"]
QTYPE = {name: Q[name.upper()] for name in WEIGHT_TYPES}
FILE_TYPE = {
    "f32": gguf.LlamaFileType.ALL_F32, "f16": gguf.LlamaFileType.MOSTLY_F16,
    "bf16": gguf.LlamaFileType.MOSTLY_BF16, "q4_0": gguf.LlamaFileType.MOSTLY_Q4_0,
    "q4_1": gguf.LlamaFileType.MOSTLY_Q4_1, "q5_0": gguf.LlamaFileType.MOSTLY_Q5_0,
    "q5_1": gguf.LlamaFileType.MOSTLY_Q5_1, "q8_0": gguf.LlamaFileType.MOSTLY_Q8_0,
    "q2_k": gguf.LlamaFileType.MOSTLY_Q2_K, "q3_k": gguf.LlamaFileType.MOSTLY_Q3_K_M,
    "q4_k": gguf.LlamaFileType.MOSTLY_Q4_K_M, "q5_k": gguf.LlamaFileType.MOSTLY_Q5_K_M,
    "q6_k": gguf.LlamaFileType.MOSTLY_Q6_K,
}

# Shapes: n_embd, n_ff and n_head * head_dim are multiples of 256 (the K-quant row length).
ARCHS = {
    "llama": dict(n_embd=256, n_head=8, n_head_kv=2, head_dim=32, n_ff=512, rope_base=10000.0,
                  eps=1e-5, add_bos=True),
    "qwen2": dict(n_embd=256, n_head=4, n_head_kv=2, head_dim=64, n_ff=512, rope_base=1000000.0,
                  eps=1e-6, add_bos=False),
    "qwen3": dict(n_embd=256, n_head=8, n_head_kv=4, head_dim=64, n_ff=512, rope_base=1000000.0,
                  eps=1e-6, add_bos=False),
}
CONTEXT_LENGTH = 512

# Llama 3.1 rope scaling parameters for rope_freqs.weight; original_max_position_embeddings is
# small so that the factors affect short prompts.
LLAMA31_ROPE = dict(factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0, original_context=32)


# ---------------------------------------------------------------------------------------------
# tokenizer


def bytes_to_unicode():
    """GPT-2's byte -> printable unicode character map, in GPT-2's vocabulary order."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return list(zip(bs, [chr(c) for c in cs]))


# Merges in rank order, in byte-level unicode ("Ġ" is the space byte); each one's result is a token.
MERGES = ["Ġ t", "h e", "i n", "Ġt he", "e r", "o n", "Ġ a", "r e", "a t", "e n", "o r", "l l",
          "i s", "Ġ w", "Ġ s", "Ġ o", "Ġ i", "in g", "Ġ c", "e s", "Ġw i", "c k", "Ġwi ck", "l o",
          "H e", "ll o", "He llo", "Ġ l", "Ġl i", "Ġli t", "o u", "Ġ 1", "Ġ 2", ". .", "Ġ ,"]
SPECIALS = ["<|begin_of_text|>", "<|end_of_text|>", "<|im_start|>", "<|im_end|>"]
TOKEN_NORMAL, TOKEN_CONTROL = 1, 3


def build_vocab():
    """(tokens, token_types, merges, bos_id, eos_id)."""
    tokens = [u for _, u in bytes_to_unicode()]
    seen = set(tokens)
    for m in MERGES:
        a, b = m.split(" ")
        assert a in seen and b in seen, f"merge {m!r} uses a token not yet in the vocabulary"
        if a + b not in seen:
            tokens.append(a + b)
            seen.add(a + b)
    types = [TOKEN_NORMAL] * len(tokens)
    bos = len(tokens)
    tokens += SPECIALS
    types += [TOKEN_CONTROL] * len(SPECIALS)
    return tokens, types, list(MERGES), bos, bos + 1


# GPT-2's pre-tokenizer regex for ASCII text.
_PRE = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+""")


def _bpe(word, ranks):
    parts = list(word)
    while len(parts) > 1:
        best = min(range(len(parts) - 1), key=lambda i: ranks.get((parts[i], parts[i + 1]), math.inf))
        if (parts[best], parts[best + 1]) not in ranks:
            break
        parts[best:best + 2] = [parts[best] + parts[best + 1]]
    return parts


def tokenize(text, add_bos):
    """Token ids of ASCII `text` under this module's vocabulary (byte-level BPE, GPT-2 rules)."""
    if any(ord(c) > 127 for c in text):
        raise ValueError("tokenize() handles ASCII text only")
    tokens, _, merges, bos, _ = build_vocab()
    index = {t: i for i, t in enumerate(tokens)}
    ranks = {tuple(m.split(" ")): r for r, m in enumerate(merges)}
    byte_char = dict(bytes_to_unicode())
    ids = [bos] if add_bos else []
    for piece in _PRE.findall(text):
        word = "".join(byte_char[b] for b in piece.encode("utf-8"))
        ids += [index[p] for p in _bpe(word, ranks)]
    return ids


def detokenize(ids):
    tokens, types, _, _, _ = build_vocab()
    char_byte = {u: b for b, u in bytes_to_unicode()}
    out = bytearray()
    for i in ids:
        if types[i] == TOKEN_NORMAL:
            out += bytes(char_byte[c] for c in tokens[i])
    return out.decode("utf-8", errors="replace")


# ---------------------------------------------------------------------------------------------
# weights

# byte offsets of a K-quant super-block's f16 d (and dmin) fields (ggml-common.h), and dmin / d
K_FIELDS = {
    "q2_k": dict(d=80, dmin=82, ratio=1.5),
    "q3_k": dict(d=108),
    "q4_k": dict(d=0, dmin=2, ratio=7.5),
    "q5_k": dict(d=0, dmin=2, ratio=15.5),
    "q6_k": dict(d=208),
}
F16_MIN_NORMAL = 2.0 ** -14


def tensor_rng(seed, name):
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def _f16_bytes(x):
    return np.asarray(x, dtype=np.float16).view(np.uint8).reshape(-1, 2)


def random_k_blocks(rng, rows, cols, wtype, std):
    """Random K-quant blocks dequantizing to finite values of standard deviation about `std`."""
    qtype = QTYPE[wtype]
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    if cols % block:
        raise ValueError(f"{wtype} needs rows of a multiple of {block} elements, got {cols}")
    nb = rows * cols // block
    raw = rng.integers(0, 256, size=(nb, size), dtype=np.uint8)
    if wtype == "q6_k":
        raw[:, 192:208] = rng.integers(-32, 32, size=(nb, 16)).astype(np.int8).view(np.uint8)
    f = K_FIELDS[wtype]
    ratio = f.get("ratio", 0.0)
    # the dequantized values are linear in (d, dmin): measure them at d = 1, dmin = ratio
    raw[:, f["d"]:f["d"] + 2] = _f16_bytes(np.ones(nb))
    if "dmin" in f:
        raw[:, f["dmin"]:f["dmin"] + 2] = _f16_bytes(np.full(nb, ratio))
    unit = quants.dequantize(raw, qtype).astype(np.float64)
    d = std / unit.std() * rng.uniform(0.75, 1.25, size=nb)
    assert d.min() > F16_MIN_NORMAL, f"{wtype}: block scale {d.min()} too close to subnormal"
    raw[:, f["d"]:f["d"] + 2] = _f16_bytes(d)
    if "dmin" in f:
        raw[:, f["dmin"]:f["dmin"] + 2] = _f16_bytes(ratio * d)
    return raw.reshape(rows, cols // block * size)


def make_matrix(seed, name, rows, cols, wtype, std):
    """(array, raw_dtype) for GGUFWriter.add_tensor: a rows x cols weight of type wtype."""
    rng = tensor_rng(seed, name)
    if wtype in K_FIELDS:
        return random_k_blocks(rng, rows, cols, wtype, std), QTYPE[wtype]
    x = (rng.standard_normal((rows, cols)) * std).astype(np.float32)
    if wtype == "f32":
        return x, None
    if wtype == "f16":
        return x.astype(np.float16), None
    return quants.quantize(x, QTYPE[wtype]), QTYPE[wtype]


def llama31_rope_factors(base, head_dim, factor, low_freq_factor, high_freq_factor, original_context):
    """Llama 3.1's rope frequency factors (one per rotated pair), as the GGUF converter writes them."""
    factors = []
    for i in range(0, head_dim, 2):
        wavelen = 2 * math.pi * base ** (i / head_dim)
        if wavelen < original_context / high_freq_factor:
            factors.append(1.0)
        elif wavelen > original_context / low_freq_factor:
            factors.append(factor)
        else:
            smooth = (original_context / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
            factors.append(1.0 / ((1 - smooth) / factor + smooth))
    return np.array(factors, dtype=np.float32)


def write_model(path, arch, wtype, *, embd_type=None, output_type=None, tied=False, rope_freqs=False,
                layers=2, seed=0):
    """Writes the model; returns a dict of its hyper-parameters (for tests)."""
    if arch not in ARCHS:
        raise ValueError(f"unknown architecture {arch!r} (have {sorted(ARCHS)})")
    for t in (wtype, embd_type, output_type):
        if t is not None and t not in QTYPE:
            raise ValueError(f"unknown weight type {t!r} (have {WEIGHT_TYPES})")
    if rope_freqs and arch != "llama":
        raise ValueError("rope_freqs.weight is a llama-architecture tensor")
    hp = dict(ARCHS[arch])
    embd_type = embd_type or wtype
    output_type = output_type or wtype
    tokens, types, merges, bos, eos = build_vocab()
    n_vocab = len(tokens)
    n_embd, n_head, n_head_kv, hd, n_ff = (hp[k] for k in ("n_embd", "n_head", "n_head_kv", "head_dim", "n_ff"))

    w = gguf.GGUFWriter(path, arch)
    w.add_name(f"tiny-{arch}-{wtype}")
    w.add_file_type(int(FILE_TYPE[wtype]))
    w.add_quantization_version(gguf.GGML_QUANT_VERSION)
    w.add_context_length(CONTEXT_LENGTH)
    w.add_embedding_length(n_embd)
    w.add_block_count(layers)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head_kv)
    w.add_layer_norm_rms_eps(hp["eps"])
    w.add_rope_freq_base(hp["rope_base"])
    w.add_rope_dimension_count(hd)
    w.add_key_length(hd)
    w.add_value_length(hd)
    w.add_vocab_size(n_vocab)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(bos)
    w.add_eos_token_id(eos)
    w.add_add_bos_token(hp["add_bos"])

    def matrix(name, rows, cols, t, std):
        arr, raw = make_matrix(seed, name, rows, cols, t, std)
        if raw is None:
            w.add_tensor(name, arr)
        else:
            w.add_tensor(name, arr, raw_dtype=raw)

    def vector(name, n, mean, std):
        rng = tensor_rng(seed, name)
        w.add_tensor(name, (mean + std * rng.standard_normal(n)).astype(np.float32))

    # q/k get a gain of 1.5 so that attention is far from uniform (scores of standard deviation ~2)
    matrix("token_embd.weight", n_vocab, n_embd, embd_type, 0.5)
    if rope_freqs:
        w.add_tensor("rope_freqs.weight", llama31_rope_factors(hp["rope_base"], hd, **LLAMA31_ROPE))
    for i in range(layers):
        b = f"blk.{i}"
        vector(f"{b}.attn_norm.weight", n_embd, 1.0, 0.1)
        matrix(f"{b}.attn_q.weight", n_head * hd, n_embd, wtype, 1.5 / math.sqrt(n_embd))
        matrix(f"{b}.attn_k.weight", n_head_kv * hd, n_embd, wtype, 1.5 / math.sqrt(n_embd))
        matrix(f"{b}.attn_v.weight", n_head_kv * hd, n_embd, wtype, 1.0 / math.sqrt(n_embd))
        if arch == "qwen2":
            vector(f"{b}.attn_q.bias", n_head * hd, 0.0, 0.5)
            vector(f"{b}.attn_k.bias", n_head_kv * hd, 0.0, 0.5)
            vector(f"{b}.attn_v.bias", n_head_kv * hd, 0.0, 0.5)
        if arch == "qwen3":
            vector(f"{b}.attn_q_norm.weight", hd, 1.0, 0.2)
            vector(f"{b}.attn_k_norm.weight", hd, 1.0, 0.2)
        matrix(f"{b}.attn_output.weight", n_embd, n_head * hd, wtype, 1.0 / math.sqrt(n_head * hd))
        vector(f"{b}.ffn_norm.weight", n_embd, 1.0, 0.1)
        matrix(f"{b}.ffn_gate.weight", n_ff, n_embd, wtype, 1.0 / math.sqrt(n_embd))
        matrix(f"{b}.ffn_up.weight", n_ff, n_embd, wtype, 1.0 / math.sqrt(n_embd))
        matrix(f"{b}.ffn_down.weight", n_embd, n_ff, wtype, 1.0 / math.sqrt(n_ff))
    vector("output_norm.weight", n_embd, 1.0, 0.1)
    if not tied:
        matrix("output.weight", n_vocab, n_embd, output_type, 1.0 / math.sqrt(n_embd))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return dict(hp, arch=arch, n_vocab=n_vocab, layers=layers, bos=bos, eos=eos)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--arch", required=True, choices=sorted(ARCHS))
    p.add_argument("--type", required=True, choices=WEIGHT_TYPES, help="type of the 2-D weights")
    p.add_argument("--embd-type", choices=WEIGHT_TYPES, help="type of token_embd.weight (default --type)")
    p.add_argument("--output-type", choices=WEIGHT_TYPES, help="type of output.weight (default --type)")
    p.add_argument("--tied", action="store_true", help="no output.weight: logits use token_embd.weight")
    p.add_argument("--rope-freqs", action="store_true", help="llama: add rope_freqs.weight (Llama 3.1 scaling)")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    try:
        write_model(a.out, a.arch, a.type, embd_type=a.embd_type, output_type=a.output_type, tied=a.tied,
                    rope_freqs=a.rope_freqs, layers=a.layers, seed=a.seed)
    except ValueError as e:
        print(f"gen_tiny_gguf: {e}", file=sys.stderr)
        return 2
    print(f"wrote {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
