"""What the expression lowering modules share: values before their use
(:class:`BoundMethod`, :class:`ArrayDims`), index checks, and the texts of messages.
"""

from __future__ import annotations

import ast
import builtins
import operator
import re

import numpy

from ...errors import JitIndexError
from .. import builtins as B
from .. import types as T
from ..values import Const, Value
from .spelling import CompileProblem, problem


_ARRAY_ATTRS = ("shape", "strides", "size", "ndim", "dtype", "itemsize", "nbytes")


class BoundMethod:
    """``value.method`` before the call: the record and its receiver."""

    def __init__(self, record, receiver):
        self.record = record
        self.receiver = receiver


class ArrayDims:
    """``x.shape`` / ``x.strides`` before indexing or unpacking."""

    def __init__(self, array: Value, attr: str):
        self.array = array
        self.attr = attr


#: Code that reads the same each time and has no effects: a name or a number.
_PLAIN_CODE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9][A-Za-z0-9_.]*")


def _is_bool(item) -> bool:
    if isinstance(item, Const):
        return isinstance(item.value, (bool, numpy.bool_))
    return isinstance(item, Value) and item.type is T.bool_


def _item_kind(item) -> str:
    if isinstance(item, Value):
        return str(item.type)
    return _describe_const(getattr(item, "value", item))


def _refuse_negative(values, node=None) -> None:
    """Kernels index memory directly: x[-1] would read before the array, not its end."""
    for v in values:
        if isinstance(v, (int, numpy.integer)) and not isinstance(v, bool) and v < 0:
            raise problem(
                f"negative index {int(v)}: array indices do not wrap around in kernels "
                "(x[-1] would read before the start of the array)",
                "index from the end explicitly, e.g. x[x.shape[0] - 1] or x[len(x) - 1]",
                JitIndexError,
                node,
            )


def _shadows_a_builtin(name: str, callee) -> bool:
    """Whether ``name(...)`` calls a number or an array that hides Python's builtin ``name``."""
    if not hasattr(builtins, name) or name == "range":  # range: range_call's own message
        return False
    if isinstance(callee, Value):
        return True
    value = getattr(callee, "value", None)
    return value is None or isinstance(
        value, (bool, int, float, complex, str, tuple, numpy.generic, numpy.ndarray)
    )


def _launch_in_kernel_problem(fn) -> CompileProblem:
    name = getattr(fn, "__name__", "the function")
    if fn.device:
        return problem(
            f"{name} is a device function: it is called, not launched with [grid, block]",
            f"call it as {name}(...)",
        )
    return problem(
        f"{name} is a kernel, and kernels cannot be launched from kernels",
        f"make {name} a device function with @jitkern.rawkernel(device=True) and call it as "
        f"{name}(...), or launch it from the host",
    )


def _tuple_index_problem(k: int, n: int) -> CompileProblem:
    return problem(
        f"tuple index {k} is out of range for a tuple of {n} items",
        f"use an index from {-n} to {n - 1}",
        JitIndexError,
    )


def _is_module(obj) -> bool:
    return type(obj).__name__ == "module"


def _py_function_record(fn):
    try:
        return B.PY_FUNCTIONS.get(fn)
    except TypeError:  # unhashable
        return None


def _describe_const(obj) -> str:
    if _is_module(obj):
        return f"module {obj.__name__}"
    if isinstance(obj, B.Builtin):
        return f"jit.{obj.name}"
    name = getattr(obj, "__name__", None)
    if name:
        return name
    return repr(obj)


def _methods_hint(family) -> str:
    names = sorted(n for (f, n) in B.VALUE_METHODS if f == family)
    return f"available: {', '.join(names)}" if names else ""


def _construct_name(node) -> str:
    return _CONSTRUCT_NAMES.get(type(node).__name__, type(node).__name__)


_CONSTRUCT_NAMES = {
    "List": "a list",
    "Dict": "a dict",
    "Set": "a set",
    "ListComp": "a list comprehension",
    "DictComp": "a dict comprehension",
    "SetComp": "a set comprehension",
    "GeneratorExp": "a generator expression",
    "Lambda": "a lambda",
    "JoinedStr": "an f-string",
    "Await": "await",
    "Yield": "yield",
    "YieldFrom": "yield from",
    "NamedExpr": "the := operator",
    "Starred": "*unpacking",
    "Slice": "a slice",
}


_EXPR_HINTS = {
    "List": "use a tuple, or jit.shared_memory for an array",
    "ListComp": "write a for loop",
    "JoinedStr": "use print(a, b, ...) with several arguments",
    "Lambda": "define a device function with @rawkernel(device=True)",
    "NamedExpr": "assign in a separate statement",
}


_UNARY = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~", ast.Not: "not"}


_COMPARE_TEXT = {"Is": "is", "IsNot": "is not", "In": "in", "NotIn": "not in"}


_IDENTITY = {"Is": operator.is_, "IsNot": operator.is_not}
