"""Stage 3 data: every builtin is one declarative record.

A :class:`Builtin` says what a builtin is called, which arguments it takes, what
argument types it accepts and the type it returns (its ``rule``), the C++ it
becomes (its ``template``) and a one-line doc. The emitter checks and emits
through the records alone, and :func:`render_table` writes the builtin table of
docs/jit.md from the same records. Families (atomics, shuffles, math functions)
are rows of one table each.

A rule takes the arguments (:class:`~jitkern.compiler.values.Value` /
:class:`~jitkern.compiler.values.Const`) and the mode, and returns a :class:`Sig`: the
type each argument is converted to (None: as it is) and the result type; it raises
``TypeError`` to refuse.
A template is a ``str.format`` pattern over the converted argument codes
(``{0}``, ``{1}``, ``{T}`` for the result's C++ type), or a function
``(codes, sig, args, ctx) -> str`` where ``ctx`` is the emitter's state.
"""

from __future__ import annotations

import builtins as _py

import numpy

from .atomics import ATOMICS
from .compat import dtype_of
from .cub import CUB_METHODS, CUB_OPS, CubClass, CubStorage, CubTemplate, cub
from .groups import CG_OPS, GROUP_METHODS, cg
from .mathfuncs import (
    COMPLEX_METHODS,
    MATH,
    conj,
    conjugate,
    imag,
    negative,
    numpy_maximum,
    numpy_minimum,
    real,
    resolve_py,
    square,
    where,
)
from .operators import OPERATORS, numpy_power
from .pyfuncs import (
    abs_,
    bool_cast,
    complex_cast,
    dtype_cast,
    float_cast,
    int_cast,
    jit_range,
    len_,
    max_,
    min_,
    pow_,
    print_,
    range_,
)
from .records import NEUTRAL, Builtin, Marker, Namespace, Sig
from .threads import (
    blockDim,
    blockIdx,
    clock64,
    grid,
    gridDim,
    gridsize,
    laneid,
    ldg,
    local_memory,
    nanosleep,
    shared_memory,
    syncthreads,
    syncthreads_and,
    syncthreads_count,
    syncthreads_or,
    syncwarp,
    threadfence,
    threadfence_block,
    threadfence_system,
    threadIdx,
    warpsize,
)
from .iterators import ARRAY_METHODS, POINTER_OPERATORS, pointer_operator
from .textures import TEXTURE_RECORDS, texture
from .thrust import thrust
from . import ufuncs
from .ufuncs import UFUNC_RECORDS, ufunc
from .warp import SHUFFLES, VOTES, activemask, brev, clz, ffs, match_all_sync, match_any_sync, popc


def _python_functions() -> dict:
    """Python/NumPy function objects -> their builtin record."""
    table = {
        _py.len: len_,
        _py.abs: abs_,
        _py.min: min_,
        _py.max: max_,
        _py.int: int_cast,
        _py.float: float_cast,
        _py.bool: bool_cast,
        _py.complex: complex_cast,
        _py.range: range_,
        _py.print: print_,
        _py.pow: pow_,
        numpy.absolute: abs_,
        numpy.square: square,
        numpy.minimum: numpy_minimum,
        numpy.maximum: numpy_maximum,
        numpy.conj: conj,
        numpy.conjugate: conj,
        numpy.real: real,
        numpy.imag: imag,
        numpy.negative: negative,
        numpy.power: numpy_power,
        numpy.where: where,
        numpy.dtype: dtype_of,
    }
    for record, row in MATH:
        for dotted in row.names:
            fn = resolve_py(dotted)
            if fn is not None:
                table.setdefault(fn, record)
    for name, record in UFUNC_RECORDS.items():  # the ufuncs the rows above do not have
        table.setdefault(getattr(numpy, name), record)
    return table


PY_FUNCTIONS = _python_functions()


#: Methods and attributes of values, by the receiver's family.
VALUE_METHODS = {**COMPLEX_METHODS, **GROUP_METHODS, **CUB_METHODS, **ARRAY_METHODS}

PUBLIC = {
    "threadIdx": threadIdx,
    "blockIdx": blockIdx,
    "blockDim": blockDim,
    "gridDim": gridDim,
    "warpsize": warpsize,
    "grid": grid,
    "gridsize": gridsize,
    "laneid": laneid,
    "syncthreads": syncthreads,
    "syncwarp": syncwarp,
    "syncthreads_count": syncthreads_count,
    "syncthreads_and": syncthreads_and,
    "syncthreads_or": syncthreads_or,
    "threadfence": threadfence,
    "threadfence_block": threadfence_block,
    "threadfence_system": threadfence_system,
    "clock64": clock64,
    "nanosleep": nanosleep,
    "shared_memory": shared_memory,
    "local_memory": local_memory,
    "ldg": ldg,
    "activemask": activemask,
    "match_any_sync": match_any_sync,
    "match_all_sync": match_all_sync,
    "popc": popc,
    "clz": clz,
    "ffs": ffs,
    "brev": brev,
    "range": jit_range,
    **ATOMICS,
    **SHUFFLES,
    **VOTES,
}


def all_records() -> list:
    """Every builtin record, once, for the docs table and the tests."""
    seen: dict[int, Builtin] = {}

    def add(obj):
        if isinstance(obj, Builtin):
            seen.setdefault(id(obj), obj)
        elif isinstance(obj, Namespace):
            for member in obj.members.values():
                add(member)

    for obj in PUBLIC.values():
        add(obj)
    for obj in (
        cg,
        texture,
        thrust,
        ufunc,
        *POINTER_OPERATORS.values(),
        dtype_cast,
        *PY_FUNCTIONS.values(),
        *VALUE_METHODS.values(),
        *OPERATORS.values(),
    ):
        add(obj)
    return list(seen.values())


def render_table(groups=None) -> str:
    """A builtin table of docs/jit.md, as Markdown, grouped: ``groups``, or all but thrust's."""
    chosen = [
        r
        for r in all_records()
        if (r.group in groups if groups else r.group not in _OWN_TABLES)
    ]
    rows = sorted(chosen, key=lambda r: (_GROUP_ORDER.index(r.group), r.name))
    out = ["| group | builtin | arguments | accepts | doc |", "|---|---|---|---|---|"]
    for r in rows:
        call = r.name if r.attribute else f"{r.name}({', '.join(r.params)})"
        if r.name.startswith(
            ("thread_block.", "tile.", "grid.", "warp_reduce.", "block_reduce.", "dim3.", "array.")
        ):
            call = call.replace("(self, ", "(").replace("(self)", "()")
        params = ", ".join(r.param_names()) or "-"
        note = r.doc + (f" Needs sm_{r.min_arch}+." if r.min_arch else "")
        cells = [r.group, f"`{call}`", params, r.accepts or "-", note]
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(out)


def render_ufuncs() -> str:
    """The ufunc rows (docs/jit.md): each as ``jit.ufunc.<name>``, and what ``numpy.<name>``
    is in a kernel (this row, or the JIT's own row of that name)."""
    out = ["| `jit.ufunc.` | results | `numpy.<name>` in a kernel |", "|---|---|---|"]
    for name, record in sorted(UFUNC_RECORDS.items()):
        own = PY_FUNCTIONS.get(getattr(numpy, name))
        reached = "this row" if own is record else f"the `{own.name}` row"
        call = f"`{name}({', '.join(record.params)})`"
        out.append(f"| {call} | {len(ufuncs.UFUNC_ROWS[name].templates)} | {reached} |")
    return "\n".join(out)


#: Groups documented in a table of their own.
_OWN_TABLES = ("thrust", "ufunc")

_GROUP_ORDER = (
    "operators",
    "indexing",
    "sync",
    "timing",
    "memory",
    "atomics",
    "warp",
    "bits",
    "python",
    "math",
    "complex",
    "cooperative groups",
    "cub",
    "texture",
    "thrust",
    "ufunc",
)


__all__ = [
    "ATOMICS",
    "CG_OPS",
    "CUB_OPS",
    "OPERATORS",
    "PUBLIC",
    "PY_FUNCTIONS",
    "SHUFFLES",
    "UFUNC_RECORDS",
    "VALUE_METHODS",
    "VOTES",
    "Builtin",
    "CubClass",
    "CubStorage",
    "CubTemplate",
    "Marker",
    "NEUTRAL",
    "Namespace",
    "Sig",
    "abs_",
    "activemask",
    "all_records",
    "blockDim",
    "blockIdx",
    "bool_cast",
    "brev",
    "cg",
    "clock64",
    "clz",
    "complex_cast",
    "conj",
    "conjugate",
    "cub",
    "dtype_cast",
    "ffs",
    "float_cast",
    "grid",
    "gridDim",
    "gridsize",
    "imag",
    "int_cast",
    "jit_range",
    "laneid",
    "ldg",
    "len_",
    "match_all_sync",
    "match_any_sync",
    "max_",
    "min_",
    "nanosleep",
    "negative",
    "numpy_maximum",
    "numpy_minimum",
    "numpy_power",
    "popc",
    "pow_",
    "print_",
    "range_",
    "real",
    "render_table",
    "render_ufuncs",
    "shared_memory",
    "local_memory",
    "square",
    "syncthreads",
    "syncthreads_and",
    "syncthreads_count",
    "syncthreads_or",
    "syncwarp",
    "threadIdx",
    "threadfence",
    "threadfence_block",
    "threadfence_system",
    "TEXTURE_RECORDS",
    "texture",
    "thrust",
    "pointer_operator",
    "ufunc",
    "warpsize",
    "where",
]
