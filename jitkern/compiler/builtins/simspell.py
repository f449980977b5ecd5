"""What the records' simulator spellings (``py=``) share.

A record's ``py`` is the simulator's text beside its C++ ``template``: a ``str.format``
pattern over the converted argument codes, or a function ``(codes, sig, items, ctx) -> str``
like the C++ templates, where ``ctx`` is the simulator's emitter (sim/emit.py). The names
the text uses (``_jk_tx``, ``_jk_SYNC``, ...) are the simulator's run-time names
(sim/runtime.py, sim/scheduler.py). These helpers are the spellings several families use:
requests to the thread scheduler (barriers, warp collectives) and float16 computed in
float32, as the C++ does.
"""

from __future__ import annotations

from .. import types as T
from .records import Marker


def sync(how):
    """A block barrier (``how``: None, or the count/and/or reduction of a predicate)."""

    def template(codes, sig, items, ctx):
        pred = codes[0] if codes else "None"
        return ctx.yields(f"_jk_SYNC, {ctx.site()}, {how!r}, {pred}, None")

    return template


def collective(request, kind, count, lanes=list):
    """A warp collective: ``request`` to the scheduler with the ``count`` arguments
    ``lanes(codes)`` gives, the lanes' mask first (a warp call's own arguments, or a
    tile's mask and size around the others: :func:`tile_lanes`)."""

    def template(codes, sig, items, ctx):
        args = ", ".join(lanes(codes)[:count])
        return ctx.yields(f"{request}, {ctx.site()}, {args}, {kind!r}")

    return template


def tile_lanes(codes) -> list:
    tile = codes[0]
    return [f"{tile}.mask", *codes[1:], f"{tile}.size"]


def shuffle(kind, lanes=list):
    request = collective("_jk_SHFL", kind, 4, lanes)

    def template(codes, sig, items, ctx):
        call = request(codes, sig, items, ctx)
        arg = sig.args[1]
        if arg != sig.result:
            return ctx.convert_code(call, arg, sig.result)
        return call

    return template


def vote(kind, lanes=list):
    return collective("_jk_VOTE", kind, 2, lanes)


def family(item) -> str:
    return getattr(item.type, "family", "")


def group_sync(codes, sig, items, ctx):
    return ctx.group_sync(items[0], codes[0])


def op_code(op, sig, ctx) -> str:
    """A reduction operator: a marker's run-time twin, or the user's device function."""
    if isinstance(op, Marker):
        return "_jk_op_" + op.name.replace(".", "_")
    return ctx.device_functor(op, sig.result)


def calc(t: T.Scalar) -> str:
    """The type a value of ``t`` is computed in (float16 in float32)."""
    return "float32" if t.is_half else t.name


def halfwise(t, ctx, codes, call, to_bool=False):
    """float16 computes in float32 and rounds back, as the C++ does (not a bool result)."""
    if not t.is_half:
        return call(codes)
    out = call([ctx.to_float(t, c) for c in codes])
    return out if to_bool else ctx.via_float(t, out)
