"""fuse's type rules: NumPy 2's, asked of NumPy itself.

Each recorded ufunc gets its loop from ``ufunc.resolve_dtypes`` with Python numbers passed
as their (weak) Python types, what NumPy 2 computes; a write into an array follows NumPy's
casting rule for it (``same_kind`` for ``x += y`` and ``out=``, ``unsafe`` for ``x[...] =
y``). Pure functions on :class:`~.graph.Node` values: nothing here records or emits.
"""

from __future__ import annotations

import numpy

from . import ops
from .graph import FuseTraceError, Node

#: The dtypes a fused kernel computes in.
SUPPORTED_DTYPES = frozenset(ops.CTYPES)

_KINDS = "biufc"


def loop_operand(node: Node):
    """What ``resolve_dtypes`` is given for ``node``: a Python type for a weak scalar."""
    if node.weak and node.dtype.kind != "b":
        return {"i": int, "u": int, "f": float, "c": complex}[node.dtype.kind]
    return node.dtype


def type_text(node: Node) -> str:
    if node.weak:
        return f"Python {loop_operand(node).__name__}"
    return str(node.dtype)


def resolve_loop(name: str, nodes, dtype=None) -> tuple:
    """NumPy's loop dtypes (inputs, then outputs) for ``numpy.<name>`` on these operands."""
    ufunc = getattr(numpy, name)
    loop_ops = tuple(loop_operand(n) for n in nodes)
    signature = None
    if dtype is not None:
        signature = (None,) * ufunc.nin + (numpy.dtype(dtype),) * ufunc.nout
    try:
        if signature is not None:
            loop = ufunc.resolve_dtypes(loop_ops + (None,) * ufunc.nout, signature=signature)
        else:
            loop = ufunc.resolve_dtypes(loop_ops + (None,) * ufunc.nout)
    except (TypeError, numpy.exceptions.DTypePromotionError) as exc:
        types = ", ".join(type_text(n) for n in nodes)
        raise FuseTraceError(f"numpy.{name}({types}): {exc}") from None
    for dt in loop:
        if dt not in SUPPORTED_DTYPES:
            raise FuseTraceError(f"numpy.{name}: dtype {dt} is not supported in kernels")
    return tuple(loop)


def can_store(node: Node, target: numpy.dtype, casting: str = "same_kind") -> bool:
    """Whether NumPy writes ``node`` into an array of ``target`` under ``casting``
    (a Python number is cast by its kind, as NumPy 2 casts weak scalars)."""
    if casting == "unsafe":
        return True
    if node.weak:
        return _KINDS.index(node.dtype.kind) <= _KINDS.index(target.kind)
    return numpy.can_cast(node.dtype, target, casting)


def weak_value(node: Node):
    """``node`` as ``result_type`` takes it: a Python number of its kind when weak."""
    if node.weak and node.dtype.kind != "b":
        return {"i": 0, "u": 0, "f": 0.0, "c": 0j}[node.dtype.kind]
    return node.dtype


__all__ = ["SUPPORTED_DTYPES", "can_store", "loop_operand", "resolve_loop", "type_text",
           "weak_value"]  # fmt: skip
