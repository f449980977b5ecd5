"""Math functions: one table; each row maps Python and NumPy names to CUDA."""

from __future__ import annotations

import cmath
import dataclasses
import math

import numpy

from ...errors import JitkernTypeError
from .. import infer
from .. import types as T
from ..values import Value, operand
from .pyfuncs import minmax_rule, minmax_template
from . import simspell
from .records import Builtin, NEUTRAL, Sig, numeric


@dataclasses.dataclass(frozen=True)
class _MathRow:
    names: tuple  # 'math.sqrt', 'numpy.sqrt', ...
    nargs: int
    f32: str  # CUDA function for float (and, through float, float16/bfloat16)
    f64: str  # CUDA function for double
    result: str = "float"  # 'float': the argument's float type; 'bool'
    complex_fn: str | None = None  # overload in jitkern/complex.cuh
    doc: str = ""
    # numpy mode: integers and bools pass through unchanged (NumPy >= 2.1's floor/ceil/trunc)
    keeps_integers: bool = False


def _m(names, f32, f64, doc, nargs=1, result="float", complex_fn=None, keeps_integers=False):
    return _MathRow(tuple(names.split()), nargs, f32, f64, result, complex_fn, doc, keeps_integers)


_MATH_ROWS = (
    _m("math.sqrt numpy.sqrt cmath.sqrt", "sqrtf", "sqrt", "Square root.", complex_fn="sqrt"),
    _m("math.cbrt numpy.cbrt", "cbrtf", "cbrt", "Cube root."),
    _m("math.exp numpy.exp cmath.exp", "expf", "exp", "e ** x.", complex_fn="exp"),
    _m("math.exp2 numpy.exp2", "exp2f", "exp2", "2 ** x."),
    _m("math.expm1 numpy.expm1", "expm1f", "expm1", "exp(x) - 1, accurate near 0."),
    _m("math.log numpy.log cmath.log", "logf", "log", "Natural logarithm.", complex_fn="log"),
    _m("math.log2 numpy.log2", "log2f", "log2", "Base-2 logarithm."),
    _m("math.log10 numpy.log10 cmath.log10", "log10f", "log10", "Base-10 logarithm.",
       complex_fn="log10"),
    _m("math.log1p numpy.log1p", "log1pf", "log1p", "log(1 + x), accurate near 0."),
    _m("math.sin numpy.sin cmath.sin", "sinf", "sin", "Sine.", complex_fn="sin"),
    _m("math.cos numpy.cos cmath.cos", "cosf", "cos", "Cosine.", complex_fn="cos"),
    _m("math.tan numpy.tan cmath.tan", "tanf", "tan", "Tangent.", complex_fn="tan"),
    _m("math.asin numpy.arcsin cmath.asin", "asinf", "asin", "Arc sine.", complex_fn="asin"),
    _m("math.acos numpy.arccos cmath.acos", "acosf", "acos", "Arc cosine.", complex_fn="acos"),
    _m("math.atan numpy.arctan cmath.atan", "atanf", "atan", "Arc tangent.", complex_fn="atan"),
    _m("math.sinh numpy.sinh cmath.sinh", "sinhf", "sinh", "Hyperbolic sine.", complex_fn="sinh"),
    _m("math.cosh numpy.cosh cmath.cosh", "coshf", "cosh", "Hyperbolic cosine.", complex_fn="cosh"),
    _m(
        "math.tanh numpy.tanh cmath.tanh", "tanhf", "tanh", "Hyperbolic tangent.", complex_fn="tanh"
    ),
    _m("math.asinh numpy.arcsinh cmath.asinh", "asinhf", "asinh", "Inverse hyperbolic sine.",
       complex_fn="asinh"),
    _m("math.acosh numpy.arccosh cmath.acosh", "acoshf", "acosh", "Inverse hyperbolic cosine.",
       complex_fn="acosh"),
    _m("math.atanh numpy.arctanh cmath.atanh", "atanhf", "atanh", "Inverse hyperbolic tangent.",
       complex_fn="atanh"),
    _m("math.erf", "erff", "erf", "Error function."),
    _m("math.erfc", "erfcf", "erfc", "Complementary error function."),
    _m("math.lgamma", "lgammaf", "lgamma", "log(abs(gamma(x)))."),
    _m("math.gamma", "tgammaf", "tgamma", "Gamma function."),
    _m(
        "numpy.floor",
        "floorf",
        "floor",
        "Largest integer <= x (a float; numpy mode keeps ints, as NumPy).",
        keeps_integers=True,
    ),
    _m(
        "numpy.ceil",
        "ceilf",
        "ceil",
        "Smallest integer >= x (a float; numpy mode keeps ints, as NumPy).",
        keeps_integers=True,
    ),
    _m(
        "numpy.trunc",
        "truncf",
        "trunc",
        "x rounded toward zero (a float; numpy mode keeps ints, as NumPy).",
        keeps_integers=True,
    ),
    _m("numpy.rint numpy.round", "rintf", "rint", "x rounded to the nearest even integer."),
    _m("math.fabs numpy.fabs", "fabsf", "fabs", "Absolute value as a float."),
    _m("math.atan2 numpy.arctan2", "atan2f", "atan2", "Arc tangent of y / x.", nargs=2),
    _m("math.hypot numpy.hypot", "hypotf", "hypot", "sqrt(x*x + y*y) without overflow.", nargs=2),
    _m("math.copysign numpy.copysign", "copysignf", "copysign", "|x| with the sign of y.", nargs=2),
    _m("math.fmod numpy.fmod", "fmodf", "fmod", "C remainder (sign of x).", nargs=2),
    _m("math.pow", "powf", "pow", "x ** y (as a float; complex.cuh's pow for complex).", nargs=2,
       complex_fn="pow"),
    _m("numpy.fmin", "fminf", "fmin", "Minimum, ignoring NaN.", nargs=2),
    _m("numpy.fmax", "fmaxf", "fmax", "Maximum, ignoring NaN.", nargs=2),
    _m(
        "math.nextafter numpy.nextafter",
        "nextafterf",
        "nextafter",
        "Next float after x toward y.",
        nargs=2,
    ),
    _m("math.fma", "fmaf", "fma", "x * y + z with one rounding.", nargs=3),
    _m("math.isnan numpy.isnan cmath.isnan", "isnan", "isnan", "Whether x is NaN.", result="bool",
       complex_fn="isnan"),
    _m(
        "math.isinf numpy.isinf cmath.isinf",
        "isinf",
        "isinf",
        "Whether x is infinite.",
        result="bool",
        complex_fn="isinf",
    ),
    _m(
        "math.isfinite numpy.isfinite cmath.isfinite",
        "isfinite",
        "isfinite",
        "Whether x is finite.",
        result="bool",
        complex_fn="isfinite",
    ),
    _m("numpy.signbit", "signbit", "signbit", "Whether the sign bit is set.", result="bool"),
)


def _math_rule(row: _MathRow):
    def rule(items, mode):
        ops = [operand(i) for i in items]
        t = infer.result_type(ops, mode)
        if t.is_complex and row.complex_fn is None:
            raise JitkernTypeError(f"{row.names[0]} does not take complex numbers")
        if row.keeps_integers and mode == "numpy" and t.kind in "biu":
            return Sig((t,) * len(items), t)
        compute = t if t.is_complex else infer.math_type(ops, mode)
        result = T.bool_ if row.result == "bool" else compute
        return Sig((compute,) * len(items), result)

    return rule


def _math_template(row: _MathRow):
    def template(codes, sig, items, ctx):
        t = sig.args[0]
        if row.keeps_integers and t.kind in "biu":
            return codes[0]
        if t.is_complex:
            ctx.need_complex()
            return f"{row.complex_fn}({', '.join(codes)})"
        if t.is_half:
            args = ", ".join(ctx.to_float(t, c) for c in codes)
            call = f"{row.f32}({args})"
            return call if row.result == "bool" else ctx.via_float(t, call)
        fn = row.f32 if t is T.float32 else row.f64
        return f"{fn}({', '.join(codes)})"

    return template


#: C's math function (the rows' f64 name) -> the NumPy ufunc the simulator calls; the
#: functions NumPy lacks use Python's math on doubles (:data:`_PY_MATH`).
_NUMPY_MATH = {
    "sqrt": "sqrt",
    "cbrt": "cbrt",
    "exp": "exp",
    "exp2": "exp2",
    "expm1": "expm1",
    "log": "log",
    "log2": "log2",
    "log10": "log10",
    "log1p": "log1p",
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "asin": "arcsin",
    "acos": "arccos",
    "atan": "arctan",
    "sinh": "sinh",
    "cosh": "cosh",
    "tanh": "tanh",
    "asinh": "arcsinh",
    "acosh": "arccosh",
    "atanh": "arctanh",
    "floor": "floor",
    "ceil": "ceil",
    "trunc": "trunc",
    "rint": "rint",
    "fabs": "fabs",
    "atan2": "arctan2",
    "hypot": "hypot",
    "copysign": "copysign",
    "fmod": "fmod",
    "pow": "power",
    "fmin": "fmin",
    "fmax": "fmax",
    "nextafter": "nextafter",
    "isnan": "isnan",
    "isinf": "isinf",
    "isfinite": "isfinite",
    "signbit": "signbit",
}
_PY_MATH = {"erf": "erf", "erfc": "erfc", "lgamma": "lgamma", "tgamma": "gamma"}


def _math_py(row: _MathRow):
    to_bool = row.result == "bool"

    def template(codes, sig, items, ctx):
        t = sig.args[0]
        if row.keeps_integers and t.kind in "biu":
            return codes[0]
        if row.f64 == "fma":
            return simspell.halfwise(t, ctx, codes, lambda cs: f"_jk_fma({', '.join(cs)})", to_bool)
        if row.f64 in _PY_MATH:
            fn = f"_jk_math.{_PY_MATH[row.f64]}"
            typed = f"_jk_t_{simspell.calc(t)}"
            return simspell.halfwise(
                t, ctx, codes, lambda cs: f"_jk_via_math({fn}, {cs[0]}, {typed})", to_bool
            )
        fn = f"_jk_np.{_NUMPY_MATH[row.f64]}"
        return simspell.halfwise(t, ctx, codes, lambda cs: f"{fn}({', '.join(cs)})", to_bool)

    return template


def _math_builtin(row: _MathRow) -> Builtin:
    params = ("x", "y", "z")[: row.nargs]
    accepts = "real numbers" + (", complex" if row.complex_fn else "")
    doc = row.doc + (f" Also {', '.join(row.names[1:])}." if len(row.names) > 1 else "")
    return Builtin(
        row.names[0],
        params,
        accepts,
        _math_rule(row),
        _math_template(row),
        doc,
        "math",
        fold=resolve_py(row.names[0]),
        py=_math_py(row),
    )


MODULES = {"math": math, "numpy": numpy, "cmath": cmath}


def resolve_py(dotted: str):
    module, _, attr = dotted.partition(".")
    return getattr(MODULES[module], attr, None)


MATH = [(_math_builtin(row), row) for row in _MATH_ROWS]


def _square_template(codes, sig, items, ctx):
    return f"jk::pow2({codes[0]})"


def same_numeric(items, mode):
    t = numeric(items[0], mode)
    return Sig((t,), t)


def _square_rule(items, mode):
    t = numeric(items[0], mode)
    if t is T.bool_ and mode == "numpy":
        t = infer.numpy_bool_loop("**")  # NumPy squares bools (Python's too) in its int8 loop
    return Sig((t,), t)


square = Builtin(
    "numpy.square", ("x",), "any number", _square_rule, _square_template, "x * x.", "math",
    py="_jk_square({0})",
)


def _negative_rule(items, mode):
    t = numeric(items[0], mode)
    if t is T.bool_:
        if mode == "numpy":
            raise JitkernTypeError("NumPy has no negative of bools; use ~x or numpy.logical_not(x)")
        t = infer.literal_type(0, mode)
    return Sig((t,), t)


def _negative_template(codes, sig, items, ctx):
    return ctx.render_negative(Value(codes[0], sig.result))  # as unary minus


negative = Builtin(
    "numpy.negative",
    ("x",),
    "any number (not bool in numpy mode)",
    _negative_rule,
    _negative_template,
    "-x.",
    "math",
    py=NEUTRAL,
)


def _where_rule(items, mode):
    t = infer.result_type([operand(items[1]), operand(items[2])], mode)
    return Sig((T.bool_, t, t), t)


def _where_template(codes, sig, items, ctx):
    if sig.result.is_complex:
        ctx.need_complex()
    return f"({codes[0]} ? {codes[1]} : {codes[2]})"


def _where_py(codes, sig, items, ctx):
    return f"({codes[1]} if {codes[0]} else {codes[2]})"


where = Builtin(
    "numpy.where",
    ("condition", "x", "y"),
    "a condition (any number) and two numbers",
    _where_rule,
    _where_template,
    "x where condition is true, else y; x and y promote together (as NumPy).",
    "math",
    py=_where_py,
)
numpy_minimum = Builtin(
    "numpy.minimum",
    ("a", "b"),
    "real numbers",
    minmax_rule,
    minmax_template("npmin"),
    "Minimum, propagating NaN.",
    "math",
    py=NEUTRAL,
)
numpy_maximum = Builtin(
    "numpy.maximum",
    ("a", "b"),
    "real numbers",
    minmax_rule,
    minmax_template("npmax"),
    "Maximum, propagating NaN.",
    "math",
    py=NEUTRAL,
)


def _conj_template(codes, sig, items, ctx):
    if sig.result.is_complex:
        ctx.need_complex()
        return f"conj({codes[0]})"
    return codes[0]


def _conj_py(codes, sig, items, ctx):
    return f"{codes[0]}.conjugate()" if sig.result.is_complex else codes[0]


conj = Builtin(
    "numpy.conj",
    ("x",),
    "any number",
    same_numeric,
    _conj_template,
    "Complex conjugate (x itself for real x).",
    "math",
    py=_conj_py,
)


def _real_part_rule(items, mode):
    t = numeric(items[0], mode)
    return Sig((t,), T.complex_part(t))


def _part_template(part):
    def template(codes, sig, items, ctx):
        t = sig.args[0]
        if t.is_complex:
            ctx.need_complex()
            return f"{codes[0]}.{part}()"
        return codes[0] if part == "real" else ctx.zero(t)

    return template


def _part_py(part):
    def template(codes, sig, items, ctx):
        t = sig.args[0]
        if t.is_complex:
            return f"{codes[0]}.{part}"
        return codes[0] if part == "real" else ctx.zero(t)

    return template


real = Builtin(
    ".real",
    ("x",),
    "any number",
    _real_part_rule,
    _part_template("real"),
    "Real part (x.real, numpy.real(x)).",
    "complex",
    attribute=True,
    py=_part_py("real"),
)
imag = Builtin(
    ".imag",
    ("x",),
    "any number",
    _real_part_rule,
    _part_template("imag"),
    "Imaginary part (x.imag, numpy.imag(x)); 0 for real x.",
    "complex",
    attribute=True,
    py=_part_py("imag"),
)
conjugate = Builtin(
    ".conjugate",
    ("x",),
    "any number",
    same_numeric,
    _conj_template,
    "Complex conjugate (x.conjugate()).",
    "complex",
    py=_conj_py,
)


#: Methods and attributes of numbers.
COMPLEX_METHODS = {
    ("scalar", "real"): real,
    ("scalar", "imag"): imag,
    ("scalar", "conjugate"): conjugate,
    ("scalar", "conj"): conjugate,
}
