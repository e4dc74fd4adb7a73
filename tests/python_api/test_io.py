"""Files: .npy / .npz against NumPy's own reader and writer, safetensors against the format's
layout (an 8-byte header length, a JSON header, the raw data), GGUF written and read back."""
import json
import struct

import numpy as np
import pytest
from util import to_np

import wick


def test_npy_both_ways_with_numpy(tmp_path, device):
    a = np.arange(12, dtype=np.float32).reshape(3, 4) / 3
    np.save(tmp_path / "a.npy", a)
    t = wick.read_npy(str(tmp_path / "a.npy"), device)
    assert t.device == device and t.dtype == wick.f32
    np.testing.assert_array_equal(to_np(t), a)
    wick.write_npy(str(tmp_path / "b.npy"), t.T)
    np.testing.assert_array_equal(np.load(tmp_path / "b.npy"), a.T)
    np.testing.assert_array_equal(to_np(wick.parse_npy(wick.npy_serialize(t))), a)


def test_npz_both_ways_with_numpy(tmp_path):
    x, y = np.arange(5, dtype=np.int64), np.ones((2, 2), dtype=np.float16)
    np.savez_compressed(tmp_path / "c.npz", x=x, y=y)
    d = wick.read_npz(str(tmp_path / "c.npz"))
    assert list(d) == ["x", "y"]
    np.testing.assert_array_equal(to_np(d["x"]), x)
    wick.write_npz(str(tmp_path / "d.npz"), {"first": d["y"], "second": d["x"]})
    with np.load(tmp_path / "d.npz") as z:
        np.testing.assert_array_equal(z["first"], y)
        np.testing.assert_array_equal(z["second"], x)


def test_safetensors_layout_and_round_trip(tmp_path, device):
    a = wick.tensor(np.arange(6, dtype=np.float32).reshape(2, 3), device=device)
    b = wick.tensor([1, 2, 3], dtype="bf16", device=device)
    raw = wick.safetensors_serialize({"a": a, "b": b}, {"format": "pt"})
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    assert header["__metadata__"] == {"format": "pt"}
    assert header["a"]["dtype"] == "F32" and header["a"]["shape"] == [2, 3]
    start, end = header["a"]["data_offsets"]
    np.testing.assert_array_equal(np.frombuffer(raw[8 + n + start:8 + n + end], dtype=np.float32),
                                  np.arange(6, dtype=np.float32))
    path = tmp_path / "m.safetensors"
    wick.write_safetensors(str(path), {"a": a, "b": b})
    f = wick.SafetensorsFile.open(str(path))
    assert [i.name for i in f.tensors] == ["a", "b"] and f.tensors[1].dtype_name == "BF16"
    loaded = wick.load_safetensors(path, device)
    np.testing.assert_array_equal(to_np(loaded["a"]), np.arange(6).reshape(2, 3))
    assert loaded["b"].dtype == wick.bf16 and loaded["b"].device == device


def test_gguf_round_trip(tmp_path, rng, device):
    w = wick.tensor(rng.uniform(-1, 1, (4, 64)).astype(np.float32), device=device)
    q = wick.QTensor.quantize(w, "q8_0")
    meta = {"general.architecture": "test", "general.alignment": np.uint32(64), "x.count": 3,
            "x.scale": 0.5, "x.flag": True, "x.names": ["a", "bc"], "x.big": 2**40, "x.neg": np.int8(-3)}
    path = tmp_path / "t.gguf"
    wick.write_gguf(str(path), meta, {"w": w, "wq": q, "ids": wick.arange(5, device=device)})
    f = wick.GgufFile.open(str(path))
    assert f.version == 3 and f.alignment == 64
    m = f.metadata
    assert m["general.architecture"] == "test" and m["x.count"] == 3 and m["x.scale"] == 0.5
    assert m["x.flag"] is True and m["x.names"] == ["a", "bc"] and m["x.big"] == 2**40 and m["x.neg"] == -3
    types = {k: f.metadata_type(k) for k in ("general.alignment", "x.count", "x.scale", "x.big", "x.neg", "x.names")}
    assert types == {"general.alignment": "u32", "x.count": "i32", "x.scale": "f32", "x.big": "i64", "x.neg": "i8",
                     "x.names": "array"}
    info = {i.name: i for i in f.tensors}
    assert info["w"].shape == (4, 64) and info["w"].ne == [64, 4] and info["wq"].type_name == "q8_0"
    np.testing.assert_array_equal(to_np(f.tensor("w", device)), to_np(w))
    np.testing.assert_array_equal(to_np(f.qtensor("wq", device).dequantize()), to_np(q.dequantize()))
    assert f.tensor("ids").tolist() == [0, 1, 2, 3, 4]
    every = wick.gguf_tensors(path)
    assert isinstance(every["wq"], wick.QTensor) and isinstance(every["w"], wick.Tensor)
    assert wick.GgufFile.parse(wick.gguf_serialize(meta, {"w": w})).metadata["x.count"] == 3


def test_gguf_metadata_errors(tmp_path):
    with pytest.raises(wick.Error) as info:
        wick.gguf_serialize({"x.mixed": [1, "a"]}, {})
    assert info.value.kind == wick.ErrorKind.InvalidArgument and "x.mixed" in str(info.value)
    with pytest.raises(wick.Error):
        wick.gguf_serialize({"x.obj": object()}, {})
