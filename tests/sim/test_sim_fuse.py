"""Fused functions run on the CPU (``Fused.simulate`` and JITKERN_SIMULATE=1): each kernel of
the plan (an ElementwiseKernel or ReductionKernel) simulates its own C++, the text the GPU
compiles, through the C subset; the functions are tests/kernels/test_fuse.py's, checked
against float64 NumPy references, and every ufunc row of the table against NumPy's loop."""

import importlib.util
import pathlib

import numpy as np
import pytest

from jitkern.config import settings
from jitkern.errors import JitkernTypeError, JitkernValueError
from jitkern.compiler import types as T
from jitkern.compiler.builtins import ufuncs
from jitkern.sim import Simulator
from jitkern.kernels.fuse import ops as _fuse_ops
from jitkern.sim import loops as sim_loops
from jitkern.sim import reduction as sim_reduction
from jitkern.kernels.fuse import fuse

_PATH = pathlib.Path(__file__).resolve().parents[1] / "kernels" / "test_fuse.py"
_SPEC = importlib.util.spec_from_file_location("fuse_functions_for_sim", _PATH)
F = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(F)


def test_spec_examples(rng):
    x, y = F._host((50, 40), np.float32, rng), F._host((50, 40), np.float32, rng)
    got = F.squared_diff.simulate(x, y)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, (x - y) * (x - y))
    got = F.sum_of_products.simulate(x, y)
    ref = np.sum(x.astype(np.float64) * y, axis=-1)
    assert got.dtype == np.float32 and got.shape == (50,)
    np.testing.assert_allclose(got, ref, rtol=0, atol=8e-7 * float(np.abs(x * y).sum(-1).max()))
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    np.testing.assert_allclose(F.magnitude.simulate(xd, yd), np.sqrt(xd * xd + yd * yd) * 0.5)


def test_reductions_with_post_maps_and_second_stages(rng):
    x = F._host((6, 8), np.float64, rng)
    np.testing.assert_allclose(F.norm_plus.simulate(x), np.sqrt(np.sum(x * x) + 10), 1e-15)
    # the block tree adds in another order than NumPy's pairwise sum: an absolute bound
    # from the row's magnitude covers the cancellation in x - sum
    atol = 1e-15 * float(np.abs(x).sum(1).max())
    want = x - x.sum(1, keepdims=True) / 8
    np.testing.assert_allclose(F.centered.simulate(x), want, 1e-15, atol)
    np.testing.assert_allclose(F.demeaned.simulate(x), x - x.mean(1, keepdims=True), 1e-15, atol)
    i8 = F._host((5, 300), np.int8, rng)
    got = F.methods.simulate(i8)
    np.testing.assert_allclose(got, (i8.astype(np.float64) + 1).prod(axis=1), 1e-15)


def test_several_outputs_and_writes_into_arguments(rng):
    x, y = F._host(64, np.float32, rng), F._host(64, np.float32, rng)
    s, p = F.two_outputs.simulate(x, y)
    np.testing.assert_array_equal(s, x + y)
    np.testing.assert_array_equal(p, x * y)
    target = x.copy()
    assert F.add_into.simulate(target, y) is None
    np.testing.assert_array_equal(target, (x + y) * 2)
    grid = np.zeros((4, 64), np.float32)
    F.write_row.simulate(grid, y)
    np.testing.assert_array_equal(grid[1], y * 2)
    np.testing.assert_array_equal(grid[2], y)
    np.testing.assert_array_equal(grid[[0, 3]], 0)


def test_types_follow_numpy2_with_weak_scalars(rng):
    i8 = F._host(100, np.int8, rng)
    got = fuse(lambda x, s: x * s - 1).simulate(i8, 3)
    assert got.dtype == np.int8
    np.testing.assert_array_equal(got, (i8 * np.int8(3) - np.int8(1)))
    h = F._host(100, np.float16, rng)
    got = fuse(lambda x, s: x * s - 1).simulate(h, 2.5)
    assert got.dtype == np.float16
    got = fuse(lambda x, s: x / s).simulate(F._host(100, np.int16, rng), 4)
    assert got.dtype == np.float64


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "all", "any", "nansum"])
def test_reductions(rng, name):
    reduce = getattr(np, name)
    fused = fuse(lambda x, y: reduce(x * y - 1, axis=(0, 2)))
    x = 1 + rng.random((6, 7, 9)) / 2
    y = 1.5 + rng.random((7, 9)) / 2
    got = fused.simulate(x, y)
    np.testing.assert_allclose(got, reduce(x * y - 1, axis=(0, 2)), rtol=1e-12)


def test_jitkern_simulate_runs_the_generated_jit_kernels_in_the_simulator(monkeypatch, rng):
    launched = []
    real = Simulator.__call__

    def spy(self, grid, block, args, *rest, **kwargs):
        launched.append((self._kernel.__name__, grid, block))
        return real(self, grid, block, args, *rest, **kwargs)

    monkeypatch.setattr(Simulator, "__call__", spy)
    x, y = F._host(300, np.float32, rng), F._host(300, np.float32, rng)
    F.squared_diff(x, y)  # host arguments, simulate off: NumPy runs the function
    assert launched == []
    monkeypatch.setattr(settings, "simulate", True)
    x[0] = np.nan
    got = F.squared_diff(x, y)
    assert launched == [("fused_squared_diff", 3, sim_loops.BLOCK)]  # 300 elements
    np.testing.assert_array_equal(got, (x - y) * (x - y))
    # what ran is the ElementwiseKernel's operation, each C++ statement a line of Python
    source = F.squared_diff.simulate.source(x, y)
    kernel = source[source.index("def fused_squared_diff("):].splitlines()
    assert kernel[0] == "def fused_squared_diff(in0, in1, out0, _c_n):"
    assert [line.split("  #")[0].strip() for line in kernel[2:]] == [
        "v0 = (in0[i] - in1[i])", "v1 = (in0[i] - in1[i])", "v2 = (v0 * v1)", "out0[i] = v2"]
    assert kernel[4].endswith("# fused_squared_diff operation line 3")


def test_a_reduction_runs_as_a_block_tree_over_shared_memory_without_races(monkeypatch, rng):
    # the tree, which a sum would skip for NumPy's fold (test_sim_reduction_fold.py)
    monkeypatch.setattr(sim_reduction, "MODE", "tree")
    x = F._host((5, 70), np.float64, rng)
    source = F.norm_plus.simulate.source(x)
    assert "jit.syncthreads()" in source and "jit.shared_memory(numpy.float64" in source
    racecheck = []
    real = Simulator.__call__

    def checked(self, grid, block, args, shared_mem=0, stream=None, racecheck_=False, **kw):
        racecheck.append(self._kernel.__name__)
        kw.pop("racecheck", None)
        return real(self, grid, block, args, shared_mem, stream, True, **kw)

    monkeypatch.setattr(Simulator, "__call__", checked)
    got = F.norm_plus.simulate(x)
    assert racecheck == ["fused_norm_plus"]
    np.testing.assert_allclose(got, np.sqrt(np.sum(x * x) + 10), rtol=1e-14)


def test_zero_size_reductions(rng):
    empty = np.zeros((3, 0), np.float32)
    poisoned = fuse(lambda x: np.sum(x, axis=1) + 1).simulate(empty)
    np.testing.assert_array_equal(poisoned, np.ones(3, np.float32))
    with pytest.raises(JitkernValueError, match="zero-size reduction with no identity"):
        fuse(lambda x: np.max(x, axis=1)).simulate(empty)


# -- every ufunc row of the table, in every loop of it, against NumPy's loop ------------------

_DTYPES = [np.dtype(c) for c in "?bBhHiIqQefdFD"]


def _values(dtype, rng, n):
    if dtype.kind == "b":
        return rng.random(n) < 0.5
    if dtype.kind in "iu":
        lo = 0 if dtype.kind == "u" else -12
        return rng.integers(lo, 13, size=n).astype(dtype)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, -1.5, 1.0]
    real = np.concatenate([special, rng.normal(0, 3, n - len(special))])
    if dtype.kind == "c":
        z = np.empty(n, dtype)
        z.real, z.imag = real, rng.permutation(real)
        return z
    return real.astype(dtype)


def _loops(name):
    """(input dtypes, loop) for each dtype NumPy and the row both take, all inputs alike."""
    row = _fuse_ops.UFUNCS[name]
    out = []
    for dt in _DTYPES:
        try:
            loop = ufuncs.resolve(row, [T.scalar_from_dtype(dt)] * row.nin)
        except JitkernTypeError:
            continue
        out.append((dt, loop))
    return out




def _arguments(name, loops, rng, n):
    row = _fuse_ops.UFUNCS[name]
    args = [_values(dt, rng, n) for dt, _ in loops for _ in range(row.nin)]
    if name == "power":  # NumPy refuses negative integer exponents (see the test below)
        args = [abs(a) if a.dtype.kind == "i" else a for a in args]
    return args


@pytest.mark.parametrize("name", sorted(_fuse_ops.UFUNCS))
def test_every_ufunc_row_simulated_matches_numpys_loop(name, rng):
    row = _fuse_ops.UFUNCS[name]
    loops = _loops(name)
    assert loops, f"numpy.{name}: no loop in kernels"
    args = _arguments(name, loops, rng, 24)
    ufunc = getattr(np, name)

    def every_loop(*xs):
        out = ()
        for k in range(len(loops)):
            result = ufunc(*xs[k * row.nin : (k + 1) * row.nin])
            out += result if isinstance(result, tuple) else (result,)
        return out

    flat = fuse(every_loop).simulate(*args)
    nout = len(row.templates)
    got = [flat[k * nout : (k + 1) * nout] for k in range(len(loops))]
    for k, (dt, loop) in enumerate(loops):
        inputs = args[k * row.nin : (k + 1) * row.nin]
        with np.errstate(all="ignore"):
            want = ufunc(*inputs, signature=loop)
        if name == "reciprocal" and loop[0].kind in "iu":  # the kernel's (CuPy's) 1 / 0
            want = np.where(inputs[0] == 0, 0, want).astype(loop[-1])
        pairs = zip(got[k], want if nout > 1 else (want,))
        for g, w in pairs:
            assert g.dtype == w.dtype, (name, dt)
            if _last_bit_may_differ(name, loop):
                _assert_within_ulps(g, w, 2, f"numpy.{name} on {dt}")
            else:
                np.testing.assert_array_equal(g, w, err_msg=f"numpy.{name} on {dt}")


def _last_bit_may_differ(name, loop) -> bool:
    """Where the row's C++ is complex arithmetic (complex.cuh's, which the simulator computes
    as NumPy's complex scalars do) or C's pow for float_power (NumPy's power): NumPy's array
    loops (SIMD) round some of these differently from its scalars, by an ulp of the value."""
    return loop[0].kind == "c" and name in ("multiply", "square", "reciprocal", "absolute") \
        or name == "float_power"


def _assert_within_ulps(got, want, ulps, message):
    """Equal where either is not finite; elsewhere within ``ulps`` ulps of ``|want|`` (a
    complex number's parts relative to its magnitude: a part may cancel)."""
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite], want[~finite], err_msg=message)
    scale = np.abs(want[finite]).astype(np.float64)
    eps = np.finfo(want.dtype).eps
    error = np.abs(got[finite].astype(np.complex128) - want[finite])
    assert (error <= ulps * eps * scale).all(), (message, got, want)


def test_integer_power_with_a_negative_exponent_is_the_kernels_not_numpys_error():
    base = np.array([2, 1, -1, -1, 0, 7], np.int32)
    exp = np.array([-1, -5, -3, -2, 3, 2], np.int32)
    got = fuse(lambda a, b: a**b).simulate(base, exp)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [0, 1, -1, 1, 0, 49])  # jk::ipow's answers


@fuse()
def _update_then_add_sum(x, y):
    x += y * 2
    return np.sqrt(np.abs(x)) + y.sum()


@fuse()
def _scaled_by_0d(x, s):
    return x * s + 1


def test_zero_d_values_are_read_as_scalars(rng):
    # A full reduction's 0-d result feeding a later elementwise stage, and a 0-d array
    # argument: both are read unindexed by the generated kernels.
    x, y = rng.standard_normal(300), rng.standard_normal(300)
    target = x.copy()
    got = _update_then_add_sum.simulate(target, y)
    np.testing.assert_array_equal(target, x + y * 2)
    ref = np.sqrt(np.abs(x + y * 2)) + np.sum(y)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-13 * (1 + np.abs(y).sum()))
    s = np.array(rng.standard_normal(), np.float32)
    xf = rng.standard_normal(64).astype(np.float32)
    got = _scaled_by_0d.simulate(xf, s)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, xf * s + np.float32(1))
