"""GPU: CuPy's array namespace on jitkern arrays: operators, reducing methods, the reference
routines, dot/matmul's tiled kernel and jitkern.random's device kernels, against NumPy (and
the random numbers against their NumPy twin, the numbers JITKERN_SIMULATE gives). The routines'
kernels also run in the simulator (``jitkern.sqrt.simulate``: the ``launch`` fixture's [sim])."""

import numpy as np
import pytest

import jitkern
import jitkern as cp
from jitkern.compat import philox
from jitkern.config import settings


def host(a):
    assert isinstance(a, jitkern.ndarray), type(a)
    return a.get()


def result(launch, a):
    """``a`` on the host: a jitkern array's copy on the GPU, the simulator's NumPy array."""
    if launch.simulated:
        assert isinstance(a, np.ndarray), type(a)
        return a
    return host(a)


@pytest.mark.gpu
def test_binary_operators_and_reflections(rng):
    xh = rng.standard_normal((3, 5)).astype(np.float32)
    yh = rng.standard_normal(5).astype(np.float32) + 3
    x, y = cp.asarray(xh), cp.asarray(yh)
    np.testing.assert_allclose(host(x + y), xh + yh, rtol=1e-6)
    np.testing.assert_allclose(host(x - y), xh - yh, rtol=1e-6)
    np.testing.assert_allclose(host(x * y), xh * yh, rtol=1e-6)
    np.testing.assert_allclose(host(x / y), xh / yh, rtol=1e-6)
    np.testing.assert_allclose(host(x**2), xh**2, rtol=1e-6)
    np.testing.assert_allclose(host(2.5 - x), 2.5 - xh, rtol=1e-6)
    np.testing.assert_allclose(host(np.float32(3) * x), 3 * xh, rtol=1e-6)
    z = 1j * x
    assert z.dtype == np.complex64  # a Python complex is weak, as in NumPy 2
    np.testing.assert_allclose(host(z), 1j * xh, rtol=1e-6)
    np.testing.assert_array_equal(host(-x), -xh)
    np.testing.assert_array_equal(host(abs(x)), np.abs(xh))
    np.testing.assert_array_equal(host(x < y), xh < yh)
    np.testing.assert_array_equal(host(x >= 0), xh >= 0)
    np.testing.assert_array_equal(host(x == x.copy()), np.ones((3, 5), bool))
    np.testing.assert_array_equal(host(x != y), xh != yh)
    i = cp.asarray(rng.integers(0, 100, 10))
    np.testing.assert_array_equal(host((i & 7) | (i >> 2)), (i.get() & 7) | (i.get() >> 2))
    np.testing.assert_array_equal(host(i // 3), i.get() // 3)
    np.testing.assert_array_equal(host(i % 7), i.get() % 7)


@pytest.mark.gpu
def test_arrays_stay_hashable_and_unequal_to_other_objects():
    x = cp.zeros(3)
    assert {x: 1}[x] == 1
    assert (x == None) is False  # noqa: E711 - Python's fallback: identity
    assert x != "text"


@pytest.mark.parametrize("name", ["sum", "max", "min", "mean", "prod"])
def test_reducing_methods(rng, name, launch):
    xh = rng.standard_normal((4, 6, 5))
    x = launch.to_device(xh)
    for axis in (None, 0, 1, (0, 2)):
        if not launch.simulated:  # the method of a jitkern array runs the routine's kernel
            got = getattr(x, name)(axis=axis)
            np.testing.assert_allclose(host(got), getattr(xh, name)(axis=axis), rtol=1e-12)
        got = launch(getattr(cp, name))(x, axis=axis)
        want = getattr(np, name)(xh, axis=axis)
        np.testing.assert_allclose(result(launch, got), want, rtol=1e-12)


@pytest.mark.gpu
def test_all_any_and_equality_checks(rng):
    xh = rng.standard_normal(1000).astype(np.float32)
    x = cp.asarray(xh)
    assert bool((x == cp.asarray(xh)).all()) and not bool((x > 10).any())
    y = x.copy()
    y[500] = 7.0
    assert not bool((x == y).all()) and bool((x != y).any())


def test_allclose_isclose_array_equal(rng, launch):
    ah = rng.standard_normal(launch.pick(5000, 1000))
    bh = ah * (1 + rng.standard_normal(ah.size) * 1e-7)
    ah[::13] = bh[::13] = np.nan
    ah[7] = bh[7] = np.inf
    a, b = launch.to_device(ah), launch.to_device(bh)
    allclose, isclose, array_equal = launch(cp.allclose), launch(cp.isclose), launch(cp.array_equal)
    array_type = np.ndarray if launch.simulated else jitkern.ndarray
    for equal_nan in (False, True):
        got = allclose(a, b, equal_nan=equal_nan)
        assert isinstance(got, array_type) and got.shape == ()
        assert bool(got) == np.allclose(ah, bh, equal_nan=equal_nan)
        got = isclose(a, b, equal_nan=equal_nan)
        np.testing.assert_array_equal(result(launch, got), np.isclose(ah, bh, equal_nan=equal_nan))
    assert bool(allclose(launch.to_device(np.float32([1, 2])), 1.0)) is False
    assert bool(array_equal(a, a, equal_nan=True)) and not bool(array_equal(a, a))
    assert not bool(array_equal(a, a[:10]))
    arange = np.arange if launch.simulated else cp.arange
    assert bool(array_equal(arange(5), arange(5)))


@pytest.mark.parametrize("name", ["sqrt", "abs", "absolute", "exp", "sin", "log1p"])
def test_ufunc_routines(rng, name, launch):
    xh = np.abs(rng.standard_normal(777)).astype(np.float32)
    got = launch(getattr(cp, name))(launch.to_device(xh))
    assert got.dtype == np.float32
    np.testing.assert_allclose(result(launch, got), getattr(np, name)(xh), rtol=2e-6)


@pytest.mark.gpu
def test_linspace_reshape_and_shape_routines():
    got = cp.linspace(0, 2 * cp.pi, 1000, dtype=cp.float32)
    np.testing.assert_array_equal(host(got), np.linspace(0, 2 * np.pi, 1000, dtype=np.float32))
    x = cp.arange(24)
    np.testing.assert_array_equal(host(cp.reshape(x, (4, 6))), np.arange(24).reshape(4, 6))
    np.testing.assert_array_equal(host(cp.transpose(cp.reshape(x, (4, 6)))),
                                  np.arange(24).reshape(4, 6).T)  # fmt: skip
    assert cp.get_array_module(x) is jitkern


@pytest.mark.parametrize(
    "dtype, rtol",
    [(np.float16, 2e-3), (np.float32, 1e-5), (np.float64, 1e-13), (np.complex64, 1e-5),
     (np.complex128, 1e-13), (np.int64, 0)],
)  # fmt: skip
def test_dot_and_matmul(rng, dtype, rtol, launch):
    m, k, n = (int(v) for v in rng.integers(1, launch.pick(150, 48), 3))
    ah = (rng.standard_normal((m, k)) * 3).astype(dtype)
    bh = (rng.standard_normal((n, k)) * 3).astype(dtype)  # used transposed: a strided view
    if np.dtype(dtype).kind == "c":
        ah = (ah + 1j * rng.standard_normal((m, k))).astype(dtype)
        bh = (bh + 1j * rng.standard_normal((n, k))).astype(dtype)
    vh = (rng.standard_normal(k) * 3).astype(dtype)
    a, b, v = launch.to_device(ah), launch.to_device(bh).T, launch.to_device(vh)
    wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    dot, matmul = launch(cp.dot), launch(cp.matmul)
    cases = [
        (dot(a, b), ah.astype(wide) @ bh.T.astype(wide)),
        (matmul(a, v), ah.astype(wide) @ vh.astype(wide)),
        (dot(v, b), vh.astype(wide) @ bh.T.astype(wide)),
        (dot(v, v), vh.astype(wide) @ vh.astype(wide)),
    ]
    if not launch.simulated:  # a jitkern array's @ (NumPy's own on the simulator's arrays)
        cases.append((a @ v, ah.astype(wide) @ vh.astype(wide)))
    for got, ref in cases:
        assert got.dtype == dtype and got.shape == np.shape(ref)
        if rtol == 0:
            np.testing.assert_array_equal(result(launch, got), ref.astype(dtype))
        else:
            scale = np.abs(ref).max() if np.size(ref) else 1
            np.testing.assert_allclose(result(launch, got), ref, rtol=rtol, atol=rtol * scale)


def test_dot_refuses_batches_and_misaligned_shapes(launch):
    a = launch.zeros((2, 3, 4), np.float64)
    with pytest.raises(NotImplementedError, match="1-D and 2-D.*CuPy or PyTorch"):
        launch(cp.matmul)(a, a)
    with pytest.raises(ValueError, match=r"shapes \(2, 3\) and \(4,\) not aligned"):
        launch(cp.dot)(launch.zeros((2, 3), np.float64), launch.zeros(4, np.float64))


# ---------------------------------------------------------------------------
# random


@pytest.mark.gpu
def test_random_on_the_device_matches_the_simulated_twin(rng, monkeypatch):
    s = int(rng.integers(0, 2**63))

    def run():
        g = cp.random.default_rng(s)
        return [g.random(1001), g.random((33, 7), dtype=np.float32), g.integers(-9, 99, 555),
                g.standard_normal(1001), g.standard_normal(77, dtype=np.float32),
                g.integers(0, 2**40, 64, dtype=np.uint64)]  # fmt: skip

    device = run()
    assert all(isinstance(d, jitkern.ndarray) for d in device)
    monkeypatch.setattr(settings, "simulate", True)
    simulated = run()
    for k, (d, h) in enumerate(zip(device, simulated)):
        assert d.dtype == h.dtype and d.shape == h.shape
        if k in (3, 4):  # normals: CUDA's and NumPy's log/cos may differ in the last bits
            np.testing.assert_allclose(host(d), h, rtol=1e-6 if h.dtype == np.float32 else 1e-12,
                                       atol=1e-12)  # fmt: skip
        else:
            np.testing.assert_array_equal(host(d), h)


@pytest.mark.gpu
def test_global_random_functions_on_the_device(rng):
    s = int(rng.integers(0, 2**63))
    state = cp.random.get_random_state()
    state.seed(s)
    first = [cp.random.rand(500), cp.random.randn(4, 250), cp.random.randint(3, 9, 1000)]
    state.seed(s)
    again = [cp.random.rand(500), cp.random.randn(4, 250), cp.random.randint(3, 9, 1000)]
    for a, b in zip(first, again):
        np.testing.assert_array_equal(host(a), host(b))
    assert not np.array_equal(host(cp.random.rand(500)), host(first[0]))
    r = host(first[2])
    assert r.min() == 3 and r.max() == 8
    np.testing.assert_array_equal(
        host(first[0]), philox.uniform_host(500, np.float64, s, 0, 0.0, 1.0)
    )


@pytest.mark.gpu
def test_normal_and_uniform_moments_on_the_device():
    z = host(cp.random.normal(2.0, 3.0, size=(1000, 1000), dtype=cp.float32))
    assert z.dtype == np.float32 and abs(z.mean() - 2) < 0.02 and abs(z.std() - 3) < 0.02
    u = host(cp.random.uniform(-1.0, 1.0, size=1_000_001))
    assert u.min() >= -1 and u.max() < 1 and abs(u.mean()) < 0.005
    out = cp.full(4097, np.nan)
    assert cp.random.default_rng().random(out=out) is out
    o = host(out)
    assert np.all((o >= 0) & (o < 1))


@pytest.mark.gpu
def test_stream_null_synchronize_after_a_launch():
    x = cp.random.rand(1 << 20)
    assert cp.cuda.Stream.null.synchronize() is None
    assert 0.45 < float(host(x.mean())) < 0.55
