"""QTensor quantize / dequantize and qmatmul against NumPy: ggml's reference quantizers of
Q8_0 and Q4_0 written in NumPy float32 (bit for bit), the K-quants within their error,
qmatmul against the float64 product with the dequantized weight."""
import numpy as np
import pytest
from util import check, make, to_np

import wick


def roundf(v):  # C's roundf, computed exactly in float64
    v = v.astype(np.float64)
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def q8_0_ref(x):
    """ggml's quantize_row_q8_0_ref then dequantize, in float32: d = amax / 127, q = round(x / d)."""
    b = x.astype(np.float32).reshape(-1, 32)
    amax = np.abs(b).max(axis=1, keepdims=True)
    d = amax / np.float32(127)
    inv = np.where(d != 0, np.float32(1) / np.where(d != 0, d, 1), np.float32(0)).astype(np.float32)
    q = roundf(b * inv)
    return (q * d.astype(np.float16).astype(np.float64)).reshape(x.shape)


def q4_0_ref(x):
    """ggml's quantize_row_q4_0_ref then dequantize: d = max / -8 (max: the value of largest
    magnitude, signed), q = min(15, int(x / d + 8.5))."""
    b = x.astype(np.float32).reshape(-1, 32)
    idx = np.abs(b).argmax(axis=1)
    mx = b[np.arange(len(b)), idx][:, None]
    d = (mx / np.float32(-8)).astype(np.float32)
    inv = np.where(d != 0, np.float32(1) / np.where(d != 0, d, 1), np.float32(0)).astype(np.float32)
    q = np.minimum(15, np.trunc((b * inv).astype(np.float32) + np.float32(8.5)).astype(np.int64))
    return ((q - 8) * d.astype(np.float16).astype(np.float64)).reshape(x.shape)


@pytest.mark.parametrize("type_,ref", [("q8_0", q8_0_ref), ("q4_0", q4_0_ref)])
def test_block_quants_match_ggml_reference(type_, ref, rng, device):
    x, t = make(rng, (8, 128), "f32", -2, 2, device)
    q = wick.QTensor.quantize(t, type_)
    assert q.type == wick.ggml_type(type_) and q.shape == (8, 128) and q.device == device
    assert q.nbytes == 8 * wick.ggml_row_size(type_, 128)
    np.testing.assert_array_equal(to_np(q.dequantize()), ref(x))


@pytest.mark.parametrize("type_,bound", [("q2_K", 0.1), ("q3_K", 0.03), ("q4_K", 0.01), ("q5_K", 3e-3),
                                         ("q6_K", 1e-3), ("q5_0", 3e-3), ("q4_1", 0.01), ("q8_K", 1e-4)])
def test_quantization_error_within_the_types_precision(type_, bound, rng, device):
    x, t = make(rng, (4, 512), "f32", -1, 1, device)
    y = to_np(wick.QTensor.quantize(t, type_).dequantize())
    nmse = ((y - x) ** 2).sum() / (x**2).sum()
    assert nmse < bound, f"{type_}: NMSE {nmse}"


@pytest.mark.parametrize("type_", ["f32", "f16", "bf16"])
def test_float_ggml_types_round_like_the_dtype(type_, rng, device):
    from util import round_to
    x, t = make(rng, (3, 64), "f32", -4, 4, device)
    got = to_np(wick.QTensor.quantize(t, type_).dequantize())
    np.testing.assert_array_equal(got, round_to(x, {"f32": "f32", "f16": "f16", "bf16": "bf16"}[type_]))


@pytest.mark.parametrize("type_", ["q4_0", "q8_0", "q4_K", "q6_K"])
@pytest.mark.parametrize("rows", [1, 5, 16])
def test_qmatmul(type_, rows, rng, device):
    x, xt = make(rng, (rows, 256), "f32", -1, 1, device)
    _, wt = make(rng, (24, 256), "f32", -1, 1, device)
    wq = wick.QTensor.quantize(wt, type_)
    exact = x @ to_np(wq.dequantize()).T
    check(wick.qmatmul(xt, wq, "dequant_gemm"), exact, "f32", rtol=1e-5)
    # The mat-vec path rounds x to 8 bits per block (ggml's activation types): its error is
    # that rounding's, about 1e-2 of a block's largest value per element.
    got = to_np(wick.qmatmul(xt, wq, "matvec"))
    nmse = ((got - exact) ** 2).sum() / (exact**2).sum()
    assert nmse < 1e-3, f"{type_}: NMSE {nmse}"


def test_qmatvec_on_the_cpu_is_ggml_q8_0_arithmetic(rng):
    # CPU: x rounded to Q8_0 per block, then the dot products; simulated here in float64.
    x, xt = make(rng, (3, 128), "f32", -1, 1)
    _, wt = make(rng, (10, 128), "f32", -1, 1)
    wq = wick.QTensor.quantize(wt, "q8_0")
    want = q8_0_ref(x) @ to_np(wq.dequantize()).T
    check(wick.qmatmul(xt, wq, "matvec"), want, "f32", rtol=1e-5)


def test_qtensor_bytes_and_devices(rng, device):
    _, t = make(rng, (2, 64), "f32", -1, 1, device)
    q = wick.QTensor.quantize(t, "q8_0")
    raw = q.to_bytes()
    assert len(raw) == q.nbytes == 2 * 2 * 34  # two rows of two 34-byte blocks
    again = wick.QTensor.from_bytes("Q8_0", (2, 64), raw, device=device)
    np.testing.assert_array_equal(to_np(again.dequantize()), to_np(q.dequantize()))
    assert q.bytes.dtype == wick.u8 and q.bytes.shape == (q.nbytes,)
    assert to_np(q.to_device("cpu").dequantize()).shape == (2, 64)
    assert "q8_0" in repr(q)


@pytest.mark.parametrize("type_", ["q4_0", "q8_0", "q4_K", "q6_K"])
def test_fused_rows_times_a_quantized_weight(type_, rng, device):
    # (x + r, the product of rms_norm(x + r) * alpha) and silu(x) * r times w, against
    # float64 math over the dequantized weight; MatVec rounds the row to 8 bits per block.
    k, eps = 1024, 1e-5
    x, xt = make(rng, (1, k), "f32", -2, 2, device)
    r, rt = make(rng, (1, k), "f32", -2, 2, device)
    a, at = make(rng, (k,), "f32", 0.5, 1.5, device)
    _, wt = make(rng, (40, k), "f32", -1, 1, device)
    wq = wick.QTensor.quantize(wt, type_)
    wd = to_np(wq.dequantize()).astype(np.float64)
    s = (x + r).astype(np.float32)
    normed = s / np.sqrt((s.astype(np.float64) ** 2).mean() + eps) * a
    got_sum, got = wick.add_rms_norm_qmatmul(xt, rt, at, eps, wq)
    np.testing.assert_array_equal(to_np(got_sum), s)
    for y, want in [(got, normed @ wd.T), (wick.swiglu_qmatmul(xt, rt, wq), (x / (1 + np.exp(-x)) * r) @ wd.T)]:
        y = to_np(y).astype(np.float64)
        nmse = ((y - want) ** 2).sum() / (want**2).sum()
        assert nmse < 1e-3, f"{type_}: NMSE {nmse}"
