"""Every op family against float64 NumPy math on random inputs, on the --device of the run:
elementwise unary / binary / comparisons, where, casts, reductions, scans, sort, indexing,
matmul, convolution, pooling, resampling, softmax / norms / rope / attention."""
import math

import numpy as np
import pytest
from util import ALL, FLOATS, INTS, NP, TOL, check, make, round_to, to_np

import wick

erf = np.vectorize(math.erf)


def c_round(x):  # C's round: half away from zero
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


UNARY = {
    "exp": (np.exp, -3, 3), "log": (np.log, 0.1, 5), "sin": (np.sin, -3, 3), "cos": (np.cos, -3, 3),
    "abs": (np.abs, -3, 3), "neg": (np.negative, -3, 3), "recip": (lambda x: 1 / x, 0.5, 3),
    "sqr": (np.square, -3, 3), "sqrt": (np.sqrt, 0, 5),
    "gelu": (lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))), -3, 3),
    "gelu_erf": (lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2))), -3, 3), "erf": (erf, -2, 2),
    "relu": (lambda x: np.maximum(x, 0), -3, 3), "silu": (lambda x: x / (1 + np.exp(-x)), -3, 3),
    "tanh": (np.tanh, -3, 3), "floor": (np.floor, -3, 3), "ceil": (np.ceil, -3, 3), "round": (c_round, -3, 3),
    "sign": (np.sign, -3, 3), "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), -3, 3),
}
EXACT_ON_INTS = ["abs", "neg", "sqr", "relu", "floor", "ceil", "round", "sign"]


@pytest.mark.parametrize("op", sorted(UNARY))
@pytest.mark.parametrize("dt", FLOATS)
def test_unary_float(op, dt, rng, device):
    f, lo, hi = UNARY[op]
    x, t = make(rng, (3, 17), dt, lo, hi, device)
    check(getattr(t, op)(), round_to(f(x), dt), dt, dtype=dt)


@pytest.mark.parametrize("op", EXACT_ON_INTS)
@pytest.mark.parametrize("dt", ["i32", "i64"])
def test_unary_int(op, dt, rng, device):
    f = UNARY[op][0]
    x, t = make(rng, (4, 9), dt, -20, 20, device)
    check(getattr(t, op)(), f(x), dtype=dt)


def test_unary_on_a_strided_view(rng, device):
    x, t = make(rng, (6, 8), "f32", device=device)
    check(t[1::2, ::3].exp(), np.exp(x[1::2, ::3]), "f32")
    check(t.T.sin(), np.sin(x.T), "f32")


BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum, "minimum": np.minimum}


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("dt", ALL)
def test_binary_broadcast(op, dt, rng, device):
    xa, a = make(rng, (4, 1, 5), dt, 0, 9, device)
    xb, b = make(rng, (3, 1), dt, 0, 9, device)
    ref = BINARY[op](xa, xb)
    if dt in INTS:
        ref = ref.astype(NP[dt]).astype(np.float64)  # wrapping, as NumPy's fixed-width integers
    check(getattr(a, op)(b) if op in ("maximum", "minimum") else {"add": a + b, "sub": a - b, "mul": a * b}[op],
          round_to(ref, dt) if dt not in INTS else ref, dt, dtype=dt)


@pytest.mark.parametrize("dt", FLOATS)
def test_division_and_power(dt, rng, device):
    xa, a = make(rng, (5, 6), dt, 0.5, 3, device)
    xb, b = make(rng, (6,), dt, 0.5, 3, device)
    check(a / b, round_to(xa / xb, dt), dt)
    check(a ** b, round_to(xa**xb, dt), dt)
    check(2.0 / a, round_to(2.0 / xa, dt), dt)
    check(a.pow(3), round_to(xa**3, dt), dt)


def test_integer_division_follows_numpy(rng, device):
    xa, a = make(rng, (40,), "i32", -50, 50, device)
    xb, b = make(rng, (40,), "i32", 1, 9, device)
    xb = np.where(rng.integers(0, 2, 40) == 1, xb, -xb)
    b = wick.tensor(xb, dtype="i32", device=device)
    check(a // b, np.floor_divide(xa, xb), dtype="i32")
    check(a % b, np.mod(xa, xb), dtype="i32")
    check(a / b, (xa / xb).astype(np.float32), "f32", dtype="f32")  # true division in f32
    check(a // 7, np.floor_divide(xa, 7), dtype="i32")
    check(a._div(b), np.trunc(xa / xb), dtype="i32")  # C++'s division truncates
    check(a ** 2, xa**2, dtype="i32")


@pytest.mark.parametrize("pair", [("f16", "f32"), ("i32", "f16"), ("u8", "i32"), ("u32", "i32"), ("bf16", "f16"),
                                  ("u8", "bf16"), ("i64", "f64"), ("u8", "f16")])
def test_promotion_follows_numpy(pair, rng, device):
    da, db = pair
    xa, a = make(rng, (3, 4), da, 0, 5, device)
    xb, b = make(rng, (4,), db, 0, 5, device)
    want = {("bf16", "f16"): "f32", ("u8", "bf16"): "bf16"}.get(pair) or str(
        {np.dtype(v): k for k, v in NP.items()}[np.promote_types(NP[da], NP[db])])
    r = a + b
    assert str(r.dtype) == want
    check(r, round_to(xa + xb, want), want)


def test_python_scalars_are_weak(rng, device):
    x, t = make(rng, (5,), "f16", device=device)
    assert (t * 2.5).dtype == wick.f16 and (3 - t).dtype == wick.f16
    check(3 - t, round_to(3 - x, "f16"), "f16")
    xi, ti = make(rng, (5,), "i32", device=device)
    assert (ti + 1).dtype == wick.i32 and (ti * 0.5).dtype == wick.f32
    check(ti * 0.5, xi * 0.5, "f32")


CMP = {"__eq__": np.equal, "__ne__": np.not_equal, "__lt__": np.less, "__le__": np.less_equal,
       "__gt__": np.greater, "__ge__": np.greater_equal}


@pytest.mark.parametrize("op", sorted(CMP))
@pytest.mark.parametrize("dt", ALL)
def test_comparisons(op, dt, rng, device):
    xa, a = make(rng, (4, 6), dt, 0, 4, device)
    xb, b = make(rng, (6,), dt, 0, 4, device)
    check(getattr(a, op)(b), CMP[op](xa, xb), dtype="u8")
    check(getattr(a, op)(2), CMP[op](xa, 2), dtype="u8")


@pytest.mark.parametrize("dt", ["u8", "i64", "f16", "f32"])
def test_where_and_masked_fill(dt, rng, device):
    xc, c = make(rng, (4, 1), "u8", 0, 1, device)
    xa, a = make(rng, (4, 5), dt, 0, 9, device)
    xb, b = make(rng, (5,), dt, 0, 9, device)
    check(wick.where(c, a, b), np.where(xc != 0, xa, xb), dt, dtype=dt)
    check(c.where(a, 7), np.where(xc != 0, xa, 7), dt)
    check(a.masked_fill(c, 1), np.where(xc != 0, 1, xa), dt)


@pytest.mark.parametrize("src", ALL)
@pytest.mark.parametrize("dst", ALL)
def test_casts(src, dst, rng, device):
    # Values every dtype holds: whole numbers in [0, 200] and, from floats, fractions that
    # truncate toward zero.
    x, t = make(rng, (50,), src, 0, 200, device)
    if src in FLOATS:
        x = round_to(np.abs(x), src)
        t = wick.tensor(x, dtype=src, device=device)
    want = np.trunc(x) if dst in INTS else round_to(x, dst)
    check(t.to_dtype(dst), want, dst, dtype=dst)


@pytest.mark.parametrize("dt", ALL)
@pytest.mark.parametrize("dims", [None, 0, 1, (0, 2), -1])
def test_reductions(dt, dims, rng, device):
    x, t = make(rng, (3, 4, 5), dt, 0, 9, device)
    ax = dims if dims is None or isinstance(dims, int) else tuple(dims)
    tol = TOL.get(dt, 0) * 60  # sums of up to 60 rounded terms
    # Integer sums keep the dtype and wrap (NumPy's sum would widen u8 to u64).
    want = round_to(x.sum(axis=ax), dt) if dt in FLOATS else x.sum(axis=ax).astype(np.int64).astype(NP[dt])
    check(t.sum(dims), want, dt, rtol=tol if dt in FLOATS else None)
    check(t.max(dims), x.max(axis=ax), dt)
    check(t.min(dims, keepdim=True), x.min(axis=ax, keepdims=True), dt)
    if isinstance(ax, int) or ax is None:
        check(t.argmax(dims), np.argmax(x, axis=ax), "u32", dtype="u32")
        check(t.argmin(dims), np.argmin(x, axis=ax), "u32", dtype="u32")


@pytest.mark.parametrize("dt", FLOATS)
def test_mean_var_logsumexp(dt, rng, device):
    x, t = make(rng, (4, 6), dt, -2, 2, device)
    tol = TOL[dt] * 10
    check(t.mean(1), x.mean(axis=1), dt, rtol=tol)
    check(t.mean(), x.mean(), dt, rtol=tol)
    check(t.var(0, correction=0), x.var(axis=0), dt, rtol=tol)
    check(t.var(1), x.var(axis=1, ddof=1), dt, rtol=tol)
    check(t.std(1, keepdim=True), x.std(axis=1, ddof=1, keepdims=True), dt, rtol=tol)
    check(t.logsumexp(1), np.log(np.exp(x).sum(axis=1)), dt, rtol=tol)
    check((t > 0).any(1), (x > 0).any(axis=1), dtype="u8")
    check((t > -5).all(), True, dtype="u8")


@pytest.mark.parametrize("dt", ["i32", "i64", "f32", "f64"])
def test_cumsum(dt, rng, device):
    x, t = make(rng, (3, 7), dt, -5, 5, device)
    check(t.cumsum(1), np.cumsum(x, axis=1), dt)
    check(t.cumsum(0), np.cumsum(x, axis=0), dt)


@pytest.mark.parametrize("dt", ["u8", "i32", "f16", "bf16", "f32", "f64"])
def test_sort_argsort_topk(dt, rng, device):
    x, t = make(rng, (4, 33), dt, 0, 20, device)  # many ties: the sort must be stable
    v, i = t.sort()
    check(v, np.sort(x, axis=-1, kind="stable"), dt)
    check(i, np.argsort(x, axis=-1, kind="stable"), dtype="u32")
    check(t.argsort(descending=True), np.argsort(-x, axis=-1, kind="stable"), dtype="u32")
    v0, i0 = t.sort(dim=0)
    check(v0, np.sort(x, axis=0, kind="stable"), dt)
    check(i0, np.argsort(x, axis=0, kind="stable"), dtype="u32")
    tv, ti = t.topk(5)
    order = np.argsort(-x, axis=-1, kind="stable")[:, :5]
    check(ti, order, dtype="u32")
    check(tv, np.take_along_axis(x, order, axis=-1), dt)


@pytest.mark.parametrize("dt", ["i64", "f16", "f32"])
def test_index_ops(dt, rng, device):
    x, t = make(rng, (5, 4), dt, 0, 9, device)
    ids = np.array([4, 0, 2, 2])
    it = wick.tensor(ids, dtype="u32", device=device)
    check(t.index_select(it, 0), x[ids], dt)
    check(t.index_select(wick.tensor([3, 0, 3], dtype="i64", device=device), 1), x[:, [3, 0, 3]], dt)
    g = rng.integers(0, 4, size=(5, 3))
    gt = wick.tensor(g, dtype="i64", device=device)
    check(t.gather(gt, 1), np.take_along_axis(x, g, axis=1), dt)
    src_x, src = make(rng, (5, 3), dt, 0, 9, device)
    perm = np.stack([rng.permutation(4)[:3] for _ in range(5)])  # distinct targets per row
    pt = wick.tensor(perm, dtype="i64", device=device)
    want = x.copy()
    np.put_along_axis(want, perm, src_x, axis=1)
    check(t.scatter(pt, src, 1), want, dt)
    want = x.copy()
    for r in range(5):
        for j in range(3):
            want[r, g[r, j]] += src_x[r, j]
    check(t.scatter_add(gt, src, 1), want, dt, rtol=TOL.get(dt, 0) * 4)
    add_x, add = make(rng, (4, 4), dt, 0, 9, device)
    want = x.copy()
    np.add.at(want, ids, add_x)
    check(t.index_add(it, add, 0), want, dt, rtol=TOL.get(dt, 0) * 4)


def test_python_indexing_matches_numpy(rng, device):
    x, t = make(rng, (4, 5, 6), "f32", device=device)
    keys = [1, -1, (slice(None), 2), (Ellipsis, 3), (slice(1, 3), slice(None, None, 2), slice(None, None, -2)),
            (None, 0, slice(None), None), ([3, 0, 0],), (slice(None), [1, 4], [0, 5]), (slice(None), 0, [5, 1]), (0, [2, 1]),
            (1, 2, 3), (slice(None, None, -1),), (slice(5, 1, -1), 0)]
    for k in keys:
        np_key = tuple(np.array(i) if isinstance(i, list) else i for i in (k if isinstance(k, tuple) else (k,)))
        check(t[k], x[np_key], "f32")
    mask = x[:, :, 0] > 0
    check(t[t[:, :, 0] > 0], x[mask], "f32")
    check(t[t > 1], x[x > 1], "f32")
    check(list(t)[2], x[2], "f32")


def test_python_assignment_matches_numpy(rng, device):
    x, t = make(rng, (4, 6), "f32", device=device)
    y = x.copy()
    t[1] = 5.0
    y[1] = 5.0
    t[:, ::2] = wick.tensor([1.0, 2.0, 3.0])
    y[:, ::2] = [1.0, 2.0, 3.0]
    t[t > 2] = -1.0
    y[y > 2] = -1.0
    t[[0, 3], 1] = wick.tensor([7.0, 8.0])
    y[[0, 3], 1] = [7.0, 8.0]
    check(t, y, "f32")
    view = t[2]
    view[0] = 9.0  # a view writes through
    y[2, 0] = 9.0
    check(t, y, "f32")


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("shapes", [((3, 4), (4, 5)), ((2, 3, 4), (4, 6)), ((2, 1, 3, 4), (5, 4, 2)), ((4,), (4, 3)),
                                    ((3, 4), (4,)), ((4,), (4,))])
def test_matmul(dt, shapes, rng, device):
    xa, a = make(rng, shapes[0], dt, -1, 1, device)
    xb, b = make(rng, shapes[1], dt, -1, 1, device)
    check(a @ b, xa @ xb, dt, rtol=TOL[dt] * 4)


def conv1d_ref(x, w, p, s, d, g):
    B, C, L = x.shape
    O, Cg, K = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p, p)))
    lout = (L + 2 * p - d * (K - 1) - 1) // s + 1
    out = np.zeros((B, O, lout))
    og = O // g
    for gi in range(g):
        xs, ws = xp[:, gi * Cg:(gi + 1) * Cg], w[gi * og:(gi + 1) * og]
        for k in range(K):
            seg = xs[:, :, k * d:k * d + s * (lout - 1) + 1:s]
            out[:, gi * og:(gi + 1) * og] += np.einsum("bcl,oc->bol", seg, ws[:, :, k])
    return out


def conv2d_ref(x, w, p, s, d, g):
    B, C, H, W = x.shape
    O, Cg, KH, KW = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    oh, ow = (H + 2 * p - d * (KH - 1) - 1) // s + 1, (W + 2 * p - d * (KW - 1) - 1) // s + 1
    out = np.zeros((B, O, oh, ow))
    og = O // g
    for gi in range(g):
        xs, ws = xp[:, gi * Cg:(gi + 1) * Cg], w[gi * og:(gi + 1) * og]
        for i in range(KH):
            for j in range(KW):
                seg = xs[:, :, i * d:i * d + s * (oh - 1) + 1:s, j * d:j * d + s * (ow - 1) + 1:s]
                out[:, gi * og:(gi + 1) * og] += np.einsum("bchw,oc->bohw", seg, ws[:, :, i, j])
    return out


def conv_t1d_ref(x, w, p, op, s, d):
    B, C, L = x.shape
    _, O, K = w.shape
    full = np.zeros((B, O, (L - 1) * s + d * (K - 1) + 1 + op))
    for k in range(K):
        full[:, :, k * d:k * d + s * (L - 1) + 1:s] += np.einsum("bcl,co->bol", x, w[:, :, k])
    lout = (L - 1) * s - 2 * p + d * (K - 1) + op + 1
    return full[:, :, p:p + lout]


def conv_t2d_ref(x, w, p, op, s, d):
    B, C, H, W = x.shape
    _, O, KH, KW = w.shape
    full = np.zeros((B, O, (H - 1) * s + d * (KH - 1) + 1 + op, (W - 1) * s + d * (KW - 1) + 1 + op))
    for i in range(KH):
        for j in range(KW):
            full[:, :, i * d:i * d + s * (H - 1) + 1:s, j * d:j * d + s * (W - 1) + 1:s] += \
                np.einsum("bchw,co->bohw", x, w[:, :, i, j])
    oh = (H - 1) * s + d * (KH - 1) + op + 1 - 2 * p
    ow = (W - 1) * s + d * (KW - 1) + op + 1 - 2 * p
    return full[:, :, p:p + oh, p:p + ow]


@pytest.mark.parametrize("dt", ["f16", "f32", "f64"])
@pytest.mark.parametrize("p,s,d,g", [(0, 1, 1, 1), (1, 2, 1, 1), (2, 1, 2, 2)])
def test_convolutions(dt, p, s, d, g, rng, device):
    tol = TOL[dt] * 8
    x, xt = make(rng, (2, 4, 11), dt, -1, 1, device)
    w, wt = make(rng, (6, 4 // g, 3), dt, -1, 1, device)
    check(xt.conv1d(wt, padding=p, stride=s, dilation=d, groups=g), conv1d_ref(x, w, p, s, d, g), dt, rtol=tol)
    x, xt = make(rng, (2, 4, 7, 8), dt, -1, 1, device)
    w, wt = make(rng, (6, 4 // g, 3, 2), dt, -1, 1, device)
    check(xt.conv2d(wt, padding=p, stride=s, dilation=d, groups=g), conv2d_ref(x, w, p, s, d, g), dt, rtol=tol)
    x, xt = make(rng, (2, 4, 6), dt, -1, 1, device)
    w, wt = make(rng, (4, 3, 3), dt, -1, 1, device)
    op = 1 if s > 1 else 0
    check(xt.conv_transpose1d(wt, padding=p, output_padding=op, stride=s, dilation=d),
          conv_t1d_ref(x, w, p, op, s, d), dt, rtol=tol)
    x, xt = make(rng, (2, 4, 5, 6), dt, -1, 1, device)
    w, wt = make(rng, (4, 3, 3, 3), dt, -1, 1, device)
    check(xt.conv_transpose2d(wt, padding=p, output_padding=op, stride=s, dilation=d),
          conv_t2d_ref(x, w, p, op, s, d), dt, rtol=tol)


@pytest.mark.parametrize("dt", ["f16", "f32", "f64"])
def test_pooling(dt, rng, device):
    x, t = make(rng, (2, 3, 7, 9), dt, -2, 2, device)
    for (kh, kw), (sh, sw) in [((2, 2), (2, 2)), ((3, 2), (1, 2))]:
        oh, ow = (7 - kh) // sh + 1, (9 - kw) // sw + 1
        win = np.stack([x[:, :, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw]
                        for i in range(kh) for j in range(kw)])
        check(t.max_pool2d((kh, kw), (sh, sw)), win.max(axis=0), dt)
        check(t.avg_pool2d((kh, kw), (sh, sw)), win.mean(axis=0), dt, rtol=TOL[dt] * 4)


def bilinear_ref(x, oh, ow, align):
    B, C, H, W = x.shape

    def src(o, n_in, n_out):
        if align:
            return o * (n_in - 1) / (n_out - 1) if n_out > 1 else 0 * o
        return np.maximum((o + 0.5) * n_in / n_out - 0.5, 0)

    ys, xs = src(np.arange(oh), H, oh), src(np.arange(ow), W, ow)
    y0, x0 = np.floor(ys).astype(int), np.floor(xs).astype(int)
    y1, x1 = np.minimum(y0 + 1, H - 1), np.minimum(x0 + 1, W - 1)
    wy, wx = (ys - y0)[:, None], (xs - x0)[None, :]
    g = lambda yy, xx: x[:, :, yy][:, :, :, xx]  # noqa: E731
    return (g(y0, x0) * (1 - wy) * (1 - wx) + g(y0, x1) * (1 - wy) * wx + g(y1, x0) * wy * (1 - wx)
            + g(y1, x1) * wy * wx)


@pytest.mark.parametrize("dt", ["f32", "f64"])
def test_upsampling(dt, rng, device):
    x, t = make(rng, (2, 3, 4, 5), dt, -2, 2, device)
    rows, cols = np.floor(np.arange(7) * 4 / 7).astype(int), np.floor(np.arange(9) * 5 / 9).astype(int)
    check(t.upsample_nearest2d(7, 9), x[:, :, rows][:, :, :, cols], dt)
    x1, t1 = make(rng, (2, 3, 5), dt, -2, 2, device)
    check(t1.upsample_nearest1d(8), x1[:, :, np.floor(np.arange(8) * 5 / 8).astype(int)], dt)
    for align in (False, True):
        check(t.upsample_bilinear2d(7, 9, align_corners=align), bilinear_ref(x, 7, 9, align), dt, rtol=TOL[dt] * 8)


def softmax_ref(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("dt", FLOATS)
def test_softmax_and_norms(dt, rng, device):
    tol = TOL[dt] * 8
    x, t = make(rng, (3, 4, 16), dt, -3, 3, device)
    check(t.softmax(-1), softmax_ref(x), dt, rtol=tol)
    check(wick.nn.softmax(t, 1), softmax_ref(x, 1), dt, rtol=tol)
    check(wick.nn.log_softmax(t, -1), np.log(softmax_ref(x)), dt, rtol=tol)
    a, at = make(rng, (16,), dt, 0.5, 1.5, device)
    b, bt = make(rng, (16,), dt, -1, 1, device)
    rms = x / np.sqrt((x**2).mean(axis=-1, keepdims=True) + 1e-5) * a
    check(wick.nn.rms_norm(t, at, 1e-5), rms, dt, rtol=tol)
    ln = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) * a + b
    check(wick.nn.layer_norm(t, at, bt, 1e-5), ln, dt, rtol=tol)


@pytest.mark.parametrize("dt", ["f16", "f32", "f64"])
def test_rope(dt, rng, device):
    B, H, T, D = 2, 3, 5, 8
    x, t = make(rng, (B, H, T, D), dt, -1, 1, device)
    ang = np.arange(T)[:, None] * (10000.0 ** (-np.arange(D // 2) * 2 / D))[None, :]
    c, s = round_to(np.cos(ang), dt), round_to(np.sin(ang), dt)
    ct, st = wick.tensor(c, dtype=dt, device=device), wick.tensor(s, dtype=dt, device=device)
    h = D // 2
    half = np.concatenate([x[..., :h] * c - x[..., h:] * s, x[..., h:] * c + x[..., :h] * s], axis=-1)
    check(wick.nn.rope(t, ct, st), half, dt, rtol=TOL[dt] * 4)
    inter = np.empty_like(x)
    inter[..., 0::2] = x[..., 0::2] * c - x[..., 1::2] * s
    inter[..., 1::2] = x[..., 1::2] * c + x[..., 0::2] * s
    check(wick.nn.rope_i(t, ct, st), inter, dt, rtol=TOL[dt] * 4)
    thd = t.permute(0, 2, 1, 3).contiguous()
    check(wick.nn.rope_thd(thd, ct, st), half.transpose(0, 2, 1, 3), dt, rtol=TOL[dt] * 4)


@pytest.mark.parametrize("dt", ["f16", "f32"])
@pytest.mark.parametrize("causal", [False, True])
def test_attention(dt, causal, rng, device):
    B, H, Hkv, T, S, D = 2, 4, 2, 3, 5, 8
    q, qt = make(rng, (B, H, T, D), dt, -1, 1, device)
    k, kt = make(rng, (B, Hkv, S, D), dt, -1, 1, device)
    v, vt = make(rng, (B, Hkv, S, D), dt, -1, 1, device)
    kk, vv = np.repeat(k, H // Hkv, axis=1), np.repeat(v, H // Hkv, axis=1)
    scores = q @ kk.transpose(0, 1, 3, 2) / math.sqrt(D)
    if causal:
        scores = np.where(np.arange(S)[None, :] <= (S - T + np.arange(T))[:, None], scores, -np.inf)
    check(wick.nn.attention(qt, kt, vt, 1 / math.sqrt(D), causal), softmax_ref(scores) @ vv, dt, rtol=TOL[dt] * 8)


def test_creation(device):
    check(wick.arange(2, 11, 3, device=device), np.arange(2, 11, 3), dtype="i64")
    check(wick.arange(0, 1, 0.25, device=device), np.arange(0, 1, 0.25), "f32", dtype="f32")
    check(wick.linspace(-1, 1, 9, device=device), np.linspace(-1, 1, 9), "f32")
    check(wick.eye(3, 4, device=device), np.eye(3, 4), "f32")
    check(wick.full((2, 3), 7, device=device), np.full((2, 3), 7), dtype="i64")
    check(wick.zeros(2, 3, dtype="f16", device=device), np.zeros((2, 3)), dtype="f16")
    check(wick.ones((4,), device=device), np.ones(4), "f32")
    x = np.arange(20.0).reshape(4, 5)
    t = wick.tensor(x, device=device)
    check(t.tril(), np.tril(x), "f64")
    check(t.triu(1), np.triu(x, 1), "f64")
    check(t.pad([(1, 0), (0, 2)], 9), np.pad(x, ((1, 0), (0, 2)), constant_values=9), "f64")
    check(t.repeat(2, 1), np.tile(x, (2, 1)), "f64")
    check(wick.cat([t, t], 1), np.concatenate([x, x], 1), "f64")
    check(wick.stack([t, t], 0), np.stack([x, x], 0), "f64")
    for piece, want in zip(t.split(2, 1), np.split(x, [2, 4], 1)):
        check(piece, want, "f64")
    check(t.reshape(-1, 2), x.reshape(-1, 2), "f64")
    check(t.T, x.T, "f64")
    check(t.unsqueeze(0).squeeze(), x, "f64")
    check(t.clamp(3, 15), np.clip(x, 3, 15), "f64")
    check(t.clamp(max=4), np.minimum(x, 4), "f64")
    r = wick.rand(1000, device=device, low=2, high=3)
    assert 2 <= r.min().item() and r.max().item() < 3
    wick.manual_seed(5, device)
    a = wick.randn(8, device=device)
    wick.manual_seed(5, device)
    check(wick.randn(8, device=device), to_np(a), "f32")
