"""Making arrays: from host data, from other libraries' GPU arrays, or from a shape.

``asarray`` takes NumPy arrays, lists and scalars (copied to the current device),
jitkern arrays (returned as they are) and any GPU array exposing
``__cuda_array_interface__`` or a CUDA ``__dlpack__`` (CuPy, PyTorch, Numba,
JAX), which it views without a copy, keeping the producer alive.
"""

from __future__ import annotations

import numpy

from ..runtime import memory
from ..runtime.device import get_current_stream
from ..errors import JitkernTypeError, JitkernValueError
from .. import dtypes, layout
from . import _dlpack, interop
from ..runtime.context import current_device_id, on_device, order_after
from .core import allocate, from_info, make, ndarray, pin_stream

_dtype_cache = dtypes._cache
_HOT_MAX = 2**48  # elements: larger sizes take the checked path (see core.allocate)


def _order(order) -> str:
    if order in ("C", None):
        return "C"
    if order == "F":
        return "F"
    raise JitkernValueError(f"order: expected 'C' or 'F', got {order!r}")


def empty(shape, dtype=float, order="C") -> ndarray:
    """An uninitialised array on the current device, ordered on the current stream."""
    try:
        dt = _dtype_cache[dtype]
    except (KeyError, TypeError):
        dt = dtypes.normalize(dtype)
    if type(shape) is int and 0 <= shape <= _HOT_MAX and order == "C":  # the hot path
        device_id = current_device_id()
        stream = get_current_stream()
        s = stream.ptr
        mem = memory.malloc(shape * dt.itemsize, device_id, s)
        if s:
            pin_stream(mem, stream)
        return make((shape,), (dt.itemsize,), dt, mem.ptr, mem, None, device_id, stream, shape)
    return allocate(layout.normalize_shape(shape), dt, _order(order))


def zeros(shape, dtype=float, order="C") -> ndarray:
    a = empty(shape, dtype, order)
    if a._size:
        with on_device(a._device_id):
            memory.memset_d8(a._ptr, 0, a.nbytes, a._stream.ptr)
    return a


def full(shape, fill_value, dtype=None, order="C") -> ndarray:
    """An array of ``fill_value`` (dtype as NumPy infers it when None)."""
    if dtype is None:
        dtype = _host_dtype(numpy.asarray(fill_value))
    a = empty(shape, dtype, order)
    a.fill(fill_value)
    return a


def ones(shape, dtype=float, order="C") -> ndarray:
    return full(shape, 1, dtype, order)


def arange(start, stop=None, step=1, dtype=None) -> ndarray:
    """Evenly spaced values in ``[start, stop)`` (computed on the host, then copied)."""
    for name, value in (("start", start), ("stop", stop), ("step", step)):
        real = isinstance(value, (int, float, numpy.integer, numpy.floating))
        if value is not None and (not real or isinstance(value, bool)):
            raise JitkernTypeError(
                f"arange: {name} must be a real number, got {value!r} ({type(value).__name__})")
    if step == 0:
        raise JitkernValueError("arange: step must not be zero (the range would never end)")
    try:
        host = numpy.arange(start, step=step, dtype=dtype) if stop is None else \
            numpy.arange(start, stop, step, dtype=dtype)
    except (ValueError, TypeError, ZeroDivisionError, OverflowError) as exc:
        raise JitkernValueError(
            f"arange(start={start!r}, stop={stop!r}, step={step!r}, dtype={dtype!r}): {exc}"
        ) from None
    return _from_host(host)


# ---------------------------------------------------------------------------
# *_like


def _like(a, dtype, order, shape) -> tuple[tuple, numpy.dtype, str, int | None]:
    if isinstance(a, ndarray):
        src_shape, src_dtype, device_id = a._shape, a._dtype, a._device_id
        f_layout = a._f_contiguous() and not a._c_contiguous()
    elif isinstance(a, numpy.ndarray):
        src_shape, src_dtype, device_id = a.shape, a.dtype, None
        f_layout = a.flags.f_contiguous and not a.flags.c_contiguous
    else:
        info = interop.describe(a)
        src_shape, src_dtype, device_id = info.shape, info.dtype, info.device_id
        f_layout = False
    dt = dtypes.normalize(src_dtype if dtype is None else dtype)
    if order in ("K", "A"):
        order = "F" if f_layout else "C"
    new_shape = src_shape if shape is None else layout.normalize_shape(shape)
    return tuple(new_shape), dt, _order(order), device_id


def empty_like(a, dtype=None, order="K", shape=None) -> ndarray:
    """An uninitialised array shaped like ``a`` (on ``a``'s device for GPU arrays)."""
    new_shape, dt, order, device_id = _like(a, dtype, order, shape)
    if device_id is None:
        return allocate(new_shape, dt, order)
    with on_device(device_id):
        return allocate(new_shape, dt, order, device_id)


def zeros_like(a, dtype=None, order="K", shape=None) -> ndarray:
    out = empty_like(a, dtype, order, shape)
    if out._size:
        with on_device(out._device_id):
            memory.memset_d8(out._ptr, 0, out.nbytes, out._stream.ptr)
    return out


def full_like(a, fill_value, dtype=None, order="K", shape=None) -> ndarray:
    out = empty_like(a, dtype, order, shape)
    out.fill(fill_value)
    return out


def ones_like(a, dtype=None, order="K", shape=None) -> ndarray:
    return full_like(a, 1, dtype, order, shape)


# ---------------------------------------------------------------------------
# From existing data


def _host_dtype(host: numpy.ndarray) -> numpy.dtype:
    dt = host.dtype
    if not dt.isnative:
        dt = dt.newbyteorder("=")
    return dtypes.check_supported(dt)


def _from_host(host: numpy.ndarray, order="K") -> ndarray:
    dt = _host_dtype(host)
    if order in ("K", "A"):
        order = "F" if host.flags.f_contiguous and not host.flags.c_contiguous else "C"
    out = allocate(host.shape, dt, _order(order))
    out._upload(host, get_current_stream())
    return out


def _gpu_info(obj) -> interop.ArrayInfo | None:
    """ArrayInfo of a foreign GPU array (None for host data), its producer's stream honoured."""
    if hasattr(obj, "__cuda_array_interface__"):
        try:
            cai = obj.__cuda_array_interface__
        except (AttributeError, TypeError):  # e.g. a dtype CAI cannot spell: try DLPack
            cai = None
        # A void typestr (PyTorch's bfloat16) says nothing of the type: DLPack does.
        if cai is not None and not (cai["typestr"][1:2] == "V" and hasattr(obj, "__dlpack__")):
            return interop.parse_cai(cai, obj)
    device = getattr(obj, "__dlpack_device__", None)
    if device is None or not hasattr(obj, "__dlpack__"):
        return None
    if device()[0] == _dlpack.KDL_CPU:
        return None
    return interop.info_from_capsule(interop.dlpack_capsule(obj))


def _wrap(info: interop.ArrayInfo) -> ndarray:
    a = from_info(info)
    if info.stream is not None:
        with on_device(a._device_id):
            order_after(a._stream.ptr, info.stream, a._device_id)
    return a


def asarray(obj, dtype=None, order=None) -> ndarray:
    """``obj`` as a jitkern array: no copy for GPU arrays of the same dtype, a copy to the
    current device for host data."""
    if isinstance(obj, ndarray):
        return obj if dtype is None else obj.astype(dtype, copy=False)
    info = _gpu_info(obj)
    if info is not None:
        a = _wrap(info)
        return a if dtype is None else a.astype(dtype, copy=False)
    return _from_host(numpy.asarray(obj, dtype=dtype), "K" if order is None else order)


def array(obj, dtype=None, copy=True, order="K") -> ndarray:
    """A jitkern array of ``obj``'s data, copied unless ``copy`` is False or None and no
    copy is needed (as NumPy 2: ``copy=False`` raises ValueError if one is)."""
    if isinstance(obj, ndarray):
        a = obj
    else:
        info = _gpu_info(obj)
        if info is None:
            if copy is False:
                raise JitkernValueError("jitkern.array(copy=False): host data has to be copied to the "
                                 "GPU; use copy=None or True")
            return _from_host(numpy.asarray(obj, dtype=dtype), order)
        a = _wrap(info)
    if dtype is not None and dtypes.normalize(dtype) != a._dtype:
        if copy is False:
            raise JitkernValueError(f"jitkern.array(copy=False): converting {a._dtype} to "
                             f"{numpy.dtype(dtype)} needs a copy")
        return a.astype(dtype, order=order)
    return a.copy(order=order) if copy else a


def asnumpy(a, stream=None, order="C") -> numpy.ndarray:
    """A NumPy array of ``a``: a host copy for GPU arrays, ``a`` itself for host data."""
    if isinstance(a, ndarray):
        return a.get(stream=stream, order=order)
    if isinstance(a, numpy.ndarray):
        return a
    info = _gpu_info(a)
    if info is None:
        return numpy.asarray(a, order=order)
    return _wrap(info).get(stream=stream, order=order)


def from_dlpack(x) -> ndarray:
    """A jitkern array viewing a CUDA DLPack producer (``x.__dlpack__``) without a copy."""
    device = getattr(x, "__dlpack_device__", None)
    if device is not None and device()[0] == _dlpack.KDL_CPU:
        return _from_host(numpy.from_dlpack(x))
    if device is None and not hasattr(x, "__dlpack__"):
        return _wrap(interop.info_from_capsule(x))  # a bare capsule
    return _wrap(interop.info_from_capsule(interop.dlpack_capsule(x)))
