"""Thread indexing, synchronisation, fences, timing, shared memory and loads."""

from __future__ import annotations

from ...errors import JitkernTypeError
from .. import types as T
from ..values import Const
from . import simspell
from .records import Builtin, NEUTRAL, Namespace, Sig, const_int, fixed, nullary, scalar_of

_AXES = "xyz"


def _index_namespace(name: str, py: str) -> Namespace:
    members = {
        ax: Builtin(
            f"{name}.{ax}",
            (),
            "",
            fixed(result=T.uint32),
            f"{name}.{ax}",
            f"CUDA's {name}.{ax}",
            "indexing",
            attribute=True,
            py=py + ax,
        )
        for ax in _AXES
    }
    return Namespace(name, members)


# the simulator's names: thread, block, block size (threads), grid size (blocks)
threadIdx = _index_namespace("threadIdx", "_jk_t")
blockIdx = _index_namespace("blockIdx", "_jk_b")
blockDim = _index_namespace("blockDim", "_jk_nb")
gridDim = _index_namespace("gridDim", "_jk_ng")


def _grid_rule(items, mode):
    n = const_int(items[0], "ndim", {1, 2, 3})
    return Sig((None,), T.uint32 if n == 1 else T.tuple_of([T.uint32] * n))


def _grid_template(expr):
    def template(codes, sig, items, ctx):
        n = int(items[0].value)
        parts = [expr.format(a=_AXES[i]) for i in range(n)]
        if n == 1:
            return f"({parts[0]})"
        return ctx.tuple_code(sig.result, parts)

    return template


def _grid_py(kind):
    def template(codes, sig, items, ctx):
        n = int(items[0].value)
        if kind == "grid":
            parts = [f"(_jk_b{a} * _jk_nb{a} + _jk_t{a})" for a in _AXES[:n]]
        else:
            parts = [f"(_jk_nb{a} * _jk_ng{a})" for a in _AXES[:n]]
        return parts[0] if n == 1 else ctx.tuple_code(sig.result, parts)

    return template


def _warpsize_py(codes, sig, items, ctx):
    return ctx.literal(32, T.int32)


def _syncwarp_py(codes, sig, items, ctx):
    return ctx.yields(f"_jk_SYNCWARP, {ctx.site()}, {codes[0]}")


warpsize = Builtin(
    "warpsize",
    (),
    "",
    fixed(result=T.int32),
    "warpSize",
    "The warp size (32).",
    "indexing",
    attribute=True,
    py=_warpsize_py,
)

grid = Builtin(
    "grid",
    ("ndim",),
    "1, 2 or 3 (constant)",
    _grid_rule,
    _grid_template("blockIdx.{a} * blockDim.{a} + threadIdx.{a}"),
    "Absolute thread index: an int for ndim=1, else a tuple (x, y[, z]).",
    "indexing",
    py=_grid_py("grid"),
)
gridsize = Builtin(
    "gridsize",
    ("ndim",),
    "1, 2 or 3 (constant)",
    _grid_rule,
    _grid_template("blockDim.{a} * gridDim.{a}"),
    "Total threads of the grid along each axis (grid-stride step).",
    "indexing",
    py=_grid_py("gridsize"),
)
laneid = Builtin(
    "laneid",
    (),
    "",
    fixed(result=T.uint32),
    "jk::laneid()",
    "This thread's lane in its warp (0-31).",
    "indexing",
    py="_jk_T.lane",
)


syncthreads = nullary(
    "syncthreads", "__syncthreads()", "Block-wide barrier (__syncthreads).",
    py=simspell.sync(None),
)
syncwarp = Builtin(
    "syncwarp",
    ("mask=0xffffffff",),
    "mask: uint32",
    fixed(T.uint32, result=T.void),
    "__syncwarp({0})",
    "Warp barrier over the lanes in mask.",
    "sync",
    py=_syncwarp_py,
)
syncthreads_count = Builtin(
    "syncthreads_count",
    ("predicate",),
    "predicate: bool",
    fixed(T.bool_, result=T.int32),
    "__syncthreads_count({0})",
    "Barrier; returns how many threads had predicate true.",
    "sync",
    py=simspell.sync("count"),
)
syncthreads_and = Builtin(
    "syncthreads_and",
    ("predicate",),
    "predicate: bool",
    fixed(T.bool_, result=T.bool_),
    "(__syncthreads_and({0}) != 0)",
    "Barrier; true when predicate is true in every thread.",
    "sync",
    py=simspell.sync("and"),
)
syncthreads_or = Builtin(
    "syncthreads_or",
    ("predicate",),
    "predicate: bool",
    fixed(T.bool_, result=T.bool_),
    "(__syncthreads_or({0}) != 0)",
    "Barrier; true when predicate is true in any thread.",
    "sync",
    py=simspell.sync("or"),
)
threadfence = nullary("threadfence", "__threadfence()", "Memory fence at device scope.", py="None")
threadfence_block = nullary(
    "threadfence_block", "__threadfence_block()", "Memory fence at block scope.", py="None"
)
threadfence_system = nullary(
    "threadfence_system",
    "__threadfence_system()",
    "Memory fence at system scope (host and peers).",
    py="None",
)
clock64 = nullary(
    "clock64", "clock64()", "The SM's 64-bit cycle counter.", "timing", T.int64,
    py="_jk_clock64()",
)
nanosleep = Builtin(
    "nanosleep",
    ("ns",),
    "ns: uint32",
    fixed(T.uint32, result=T.void),
    "__nanosleep({0})",
    "Sleep for about ns nanoseconds.",
    "timing",
    min_arch=70,
    py="None",
)


def _shared_rule(items, mode):
    elem = _storage_type(items[0])
    size = items[1]
    if not (isinstance(size, Const) and size.value is None):
        n = const_int(size, "size")
        if n <= 0:
            raise JitkernTypeError(f"size must be positive, got {n}")
    align = items[2]
    if not (isinstance(align, Const) and align.value is None):
        const_int(align, "alignment", {1, 2, 4, 8, 16, 32, 64, 128, 256})
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
    raise JitkernTypeError(
        "dtype must be a NumPy dtype (numpy.float32, x.dtype, ...) or a cub TempStorage"
    )


def _shared_template(codes, sig, items, ctx):
    size = items[1].value
    align = items[2].value
    return ctx.declare_shared(sig.result.elem, None if size is None else int(size), align)


shared_memory = Builtin(
    "shared_memory",
    ("dtype", "size=None", "alignment=None"),
    "dtype: a NumPy dtype; size: constant int, or None for dynamic shared memory",
    _shared_rule,
    _shared_template,
    "Block-shared array; returns a pointer. size=None: the launch's dynamic shared memory.",
    "memory",
    py=NEUTRAL,
)


#: CUDA's limit on a thread's local memory (the stack), in bytes.
LOCAL_MEMORY_LIMIT = 512 * 1024


def _local_rule(items, mode):
    try:
        elem = T.scalar_from_dtype(items[0].value) if isinstance(items[0], Const) else None
    except TypeError:
        elem = None
    if elem is None:
        raise JitkernTypeError("dtype must be a NumPy dtype (numpy.float32, x.dtype, ...)")
    size = items[1]
    if isinstance(size, Const) and size.value is None:
        raise JitkernTypeError("size must be a compile-time int (a local array has a fixed size)")
    n = const_int(size, "size")
    if n <= 0:
        raise JitkernTypeError(f"size must be positive, got {n}")
    if n * elem.itemsize > LOCAL_MEMORY_LIMIT:
        raise JitkernTypeError(
            f"{n} x {elem.name} is {n * elem.itemsize} bytes, more than a thread's "
            f"{LOCAL_MEMORY_LIMIT} bytes of local memory"
        )
    return Sig((None, None), T.pointer(elem, "local"))


def _local_template(codes, sig, items, ctx):
    return ctx.declare_local(sig.result.elem, int(items[1].value))


local_memory = Builtin(
    "local_memory",
    ("dtype", "size"),
    "dtype: a NumPy dtype; size: constant int",
    _local_rule,
    _local_template,
    "Per-thread array of size elements (uninitialised); returns a pointer.",
    "memory",
    py=NEUTRAL,
)


def _ldg_rule(items, mode):
    elem = scalar_of(items[0], "the element")
    return Sig((None,), elem)


ldg = Builtin(
    "ldg",
    ("array", "index"),
    "array element of any numeric type",
    _ldg_rule,
    "__ldg(&{0})",
    "Load through the read-only data cache (__ldg).",
    "memory",
    address_of=((0, 1),),
    py="{0}",
)
