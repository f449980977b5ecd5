"""Atomics: one table, one row per operation."""

from __future__ import annotations

import dataclasses

from ...capabilities import min_cc
from ...errors import JitkernTypeError
from .. import types as T
from .records import Builtin, Sig, scalar_of

_ATOMIC_CAST = {T.int64: T.uint64}


@dataclasses.dataclass(frozen=True)
class _AtomicRow:
    op: str
    cfunc: str
    native: tuple  # dtypes with a native overload
    doc: str
    arity: int = 1  # value arguments after (array, index)


_ATOMIC_ROWS = (
    _AtomicRow(
        "add",
        "atomicAdd",
        (T.int32, T.uint32, T.uint64, T.int64, T.float32, T.float64, T.float16, T.bfloat16),
        "array[index] += value",
    ),
    _AtomicRow(
        "sub",
        "atomicSub",
        (T.int32, T.uint32, T.int64, T.uint64, T.float32, T.float64),
        "array[index] -= value",
    ),
    _AtomicRow(
        "exch",
        "atomicExch",
        (T.int32, T.uint32, T.uint64, T.int64, T.float32, T.float64),
        "array[index] = value",
    ),
    _AtomicRow(
        "min",
        "atomicMin",
        (T.int32, T.uint32, T.int64, T.uint64),
        "array[index] = min(array[index], value)",
    ),
    _AtomicRow(
        "max",
        "atomicMax",
        (T.int32, T.uint32, T.int64, T.uint64),
        "array[index] = max(array[index], value)",
    ),
    _AtomicRow(
        "inc",
        "atomicInc",
        (T.uint32,),
        "array[index] = 0 if array[index] >= value else array[index] + 1",
    ),
    _AtomicRow(
        "dec",
        "atomicDec",
        (T.uint32,),
        "array[index] = value if array[index] == 0 or array[index] > value else array[index] - 1",
    ),
    _AtomicRow(
        "cas",
        "atomicCAS",
        (T.int32, T.uint32, T.uint64, T.int64, T.uint16),
        "array[index] = value if array[index] == compare",
        arity=2,
    ),
    _AtomicRow("and", "atomicAnd", (T.int32, T.uint32, T.uint64, T.int64), "array[index] &= value"),
    _AtomicRow("or", "atomicOr", (T.int32, T.uint32, T.uint64, T.int64), "array[index] |= value"),
    _AtomicRow("xor", "atomicXor", (T.int32, T.uint32, T.uint64, T.int64), "array[index] ^= value"),
)


def _atomic_rule(row: _AtomicRow):
    def rule(items, mode):
        elem = scalar_of(items[0], "the array element")
        if elem not in row.native:
            names = ", ".join(t.name for t in row.native)
            raise JitkernTypeError(f"atomic_{row.op} does not support {elem}; it supports {names}")
        return Sig((None,) + (elem,) * row.arity, elem)

    return rule


def _atomic_template(row: _AtomicRow):
    def template(codes, sig, items, ctx):
        elem = sig.result
        ref, vals = codes[0], codes[1:]
        if row.op == "sub" and elem.kind in "fi" and elem not in (T.int32,):
            return _atomic_call("atomicAdd", elem, ref, [f"(-({vals[0]}))"])
        if elem is T.float64 and row.op == "exch":
            return (
                f"__longlong_as_double((long long)atomicExch((unsigned long long*)&{ref}, "
                f"(unsigned long long)__double_as_longlong({vals[0]})))"
            )
        if elem is T.float16 or elem is T.bfloat16:
            ctx.require_arch(min_cc("atomic_float16" if elem is T.float16 else "atomic_bfloat16"),
                             f"atomic_{row.op} on {elem}")
        return _atomic_call(row.cfunc, elem, ref, vals)

    return template


def _atomic_call(cfunc: str, elem: T.Scalar, ref: str, vals) -> str:
    via = _ATOMIC_CAST.get(elem)
    if via is None:
        return f"{cfunc}(&{ref}, {', '.join(vals)})"
    args = ", ".join(f"({via.ctype})({v})" for v in vals)
    return f"(({elem.ctype}){cfunc}(({via.ctype}*)&{ref}, {args}))"


def _atomic_py(op: str):
    """The simulator's atomic: one read-modify-write of the element, in thread order."""

    def template(codes, sig, items, ctx):
        array, index = ctx.state.elements[codes[0]]
        if op == "cas":
            return f"_jk_atomic_cas({array}, {index}, {codes[1]}, {codes[2]})"
        return f"_jk_atomic(_jk_atomic_{op}, {array}, {index}, {codes[1]})"

    return template


def _atomic_builtin(row: _AtomicRow) -> Builtin:
    params = (
        ("array", "index", "compare", "value") if row.arity == 2 else ("array", "index", "value")
    )
    return Builtin(
        f"atomic_{row.op}",
        params,
        ", ".join(t.name for t in row.native),
        _atomic_rule(row),
        _atomic_template(row),
        f"Atomically {row.doc}; returns the old value.",
        "atomics",
        address_of=((0, 1),),
        py=_atomic_py(row.op),
    )


ATOMICS = {f"atomic_{row.op}": _atomic_builtin(row) for row in _ATOMIC_ROWS}
