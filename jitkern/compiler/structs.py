"""Struct types of JIT kernels: from a record dtype (a frozen dataclass's or NamedTuple's,
through :mod:`..records`, or a NumPy structured dtype's) to a :class:`~.types.Struct`,
and the C definitions of the structs a program uses.

The C struct is the one ElementwiseKernel generates for a record dtype
(:func:`.strings.prelude.record_definitions`): one layout routine for every kernel kind.
"""

from __future__ import annotations

import numpy

from .. import records
from . import types as T
from .strings.params import record_ctype
from .strings.prelude import record_definitions

_of_dtype: dict = {}  # (dtype, class) -> T.Struct

#: The family of a sub-array field's type: the struct keeps its layout, a read is refused.
SUB_ARRAY = "sub-array field"


def struct_of_class(cls: type) -> T.Struct:
    """The struct type of a frozen dataclass or ``typing.NamedTuple`` class."""
    return struct_of_dtype(records.record_dtype(cls))


def struct_of_dtype(dtype: numpy.dtype) -> T.Struct:
    """The struct type of a record dtype (named by the class it was made from, if any)."""
    cls = records.class_of(dtype)
    key = (dtype, cls)
    t = _of_dtype.get(key)
    if t is None:
        t = _of_dtype[key] = _make(dtype, cls)
    return t


def _make(dtype: numpy.dtype, cls) -> T.Struct:
    if cls is not None:
        name, origin = cls.__qualname__, f"{cls.__module__}.{cls.__qualname__}"
    else:
        name, origin = "record", ""
    cname = record_ctype(dtype)  # checks the layout is C's (align=True), naming the field
    fields = []
    for field in dtype.names:
        field_dtype = dtype.fields[field][0]
        if field_dtype.shape:  # laid out in the C struct, refused where a kernel reads it
            fields.append((field, T.opaque(SUB_ARRAY, str(field_dtype))))
        elif field_dtype.fields is not None:
            fields.append((field, struct_of_dtype(field_dtype)))
        else:
            fields.append((field, T.scalar_from_dtype(field_dtype)))
    renamed = [(f, m) for f, m in records.c_members(dtype.names).items() if f != m]
    return T.struct(name, origin, cname, fields, dtype, dtype.itemsize, renamed)


def structs_in(types) -> list[T.Struct]:
    """The struct types among ``types`` (arguments, and elements of arrays)."""
    out = []
    for t in types:
        t = getattr(t, "dtype", t) if isinstance(t, T.Array) else t
        if isinstance(t, T.Struct) and t not in out:
            out.append(t)
    return out


def definitions(structs) -> str:
    """The C definitions of ``structs`` (nested ones first, each layout once)."""
    return record_definitions([s.dtype for s in structs])
