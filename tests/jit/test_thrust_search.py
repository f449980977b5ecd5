"""jit.thrust's vectorised searches (lower_bound, upper_bound, binary_search over a range of
values into an output, as cupyx.jit.thrust's ``*args``) and indexing fancy iterators
(``it[k]``), issue 25 section 5.

CPU: the generated calls, the refusals at the user's line, one nvcc compile for sm_90. The
tests taking ``launch``: per-thread rows of fresh random data against NumPy's searchsorted
and isin, outputs poisoned, on the GPU ([gpu]) and in the simulator ([sim])."""

import inspect

import numpy as np
import pytest
from test_thrust_more import needs_nvcc

from jitkern import jit
from jitkern.errors import JitSyntaxError, JitTypeError
from jitkern.jit import rawkernel


@rawkernel(device=True)
def by_magnitude(a, b):
    return abs(a) < abs(b)


@rawkernel()
def row_searches(x, v, lo, hi, found, ends, n, m):
    r = jit.threadIdx.x
    t = jit.thrust
    xr, vr = x + r * n, v + r * m
    ends[4 * r] = t.lower_bound(t.seq, xr, xr + n, vr, vr + m, lo + r * m) - lo
    ends[4 * r + 1] = t.upper_bound(t.seq, xr, xr + n, vr, vr + m, hi + r * m, t.less()) - hi
    ends[4 * r + 2] = t.binary_search(t.seq, xr, xr + n, vr, vr + m, found + r * m) - found
    ends[4 * r + 3] = t.lower_bound(t.seq, xr, xr + n, vr[0]) - xr  # the one-value form


@rawkernel()
def ordered_searches(down, by_abs, v, lo, found, n, m):
    r = jit.threadIdx.x
    t = jit.thrust
    d, a, vr = down + r * n, by_abs + r * n, v + r * m
    t.lower_bound(t.seq, d, d + n, vr, vr + m, lo + r * m, comp=t.greater())
    t.binary_search(t.seq, a, a + n, vr, vr + m, found + r * m, by_magnitude)


@rawkernel()
def counting_searches(v, lo, found, start, m):
    r = jit.threadIdx.x
    t = jit.thrust
    c = t.make_counting_iterator(np.int64(start))
    vr = v + r * m
    t.lower_bound(t.seq, c, c + 100, vr, vr + m, lo + r * m)
    seven = t.make_constant_iterator(np.int64(7))
    t.binary_search(t.seq, c, c + 100, seven, seven + m, found + r * m)


@rawkernel()
def fancy_index(out, steps, start, n):
    i = jit.grid(1)
    c = jit.thrust.make_counting_iterator(np.int32(start))
    k = jit.thrust.make_constant_iterator(np.float64(2.5))
    if i < n:
        out[i] = c[i] + k[i] + (c + 3)[i]
        steps[i] = (c + i)[0] - (c - 4)[i]  # 4: a moved iterator reads where it points


def _rows(rng, rows, n, m):
    x = np.sort(rng.integers(-30, 30, (rows, n)), axis=1).astype(np.int32)
    v = rng.integers(-35, 35, (rows, m)).astype(np.int32)
    return x, v


def test_vectorised_searches_match_numpy(rng, launch):
    rows, n, m = int(rng.integers(1, 33)), int(rng.integers(1, 60)), int(rng.integers(1, 40))
    x, v = _rows(rng, rows, n, m)
    lo, hi = launch.poisoned(rows * m, np.int64), launch.poisoned(rows * m, np.int32)
    found, ends = launch.poisoned(rows * m, np.int8), launch.poisoned(4 * rows, np.int64)
    launch(row_searches)[1, rows](launch.to_device(x.ravel()), launch.to_device(v.ravel()),
                                  lo, hi, found, ends, n, m)
    lo, hi, found = (launch.get(a).reshape(rows, m) for a in (lo, hi, found))
    for r in range(rows):
        np.testing.assert_array_equal(lo[r], np.searchsorted(x[r], v[r], "left"))
        np.testing.assert_array_equal(hi[r], np.searchsorted(x[r], v[r], "right"))
        np.testing.assert_array_equal(found[r], np.isin(v[r], x[r]))
    # each returns the output moved past its m elements; the one-value form an iterator
    want_ends = [[(r + 1) * m] * 3 + [np.searchsorted(x[r], v[r, 0], "left")]
                 for r in range(rows)]
    np.testing.assert_array_equal(launch.get(ends).reshape(rows, 4), want_ends)


def test_comparators_order_the_search(rng, launch):
    rows, n, m = int(rng.integers(1, 33)), int(rng.integers(1, 60)), int(rng.integers(1, 40))
    x, v = _rows(rng, rows, n, m)
    down = -np.sort(-x, axis=1)  # descending: searched with greater()
    by_abs = np.take_along_axis(x, np.argsort(np.abs(x), axis=1, kind="stable"), axis=1)
    lo, found = launch.poisoned(rows * m, np.int64), launch.poisoned(rows * m, np.int32)
    launch(ordered_searches)[1, rows](
        launch.to_device(down.ravel()), launch.to_device(by_abs.ravel()),
        launch.to_device(v.ravel()), lo, found, n, m)
    lo, found = launch.get(lo).reshape(rows, m), launch.get(found).reshape(rows, m)
    for r in range(rows):
        np.testing.assert_array_equal(lo[r], np.searchsorted(-down[r], -v[r], "left"))
        np.testing.assert_array_equal(found[r], np.isin(np.abs(v[r]), np.abs(x[r])))


def test_searches_over_counting_and_constant_iterators(rng, launch):
    rows, m = int(rng.integers(1, 33)), int(rng.integers(1, 40))
    start = int(rng.integers(-1000, 1000))
    v = rng.integers(start - 20, start + 120, (rows, m))
    lo, found = launch.poisoned(rows * m, np.int64), launch.poisoned(rows * m, np.int8)
    launch(counting_searches)[1, rows](launch.to_device(v.ravel()), lo, found, start, m)
    np.testing.assert_array_equal(launch.get(lo).reshape(rows, m),
                                  np.clip(v - start, 0, 100))
    np.testing.assert_array_equal(launch.get(found), [start <= 7 < start + 100] * (rows * m))


def test_fancy_iterators_are_indexed_in_kernels(rng, launch):
    n = int(rng.integers(1, launch.pick(100_000, 3_000)))
    start = int(rng.integers(-(1 << 20), 1 << 20))
    out, steps = launch.poisoned(n, np.float64), launch.poisoned(n, np.int32)
    launch(fancy_index)[-(-n // 128), 128](out, steps, start, n)
    i = np.arange(n)
    np.testing.assert_array_equal(launch.get(out), (start + i) + 2.5 + (start + 3 + i))
    np.testing.assert_array_equal(launch.get(steps), np.full(n, 4))


# -- CPU: what is generated, and what is refused ------------------------------------------------


def _calls(kernel, *args) -> list:
    return [ln.strip() for ln in kernel.emit(*args).splitlines() if "thrust::" in ln
            and not ln.strip().startswith(("//", "#"))]


I32, I64, I8 = np.zeros(8, np.int32), np.zeros(8, np.int64), np.zeros(8, np.int8)


def test_the_vectorised_forms_are_thrusts_calls():
    calls = _calls(row_searches, I32, I32, I64, I32, I8, I64, 8, 8)
    out = "({} + (((long long)(r)) * m))".format
    assert calls == [
        f"ends[(4u * r)] = ((long long)(thrust::lower_bound(thrust::seq, xr, (xr + n), vr, "
        f"(vr + m), {out('lo')}) - lo));",
        "ends[((4u * r) + 1u)] = ((long long)(thrust::upper_bound(thrust::seq, xr, (xr + n), "
        f"vr, (vr + m), {out('hi')}, thrust::less<int>()) - hi));",
        "ends[((4u * r) + 2u)] = ((long long)(thrust::binary_search(thrust::seq, xr, (xr + n), "
        f"vr, (vr + m), {out('found')}) - found));",
        "ends[((4u * r) + 3u)] = ((long long)(thrust::lower_bound(thrust::seq, xr, (xr + n), "
        "vr[0]) - xr));",
    ]
    calls = _calls(counting_searches, I64, I64, I8, 0, 8)
    assert ("thrust::binary_search(thrust::seq, c, (c + 100LL), seven, (seven + m), "
            "(found + (((long long)(r)) * m)));") in calls
    source = fancy_index.emit(np.zeros(8), I32, 0, 8)
    assert "out[i] = ((((double)(c[i])) + k[i]) + ((double)((c + 3LL)[i])));" in source
    assert "steps[i] = ((c + ((long long)(i)))[0] - (c - 4LL)[i]);" in source


@needs_nvcc
def test_the_searches_and_indexing_compile_for_sm90_with_nvcc():
    for kernel, args in ((row_searches, (I32, I32, I64, I32, I8, I64, 8, 8)),
                         (ordered_searches, (I32, I32, I32, I64, I32, 8, 8)),
                         (counting_searches, (I64, I64, I8, 0, 8)),
                         (fancy_index, (np.zeros(8), I32, 0, 8))):
        assert kernel.inspect(*args, arch="sm_90").cubin[:4] == b"\x7fELF"


@rawkernel()
def other_values(x, v, out):
    jit.thrust.lower_bound(jit.thrust.seq, x, x + 8, v, v + 8, out)


@rawkernel()
def comp_twice(x, v, out):
    jit.thrust.lower_bound(jit.thrust.seq, x, x + 8, v, v + 8, out, jit.thrust.less(),
                           comp=jit.thrust.less())


@rawkernel()
def five_after(x, v, out):
    jit.thrust.upper_bound(jit.thrust.seq, x, x + 8, v, v + 8, out, None, None)


@rawkernel()
def into_counting(x, v):
    c = jit.thrust.make_counting_iterator(np.int64(0))
    jit.thrust.binary_search(jit.thrust.seq, x, x + 8, v, v + 8, c)


@rawkernel()
def writes_counting(out):
    c = jit.thrust.make_counting_iterator(np.int64(0))
    c[1] = out[0]


def _where(kernel, marker):
    lines, first = inspect.getsourcelines(kernel.py_func)
    k = next(k for k, text in enumerate(lines) if marker in text)
    return f"{__file__}:{first + k}:{lines[k].index(marker) + 1}: "


@pytest.mark.parametrize("kernel, args, cls, marker, words", [
    (other_values, (I32, I64, I64), JitTypeError, "jit.thrust.lower_bound(",
     "values_first points to int64, but first points to int32"),
    (comp_twice, (I32, I32, I64), JitTypeError, "jit.thrust.lower_bound(",
     "comp is given twice: by position and as comp="),
    (five_after, (I32, I32, I64), JitTypeError, "jit.thrust.upper_bound(",
     "takes value[, comp] or values_first, values_last, result[, comp] after first and last; "
     "got 5 argument(s) there"),
    (into_counting, (I64, I64), JitTypeError, "jit.thrust.binary_search(",
     "result is written by thrust.binary_search, so it cannot be a counting iterator"),
    (writes_counting, (I64,), JitSyntaxError, "c[1]", "this expression cannot be assigned to"),
])
def test_refusals_name_the_place_and_the_fix(kernel, args, cls, marker, words):
    for run in (lambda: kernel.emit(*args), lambda: kernel.simulate[1, 1](*args)):
        with pytest.raises(cls) as info:
            run()
        message = str(info.value)
        assert message.startswith(_where(kernel, marker)), message
        assert words in message
        line, caret = message.splitlines()[1:3]
        assert caret.index("^") == line.index(marker)
