"""The reference routines CuPy's examples check kernels with, on ``jitkern``.

``allclose``, ``isclose`` and ``array_equal`` run as fused kernels (``jitkern.fuse``, whose C++
comes from the JIT's ufunc table) and return 0-d device arrays, as CuPy's do (``assert
cp.allclose(y, x1 + x2)`` and ``print(cp.allclose(...))`` work as in CuPy). ``linspace`` is
computed on the host and copied, like ``jitkern.arange``. The shape functions (``reshape``,
``ravel``, ``transpose``, ...) call the array's method, so they take NumPy arrays too.

The ufuncs (``jitkern.sqrt``, ``jitkern.abs``, ...) and the reductions (``jitkern.sum``,
``max``, ``min``, ``mean`` with ``axis``) are ``jitkern.kernels``' routines, not this module's.

Host arguments (NumPy arrays and scalars only), and every call while the simulator is on,
run NumPy's routine of the same name and give NumPy results; ``allclose.simulate(...)`` (and
``isclose``'s, ``array_equal``'s) runs the fused kernel itself in the simulator instead.
"""

from __future__ import annotations

import sys

import numpy

from .. import arrays
from ..errors import (
    JitkernAxisError,
    JitkernError,
    JitkernOverflowError,
    JitkernTypeError,
    JitkernValueError,
)
from ..runtime.simulated import host_arrays
from ..kernels.fuse import Fused


def _isclose(a, b, rtol, atol):
    b = b * 1.0  # NumPy compares in result_type(b, 1.0): ints as float64, float32 stays
    return (a == b) | (abs(a - b) <= atol + rtol * abs(b))


def _isclose_nan(a, b, rtol, atol):
    return _isclose(a, b, rtol, atol) | ((a != a) & (b != b))


def _allclose(a, b, rtol, atol):
    return numpy.all(_isclose(a, b, rtol, atol))


def _allclose_nan(a, b, rtol, atol):
    return numpy.all(_isclose_nan(a, b, rtol, atol))


def _all_equal(a, b):
    return numpy.all(a == b)


def _all_equal_nan(a, b):
    return numpy.all((a == b) | ((a != a) & (b != b)))


_ISCLOSE = {False: Fused(_isclose, "jitkern_isclose"), True: Fused(_isclose_nan, "jitkern_isclose")}
_ALLCLOSE = {False: Fused(_allclose, "jitkern_allclose"),
             True: Fused(_allclose_nan, "jitkern_allclose")}  # fmt: skip
_ARRAY_EQUAL = {False: Fused(_all_equal, "jitkern_array_equal"),
                True: Fused(_all_equal_nan, "jitkern_array_equal")}  # fmt: skip


def _on_host(*values) -> bool:
    return host_arrays() or not any(isinstance(v, arrays.ndarray) for v in values)


#: NumPy's error classes -> jitkern's (the one that is also the built-in a user catches)
_ERRORS = ((getattr(numpy, "exceptions", numpy).AxisError, JitkernAxisError),
           (ValueError, JitkernValueError),
           (TypeError, JitkernTypeError), (OverflowError, JitkernOverflowError))


def numpy_call(name: str, fn, *args, **kwargs):
    """NumPy's routine ``fn`` (on host arrays), its errors raised as jitkern's with NumPy's
    words, prefixed by the routine's ``name``."""
    try:
        return fn(*args, **kwargs)
    except JitkernError:
        raise
    except (ValueError, TypeError, OverflowError) as exc:
        cls = next(ours for theirs, ours in _ERRORS if isinstance(exc, theirs))
        raise cls(f"{name}: {exc}") from None


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (or equal, NaN == NaN when
    ``equal_nan``), as ``numpy.isclose``: a boolean array on the device."""
    if _on_host(a, b):
        return numpy_call("isclose", numpy.isclose, a, b, rtol=rtol, atol=atol,
                          equal_nan=equal_nan)
    return _ISCLOSE[bool(equal_nan)](a, b, float(rtol), float(atol))


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of ``a`` is close to ``b`` (``numpy.allclose``'s rule), as a
    0-d boolean device array (``bool(...)`` or ``assert`` reads it)."""
    if _on_host(a, b):
        return numpy_call("allclose", numpy.allclose, a, b, rtol=rtol, atol=atol,
                          equal_nan=equal_nan)
    return _ALLCLOSE[bool(equal_nan)](a, b, float(rtol), float(atol))


def array_equal(a1, a2, equal_nan=False):
    """Whether ``a1`` and ``a2`` have the same shape and elements (``numpy.array_equal``),
    as a 0-d boolean device array."""
    if _on_host(a1, a2):
        return numpy_call("array_equal", numpy.array_equal, a1, a2, equal_nan=equal_nan)
    if numpy.shape(a1) != numpy.shape(a2):
        return arrays.asarray(numpy.bool_(False))
    return _ARRAY_EQUAL[bool(equal_nan)](a1, a2)


def _isclose_simulated(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``isclose.simulate``: the fused kernel in the simulator, on NumPy arrays."""
    return _ISCLOSE[bool(equal_nan)].simulate(a, b, float(rtol), float(atol))


def _allclose_simulated(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``allclose.simulate``: the fused kernel in the simulator (a 0-d NumPy array)."""
    return _ALLCLOSE[bool(equal_nan)].simulate(a, b, float(rtol), float(atol))


def _array_equal_simulated(a1, a2, equal_nan=False):
    """``array_equal.simulate``: the fused kernel in the simulator (a 0-d NumPy array)."""
    if numpy.shape(a1) != numpy.shape(a2):
        return numpy.asarray(False)
    return _ARRAY_EQUAL[bool(equal_nan)].simulate(a1, a2)


# As routines' ``.simulate`` (jitkern.sqrt.simulate): the kernels themselves, not NumPy's.
isclose.simulate = _isclose_simulated
allclose.simulate = _allclose_simulated
array_equal.simulate = _array_equal_simulated


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """``numpy.linspace``, computed on the host and copied to the device (NumPy's errors:
    ``num`` must be an int >= 0)."""
    host = numpy_call("linspace", numpy.linspace, start, stop, num, endpoint, retstep, dtype,
                      axis)
    if host_arrays():
        return host
    if retstep:
        return arrays.asarray(host[0]), host[1]
    return arrays.asarray(host)


def reshape(a, newshape, order="C"):
    """``a.reshape(newshape)``: a view where the layout allows, else a copy."""
    return numpy_call("reshape", a.reshape, newshape, order=order)


def ravel(a, order="C"):
    """``a.ravel()``: the elements in one dimension."""
    return numpy_call("ravel", a.ravel, order)


def transpose(a, axes=None):
    """``a.transpose(axes)``: a view with the axes permuted (reversed by default)."""
    return numpy_call("transpose", a.transpose) if axes is None else numpy_call(
        "transpose", a.transpose, *axes)


def swapaxes(a, axis1, axis2):
    """``a.swapaxes(axis1, axis2)``."""
    return numpy_call("swapaxes", a.swapaxes, axis1, axis2)


def squeeze(a, axis=None):
    """``a.squeeze(axis)``: without its length-1 axes."""
    return numpy_call("squeeze", a.squeeze, axis)


def get_array_module(*args):
    """``jitkern`` when an argument is a jitkern array, else ``numpy`` (CuPy's
    ``cupy.get_array_module``). Inside a fused function a traced value gives ``numpy``,
    whose routines fuse records (docs/fuse.md)."""
    if any(isinstance(a, arrays.ndarray) for a in args):
        return sys.modules["jitkern"]
    return numpy


__all__ = ["allclose", "array_equal", "get_array_module", "isclose", "linspace", "ravel",
           "reshape", "squeeze", "swapaxes", "transpose"]  # fmt: skip
