"""Fused functions run on the CPU (``Fused.simulate`` and JITKERN_SIMULATE=1): the traced
graph, the fused kernels' typed operations, evaluated with NumPy; the functions are
tests/kernels/test_fuse.py's, checked against float64 NumPy references."""

import importlib.util
import pathlib

import numpy as np
import pytest

from jitkern.config import settings
from jitkern.kernels import _fuse_simulate
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
    np.testing.assert_allclose(F.centered.simulate(x), x - x.sum(1, keepdims=True) / 8, 1e-15)
    np.testing.assert_allclose(F.demeaned.simulate(x), x - x.mean(1, keepdims=True), 1e-15)
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


def test_jitkern_simulate_runs_fused_functions_through_the_graph(monkeypatch, rng):
    calls = []
    real = _fuse_simulate.evaluate
    monkeypatch.setattr(_fuse_simulate, "evaluate", lambda *a: calls.append(1) or real(*a))
    x, y = F._host(32, np.float32, rng), F._host(32, np.float32, rng)
    F.squared_diff(x, y)  # host arguments, simulate off: NumPy runs the function
    assert calls == []
    monkeypatch.setattr(settings, "simulate", True)
    got = F.squared_diff(x, y)
    assert calls == [1]
    np.testing.assert_array_equal(got, (x - y) * (x - y))
