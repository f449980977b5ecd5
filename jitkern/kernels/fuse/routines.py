"""NumPy routines that are not ufuncs (``fix``, ``sinc``, ``i0``, ``angle``, ``nan_to_num``,
``isclose``, ``around`` with decimals, ...), written as the array operations fuse records.

CuPy implements each as an elementwise kernel; NumPy as Python over its ufuncs. Here each
is a composition of ufuncs and ``where``, so that inside a fused function it becomes a few
more statements of the same kernel, with NumPy's result types: every operation below is
typed by NumPy's own rules as it is recorded. They are plain array code: called with NumPy
arrays they compute the same values with NumPy (the tests compare the two).

Nothing here imports the trace: the functions only use the array API that the proxies
answer (operators, ``numpy.*`` ufuncs, ``where``, ``astype``, ``.real``/``.imag``).
"""

from __future__ import annotations

import math

import numpy

from .graph import FuseTraceError


def fix(x, out=None):
    """``numpy.fix``: rounded toward zero, in ``x``'s type (ints and bools unchanged)."""
    return _into(numpy.where(x >= 0, numpy.floor(x), numpy.ceil(x)), out)


def sinc(x):
    """``numpy.sinc``: sin(pi x) / (pi x), and 1 where x is 0."""
    y = numpy.pi * x
    return numpy.where(x == 0, 1, numpy.sin(y) / y)


def angle(z, deg=False):
    """``numpy.angle``: the argument of ``z`` (real values: 0 or pi), in degrees if ``deg``."""
    if numpy.dtype(z.dtype).kind == "c":
        a = numpy.arctan2(z.imag, z.real)
    else:
        a = numpy.arctan2(0, z)
    return a * (180 / numpy.pi) if deg else a


def isposinf(x, out=None):
    """``numpy.isposinf``: True where ``x`` is +inf."""
    _refuse_complex(x, "isposinf")
    return _into(numpy.isinf(x) & ~numpy.signbit(x), out)


def isneginf(x, out=None):
    """``numpy.isneginf``: True where ``x`` is -inf."""
    _refuse_complex(x, "isneginf")
    return _into(numpy.isinf(x) & numpy.signbit(x), out)


def isclose(a, b, rtol=1.0e-5, atol=1.0e-8, equal_nan=False):
    """``numpy.isclose``: |a - b| <= atol + rtol |b| where b is finite, or a == b."""
    b = _as_float(b)
    close = numpy.less_equal(abs(a - b), atol + rtol * abs(b)) & numpy.isfinite(b) | (a == b)
    if equal_nan:
        close = close | (numpy.isnan(a) & numpy.isnan(b))
    return close


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """``numpy.nan_to_num``: NaN, +inf and -inf replaced (by 0 and the type's largest and
    smallest finite values unless given); each part of a complex value on its own."""
    kind = numpy.dtype(x.dtype).kind
    if kind not in "fc":
        return x + 0 if kind != "b" else x | False  # a new value, as NumPy's copy
    if kind == "f":
        return _finite(x, nan, posinf, neginf)
    real = _finite(x.real, nan, posinf, neginf)
    imag = _finite(x.imag, nan, posinf, neginf)
    return real + imag * 1j  # finite parts: the product's real part is 0 exactly


def _finite(x, nan, posinf, neginf):
    info = numpy.finfo(x.dtype)
    big = info.max if posinf is None else posinf
    small = info.min if neginf is None else neginf
    x = numpy.where(numpy.isnan(x), nan, x)
    return numpy.where(numpy.isinf(x), numpy.where(x > 0, big, small), x)


def around(x, decimals=0, out=None):
    """``numpy.around``/``round``: to ``decimals`` places, halves to even (NumPy's way: scale
    by a power of ten, ``rint``, scale back; integers through float64 when decimals < 0)."""
    decimals = int(decimals)
    kind = numpy.dtype(x.dtype).kind
    if decimals == 0 or (kind in "iu" and decimals > 0):
        return _into(numpy.rint(x) if kind in "fcb" else numpy.positive(x), out)
    if kind == "c":
        raise FuseTraceError(
            f"numpy.round of complex values to {decimals} decimals is not supported in "
            "fused functions", "round z.real and z.imag, or use decimals=0")
    if kind == "b":
        raise FuseTraceError("numpy.round of booleans: NumPy has no loop for it either")
    work = numpy.dtype(x.dtype) if kind == "f" else numpy.dtype(numpy.float64)
    scale = work.type(10.0 ** abs(decimals))  # a NumPy scalar: strong, in x's type
    y = x.astype(work) if kind != "f" else x
    if decimals > 0:
        y = numpy.rint(y * scale) / scale
    else:
        y = numpy.rint(y / scale) * scale
    return _into(y.astype(x.dtype) if kind != "f" else y, out)


# ---------------------------------------------------------------------------
# i0: the modified Bessel function of the first kind, order 0

#: Below this |x| the power series, above it the asymptotic expansion: both reach
#: float64's precision there with the terms below (tests/kernels/test_fuse_routines.py).
I0_SPLIT = 30.0
_SERIES = tuple(1.0 / math.factorial(k) ** 2 for k in range(64))  # (x/2)^2k / (k!)^2
_ASYMPTOTIC = tuple(math.prod((2 * j - 1) ** 2 for j in range(1, k + 1))
                    / (math.factorial(k) * 8.0**k) for k in range(28))  # / x^k


def i0(x):
    """``numpy.i0``: I0(x) in float64 (the type of ``x`` when it is a float type), by its
    power series below 30 and its asymptotic expansion above."""
    kind = numpy.dtype(x.dtype).kind
    if kind == "c":
        raise FuseTraceError("numpy.i0 is not defined for complex values (NumPy refuses it)")
    a = numpy.abs(x.astype(numpy.float64))
    value = numpy.where(a <= I0_SPLIT, _i0_series(a), _i0_asymptotic(a))
    return value.astype(x.dtype) if kind == "f" else value


def _horner(coefficients, t):
    total = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        total = total * t + c
    return total


def _i0_series(a):
    return _horner(_SERIES, a * a * 0.25)


def _i0_asymptotic(a):
    return numpy.exp(a) / numpy.sqrt(2 * numpy.pi * a) * _horner(_ASYMPTOTIC, 1 / a)


# ---------------------------------------------------------------------------


def _into(value, out):
    if out is None:
        return value
    numpy.copyto(out, value)
    return out


def _as_float(b):
    """``b`` in a float type, as ``isclose`` compares: ints become float64."""
    if isinstance(b, (bool, int)):
        return float(b)
    kind = numpy.dtype(getattr(b, "dtype", numpy.float64)).kind
    return b.astype(numpy.result_type(b.dtype, 1.0)) if kind in "biu" else b


def _refuse_complex(x, name):
    if numpy.dtype(x.dtype).kind == "c":
        raise FuseTraceError(f"numpy.{name} of complex values is ambiguous (NumPy refuses it)")


#: NumPy's name -> the composition above (``numpy.round`` and ``around`` are one).
ROUTINES = {
    "fix": fix, "sinc": sinc, "angle": angle, "isposinf": isposinf, "isneginf": isneginf,
    "isclose": isclose, "nan_to_num": nan_to_num, "around": around, "round": around, "i0": i0,
}  # fmt: skip

__all__ = ["ROUTINES", "angle", "around", "fix", "i0", "isclose", "isneginf", "isposinf",
           "nan_to_num", "sinc"]  # fmt: skip
