"""DLPack and NumPy interop: zero-copy both ways (a write through one side is seen by the
other), strided views, the copies wick must make (negative strides, read-only memory), and
PyTorch on the CPU and on the --device GPU, streams included."""
import numpy as np
import pytest

import wick


def test_numpy_view_of_a_tensor_shares_memory():
    t = wick.arange(12, dtype="f32").reshape(3, 4)
    a = np.asarray(t)
    assert a.dtype == np.float32 and a.shape == (3, 4)
    assert a.ctypes.data == t.data_ptr
    a[1, 2] = -7
    assert t[1, 2].item() == -7
    t[0, 0] = 42.0
    assert a[0, 0] == 42
    v = t.T[1:, ::2]  # a strided view exports its strides
    np.testing.assert_array_equal(np.asarray(v), a.T[1:, ::2])
    assert np.asarray(v).ctypes.data == v.data_ptr


def test_numpy_array_as_a_tensor_shares_memory():
    a = np.arange(20, dtype=np.float64).reshape(4, 5)
    t = wick.from_numpy(a)
    assert t.dtype == wick.f64 and t.data_ptr == a.ctypes.data
    a[2, 3] = 100
    assert t[2, 3].item() == 100
    t[0] = -1.0
    assert (a[0] == -1).all()
    s = wick.from_numpy(a[:, 1::2])  # strides travel
    assert s.shape == (4, 2) and s.strides == (5, 2)
    np.testing.assert_array_equal(np.asarray(s), a[:, 1::2])
    assert wick.from_dlpack(a).data_ptr == a.ctypes.data


@pytest.mark.parametrize("np_dtype,dt", [(np.uint8, "u8"), (np.uint32, "u32"), (np.int32, "i32"), (np.int64, "i64"),
                                         (np.float16, "f16"), (np.float32, "f32"), (np.float64, "f64"), (np.bool_, "u8")])
def test_dtypes_both_ways(np_dtype, dt):
    a = (np.arange(6) % 3).astype(np_dtype)
    t = wick.from_numpy(a)
    assert t.dtype == wick.dtype(dt)
    back = np.from_dlpack(t)
    np.testing.assert_array_equal(back, a.astype(back.dtype))


def test_bf16_through_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    a = np.array([1.5, -2.25, 3.0], dtype=ml_dtypes.bfloat16)
    t = wick.from_numpy(a)
    assert t.dtype == wick.bf16 and t.data_ptr == a.ctypes.data
    assert t.to_dtype("f32").tolist() == [1.5, -2.25, 3.0]
    b = np.asarray(t)
    assert b.dtype == ml_dtypes.bfloat16 and b.ctypes.data == t.data_ptr


def test_copies_where_wick_cannot_wrap():
    a = np.arange(10.0)
    rev = wick.from_numpy(a[::-2])  # negative strides: a copy, same values
    assert rev.tolist() == [9.0, 7.0, 5.0, 3.0, 1.0]
    with pytest.raises(BufferError):
        wick.from_numpy(a[::-1], copy=False)
    ro = np.arange(4.0)
    ro.flags.writeable = False
    t = wick.from_numpy(ro)
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0] and t.data_ptr != ro.ctypes.data
    with pytest.raises(BufferError):
        wick.from_numpy(ro, copy=False)
    c = wick.from_numpy(np.arange(3.0), copy=True)
    assert c.tolist() == [0.0, 1.0, 2.0]
    be = np.arange(3, dtype=">f4")
    assert wick.from_numpy(be).tolist() == [0.0, 1.0, 2.0]


def test_capsules_and_devices(device):
    t = wick.arange(5, dtype="i32", device=device)
    assert t.__dlpack_device__() == wick._wick.Device.__dlpack_device__(device)
    if device.is_cpu:
        assert t.__dlpack_device__() == (1, 0)
        capsule = t.__dlpack__()
        assert wick.from_dlpack(capsule).tolist() == [0, 1, 2, 3, 4]
        empty = wick.zeros(0, 3)
        assert np.from_dlpack(empty).shape == (0, 3)
    else:
        kind, index = t.__dlpack_device__()
        assert kind in (2, 10)  # kDLCUDA, kDLROCM
    u = wick.from_dlpack(t)
    assert u.data_ptr == t.data_ptr and u.device == t.device


def test_tensor_outlives_the_producer():
    a = np.arange(1000, dtype=np.float32)
    t = wick.from_numpy(a)
    del a
    import gc
    gc.collect()
    assert t.sum().item() == sum(range(1000))


# ---- PyTorch ------------------------------------------------------------------------------
def torch_device(device):
    torch = pytest.importorskip("torch")
    if device.is_cpu:
        return torch, torch.device("cpu")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    kind, index = device.__dlpack_device__()
    return torch, torch.device("cuda", index)


def test_torch_to_wick_zero_copy(device):
    torch, tdev = torch_device(device)
    x = torch.arange(24, dtype=torch.float32, device=tdev).reshape(4, 6)
    t = wick.from_dlpack(x)
    assert t.device == device and t.data_ptr == x.data_ptr() and t.shape == (4, 6)
    x[1, 1] = 1000  # torch writes, wick reads
    assert t[1, 1].item() == 1000
    xt = x.t()  # a transposed view keeps its strides
    tt = wick.from_dlpack(xt)
    assert tt.strides == tuple(xt.stride()) and tt.data_ptr == xt.data_ptr()
    np.testing.assert_array_equal(tt.cpu().numpy(), xt.cpu().numpy())
    for dtype in (torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.uint8, torch.float64, torch.bool):
        y = (torch.arange(5, device=tdev) % 2).to(dtype)
        w = wick.from_dlpack(y)
        assert w.to_dtype("f64").tolist() == y.to(torch.float64).cpu().tolist()


def test_wick_to_torch_zero_copy(device):
    torch, tdev = torch_device(device)
    t = wick.arange(12, dtype="f32", device=device).reshape(3, 4)
    x = torch.from_dlpack(t)
    assert x.device == tdev and x.data_ptr() == t.data_ptr and tuple(x.shape) == (3, 4)
    t[2, 3] = -5.0  # wick writes, torch reads
    assert x[2, 3].item() == -5.0
    x[0, 0] = 77  # torch writes, wick reads
    assert t[0, 0].item() == 77
    v = t.T
    xv = torch.from_dlpack(v)
    assert tuple(xv.stride()) == v.strides
    want = np.arange(12, dtype=np.float32).reshape(3, 4)
    want[2, 3], want[0, 0] = -5, 77
    np.testing.assert_array_equal(xv.cpu().numpy(), want.T)
    b = wick.tensor([1.5, 2.5], dtype="bf16", device=device)
    assert torch.from_dlpack(b).dtype == torch.bfloat16


def test_streams_order_the_producers_writes(device):
    """Work each side queued on its own stream is finished before the other reads it."""
    torch, tdev = torch_device(device)
    if device.is_cpu:
        pytest.skip("streams are a GPU matter")
    n = 1 << 24
    side = torch.cuda.Stream(tdev)
    want = float(np.float32(1.0001) ** 20) * n
    for _ in range(3):
        with torch.cuda.stream(side):  # torch hands over what is queued on its current stream
            a = torch.ones(n, device=tdev)
            for _ in range(20):
                a = a * 1.0001  # a queue of kernels on torch's stream
            t = wick.from_dlpack(a)  # ordered before wick's work on its own stream
        assert abs(t.sum().item() - want) / want < 1e-3
        w = wick.full((n,), 2.0, device=device) * 3.0  # queued on wick's stream
        with torch.cuda.stream(side):
            assert torch.from_dlpack(w).sum().item() == 6.0 * n
