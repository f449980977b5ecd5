"""Reading GPU arrays of any library: :func:`describe` and :func:`pointer_of`.

``describe(obj)`` returns an :class:`ArrayInfo` for jitkern, CuPy and PyTorch
arrays (each through a fast extractor that reads their attributes directly), and
for anything exposing ``__cuda_array_interface__`` (Numba, JAX, ...) or a CUDA
``__dlpack__``. The extractor is chosen once per type and kept in a dict, so a
launch pays one dict lookup and one attribute walk per array argument.

Host memory is refused with a TypeError that points to ``jitkern.asarray``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy

from ..runtime.device import current_stream_handle
from ..runtime import args as _args
from ..runtime.args import host_array_message
from ..errors import JitkernTypeError, JitkernValueError, KernelArgumentError
from . import _dlpack, dtypes
from ..runtime.context import current_device_id, pointer_device
from .layout import c_strides


class ArrayInfo(NamedTuple):
    """Where a GPU array lives and how it is laid out (strides in bytes)."""

    ptr: int
    shape: tuple
    strides: tuple
    dtype: Any  # numpy.dtype; the string 'bfloat16' where ml_dtypes is missing
    device_id: int
    readonly: bool
    owner: Any  # the object that keeps the memory alive
    stream: int | None = None  # producer's stream from __cuda_array_interface__, if any


_HOST_HINT = "copy it to the GPU first with jitkern.asarray(x)"


def _host_error(obj) -> TypeError:
    # KernelArgumentError is a TypeError: the same class every kernel kind raises for
    # host arrays (they add the argument's name where they know it).
    kind = f"{type(obj).__module__}.{type(obj).__qualname__}"
    return KernelArgumentError(host_array_message(kind))


# ---------------------------------------------------------------------------
# Extractors, one per kind of array.


def _from_numpy(a) -> ArrayInfo:
    raise _host_error(a)


def _from_cupy(a) -> ArrayInfo:
    return ArrayInfo(a.data.ptr, a.shape, a.strides, a.dtype, a.device.id, False, a)


_torch_dtypes: dict = {}


def _torch_dtype_map() -> dict:
    import torch

    names = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float16", "float32", "float64", "complex64", "complex128"]
    table = {getattr(torch, n): numpy.dtype(n) for n in names if hasattr(torch, n)}
    table[torch.bfloat16] = dtypes.BFLOAT16 if dtypes.BFLOAT16 is not None else "bfloat16"
    for name in ("float8_e4m3fn", "float8_e5m2"):  # the name where ml_dtypes is missing
        if hasattr(torch, name):
            table[getattr(torch, name)] = dtypes.ML_DTYPES[name] or name
    return table


def _from_torch(t) -> ArrayInfo:
    if not t.is_cuda:
        raise JitkernTypeError(f"a CPU torch.Tensor lives in host memory, not on a GPU; move it with "
                        f".cuda() or {_HOST_HINT}")
    dtype = _torch_dtypes.get(t.dtype)
    if dtype is None:  # the first tensor (or a torch imported anew): read its dtypes
        _torch_dtypes.update(_torch_dtype_map())
        dtype = _torch_dtypes.get(t.dtype)
    if dtype is None:
        raise JitkernTypeError(f"torch dtype {t.dtype} has no jitkern equivalent")
    itemsize = t.element_size()
    strides = tuple(s * itemsize for s in t.stride())
    return ArrayInfo(t.data_ptr(), tuple(t.shape), strides, dtype, t.get_device(), False, t)


def parse_cai(cai: dict, owner) -> ArrayInfo:
    """ArrayInfo from a ``__cuda_array_interface__`` dict (versions 0-3)."""
    if cai.get("mask") is not None:
        raise JitkernTypeError("__cuda_array_interface__ with a mask is not supported")
    shape = tuple(cai["shape"])
    dtype = dtypes.from_typestr(cai["typestr"])
    ptr, readonly = cai["data"]
    strides = cai.get("strides")
    if strides is None:
        strides = c_strides(shape, dtype.itemsize)
    stream = cai.get("stream")
    if stream == 0:
        raise JitkernValueError("__cuda_array_interface__: stream 0 is not allowed (v3); "
                         "the producer must say 1 for the legacy default stream")
    return ArrayInfo(ptr, shape, tuple(strides), dtype, _pointer_device(ptr), bool(readonly),
                     owner, stream)


def _pointer_device(ptr: int) -> int:
    if not ptr:
        return current_device_id()
    dev = pointer_device(ptr)
    if dev is None:
        raise JitkernTypeError(f"pointer 0x{ptr:x} from __cuda_array_interface__ is not device memory "
                        "CUDA knows about")
    return dev


def _from_cai(obj) -> ArrayInfo:
    try:
        cai = obj.__cuda_array_interface__
    except AttributeError:  # e.g. a CPU tensor of a library that has GPU ones too
        return _from_dlpack(obj)
    return parse_cai(cai, obj)


def _current_stream_for_dlpack() -> int:
    s = current_stream_handle()
    return 1 if s == 0 else s


def dlpack_capsule(obj, stream: int | None = None, max_version=_dlpack.VERSION):
    """``obj.__dlpack__`` asked for a capsule readable on ``stream`` (tolerating producers
    that predate the ``max_version``/``stream`` keywords)."""
    if stream is None:
        stream = _current_stream_for_dlpack()
    try:
        return obj.__dlpack__(stream=stream, max_version=max_version)
    except TypeError:
        pass
    try:
        return obj.__dlpack__(stream=stream)
    except TypeError:
        return obj.__dlpack__()


def _from_dlpack(obj, stream: int | None = None) -> ArrayInfo:
    device_fn = getattr(obj, "__dlpack_device__", None)
    if device_fn is None or not hasattr(obj, "__dlpack__"):
        raise JitkernTypeError(
            f"cannot use a {type(obj).__module__}.{type(obj).__qualname__} as a GPU array: it has "
            "neither __cuda_array_interface__ nor __dlpack__; for host data use jitkern.asarray(x)")
    device_type, _ = device_fn()
    if device_type not in (_dlpack.KDL_CUDA, _dlpack.KDL_CUDA_MANAGED, _dlpack.KDL_CUDA_HOST):
        raise _host_error(obj)
    return info_from_capsule(dlpack_capsule(obj, stream))


def info_from_capsule(capsule) -> ArrayInfo:
    """ArrayInfo of a CUDA DLPack capsule (consumed; the owner holds the producer's tensor)."""
    imp = _dlpack.read_capsule(capsule)
    if imp.device_type not in (_dlpack.KDL_CUDA, _dlpack.KDL_CUDA_MANAGED, _dlpack.KDL_CUDA_HOST):
        raise JitkernTypeError(f"DLPack tensor on device type {imp.device_type} is not on a CUDA GPU; "
                        f"{_HOST_HINT}")
    dtype = dtypes.from_dlpack(imp.code, imp.bits, imp.lanes)
    if imp.strides is None:
        strides = c_strides(imp.shape, dtype.itemsize)
    else:
        strides = tuple(s * dtype.itemsize for s in imp.strides)
    return ArrayInfo(imp.ptr, imp.shape, strides, dtype, imp.device_id, imp.readonly, imp)


def _unsupported(obj) -> ArrayInfo:
    # The class has neither protocol; an instance may still carry one of its own
    # (``obj.__cuda_array_interface__ = {...}`` set on the instance).
    if hasattr(obj, "__cuda_array_interface__"):
        return parse_cai(obj.__cuda_array_interface__, obj)
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        return _from_dlpack(obj)
    raise JitkernTypeError(
        f"cannot use a {type(obj).__module__}.{type(obj).__qualname__} as a GPU array; expected a "
        "jitkern.ndarray, a CuPy/PyTorch/JAX/Numba CUDA array or any object with "
        f"__cuda_array_interface__ or __dlpack__; for host data use jitkern.asarray(x)")


_extractors: dict[type, Any] = {numpy.ndarray: _from_numpy}
# describe()'s column of the argument table (runtime.args.kind_of): kind -> extractor
_EXTRACTORS = {"numpy": _from_numpy, "cupy": _from_cupy, "torch": _from_torch, "cai": _from_cai,
               "dlpack": _from_dlpack}
_pointers: dict[type, Any] = {}


def register(cls: type, extractor, pointer=None) -> None:
    """Use ``extractor(obj) -> ArrayInfo`` (and ``pointer(obj) -> int``) for ``cls``."""
    _extractors[cls] = extractor
    if pointer is not None:
        _pointers[cls] = pointer


def _choose(cls: type):
    if issubclass(cls, numpy.ndarray) or issubclass(cls, numpy.generic):
        return _from_numpy
    for registered, fn in list(_extractors.items()):
        if issubclass(cls, registered):  # a subclass of a registered type (jitkern.ndarray)
            return fn
    return _EXTRACTORS.get(_args.kind_of(cls), _unsupported)


def extractor_for(cls: type):
    """The extractor ``describe`` uses for instances of ``cls`` (chosen once)."""
    fn = _extractors.get(cls)
    if fn is None:
        fn = _extractors[cls] = _choose(cls)
    return fn


def describe(obj) -> ArrayInfo:
    """:class:`ArrayInfo` of a GPU array from any library (see the module doc)."""
    fn = _extractors.get(type(obj))
    if fn is None:
        fn = extractor_for(type(obj))
    return fn(obj)


def pointer_of(obj) -> int:
    """The device address of ``obj``'s first element (the launch fast path)."""
    fn = _pointers.get(type(obj))
    if fn is not None:
        return fn(obj)
    return describe(obj).ptr


# ---------------------------------------------------------------------------
# Generated launchers (runtime.launcher) read foreign arrays through these: per
# library, Python expression templates over ``{a}`` (the argument) and ``{c}`` (a
# prefix for constants kept in the launcher's namespace). ``misses`` are conditions
# true when ``{a}`` does NOT have the sample's dtype and layout; each reads the
# library's cheapest attribute (CuPy's shape and strides build tuples on every read,
# its dtype, size and contiguity flag are plain slots).


class FastRead(NamedTuple):
    """How a generated launcher reads one array argument of a given type and layout."""

    pre: str  # a statement run once the argument's type is known to be the sample's
    misses: tuple  # conditions true when the argument's layout differs from the sample's
    pointer: str  # the device pointer
    device: str  # the device id
    consts: dict  # constants the templates name as {c}NAME
    # the library's results() -> NewResult, for kernels that allocate their outputs (None:
    # jitkern arrays); called only when a result is made, so CuPy/torch load no earlier
    results: Any = None


# ---------------------------------------------------------------------------
# Results follow the inputs: a kernel that allocates its outputs makes them in the library
# of its array arguments, through that library's own allocator (its memory pool), so the
# user's next line works on them and one process does not run two competing pools.


class NewResult(NamedTuple):
    """How a kernel allocates its results as one library's arrays (docs/arrays.md, "Results
    follow the inputs")."""

    rank: int  # arguments of several libraries: the lowest rank makes the results
    dtype: Any  # dtype(numpy dtype) -> the library's dtype, or None: it has none
    fast: str  # the allocation on the legacy stream of a one-GPU machine, over {shape},
    #            {dtype}, {device} and {c} (this tuple's consts)
    new: Any  # new(shape, dtype, stream (a jitkern Stream), device_id) -> array: any stream
    pointer: str  # the result's device pointer, over {a}
    consts: dict


def _cupy_dtype(dtype):
    # CuPy's arrays hold these kinds; records, bfloat16 and fp8 stay jitkern arrays
    return dtype if dtype.kind in "biufc" else None


def _cupy_results() -> NewResult:
    import cupy  # an argument is a cupy.ndarray: CuPy is imported already

    cuda = cupy.cuda
    from_external = getattr(cuda.Stream, "from_external", None)  # CuPy 14's spelling

    def new(shape, dtype, stream, device_id):
        with cuda.Device(device_id):
            if not stream.ptr or stream.ptr == cuda.get_current_stream().ptr:
                return cupy.empty(shape, dtype)
            # the pool keeps the block for reuse on the stream the kernel writes it on
            outer = from_external(stream) if from_external else cuda.ExternalStream(
                stream.ptr, device_id)
            with outer:
                return cupy.empty(shape, dtype)

    return NewResult(0, _cupy_dtype, "{c}empty({shape}, {dtype})", new, "{a}.data.ptr",
                     {"empty": cupy.empty})


def _torch_results() -> NewResult:
    import torch  # an argument is a torch.Tensor: PyTorch is imported already

    to_torch = {dt: t for t, dt in _torch_dtype_map().items() if not isinstance(dt, str)}

    def new(shape, dtype, stream, device_id):
        if not stream.ptr:
            return torch.empty(shape, dtype=dtype, device=device_id)
        with torch.cuda.stream(torch.cuda.ExternalStream(stream.ptr, device=device_id)):
            return torch.empty(shape, dtype=dtype, device=device_id)

    return NewResult(1, to_torch.get, "{c}empty({shape}, dtype={dtype}, device={device})", new,
                     "{a}.data_ptr()", {"empty": torch.empty})


def _fast_cupy(a) -> FastRead:
    consts = {"D": a.dtype, "S": a.shape}
    misses = ["{a}.dtype is not {c}D"]
    if a._c_contiguous:
        misses.append("not {a}._c_contiguous")
        if a.ndim == 1:
            misses += [f"{{a}}.size != {int(a.size)}", "{a}.ndim != 1"]
        else:
            misses.append("{a}.shape != {c}S")
    else:
        consts["ST"] = a.strides
        misses += ["{a}.shape != {c}S", "{a}.strides != {c}ST"]
    return FastRead("", tuple(misses), "{a}.data.ptr", "{a}.data.device_id", consts,
                    _cupy_results)


def _fast_torch(t) -> FastRead:
    consts = {"D": t.dtype, "S": tuple(t.shape)}
    misses = ["not {a}.is_cuda", "{a}.dtype is not {c}D"]
    if t.dim() == 1 and t.stride() == (1,):  # stride (1,) says 1-D and contiguous at once
        misses += ["{a}.stride() != (1,)", f"{{a}}.numel() != {t.numel()}"]
    elif t.is_contiguous():
        misses += ["{a}.shape != {c}S", "not {a}.is_contiguous()"]
    else:
        consts["ST"] = tuple(t.stride())
        misses += ["{a}.shape != {c}S", "{a}.stride() != {c}ST"]
    return FastRead("", tuple(misses), "{a}.data_ptr()", "{a}.get_device()", consts,
                    _torch_results)


def _fast_cai(obj) -> FastRead:
    # __cuda_array_interface__ objects (Numba, JAX, ...): the dict's fields are compared
    # as given, and its pointer read without asking the driver for its device (the first
    # call, through describe(), checked it).
    cai = obj.__cuda_array_interface__
    consts = {"S": cai["shape"], "TS": cai["typestr"], "ST": cai.get("strides")}
    consts["dev"] = _pointer_device  # asked only on machines with several GPUs
    return FastRead(
        "{a}_i = {a}.__cuda_array_interface__",
        (
            "{a}_i['shape'] != {c}S",
            "{a}_i['typestr'] != {c}TS",
            "{a}_i.get('strides') != {c}ST",
            "{a}_i.get('mask') is not None",
        ),
        "{a}_i['data'][0]",
        "{c}dev({a}_i['data'][0])",
        consts,
    )


def _fast_generic(obj) -> FastRead:
    # Anything else (JAX, Numba, DLPack-only objects): one describe() per call, shared by
    # the layout check and the pointer.
    info = describe(obj)
    consts = {"L": (info.dtype, info.shape, info.strides), "desc": describe}
    return FastRead(
        "{a}_i = {c}desc({a})",
        ("({a}_i.dtype, {a}_i.shape, {a}_i.strides) != {c}L",),
        "{a}_i.ptr",
        "{a}_i.device_id",
        consts,
    )


_FAST_READS = {_from_cupy: _fast_cupy, _from_torch: _fast_torch, _from_cai: _fast_cai}


def fast_read(obj) -> FastRead:
    """How a generated launcher reads arrays like ``obj`` (a foreign GPU array), once it
    has checked that the argument's type is ``type(obj)``."""
    maker = _FAST_READS.get(extractor_for(type(obj)), _fast_generic)
    return maker(obj)


_results_of_type: dict[type, Any] = {}


def _results_of(value):
    """The NewResult of ``value``'s library, or None (jitkern arrays, other protocols,
    scalars): chosen once per type."""
    cls = type(value)
    try:
        return _results_of_type[cls]
    except KeyError:
        pass
    maker = _FAST_READS.get(extractor_for(cls))
    library = maker(value).results if maker is not None else None
    results = _results_of_type[cls] = library() if library is not None else None
    return results


def new_result(values) -> NewResult | None:
    """How a kernel whose array arguments are ``values`` allocates its results: CuPy's
    arrays if any is a CuPy array, else PyTorch's tensors if any is a tensor; None for
    jitkern arrays (jitkern arrays, JAX, Numba and other protocol objects, no array)."""
    best = None
    for value in values:
        results = _results_of(value)
        if results is not None and (best is None or results.rank < best.rank):
            best = results
    return best


def _key_cupy(a):
    return (type(a), a.dtype, a.shape, a.strides)


def _key_torch(t):
    return (type(t), t.dtype, tuple(t.shape), tuple(t.stride()), t.is_cuda)


def _key_generic(obj):
    info = describe(obj)
    return (type(obj), info.dtype, info.shape, info.strides)


_LAYOUT_KEYS = {_from_cupy: _key_cupy, _from_torch: _key_torch}
_key_readers: dict[type, Any] = {}


def layout_key(obj):
    """A hashable key of ``obj``'s type, dtype, shape and strides (not its pointer),
    read through its library's cheapest attributes. Raises TypeError for non-arrays."""
    reader = _key_readers.get(type(obj))
    if reader is None:
        extractor = extractor_for(type(obj))
        if extractor is _from_numpy:
            return extractor(obj)
        if extractor is _unsupported:  # raises, unless this instance carries a protocol
            return _key_generic(obj)
        reader = _key_readers[type(obj)] = _LAYOUT_KEYS.get(extractor, _key_generic)
    return reader(obj)


_args.use_describe(describe)  # DLPack-only launch arguments are read through describe()
_args.register_arrays(fast_read=fast_read)  # the string kernels' launchers read layouts so
_args.register_arrays(new_result=new_result)  # ... and allocate their results so
