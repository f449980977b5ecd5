"""What vectorised simulated kernels call at run time (see :mod:`.vector`).

A value in vectorised code is either a NumPy scalar (the same for every thread) or a
1-D array with one element per thread of the batch (the threads of several blocks,
block-major, each block in rank order: the order the per-thread scheduler runs them).
A mask is a bool array over the same threads. The checks raise the per-thread
simulator's errors, naming the first thread (in that order) that fails.
"""

from __future__ import annotations

import numpy

from ..errors import JitkernValueError, KernelAssertionError
from . import runtime as R

ndarray = numpy.ndarray

#: The batch running now, for the checks' messages. One simulation runs at a time.
BATCH = [None]


class Seg:
    """Per-block shared memory or per-thread local memory: one flat array holding every
    block's (or thread's) copy; ``off`` is each thread's first element in it, ``n`` the
    length one thread sees (what bounds checks and ``len`` use)."""

    __slots__ = ("dtype", "flat", "n", "off", "reader", "shape", "writer")

    def __init__(self, flat, off, n, shared=False):
        self.flat, self.off, self.n = flat, off, n
        self.shape = (n,)
        self.dtype = flat.dtype
        # shared memory: the thread that read / wrote each element since the last barrier
        # (-1: none, -2: several), to find the races the per-thread order would decide
        self.reader = numpy.full(len(flat), -1, numpy.int64) if shared else None
        self.writer = numpy.full(len(flat), -1, numpy.int64) if shared else None

    def note(self, index, m, write: bool) -> None:
        """Record an access by the threads of ``m``; a race (two threads, one writing, no
        barrier between) raises Race: the launch then runs on the per-thread scheduler,
        whose order decides what a racing kernel computes."""
        lanes_ = numpy.flatnonzero(lanes_of(m))
        if not len(lanes_):
            return
        e = numpy.broadcast_to(index, (BATCH[0].n,))[lanes_]
        w = self.writer[e]
        if numpy.any((w != -1) & (w != lanes_)):
            raise Race("a thread reads or writes a shared element another one wrote")
        r = self.reader[e]
        if write:
            if numpy.any((r != -1) & (r != lanes_)):
                raise Race("a thread writes a shared element another one read")
            self.writer[e] = lanes_
            if numpy.any(self.writer[e] != lanes_):  # two threads wrote one element
                raise Race("two threads write one shared element")
            return
        seen = numpy.where((r == -1) | (r == lanes_), lanes_, -2)
        self.reader[e] = seen
        several = self.reader[e] != seen  # one element read by several threads here
        if several.any():
            self.reader[e[several]] = -2

    def note_atomic(self, index, m) -> None:
        """An atomic by the threads of ``m``: no race with other atomics, but one with a
        plain access of another thread (or of the same thread, after others' atomics)."""
        lanes_ = numpy.flatnonzero(lanes_of(m))
        e = numpy.broadcast_to(index, (BATCH[0].n,))[lanes_]
        w, r = self.writer[e], self.reader[e]
        mine = lanes_  # a thread's own plain access before its atomic is in order
        if numpy.any(((w != -1) & (w != ATOMIC) & (w != mine)) | ((r != -1) & (r != mine))):
            raise Race("a thread updates atomically a shared element another one read or wrote")
        self.writer[e] = ATOMIC

    def barrier(self, blocks) -> None:
        if self.reader is not None:
            rows = self.reader.reshape(-1, len(self.reader) // BATCH[0].nb)
            rows[blocks] = -1
            self.writer.reshape(rows.shape)[blocks] = -1

    def __len__(self):
        return self.n

    def __getitem__(self, index):
        return self.flat[index]

    def __setitem__(self, index, value):
        self.flat[index] = value


ATOMIC = -3  # Seg.writer of an element updated by atomics only


class _BlockGroup:
    """``cg.this_thread_block()`` of every thread: its size (the rest runs per thread)."""

    __slots__ = ("size",)

    def __init__(self, size):
        self.size = size


class Race(Exception):  # noqa: N818 - not an error: a reason to run per thread
    """A shared-memory race in a vectorised launch (caught by :func:`.vector.run`)."""


class Batch:
    """The threads of ``nb`` consecutive blocks, as arrays over lanes."""

    def __init__(self, blocks, block_dims, shared_specs, dynamic_bytes):
        self.blocks = blocks
        self.__dict__.update(_geometry(len(blocks), block_dims))
        size, u32 = self.size, numpy.uint32
        index = numpy.array(blocks, dtype=numpy.int64).reshape(len(blocks), 3)
        self.bx, self.by, self.bz = (numpy.repeat(index[:, k], size).astype(u32) for k in range(3))
        self.block = _BlockGroup(self.size)
        self.specs = shared_specs
        self.dynamic_bytes = dynamic_bytes
        self._shared: dict = {}
        self._dyn = None

    def thread_text(self, k: int) -> str:
        k = int(k)
        return (
            f"thread ({int(self.tx[k])}, {int(self.ty[k])}, {int(self.tz[k])}) of block "
            f"{tuple(self.blocks[k // self.size])}"
        )

    def shared(self, name):
        seg = self._shared.get(name)
        if seg is None:
            dtype, size = self.specs[name]
            flat = numpy.full(self.nb * size * dtype.itemsize, 0xFF, numpy.uint8).view(dtype)
            seg = self._shared[name] = Seg(flat, self.block_of * size, size, shared=True)
        return seg

    def dynamic(self, cls):
        itemsize = numpy.dtype(cls).itemsize
        row = -(-max(self.dynamic_bytes, 1) // 16) * 16
        if self._dyn is None:
            self._dyn = numpy.full(self.nb * row, 0xFF, numpy.uint8)
        usable = self.dynamic_bytes - self.dynamic_bytes % itemsize
        seg = Seg(self._dyn.view(cls), self.block_of * (row // itemsize), usable // itemsize,
                  shared=True)
        self._shared[("dyn", cls)] = seg
        return seg

    def local(self, cls, size: int):
        flat = numpy.full(self.n * size * numpy.dtype(cls).itemsize, 0xFF, numpy.uint8).view(cls)
        return Seg(flat, numpy.arange(self.n, dtype=numpy.int64) * size, size)

    def padded(self, values, fill=0):
        if self.aligned:
            return values
        out = numpy.full(self.nwarps * 32, fill, dtype=values.dtype)
        out[self.pos] = values
        return out

    def warp_bits(self, m):
        """Per lane: the bits of its warp's lanes where ``m`` is true."""
        if m.all():
            return self.full
        pm = numpy.zeros(self.nwarps * 32, bool)
        pm[self.pos] = m
        bits = numpy.packbits(pm.reshape(self.nwarps, 32), axis=1, bitorder="little")
        return bits.view("<u4").reshape(self.nwarps).astype(numpy.uint64)[self.warp]


_GEOMETRY: dict = {}


def _geometry(nb: int, block_dims) -> dict:
    """The lane arrays of ``nb`` blocks of ``block_dims`` (the same for every batch)."""
    key = (nb, tuple(block_dims))
    found = _GEOMETRY.get(key)
    if found is not None:
        return found
    bx_, by_, bz_ = block_dims
    size = bx_ * by_ * bz_
    rank = numpy.tile(numpy.arange(size, dtype=numpy.int64), nb)
    u32 = numpy.uint32
    per_block = -(-size // 32)
    g = {"size": size, "nb": nb, "n": nb * size, "rank": rank, "aligned": size % 32 == 0}
    g["block_of"] = numpy.repeat(numpy.arange(nb, dtype=numpy.int64), size)
    g["tx"] = (rank % bx_).astype(u32)
    g["ty"] = (rank // bx_ % by_).astype(u32)
    g["tz"] = (rank // (bx_ * by_)).astype(u32)
    g["lane"] = (rank % 32).astype(u32)
    g["wlane"] = rank % 32
    g["nwarps"] = nb * per_block
    g["warp"] = g["block_of"] * per_block + rank // 32
    g["pos"] = g["warp"] * 32 + g["wlane"]  # each lane's place in a padded (warps, 32)
    lanes_in_warp = numpy.minimum(32, size - (rank // 32) * 32).astype(numpy.uint64)
    g["full"] = (numpy.uint64(1) << lanes_in_warp) - numpy.uint64(1)
    if len(_GEOMETRY) > 8:
        _GEOMETRY.clear()
    _GEOMETRY[key] = g
    return g


def _first(bad) -> int:
    return int(numpy.flatnonzero(bad)[0])


def _text(k: int) -> str:
    return BATCH[0].thread_text(k)


def lanes_of(m):
    return numpy.broadcast_to(m, (BATCH[0].n,))


def any_(m) -> bool:
    return bool(m.any())


def ix(i, a, name, m):
    """The flat index of element ``i`` of the 1-D array ``a`` for each thread; threads of
    ``m`` outside the array are the per-thread simulator's error."""
    n = len(a)
    if type(i) is ndarray:
        if i.size and i.min() >= 0 and i.max() < n:  # the common case: no check fails
            return i if type(a) is not Seg else _seg_index(i, a, m)
        bad = (i < 0) | (i >= n)
        if bad.any():
            hit = bad & m
            if hit.any():
                k = _first(lanes_of(hit))
                _out_of_bounds(i[k], a, name, k)
            i = numpy.where(bad, 0, i)
    elif not 0 <= i < n:
        if numpy.any(m):
            _out_of_bounds(i, a, name, _first(lanes_of(m)))
        i = 0
    if type(a) is Seg:
        return _seg_index(i, a, m)
    return i


def ix_atomic(i, a, name, m):
    """:func:`ix` for an atomic's element (noted by the atomic, not as a read)."""
    if type(a) is not Seg or a.reader is None:
        return ix(i, a, name, m)
    plain = Seg(a.flat, a.off, a.n)
    return ix(i, plain, name, m)


def _seg_index(i, a, m):
    i = a.off + i
    if a.reader is not None:
        a.note(i, m, False)
    return i


def _out_of_bounds(i, a, name, k):
    raise KernelAssertionError(
        f"{R.where_now(3)}: index {int(i)} is out of bounds for {name} of shape {a.shape} "
        f"in {_text(k)}"
    ) from None


def ixn(a, name, m, *indices):
    """The index tuple of an element of the n-D array ``a`` (see :func:`ix`)."""
    shape = a.shape
    bad_any = None
    for axis, i in enumerate(indices):
        bad = (i < 0) | (i >= shape[axis])
        if numpy.any(bad):
            hit = lanes_of(bad & m)
            if hit.any():
                k = _first(hit)
                at = tuple(int(j[k]) if type(j) is ndarray else int(j) for j in indices)
                raise KernelAssertionError(
                    f"{R.where_now(2)}: index {at} is out of bounds for {name} of shape "
                    f"{shape} (axis {axis} has size {shape[axis]}) in {_text(k)}"
                ) from None
            bad_any = bad if bad_any is None else bad_any | bad
    if bad_any is None:
        return indices
    return tuple(numpy.where(bad_any, 0, i) for i in indices)


def store(a, index, value, m):
    """``a[index] = value`` for the threads of ``m``, in thread order (the last one wins)."""
    if type(a) is Seg:
        if a.reader is not None:
            a.note(index, m, True)
        a = a.flat
    parts = index if type(index) is tuple else (index,)
    scalar_index = not any(type(i) is ndarray for i in parts)
    if scalar_index and type(value) is not ndarray:
        if numpy.any(m):
            a[index] = value
        return
    n = BATCH[0].n
    if type(index) is tuple:
        index = tuple(numpy.broadcast_to(i, (n,)) for i in index)
    else:
        index = numpy.broadcast_to(index, (n,))
    m = lanes_of(m)
    if not m.all():
        index = tuple(i[m] for i in index) if type(index) is tuple else index[m]
        if type(value) is ndarray:
            value = value[m]
    a[index] = value


def sel(m, value, old):
    """An assignment under the mask ``m``: ``value`` where set, ``old`` elsewhere."""
    if old is None:
        return value
    if type(value) is tuple:
        return tuple(sel(m, v, o) for v, o in zip(value, old))
    if m.all():
        return value
    return numpy.where(m, value, old)


def read(value, assigned, m, name):
    """A read of a local some path may leave unassigned: the per-thread error if a thread
    of ``m`` never assigned it."""
    missing = m & ~assigned
    if numpy.any(missing):
        k = _first(lanes_of(missing))
        raise KernelAssertionError(
            f"{R.where_now(2)}: local variable {name!r} is read before it is assigned in "
            f"{_text(k)} (on this path the assignment did not run)"
        )
    return value


def counter(start, t):
    """A range loop's hidden counter: int64 (exact for every 32-bit loop variable)."""
    ct = t if numpy.dtype(t).itemsize == 8 else numpy.int64
    if type(start) is ndarray:
        return start.astype(ct)
    return ct(start)


def step_of(step, m, t):
    if numpy.any(lanes_of(m) & (numpy.asarray(step) == 0)):
        # the per-thread rerun raises Python's own error for it
        raise JitkernValueError("range() arg 3 must not be zero")
    return counter(step, t)


def in_range(it, stop, step):
    if type(step) is not ndarray:
        return it < stop if step > 0 else it > stop
    return numpy.where(step > 0, it < stop, it > stop)


def assert_fail(m, message: str):
    k = _first(lanes_of(m))
    raise KernelAssertionError(f"{R.where_now()}: assertion failed: {message} in {_text(k)}")


# -- helpers with C++'s rules, on arrays ----------------------------------------------


def float_to_int(x, cls):
    if type(x) is not ndarray:
        return R.float_to_int(x, cls)
    info = numpy.iinfo(cls)
    big, small, nan = x >= info.max, x <= info.min, x != x  # noqa: PLR0124 - the NaN test
    out = numpy.where(big | small | nan, 0, x).astype(cls)
    out[big] = info.max
    out[small] = info.min
    return out


def lanes(fn):
    """A scalar helper of :mod:`.runtime` run thread by thread (exact, slower)."""

    def run(*args):
        arrays = [a for a in args if type(a) is ndarray]
        if not arrays:
            return fn(*args)
        n = len(arrays[0])
        rows = [[a[k] for k in range(n)] if type(a) is ndarray else [a] * n for a in args]
        return numpy.array([fn(*row) for row in zip(*rows)])

    return run


def pymin(a, b):
    return numpy.where(b < a, b, a)


def pymax(a, b):
    return numpy.where(b > a, b, a)


def npmin(a, b):
    return numpy.where((a != a) | (a <= b), a, b)  # noqa: PLR0124 - the NaN test


def npmax(a, b):
    return numpy.where((a != a) | (a >= b), a, b)  # noqa: PLR0124 - the NaN test


# -- atomics: in thread order ----------------------------------------------------------

_AT = {
    "add": numpy.add,
    "sub": numpy.subtract,
    "and": numpy.bitwise_and,
    "or": numpy.bitwise_or,
    "xor": numpy.bitwise_xor,
}


def _vector_op(op, old, v):
    if op in _AT:
        return _AT[op](old, v)
    if op == "exch":
        return numpy.broadcast_to(v, numpy.shape(old))
    if op == "min":
        return numpy.where(v < old, v, old)
    if op == "max":
        return numpy.where(v > old, v, old)
    one = old.dtype.type(1)
    if op == "inc":
        return numpy.where(old >= v, old.dtype.type(0), old + one)
    return numpy.where((old == 0) | (old > v), v, old - one)  # dec


def atomic(op, a, index, v, m, used=True):
    """``atomic_<op>(a, index, v)`` by the threads of ``m`` in thread order; the old
    values (each thread's, as if the threads ran one after another)."""
    if type(a) is Seg and a.reader is not None:
        a.note_atomic(index, m)
    flat = a.flat if type(a) is Seg else a
    lanes_ = numpy.flatnonzero(lanes_of(m))
    if not len(lanes_):
        return numpy.zeros(BATCH[0].n, flat.dtype)
    n = BATCH[0].n
    idx = _pick(index, lanes_, n)
    vals = _pick(v, lanes_, n)
    flat_idx = numpy.ravel_multi_index(idx, flat.shape) if type(idx) is tuple else idx
    flat_idx = numpy.broadcast_to(flat_idx, lanes_.shape)
    view = flat.reshape(-1)
    if not used and op in _AT and (flat.dtype.kind in "iu" or op in ("add", "sub")):
        old = None  # ufunc.at applies the updates one after another, in thread order
        _AT[op].at(view, flat_idx, numpy.broadcast_to(vals, lanes_.shape))
    elif len(numpy.unique(flat_idx)) == len(flat_idx):
        old = view[flat_idx]
        view[flat_idx] = _vector_op(op, old, vals)
    else:
        fn = R.ATOMIC_OPS[op]
        old = numpy.empty(len(lanes_), flat.dtype)
        vals = numpy.broadcast_to(vals, lanes_.shape)
        for j, (i, x) in enumerate(zip(flat_idx.tolist(), vals)):
            o = view[i]
            view[i] = fn(o, x)
            old[j] = o
    out = numpy.zeros(n, flat.dtype)
    if old is not None:
        out[lanes_] = old
    return out


def atomic_cas(a, index, compare, v, m):
    if type(a) is Seg and a.reader is not None:
        a.note_atomic(index, m)
    flat = a.flat if type(a) is Seg else a
    view = flat.reshape(-1)
    lanes_ = numpy.flatnonzero(lanes_of(m))
    n = BATCH[0].n
    idx = _pick(index, lanes_, n)
    flat_idx = numpy.ravel_multi_index(idx, flat.shape) if type(idx) is tuple else idx
    flat_idx = numpy.broadcast_to(flat_idx, lanes_.shape)
    cmp = numpy.broadcast_to(_pick(compare, lanes_, n), lanes_.shape)
    vals = numpy.broadcast_to(_pick(v, lanes_, n), lanes_.shape)
    out = numpy.zeros(n, flat.dtype)
    for j, i in enumerate(flat_idx.tolist()):
        o = view[i]
        if o == cmp[j]:
            view[i] = vals[j]
        out[lanes_[j]] = o
    return out


def _pick(x, lanes_, n):
    if type(x) is tuple:
        return tuple(_pick(i, lanes_, n) for i in x)
    if type(x) is ndarray and x.shape == (n,):
        return x[lanes_]
    return x


# -- barriers and warp collectives -----------------------------------------------------


def collective(m, kind, site, *fields):
    """A barrier or warp collective reached by the threads of ``m``: checked as the
    per-thread scheduler does, answered for every thread at once."""
    batch = BATCH[0]
    m = lanes_of(m)
    if kind is R.SYNC:
        return _barrier(batch, m, site, fields[0], fields[1])
    if kind is R.ACTIVEMASK:
        return batch.warp_bits(m).astype(numpy.uint32)
    if batch.aligned and type(fields[0]) is not ndarray:
        mask = int(fields[0]) & FULL
        if _uniform_mask_ok(m, mask):  # else the general path below says what is wrong
            if kind is R.SYNCWARP:
                return None
            if kind is R.SHFL:
                if mask == FULL and m.all() and type(fields[2]) is not ndarray and type(
                    fields[3]
                ) is not ndarray:
                    return _shuffle_full(batch, *fields[1:])
                return _shuffle_warps(batch, m, numpy.uint64(mask), *fields[1:])
            if kind is R.VOTE:
                return _vote(batch, m, numpy.uint64(mask), fields[1], fields[2])
    mask = numpy.broadcast_to(numpy.asarray(fields[0]).astype(numpy.uint64), (batch.n,))
    mask = mask & batch.full
    active = batch.warp_bits(m)
    _check_lanes(batch, m, mask, active, kind, site)
    if kind is R.SYNCWARP:
        return None
    if kind is R.SHFL:
        if batch.aligned:
            return _shuffle_warps(batch, m, mask, *fields[1:])
        return _shuffle(batch, m, mask, *fields[1:])
    if kind is R.VOTE:
        return _vote(batch, m, mask, fields[1], fields[2])
    raise KernelAssertionError(f"{site}: {kind} is not vectorised")  # refused when emitted


_LANES = numpy.arange(32)


def _uniform_mask_ok(m, mask: int) -> bool:
    """Whether the threads of ``m`` (whole warps) may run a collective over ``mask``: every
    active lane is in it, and every lane it names is active in a warp that runs it."""
    m2 = m.reshape(-1, 32)
    if mask == FULL:
        return bool((m2.all(1) | ~m2.any(1)).all())
    named = ((mask >> _LANES) & 1).astype(bool)
    if m2[:, ~named].any():
        return False
    return bool((m2[:, named].all(1) | ~m2.any(1)).all())


def _barrier(batch, m, site, how, pred):
    counts = numpy.bincount(batch.block_of[m], minlength=batch.nb)
    bad = (counts != 0) & (counts != batch.size)
    if bad.any():
        b = int(numpy.flatnonzero(bad)[0])
        n = int(counts[b])
        raise KernelAssertionError(
            f"barrier divergence in block {tuple(batch.blocks[b])}: {n} thread(s) wait at "
            f"the syncthreads at {site}, {batch.size - n} thread(s) exited or are elsewhere; "
            "every thread of a block must reach the same syncthreads (move it out of the "
            "branch, or keep the threads alive and skip the work instead of returning)"
        )
    done = numpy.flatnonzero(counts == batch.size)
    for seg in batch._shared.values():
        seg.barrier(done)
    if how is None:
        return None
    p = numpy.broadcast_to(numpy.asarray(pred).astype(bool), (batch.n,)) & m
    per_block = numpy.bincount(batch.block_of[p], minlength=batch.nb)[batch.block_of]
    if how == "count":
        return per_block.astype(numpy.int32)
    if how == "and":
        return per_block == batch.size
    return per_block > 0


def _check_lanes(batch, m, mask, active, kind, site):
    own = (mask >> batch.wlane.astype(numpy.uint64)) & numpy.uint64(1)
    what = _NAMES.get(kind, kind)
    bad = m & (own == 0)
    if bad.any():
        k = _first(bad)
        raise KernelAssertionError(
            f"{site}: warp-collective misuse: {what} in {batch.thread_text(k)} uses mask "
            f"{int(mask[k]):#010x}, which excludes its own lane {int(batch.wlane[k])}"
        )
    bad = m & ((mask & ~active) != 0)
    if bad.any():
        k = _first(bad)
        gone = [j for j in range(32) if (int(mask[k]) & ~int(active[k])) >> j & 1]
        raise KernelAssertionError(
            f"{site}: warp-collective misuse: {what} in block "
            f"{tuple(batch.blocks[k // batch.size])} "
            f"names lane(s) {gone} in mask {int(mask[k]):#010x}, which have exited or wait "
            "elsewhere (the simulated threads can never continue)"
        )


_NAMES = {R.SYNCWARP: "syncwarp", R.SHFL: "a shuffle", R.VOTE: "a vote"}


FULL = 0xFFFFFFFF


def _sources(lane, a, w, how):
    """The lane each lane reads from (the per-thread scheduler's rules)."""
    start = lane - lane % w
    if how == "idx":
        return start + a % w
    if how == "up":
        return numpy.where(lane - a >= start, lane - a, lane)
    if how == "down":
        return numpy.where(lane + a < start + w, lane + a, lane)
    x = lane ^ a
    return numpy.where((start <= x) & (x < start + w), x, lane)


def _shuffle_full(batch, value, arg, width, how):
    """Every lane of every (full) warp shuffles with one lane argument."""
    if type(value) is not ndarray:
        return value
    lane = numpy.arange(32)
    src = _sources(lane, int(arg), int(width), how)
    src = numpy.where((src >= 0) & (src < 32), src, lane)
    return value.reshape(-1, 32)[:, src].reshape(-1)


def _shuffle_warps(batch, m, mask, value, arg, width, how):
    """A shuffle in blocks of whole warps: computed on the warps with an active lane."""
    n = batch.n
    warps = n // 32
    out = numpy.array(numpy.broadcast_to(value, (n,)))
    rows = numpy.flatnonzero(m.reshape(warps, 32).any(axis=1))

    def of(x):
        return x.reshape(warps, 32)[rows] if type(x) is ndarray and x.shape == (n,) else x

    v, mk = out.reshape(warps, 32)[rows], of(mask)
    lane = numpy.arange(32)
    src = numpy.broadcast_to(_sources(lane, of(arg), of(width), how), v.shape)
    ok = (src >= 0) & (src < 32)
    src = numpy.where(ok, src, lane)
    got = numpy.take_along_axis(v, src, 1)
    in_mask = ((mk >> src.astype(numpy.uint64)) & numpy.uint64(1)) != 0
    same = numpy.take_along_axis(mk, src, 1) == mk if type(mk) is ndarray else True
    out.reshape(warps, 32)[rows] = numpy.where(ok & in_mask & same, got, v)
    return out


def _shuffle(batch, m, mask, value, arg, width, how):
    if type(value) is not ndarray:
        value = numpy.broadcast_to(value, (batch.n,))
    lane = batch.wlane
    a = numpy.asarray(arg).astype(numpy.int64)
    w = numpy.asarray(width).astype(numpy.int64)
    src = numpy.broadcast_to(_sources(lane, a, w, how), lane.shape)
    ok = (src >= 0) & (src < 32)
    src = numpy.where(ok, src, lane)
    src_pos = batch.warp * 32 + src
    in_mask = ((mask >> src.astype(numpy.uint64)) & numpy.uint64(1)) != 0
    same_group = batch.padded(mask, 0)[src_pos] == mask
    values = batch.padded(numpy.ascontiguousarray(value))[src_pos]
    return numpy.where(ok & in_mask & same_group, values, value)


def _vote(batch, m, mask, pred, how):
    p = numpy.broadcast_to(numpy.asarray(pred).astype(bool), (batch.n,)) & m
    bits = batch.warp_bits(p) & mask
    if how == "any":
        return bits != 0
    if how == "all":
        return bits == mask
    return bits.astype(numpy.uint32)  # ballot


def snapshot(arrays) -> list:
    """What :func:`restore` needs to put ``arrays`` back as they are now: each array's copy,
    or for arrays that share memory (a char* parameter's typed views, .cstructs) one copy
    of the bytes they span."""
    out, groups = [], {}
    for a in arrays:  # (an empty array spans no bytes: its own group)
        groups.setdefault(id(_root_of(a)) if a.size else id(a), []).append(a)
    for members in groups.values():
        root = _root_of(members[0])
        if len(members) == 1 or not root.flags.c_contiguous:
            out += [(a, a.copy()) for a in members]
            continue
        bounds = [_byte_bounds(a) for a in members]
        low, high = min(b[0] for b in bounds), max(b[1] for b in bounds)
        span = numpy.ndarray((high - low,), numpy.uint8, buffer=root, offset=low - _address(root))
        out.append((span, span.copy()))
    return out


def restore(saved) -> None:
    for array, copy in saved:
        array[...] = copy


def aliased_copies(host, arrays) -> list:
    """``host`` with the arrays at ``arrays`` copied, arrays that share memory (views of one
    buffer, as a string kernel's char* parameter and its typed views) sharing the copy."""
    out = list(host)
    groups: dict = {}
    for k in arrays:
        groups.setdefault(id(_root_of(host[k])) if host[k].size else k, []).append(k)
    for members in groups.values():
        root = _root_of(host[members[0]])
        if len(members) == 1 or not root.flags.c_contiguous:
            for k in members:
                out[k] = host[k].copy()
            continue
        bounds = [_byte_bounds(host[k]) for k in members]
        low, high = min(b[0] for b in bounds), max(b[1] for b in bounds)
        copy = numpy.ndarray((high - low,), numpy.uint8, buffer=root,
                             offset=low - _address(root)).copy()
        for k in members:
            a = host[k]
            out[k] = numpy.ndarray(a.shape, a.dtype, buffer=copy,
                                   offset=_address(a) - low, strides=a.strides)
    return out


def _byte_bounds(a) -> tuple:
    low = high = _address(a)
    for n, stride in zip(a.shape, a.strides):
        low += min(0, (n - 1) * stride)
        high += max(0, (n - 1) * stride)
    return low, high + a.itemsize


def _root_of(a):
    while isinstance(a.base, numpy.ndarray):
        a = a.base
    return a


def _address(a) -> int:
    return a.__array_interface__["data"][0]


def names() -> dict:
    """The names vectorised code reads, besides its constants and functions."""
    table = {
        name: value
        for name, value in R.names().items()
        if name not in _PER_THREAD_ONLY and not name.startswith("_jk_atomic")
    }
    table.update(
        {
            "_jk_ix": ix,
            "_jk_ixa": ix_atomic,
            "_jk_ixn": ixn,
            "_jk_st": store,
            "_jk_sel": sel,
            "_jk_rd": read,
            "_jk_any": any_,
            "_jk_ctr": counter,
            "_jk_step": step_of,
            "_jk_in_range": in_range,
            "_jk_assert_fail": assert_fail,
            "_jk_f2i": float_to_int,
            "_jk_pymin": pymin,
            "_jk_pymax": pymax,
            "_jk_npmin": npmin,
            "_jk_npmax": npmax,
            "_jk_vatomic": atomic,
            "_jk_vatomic_cas": atomic_cas,
            "_jk_coll": collective,
            "_jk_false": numpy.False_,
            "_jk_spow": lanes(pow),
        }
    )
    for name in ("fma", "via_math", "ipow", "ireciprocal", "popc", "clz", "ffs", "brev",
                 "complex"):
        table["_jk_" + name] = lanes(R.names()["_jk_" + name])
    return table


#: Names of :func:`.runtime.names` a vectorised kernel cannot use (its emitter refuses
#: the kernel, which then runs on the per-thread scheduler).
_PER_THREAD_ONLY = frozenset(
    [
        "_jk_range",
        "_jk_clock64",
        "_jk_printf",
        "_jk_local",
        "_jk_tile",
        "_jk_grid_rank",
        "_jk_grid_blocks",
        "_jk_block_rank",
        "_jk_memcpy",
        "_jk_REDUCE",
        "_jk_MATCH",
        "_jk_GRID_SYNC",
        "_jk_CLUSTER_SYNC",
    ]
)
