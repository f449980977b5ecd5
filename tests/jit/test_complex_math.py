"""JIT kernels: math functions of complex numbers that jitkern/complex.cuh defines (the
inverse trigonometric and hyperbolic ones, log10, pow, the classification predicates),
against NumPy, on the GPU and in the simulator."""

import cmath
import math

import numpy as np
import pytest

from jitkern import jit

RTOL = {np.complex64: 1e-5, np.complex128: 1e-12}


@jit.rawkernel()
def _inverse(z, w, out, flags):
    i = jit.grid(1)
    if i < z.size:
        out[6 * i + 0] = math.asin(z[i])
        out[6 * i + 1] = math.acos(z[i])
        out[6 * i + 2] = cmath.atan(z[i])
        out[6 * i + 3] = math.asinh(z[i]) + math.acosh(z[i])
        out[6 * i + 4] = math.atanh(z[i]) + math.log10(z[i])
        out[6 * i + 5] = math.pow(z[i], w[i])
        flags[3 * i + 0] = math.isnan(z[i])
        flags[3 * i + 1] = math.isinf(z[i])
        flags[3 * i + 2] = math.isfinite(z[i])


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_inverse_functions_pow_and_predicates(launch, rng, dtype):
    n = 200
    z = (rng.uniform(-3, 3, n) + 1j * rng.uniform(-3, 3, n)).astype(dtype)
    w = (rng.uniform(-2, 2, n) + 1j * rng.uniform(-2, 2, n)).astype(dtype)
    z[:4] = [complex(np.nan, 1), complex(1, np.inf), complex(-np.inf, 0), 2.5]
    out = launch.poisoned(6 * n, dtype)
    flags = launch.to_device(np.zeros(3 * n, np.bool_))
    launch(_inverse)((n + 63) // 64, 64, (launch.to_device(z), launch.to_device(w), out, flags))
    launch.synchronize()
    z64, w64 = z.astype(np.complex128), w.astype(np.complex128)
    with np.errstate(invalid="ignore"):  # the first four values are NaN and infinities
        expected = [np.arcsin(z64), np.arccos(z64), np.arctan(z64),
                    np.arcsinh(z64) + np.arccosh(z64), np.arctanh(z64) + np.log10(z64), z64**w64]
    got = launch.get(out).reshape(n, 6)
    finite = np.arange(n) >= 4
    for col, want in enumerate(expected):
        np.testing.assert_allclose(got[finite, col], want[finite], rtol=RTOL[dtype],
                                   err_msg=f"column {col}")
    np.testing.assert_array_equal(
        launch.get(flags).reshape(n, 3), np.stack([np.isnan(z), np.isinf(z), np.isfinite(z)], 1))


def test_the_gpu_build_calls_complex_cuh():
    z = np.zeros(4, np.complex64)
    info = _inverse.inspect(z, z, z, np.zeros(4, np.bool_), arch="sm_80")
    assert info.cubin[:4] == b"\x7fELF"
    for fn in ("asin(", "acos(", "atan(", "asinh(", "acosh(", "atanh(", "log10(", "pow(",
               "isnan(", "isinf(", "isfinite("):
        assert fn in info.source, fn
