"""What an expression is during emission: a runtime value or a compile-time constant.

Both are immutable. A :class:`Value` is a C++ expression with its type; a
:class:`Const` is a Python object known at compile time (a literal, a dtype, a
module, a builtin, a device function, a string for ``print``).
"""

from __future__ import annotations

import dataclasses

import numpy

from . import types as T


@dataclasses.dataclass(frozen=True)
class Value:
    code: str
    type: T.Type
    lvalue: bool = False  # an assignable element (x[i], a local variable)
    # A Python scalar known only at run time (jitkern.fuse's scalar arguments): type
    # rules see it as a literal of its kind, as NumPy 2 treats Python scalars.
    weak: bool = False


@dataclasses.dataclass(frozen=True)
class Const:
    value: object

    @property
    def is_scalar(self) -> bool:
        return isinstance(self.value, (bool, int, float, complex, numpy.bool_, numpy.number))


#: The literal a weak value stands for in the type rules, by its type's kind.
_WEAK_STAND_INS = {"b": False, "i": 0, "f": 0.0, "c": 0j}


def operand(item):
    """What a type rule sees: a Value's type, a typed constant's type, or a weak literal."""
    if isinstance(item, Value):
        return _WEAK_STAND_INS[item.type.kind] if item.weak else item.type
    value = item.value
    if isinstance(value, (bool, int, float, complex)):
        return value
    dtype = getattr(value, "dtype", None)
    if dtype is not None and not isinstance(value, type):
        return T.scalar_from_dtype(dtype)
    return item
