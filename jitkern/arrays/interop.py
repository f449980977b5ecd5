"""Reading GPU arrays of any library: :func:`describe` and :func:`pointer_of`.

``describe(obj)`` returns an :class:`ArrayInfo` for jitkern, CuPy and PyTorch
arrays (each through a fast extractor that reads their attributes directly), and
for anything exposing ``__cuda_array_interface__`` (Numba, JAX, ...) or a CUDA
``__dlpack__``. The extractor is chosen once per type and kept in a dict, so a
launch pays one dict lookup and one attribute walk per array argument.

Host memory is refused with a TypeError that points to ``jitkern.asarray``.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy

from ..runtime.device import current_stream_handle
from ..runtime import libraries as _libraries
from ..runtime.args import register_arrays
from ..runtime.libraries import (  # noqa: F401 - the table's readers, re-exported
    ArrayInfo,
    FastRead,
    NewResult,
    cai_pointer_device as _pointer_device,
    fast_cai as _fast_cai,
    host_error as _host_error,
    parse_cai,
)
from ..config import settings
from ..errors import JitkernRuntimeError, JitkernTypeError
from . import _dlpack, dtypes
from .layout import c_strides


_HOST_HINT = "copy it to the GPU first with jitkern.asarray(x)"


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


_from_numpy = _libraries.BY_KIND["numpy"].describe
_extractors: dict[type, Any] = {numpy.ndarray: _from_numpy}
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
    return _libraries.library(cls).describe or _unsupported


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
# Generated launchers (runtime.launcher) read foreign arrays through the table's
# ``fast_read`` column (runtime.libraries: per library, templates over ``{a}`` and ``{c}``);
# a library without one, through one describe() per call.


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


def _column(cls: type, name: str):
    """The table's reader ``name`` for ``cls``, where ``describe`` reads ``cls`` through the
    same row (a registered class, jitkern's ndarray, has its own readers), else None."""
    row = _libraries.library(cls)
    return getattr(row, name) if extractor_for(cls) is row.describe else None


def fast_read(obj) -> FastRead:
    """How a generated launcher reads arrays like ``obj`` (a foreign GPU array), once it
    has checked that the argument's type is ``type(obj)``."""
    if extractor_for(type(obj)) is _unsupported and isinstance(
            getattr(obj, "__cuda_array_interface__", None), dict):
        return _fast_cai(obj, instance=True)  # the dict set on the instance itself
    return (_column(type(obj), "fast_read") or _fast_generic)(obj)



_results_of_type: dict[type, Any] = {}


def _results_of(value):
    """The NewResult of ``value``'s library, or None (jitkern arrays, other protocols,
    scalars): chosen once per type."""
    cls = type(value)
    try:
        return _results_of_type[cls]
    except KeyError:
        pass
    library = _column(cls, "results")
    results = _results_of_type[cls] = library() if library is not None else None
    return results


def new_result(values) -> NewResult | None:
    """How a kernel whose arguments are ``values`` allocates its results: CuPy's arrays if
    any is a CuPy array, else PyTorch's tensors if any is a tensor; None for jitkern arrays
    (jitkern arrays, JAX, Numba and other protocol objects). With no array among ``values``,
    the program's library (:func:`program_library`)."""
    best, arrays = None, False
    for value in values:
        results = _results_of(value)
        if results is not None and (best is None or results.rank < best.rank):
            best = results
        arrays = arrays or _libraries.library(type(value)).kind in _ARRAY_KINDS
    if not arrays:
        return _program_results()
    return best


_ARRAY_KINDS = frozenset(("cupy", "torch", "cai", "dlpack", "allocation"))


def program_library() -> str:
    """The library whose arrays a kernel with no array arguments returns: ``settings.results``
    (JITKERN_RESULTS), where 'auto' is CuPy's when the program has imported CuPy, else
    PyTorch's when it has imported PyTorch, else jitkern's ('cupy', 'torch' or 'jitkern')."""
    chosen = settings.results
    if chosen != "auto":
        return chosen
    modules = sys.modules
    return "cupy" if "cupy" in modules else "torch" if "torch" in modules else "jitkern"


def _program_results() -> NewResult | None:
    library = program_library()
    if library == "jitkern":
        return None
    try:
        return _libraries.BY_KIND[library].results()
    except ImportError as exc:
        raise JitkernRuntimeError(
            f"a kernel with no array arguments returns {library} arrays "
            f"(jitkern.config.settings.results / JITKERN_RESULTS = {settings.results!r}), but "
            f"{library} cannot be imported: {exc}") from None


def _key_generic(obj):
    info = describe(obj)
    return (type(obj), info.dtype, info.shape, info.strides)


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
        reader = _key_readers[type(obj)] = _column(type(obj), "layout_key") or _key_generic
    return reader(obj)


_libraries.use_dlpack(lambda obj: _from_dlpack(obj), describe)  # the table's DLPack readers
register_arrays(fast_read=fast_read)  # the string kernels' launchers read layouts so
register_arrays(new_result=new_result)  # ... and allocate their results so
