"""The Python spelling of each builtin, keyed by the record's name.

The records (compiler/builtins) stay the single place of each builtin's name, arguments
and type rule; the shared emitter checks a call through the record's rule and
converts the arguments, then asks the back end for the text. This table is the
simulator's text: a ``str.format`` pattern over the converted argument codes, or a
function ``(codes, sig, items, ctx) -> str`` like the C++ templates. Records whose
C++ template only calls back into the emitter (``len``, ``print``, ``pow``,
``shared_memory``, casts) are used as they are (:data:`SHARED`).
"""

from __future__ import annotations

from ..compiler import builtins as B
from ..compiler import types as T
from ..compiler.builtins.thrust import _ALGORITHMS as THRUST_ROWS
from ..compiler.builtins.thrust import element_type
from ..compiler.expressions import ExpressionEmitter, problem
from ..compiler.values import Const

#: Records whose template is back-end neutral (it only uses the emitter's methods or
#: passes a converted argument through).
SHARED = frozenset(
    [
        "len",
        "print",
        "pow",
        "shared_memory",
        "numpy.<dtype>",
        "int",
        "float",
        "bool",
        "numpy.dtype",
        "local_memory",
        "numpy.negative",
        "operator **",
        "numpy.power",
        "min",
        "max",
        "numpy.minimum",
        "numpy.maximum",
    ]
)


def _binary(symbol):
    def template(codes, sig, items, ctx):
        arg_t = sig.args[0]
        if getattr(arg_t, "is_half", False):  # computed in float32, rounded where stored
            a, b = ctx.to_float(arg_t, codes[0]), ctx.to_float(arg_t, codes[1])
            code = f"({a} {symbol} {b})"
            return ctx.via_float(sig.result, code) if sig.result.is_half else code
        op = symbol
        if sig.result is T.bool_ and symbol in ("+", "*"):
            op = "|" if symbol == "+" else "&"  # NumPy's logical or / and on bools
        return f"({codes[0]} {op} {codes[1]})"

    return template


def _half_safe(symbol):
    """// and %: NumPy's on the operands' type (Python's floor and sign rules, x // 0 == 0
    for ints); float16 through float32, as the C++ does."""

    def template(codes, sig, items, ctx):
        t = sig.result
        if t.is_half:
            a, b = ctx.to_float(t, codes[0]), ctx.to_float(t, codes[1])
            return ctx.via_float(t, f"({a} {symbol} {b})")
        return f"({codes[0]} {symbol} {codes[1]})"

    return template


OPERATOR_SYMBOLS = {
    "Add": "+",
    "Sub": "-",
    "Mult": "*",
    "Div": "/",
    "LShift": "<<",
    "RShift": ">>",
    "BitAnd": "&",
    "BitOr": "|",
    "BitXor": "^",
    "Eq": "==",
    "NotEq": "!=",
    "Lt": "<",
    "LtE": "<=",
    "Gt": ">",
    "GtE": ">=",
}


# -- threads ---------------------------------------------------------------------------

_AXES = "xyz"


def _grid(kind):
    def template(codes, sig, items, ctx):
        n = int(items[0].value)
        if kind == "grid":
            parts = [f"(_jk_b{a} * _jk_nb{a} + _jk_t{a})" for a in _AXES[:n]]
        else:
            parts = [f"(_jk_nb{a} * _jk_ng{a})" for a in _AXES[:n]]
        return parts[0] if n == 1 else ctx.tuple_code(sig.result, parts)

    return template


def _sync(how):
    def template(codes, sig, items, ctx):
        pred = codes[0] if codes else "None"
        return ctx.yields(f"_jk_SYNC, {ctx.site()}, {how!r}, {pred}, None")

    return template


# -- warp ------------------------------------------------------------------------------


def _collective(request, kind, count, lanes=list):
    """A warp collective: ``request`` to the scheduler with the ``count`` arguments
    ``lanes(codes)`` gives, the lanes' mask first (a warp call's own arguments, or a
    tile's mask and size around the others: :func:`_tile_lanes`)."""

    def template(codes, sig, items, ctx):
        args = ", ".join(lanes(codes)[:count])
        return ctx.yields(f"{request}, {ctx.site()}, {args}, {kind!r}")

    return template


def _tile_lanes(codes) -> list:
    tile = codes[0]
    return [f"{tile}.mask", *codes[1:], f"{tile}.size"]


def _shuffle(kind, lanes=list):
    request = _collective("_jk_SHFL", kind, 4, lanes)

    def template(codes, sig, items, ctx):
        call = request(codes, sig, items, ctx)
        arg = sig.args[1]
        if arg != sig.result:
            return ctx.convert_code(call, arg, sig.result)
        return call

    return template


def _vote(kind, lanes=list):
    return _collective("_jk_VOTE", kind, 2, lanes)


def _match(kind):
    return _collective("_jk_MATCH", kind, 2)


def _bits(fn, width_arg=True, same=False):
    def template(codes, sig, items, ctx):
        bits = 64 if sig.args[0].itemsize == 8 else 32
        call = f"_jk_{fn}({codes[0]}, {bits})" if width_arg else f"_jk_{fn}({codes[0]})"
        if same:
            return ctx.convert_code(call, sig.args[0], sig.result)
        return call

    return template


# -- atomics ---------------------------------------------------------------------------


def _atomic(op):
    def template(codes, sig, items, ctx):
        array, index = ctx.elements[codes[0]]
        if op == "cas":
            return f"_jk_atomic_cas({array}, {index}, {codes[1]}, {codes[2]})"
        return f"_jk_atomic(_jk_atomic_{op}, {array}, {index}, {codes[1]})"

    return template


# -- Python functions and math ---------------------------------------------------------


def _abs(codes, sig, items, ctx):
    t = sig.args[0]
    if t.kind in "bu":
        return codes[0]
    if t.is_half:
        return ctx.via_float(t, f"abs({ctx.to_float(t, codes[0])})")
    return f"abs({codes[0]})"


def _complex(codes, sig, items, ctx):
    if len(codes) == 1:
        return codes[0]
    return f"_jk_complex(_jk_t_{sig.result.name}, {codes[0]}, {codes[1]})"


def _part(part):
    def template(codes, sig, items, ctx):
        t = sig.args[0]
        if t.is_complex:
            return f"{codes[0]}.{part}"
        return codes[0] if part == "real" else ctx.zero(t)

    return template


def _conj(codes, sig, items, ctx):
    return f"{codes[0]}.conjugate()" if sig.result.is_complex else codes[0]


#: C's math function (the rows' f64 name) -> NumPy ufunc; None: Python's math on doubles.
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


def _math(row):
    def template(codes, sig, items, ctx):
        t = sig.args[0]
        if row.keeps_integers and t.kind in "biu":
            return codes[0]
        if row.f64 == "fma":
            return _halfwise(t, ctx, codes, lambda cs: f"_jk_fma({', '.join(cs)})", row)
        if row.f64 in _PY_MATH:
            fn = f"_jk_math.{_PY_MATH[row.f64]}"
            return _halfwise(
                t, ctx, codes, lambda cs: f"_jk_via_math({fn}, {cs[0]}, _jk_t_{_calc(t)})", row
            )
        fn = f"_jk_np.{_NUMPY_MATH[row.f64]}"
        return _halfwise(t, ctx, codes, lambda cs: f"{fn}({', '.join(cs)})", row)

    return template


def _calc(t: T.Scalar) -> str:
    return "float32" if t.is_half else t.name


def _halfwise(t, ctx, codes, call, row):
    """float16 computes in float32 and rounds back, as the C++ does."""
    if not t.is_half:
        return call(codes)
    out = call([ctx.to_float(t, c) for c in codes])
    return out if row.result == "bool" else ctx.via_float(t, out)


#: (ufunc, loop kind) -> the run-time twin of its C++ where that is not NumPy's loop: an
#: integer power with a negative exponent is 0 (or +-1) in the kernel; NumPy raises. An
#: integer reciprocal of 0 is 0 in the kernel, as in CuPy; NumPy's is undefined.
_UFUNC_RUNTIME = {("power", "i"): "_jk_ipow", ("power", "u"): "_jk_ipow",
                  ("reciprocal", "i"): "_jk_ireciprocal", ("reciprocal", "u"): "_jk_ireciprocal"}

#: Rows whose float16 loop the C++ computes between halves (not in float and rounded):
#: the simulator runs NumPy's own float16 loop for them.
_HALF_NATIVE = frozenset({"nextafter"})


def _ufunc(row):
    """NumPy's ufunc on NumPy scalars with ``signature=`` the loop (or the C++'s run-time
    twin, :data:`_UFUNC_RUNTIME`); a half loop runs in float32 and rounds each result, as
    the C++ row does."""
    fn = f"_jk_np.{row.name}"

    def template(codes, sig, items, ctx):
        outs = B.ufuncs.result_types(row, sig)
        args = [ctx.to_float(t, c) if t.is_half else c for t, c in zip(sig.args, codes)]
        twin = _UFUNC_RUNTIME.get((row.name, sig.args[0].kind))
        if twin is not None:
            return f"{twin}({', '.join(args)})"
        if row.name in _HALF_NATIVE and sig.args[0].name == "float16":
            signature = "".join(ctx.type_code(t) + ", " for t in (*sig.args, *outs))
            return f"{fn}({', '.join(codes)}, signature=({signature}))"
        loop = [T.float32 if t.is_half else t for t in (*sig.args, *outs)]
        signature = "".join(ctx.type_code(t) + ", " for t in loop)
        call = f"{fn}({', '.join(args)}, signature=({signature}))"
        if not any(t.is_half for t in outs):
            return call
        if len(outs) == 1:
            return ctx.via_float(outs[0], call)
        parts = [ctx.via_float(t, f"r[{j}]") if t.is_half else f"r[{j}]" for j, t in enumerate(outs)]
        return f"(lambda r: ({''.join(p + ', ' for p in parts)}))({call})"

    return template


def _where(codes, sig, items, ctx):
    return f"({codes[1]} if {codes[0]} else {codes[2]})"


def _square(codes, sig, items, ctx):
    return f"_jk_square({codes[0]})"


# -- cooperative groups and cub ----------------------------------------------------------


def _family(item) -> str:
    return getattr(item.type, "family", "")


def _group_sync(codes, sig, items, ctx):
    return ctx.group_sync(items[0], codes[0])


def _op_code(op, sig, ctx) -> str:
    if isinstance(op, B.Marker):
        return "_jk_op_" + op.name.replace(".", "_")
    return ctx.device_functor(op, sig.result)


def _cg_reduce(codes, sig, items, ctx):
    if _family(items[0]) != "tile":
        raise problem("the simulator reduces over tiles (cg.tiled_partition) only")
    op = _op_code(items[2].value, sig, ctx)
    return ctx.yields(f"_jk_REDUCE, {ctx.site()}, {codes[0]}.mask, {codes[1]}, None, {op}")


def _cub(op_name):
    def template(codes, sig, items, ctx):
        if op_name == "Reduce":
            op = _op_code(items[2].value, sig, ctx)
            count = "None"
        else:
            op = "_jk_op_cub_" + op_name
            count = codes[2] if op_name == "Sum" and len(codes) > 2 and codes[2] else "None"
        if _family(items[0]) == "warp_reduce":
            code = ctx.yields(f"_jk_REDUCE, {ctx.site()}, {codes[0]}, {codes[1]}, {count}, {op}")
        else:
            code = ctx.yields(f"_jk_SYNC, {ctx.site()}, {op}, {codes[1]}, {count}")
        t = sig.result  # a half reduction accumulates in float32 (codes[1] is float32)
        return ctx.via_float(t, code) if t.is_half else code

    return template


def _memcpy(codes, sig, items, ctx):
    dst, di = ctx.elements[codes[1]]
    src, si = ctx.elements[codes[2]]
    return f"_jk_memcpy({dst}, {di}, {src}, {si}, {codes[3]})"


# -- jit.thrust: each row of the JIT's table calls its NumPy version (see .thrust) ------


def _thrust(algo):
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
                args.append("None" if absent else _thrust_functor(item.value, typed, arity, ctx))
                ops += 1
            elif kind == "vinit" and absent:
                args.append(ctx.zero(element_type(items[3])))
            elif kind in ("init", "elem") and absent:
                args.append(_thrust_default(algo.name, kind, len(args), sig, elem, ctx))
            else:
                args.append(code)
        return f"_jk_thrust_{algo.name}({ctx.site()}, {', '.join(args)})"

    return template


def _thrust_default(name, kind, position, sig, elem, ctx) -> str:
    """What Thrust uses for an omitted init (0) or step (1), in the type it computes in."""
    if name == "reduce":
        return ctx.zero(sig.result)
    if name == "sequence" and position == 3:  # step
        return ctx.literal(1, elem)
    return ctx.zero(elem)


def _thrust_functor(value, typed: T.Scalar, arity: int, ctx) -> str:
    if isinstance(value, B.Marker):
        return f"_jk_functor({value.name.split('.', 1)[1]!r}, {ctx.type_code(typed)})"
    fn = ctx.program_device_function(value, (typed,) * arity)
    if ctx.program.functions[fn.cname].generator:
        raise problem("a jit.thrust operator cannot synchronise threads")
    params = ", ".join(f"a{k}" for k in range(arity))
    return f"(lambda {params}: {fn.cname}({ctx.context}, {params}))"


def _pointer_offset(symbol):
    def template(codes, sig, items, ctx):
        if sig.result is T.int64:
            return f"_jk_ptr_diff({codes[0]}, {codes[1]})"
        step = codes[1] if symbol == "+" else f"(-{codes[1]})"
        return f"_jk_ptr_add({codes[0]}, {step})"

    return template


def _fancy_iterator(codes, sig, items, ctx):
    t = sig.result
    return f"_jk_fancy({t.kind!r}, {ctx.type_code(t.elem)}({codes[0]}))"


def _thrust_table() -> dict:
    table = {f"thrust.{a.name}": _thrust(a) for a in THRUST_ROWS}
    table["thrust.make_counting_iterator"] = _fancy_iterator
    table["thrust.make_constant_iterator"] = _fancy_iterator
    table["array.begin"] = "{0}"
    table["array.end"] = "_jk_ptr_end({0})"
    table["pointer +"] = _pointer_offset("+")
    table["pointer -"] = _pointer_offset("-")
    return table


def _groups() -> dict:
    u32 = "_jk_t_uint32"
    table = {
        "cg.this_thread_block": "_jk_T.block",
        "cg.this_grid": "_jk_T.block.grid",
        "cg.tiled_partition": lambda codes, sig, items, ctx: (
            f"_jk_tile(_jk_T, {sig.result.params[0]})"
        ),
        "cg.reduce": _cg_reduce,
        "cg.memcpy_async": _memcpy,
        "cg.wait": "None",
        "cg.wait_prior": "None",
        "cg.sync": _group_sync,
        "thread_block.thread_rank": f"{u32}(_jk_T.rank)",
        "thread_block.size": f"{u32}({{0}}.size)",
        "thread_block.num_threads": f"{u32}({{0}}.size)",
        "thread_block.sync": _group_sync,
        "thread_block.group_index": "_jk_dim3(_jk_bx, _jk_by, _jk_bz)",
        "thread_block.thread_index": "_jk_dim3(_jk_tx, _jk_ty, _jk_tz)",
        "thread_block.dim_threads": "_jk_dim3(_jk_nbx, _jk_nby, _jk_nbz)",
        "thread_block.group_dim": "_jk_dim3(_jk_nbx, _jk_nby, _jk_nbz)",
        "grid.thread_rank": "_jk_grid_rank(_jk_T)",
        "grid.size": "_jk_t_uint64(_jk_grid_blocks(_jk_T) * _jk_T.block.size)",
        "grid.num_threads": "_jk_t_uint64(_jk_grid_blocks(_jk_T) * _jk_T.block.size)",
        "grid.block_rank": "_jk_block_rank(_jk_T)",
        "grid.num_blocks": "_jk_grid_blocks(_jk_T)",
        "grid.is_valid": "_jk_t_bool({0}.cooperative)",
        "grid.block_index": "_jk_dim3(_jk_bx, _jk_by, _jk_bz)",
        "grid.dim_blocks": "_jk_dim3(_jk_ngx, _jk_ngy, _jk_ngz)",
        "grid.group_dim": "_jk_dim3(_jk_ngx, _jk_ngy, _jk_ngz)",
        "grid.sync": _group_sync,
        # thread-block clusters: the scheduler runs a cluster's blocks together
        "cg.this_cluster": "_jk_T.block.cluster",
        "cluster.thread_rank": "{0}.thread_rank(_jk_T)",
        "cluster.num_threads": "{0}.num_threads()",
        "cluster.size": "{0}.num_threads()",
        "cluster.block_rank": "{0}.block_rank()",
        "cluster.num_blocks": "{0}.num_blocks()",
        "cluster.block_index": "{0}.block_index()",
        "cluster.dim_blocks": "{0}.dim_blocks()",
        "cluster.sync": lambda codes, sig, items, ctx: ctx.yields(
            f"_jk_CLUSTER_SYNC, {ctx.site()}"
        ),
        "cluster.map_shared_rank": "{0}.map_shared_rank({1}, {2})",
        "tile.thread_rank": "{0}.rank",
        "tile.size": "{0}.size",
        "tile.num_threads": "{0}.size",
        "tile.meta_group_rank": "{0}.meta_rank",
        "tile.meta_group_size": "{0}.meta_size",
        "tile.sync": _group_sync,
        "tile.any": _vote("any", _tile_lanes),
        "tile.all": _vote("all", _tile_lanes),
        "tile.ballot": _vote("tile_ballot", _tile_lanes),
        "dim3.x": "{0}.x",
        "dim3.y": "{0}.y",
        "dim3.z": "{0}.z",
    }
    for name, kind in (
        ("shfl", "idx"),
        ("shfl_up", "up"),
        ("shfl_down", "down"),
        ("shfl_xor", "xor"),
    ):
        table[f"tile.{name}"] = _shuffle(kind, _tile_lanes)
    for family in ("warp_reduce", "block_reduce"):
        for op in ("Sum", "Max", "Min", "Reduce"):
            table[f"{family}.{op}"] = _cub(op)
    return table


def _table() -> dict:
    table = {
        "threadIdx.x": "_jk_tx",
        "threadIdx.y": "_jk_ty",
        "threadIdx.z": "_jk_tz",
        "blockIdx.x": "_jk_bx",
        "blockIdx.y": "_jk_by",
        "blockIdx.z": "_jk_bz",
        "blockDim.x": "_jk_nbx",
        "blockDim.y": "_jk_nby",
        "blockDim.z": "_jk_nbz",
        "gridDim.x": "_jk_ngx",
        "gridDim.y": "_jk_ngy",
        "gridDim.z": "_jk_ngz",
        "warpsize": lambda codes, sig, items, ctx: ctx.literal(32, T.int32),
        "laneid": "_jk_T.lane",
        "grid": _grid("grid"),
        "gridsize": _grid("gridsize"),
        "syncthreads": _sync(None),
        "syncthreads_count": _sync("count"),
        "syncthreads_and": _sync("and"),
        "syncthreads_or": _sync("or"),
        "syncwarp": lambda codes, sig, items, ctx: ctx.yields(
            f"_jk_SYNCWARP, {ctx.site()}, {codes[0]}"
        ),
        "threadfence": "None",
        "threadfence_block": "None",
        "threadfence_system": "None",
        "nanosleep": "None",
        "clock64": "_jk_clock64()",
        "ldg": "{0}",
        "activemask": lambda codes, sig, items, ctx: ctx.yields(f"_jk_ACTIVEMASK, {ctx.site()}"),
        "match_any_sync": _match("any"),
        "match_all_sync": _match("all"),
        "popc": _bits("popc", width_arg=False),
        "clz": _bits("clz"),
        "ffs": _bits("ffs"),
        "brev": _bits("brev", same=True),
        "abs": _abs,
        "complex": _complex,
        ".real": _part("real"),
        ".imag": _part("imag"),
        ".conjugate": _conj,
        "numpy.conj": _conj,
        "numpy.where": _where,
        "numpy.square": _square,
        "operator //": _half_safe("//"),
        "operator %": _half_safe("%"),
    }
    table.update(_groups())
    table.update(_thrust_table())
    for name, symbol in OPERATOR_SYMBOLS.items():
        table[f"operator {symbol}"] = _binary(symbol)
    for name in B.SHUFFLES:
        table[name] = _shuffle(name[: -len("_sync")].replace("shfl_", "") or "idx")
    table["shfl_sync"] = _shuffle("idx")
    for name in B.VOTES:
        table[name] = _vote(name[: -len("_sync")])
    for name in B.ATOMICS:
        table[name] = _atomic(name[len("atomic_") :])
    for record, row in B.mathfuncs.MATH:
        table[record.name] = _math(row)
    for name, record in B.UFUNC_RECORDS.items():
        table[record.name] = _ufunc(B.ufuncs.UFUNC_ROWS[name])
    return table


TABLE = _table()


def render(record, codes, sig, items, ctx):
    if record.name in SHARED:
        return ExpressionEmitter.render(ctx, record, codes, sig, items)
    template = TABLE.get(record.name)
    if template is None:
        raise problem(
            f"{record.name} is not simulated yet",
            "run this kernel on a GPU (docs/debugging.md lists what the simulator runs)",
        )
    if callable(template):
        return template(codes, sig, items, ctx)
    return template.format(*codes)
