"""jitkern's own C++ prelude in the simulator's C subset: the ``jk::`` and ``jkf::``
functions that fuse's kernels (string kernels: an ElementwiseKernel or ReductionKernel
whose preamble is that prelude) call, so that the simulator runs fuse's own C++.

The prelude's blocks are jitkern's text, known here word for word: the JIT's helpers
(``namespace jk``, compiler/jk_prelude.py) and the ufunc rows' (``namespace jkf``,
compiler/ufunc_rows.py). A source that holds one has it taken out before parsing
(:func:`strip`, its lines left blank so every other line keeps its number) and its
``jk::name`` calls renamed to builtins of the subset (:func:`call`). Each function is
spelled as what it computes, never translated from its C++ (which uses templates,
function-like macros and inline PTX the subset leaves out): almost all are a NumPy
ufunc's loop (:data:`TWINS`, through the JIT's ``ufunc`` builtins, whose simulation is
NumPy's loop with ``signature=``), the rest are a line each (:data:`SPELLED`). The C++
helpers were written to compute what NumPy's loops compute; tests/sim/test_sim_fuse.py
holds the simulator to NumPy's loops, the GPU tests hold the C++ to them.

A ``namespace jk`` block of other text is not jitkern's: it stays, and is refused.
"""

from __future__ import annotations

import re

import numpy

from ..compiler.jk_prelude import PRELUDE
from ..compiler.ufunc_rows import COMPLEX_HELPERS, HELPERS
from .csubset import BOOL, F16, F32, I32, Val, convert, ctor

#: (namespace, its block's text): the blocks a fused kernel's preamble may hold.
BLOCKS = (("jk", PRELUDE.strip()), ("jkf", HELPERS.strip()), ("jkf", COMPLEX_HELPERS.strip()))
#: What a prelude function's call is renamed to (a C name no user writes: ``__jk`` prefix).
PREFIX = "__jk_prelude_"

#: Prelude function -> (the NumPy ufunc it computes, which of its outputs).
TWINS = {
    "jk::floordiv": ("floor_divide", 0), "jk::ufloordiv": ("floor_divide", 0),
    "jk::mod": ("remainder", 0), "jk::umod": ("remainder", 0),
    "jk::ipow": ("power", 0), "jk::uipow": ("power", 0), "jk::pow2": ("square", 0),
    "jk::npmax": ("maximum", 0), "jk::npmin": ("minimum", 0),
    "jkf::iabs": ("absolute", 0), "jkf::isign": ("sign", 0), "jkf::fsign": ("sign", 0),
    "jkf::csign": ("sign", 0), "jkf::ireciprocal": ("reciprocal", 0),
    "jkf::ifmod": ("fmod", 0), "jkf::logaddexp": ("logaddexp", 0),
    "jkf::logaddexp2": ("logaddexp2", 0), "jkf::heaviside": ("heaviside", 0),
    "jkf::frexp_mantissa": ("frexp", 0), "jkf::frexp_exponent": ("frexp", 1),
    "jkf::modf_fraction": ("modf", 0), "jkf::modf_integral": ("modf", 1),
    "jkf::lshift": ("left_shift", 0), "jkf::rshift": ("right_shift", 0),
    "jkf::popcount": ("bitwise_count", 0), "jkf::gcd": ("gcd", 0), "jkf::lcm": ("lcm", 0),
    "jkf::cnan": ("isnan", 0), "jkf::cmax": ("maximum", 0), "jkf::cmin": ("minimum", 0),
    "jkf::cfmax": ("fmax", 0), "jkf::cfmin": ("fmin", 0), "jkf::ccmplt": ("less", 0),
    "jkf::ccmple": ("less_equal", 0), "jkf::ccmpgt": ("greater", 0),
    "jkf::ccmpge": ("greater_equal", 0), "jkf::cexp2": ("exp2", 0),
    "jkf::cexpm1": ("expm1", 0), "jkf::clog1p": ("log1p", 0), "jkf::clog2": ("log2", 0),
    "jkf::crint": ("rint", 0),
}  # fmt: skip


def _truth(x: Val) -> Val:
    return Val(convert(x, BOOL), BOOL)


def _nan_to(k: int):
    def spell(x: Val) -> Val:
        return Val(f"({x.code} if {x.code} == {x.code} else {ctor(x.type)}({k}))", x.type)

    return spell


def _clamp_int(e: Val) -> Val:
    """int, saturated at +-2147483647 (ldexp's exponent)."""
    big, small = f"{ctor(e.type)}(2147483647)", f"{ctor(e.type)}(-2147483647)"
    return Val(f"(numpy.int32(2147483647) if {e.code} > {big} else (numpy.int32(-2147483647) "
               f"if {e.code} < {small} else {convert(e, I32)}))", I32)


def _nextafter_half(x: Val, y: Val) -> Val:
    """The next half from x toward y (halves widened to float): NumPy's float16 loop."""
    return Val(f"numpy.float32(jit.ufunc.nextafter({convert(x, F16)}, {convert(y, F16)}))",
               F32)


def _pymin_max(word: str):
    return lambda a, b: Val(f"{word}({a.code}, {b.code})", a.type)


#: Prelude functions spelled in a line: name -> (argument count, spelling of the values).
SPELLED = {
    "jkf::truth": (1, _truth),
    "jkf::nan_to_zero": (1, _nan_to(0)),
    "jkf::nan_to_one": (1, _nan_to(1)),
    "jkf::clamp_int": (1, _clamp_int),
    "jkf::nextafter_half": (2, _nextafter_half),
    "jk::pymin": (2, _pymin_max("min")),
    "jk::pymax": (2, _pymin_max("max")),
}

_SCOPED = re.compile(r"\b(jkf?)\s*::\s*(\w+)")


def strip(source: str) -> str:
    """``source`` with jitkern's prelude blocks blanked and the calls into them renamed to
    :data:`PREFIX` names (only those of a namespace whose block it holds)."""
    found = set()
    for namespace, text in BLOCKS:
        at = source.find(text)
        if at >= 0:
            found.add(namespace)
            blank = "\n" * text.count("\n")
            source = source[:at] + blank + source[at + len(text):]
    if not found:
        return source
    return _SCOPED.sub(lambda m: f"{PREFIX}{m.group(1)}_{m.group(2)}"
                       if m.group(1) in found else m.group(0), source)


def prelude_name(name: str) -> str | None:
    """``jkf::logaddexp`` for a renamed call's C name, None for any other name."""
    if not name.startswith(PREFIX):
        return None
    namespace, _, function = name[len(PREFIX):].partition("_")
    return f"{namespace}::{function}"


def call(tr, name: str, args: list, node) -> Val:
    """A prelude function's value, as the subset's builtins give theirs (``tr``: the
    translator, for its checks and errors)."""
    cname = prelude_name(name)
    if cname in SPELLED:
        count, spell = SPELLED[cname]
        tr.nargs(cname, args, count, node)
        return spell(*args)
    twin = TWINS.get(cname)
    if twin is None:
        raise tr.refuse(f"{cname}() (a function of jitkern's prelude the simulator does not "
                        "run)", node)
    ufunc, out = twin
    fn = getattr(numpy, ufunc)
    tr.nargs(cname, args, fn.nin, node)
    types = {numpy.dtype(a.type.str) for a in args}  # (CuPy's float16 class is float16)
    if len(types) != 1:
        raise tr.refuse(f"{cname}() with arguments of different types", node)
    loop = fn.resolve_dtypes((*types,) * fn.nin + (None,) * fn.nout)
    code = f"jit.ufunc.{ufunc}({', '.join(a.code for a in args)})"
    return Val(f"{code}[{out}]" if fn.nout > 1 else code, loop[fn.nin + out])
