"""Running a simulated launch: blocks one after another, a block's threads round-robin.

A kernel without barriers or warp collectives is a plain function, called once per
thread. Otherwise each thread is a generator: it runs until it yields a request
(a barrier, a shuffle, a vote, ...), and once every thread of the block is waiting
the scheduler answers the requests that can be answered (a warp collective whose
lanes have all arrived, a barrier every live thread reached) and resumes those
threads. What can never be answered (threads waiting at different barriers, a lane
that exited or waits elsewhere) is reported as a KernelAssertionError. A kernel that
calls ``this_grid().sync()`` runs all its blocks together, so the grid barrier can
be answered the same way. A launch with ``cluster=`` runs the blocks of each
thread-block cluster together: ``cluster.sync()`` is a barrier over the cluster's
blocks, and ``cluster.map_shared_rank`` hands out another block's shared array.
"""

from __future__ import annotations

import os
import re
import types

import numpy

from ..errors import KernelArgumentError, KernelAssertionError
from . import runtime as R

_U32 = [numpy.uint32(i) for i in range(1024)]
_EXITED = ("exited", 0)


def u32(i: int):
    return _U32[i] if i < 1024 else numpy.uint32(i)


class Dim3:
    __slots__ = ("x", "y", "z")

    def __init__(self, x, y, z):
        self.x, self.y, self.z = u32(x), u32(y), u32(z)


class Block:
    """One block's shared memory and identity (what cooperative groups ask for)."""

    __slots__ = ("cluster", "dims", "dyn", "grid", "index", "shared", "size")

    def __init__(self, index, dims, specs, dynamic_bytes, grid, racecheck=False):
        self.index = index
        self.cluster = None  # its ClusterView, set by the launch
        self.dims = dims
        self.size = dims[0] * dims[1] * dims[2]
        self.grid = grid
        # uninitialised shared memory reads as 0xff bytes (NaN for floats, -1 for ints),
        # so a missing store shows instead of reading a plausible zero
        self.shared = {name: _shared_array(dtype, size) for name, (dtype, size) in specs.items()}
        self.dyn = numpy.full(dynamic_bytes, 0xFF, numpy.uint8)
        if racecheck:
            self.shared = {
                name: a.view(R.RaceArray) if a.dtype != object else a
                for name, a in self.shared.items()
            }
            self.dyn = self.dyn.view(R.RaceArray)

    def barrier(self) -> None:
        """Every thread of the block passed a barrier: no access before it races any after."""
        if isinstance(self.dyn, R.RaceArray):
            for a in (*self.shared.values(), self.dyn):
                R.RACE_LOGS.pop(id(a), None)

    def dynamic(self, cls):
        itemsize = numpy.dtype(cls).itemsize
        usable = len(self.dyn) - len(self.dyn) % itemsize
        return self.dyn[:usable].view(cls)


def _shared_array(dtype, size):
    if dtype == object:  # cub's TempStorage
        return numpy.empty(size, object)
    return numpy.full(size * dtype.itemsize, 0xFF, numpy.uint8).view(dtype)


class Cluster:
    """One thread-block cluster: its dimensions and its blocks in rank order."""

    __slots__ = ("blocks", "dims")

    def __init__(self, dims, blocks):
        self.dims = dims
        self.blocks = blocks


class ClusterView:
    """``cg.this_cluster()`` in one block: the cluster seen from that block."""

    __slots__ = ("block", "cluster", "rank")

    def __init__(self, cluster, block, rank):
        self.cluster, self.block, self.rank = cluster, block, rank

    def block_rank(self):
        return u32(self.rank)

    def num_blocks(self):
        return u32(len(self.cluster.blocks))

    def thread_rank(self, thread):
        return u32(self.rank * self.block.size + thread.rank)

    def num_threads(self):
        return u32(len(self.cluster.blocks) * self.block.size)

    def block_index(self):
        cx, cy, _ = self.cluster.dims
        return Dim3(self.rank % cx, self.rank // cx % cy, self.rank // (cx * cy))

    def dim_blocks(self):
        return Dim3(*self.cluster.dims)

    def map_shared_rank(self, array, rank):
        """The shared array ``array`` of this block, in the cluster's block ``rank``."""
        blocks = self.cluster.blocks
        if not 0 <= int(rank) < len(blocks):
            raise KernelAssertionError(
                f"{R.where_now(2)}: map_shared_rank: rank {int(rank)} is outside the cluster "
                f"of {len(blocks)} block(s) (in {R.thread_text()})"
            )
        other = blocks[int(rank)]
        for name, mine in self.block.shared.items():
            if mine is array:
                return other.shared[name]
        if numpy.shares_memory(array, self.block.dyn):
            return other.dynamic(array.dtype)
        raise KernelAssertionError(
            f"{R.where_now(2)}: map_shared_rank: the array is not this block's shared memory"
        )


def _cluster_blocks(grid_dims, cluster_dims, origin=(0, 0, 0)):
    """The blocks of the grid (from ``origin``) grouped by cluster, each in rank order."""
    cx, cy, cz = cluster_dims
    gx, gy, gz = grid_dims
    return [
        [(ox + x, oy + y, oz + z) for z in range(cz) for y in range(cy) for x in range(cx)]
        for oz in range(origin[2], gz, cz)
        for oy in range(origin[1], gy, cy)
        for ox in range(origin[0], gx, cx)
    ]


def _join(made: dict, groups, cluster_dims) -> None:
    """Give each block of ``made`` (index -> Block) its ClusterView."""
    for group in groups:
        cluster = Cluster(cluster_dims, [made[b] for b in group])
        for rank, blk in enumerate(cluster.blocks):
            blk.cluster = ClusterView(cluster, blk, rank)


class Grid:
    __slots__ = ("block_dims", "cooperative", "dims")

    def __init__(self, dims, block_dims, cooperative):
        self.dims = dims
        self.block_dims = block_dims
        self.cooperative = cooperative


class Thread:
    """A thread's identity: what laneid, groups and the checks' messages read."""

    __slots__ = ("block", "idx", "lane", "rank", "tidx", "warp", "warp_mask")

    def __init__(self, block, tidx, rank, block_dims):
        self.block = block
        self.tidx = tidx
        self.rank = rank
        self.lane = u32(rank % 32)
        self.warp = rank // 32
        self.idx = (u32(tidx[0]), u32(tidx[1]), u32(tidx[2]))
        lanes = min(32, block_dims[0] * block_dims[1] * block_dims[2] - self.warp * 32)
        self.warp_mask = numpy.uint32((1 << lanes) - 1)


def dims3(value, what: str) -> tuple:
    if isinstance(value, (int, numpy.integer)):
        value = (int(value),)
    ok = isinstance(value, (tuple, list)) and all(
        isinstance(v, (int, numpy.integer)) for v in value
    )
    dims = tuple(int(v) for v in value) if ok else ()
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
        raise KernelArgumentError(
            f"{what}: expected a positive int or a tuple of 1-3 positive ints, got {value!r}"
        )
    return dims + (1,) * (3 - len(dims))


def launch(
    fn,
    generator: bool,
    program,
    namespace: dict,
    grid,
    block,
    args,
    shared_mem: int,
    racecheck: bool = False,
    cluster=None,
):
    """Run the kernel ``fn`` over the whole grid (see the module docstring); ``cluster``
    (checked by the caller to divide the grid) groups the blocks into clusters."""
    g, b = dims3(grid, "grid"), dims3(block, "block")
    c = dims3(cluster, "cluster") if cluster is not None else (1, 1, 1)
    if b[0] * b[1] * b[2] > 1024:
        raise KernelArgumentError(f"block: at most 1024 threads per block, got {b}")
    for ax, n in zip("xyz", b):
        namespace[f"_jk_nb{ax}"] = numpy.uint32(n)
    for ax, n in zip("xyz", g):
        namespace[f"_jk_ng{ax}"] = numpy.uint32(n)
    grid_info = Grid(g, b, program.cooperative)
    tids = [(x, y, z) for z in range(b[2]) for y in range(b[1]) for x in range(b[0])]
    blocks = [(x, y, z) for z in range(g[2]) for y in range(g[1]) for x in range(g[0])]
    args = tuple(args)
    with numpy.errstate(all="ignore"):
        try:
            if program.cooperative:
                _run_together(fn, program, blocks, tids, b, grid_info, args, shared_mem, racecheck,
                              _cluster_blocks(g, c), c)
            elif c != (1, 1, 1) and generator:  # a cluster's blocks meet at cluster.sync()
                for group in _cluster_blocks(g, c):
                    _run_together(fn, program, group, tids, b, grid_info, args, shared_mem,
                                  racecheck, [group], c)
            else:
                threads = [Thread(None, t, r, b) for r, t in enumerate(tids)]
                cluster_of = {i: group for group in _cluster_blocks(g, c) for i in group}
                made: dict = {}
                for bidx in blocks:
                    blk = made.pop(bidx, None)
                    if blk is None:  # the first block of its cluster: make the cluster's
                        group = cluster_of[bidx]
                        new = {i: Block(i, b, program.shared, shared_mem, grid_info, racecheck)
                               for i in group}
                        _join(new, [group], c)
                        made.update(new)
                        blk = made.pop(bidx)
                    for t in threads:  # one block at a time: the thread objects are reused
                        t.block = blk
                    bx, by, bz = u32(bidx[0]), u32(bidx[1]), u32(bidx[2])
                    if generator:
                        gens = [fn(t, *t.idx, bx, by, bz, *args) for t in threads]
                        _run(threads, gens)
                    else:
                        for t in threads:
                            R.CURRENT[0] = t
                            fn(t, *t.idx, bx, by, bz, *args)
                    blk.barrier()  # the block is done: forget its race log
        except UnboundLocalError as exc:
            raise _unbound(exc) from None
        except KernelAssertionError as exc:
            raise exc.with_traceback(_user_frames(exc.__traceback__)) from None
        finally:
            R.CURRENT[0] = None
            R.RACE_LOGS.clear()


def _run_together(fn, program, blocks, tids, b, grid_info, args, shared_mem, racecheck,
                  clusters, cluster_dims):
    threads, gens = [], []
    made = {bidx: Block(bidx, b, program.shared, shared_mem, grid_info, racecheck)
            for bidx in blocks}
    _join(made, clusters, cluster_dims)
    for bidx in blocks:
        blk = made[bidx]
        bx, by, bz = u32(bidx[0]), u32(bidx[1]), u32(bidx[2])
        for r, t in enumerate(tids):
            th = Thread(blk, t, r, b)
            threads.append(th)
            gens.append(fn(th, *th.idx, bx, by, bz, *args))
    _run(threads, gens)


def _run(threads, gens) -> None:
    n = len(gens)
    state = [None] * n
    replies = [None] * n
    ready = list(range(n))
    while ready:
        for k in ready:
            R.CURRENT[0] = threads[k]
            try:
                state[k] = gens[k].send(replies[k])
            except StopIteration:
                state[k] = _EXITED
        ready = _answer(threads, state, replies)


def _answer(threads, state, replies) -> list:
    """Answer what can be answered; the indices of the threads to resume."""
    warps: dict = {}
    barriers: dict = {}
    grid_waiting = []
    cluster_waiting: dict = {}
    live = 0
    for k, req in enumerate(state):
        if req is _EXITED:
            continue
        live += 1
        kind = req[0]
        t = threads[k]
        if kind is R.SYNC:
            barriers.setdefault(id(t.block), []).append(k)
        elif kind is R.GRID_SYNC:
            grid_waiting.append(k)
        elif kind is R.CLUSTER_SYNC:
            cluster_waiting.setdefault(id(t.block.cluster.cluster), []).append(k)
        else:
            warps.setdefault((id(t.block), t.warp), []).append(k)
    if not live:
        return []
    ready: list = []
    for ks in warps.values():
        ready += _answer_warp(threads, state, replies, ks)
    if ready:
        return ready
    for ks in barriers.values():
        ready += _answer_barrier(threads, state, replies, ks)
    if ready:
        return ready
    for ks in cluster_waiting.values():
        ready += _answer_cluster(threads, state, replies, ks)
    if ready:
        return ready
    if grid_waiting and len(grid_waiting) == live:
        for k in grid_waiting:
            replies[k] = None
        for block in {id(threads[k].block): threads[k].block for k in grid_waiting}.values():
            block.barrier()
        return grid_waiting
    raise KernelAssertionError(_stuck_message(threads, state))


def _answer_cluster(threads, state, replies, ks) -> list:
    """cluster.sync(): answered once every live thread of the cluster's blocks waits there."""
    cluster = threads[ks[0]].block.cluster.cluster
    blocks = {id(blk) for blk in cluster.blocks}
    live = sum(1 for k, req in enumerate(state)
               if req is not _EXITED and id(threads[k].block) in blocks)
    if len(ks) != live:
        return []  # others of the cluster are elsewhere: they may still arrive
    for k in ks:
        replies[k] = None
    for blk in cluster.blocks:
        blk.barrier()
    return ks


def _members(threads, k):
    """Thread indices of k's warp, by lane (the threads list is in rank order per block)."""
    t = threads[k]
    start = k - t.rank + t.warp * 32
    end = min(k - t.rank + t.block.size, start + 32)
    return range(start, end)


def _answer_warp(threads, state, replies, ks) -> list:
    ready = []
    members = _members(threads, ks[0])
    base = members[0]
    by_mask: dict = {}
    active: list = []
    for k in ks:
        req = state[k]
        if req[0] is R.ACTIVEMASK:
            active.append(k)
            continue
        mask = int(req[2])
        lane = k - base
        if not (mask >> lane) & 1:
            raise KernelAssertionError(
                f"{_line(req)}: warp-collective misuse: {_what(req)} in thread "
                f"{threads[k].tidx} of block {threads[k].block.index} uses mask {mask:#010x}, "
                f"which excludes its own lane {lane}"
            )
        by_mask.setdefault(mask, []).append(k)
    for mask, group in by_mask.items():
        lanes = [m for m in members if (mask >> (m - base)) & 1]
        gone = [m - base for m in lanes if state[m] is _EXITED]
        if gone:
            req = state[group[0]]
            raise KernelAssertionError(
                f"{_line(req)}: warp-collective misuse: {_what(req)} in block "
                f"{threads[group[0]].block.index} names lane(s) {gone} in mask {mask:#010x}, "
                "which have exited"
            )
        kind = state[group[0]][0]
        sub = state[group[0]][-1]
        if len(group) != len(lanes) or any(
            state[m][0] is not kind or (isinstance(sub, str) and state[m][-1] != sub) for m in group
        ):
            continue  # some lanes of the mask are elsewhere: wait (or report when stuck)
        _compute(kind, group, base, state, replies)
        ready += group
    if active and not ready:  # the lanes at one activemask() are the active ones
        for line in {state[k][1] for k in active}:
            at = [k for k in active if state[k][1] == line]
            mask = numpy.uint32(sum(1 << (k - base) for k in at))
            for k in at:
                replies[k] = mask
            ready += at
    return ready


def _compute(kind, group, base, state, replies) -> None:
    """Answer one warp collective whose lanes (``group``) have all arrived."""
    out = _COLLECTIVES[kind](group, base, state)
    if isinstance(out, list):
        for k, v in zip(group, out):
            replies[k] = v
    else:
        for k in group:
            replies[k] = out


#: Shuffles: (lane, argument, segment start, width) -> the source lane.
_SOURCE_LANE = {
    "idx": lambda lane, a, start, w: start + a % w,
    "up": lambda lane, a, start, w: lane - a if lane - a >= start else lane,
    "down": lambda lane, a, start, w: lane + a if lane + a < start + w else lane,
    "xor": lambda lane, a, start, w: lane ^ a if start <= lane ^ a < start + w else lane,
}


def _shuffle(group, base, state):
    values = {k - base: state[k][3] for k in group}
    out = []
    for k in group:
        _, _, _, value, arg, width, how = state[k]
        lane, w = k - base, int(width)
        src = _SOURCE_LANE[how](lane, int(arg), lane - lane % w, w)
        out.append(values.get(src, value))  # an absent source lane: the caller's value
    return out


def _vote(group, base, state):
    preds = [(k - base, bool(state[k][3])) for k in group]
    how = state[group[0]][-1]
    if how == "all":
        return numpy.bool_(all(p for _, p in preds))
    if how == "any":
        return numpy.bool_(any(p for _, p in preds))
    shift = min(lane for lane, _ in preds) if how == "tile_ballot" else 0  # tile-relative
    return numpy.uint32(sum(1 << (lane - shift) for lane, p in preds if p))


def _reduce(group, base, state):
    first = state[group[0]]
    values = [state[k][3] for k in sorted(group)]
    if first[4] is not None:  # num_valid
        values = values[: int(first[4])]
    return R.tree_reduce(values, first[5])


def _match(group, base, state):
    values = [(k - base, state[k][3]) for k in group]
    if state[group[0]][-1] == "any":
        return [
            numpy.uint32(sum(1 << lane for lane, w in values if w == state[k][3])) for k in group
        ]
    same = all(w == values[0][1] for _, w in values)
    mask = numpy.uint32(sum(1 << lane for lane, _ in values) if same else 0)
    return (mask, numpy.bool_(same))


_COLLECTIVES = {
    R.SYNCWARP: lambda group, base, state: None,
    R.SHFL: _shuffle,
    R.VOTE: _vote,
    R.REDUCE: _reduce,
    R.MATCH: _match,
}


def _answer_barrier(threads, state, replies, ks) -> list:
    block = threads[ks[0]].block
    start = ks[0] - threads[ks[0]].rank
    members = range(start, start + block.size)
    live = [m for m in members if state[m] is not _EXITED]
    if len(live) != len(ks):
        return []  # others of the block are at warp collectives: stuck, reported by caller
    lines = {state[k][1] for k in ks}
    if len(lines) > 1 or len(live) != block.size:
        raise KernelAssertionError(_divergence_message(threads, state, members))
    how = state[ks[0]][2]
    if how is None:
        out = None
    elif callable(how):  # a block-wide reduction (cub.BlockReduce): in rank order
        values = [state[k][3] for k in ks]
        count = state[ks[0]][4]
        if count is not None:
            values = values[: int(count)]
        out = values[0]
        for v in values[1:]:
            out = how(out, v)
    else:
        preds = [bool(state[k][3]) for k in ks]
        out = {
            "count": lambda: numpy.int32(sum(preds)),
            "and": lambda: numpy.bool_(all(preds)),
            "or": lambda: numpy.bool_(any(preds)),
        }[how]()
    for k in ks:
        replies[k] = out
    block.barrier()
    return ks


def _divergence_message(threads, state, members) -> str:
    block = threads[members[0]].block
    counts: dict = {}
    for m in members:
        req = state[m]
        key = "exited" if req is _EXITED else f"wait at the syncthreads at {req[1]}"
        counts[key] = counts.get(key, 0) + 1
    parts = ", ".join(f"{n} thread(s) {what}" for what, n in sorted(counts.items()))
    return (
        f"barrier divergence in block {block.index}: {parts}; every thread of a block must "
        "reach the same syncthreads (move it out of the branch, or keep the threads alive "
        "and skip the work instead of returning)"
    )


def _stuck_message(threads, state) -> str:
    counts: dict = {}
    for k, req in enumerate(state):
        if req is _EXITED:
            what = "exited"
        else:
            what = f"at {_what(req)} ({req[1]})"
        key = (threads[k].block.index, what)
        counts[key] = counts.get(key, 0) + 1
    parts = "; ".join(f"block {b}: {n} thread(s) {what}" for (b, what), n in sorted(counts.items()))
    return (
        "the simulated threads can never continue (barrier divergence or a warp collective "
        f"whose lanes are elsewhere): {parts}"
    )


_NAMES = {
    R.SYNC: "syncthreads",
    R.SYNCWARP: "syncwarp",
    R.SHFL: "a shuffle",
    R.VOTE: "a vote",
    R.MATCH: "a match",
    R.ACTIVEMASK: "activemask",
    R.GRID_SYNC: "this_grid().sync()",
    R.CLUSTER_SYNC: "this_cluster().sync()",
    R.REDUCE: "a warp reduction",
}


def _what(req) -> str:
    return _NAMES.get(req[0], str(req[0]))


def _line(req) -> str:
    return req[1]


def _user_frames(tb):
    """The traceback without the simulator's own frames (the kernel's lines stay)."""
    frames = []
    while tb is not None:
        if not tb.tb_frame.f_code.co_filename.startswith(_PACKAGE):
            frames.append(tb)
        tb = tb.tb_next
    out = None
    for t in reversed(frames):
        out = types.TracebackType(out, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return out


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _unbound(exc: UnboundLocalError) -> KernelAssertionError:
    tb = exc.__traceback__
    where = "the kernel"
    while tb is not None:
        where = f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}"
        tb = tb.tb_next
    m = re.search(r"'(\w+)'", str(exc))
    name = m.group(1) if m else "?"
    return KernelAssertionError(
        f"{where}: local variable {name!r} is read before it is assigned in "
        f"{R.thread_text()} (on this path the assignment did not run)"
    )
