"""kernel.bind(...) while simulate is on (JITKERN_SIMULATE=1): the bound launch runs in the
simulator, with set_arg checked as a GPU bound launch checks it. CPU only."""

import numpy as np
import pytest

from jitkern import jit
from jitkern.config import settings
from jitkern.errors import JitkernIndexError, KernelArgumentError
from jitkern.jit import rawkernel
from jitkern.sim import BoundSimulation


@rawkernel()
def scale_add(x, y, a, n):
    i = jit.grid(1)
    if i < n:
        y[i] += x[i] * a


def test_a_bound_launch_runs_simulated_and_takes_new_arguments(rng, monkeypatch):
    monkeypatch.setattr(settings, "simulate", True)
    n = int(rng.integers(100, 400))
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    y0 = y.copy()
    a = np.float32(rng.standard_normal())
    bound = scale_add.bind((n + 63) // 64, 64, x, y, a, n)
    assert isinstance(bound, BoundSimulation)
    np.testing.assert_array_equal(y, y0)  # binding launches nothing
    bound()
    bound()  # each call runs the launch again
    once = y0 + x * a
    np.testing.assert_array_equal(y, once + x * a)
    x2 = rng.standard_normal(n).astype(np.float32)
    bound.set_arg(0, x2)
    bound.args[2] = np.float32(2)
    y2 = np.zeros(n, np.float32)
    bound.args[-3] = y2
    bound()
    np.testing.assert_array_equal(y2, x2 * np.float32(2))
    assert len(bound.args) == 4 and bound.args[0] is x2 and list(bound.args)[1] is y2


def test_a_simulated_bound_launch_keeps_its_specialisation(rng, monkeypatch):
    monkeypatch.setattr(settings, "simulate", True)
    x = rng.standard_normal(8).astype(np.float32)
    bound = scale_add.bind(1, 8, x, x.copy(), np.float32(1), 8)
    with pytest.raises(
        KernelArgumentError,
        match=r"argument 0 of scale_add: the bound launch is specialised for .*float32.*, "
        r"got .*float64.*; bind again for other types",
    ):
        bound.set_arg(0, x.astype(np.float64))
    with pytest.raises(
        JitkernIndexError,
        match=r"set_arg: argument index 4 is out of range; scale_add takes 4 argument\(s\)",
    ):
        bound.args[4] = x
    with pytest.raises(KernelArgumentError, match="shared_mem: expected a non-negative int"):
        scale_add.bind(1, 8, x, x, np.float32(1), 8, shared_mem=-1)
