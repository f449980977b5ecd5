"""Bound launches: same results as normal launches; set_arg changes them. Each body runs on
the GPU and in the simulator (the ``launch`` fixture)."""

import numpy as np
import pytest

import jitkern
from jitkern import jit
from jitkern.errors import KernelArgumentError

N = 2500
THREADS = 128
BLOCKS = (N + THREADS - 1) // THREADS

AXPY = r"""
extern "C" __global__ void axpy(const double* x, double* y, double a, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""


@jitkern.rawkernel()
def jit_axpy(x, y, a, n):
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    if i < n:
        y[i] = a * x[i] + y[i]


@jitkern.rawkernel()
def row_sums(m, out):
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    if i < m.shape[0]:
        acc = m[i, 0]  # float64, as m (a 0.0 literal would make a float32 accumulator)
        for j in range(1, m.shape[1]):
            acc += m[i, j]
        out[i] = acc


def _refill(launch, array, host):
    if launch.simulated:
        array[...] = host
    else:
        array.set(host)


@pytest.mark.parametrize("kind", ["raw", "jit"])
def test_bound_launch_matches_a_normal_launch_and_set_arg_changes_it(rng, kind, launch):
    k = jitkern.RawKernel(AXPY, "axpy") if kind == "raw" else jit_axpy
    xh, yh = rng.standard_normal(N), rng.standard_normal(N)
    a = float(rng.standard_normal())
    x, y, y_ref = launch.to_device(xh), launch.to_device(yh), launch.to_device(yh)
    launch(k)((BLOCKS,), (THREADS,), (x, y_ref, a, N))
    b = launch(k).bind((BLOCKS,), (THREADS,), x, y, a, N)
    b()
    np.testing.assert_array_equal(launch.get(y), launch.get(y_ref))
    np.testing.assert_allclose(launch.get(y), a * xh + yh, rtol=1e-14, atol=1e-14)

    a2 = float(rng.standard_normal())
    _refill(launch, y, yh)
    b.set_arg(2, a2)
    b()
    np.testing.assert_allclose(launch.get(y), a2 * xh + yh, rtol=1e-14, atol=1e-14)

    y2h = rng.standard_normal(N)
    y2 = launch.to_device(y2h)
    _refill(launch, y, yh)
    b.args[1] = y2  # swap an array
    b.args[3] = N // 2  # and the count
    b()
    want = y2h.copy()
    want[: N // 2] += a2 * xh[: N // 2]
    np.testing.assert_allclose(launch.get(y2), want, rtol=1e-14, atol=1e-14)
    np.testing.assert_array_equal(launch.get(y), yh)  # the old array is no longer written


def test_jit_bind_keeps_its_specialisation(rng, launch):
    x = launch.to_device(rng.standard_normal(N))
    y = launch.zeros(N, np.float64)
    b = launch(jit_axpy).bind(BLOCKS, THREADS, x, y, 1.0, N)
    with pytest.raises(KernelArgumentError, match=r"argument 1 of jit_axpy.*specialised for"):
        b.set_arg(1, launch.zeros(N, np.float32))
    with pytest.raises(KernelArgumentError, match=r"argument 2 of jit_axpy.*specialised for"):
        b.set_arg(2, 3)  # an int where the kernel was compiled for a float


def test_jit_bind_repacks_the_shape_of_a_swapped_array(rng, launch):
    m1h = rng.standard_normal((300, 7))
    m2h = rng.standard_normal((200, 11))
    m1, m2 = launch.to_device(m1h), launch.to_device(m2h)
    out = launch.full(300, np.nan, np.float64)
    b = launch(row_sums).bind(3, 128, m1, out)
    b()
    np.testing.assert_allclose(launch.get(out), m1h.sum(axis=1), rtol=1e-13, atol=1e-13)
    out.fill(np.nan)
    b.set_arg(0, m2)  # another shape: the derived shape/stride parameters follow
    b()
    got = launch.get(out)
    np.testing.assert_allclose(got[:200], m2h.sum(axis=1), rtol=1e-13, atol=1e-13)
    assert np.isnan(got[200:]).all()
