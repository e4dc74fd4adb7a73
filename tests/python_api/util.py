"""Inputs and comparisons shared by the tests: values are drawn in float64, rounded to the
dtype under test by NumPy (bf16: round-to-nearest-even on the float32 bits, written here),
and results are compared with float64 NumPy math on those same values."""
import numpy as np

import wick

FLOATS = ["f16", "bf16", "f32", "f64"]
INTS = ["u8", "u32", "i32", "i64"]
ALL = INTS + FLOATS
NP = {"u8": np.uint8, "u32": np.uint32, "i32": np.int32, "i64": np.int64, "f16": np.float16,
      "f32": np.float32, "f64": np.float64}
# Relative tolerance of one op's result: a few units in the last place of the dtype.
TOL = {"f16": 2e-3, "bf16": 1.6e-2, "f32": 3e-6, "f64": 1e-13}


def round_bf16(x):
    """float64 values rounded to bfloat16 (nearest even), as float64."""
    b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return b.astype(np.uint32).view(np.float32).astype(np.float64)


def round_to(x, dt):
    """float64 values rounded to dtype dt (integers: must already be whole and in range)."""
    if dt == "bf16":
        return round_bf16(x)
    return np.asarray(x).astype(NP[dt]).astype(np.float64)


def make(rng, shape, dt, lo=-3.0, hi=3.0, device=wick.cpu):
    """(values as float64 NumPy, the same values as a wick tensor of dtype dt on device)."""
    if dt in INTS:
        lo = max(lo, 0) if dt.startswith("u") else lo
        x = rng.integers(int(lo), int(hi) + 1, size=shape).astype(np.float64)
    else:
        x = round_to(rng.uniform(lo, hi, size=shape), dt)
    return x, wick.tensor(x, dtype=dt, device=device)


def to_np(t):
    """A tensor's values as float64 NumPy (from any device and dtype)."""
    t = t.cpu()
    if t.dtype == wick.bf16:
        t = t.to_dtype(wick.f32)
    return np.asarray(t).astype(np.float64)


def check(t, ref, dt=None, rtol=None, atol=None, dtype=None):
    """t's values equal ref within the tolerance of dtype dt (exact for integers)."""
    dt = dt or str(t.dtype)
    if dtype is not None:
        assert t.dtype == wick.dtype(dtype), f"dtype {t.dtype}, expected {dtype}"
    got = to_np(t)
    ref = np.asarray(ref, dtype=np.float64)
    assert got.shape == ref.shape, f"shape {got.shape}, expected {ref.shape}"
    if dt in INTS:
        np.testing.assert_array_equal(got, ref)
        return
    r = TOL[dt] if rtol is None else rtol
    a = r * max(1.0, float(np.max(np.abs(ref), initial=0.0))) if atol is None else atol
    np.testing.assert_allclose(got, ref, rtol=r, atol=a)
