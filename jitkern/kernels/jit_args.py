"""The JIT's specialisation: each argument's JIT type, derived from what runtime/args.py
(the one argument reader) reads of it.

The per-call key the launcher compares, the checks it makes to stay on a signature and the
shape/stride parameters it appends are runtime/args.py's (``key_of``, ``guards``,
``derived_params``); this module says which JIT type an argument of a key is."""

from __future__ import annotations

import numpy

from .. import records
from ..compiler import types as T
from ..compiler.argtypes import array_type
from ..compiler.structs import struct_of_class, struct_of_dtype
from ..errors import JitkernTypeError, KernelArgumentError
from ..runtime import args as launch_args


def arg_type(a, allow_host: bool = False) -> T.Type:
    """The JIT type of one kernel argument (a foreign array is validated by describe())."""
    for cls, t in T.PYTHON_SCALARS.items():
        if isinstance(a, cls):
            return t
    if isinstance(a, (numpy.bool_, numpy.number)):
        t = _scalars.get(a.dtype)
        if t is None:  # NumPy's dtype names are slow to build: once per dtype
            t = _scalars[a.dtype] = T.scalar_from_dtype(a.dtype)
        return t
    if isinstance(a, numpy.void) or records.is_record_class(type(a)):
        return _struct_type(a)
    if isinstance(a, numpy.ndarray):
        if not allow_host:
            raise JitkernTypeError(launch_args.host_array_message("numpy.ndarray"))
        return array_type(a.dtype, a.shape, a.strides)
    info = launch_args.describe(a)
    return array_type(info.dtype, info.shape, info.strides)


def _struct_type(a) -> T.Struct:
    """A struct argument's type: a numpy.void of a record dtype, or a frozen dataclass /
    NamedTuple instance (compiler.structs)."""
    if isinstance(a, numpy.void):
        if a.dtype.fields is None:
            raise JitkernTypeError(f"a numpy.void of dtype {a.dtype} has no fields; pass a "
                                   "structured scalar (numpy.zeros((), record_dtype)[()])")
        return struct_of_dtype(a.dtype)
    return struct_of_class(type(a))


_scalars: dict = {}  # NumPy scalar dtype -> T.Scalar


def layouts(types: tuple) -> tuple:
    """What runtime.args.guards needs of each argument's JIT type: None for a scalar, else
    ``(pointer_like, ndim, index32, itemsize)`` of an array."""
    return tuple((t.is_pointer_like, t.ndim, t.index32, t.dtype.itemsize)
                 if isinstance(t, T.Array) else None for t in types)


def argument_error(exc: KernelArgumentError, args, kernel) -> KernelArgumentError:
    """``exc`` with the kernel, and the position and parameter name of the first argument
    whose key could not be read."""
    code = kernel.py_func.__code__
    params = code.co_varnames[: code.co_argcount]
    for i, a in enumerate(args):
        try:
            launch_args.key_of(a)
        except KernelArgumentError:
            name = f" ({params[i]})" if i < len(params) else ""
            return KernelArgumentError(f"{kernel.__name__}: argument {i}{name}: {exc}")
    return KernelArgumentError(f"{kernel.__name__}: {exc}")


def describe_for_bind(a) -> str:
    try:
        return arg_type(a).describe()
    except Exception:  # a value no kernel accepts: its Python type says enough
        return type(a).__name__
