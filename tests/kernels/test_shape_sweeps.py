"""ReductionKernel over every small extent and axis set (a reduced extent of 1 crashed the
strategy choice), and ElementwiseKernel over records whose size is no power of two (their
vector loads asked for alignas(48))."""

import itertools

import numpy as np
import pytest

import jitkern

EXTENTS = (0, 1, 2, 3, 31, 32, 33, 1023, 1024, 1025)
SUM = jitkern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "sweep_sum")


def _shapes():
    yield from ((e,) for e in EXTENTS)
    yield from ((a, b) for a in EXTENTS for b in EXTENTS if a * b <= 1 << 16)
    yield from itertools.product((0, 1, 2, 33), (1, 3, 32), (0, 1, 31, 1025))


def _axis_sets(ndim):
    for r in range(ndim + 1):
        yield from itertools.combinations(range(ndim), r)


CASES = [(s, ax) for s in _shapes() for ax in _axis_sets(len(s))]


def test_every_shape_and_axis_set_compiles_for_sm_90():
    names = set()
    for shape, axes in CASES:
        info = SUM.inspect(np.ones(shape, np.float32), axis=axes or None, arch="sm_90")
        names.add(info.name)
        assert info.cubin[:4] == b"\x7fELF", (shape, axes)
    assert names == {"sweep_sum"}


def _kept_extent(shape, axes) -> int:
    return int(np.prod([n for k, n in enumerate(shape) if k not in (axes or range(len(shape)))]))


def _simulator_cases(rng, count=48):
    """A fresh sample of the cases small enough for the simulator, which runs one block per
    output element (every case, over the CI runs; the GPU run takes them all)."""
    small = [c for c in CASES if _kept_extent(*c) <= 64 and np.prod(c[0]) <= 4096]
    return [small[k] for k in rng.choice(len(small), count, replace=False)]


def test_every_shape_and_axis_set_sums_as_numpy(rng, launch):
    for shape, axes in _simulator_cases(rng) if launch.simulated else CASES:
        x = rng.integers(-4, 5, shape).astype(np.float32)  # small integers: exact sums
        got = launch.get(launch(SUM)(launch.to_device(x), axis=axes or None))
        want = x.astype(np.float64).sum(axis=axes or None)
        assert got.shape == np.shape(want), (shape, axes)
        np.testing.assert_array_equal(got, want.astype(np.float32), err_msg=f"{shape} {axes}")


RECORDS = [
    np.dtype([("a", "f4"), ("b", "f8"), ("c", "i2", (3,))], align=True),  # 24 bytes
    np.dtype([("a", "f4"), ("b", "f4"), ("c", "f4")]),  # 12 bytes
    np.dtype([("a", "f8"), ("b", "f8"), ("c", "i4", (6,))], align=True),  # 40 bytes
    np.dtype([("a", "f4"), ("b", "f4")]),  # 8 bytes: vectors of two records
]
FIELDS = jitkern.ElementwiseKernel(
    "T r, S s", "float64 y", "y = r.a * s.b + r.b;", "record_fields")


@pytest.mark.parametrize("rec", RECORDS, ids=lambda r: f"{r.itemsize}B")
def test_records_of_any_size_compile_contiguous(rec):
    x = np.zeros(1000, rec)
    info = FIELDS.inspect(x, np.zeros((), rec)[()], np.zeros(1000), arch="sm_90")
    assert info.cubin[:4] == b"\x7fELF"
    assert f"static_assert(sizeof(" in info.source and "alignas(48)" not in info.source


@pytest.mark.parametrize("rec", RECORDS, ids=lambda r: f"{r.itemsize}B")
def test_records_of_any_size_read_their_fields(rec, rng, launch):
    n = launch.pick(1000, 200)
    host = np.zeros(n, rec)
    for name in rec.names:
        host[name] = rng.integers(-50, 50, host[name].shape)
    s = np.zeros((), rec)[()]
    s["b"] = 3
    out = launch.poisoned(n, np.float64)
    launch(FIELDS)(launch.to_device(host), s, out)
    want = host["a"].astype(np.float64) * 3 + host["b"]
    np.testing.assert_array_equal(launch.get(out), want)
