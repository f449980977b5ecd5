"""CuPy's documented examples run on jitkern, with jitkern arrays and, where CuPy is
installed, with CuPy arrays in and out, checked against NumPy on fresh random inputs; each
body also runs in the CPU simulator on NumPy arrays (the ``launch`` fixture)."""

import types

import compat_examples as ex
import numpy as np
import pytest

import jitkern
import jitkern as cp
from jitkern import jit
from jitkern.toolchain.nvrtc import compile_source

F32 = np.float32
_CUPY_ON_GPU = pytest.mark.sim_gap("CuPy arrays are GPU memory; the simulator takes NumPy arrays")


@pytest.fixture(params=["jitkern", pytest.param("cupy", marks=_CUPY_ON_GPU)])
def xp(request, launch):
    """The array module the caller's arrays come from (NumPy copies in the simulator)."""
    if request.param == "cupy":
        return pytest.importorskip("cupy")
    if launch.simulated:
        return types.SimpleNamespace(asarray=launch.to_device)
    return jitkern


def host(a):
    return np.asarray(a) if isinstance(a, np.ndarray) else a.get()


def poisoned(xp, shape, dtype):
    fill = np.nan if np.dtype(dtype).kind in "fc" else -7
    return xp.asarray(np.full(shape, fill, dtype))


def test_squared_diff_broadcast_scalar_and_explicit_output(xp, rng, launch):
    k = ex.squared_diff(cp)
    xh = rng.standard_normal((2, 5)).astype(F32)
    yh = rng.standard_normal(5).astype(F32)
    x, y = xp.asarray(xh), xp.asarray(yh)
    expected = ((xh - yh) * (xh - yh)).astype(F32)  # float32 arithmetic, as the kernel's
    np.testing.assert_allclose(host(launch(k)(x, y)), expected, rtol=1e-6)
    np.testing.assert_allclose(host(launch(k)(x, 5)), (xh - F32(5)) ** 2, rtol=1e-6)
    z = poisoned(xp, (2, 5), F32)
    out = launch(k)(x, y, z)
    assert out is z  # the given output comes back
    np.testing.assert_allclose(host(z), expected, rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_type_generic(xp, rng, dtype, launch):
    xh = (rng.standard_normal(1000) * 50).astype(dtype)
    yh = (rng.standard_normal(1000) * 50).astype(dtype)
    expected = (xh - yh) * (xh - yh)
    for make in (ex.squared_diff_generic, ex.squared_diff_generic_body):
        got = launch(make(cp))(xp.asarray(xh), xp.asarray(yh))
        assert got.dtype == dtype
        if np.dtype(dtype).kind == "i":
            np.testing.assert_array_equal(host(got), expected)
        else:
            np.testing.assert_allclose(host(got), expected, rtol=1e-6 if dtype == F32 else 1e-15)


def test_super_generic_with_explicit_output(xp, rng, launch):
    xh = rng.standard_normal((3, 4)).astype(np.float32)
    yh = rng.standard_normal((3, 4))
    z = poisoned(xp, (3, 4), np.float64)
    launch(ex.squared_diff_super_generic(cp))(xp.asarray(xh), xp.asarray(yh), z)
    np.testing.assert_allclose(host(z), ex.sq(xh, yh), rtol=1e-15)
    with pytest.raises(TypeError, match="Z"):
        launch(ex.squared_diff_super_generic(cp))(xp.asarray(xh), xp.asarray(yh))


def test_add_reverse_with_strided_raw_argument(xp, rng, launch):
    n = 777
    xh = rng.standard_normal(n).astype(F32)
    big = rng.standard_normal(2 * n).astype(F32)
    y = xp.asarray(big)[::2]  # a strided raw argument: indexed through its strides
    got = launch(ex.add_reverse(cp))(xp.asarray(xh), y)
    np.testing.assert_array_equal(host(got), xh + big[::2][::-1])


def test_all_raw_with_size(xp, rng, launch):
    n = 300
    xh = rng.standard_normal(n)
    y = poisoned(xp, n, np.float64)
    launch(ex.all_raw_double(cp))(xp.asarray(xh), y, size=n)
    np.testing.assert_array_equal(host(y), xh * 2)


@pytest.mark.parametrize("dtype, rtol", [(np.float32, 1e-5), (np.float64, 1e-13)])
def test_l2norm(xp, rng, dtype, rtol, launch):
    xh = rng.standard_normal((7, 333)).astype(dtype)
    x = xp.asarray(xh)
    k = ex.l2norm(cp)
    ref = np.sqrt((xh.astype(np.float64) ** 2).sum(axis=1))
    got = launch(k)(x, axis=1)
    assert got.dtype == dtype and got.shape == (7,)
    np.testing.assert_allclose(host(got), ref, rtol=rtol)
    np.testing.assert_allclose(host(launch(k)(x, axis=1, keepdims=True)), ref[:, None], rtol=rtol)
    np.testing.assert_allclose(
        float(host(launch(k)(x))), np.sqrt((xh.astype(np.float64) ** 2).sum()), rtol=rtol
    )
    out = poisoned(xp, (7,), dtype)
    launch(k)(x, axis=1, out=out)
    np.testing.assert_allclose(host(out), ref, rtol=rtol)


def test_raw_kernel_my_add(xp, rng, launch):
    k = cp.RawKernel(ex.MY_ADD, "my_add")
    x1h = rng.standard_normal((5, 5)).astype(F32)
    x2h = rng.standard_normal((5, 5)).astype(F32)
    y = poisoned(xp, (5, 5), F32)
    assert launch(k)((5,), (5,), (xp.asarray(x1h), xp.asarray(x2h), y)) is None
    np.testing.assert_array_equal(host(y), x1h + x2h)


def test_complex_kernel(xp, rng, launch):
    k = cp.RawKernel(ex.COMPLEX_KERNEL, "my_func")
    x1h = (rng.standard_normal(25) + 1j * rng.standard_normal(25)).astype(np.complex64)
    x2h = (rng.standard_normal(25) + 1j * rng.standard_normal(25)).astype(np.complex64)
    y = poisoned(xp, (5, 5), np.complex64)
    launch(k)(
        (5,),
        (5,),
        (xp.asarray(x1h.reshape(5, 5)), xp.asarray(x2h.reshape(5, 5)), y, np.float32(2.0)),
    )
    # (an fma may fuse a * x2 + x1: a rounding apart where the terms cancel)
    np.testing.assert_allclose(host(y).ravel(), x1h + np.float32(2.0) * x2h, rtol=1e-6, atol=1e-6)


@pytest.mark.sim_gap("kernel attributes are read from a GPU binary")
def test_attributes_and_the_dynamic_shared_memory_setter(xp, rng, launch):
    k = cp.RawKernel(ex.MY_ADD, "my_add")
    attrs = k.attributes
    assert set(attrs) == set(ex.KERNEL_ATTRIBUTES)
    assert attrs["num_regs"] == k.num_regs > 0 and attrs["max_threads_per_block"] <= 1024
    assert attrs["binary_version"] >= 70
    big = cp.RawKernel(ex.BIG_SHARED, "through_shared")
    n = 50000 // 4
    big.max_dynamic_shared_size_bytes = 50000
    assert big.max_dynamic_shared_size_bytes == 50000
    assert big.attributes["max_dynamic_shared_size_bytes"] == 50000
    xh = rng.standard_normal(n).astype(F32)
    y = poisoned(xp, n, F32)
    big((1,), (256,), (xp.asarray(xh), y, np.int32(n)), shared_mem=n * 4)
    np.testing.assert_array_equal(host(y), xh[::-1])


def test_raw_module_test_sum_and_test_multiply(xp, rng, launch):
    module = cp.RawModule(code=ex.TWO_KERNELS)
    ker_sum = module.get_function("test_sum")
    ker_times = module.get_function("test_multiply")
    N = 10
    x1h = rng.standard_normal((N, N)).astype(F32)
    x2h = rng.standard_normal((N, N)).astype(F32)
    x1, x2 = xp.asarray(x1h), xp.asarray(x2h)
    y = poisoned(xp, (N, N), F32)
    launch(ker_sum)((N,), (N,), (x1, x2, y, N**2))  # a Python int for an unsigned int parameter
    np.testing.assert_array_equal(host(y), x1h + x2h)
    launch(ker_times)((N,), (N,), (x1, x2, y, N**2))
    np.testing.assert_array_equal(host(y), x1h * x2h)


def test_name_expressions(xp, rng, launch):
    mod = cp.RawModule(code=ex.FX3, options=("-std=c++11",), name_expressions=ex.FX3_NAMES)
    N = 10
    for name, dtype in zip(ex.FX3_NAMES, (np.float32, np.float64)):
        ker = mod.get_function(name)
        ah = rng.standard_normal(N).astype(dtype)
        a = xp.asarray(ah)
        launch(ker)((1,), (N,), (a, N))
        np.testing.assert_array_equal(host(a), ah * 3)


def test_fuse_examples(xp, rng, launch):
    squared_diff, sum_of_products, named = ex.fused(cp)
    xh = rng.integers(-100, 100, 1000)
    yh = rng.integers(-100, 100, 1000)
    x, y = xp.asarray(xh), xp.asarray(yh)
    for f in (squared_diff, named):
        np.testing.assert_array_equal(host(launch(f)(x, y)), (xh - yh) * (xh - yh))
    ah = rng.standard_normal((6, 129))
    bh = rng.standard_normal((6, 129))
    got = launch(sum_of_products)(xp.asarray(ah), xp.asarray(bh))
    np.testing.assert_allclose(host(got), (ah * bh).sum(axis=-1), rtol=1e-12)


@pytest.mark.parametrize("style", ["rawkernel", "numba"])
def test_jit_elementwise_copy(xp, rng, style, launch):
    k = ex.elementwise_copy(jit)
    grid = launch.pick(128, 2)
    size = np.uint32(launch.pick(2**20 + 3, 2**12 + 3))  # not a multiple of the grid: a tail
    xh = rng.standard_normal(int(size)).astype(F32)
    x = xp.asarray(xh)
    y = poisoned(xp, int(size), F32)
    if style == "rawkernel":
        launch(k)((grid,), (1024,), (x, y, size))
    else:
        launch(k)[grid, 1024](x, y, size)
    np.testing.assert_array_equal(host(y), xh)


def test_jit_numba_style_takes_shared_mem_and_stream_keywords(xp, rng, launch):
    @jit.rawkernel()
    def reverse_block(x, y):
        tile = jit.shared_memory(np.float32, None)  # the launch's dynamic shared memory
        t = jit.threadIdx.x
        tile[t] = x[t]
        jit.syncthreads()
        y[t] = tile[jit.blockDim.x - 1 - t]

    xh = rng.standard_normal(64).astype(F32)
    y = poisoned(xp, 64, F32)
    x = xp.asarray(xh)
    launch.synchronize()  # the copies ran on the legacy stream; the launch is on another
    stream = launch.stream()
    launch(reverse_block)[1, 64](x, y, shared_mem=64 * 4, stream=stream)
    launch.synchronize(stream)
    np.testing.assert_array_equal(host(y), xh[::-1])


@pytest.mark.sim_gap("a CUBIN file is GPU code")
def test_raw_module_from_a_cubin_file(xp, rng, tmp_path, launch):
    binary = compile_source(ex.TWO_KERNELS, arch=jitkern.Device().arch)  # a CUBIN for this GPU
    path = tmp_path / "two.bin"
    path.write_bytes(binary.data)
    module = cp.RawModule(path=str(path))
    ker = module.get_function("test_multiply")
    assert module.file_path == ker.file_path == str(path)
    assert module.module is not None
    n = 300
    x1h, x2h = rng.standard_normal(n).astype(F32), rng.standard_normal(n).astype(F32)
    y = poisoned(xp, n, F32)
    ker((3,), (128,), (xp.asarray(x1h), xp.asarray(x2h), y, n))
    np.testing.assert_array_equal(host(y), x1h * x2h)
