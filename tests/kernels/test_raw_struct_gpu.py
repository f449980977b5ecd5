"""Structs by value and checked arguments of raw kernels on the GPU, against NumPy. Each test
is a twin whose [sim] item waits for the simulator's C subset to take structs and vector types
(``sim_gap``)."""

import dataclasses

import numpy as np
import pytest

import jitkern
from jitkern import KernelArgumentError

double3 = np.dtype({"names": ["x", "y", "z"], "formats": [np.float64] * 3})
float5x5 = np.dtype({"names": ["m"], "formats": [(np.float32, (5, 5))]})

ADD3 = r"""
extern "C" __global__ void add3(const double3* lhs, double3 rhs, double3* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i].x = lhs[i].x + rhs.x; out[i].y = lhs[i].y + rhs.y; out[i].z = lhs[i].z + rhs.z;
    }
}
"""
MATVEC = r"""
struct float5x5 { float m[25]; };
extern "C" __global__ void matvec(float5x5 a, const float* x, float* y) {
    int r = threadIdx.x;
    if (r < 5) { float s = 0; for (int c = 0; c < 5; ++c) s += a.m[r * 5 + c] * x[c]; y[r] = s; }
}
"""


_NO_STRUCTS = pytest.mark.sim_gap("C structs and vector types (double3) are outside the "
                                  "simulator's C subset")


@dataclasses.dataclass(frozen=True)
class Double3:
    x: float
    y: float
    z: float


@_NO_STRUCTS
@pytest.mark.parametrize("form", ["array", "void", "dataclass"])
def test_double3_by_value_adds_as_numpy(rng, form, launch):
    n = int(rng.integers(1, 200))
    lhs = rng.standard_normal(3 * n)
    rhs = rng.standard_normal(3)
    value = {"array": rhs.view(double3), "void": rhs.view(double3)[0],
             "dataclass": Double3(*rhs.tolist())}[form]
    out = launch.poisoned(3 * n, np.float64)
    k = jitkern.RawKernel(ADD3, "add3")
    launch(k)(((n + 31) // 32,), (32,), (launch.to_device(lhs), value, out, n))
    np.testing.assert_allclose(launch.get(out), (lhs.reshape(n, 3) + rhs).ravel(), rtol=1e-15)


@_NO_STRUCTS
def test_a_float5x5_record_by_value_multiplies_as_numpy(rng, launch):
    a = rng.standard_normal((5, 5)).astype(np.float32)
    x = rng.standard_normal(5).astype(np.float32)
    y = launch.poisoned(5, np.float32)
    k = jitkern.RawKernel(MATVEC, "matvec")
    launch(k)((1,), (32,), (a.reshape(-1).view(float5x5), launch.to_device(x), y))
    np.testing.assert_allclose(launch.get(y), a @ x, rtol=1e-5, atol=1e-5)


@_NO_STRUCTS
def test_a_wrong_dtype_array_is_refused_and_check_args_false_still_launches(rng, launch):
    n = int(rng.integers(1, 200))
    rhs = rng.standard_normal(3)
    lhs32 = launch.to_device(rng.standard_normal(3 * n).astype(np.float32))
    out = launch.poisoned(3 * n, np.float64)
    with pytest.raises(KernelArgumentError, match=r"add3: argument 0 \(lhs\).*of float32"):
        launch(jitkern.RawKernel(ADD3, "add3"))((1,), (32,), (lhs32, rhs.view(double3), out, n))
    assert np.isnan(launch.get(out)).all()
    lhs = rng.standard_normal(3 * n)
    unchecked = jitkern.RawKernel(ADD3, "add3", check_args=False)
    launch(unchecked)(((n + 31) // 32,), (32,), (launch.to_device(lhs), rhs.view(double3), out, n))
    np.testing.assert_allclose(launch.get(out), (lhs.reshape(n, 3) + rhs).ravel(), rtol=1e-15)


@_NO_STRUCTS
def test_a_wrong_field_at_a_later_launch_is_named_and_the_next_launch_is_right(rng, launch):
    n = int(rng.integers(1, 200))
    lhs = rng.standard_normal(3 * n)
    k = jitkern.RawKernel(ADD3, "add3")
    grid, dl = ((n + 31) // 32,), launch.to_device(lhs)
    for _ in range(2):  # the general path, then the generated launcher
        launch(k)(grid, (32,), (dl, Double3(*rng.standard_normal(3).tolist()),
                                launch.zeros(3 * n, np.float64), n))  # fmt: skip
    with pytest.raises(KernelArgumentError, match=r"add3: argument 1 \(rhs\).*field y.*'y' \(str\)"):
        launch(k)(grid, (32,), (dl, Double3(1.0, "y", 2.0), launch.zeros(3 * n, np.float64), n))
    rhs = rng.standard_normal(3)
    out = launch.poisoned(3 * n, np.float64)
    launch(k)(grid, (32,), (dl, Double3(*rhs.tolist()), out, n))
    np.testing.assert_allclose(launch.get(out), (lhs.reshape(n, 3) + rhs).ravel(), rtol=1e-15)
