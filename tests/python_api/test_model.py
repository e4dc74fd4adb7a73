"""The model runner from Python: SmolLM2-135M-Instruct (fetched by scripts/fetch-test-data.sh;
the prompt's ids are llama.cpp's llama-tokenize output for this file) and tiny random models
whose logits tests/python/ref_forward.py computes in float64 from the file's weights."""
import sys

import numpy as np
import pytest
from conftest import ROOT
from util import to_np

import wick

PROMPT = "The capital of France is"
PROMPT_IDS = [504, 3575, 282, 4649, 314]


# The tests of SmolLM2 (marked smollm) read the files of scripts/fetch-test-data.sh:
# `-m "not smollm"` leaves them out where those files cannot be had.
@pytest.fixture(scope="module")
def smollm(test_data, device):
    path = test_data / "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.exists(), f"{path} is missing: run scripts/fetch-test-data.sh {test_data}"
    return wick.Model.load(str(path), device=device, ctx=256)


@pytest.mark.smollm
def test_info_is_the_files_hyperparameters(smollm, device):
    i = smollm.info
    assert (i.arch, i.n_vocab, i.n_embd, i.n_layer, i.n_head, i.n_head_kv, i.head_dim, i.n_ff) == \
        ("llama", 49152, 576, 30, 9, 3, 64, 1536)
    assert i.n_ctx == 256 and i.device == device
    assert smollm.has_tokenizer and smollm.tokenizer.vocab_size == 49152


@pytest.mark.smollm
def test_tokenize_as_llama_cpp(smollm):
    assert smollm.tokenize(PROMPT) == PROMPT_IDS
    assert smollm.tokenizer.decode(PROMPT_IDS) == PROMPT


@pytest.mark.smollm
def test_next_token_is_paris(smollm, device):
    smollm.reset()
    logits = smollm.forward(PROMPT_IDS)
    assert logits.shape == (1, 49152) and logits.dtype == wick.f32 and logits.device == device
    assert smollm.position == len(PROMPT_IDS)
    best = int(logits.argmax().item())
    assert smollm.tokenizer.token_to_piece(best) == b" Paris"
    assert np.argmax(to_np(logits)) == best
    smollm.reset()
    every = smollm.forward(PROMPT_IDS, all_logits=True)
    assert every.shape == (5, 49152)
    np.testing.assert_allclose(to_np(every[-1]), to_np(logits[0]), rtol=1e-3, atol=1e-3)


@pytest.mark.smollm
def test_greedy_generation_with_a_callback(smollm):
    smollm.reset()
    seen = []
    r = smollm.generate(PROMPT_IDS, n_predict=6, temp=0, callback=lambda i, text: seen.append((i, text)))
    assert r.tokens == [i for i, _ in seen] and len(r.tokens) == 6
    assert r.text == "".join(t for _, t in seen) and r.text.startswith(" Paris")
    assert r.stats.prompt_tokens == 5 and r.stats.generated_tokens == 6
    smollm.reset()
    again = smollm.generate(PROMPT_IDS, n_predict=6, temp=0)
    assert again.tokens == r.tokens  # greedy is deterministic
    smollm.reset()
    stopped = smollm.generate(PROMPT_IDS, n_predict=6, temp=0, callback=lambda i, text: len(text) < 0)
    assert len(stopped.tokens) == 1  # returning False stops after the first token


@pytest.mark.smollm
def test_callback_errors_propagate(smollm):
    smollm.reset()

    def boom(i, text):
        raise KeyError("from the callback")

    with pytest.raises(KeyError):
        smollm.generate(PROMPT_IDS, n_predict=3, temp=0, callback=boom)


@pytest.mark.smollm
def test_prompt_too_long_is_an_error(smollm):
    smollm.reset()
    with pytest.raises(wick.Error) as info:
        smollm.forward([1] * 300)
    assert info.value.kind == wick.ErrorKind.InvalidArgument


@pytest.mark.parametrize("arch,wtype", [("llama", "f32"), ("qwen2", "f32"), ("qwen3", "f16")])
def test_tiny_models_match_the_float64_reference(arch, wtype, tmp_path, device):
    pytest.importorskip("gguf")
    sys.path.insert(0, str(ROOT / "tests" / "python"))
    import gen_tiny_gguf
    import ref_forward

    path = str(tmp_path / f"{arch}-{wtype}.gguf")
    gen_tiny_gguf.write_model(path, arch, wtype)
    m = wick.Model.load(path, device=device, ctx=64)
    ids = m.tokenize("hello world, the cat sat")
    assert ids == gen_tiny_gguf.tokenize("hello world, the cat sat", gen_tiny_gguf.ARCHS[arch]["add_bos"])
    got = to_np(m.forward(ids, all_logits=True))
    ref = ref_forward.forward(ref_forward.Model(path), ids)
    nmse = ((got - ref) ** 2).sum() / (ref**2).sum()
    # f32 weights: float rounding alone (1e-5, tests/python/check_logits.py); f16 weights add
    # the rounding of activations to f16 (about 1e-6 on these models).
    assert nmse < 1e-5, f"NMSE {nmse}"
