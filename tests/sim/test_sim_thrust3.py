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
