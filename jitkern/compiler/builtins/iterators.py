"""Iterators inside kernels, for ``jit.thrust``: what an iterator is, ``x.begin()``,
``x.end()``, pointer arithmetic (``p + n``, ``p - n``, ``p - q``) and the fancy iterators
``make_counting_iterator``/``make_constant_iterator``.

The algorithms that take these iterators are the rows of :mod:`.thrust`.
"""

from __future__ import annotations

from ...errors import JitkernTypeError
from .. import infer
from .. import types as T
from ..values import Const, Value, operand
from .records import Builtin, Sig

def element_type(item) -> T.Type | None:
    """The element type of an iterator (pointer-like array, pointer, fancy iterator), else None."""
    if not isinstance(item, Value):
        return None
    t = item.type
    if isinstance(t, T.Array) and t.is_pointer_like:
        return t.dtype
    if isinstance(t, T.Pointer) and isinstance(t.elem, T.Scalar):
        return t.elem
    if isinstance(t, (T.FancyIterator, T.StridedIterator)):
        return t.elem
    if _is_strided_view(t):
        return t.dtype
    return None


def iterator_type(item) -> T.Type:
    """The C++ type of an iterator: its fancy or strided iterator type, or a plain pointer."""
    if isinstance(item.type, (T.FancyIterator, T.StridedIterator)):
        return item.type
    if _is_strided_view(item.type):
        return T.strided_iterator(item.type.dtype)
    return T.pointer(element_type(item))


def _is_strided_view(t) -> bool:
    """A 1-D array that carries its stride (a row ``x[i]`` of an N-d array, any order)."""
    return isinstance(t, T.Array) and t.ndim == 1 and not t.is_pointer_like


def as_iterator(code: str, item, ctx) -> str:
    """``code`` as an iterator: a strided 1-D view becomes its ``jk::Strided`` begin."""
    if not (isinstance(item, Value) and _is_strided_view(item.type)):
        return code
    ctx.include("<jitkern/strided.cuh>")
    elem = item.type.dtype.ctype
    return f"jk::Strided<{elem}>(({elem}*){code}.ptr, (long long){code}.strides[0])"


def iterator_text(t: T.Type) -> str:
    if isinstance(t, (T.FancyIterator, T.StridedIterator)):
        return str(t)
    return f"pointer to {t.elem}"


def describe_item(item) -> str:
    if isinstance(item, Value):
        return str(item.type)
    return repr(item.value)


# ---------------------------------------------------------------------------
# iterators: x.begin(), x.end(), pointer + n, pointer - n, pointer - pointer


def _begin_rule(items, mode):
    if element_type(items[0]) is None:
        raise JitkernTypeError(
            "begin() needs a 1-D array (contiguous, or a row x[i] of any layout)"
        )
    return Sig((None,), iterator_type(items[0]))


def _begin_template(codes, sig, items, ctx):
    return as_iterator(codes[0], items[0], ctx)


def _end_template(codes, sig, items, ctx):
    return f"({_begin_template(codes, sig, items, ctx)} + {ctx.array_shape(items[0], 0)})"


ARRAY_METHODS = {
    ("array", "begin"): Builtin(
        "array.begin",
        ("self",),
        "1-D array",
        _begin_rule,
        _begin_template,
        "Iterator to the first element (for jit.thrust).",
        "thrust",
        py="{0}",
    ),
    ("array", "end"): Builtin(
        "array.end",
        ("self",),
        "1-D array",
        _begin_rule,
        _end_template,
        "Iterator past the last element (for jit.thrust).",
        "thrust",
        py="_jk_ptr_end({0})",
    ),
}


def _is_integer(op) -> bool:
    if isinstance(op, bool):
        return False
    if isinstance(op, int):
        return True
    return isinstance(op, T.Scalar) and op.kind in "iu"


def _offset_rule(items, mode):
    elem = element_type(items[0])
    if elem is not None and _is_integer(operand(items[1])):
        return Sig((None, T.int64), iterator_type(items[0]))
    other = element_type(items[1])
    if elem is not None and other is not None:
        if elem != other:
            raise JitkernTypeError(f"cannot subtract a pointer to {other} from one to {elem}")
        left, right = iterator_type(items[0]), iterator_type(items[1])
        if left != right:
            raise JitkernTypeError(
                f"cannot subtract a {iterator_text(right)} from a {iterator_text(left)}"
            )
        return Sig((None, None), T.int64)
    raise JitkernTypeError("a pointer takes an integer offset (p + n, p - n) or p - q")


def _offset_template(symbol):
    def template(codes, sig, items, ctx):
        if sig.result is T.int64:
            return f"((long long)({codes[0]} {symbol} {codes[1]}))"
        return f"({codes[0]} {symbol} {codes[1]})"

    return template


def _offset_py(symbol):
    """The simulator's pointers are (array, offset) pairs (sim/runtime.py)."""

    def template(codes, sig, items, ctx):
        if sig.result is T.int64:
            return f"_jk_ptr_diff({codes[0]}, {codes[1]})"
        step = codes[1] if symbol == "+" else f"(-{codes[1]})"
        return f"_jk_ptr_add({codes[0]}, {step})"

    return template


POINTER_OPERATORS = {
    "Add": Builtin(
        "pointer +",
        ("p", "n"),
        "iterator; integer",
        _offset_rule,
        _offset_template("+"),
        "Advance an iterator by n elements.",
        "thrust",
        py=_offset_py("+"),
    ),
    "Sub": Builtin(
        "pointer -",
        ("p", "n"),
        "iterator; integer or iterator",
        _offset_rule,
        _offset_template("-"),
        "Step an iterator back, or the distance between two iterators (an int64).",
        "thrust",
        py=_offset_py("-"),
    ),
}


def pointer_operator(op_name: str, left, right):
    """The record for ``p + n``, ``p - n``, ``p - q`` and ``n + p``, else None."""
    if op_name not in POINTER_OPERATORS:
        return None
    if element_type(left) is not None:
        return POINTER_OPERATORS[op_name], [left, right]
    if op_name == "Add" and element_type(right) is not None:
        return POINTER_OPERATORS[op_name], [right, left]
    return None


# ---------------------------------------------------------------------------
# fancy iterators: make_counting_iterator(start), make_constant_iterator(value)


def _fancy_rule(kind: str):
    def rule(items, mode):
        op = operand(items[0])
        if not isinstance(op, (T.Scalar, bool, int, float)) or (
            isinstance(op, T.Scalar) and op.is_complex
        ):
            raise JitkernTypeError(f"x must be a real number, got {describe_item(items[0])}")
        if not (isinstance(items[1], Const) and items[1].value is None):
            raise JitkernTypeError(
                f"make_{kind}_iterator(x, i): the index i is not supported (as in "
                "cupyx.jit.thrust); advance the iterator instead: it + i"
            )
        elem = infer.literal_type(op, mode) if infer.is_weak(op) else op
        return Sig((elem, None), T.fancy_iterator(kind, elem))

    return rule


def _fancy_template(codes, sig, items, ctx):
    ctx.include(f"<thrust/iterator/{sig.result.kind}_iterator.h>")
    return f"{sig.result.ctype}({codes[0]})"


def _fancy_py(codes, sig, items, ctx):
    t = sig.result
    return f"_jk_fancy({t.kind!r}, {ctx.type_code(t.elem)}({codes[0]}))"


FANCY_ITERATORS = {
    f"make_{kind}_iterator": Builtin(
        f"thrust.make_{kind}_iterator",
        ("x", "i=None"),
        "a real number (its type is the elements' type)",
        _fancy_rule(kind),
        _fancy_template,
        doc,
        "thrust",
        py=_fancy_py,
    )
    for kind, doc in (
        ("counting", "Iterator over x, x + 1, x + 2, ... (read-only; no memory behind it)."),
        ("constant", "Iterator whose every element is x (read-only; no memory behind it)."),
    )
}
