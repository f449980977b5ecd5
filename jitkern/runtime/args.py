"""How the runtime reads each kind of kernel argument.

Every layer that looks at an argument asks here or in :mod:`.libraries`, the one table of
array libraries (jitkern's ndarray aside, which registers itself): ``describe`` (an
:class:`ArrayInfo` of any GPU array), the launchers of RawKernel and the JIT
(``pointer_getter``, ``device_template``, ``array_read``), the string kernels' launchers
(``fast_read``) and their layout keys (``layout_key``). What decides the kind of a class
is :func:`kind_of`, the row :func:`.libraries.library` picks:

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
library is one row of :data:`.libraries.LIBRARIES`.

This module imports only errors, config and the runtime; arrays.interop (which reads
DLPack capsules) registers its reader in :mod:`.libraries` (``use_dlpack``), so neither
layer imports the other back.
"""

from __future__ import annotations

import numpy

from ..arrays import records
from ..errors import InternalError, JitkernTypeError, KernelArgumentError
from .libraries import (  # noqa: F401 - the table's names the launchers import from here
    CAI_READ as _CAI_READ,
    DLPACK_READ as _DLPACK_READ,
    INSTANCE_CAI_READ as _INSTANCE_CAI_READ,
    ArrayRead,
    _torch_cpu,
    host_array_message,
    describe,
    dlpack_info,
    library,
)


def kind_of(cls: type) -> str:
    """The row of :mod:`.libraries` that reads arguments of type ``cls`` (chosen once per type)."""
    return library(cls).kind


# ---------------------------------------------------------------------------
# Pointer and device templates of the launchers (RawKernel, the JIT, bound launches).


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


class _ArrayHooks:
    """What the arrays layer (above the runtime) gives the launchers when it is imported:
    ``ndarray`` (jitkern's array class, whose outputs the string kernels' launchers build
    inline), ``pin_stream``, ``stream_of`` and ``c_strides`` (arrays.core/layout),
    ``fast_read`` (arrays.interop: how a launcher reads a foreign array's layout) and
    ``new_result`` (arrays.interop: in which library's arrays a launch allocates its
    results, given its array arguments; None: jitkern's)."""

    ndarray = pin_stream = stream_of = c_strides = fast_read = new_result = None


ARRAYS = _ArrayHooks()


def register_arrays(**hooks) -> None:
    """Set :data:`ARRAYS` fields (called by arrays.core and arrays.interop at import)."""
    for name, value in hooks.items():
        if not hasattr(_ArrayHooks, name):
            raise InternalError(f"runtime.args has no array hook {name!r}: please report this")
        setattr(ARRAYS, name, value)


def array_read(cls: type, value=None) -> ArrayRead | None:
    """The :class:`ArrayRead` for arguments of type ``cls`` (``value``, a sample, decides for
    a class without either protocol whose instances carry their own CAI), or None for
    arrays read through a per-type pointer getter."""
    getter = pointer_getter(cls)
    row = library(cls)
    if getter is not None and getter is row.pointer and row.launch_read is not None:
        return row.launch_read
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
    row = library(cls)
    if row.pointer is None:
        return None
    if row.launch_read is not None and row.kind == "dlpack":  # read per call, by capsule
        return row.pointer if hasattr(cls, "__dlpack_device__") else None
    _pointer_getters[cls] = row.pointer
    if row.device is not None:
        _device_getters[cls] = row.device
    return row.pointer


def pointer_env(cls: type) -> dict:
    """The helpers the pointer template of ``cls`` names (``{cpu}`` for torch's)."""
    env = library(cls).env
    return env(cls) if env is not None else {}


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
            return _cai_dtype(a.__cuda_array_interface__)
        return describe(a).dtype
    except (KernelArgumentError, AttributeError, TypeError, ValueError, KeyError):
        return None


def _cai_dtype(cai: dict) -> numpy.dtype:
    """The typestr's dtype; for records (a void typestr), the record its descr lists."""
    if cai["typestr"][1:2] == "V" and cai.get("descr"):
        try:
            return records.dtype_from_cai(cai)
        except JitkernTypeError:  # padding only, or not a C layout: the records' size only
            pass
    return numpy.dtype(cai["typestr"])


#: ArrayRead kind -> template over ``{a}_i`` (what the launcher's ArrayRead bound) that
#: reads a value equal to the sample's when the dtype is the same; its sample value's reader.
#: (A library's own read is its row's ``dtype`` column in :mod:`.libraries`.)
_READ_DTYPES = {
    "cai": ("{a}_i['typestr']", lambda a: a.__cuda_array_interface__["typestr"]),
    "info": ("{a}_i.dtype", lambda a: dlpack_info(a).dtype),
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
    template = library(cls).dtype
    if template is None:
        return None
    return template, _as_function(template)(value)
