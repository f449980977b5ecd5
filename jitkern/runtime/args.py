"""How the runtime reads each kind of kernel argument: one row per kind.

Every layer that looks at an argument asks here: ``describe`` (an :class:`ArrayInfo`
of any GPU array), the launchers of RawKernel and the JIT (``pointer_getter``,
``device_template``, ``array_read``), the string kernels' launchers (``fast_read``) and
their layout keys (``layout_key``). What decides the kind of a class is :func:`kind_of`,
the one table:

==================  ==========================================================
kind                read through
==================  ==========================================================
``numpy``           nothing: host memory, refused by name
``cupy``            ``a.data.ptr``, ``a.data.device_id``, its plain-slot layout attributes
``torch``           ``t.data_ptr()`` after ``t.is_cuda``, ``t.get_device()``, ``t.stride()``
``cai``             the ``__cuda_array_interface__`` dict, read once per launch
``dlpack``          one DLPack capsule per launch (``__dlpack__``/``__dlpack_device__``)
``allocation``      ``.ptr``/``.device_id`` of a device allocation (CuPy's MemoryPointer)
``struct``          a frozen dataclass or ``typing.NamedTuple``: a C struct by value, its
                    fields read by name into the struct's layout (runtime.signature)
``unknown``         an instance may still carry ``__cuda_array_interface__`` of its own
==================  ==========================================================

A ``numpy`` row's size-1 structured array (``rhs.view(double3)``) or ``numpy.void`` is a
struct by value too: its bytes, copied into the parameter (runtime.signature). The
``dtype`` column (:func:`dtype_read`) is what a launcher checked against a raw kernel's C
signature compares on each call to stay on the signature it checked.

Registered classes come first in every reader: ``register_array_type`` here (jitkern's
ndarray registers itself from arrays/core.py, a layer above) and ``arrays.interop.register``.
Scalars and texture/surface handles are packed by value (:mod:`.launch`). A new array
library is one row: a branch of :func:`kind_of`, its launcher templates in ``_LAUNCH_READS``,
and its ``describe``/fast-read/layout-key readers in arrays.interop's tables keyed by kind.

This module imports only errors, config and runtime.handles; arrays.interop (which reads
DLPack capsules) registers its ``describe`` here (:func:`use_describe`), so neither
layer imports the other back.
"""

from __future__ import annotations

import dataclasses

import numpy

from ..errors import InternalError, KernelArgumentError
from .handles import handle_ctype


def kind_of(cls: type) -> str:
    """The row of :mod:`.args` that reads arguments of type ``cls`` (chosen once per type)."""
    kind = _kinds.get(cls)
    if kind is None:
        kind = _kinds[cls] = _kind(cls)
    return kind


_kinds: dict[type, str] = {}


def _kind(cls: type) -> str:
    module = getattr(cls, "__module__", "") or ""
    if issubclass(cls, (numpy.ndarray, numpy.generic)):
        return "numpy"
    if module.startswith("cupy") and hasattr(cls, "__cuda_array_interface__"):
        return "cupy"
    if module.startswith("torch") and hasattr(cls, "data_ptr") and hasattr(cls, "is_cuda"):
        return "torch"
    if hasattr(cls, "__cuda_array_interface__"):
        return "cai"
    if hasattr(cls, "__dlpack__"):
        return "dlpack"
    if _is_allocation(cls):
        return "allocation"
    if dataclasses.is_dataclass(cls) or (issubclass(cls, tuple) and hasattr(cls, "_fields")):
        return "struct"
    return "unknown"


# ---------------------------------------------------------------------------
# Pointer and device templates of the launchers (RawKernel, the JIT, bound launches).


def _cai_pointer(a) -> int:
    return a.__cuda_array_interface__["data"][0]


def _instance_cai_pointer(a) -> int:
    # For a class whose instances get __cuda_array_interface__ set on themselves (not on
    # the class): the plan is per type, so another instance may lack it.
    try:
        cai = a.__cuda_array_interface__
    except AttributeError:
        raise KernelArgumentError(
            f"cannot pass a {type(a).__module__}.{type(a).__qualname__} without "
            "__cuda_array_interface__ to a kernel (another instance of its class had one)"
        ) from None
    return cai["data"][0]


_pointer_getters: dict[type, object] = {}
_device_getters: dict[type, object] = {}


def register_array_type(cls: type, pointer, device=None, dtype=None) -> None:
    """Teach launches how to read a device pointer (and device id) from ``cls``.

    ``pointer`` and ``device`` are functions of the array, or (faster) Python expression
    templates over ``{a}``, such as ``"{a}.data.ptr"``, which are inlined into the
    generated launchers. ``dtype``, a template, reads the array's NumPy dtype (what a
    checked raw kernel's launcher compares on each call).
    """
    _pointer_getters[cls] = pointer
    if device is not None:
        _device_getters[cls] = device
    if dtype is not None:
        _dtype_getters[cls] = dtype


_dtype_getters: dict[type, str] = {}


_template_functions: dict[str, object] = {}


def _as_function(getter):
    """A getter given as a template, as a function of the array (made once per template)."""
    if not isinstance(getter, str):
        return getter
    fn = _template_functions.get(getter)
    if fn is None:
        fn = _template_functions[getter] = eval(  # noqa: S307 - our own templates
            "lambda a: " + getter.format(a="a"))
    return fn


def _torch_cpu(t) -> int:
    if not t.is_cuda:
        raise KernelArgumentError(
            "a CPU torch.Tensor cannot be passed to a kernel: move it with .cuda() or "
            "convert it with jitkern.asarray(...)"
        )
    return t.data_ptr()


def host_array_message(kind: str) -> str:
    """What every kernel kind says of a host array given where a GPU array is expected:
    copy it to the GPU, or run the kernel in the simulator, which takes host arrays."""
    from ..config import settings

    message = (f"a {kind} lives in host memory and cannot be passed to a kernel; copy it to "
               "the GPU first with jitkern.asarray(x)")
    if settings.simulate:
        return message + ("; JITKERN_SIMULATE is on, but this call does not go through the "
                          "simulator (a launch made before it was turned on?): launch again")
    return message + (", or run the kernel on the CPU with NumPy arrays: "
                      "k.simulate[grid, block](*args) (ElementwiseKernel and ReductionKernel: "
                      "k.simulate(*args)) or JITKERN_SIMULATE=1; k.inspect(..., arch=...) "
                      "compiles without a GPU")


def _dlpack_pointer(a) -> int:
    kind, _dev = a.__dlpack_device__()
    if kind not in (2, 3, 13):  # kDLCUDA, kDLCUDAHost, kDLCUDAManaged
        raise KernelArgumentError(f"a {type(a).__name__} in host memory cannot be passed to a kernel")
    return _dlpack_info(a).ptr


def _instance_cai(a) -> dict:
    # The dict of an instance-level __cuda_array_interface__ (see _instance_cai_pointer).
    try:
        return a.__cuda_array_interface__
    except AttributeError:
        raise KernelArgumentError(
            f"cannot pass a {type(a).__module__}.{type(a).__qualname__} without "
            "__cuda_array_interface__ to a kernel (another instance of its class had one)"
        ) from None


def _dlpack_info(a):
    # The ArrayInfo of a DLPack-only array (describe() refuses host memory). The capsule
    # reader lives with the arrays (arrays.interop), a layer above: it registers itself
    # here when imported (see use_describe), as jitkern's ndarray registers its row.
    return _describe[0](a)


def _no_describe(a):
    raise KernelArgumentError(
        f"cannot read the DLPack array {type(a).__module__}.{type(a).__qualname__}: "
        "import jitkern.arrays first")


_describe = [_no_describe]


def use_describe(describe) -> None:
    """Read DLPack-only arguments through ``describe`` (arrays.interop's, set at its import)."""
    _describe[0] = describe


class _ArrayHooks:
    """What the arrays layer (above the runtime) gives the launchers when it is imported:
    ``ndarray`` (jitkern's array class, whose outputs the string kernels' launchers build
    inline), ``pin_stream``, ``stream_of`` and ``c_strides`` (arrays.core/layout), and
    ``fast_read`` (arrays.interop: how a launcher reads a foreign array's layout)."""

    ndarray = pin_stream = stream_of = c_strides = fast_read = None


ARRAYS = _ArrayHooks()


def register_arrays(**hooks) -> None:
    """Set :data:`ARRAYS` fields (called by arrays.core and arrays.interop at import)."""
    for name, value in hooks.items():
        if not hasattr(_ArrayHooks, name):
            raise InternalError(f"runtime.args has no array hook {name!r}: please report this")
        setattr(ARRAYS, name, value)


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


_CAI_READ = ArrayRead("cai", "({a}_i := {a}.__cuda_array_interface__)", "{a}_i['data'][0]", {})
_INSTANCE_CAI_READ = ArrayRead("cai", "({a}_i := {icai}({a}))", "{a}_i['data'][0]",
                               {"icai": _instance_cai})
_DLPACK_READ = ArrayRead("info", "({a}_i := {info}({a}))", "{a}_i.ptr", {"info": _dlpack_info})


def array_read(cls: type, value=None) -> ArrayRead | None:
    """The :class:`ArrayRead` for arguments of type ``cls`` (``value``, a sample, decides for
    a class without either protocol whose instances carry their own CAI), or None for
    arrays read through a per-type pointer getter."""
    getter = pointer_getter(cls)
    if getter is _cai_pointer:
        return _CAI_READ
    if getter is _dlpack_pointer:
        return _DLPACK_READ
    if (getter is None and value is not None and not issubclass(cls, numpy.ndarray)
            and hasattr(value, "__cuda_array_interface__")):
        return _INSTANCE_CAI_READ
    return None


def pointer_getter(cls: type):
    """The function (or template over ``{a}``) that reads a device pointer from an instance
    of ``cls``, or None (a host array, or a class whose instances may carry their own CAI)."""
    getter = _pointer_getters.get(cls)
    if getter is not None:
        return getter
    row = _LAUNCH_READS.get(kind_of(cls))
    if row is None:
        return None
    pointer, device = row
    if pointer is _dlpack_pointer:  # read per call, through the capsule
        return pointer if hasattr(cls, "__dlpack_device__") else None
    _pointer_getters[cls] = pointer
    if device is not None:
        _device_getters[cls] = device
    return pointer


# The launchers' columns of the table: kind -> (pointer, device), each a template over
# ``{a}`` (inlined into the generated code) or a function. CAI and DLPack arrays are
# read once per call instead (array_read); kinds not listed are not device arrays.
_LAUNCH_READS = {
    "cupy": ("{a}.data.ptr", "{a}.data.device_id"),
    "torch": ("({a}.data_ptr() if {a}.is_cuda else {cpu}({a}))", "{a}.get_device()"),
    "cai": (_cai_pointer, None),
    "dlpack": (_dlpack_pointer, None),
    "allocation": ("{a}.ptr", "{a}.device_id"),
}


def _is_allocation(cls: type) -> bool:
    """A device allocation object with an integer ``.ptr``: CuPy's ``MemoryPointer`` (what
    ``cupy.cuda.alloc()`` returns) and ``Memory``, jitkern's ``MemoryPointer``. Streams,
    events and texture objects also have ``.ptr`` but no ``device_id`` plus ``mem``/``size``."""
    return (hasattr(cls, "ptr") and hasattr(cls, "device_id")
            and (hasattr(cls, "mem") or hasattr(cls, "size")) and handle_ctype(cls) is None)


def device_getter(cls: type):
    """A function reading the device id of an instance of ``cls``, or None."""
    return _as_function(_device_getters.get(cls))


def device_template(cls: type) -> str | None:
    """The device getter of ``cls`` as an expression template over ``{a}``, or None."""
    getter = _device_getters.get(cls)
    if getter is None:
        return None
    return getter if isinstance(getter, str) else None




# ---------------------------------------------------------------------------
# The dtype column: what an array argument holds, read once on the miss path
# (dtype_of) and compared on every call by a checked launcher (dtype_read).


def dtype_of(a):
    """The NumPy dtype of array (or NumPy scalar) argument ``a``; None where it has none
    (a device allocation, an object no reader knows)."""
    if isinstance(a, (numpy.ndarray, numpy.generic)):
        return a.dtype
    cls = type(a)
    kind = kind_of(cls)
    if kind in ("allocation", "struct"):
        return None
    try:
        if cls in _dtype_getters or kind == "cupy":
            return dtype_read(cls, a)[1]
        read = array_read(cls, a)
        if read is not None and read.kind == "cai":  # no driver call: the dict says it
            return numpy.dtype(a.__cuda_array_interface__["typestr"])
        return _describe[0](a).dtype
    except (KernelArgumentError, AttributeError, TypeError, ValueError, KeyError):
        return None


#: kind -> template over ``{a}`` (``{a}_i``: what the launcher's ArrayRead bound) that reads
#: a value equal to the sample's when the dtype is the same; its sample value's reader.
_DTYPE_READS = {
    "numpy": ("{a}.dtype", lambda a: a.dtype),
    "cupy": ("{a}.dtype", lambda a: a.dtype),
    "torch": ("{a}.dtype", lambda a: a.dtype),
}
_READ_DTYPES = {
    "cai": ("{a}_i['typestr']", lambda a: a.__cuda_array_interface__["typestr"]),
    "info": ("{a}_i.dtype", lambda a: _dlpack_info(a).dtype),
}


def dtype_read(cls: type, value) -> tuple[str, object] | None:
    """(template over ``{a}``, the value it reads from ``value``) that tells, on each call,
    whether an argument of type ``cls`` still has ``value``'s dtype; None where no cheap
    read exists."""
    getter = _dtype_getters.get(cls)
    if getter is not None:
        return getter, _as_function(getter)(value)
    read = array_read(cls, value)
    if read is not None:
        template, sample = _READ_DTYPES[read.kind]
        return template, sample(value)
    row = _DTYPE_READS.get(kind_of(cls))
    if row is None:
        return None
    return row[0], row[1](value)
