"""Warp shuffles, votes, matches and bit operations."""

from __future__ import annotations

import numpy

from ...errors import JitkernTypeError, JitkernValueError
from .. import types as T
from ..values import Const
from . import simspell
from .records import Builtin, Sig, fixed, nullary, numeric

_SHFL_NATIVE = (T.int32, T.uint32, T.int64, T.uint64, T.float32, T.float64, T.float16, T.bfloat16)
_SHFL_WIDENED = (T.bool_, T.int8, T.uint8, T.int16, T.uint16)


def _shfl_rule(items, mode):
    elem = numeric(items[1], mode)
    if elem.is_complex:
        raise JitkernTypeError("shuffle .real and .imag of complex values separately")
    _check_width(items[3])
    arg = elem if elem in _SHFL_NATIVE else T.int32
    return Sig((T.uint32, arg, T.int32, T.int32), elem)


def _check_width(item) -> None:
    """A constant width must be a power of two up to 32 (CUDA's rule; other values give
    undefined results, not an error, on the device)."""
    if isinstance(item, Const) and not isinstance(item.value, bool):
        width = item.value
        if not (
            isinstance(width, (int, numpy.integer)) and 0 < width <= 32 and width & (width - 1) == 0
        ):
            raise JitkernValueError(
                f"width must be a power of two from 1 to 32 (1, 2, 4, 8, 16 or 32), got {width!r}"
            )


def _shfl_template(cfunc):
    def template(codes, sig, items, ctx):
        call = f"{cfunc}({', '.join(codes)})"
        if sig.result in _SHFL_WIDENED:
            return f"(({sig.result.ctype}){call})"
        return call

    return template


# name, C++ function, lane parameter, doc, the simulator's kind of shuffle
_SHFL_ROWS = (
    ("shfl_sync", "__shfl_sync", "src_lane", "value of lane src_lane", "idx"),
    ("shfl_up_sync", "__shfl_up_sync", "delta", "value of lane (lane - delta)", "up"),
    ("shfl_down_sync", "__shfl_down_sync", "delta", "value of lane (lane + delta)", "down"),
    ("shfl_xor_sync", "__shfl_xor_sync", "lane_mask", "value of lane (lane ^ lane_mask)", "xor"),
)

SHUFFLES = {
    name: Builtin(
        name,
        ("mask", "value", lane, "width=32"),
        "value: any int, float or bool type; mask: uint32",
        _shfl_rule,
        _shfl_template(cfunc),
        f"Warp shuffle: the {doc} within width lanes.",
        "warp",
        py=simspell.shuffle(kind),
    )
    for name, cfunc, lane, doc, kind in _SHFL_ROWS
}

_VOTE_ROWS = (
    ("all_sync", "(__all_sync({0}, {1}) != 0)", T.bool_, "True when predicate holds in every lane"),
    ("any_sync", "(__any_sync({0}, {1}) != 0)", T.bool_, "True when predicate holds in any lane"),
    ("ballot_sync", "__ballot_sync({0}, {1})", T.uint32, "Bit mask of lanes where predicate holds"),
)
VOTES = {
    name: Builtin(
        name,
        ("mask", "predicate"),
        "mask: uint32; predicate: bool",
        fixed(T.uint32, T.bool_, result=result),
        code,
        doc + ".",
        "warp",
        py=simspell.vote(name[: -len("_sync")]),
    )
    for name, code, result, doc in _VOTE_ROWS
}
def _activemask_py(codes, sig, items, ctx):
    return ctx.yields(f"_jk_ACTIVEMASK, {ctx.site()}")


activemask = nullary(
    "activemask", "__activemask()", "Mask of the lanes running this code.", "warp", T.uint32,
    py=_activemask_py,
)



_MATCH_TYPES = (T.int32, T.uint32, T.int64, T.uint64, T.float32, T.float64)


def _match_rule(result):
    def rule(items, mode):
        elem = numeric(items[1], mode)
        if elem not in _MATCH_TYPES:
            raise JitkernTypeError(f"match needs a 32- or 64-bit value, got {elem}")
        return Sig((T.uint32, elem), result)

    return rule


match_any_sync = Builtin(
    "match_any_sync",
    ("mask", "value"),
    "value: 32/64-bit int or float",
    _match_rule(T.uint32),
    "__match_any_sync({0}, {1})",
    "Mask of the lanes whose value equals this lane's.",
    "warp",
    min_arch=70,
    py=simspell.collective("_jk_MATCH", "any", 2),
)
match_all_sync = Builtin(
    "match_all_sync",
    ("mask", "value"),
    "value: 32/64-bit int or float",
    _match_rule(T.tuple_of([T.uint32, T.bool_])),
    "jk::match_all({0}, {1})",
    "(mask, pred): mask of lanes if all values are equal, and whether they are.",
    "warp",
    min_arch=70,
    py=simspell.collective("_jk_MATCH", "all", 2),
)


def _bits_rule(result_same: bool):
    def rule(items, mode):
        t = numeric(items[0], mode)
        if t.kind not in "iu":
            raise JitkernTypeError(f"needs an integer, got {t}")
        wide = t.itemsize == 8
        arg = T.uint64 if wide else T.uint32
        return Sig((arg,), t if result_same else T.int32)

    return rule


def _bits_template(f32, f64, signed_arg=False):
    def template(codes, sig, items, ctx):
        t = numeric(items[0], ctx.mode)
        wide = t.itemsize == 8
        fn = f64 if wide else f32
        arg = codes[0]
        if signed_arg:
            arg = f"({'long long' if wide else 'int'})({arg})"
        call = f"{fn}({arg})"
        return f"(({sig.result.ctype}){call})"

    return template


def _bits_py(fn, width_arg=True, same=False):
    def template(codes, sig, items, ctx):
        bits = 64 if sig.args[0].itemsize == 8 else 32
        call = f"_jk_{fn}({codes[0]}, {bits})" if width_arg else f"_jk_{fn}({codes[0]})"
        if same:
            return ctx.convert_code(call, sig.args[0], sig.result)
        return call

    return template


popc = Builtin(
    "popc",
    ("x",),
    "any integer",
    _bits_rule(False),
    _bits_template("__popc", "__popcll"),
    "Number of set bits.",
    "bits",
    py=_bits_py("popc", width_arg=False),
)
clz = Builtin(
    "clz",
    ("x",),
    "any integer",
    _bits_rule(False),
    _bits_template("__clz", "__clzll", True),
    "Number of leading zero bits (of the 32- or 64-bit value).",
    "bits",
    py=_bits_py("clz"),
)
ffs = Builtin(
    "ffs",
    ("x",),
    "any integer",
    _bits_rule(False),
    _bits_template("__ffs", "__ffsll", True),
    "Position (1-based) of the least significant set bit, 0 if none.",
    "bits",
    py=_bits_py("ffs"),
)
brev = Builtin(
    "brev",
    ("x",),
    "32- or 64-bit integer",
    _bits_rule(True),
    _bits_template("__brev", "__brevll"),
    "Bits in reverse order.",
    "bits",
    py=_bits_py("brev", same=True),
)
