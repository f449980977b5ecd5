"""Cooperative groups (``jit.cg``)."""

from __future__ import annotations

from ...capabilities import min_cc
from ...errors import JitkernTypeError
from .. import types as T
from ..values import Const, Value
from . import simspell
from .records import Builtin, Marker, Namespace, Sig, const_int, fixed, numeric

_CG = "cooperative_groups"
_CG_INCLUDE = ("<cooperative_groups.h>",)
thread_block_t = T.opaque("thread_block", f"{_CG}::thread_block")
grid_group_t = T.opaque("grid", f"{_CG}::grid_group")
cluster_group_t = T.opaque("cluster", f"{_CG}::cluster_group")
_GROUP_FAMILIES = ("thread_block", "grid", "tile", "cluster")
CLUSTER_ARCH = min_cc("clusters")


def _group_of(item) -> T.Opaque:
    if (
        isinstance(item, Value)
        and isinstance(item.type, T.Opaque)
        and item.type.family in _GROUP_FAMILIES
    ):
        return item.type
    raise JitkernTypeError(
        "expected a cooperative group (cg.this_thread_block(), cg.this_grid(), "
        "cg.tiled_partition(...))"
    )


def _tiled_rule(items, mode):
    g = _group_of(items[0])
    if g.family != "thread_block":
        raise JitkernTypeError("tiled_partition partitions a thread block")
    n = const_int(items[1], "size", {1, 2, 4, 8, 16, 32})
    return Sig((None, None), T.opaque("tile", f"{_CG}::thread_block_tile<{n}>", params=(n,)))


def _tiled_partition_py(codes, sig, items, ctx):
    return f"_jk_tile(_jk_T, {sig.result.params[0]})"


cg_this_thread_block = Builtin(
    "cg.this_thread_block",
    (),
    "",
    fixed(result=thread_block_t),
    f"{_CG}::this_thread_block()",
    "The calling thread's block.",
    "cooperative groups",
    includes=_CG_INCLUDE,
    py="_jk_T.block",
)
cg_this_grid = Builtin(
    "cg.this_grid",
    (),
    "",
    fixed(result=grid_group_t),
    f"{_CG}::this_grid()",
    "The whole grid; its sync() makes the launch cooperative.",
    "cooperative groups",
    includes=_CG_INCLUDE,
    py="_jk_T.block.grid",
)
cg_this_cluster = Builtin(
    "cg.this_cluster",
    (),
    "",
    fixed(result=cluster_group_t),
    f"{_CG}::this_cluster()",
    "The calling block's thread-block cluster (launch with cluster=(x, y, z)).",
    "cooperative groups",
    includes=_CG_INCLUDE,
    min_arch=CLUSTER_ARCH,
    py="_jk_T.block.cluster",
)
cg_tiled_partition = Builtin(
    "cg.tiled_partition",
    ("group", "size"),
    "a thread block; size 1, 2, 4, 8, 16 or 32 (constant)",
    _tiled_rule,
    lambda codes, sig, items, ctx: f"{_CG}::tiled_partition<{sig.result.params[0]}>({codes[0]})",
    "Split a block into tiles of size threads.",
    "cooperative groups",
    includes=_CG_INCLUDE,
    py=_tiled_partition_py,
)

CG_OPS = {
    name: Marker(f"cg.{name}", f"{_CG}::{name}")
    for name in ("plus", "less", "greater", "bit_and", "bit_or", "bit_xor")
}


def _cg_reduce_rule(items, mode):
    _group_of(items[0])
    t = numeric(items[1], mode)
    op = items[2]
    if not (
        isinstance(op, Const) and isinstance(op.value, Marker) and op.value.name.startswith("cg.")
    ):
        raise JitkernTypeError(
            "op must be cg.plus, cg.less, cg.greater, cg.bit_and, cg.bit_or or cg.bit_xor"
        )
    return Sig((None, t, None), t)


def _cg_reduce_template(codes, sig, items, ctx):
    ctx.include("<cooperative_groups/reduce.h>")
    op = items[2].value.cname
    return f"{_CG}::reduce({codes[0]}, {codes[1]}, {op}<{sig.result.ctype}>())"


def _cg_reduce_py(codes, sig, items, ctx):
    if simspell.family(items[0]) != "tile":
        ctx.refuse("the simulator reduces over tiles (cg.tiled_partition) only")
    op = simspell.op_code(items[2].value, sig, ctx)
    return ctx.yields(f"_jk_REDUCE, {ctx.site()}, {codes[0]}.mask, {codes[1]}, None, {op}")


cg_reduce = Builtin(
    "cg.reduce",
    ("group", "value", "op"),
    "group; number; cg.plus/less/greater",
    _cg_reduce_rule,
    _cg_reduce_template,
    "Reduce value over the group with op (less: minimum, greater: maximum).",
    "cooperative groups",
    includes=_CG_INCLUDE,
    py=_cg_reduce_py,
)


def _memcpy_rule(items, mode):
    _group_of(items[0])
    return Sig((None, None, None, T.uint32, None), T.void)


def _memcpy_template(codes, sig, items, ctx):
    ctx.include("<cooperative_groups/memcpy_async.h>")
    return f"{_CG}::memcpy_async({codes[0]}, &{codes[1]}, &{codes[2]}, {codes[3]})"


def _memcpy_py(codes, sig, items, ctx):
    dst, di = ctx.state.elements[codes[1]]
    src, si = ctx.state.elements[codes[2]]
    return f"_jk_memcpy({dst}, {di}, {src}, {si}, {codes[3]})"


cg_memcpy_async = Builtin(
    "cg.memcpy_async",
    ("group", "dst", "dst_idx", "src", "src_idx", "size", "aligned_size=None"),
    "group; arrays or pointers with indices; size in bytes",
    _memcpy_rule,
    _memcpy_template,
    "Asynchronous copy of size bytes by the group.",
    "cooperative groups",
    address_of=((1, 2), (3, 4)),
    includes=_CG_INCLUDE,
    min_arch=70,
    py=_memcpy_py,
)


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
    const_int(items[1], "step")
    return Sig((None, None), T.void)


cg_wait = Builtin(
    "cg.wait",
    ("group",),
    "group",
    _group_rule(),
    lambda codes, sig, items, ctx: (
        ctx.include("<cooperative_groups/memcpy_async.h>") or f"{_CG}::wait({codes[0]})"
    ),
    "Wait for the group's memcpy_async copies.",
    "cooperative groups",
    includes=_CG_INCLUDE,
    py="None",
)
cg_wait_prior = Builtin(
    "cg.wait_prior",
    ("group", "step"),
    "group; constant int",
    _wait_prior_rule,
    _wait_prior_template,
    "Wait until at most step of the latest copies are pending.",
    "cooperative groups",
    includes=_CG_INCLUDE,
    py="None",
)
cg_sync = Builtin(
    "cg.sync",
    ("group",),
    "group",
    _group_rule(),
    lambda codes, sig, items, ctx: ctx.group_sync(items[0], codes[0]),
    "Synchronise the group (grid: a cooperative launch).",
    "cooperative groups",
    includes=_CG_INCLUDE,
    py=simspell.group_sync,
)


def _method(family, name, params, result, template, doc, extra=(), **kw):
    # kw: py= (the simulator's spelling), cooperative=, min_arch=
    return Builtin(
        f"{family}.{name}",
        ("self",) + params,
        family,
        _group_rule(result, extra),
        template,
        doc,
        "cooperative groups",
        includes=_CG_INCLUDE,
        **kw,
    )


_U32, _U64 = "_jk_t_uint32", "_jk_t_uint64"
# the simulator's dim3 values of a thread block and of the grid
_BLOCK_INDEX, _THREAD_INDEX = "_jk_dim3(_jk_bx, _jk_by, _jk_bz)", "_jk_dim3(_jk_tx, _jk_ty, _jk_tz)"
_BLOCK_DIM, _GRID_DIM = "_jk_dim3(_jk_nbx, _jk_nby, _jk_nbz)", "_jk_dim3(_jk_ngx, _jk_ngy, _jk_ngz)"
_GRID_THREADS = f"{_U64}(_jk_grid_blocks(_jk_T) * _jk_T.block.size)"


def _cluster_sync_py(codes, sig, items, ctx):
    return ctx.yields(f"_jk_CLUSTER_SYNC, {ctx.site()}")


def _group_methods() -> dict:
    # fmt: off
    out = {}
    common = (  # name, result, C++, doc, the simulator's for a thread block, for a tile
        ("thread_rank", T.uint32, "{0}.thread_rank()", "Rank of this thread in the group.",
         f"{_U32}(_jk_T.rank)", "{0}.rank"),
        ("size", T.uint32, "{0}.num_threads()", "Number of threads in the group.",
         f"{_U32}({{0}}.size)", "{0}.size"),
        ("num_threads", T.uint32, "{0}.num_threads()", "Number of threads in the group.",
         f"{_U32}({{0}}.size)", "{0}.size"),
    )
    for k, family in enumerate(("thread_block", "tile")):
        for name, result, code, doc, *py in common:
            out[(family, name)] = _method(family, name, (), result, code, doc, py=py[k])
        out[(family, "sync")] = _method(
            family, "sync", (), T.void, "{0}.sync()", "Barrier over the group.",
            py=simspell.group_sync,
        )
    for name, code, doc, py in (
        ("group_index", "{0}.group_index()", "blockIdx", _BLOCK_INDEX),
        ("thread_index", "{0}.thread_index()", "threadIdx", _THREAD_INDEX),
        ("dim_threads", "{0}.dim_threads()", "blockDim", _BLOCK_DIM),
        ("group_dim", "{0}.group_dim()", "blockDim", _BLOCK_DIM),
    ):
        out[("thread_block", name)] = _method("thread_block", name, (), T.dim3, code, doc + ".",
                                              py=py)
    for name, doc, py in (
        ("block_index", "3-D index of this block in the grid (blockIdx).", _BLOCK_INDEX),
        ("dim_blocks", "Grid dimensions in blocks (gridDim).", _GRID_DIM),
        ("group_dim", "Grid dimensions in blocks (gridDim), as dim_blocks().", _GRID_DIM),
    ):
        code = "{0}.block_index()" if name == "block_index" else "{0}.dim_blocks()"
        out[("grid", name)] = _method("grid", name, (), T.dim3, code, doc, py=py)
    for name, result, code, doc, py in (
        ("thread_rank", T.uint64, "{0}.thread_rank()", "Rank of this thread in the grid.",
         "_jk_grid_rank(_jk_T)"),
        ("size", T.uint64, "{0}.num_threads()", "Threads in the grid.", _GRID_THREADS),
        ("num_threads", T.uint64, "{0}.num_threads()", "Threads in the grid.", _GRID_THREADS),
        ("block_rank", T.uint64, "{0}.block_rank()", "Rank of this block in the grid.",
         "_jk_block_rank(_jk_T)"),
        ("num_blocks", T.uint64, "{0}.num_blocks()", "Blocks in the grid.",
         "_jk_grid_blocks(_jk_T)"),
        ("is_valid", T.bool_, "{0}.is_valid()",
         "True in a cooperative launch; undefined in a plain one (the H100 gave both).",
         "_jk_t_bool({0}.cooperative)"),
    ):
        out[("grid", name)] = _method("grid", name, (), result, code, doc, py=py)
    out[("grid", "sync")] = _method(
        "grid",
        "sync",
        (),
        T.void,
        "{0}.sync()",
        "Grid-wide barrier (makes the launch cooperative).",
        cooperative=True,
        py=simspell.group_sync,
    )
    for name, result, doc, py in (
        ("meta_group_rank", T.uint32, "Index of this tile in its block.", "{0}.meta_rank"),
        ("meta_group_size", T.uint32, "Number of tiles in the block.", "{0}.meta_size"),
    ):
        out[("tile", name)] = _method("tile", name, (), result, "{0}." + name + "()", doc, py=py)
    for name, lane, kind in (
        ("shfl", "src_lane", "idx"),
        ("shfl_up", "delta", "up"),
        ("shfl_down", "delta", "down"),
        ("shfl_xor", "lane_mask", "xor"),
    ):
        out[("tile", name)] = Builtin(
            f"tile.{name}",
            ("self", "value", lane),
            "number",
            _tile_shfl_rule,
            "{0}." + name + "({1}, {2})",
            f"Tile shuffle ({name}).",
            "cooperative groups",
            includes=_CG_INCLUDE,
            py=simspell.shuffle(kind, simspell.tile_lanes),
        )
    for name, result, code, kind in (
        ("any", T.bool_, "({0}.any({1}) != 0)", "any"),
        ("all", T.bool_, "({0}.all({1}) != 0)", "all"),
        ("ballot", T.uint32, "{0}.ballot({1})", "tile_ballot"),
    ):
        out[("tile", name)] = _method(
            "tile", name, ("predicate",), result, code, f"Tile vote ({name}).", extra=(T.bool_,),
            py=simspell.vote(kind, simspell.tile_lanes),
        )
    for name, result, doc, py in (
        ("thread_rank", T.uint32, "Rank of this thread in the cluster.",
         "{0}.thread_rank(_jk_T)"),
        ("num_threads", T.uint32, "Threads in the cluster.", "{0}.num_threads()"),
        ("size", T.uint32, "Threads in the cluster.", "{0}.num_threads()"),
        ("block_rank", T.uint32, "Rank of this block in its cluster.", "{0}.block_rank()"),
        ("num_blocks", T.uint32, "Blocks in the cluster.", "{0}.num_blocks()"),
    ):
        code = "{0}.num_threads()" if name == "size" else "{0}." + name + "()"
        out[("cluster", name)] = _method("cluster", name, (), result, code, doc,
                                         min_arch=CLUSTER_ARCH, py=py)
    for name, code, doc in (
        ("block_index", "{0}.block_index()", "3-D index of this block in its cluster."),
        ("dim_blocks", "{0}.dim_blocks()", "Cluster dimensions in blocks."),
    ):
        out[("cluster", name)] = _method("cluster", name, (), T.dim3, code, doc,
                                         min_arch=CLUSTER_ARCH, py=code)
    out[("cluster", "sync")] = _method(
        "cluster", "sync", (), T.void, "{0}.sync()",
        "Barrier over every thread of every block of the cluster (also orders their shared "
        "memory accesses).", min_arch=CLUSTER_ARCH, py=_cluster_sync_py)
    out[("cluster", "map_shared_rank")] = Builtin(
        "cluster.map_shared_rank",
        ("self", "array", "rank"),
        "a shared-memory array (jit.shared_memory); the rank of a block of the cluster",
        _map_shared_rank_rule,
        "{0}.map_shared_rank({1}, {2})",
        "The same shared-memory array in the cluster's block `rank` (distributed shared "
        "memory): index it to read or write that block's shared memory.",
        "cooperative groups",
        includes=_CG_INCLUDE,
        min_arch=CLUSTER_ARCH,
        py="{0}.map_shared_rank({1}, {2})",
    )
    out[("dim3", "x")] = _dim3_attr("x")
    out[("dim3", "y")] = _dim3_attr("y")
    out[("dim3", "z")] = _dim3_attr("z")
    return out
    # fmt: on


def _map_shared_rank_rule(items, mode):
    g = _group_of(items[0])
    array = items[1]
    if g.family != "cluster":
        raise JitkernTypeError("map_shared_rank is a method of cg.this_cluster()")
    if not (isinstance(array, Value) and isinstance(array.type, T.Pointer)
            and array.type.space == "shared"):
        raise JitkernTypeError(
            "map_shared_rank maps a shared-memory array (from jit.shared_memory), got "
            + (array.type.describe() if isinstance(array, Value) else repr(array)))
    # A generic pointer into another block's shared memory (not this block's window).
    return Sig((None, None, T.uint32), T.pointer(array.type.elem))


def _tile_shfl_rule(items, mode):
    _group_of(items[0])
    t = numeric(items[1], mode)
    return Sig((None, t, T.uint32), t)


def _dim3_attr(ax):
    return Builtin(
        f"dim3.{ax}",
        ("self",),
        "dim3",
        fixed(None, result=T.uint32),
        "{0}." + ax,
        f"The {ax} component.",
        "cooperative groups",
        attribute=True,
        py="{0}." + ax,
    )


GROUP_METHODS = _group_methods()

cg = Namespace(
    "cg",
    {
        "this_thread_block": cg_this_thread_block,
        "this_grid": cg_this_grid,
        "this_cluster": cg_this_cluster,
        "tiled_partition": cg_tiled_partition,
        "reduce": cg_reduce,
        "memcpy_async": cg_memcpy_async,
        "wait": cg_wait,
        "wait_prior": cg_wait_prior,
        "sync": cg_sync,
        **CG_OPS,
    },
)
