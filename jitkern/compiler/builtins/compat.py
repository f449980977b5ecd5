"""Spellings kernels written for CuPy use that are compile-time work (``numpy.dtype(t)``)."""

from __future__ import annotations

import numpy

from ...errors import JitkernTypeError
from .. import types as T
from ..values import Const
from .records import Builtin, NEUTRAL, Sig


def _dtype_rule(items, mode):
    spec = items[0]
    if not isinstance(spec, Const):
        raise JitkernTypeError(
            "numpy.dtype() takes a compile-time type (numpy.float32, 'int32', x.dtype)"
        )
    try:
        numpy.dtype(spec.value)
    except TypeError as exc:
        raise JitkernTypeError(f"numpy.dtype({spec.value!r}): {exc}") from None
    return Sig((None,), T.void)


dtype_of = Builtin(
    "numpy.dtype",
    ("dtype",),
    "a type, a type name or x.dtype (constant)",
    _dtype_rule,
    lambda codes, sig, items, ctx: Const(numpy.dtype(items[0].value)),
    "A compile-time dtype; numpy.dtype(t).type(v) converts v to t.",
    "python",
    py=NEUTRAL,
)
