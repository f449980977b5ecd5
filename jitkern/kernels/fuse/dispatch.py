"""What each NumPy function and CuPy routine records when a traced value meets it.

The trace (kernels/fuse/trace.py) is given this module as its *dispatch*: a proxy's
``__array_function__`` (``numpy.where``, ``numpy.sum``, ``numpy.sinc``, ...) and CuPy's
override hooks (``cupy.sin(x)``, ``cupy.sum(x)``, ``cupy.fix(x)``, ...) land here, and
:func:`recording` turns CuPy's fusion switch to this trace while the function runs.
"""

from __future__ import annotations

import sys
import types

import numpy

from . import ops
from . import routines as _routines
from .trace import (
    FuseTraceError, Trace, Var, assign, call_ufunc, cast_var, clip, copyto, operand, part,
    reduce, where,
)


class CupyAsNumpy(types.ModuleType):
    """What a global bound to CuPy reads as in a fused function (traced, or run by NumPy
    on NumPy arrays): NumPy's namespace, plus CuPy's ``get_array_module``, which gives this
    module for a traced value (as ``cupy.get_array_module`` gives ``cupy`` for CuPy's
    own fusion proxies) and NumPy otherwise."""

    def __getattr__(self, name):
        return getattr(numpy, name)

    def get_array_module(self, *args):
        return self if any(isinstance(a, Var) for a in args) else numpy


#: The one module CuPy reads as.
CUPY_AS_NUMPY = CupyAsNumpy("cupy", "CuPy read as NumPy inside a jitkern.fuse function")


def numpy_function(trace: Trace, func, args, kwargs):
    """``func(*args, **kwargs)``, a NumPy function a traced value was given to."""
    handler = FUNCTIONS.get(func)
    if handler is None:
        name = getattr(func, "__name__", repr(func))
        raise FuseTraceError(
            f"numpy.{name} is not supported in a fused function",
            f"fuse records elementwise ufuncs and {', '.join(SUPPORTED_FUNCTION_NAMES)}",
        )
    return handler(trace, *args, **kwargs)


def _reduction_function(name):
    def handler(trace, x, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        if name in ("max", "amax", "min", "amin", "all", "any") and dtype is not None:
            raise FuseTraceError(f"numpy.{name} takes no dtype=")
        return reduce(trace, name, x, axis, dtype, out, keepdims, **kwargs)

    return handler


def _composed(fn):
    """A routine of :mod:`.routines` as a FUNCTIONS handler."""
    return lambda trace, *args, **kwargs: fn(*args, **kwargs)


FUNCTIONS = {
    numpy.where: where,
    numpy.clip: clip,
    numpy.copyto: copyto,
    numpy.real: lambda trace, x: part(trace, x, "real"),
    numpy.imag: lambda trace, x: part(trace, x, "imag"),
    numpy.astype: lambda trace, x, dtype, copy=True: cast_var(x, dtype),
    numpy.copy: lambda trace, x, order="K", subok=False: Var(trace, operand(trace, x)),
    **{getattr(numpy, name): _composed(fn) for name, fn in _routines.ROUTINES.items()},
    **{getattr(numpy, name): _reduction_function(name) for name in (*ops.REDUCTIONS, "mean")},
}

SUPPORTED_FUNCTION_NAMES = (
    "where", "clip", "copyto", "real", "imag", "astype", "copy", *_routines.ROUTINES,
    *ops.REDUCTIONS, "mean",
)  # fmt: skip


# ---------------------------------------------------------------------------
# CuPy's routines: cupy.sin(x), cupy.where(c, x, y), cupy.sum(x, axis=1), cupy.nansum(x), ...
# A proxy answers CuPy's override hooks (ufuncs and reductions called with it), and while a
# function is traced, CuPy's fusion switch routes its Python-level routines (rounding,
# real/imag, clip, where, all/any, nan*) to ``_CupyHistory``. CuPy is never imported here:
# the switch is set only where the user's program has imported it.

def _cupy_copy(trace, src, dst=None, **kwargs):
    """CuPy's elementwise copy: ``cupy.copy(a)``, and ``cupy.copyto(dst, src)`` (CuPy has
    checked the casting rule before it calls the kernel)."""
    if kwargs:
        raise FuseTraceError(f"cupy.copyto: unsupported keyword(s) {', '.join(kwargs)}",
                             "use dst[...] = numpy.where(mask, src, dst)")
    if dst is None:
        return Var(trace, operand(trace, src))
    assign(dst, operand(trace, src), "cupy.copyto", "unsafe")
    return dst


def _cupy_composed(fn, nin, **fixed):
    """A routine of :mod:`.routines` called as CuPy's ufunc of it: ``nin`` inputs, then an
    output given in place or as ``out=``."""
    def handler(trace, *args, out=None, **kwargs):
        inputs, outs = args[:nin], args[nin:]
        out = outs[0] if outs else out
        value = fn(*inputs, **fixed, **kwargs)
        if out is None:
            return value
        copyto(trace, out, value)
        return out

    return handler


#: CuPy's elementwise kernels that are not NumPy ufuncs (by CuPy's name without "cupy_"),
#: recorded as NumPy's routine of the same meaning.
_CUPY_SPECIAL = {
    "clip": lambda t, a, lo=None, hi=None, out=None: clip(t, a, lo, hi, out),
    "where": lambda t, c, x=None, y=None: where(t, c, x, y),
    "round": lambda t, x, decimals=0, out=None: _routines.around(x, decimals, out),
    "real": lambda t, x: part(t, x, "real"),
    "imag": lambda t, x: part(t, x, "imag"),
    "copy": _cupy_copy,
    "fix": _cupy_composed(_routines.fix, 1),
    "sinc": _cupy_composed(_routines.sinc, 1),
    "i0": _cupy_composed(_routines.i0, 1),
    "angle": _cupy_composed(_routines.angle, 1),
    "angle_deg": _cupy_composed(_routines.angle, 1, deg=True),
    "is_close": _cupy_composed(_routines.isclose, 5),
    "is_close_complex": _cupy_composed(_routines.isclose, 5),
}


def _cupy_name(kernel) -> str:
    name = getattr(kernel, "name", "") or ""
    return name[5:] if name.startswith("cupy_") else name


def cupy_ufunc(trace: Trace, kernel, args, kwargs):
    """``cupy.<ufunc>(...)`` (or a routine CuPy writes as one) with a traced argument."""
    name = _cupy_name(kernel)
    special = _CUPY_SPECIAL.get(name)
    if special is not None:
        return special(trace, *args, **kwargs)
    if type(kernel).__name__ != "ufunc" or name not in ops.UFUNCS:
        what = f"cupy.{name}" if type(kernel).__name__ == "ufunc" else f"{kernel!r}"
        raise FuseTraceError(
            f"{what} is not supported in a jitkern.fuse function",
            "fuse records NumPy's and CuPy's ufuncs in its table (jitkern.kernels.fuse.UFUNCS), "
            "where, clip, round, real, imag and the reductions; call other kernels outside it",
        )
    out, dtype = kwargs.pop("out", None), kwargs.pop("dtype", None)
    kwargs.pop("casting", None)
    if kwargs:
        raise FuseTraceError(f"cupy.{name}: unsupported keyword(s) {', '.join(kwargs)}")
    return call_ufunc(trace, name, args, out, dtype)


def cupy_reduction(trace: Trace, kernel, x, axis=None, dtype=None, out=None, keepdims=False):
    """``cupy.sum(x)``, ``cupy.all(x)``, ``cupy.nansum(x)``, ... with a traced argument."""
    name = _cupy_name(kernel)
    for suffix in ("_with_dtype", "_complex_dtype", "_keep_dtype"):
        name = name.removesuffix(suffix)
    if name not in ops.REDUCTIONS:
        raise FuseTraceError(
            f"{kernel!r} is not supported in a jitkern.fuse function",
            f"fuse records the reductions {', '.join(sorted(ops.REDUCTIONS))} and mean",
        )
    return reduce(trace, name, x, axis, dtype, out, keepdims)


class _CupyHistory:
    """Where CuPy's fusion switch sends its routines while a jitkern.fuse function traces."""

    def __init__(self, trace: Trace):
        self.trace = trace

    def call_ufunc(self, kernel, *args, **kwargs):
        return cupy_ufunc(self.trace, kernel, args, kwargs)

    def call_reduction(self, kernel, x, **kwargs):
        return cupy_reduction(self.trace, kernel, x, **kwargs)

    def call_indexing(self, kernel, *args, **kwargs):
        raise FuseTraceError("CuPy's fused indexing is not supported; index the arguments")


class recording:
    """While tracing: CuPy's fusion switch on, pointing at this trace (when CuPy is loaded)."""

    def __init__(self, trace: Trace):
        self.switch = sys.modules.get("cupy._core._fusion_thread_local")
        self.trace = trace

    def __enter__(self):
        if self.switch is None:
            return
        local = self.switch.thread_local
        self.saved = {k: getattr(local, k) for k in ("is_new_fusing", "history")
                      if hasattr(local, k)}
        local.is_new_fusing, local.history = True, _CupyHistory(self.trace)

    def __exit__(self, *exc):
        if self.switch is None:
            return
        local = self.switch.thread_local
        local.is_new_fusing = self.saved.get("is_new_fusing", False)
        if "history" in self.saved:
            local.history = self.saved["history"]
        else:
            del local.history


__all__ = ["CUPY_AS_NUMPY", "FUNCTIONS", "SUPPORTED_FUNCTION_NAMES", "cupy_reduction", "cupy_ufunc",
           "numpy_function", "recording"]  # fmt: skip
