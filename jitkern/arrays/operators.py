"""Python's operators and NumPy's reducing methods on ``jitkern.ndarray``.

``x + y``, ``x == y``, ``-x``, ``x @ y``, ``x.sum(axis=1)``, ``(x == y).all()``: each is the
package's routine of NumPy's name (``jitkern.add``, ``jitkern.equal``, ``jitkern.matmul``,
``jitkern.sum``), which runs as a kernel on the device (``jitkern.fuse`` of the one ufunc or
reduction, whose C++ comes from the JIT's ufunc table). The routines are looked up by name on
the ``jitkern`` package when an operator is first used, so this layer imports no kernel code.

In-place operators (``x += y``) are not defined: Python evaluates ``x = x + y`` instead, a
new array (write into an array in place with a kernel or ``jitkern.fuse``).
"""

from __future__ import annotations

import numbers
import sys

import numpy


def _routine(name: str):
    return getattr(sys.modules["jitkern"], name)


def _operand(value) -> bool:
    """Whether ``value`` can meet an array in an operator (else Python tries the other side)."""
    return isinstance(value, (numbers.Number, numpy.generic)) or hasattr(value, "dtype")


def _binary(name: str):
    def op(self, other):
        if not _operand(other):
            return NotImplemented
        return _routine(name)(self, other)

    def reflected(self, other):
        if not _operand(other):
            return NotImplemented
        return _routine(name)(other, self)

    op.__name__, reflected.__name__ = f"__{name}__", f"__r{name}__"
    return op, reflected


def _unary(name: str):
    def op(self):
        return _routine(name)(self)

    op.__name__ = f"__{name}__"
    return op


def _reducing(name: str):
    def method(self, axis=None, dtype=None, out=None, keepdims=False):
        kwargs = {"axis": axis, "dtype": dtype, "out": out, "keepdims": keepdims}
        given = {k: v for k, v in kwargs.items() if v is not None and v is not False}
        return _routine(name)(self, **given)

    method.__name__ = name
    method.__doc__ = f"``jitkern.{name}(self, ...)``: NumPy's ``ndarray.{name}``, on the device."
    return method


class ArrayOperators:
    """The operator methods of :class:`jitkern.ndarray` (a mixin without state)."""

    __slots__ = ()
    # NumPy arrays and scalars leave an operator with a jitkern array to the jitkern array
    # (``numpy.float32(2) * x`` is ``x.__rmul__``) instead of copying it to the host.
    __array_priority__ = 100
    __hash__ = object.__hash__  # arrays stay usable as dict keys by identity

    __add__, __radd__ = _binary("add")
    __sub__, __rsub__ = _binary("subtract")
    __mul__, __rmul__ = _binary("multiply")
    __truediv__, __rtruediv__ = _binary("true_divide")
    __floordiv__, __rfloordiv__ = _binary("floor_divide")
    __mod__, __rmod__ = _binary("remainder")
    __divmod__, __rdivmod__ = _binary("divmod")
    __pow__, __rpow__ = _binary("power")
    __matmul__, __rmatmul__ = _binary("matmul")
    __and__, __rand__ = _binary("bitwise_and")
    __or__, __ror__ = _binary("bitwise_or")
    __xor__, __rxor__ = _binary("bitwise_xor")
    __lshift__, __rlshift__ = _binary("left_shift")
    __rshift__, __rrshift__ = _binary("right_shift")
    __eq__ = _binary("equal")[0]
    __ne__ = _binary("not_equal")[0]
    __lt__, __gt__ = _binary("less")[0], _binary("greater")[0]
    __le__, __ge__ = _binary("less_equal")[0], _binary("greater_equal")[0]
    __neg__ = _unary("negative")
    __pos__ = _unary("positive")
    __abs__ = _unary("absolute")
    __invert__ = _unary("invert")

    sum = _reducing("sum")
    prod = _reducing("prod")
    max = _reducing("max")
    min = _reducing("min")
    mean = _reducing("mean")
    all = _reducing("all")
    any = _reducing("any")

    def conj(self):
        """The complex conjugate (the array's values for real dtypes)."""
        return _routine("conjugate")(self)

    conjugate = conj

    def dot(self, b):
        """``jitkern.dot(self, b)``."""
        return _routine("dot")(self, b)


__all__ = ["ArrayOperators"]
