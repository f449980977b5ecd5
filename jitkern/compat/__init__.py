"""CuPy's spellings that are not kernels: texture objects, compile_with_cache and memoize
(:mod:`.texture`, :mod:`.api`), and CuPy's array namespace on ``jitkern`` (``import jitkern
as cp``): NumPy's dtype names and constants, the reference routines CuPy's examples check
kernels with, ``jitkern.random`` (docs/compat.md). Importing this package loads nothing else."""

from __future__ import annotations

#: NumPy's names that CuPy re-exports as they are (``jitkern.float32 is numpy.float32``):
#: scalar types, abstract types and dtype helpers, constants.
NUMPY_NAMES = (
    "bool_", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128", "intp", "uintp", "byte", "ubyte",
    "short", "ushort", "intc", "uintc", "longlong", "ulonglong", "half", "single", "double",
    "csingle", "cdouble",
    "dtype", "generic", "number", "integer", "signedinteger", "unsignedinteger", "inexact",
    "floating", "complexfloating", "finfo", "iinfo", "result_type", "can_cast",
    "promote_types", "issubdtype", "min_scalar_type",
    "pi", "e", "euler_gamma", "inf", "nan", "newaxis",
)  # fmt: skip

