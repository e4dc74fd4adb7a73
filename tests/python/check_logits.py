#!/usr/bin/env python3
"""Checks wick's model runner against the float64 NumPy reference on tiny random GGUF models.

For every case below (architecture x weight types), the script writes the model with
gen_tiny_gguf.py into a temporary folder, then
  1. ids = `WICK tokenize MODEL TEXT --json`; they must equal gen_tiny_gguf.tokenize(TEXT) (the
     byte-level BPE written from the tokenizer's rules; BOS first when add_bos_token is set);
  2. `WICK generate MODEL -p TEXT -n 1 --temp 0 --dump-logits OUT.npy -d DEVICE` writes the last
     prompt position's logits (float32, n_vocab values);
  3. ref_forward.forward(MODEL, ids) computes the same logits in float64 from the dequantized
     weights, and NMSE = sum((wick - ref)^2) / sum(ref^2) must stay within the case's bound.

The bound. A float computation of this network in f32 lands ~1e-12 from float64; the f32
models get NMSE < 1e-5 (F32_BOUND), which leaves room for any order of summation and is still
far below the effect of a real mistake (see --self-test: a wrong rope layout, kv-head mapping,
attention scale, missing bias or q/k norm moves the logits by NMSE 1e-2 .. 1).
Models with f16/bf16/quantized weights add one source of error that a correct runner has: ggml's
CPU matmul, which wick's copies, rounds the activations to the weight's "vec_dot type" before the
dot products (Q8_0 for Q4_0/Q5_0/Q8_0, Q8_1 for Q4_1/Q5_1, Q8_K for the K-quants, f16 / bf16 for
F16 / BF16; the 8-bit ones err by ~1e-2 of the block maximum per element). The bound is therefore
measured, not guessed: ref_forward's act_quant mode repeats that rounding in float64 (same block
scales, same rounding rule), and e_sim = NMSE(simulated, exact) is the error that rounding alone
makes on this model and prompt. The case passes when
        NMSE(wick, exact) <= max(F32_BOUND, ACT_FACTOR * e_sim),   ACT_FACTOR = 4.
A runner that rounds as ggml does lands at e_sim: llama.cpp's CPU backend (llama-cpp-python 0.3.36,
x86 AVX2, f32 KV cache) run on these 19 models loads them, tokenizes the prompts to the same ids,
and gives NMSE 1e-13 on the f32 models and 0.94 .. 1.10 x e_sim on the others. Its distance to
the simulation itself is 1e-14, or up to 0.3 x e_sim where its f32 arithmetic puts one or two
activations of the prompt on the other side of a rounding boundary (the output shows NMSE(wick,
simulation) as a diagnostic). A runner that rounds to another 8-bit format of the same precision
(ggml's CUDA backend uses Q8_1 for every quantized type) makes a different draw of an error of the
same size, which --self-test measures at 0.1 .. 2.2 x e_sim (asserting <= ACT_FACTOR); one that
does not round activations lands near 0. On these models e_sim is 1e-4 .. 1e-3 for the 8-bit
formats, 1e-5 for bf16, 6e-7 for f16. Mistakes in the model's wiring exceed the bound by far:
--self-test asserts that every mutation's NMSE (wrong rope layout, rope_freqs ignored, kv-head
mapping, attention scale, biases or q/k norms ignored) is above 10 x the bound of its case
(measured: 30 .. 1e5 x). The resolution has a limit: a slip confined to a small part of one
quantized matrix (1.25x on one 32-column sub-block of ffn_up: NMSE 2e-4 .. 6e-3) can stay within
the bound; per-type dequantization and quantized matmuls have their own unit tests against gguf-py.

  check_logits.py --wick PATH_TO_WICK_CLI [--device cpu|gpu:0] [--quick] [--cases a,b] [--keep DIR]
  check_logits.py --self-test [--quick]   the generator and reference alone (no wick): finite,
                                          non-degenerate logits for every case, a hand-computed
                                          1-layer model, causality, tokenizer round trips,
                                          quantized-vs-f32 closeness, the bound's derivation and
                                          its power to reject mutated forward passes
  check_logits.py --list
Exit status 0 when every case passes, 1 otherwise (each failure named on stderr), 2 on bad usage,
3 when numpy or gguf is missing. The last line reads "N passed, N failed".
"""
import argparse
import math
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field

try:
    import numpy as np
    import gguf
    from gguf import GGMLQuantizationType as Q
except ImportError as e:  # pragma: no cover
    print(f"check_logits: missing python package: {e} (scripts/install-deps.sh installs numpy and gguf)",
          file=sys.stderr)
    sys.exit(3)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_tiny_gguf as gen  # noqa: E402
import ref_forward as ref  # noqa: E402
import wick_cli  # noqa: E402

F32_BOUND = 1e-5
ACT_FACTOR = 4.0
MUTATION_MARGIN = 10.0

PROMPTS = [
    "Hello world, the wick is lit.",
    "in the beginning there was a wick; it is 12 .. 21 long",
    "Once upon a time,  the  wick was lit in 2024!",
]


@dataclass
class Case:
    name: str
    arch: str
    wtype: str
    embd_type: str = None
    output_type: str = None
    tied: bool = False
    rope_freqs: bool = False
    quick: bool = False
    prompt: str = field(default=None)

    def options(self):
        return dict(embd_type=self.embd_type, output_type=self.output_type, tied=self.tied,
                    rope_freqs=self.rope_freqs)

    def types(self):
        t = {self.wtype, self.embd_type or self.wtype}
        if not self.tied:
            t.add(self.output_type or self.wtype)
        return t


# Every weight type wick reads appears in some case; each architecture has f32 and several
# quantized cases, some with token_embd / output in another type as real files have.
CASES = [
    Case("llama-f32", "llama", "f32", quick=True),
    Case("llama31-f32", "llama", "f32", tied=True, rope_freqs=True, quick=True),
    Case("llama-f16", "llama", "f16"),
    Case("llama-q4_0", "llama", "q4_0", quick=True),
    Case("llama-q8_0", "llama", "q8_0"),
    Case("llama31-q4_k", "llama", "q4_k", tied=True, rope_freqs=True),
    Case("llama-q6_k", "llama", "q6_k"),
    Case("llama-q4_1-embd_q8_0", "llama", "q4_1", embd_type="q8_0", tied=True),  # SmolLM2 Q4_1's layout
    Case("qwen2-f32", "qwen2", "f32", quick=True),
    Case("qwen2-bf16", "qwen2", "bf16"),
    Case("qwen2-q4_1", "qwen2", "q4_1", quick=True),
    Case("qwen2-q5_0", "qwen2", "q5_0"),
    Case("qwen2-q2_k", "qwen2", "q2_k"),
    Case("qwen2-q5_k-out_q6_k", "qwen2", "q5_k", output_type="q6_k"),
    Case("qwen3-f32", "qwen3", "f32", tied=True, quick=True),
    Case("qwen3-q5_1", "qwen3", "q5_1"),
    Case("qwen3-q3_k", "qwen3", "q3_k"),
    Case("qwen3-q4_k-out_q6_k", "qwen3", "q4_k", output_type="q6_k", quick=True),
    Case("qwen3-q8_0", "qwen3", "q8_0", tied=True),
]
for _i, _c in enumerate(CASES):
    _c.prompt = PROMPTS[_i % len(PROMPTS)]


def nmse(x, r):
    x = np.asarray(x, dtype=np.float64)
    r = np.asarray(r, dtype=np.float64)
    return float(np.sum((x - r) ** 2) / np.sum(r ** 2))


class Report:
    def __init__(self):
        self.passed, self.failed = 0, []

    def check(self, ok, what, detail=""):
        if ok:
            self.passed += 1
            print(f"  ok    {what}{': ' + detail if detail else ''}")
        else:
            self.failed.append(what)
            print(f"  FAIL  {what}{': ' + detail if detail else ''}")
        sys.stdout.flush()
        return ok

    def finish(self):
        for f in self.failed:
            print(f"check_logits: FAILED {f}", file=sys.stderr)
        print(f"{self.passed} passed, {len(self.failed)} failed")
        return 0 if not self.failed else 1


def bound_for(model, ids, exact):
    """(bound, e_sim, simulated logits) of a case; e_sim and sim are None for all-f32 models."""
    if all(model.qtype(n) == Q.F32 for n in model.tensors):
        return F32_BOUND, None, None
    sim = ref.forward(model, ids, act_quant=True)[-1]
    e_sim = nmse(sim, exact)
    return max(F32_BOUND, ACT_FACTOR * e_sim), e_sim, sim


def write_case(case, folder, seed=0):
    path = os.path.join(folder, f"{case.name}.gguf")
    gen.write_model(path, case.arch, case.wtype, seed=seed, **case.options())
    return path


# ---------------------------------------------------------------------------------------------
# against wick


def run_wick(args, cases, folder):
    rep = Report()
    wick = os.path.abspath(args.wick)
    for case in cases:
        print(f"{case.name}: {case.arch}, weights {'/'.join(sorted(case.types()))}"
              f"{', tied' if case.tied else ''}{', rope_freqs' if case.rope_freqs else ''}; prompt {case.prompt!r}")
        path = write_case(case, folder)
        model = ref.Model(path)
        add_bos = gen.ARCHS[case.arch]["add_bos"]
        expect_ids = gen.tokenize(case.prompt, add_bos)
        try:
            ids = wick_cli.tokenize(wick, path, case.prompt)
        except wick_cli.WickError as e:
            rep.check(False, f"{case.name} tokenize", str(e))
            continue
        rep.check(ids == expect_ids, f"{case.name} tokenize",
                  f"{len(ids)} ids" if ids == expect_ids else f"wick {ids} != expected {expect_ids}")
        if not ids or min(ids) < 0 or max(ids) >= model.n_vocab:
            rep.check(False, f"{case.name} logits", f"token ids out of range: {ids}")
            continue
        t0 = time.time()
        try:
            logits = wick_cli.generate_logits(wick, path, case.prompt, args.device,
                                              os.path.join(folder, f"{case.name}.logits.npy"))
        except wick_cli.WickError as e:
            rep.check(False, f"{case.name} logits", str(e))
            continue
        secs = time.time() - t0
        if logits.size != model.n_vocab or not np.all(np.isfinite(logits)):
            rep.check(False, f"{case.name} logits",
                      f"{logits.size} values (n_vocab {model.n_vocab}), "
                      f"{int(np.count_nonzero(~np.isfinite(logits)))} non-finite")
            continue
        exact = ref.forward(model, ids)[-1]
        bound, e_sim, sim_logits = bound_for(model, ids, exact)
        e = nmse(logits, exact)
        agree = int(np.argmax(logits)) == int(np.argmax(exact))
        # diagnostic only: a runner rounding exactly as ggml's CPU does is far closer to sim than e_sim
        sim = "" if e_sim is None else \
            f", e_sim {e_sim:.2e}, vs the ggml-rounding simulation {nmse(logits, sim_logits):.2e}"
        rep.check(e <= bound, f"{case.name} logits",
                  f"NMSE {e:.3e} (bound {bound:.1e}{sim}), max |diff| {np.max(np.abs(logits - exact)):.3g}, "
                  f"argmax {'agrees' if agree else 'differs'}, wick {secs:.1f} s")
    return rep


# ---------------------------------------------------------------------------------------------
# self-test: the generator and the reference, without wick


def hand_model(path):
    """1 layer, n_embd 4, 1 head of dim 4, n_ff 1, vocab 4, identity projections, llama (NORM rope)."""
    eps, base = 1e-5, 100.0
    w = gguf.GGUFWriter(path, "llama")
    w.add_context_length(16)
    w.add_embedding_length(4)
    w.add_block_count(1)
    w.add_feed_forward_length(1)
    w.add_head_count(1)
    w.add_head_count_kv(1)
    w.add_layer_norm_rms_eps(eps)
    w.add_rope_freq_base(base)
    w.add_rope_dimension_count(4)
    f32 = lambda a: np.asarray(a, dtype=np.float32)  # noqa: E731
    eye = np.eye(4)
    w.add_tensor("token_embd.weight", f32([[1, -1, 1, 1], [2, 0, 0, 0], [0, 0, 3, 0], [0, 0, 0, 1]]))
    for n in ("attn_norm", "ffn_norm"):
        w.add_tensor(f"blk.0.{n}.weight", f32(np.ones(4)))
    for n in ("attn_q", "attn_k", "attn_v", "attn_output"):
        w.add_tensor(f"blk.0.{n}.weight", f32(eye))
    w.add_tensor("blk.0.ffn_gate.weight", f32([[1, 0, 0, 0]]))  # gate = h[0]
    w.add_tensor("blk.0.ffn_up.weight", f32([[0, 1, 0, 0]]))  # up = h[1]
    w.add_tensor("blk.0.ffn_down.weight", f32([[0], [0], [0], [1]]))  # into dim 3
    w.add_tensor("output_norm.weight", f32(np.ones(4)))
    w.add_tensor("output.weight", f32(eye))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return eps, base


def hand_expected(eps, base):
    """Logits of tokens [0, 1] at position 1, worked out by hand for hand_model.

    e0 = (1,-1,1,1), e1 = (2,0,0,0): both have mean square 1, so rmsnorm gives c*e, c = 1/sqrt(1+eps).
    q1 = k1 = rope(c*e1, pos 1): NORM mode rotates pairs (0,1) by 1 rad and (2,3) by base^(-1/2) rad:
      q1 = c*(2cos1, 2sin1, 0, 0); k0 = c*e0 (pos 0 is not rotated).
    scores (scale 1/sqrt(4)): s0 = q1.k0/2 = c^2 (cos1 - sin1), s1 = q1.k1/2 = 2c^2.
    attention output: p0*c*e0 + p1*c*e1 (v is not rotated), p = softmax(s0, s1).
    x = e1 + that; the FFN adds silu(y0)*y1 to dim 3, y = rmsnorm(x); logits = rmsnorm(x + ffn).
    """
    c = 1 / math.sqrt(1 + eps)
    s0, s1 = c * c * (math.cos(1) - math.sin(1)), 2 * c * c
    p0 = 1 / (1 + math.exp(s1 - s0))
    p1 = 1 - p0
    x = [2 + c * (p0 * 1 + p1 * 2), c * (p0 * -1), c * p0, c * p0]
    r = math.sqrt(sum(v * v for v in x) / 4 + eps)
    y0, y1 = x[0] / r, x[1] / r
    x[3] += y0 / (1 + math.exp(-y0)) * y1
    r = math.sqrt(sum(v * v for v in x) / 4 + eps)
    return [v / r for v in x]


MUTATIONS = {
    "rope mode swapped": lambda m: setattr(m, "rope_mode", "neox" if m.rope_mode == "norm" else "norm"),
    "kv head = h % n_head_kv": lambda m: setattr(m, "kv_head", lambda h: h % m.n_head_kv),
    "attention scale 1/sqrt(n_embd/n_head)": lambda m: setattr(m, "attn_scale", 1 / math.sqrt(m.n_embd / m.n_head)),
    "rope_freqs ignored": lambda m: m.tensors.pop("rope_freqs.weight"),
    "q/k/v biases ignored": lambda m: [m.tensors.pop(n) for n in list(m.tensors) if n.endswith(".bias")],
    "q/k norms ignored": lambda m: [m.tensors.pop(n) for n in list(m.tensors)
                                     if n.endswith(("attn_q_norm.weight", "attn_k_norm.weight"))],
}


def applicable(name, model):
    if name == "rope_freqs ignored":
        return model.has("rope_freqs.weight")
    if name == "q/k/v biases ignored":
        return model.has("blk.0.attn_q.bias")
    if name == "q/k norms ignored":
        return model.has("blk.0.attn_q_norm.weight")
    if name == "attention scale 1/sqrt(n_embd/n_head)":
        return model.head_dim * model.n_head != model.n_embd
    return True


# other activation roundings a correct runner may use (see the module comment): ggml's CUDA
# pairing (Q8_1 for every quantized type), and SHIFTED_DRAWS independent draws of an 8-bit rounding
SHIFTED_DRAWS = 4
CUDA_STYLE = {t: ("q8_1" if a and a.startswith("q8") else a) for t, a in ref.ACT_TYPE.items()}


def self_test(cases, folder):
    rep = Report()

    print("hand-computed 1-layer model")
    path = os.path.join(folder, "hand.gguf")
    eps, base = hand_model(path)
    got = ref.forward(ref.Model(path), [0, 1])[-1]
    want = hand_expected(eps, base)
    rep.check(np.allclose(got, want, rtol=1e-12, atol=1e-12), "hand model logits",
              f"{np.round(got, 6).tolist()} vs {np.round(want, 6).tolist()}")

    print("tokenizer")
    for p in PROMPTS:
        ids = gen.tokenize(p, add_bos=True)
        n_vocab = len(gen.build_vocab()[0])
        rep.check(gen.detokenize(ids) == p and ids[0] == gen.build_vocab()[3] and max(ids[1:]) >= 256
                  and max(ids) < n_vocab, f"tokenize/detokenize {p!r}", f"{len(ids)} ids")

    print("causality and prefix consistency")
    for arch in gen.ARCHS:
        m = ref.Model(write_case(Case(f"{arch}-causal", arch, "f32", rope_freqs=arch == "llama"), folder))
        toks = gen.tokenize(PROMPTS[1], add_bos=False)
        full = ref.forward(m, toks)
        t = len(toks) // 2
        changed = list(toks)
        changed[t + 1:] = [(i * 7 + 3) % m.n_vocab for i in changed[t + 1:]]
        other = ref.forward(m, changed)
        prefix = ref.forward(m, toks[:t + 1])
        rep.check(np.array_equal(full[:t + 1], other[:t + 1]) and nmse(other[t + 1:], full[t + 1:]) > 1e-3,
                  f"{arch}: logits up to position {t} ignore the tokens after it")
        rep.check(np.allclose(prefix, full[:t + 1], rtol=1e-10, atol=1e-10),
                  f"{arch}: a prefix's logits equal the full sequence's first positions")

    print("the harness against a stand-in runner (fake_wick.py)")
    harness_test(rep, folder)

    print("cases")
    f32_logits = {}
    ratios, margins = [], []
    for case in cases:
        path = write_case(case, folder)
        m = ref.Model(path)
        ids = gen.tokenize(case.prompt, gen.ARCHS[case.arch]["add_bos"])
        exact = ref.forward(m, ids)[-1]
        spread = float(np.std(exact))
        rep.check(np.all(np.isfinite(exact)) and 0.3 < spread < 30 and abs(exact.mean()) < spread,
                  f"{case.name}: finite, non-degenerate logits", f"std {spread:.3f}, mean {exact.mean():.3f}")
        bound, e_sim, _ = bound_for(m, ids, exact)
        if e_sim is not None:
            alts = [ref.forward(m, ids, act_quant=True, act_types=CUDA_STYLE)[-1]]
            alts += [forward_shifted_grid(m, ids, seed) for seed in range(SHIFTED_DRAWS)]
            r = [nmse(v, exact) / e_sim for v in alts]
            ratios += r
            rep.check(0 < e_sim < 3e-3 and max(r) <= ACT_FACTOR, f"{case.name}: activation rounding bound",
                      f"e_sim {e_sim:.2e}; other roundings {min(r):.2f} .. {max(r):.2f} x e_sim; bound {bound:.1e}")
        # quantized vs f32: the float and 32-element types share the f32 model's Gaussian weights
        key = (case.arch, case.tied, case.rope_freqs, case.prompt)
        if case.types() == {"f32"}:
            f32_logits[key] = exact
        else:
            if all(t in WEIGHT_NOISE for t in case.types()):
                base_case = Case("f32-twin", case.arch, "f32", tied=case.tied, rope_freqs=case.rope_freqs)
                if key not in f32_logits:
                    f32_logits[key] = ref.forward(ref.Model(write_case(base_case, folder)), ids)[-1]
                e = nmse(exact, f32_logits[key])
                ceiling = max(WEIGHT_NOISE[t] for t in case.types())
                rep.check(e < ceiling, f"{case.name}: close to the f32 model with the same weights",
                          f"NMSE {e:.2e} < {ceiling:.0e}")
            # an f32 copy of the dequantized weights gives the same logits (writer/reader round trip)
            copy = os.path.join(folder, f"{case.name}.f32copy.gguf")
            f32_copy(m, path, copy)
            e = nmse(ref.forward(ref.Model(copy), ids)[-1], exact)
            rep.check(e < 1e-20, f"{case.name}: f32 copy of the dequantized weights", f"NMSE {e:.1e}")
        for name in MUTATIONS:
            mm = ref.Model(path)
            if not applicable(name, mm):
                continue
            MUTATIONS[name](mm)
            e = nmse(ref.forward(mm, ids)[-1], exact)
            margins.append(e / bound)
            rep.check(e > MUTATION_MARGIN * bound, f"{case.name}: rejects '{name}'",
                      f"NMSE {e:.2e} = {e / bound:.0f} x bound")
    if ratios:
        print(f"other activation roundings: {min(ratios):.2f} .. {max(ratios):.2f} x e_sim (allowed {ACT_FACTOR})")
    if margins:
        print(f"mutations: {min(margins):.0f} .. {max(margins):.0f} x the bound (needed > {MUTATION_MARGIN:.0f})")
    return rep


# NMSE of a model with f16/bf16/32-element-quant weights against the f32 model holding the
# Gaussian weights they were rounded from: weight-rounding noise propagated through the network.
# Unrelated weights would give NMSE ~2; measured values are ~5x below these ceilings.
WEIGHT_NOISE = {"f16": 1e-4, "bf16": 1e-3, "q8_0": 1e-2, "q5_0": 1e-1, "q5_1": 1e-1, "q4_0": 5e-1,
                "q4_1": 5e-1}


def harness_test(rep, folder):
    """run_wick() against fake_wick.py: a faithful stand-in passes, broken ones fail."""
    import contextlib
    import io
    wrapper = os.path.join(folder, "fake-wick.sh")
    fake = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_wick.py")
    with open(wrapper, "w") as f:
        f.write(f'#!/bin/sh\nexec "{sys.executable}" "{fake}" "$@"\n')
    os.chmod(wrapper, 0o755)
    args = argparse.Namespace(wick=wrapper, device="cpu")
    pick = lambda *names: [c for c in CASES if c.name in names]  # noqa: E731
    runs = [(None, pick("llama31-f32", "qwen2-q4_1", "qwen3-q4_k-out_q6_k"), []),
            ("rope mode swapped", pick("llama-f32"), ["llama-f32 logits"]),
            ("q/k norms ignored", pick("qwen3-q4_k-out_q6_k"), ["qwen3-q4_k-out_q6_k logits"]),
            ("tokenizer", pick("qwen2-f32"), ["qwen2-f32 tokenize"])]
    for broken, cases, want_failed in runs:
        os.environ.pop("FAKE_WICK_BREAK", None)
        if broken:
            os.environ["FAKE_WICK_BREAK"] = broken
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                r = run_wick(args, cases, folder)
        finally:
            os.environ.pop("FAKE_WICK_BREAK", None)
        what = "a faithful runner passes" if not broken else f"a runner with '{broken}' fails"
        rep.check(r.failed == want_failed and r.passed > 0, f"harness: {what}",
                  f"failed {r.failed}, {r.passed} passed" if r.failed != want_failed else
                  f"{r.passed} passed, failed as expected: {r.failed}")


def forward_shifted_grid(m, ids, seed):
    """ref.forward with the 8-bit activation rounding done on a grid shifted by a random fraction
    phi of a step per block: x' = (round(x/d - phi) + phi) d. The same step d and the same error
    distribution (uniform in +-d/2) as ggml's rounding, but an independent draw of it: a stand-in
    for any other rounding of the same precision."""
    orig = ref.round_activations
    rng = np.random.default_rng(seed)

    def rounding(x, act):
        if act not in ("q8_0", "q8_1", "q8_k"):
            return orig(x, act)
        n = 256 if act == "q8_k" else 32
        b = np.asarray(x, dtype=np.float64).reshape(*x.shape[:-1], -1, n)
        d = np.max(np.abs(b), axis=-1, keepdims=True) / 127
        phi = rng.uniform(0, 1, size=d.shape)
        with np.errstate(invalid="ignore", divide="ignore"):
            y = np.where(d > 0, (np.rint(b / d - phi) + phi) * d, 0.0)
        return y.reshape(x.shape)

    ref.round_activations = rounding
    try:
        return ref.forward(m, ids, act_quant=True)[-1]
    finally:
        ref.round_activations = orig


def f32_copy(m, src, dst):
    """Writes dst: src's metadata and tensors, every tensor dequantized to F32."""
    r = m.reader
    w = gguf.GGUFWriter(dst, m.arch)
    for name, f in r.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture":
            continue
        vt = f.types[0]
        if vt == gguf.GGUFValueType.ARRAY:
            w.add_key_value(name, f.contents(), vt, sub_type=f.types[-1])
        else:
            w.add_key_value(name, f.contents(), vt)
    for t in r.tensors:
        w.add_tensor(t.name, m.get(t.name).astype(np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--wick", help="path to the wick CLI")
    p.add_argument("--device", default="cpu", help="wick device: cpu (default) or gpu:N")
    p.add_argument("--quick", action="store_true",
                   help="a subset of the cases (each arch in f32, each 8-bit activation format)")
    p.add_argument("--cases", help="comma-separated case names (see --list)")
    p.add_argument("--self-test", action="store_true", help="check the generator and reference, without wick")
    p.add_argument("--keep", help="write the models and logits here instead of a temporary folder")
    p.add_argument("--list", action="store_true")
    a = p.parse_args(argv)

    if a.list:
        for c in CASES:
            print(f"{c.name:24s} {'quick ' if c.quick else '      '}{'/'.join(sorted(c.types()))}"
                  f"{' tied' if c.tied else ''}{' rope_freqs' if c.rope_freqs else ''}")
        return 0
    cases = [c for c in CASES if c.quick] if a.quick else list(CASES)
    if a.cases:
        names = a.cases.split(",")
        unknown = [n for n in names if n not in {c.name for c in CASES}]
        if unknown:
            p.error(f"unknown case(s) {unknown}; see --list")
        cases = [c for c in CASES if c.name in names]
    if not a.self_test and not a.wick:
        p.error("give --wick PATH (or --self-test)")
    if a.wick and not (os.path.isfile(a.wick) and os.access(a.wick, os.X_OK)):
        p.error(f"--wick {a.wick}: not an executable file")

    folder = a.keep or tempfile.mkdtemp(prefix="wick-check-logits-")
    os.makedirs(folder, exist_ok=True)
    try:
        rep = self_test(cases, folder) if a.self_test else run_wick(a, cases, folder)
    finally:
        if not a.keep:
            shutil.rmtree(folder, ignore_errors=True)
    return rep.finish()


if __name__ == "__main__":
    sys.exit(main())
