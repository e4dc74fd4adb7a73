"""wick: tensors on the CPU and on CUDA / ROCm GPUs, ggml's quantized types, GGUF /
safetensors / NumPy files and a GGUF model runner, over the C++ library of the same name.

    import wick
    x = wick.tensor([[1.0, 2.0], [3.0, 4.0]], device="gpu:0")   # f32 on the first GPU
    y = (x @ x.T).softmax(-1) * 2 - 1                            # NumPy's broadcasting and promotion
    print(y.cpu().numpy())                                       # a NumPy view of the CPU copy
    t = torch.from_dlpack(y)                                     # PyTorch over the same memory

Semantics are NumPy's where the two libraries meet: broadcasting, type promotion
(np.promote_types; a Python number next to a tensor takes the tensor's dtype, as in NumPy 2
and PyTorch), indexing (ints, slices with steps, None, ..., integer arrays and boolean masks),
`/` (true division: integer operands give f32, wick's default float dtype, as in PyTorch),
`//` and `%` (floored, Python's rule). Comparisons give u8 0/1 tensors. `wick.tensor` of
Python floats gives f32 (of ints i64, of bools u8); of a NumPy array, that array's dtype.

Errors are wick.Error (a RuntimeError) with .kind (a wick.ErrorKind) and the C++ library's
message, e.g. "[matmul] lhs [2,3] f32 rhs [4,5] f32: inner dims differ".

Interop: DLPack both ways without a copy on the CPU and on GPUs (`wick.from_dlpack(x)`,
`torch.from_dlpack(t)`, `np.from_dlpack(t)`), and `np.asarray(t)` / `t.numpy()` / `wick.from_numpy(a)`
for CPU tensors (bf16 through ml_dtypes when it is installed).
"""

import operator as _operator
import os as _os
from contextlib import contextmanager as _contextmanager

from . import _wick
from ._wick import (  # noqa: F401  (the public surface)
    BackendStatus,
    Device,
    DeviceInfo,
    DType,
    Error,
    ErrorKind,
    GenerateResult,
    GenerateStats,
    GgmlType,
    GgufFile,
    GgufTensorInfo,
    MemoryBudget,
    MemoryStats,
    Model,
    ModelInfo,
    Options,
    QMatmulPath,
    QTensor,
    SafetensorsFile,
    SafetensorsInfo,
    Tensor,
    Tokenizer,
    add_rms_norm_qmatmul,
    arange,
    available_devices,
    cat,
    device_info,
    dtype,
    dtype_size,
    empty,
    eye,
    full,
    full_like,
    ggml_block_size,
    ggml_is_quantized,
    ggml_row_size,
    ggml_type,
    ggml_type_size,
    gguf_serialize,
    gpu_backend_status,
    is_floating_point,
    linspace,
    manual_seed,
    memory_stats,
    native_stream,
    nn,
    npy_serialize,
    ones,
    ones_like,
    options,
    options_from_environment,
    parse_npy,
    parse_npz,
    promote_types,
    qmatmul,
    rand,
    randn,
    read_npy,
    read_npz,
    safetensors_serialize,
    set_options,
    stack,
    swiglu_qmatmul,
    synchronize,
    write_gguf,
    write_npy,
    write_npz,
    write_safetensors,
    zeros,
    zeros_like,
)

__version__ = "0.1.0"

# ---- dtypes ------------------------------------------------------------------------
u8 = uint8 = DType.u8
u32 = uint32 = DType.u32
i32 = int32 = DType.i32
i64 = int64 = DType.i64
f16 = float16 = half = DType.f16
bf16 = bfloat16 = DType.bf16
f32 = float32 = DType.f32
f64 = float64 = DType.f64
DType.__str__ = lambda self: self.name
DType.itemsize = property(lambda self: dtype_size(self))
DType.is_floating_point = property(lambda self: is_floating_point(self))

cpu = Device.cpu()


def _fail(kind, op, message):
    """Raises wick.Error("[op] message") of the given kind, as the C++ library would."""
    _wick._raise(kind, op, message)


# ---- NumPy (optional) --------------------------------------------------------------
def _numpy():
    try:
        import numpy
    except ImportError:  # pragma: no cover - exercised where NumPy is absent
        _fail(ErrorKind.InvalidArgument, "numpy", "NumPy is not installed (pip install numpy)")
    return numpy


def _bfloat16_type(op):
    """ml_dtypes.bfloat16, NumPy's bf16 where that package is installed."""
    try:
        import ml_dtypes
    except ImportError:
        _fail(ErrorKind.UnsupportedDType, op,
              "bf16 has no NumPy dtype without ml_dtypes (pip install ml_dtypes), "
              "or convert first: t.to(wick.f32)")
    return ml_dtypes.bfloat16


def _is_bfloat16(np_dtype):
    return getattr(np_dtype, "name", "") == "bfloat16"


_NUMPY_DTYPES = ("bool", "uint8", "uint32", "int32", "int64", "float16", "float32", "float64")


def from_numpy(array, copy=None):
    """A CPU tensor over a NumPy array's memory (no copy; copy=True copies, copy=False refuses
    arrays wick cannot wrap: read-only, negative strides, unaligned, non-native byte order).
    bfloat16 arrays (ml_dtypes) give bf16; bool gives u8."""
    np = _numpy()
    a = array if isinstance(array, np.ndarray) else np.asarray(array)
    if not a.dtype.isnative:
        if copy is False:
            raise BufferError("from_numpy: copy=False but the array's byte order is not the machine's")
        a = a.astype(a.dtype.newbyteorder("="))
    if _is_bfloat16(a.dtype):
        return _wick._import_dlpack(a.view(np.uint16), copy, bf16)
    if a.dtype.name not in _NUMPY_DTYPES:
        _fail(ErrorKind.UnsupportedDType, "from_numpy",
              f"NumPy dtype {a.dtype} has no wick dtype (u8, u32, i32, i64, f16, bf16, f32, f64; bool as u8)")
    return _wick._import_dlpack(a, copy)


def _to_numpy(t, op):
    if not t.device.is_cpu:
        _fail(ErrorKind.DeviceMismatch, op,
              f"a tensor on {t.device} has no NumPy view: copy it to the CPU first (t.cpu())")
    a = t._numpy_view()
    if t.dtype == bf16:
        a = a.view(_bfloat16_type(op))
    return a


def _tensor_numpy(self):
    """A NumPy array over this CPU tensor's memory (no copy): writes go both ways."""
    return _to_numpy(self, "numpy")


def _tensor_array(self, dtype=None, copy=None):
    a = _to_numpy(self, "__array__")
    if dtype is not None:
        a = a.astype(dtype, copy=False)
    if copy:
        a = a.copy()
    return a


# ---- creation ------------------------------------------------------------------------
_ARRAY_TYPES = ("ndarray",)


def _nested_shape(data):
    shape = []
    x = data
    while isinstance(x, (list, tuple)):
        shape.append(len(x))
        if not x:
            break
        x = x[0]
    return shape


def _flatten(data, shape, depth, out):
    if depth == len(shape):
        if isinstance(data, (list, tuple)):
            _fail(ErrorKind.ShapeMismatch, "tensor", "the nested lists are ragged")
        out.append(data)
        return
    if not isinstance(data, (list, tuple)) or len(data) != shape[depth]:
        _fail(ErrorKind.ShapeMismatch, "tensor",
              f"the nested lists are ragged (expected {shape[depth]} items at depth {depth})")
    for x in data:
        _flatten(x, shape, depth + 1, out)


def _from_python(data, dt):
    import struct

    shape = _nested_shape(data)
    flat = []
    _flatten(data, shape, 0, flat)
    values = []
    kind = "b"  # the widest kind seen: bool < int < float
    for v in flat:
        if isinstance(v, Tensor):
            v = v.item()
        if isinstance(v, bool):
            values.append(int(v))
        elif isinstance(v, int):
            values.append(v)
            kind = "i" if kind == "b" else kind
        elif isinstance(v, float):
            values.append(v)
            kind = "f"
        else:
            try:
                f = _operator.index(v)
                values.append(f)
                kind = "i" if kind == "b" else kind
            except TypeError:
                try:
                    values.append(float(v))
                    kind = "f"
                except (TypeError, ValueError):
                    raise TypeError(f"wick.tensor: {type(v).__name__} is not a number") from None
    default = {"b": u8, "i": i64, "f": f32}[kind]
    target = default if dt is None else dt
    # Built in a carrier dtype that holds the values exactly, then cast by wick's rules.
    if kind == "f" or is_floating_point(target):
        carrier, fmt = f64, "d"
        values = [float(v) for v in values]
    else:
        carrier, fmt = i64, "q"
    buf = struct.pack(f"<{len(values)}{fmt}", *values)
    t = _wick._from_bytes(buf, shape, carrier)
    return t if carrier == target else t.to_dtype(target)


def tensor(data, dtype=None, device=None):
    """A new tensor holding a copy of `data`: nested lists / tuples of numbers, a number, a
    NumPy array (its dtype kept), a wick.Tensor, or anything with __dlpack__ or __array__."""
    dt = None if dtype is None else _wick.dtype(dtype)
    if isinstance(data, Tensor):
        t = data.copy()
    elif isinstance(data, (list, tuple, bool, int, float)):
        t = _from_python(data, dt)
    elif type(data).__name__ in _ARRAY_TYPES or hasattr(data, "__array_interface__") or (
            hasattr(data, "__array__") and not hasattr(data, "__dlpack__")):
        t = from_numpy(_numpy().asarray(data), copy=True)
    elif hasattr(data, "__dlpack__"):
        t = from_dlpack(data, copy=True)
    else:
        try:
            t = _from_python(data, dt)  # a NumPy scalar or another number
        except TypeError:
            raise TypeError(f"wick.tensor: cannot make a tensor of a {type(data).__name__}") from None
    if dt is not None and t.dtype != dt:
        t = t.to_dtype(dt)
    if device is not None:
        t = t.to_device(device)
    return t


asarray = tensor


def _as_operand(obj, device):
    """The tensor an operator's other operand stands for, or None (NotImplemented)."""
    if isinstance(obj, (list, tuple)) or type(obj).__name__ in _ARRAY_TYPES or hasattr(obj, "__dlpack__") \
            or hasattr(obj, "__array_interface__"):
        return tensor(obj, device=device)
    return None


def where(condition, x, y):
    """x where condition is non-zero, else y; the three broadcast, x and y promote."""
    if not isinstance(condition, Tensor):
        condition = tensor(condition)
    return condition.where(x, y)


def matmul(a, b):
    return a.matmul(b)


def maximum(a, b):
    return a.maximum(b) if isinstance(a, Tensor) else b.maximum(a)


def minimum(a, b):
    return a.minimum(b) if isinstance(a, Tensor) else b.minimum(a)


def softmax(x, dim=-1):
    return nn.softmax(x, dim)


def pow(base, exponent):  # noqa: A001 - NumPy's and PyTorch's name
    if isinstance(base, Tensor):
        return base.pow(exponent)
    return _wick.pow(base, exponent)


# ---- DLPack ------------------------------------------------------------------------
_DL_CUDA, _DL_ROCM = 2, 10


def from_dlpack(x, device=None, copy=None):
    """A tensor over the memory of any DLPack producer (PyTorch, NumPy, JAX, CuPy, ...), or of
    a DLPack capsule, without a copy on the CPU and on CUDA / ROCm GPUs. For GPU memory the
    producer is handed wick's stream (wick.native_stream) as the consumer stream, so its
    pending writes are ordered before wick's work. copy=True copies; copy=False refuses what
    wick cannot wrap (read-only memory, negative strides). device: move the result there."""
    if hasattr(x, "__dlpack__"):
        dev_type, dev_id = x.__dlpack_device__()
        kwargs = {}
        if dev_type in (_DL_CUDA, _DL_ROCM):
            kwargs["stream"] = native_stream(_wick._device_from_dlpack(dev_type, dev_id))
        try:
            capsule = x.__dlpack__(max_version=(1, 0), **kwargs)
        except TypeError:  # a producer predating DLPack 1.0's keywords
            capsule = x.__dlpack__(**kwargs)
        t = _wick._import_dlpack(capsule, copy)
    else:
        t = _wick._import_dlpack(x, copy)
    if device is not None:
        t = t.to_device(device)
    return t


# ---- indexing --------------------------------------------------------------------------
def _is_index_array(k):
    return isinstance(k, (Tensor, list)) or type(k).__name__ in _ARRAY_TYPES


def _index_tensor(k, device):
    t = k if isinstance(k, Tensor) else tensor(k)
    return t.to_device(device) if t.device != device else t


def _expand_key(key, shape, op):
    """The key as a list of ints, slices, None and index tensors, one per dim of `shape`
    (Ellipsis replaced by full slices, missing trailing dims by full slices). A u8 index
    is a mask (NumPy's boolean array: wick's comparisons give u8): it becomes the integer
    index tensors of its non-zero positions (NumPy's nonzero)."""
    if not isinstance(key, tuple):
        key = (key,)
    items = []
    for k in key:
        if _is_index_array(k) and not isinstance(k, Tensor):
            k = tensor(k)
        items.append(k)

    def width(k):  # dims of the tensor an item consumes
        if k is None or k is Ellipsis:
            return 0
        return k.ndim if isinstance(k, Tensor) and k.dtype == u8 else 1

    ndim = len(shape)
    n_used = sum(width(k) for k in items)
    if sum(1 for k in items if k is Ellipsis) > 1:
        _fail(ErrorKind.InvalidArgument, op, "an index can only have one ellipsis (...)")
    if n_used > ndim:
        _fail(ErrorKind.IndexOutOfRange, op, f"too many indices: {n_used} for a tensor of {ndim} dims")
    out = []
    d = 0
    for k in items:
        if k is Ellipsis:
            out.extend([slice(None)] * (ndim - n_used))
            d += ndim - n_used
        elif isinstance(k, Tensor) and k.dtype == u8:
            if k.ndim == 0:
                _fail(ErrorKind.InvalidArgument, op, "a 0-d mask is not supported as an index")
            covered = tuple(shape[d:d + k.ndim])
            if tuple(k.shape) != covered:
                _fail(ErrorKind.ShapeMismatch, op,
                      f"a mask of shape {list(k.shape)} indexes dims of sizes {list(covered)}")
            out.extend(_nonzero(k))
            d += k.ndim
        else:
            out.append(k)
            d += width(k)
    out.extend([slice(None)] * (ndim - d))
    return out


def _nonzero(mask):
    """The integer index tensors (one per dim, i64) of the non-zero elements of a mask."""
    positions = []

    def walk(x, prefix):
        if isinstance(x, list):
            for i, y in enumerate(x):
                walk(y, prefix + (i,))
        elif x:
            positions.append(prefix)

    walk(mask.tolist(), ())
    cols = list(zip(*positions)) if positions else [()] * mask.ndim
    return [tensor(list(c), dtype=i64, device=mask.device) for c in cols]


def _basic_view(t, items, op):
    """Applies ints, slices and None; an advanced index keeps its dim (a full slice) and is
    returned with the dim it applies to in the view."""
    shape, strides, offset = list(t.shape), list(t.strides), t.storage_offset
    out_shape, out_strides, flips, advanced = [], [], [], []
    d = 0
    for k in items:
        if k is None:
            out_shape.append(1)
            out_strides.append(0)
            continue
        if isinstance(k, slice):
            start, stop, step = k.indices(shape[d])
            n = len(range(start, stop, step))
            if n > 0:
                offset += (start if step > 0 else start + (n - 1) * step) * strides[d]
            if step < 0 and n > 1:
                flips.append(len(out_shape))
            out_shape.append(n)
            out_strides.append(abs(step) * strides[d])
        elif _is_index_array(k):
            advanced.append((len(out_shape), k, shape[d]))
            out_shape.append(shape[d])
            out_strides.append(strides[d])
        else:
            try:
                i = _operator.index(k)
            except TypeError:
                raise TypeError(f"{op}: a {type(k).__name__} is not an index (int, slice, None, ..., "
                                "an integer or boolean array)") from None
            if not -shape[d] <= i < shape[d]:
                _fail(ErrorKind.IndexOutOfRange, op, f"index {i} is out of range for dim {d} of size {shape[d]}")
            offset += (i % shape[d]) * strides[d]
        d += 1
    v = t.as_strided(out_shape, out_strides, offset)
    for dim in flips:
        v = v.index_select(arange(v.shape[dim] - 1, -1, -1, device=v.device), dim)
    return v, advanced


def _advanced(v, advanced, op):
    """NumPy's integer-array indexing on the view's dims `advanced` (consecutive): the
    indices broadcast together and replace those dims."""
    dims = [a[0] for a in advanced]
    if dims != list(range(dims[0], dims[0] + len(dims))):
        _fail(ErrorKind.InvalidArgument, op, "integer-array indices must be next to each other")
    idx = []
    for _, k, size in advanced:
        k = _index_tensor(k, v.device)
        if is_floating_point(k.dtype):
            _fail(ErrorKind.UnsupportedDType, op, f"an index array must hold integers, not {k.dtype}")
        k = k.to_dtype(i64)
        if k.numel():
            lo, hi = int(k.min().item()), int(k.max().item())
            if lo < -size or hi >= size:
                bad = hi if hi >= size else lo
                _fail(ErrorKind.IndexOutOfRange, op, f"index {bad} is out of range for a dim of size {size}")
        idx.append(k.where(k >= 0, k + size) if k.numel() and lo < 0 else k)
    # Broadcast the index arrays, then one linear index over the merged dims.
    bshape = list(idx[0].shape)
    for k in idx[1:]:
        bshape = _broadcast_shapes(bshape, list(k.shape), op)
    linear = None
    for (dim, _, size), k in zip(advanced, idx):
        k = k.broadcast_to(bshape)
        linear = k if linear is None else linear * size + k
    p = dims[0]
    merged = v.flatten(p, p + len(dims) - 1) if len(dims) > 1 else v
    out = merged.index_select(linear.flatten() if linear.ndim != 1 else linear, p)
    new_shape = list(merged.shape[:p]) + bshape + list(merged.shape[p + 1:])
    return out.reshape(new_shape)


def _broadcast_shapes(a, b, op):
    n = max(len(a), len(b))
    a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            _fail(ErrorKind.ShapeMismatch, op, f"index arrays of shapes {a} and {b} do not broadcast")
        out.append(max(x, y))
    return out


def _getitem(self, key):
    items = _expand_key(key, self.shape, "index")
    v, advanced = _basic_view(self, items, "index")
    return _advanced(v, advanced, "index") if advanced else v


def _positions(t):
    """The storage index of each element of t, as an i64 tensor of t's shape."""
    pos = full((), t.storage_offset, dtype=i64, device=t.device)
    for k, (n, s) in enumerate(zip(t.shape, t.strides)):
        shape = [1] * t.ndim
        shape[k] = n
        pos = pos + arange(n, dtype=i64, device=t.device).reshape(shape) * s
    return pos.broadcast_to(t.shape)


def _setitem(self, key, value):
    items = _expand_key(key, self.shape, "setitem")
    v, advanced = _basic_view(self, items, "setitem")
    if not advanced and not isinstance(value, Tensor) and _wick_is_number(value):
        v.fill_(value)
        return
    # The storage index of every element written, then one scatter into the storage
    # range this tensor reaches.
    pos_view, pos_adv = _basic_view(_positions(self).contiguous(), items, "setitem")
    pos = _advanced(pos_view, pos_adv, "setitem") if pos_adv else _positions(v)
    src = value if isinstance(value, Tensor) else tensor(value)
    src = src.to_device(self.device).to_dtype(self.dtype).broadcast_to(pos.shape).contiguous().flatten()
    base = self.storage_offset
    flat = self.as_strided((self._storage_extent - base,), (1,), base)
    flat.scatter_((pos - base).contiguous().flatten(), src, 0)


def _wick_is_number(x):
    if isinstance(x, (bool, int, float)):
        return True
    return hasattr(x, "dtype") and getattr(x, "shape", None) == ()


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    for i in range(self.shape[0]):
        yield self[i]


# ---- division: NumPy's true and floor division ---------------------------------------------
def _coerce(a, b):
    """(a, b) as operands of a division: b a Tensor or a weak scalar, or None."""
    if isinstance(b, Tensor) or _wick_is_number(b):
        return b
    return _as_operand(b, a.device)


def _result_dtype(a, b):
    return promote_types(a.dtype, b.dtype) if isinstance(b, Tensor) else (
        f32 if isinstance(b, float) and not is_floating_point(a.dtype) else a.dtype)


def _truediv(a, b, reflected=False):
    b = _coerce(a, b)
    if b is None:
        return NotImplemented
    if not is_floating_point(_result_dtype(a, b)):
        a = a.to_dtype(f32)
        b = b.to_dtype(f32) if isinstance(b, Tensor) else float(b)
    return a._rdiv(b) if reflected else a._div(b)


def _tensor_operands(a, b, reflected):
    """(a, b) of a floor division or modulo as two tensors in operand order (a scalar b
    becomes a 0-d tensor of the result dtype), or None where b is no operand."""
    b = _coerce(a, b)
    if b is None:
        return None
    if not isinstance(b, Tensor):
        b = full((), b, dtype=_result_dtype(a, b), device=a.device)
    return (b, a) if reflected else (a, b)


def _floordiv(a, b, reflected=False):
    operands = _tensor_operands(a, b, reflected)
    if operands is None:
        return NotImplemented
    a, b = operands
    dt = promote_types(a.dtype, b.dtype)
    a, b = a.to_dtype(dt), b.to_dtype(dt)
    if is_floating_point(dt):
        return a._div(b).floor()
    q = a._div(b)  # truncated; one less where the remainder's sign differs from b's
    r = a - q * b
    return q - ((r != 0) * ((r < 0) != (b < 0))).to_dtype(dt)


def _mod(a, b, reflected=False):
    operands = _tensor_operands(a, b, reflected)
    if operands is None:
        return NotImplemented
    a, b = operands
    return a - _floordiv(a, b) * b


def _to(self, *args, dtype=None, device=None):
    """t.to(device), t.to(dtype), t.to(device, dtype), or by keyword."""
    for a in args:
        if isinstance(a, Device) or (isinstance(a, str) and a.split(":")[0] in ("cpu", "gpu", "cuda", "rocm")) \
                or type(a).__name__ == "device":
            device = a
        else:
            dtype = a
    t = self
    if device is not None:
        t = t.to_device(device)
    if dtype is not None:
        t = t.to_dtype(dtype)
    return t


def _any(self, dim=None, keepdim=False):
    return (self != 0).max(dim, keepdim)


def _all(self, dim=None, keepdim=False):
    return (self != 0).min(dim, keepdim)


def _format(self, spec):
    if spec and self.numel() == 1:
        return format(self.item(), spec)
    return str(self)


Tensor.__getitem__ = _getitem
Tensor.__setitem__ = _setitem
Tensor.__iter__ = _iter
Tensor.__array__ = _tensor_array
Tensor.numpy = _tensor_numpy
Tensor.to = _to
Tensor.any = _any
Tensor.all = _all
Tensor.__format__ = _format
Tensor.__truediv__ = lambda a, b: _truediv(a, b)
Tensor.__rtruediv__ = lambda a, b: _truediv(a, b, True)
Tensor.__floordiv__ = lambda a, b: _floordiv(a, b)
Tensor.__rfloordiv__ = lambda a, b: _floordiv(a, b, True)
Tensor.__mod__ = lambda a, b: _mod(a, b)
Tensor.__rmod__ = lambda a, b: _mod(a, b, True)
Tensor.div = Tensor.__truediv__


# ---- options ----------------------------------------------------------------------------
@_contextmanager
def scoped_options(**changes):
    """Options for a block, restored after it: with wick.scoped_options(portable_gemm=True): ..."""
    saved = options()
    o = options()
    for k, v in changes.items():
        if not hasattr(o, k):
            _fail(ErrorKind.InvalidArgument, "options", f"no option named '{k}'")
        setattr(o, k, v)
    set_options(o)
    try:
        yield o
    finally:
        set_options(saved)


def gguf_tensors(path, device=None):
    """Every float / integer tensor of a GGUF file as name -> Tensor, quantized ones as QTensor."""
    f = GgufFile.open(_os.fspath(path))
    out = {}
    for info in f.tensors:
        try:
            out[info.name] = f.tensor(info.name, device)
        except Error:
            out[info.name] = f.qtensor(info.name, device)
    return out


def load_safetensors(path, device=None):
    """Every loadable tensor of a safetensors file as name -> Tensor."""
    f = SafetensorsFile.open(_os.fspath(path))
    return {i.name: f.tensor(i.name, device) for i in f.tensors if i.loadable}
