"""The one table of GPU array libraries: one row per library, each column one reader.

==================  ===================================================================
column              read by
==================  ===================================================================
``detect``          runtime.args.kind_of: the first row (in order) whose test holds
``pointer``         the generated launchers (RawKernel, the JIT, bound launches): a
``device``          template over ``{a}`` inlined in the launcher, or a function
``launch_read``     the same launchers, for arrays read once per call through a protocol
                    (the CAI dict, a DLPack capsule): an :class:`ArrayRead`
``describe``        :func:`describe`: an :class:`ArrayInfo` (first calls, asarray)
``fast_read``       the string kernels' launchers: a :class:`FastRead` of a sample
``layout_key``      the string kernels' call keys: type, dtype, shape and strides
``dims``            the JIT's keys, guards and shape/stride parameters:
                    ``(dtype, itemsize, shape, byte strides)``
``key``             the JIT's per-call key, where a row reads it faster than ``dims``
``guard_1d``        the JIT's launchers: conditions over ``{a}`` (and ``{D}``, the sample's
                    dtype, ``{n}`` its item size) true for a 1-D contiguous array of that dtype
``guard_nd``        ... for an array of that dtype and rank ``{ndim}``; ``guard_fits``: and
                    every byte offset within 32 bits
``dtype``           checked raw kernels' launchers (runtime.args.dtype_read): a template
                    over ``{a}`` equal between two arrays of one dtype
``results``         how a kernel given this library's arrays allocates its results
==================  ===================================================================

A new array library is one row of :data:`LIBRARIES`; jitkern's own ndarray is the first
(its class says ``__jitkern_array__``: nothing of arrays/ is imported here). A column left
None means the general reader: :func:`describe` once per call (runtime.args). The DLPack
capsule parser lives with the arrays and registers itself (:func:`use_dlpack`).

Only the ground (errors, arrays' dtypes, layout and records, handles, config) and the
runtime are imported here.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, NamedTuple

import numpy

from .. import dtypes, records
from ..layout import c_strides, fits_int32
from ..config import settings
from ..errors import JitkernTypeError, JitkernValueError, KernelArgumentError
from .context import current_device_id, pointer_device
from ..handles import handle_ctype


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


class FastRead(NamedTuple):
    """How a generated launcher reads one array argument of a given type and layout:
    Python expression templates over ``{a}`` (the argument) and ``{c}`` (a prefix for
    constants kept in the launcher's namespace)."""

    pre: str  # a statement run once the argument's type is known to be the sample's
    misses: tuple  # conditions true when the argument's layout differs from the sample's
    pointer: str  # the device pointer
    device: str  # the device id
    consts: dict  # constants the templates name as {c}NAME


class ArrayRead:
    """How a generated launcher reads a protocol-only array (``__cuda_array_interface__``
    or DLPack): ``bind``, an expression template that stores what is read once per call
    in the local ``{a}_i`` (the CAI dict, or DLPack's ArrayInfo: ``kind`` says which), and
    ``pointer``, the device pointer read from ``{a}_i``. Launchers evaluate ``bind`` right
    after the argument's type check, so guards over the layout (the JIT's) and the packing
    share one read: no second property call, no second capsule."""

    __slots__ = ("bind", "env", "kind", "pointer")

    def __init__(self, kind: str, bind: str, pointer: str, env: dict):
        self.kind, self.bind, self.pointer, self.env = kind, bind, pointer, env


class Library(NamedTuple):
    """One array library's row (see the module doc for who reads each column)."""

    kind: str
    detect: Callable
    pointer: Any = None
    device: Any = None
    launch_read: ArrayRead | None = None
    describe: Callable | None = None
    fast_read: Callable | None = None
    layout_key: Callable | None = None
    dims: Callable | None = None
    guard_1d: tuple | None = None
    # the JIT's per-call key read faster than through ``dims`` (same meaning: args.array_key)
    key: Callable | None = None
    # the JIT's launchers, any other rank: conditions over {a}, {D}, {ndim} (and {n}, the
    # item size) true for an array of that dtype and rank; ``guard_fits``: and 32-bit offsets
    guard_nd: tuple | None = None
    guard_fits: str | None = None
    dtype: str | None = None  # a template over {a} reading a value equal for equal dtypes
    env: Callable | None = None  # env(cls): helpers the pointer/device templates name
    # results() -> NewResult: how a kernel given this library's arrays allocates its results
    # (called when a result is first made, so CuPy/torch load no earlier); None: jitkern's
    results: Callable | None = None


# ---------------------------------------------------------------------------
# Results follow the inputs: a kernel that allocates its outputs makes them in the library
# of its array arguments, through that library's own allocator (its memory pool), so the
# user's next line works on them and one process does not run two competing pools
# (docs/arrays.md, "Results follow the inputs"). The `results` column of a row.


class NewResult(NamedTuple):
    """How a kernel allocates its results as one library's arrays."""

    rank: int  # arguments of several libraries: the lowest rank makes the results
    dtype: Any  # dtype(numpy dtype) -> the library's dtype, or None: it has none
    fast: str  # the allocation on the legacy stream of a one-GPU machine, over {shape} (a
    #            tuple's name), {dims} (its extents, literal), {dtype}, {device} and {c}
    #            (this tuple's consts)
    new: Any  # new(shape, dtype, stream (a jitkern Stream), device_id) -> array: any stream
    pointer: str  # the result's device pointer, over {a}
    consts: dict


def _cupy_dtype(dtype):
    # CuPy's arrays hold these kinds; records, bfloat16 and fp8 stay jitkern arrays
    return dtype if dtype.kind in "biufc" else None


def _cupy_results() -> NewResult:
    import cupy  # noqa: PLC0415 - an argument is a cupy.ndarray: CuPy is imported already

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

    # cupy.ndarray(shape, dtype) allocates from the current allocator (CuPy's pool) as
    # cupy.empty does, without empty()'s Python layer (0.5 us less per result on an H200)
    return NewResult(0, _cupy_dtype, "{c}ndarray({shape}, {dtype})", new, "{a}.data.ptr",
                     {"ndarray": cupy.ndarray})


def _torch_results() -> NewResult:
    import torch  # noqa: PLC0415 - an argument is a torch.Tensor: PyTorch is imported already

    to_torch = {dt: t for t, dt in _torch_dtype_map().items() if not isinstance(dt, str)}

    def new(shape, dtype, stream, device_id):
        if not stream.ptr:
            return torch.empty(shape, dtype=dtype, device=device_id)
        with torch.cuda.stream(torch.cuda.ExternalStream(stream.ptr, device=device_id)):
            return torch.empty(shape, dtype=dtype, device=device_id)

    # size= by keyword: PyTorch parses a keyword tuple about 0.6 us faster than a positional
    # one (the varargs overload is tried first), and no slower than literal int extents
    fast = "{c}empty(size={shape}, dtype={dtype}, device={device})"
    return NewResult(1, to_torch.get, fast, new, "{a}.data_ptr()", {"empty": torch.empty})


# ---------------------------------------------------------------------------
# jitkern's own ndarray: a row like the others, read through its slots (the attributes
# behind its properties: one attribute access each instead of a property call). The class
# says it is one with ``__jitkern_array__`` (the runtime imports nothing of arrays/).


def _is_jitkern(cls: type) -> bool:
    return getattr(cls, "__jitkern_array__", False) is True


def _from_jitkern(a) -> ArrayInfo:
    return ArrayInfo(a._ptr, a._shape, a._strides, a._dtype, a._device_id, False, a)


def _fast_jitkern(a) -> FastRead:
    consts = {"D": a._dtype, "S": a._shape, "ST": a._strides}
    misses = ("{a}._dtype is not {c}D", "({a}._shape is not {c}S and {a}._shape != {c}S)",
              "({a}._strides is not {c}ST and {a}._strides != {c}ST)")
    return FastRead("", misses, "{a}._ptr", "{a}._device_id", consts)


def _key_jitkern_layout(a):
    return (a._dtype, a._shape, a._strides)


def _dims_jitkern(a):
    return a._dtype, a._dtype.itemsize, a._shape, a._strides


def _key_jitkern(a):
    # The JIT's launch hot path: a contiguous 1-D array keys on its dtype alone.
    strides = a._strides
    if len(strides) == 1 and strides[0] == a._dtype.itemsize:
        return a._dtype
    shape = a._shape
    if len(shape) == 1:
        return (type(a), a._dtype, shape[0] <= 1)
    return (type(a), a._dtype, len(shape), fits_int32(shape, strides, a._dtype.itemsize))


# ---------------------------------------------------------------------------
# Host arrays


def host_array_message(kind: str) -> str:
    """What every kernel kind says of a host array given where a GPU array is expected:
    copy it to the GPU, or run the kernel in the simulator, which takes host arrays."""
    message = (f"a {kind} lives in host memory and cannot be passed to a kernel; copy it to "
               "the GPU first with jitkern.asarray(x)")
    if settings.simulate:
        return message + ("; JITKERN_SIMULATE is on, but this call does not go through the "
                          "simulator (a launch made before it was turned on?): launch again")
    return message + (", or run the kernel on the CPU with NumPy arrays: "
                      "k.simulate[grid, block](*args) (ElementwiseKernel and ReductionKernel: "
                      "k.simulate(*args)); JITKERN_SIMULATE=1 runs the whole program on a "
                      "simulated device, with jitkern arrays; k.inspect(..., arch=...) "
                      "compiles without a GPU")


_HOST_HINT = "copy it to the GPU first with jitkern.asarray(x)"


def host_error(obj) -> TypeError:
    # KernelArgumentError is a TypeError: the same class every kernel kind raises for
    # host arrays (they add the argument's name where they know it).
    kind = f"{type(obj).__module__}.{type(obj).__qualname__}"
    return KernelArgumentError(host_array_message(kind))


def _from_numpy(a) -> ArrayInfo:
    raise host_error(a)


# ---------------------------------------------------------------------------
# CuPy


def _from_cupy(a) -> ArrayInfo:
    return ArrayInfo(a.data.ptr, a.shape, a.strides, a.dtype, a.device.id, False, a)


def _fast_cupy(a) -> FastRead:
    # CuPy's shape and strides build tuples on every read; its dtype, size and
    # contiguity flag are plain slots.
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
    return FastRead("", tuple(misses), "{a}.data.ptr", "{a}.data.device_id", consts)


def _key_cupy(a):
    return (type(a), a.dtype, a.shape, a.strides)


def _dims_strided(a):
    return a.dtype, a.itemsize, a.shape, a.strides


def _is_cupy(cls: type) -> bool:
    return _module(cls).startswith("cupy") and hasattr(cls, "__cuda_array_interface__")


# ---------------------------------------------------------------------------
# PyTorch


_torch_dtypes: dict = {}


def _torch_dtype_map() -> dict:
    import torch  # noqa: PLC0415 - optional dependency, only when a tensor is passed

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
        raise JitkernTypeError(f"a CPU torch.Tensor lives in host memory, not on a GPU; move it "
                               f"with .cuda() or {_HOST_HINT}")
    dtype = _torch_dtypes.get(t.dtype)
    if dtype is None:  # the first tensor (or a torch imported anew): read its dtypes
        _torch_dtypes.update(_torch_dtype_map())
        dtype = _torch_dtypes.get(t.dtype)
    if dtype is None:
        raise JitkernTypeError(f"torch dtype {t.dtype} has no jitkern equivalent")
    itemsize = t.element_size()
    strides = tuple(s * itemsize for s in t.stride())
    return ArrayInfo(t.data_ptr(), tuple(t.shape), strides, dtype, t.get_device(), False, t)


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
    consts["dp"] = type(t).data_ptr  # the class's own function: no lookup on the tensor
    return FastRead("", tuple(misses), "{c}dp({a})", "{a}.get_device()", consts)


def _key_torch(t):
    return (type(t), t.dtype, tuple(t.shape), tuple(t.stride()), t.is_cuda)


def _dims_torch(t):
    size = t.element_size()
    return t.dtype, size, tuple(t.shape), tuple(s * size for s in t.stride())


def _torch_cpu(t) -> int:
    if not t.is_cuda:
        raise KernelArgumentError(
            "a CPU torch.Tensor cannot be passed to a kernel: move it with .cuda() or "
            "convert it with jitkern.asarray(...)"
        )
    return t.data_ptr()


def _is_torch(cls: type) -> bool:
    return (_module(cls).startswith("torch") and hasattr(cls, "data_ptr")
            and hasattr(cls, "is_cuda"))


# ---------------------------------------------------------------------------
# __cuda_array_interface__ (Numba, JAX, ...)


def parse_cai(cai: dict, owner) -> ArrayInfo:
    """ArrayInfo from a ``__cuda_array_interface__`` dict (versions 0-3)."""
    if cai.get("mask") is not None:
        raise JitkernTypeError("__cuda_array_interface__ with a mask is not supported")
    shape = tuple(cai["shape"])
    dtype = records.dtype_from_cai(cai)  # a void typestr: the record its descr lists
    ptr, readonly = cai["data"]
    strides = cai.get("strides")
    if strides is None:
        strides = c_strides(shape, dtype.itemsize)
    stream = cai.get("stream")
    if stream == 0:
        raise JitkernValueError("__cuda_array_interface__: stream 0 is not allowed (v3); "
                                "the producer must say 1 for the legacy default stream")
    return ArrayInfo(ptr, shape, tuple(strides), dtype, cai_pointer_device(ptr), bool(readonly),
                     owner, stream)


def cai_pointer_device(ptr: int) -> int:
    """The device of a pointer from ``__cuda_array_interface__`` (asked of the driver)."""
    if not ptr:
        return current_device_id()
    dev = pointer_device(ptr)
    if dev is None:
        raise JitkernTypeError(f"pointer 0x{ptr:x} from __cuda_array_interface__ is not device "
                               "memory CUDA knows about")
    return dev


def _from_cai(obj) -> ArrayInfo:
    try:
        cai = obj.__cuda_array_interface__
    except AttributeError:  # e.g. a CPU tensor of a library that has GPU ones too
        return read_dlpack(obj)
    return parse_cai(cai, obj)


def fast_cai(obj, instance: bool = False) -> FastRead:
    """The dict's fields compared as given, and its pointer read without asking the driver
    for its device (the first call, through describe(), checked it). ``instance``: a class
    whose instances carry the dict themselves (another instance may lack it: a miss)."""
    cai = obj.__cuda_array_interface__
    consts = {"S": cai["shape"], "TS": cai["typestr"], "ST": cai.get("strides")}
    consts["dev"] = cai_pointer_device  # asked only on machines with several GPUs
    records_of = ()
    if cai["typestr"][1:2] == "V":  # records of one size: the descr says which
        consts["DS"] = cai.get("descr")
        records_of = ("{a}_i.get('descr') != {c}DS",)
    if instance:
        pre, first = "{a}_i = getattr({a}, '__cuda_array_interface__', None)", ("{a}_i is None",)
    else:
        pre, first = "{a}_i = {a}.__cuda_array_interface__", ()
    return FastRead(
        pre,
        (
            *first,
            "{a}_i['shape'] != {c}S",
            "{a}_i['typestr'] != {c}TS",
            "{a}_i.get('strides') != {c}ST",
            "{a}_i.get('mask') is not None",
            *records_of,
        ),
        "{a}_i['data'][0]",
        "{c}dev({a}_i['data'][0])",
        consts,
    )


def _cai_pointer(a) -> int:
    return a.__cuda_array_interface__["data"][0]


def instance_cai(a) -> dict:
    """The dict of an instance-level ``__cuda_array_interface__``: the launch plan is per
    type, so another instance of the class may lack it."""
    try:
        return a.__cuda_array_interface__
    except AttributeError:
        raise KernelArgumentError(
            f"cannot pass a {type(a).__module__}.{type(a).__qualname__} without "
            "__cuda_array_interface__ to a kernel (another instance of its class had one)"
        ) from None


CAI_READ = ArrayRead("cai", "({a}_i := {a}.__cuda_array_interface__)", "{a}_i['data'][0]", {})
INSTANCE_CAI_READ = ArrayRead("cai", "({a}_i := {icai}({a}))", "{a}_i['data'][0]",
                              {"icai": instance_cai})


# ---------------------------------------------------------------------------
# DLPack: the capsule parser lives with the arrays (a layer above) and registers here.


def _no_dlpack(a, stream=None):
    raise KernelArgumentError(
        f"cannot read the DLPack array {type(a).__module__}.{type(a).__qualname__}: "
        "import jitkern.arrays first")


_dlpack_reader = [_no_dlpack]


def use_dlpack(reader) -> None:
    """Read DLPack arrays through ``reader(obj) -> ArrayInfo`` (the capsule parser:
    arrays.interop's, registered at its import)."""
    _dlpack_reader[0] = reader


def read_dlpack(a) -> ArrayInfo:
    """The ArrayInfo of a DLPack array (one capsule; host memory is refused)."""
    return _dlpack_reader[0](a)


# ---------------------------------------------------------------------------
# describe: the general reader of any argument array, through its row (chosen once per type)


def _describe_unknown(obj) -> ArrayInfo:
    # The class has neither protocol; an instance may still carry one of its own
    # (``obj.__cuda_array_interface__ = {...}`` set on the instance).
    if hasattr(obj, "__cuda_array_interface__"):
        return parse_cai(obj.__cuda_array_interface__, obj)
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        return read_dlpack(obj)
    raise JitkernTypeError(
        f"cannot use a {type(obj).__module__}.{type(obj).__qualname__} as a GPU array; expected a "
        "jitkern.ndarray, a CuPy/PyTorch/JAX/Numba CUDA array or any object with "
        f"__cuda_array_interface__ or __dlpack__; for host data use jitkern.asarray(x)")


_extractors: dict[type, Any] = {}


def extractor_for(cls: type):
    """The reader :func:`describe` uses for instances of ``cls``: its row's (chosen once)."""
    fn = _extractors.get(cls)
    if fn is None:
        fn = _extractors[cls] = library(cls).describe or _describe_unknown
    return fn


def describe(obj) -> ArrayInfo:
    """:class:`ArrayInfo` of a GPU array from any library (host memory is refused with a
    TypeError naming jitkern.asarray)."""
    fn = _extractors.get(type(obj))
    if fn is None:
        fn = extractor_for(type(obj))
    return fn(obj)


dlpack_info = describe


def _dlpack_pointer(a) -> int:
    kind, _dev = a.__dlpack_device__()
    if kind not in (2, 3, 13):  # kDLCUDA, kDLCUDAHost, kDLCUDAManaged
        raise KernelArgumentError(f"a {type(a).__name__} in host memory cannot be passed to a kernel")
    return dlpack_info(a).ptr


DLPACK_READ = ArrayRead("info", "({a}_i := {info}({a}))", "{a}_i.ptr", {"info": dlpack_info})


# ---------------------------------------------------------------------------
# Device allocations


def _is_allocation(cls: type) -> bool:
    """A device allocation object with an integer ``.ptr``: CuPy's ``MemoryPointer`` (what
    ``cupy.cuda.alloc()`` returns) and ``Memory``, jitkern's ``MemoryPointer``. Streams,
    events and texture objects also have ``.ptr`` but no ``device_id`` plus ``mem``/``size``."""
    return (hasattr(cls, "ptr") and hasattr(cls, "device_id")
            and (hasattr(cls, "mem") or hasattr(cls, "size")) and handle_ctype(cls) is None)


def _module(cls: type) -> str:
    return getattr(cls, "__module__", "") or ""


# ---------------------------------------------------------------------------
# The table, in the order kind_of tries the rows


LIBRARIES = (
    Library("jitkern", _is_jitkern, "{a}._ptr", "{a}._device_id", describe=_from_jitkern,
            fast_read=_fast_jitkern, layout_key=_key_jitkern_layout, dims=_dims_jitkern,
            guard_1d=("{a}._dtype is {D}", "{a}._strides == ({n},)"), dtype="{a}._dtype",
            key=_key_jitkern, guard_nd=("{a}._dtype is {D}", "len({a}._shape) == {ndim}"),
            guard_fits="_fits_int32({a}._shape, {a}._strides, {n})"),
    Library("numpy", lambda cls: issubclass(cls, (numpy.ndarray, numpy.generic)),
            describe=_from_numpy, dtype="{a}.dtype"),
    Library("cupy", _is_cupy, "{a}.data.ptr", "{a}.data.device_id", describe=_from_cupy,
            fast_read=_fast_cupy, layout_key=_key_cupy, dims=_dims_strided,
            guard_1d=("{a}.dtype is {D}", "{a}._c_contiguous", "{a}.ndim == 1"),
            dtype="{a}.dtype", results=_cupy_results),
    # data_ptr read as the class's own function: no lookup on the tensor per launch
    Library("torch", _is_torch, "({dp}({a}) if {a}.is_cuda else {cpu}({a}))",
            "{a}.get_device()", describe=_from_torch, fast_read=_fast_torch,
            layout_key=_key_torch, dims=_dims_torch,
            # torch dtypes are singletons; a stride tuple of (1,) says 1-D and contiguous
            # in one call (dim() and is_contiguous() cost two)
            guard_1d=("{a}.dtype is {D}", "{a}.stride() == (1,)"), dtype="{a}.dtype",
            env=lambda cls: {"cpu": _torch_cpu, "dp": cls.data_ptr}, results=_torch_results),
    Library("cai", lambda cls: hasattr(cls, "__cuda_array_interface__"), _cai_pointer,
            launch_read=CAI_READ, describe=_from_cai, fast_read=fast_cai),
    Library("dlpack", lambda cls: hasattr(cls, "__dlpack__"), _dlpack_pointer,
            launch_read=DLPACK_READ, describe=read_dlpack),
    Library("allocation", _is_allocation, "{a}.ptr", "{a}.device_id"),
    # a C struct by value, its fields read by name into the struct's layout (runtime.signature)
    Library("struct", lambda cls: dataclasses.is_dataclass(cls)
            or (issubclass(cls, tuple) and hasattr(cls, "_fields"))),
)
# an instance may still carry a CAI (or DLPack) of its own
UNKNOWN = Library("unknown", lambda cls: True, describe=_describe_unknown)
BY_KIND = {row.kind: row for row in (*LIBRARIES, UNKNOWN)}

_rows: dict[type, Library] = {}


def library(cls: type) -> Library:
    """The row that reads arguments of type ``cls`` (chosen once per type)."""
    row = _rows.get(cls)
    if row is None:
        row = _rows[cls] = next((r for r in LIBRARIES if r.detect(cls)), UNKNOWN)
    return row
