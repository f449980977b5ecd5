"""jit.local_memory kernels (tests/jit/test_local_memory.py's) run by the simulator."""

import importlib.util
import pathlib

import numpy as np
import pytest

from jitkern import jit
from jitkern.errors import KernelAssertionError
from jitkern.jit import rawkernel

_PATH = pathlib.Path(__file__).resolve().parents[1] / "jit" / "test_local_memory.py"
_SPEC = importlib.util.spec_from_file_location("local_memory_kernels_for_sim", _PATH)
gpu = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(gpu)


def test_local_arrays_simulated(rng):
    threads = 256
    x = rng.standard_normal(threads * 16).astype(np.float32)
    y = np.full(threads, np.nan, np.float32)
    gpu.gather_sum.simulate[2, 128](x, y, 40)
    np.testing.assert_array_equal(y, gpu._gather_expected(x, 40))
    w = np.full(threads, np.nan, np.float32)
    gpu.unrolled_window.simulate[2, 128](x[: threads * 4], w)
    q = x[: threads * 4].reshape(-1, 4)
    np.testing.assert_array_equal(w, q[:, 0] * q[:, 3] + q[:, 1] * q[:, 2])  # no FMA here
    v = rng.integers(0, 1000, threads * 24).astype(np.int32)
    out = np.full((threads, 8), -7, np.int32)
    gpu.histogram_per_thread.simulate[2, 128](v, out, 24)
    expected = np.stack([np.bincount(r % 8, minlength=8) for r in v.reshape(threads, 24)])
    np.testing.assert_array_equal(out, expected)


@rawkernel()
def overrun(x, n):
    a = jit.local_memory(np.int32, 4)
    for j in range(n):
        a[j] = j
    x[jit.threadIdx.x] = a[0]


def test_each_thread_has_its_own_array_and_bounds_are_checked():
    x = np.full(8, -7, np.int32)
    overrun.simulate[1, 8](x, 4)
    np.testing.assert_array_equal(x, 0)
    with pytest.raises(KernelAssertionError) as info:
        overrun.simulate[1, 8](x, 5)
    message = str(info.value)
    assert "test_sim_local_memory.py:" in message and "index 4 is out of bounds for a" in message
    assert "shape (4,)" in message and "thread (0, 0, 0)" in message


@rawkernel()
def unwritten(x):
    a = jit.local_memory(np.float32, 2)
    a[0] = 1.0
    x[0] = a[1]


def test_an_unwritten_element_reads_as_nan():
    x = np.zeros(1, np.float32)
    unwritten.simulate[1, 1](x)
    assert np.isnan(x[0])
