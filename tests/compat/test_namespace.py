"""CPU: CuPy's array namespace on jitkern (``import jitkern as cp``): NumPy's names, the error for
a name jitkern lacks, jitkern.random's Philox4x32-10 (against the published known answers, and
its device kernels in the simulator against their NumPy twin), and every routine while
JITKERN_SIMULATE is on (NumPy arrays in and out), checked against NumPy."""

import numpy as np
import pytest

import jitkern
import jitkern as cp
from jitkern.compat import linalg, philox
from jitkern.compat import routines as compat_routines
from jitkern.config import settings

# Random123's kat_vectors, the three "philox4x32 10" lines: counter (4 words), key (2 words),
# expected output (4 words).
PHILOX_KAT = [
    ((0x00000000, 0x00000000, 0x00000000, 0x00000000), (0x00000000, 0x00000000),
     (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF),
     (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]  # fmt: skip

DTYPE_NAMES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
               "uint16", "uint32", "uint64", "complex64", "complex128", "bool_", "dtype"]  # fmt: skip


@pytest.fixture
def simulating(monkeypatch):
    monkeypatch.setattr(settings, "simulate", True)


# ---------------------------------------------------------------------------
# names


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_dtype_names_are_numpys_objects(name):
    assert getattr(cp, name) is getattr(np, name)
    assert name in dir(cp)


def test_constants_are_numpys():
    assert (cp.pi, cp.e, cp.inf) == (np.pi, np.e, np.inf)
    assert np.isnan(cp.nan) and cp.newaxis is None
    assert np.zeros(3)[:, cp.newaxis].shape == (3, 1)


@pytest.mark.parametrize("name", ["fft", "concatenate", "linalg"])
def test_a_missing_name_says_where_to_get_it(name):
    with pytest.raises(AttributeError) as info:
        getattr(cp, name)
    assert isinstance(info.value, jitkern.JitkernAttributeError)
    message = str(info.value)
    assert f"module 'jitkern' has no attribute {name!r}" in message
    assert f"cupy.{name}" in message and f"numpy.{name}" in message
    assert "__cuda_array_interface__" in message


def test_a_missing_dunder_is_a_plain_attribute_error():
    assert not hasattr(cp, "__no_such_dunder__")
    with pytest.raises(jitkern.JitkernAttributeError, match="^module 'jitkern' has no attribute"):
        cp.__no_such_dunder__  # noqa: B018


def test_cuda_stream_null_is_jitkerns_default_stream():
    assert cp.cuda.Stream is jitkern.Stream
    assert cp.cuda.Stream.null.ptr == 0
    with pytest.raises(jitkern.JitkernAttributeError, match="'nope'.*Stream"):
        cp.cuda.nope  # noqa: B018


def test_stream_null_synchronize_while_simulating_without_a_gpu(simulating):
    if jitkern.is_available():
        pytest.skip("a GPU is present: synchronize waits on it")
    assert cp.cuda.Stream.null.synchronize() is None
    assert cp.synchronize() is None


# ---------------------------------------------------------------------------
# Philox4x32-10


@pytest.mark.parametrize("ctr, key, expected", PHILOX_KAT)
def test_philox_host_matches_random123_known_answers(ctr, key, expected):
    got = philox.philox_host(*ctr, *key)
    assert [int(w) for w in got] == list(expected)


@pytest.mark.parametrize("ctr, key, expected", PHILOX_KAT)
def test_philox_device_kernel_matches_random123_known_answers(ctr, key, expected):
    out = np.full(4, 0xDEADBEEF, np.uint32)
    offset = ctr[0] | (ctr[1] << 32)
    philox.words_kernel.simulate[1, 32](
        out, np.int64(1), np.uint32(key[0]), np.uint32(key[1]), np.uint64(offset),
        np.uint32(ctr[2]), np.uint32(ctr[3]),
    )  # fmt: skip
    assert out.tolist() == list(expected)


@pytest.mark.parametrize(
    "kind, dtype, a, b",
    [
        ("uniform", np.float32, 0.0, 1.0),
        ("uniform", np.float64, -3.0, 7.5),
        ("normal", np.float32, 0.5, 2.0),
        ("normal", np.float64, 0.0, 1.0),
        ("integers", np.int64, -50, 101),
        ("integers", np.uint8, 0, 256),
        ("integers", np.int32, -(2**31), 2**32),
    ],
)
def test_device_draws_match_their_numpy_twin(rng, kind, dtype, a, b):
    """The JIT kernels (run in the simulator) and the NumPy twin used while simulating give
    the same values; offsets straddle a 32-bit carry of the counter."""
    n = int(rng.integers(1, 70))
    seed = int(rng.integers(0, 2**63))
    offset = int(2**32 - rng.integers(1, 20))
    out = np.full(n, 99, dtype)
    nblocks = philox.blocks_for(kind, dtype, n)
    philox.KERNELS[kind].simulate[philox.launch_shape(nblocks)](
        *philox.launch_args(kind, out, n, seed, offset, a, b)
    )
    twin = {"uniform": philox.uniform_host, "normal": philox.normal_host,
            "integers": philox.integers_host}[kind]  # fmt: skip
    expected = twin(n, dtype, seed, offset, a, b)
    assert expected.dtype == dtype
    np.testing.assert_array_equal(out, expected)


def test_words_kernel_is_block_after_block(rng):
    seed, offset, nblocks = int(rng.integers(0, 2**63)), int(rng.integers(0, 2**40)), 5
    out = np.zeros(4 * nblocks, np.uint32)
    philox.words_kernel.simulate[1, 64](
        out, np.int64(nblocks), np.uint32(seed & 0xFFFFFFFF), np.uint32(seed >> 32),
        np.uint64(offset), np.uint32(0), np.uint32(0),
    )  # fmt: skip
    for b in range(nblocks):
        c = offset + b
        ref = philox.philox_host(c & 0xFFFFFFFF, c >> 32, 0, 0, seed & 0xFFFFFFFF, seed >> 32)
        assert out[4 * b : 4 * b + 4].tolist() == [int(w) for w in ref]


# ---------------------------------------------------------------------------
# jitkern.random while simulating (NumPy arrays, the device kernels' numbers)


def test_random_is_reproducible_for_a_seed_and_advances(simulating, rng):
    s = int(rng.integers(0, 2**63))
    state = cp.random.get_random_state()
    state.seed(s)
    first, second = cp.random.rand(3, 4), cp.random.rand(3, 4)
    state.seed(s)
    again = cp.random.rand(3, 4)
    assert isinstance(first, np.ndarray) and first.shape == (3, 4) and first.dtype == np.float64
    np.testing.assert_array_equal(again, first)
    assert not np.array_equal(first, second)
    # the first draw is block 0.. of the stream: the twin computes it directly
    np.testing.assert_array_equal(first.ravel(), philox.uniform_host(12, np.float64, s, 0, 0, 1))


def test_module_seed_restarts_the_global_stream(simulating, rng):
    s = int(rng.integers(0, 2**63))
    cp.random.seed(s)
    a = cp.random.randn(50)
    cp.random.seed(s)
    np.testing.assert_array_equal(cp.random.randn(50), a)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_uniform_values_and_moments(simulating, rng, dtype):
    g = cp.random.default_rng(int(rng.integers(0, 2**63)))
    x = g.random(200_000, dtype=dtype)
    assert x.dtype == dtype and x.min() >= 0 and x.max() < 1
    assert abs(x.mean() - 0.5) < 0.01 and abs(x.var() - 1 / 12) < 0.005
    u = cp.random.uniform(-2.0, 3.0, size=(400, 500), dtype=dtype)
    assert u.shape == (400, 500) and u.min() >= -2 and u.max() < 3
    assert abs(u.mean() - 0.5) < 0.05


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_normal_moments(simulating, rng, dtype):
    g = cp.random.default_rng(int(rng.integers(0, 2**63)))
    z = g.standard_normal(size=(100_000,), dtype=dtype)
    assert z.dtype == dtype and abs(z.mean()) < 0.02 and abs(z.std() - 1) < 0.02
    y = cp.random.normal(3.0, 0.5, size=100_000, dtype=dtype)
    assert abs(y.mean() - 3) < 0.01 and abs(y.std() - 0.5) < 0.01
    w = g.normal(-1.0, 2.0, size=(300, 300))
    assert w.dtype == np.float64 and abs(w.mean() + 1) < 0.05 and abs(w.std() - 2) < 0.05


def test_integers_cover_the_range(simulating, rng):
    g = cp.random.default_rng(int(rng.integers(0, 2**63)))
    v = g.integers(-3, 4, size=20_000)
    assert v.dtype == np.int64 and set(np.unique(v).tolist()) == set(range(-3, 4))
    e = g.integers(5, size=1000, endpoint=True, dtype=np.uint8)
    assert e.dtype == np.uint8 and set(np.unique(e).tolist()) == set(range(6))
    r = cp.random.randint(10, size=(30, 40))
    assert r.shape == (30, 40) and r.min() >= 0 and r.max() <= 9 and len(np.unique(r)) == 10


def test_random_shapes_and_scalars(simulating):
    assert cp.random.random().shape == ()
    assert cp.random.random_sample((2, 3)).shape == (2, 3)
    assert cp.random.standard_normal(np.uint32(7)).shape == (7,)
    assert cp.random.rand().shape == ()
    out = np.full(6, np.nan)
    assert cp.random.default_rng().random(out=out) is out and np.all((out >= 0) & (out < 1))


def test_random_refuses_what_cupy_refuses(simulating):
    with pytest.raises(TypeError, match="rand.*float32 or float64.*int32"):
        cp.random.random_sample(3, dtype=np.int32)
    with pytest.raises(ValueError, match="low >= high"):
        cp.random.randint(5, 5)
    with pytest.raises(ValueError, match="out of bounds for uint8"):
        cp.random.default_rng().integers(0, 300, dtype=np.uint8)
    with pytest.raises(ValueError, match="scale must be non-negative"):
        cp.random.normal(0, -1, size=3)
    with pytest.raises(ValueError, match="negative dimensions"):
        cp.random.rand(-1)
    with pytest.raises(TypeError, match="integer type"):
        cp.random.randint(0, 3, dtype=np.float32)


# ---------------------------------------------------------------------------
# the namespace while simulating: NumPy arrays, NumPy's results


def test_constructors_make_numpy_arrays_while_simulating(simulating):
    x = cp.arange(10, dtype=np.float32).reshape(2, 5)
    assert type(x) is np.ndarray and x.dtype == np.float32
    for made in (cp.empty((2, 3)), cp.zeros(4, cp.int32), cp.ones((2, 2)), cp.full(3, 7),
                 cp.asarray([1, 2]), cp.array([1.5]), cp.zeros_like(x), cp.empty_like(x)):
        assert type(made) is np.ndarray
    np.testing.assert_array_equal(cp.zeros(4, cp.int32), np.zeros(4, np.int32))


def test_routines_follow_numpy_while_simulating(simulating, rng):
    a = rng.standard_normal((6, 7)).astype(np.float32)
    b = a + rng.standard_normal((6, 7)).astype(np.float32) * 1e-7
    assert cp.allclose(a, b) == np.allclose(a, b)
    assert bool(cp.allclose(a, a + 1)) is False
    np.testing.assert_array_equal(cp.isclose(a, b), np.isclose(a, b))
    assert cp.array_equal(a, a.copy()) and not cp.array_equal(a, a[:3])
    np.testing.assert_allclose(cp.sqrt(np.abs(a)), np.sqrt(np.abs(a)), rtol=1e-6)
    np.testing.assert_array_equal(cp.abs(a), np.abs(a))
    for name in ("sum", "max", "min", "mean"):
        np.testing.assert_allclose(getattr(cp, name)(a, axis=1), getattr(np, name)(a, axis=1),
                                   rtol=1e-6)  # fmt: skip
    np.testing.assert_array_equal(cp.linspace(0, 2 * cp.pi, 9, dtype=cp.float32),
                                  np.linspace(0, 2 * np.pi, 9, dtype=np.float32))  # fmt: skip
    assert cp.reshape(a, (7, 6)).shape == (7, 6) and cp.transpose(a).shape == (7, 6)
    assert cp.get_array_module(a) is np


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_dot_and_matmul_follow_numpy_while_simulating(simulating, rng, dtype):
    a = rng.standard_normal((5, 4)).astype(dtype)
    b = rng.standard_normal((4, 3)).astype(dtype)
    v = rng.standard_normal(4).astype(dtype)
    rtol = 1e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(cp.dot(a, b), a @ b, rtol=rtol)
    np.testing.assert_allclose(cp.matmul(a, v), a @ v, rtol=rtol)
    np.testing.assert_allclose(cp.dot(v, v), v @ v, rtol=rtol)


# ---------------------------------------------------------------------------
# the device kernels behind the routines, in the simulator


@pytest.mark.parametrize(
    "dtype, rtol",
    [(np.float16, 2e-3), (np.float32, 1e-5), (np.float64, 1e-13), (np.complex64, 1e-5),
     (np.complex128, 1e-13), (np.int32, 0)],
)  # fmt: skip
def test_tiled_matmul_kernel_matches_numpy(rng, dtype, rtol):
    m, k, n = (int(v) for v in rng.integers(1, 40, 3))
    scale = 3 if np.dtype(dtype).kind in "iu" else 1
    a = (rng.standard_normal((m, k)) * scale).astype(dtype)
    b = (rng.standard_normal((k, n)) * scale).astype(dtype)
    if np.dtype(dtype).kind == "c":
        a = (a + 1j * rng.standard_normal((m, k))).astype(dtype)
        b = (b + 1j * rng.standard_normal((k, n))).astype(dtype)
    c = np.full((m, n), 77, dtype)
    grid = (-(-n // linalg.TILE), -(-m // linalg.TILE))
    linalg.kernel_for(dtype).simulate[grid, (linalg.TILE, linalg.TILE)](a, b, c)
    wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    ref = a.astype(wide) @ b.astype(wide)
    if rtol == 0:
        np.testing.assert_array_equal(c, ref.astype(dtype))
    else:
        np.testing.assert_allclose(c, ref, rtol=rtol, atol=rtol * np.abs(ref).max())


def test_allclose_kernels_match_numpy(rng):
    a = rng.standard_normal(300)
    b = a * (1 + rng.standard_normal(300) * 1e-6)
    a[::7], b[::7] = np.nan, np.nan
    a[5], b[5] = np.inf, np.inf
    for equal_nan in (False, True):
        fused = compat_routines._ALLCLOSE[equal_nan]
        got = fused.simulate(a, b, 1e-5, 1e-8)
        assert bool(got) == np.allclose(a, b, equal_nan=equal_nan)
        close = compat_routines._ISCLOSE[equal_nan].simulate(a, b, 1e-5, 1e-8)
        np.testing.assert_array_equal(close, np.isclose(a, b, equal_nan=equal_nan))
    ints = rng.integers(-5, 5, 50)
    assert bool(compat_routines._ALLCLOSE[False].simulate(ints, ints + 1, 1e-5, 0.5)) is False
    assert bool(compat_routines._ALLCLOSE[False].simulate(ints, ints * 1.0, 1e-5, 1e-8))
