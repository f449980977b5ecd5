"""Lowering's ground: the compile problem raised inside it, constant folding, and
the C++ spelling of constants and conversions (pure functions).
"""

from __future__ import annotations

import ast
import math
import operator

import numpy

from ...errors import JitTypeError
from .. import types as T


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
