"""Stage 3a: lower Python expressions to (C++ expression, type) values.

:class:`ExpressionEmitter` has one ``expr_<Node>`` method per supported AST
expression; anything else is refused in one place (:meth:`expr`). Operators and
builtins go through the records of :mod:`.builtins`; constant operands fold
through :data:`FOLD`. The statement emitter (:mod:`.statements`) extends this class.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import math
import operator
import re
import types
from typing import ClassVar

import numpy

from ..runtime import debugcheck
from ..errors import (
    JitAttributeError,
    JitkernOverflowError,
    JitIndexError,
    JitNameError,
    JitOverflowError,
    JitSyntaxError,
    JitTypeError,
    JitValueError,
)
from . import builtins as B
from . import frontend, infer
from . import types as T
from .values import Const, Value, operand

#: Constant folding: AST operator class -> Python function (parallel to builtins.OPERATORS).
FOLD = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Invert: operator.invert,
    ast.Not: operator.not_,
}

_ARRAY_ATTRS = ("shape", "strides", "size", "ndim", "dtype", "itemsize", "nbytes")


class CompileProblem(Exception):
    """Raised inside lowering with a message; turned into a positioned error once."""

    def __init__(self, cls, message: str, hint: str = "", node=None):
        super().__init__(message)
        self.cls = cls
        self.message = message
        self.hint = hint
        self.node = node


def problem(message: str, hint: str = "", cls=JitTypeError, node=None) -> CompileProblem:
    return CompileProblem(cls, message, hint, node)


# ---------------------------------------------------------------------------
# C++ spelling of constants and conversions (pure functions)


def literal(value, t: T.Scalar) -> str:
    """C++ literal of a Python/NumPy scalar ``value`` as type ``t``."""
    if t.is_complex:
        z = complex(value)
        part = T.complex_part(t)
        return f"{t.ctype}({literal(z.real, part)}, {literal(z.imag, part)})"
    if t is T.bool_:
        return "true" if value else "false"
    if t.is_float:
        if isinstance(value, complex):
            raise problem(f"cannot convert the complex constant {value!r} to {t}")
        return _float_literal(float(value), t)
    if isinstance(value, (float, numpy.floating)):
        raise problem(
            f"the float constant {value!r} cannot become {t} implicitly",
            "convert explicitly with int(...) or numpy.int32(...)",
        )
    if isinstance(value, complex):
        raise problem(f"the complex constant {value!r} cannot become {t}")
    v = int(value)
    info = numpy.iinfo(t.name)
    if not info.min <= v <= info.max:
        raise problem(
            f"the constant {v} does not fit in {t}", "use a wider type, e.g. numpy.int64(...)"
        )
    suffix = {"int32": "", "int64": "LL", "uint32": "u", "uint64": "ull"}
    if t.name in suffix:
        if t.name == "int32" and v == info.min:
            return "(-2147483647 - 1)"
        if t.name == "int64" and v == info.min:
            return "(-9223372036854775807LL - 1)"
        return f"{v}{suffix[t.name]}"
    return f"(({t.ctype}){v})"


def _float_literal(v: float, t: T.Scalar) -> str:
    if t.is_float8:  # a cast: the functional form is the rounding to_float looks through
        return f"{_HALF_TO[t.name]}({_float_literal(v, T.float32)})"
    if t.is_half:
        return f"{t.ctype}({_float_literal(v, T.float32)})"
    single = t is T.float32
    if math.isnan(v):
        return (
            "__int_as_float(0x7fffffff)" if single else "__longlong_as_double(0x7ff8000000000000LL)"
        )
    if math.isinf(v):
        sign = "-" if v < 0 else ""
        return (
            f"({sign}__int_as_float(0x7f800000))"
            if single
            else f"({sign}__longlong_as_double(0x7ff0000000000000LL))"
        )
    if single:
        text = str(numpy.float32(v))  # shortest text that reads back as this float32
        return (text if ("e" in text or "." in text) else text + ".0") + "f"
    text = repr(v)
    return text if ("e" in text or "." in text) else text + ".0"


_HALF_FROM = {
    "float16": "__half2float",
    "bfloat16": "__bfloat162float",
    "float8_e4m3fn": "(float)",
    "float8_e5m2": "(float)",
}
# float16/bfloat16 arithmetic is done in float32 (as cupyx.jit does): a half-typed result is
# spelled with these (round-to-nearest) conversions, and the next operation on it takes the
# float32 operand back out, so a whole expression rounds once, where it is stored.
_HALF_ROUND = {
    "float16": "__float2half_rn",
    "bfloat16": "__float2bfloat16_rn",
    # fp8's constructor from float: round to nearest even, saturating to the largest finite
    # value (__NV_SATFINITE); an explicit conversion is spelled as a cast (_HALF_TO)
    "float8_e4m3fn": "__nv_fp8_e4m3",
    "float8_e5m2": "__nv_fp8_e5m2",
}


def call_argument(code: str, fn: str):
    """The argument of ``code`` where ``code`` is the one call ``fn(...)``, else None (a
    half result's rounding, which the next half operation looks through: _HALF_ROUND)."""
    prefix = fn + "("
    if not (code.startswith(prefix) and code.endswith(")")):
        return None
    depth = 0
    for pos in range(len(prefix) - 1, len(code)):
        depth += {"(": 1, ")": -1}.get(code[pos], 0)
        if depth == 0:
            return code[len(prefix) : -1] if pos == len(code) - 1 else None
    return None


_HALF_TO = {
    "float16": "__float2half",
    "bfloat16": "__float2bfloat16",
    "float8_e4m3fn": "(__nv_fp8_e4m3)",
    "float8_e5m2": "(__nv_fp8_e5m2)",
}


def check_conversion(src: T.Type, dst: T.Type) -> None:
    """Refuse an implicit conversion no back end makes (numbers only; complex to real
    only explicitly)."""
    if not isinstance(src, T.Scalar) or not isinstance(dst, T.Scalar):
        raise problem(f"cannot convert {src} to {dst}")
    if src.is_complex and not dst.is_complex:
        raise problem(f"cannot convert {src} to {dst} implicitly", "take .real or abs() first")


def convert(code: str, src: T.Type, dst: T.Type) -> str:
    """C++ for converting ``code`` of type ``src`` to ``dst`` (numeric types)."""
    if src == dst:
        return code
    check_conversion(src, dst)
    if src.is_half:
        code, src = f"{_HALF_FROM[src.name]}({code})", T.float32
        if src == dst:
            return code
    if dst is T.bool_:
        zero = literal(0, src)
        return f"(({code}) != {zero})"
    if dst.is_half:
        return f"{_HALF_TO[dst.name]}({convert(code, src, T.float32)})"
    if dst.is_complex:
        if src.is_complex:
            return f"{dst.ctype}({code})"
        part = T.complex_part(dst)
        return f"{dst.ctype}({convert(code, src, part)})"
    return f"(({dst.ctype})({code}))"


# ---------------------------------------------------------------------------


class ExpressionEmitter:
    """Lowers expressions; the state (locals, program) lives on the instance."""

    # set by the subclass
    source: frontend.Source
    mode: str
    program: object
    func: object
    debug_line: int = 0  # the current statement's line (debug sites without a node)
    current_expr = None  # the expression being emitted (positions of arch requirements)

    # -- dispatch ---------------------------------------------------------

    def expr(self, node):
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            raise problem(
                f"{_construct_name(node)} is not supported in kernels",
                _EXPR_HINTS.get(type(node).__name__, ""),
                JitSyntaxError,
                node,
            )
        outer, self.current_expr = self.current_expr, node
        try:
            return method(node)
        except CompileProblem as exc:
            if exc.node is None:
                exc.node = node
            raise
        except JitkernOverflowError as exc:  # a literal beyond 64 bits met a type rule
            raise problem(
                str(exc), "write it as a float (1e30) or use smaller values", JitOverflowError, node
            ) from None
        finally:
            self.current_expr = outer

    def value(self, node) -> Value:
        """Lower ``node`` to a runtime value (materialising a scalar constant)."""
        return self.materialize(self.expr(node))

    def materialize(self, item) -> Value:
        if isinstance(item, Value):
            return item
        if item.is_scalar:
            t = infer.literal_type(item.value, self.mode)
            return Value(self.literal(item.value, t), t)
        raise problem(f"{_describe_const(item.value)} is not a value here")

    # -- leaves -----------------------------------------------------------

    def expr_Constant(self, node):
        if isinstance(node.value, (bool, int, float, complex, str)) or node.value is None:
            return Const(node.value)
        raise problem(f"constant {node.value!r} is not supported in kernels")

    def expr_Name(self, node):
        local = self.lookup_local(node.id)
        if local is not None:
            return self.read_local(node, local)
        return Const(self.capture_global(node.id))

    def read_local(self, node, local):
        """A read of the local ``node`` names (debug builds check it was assigned)."""
        return local

    def capture_global(self, name: str):
        try:
            captured = self.program.capture(self.func, name)
        except KeyError:
            raise problem(
                f"name {name!r} is not defined",
                "define it before the kernel, pass it as an argument, or assign it in the kernel",
                JitNameError,
            ) from None
        except TypeError as exc:
            raise problem(f"{name!r}: {exc}") from None
        return captured.value

    # -- attributes -------------------------------------------------------

    def expr_Attribute(self, node):
        base = self.expr(node.value)
        if isinstance(base, Const):
            return self.const_attribute(base.value, node.attr)
        return self.value_attribute(base, node.attr)

    def const_attribute(self, obj, attr: str):
        if isinstance(obj, B.Namespace):
            if attr not in obj.members:
                raise problem(
                    f"jit.{obj.name} has no member {attr!r}",
                    f"members: {', '.join(sorted(obj.members))}",
                    JitAttributeError,
                )
            member = obj.members[attr]
            return (
                self.call_builtin(member, [])
                if getattr(member, "attribute", False)
                else Const(member)
            )
        if isinstance(obj, B.CubClass) and attr == "TempStorage":
            return Const(B.CubStorage(obj))
        if _is_module(obj) and obj.__name__.startswith("jitkern.jit"):
            if not hasattr(obj, attr):
                raise problem(f"jitkern.jit has no member {attr!r}", "", JitAttributeError)
            value = getattr(obj, attr)
            if isinstance(value, B.Builtin) and value.attribute:
                return self.call_builtin(value, [])
            return Const(value)
        if _is_module(obj) and obj.__name__ in frontend.ARRAY_MODULES and hasattr(numpy, attr):
            obj = numpy  # cupy.float32, cupy.sqrt ... read as NumPy's, as in cupyx.jit
        if (
            _is_module(obj)
            or isinstance(obj, numpy.dtype)
            or (isinstance(obj, type) and issubclass(obj, numpy.generic))
            or isinstance(obj, (bool, int, float, complex, numpy.generic))
        ):
            try:
                value = getattr(obj, attr)
            except AttributeError:
                raise problem(
                    f"{_describe_const(obj)} has no attribute {attr!r}", "", JitAttributeError
                ) from None
            try:
                frontend.capture(value)
            except TypeError as exc:
                raise problem(f"{_describe_const(obj)}.{attr}: {exc}") from None
            return Const(value)
        raise problem(f"{_describe_const(obj)} has no attribute {attr!r} in kernels")

    def value_attribute(self, base: Value, attr: str):
        t = base.type
        if isinstance(t, T.Array):
            return self.array_attribute(base, attr)
        family = "scalar" if isinstance(t, T.Scalar) else getattr(t, "family", None)
        if isinstance(t, T.Scalar) and attr == "dtype":
            return Const(t.dtype)
        record = B.VALUE_METHODS.get((family, attr))
        if record is None:
            raise problem(
                f"a value of type {t} has no attribute {attr!r}",
                _methods_hint(family),
                JitAttributeError,
            )
        if record.attribute:
            return self.call_builtin(record, [base])
        return BoundMethod(record, base)

    def array_attribute(self, base: Value, attr: str):
        t = base.type
        method = B.VALUE_METHODS.get(("array", attr))
        if method is not None:  # x.begin() / x.end(): iterators for jit.thrust
            return BoundMethod(method, base)
        if attr not in _ARRAY_ATTRS:
            raise problem(
                f"arrays have no attribute {attr!r} in kernels",
                f"available: {', '.join(_ARRAY_ATTRS)}",
                JitAttributeError,
            )
        if attr == "ndim":
            return Const(t.ndim)
        if attr == "dtype":
            if t.dtype.name in T.ML_DTYPE_NAMES:
                return Const(t.dtype.dtype)
            return Const(numpy.dtype(t.dtype.name))
        if attr == "itemsize":
            return Const(t.dtype.itemsize)
        if attr in ("shape", "strides"):
            return ArrayDims(base, attr)
        if attr == "size":
            parts = [self.array_shape(base, k) for k in range(t.ndim)]
            return Value("(" + " * ".join(parts or [self.literal(1, T.int64)]) + ")", T.int64)
        size = self.array_attribute(base, "size")
        return Value(f"({size.code} * {self.literal(t.dtype.itemsize, T.int64)})", T.int64)

    def array_shape(self, item, k: int) -> str:
        """C++ for ``item.shape[k]`` (an int64)."""
        t = item.type
        if not isinstance(t, T.Array):
            raise problem(f"len() and .shape need an array, got {t}")
        if not 0 <= k < t.ndim:
            raise problem(f"axis {k} is out of range for a {t.ndim}-d array")
        # a 1-D contiguous array's length is a kernel parameter (its rule and error)
        extent = self.pointer_array_extent(item, "shape", k) if t.is_pointer_like else None
        return self.render_dim(item, "shape", k, extent)

    def array_stride(self, item, k: int) -> str:
        """C++ for ``item.strides[k]`` (an int64, in bytes)."""
        t = item.type
        if not 0 <= k < t.ndim:
            raise problem(f"axis {k} is out of range for a {t.ndim}-d array")
        extent = f"{t.dtype.itemsize}LL" if t.is_pointer_like else None
        return self.render_dim(item, "strides", k, extent)

    def render_dim(self, item: Value, attr: str, k: int, known: str | None) -> str:
        """``item.shape[k]`` or ``item.strides[k]`` (``attr``) of a checked axis, as an
        int64; ``known``: the value where the C++ build passes or knows it."""
        return known or f"((long long){item.code}.{attr}[{k}])"

    # -- subscripts -------------------------------------------------------

    def expr_Subscript(self, node):
        base = self.expr(node.value)
        index_node = node.slice
        if isinstance(index_node, ast.Slice):
            raise problem(
                "slices are not supported in kernels", "index element by element", JitSyntaxError
            )
        if isinstance(base, ArrayDims):
            k = self.const_int(index_node, f"{base.attr} index")
            return Value(
                self.array_shape(base.array, k)
                if base.attr == "shape"
                else self.array_stride(base.array, k),
                T.int64,
            )
        if isinstance(base, Const):
            return self.const_subscript(base.value, index_node)
        if isinstance(base, Value) and isinstance(base.type, T.Tuple):
            return self.tuple_item(base, self.const_int(index_node, "a tuple index"))
        if self.program.debug:
            return self.subscript(base, self.index_items(index_node), ast.unparse(node.value), node)
        return self.subscript(base, self.index_items(index_node))

    def const_subscript(self, obj, index_node):
        if isinstance(obj, B.CubTemplate):
            items = index_node.elts if isinstance(index_node, ast.Tuple) else [index_node]
            params = [self.expr(i) for i in items]
            if not all(isinstance(p, Const) for p in params):
                raise problem(f"cub.{obj.name}[...] takes compile-time parameters")
            try:
                return Const(obj.instantiate([p.value for p in params]))
            except TypeError as exc:
                raise problem(str(exc)) from None
        if hasattr(obj, "py_func") and getattr(obj, "device", None) is not None:
            raise _launch_in_kernel_problem(obj)
        if isinstance(obj, tuple):
            k = self.const_int(index_node, "a tuple index")
            if not -len(obj) <= k < len(obj):
                raise _tuple_index_problem(k, len(obj))
            return Const(obj[k])
        raise problem(f"{_describe_const(obj)} cannot be indexed")

    def index_items(self, index_node) -> list:
        if isinstance(index_node, ast.Tuple):
            return [self.materialize(self.array_index(i)) for i in index_node.elts]
        item = self.array_index(index_node)
        if isinstance(item, Value) and isinstance(item.type, T.Tuple):
            return [self.tuple_item(item, k) for k in range(len(item.type.items))]
        if isinstance(item, Const) and isinstance(item.value, tuple):
            return [self.materialize(Const(v)) for v in item.value]
        return [self.materialize(item)]

    def array_index(self, node):
        """One index of an array element; a negative constant is refused: kernels index
        memory directly, so x[-1] would read before the array, not its last element."""
        item = self.expr(node)
        values = item.value if isinstance(item, Const) and isinstance(item.value, tuple) else (
            item.value if isinstance(item, Const) else None,
        )
        _refuse_negative(values, node)
        return item

    def subscript(self, base: Value, indices: list, name: str | None = None, node=None) -> Value:
        """``base[indices]``; in a debug build each index is checked against its extent
        (``name`` and ``node``: what the error message names, and where)."""
        t = base.type
        for idx in indices:
            if not (isinstance(idx.type, T.Scalar) and idx.type.kind in "biu"):
                raise problem(f"an index must be an integer, got {idx.type}")
        if isinstance(t, T.Tuple):
            raise problem("tuples are indexed with constant integers")
        if isinstance(t, T.Pointer):
            if len(indices) != 1:
                raise problem("a pointer takes one index")
            if self.program.debug:
                checked = self.checked_element(base, indices[0], t.elem, name, node)
                if checked is not None:
                    return checked
            return Value(f"{base.code}[{indices[0].code}]", t.elem, lvalue=True)
        if not isinstance(t, T.Array):
            raise problem(f"a value of type {t} cannot be indexed")
        if len(indices) > t.ndim:
            raise problem(
                f"too many indices ({len(indices)}) for a {t.ndim}-d array",
                "index a 0-d array with x[()]" if t.ndim == 0 else "",
            )
        if t.ndim == 0:  # x[()]: the one element
            return Value(f"(*{base.code})", t.dtype, lvalue=True)
        if t.is_pointer_like:
            if self.program.debug:
                checked = self.checked_element(base, indices[0], t.dtype, name, node)
                if checked is not None:
                    return checked
            return Value(f"{base.code}[{indices[0].code}]", t.dtype, lvalue=True)
        if self.program.debug:
            return self.checked_subarray(base, indices, name, node)
        ic = t.index_ctype
        offset = " + ".join(
            f"({ic})({idx.code}) * {base.code}.strides[{k}]" for k, idx in enumerate(indices)
        )
        address = f"(char*){base.code}.ptr + {offset}"
        if len(indices) == t.ndim:
            return Value(f"(*({t.dtype.ctype}*)({address}))", t.dtype, lvalue=True)
        rest = range(len(indices), t.ndim)
        sub_t = T.array(t.dtype, t.ndim - len(indices), False, t.index32)
        shape = ", ".join(f"{base.code}.shape[{k}]" for k in rest)
        strides = ", ".join(f"{base.code}.strides[{k}]" for k in rest)
        code = f"{sub_t.ctype}{{({t.dtype.ctype}*)({address}), {{{shape}}}, {{{strides}}}}}"
        return Value(code, sub_t)

    # -- debug builds: checked accesses (jk::dbg in program.DEBUG_HELPERS) ----

    def checked_element(self, base: Value, index: Value, elem, name, node):
        """``base[index]`` on a 1-D contiguous array or a shared-memory pointer, checked
        against its element count; None when that count is not known here."""
        extent = self.debug_extent(base)
        if extent is None or not isinstance(elem, T.Scalar):
            return None
        kind = "array"
        if isinstance(base.type, T.Pointer):  # jit.local_memory's or shared memory
            kind = "local" if base.type.space == "local" else "shared"
        site = self.debug_site(base, name, node, kind)
        code = f"(*jk::dbg::at1({base.code}, (long long)({index.code}), {extent}, {site}))"
        return Value(code, elem, lvalue=True)

    def checked_subarray(self, base: Value, indices: list, name, node) -> Value:
        """``base[i0, ...]`` on an array that carries its shape: each index on its axis."""
        t = base.type
        site = self.debug_site(base, name, node, "array")
        args = ", ".join(f"({idx.code})" for idx in indices)
        if len(indices) == t.ndim:
            return Value(f"(*jk::dbg::at({base.code}, {site}, {args}))", t.dtype, lvalue=True)
        sub_t = T.array(t.dtype, t.ndim - len(indices), False, t.index32)
        return Value(f"jk::dbg::sub({base.code}, {site}, {args})", sub_t)

    def debug_site(self, base: Value, name, node, kind: str) -> int:
        line = self.source.position(node)[0] if node is not None else self.debug_line
        site = debugcheck.Site(self.source.filename, line, name or self.debug_name(base), kind)
        return self.program.debug_site(site)

    def debug_extent(self, base: Value) -> str | None:
        """C++ for the element count of a pointer-like array or pointer (the emitter knows)."""
        return None

    def debug_name(self, base: Value) -> str:
        return "an array"

    def tuple_item(self, item: Value, k: int) -> Value:
        items = item.type.items
        if not -len(items) <= k < len(items):
            raise _tuple_index_problem(k, len(items))
        k %= len(items)
        return Value(item.code + ".tail" * k + ".head", items[k])

    def const_int(self, node, what: str) -> int:
        item = self.expr(node)
        if (
            isinstance(item, Const)
            and isinstance(item.value, (int, numpy.integer))
            and not isinstance(item.value, bool)
        ):
            return int(item.value)
        raise problem(f"{what} must be a compile-time integer")

    # -- operators --------------------------------------------------------

    def expr_BinOp(self, node):
        # A long sum is a left-deep chain ((a + b) + c) + ...: walk it with a loop rather
        # than recursion, so an expression of any length lowers (Python's parser already
        # builds it without recursing that deep).
        chain = []
        while isinstance(node, ast.BinOp):
            chain.append(node)
            node = node.left
        result = self.expr(node)
        for link in reversed(chain):
            right = self.expr(link.right)
            try:
                result = self.binary(type(link.op).__name__, result, right)
            except CompileProblem as exc:
                if exc.node is None:
                    exc.node = link
                raise
        return result

    def binary(self, op_name: str, left, right):
        if isinstance(left, Const) and isinstance(right, Const):
            # numbers fold; so do compile-time objects (x.dtype == numpy.float32)
            return self.fold(getattr(ast, op_name), left.value, right.value)
        pointer = B.pointer_operator(op_name, left, right)
        if pointer is not None:  # iterator arithmetic: x + n, it - x.begin()
            return self.call_builtin(*pointer)
        record = B.OPERATORS.get(op_name)
        if record is None:
            raise problem(f"operator {op_name} is not supported in kernels", "", JitSyntaxError)
        return self.call_builtin(record, [left, right])

    def fold(self, op_class, *values):
        try:
            return Const(FOLD[op_class](*values))
        except ZeroDivisionError:
            raise problem("division by zero in a constant expression") from None
        except (TypeError, ValueError, OverflowError) as exc:
            raise problem(f"cannot fold this constant expression: {exc}") from None

    def expr_UnaryOp(self, node):
        item = self.expr(node.operand)
        op = type(node.op)
        if isinstance(item, Const) and item.is_scalar:
            return self.fold(op, item.value)
        v = self.materialize(item)
        if not isinstance(v.type, T.Scalar):
            raise problem(f"unary {_UNARY[op]} needs a number, got {v.type}")
        out = self.unary(op, v)
        # Python operators on Python scalars give Python scalars: a weak operand stays weak.
        return dataclasses.replace(out, weak=True) if v.weak else out

    def unary(self, op, v: Value) -> Value:
        """``not``/``~``/``-``/``+`` on a number: the rules and errors of every back end;
        the text is :meth:`render_unary`'s."""
        t = v.type
        if op is ast.Not:
            v = self.convert(v, T.bool_)
            return Value(self.render_unary(op, v), T.bool_)
        if t is T.bool_ and op in (ast.USub, ast.UAdd) and self.mode == "numpy" and not v.weak:
            raise problem(
                f"NumPy has no unary {_UNARY[op]} for bools",
                "use ~x (or numpy.logical_not) to negate a condition, or convert to an int first",
            )
        if op is ast.UAdd:
            return v
        if op is ast.Invert and t is T.bool_ and v.weak:  # a Python bool: ~True == -2
            t = infer.literal_type(0, self.mode)
            v = self.convert(v, t)
        if op is ast.Invert and t.kind not in "iub":
            raise problem(f"~ needs an integer or bool, got {t}")
        if op is ast.USub and t is T.bool_:
            t = infer.literal_type(0, self.mode)
            v = self.convert(v, t)
        return Value(self.render_unary(op, v), t)

    def render_unary(self, op, v: Value) -> str:
        """The text of a checked ``not`` (``v`` a bool), ``~`` (an integer or bool) or ``-``."""
        t = v.type
        if op is ast.USub:
            return self.render_negative(v)
        if op is ast.Not or t is T.bool_:
            return f"(!{v.code})"
        return f"(({t.ctype})~{v.code})"

    def render_negative(self, v: Value) -> str:
        """``-v`` of a number (unary minus and numpy.negative)."""
        t = v.type
        if t.is_complex:
            self.need_complex()
        if t.itemsize < 4 and t.kind in "iu":
            return f"(({t.ctype})(-{v.code}))"
        if t.is_float8:  # cuda_fp8.h has no arithmetic: negated in float32 (exact)
            return self.via_float(t, f"(-{self.to_float(t, v.code)})")
        return f"(-{v.code})"

    #: ``and`` / ``or`` between bools, in the back end's language.
    BOOL_WORDS: ClassVar[dict] = {ast.And: " && ", ast.Or: " || "}

    def expr_BoolOp(self, node):
        items = [self.expr(v) for v in node.values]
        if all(_is_bool(i) for i in items):
            return self.join_truths(node.op, items)
        return self.select_operand(node.op, items)

    def truth_item(self, node):
        """``node`` as a condition (``if``/``while``/``assert``, a conditional's test):
        there ``and``/``or`` only need their operands' truth, which ``&&``/``||`` give."""
        if isinstance(node, ast.BoolOp):
            return self.join_truths(node.op, [self.truth_item(v) for v in node.values])
        return self.expr(node)

    def join_truths(self, op, items):
        """``a and b`` / ``a or b`` as a bool: the operands' truth joined with the back
        end's short-circuiting words (the value of Python's ``and``/``or`` of bools)."""
        if all(isinstance(i, Const) and i.is_scalar for i in items):
            fold = all if isinstance(op, ast.And) else any
            return Const(bool(fold(bool(i.value) for i in items)))
        codes = [self.convert(self.materialize(i), T.bool_).code for i in items]
        return Value("(" + self.BOOL_WORDS[type(op)].join(codes) + ")", T.bool_)

    def select_operand(self, op, items):
        """Python's ``a or b`` / ``a and b`` of numbers: the first operand that decides
        (``or``: a true one, ``and``: a false one), else the last; each evaluated once,
        left to right, and only while undecided. Operands of different types: the
        result has their common type (NumPy's promotion, Python numbers weak, as for
        ``a + b``). A compile-time operand decides at compile time (docs/jit.md)."""
        stop_on = isinstance(op, ast.Or)
        kept = []
        for k, item in enumerate(items):
            if isinstance(item, Const) and item.is_scalar:
                if bool(item.value) == stop_on or k == len(items) - 1:
                    kept.append(item)
                    break
                continue  # a constant that decides nothing: Python goes on to the next
            if not (isinstance(item, Value) and isinstance(item.type, T.Scalar)):
                word = "or" if stop_on else "and"
                raise problem(f"'{word}' needs numbers or bools, got {_item_kind(item)}")
            kept.append(item)
        if len(kept) == 1:
            return kept[0]
        t = infer.result_type([operand(i) for i in kept], self.mode)
        code = self.convert(kept[-1], t).code
        for item in reversed(kept[:-1]):
            first, later = self.evaluate_once(item)
            test = self.convert(first, T.bool_).code
            mine = self.convert(later, t).code
            code = self.render_ifexp(test, mine, code) if stop_on else (
                self.render_ifexp(test, code, mine)
            )
        weak = all(infer.is_weak(operand(i)) for i in kept)
        return Value(code, t, weak=weak)

    def evaluate_once(self, item):
        """``(first, later)``: ``item`` computed where ``first`` stands, read again as
        ``later`` (a temporary, unless ``item`` is a name or a literal, which reads the same
        every time and has no effects)."""
        if not isinstance(item, Value) or _PLAIN_CODE.fullmatch(item.code):
            return item, item
        tmp = self.temp()
        self.hoist(item.type, tmp)
        first = dataclasses.replace(item, code=self.render_assign(tmp, item.code), lvalue=False)
        return first, dataclasses.replace(item, code=tmp, lvalue=False)

    def render_assign(self, name: str, code: str) -> str:
        """An expression storing ``code`` in the local ``name``, whose value it is."""
        return f"({name} = {code})"

    def render_sequence(self, firsts, last: str) -> str:
        """An expression evaluating ``firsts`` in order, then ``last``, whose value it is."""
        return "(" + ", ".join([*firsts, last]) + ")"

    def expr_Compare(self, node):
        items = [self.expr(node.left)] + [self.expr(c) for c in node.comparators]
        if len(node.ops) == 1:
            return self.comparison(node.ops[0], items[0], items[1])
        # a < f(x) < b: each operand evaluated once, left to right, and no further once a
        # comparison is false; a middle operand is held in a temporary for its two uses
        firsts, laters = [], []
        for k, item in enumerate(items):
            needed = 0 < k < len(items) - 1 or (
                k == 0 and not _PLAIN_CODE.fullmatch(getattr(items[1], "code", "0"))
            )
            first, later = self.evaluate_once(item) if needed else (item, item)
            firsts.append(first.code if first is not later else None)
            laters.append(later)
        parts = []
        for k, op in enumerate(node.ops):
            part = self.comparison(op, laters[k], laters[k + 1])
            ahead = [c for c in (firsts[k] if k == 0 else None, firsts[k + 1]) if c]
            if ahead:
                part = Value(self.render_sequence(ahead, self.materialize(part).code), T.bool_)
            parts.append(part)
        if all(isinstance(p, Const) for p in parts):
            return Const(all(p.value for p in parts))
        codes = [self.materialize(p).code for p in parts]
        return Value("(" + self.BOOL_WORDS[ast.And].join(codes) + ")", T.bool_)

    def comparison(self, op, left, right):
        name = type(op).__name__
        if name in _IDENTITY:
            return self.identity(name, left, right)
        if name not in B.OPERATORS:
            raise problem(
                f"the comparison {_COMPARE_TEXT.get(name, name)!r} is not supported in kernels",
                "use ==, !=, <, <=, >, >=",
                JitSyntaxError,
            )
        return self.binary(name, left, right)

    def identity(self, name: str, left, right) -> Const:
        """``a is b`` / ``a is not b``: a compile-time answer (captured None, dtypes...)."""
        if isinstance(left, Const) and isinstance(right, Const):
            return Const(_IDENTITY[name](left.value, right.value))
        for const, other in ((left, right), (right, left)):
            if isinstance(const, Const) and const.value is None and isinstance(other, Value):
                return Const(name == "IsNot")  # a run-time value is never None
        raise problem(
            f"'{_COMPARE_TEXT[name]}' compares compile-time values in kernels (e.g. a captured "
            "None: if flag is None:)",
            "use == or != on numbers",
            JitSyntaxError,
        )

    def expr_IfExp(self, node):
        cond = self.truth_item(node.test)
        if isinstance(cond, Const) and cond.is_scalar:
            return self.expr(node.body if cond.value else node.orelse)
        body, orelse = self.expr(node.body), self.expr(node.orelse)
        ops = [operand(body), operand(orelse)]
        if all(isinstance(o, (T.Scalar, bool, int, float, complex)) for o in ops):
            t = infer.result_type(ops, self.mode)
        elif ops[0] == ops[1]:
            t = ops[0]
        else:
            raise problem(f"both branches must have one type, got {ops[0]} and {ops[1]}")
        c = self.convert(self.materialize(cond), T.bool_).code
        a, b = self.convert(body, t).code, self.convert(orelse, t).code
        return Value(self.render_ifexp(c, a, b), t)

    def render_ifexp(self, c: str, a: str, b: str) -> str:
        """``a if c else b`` of a checked condition and two branches of one type."""
        return f"({c} ? {a} : {b})"

    def expr_Tuple(self, node):
        items = [self.expr(e) for e in node.elts]
        if all(isinstance(i, Const) for i in items):
            return Const(tuple(i.value for i in items))
        values = [self.materialize(i) for i in items]
        t = T.tuple_of([v.type for v in values])
        return Value(self.tuple_code(t, [v.code for v in values]), t)

    # -- calls ------------------------------------------------------------

    def expr_Call(self, node):
        callee = self.expr(node.func)
        args = [self.expr(a) for a in node.args]
        for a in node.args:
            if isinstance(a, ast.Starred):
                raise problem("*args in calls is not supported in kernels", "", JitSyntaxError)
        kwargs = {}
        for kw in node.keywords:
            if kw.arg is None:
                raise problem("**kwargs in calls is not supported in kernels", "", JitSyntaxError)
            kwargs[kw.arg] = self.expr(kw.value)
        if self.program.debug:  # the line of checks made inside the call (atomics, ldg)
            self.debug_line = self.source.position(node)[0]
        if isinstance(node.func, ast.Name) and _shadows_a_builtin(node.func.id, callee):
            raise self.shadowed_builtin(node.func.id, callee)
        return self.call(callee, args, kwargs)

    def shadowed_builtin(self, name: str, callee) -> CompileProblem:
        """``abs(x)`` where ``abs`` names a parameter, a local or a global: say which."""
        params = getattr(self, "parsed", None)
        owner = "device function" if getattr(self, "kind", "kernel") == "device" else "kernel"
        if isinstance(callee, Value):
            role = "parameter" if params and name in params.params else "local variable"
            what = f"the {role} {name!r} of the {owner} (of type {callee.type})"
            hint = f"rename the {role}"
        else:
            module = getattr(self.func, "__module__", None) or "the kernel's module"
            what = f"the global {name} = {callee.value!r} of {module}"
            hint = "rename the global, or pass the value as an argument"
        return problem(
            f"{name!r} here is {what}, which shadows Python's {name}(), so it cannot be called",
            f"{hint}; the builtin {name}() is then available in the {owner}",
        )

    def call(self, callee, args, kwargs):
        if isinstance(callee, BoundMethod):
            return self.call_builtin(callee.record, [callee.receiver] + args, kwargs)
        if not isinstance(callee, Const):
            raise problem(f"a value of type {callee.type} is not callable")
        fn = callee.value
        if isinstance(fn, B.Builtin):
            return self.call_builtin(fn, args, kwargs)
        if isinstance(fn, B.Marker):
            return Const(fn)
        if isinstance(fn, B.CubClass):
            return self.cub_instance(fn, args)
        if hasattr(fn, "py_func") and getattr(fn, "device", None) is False:
            raise problem(
                f"{fn.__name__} is a kernel, and a kernel cannot call another kernel",
                f"make {fn.__name__} a device function with @jitkern.rawkernel(device=True) "
                "and call it here, or launch it from the host",
            )
        if hasattr(fn, "__jit_device__"):
            if kwargs:
                raise problem("device functions take positional arguments only")
            return self.call_device(fn, args)
        if frontend.is_dtype(fn):
            return self.call_builtin(B.dtype_cast, [Const(fn)] + args, kwargs)
        if isinstance(fn, types.FunctionType):
            return self.call_factory(fn, args, kwargs)
        record = _py_function_record(fn)
        if record is None:
            raise problem(
                f"{_describe_const(fn)} cannot be called in kernels",
                "see the builtin table in docs/jit.md",
            )
        if (
            record.fold is not None
            and not kwargs
            and args
            and all(isinstance(a, Const) and (a.is_scalar) for a in args)
        ):
            try:
                return Const(record.fold(*[a.value for a in args]))
            except (ValueError, TypeError, OverflowError, ZeroDivisionError) as exc:
                raise problem(f"cannot fold {record.name}(...): {exc}") from None
        return self.call_builtin(record, args, kwargs)

    def call_factory(self, fn, args, kwargs):
        """``make(10)``: a plain Python function run at compile time on constant arguments.

        What it returns must be something a kernel can hold (a device function, a
        number, a dtype); it is then used like a captured global.
        """
        refusal = (
            f"Python function {fn.__qualname__!r} cannot be called from a kernel",
            (
                "decorate it with @jitkern.rawkernel(device=True), or call it with constant "
                "arguments and return a device function (a factory)"
            ),
        )
        if not all(isinstance(a, Const) for a in [*args, *kwargs.values()]):
            raise problem(*refusal)
        try:
            result = fn(*[a.value for a in args], **{k: v.value for k, v in kwargs.items()})
        except Exception as exc:  # noqa: BLE001  (the user's factory failed: say where and why)
            raise problem(f"{fn.__qualname__}(...) raised {type(exc).__name__}: {exc}") from None
        try:
            frontend.capture(result)
        except TypeError:
            raise problem(*refusal) from None
        if isinstance(result, types.FunctionType) and not hasattr(result, "__jit_device__"):
            raise problem(*refusal)
        return Const(result)

    def bind(self, record: B.Builtin, args, kwargs) -> list:
        names = record.param_names()
        star = next((i for i, n in enumerate(names) if n.startswith("*")), None)
        if star is not None:
            return self.bind_varargs(record, names, star, args, kwargs)
        if len(args) > len(names):
            raise problem(
                f"{record.name}() takes at most {len(names)} arguments "
                f"({', '.join(names)}), got {len(args)}"
            )
        bound = list(args)
        defaults = record.defaults()
        first_default = len(names) - len(defaults)
        for i in range(len(args), len(names)):
            name = names[i]
            if name in kwargs:
                bound.append(kwargs.pop(name))
            elif i >= first_default:
                bound.append(Const(defaults[i - first_default]))
            else:
                raise problem(
                    f"{record.name}() is missing the argument {name!r}",
                    f"signature: {record.name}({', '.join(record.params)})",
                )
        if kwargs:
            bad = next(iter(kwargs))
            raise problem(
                f"{record.name}() got an unexpected keyword argument {bad!r}",
                f"signature: {record.name}({', '.join(record.params)})",
            )
        return bound

    def bind_varargs(self, record: B.Builtin, names, star: int, args, kwargs) -> list:
        """``f(*values, key=default, ...)``: the values, then each keyword-only argument."""
        keyword_only = names[star + 1:]
        if len(args) < star:
            raise problem(f"{record.name}() needs at least {star} arguments")
        unknown = [k for k in kwargs if k not in keyword_only]
        if unknown:
            allowed = ", ".join(keyword_only) or "none"
            raise problem(
                f"{record.name}() got an unexpected keyword argument {unknown[0]!r}",
                f"keyword arguments it takes: {allowed}",
            )
        defaults = record.defaults()[-len(keyword_only):] if keyword_only else []
        given = [kwargs.get(k) for k in keyword_only]
        return list(args) + [v if v is not None else Const(d) for v, d in zip(given, defaults)]

    def call_builtin(self, record: B.Builtin, args, kwargs=None):
        items = self.bind(record, args, dict(kwargs or {}))
        items = self.collapse_addresses(record, items)
        try:
            sig = record.rule(items, self.mode)
        except (TypeError, ValueError) as exc:
            raise problem(
                f"{record.name}: {exc}",
                f"{record.name} accepts: {record.accepts}" if record.accepts else "",
                JitValueError if isinstance(exc, ValueError) else JitTypeError,
            ) from None
        for header in record.includes:
            self.include(header)
        if record.cooperative:
            self.program.cooperative = True
        if record.min_arch:
            self.require_arch(record.min_arch, record.name)
        codes = []
        for item, target in zip(items, sig.args):
            if target is None:
                codes.append(item.code if isinstance(item, Value) else "")
            else:
                codes.append(self.convert(item, target).code)
        code = self.render(record, codes, sig, items)
        if isinstance(code, (Value, Const)):
            return code
        weak = record.keeps_weak and all(infer.is_weak(operand(i)) for i in items)
        return Value(code, sig.result, weak=weak)

    def render(self, record: B.Builtin, codes, sig, items):
        """The code of a checked builtin call: its record's template (a back end that
        emits another language, such as the simulator's, overrides only this)."""
        template = record.template
        if callable(template):
            return template(codes, sig, items, self)
        return template.format(*codes, T=sig.result.ctype)

    def collapse_addresses(self, record, items):
        if not record.address_of:
            return items
        out = list(items)
        for array_pos, index_pos in sorted(record.address_of, reverse=True):
            base = self.materialize(out[array_pos])
            index_item = out[index_pos]
            if isinstance(index_item, Const):
                _refuse_negative(
                    index_item.value if isinstance(index_item.value, tuple) else
                    (index_item.value,)
                )
            if isinstance(index_item, Const) and isinstance(index_item.value, tuple):
                indices = [self.materialize(Const(v)) for v in index_item.value]
            elif isinstance(index_item, Value) and isinstance(index_item.type, T.Tuple):
                indices = [
                    self.tuple_item(index_item, k) for k in range(len(index_item.type.items))
                ]
            else:
                indices = [self.materialize(index_item)]
            element = self.subscript(base, indices)
            out[array_pos : index_pos + 1] = [element]
        return out

    def cub_instance(self, cls: B.CubClass, args):
        if (
            len(args) != 1
            or not isinstance(args[0], Value)
            or getattr(args[0].type, "family", None) != "cub_storage"
        ):
            raise problem(
                f"{cls.cname} takes its TempStorage (e.g. temp[0] of "
                "jit.shared_memory(WarpReduce[T].TempStorage, 1))"
            )
        return Value(self.render_cub_instance(cls, args[0]), cls.instance_type)

    def render_cub_instance(self, cls: B.CubClass, storage: Value) -> str:
        """``WarpReduce[T](temp)``: a checked cub object over its TempStorage."""
        self.include(cls.template.include)
        return f"{cls.cname}({storage.code})"

    # -- conversions and helpers for builtin templates ----------------------

    def convert(self, item, target: T.Type) -> Value:
        if isinstance(item, Const):
            if not item.is_scalar:
                raise problem(f"{_describe_const(item.value)} is not a number")
            if target.is_complex if isinstance(target, T.Scalar) else False:
                self.need_complex()
            return Value(self.literal(item.value, target), target)
        if item.type == target:
            return item
        if isinstance(target, T.Scalar) and target.is_complex:
            self.need_complex()
        return Value(self.convert_code(item.code, item.type, target), target)

    def literal(self, value, t: T.Scalar) -> str:
        """The back end's constant ``value`` of type ``t`` (:func:`literal` checks range and kind)."""
        return literal(value, t)

    def convert_code(self, code: str, src: T.Type, dst: T.Type) -> str:
        """The back end's conversion of ``code`` from ``src`` to ``dst``."""
        return convert(code, src, dst)

    def to_float(self, t: T.Scalar, code: str) -> str:
        inner = call_argument(code, self.half_round(t)) if t.is_half else None
        return inner if inner is not None else self.convert_code(code, t, T.float32)

    def via_float(self, t: T.Scalar, code: str) -> str:
        """A float32 result as type ``t``; a half keeps its float32 value for the next operation."""
        if t.is_half:
            return f"{self.half_round(t)}({code})"
        return self.convert_code(code, T.float32, t)

    def half_round(self, t: T.Scalar) -> str:
        """The back end's function rounding a float32 to the half type ``t`` (_HALF_ROUND)."""
        return _HALF_ROUND[t.name]

    def zero(self, t: T.Scalar) -> str:
        return literal(0, t)

    def tuple_code(self, t: T.Tuple, codes) -> str:
        nested = "{}"
        for code in reversed(list(codes)):
            nested = f"{{{code}, {nested}}}"
        return f"{t.ctype}{nested}"

    def helper(self, name: str) -> str:
        """The back end's spelling of jitkern's run-time helper ``name`` (``jk::name``)."""
        return f"jk::{name}"

    def render_power(self, t: T.Scalar, a: str, b: str) -> str:
        """``a ** b`` of floats or complex numbers of type ``t``."""
        return f"{'powf' if t is T.float32 else 'pow'}({a}, {b})"

    def include(self, header: str) -> None:
        self.program.includes.add(header)
        return None

    def need_complex(self) -> None:
        self.program.includes.add("<jitkern/complex.cuh>")

    def require_arch(self, arch: int, what: str) -> None:
        self.program.min_arch = max(self.program.min_arch, arch)
        self.program.arch_needs.setdefault((what, self.span()), arch)

    def span(self) -> str:
        """``file:LINE:COL-ENDCOL`` of the expression being emitted (else its statement):
        where an arch requirement is reported, with a caret, when the target is older."""
        node = self.current_expr or getattr(self, "current_statement", None)
        if node is None:
            return self.source.filename
        line, col = self.source.position(node)
        end = col + 1
        if getattr(node, "end_lineno", None) == getattr(node, "lineno", None):
            end = node.end_col_offset + self.source.indent + 1
        return f"{self.source.filename}:{line}:{col}-{end}"

    def where(self) -> str:
        """``file:line`` of the statement being emitted."""
        node = getattr(self, "current_statement", None)
        if node is None:
            return self.source.filename
        return f"{self.source.filename}:{self.source.position(node)[0]}"

    def group_sync(self, item, code: str) -> str:
        if getattr(item.type, "family", None) == "grid":
            self.program.cooperative = True
        return f"cooperative_groups::sync({code})"


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
    return str(item.type) if isinstance(item, Value) else _describe_const(getattr(item, "value", item))


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
