"""The JIT's view of a launch's arguments: each argument's JIT type (:func:`arg_type`), the
per-call key the generated launcher compares (the keyers, one per argument class), and the
shape/stride parameters appended for arrays (:func:`_extras_function`)."""

from __future__ import annotations

import numpy

from ..arrays import records
from ..arrays.layout import c_strides
from ..arrays.layout import fits_int32 as _fits_int32
from ..compiler import types as T
from ..compiler.argtypes import array_type as _array_type
from ..compiler.structs import struct_of_class, struct_of_dtype
from ..errors import JitkernTypeError, KernelArgumentError
from ..runtime import args as launch_args
from ..runtime import libraries

def arg_type(a, allow_host: bool = False) -> T.Type:
    """The JIT type of one kernel argument."""
    for cls, t in T.PYTHON_SCALARS.items():
        if isinstance(a, cls):
            return t
    if isinstance(a, (numpy.bool_, numpy.number)):
        return T.scalar_from_dtype(a.dtype)
    if isinstance(a, numpy.void) or records.is_record_class(type(a)):
        return _struct_type(a)
    if isinstance(a, numpy.ndarray):
        if not allow_host:
            raise JitkernTypeError(launch_args.host_array_message("numpy.ndarray"))
        return _array_type(a.dtype, a.shape, a.strides)
    from ..arrays.interop import describe

    info = describe(a)
    return _array_type(info.dtype, info.shape, info.strides)


def _struct_type(a) -> T.Struct:
    """A struct argument's type: a numpy.void of a record dtype, or a frozen dataclass /
    NamedTuple instance (compiler.structs)."""
    if isinstance(a, numpy.void):
        if a.dtype.fields is None:
            raise JitkernTypeError(f"a numpy.void of dtype {a.dtype} has no fields; pass a "
                                   "structured scalar (numpy.zeros((), record_dtype)[()])")
        return struct_of_dtype(a.dtype)
    return struct_of_class(type(a))


_typestrs: dict = {}  # CAI typestr -> _typestr_types(typestr)


def _cai_type(cai: dict) -> T.Array:
    """The JIT type of a ``__cuda_array_interface__`` dict, read without describe(): no
    ArrayInfo and no driver query of the pointer's device (the general path and the
    generated launchers' guards; the first launch's arg_type() validated the array)."""
    typestr = cai["typestr"]
    known = _typestrs.get(typestr)
    if known is None:
        if typestr[1:2] == "V":  # records: the descr says which (never cached by typestr)
            known = _record_types(cai)
        else:
            known = _typestrs[typestr] = _typestr_types(typestr)
    dtype, itemsize, vector = known
    shape, strides = cai["shape"], cai.get("strides")
    if len(shape) == 1 and (strides is None or strides[0] == itemsize) and (
            shape[0] * itemsize < 1 << 31):
        return vector  # the common case, a contiguous 1-D array: no tuples built
    shape = tuple(shape)
    if strides is None:
        strides = c_strides(shape, itemsize)
    return _array_type(dtype, shape, tuple(strides))


def _typestr_types(typestr: str):
    """(dtype, itemsize, JIT type of a contiguous 1-D array) of a CAI typestr."""
    from ..arrays.dtypes import from_typestr

    dtype = from_typestr(typestr)
    return dtype, dtype.itemsize, _array_type(dtype, (1,), (dtype.itemsize,))


def _record_types(cai: dict):
    """(dtype, itemsize, JIT type of a contiguous 1-D array) of a CAI array of records,
    kept per (typestr, descr): the descr is a list, so its text is the key."""
    key = (cai["typestr"], repr(cai.get("descr")))
    known = _descrs.get(key)
    if known is None:
        dtype = records.dtype_from_cai(cai)
        known = _descrs[key] = dtype, dtype.itemsize, _array_type(dtype, (1,), (dtype.itemsize,))
    return known


_descrs: dict = {}  # (typestr, repr(descr)) -> _record_types(cai)


def _info_type(info) -> T.Array:
    """The JIT type of an ArrayInfo (DLPack arguments' guards)."""
    return _array_type(info.dtype, info.shape, info.strides)


def _scalar_key(a):
    return type(a)


def _key_void(a):
    """A structured scalar: every record dtype has the one type numpy.void."""
    return (numpy.void, a.dtype)


def _key_strided(a):
    """CuPy / jitkern arrays: shape and byte strides as attributes."""
    shape = a.shape
    strides = a.strides
    if len(shape) == 1:
        return (type(a), a.dtype, strides[0] == a.itemsize or shape[0] <= 1)
    return (type(a), a.dtype, len(shape), _fits_int32(shape, strides, a.itemsize))


def _key_jitkern(a):
    # The launch hot path: read the slots behind ndarray's properties (one attribute
    # access each instead of a property call). A contiguous 1-D array keys on its dtype.
    strides = a._strides
    if len(strides) == 1 and strides[0] == a._dtype.itemsize:
        return a._dtype
    return _key_strided(a)


def _layout_keyer(dims):
    """The per-call key of a library's arrays read through the table's ``dims`` column
    (runtime.libraries): dtype, then contiguity (1-D) or rank and 32-bit indexing."""
    def key(a):
        dtype, itemsize, shape, strides = dims(a)
        if len(shape) == 1:
            return (type(a), dtype, strides[0] == itemsize or shape[0] <= 1)
        return (type(a), dtype, len(shape), _fits_int32(shape, strides, itemsize))

    key.dims = dims
    return key


def _key_cai(a):
    """CUDA-array-interface objects (class- or instance-level attribute): the dict's
    fields, without describe()."""
    cai = a.__cuda_array_interface__
    return (type(a), cai.get("mask") is not None, _cai_type(cai))


def _key_generic(a):
    if hasattr(a, "__cuda_array_interface__"):  # an instance-level attribute
        return _key_cai(a)
    from ..arrays.interop import describe

    info = describe(a)  # DLPack: one capsule (the floor of a DLPack-only argument)
    return (type(a), info.dtype, _array_type(info.dtype, info.shape, info.strides))


_KEYERS = {t: _scalar_key for t in (bool, int, float, complex)}


def _argument_error(exc: KernelArgumentError, args, kernel) -> KernelArgumentError:
    """``exc`` with the kernel, and the position and parameter name of the first argument
    whose key could not be read."""
    code = kernel.py_func.__code__
    params = code.co_varnames[: code.co_argcount]
    for i, a in enumerate(args):
        try:
            (_KEYERS.get(type(a)) or _keyer_for(type(a)))(a)
        except KernelArgumentError:
            name = f" ({params[i]})" if i < len(params) else ""
            return KernelArgumentError(f"{kernel.__name__}: argument {i}{name}: {exc}")
    return KernelArgumentError(f"{kernel.__name__}: {exc}")


def _keyer_for(cls: type):
    """The per-call key reader of arguments of type ``cls``: jitkern's own arrays through
    their slots, NumPy scalars by type, else the JIT's column of runtime.args' table."""
    module = getattr(cls, "__module__", "") or ""
    if issubclass(cls, (numpy.bool_, numpy.number)) or records.is_record_class(cls):
        keyer = _scalar_key  # a struct class: its type says its layout
    elif cls is numpy.void:
        keyer = _key_void
    elif module.startswith("jitkern") and hasattr(cls, "_strides") and hasattr(cls, "_dtype"):
        keyer = _key_jitkern
    else:
        row = libraries.library(cls)
        if row.dims is not None:  # the table's reader of dtype and layout
            keyer = _layout_keyer(row.dims)
        elif row.kind == "cai":
            keyer = _key_cai  # the dict's fields, with the JIT's type of them
        else:
            keyer = _key_generic
    _KEYERS[cls] = keyer
    return keyer


def _dims_strided(a):
    return a.shape, a.strides


def _dims_generic(a):
    from ..arrays.interop import describe

    cai = getattr(a, "__cuda_array_interface__", None)
    if cai is not None:  # without describe()'s driver query of the pointer's device
        shape = tuple(cai["shape"])
        strides = cai.get("strides")
        if strides is None:
            strides = c_strides(shape, _cai_type(cai).dtype.itemsize)
        return shape, tuple(strides)
    info = describe(a)
    return info.shape, info.strides


def _dims_getter(cls: type):
    keyer = _keyer_for(cls)
    dims = getattr(keyer, "dims", None)
    if dims is not None:  # a library of the table
        return lambda a: dims(a)[2:]
    if keyer in (_key_strided, _key_jitkern):
        return _dims_strided
    return _dims_generic


def _extras_function(plans):
    """The function appending shape/stride parameters after the user's arguments, or None."""
    wanted = [(i, tuple(p)) for i, p in enumerate(plans) if p]
    if not wanted:
        return None
    getters: dict = {}

    def extras(args):
        out = []
        for i, items in wanted:
            a = args[i]
            getter = getters.get(type(a))
            if getter is None:
                getter = getters[type(a)] = _dims_getter(type(a))
            shape, strides = getter(a)
            for kind, axis in items:
                out.append(shape[axis] if kind == "shape" else strides[axis])
        return tuple(out)

    return extras


