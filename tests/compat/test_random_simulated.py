"""``jitkern.random`` while simulating (issue 26 section 4): the draws come from the NumPy twin
of the Philox kernels, chunk by chunk and on several threads, and are the simulated
kernel's numbers bit for bit, on a simulated device and with host arrays; the twin is much
faster than running the kernel in the simulator."""

import time

import numpy as np
import pytest

import jitkern
from jitkern.compat import philox
from jitkern.config import settings


def simulated_kernel(kind, n, dtype, seed, offset, a, b):
    """What the Philox kernel computes, run in the simulator (the reference)."""
    out = np.full(n, 7, dtype)
    nblocks = philox.blocks_for(kind, dtype, n)
    philox.KERNELS[kind].simulate[philox.launch_shape(nblocks)](
        *philox.launch_args(kind, out, n, seed, offset, a, b))
    return out


TWINS = {"uniform": philox.uniform_host, "normal": philox.normal_host,
         "integers": philox.integers_host}
DRAWS = [("uniform", np.float32, 0.0, 1.0), ("uniform", np.float64, -2.5, 4.0),
         ("normal", np.float32, 0.25, 3.0), ("normal", np.float64, 0.0, 1.0),
         ("integers", np.int16, -300, 1000), ("integers", np.uint64, 0, 2**64 - 1)]


@pytest.mark.parametrize("kind, dtype, a, b", DRAWS)
def test_the_chunked_threaded_twin_is_the_simulated_kernel_bit_for_bit(kind, dtype, a, b, rng,
                                                                       monkeypatch):
    monkeypatch.setattr(philox, "CHUNK", int(rng.integers(1, 5)))  # many chunks, several threads
    monkeypatch.setattr(philox, "MAX_THREADS", 4)
    n = int(rng.integers(40, 90))
    seed = int(rng.integers(0, 2**64, dtype=np.uint64))
    offset = int(2**32 - rng.integers(1, 30))  # the counter's high word changes inside a draw
    want = simulated_kernel(kind, n, dtype, seed, offset, a, b)
    got = TWINS[kind](n, dtype, seed, offset, a, b)
    assert got.dtype == dtype and got.tobytes() == want.tobytes()
    into = np.full(n, 9, dtype)
    assert TWINS[kind](n, dtype, seed, offset, a, b, into) is into
    assert into.tobytes() == want.tobytes()


@pytest.mark.parametrize("where", ["simulated device", "host arrays"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_jitkern_random_gives_the_kernels_stream_while_simulating(where, dtype, rng,
                                                                   monkeypatch):
    monkeypatch.setattr(philox, "CHUNK", 16)
    seed = int(rng.integers(0, 2**63))
    n1, n2 = int(rng.integers(100, 300)), int(rng.integers(100, 300))
    if where == "host arrays":
        monkeypatch.setattr(settings, "simulate", True)
        first, second = draw_twice(seed, n1, n2, dtype)
    else:
        with jitkern.simulated_device():
            first, second = draw_twice(seed, n1, n2, dtype)
            assert isinstance(first, jitkern.ndarray)
            first, second = first.get(), second.get()
    assert first.shape == (n1,) and first.dtype == dtype
    assert first.tobytes() == simulated_kernel("normal", n1, dtype, seed, 0, 0.0, 1.0).tobytes()
    offset = philox.blocks_for("normal", dtype, n1)  # the second draw starts after the first
    want = simulated_kernel("normal", n2, dtype, seed, offset, 1.5, 0.5)
    assert second.tobytes() == want.tobytes()


def draw_twice(seed, n1, n2, dtype):
    state = jitkern.random.RandomState(seed)
    return state.standard_normal(n1, dtype), state.normal(1.5, 0.5, n2, dtype)


def test_a_simulated_draw_does_not_run_the_kernel_in_the_simulator(rng):
    """The twin, not the simulated kernel: many times faster for the same values (before
    issue 26 the simulated device ran the kernel)."""
    n, seed = 4096, int(rng.integers(0, 2**63))

    def best(run):
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            run()
            times.append(time.perf_counter() - t0)
        return min(times)

    kernel = best(lambda: simulated_kernel("normal", n, np.float64, seed, 0, 0.0, 1.0))
    with jitkern.simulated_device():
        state = jitkern.random.RandomState(seed)
        twin = best(lambda: state.randn(n))
    assert twin * 3 < kernel, (twin, kernel)
