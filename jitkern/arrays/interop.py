"""Reading GPU arrays of any library: :func:`describe` and :func:`pointer_of`.

``describe(obj)`` returns an :class:`ArrayInfo` for jitkern, CuPy and PyTorch
arrays (each through a fast extractor that reads their attributes directly), and
for anything exposing ``__cuda_array_interface__`` (Numba, JAX, ...) or a CUDA
``__dlpack__``. The extractor is chosen once per type and kept in a dict, so a
launch pays one dict lookup and one attribute walk per array argument.

Host memory is refused with a TypeError that points to ``jitkern.asarray``.
"""

from __future__ import annotations

from ..runtime.device import current_stream_handle
from ..runtime import args as _args, libraries as _libraries
from ..runtime.libraries import (  # noqa: F401 - the table's readers, re-exported
    ArrayInfo,
    FastRead,
    NewResult,
    cai_pointer_device as _pointer_device,
    fast_cai as _fast_cai,
    host_error as _host_error,
    parse_cai,
)
from ..errors import JitkernTypeError
from .. import dtypes
from . import _dlpack
from ..layout import c_strides


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


# The general reader, the string kernels' readers and the results' library are the
# argument table's (runtime/args.py, runtime/libraries.py): re-exported here, where users
# of jitkern's arrays look for describe().
describe = _args.describe
pointer_of = _args.pointer_of
fast_read = _args.fast_read
layout_key = _args.layout_key
new_result = _args.new_result
program_library = _args.program_library
extractor_for = _libraries.extractor_for

_libraries.use_dlpack(lambda obj: _from_dlpack(obj))  # the table's DLPack capsule parser
