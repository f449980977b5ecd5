"""fuse's operation table: each NumPy routine a traced function may call, as data.

The ufunc rows (C++ per loop kind, NumPy's loop types) are the JIT's
(:mod:`jitkern.compiler.ufunc_rows`): one table for fuse's C++ and for the JIT's ``ufunc``
builtins that fuse's simulated kernels call.

A reduction row gives ReductionKernel's expressions, and the ufunc it reduces with. Nothing here traces or emits a
kernel: :mod:`.trace` records calls, :mod:`.emit` reads these rows.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy

from ...compiler.ufunc_rows import COMPLEX_HELPERS, HELPERS, UFUNC_ROWS, Ufunc
from ...compiler.strings.params import CTYPES, ctype_of  # noqa: F401 - CTYPES: promotion.py reads ops.CTYPES


#: NumPy's ufuncs as the JIT's ufunc builtins have them (one table for both; its rows'
#: C++ is what fuse emits).
UFUNCS = UFUNC_ROWS

#: Python operators -> ufunc names (reflected forms swap the operands).
BINARY_OPERATORS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "and": "bitwise_and",
    "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "left_shift", "rshift": "right_shift",
    "lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal", "eq": "equal",
    "ne": "not_equal", "divmod": "divmod",
}  # fmt: skip
UNARY_OPERATORS = {"neg": "negative", "pos": "positive", "abs": "absolute", "invert": "invert"}


@dataclasses.dataclass(frozen=True)
class Reduction:
    """How ``numpy.<name>`` reduces: ReductionKernel's expressions."""

    reduce_expr: str  # on ``a`` and ``b``
    complex_expr: str | None  # for complex values (None: the same)
    identity: str | None  # None: no identity; a zero-size reduction is an error, as in NumPy
    map_fn: str | None = None  # applied to each mapped value first (nan -> identity, truth)
    ufunc: str = ""  # the ufunc reduce_expr/complex_expr compute (NumPy's ``<ufunc>.reduce``)
    nan_to: int | None = None  # map_fn replaces NaN by this (nansum, nanprod)


REDUCTIONS = {
    "sum": Reduction("a + b", None, "0", ufunc="add"),
    "prod": Reduction("a * b", None, "1", ufunc="multiply"),
    "nansum": Reduction("a + b", None, "0", "jkf::nan_to_zero", "add", 0),
    "nanprod": Reduction("a * b", None, "1", "jkf::nan_to_one", "multiply", 1),
    "max": Reduction("jk::npmax(a, b)", "jkf::cmax(a, b)", None, ufunc="maximum"),
    "amax": Reduction("jk::npmax(a, b)", "jkf::cmax(a, b)", None, ufunc="maximum"),
    "min": Reduction("jk::npmin(a, b)", "jkf::cmin(a, b)", None, ufunc="minimum"),
    "amin": Reduction("jk::npmin(a, b)", "jkf::cmin(a, b)", None, ufunc="minimum"),
    "all": Reduction("(a && b)", None, "true", "jkf::truth", "logical_and"),
    "any": Reduction("(a || b)", None, "false", "jkf::truth", "logical_or"),
}

#: Array methods that reduce (x.sum(...)) and the routine they are.
REDUCTION_METHODS = {"sum": "sum", "prod": "prod", "max": "max", "min": "min", "all": "all",
                     "any": "any"}  # fmt: skip


def reduced_dtype(name: str, dtype: numpy.dtype, requested) -> numpy.dtype:
    """NumPy's result dtype of ``numpy.<name>`` over values of ``dtype`` (``dtype=`` given)."""
    probe = numpy.zeros((1,), dtype)
    kwargs = (
        {} if requested is None or name in ("max", "amax", "min", "amin") else {"dtype": requested}
    )
    if name in ("all", "any"):
        return numpy.dtype(numpy.bool_)
    with numpy.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # complex summed as float64 warns; the type is known
        return numpy.asarray(getattr(numpy, name)(probe, **kwargs)).dtype


# ---------------------------------------------------------------------------
# C++ spellings and conversions


def ctype(dtype: numpy.dtype) -> str:
    """The C++ type a value of ``dtype`` is stored in: the string kernels' spelling (the
    fused kernels are ElementwiseKernel/ReductionKernel; float16 is CuPy's class)."""
    return ctype_of(numpy.dtype(dtype))


def compute_ctype(dtype: numpy.dtype) -> str:
    """The C++ type arithmetic on ``dtype`` runs in (float16 runs in float)."""
    return "float" if numpy.dtype(dtype) == numpy.float16 else ctype(dtype)


def cast(code: str, src: numpy.dtype, dst: numpy.dtype) -> str:
    """``code`` (a value of ``src``'s compute type) converted to ``dst``'s compute type."""
    src, dst = numpy.dtype(src), numpy.dtype(dst)
    if src == dst or (compute_ctype(src) == compute_ctype(dst)):
        return code
    target = compute_ctype(dst)
    if dst.kind == "c":
        if src.kind == "c":
            return f"{target}({code})"
        real = compute_ctype(_real(dst))
        return f"{target}(({real})({code}))"
    if src.kind == "c":  # NumPy's astype keeps the real part
        if dst.kind == "b":
            return f"({code} != {compute_ctype(src)}(0))"
        return f"(({target})(({code}).real()))"
    if dst.kind == "b":
        return f"(({code}) != 0)"
    return f"(({target})({code}))"


def _real(dt: numpy.dtype) -> numpy.dtype:
    return numpy.dtype(numpy.float32 if dt == numpy.complex64 else numpy.float64)


def real_dtype(dt: numpy.dtype) -> numpy.dtype:
    dt = numpy.dtype(dt)
    return _real(dt) if dt.kind == "c" else dt


def store(code: str, dtype: numpy.dtype) -> str:
    """A compute-type value as the storage type (rounds float to half)."""
    if numpy.dtype(dtype) == numpy.float16:
        return f"__half({code})"
    return code


def load(code: str, dtype: numpy.dtype) -> str:
    """A stored value as its compute type (half to float)."""
    if numpy.dtype(dtype) == numpy.float16:
        return f"((float)({code}))"
    return code


def literal(value, dtype: numpy.dtype) -> str:
    """A Python number as a C++ constant of ``dtype``'s compute type (NumPy casts it so)."""
    dtype = numpy.dtype(dtype)
    t = compute_ctype(dtype)
    if dtype.kind == "c":
        z = complex(value)
        r = compute_ctype(_real(dtype))
        return f"{t}(({r}){_float_text(z.real)}, ({r}){_float_text(z.imag)})"
    if dtype.kind == "b":
        return "true" if value else "false"
    if isinstance(value, complex):
        value = value.real
    if dtype.kind in "iu":
        v = int(value)
        v = int(numpy.array(v).astype(dtype)) if not _fits(v, dtype) else v
        suffix = "ULL" if dtype.kind == "u" else "LL"
        if dtype.kind == "i" and v == numpy.iinfo(numpy.int64).min:
            return f"(({t})(-9223372036854775807LL - 1))"
        return f"(({t}){v}{suffix})"
    return f"(({t}){_float_text(float(value))})"


def _fits(v: int, dtype) -> bool:
    info = numpy.iinfo(dtype)
    return info.min <= v <= info.max


def _float_text(v: float) -> str:
    if math.isnan(v):
        return "__longlong_as_double(0x7ff8000000000000LL)"
    if v in (float("inf"), float("-inf")):
        return ("-" if v < 0 else "") + "__longlong_as_double(0x7ff0000000000000LL)"
    return repr(float(v))


__all__ = ["COMPLEX_HELPERS", "HELPERS", "REDUCTIONS", "UFUNCS", "Reduction", "Ufunc"]
