"""jit.thrust: cupyx.jit.thrust's other single-result algorithms (copy, reverse, replace,
remove, unique, is_sorted, adjacent_difference, inner_product, swap_ranges, gather, scatter,
the set operations). CPU: the generated calls, one nvcc compile for sm_90, the refusals.
The tests taking ``launch``: per-thread rows of random data against NumPy, on the GPU ([gpu])
and in the simulator ([sim]); then more rows (in place, sets and scans by key, iterators)
in the simulator alone."""

import importlib
import shutil

import numpy as np
import pytest

from jitkern import jit
from jitkern.errors import JitAttributeError, JitTypeError, KernelAssertionError
from jitkern.jit import rawkernel

# the module (jitkern.compiler.builtins.thrust the attribute is the jit.thrust namespace)
thrust_records = importlib.import_module("jitkern.compiler.builtins.thrust")

F32 = np.zeros(8, np.float32)
I32 = np.zeros(8, np.int32)
I64 = np.zeros(8, np.int64)
F64 = np.zeros(8, np.float64)

needs_nvcc = pytest.mark.skipif(
    shutil.which("nvcc") is None, reason="jit.thrust compiles with nvcc"
)


@rawkernel(device=True)
def absdiff(a, b):
    return abs(a - b)


@rawkernel()
def more_algorithms(x, y, z, m, idx, out):
    n = x.size
    t = jit.thrust
    jit.thrust.copy(t.seq, x, x + n, y)
    jit.thrust.reverse(t.seq, x, x + n)
    jit.thrust.reverse_copy(t.seq, x, x + n, y)
    jit.thrust.replace(t.seq, x, x + n, 1, 2)
    jit.thrust.replace_copy(t.seq, x, x + n, y, 1.5, 2.5)
    idx[0] = jit.thrust.remove(t.seq, x, x + n, 3) - x
    idx[1] = jit.thrust.remove_copy(t.seq, x, x + n, y, 3) - y
    idx[2] = jit.thrust.unique(t.seq, x, x + n) - x
    idx[3] = jit.thrust.unique(t.seq, x, x + n, t.equal_to()) - x
    idx[4] = jit.thrust.is_sorted(t.seq, x, x + n)
    idx[5] = jit.thrust.is_sorted_until(t.seq, x, x + n, t.greater()) - x
    jit.thrust.adjacent_difference(t.seq, x, x + n, y)
    jit.thrust.adjacent_difference(t.seq, x, x + n, y, absdiff)
    out[0] = jit.thrust.inner_product(t.seq, x, x + n, y, 0.0)
    out[1] = jit.thrust.inner_product(t.seq, x, x + n, y, np.float64(1), t.plus(), t.minus())
    jit.thrust.swap_ranges(t.seq, x, x + n, y)
    jit.thrust.gather(t.seq, m, m + n, x, z)
    jit.thrust.scatter(t.seq, x, x + n, m, z)
    idx[6] = jit.thrust.set_union(t.seq, x, x + 4, y, y + 4, z) - z
    idx[7] = jit.thrust.set_intersection(t.seq, x, x + 4, y, y + 4, z, t.less()) - z
    idx[8] = jit.thrust.set_difference(t.seq, x, x + 4, y, y + 4, z) - z
    idx[9] = jit.thrust.set_symmetric_difference(t.seq, x, x + 4, y, y + 4, z) - z


ARGS = (F32, F32, F32, I32, I64, F64)

EXPECTED = {
    "copy": "thrust::copy(thrust::seq, x, (x + n), y);",
    "reverse": "thrust::reverse(thrust::seq, x, (x + n));",
    "reverse_copy": "thrust::reverse_copy(thrust::seq, x, (x + n), y);",
    "replace": "thrust::replace(thrust::seq, x, (x + n), 1.0f, 2.0f);",
    "replace_copy": "thrust::replace_copy(thrust::seq, x, (x + n), y, 1.5f, 2.5f);",
    "remove": "idx[0] = ((long long)(thrust::remove(thrust::seq, x, (x + n), 3.0f) - x));",
    "remove_copy": "idx[1] = ((long long)(thrust::remove_copy(thrust::seq, x, (x + n), y, 3.0f) - y));",
    "unique": "idx[2] = ((long long)(thrust::unique(thrust::seq, x, (x + n)) - x));",
    "unique_pred": (
        "idx[3] = ((long long)(thrust::unique(thrust::seq, x, (x + n), "
        "thrust::equal_to<float>()) - x));"
    ),
    "is_sorted": "idx[4] = ((long long)(thrust::is_sorted(thrust::seq, x, (x + n))));",
    "is_sorted_until": (
        "idx[5] = ((long long)(thrust::is_sorted_until(thrust::seq, x, (x + n), "
        "thrust::greater<float>()) - x));"
    ),
    "adjacent_difference": "thrust::adjacent_difference(thrust::seq, x, (x + n), y);",
    "adjacent_difference_op": (
        "thrust::adjacent_difference(thrust::seq, x, (x + n), y, "
        "[] (float a0, float a1) -> float { return jk_fn_absdiff(a0, a1); });"
    ),
    "inner_product": "thrust::inner_product(thrust::seq, x, (x + n), y, 0.0f)",
    "inner_product_ops": (
        "out[1] = thrust::inner_product(thrust::seq, x, (x + n), y, 1.0, "
        "thrust::plus<double>(), thrust::minus<double>());"
    ),
    "swap_ranges": "thrust::swap_ranges(thrust::seq, x, (x + n), y);",
    "gather": "thrust::gather(thrust::seq, m, (m + n), x, z);",
    "scatter": "thrust::scatter(thrust::seq, x, (x + n), m, z);",
    "set_union": "thrust::set_union(thrust::seq, x, (x + 4LL), y, (y + 4LL), z) - z",
    "set_intersection": (
        "thrust::set_intersection(thrust::seq, x, (x + 4LL), y, (y + 4LL), z, "
        "thrust::less<float>()) - z"
    ),
    "set_difference": "thrust::set_difference(thrust::seq, x, (x + 4LL), y, (y + 4LL), z) - z",
    "set_symmetric_difference": (
        "thrust::set_symmetric_difference(thrust::seq, x, (x + 4LL), y, (y + 4LL), z) - z"
    ),
}

#: the rows this file covers (test_thrust.py covers the others); PAIR_ROWS are added below
ROWS = (
    "copy", "reverse", "reverse_copy", "replace", "replace_copy", "remove", "remove_copy",
    "unique", "is_sorted", "is_sorted_until", "adjacent_difference", "inner_product",
    "swap_ranges", "gather", "scatter", "set_union", "set_intersection", "set_difference",
    "set_symmetric_difference",
)  # fmt: skip


@rawkernel()
def pairs_and_by_key(k, v, ko, vo, idx):
    n = k.size
    t = jit.thrust
    a, b = jit.thrust.mismatch(t.seq, k, k + n, ko)
    idx[0] = a - k
    idx[1] = b - ko
    lo, hi = jit.thrust.equal_range(t.seq, k, k + n, 3)
    idx[2] = hi - lo
    ke, ve = jit.thrust.unique_by_key(t.seq, k, k + n, v)
    idx[3] = ke - k
    ke, ve = jit.thrust.reduce_by_key(t.seq, k, k + n, v, ko, vo)
    ke, ve = jit.thrust.reduce_by_key(t.seq, k, k + n, v, ko, vo, t.equal_to(), t.maximum())
    jit.thrust.inclusive_scan_by_key(t.seq, k, k + n, v, vo)
    jit.thrust.inclusive_scan_by_key(t.seq, k, k + n, v, vo, None, t.maximum())
    jit.thrust.exclusive_scan_by_key(t.seq, k, k + n, v, vo)
    jit.thrust.exclusive_scan_by_key(t.seq, k, k + n, v, vo, None, None, t.plus())
    ke, ve = jit.thrust.set_union_by_key(t.seq, k, k + 4, ko, ko + 4, v, vo, ko, vo)
    ke, ve = jit.thrust.set_intersection_by_key(t.seq, k, k + 4, ko, ko + 4, v, ko, vo)
    ke, ve = jit.thrust.set_difference_by_key(t.seq, k, k + 4, ko, ko + 4, v, vo, ko, vo)
    ke, ve = jit.thrust.set_symmetric_difference_by_key(
        t.seq, k, k + 4, ko, ko + 4, v, vo, ko, vo, t.less()
    )
    idx[4] = ve - vo


PAIR_ARGS = (I32, F64, I32, F64, I64)

PAIR_EXPECTED = {
    "mismatch": "thrust::mismatch(thrust::seq, k, (k + n), ko))",
    "pair": "[] (auto jk_p) { return jk::Tuple<int*, int*>{jk_p.first, {jk_p.second, {}}}; }",
    "equal_range": "thrust::equal_range(thrust::seq, k, (k + n), 3))",
    "unique_by_key": "thrust::unique_by_key(thrust::seq, k, (k + n), v))",
    "reduce_by_key": "thrust::reduce_by_key(thrust::seq, k, (k + n), v, ko, vo))",
    "reduce_by_key_ops": (
        "thrust::reduce_by_key(thrust::seq, k, (k + n), v, ko, vo, thrust::equal_to<int>(), "
        "thrust::maximum<double>()))"
    ),
    "inclusive_scan_by_key": "thrust::inclusive_scan_by_key(thrust::seq, k, (k + n), v, vo);",
    "inclusive_scan_by_key_op": (
        "thrust::inclusive_scan_by_key(thrust::seq, k, (k + n), v, vo, thrust::equal_to<int>(), "
        "thrust::maximum<double>());"
    ),
    "exclusive_scan_by_key": "thrust::exclusive_scan_by_key(thrust::seq, k, (k + n), v, vo);",
    "exclusive_scan_by_key_op": (
        "thrust::exclusive_scan_by_key(thrust::seq, k, (k + n), v, vo, 0.0, "
        "thrust::equal_to<int>(), thrust::plus<double>());"
    ),
    "set_union_by_key": (
        "thrust::set_union_by_key(thrust::seq, k, (k + 4LL), ko, (ko + 4LL), v, vo, ko, vo))"
    ),
    "set_intersection_by_key": (
        "thrust::set_intersection_by_key(thrust::seq, k, (k + 4LL), ko, (ko + 4LL), v, ko, vo))"
    ),
}

PAIR_ROWS = (
    "mismatch", "equal_range", "unique_by_key", "reduce_by_key", "inclusive_scan_by_key",
    "exclusive_scan_by_key", "set_union_by_key", "set_intersection_by_key",
    "set_difference_by_key", "set_symmetric_difference_by_key",
)  # fmt: skip
ALL_ROWS = ROWS + PAIR_ROWS


def _source():
    return more_algorithms.emit(*ARGS)


@pytest.mark.parametrize("case", sorted(PAIR_EXPECTED))
def test_pairs_and_by_key_emit_their_thrust_calls(case):
    assert PAIR_EXPECTED[case] in pairs_and_by_key.emit(*PAIR_ARGS)


@needs_nvcc
def test_pairs_and_by_key_compile_for_sm90_without_a_gpu():
    result = pairs_and_by_key.inspect(*PAIR_ARGS, arch="sm_90")
    assert result.cubin[:4] == b"\x7fELF"


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_each_algorithm_emits_its_thrust_call(case):
    assert EXPECTED[case] in _source()


def test_every_row_is_exercised_documented_and_included():
    source = _source() + pairs_and_by_key.emit(*PAIR_ARGS)
    for name in ALL_ROWS:
        record = thrust_records.ALGORITHMS[name]
        assert record.doc and record.group == "thrust"
        assert f"thrust::{name}(" in source
    for header in ("copy", "reverse", "replace", "remove", "unique", "sort",
                   "adjacent_difference", "inner_product", "swap", "gather", "scatter",
                   "set_operations"):  # fmt: skip
        assert f"#include <thrust/{header}.h>" in source


@needs_nvcc
def test_every_algorithm_compiles_for_sm90_without_a_gpu():
    result = more_algorithms.inspect(*ARGS, arch="sm_90")
    assert result.cubin[:4] == b"\x7fELF" and result.arch == "sm_90"


def test_inner_product_takes_both_operators_or_neither():
    @rawkernel()
    def k(x, y, out):
        out[0] = jit.thrust.inner_product(jit.thrust.seq, x, x + 4, y, 0.0, jit.thrust.plus())

    with pytest.raises(JitTypeError) as info:
        k.emit(F32, F32, F64)
    assert "binary_op2" in str(info.value) and "test_thrust_more.py:" in str(info.value)


def test_set_operation_second_range_must_point_to_one_type():
    @rawkernel()
    def k(x, y, z, out):
        out[0] = jit.thrust.set_union(jit.thrust.seq, x, x + 4, y, x + 4, z) - z

    with pytest.raises(JitTypeError) as info:
        k.emit(F32, I32, F32, I64)
    assert "last2 points to float32, but first points to int32" in str(info.value)


def test_missing_fancy_iterators_are_refused_by_name():
    # make_counting_iterator/make_constant_iterator: tests/compat/test_compat2.py
    @rawkernel()
    def k(x, y):
        jit.thrust.make_discard_iterator()

    with pytest.raises(JitAttributeError) as info:
        k.emit(F32, F32)
    assert "no member 'make_discard_iterator'" in str(info.value)


# -- GPU --------------------------------------------------------------------------

ROW = 17


@rawkernel()
def per_row(
    x,
    y,
    rev,
    rep,
    removed,
    nremoved,
    uniq,
    nuniq,
    sorted_flag,
    diff,
    dots,
    swapped,
    swap_b,
    gathered,
    perm,
    scattered,
):
    r = jit.threadIdx.x
    first = x + r * 17
    last = first + 17
    jit.thrust.copy(jit.thrust.seq, first, last, rev + r * 17)
    jit.thrust.reverse(jit.thrust.seq, rev + r * 17, rev + r * 17 + 17)
    jit.thrust.replace_copy(jit.thrust.seq, first, last, rep + r * 17, 0, 100)
    nremoved[r] = jit.thrust.remove_copy(jit.thrust.seq, first, last, removed + r * 17, 0) - (
        removed + r * 17
    )
    jit.thrust.copy(jit.thrust.seq, first, last, uniq + r * 17)
    nuniq[r] = jit.thrust.unique(jit.thrust.seq, uniq + r * 17, uniq + r * 17 + 17) - (
        uniq + r * 17
    )
    sorted_flag[r] = jit.thrust.is_sorted(jit.thrust.seq, first, last)
    jit.thrust.adjacent_difference(jit.thrust.seq, first, last, diff + r * 17)
    dots[r] = jit.thrust.inner_product(jit.thrust.seq, first, last, y + r * 17, np.int64(5))
    jit.thrust.copy(jit.thrust.seq, first, last, swapped + r * 17)
    jit.thrust.copy(jit.thrust.seq, y + r * 17, y + r * 17 + 17, swap_b + r * 17)
    jit.thrust.swap_ranges(jit.thrust.seq, swapped + r * 17, swapped + r * 17 + 17, swap_b + r * 17)
    jit.thrust.gather(jit.thrust.seq, perm + r * 17, perm + r * 17 + 17, first, gathered + r * 17)
    jit.thrust.scatter(jit.thrust.seq, first, last, perm + r * 17, scattered + r * 17)


def test_per_thread_algorithms_match_numpy(launch, rng):
    rows = 12
    x = rng.integers(-2, 3, size=(rows, ROW)).astype(np.int32)
    x[0] = np.sort(x[0])  # one sorted row
    y = rng.integers(-9, 10, size=(rows, ROW)).astype(np.int32)
    perm = np.stack([rng.permutation(ROW) for _ in range(rows)]).astype(np.int32)
    n = rows * ROW
    out = {
        name: launch.poisoned(size, dt, fill=-7)
        for name, size, dt in (
            ("rev", n, np.int32), ("rep", n, np.int32), ("removed", n, np.int32),
            ("nremoved", rows, np.int64), ("uniq", n, np.int32), ("nuniq", rows, np.int64),
            ("sorted", rows, np.int8), ("diff", n, np.int32), ("dots", rows, np.int64),
            ("swapped", n, np.int32), ("swap_b", n, np.int32), ("gathered", n, np.int32),
            ("scattered", n, np.int32),
        )
    }  # fmt: skip
    dev = launch.to_device
    launch(per_row)[1, rows](
        dev(x.ravel()), dev(y.ravel()), out["rev"], out["rep"], out["removed"],
        out["nremoved"], out["uniq"], out["nuniq"], out["sorted"], out["diff"], out["dots"],
        out["swapped"], out["swap_b"], out["gathered"], dev(perm.ravel()), out["scattered"],
    )  # fmt: skip
    get = {
        k: launch.get(v).reshape(rows, -1) if v.size == n else launch.get(v) for k, v in out.items()
    }
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


@rawkernel()
def set_ops(a, b, outs, counts):
    r = jit.threadIdx.x
    fa = a + r * 8
    fb = b + r * 8
    o = outs + r * 64
    counts[4 * r] = jit.thrust.set_union(jit.thrust.seq, fa, fa + 8, fb, fb + 8, o) - o
    counts[4 * r + 1] = jit.thrust.set_intersection(
        jit.thrust.seq, fa, fa + 8, fb, fb + 8, o + 16
    ) - (o + 16)
    counts[4 * r + 2] = jit.thrust.set_difference(
        jit.thrust.seq, fa, fa + 8, fb, fb + 8, o + 32
    ) - (o + 32)
    counts[4 * r + 3] = jit.thrust.set_symmetric_difference(
        jit.thrust.seq, fa, fa + 8, fb, fb + 8, o + 48
    ) - (o + 48)


def test_set_operations_match_numpy(launch, rng):
    rows = 6
    # sorted rows of distinct values, as NumPy's set routines compare them
    a = np.stack([np.sort(rng.choice(20, 8, replace=False)) for _ in range(rows)])
    b = np.stack([np.sort(rng.choice(20, 8, replace=False)) for _ in range(rows)])
    outs = launch.poisoned(rows * 64, np.float64)
    counts = launch.poisoned(rows * 4, np.int64, fill=-7)
    launch(set_ops)[1, rows](
        launch.to_device(a.astype(np.float64).ravel()),
        launch.to_device(b.astype(np.float64).ravel()),
        outs,
        counts,
    )
    got, c = launch.get(outs).reshape(rows, 4, 16), launch.get(counts).reshape(rows, 4)
    for r in range(rows):
        for k, ref in enumerate(_numpy_sets(a[r], b[r])):
            assert c[r, k] == ref.size
            np.testing.assert_array_equal(got[r, k, : ref.size], ref)


KEYS = 16


@rawkernel()
def by_key_rows(keys, vals, ko, vo, counts, inc, exc, other, mism, ranges, uk, uv, nuniq):
    r = jit.threadIdx.x
    k = keys + r * 16
    v = vals + r * 16
    ke, _ve = jit.thrust.reduce_by_key(jit.thrust.seq, k, k + 16, v, ko + r * 16, vo + r * 16)
    counts[r] = ke - (ko + r * 16)
    jit.thrust.inclusive_scan_by_key(jit.thrust.seq, k, k + 16, v, inc + r * 16)
    jit.thrust.exclusive_scan_by_key(jit.thrust.seq, k, k + 16, v, exc + r * 16, 1.5)
    a, b = jit.thrust.mismatch(jit.thrust.seq, k, k + 16, other + r * 16)
    mism[2 * r] = a - k
    mism[2 * r + 1] = b - (other + r * 16)
    lo, hi = jit.thrust.equal_range(jit.thrust.seq, k, k + 16, k[5])
    ranges[2 * r] = lo - k
    ranges[2 * r + 1] = hi - k
    for j in range(16):
        uk[r * 16 + j] = k[j]
        uv[r * 16 + j] = v[j]
    ke2, _ve2 = jit.thrust.unique_by_key(jit.thrust.seq, uk + r * 16, uk + r * 16 + 16, uv + r * 16)
    nuniq[r] = ke2 - (uk + r * 16)


def test_pairs_and_by_key_match_numpy(launch, rng):
    rows = 10
    keys = np.sort(rng.integers(0, 6, size=(rows, KEYS)), axis=1).astype(np.int32)
    vals = rng.standard_normal((rows, KEYS))
    other = keys.copy()
    where = rng.integers(0, KEYS, rows)
    other[np.arange(rows), where] += 100  # the first difference of each row
    n = rows * KEYS
    out = {
        name: launch.poisoned(size, dt, fill=-7)
        for name, size, dt in (
            ("ko", n, np.int32), ("vo", n, np.float64), ("counts", rows, np.int64),
            ("inc", n, np.float64), ("exc", n, np.float64), ("mism", 2 * rows, np.int64),
            ("ranges", 2 * rows, np.int64), ("uk", n, np.int32), ("uv", n, np.float64),
            ("nuniq", rows, np.int64),
        )
    }  # fmt: skip
    dev = launch.to_device
    launch(by_key_rows)[1, rows](
        dev(keys.ravel()), dev(vals.ravel()), out["ko"], out["vo"], out["counts"], out["inc"],
        out["exc"], dev(other.ravel()), out["mism"], out["ranges"], out["uk"], out["uv"],
        out["nuniq"],
    )  # fmt: skip
    get = {
        k: launch.get(v).reshape(rows, -1) if v.size == n else launch.get(v) for k, v in out.items()
    }
    for r in range(rows):
        starts = np.r_[True, keys[r][1:] != keys[r][:-1]]
        seg = np.cumsum(starts) - 1
        runs = keys[r][starts]
        sums = np.bincount(seg, weights=vals[r])
        m = runs.size
        assert get["counts"][r] == m == get["nuniq"][r]
        np.testing.assert_array_equal(get["ko"][r][:m], runs)
        np.testing.assert_allclose(get["vo"][r][:m], sums, rtol=1e-13)
        inc = np.empty(KEYS)
        exc = np.empty(KEYS)
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


# -- the simulator only ------------------------------------------------------------


def poisoned(n, dtype):
    """A NumPy output for the simulator, filled with a value no right answer has."""
    return np.full(n, -7, dtype)


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
