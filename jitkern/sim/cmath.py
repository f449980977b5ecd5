"""C's math functions in the C subset (:mod:`.ctranslate`): ``sqrtf``, ``pow``, ``fmin``,
``isnan``, ``ldexp``, min/max, and the bit casts of constants (``__longlong_as_double``).
Each is the JIT's math builtin of the same name (whose simulation is NumPy's function),
in the float type C's overloads pick; :func:`handler` gives the function of a C name.

Each takes ``(translator, C name, translated arguments, node)`` and returns the Val of the
call, as :mod:`.ccomplex`'s do.
"""

from __future__ import annotations

import math

import numpy

from . import ccomplex
from .csubset import BOOL, F32, F64, I32, I64, U32, Val, common, ctor, float_text, int_value

#: One-argument math functions: C name -> (JIT spelling, the float type it forces or None).
_MATH1 = {}
for _name, _jit in [
    ("sin", "math.sin"), ("cos", "math.cos"), ("tan", "math.tan"), ("asin", "math.asin"),
    ("acos", "math.acos"), ("atan", "math.atan"), ("sinh", "math.sinh"),
    ("cosh", "math.cosh"), ("tanh", "math.tanh"), ("asinh", "math.asinh"),
    ("acosh", "math.acosh"), ("atanh", "math.atanh"), ("exp", "math.exp"),
    ("exp2", "math.exp2"), ("expm1", "math.expm1"), ("log", "math.log"),
    ("log2", "math.log2"), ("log10", "math.log10"), ("log1p", "math.log1p"),
    ("sqrt", "math.sqrt"), ("cbrt", "math.cbrt"), ("erf", "math.erf"),
    ("erfc", "math.erfc"), ("lgamma", "math.lgamma"), ("tgamma", "math.gamma"),
    ("fabs", "math.fabs"), ("floor", "numpy.floor"), ("ceil", "numpy.ceil"),
    ("trunc", "numpy.trunc"), ("rint", "numpy.rint"), ("nearbyint", "numpy.rint"),
    ("round", "_c_round"), ("rsqrt", "rsqrt"),
]:
    _MATH1[_name] = (_jit, None)
    _MATH1[_name + "f"] = (_jit, F32)
    _MATH1["__" + _name + "f"] = (_jit, F32)
_MATH2 = {}
for _name, _jit in [
    ("pow", "math.pow"), ("atan2", "math.atan2"), ("fmod", "math.fmod"),
    ("hypot", "math.hypot"), ("copysign", "math.copysign"), ("fmin", "numpy.fmin"),
    ("fmax", "numpy.fmax"), ("nextafter", "math.nextafter"), ("fdivide", "/"),
]:
    _MATH2[_name] = (_jit, None)
    _MATH2[_name + "f"] = (_jit, F32)
    _MATH2["__" + _name + "f"] = (_jit, F32)
#: The math functions complex.cuh also defines for complex numbers.
_COMPLEX_MATH1 = {f"math.{n}" for n in ("sin cos tan sinh cosh tanh exp log sqrt log10 asin acos "
                                        "atan asinh acosh atanh").split()}
_PREDICATES = {"isnan": "math.isnan", "isinf": "math.isinf", "isfinite": "math.isfinite",
               "signbit": "numpy.signbit"}

#: Bit casts (reinterpret the bits of a constant): name -> (argument type, result type)
_BITCASTS = {"__longlong_as_double": (I64, F64), "__double_as_longlong": (F64, I64),
             "__int_as_float": (I32, F32), "__uint_as_float": (U32, F32),
             "__float_as_int": (F32, I32), "__float_as_uint": (F32, U32)}

def _constant(node):
    """The value of a literal (or a negated one), None for any other expression."""
    negate = type(node).__name__ == "UnaryOp" and node.op == "-"
    if negate:
        node = node.expr
    if type(node).__name__ != "Constant" or node.type in ("string", "char"):
        return None
    text = node.value.lower()
    if "float" in node.type or "double" in node.type:
        value = float.fromhex(text.rstrip("fl")) if text.startswith("0x") else float(
            text.rstrip("fl"))
    else:
        value = int_value(text.rstrip("ul"))
    return -value if negate else value


def math1(tr, name, args, node) -> Val:
    tr.nargs(name, args, 1, node)
    spelling, forced = _MATH1[name]
    t = tr.float_type(args[0].type, forced)
    x = tr.to(args[0], t, node)
    if t.kind == "c" and spelling not in _COMPLEX_MATH1:
        raise tr.refuse(f"{name}() of a complex number", node)
    if spelling == "rsqrt":
        return Val(f"({ctor(t)}(1) / math.sqrt({x}))", t)
    return Val(f"{spelling}({x})", t)



def math2(tr, name, args, node) -> Val:
    tr.nargs(name, args, 2, node)
    spelling, forced = _MATH2[name]
    t = tr.float_type(common(args[0].type, args[1].type), forced)
    if t.kind == "c" and spelling == "math.pow":
        return ccomplex.power(tr, name, args, node)
    if t.kind == "c":
        raise tr.refuse(f"{name}() of a complex number", node)
    x, y = tr.to(args[0], t, node), tr.to(args[1], t, node)
    if spelling == "/":
        return Val(f"({x} / {y})", t)
    return Val(f"{spelling}({x}, {y})", t)



def ldexp(tr, name, args, node) -> Val:
    """x * 2**n, as NumPy's ldexp loop for (x's float type, int32) computes it."""
    tr.nargs(name, args, 2, node)
    t = tr.float_type(args[0].type, F32 if name == "ldexpf" else None)
    if t.kind == "c" or args[1].type.kind not in "biu":
        raise tr.refuse(f"{name}() of these types", node)
    x, n = tr.to(args[0], t, node), tr.to(args[1], I32, node)
    return Val(f"jit.ufunc.ldexp({x}, {n})", t)



def predicate(tr, name, args, node) -> Val:
    tr.nargs(name, args, 1, node)
    t = tr.float_type(args[0].type, None)
    return Val(f"{_PREDICATES[name]}({tr.to(args[0], t, node)})", BOOL)



def minmax(tr, name, args, node) -> Val:
    tr.nargs(name, args, 2, node)
    t = common(args[0].type, args[1].type)
    x, y = tr.to(args[0], t, node), tr.to(args[1], t, node)
    if t.kind == "f":  # CUDA's float min/max are fminf/fmaxf
        return Val(f"numpy.f{name}({x}, {y})", t)
    return Val(f"{name}({x}, {y})", t)



def bitcast(tr, name, args, node) -> Val:
    """``__longlong_as_double(0x7ff8000000000000LL)`` and the like, of a constant (fuse's
    NaN and infinity): the value those bits are, as a constant."""
    tr.nargs(name, args, 1, node)
    src, dst = _BITCASTS[name]
    value = _constant(node.args.exprs[0])
    if value is None:
        raise tr.refuse(f"{name}() of a value that is not a literal", node)
    if src.kind == "f":
        bits = numpy.array(value, src)
    else:
        bits = numpy.array(int(value) % (1 << (8 * src.itemsize)), f"u{src.itemsize}")
    result = bits.view(dst)[()]
    if dst.kind != "f":
        return Val(f"{ctor(dst)}({int(result)})", dst)
    if math.isnan(result):
        canonical = numpy.array(math.copysign(math.nan, -1.0 if numpy.signbit(result) else 1.0),
                                dst)
        if canonical.tobytes() != bits.tobytes():
            raise tr.refuse(f"{name}() of a NaN with a payload", node)
        return Val(f"{ctor(dst)}({'-' if numpy.signbit(result) else ''}math.nan)", dst)
    return Val(f"{ctor(dst)}({float_text(float(result))})", dst)


#: C name -> its function, besides the tables' names
_OTHERS = {"ldexp": ldexp, "ldexpf": ldexp, "min": minmax, "max": minmax}


def handler(name: str):
    """The function of C math function ``name``, or None."""
    if name in _MATH1:
        return math1
    if name in _MATH2:
        return math2
    if name in _PREDICATES:
        return predicate
    if name in _BITCASTS:
        return bitcast
    return _OTHERS.get(name)
