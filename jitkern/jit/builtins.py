"""Stage 3 data: every builtin is one declarative record.

A :class:`Builtin` says what a builtin is called, which arguments it takes, what
argument types it accepts and the type it returns (its ``rule``), the C++ it
becomes (its ``template``) and a one-line doc. The emitter checks and emits
through the records alone, and :func:`render_table` writes the builtin table of
docs/jit.md from the same records. Families (atomics, shuffles, math functions)
are rows of one table each.

A rule takes the arguments (:class:`~.values.Value` / :class:`~.values.Const`)
and the mode, and returns a :class:`Sig`: the type each argument is converted
to (None: as it is) and the result type; it raises ``TypeError`` to refuse.
A template is a ``str.format`` pattern over the converted argument codes
(``{0}``, ``{1}``, ``{T}`` for the result's C++ type), or a function
``(codes, sig, args, ctx) -> str`` where ``ctx`` is the emitter's state.
"""

from __future__ import annotations

import builtins as _py
import cmath
import dataclasses
import math
from typing import Callable

import numpy

from . import infer
from . import types as T
from .values import Const, Value, operand


@dataclasses.dataclass(frozen=True)
class Sig:
    args: tuple  # per argument: the type to convert it to, or None
    result: T.Type


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

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"jit.{self.name} can only be used inside a @rawkernel function")

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
                out.append(eval(p.split("=", 1)[1], {}))  # literal defaults written below
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


# ---------------------------------------------------------------------------
# rule helpers


def fixed(*args, result):
    """A rule with fixed argument conversions and result."""

    def rule(items, mode):
        return Sig(tuple(args), result)

    return rule


def _scalar_of(item, what="argument") -> T.Scalar:
    op = operand(item)
    if infer.is_weak(op):
        raise TypeError(f"{what} must have a type here, got the literal {op!r}")
    if not isinstance(op, T.Scalar):
        raise TypeError(f"{what} must be a number, got {op}")
    return op


def _const_int(item, what: str, allowed=None) -> int:
    if not isinstance(item, Const) or not isinstance(item.value, (int, numpy.integer)) \
            or isinstance(item.value, bool):
        raise TypeError(f"{what} must be a compile-time integer constant")
    value = int(item.value)
    if allowed is not None and value not in allowed:
        raise TypeError(f"{what} must be one of {sorted(allowed)}, got {value}")
    return value


def _numeric(item, mode) -> T.Scalar:
    op = operand(item)
    if infer.is_weak(op):
        return infer.literal_type(op, mode)
    if not isinstance(op, T.Scalar):
        raise TypeError(f"expected a number, got {op}")
    return op


_AXES = "xyz"


# ---------------------------------------------------------------------------
# thread indexing


def _index_namespace(name: str) -> Namespace:
    members = {
        ax: Builtin(f"{name}.{ax}", (), "", fixed(result=T.uint32), f"{name}.{ax}",
                    f"CUDA's {name}.{ax}", "indexing", attribute=True)
        for ax in _AXES
    }
    return Namespace(name, members)


threadIdx = _index_namespace("threadIdx")
blockIdx = _index_namespace("blockIdx")
blockDim = _index_namespace("blockDim")
gridDim = _index_namespace("gridDim")


def _grid_rule(items, mode):
    n = _const_int(items[0], "ndim", {1, 2, 3})
    return Sig((None,), T.uint32 if n == 1 else T.tuple_of([T.uint32] * n))


def _grid_template(expr):
    def template(codes, sig, items, ctx):
        n = int(items[0].value)
        parts = [expr.format(a=_AXES[i]) for i in range(n)]
        if n == 1:
            return f"({parts[0]})"
        return ctx.tuple_code(sig.result, parts)

    return template


warpsize = Builtin("warpsize", (), "", fixed(result=T.int32), "warpSize",
                   "The warp size (32).", "indexing", attribute=True)

grid = Builtin("grid", ("ndim",), "1, 2 or 3 (constant)", _grid_rule,
               _grid_template("blockIdx.{a} * blockDim.{a} + threadIdx.{a}"),
               "Absolute thread index: an int for ndim=1, else a tuple (x, y[, z]).", "indexing")
gridsize = Builtin("gridsize", ("ndim",), "1, 2 or 3 (constant)", _grid_rule,
                   _grid_template("blockDim.{a} * gridDim.{a}"),
                   "Total threads of the grid along each axis (grid-stride step).", "indexing")
laneid = Builtin("laneid", (), "", fixed(result=T.uint32), "jk::laneid()",
                 "This thread's lane in its warp (0-31).", "indexing")

# ---------------------------------------------------------------------------
# synchronisation, fences, timing

_void = T.void


def _nullary(name, code, doc, group="sync", result=_void, **kw):
    return Builtin(name, (), "", fixed(result=result), code, doc, group, **kw)


syncthreads = _nullary("syncthreads", "__syncthreads()", "Block-wide barrier (__syncthreads).")
syncwarp = Builtin("syncwarp", ("mask=0xffffffff",), "mask: uint32", fixed(T.uint32, result=_void),
                   "__syncwarp({0})", "Warp barrier over the lanes in mask.", "sync")
syncthreads_count = Builtin("syncthreads_count", ("predicate",), "predicate: bool",
                            fixed(T.bool_, result=T.int32), "__syncthreads_count({0})",
                            "Barrier; returns how many threads had predicate true.", "sync")
syncthreads_and = Builtin("syncthreads_and", ("predicate",), "predicate: bool",
                          fixed(T.bool_, result=T.bool_), "(__syncthreads_and({0}) != 0)",
                          "Barrier; true when predicate is true in every thread.", "sync")
syncthreads_or = Builtin("syncthreads_or", ("predicate",), "predicate: bool",
                         fixed(T.bool_, result=T.bool_), "(__syncthreads_or({0}) != 0)",
                         "Barrier; true when predicate is true in any thread.", "sync")
threadfence = _nullary("threadfence", "__threadfence()", "Memory fence at device scope.")
threadfence_block = _nullary("threadfence_block", "__threadfence_block()",
                             "Memory fence at block scope.")
threadfence_system = _nullary("threadfence_system", "__threadfence_system()",
                              "Memory fence at system scope (host and peers).")
clock64 = _nullary("clock64", "clock64()", "The SM's 64-bit cycle counter.", "timing", T.int64)
nanosleep = Builtin("nanosleep", ("ns",), "ns: uint32", fixed(T.uint32, result=_void),
                    "__nanosleep({0})", "Sleep for about ns nanoseconds.", "timing", min_arch=70)

# ---------------------------------------------------------------------------
# shared memory and loads


def _shared_rule(items, mode):
    elem = _storage_type(items[0])
    size = items[1]
    if not (isinstance(size, Const) and size.value is None):
        n = _const_int(size, "size")
        if n <= 0:
            raise TypeError(f"size must be positive, got {n}")
    align = items[2]
    if not (isinstance(align, Const) and align.value is None):
        _const_int(align, "alignment", {1, 2, 4, 8, 16, 32, 64, 128, 256})
    return Sig((None, None, None), T.pointer(elem, "shared"))


def _storage_type(item) -> T.Type:
    if isinstance(item, Const):
        storage = getattr(item.value, "storage_type", None)
        if storage is not None:
            return storage
        try:
            return T.scalar_from_dtype(item.value)
        except TypeError:
            pass
    raise TypeError("dtype must be a NumPy dtype (numpy.float32, x.dtype, ...) or a "
                    "cub TempStorage")


def _shared_template(codes, sig, items, ctx):
    size = items[1].value
    align = items[2].value
    return ctx.declare_shared(sig.result.elem, None if size is None else int(size), align)


shared_memory = Builtin(
    "shared_memory", ("dtype", "size=None", "alignment=None"),
    "dtype: a NumPy dtype; size: constant int, or None for dynamic shared memory",
    _shared_rule, _shared_template,
    "Block-shared array; returns a pointer. size=None: the launch's dynamic shared memory.",
    "memory")


def _ldg_rule(items, mode):
    elem = _scalar_of(items[0], "the element")
    return Sig((None,), elem)


ldg = Builtin("ldg", ("array", "index"), "array element of any numeric type",
              _ldg_rule, "__ldg(&{0})", "Load through the read-only data cache (__ldg).",
              "memory", address_of=((0, 1),))

# ---------------------------------------------------------------------------
# atomics: one table, one row per operation

_ATOMIC_CAST = {T.int64: T.uint64}


@dataclasses.dataclass(frozen=True)
class _AtomicRow:
    op: str
    cfunc: str
    native: tuple  # dtypes with a native overload
    doc: str
    arity: int = 1  # value arguments after (array, index)


_ATOMIC_ROWS = (
    _AtomicRow("add", "atomicAdd", (T.int32, T.uint32, T.uint64, T.int64, T.float32, T.float64,
                                    T.float16, T.bfloat16), "array[index] += value"),
    _AtomicRow("sub", "atomicSub", (T.int32, T.uint32, T.int64, T.uint64, T.float32, T.float64),
               "array[index] -= value"),
    _AtomicRow("exch", "atomicExch", (T.int32, T.uint32, T.uint64, T.int64, T.float32, T.float64),
               "array[index] = value"),
    _AtomicRow("min", "atomicMin", (T.int32, T.uint32, T.int64, T.uint64),
               "array[index] = min(array[index], value)"),
    _AtomicRow("max", "atomicMax", (T.int32, T.uint32, T.int64, T.uint64),
               "array[index] = max(array[index], value)"),
    _AtomicRow("inc", "atomicInc", (T.uint32,),
               "array[index] = 0 if array[index] >= value else array[index] + 1"),
    _AtomicRow("dec", "atomicDec", (T.uint32,),
               "array[index] = value if array[index] == 0 or array[index] > value else "
               "array[index] - 1"),
    _AtomicRow("cas", "atomicCAS", (T.int32, T.uint32, T.uint64, T.int64, T.uint16),
               "array[index] = value if array[index] == compare", arity=2),
    _AtomicRow("and", "atomicAnd", (T.int32, T.uint32, T.uint64, T.int64), "array[index] &= value"),
    _AtomicRow("or", "atomicOr", (T.int32, T.uint32, T.uint64, T.int64), "array[index] |= value"),
    _AtomicRow("xor", "atomicXor", (T.int32, T.uint32, T.uint64, T.int64), "array[index] ^= value"),
)


def _atomic_rule(row: _AtomicRow):
    def rule(items, mode):
        elem = _scalar_of(items[0], "the array element")
        if elem not in row.native:
            names = ", ".join(t.name for t in row.native)
            raise TypeError(f"atomic_{row.op} does not support {elem}; it supports {names}")
        return Sig((None,) + (elem,) * row.arity, elem)

    return rule


def _atomic_template(row: _AtomicRow):
    def template(codes, sig, items, ctx):
        elem = sig.result
        ref, vals = codes[0], codes[1:]
        if row.op == "sub" and elem.kind in "fi" and elem not in (T.int32,):
            return _atomic_call("atomicAdd", elem, ref, [f"(-({vals[0]}))"])
        if elem is T.float64 and row.op == "exch":
            return (f"__longlong_as_double((long long)atomicExch((unsigned long long*)&{ref}, "
                    f"(unsigned long long)__double_as_longlong({vals[0]})))")
        if elem is T.float16 or elem is T.bfloat16:
            ctx.require_arch(70 if elem is T.float16 else 80, f"atomic_{row.op} on {elem}")
        return _atomic_call(row.cfunc, elem, ref, vals)

    return template


def _atomic_call(cfunc: str, elem: T.Scalar, ref: str, vals) -> str:
    via = _ATOMIC_CAST.get(elem)
    if via is None:
        return f"{cfunc}(&{ref}, {', '.join(vals)})"
    args = ", ".join(f"({via.ctype})({v})" for v in vals)
    return f"(({elem.ctype}){cfunc}(({via.ctype}*)&{ref}, {args}))"


def _atomic_builtin(row: _AtomicRow) -> Builtin:
    params = ("array", "index", "compare", "value") if row.arity == 2 else ("array", "index",
                                                                           "value")
    return Builtin(f"atomic_{row.op}", params, ", ".join(t.name for t in row.native),
                   _atomic_rule(row), _atomic_template(row),
                   f"Atomically {row.doc}; returns the old value.", "atomics",
                   address_of=((0, 1),))


ATOMICS = {f"atomic_{row.op}": _atomic_builtin(row) for row in _ATOMIC_ROWS}

# ---------------------------------------------------------------------------
# warp shuffles, votes, matches

_SHFL_NATIVE = (T.int32, T.uint32, T.int64, T.uint64, T.float32, T.float64, T.float16,
                T.bfloat16)
_SHFL_WIDENED = (T.bool_, T.int8, T.uint8, T.int16, T.uint16)


def _shfl_rule(items, mode):
    elem = _numeric(items[1], mode)
    if elem.is_complex:
        raise TypeError("shuffle .real and .imag of complex values separately")
    arg = elem if elem in _SHFL_NATIVE else T.int32
    return Sig((T.uint32, arg, T.int32, T.int32), elem)


def _shfl_template(cfunc):
    def template(codes, sig, items, ctx):
        call = f"{cfunc}({', '.join(codes)})"
        if sig.result in _SHFL_WIDENED:
            return f"(({sig.result.ctype}){call})"
        return call

    return template


_SHFL_ROWS = (
    ("shfl_sync", "__shfl_sync", "src_lane", "value of lane src_lane"),
    ("shfl_up_sync", "__shfl_up_sync", "delta", "value of lane (lane - delta)"),
    ("shfl_down_sync", "__shfl_down_sync", "delta", "value of lane (lane + delta)"),
    ("shfl_xor_sync", "__shfl_xor_sync", "lane_mask", "value of lane (lane ^ lane_mask)"),
)

SHUFFLES = {
    name: Builtin(name, ("mask", "value", lane, "width=32"),
                  "value: any int, float or bool type; mask: uint32", _shfl_rule,
                  _shfl_template(cfunc), f"Warp shuffle: the {doc} within width lanes.", "warp")
    for name, cfunc, lane, doc in _SHFL_ROWS
}

_VOTE_ROWS = (
    ("all_sync", "(__all_sync({0}, {1}) != 0)", T.bool_, "True when predicate holds in every lane"),
    ("any_sync", "(__any_sync({0}, {1}) != 0)", T.bool_, "True when predicate holds in any lane"),
    ("ballot_sync", "__ballot_sync({0}, {1})", T.uint32, "Bit mask of lanes where predicate holds"),
)
VOTES = {
    name: Builtin(name, ("mask", "predicate"), "mask: uint32; predicate: bool",
                  fixed(T.uint32, T.bool_, result=result), code, doc + ".", "warp")
    for name, code, result, doc in _VOTE_ROWS
}
activemask = _nullary("activemask", "__activemask()", "Mask of the lanes running this code.",
                      "warp", T.uint32)

_MATCH_TYPES = (T.int32, T.uint32, T.int64, T.uint64, T.float32, T.float64)


def _match_rule(result):
    def rule(items, mode):
        elem = _numeric(items[1], mode)
        if elem not in _MATCH_TYPES:
            raise TypeError(f"match needs a 32- or 64-bit value, got {elem}")
        return Sig((T.uint32, elem), result)

    return rule


match_any_sync = Builtin("match_any_sync", ("mask", "value"), "value: 32/64-bit int or float",
                         _match_rule(T.uint32), "__match_any_sync({0}, {1})",
                         "Mask of the lanes whose value equals this lane's.", "warp", min_arch=70)
match_all_sync = Builtin("match_all_sync", ("mask", "value"), "value: 32/64-bit int or float",
                         _match_rule(T.tuple_of([T.uint32, T.bool_])), "jk::match_all({0}, {1})",
                         "(mask, pred): mask of lanes if all values are equal, and whether they "
                         "are.", "warp", min_arch=70)

# ---------------------------------------------------------------------------
# bit operations


def _bits_rule(result_same: bool):
    def rule(items, mode):
        t = _numeric(items[0], mode)
        if t.kind not in "iu":
            raise TypeError(f"needs an integer, got {t}")
        wide = t.itemsize == 8
        arg = (T.uint64 if wide else T.uint32)
        return Sig((arg,), t if result_same else T.int32)

    return rule


def _bits_template(f32, f64, signed_arg=False):
    def template(codes, sig, items, ctx):
        t = _numeric(items[0], ctx.mode)
        wide = t.itemsize == 8
        fn = f64 if wide else f32
        arg = codes[0]
        if signed_arg:
            arg = f"({'long long' if wide else 'int'})({arg})"
        call = f"{fn}({arg})"
        return f"(({sig.result.ctype}){call})"

    return template


popc = Builtin("popc", ("x",), "any integer", _bits_rule(False), _bits_template("__popc", "__popcll"),
               "Number of set bits.", "bits")
clz = Builtin("clz", ("x",), "any integer", _bits_rule(False),
              _bits_template("__clz", "__clzll", True),
              "Number of leading zero bits (of the 32- or 64-bit value).", "bits")
ffs = Builtin("ffs", ("x",), "any integer", _bits_rule(False),
              _bits_template("__ffs", "__ffsll", True),
              "Position (1-based) of the least significant set bit, 0 if none.", "bits")
brev = Builtin("brev", ("x",), "32- or 64-bit integer", _bits_rule(True),
               _bits_template("__brev", "__brevll"), "Bits in reverse order.", "bits")

# ---------------------------------------------------------------------------
# Python builtins and casts (the emitter maps Python's own objects to these)


def _cast_rule(target_of):
    def rule(items, mode):
        target = target_of(items, mode)
        src = operand(items[-1]) if items else None
        if isinstance(src, T.Scalar) and src.is_complex and not target.is_complex:
            raise TypeError(f"cannot convert {src} to {target}; take .real or abs() first")
        return Sig((None,) * (len(items) - 1) + (target,), target)

    return rule


def _dtype_target(items, mode):
    return T.scalar_from_dtype(items[0].value)


dtype_cast = Builtin("numpy.<dtype>", ("dtype", "x"), "any number",
                     _cast_rule(_dtype_target), "{1}",
                     "numpy.float32(x), x.dtype.type(x), ...: convert x to that type.", "python")
int_cast = Builtin("int", ("x",), "any real number",
                   _cast_rule(lambda items, mode: infer.literal_type(0, mode)), "{0}",
                   "Convert to the mode's int (int32 in cuda mode, int64 in numpy mode); "
                   "truncates toward zero.", "python", fold=int)
float_cast = Builtin("float", ("x",), "any real number",
                     _cast_rule(lambda items, mode: infer.literal_type(0.0, mode)), "{0}",
                     "Convert to the mode's float (float32 / float64).", "python", fold=float)
bool_cast = Builtin("bool", ("x",), "any number", fixed(T.bool_, result=T.bool_), "{0}",
                    "Truth value (x != 0).", "python", fold=bool)


def _complex_rule(items, mode):
    target = infer.literal_type(0j, mode)
    parts = [_numeric(i, mode) for i in items]
    if any(p.is_complex for p in parts) and len(items) > 1:
        raise TypeError("complex(re, im) takes real parts")
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


complex_cast = Builtin("complex", ("real", "imag=0"), "real numbers", _complex_rule,
                       _complex_template, "Make a complex number (complex64 in cuda mode, "
                       "complex128 in numpy mode, or when a part is float64).", "python",
                       fold=complex)


def _len_rule(items, mode):
    return Sig((None,), T.int64)


def _len_template(codes, sig, items, ctx):
    return ctx.array_shape(items[0], 0)


len_ = Builtin("len", ("x",), "array", _len_rule, _len_template, "x.shape[0].", "python")


def _abs_rule(items, mode):
    t = _numeric(items[0], mode)
    result = T.complex_part(t) if t.is_complex else t
    return Sig((t,), result)


def _abs_template(codes, sig, items, ctx):
    t = _numeric(items[0], ctx.mode)
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


abs_ = Builtin("abs", ("x",), "any number", _abs_rule, _abs_template,
               "Absolute value (of a complex: its magnitude).", "python", fold=abs)


def _minmax_rule(items, mode):
    if len(items) < 2:
        raise TypeError("needs at least two arguments")
    ops = [operand(i) for i in items]
    t = infer.result_type(ops, mode)
    if t.is_complex:
        raise TypeError("complex numbers are not ordered")
    return Sig((t,) * len(items), t)


def _minmax_template(helper):
    def template(codes, sig, items, ctx):
        out = codes[0]
        for c in codes[1:]:
            out = f"jk::{helper}({out}, {c})"
        return out

    return template


min_ = Builtin("min", ("a", "b", "*more"), "real numbers", _minmax_rule,
               _minmax_template("pymin"), "Smallest argument (Python semantics: NaN only if "
               "first).", "python", fold=_py.min)
max_ = Builtin("max", ("a", "b", "*more"), "real numbers", _minmax_rule,
               _minmax_template("pymax"), "Largest argument (Python semantics).", "python",
               fold=_py.max)


def _range_rule(items, mode):
    raise TypeError("range() can only be used as the iterable of a for loop")


range_ = Builtin("range", ("start", "stop=None", "step=1"), "integers", _range_rule, "",
                 "Loop range (for loops only); any step, negative too.", "python")
jit_range = Builtin("range", ("start", "stop=None", "step=1", "unroll=None"), "integers",
                    _range_rule, "",
                    "Like range, with unroll=N/True/False emitted as #pragma unroll.", "python")


def _print_rule(items, mode):
    return Sig((None,) * len(items), T.void)


def _print_template(codes, sig, items, ctx):
    return ctx.printf(items, codes)


print_ = Builtin("print", ("*values",), "numbers and strings", _print_rule, _print_template,
                 "Device printf of the values, separated by spaces, ended by a newline.",
                 "python")


def _pow_template(codes, sig, items, ctx):
    return ctx.binary("Pow", items[0], items[1]).code


pow_ = Builtin("pow", ("base", "exp"), "numbers", lambda items, mode: Sig((None, None), T.void),
               _pow_template, "Same as base ** exp.", "python", fold=_py.pow)

# ---------------------------------------------------------------------------
# math functions: one table; each row maps Python and NumPy names to CUDA


@dataclasses.dataclass(frozen=True)
class _MathRow:
    names: tuple  # 'math.sqrt', 'numpy.sqrt', ...
    nargs: int
    f32: str  # CUDA function for float (and, through float, float16/bfloat16)
    f64: str  # CUDA function for double
    result: str = "float"  # 'float': the argument's float type; 'bool'
    complex_fn: str | None = None  # overload in jitkern/complex.cuh
    doc: str = ""


def _m(names, f32, f64, doc, nargs=1, result="float", complex_fn=None):
    return _MathRow(tuple(names.split()), nargs, f32, f64, result, complex_fn, doc)


_MATH_ROWS = (
    _m("math.sqrt numpy.sqrt cmath.sqrt", "sqrtf", "sqrt", "Square root.", complex_fn="sqrt"),
    _m("math.cbrt numpy.cbrt", "cbrtf", "cbrt", "Cube root."),
    _m("math.exp numpy.exp cmath.exp", "expf", "exp", "e ** x.", complex_fn="exp"),
    _m("math.exp2 numpy.exp2", "exp2f", "exp2", "2 ** x."),
    _m("math.expm1 numpy.expm1", "expm1f", "expm1", "exp(x) - 1, accurate near 0."),
    _m("math.log numpy.log cmath.log", "logf", "log", "Natural logarithm.", complex_fn="log"),
    _m("math.log2 numpy.log2", "log2f", "log2", "Base-2 logarithm."),
    _m("math.log10 numpy.log10 cmath.log10", "log10f", "log10", "Base-10 logarithm."),
    _m("math.log1p numpy.log1p", "log1pf", "log1p", "log(1 + x), accurate near 0."),
    _m("math.sin numpy.sin cmath.sin", "sinf", "sin", "Sine.", complex_fn="sin"),
    _m("math.cos numpy.cos cmath.cos", "cosf", "cos", "Cosine.", complex_fn="cos"),
    _m("math.tan numpy.tan cmath.tan", "tanf", "tan", "Tangent.", complex_fn="tan"),
    _m("math.asin numpy.arcsin", "asinf", "asin", "Arc sine."),
    _m("math.acos numpy.arccos", "acosf", "acos", "Arc cosine."),
    _m("math.atan numpy.arctan", "atanf", "atan", "Arc tangent."),
    _m("math.sinh numpy.sinh cmath.sinh", "sinhf", "sinh", "Hyperbolic sine.", complex_fn="sinh"),
    _m("math.cosh numpy.cosh cmath.cosh", "coshf", "cosh", "Hyperbolic cosine.",
       complex_fn="cosh"),
    _m("math.tanh numpy.tanh cmath.tanh", "tanhf", "tanh", "Hyperbolic tangent.",
       complex_fn="tanh"),
    _m("math.asinh numpy.arcsinh", "asinhf", "asinh", "Inverse hyperbolic sine."),
    _m("math.acosh numpy.arccosh", "acoshf", "acosh", "Inverse hyperbolic cosine."),
    _m("math.atanh numpy.arctanh", "atanhf", "atanh", "Inverse hyperbolic tangent."),
    _m("math.erf", "erff", "erf", "Error function."),
    _m("math.erfc", "erfcf", "erfc", "Complementary error function."),
    _m("math.lgamma", "lgammaf", "lgamma", "log(abs(gamma(x)))."),
    _m("math.gamma", "tgammaf", "tgamma", "Gamma function."),
    _m("numpy.floor", "floorf", "floor", "Largest integer <= x (as a float)."),
    _m("numpy.ceil", "ceilf", "ceil", "Smallest integer >= x (as a float)."),
    _m("numpy.trunc", "truncf", "trunc", "x rounded toward zero (as a float)."),
    _m("numpy.rint numpy.round", "rintf", "rint", "x rounded to the nearest even integer."),
    _m("math.fabs numpy.fabs", "fabsf", "fabs", "Absolute value as a float."),
    _m("math.atan2 numpy.arctan2", "atan2f", "atan2", "Arc tangent of y / x.", nargs=2),
    _m("math.hypot numpy.hypot", "hypotf", "hypot", "sqrt(x*x + y*y) without overflow.", nargs=2),
    _m("math.copysign numpy.copysign", "copysignf", "copysign", "|x| with the sign of y.",
       nargs=2),
    _m("math.fmod numpy.fmod", "fmodf", "fmod", "C remainder (sign of x).", nargs=2),
    _m("math.pow numpy.power", "powf", "pow", "x ** y (as a float).", nargs=2),
    _m("numpy.fmin", "fminf", "fmin", "Minimum, ignoring NaN.", nargs=2),
    _m("numpy.fmax", "fmaxf", "fmax", "Maximum, ignoring NaN.", nargs=2),
    _m("math.nextafter numpy.nextafter", "nextafterf", "nextafter", "Next float after x toward y.",
       nargs=2),
    _m("math.fma", "fmaf", "fma", "x * y + z with one rounding.", nargs=3),
    _m("math.isnan numpy.isnan cmath.isnan", "isnan", "isnan", "Whether x is NaN.",
       result="bool"),
    _m("math.isinf numpy.isinf cmath.isinf", "isinf", "isinf", "Whether x is infinite.",
       result="bool"),
    _m("math.isfinite numpy.isfinite cmath.isfinite", "isfinite", "isfinite",
       "Whether x is finite.", result="bool"),
    _m("numpy.signbit", "signbit", "signbit", "Whether the sign bit is set.", result="bool"),
)


def _math_rule(row: _MathRow):
    def rule(items, mode):
        ops = [operand(i) for i in items]
        t = infer.result_type(ops, mode)
        if t.is_complex and row.complex_fn is None:
            raise TypeError(f"{row.names[0]} does not take complex numbers")
        compute = t if t.is_complex else infer.float_type(t)
        result = T.bool_ if row.result == "bool" else compute
        return Sig((compute,) * len(items), result)

    return rule


def _math_template(row: _MathRow):
    def template(codes, sig, items, ctx):
        t = sig.args[0]
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


def _math_builtin(row: _MathRow) -> Builtin:
    params = ("x", "y", "z")[: row.nargs]
    accepts = "real numbers" + (", complex" if row.complex_fn else "")
    doc = row.doc + (f" Also {', '.join(row.names[1:])}." if len(row.names) > 1 else "")
    return Builtin(row.names[0], params, accepts, _math_rule(row), _math_template(row), doc,
                   "math", fold=_resolve_py(row.names[0]))


_MODULES = {"math": math, "numpy": numpy, "cmath": cmath}


def _resolve_py(dotted: str):
    module, _, attr = dotted.partition(".")
    return getattr(_MODULES[module], attr, None)


MATH = [(_math_builtin(row), row) for row in _MATH_ROWS]


def _square_template(codes, sig, items, ctx):
    return f"jk::pow2({codes[0]})"


def _same_numeric(items, mode):
    t = _numeric(items[0], mode)
    return Sig((t,), t)


square = Builtin("numpy.square", ("x",), "any number", _same_numeric, _square_template,
                 "x * x.", "math")
numpy_minimum = Builtin("numpy.minimum", ("a", "b"), "real numbers", _minmax_rule,
                        _minmax_template("npmin"), "Minimum, propagating NaN.", "math")
numpy_maximum = Builtin("numpy.maximum", ("a", "b"), "real numbers", _minmax_rule,
                        _minmax_template("npmax"), "Maximum, propagating NaN.", "math")


def _conj_template(codes, sig, items, ctx):
    if sig.result.is_complex:
        ctx.need_complex()
        return f"conj({codes[0]})"
    return codes[0]


conj = Builtin("numpy.conj", ("x",), "any number", _same_numeric, _conj_template,
               "Complex conjugate (x itself for real x).", "math")


def _real_part_rule(items, mode):
    t = _numeric(items[0], mode)
    return Sig((t,), T.complex_part(t))


def _part_template(part):
    def template(codes, sig, items, ctx):
        t = sig.args[0]
        if t.is_complex:
            ctx.need_complex()
            return f"{codes[0]}.{part}()"
        return codes[0] if part == "real" else ctx.zero(t)

    return template


real = Builtin(".real", ("x",), "any number", _real_part_rule, _part_template("real"),
               "Real part (x.real, numpy.real(x)).", "complex", attribute=True)
imag = Builtin(".imag", ("x",), "any number", _real_part_rule, _part_template("imag"),
               "Imaginary part (x.imag, numpy.imag(x)); 0 for real x.", "complex", attribute=True)
conjugate = Builtin(".conjugate", ("x",), "any number", _same_numeric, _conj_template,
                    "Complex conjugate (x.conjugate()).", "complex")


def _python_functions() -> dict:
    """Python/NumPy function objects -> their builtin record."""
    table = {
        _py.len: len_, _py.abs: abs_, _py.min: min_, _py.max: max_, _py.int: int_cast,
        _py.float: float_cast, _py.bool: bool_cast, _py.complex: complex_cast,
        _py.range: range_, _py.print: print_, _py.pow: pow_,
        numpy.absolute: abs_, numpy.square: square, numpy.minimum: numpy_minimum,
        numpy.maximum: numpy_maximum, numpy.conj: conj, numpy.conjugate: conj,
        numpy.real: real, numpy.imag: imag,
    }
    for record, row in MATH:
        for dotted in row.names:
            fn = _resolve_py(dotted)
            if fn is not None:
                table.setdefault(fn, record)
    return table


PY_FUNCTIONS = _python_functions()

#: Methods and attributes of values, by the receiver's family.
VALUE_METHODS = {
    ("scalar", "real"): real,
    ("scalar", "imag"): imag,
    ("scalar", "conjugate"): conjugate,
    ("scalar", "conj"): conjugate,
}

# ---------------------------------------------------------------------------
# cooperative groups (jit.cg)

_CG = "cooperative_groups"
_CG_INCLUDE = ("<cooperative_groups.h>",)
thread_block_t = T.opaque("thread_block", f"{_CG}::thread_block")
grid_group_t = T.opaque("grid", f"{_CG}::grid_group")
_GROUP_FAMILIES = ("thread_block", "grid", "tile")


def _group_of(item) -> T.Opaque:
    if isinstance(item, Value) and isinstance(item.type, T.Opaque) \
            and item.type.family in _GROUP_FAMILIES:
        return item.type
    raise TypeError("expected a cooperative group (cg.this_thread_block(), cg.this_grid(), "
                    "cg.tiled_partition(...))")


def _tiled_rule(items, mode):
    g = _group_of(items[0])
    if g.family != "thread_block":
        raise TypeError("tiled_partition partitions a thread block")
    n = _const_int(items[1], "size", {1, 2, 4, 8, 16, 32})
    return Sig((None, None), T.opaque("tile", f"{_CG}::thread_block_tile<{n}>", params=(n,)))


cg_this_thread_block = Builtin("cg.this_thread_block", (), "", fixed(result=thread_block_t),
                               f"{_CG}::this_thread_block()", "The calling thread's block.",
                               "cooperative groups", includes=_CG_INCLUDE)
cg_this_grid = Builtin("cg.this_grid", (), "", fixed(result=grid_group_t), f"{_CG}::this_grid()",
                       "The whole grid; its sync() makes the launch cooperative.",
                       "cooperative groups", includes=_CG_INCLUDE)
cg_tiled_partition = Builtin("cg.tiled_partition", ("group", "size"),
                             "a thread block; size 1, 2, 4, 8, 16 or 32 (constant)",
                             _tiled_rule, lambda codes, sig, items, ctx:
                             f"{_CG}::tiled_partition<{sig.result.params[0]}>({codes[0]})",
                             "Split a block into tiles of size threads.", "cooperative groups",
                             includes=_CG_INCLUDE)

CG_OPS = {name: Marker(f"cg.{name}", f"{_CG}::{name}") for name in
          ("plus", "less", "greater", "bit_and", "bit_or", "bit_xor")}


def _cg_reduce_rule(items, mode):
    _group_of(items[0])
    t = _numeric(items[1], mode)
    op = items[2]
    if not (isinstance(op, Const) and isinstance(op.value, Marker)
            and op.value.name.startswith("cg.")):
        raise TypeError("op must be cg.plus, cg.less, cg.greater, cg.bit_and, cg.bit_or or "
                        "cg.bit_xor")
    return Sig((None, t, None), t)


def _cg_reduce_template(codes, sig, items, ctx):
    ctx.include("<cooperative_groups/reduce.h>")
    op = items[2].value.cname
    return f"{_CG}::reduce({codes[0]}, {codes[1]}, {op}<{sig.result.ctype}>())"


cg_reduce = Builtin("cg.reduce", ("group", "value", "op"), "group; number; cg.plus/less/greater",
                    _cg_reduce_rule, _cg_reduce_template,
                    "Reduce value over the group with op (less: minimum, greater: maximum).",
                    "cooperative groups", includes=_CG_INCLUDE)


def _memcpy_rule(items, mode):
    _group_of(items[0])
    return Sig((None, None, None, T.uint32, None), T.void)


def _memcpy_template(codes, sig, items, ctx):
    ctx.include("<cooperative_groups/memcpy_async.h>")
    return f"{_CG}::memcpy_async({codes[0]}, &{codes[1]}, &{codes[2]}, {codes[3]})"


cg_memcpy_async = Builtin("cg.memcpy_async", ("group", "dst", "dst_idx", "src", "src_idx", "size",
                                              "aligned_size=None"),
                          "group; arrays or pointers with indices; size in bytes", _memcpy_rule,
                          _memcpy_template, "Asynchronous copy of size bytes by the group.",
                          "cooperative groups", address_of=((1, 2), (3, 4)),
                          includes=_CG_INCLUDE, min_arch=70)


def _group_rule(result=T.void, extra=()):
    def rule(items, mode):
        _group_of(items[0])
        return Sig((None,) + tuple(extra), result)

    return rule


def _wait_prior_template(codes, sig, items, ctx):
    ctx.include("<cooperative_groups/memcpy_async.h>")
    return f"{_CG}::wait_prior<{int(items[1].value)}>({codes[0]})"


def _wait_prior_rule(items, mode):
    _group_of(items[0])
    _const_int(items[1], "step")
    return Sig((None, None), T.void)


cg_wait = Builtin("cg.wait", ("group",), "group", _group_rule(),
                  lambda codes, sig, items, ctx: (ctx.include("<cooperative_groups/memcpy_async.h>")
                                                  or f"{_CG}::wait({codes[0]})"),
                  "Wait for the group's memcpy_async copies.", "cooperative groups",
                  includes=_CG_INCLUDE)
cg_wait_prior = Builtin("cg.wait_prior", ("group", "step"), "group; constant int",
                        _wait_prior_rule, _wait_prior_template,
                        "Wait until at most step of the latest copies are pending.",
                        "cooperative groups", includes=_CG_INCLUDE)
cg_sync = Builtin("cg.sync", ("group",), "group", _group_rule(),
                  lambda codes, sig, items, ctx: ctx.group_sync(items[0], codes[0]),
                  "Synchronise the group (grid: a cooperative launch).", "cooperative groups",
                  includes=_CG_INCLUDE)


def _method(family, name, params, result, template, doc, extra=(), **kw):
    return Builtin(f"{family}.{name}", ("self",) + params, family, _group_rule(result, extra),
                   template, doc, "cooperative groups", includes=_CG_INCLUDE, **kw)


def _group_methods() -> dict:
    out = {}
    common = (
        ("thread_rank", T.uint32, "{0}.thread_rank()", "Rank of this thread in the group."),
        ("size", T.uint32, "{0}.num_threads()", "Number of threads in the group."),
        ("num_threads", T.uint32, "{0}.num_threads()", "Number of threads in the group."),
    )
    for family in ("thread_block", "tile"):
        for name, result, code, doc in common:
            out[(family, name)] = _method(family, name, (), result, code, doc)
        out[(family, "sync")] = _method(family, "sync", (), T.void, "{0}.sync()",
                                        "Barrier over the group.")
    for name, code, doc in (("group_index", "{0}.group_index()", "blockIdx"),
                            ("thread_index", "{0}.thread_index()", "threadIdx"),
                            ("dim_threads", "{0}.dim_threads()", "blockDim"),
                            ("group_dim", "{0}.group_dim()", "blockDim")):
        out[("thread_block", name)] = _method("thread_block", name, (), T.dim3, code, doc + ".")
    for name, result, code, doc in (
            ("thread_rank", T.uint64, "{0}.thread_rank()", "Rank of this thread in the grid."),
            ("size", T.uint64, "{0}.num_threads()", "Threads in the grid."),
            ("num_threads", T.uint64, "{0}.num_threads()", "Threads in the grid."),
            ("block_rank", T.uint64, "{0}.block_rank()", "Rank of this block in the grid."),
            ("num_blocks", T.uint64, "{0}.num_blocks()", "Blocks in the grid."),
            ("is_valid", T.bool_, "{0}.is_valid()", "Whether the launch was cooperative.")):
        out[("grid", name)] = _method("grid", name, (), result, code, doc)
    out[("grid", "sync")] = _method("grid", "sync", (), T.void, "{0}.sync()",
                                    "Grid-wide barrier (makes the launch cooperative).",
                                    cooperative=True)
    for name, result, doc in (("meta_group_rank", T.uint32, "Index of this tile in its block."),
                              ("meta_group_size", T.uint32, "Number of tiles in the block.")):
        out[("tile", name)] = _method("tile", name, (), result, "{0}." + name + "()", doc)
    for name, lane in (("shfl", "src_lane"), ("shfl_up", "delta"), ("shfl_down", "delta"),
                       ("shfl_xor", "lane_mask")):
        out[("tile", name)] = Builtin(f"tile.{name}", ("self", "value", lane), "number",
                                      _tile_shfl_rule, "{0}." + name + "({1}, {2})",
                                      f"Tile shuffle ({name}).", "cooperative groups",
                                      includes=_CG_INCLUDE)
    for name, result, code in (("any", T.bool_, "({0}.any({1}) != 0)"),
                               ("all", T.bool_, "({0}.all({1}) != 0)"),
                               ("ballot", T.uint32, "{0}.ballot({1})")):
        out[("tile", name)] = _method("tile", name, ("predicate",), result, code,
                                      f"Tile vote ({name}).", extra=(T.bool_,))
    out[("dim3", "x")] = _dim3_attr("x")
    out[("dim3", "y")] = _dim3_attr("y")
    out[("dim3", "z")] = _dim3_attr("z")
    return out


def _tile_shfl_rule(items, mode):
    _group_of(items[0])
    t = _numeric(items[1], mode)
    return Sig((None, t, T.uint32), t)


def _dim3_attr(ax):
    return Builtin(f"dim3.{ax}", ("self",), "dim3", fixed(None, result=T.uint32), "{0}." + ax,
                   f"The {ax} component.", "cooperative groups", attribute=True)


VALUE_METHODS.update(_group_methods())

cg = Namespace("cg", {
    "this_thread_block": cg_this_thread_block, "this_grid": cg_this_grid,
    "tiled_partition": cg_tiled_partition, "reduce": cg_reduce,
    "memcpy_async": cg_memcpy_async, "wait": cg_wait, "wait_prior": cg_wait_prior,
    "sync": cg_sync, **CG_OPS,
})

# ---------------------------------------------------------------------------
# CUB block-level primitives (jit.cub)


@dataclasses.dataclass(frozen=True, eq=False)
class CubTemplate:
    """``cub.WarpReduce`` / ``cub.BlockReduce``: subscript with the value type (and size)."""

    name: str
    cname: str
    family: str
    include: str
    nparams: int

    def __getitem__(self, item):
        raise RuntimeError(f"jit.cub.{self.name}[...] can only be used inside a kernel")

    def instantiate(self, params) -> "CubClass":
        if len(params) != self.nparams:
            raise TypeError(f"cub.{self.name}[...] takes {self.nparams} parameter(s)")
        value_t = T.scalar_from_dtype(params[0])
        rest = []
        for p in params[1:]:
            if not isinstance(p, int) or p <= 0:
                raise TypeError(f"cub.{self.name}: the block size must be a positive constant")
            rest.append(str(p))
        cname = f"cub::{self.name}<{', '.join([value_t.ctype] + rest)}>"
        return CubClass(self, cname, value_t)

    def __jit_fingerprint__(self) -> str:
        return "cub:" + self.name


@dataclasses.dataclass(frozen=True)
class CubClass:
    template: CubTemplate
    cname: str
    value_type: T.Scalar

    @property
    def storage_type(self) -> T.Opaque:
        return T.opaque("cub_storage", self.cname + "::TempStorage", default_constructible=True)

    @property
    def instance_type(self) -> T.Opaque:
        return T.opaque(self.template.family, self.cname, params=(self.value_type,))

    def __jit_fingerprint__(self) -> str:
        return "cub:" + self.cname


@dataclasses.dataclass(frozen=True)
class CubStorage:
    """``WarpReduce[T].TempStorage``: a dtype for shared_memory."""

    cls: CubClass

    @property
    def storage_type(self):
        return self.cls.storage_type


CUB_OPS = {"Sum": Marker("cub.Sum", "::cuda::std::plus<>{}"),
           "Max": Marker("cub.Max", "::cuda::maximum<>{}"),
           "Min": Marker("cub.Min", "::cuda::minimum<>{}")}


def _cub_reduce_rule(items, mode):
    owner = items[0].type
    t = owner.params[0]
    op = items[2]
    if isinstance(op, Const) and isinstance(op.value, Marker) and op.value.name.startswith("cub."):
        return Sig((None, t, None), t)
    if isinstance(op, Const) and hasattr(op.value, "__jit_device__"):
        return Sig((None, t, None), t)
    raise TypeError("op must be jit.cub.Sum(), jit.cub.Max(), jit.cub.Min() or a device function")


def _cub_reduce_template(codes, sig, items, ctx):
    op = items[2].value
    if isinstance(op, Marker):
        ctx.include("<cuda/functional>")
        functor = op.cname
    else:
        functor = ctx.device_functor(op, sig.result)
    return f"{codes[0]}.Reduce({codes[1]}, {functor})"


def _cub_sum_rule(items, mode):
    t = items[0].type.params[0]
    has_count = len(items) > 2 and not (isinstance(items[2], Const) and items[2].value is None)
    return Sig((None, t) + ((T.int32,) if has_count else (None,) * (len(items) - 2)), t)


def _cub_methods(family):
    def named(op):
        return lambda codes, sig, items, ctx: (ctx.include("<cuda/functional>") or
                                               f"{codes[0]}.Reduce({codes[1]}, "
                                               f"{CUB_OPS[op].cname})")

    return {
        (family, "Sum"): Builtin(f"{family}.Sum", ("self", "value", "num_valid=None"), "the "
                                 "reducer's value type", _cub_sum_rule,
                                 lambda codes, sig, items, ctx: f"{codes[0]}.Sum({', '.join(c for c in codes[1:] if c)})",
                                 "Sum over the warp/block (valid in lane/thread 0).", "cub"),
        (family, "Max"): Builtin(f"{family}.Max", ("self", "value"), "value type", _cub_sum_rule,
                                 named("Max"), "Maximum over the warp/block.", "cub"),
        (family, "Min"): Builtin(f"{family}.Min", ("self", "value"), "value type", _cub_sum_rule,
                                 named("Min"), "Minimum over the warp/block.", "cub"),
        (family, "Reduce"): Builtin(f"{family}.Reduce", ("self", "value", "op"),
                                    "value type; cub.Sum()/Max()/Min() or a device function",
                                    _cub_reduce_rule, _cub_reduce_template,
                                    "Reduce with op over the warp/block.", "cub"),
    }


VALUE_METHODS.update(_cub_methods("warp_reduce"))
VALUE_METHODS.update(_cub_methods("block_reduce"))

cub = Namespace("cub", {
    "WarpReduce": CubTemplate("WarpReduce", "cub::WarpReduce", "warp_reduce",
                              "<cub/warp/warp_reduce.cuh>", 1),
    "BlockReduce": CubTemplate("BlockReduce", "cub::BlockReduce", "block_reduce",
                               "<cub/block/block_reduce.cuh>", 2),
    **CUB_OPS,
})

# ---------------------------------------------------------------------------
# the jit namespace's builtins, by name

PUBLIC = {
    "threadIdx": threadIdx, "blockIdx": blockIdx, "blockDim": blockDim, "gridDim": gridDim,
    "warpsize": warpsize, "grid": grid, "gridsize": gridsize, "laneid": laneid,
    "syncthreads": syncthreads, "syncwarp": syncwarp, "syncthreads_count": syncthreads_count,
    "syncthreads_and": syncthreads_and, "syncthreads_or": syncthreads_or,
    "threadfence": threadfence, "threadfence_block": threadfence_block,
    "threadfence_system": threadfence_system, "clock64": clock64, "nanosleep": nanosleep,
    "shared_memory": shared_memory, "ldg": ldg, "activemask": activemask,
    "match_any_sync": match_any_sync, "match_all_sync": match_all_sync,
    "popc": popc, "clz": clz, "ffs": ffs, "brev": brev, "range": jit_range,
    **ATOMICS, **SHUFFLES, **VOTES,
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
    for obj in (cg, dtype_cast, *PY_FUNCTIONS.values(), *VALUE_METHODS.values(),
                *OPERATORS.values()):
        add(obj)
    return list(seen.values())


def render_table() -> str:
    """The builtin table of docs/jit.md, as Markdown, grouped."""
    rows = sorted(all_records(), key=lambda r: (_GROUP_ORDER.index(r.group), r.name))
    out = ["| group | builtin | arguments | accepts | doc |", "|---|---|---|---|---|"]
    for r in rows:
        call = r.name if r.attribute else f"{r.name}({', '.join(r.params)})"
        if r.name.startswith(("thread_block.", "tile.", "grid.", "warp_reduce.", "block_reduce.",
                              "dim3.")):
            call = call.replace("(self, ", "(").replace("(self)", "()")
        params = ", ".join(r.param_names()) or "-"
        note = r.doc + (f" Needs sm_{r.min_arch}+." if r.min_arch else "")
        cells = [r.group, f"`{call}`", params, r.accepts or "-", note]
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(out)


_GROUP_ORDER = ("operators", "indexing", "sync", "timing", "memory", "atomics", "warp", "bits", "python",
                "math", "complex", "cooperative groups", "cub")

# ---------------------------------------------------------------------------
# operators: AST operator name -> record (the emitter maps ast classes to these names)


def _arith_rule(items, mode):
    t = infer.arithmetic_type([operand(i) for i in items], mode)
    return Sig((t,) * len(items), t)


def _real_arith_rule(items, mode):
    sig = _arith_rule(items, mode)
    if sig.result.is_complex:
        raise TypeError("complex numbers have no floor division or remainder")
    return sig


def _truediv_rule(items, mode):
    t = infer.true_divide_type([operand(i) for i in items], mode)
    return Sig((t, t), t)


def _int_rule(name):
    def rule(items, mode):
        t = infer.integer_type([operand(i) for i in items], mode, name)
        return Sig((t,) * len(items), t)

    return rule


def _compare_rule(name):
    def rule(items, mode):
        t = infer.result_type([operand(i) for i in items], mode)
        if t.is_complex and name not in ("==", "!="):
            raise TypeError("complex numbers are not ordered")
        return Sig((t, t), T.bool_)

    return rule


def _python_div_template(helper):
    def template(codes, sig, items, ctx):
        t = sig.result
        if t.is_half:
            return ctx.via_float(t, f"jk::{helper}({ctx.to_float(t, codes[0])}, "
                                    f"{ctx.to_float(t, codes[1])})")
        prefix = "u" if t.kind in "ub" else ""
        return f"jk::{prefix}{helper}({codes[0]}, {codes[1]})"

    return template


def _pow_op_template(codes, sig, items, ctx):
    t = sig.result
    exponent = items[1]
    if isinstance(exponent, Const) and exponent.value == 2 and not t.is_complex:
        return f"jk::pow2({codes[0]})"
    if t.is_complex:
        ctx.need_complex()
        return f"pow({codes[0]}, {codes[1]})"
    if t.kind in "iu":
        return f"jk::{'u' if t.kind == 'u' else ''}ipow({codes[0]}, {codes[1]})"
    if t.is_half:
        return ctx.via_float(t, f"powf({ctx.to_float(t, codes[0])}, {ctx.to_float(t, codes[1])})")
    return f"{'powf' if t is T.float32 else 'pow'}({codes[0]}, {codes[1]})"


def _c_binary(symbol):
    def template(codes, sig, items, ctx):
        if sig.args[0] is not None and getattr(sig.args[0], "is_complex", False):
            ctx.need_complex()
        return f"({codes[0]} {symbol} {codes[1]})"

    return template


def _op(name, symbol, rule, template=None, doc=""):
    return Builtin(f"operator {symbol}", ("a", "b"), "numbers", rule,
                   template or _c_binary(symbol), doc, "operators")


OPERATORS = {
    "Add": _op("Add", "+", _arith_rule, doc="Addition (bool + bool is an int)."),
    "Sub": _op("Sub", "-", _arith_rule, doc="Subtraction."),
    "Mult": _op("Mult", "*", _arith_rule, doc="Multiplication."),
    "Div": _op("Div", "/", _truediv_rule, doc="True division: ints give a float."),
    "FloorDiv": _op("FloorDiv", "//", _real_arith_rule, _python_div_template("floordiv"),
                    "Floor division (Python: rounds toward -inf; x // 0 is 0 for ints)."),
    "Mod": _op("Mod", "%", _real_arith_rule, _python_div_template("mod"),
               "Remainder with the sign of the divisor (Python); x % 0 is 0 for ints."),
    "Pow": _op("Pow", "**", _arith_rule, _pow_op_template,
               "Power; int ** int stays an int, x ** 2 is x * x."),
    "LShift": _op("LShift", "<<", _int_rule("<<"), doc="Left shift (integers)."),
    "RShift": _op("RShift", ">>", _int_rule(">>"), doc="Right shift (integers)."),
    "BitAnd": _op("BitAnd", "&", _int_rule("&"), doc="Bitwise and (integers, bools)."),
    "BitOr": _op("BitOr", "|", _int_rule("|"), doc="Bitwise or (integers, bools)."),
    "BitXor": _op("BitXor", "^", _int_rule("^"), doc="Bitwise xor (integers, bools)."),
    "Eq": _op("Eq", "==", _compare_rule("=="), doc="Comparisons chain: a < b < c."),
    "NotEq": _op("NotEq", "!=", _compare_rule("!="), doc="Comparison."),
    "Lt": _op("Lt", "<", _compare_rule("<"), doc="Comparison."),
    "LtE": _op("LtE", "<=", _compare_rule("<="), doc="Comparison."),
    "Gt": _op("Gt", ">", _compare_rule(">"), doc="Comparison."),
    "GtE": _op("GtE", ">=", _compare_rule(">="), doc="Comparison."),
}
