#!/usr/bin/env python3
"""Independent oracle for wick's file formats and quantizers.

Uses the `gguf` package (PyPI, llama.cpp's gguf-py) and NumPy, never wick code.
Driven by tests/test_gguf.cpp and tests/test_npy.cpp:

  gguf_oracle.py write DIR      oracle.gguf with every metadata type and one tensor per
                                ggml type, plus DIR/<tensor>.npy = gguf.quants.dequantize
  gguf_oracle.py quantize DIR   x.npy (f32 rows) and <type>.bin = gguf.quants.quantize(x),
                                plus f16.bin = x.astype(float16)
  gguf_oracle.py check FILE     reads a GGUF wick wrote with gguf.GGUFReader, asserts content
  gguf_oracle.py npy DIR        .npy/.npz files written by NumPy for wick to read
  gguf_oracle.py checknpz FILE  loads an .npz wick wrote with np.load, asserts content
Exit status 0 on success; 3 when gguf or numpy is missing (the test then skips).
"""
import os
import sys

try:
    import numpy as np
    import gguf
    from gguf import GGMLQuantizationType as T
    from gguf import quants
except ImportError as e:  # pragma: no cover
    print(f"missing python package: {e}", file=sys.stderr)
    sys.exit(3)

ORACLE_TYPES = ["F32", "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0",
                "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"]
LEGACY = ["Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "BF16"]
# byte offsets of the f16 scale fields inside each K-quant block (ggml-common.h)
K_SCALE_FIELDS = {"Q2_K": [80, 82], "Q3_K": [108], "Q4_K": [0, 2], "Q5_K": [0, 2], "Q6_K": [208]}


def random_k_blocks(qtype, rows, cols, rng):
    """Random K-quant blocks whose f16 scales are finite and small."""
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    nblocks = rows * cols // block
    raw = rng.integers(0, 256, size=(nblocks, size), dtype=np.uint8)
    for off in K_SCALE_FIELDS[qtype.name]:
        d = rng.uniform(0.001, 0.05, size=nblocks).astype(np.float16)
        raw[:, off:off + 2] = d.view(np.uint8).reshape(nblocks, 2)
    return raw.reshape(rows, cols // block * size)


def cmd_write(out):
    rng = np.random.default_rng(1234)
    w = gguf.GGUFWriter(os.path.join(out, "oracle.gguf"), "llama")
    w.add_uint8("test.u8", 200)
    w.add_int8("test.i8", -100)
    w.add_uint16("test.u16", 60000)
    w.add_int16("test.i16", -30000)
    w.add_uint32("test.u32", 4000000000)
    w.add_int32("test.i32", -2000000000)
    w.add_float32("test.f32", 0.5)
    w.add_uint64("test.u64", 18000000000000000000)
    w.add_int64("test.i64", -9000000000000000000)
    w.add_float64("test.f64", 0.125)
    w.add_bool("test.bool", True)
    w.add_string("test.str", "héllo wick")
    w.add_array("test.arr_str", ["a", "bc", ""])
    w.add_array("test.arr_f32", [1.5, -2.0])
    w.add_array("test.nested", [[1, 2], [3, 4, 5]])
    for name in ORACLE_TYPES:
        qtype = T[name]
        rows, cols = 4, 512
        x = rng.standard_normal((rows, cols)).astype(np.float32)
        if name == "F32":
            raw = x
        elif name == "F16":
            raw = x.astype(np.float16)
        elif name in K_SCALE_FIELDS:
            raw = random_k_blocks(qtype, rows, cols, rng)
        else:
            raw = quants.quantize(x, qtype)
        if name in ("F32", "F16"):
            w.add_tensor(f"t.{name.lower()}", raw)
            expect = raw.astype(np.float32)
        else:
            w.add_tensor(f"t.{name.lower()}", raw, raw_shape=None, raw_dtype=qtype)
            expect = quants.dequantize(raw, qtype).astype(np.float32)
        np.save(os.path.join(out, f"t.{name.lower()}.npy"), expect.reshape(rows, cols))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def cmd_quantize(out):
    rng = np.random.default_rng(99)
    n = 32 * 64
    i = np.arange(n, dtype=np.float64)
    rows = [0.1 + 2 * np.cos(i), rng.standard_normal(n), rng.uniform(-1, 3, n),
            np.where(i % 7 == 0, 5.0, 0.01 * i / n)]
    x = np.stack(rows).astype(np.float32)
    x[3, :32] = 0.0  # an all-zero block
    np.save(os.path.join(out, "x.npy"), x)
    for name in LEGACY:
        q = quants.quantize(x, T[name])
        with open(os.path.join(out, f"{name.lower()}.bin"), "wb") as f:
            f.write(q.tobytes())
    with open(os.path.join(out, "f16.bin"), "wb") as f:
        f.write(x.astype(np.float16).tobytes())


def expect(cond, what):
    if not cond:
        print(f"oracle check failed: {what}", file=sys.stderr)
        sys.exit(1)


def cmd_check(path):
    r = gguf.GGUFReader(path)
    f = r.fields
    expect(f["general.architecture"].contents() == "wick-test", "architecture")
    expect(f["wick.u32"].contents() == 123456, "u32")
    expect(f["wick.i64"].contents() == -5, "i64")
    expect(abs(f["wick.f64"].contents() - 0.25) < 1e-12, "f64")
    expect(f["wick.bool"].contents() is False, "bool")
    expect(f["wick.names"].contents() == ["x", "yy"], "string array")
    # gguf-py's reader flattens nested arrays; the type path shows the nesting
    nested = f["wick.nested"]
    expect(nested.contents() == [1, 2, 3], f"nested array {nested.contents()}")
    expect(nested.types == [gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.INT32],
           f"nested array types {nested.types}")
    ts = {t.name: t for t in r.tensors}
    expect(set(ts) == {"w.f32", "w.q8_0", "w.q4_k"}, f"tensor names {sorted(ts)}")
    ref = np.asarray(ts["w.f32"].data, dtype=np.float32).reshape(2, 256)
    expect(ref[1, 3] == np.float32(1 * 0.25 + 3 / 256.0), "f32 value")
    for name, qt, tol in (("w.q8_0", T.Q8_0, 0.01), ("w.q4_k", T.Q4_K, 0.05)):
        t = ts[name]
        expect(t.tensor_type == qt, f"{name} type")
        expect(list(t.shape) == [256, 2], f"{name} ne {list(t.shape)}")
        deq = quants.dequantize(np.asarray(t.data), qt).reshape(2, 256)
        expect(np.max(np.abs(deq - ref)) < tol, f"{name} values {np.max(np.abs(deq - ref))}")


def cmd_npy(out):
    a = np.arange(12, dtype=np.float32).reshape(3, 4) / 4
    np.save(os.path.join(out, "c_f32.npy"), a)
    np.save(os.path.join(out, "fortran_i64.npy"), np.asfortranarray(np.arange(6, dtype=np.int64).reshape(2, 3)))
    np.save(os.path.join(out, "big_f64.npy"), np.array([1.5, -2.25, 3.0], dtype=">f8"))
    np.save(os.path.join(out, "f16.npy"), np.array([[0.5, -1.0]], dtype=np.float16))
    np.save(os.path.join(out, "scalar_u8.npy"), np.array(7, dtype=np.uint8))
    np.save(os.path.join(out, "bool.npy"), np.array([True, False, True]))
    np.savez(os.path.join(out, "stored.npz"), first=a, second=np.array([1, 2, 3], dtype=np.int32))
    # the same arrays deflated: random data (dynamic Huffman, near-stored), runs, a tiny one
    rng = np.random.default_rng(5)
    arrays = {"a": a, "noise": rng.standard_normal(20000).astype(np.float32),
              "runs": np.repeat(np.arange(50, dtype=np.int64), 400), "tiny": np.array([3], dtype=np.uint8)}
    np.savez(os.path.join(out, "plain.npz"), **arrays)
    np.savez_compressed(os.path.join(out, "compressed.npz"), **arrays)


def cmd_checknpz(path):
    z = np.load(path)
    expect(sorted(z.files) == ["ints", "mat"], f"npz names {sorted(z.files)}")
    expect(z["mat"].dtype == np.float32 and z["mat"].shape == (2, 3), "mat dtype/shape")
    expect(np.array_equal(z["mat"], np.array([[0, 0.5, 1], [1.5, 2, 2.5]], dtype=np.float32)), "mat values")
    expect(z["ints"].dtype == np.int64 and list(z["ints"]) == [-1, 0, 1 << 40], "ints")


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, arg = sys.argv[1], sys.argv[2]
    {"write": cmd_write, "quantize": cmd_quantize, "check": cmd_check, "npy": cmd_npy,
     "checknpz": cmd_checknpz}[cmd](arg)
    return 0


if __name__ == "__main__":
    sys.exit(main())
