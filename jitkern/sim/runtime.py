"""What simulated kernels call at run time: conversions, checks, atomics, and the names
the generated Python reads (all spelled ``_jk_*`` so they never meet a user's name).

The generated code computes with NumPy scalars of the types the JIT inferred, so
NumPy's own scalar arithmetic gives the GPU's results: integers wrap, float32 stays
float32, comparisons give ``numpy.bool_``. Where C++ differs from NumPy (float to
int conversion saturates, ``int ** int`` stays an int) a helper here says so.
"""

from __future__ import annotations

import fractions
import itertools
import math
import sys

import numpy

from ..errors import KernelAssertionError
from ..compiler.types import NUMPY_SCALAR_NAMES, ml_dtype

#: The thread running now (the scheduler sets it before resuming each thread), for the
#: messages of the checks. One simulation runs at a time per process.
CURRENT = [None]


def where_now(depth: int = 2) -> str:
    """``file:line`` of the user's statement ``depth`` frames up (the generated code is
    compiled with the user's file name and line numbers)."""
    frame = sys._getframe(depth)
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def thread_text() -> str:
    t = CURRENT[0]
    if t is None:
        return "the kernel"
    return f"thread {t.tidx} of block {t.block.index}"


def check_index(i, a, name):
    """``i`` when it is inside the 1-D array (or shared array) ``a``; else the error."""
    if 0 <= i < len(a):
        return i
    raise KernelAssertionError(
        f"{where_now()}: index {int(i)} is out of bounds for {name} of shape {a.shape} "
        f"in {thread_text()}"
    ) from None


def check_indices(a, name, *indices):
    """The index tuple when every index is inside its axis of ``a``; else the error."""
    shape = a.shape
    for axis, i in enumerate(indices):
        if not 0 <= i < shape[axis]:
            raise KernelAssertionError(
                f"{where_now()}: index {tuple(int(j) for j in indices)} is out of bounds for "
                f"{name} of shape {shape} (axis {axis} has size {shape[axis]}) in {thread_text()}"
            ) from None
    return indices


def local_array(cls, size: int):
    """A thread's ``jit.local_memory``: uninitialised, so it reads as 0xff bytes (NaN for
    floats, -1 for ints) until written, as shared memory does here."""
    return numpy.full(size * numpy.dtype(cls).itemsize, 0xFF, numpy.uint8).view(cls)


def assert_fail(message: str):
    raise KernelAssertionError(f"{where_now()}: assertion failed: {message} in {thread_text()}")


# -- conversions with C++'s rules where NumPy's differ -------------------------------


def float_to_int(x, cls):
    """C++ (and PTX cvt.rzi) float -> int: truncate, saturate at the type's range, NaN -> 0."""
    if x != x:  # noqa: PLR0124 - the NaN test
        return cls(0)
    info = numpy.iinfo(cls)
    if x >= info.max:
        return cls(info.max)
    if x <= info.min:
        return cls(info.min)
    return cls(int(x))


def to_half(x, cls):
    """C++ converts to float16 through float32 (__float2half(float(x)))."""
    return cls(numpy.float32(x))


def saturating(cls):
    """CUDA's conversion to a float8 type (``__NV_SATFINITE``): round to nearest even,
    and a value beyond the largest finite one (infinities included) becomes that value;
    NaN stays NaN. ml_dtypes' own conversion overflows to NaN or infinity instead."""
    import ml_dtypes

    top = numpy.float32(ml_dtypes.finfo(cls).max)

    def convert(x):
        x = numpy.float32(x)
        if x > top:
            return cls(top)
        if x < -top:
            return cls(-top)
        return cls(x)

    return convert


def ireciprocal(x):
    """1 / x of an integer as the kernel's C++ (and CuPy) computes it: 0 for x == 0."""
    return type(x)(x if x == 1 or x == -1 else 0)


def ipow(base, exp):
    """int ** int stays an int, wrapping (a negative exponent gives 0 unless |base| is 1)."""
    cls = type(base)
    if exp < 0:
        if base == 1:
            return cls(1)
        if base == -1:
            return cls(-1) if int(exp) & 1 else cls(1)
        return cls(0)
    r, b, e = cls(1), base, int(exp)
    while e:
        if e & 1:
            r = r * b
        b = b * b
        e >>= 1
    return r


def typed_range(start, stop, step, cls):
    """The values a C++ ``for (T i = start; i < stop; i += step)`` takes, as ``cls`` scalars
    (computed on Python ints: NumPy's arange on unsigned scalars wraps stop - start)."""
    r = range(int(start), int(stop), int(step))
    if len(r) < 2:
        return [cls(v) for v in r]
    return numpy.arange(r.start, r.stop, r.step, dtype=cls)


def square(x):
    return x * x


def fma(x, y, z):
    """x * y + z with one rounding (exactly, through fractions)."""
    cls = type(x)
    if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
        return cls(float(x) * float(y) + float(z))
    exact = fractions.Fraction(float(x)) * fractions.Fraction(float(y)) + fractions.Fraction(
        float(z)
    )
    if cls is numpy.float64:
        return cls(float(exact))
    # float32: round the exact value once (float(exact) is exact enough to round again
    # only when it is not a tie; the tie case is settled with the exact value)
    f = numpy.float32(float(exact))
    lo = numpy.nextafter(f, numpy.float32(-numpy.inf))
    hi = numpy.nextafter(f, numpy.float32(numpy.inf))
    best = min(
        (lo, f, hi),
        key=lambda c: (abs(fractions.Fraction(float(c)) - exact), int(c.view(numpy.uint32)) & 1),
    )
    return best


def via_math(fn, x, cls):
    """A function NumPy lacks (erf, gamma), through Python's math on doubles."""
    try:
        return cls(fn(float(x)))
    except (ValueError, OverflowError):
        return cls(numpy.nan if fn is not math.gamma or x != x or x < 0 else numpy.inf)  # noqa: PLR0124 - the NaN test


def pymin(a, b):
    return b if b < a else a  # noqa: FURB136 - C++'s order on ties and NaN


def pymax(a, b):
    return b if b > a else a  # noqa: FURB136 - C++'s order on ties and NaN


def npmin(a, b):
    return a if (a != a or a <= b) else b  # noqa: PLR0124 - the NaN test


def npmax(a, b):
    return a if (a != a or a >= b) else b  # noqa: PLR0124 - the NaN test


def make_complex(cls, re, im):
    return cls(complex(re, im))


def complex_multiply(a, b):
    """``a * b`` of complex numbers, scalars or (on the vectorised path) arrays, as NumPy's
    scalars compute it: (ac - bd) + (ad + bc)i, each product rounded (NumPy's array loop
    may fuse them, FMA)."""
    if type(a) is not numpy.ndarray and type(b) is not numpy.ndarray:
        return a * b
    out = numpy.empty(numpy.broadcast_shapes(numpy.shape(a), numpy.shape(b)),
                      numpy.result_type(a, b))
    out.real = a.real * b.real - a.imag * b.imag
    out.imag = a.real * b.imag + a.imag * b.real
    return out


def complex_abs(a):
    """``abs(a)`` of complex numbers as NumPy's scalars compute it: libm's hypot."""
    if type(a) is not numpy.ndarray:
        return abs(a)
    return numpy.hypot(a.real, a.imag)


def popc(x):
    return numpy.int32(int(x).bit_count())


def clz(x, bits):
    return numpy.int32(bits - int(x).bit_length())


def ffs(x, bits):
    v = int(x) & ((1 << bits) - 1)
    return numpy.int32((v & -v).bit_length())


def brev(x, bits):
    text = format(int(x), f"0{bits}b")
    return type(x)(int(text[::-1], 2))


_CLOCK = itertools.count(1)


def clock64():
    """A counter: increases by one per read (the simulator has no cycles)."""
    return numpy.int64(next(_CLOCK))


def printf(fmt: str, args: tuple) -> None:
    sys.stdout.write(fmt % args)


# -- atomics: read, combine, write; threads run one at a time, so this is atomic ------


def _inc(old, v):
    return type(old)(0) if old >= v else old + type(old)(1)


def _dec(old, v):
    return v if (old == 0 or old > v) else old - type(old)(1)


ATOMIC_OPS = {
    "add": lambda old, v: old + v,
    "sub": lambda old, v: old - v,
    "exch": lambda old, v: v,
    "min": lambda old, v: v if v < old else old,  # noqa: FURB136 - C++'s order on ties and NaN
    "max": lambda old, v: v if v > old else old,  # noqa: FURB136 - C++'s order on ties and NaN
    "inc": _inc,
    "dec": _dec,
    "and": lambda old, v: old & v,
    "or": lambda old, v: old | v,
    "xor": lambda old, v: old ^ v,
}


def atomic(op, a, i, v):
    old = numpy.ndarray.__getitem__(a, i)  # an atomic is no race (see RaceArray)
    numpy.ndarray.__setitem__(a, i, op(old, v))
    return old


def atomic_cas(a, i, compare, v):
    old = numpy.ndarray.__getitem__(a, i)
    if old == compare:
        numpy.ndarray.__setitem__(a, i, v)
    return old


# -- racecheck: shared memory accessed by two threads between two barriers -------------


class RaceArray(numpy.ndarray):
    """A block's shared array under ``racecheck=True``: each element remembers who read
    and wrote it since the block's last barrier; a second thread's conflicting access
    (at least one of the two a write) is a KernelAssertionError."""

    def _note(self, index, write: bool):
        log = self._race_log()
        t = CURRENT[0]
        key = index if not isinstance(index, tuple) else tuple(int(i) for i in index)
        key = int(key) if not isinstance(key, tuple) else key
        writer, readers = log.get(key, (None, {}))
        where = where_now(3)
        if writer is not None and writer[0] is not t:
            _race(self, key, writer, (t, where), "writes" if write else "reads", "wrote")
        if write:
            for reader, at in readers.items():
                if reader is not t:
                    _race(self, key, (reader, at), (t, where), "writes", "read")
            log[key] = ((t, where), {})
        else:
            readers.setdefault(t, where)
            log[key] = (writer, readers)

    def _race_log(self) -> dict:
        base = self
        while isinstance(base.base, RaceArray):
            base = base.base
        return RACE_LOGS.setdefault(id(base), {})

    def __getitem__(self, index):
        self._note(index, False)
        return numpy.ndarray.__getitem__(self, index)

    def __setitem__(self, index, value):
        self._note(index, True)
        numpy.ndarray.__setitem__(self, index, value)


#: id(shared array) -> {index: (writer, {reader: where})}; cleared at each barrier.
RACE_LOGS: dict = {}


def _race(array, key, first, second, verb, first_verb):
    (t0, at0), (t1, at1) = first, second
    raise KernelAssertionError(
        f"{at1}: shared-memory race on element {key}: thread {t1.tidx} of block "
        f"{t1.block.index} {verb} it, and thread {t0.tidx} {first_verb} it at {at0} with no "
        "syncthreads between (add jit.syncthreads() between the two accesses)"
    )


# -- cooperative groups and cub ----------------------------------------------------


class Dim3:
    __slots__ = ("x", "y", "z")

    def __init__(self, x, y, z):
        self.x, self.y, self.z = x, y, z


class Tile:
    """``cg.tiled_partition(block, size)`` for one thread: its tile's size, rank and lanes."""

    __slots__ = ("mask", "meta_rank", "meta_size", "rank", "size")

    def __init__(self, thread, size: int):
        self.size = numpy.uint32(size)
        self.rank = numpy.uint32(thread.rank % size)
        self.meta_rank = numpy.uint32(thread.rank // size)
        self.meta_size = numpy.uint32(-(-thread.block.size // size))
        lane = thread.rank % 32
        self.mask = numpy.uint32(((1 << size) - 1) << (lane - lane % size))


def grid_rank(thread):
    block = thread.block
    gx, gy, _ = block.grid.dims
    bx, by, bz = block.index
    return numpy.uint64((bx + gx * (by + gy * bz)) * block.size + thread.rank)


def grid_blocks(thread):
    gx, gy, gz = thread.block.grid.dims
    return numpy.uint64(gx * gy * gz)


def block_rank(thread):
    block = thread.block
    gx, gy, _ = block.grid.dims
    bx, by, bz = block.index
    return numpy.uint64(bx + gx * (by + gy * bz))


def memcpy_async(dst, di, src, si, size):
    """cg.memcpy_async, done at once: ``size`` bytes from src[si:] to dst[di:]."""
    n = int(size)
    d0, s0 = int(di) * dst.itemsize, int(si) * src.itemsize
    if n < 0 or d0 + n > dst.nbytes or s0 + n > src.nbytes:
        raise KernelAssertionError(
            f"{where_now()}: memcpy_async of {n} bytes is out of bounds (destination "
            f"{dst.nbytes} bytes from byte {d0}, source {src.nbytes} bytes from byte {s0}) "
            f"in {thread_text()}"
        )
    dst.view(numpy.uint8)[d0 : d0 + n] = src.view(numpy.uint8)[s0 : s0 + n]


#: cg.plus/less/greater/bit_* and cub.Sum()/Max()/Min(): the Python reduction operator.
REDUCE_OPS = {
    "cg.plus": lambda a, b: a + b,
    "cg.less": lambda a, b: b if b < a else a,  # noqa: FURB136 - C++'s order on ties and NaN
    "cg.greater": lambda a, b: b if b > a else a,  # noqa: FURB136 - C++'s order on ties and NaN
    "cg.bit_and": lambda a, b: a & b,
    "cg.bit_or": lambda a, b: a | b,
    "cg.bit_xor": lambda a, b: a ^ b,
    "cub.Sum": lambda a, b: a + b,
    "cub.Max": lambda a, b: b if a < b else a,  # noqa: FURB136 - C++'s order on ties and NaN
    "cub.Min": lambda a, b: b if b < a else a,  # noqa: FURB136 - C++'s order on ties and NaN
}


def tree_reduce(values: list, op):
    """Reduce as a warp does with shfl_down (16, 8, 4, 2, 1): lane 0's result."""
    vals = list(values)
    offset = 1
    while offset < len(vals):
        offset *= 2
    offset //= 2
    while offset:
        for lane in range(len(vals)):
            if lane + offset < len(vals) and lane < offset:
                vals[lane] = op(vals[lane], vals[lane + offset])
        offset //= 2
    return vals[0]


# -- requests a thread yields to the scheduler ---------------------------------------

SYNC = "sync"  # (SYNC, line, how, predicate): how is None, 'count', 'and', 'or'
SYNCWARP = "syncwarp"  # (SYNCWARP, line, mask)
SHFL = "shfl"  # (SHFL, line, mask, value, lane_arg, width, kind)
VOTE = "vote"  # (VOTE, line, mask, predicate, kind)
MATCH = "match"  # (MATCH, line, mask, value, kind)
ACTIVEMASK = "activemask"  # (ACTIVEMASK, line)
GRID_SYNC = "grid_sync"  # (GRID_SYNC, line)
CLUSTER_SYNC = "cluster_sync"  # (CLUSTER_SYNC, line)
REDUCE = "reduce"  # (REDUCE, line, mask, value, count, op): a warp/tile reduction


def names() -> dict:
    """The names generated code reads, besides its constants and functions."""
    table = {
        "_jk_np": numpy,
        "_jk_math": math,
        "_jk_ix": check_index,
        "_jk_ixn": check_indices,
        "_jk_assert_fail": assert_fail,
        "_jk_local": local_array,
        "_jk_f2i": float_to_int,
        "_jk_to_half": to_half,
        "_jk_round_float16": numpy.float16,
        "_jk_ipow": ipow,
        "_jk_ireciprocal": ireciprocal,
        "_jk_square": square,
        "_jk_fma": fma,
        "_jk_via_math": via_math,
        "_jk_pymin": pymin,
        "_jk_pymax": pymax,
        "_jk_npmin": npmin,
        "_jk_npmax": npmax,
        "_jk_complex": make_complex,
        "_jk_cmul": complex_multiply,
        "_jk_cabs": complex_abs,
        "_jk_popc": popc,
        "_jk_clz": clz,
        "_jk_ffs": ffs,
        "_jk_brev": brev,
        "_jk_clock64": clock64,
        "_jk_printf": printf,
        "_jk_atomic": atomic,
        "_jk_atomic_cas": atomic_cas,
        "_jk_range": typed_range,
        "_jk_SYNC": SYNC,
        "_jk_SYNCWARP": SYNCWARP,
        "_jk_SHFL": SHFL,
        "_jk_VOTE": VOTE,
        "_jk_MATCH": MATCH,
        "_jk_ACTIVEMASK": ACTIVEMASK,
        "_jk_GRID_SYNC": GRID_SYNC,
        "_jk_CLUSTER_SYNC": CLUSTER_SYNC,
        "_jk_REDUCE": REDUCE,
        "_jk_dim3": Dim3,
        "_jk_tile": Tile,
        "_jk_grid_rank": grid_rank,
        "_jk_grid_blocks": grid_blocks,
        "_jk_block_rank": block_rank,
        "_jk_memcpy": memcpy_async,
    }
    for name in ("float8_e4m3fn", "float8_e5m2"):
        dtype = ml_dtype(name)
        if dtype is not None:
            convert = saturating(dtype.type)
            table[f"_jk_t_{name}"] = dtype.type
            table[f"_jk_to_{name}"] = table[f"_jk_round_{name}"] = convert
    bfloat16 = ml_dtype("bfloat16")
    if bfloat16 is not None:  # rounds to nearest even from float32, as __float2bfloat16_rn
        table["_jk_t_bfloat16"] = table["_jk_round_bfloat16"] = bfloat16.type
    for name, fn in REDUCE_OPS.items():
        table["_jk_op_" + name.replace(".", "_")] = fn
    for op, fn in ATOMIC_OPS.items():
        table[f"_jk_atomic_{op}"] = fn
    for name in NUMPY_SCALAR_NAMES:
        table[f"_jk_t_{name}"] = getattr(numpy, name if name != "bool" else "bool_")
    return table
