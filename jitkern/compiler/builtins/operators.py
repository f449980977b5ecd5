"""Operators: AST operator name -> record (the emitter maps ast classes to these names)."""

from __future__ import annotations

import dataclasses

from ...errors import JitkernTypeError
from .. import infer
from .. import types as T
from ..values import Const, operand
from .records import NEUTRAL, Builtin, Sig


def _arith_rule(symbol):
    def rule(items, mode):
        t = infer.arithmetic_type([operand(i) for i in items], mode, symbol)
        return Sig((t,) * len(items), t)

    return rule


def _real_arith_rule(symbol):
    arith = _arith_rule(symbol)

    def rule(items, mode):
        sig = arith(items, mode)
        if sig.result.is_complex:
            raise JitkernTypeError("complex numbers have no floor division or remainder")
        return sig

    return rule


def _truediv_rule(items, mode):
    t = infer.true_divide_type([operand(i) for i in items], mode)
    return Sig((t, t), t)


def _int_rule(name):
    def rule(items, mode):
        t = infer.integer_type([operand(i) for i in items], mode, name)
        return Sig((t,) * len(items), t)

    return rule


def _compare_rule(name):
    def rule(items, mode):
        t = infer.result_type([operand(i) for i in items], mode)
        if t.is_complex and name not in ("==", "!="):
            raise JitkernTypeError("complex numbers are not ordered")
        return Sig((t, t), T.bool_)

    return rule


def _python_div_template(helper):
    def template(codes, sig, items, ctx):
        t = sig.result
        if t.is_half:
            return ctx.via_float(
                t, f"jk::{helper}({ctx.to_float(t, codes[0])}, {ctx.to_float(t, codes[1])})"
            )
        prefix = "u" if t.kind in "ub" else ""
        return f"jk::{prefix}{helper}({codes[0]}, {codes[1]})"

    return template


def _pow_op_template(codes, sig, items, ctx):
    t = sig.result
    exponent = items[1]
    if t.is_complex:
        ctx.need_complex()
    if isinstance(exponent, Const) and exponent.value == 2 and not t.is_complex:
        if t.is_half:  # squared in float32, like every half operation
            return ctx.via_float(t, f"{ctx.helper('pow2')}({ctx.to_float(t, codes[0])})")
        return f"{ctx.helper('pow2')}({codes[0]})"
    if t.kind in "iu":
        return f"{ctx.helper('uipow' if t.kind == 'u' else 'ipow')}({codes[0]}, {codes[1]})"
    if t.is_half:
        a, b = ctx.to_float(t, codes[0]), ctx.to_float(t, codes[1])
        return ctx.via_float(t, ctx.render_power(T.float32, a, b))
    return ctx.render_power(t, codes[0], codes[1])


#: bool + bool and bool * bool in numpy mode: NumPy's logical or / and, kept a bool in C++.
_BOOL_SYMBOLS = {"+": "||", "*": "&&"}


def _c_binary(symbol):
    def template(codes, sig, items, ctx):
        if sig.args[0] is not None and getattr(sig.args[0], "is_complex", False):
            ctx.need_complex()
        t = sig.result
        arg_t = sig.args[0]
        if getattr(arg_t, "is_half", False):
            # half operands are computed in float32 and rounded once, where stored
            code = f"({ctx.to_float(arg_t, codes[0])} {symbol} {ctx.to_float(arg_t, codes[1])})"
            return ctx.via_float(t, code) if t.is_half else code
        op = _BOOL_SYMBOLS.get(symbol, symbol) if t is T.bool_ else symbol
        code = f"({codes[0]} {op} {codes[1]})"
        if t.kind in "iu" and t.itemsize < 4:
            # C++ computes narrow ints as int: wrap to the type here, as NumPy does, not
            # only where the value is stored (int8 100 * 2 / 3 is -18.67, not 66.67)
            return f"(({t.ctype}){code})"
        return code

    return template


def _py_binary(symbol):
    """The simulator's: NumPy scalars compute as the C++ does; half through float32."""

    def template(codes, sig, items, ctx):
        arg_t = sig.args[0]
        if getattr(arg_t, "is_half", False):  # computed in float32, rounded where stored
            a, b = ctx.to_float(arg_t, codes[0]), ctx.to_float(arg_t, codes[1])
            code = f"({a} {symbol} {b})"
            return ctx.via_float(sig.result, code) if sig.result.is_half else code
        op = symbol
        if sig.result is T.bool_ and symbol in ("+", "*"):
            op = "|" if symbol == "+" else "&"  # NumPy's logical or / and on bools
        return f"({codes[0]} {op} {codes[1]})"

    return template


def _py_half_safe(symbol):
    """The simulator's // and %: NumPy's on the operands' type (Python's floor and sign
    rules, x // 0 == 0 for ints); float16 through float32, as the C++ does."""

    def template(codes, sig, items, ctx):
        t = sig.result
        if t.is_half:
            a, b = ctx.to_float(t, codes[0]), ctx.to_float(t, codes[1])
            return ctx.via_float(t, f"({a} {symbol} {b})")
        return f"({codes[0]} {symbol} {codes[1]})"

    return template


def _op(name, symbol, rule, template=None, doc="", py=None):
    return Builtin(
        f"operator {symbol}",
        ("a", "b"),
        "numbers",
        rule,
        template or _c_binary(symbol),
        doc,
        "operators",
        keeps_weak=True,
        py=py or _py_binary(symbol),
    )


OPERATORS = {
    "Add": _op(
        "Add",
        "+",
        _arith_rule("+"),
        doc="Addition (bool + bool: an int; on typed bools in numpy mode, NumPy's logical or).",
    ),
    "Sub": _op(
        "Sub", "-", _arith_rule("-"), doc="Subtraction (numpy mode refuses typed bools, as NumPy)."
    ),
    "Mult": _op("Mult", "*", _arith_rule("*"), doc="Multiplication."),
    "Div": _op("Div", "/", _truediv_rule, doc="True division: ints give a float."),
    "FloorDiv": _op(
        "FloorDiv",
        "//",
        _real_arith_rule("//"),
        _python_div_template("floordiv"),
        "Floor division (Python: rounds toward -inf; x // 0 is 0 for ints).",
        py=_py_half_safe("//"),
    ),
    "Mod": _op(
        "Mod",
        "%",
        _real_arith_rule("%"),
        _python_div_template("mod"),
        "Remainder with the sign of the divisor (Python); x % 0 is 0 for ints.",
        py=_py_half_safe("%"),
    ),
    "Pow": _op(
        "Pow",
        "**",
        _arith_rule("**"),
        _pow_op_template,
        "Power; int ** int stays an int, x ** 2 is x * x.",
        py=NEUTRAL,
    ),
    "LShift": _op("LShift", "<<", _int_rule("<<"), doc="Left shift (integers)."),
    "RShift": _op("RShift", ">>", _int_rule(">>"), doc="Right shift (integers)."),
    "BitAnd": _op("BitAnd", "&", _int_rule("&"), doc="Bitwise and (integers, bools)."),
    "BitOr": _op("BitOr", "|", _int_rule("|"), doc="Bitwise or (integers, bools)."),
    "BitXor": _op("BitXor", "^", _int_rule("^"), doc="Bitwise xor (integers, bools)."),
    "Eq": _op("Eq", "==", _compare_rule("=="), doc="Comparisons chain: a < b < c."),
    "NotEq": _op("NotEq", "!=", _compare_rule("!="), doc="Comparison."),
    "Lt": _op("Lt", "<", _compare_rule("<"), doc="Comparison."),
    "LtE": _op("LtE", "<=", _compare_rule("<="), doc="Comparison."),
    "Gt": _op("Gt", ">", _compare_rule(">"), doc="Comparison."),
    "GtE": _op("GtE", ">=", _compare_rule(">="), doc="Comparison."),
}

#: numpy.power is the ** operator (int ** int stays an int); math.pow is the float one.
numpy_power = dataclasses.replace(
    OPERATORS["Pow"],
    name="numpy.power",
    params=("x1", "x2"),
    doc="x1 ** x2, as the ** operator (int ** int stays an int).",
    group="math",
    keeps_weak=False,
)
