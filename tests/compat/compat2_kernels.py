"""Kernels shared by test_compat2.py (CPU), test_compat2_gpu.py (GPU) and
tests/sim/test_sim_thrust2.py (the simulator): jit.thrust's fancy iterators, with the
NumPy reference of what each row computes."""

import numpy as np

from jitkern import jit
from jitkern.jit import rawkernel

ROW = 16


@rawkernel(device=True)
def square(a):
    return a * a


@rawkernel(device=True)
def plus(a, b):
    return a + b


@rawkernel()
def fancy_rows(x, starts, squares, scanned, ints, floats, n):
    r = jit.threadIdx.x
    base = starts[r]
    c = jit.thrust.make_counting_iterator(base)  # base, base + 1, ... (int32)
    jit.thrust.transform(jit.thrust.seq, c, c + n, squares + r * n, square)
    ints[8 * r + 0] = jit.thrust.reduce(jit.thrust.seq, c, c + n)
    ints[8 * r + 1] = jit.thrust.find(jit.thrust.seq, c, c + n, base + 3) - c
    row = x + r * n
    ints[8 * r + 2] = jit.thrust.lower_bound(jit.thrust.seq, c, c + n, row[0]) - c
    ints[8 * r + 3] = jit.thrust.upper_bound(jit.thrust.seq, c, c + n, row[1]) - c
    same = jit.thrust.make_constant_iterator(row[0])
    ints[8 * r + 4] = jit.thrust.equal(jit.thrust.seq, row, row + n, same)
    ints[8 * r + 5] = jit.thrust.count(jit.thrust.seq, same, same + r, row[0])
    ends = c + n
    ints[8 * r + 6] = jit.thrust.max_element(jit.thrust.seq, ends - n, ends) - c
    ints[8 * r + 7] = jit.thrust.transform_reduce(
        jit.thrust.seq, c, c + n, square, np.int64(0), plus
    )
    jit.thrust.exclusive_scan(jit.thrust.seq, same, same + n, scanned + r * n, 0)
    half = jit.thrust.make_counting_iterator(np.float32(0.5))
    floats[r] = jit.thrust.reduce(jit.thrust.seq, half, half + n)


def fancy_inputs(rng, rows):
    """(x, starts): rows of x equal to their first element on even rows, random on odd."""
    starts = rng.integers(-50, 50, rows).astype(np.int32)
    x = rng.integers(-60, 70, (rows, ROW)).astype(np.int32)
    x[::2] = x[::2, :1]  # all equal: equal(row, constant) is true there
    return x, starts


def fancy_outputs(rows):
    """Poisoned outputs: squares, scanned, ints, floats."""
    return (
        np.full(rows * ROW, -7, np.int32),
        np.full(rows * ROW, -7, np.int32),
        np.full(rows * 8, -7, np.int64),
        np.full(rows, np.nan, np.float32),
    )


def fancy_expected(x, starts):
    """NumPy's answer for each output of fancy_rows."""
    rows = len(starts)
    seq = starts[:, None].astype(np.int64) + np.arange(ROW)
    ints = np.zeros((rows, 8), np.int64)
    ints[:, 0] = seq.sum(axis=1)
    ints[:, 1] = 3
    ints[:, 2] = [np.searchsorted(s, v, "left") for s, v in zip(seq, x[:, 0])]
    ints[:, 3] = [np.searchsorted(s, v, "right") for s, v in zip(seq, x[:, 1])]
    ints[:, 4] = (x == x[:, :1]).all(axis=1)
    ints[:, 5] = np.arange(rows)
    ints[:, 6] = ROW - 1
    ints[:, 7] = (seq * seq).sum(axis=1)
    squares = (seq * seq).astype(np.int32).ravel()
    scanned = (np.arange(ROW)[None, :] * x[:, :1].astype(np.int64)).astype(np.int32).ravel()
    floats = np.full(rows, 0.5 * ROW + ROW * (ROW - 1) / 2, np.float32)
    return squares, scanned, ints.ravel(), floats


@rawkernel()
def more_fancy(x, outs, idx):
    """One thread: the other algorithm rows over counting/constant ranges (GPU only: the
    simulator runs the rows of fancy_rows)."""
    n = x.size
    c = jit.thrust.make_counting_iterator(np.int32(0))
    k = jit.thrust.make_constant_iterator(np.int32(2))
    jit.thrust.gather(jit.thrust.seq, c, c + n, x, outs)
    idx[0] = jit.thrust.inner_product(jit.thrust.seq, x, x + n, k, np.int64(0))
    a, b = jit.thrust.mismatch(jit.thrust.seq, x, x + n, c)
    idx[1] = a - x
    idx[2] = b - c
    lo, hi = jit.thrust.equal_range(jit.thrust.seq, c, c + n, 3)
    idx[3] = hi - lo
    idx[4] = lo - c
    idx[5] = jit.thrust.set_union(jit.thrust.seq, c, c + 4, c + 2, c + 6, outs + n) - (outs + n)
    ke, ve = jit.thrust.reduce_by_key(jit.thrust.seq, k, k + n, c, outs + 2 * n, outs + 3 * n)
    idx[6] = ke - (outs + 2 * n)
    idx[7] = ve - (outs + 3 * n)
    jit.thrust.inclusive_scan_by_key(jit.thrust.seq, k, k + n, c, outs + 4 * n)
    idx[8] = jit.thrust.is_sorted(jit.thrust.seq, c, c + n)
    idx[9] = jit.thrust.is_sorted_until(jit.thrust.seq, c, c + n) - c
    jit.thrust.adjacent_difference(jit.thrust.seq, c, c + n, outs + 5 * n)
    jit.thrust.scatter(jit.thrust.seq, k, k + n, c, outs + 6 * n)
    jit.thrust.reverse_copy(jit.thrust.seq, c, c + n, outs + 7 * n)
    idx[10] = jit.thrust.binary_search(jit.thrust.seq, c, c + n, 5)


def more_expected(x):
    """NumPy's (outs as rows, idx) for more_fancy over x (n = len(x) >= 6); untouched = -7."""
    n = len(x)
    seq = np.arange(n)
    outs = np.full((8, n), -7, np.int64)
    outs[0] = x
    outs[1, :6] = np.arange(6)
    outs[2, 0], outs[3, 0] = 2, seq.sum()
    outs[4] = np.cumsum(seq)
    outs[5] = np.r_[0, np.ones(n - 1)]
    outs[6] = 2
    outs[7] = seq[::-1]
    differ = np.flatnonzero(x != seq)
    first = int(differ[0]) if len(differ) else n
    idx = np.array([2 * int(x.sum()), first, first, 1, 3, 6, 1, 1, 1, n, 1], np.int64)
    return outs.astype(np.int32), idx
