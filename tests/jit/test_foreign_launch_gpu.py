"""JIT kernels launched on the GPU with arrays of other libraries read through a protocol
only: CuPy arrays behind a bare ``__cuda_array_interface__`` object (class- and
instance-level), a DLPack-only object, and JAX arrays. Outputs are poisoned first and
compared with NumPy; repeated launches (the generated launcher) and a changed layout (the
general path, another specialisation) both count."""

import os

import numpy as np
import pytest

import jitkern
from jitkern import jit

pytestmark = pytest.mark.gpu


@jitkern.rawkernel()
def axpy(x, y, out, a):
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    if i < out.shape[0]:
        out[i] = a * x[i] + y[i]


@jitkern.rawkernel()
def axpy_n(x, y, out, a, n):
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    if i < n:
        out[i] = a * x[i] + y[i]


class ClassCAI:
    def __init__(self, base):
        self._base = base

    @property
    def __cuda_array_interface__(self):
        return self._base.__cuda_array_interface__


class InstanceCAI:
    def __init__(self, base):
        self._base = base
        self.__cuda_array_interface__ = base.__cuda_array_interface__


class DLPackOnly:
    def __init__(self, base):
        self._base = base

    def __dlpack__(self, **kwargs):
        return self._base.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._base.__dlpack_device__()


def _check(kernel, wrap, cupy, rng, dtype, n, strided_x=False, launches=4):
    for _ in range(launches):  # the general path, then the generated launcher
        xs = rng.standard_normal(2 * n if strided_x else n).astype(dtype)
        ys = rng.standard_normal(n).astype(dtype)
        a = dtype(rng.standard_normal())
        dx, dy = cupy.asarray(xs), cupy.asarray(ys)
        if strided_x:
            dx, xs = dx[::2], xs[::2]
        out = cupy.full(n, np.nan, dtype=dtype)
        args = (wrap(dx), wrap(dy), wrap(out), a) + ((n,) if kernel is axpy_n else ())
        kernel[(n + 127) // 128, 128](*args)
        cupy.cuda.runtime.deviceSynchronize()
        expected = a.astype(np.float64) * xs.astype(np.float64) + ys
        rtol = 1e-12 if dtype is np.float64 else 1e-5
        np.testing.assert_allclose(cupy.asnumpy(out), expected, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("wrap", [ClassCAI, InstanceCAI, DLPackOnly], ids=lambda w: w.__name__)
@pytest.mark.parametrize("kernel", [axpy, axpy_n], ids=lambda k: k.__name__)
def test_protocol_only_wrappers_of_cupy_arrays(rng, wrap, kernel):
    cupy = pytest.importorskip("cupy")
    n = int(rng.integers(1000, 5000))
    _check(kernel, wrap, cupy, rng, np.float32, n)
    _check(kernel, wrap, cupy, rng, np.float32, n, strided_x=True)  # another specialisation
    _check(kernel, wrap, cupy, rng, np.float64, n + 7)  # another dtype
    _check(kernel, wrap, cupy, rng, np.float32, n + 3)  # the first one again


def test_jax_arrays(rng):
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    jax = pytest.importorskip("jax")
    cupy = pytest.importorskip("cupy")
    try:
        gpu = jax.devices("gpu")[0]
    except RuntimeError:
        pytest.skip("JAX has no GPU backend here")
    n = int(rng.integers(1000, 5000))
    dtype = np.float32  # (float64 would need jax_enable_x64, a process-wide switch)
    for _ in range(4):  # the general path, then the generated launcher
        xs = rng.standard_normal(n).astype(dtype)
        ys = rng.standard_normal(n).astype(dtype)
        a = dtype(rng.standard_normal())
        x, y = jax.device_put(xs, gpu), jax.device_put(ys, gpu)
        out = cupy.full(n, np.nan, dtype=dtype)  # JAX arrays are immutable: CuPy output
        x.block_until_ready(), y.block_until_ready()
        axpy[(n + 127) // 128, 128](x, y, out, a)
        cupy.cuda.runtime.deviceSynchronize()
        rtol = 1e-12 if dtype is np.float64 else 1e-5
        np.testing.assert_allclose(cupy.asnumpy(out), a.astype(np.float64) * xs + ys,
                                   rtol=rtol, atol=rtol)
