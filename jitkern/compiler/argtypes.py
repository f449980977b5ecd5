"""The JIT type of a kernel argument's value, from what the value is made of (its dtype,
shape and strides): one rule for the JIT's launches (kernels/jit_args.py reads device
arrays through it) and for the simulator's own kernels (sim/translated.py, whose arguments
are NumPy values)."""

from __future__ import annotations

import numpy

from ..layout import fits_int32
from . import types as T
from .structs import struct_of_dtype

_scalars: dict = {}  # dtype -> T.Scalar (or T.Struct)
_arrays: dict = {}  # (scalar, ndim, contiguous, index32) -> T.Array


def array_type(dtype, shape, strides) -> T.Array:
    """The type of an array of ``dtype`` with these ``shape`` and byte ``strides``: its
    element, rank, whether it is 1-D contiguous, whether 32-bit offsets reach it all."""
    scalar = _scalars.get(dtype)
    if scalar is None:  # NumPy's dtype names are slow to build: once per dtype
        scalar = _scalars[dtype] = (struct_of_dtype(dtype) if dtype.fields is not None
                                    else T.scalar_from_dtype(dtype))
    itemsize = scalar.itemsize
    contiguous = len(shape) == 1 and (strides[0] == itemsize or shape[0] <= 1)
    key = (scalar, len(shape), contiguous, fits_int32(shape, strides, itemsize))
    t = _arrays.get(key)
    if t is None:  # T.array builds and interns a frozen record: once per kind of array
        t = _arrays[key] = T.array(*key)
    return t


def host_type(value) -> T.Type:
    """The type of a NumPy value: an array, a scalar, or a structured scalar (a struct)."""
    if isinstance(value, numpy.ndarray):
        return array_type(value.dtype, value.shape, value.strides)
    if isinstance(value, numpy.void):
        return struct_of_dtype(value.dtype)
    return T.scalar_from_dtype(value.dtype)
