"""Python's builtins and NumPy scalar types as casts (the emitter maps Python's own
objects to these records)."""

from __future__ import annotations

import builtins as _py

from ...errors import JitkernTypeError
from .. import infer
from .. import types as T
from ..values import operand
from .records import Builtin, NEUTRAL, Sig, fixed, numeric


def _cast_rule(target_of):
    def rule(items, mode):
        target = target_of(items, mode)
        src = operand(items[-1]) if items else None
        if isinstance(src, T.Scalar) and src.is_complex and not target.is_complex:
            raise JitkernTypeError(f"cannot convert {src} to {target}; take .real or abs() first")
        return Sig((None,) * (len(items) - 1) + (target,), target)

    return rule


def _dtype_target(items, mode):
    return T.scalar_from_dtype(items[0].value)


dtype_cast = Builtin(
    "numpy.<dtype>",
    ("dtype", "x"),
    "any number",
    _cast_rule(_dtype_target),
    "{1}",
    "numpy.float32(x), x.dtype.type(x), ...: convert x to that type.",
    "python",
    py=NEUTRAL,
)
int_cast = Builtin(
    "int",
    ("x",),
    "any real number",
    _cast_rule(lambda items, mode: infer.literal_type(0, mode)),
    "{0}",
    "Convert to the mode's int (int32 in cuda mode, int64 in numpy mode); truncates toward zero.",
    "python",
    fold=int,
    py=NEUTRAL,
)
float_cast = Builtin(
    "float",
    ("x",),
    "any real number",
    _cast_rule(lambda items, mode: infer.literal_type(0.0, mode)),
    "{0}",
    "Convert to the mode's float (float32 / float64).",
    "python",
    fold=float,
    py=NEUTRAL,
)
bool_cast = Builtin(
    "bool",
    ("x",),
    "any number",
    fixed(T.bool_, result=T.bool_),
    "{0}",
    "Truth value (x != 0).",
    "python",
    fold=bool,
    py=NEUTRAL,
)


def _complex_rule(items, mode):
    target = infer.literal_type(0j, mode)
    parts = [numeric(i, mode) for i in items]
    if any(p.is_complex for p in parts) and len(items) > 1:
        raise JitkernTypeError("complex(re, im) takes real parts")
    if any(p is T.float64 or p is T.complex128 for p in parts):
        target = T.complex128
    part = T.complex_part(target)
    if len(items) == 1:
        return Sig((target,), target)
    return Sig((part, part), target)


def _complex_template(codes, sig, items, ctx):
    ctx.need_complex()
    if len(codes) == 1:
        return codes[0]
    return f"{sig.result.ctype}({codes[0]}, {codes[1]})"


def _complex_py(codes, sig, items, ctx):
    if len(codes) == 1:
        return codes[0]
    return f"_jk_complex(_jk_t_{sig.result.name}, {codes[0]}, {codes[1]})"


complex_cast = Builtin(
    "complex",
    ("real", "imag=0"),
    "real numbers",
    _complex_rule,
    _complex_template,
    "Make a complex number (complex64 in cuda mode, "
    "complex128 in numpy mode, or when a part is float64).",
    "python",
    fold=complex,
    py=_complex_py,
)


def _len_rule(items, mode):
    return Sig((None,), T.int64)


def _len_template(codes, sig, items, ctx):
    return ctx.array_shape(items[0], 0)


len_ = Builtin(
    "len", ("x",), "array", _len_rule, _len_template, "x.shape[0].", "python", py=NEUTRAL
)


def _abs_rule(items, mode):
    t = numeric(items[0], mode)
    result = T.complex_part(t) if t.is_complex else t
    return Sig((t,), result)


def _abs_template(codes, sig, items, ctx):
    t = numeric(items[0], ctx.mode)
    x = codes[0]
    if t.kind in "bu":
        return x
    if t.is_complex:
        ctx.need_complex()
        return f"abs({x})"
    if t.is_half:
        return ctx.via_float(t, f"fabsf({ctx.to_float(t, x)})")
    fn = {"float32": "fabsf", "float64": "fabs", "int64": "llabs"}.get(t.name, "abs")
    call = f"{fn}({x})"
    return call if t.itemsize >= 4 else f"(({t.ctype}){call})"


def _abs_py(codes, sig, items, ctx):
    t = sig.args[0]
    if t.kind in "bu":
        return codes[0]
    if t.is_half:
        return ctx.via_float(t, f"abs({ctx.to_float(t, codes[0])})")
    return f"abs({codes[0]})"


abs_ = Builtin(
    "abs",
    ("x",),
    "any number",
    _abs_rule,
    _abs_template,
    "Absolute value (of a complex: its magnitude).",
    "python",
    fold=abs,
    py=_abs_py,
)


def minmax_rule(items, mode):
    if len(items) < 2:
        raise JitkernTypeError("needs at least two arguments")
    ops = [operand(i) for i in items]
    t = infer.result_type(ops, mode)
    if t.is_complex:
        raise JitkernTypeError("complex numbers are not ordered")
    return Sig((t,) * len(items), t)


def minmax_template(helper):
    def template(codes, sig, items, ctx):
        out = codes[0]
        for c in codes[1:]:
            out = f"{ctx.helper(helper)}({out}, {c})"
        return out

    return template


min_ = Builtin(
    "min",
    ("a", "b", "*more"),
    "real numbers",
    minmax_rule,
    minmax_template("pymin"),
    "Smallest argument (Python semantics: NaN only if first).",
    "python",
    fold=_py.min,
    py=NEUTRAL,
)
max_ = Builtin(
    "max",
    ("a", "b", "*more"),
    "real numbers",
    minmax_rule,
    minmax_template("pymax"),
    "Largest argument (Python semantics).",
    "python",
    fold=_py.max,
    py=NEUTRAL,
)


def _range_rule(items, mode):
    raise JitkernTypeError("range() can only be used as the iterable of a for loop")


range_ = Builtin(
    "range",
    ("start", "stop=None", "step=1"),
    "integers",
    _range_rule,
    "",
    "Loop range (for loops only); any step, negative too.",
    "python",
    py=NEUTRAL,
)
jit_range = Builtin(
    "range",
    ("start", "stop=None", "step=1", "unroll=None"),
    "integers",
    _range_rule,
    "",
    "Like range, with unroll=N/True/False emitted as #pragma unroll.",
    "python",
    py=NEUTRAL,
)


def _print_rule(items, mode):
    return Sig((None,) * len(items), T.void)


def _print_template(codes, sig, items, ctx):
    *values, sep, end = items
    return ctx.printf(values, codes[:-2], sep, end)


print_ = Builtin(
    "print",
    ("*values", "sep=' '", "end='\\n'"),
    "numbers and strings; sep and end: constant strings",
    _print_rule,
    _print_template,
    "Device printf of the values, separated by sep, ended by end.",
    "python",
    py=NEUTRAL,
)


def _pow_template(codes, sig, items, ctx):
    # The ** operator's own value: its type (and weakness) come from the operator's rule.
    return ctx.binary("Pow", items[0], items[1])


pow_ = Builtin(
    "pow",
    ("base", "exp"),
    "numbers",
    lambda items, mode: Sig((None, None), T.void),
    _pow_template,
    "Same as base ** exp.",
    "python",
    fold=_py.pow,
    py=NEUTRAL,
)
