"""wick::Error reaches Python as wick.Error (a RuntimeError) with .kind and the C++ message."""
import sys

import numpy as np
import pytest

import wick
from wick import ErrorKind


def raises(kind, message):
    """Asserts the block raises wick.Error of `kind` whose message is exactly `message`."""
    class Check:
        def __enter__(self):
            self.ctx = pytest.raises(wick.Error)
            self.info = self.ctx.__enter__()
            return self.info

        def __exit__(self, *exc):
            handled = self.ctx.__exit__(*exc)
            assert self.info.value.kind == kind, f"kind {self.info.value.kind}, expected {kind}"
            assert str(self.info.value) == message
            return handled
    return Check()


def test_error_is_a_runtime_error_with_a_kind(device):
    a = wick.zeros(2, 3, device=device)
    with pytest.raises(RuntimeError) as info:
        a @ wick.zeros(4, 5, device=device)
    assert isinstance(info.value, wick.Error)
    assert info.value.kind == ErrorKind.ShapeMismatch


def test_messages_are_the_libraries(device):
    a = wick.zeros(2, 3, device=device)
    with raises(ErrorKind.ShapeMismatch, "[matmul] lhs [2,3] f32 rhs [4,5] f32: inner dims differ"):
        a.matmul(wick.zeros(4, 5, device=device))
    with raises(ErrorKind.DimOutOfRange, "[sum] dim 2 out of range for rank 2"):
        a.sum(2)
    with raises(ErrorKind.UnsupportedDType, "[dtype] 'int8' is not a wick dtype (u8, u32, i32, i64, f16, bf16, f32, f64)"):
        a.to("int8")
    with raises(ErrorKind.InvalidArgument, "[device] cannot parse device 'tpu:0' (cpu, gpu, gpu:N)"):
        wick.Device("tpu:0")
    with raises(ErrorKind.IndexOutOfRange, "[index] index 3 is out of range for dim 1 of size 3"):
        a[0, 3]


def test_broadcast_and_dtype_errors(device):
    with pytest.raises(wick.Error) as info:
        wick.zeros(2, 3, device=device) + wick.zeros(4, device=device)
    assert info.value.kind == ErrorKind.ShapeMismatch and str(info.value).startswith("[add]")
    with pytest.raises(wick.Error) as info:
        wick.zeros(2, 3, dtype="i32", device=device).exp()
    assert info.value.kind == ErrorKind.UnsupportedDType and "i32" in str(info.value)


def test_files(tmp_path):
    with pytest.raises(wick.Error) as info:
        wick.GgufFile.open(str(tmp_path / "missing.gguf"))
    assert info.value.kind == ErrorKind.Io and "missing.gguf" in str(info.value)
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + b"\x03\x00\x00\x00" + b"\xff" * 8)
    with pytest.raises(wick.Error) as info:
        wick.GgufFile.open(str(bad))
    assert info.value.kind == ErrorKind.Format and "bad.gguf" in str(info.value)
    with pytest.raises(wick.Error) as info:
        wick.Model.load(str(tmp_path / "missing.gguf"))
    assert info.value.kind == ErrorKind.Io


def test_python_side_checks_raise_wick_errors():
    with pytest.raises(wick.Error) as info:
        wick.tensor([[1, 2], [3]])
    assert info.value.kind == ErrorKind.ShapeMismatch and str(info.value).startswith("[tensor]")
    with pytest.raises(TypeError):
        wick.tensor(["a"])
    with pytest.raises(wick.Error) as info:
        wick.arange(4)[1, 2]
    assert info.value.kind == ErrorKind.IndexOutOfRange
    with pytest.raises(wick.Error) as info:
        wick.from_numpy(np.zeros(3, dtype=np.int8))
    assert info.value.kind == ErrorKind.UnsupportedDType and "int8" in str(info.value)


def test_gpu_tensor_has_no_numpy_view(device):
    if device.is_cpu:
        pytest.skip("a CPU tensor has one")
    with pytest.raises(wick.Error) as info:
        np.asarray(wick.zeros(2, device=device))
    assert info.value.kind == ErrorKind.DeviceMismatch and "cpu()" in str(info.value)


def test_bf16_to_numpy_without_ml_dtypes(monkeypatch):
    monkeypatch.setitem(sys.modules, "ml_dtypes", None)  # import ml_dtypes now fails
    with pytest.raises(wick.Error) as info:
        np.asarray(wick.zeros(2, dtype="bf16"))
    assert info.value.kind == ErrorKind.UnsupportedDType and "ml_dtypes" in str(info.value)


def test_truth_value_of_many_elements_is_ambiguous():
    with pytest.raises(ValueError):
        bool(wick.zeros(2))
    assert bool(wick.ones(1)) and not bool(wick.zeros(()))
