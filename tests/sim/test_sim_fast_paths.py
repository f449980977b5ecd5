"""The simulator's fast paths for string kernels at real sizes (issue 26): complex arithmetic
and multi-statement bodies on the vectorised path, and a ReductionKernel whose reduce_expr
NumPy folds (``simulate.last_path == "numpy"``) against one that runs the block tree.
Each checked against NumPy float64 (or exact) references, outputs poisoned first. The big
calls skip the suite's differential rerun per thread (tests/conftest.py), which a small
call of the same kernel keeps."""

import numpy as np
import pytest

import jitkern
from jitkern import ElementwiseKernel, ReductionKernel, fuse
from jitkern.sim import reduction as sim_reduction
from jitkern.sim import vector

pytest.importorskip("pycparser")

N = 200_000


@pytest.fixture
def big(monkeypatch):
    """Big calls: the vectorised path alone (the per-thread rerun would take seconds)."""
    monkeypatch.setattr(vector, "DIFFERENTIAL", False)


def _complex(rng, n, dtype):
    return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)


COMPLEX_BODY = "c = a * b * s + exp(a) - abs(a) * conj(b) + a / (b + 2.0)"


def _complex_reference(a, b, s):
    a, b = a.astype(np.complex128), b.astype(np.complex128)
    return a * b * s + np.exp(a) - np.abs(a) * np.conj(b) + a / (b + 2)


@pytest.mark.parametrize("dtype, rtol", [(np.complex128, 1e-12), (np.complex64, 2e-5)])
def test_a_complex_elementwise_kernel_runs_vectorised(big, rng, dtype, rtol):
    k = ElementwiseKernel("T a, T b, float32 s", "T c", COMPLEX_BODY, "complex_mix")
    a, b, s = _complex(rng, N, dtype), _complex(rng, N, dtype), np.float32(rng.random() + 0.5)
    c = np.full(N, np.nan, dtype)
    k.simulate(a, b, s, c)
    assert k.simulate.last_path == "vector"
    want = _complex_reference(a, b, np.float64(s))
    np.testing.assert_allclose(c, want, rtol=rtol, atol=rtol * np.abs(want).max())


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_products_and_magnitudes_match_the_per_thread_path_bit_for_bit(rng, dtype):
    # the suite's differential check compares both paths' bytes (tests/conftest.py);
    # zeros, subnormals and large parts, where a fused product or another hypot would differ
    k = ElementwiseKernel("T a, T b, float32 s", "T c", COMPLEX_BODY, "complex_mix_small")
    a, b = _complex(rng, 4096, dtype), _complex(rng, 4096, dtype)
    tiny = np.finfo(np.dtype(dtype).char.lower()).tiny / 4  # subnormal
    for z, scale in ((a, 1e15), (b, 1e-15)):
        z[rng.integers(0, 4096, 200)] *= scale
        z.real[rng.integers(0, 4096, 100)] = 0.0
        z.imag[rng.integers(0, 4096, 100)] = -0.0
        z.imag[rng.integers(0, 4096, 100)] = tiny
    c = np.full(4096, np.nan, dtype)
    k.simulate(a, b, np.float32(1.5), c)
    assert k.simulate.last_path == "vector"
    want = _complex_reference(a, b, 1.5)
    finite = np.isfinite(want)
    assert finite.mean() > 0.9
    np.testing.assert_allclose(c[finite], want[finite], rtol=1e-4, atol=1e-4 * np.abs(want[finite]).max())


MULTI = """
double t = x * y;
if (t > 0.25) { t = t - 1.0; } else { t = t * 2.0; }
for (int k = 0; k < 3; k++) { t = t * 0.5 + x; }
z = sqrt(fabs(t)) + (double)(n / d) + (double)(n % d);
"""


def _multi_reference(x, y, n, d):
    t = x * y
    t = np.where(t > 0.25, t - 1.0, t * 2.0)
    for _ in range(3):
        t = t * 0.5 + x
    # C's integer division truncates; its remainder has the dividend's sign
    return np.sqrt(np.abs(t)) + np.trunc(n / d) + np.fmod(n, d)


def test_a_multi_statement_elementwise_kernel_with_c_integer_division(big, rng):
    k = ElementwiseKernel("float64 x, float64 y, int32 n, int32 d", "float64 z", MULTI, "multi")
    x, y = rng.random(N), rng.random(N)
    n = rng.integers(-1000, 1000, N, dtype=np.int32)
    d = rng.integers(1, 30, N, dtype=np.int32) * rng.choice(np.array([-1, 1], np.int32), N)
    z = np.full(N, np.nan)
    k.simulate(x, y, n, d, z)
    assert k.simulate.last_path == "vector"
    np.testing.assert_allclose(z, _multi_reference(x, y, n, d), rtol=1e-13)


def test_a_fused_function_keeps_pythons_floor_division_and_modulo(big, rng):
    @fuse()
    def floor_mod(n, d, x):
        return (n // d) * 1000 + n % d + x

    n = rng.integers(-10**6, 10**6, N, dtype=np.int64)
    d = rng.integers(1, 50, N, dtype=np.int64) * rng.choice(np.array([-1, 1]), N)
    x = rng.integers(-5, 5, N, dtype=np.int64)
    got = floor_mod.simulate(n, d, x)
    # Python's: the quotient rounds toward -inf, the remainder has the divisor's sign
    np.testing.assert_array_equal(got, np.floor_divide(n, d) * 1000 + np.mod(n, d) + x)


def test_elementwise_and_reduction_on_the_simulated_device(big, rng):
    k = ElementwiseKernel("complex128 a, float64 s", "complex128 c", "c = a * a * s + exp(a)",
                          "device_complex")
    norm = ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "device_l2")
    a, x = _complex(rng, N, np.complex128), rng.standard_normal((4, N // 4))
    with jitkern.simulated_device():
        got = k(jitkern.asarray(a), 1.5).get()
        l2 = norm(jitkern.asarray(x), axis=1).get()
    np.testing.assert_allclose(got, a * a * 1.5 + np.exp(a), rtol=1e-13)
    np.testing.assert_allclose(l2, np.sqrt((x * x).sum(axis=1)), rtol=1e-12)
    assert norm.simulate.last_path == "numpy"


# -- ReductionKernel: NumPy's fold where reduce_expr is one, the block tree otherwise ---------

# (reduce_expr, identity, NumPy's reduction of the mapped values)
FOLDS = [
    ("a + b", "0", np.sum),
    ("a * b", "1", np.prod),
    ("min(a, b)", "", np.min),
    ("max(a, b)", "3", lambda v, axis: np.maximum(np.max(v, axis=axis), 3)),
    ("a | b", "0", np.bitwise_or.reduce),
    ("a ^ b", "", np.bitwise_xor.reduce),
    ("a < b ? a : b", "", np.min),
]


@pytest.mark.parametrize("expr, identity, reference", FOLDS, ids=[f[0] for f in FOLDS])
@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.int64])
def test_integer_folds_are_exact(big, rng, expr, identity, reference, dtype):
    r = ReductionKernel("T x", "T y", "x", expr, "y = a", identity, "fold_int")
    info = np.iinfo(dtype)
    x = rng.integers(max(info.min, -(2**20)), min(info.max, 2**20), (6, 20_000), dtype=dtype)
    x[0] = rng.integers(0, 3, 20_000, dtype=dtype)  # below max's identity, 3
    if expr == "a * b":
        x = rng.choice(np.array([-1, 1, 1, 3], dtype=dtype) if info.min else
                       np.array([1, 1, 3, 5], dtype=dtype), (6, 20_000))
    y = np.full(6, 77, dtype)  # poisoned
    r.simulate(x, axis=1, out=y)
    assert r.simulate.last_path == "numpy"
    # the reduce type's wrap-around, as C's (and NumPy's reduce in that dtype)
    np.testing.assert_array_equal(y, reference(x, axis=1).astype(dtype))


def test_a_float32_norm_and_an_fmin_fold_against_numpy(big, rng):
    x = rng.standard_normal((3, 5, 40_000)).astype(np.float32)
    total = ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "fold_norm")
    y = np.full((3, 5), np.nan, np.float32)
    total.simulate(x, axis=2, out=y)
    assert total.simulate.last_path == "numpy"
    want = np.sqrt((x.astype(np.float64) ** 2).sum(axis=2))
    np.testing.assert_allclose(y, want, rtol=2e-6)
    smallest = ReductionKernel("T x", "T y", "x", "fmin(a, b)", "y = a", "", "fold_fmin")
    x64 = rng.standard_normal((8, 25_000))
    x64[rng.integers(0, 8, 50), rng.integers(0, 25_000, 50)] = np.nan  # fmin skips NaN
    np.testing.assert_array_equal(smallest.simulate(x64, axis=(0, 1)), np.nanmin(x64))
    assert smallest.simulate.last_path == "numpy"


def test_complex_and_bool_folds_with_indices_and_post_map(big, rng):
    z = _complex(rng, (4, 50_000), np.complex128)
    weighted = ReductionKernel("T z", "T y", "z * (double)_J", "a + b", "y = conj(a) * 2.0", "0",
                               "fold_weighted")
    got = weighted.simulate(z, axis=1)
    assert weighted.simulate.last_path == "numpy"
    want = np.conj((z * np.arange(50_000)).sum(axis=1)) * 2
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-9 * np.abs(want).max())
    b = rng.random((7, 30_000)) < 0.9999
    every = ReductionKernel("bool x", "bool y", "x", "a && b", "y = a", "true", "fold_all")
    anyone = ReductionKernel("bool x", "bool y", "!x", "a || b", "y = a", "", "fold_any")
    np.testing.assert_array_equal(every.simulate(b, axis=1), b.all(axis=1))
    np.testing.assert_array_equal(anyone.simulate(b, axis=1), (~b).any(axis=1))
    assert anyone.simulate.last_path == "numpy"


def test_a_zero_length_fold_gives_the_identity_through_post_map(rng):
    r = ReductionKernel("T x", "T y", "x", "a + b", "y = a + 1", "0", "fold_empty")
    y = np.full(3, np.nan, np.float32)
    r.simulate(np.zeros((3, 0), np.float32), axis=1, out=y)
    np.testing.assert_array_equal(y, np.ones(3, np.float32))


def test_the_fold_and_the_block_tree_agree_on_integers(big, rng, monkeypatch):
    r = ReductionKernel("T x", "int64 y", "x * 3 - 1", "a + b", "y = a", "0", "fold_vs_tree")
    x = rng.integers(-(2**40), 2**40, (16, 4000), dtype=np.int64)
    fold = r.simulate(x, axis=0)
    assert r.simulate.last_path == "numpy"
    monkeypatch.setattr(sim_reduction, "MODE", "tree")
    tree = r.simulate(x, axis=0)
    assert r.simulate.last_path == "tree"
    np.testing.assert_array_equal(fold, tree)
    np.testing.assert_array_equal(fold, (x * 3 - 1).sum(axis=0))


@pytest.mark.parametrize("expr", [
    "fabs(a) > fabs(b) ? a : b",  # not a ufunc's fold: the largest magnitude
    "a > b ? a : b",  # a float's pick: NaN and signed zeros make the order matter
])
def test_what_numpy_does_not_fold_runs_the_block_tree(big, rng, expr):
    r = ReductionKernel("T x", "T y", "x", expr, "y = a", "", "tree_only")
    x = rng.standard_normal((5, 3000))
    y = np.full(5, np.nan)
    r.simulate(x, axis=1, out=y)
    assert r.simulate.last_path == "tree"
    pick = np.abs(x) if "fabs" in expr else x
    np.testing.assert_array_equal(y, x[np.arange(5), pick.argmax(axis=1)])
