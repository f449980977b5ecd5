"""jit.thrust's other algorithms in the simulator (copies, removals, sets, pairs and the
by-key family): tests/jit/test_thrust_more.py's GPU kernels, and more rows, against NumPy."""

import importlib.util
import pathlib

import numpy as np
import pytest

from jitkern import jit
from jitkern.errors import KernelAssertionError
from jitkern.jit import rawkernel

_PATH = pathlib.Path(__file__).resolve().parents[1] / "jit" / "test_thrust_more.py"
_SPEC = importlib.util.spec_from_file_location("thrust_more_kernels_for_sim", _PATH)
gpu = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(gpu)

ROW = gpu.ROW


def poisoned(n, dtype):
    return np.full(n, -7, dtype)


def test_per_thread_algorithms_match_numpy(rng):
    rows = 12
    x = rng.integers(-2, 3, size=(rows, ROW)).astype(np.int32)
    x[0] = np.sort(x[0])  # one sorted row
    y = rng.integers(-9, 10, size=(rows, ROW)).astype(np.int32)
    perm = np.stack([rng.permutation(ROW) for _ in range(rows)]).astype(np.int32)
    n = rows * ROW
    out = {
        name: poisoned(size, dt)
        for name, size, dt in (
            ("rev", n, np.int32), ("rep", n, np.int32), ("removed", n, np.int32),
            ("nremoved", rows, np.int64), ("uniq", n, np.int32), ("nuniq", rows, np.int64),
            ("sorted", rows, np.int8), ("diff", n, np.int32), ("dots", rows, np.int64),
            ("swapped", n, np.int32), ("swap_b", n, np.int32), ("gathered", n, np.int32),
            ("scattered", n, np.int32),
        )
    }  # fmt: skip
    gpu.per_row.simulate[1, rows](
        x.ravel().copy(), y.ravel().copy(), out["rev"], out["rep"], out["removed"],
        out["nremoved"], out["uniq"], out["nuniq"], out["sorted"], out["diff"], out["dots"],
        out["swapped"], out["swap_b"], out["gathered"], perm.ravel().copy(), out["scattered"],
    )  # fmt: skip
    get = {k: v.reshape(rows, -1) if v.size == n else v for k, v in out.items()}
    np.testing.assert_array_equal(get["rev"], x[:, ::-1])
    np.testing.assert_array_equal(get["rep"], np.where(x == 0, 100, x))
    for r in range(rows):
        kept = x[r][x[r] != 0]
        assert get["nremoved"][r] == kept.size
        np.testing.assert_array_equal(get["removed"][r][: kept.size], kept)
        runs = x[r][np.r_[True, x[r][1:] != x[r][:-1]]]
        assert get["nuniq"][r] == runs.size
        np.testing.assert_array_equal(get["uniq"][r][: runs.size], runs)
    np.testing.assert_array_equal(get["sorted"], [int(np.all(np.diff(row) >= 0)) for row in x])
    np.testing.assert_array_equal(get["diff"], np.diff(x, axis=1, prepend=0))
    np.testing.assert_array_equal(get["dots"], 5 + (x.astype(np.int64) * y).sum(axis=1))
    np.testing.assert_array_equal(get["swapped"], y)
    np.testing.assert_array_equal(get["swap_b"], x)
    np.testing.assert_array_equal(get["gathered"], np.take_along_axis(x, perm, axis=1))
    scattered = np.empty_like(x)
    np.put_along_axis(scattered, perm, x, axis=1)
    np.testing.assert_array_equal(get["scattered"], scattered)


def _numpy_sets(a, b):
    return np.union1d(a, b), np.intersect1d(a, b), np.setdiff1d(a, b), np.setxor1d(a, b)


def test_set_operations_match_numpy(rng):
    rows = 6
    a = np.stack([np.sort(rng.choice(20, 8, replace=False)) for _ in range(rows)])
    b = np.stack([np.sort(rng.choice(20, 8, replace=False)) for _ in range(rows)])
    outs, counts = poisoned(rows * 64, np.float64), poisoned(rows * 4, np.int64)
    gpu.set_ops.simulate[1, rows](
        a.astype(np.float64).ravel(), b.astype(np.float64).ravel(), outs, counts
    )
    got, c = outs.reshape(rows, 4, 16), counts.reshape(rows, 4)
    for r in range(rows):
        for k, ref in enumerate(_numpy_sets(a[r], b[r])):
            assert c[r, k] == ref.size
            np.testing.assert_array_equal(got[r, k, : ref.size], ref)


def test_pairs_and_by_key_match_numpy(rng):
    rows, width = 10, gpu.KEYS
    keys = np.sort(rng.integers(0, 6, size=(rows, width)), axis=1).astype(np.int32)
    vals = rng.standard_normal((rows, width))
    other = keys.copy()
    where = rng.integers(0, width, rows)
    other[np.arange(rows), where] += 100  # the first difference of each row
    n = rows * width
    out = {
        name: poisoned(size, dt)
        for name, size, dt in (
            ("ko", n, np.int32), ("vo", n, np.float64), ("counts", rows, np.int64),
            ("inc", n, np.float64), ("exc", n, np.float64), ("mism", 2 * rows, np.int64),
            ("ranges", 2 * rows, np.int64), ("uk", n, np.int32), ("uv", n, np.float64),
            ("nuniq", rows, np.int64),
        )
    }  # fmt: skip
    gpu.by_key_rows.simulate[1, rows](
        keys.ravel().copy(), vals.ravel().copy(), out["ko"], out["vo"], out["counts"],
        out["inc"], out["exc"], other.ravel().copy(), out["mism"], out["ranges"], out["uk"],
        out["uv"], out["nuniq"],
    )  # fmt: skip
    get = {k: v.reshape(rows, -1) if v.size == n else v for k, v in out.items()}
    for r in range(rows):
        starts = np.r_[True, keys[r][1:] != keys[r][:-1]]
        seg = np.cumsum(starts) - 1
        runs = keys[r][starts]
        m = runs.size
        assert get["counts"][r] == m == get["nuniq"][r]
        np.testing.assert_array_equal(get["ko"][r][:m], runs)
        sums = [vals[r][seg == s].sum() for s in range(m)]
        np.testing.assert_allclose(get["vo"][r][:m], sums, rtol=1e-13)
        inc, exc = np.empty(width), np.empty(width)
        for s in range(m):
            part = vals[r][seg == s]
            inc[seg == s] = np.cumsum(part)
            exc[seg == s] = 1.5 + np.cumsum(part) - part
        np.testing.assert_allclose(get["inc"][r], inc, rtol=1e-13)
        np.testing.assert_allclose(get["exc"][r], exc, rtol=1e-13, atol=1e-13)
        np.testing.assert_array_equal(get["uk"][r][:m], runs)
        np.testing.assert_array_equal(get["uv"][r][:m], vals[r][starts])
        assert get["mism"][2 * r] == get["mism"][2 * r + 1] == where[r]
        lo = np.searchsorted(keys[r], keys[r][5], "left")
        hi = np.searchsorted(keys[r], keys[r][5], "right")
        assert (get["ranges"][2 * r], get["ranges"][2 * r + 1]) == (lo, hi)


@rawkernel()
def in_place_rows(x, rev, nremoved, until, diff, best):
    r = jit.threadIdx.x
    first = x + r * 17
    last = first + 17
    jit.thrust.reverse_copy(jit.thrust.seq, first, last, rev + r * 17)
    until[r] = jit.thrust.is_sorted_until(jit.thrust.seq, first, last) - first
    jit.thrust.adjacent_difference(jit.thrust.seq, first, last, diff + r * 17, jit.thrust.plus())
    best[r] = jit.thrust.inner_product(
        jit.thrust.seq, first, last, rev + r * 17, np.int64(-99),
        jit.thrust.maximum(), jit.thrust.multiplies(),
    )  # fmt: skip
    jit.thrust.replace(jit.thrust.seq, first, last, 1, 7)
    nremoved[r] = jit.thrust.remove(jit.thrust.seq, first, last, 0) - first


def test_in_place_rows_and_operators_match_numpy(rng):
    rows = 9
    x = rng.integers(-2, 3, size=(rows, ROW)).astype(np.int32)
    x[0] = np.sort(x[0])
    h = x.ravel().copy()
    rev, diff = poisoned(h.size, np.int32), poisoned(h.size, np.int32)
    nremoved, until, best = (poisoned(rows, np.int64) for _ in range(3))
    in_place_rows.simulate[1, rows](h, rev, nremoved, until, diff, best)
    h, rev, diff = h.reshape(rows, ROW), rev.reshape(rows, ROW), diff.reshape(rows, ROW)
    np.testing.assert_array_equal(rev, x[:, ::-1])
    np.testing.assert_array_equal(diff, np.c_[x[:, :1], x[:, 1:] + x[:, :-1]])
    np.testing.assert_array_equal(best, np.maximum(-99, (x * x[:, ::-1]).max(axis=1)))
    replaced = np.where(x == 1, 7, x)
    for r in range(rows):
        drops = np.flatnonzero(np.diff(x[r]) < 0)
        assert until[r] == (drops[0] + 1 if drops.size else ROW)
        kept = replaced[r][replaced[r] != 0]
        assert nremoved[r] == kept.size
        np.testing.assert_array_equal(h[r][: kept.size], kept)
        np.testing.assert_array_equal(h[r][kept.size :], replaced[r][kept.size :])  # the tail


@rawkernel()
def sets_by_key(a, b, va, vb, ko, vo, counts):
    r = jit.threadIdx.x
    fa, fb, xa, xb = a + r * 8, b + r * 8, va + r * 8, vb + r * 8
    k, v = ko + r * 64, vo + r * 64
    e1, f1 = jit.thrust.set_union_by_key(jit.thrust.seq, fa, fa + 8, fb, fb + 8, xa, xb, k, v)
    counts[8 * r] = e1 - k
    counts[8 * r + 1] = f1 - v
    e2, f2 = jit.thrust.set_intersection_by_key(
        jit.thrust.seq, fa, fa + 8, fb, fb + 8, xa, k + 16, v + 16
    )
    counts[8 * r + 2] = e2 - (k + 16)
    counts[8 * r + 3] = f2 - (v + 16)
    e3, f3 = jit.thrust.set_difference_by_key(
        jit.thrust.seq, fa, fa + 8, fb, fb + 8, xa, xb, k + 32, v + 32
    )
    counts[8 * r + 4] = e3 - (k + 32)
    counts[8 * r + 5] = f3 - (v + 32)
    e4, f4 = jit.thrust.set_symmetric_difference_by_key(
        jit.thrust.seq, fa, fa + 8, fb, fb + 8, xa, xb, k + 48, v + 48
    )
    counts[8 * r + 6] = e4 - (k + 48)
    counts[8 * r + 7] = f4 - (v + 48)


def test_set_operations_by_key_carry_their_values(rng):
    rows = 5
    a = np.stack([np.sort(rng.choice(20, 8, replace=False)) for _ in range(rows)]).astype(np.int32)
    b = np.stack([np.sort(rng.choice(20, 8, replace=False)) for _ in range(rows)]).astype(np.int32)
    va, vb = rng.standard_normal((rows, 8)), rng.standard_normal((rows, 8))
    ko, vo = poisoned(rows * 64, np.int32), poisoned(rows * 64, np.float64)
    counts = poisoned(rows * 8, np.int64)
    sets_by_key.simulate[1, rows](a.ravel(), b.ravel(), va.ravel(), vb.ravel(), ko, vo, counts)
    ko, vo, counts = ko.reshape(rows, 4, 16), vo.reshape(rows, 4, 16), counts.reshape(rows, 4, 2)
    for r in range(rows):
        value_of = {**dict(zip(b[r], vb[r])), **dict(zip(a[r], va[r]))}  # the first range's wins
        for k, ref in enumerate(_numpy_sets(a[r], b[r])):
            assert tuple(counts[r, k]) == (ref.size, ref.size)
            np.testing.assert_array_equal(ko[r, k, : ref.size], ref)
            np.testing.assert_array_equal(vo[r, k, : ref.size], [value_of[key] for key in ref])


@rawkernel()
def scans_by_key(keys, vals, inc, exc):
    n = keys.shape[0]
    jit.thrust.inclusive_scan_by_key(
        jit.thrust.seq, keys, keys + n, vals, inc, jit.thrust.equal_to(), jit.thrust.maximum()
    )
    jit.thrust.exclusive_scan_by_key(jit.thrust.seq, keys, keys + n, vals, exc)


def test_scans_by_key_with_operators_and_the_default_init_match_numpy(rng):
    keys = np.sort(rng.integers(0, 5, 40)).astype(np.int64)
    vals = rng.integers(-50, 50, 40).astype(np.int16)
    inc, exc = poisoned(40, np.int16), poisoned(40, np.int16)
    scans_by_key.simulate[1, 1](keys, vals, inc, exc)
    for key in np.unique(keys):
        run = keys == key
        np.testing.assert_array_equal(inc[run], np.maximum.accumulate(vals[run]))
        np.testing.assert_array_equal(exc[run], np.cumsum(vals[run]) - vals[run])


@rawkernel()
def gather_outside(mapping, x, out):
    jit.thrust.gather(jit.thrust.seq, mapping, mapping + 4, x, out)


def test_a_gather_index_outside_the_input_is_reported(rng):
    x = rng.standard_normal(6)
    mapping = np.array([0, 5, int(rng.integers(6, 100)), 1], np.int32)
    with pytest.raises(KernelAssertionError, match=r"input_first \+ \d+ is outside its array of 6"):
        gather_outside.simulate[1, 1](mapping, x, np.zeros(4))


@rawkernel(device=True)
def near(a, b):
    return b - a <= 1


@rawkernel()
def near_keys(keys, vals, inc, ko, vo, counts):
    n = keys.shape[0]
    jit.thrust.inclusive_scan_by_key(jit.thrust.seq, keys, keys + n, vals, inc, near)
    e, _f = jit.thrust.reduce_by_key(jit.thrust.seq, keys, keys + n, vals, ko, vo, near)
    counts[0] = e - ko


def test_scans_by_key_compare_adjacent_keys_and_reduce_by_key_the_runs_first(rng):
    keys = np.cumsum(rng.integers(0, 3, 30)).astype(np.int32)  # steps of 0, 1 or 2
    vals = rng.integers(-9, 10, 30).astype(np.int64)
    inc, ko, vo, counts = (poisoned(30, dt) for dt in (np.int64, np.int32, np.int64, np.int64))
    near_keys.simulate[1, 1](keys, vals, inc, ko, vo, counts)
    adjacent = np.r_[True, np.diff(keys) > 1]  # Thrust's scan: pred(previous key, key)
    expected = [v if start else 0 for v, start in zip(vals, adjacent)]
    for k in range(1, 30):
        expected[k] = vals[k] if adjacent[k] else expected[k - 1] + vals[k]
    np.testing.assert_array_equal(inc, expected)
    heads, sums = [0], [vals[0]]  # reduce_by_key: pred(the run's first key, key)
    for k in range(1, 30):
        if keys[k] - keys[heads[-1]] <= 1:
            sums[-1] += vals[k]
        else:
            heads.append(k)
            sums.append(vals[k])
    assert counts[0] == len(heads)
    np.testing.assert_array_equal(ko[: len(heads)], keys[heads])
    np.testing.assert_array_equal(vo[: len(heads)], sums)


@rawkernel()
def gather_counting(mapping, out):
    c = jit.thrust.make_counting_iterator(np.int32(100))
    jit.thrust.gather(jit.thrust.seq, mapping, mapping + mapping.shape[0], c, out)


def test_gather_reads_a_counting_iterator(rng):
    mapping = rng.integers(0, 1000, int(rng.integers(1, 20))).astype(np.int64)
    out = poisoned(mapping.size, np.int32)
    gather_counting.simulate[1, 1](mapping, out)
    np.testing.assert_array_equal(out, mapping + 100)
