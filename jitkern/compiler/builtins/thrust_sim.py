"""The simulator's spelling of each ``jit.thrust`` record (its ``py=``): a call of the
algorithm's NumPy version in sim/thrust.py, with the operators as Python callables and
Thrust's defaults (init 0, step 1) made explicit."""

from __future__ import annotations

from .. import types as T
from ..values import Const
from .iterators import element_type
from .records import Marker


def template_for(algo):
    """The simulator's template of one row of the algorithm table."""
    kinds = [param.split(":", 1)[0] for param in algo.params]
    unary = algo.name in ("transform", "transform_reduce")  # their first op is unary

    def template(codes, sig, items, ctx):
        elem = element_type(items[1])
        args, ops = [], 0
        for kind, code, item in zip(kinds, codes, items):
            absent = isinstance(item, Const) and item.value is None
            if kind == "policy":
                continue
            if kind in ("op", "op2", "vop"):
                arity = 1 if unary and ops == 0 else 2
                typed = sig.result if algo.result == "init" and arity == 2 else elem
                if kind == "vop":  # an operator on a by-key algorithm's values
                    typed = element_type(items[3])
                args.append("None" if absent else _functor(item.value, typed, arity, ctx))
                ops += 1
            elif kind == "vinit" and absent:
                args.append(ctx.zero(element_type(items[3])))
            elif kind in ("init", "elem") and absent:
                args.append(_default(algo.name, kind, len(args), sig, elem, ctx))
            else:
                args.append(code)
        return f"_jk_thrust_{algo.name}({ctx.site()}, {', '.join(args)})"

    return template


def _default(name, kind, position, sig, elem, ctx) -> str:
    """What Thrust uses for an omitted init (0) or step (1), in the type it computes in."""
    if name == "reduce":
        return ctx.zero(sig.result)
    if name == "sequence" and position == 3:  # step
        return ctx.literal(1, elem)
    return ctx.zero(elem)


def _functor(value, typed: T.Scalar, arity: int, ctx) -> str:
    if isinstance(value, Marker):
        return f"_jk_functor({value.name.split('.', 1)[1]!r}, {ctx.type_code(typed)})"
    fn = ctx.program_device_function(value, (typed,) * arity)
    if ctx.program.functions[fn.cname].generator:
        ctx.refuse("a jit.thrust operator cannot synchronise threads")
    params = ", ".join(f"a{k}" for k in range(arity))
    return f"(lambda {params}: {fn.cname}({ctx.context}, {params}))"
