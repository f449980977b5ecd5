"""jit.thrust kernels run by the simulator (tests/jit/test_thrust.py's GPU kernels and
every algorithm), against NumPy: Thrust kernels are tested without nvcc or a GPU."""

import importlib.util
import pathlib
import sys

import numpy as np
import pytest

from jitkern import jit
from jitkern.errors import KernelAssertionError
from jitkern.jit import rawkernel

_PATH = pathlib.Path(__file__).resolve().parents[1] / "jit" / "test_thrust.py"
# test_thrust imports its sibling test_thrust_more by name, as pytest's collection allows
if str(_PATH.parent) not in sys.path:
    sys.path.insert(0, str(_PATH.parent))
_SPEC = importlib.util.spec_from_file_location("thrust_kernels_for_sim", _PATH)
gpu = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(gpu)

ROW = gpu.ROW


def poisoned(n, dtype):
    return np.full(n, -7, dtype)


def test_per_thread_algorithms_match_numpy(rng):
    rows = 16
    x = rng.integers(-5, 6, size=(rows, ROW)).astype(np.int32)
    keys = rng.permutation(rows * ROW).astype(np.int32).reshape(rows, ROW) % 50
    vals = rng.standard_normal((rows, ROW)).astype(np.float64)
    target = x[np.arange(rows), rng.integers(0, ROW, rows)].copy()
    target[0] = 99  # not present: find returns last, count 0
    hx, hkeys, hvals = x.ravel().copy(), keys.ravel().copy(), vals.ravel().copy()
    out = {
        name: poisoned(n, dt)
        for name, n, dt in (
            ("sorted", rows * ROW, np.int32),
            ("scan_in", rows * ROW, np.int32),
            ("scan_ex", rows * ROW, np.int32),
            ("sums", rows, np.int64),
            ("counts", rows, np.int64),
            ("found", rows, np.int64),
            ("bounds", 2 * rows, np.int64),
            ("ext", 2 * rows, np.int64),
        )
    }
    gpu.per_row.simulate[1, rows](
        hx,
        hkeys,
        hvals,
        out["sorted"],
        out["scan_in"],
        out["scan_ex"],
        out["sums"],
        out["counts"],
        out["found"],
        out["bounds"],
        out["ext"],
        target,
    )
    get = out
    np.testing.assert_array_equal(get["sorted"].reshape(rows, ROW), np.sort(x, axis=1))
    np.testing.assert_array_equal(hx.reshape(rows, ROW), np.sort(x, axis=1))  # in place
    np.testing.assert_array_equal(get["scan_in"].reshape(rows, ROW), np.cumsum(x, axis=1))
    ex = np.cumsum(x, axis=1) - x + 10
    np.testing.assert_array_equal(get["scan_ex"].reshape(rows, ROW), ex)
    np.testing.assert_array_equal(get["sums"], x.sum(axis=1, dtype=np.int64))
    np.testing.assert_array_equal(get["counts"], (x == target[:, None]).sum(axis=1))
    first_hit = [int(np.argmax(row == t)) if (row == t).any() else ROW for row, t in zip(x, target)]
    np.testing.assert_array_equal(get["found"], first_hit)
    np.testing.assert_array_equal(get["ext"][0::2], x.argmin(axis=1))
    np.testing.assert_array_equal(get["ext"][1::2], x.argmax(axis=1))
    s = np.sort(x, axis=1)
    lo = [np.searchsorted(row, t, "left") for row, t in zip(s, target)]
    hi = [np.searchsorted(row, t, "right") for row, t in zip(s, target)]
    np.testing.assert_array_equal(get["bounds"][0::2], lo)
    np.testing.assert_array_equal(get["bounds"][1::2], hi)
    order = np.argsort(keys, axis=1, kind="stable")
    np.testing.assert_array_equal(hkeys.reshape(rows, ROW), np.take_along_axis(keys, order, 1))
    # the simulator's sort is stable: the values follow their keys in order
    np.testing.assert_array_equal(hvals.reshape(rows, ROW), np.take_along_axis(vals, order, 1))


def test_transform_sequence_fill_equal(rng):
    rows = 8
    h = rng.standard_normal(rows * 8)
    h[8:16] = h[:8]  # row 1 equals row 0
    y, seq = np.full(rows * 8, np.nan), poisoned(rows * 8, np.int32)
    out, flags = np.full(rows, np.nan), poisoned(rows, np.int8)
    gpu.fills.simulate[1, rows](h, y, seq, out, flags)
    np.testing.assert_array_equal(y, h * h)
    sums = np.zeros(rows)
    for k in range(8):  # transform_reduce adds left to right from 0.0
        sums = sums + h.reshape(rows, 8)[:, k] ** 2
    np.testing.assert_array_equal(out, sums)
    expected_seq = np.arange(rows)[:, None] + 3 * np.arange(8)[None, :]
    np.testing.assert_array_equal(seq.reshape(rows, 8), expected_seq)
    np.testing.assert_array_equal(flags, [1, 1] + [0] * (rows - 2))


def test_every_algorithm_kernel_runs(rng):
    n = 8
    x = rng.permutation(n).astype(np.float32)
    y = np.full(n, np.nan, np.float32)
    keys = rng.permutation(n).astype(np.int32)
    out = np.full(n, np.nan)
    idx = np.full(n, -7, np.int64)
    x0, keys0 = x.copy(), keys.copy()
    gpu.every_algorithm.simulate[1, 1](x, y, keys, out, idx)
    # the kernel's steps, one by one, in NumPy
    assert idx[0] == np.count_nonzero(x0 == 1.0)
    hx = np.sort(x0)[::-1][np.argsort(keys0, kind="stable")]  # sort, greater, by key
    assert out[0] == np.add.accumulate(hx, dtype=np.float32)[-1]
    assert out[1] == max(1.0, float(hx.max()))
    assert idx[1] == int(np.flatnonzero(hx == 2.0)[0])
    assert idx[3] == hx.argmin() and idx[4] == hx.argmax()
    assert idx[2] == 0  # x against y = 7, 7, 7, then the exclusive scan
    hy = 2 * hx  # transform(twice), then sorted by the keys 3, 5, ... descending
    np.testing.assert_array_equal(keys, 3 + 2 * np.arange(n)[::-1])
    np.testing.assert_array_equal(y, hy[::-1])
    assert out[2] == np.add.accumulate(2 * hx, dtype=np.float32)[-1]
    np.testing.assert_array_equal(x, hx)


@rawkernel()
def searches(x, q, out):
    i = jit.threadIdx.x
    out[0, i] = jit.thrust.lower_bound(jit.thrust.seq, x, x + x.size, q[i]) - x
    out[1, i] = jit.thrust.upper_bound(jit.thrust.seq, x.begin(), x.end(), q[i]) - x.begin()
    out[2, i] = jit.thrust.binary_search(jit.thrust.seq, x, x + x.size, q[i])
    out[3, i] = jit.thrust.count(jit.thrust.device, x, x + x.size, q[i])


def test_searches_match_numpy(rng):
    x = np.sort(rng.integers(0, 20, 64)).astype(np.int64)
    q = rng.integers(-2, 22, 32).astype(np.int64)
    out = np.full((4, 32), -7, np.int64)
    searches.simulate[1, 32](x, q, out)
    np.testing.assert_array_equal(out[0], np.searchsorted(x, q, "left"))
    np.testing.assert_array_equal(out[1], np.searchsorted(x, q, "right"))
    np.testing.assert_array_equal(out[2], np.isin(q, x))
    np.testing.assert_array_equal(out[3], (x[None, :] == q[:, None]).sum(axis=1))


@rawkernel()
def bad_range(x, out):
    out[0] = jit.thrust.reduce(jit.thrust.seq, x, x + 20)


def test_a_range_past_the_array_is_reported():
    x = np.ones(8, np.float32)
    out = np.zeros(1, np.float32)
    with pytest.raises(KernelAssertionError) as info:
        bad_range.simulate[1, 1](x, out)
    message = str(info.value)
    assert "test_sim_thrust.py:" in message and "pointer arithmetic leaves the array" in message
