"""Arguments of string kernels: what each one is, broadcasting, and collapsing dimensions.

Pure functions over shapes and byte strides (no device work), shared by
ElementwiseKernel and ReductionKernel and tested on the CPU.
"""

from __future__ import annotations

import numpy

from ...arrays.interop import describe
from ...arrays.records import is_record_class
from ...runtime.launch import host_array_message
from ...handles import handle_ctype
from ...arrays import layout
from ...arrays.layout import broadcast_strides, c_strides, max_extent  # noqa: F401 (kernels read them here)
from ...errors import JitkernValueError, KernelArgumentError

_PY_SCALARS = (bool, int, float, complex)


class ArrayArg:
    """A device array argument, reduced to what code generation and launch need."""

    __slots__ = ("device_id", "dtype", "host", "ptr", "shape", "strides")

    def __init__(self, dtype, shape, strides, ptr, device_id, host=False):
        self.dtype = numpy.dtype(dtype) if not isinstance(dtype, numpy.dtype) else dtype
        self.shape = tuple(int(s) for s in shape)
        self.strides = tuple(int(s) for s in strides)
        self.ptr = int(ptr)
        self.device_id = device_id
        self.host = host

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def c_contiguous(self) -> bool:
        return self.strides == c_strides(self.shape, self.dtype.itemsize) or self.size <= 1


def is_scalar(value) -> bool:
    """Passed by value: Python and NumPy scalars, texture/surface objects (their handle),
    frozen dataclasses and NamedTuples (a record)."""
    return (type(value) in _PY_SCALARS or isinstance(value, numpy.generic)
            or handle_ctype(type(value)) is not None or is_record_class(type(value)))


def host_array_error(what: str) -> KernelArgumentError:
    return KernelArgumentError(f"{what}: " + host_array_message("numpy.ndarray"))


def describe_array(value, what: str, *, host_ok: bool = False) -> ArrayArg:
    """An :class:`ArrayArg` for a jitkern/CUDA array (or a NumPy array when ``host_ok``)."""
    if isinstance(value, numpy.ndarray):
        if not host_ok:
            raise host_array_error(what)
        return ArrayArg(value.dtype, value.shape, value.strides, value.ctypes.data, None, True)
    try:
        info = describe(value)
    except TypeError as exc:
        raise KernelArgumentError(
            f"{what}: expected a GPU array (jitkern.ndarray or any CUDA array) or a scalar, got "
            f"{type(value).__module__}.{type(value).__qualname__} ({exc})"
        ) from None
    return ArrayArg(info.dtype, info.shape, info.strides, info.ptr, info.device_id)


def broadcast_shape(shapes, kernel: str) -> tuple:
    """NumPy's broadcast of ``shapes`` (raises naming every shape when they disagree)."""
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for shape in shapes:
        offset = ndim - len(shape)
        for k, s in enumerate(shape):
            cur = out[offset + k]
            if cur == 1:
                out[offset + k] = s
            elif s != 1 and s != cur:
                listed = ", ".join(str(tuple(x)) for x in shapes)
                raise JitkernValueError(f"{kernel}: shapes {listed} cannot be broadcast together")
    return tuple(out)


def collapse(shape, strides_list, *, keep=False):
    """Merge adjacent dimensions that every array walks contiguously; drop size-1 ones.

    Returns ``(shape, [strides, ...])`` describing the same element order (C order
    over ``shape``). With ``keep`` nothing is merged. An all-size-1 shape collapses to
    ``()``: the launch struct then has no axis (generated code depends on it).
    """
    if keep:
        return tuple(shape), [tuple(s) for s in strides_list]
    return layout.collapse(shape, *strides_list, min_ndim=0)
