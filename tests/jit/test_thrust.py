"""jit.thrust: Thrust's algorithms inside kernels (cupyx.jit.thrust's names).

CPU: the generated calls (golden), the refusals, and one nvcc compile of every algorithm
for sm_90. The tests taking ``launch``: per-thread rows of random data against NumPy, on the
GPU ([gpu]) and in the simulator ([sim]); the simulator alone runs every algorithm's kernel,
the searches and the range check.
"""

import numpy as np
import pytest

# the argument stand-ins, the nvcc mark and the table module are test_thrust_more's
from test_thrust_more import ALL_ROWS as MORE_ROWS
from test_thrust_more import F32, F64, I32, I64, needs_nvcc, thrust_records

from jitkern import jit
from jitkern.errors import JitTypeError, KernelAssertionError
from jitkern.jit import rawkernel


def body(kernel, *args) -> list:
    source = kernel.emit(*args).split("}  // namespace jk\n", 1)[1]
    return [
        ln.strip()
        for ln in source.splitlines()
        if ln.strip() and not ln.startswith(("#", "    //"))
    ]


@rawkernel(device=True)
def twice(a):
    return a * 2


@rawkernel(device=True)
def add(a, b):
    return a + b


@rawkernel()
def every_algorithm(x, y, keys, out, idx):
    n = x.size
    idx[0] = jit.thrust.count(jit.thrust.device, x, x + n, 1.0)
    jit.thrust.sort(jit.thrust.seq, x.begin(), x.end())
    jit.thrust.stable_sort(jit.thrust.seq, x.begin(), x.end(), jit.thrust.greater())
    jit.thrust.sort_by_key(jit.thrust.seq, keys, keys + n, x)
    out[0] = jit.thrust.reduce(jit.thrust.seq, x, x + n)
    out[1] = jit.thrust.reduce(jit.thrust.seq, x, x + n, np.float64(1), jit.thrust.maximum())
    jit.thrust.inclusive_scan(jit.thrust.seq, x, x + n, y)
    jit.thrust.exclusive_scan(jit.thrust.seq, x, x + n, y, 5.0)
    idx[1] = jit.thrust.find(jit.thrust.seq, x.begin(), x.end(), 2.0) - x.begin()
    jit.thrust.fill(jit.thrust.seq, y, y + 3, 7)
    jit.thrust.sequence(jit.thrust.seq, keys, keys + n, 3, 2)
    idx[2] = jit.thrust.equal(jit.thrust.seq, x, x + n, y)
    idx[3] = jit.thrust.min_element(jit.thrust.seq, x, x + n) - x
    idx[4] = jit.thrust.max_element(jit.thrust.seq, x, x + n) - x
    idx[5] = jit.thrust.lower_bound(jit.thrust.seq, x, x + n, 0.5) - x
    idx[6] = jit.thrust.upper_bound(jit.thrust.seq, x, x + n, 0.5) - x
    idx[7] = jit.thrust.binary_search(jit.thrust.seq, x, x + n, 0.5)
    jit.thrust.transform(jit.thrust.seq, x, x + n, y, twice)
    out[2] = jit.thrust.transform_reduce(jit.thrust.seq, x, x + n, twice, 0.0, add)
    jit.thrust.stable_sort_by_key(jit.thrust.seq, keys, keys + n, y, jit.thrust.greater())
    smem = jit.shared_memory(np.float32, 32)
    jit.thrust.sort(jit.thrust.seq, smem, smem + 32)


ARGS = (F32, F32, I32, F64, I64)

EXPECTED = {
    "count": "idx[0] = thrust::count(thrust::device, x, (x + n), 1.0f);",
    "sort": "thrust::sort(thrust::seq, x, (x + jk_shape0_x));",
    "stable_sort": "thrust::stable_sort(thrust::seq, x, (x + jk_shape0_x), thrust::greater<float>());",
    "sort_by_key": "thrust::sort_by_key(thrust::seq, keys, (keys + n), x);",
    "reduce": "out[0] = ((double)(thrust::reduce(thrust::seq, x, (x + n), 0.0f)));",
    "reduce_init_op": "out[1] = thrust::reduce(thrust::seq, x, (x + n), 1.0, thrust::maximum<double>());",
    "inclusive_scan": "thrust::inclusive_scan(thrust::seq, x, (x + n), y);",
    "exclusive_scan": "thrust::exclusive_scan(thrust::seq, x, (x + n), y, 5.0f);",
    "find": "idx[1] = ((long long)(thrust::find(thrust::seq, x, (x + jk_shape0_x), 2.0f) - x));",
    "fill": "thrust::fill(thrust::seq, y, (y + 3LL), 7.0f);",
    "sequence": "thrust::sequence(thrust::seq, keys, (keys + n), 3, 2);",
    "equal": "idx[2] = ((long long)(thrust::equal(thrust::seq, x, (x + n), y)));",
    "min_element": "idx[3] = ((long long)(thrust::min_element(thrust::seq, x, (x + n)) - x));",
    "max_element": "idx[4] = ((long long)(thrust::max_element(thrust::seq, x, (x + n)) - x));",
    "lower_bound": "idx[5] = ((long long)(thrust::lower_bound(thrust::seq, x, (x + n), 0.5f) - x));",
    "upper_bound": "idx[6] = ((long long)(thrust::upper_bound(thrust::seq, x, (x + n), 0.5f) - x));",
    "binary_search": "idx[7] = ((long long)(thrust::binary_search(thrust::seq, x, (x + n), 0.5f)));",
    "transform": (
        "thrust::transform(thrust::seq, x, (x + n), y, "
        "[] (float a0) -> float { return jk_fn_twice(a0); });"
    ),
    "transform_reduce": (
        "out[2] = ((double)(thrust::transform_reduce(thrust::seq, x, (x + n), "
        "[] (float a0) -> float { return jk_fn_twice(a0); }, 0.0f, "
        "[] (float a0, float a1) -> float { return jk_fn_add(a0, a1); })));"
    ),
    "stable_sort_by_key": (
        "thrust::stable_sort_by_key(thrust::seq, keys, (keys + n), y, thrust::greater<int>());"
    ),
    "shared_memory": "thrust::sort(thrust::seq, smem, (smem + 32LL));",
}


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_each_algorithm_emits_its_thrust_call(case):
    assert EXPECTED[case] in body(every_algorithm, *ARGS)


def test_every_table_row_is_exercised_and_documented():
    called = {line.split("thrust::", 1)[1].split("(", 1)[0] for line in EXPECTED.values()}
    called |= {"count"} | set(MORE_ROWS)  # the rest: test_thrust_more.py
    assert set(thrust_records.ALGORITHMS) <= called
    for record in thrust_records.ALGORITHMS.values():
        assert record.doc and record.group == "thrust"


def test_headers_and_backend():
    source = every_algorithm.emit(*ARGS)
    for header in (
        "execution_policy",
        "count",
        "sort",
        "scan",
        "reduce",
        "find",
        "extrema",
        "binary_search",
        "transform_reduce",
        "sequence",
        "equal",
        "fill",
    ):
        assert f"#include <thrust/{header}.h>" in source
    assert thrust_records.backend_for(source) == "nvcc"
    assert thrust_records.backend_for(source.replace("<thrust/", "<cub/")) == "nvrtc"


@needs_nvcc
def test_every_algorithm_compiles_for_sm90_without_a_gpu():
    result = every_algorithm.inspect(*ARGS, arch="sm_90")
    assert result.cubin[:4] == b"\x7fELF"
    assert result.arch == "sm_90"
    assert "thrust::transform_reduce" in result.source


def _check(kernel, args, message, *words):
    with pytest.raises(JitTypeError) as info:
        kernel.emit(*args)
    text = str(info.value)
    assert message in text
    for word in words:
        assert word in text


def test_policy_must_be_device_or_seq():
    @rawkernel()
    def k(x):
        jit.thrust.sort(1, x, x + 4)

    _check(k, (F32,), "exec_policy must be jit.thrust.device or jit.thrust.seq", "test_thrust.py:")


def test_iterators_must_point_to_one_type():
    @rawkernel()
    def k(x, y, out):
        out[0] = jit.thrust.count(jit.thrust.seq, x, y + 4, 1)

    _check(k, (F32, I32, I64), "last points to int32, but first points to float32", "y + 4")


def test_two_d_arrays_are_not_iterators():
    @rawkernel()
    def k(x):
        jit.thrust.sort(jit.thrust.seq, x, x)

    _check(k, (np.zeros((2, 3), np.float32),), "first must be a 1-D contiguous array")


def test_pointer_arithmetic_needs_an_integer():
    @rawkernel()
    def k(x):
        jit.thrust.sort(jit.thrust.seq, x, x + 1.5)

    _check(k, (F32,), "a pointer takes an integer offset")


# -- GPU --------------------------------------------------------------------------

ROW = 33


@rawkernel()
def per_row(x, keys, vals, sorted_out, scan_in, scan_ex, sums, counts, found, bounds, ext, target):
    r = jit.threadIdx.x
    first = x + r * 33
    last = first + 33
    counts[r] = jit.thrust.count(jit.thrust.seq, first, last, target[r])
    found[r] = jit.thrust.find(jit.thrust.seq, first, last, target[r]) - first
    ext[2 * r] = jit.thrust.min_element(jit.thrust.seq, first, last) - first
    ext[2 * r + 1] = jit.thrust.max_element(jit.thrust.device, first, last) - first
    sums[r] = jit.thrust.reduce(jit.thrust.seq, first, last, np.int64(0))
    jit.thrust.inclusive_scan(jit.thrust.seq, first, last, scan_in + r * 33)
    jit.thrust.exclusive_scan(jit.thrust.seq, first, last, scan_ex + r * 33, 10)
    jit.thrust.sort_by_key(jit.thrust.seq, keys + r * 33, keys + r * 33 + 33, vals + r * 33)
    jit.thrust.stable_sort(jit.thrust.device, first, last)
    for k in range(33):
        sorted_out[r * 33 + k] = first[k]
    bounds[2 * r] = jit.thrust.lower_bound(jit.thrust.seq, first, last, target[r]) - first
    bounds[2 * r + 1] = jit.thrust.upper_bound(jit.thrust.seq, first, last, target[r]) - first


def test_per_thread_algorithms_match_numpy(launch, rng):
    rows = 16
    x = rng.integers(-5, 6, size=(rows, ROW)).astype(np.int32)
    keys = rng.permutation(rows * ROW).astype(np.int32).reshape(rows, ROW) % 50
    vals = rng.standard_normal((rows, ROW)).astype(np.float64)
    target = x[np.arange(rows), rng.integers(0, ROW, rows)].copy()
    target[0] = 99  # not present: find returns last, count 0
    dx, dkeys, dvals = (launch.to_device(a.ravel()) for a in (x, keys, vals))
    out = {
        name: launch.poisoned(n, dt, fill=-7)
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
    launch(per_row)[1, rows](
        dx,
        dkeys,
        dvals,
        out["sorted"],
        out["scan_in"],
        out["scan_ex"],
        out["sums"],
        out["counts"],
        out["found"],
        out["bounds"],
        out["ext"],
        launch.to_device(target),
    )
    get = {k: launch.get(v) for k, v in out.items()}
    np.testing.assert_array_equal(get["sorted"].reshape(rows, ROW), np.sort(x, axis=1))
    in_place = launch.get(dx).reshape(rows, ROW)
    np.testing.assert_array_equal(in_place, np.sort(x, axis=1))
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
    got_keys, got_vals = launch.get(dkeys).reshape(rows, ROW), launch.get(dvals).reshape(rows, ROW)
    np.testing.assert_array_equal(got_keys, np.take_along_axis(keys, order, axis=1))
    # equal keys may come in any order from an unstable sort: compare each key's value set
    for r in range(rows):
        for key in np.unique(keys[r]):
            assert sorted(got_vals[r][got_keys[r] == key]) == sorted(vals[r][keys[r] == key])
    if launch.simulated:  # the simulator's sort is stable: the values follow their keys in order
        np.testing.assert_array_equal(got_vals, np.take_along_axis(vals, order, 1))


@rawkernel(device=True)
def square(a):
    return a * a


@rawkernel(device=True)
def plus(a, b):
    return a + b


@rawkernel()
def fills(x, y, seq, out, flags):
    r = jit.threadIdx.x
    first = x + r * 8
    jit.thrust.transform(jit.thrust.seq, first, first + 8, y + r * 8, square)
    out[r] = jit.thrust.transform_reduce(jit.thrust.seq, first, first + 8, square, 0.0, plus)
    jit.thrust.sequence(jit.thrust.seq, seq + r * 8, seq + r * 8 + 8, r, 3)
    flags[r] = jit.thrust.equal(jit.thrust.seq, first, first + 8, x)
    smem = jit.shared_memory(np.float64, 8)
    jit.thrust.fill(jit.thrust.seq, smem, smem + 8, 2.5)
    if r == 0:
        flags[r] = jit.thrust.reduce(jit.thrust.seq, smem, smem + 8) == 20.0


def test_transform_sequence_fill_equal(launch, rng):
    rows = 8
    h = rng.standard_normal(rows * 8)
    h[8:16] = h[:8]  # row 1 equals row 0
    y, seq = launch.poisoned(rows * 8, np.float64), launch.poisoned(rows * 8, np.int32, fill=-7)
    out, flags = launch.poisoned(rows, np.float64), launch.poisoned(rows, np.int8, fill=-7)
    launch(fills)[1, rows](launch.to_device(h), y, seq, out, flags)
    if launch.simulated:
        np.testing.assert_array_equal(launch.get(y), h * h)
        sums = np.zeros(rows)
        for k in range(8):  # transform_reduce adds left to right from 0.0
            sums = sums + h.reshape(rows, 8)[:, k] ** 2
        np.testing.assert_array_equal(launch.get(out), sums)
    else:
        np.testing.assert_allclose(launch.get(y), h * h, rtol=1e-15)
        sums = (h * h).reshape(rows, 8).sum(axis=1)
        np.testing.assert_allclose(launch.get(out), sums, rtol=1e-13)
    expected_seq = np.arange(rows)[:, None] + 3 * np.arange(8)[None, :]
    np.testing.assert_array_equal(launch.get(seq).reshape(rows, 8), expected_seq)
    np.testing.assert_array_equal(launch.get(flags), [1, 1] + [0] * (rows - 2))


# -- the simulator only ------------------------------------------------------------


def test_every_algorithm_kernel_runs(rng):
    n = 8
    x = rng.permutation(n).astype(np.float32)
    y = np.full(n, np.nan, np.float32)
    keys = rng.permutation(n).astype(np.int32)
    out = np.full(n, np.nan)
    idx = np.full(n, -7, np.int64)
    x0, keys0 = x.copy(), keys.copy()
    every_algorithm.simulate[1, 1](x, y, keys, out, idx)
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
    assert "test_thrust.py:" in message and "pointer arithmetic leaves the array" in message
