"""The builtin record and the helpers its type rules are written with."""

from __future__ import annotations

import ast
import dataclasses
from typing import Callable

import numpy

from ...errors import JitkernRuntimeError, JitkernTypeError, JitkernValueError
from .. import infer
from .. import types as T
from ..values import Const, operand


@dataclasses.dataclass(frozen=True)
class Sig:
    args: tuple  # per argument: the type to convert it to, or None
    result: T.Type


#: ``py=`` of a record whose C++ template is back-end neutral: it only calls the emitter's
#: methods (``ctx.helper``, ``ctx.declare_shared``, ...) or passes a converted argument
#: through, so the simulator renders it with that same template. ``range`` is one too: its
#: template is empty, both back ends spell the loop in their ``range_loop``.
NEUTRAL = "neutral"


@dataclasses.dataclass(frozen=True, eq=False)
class Builtin:
    """One builtin: the single source of its checking, emission and documentation."""

    name: str
    params: tuple  # parameter names; 'name=default' marks an optional one
    accepts: str  # the accepted argument types, for errors and docs
    rule: Callable
    template: object  # str pattern or callable
    doc: str
    group: str
    attribute: bool = False  # used without a call (threadIdx.x, warpsize)
    fold: Callable | None = None  # Python function folding all-constant calls
    address_of: tuple = ()  # (array, index) parameter pairs that become one element
    cooperative: bool = False  # needs a cooperative launch
    includes: tuple = ()
    min_arch: int = 0
    # Python's operators, abs and pow give a Python scalar for Python scalars: with only
    # weak arguments (jitkern.fuse's scalar arguments, literals) the result stays weak.
    keeps_weak: bool = False
    # The simulator's spelling beside the C++ one (simspell.py says what it may use), or
    # NEUTRAL; tests/sim/test_builtin_spellings.py checks that every record has both.
    py: object = None

    def __call__(self, *args, **kwargs):
        raise JitkernRuntimeError(f"jit.{self.name} can only be used inside a @rawkernel function")

    def __repr__(self) -> str:
        return f"<jit builtin {self.name}>"

    def __jit_fingerprint__(self) -> str:
        return "builtin:" + self.name

    @property
    def required(self) -> int:
        return sum(1 for p in self.params if "=" not in p)

    def defaults(self) -> list:
        out = []
        for p in self.params:
            if "=" in p:
                out.append(ast.literal_eval(p.split("=", 1)[1]))
        return out

    def param_names(self) -> list:
        return [p.split("=", 1)[0] for p in self.params]


@dataclasses.dataclass(frozen=True, eq=False)
class Namespace:
    """A dotted group of builtins used as attributes (``jit.threadIdx.x``)."""

    name: str
    members: dict

    def __getattr__(self, item):
        try:
            return self.members[item]
        except KeyError:
            raise AttributeError(item) from None

    def __repr__(self) -> str:
        return f"<jit {self.name}>"

    def __jit_fingerprint__(self) -> str:
        return "namespace:" + self.name


@dataclasses.dataclass(frozen=True, eq=False)
class Marker:
    """A compile-time token passed to a builtin (``cg.plus``, ``cub.Max()``)."""

    name: str
    cname: str

    def __call__(self):
        return self

    def __repr__(self) -> str:
        return f"<jit {self.name}>"

    def __jit_fingerprint__(self) -> str:
        return "marker:" + self.name


def fixed(*args, result):
    """A rule with fixed argument conversions and result."""

    def rule(items, mode):
        return Sig(tuple(args), result)

    return rule


def scalar_of(item, what="argument") -> T.Scalar:
    op = operand(item)
    if infer.is_weak(op):
        raise JitkernTypeError(f"{what} must have a type here, got the literal {op!r}")
    if not isinstance(op, T.Scalar):
        raise JitkernTypeError(f"{what} must be a number, got {op}")
    return op


def const_int(item, what: str, allowed=None) -> int:
    if (
        not isinstance(item, Const)
        or not isinstance(item.value, (int, numpy.integer))
        or isinstance(item.value, bool)
    ):
        raise JitkernTypeError(f"{what} must be a compile-time integer constant")
    value = int(item.value)
    if allowed is not None and value not in allowed:
        raise JitkernValueError(f"{what} must be one of {sorted(allowed)}, got {value}")
    return value


def numeric(item, mode) -> T.Scalar:
    op = operand(item)
    if infer.is_weak(op):
        return infer.literal_type(op, mode)
    if not isinstance(op, T.Scalar):
        raise JitkernTypeError(f"expected a number, got {op}")
    return op


def nullary(name, code, doc, group="sync", result=T.void, **kw):
    return Builtin(name, (), "", fixed(result=result), code, doc, group, **kw)
