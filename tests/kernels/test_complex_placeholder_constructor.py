"""``T(re, im)`` where the placeholder ``T`` is bound to a complex type builds that complex
number, on the GPU (thrust's complex constructor) and in the simulator alike.

The simulator read ``T(2, 3)`` as a C cast of the comma expression ``(2, 3)``, that is
``T(3)``, and gave a wrong result without an error; ``complex<double>(2, 3)`` was right."""

import numpy as np
import pytest

import jitkern


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_a_complex_placeholder_constructs_from_two_parts(launch, rng, dtype):
    k = jitkern.ElementwiseKernel("T x", "T y", "y = x * T(2, -3) + T(1) - T(0, 0.5);",
                                  "complex_placeholder")
    n = 1000
    x = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    y = launch.full(n, np.nan, dtype)
    launch(k)(launch.to_device(x), y)
    want = x.astype(np.complex128) * (2 - 3j) + 1 - 0.5j
    rtol = 1e-6 if dtype == np.complex64 else 1e-15
    np.testing.assert_allclose(launch.get(y), want, rtol=rtol, atol=rtol)
