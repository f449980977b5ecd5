"""Raw CUDA written for CuPy on a GPU, against NumPy: <cupy/...> headers, .ptr
allocations as pointers, a missing kernel, structured dtypes, pickled kernels."""

import pickle

import numpy as np
import pytest
from test_raw_compat import CARRAY, MODULE, REC, SPEC_COMPLEX

import jitkern
from jitkern.toolchain import cache



def test_cupy_complex_spec_example(rng, launch):
    k = jitkern.RawKernel(SPEC_COMPLEX, "my_func")
    x1 = (rng.standard_normal(25) + 1j * rng.standard_normal(25)).astype(np.complex64)
    x2 = (rng.standard_normal(25) + 1j * rng.standard_normal(25)).astype(np.complex64)
    y = launch.full(25, np.nan, np.complex64)
    launch(k)((5,), (5,), (launch.to_device(x1), launch.to_device(x2), y, np.float32(2.0)))
    # (the GPU may fuse a * x2 + x1 into one fma: a rounding apart where terms cancel)
    np.testing.assert_allclose(launch.get(y), x1 + np.float32(2.0) * x2, rtol=1e-6, atol=1e-6)


@pytest.mark.gpu
def test_cupy_carray_kernel(rng):
    src = rng.standard_normal((12, 20)).astype(np.float32)
    view = jitkern.asarray(src)[:, ::2]  # strided: 12 x 10, strides (80, 8) bytes
    n0, n1 = view.shape
    s0, s1 = view.strides
    z = (rng.standard_normal(n0 * n1) + 1j * rng.standard_normal(n0 * n1)) * 0.5
    out = jitkern.full(n0 * n1, np.nan, np.float32)
    zd = jitkern.asarray(z)
    k = jitkern.RawKernel(CARRAY, "gather")
    k((4,), (32,), (view, n0, n1, s0, s1, out, zd))
    cols = np.tile(np.arange(n1, dtype=np.float32), n0)
    np.testing.assert_array_equal(out.get(), cols)  # a[idx] - a[i] == 0 for every element
    np.testing.assert_allclose(zd.get(), np.exp(z) * 2.0, rtol=1e-12)


FILL = r"""
extern "C" __global__ void fill(float* p, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = v * i;
}
"""


@pytest.mark.gpu
def test_jitkern_memory_pointers_pass_as_pointers():
    a = jitkern.full(100, np.nan, np.float32)
    k = jitkern.RawKernel(FILL, "fill")
    k((1,), (128,), (a.data, np.float32(1.5), 100))
    np.testing.assert_array_equal(a.get(), 1.5 * np.arange(100, dtype=np.float32))
    k((1,), (128,), (a.data, np.float32(-1.0), 100))  # the generated launcher this time
    np.testing.assert_array_equal(a.get(), -np.arange(100, dtype=np.float32))


@pytest.mark.gpu
def test_cupy_alloc_pointer_passes_as_pointer():
    cupy = pytest.importorskip("cupy")
    mem = cupy.cuda.alloc(100 * 4)
    k = jitkern.RawKernel(FILL, "fill")
    k((1,), (128,), (mem, np.float32(0.25), 100))
    jitkern.synchronize()
    got = cupy.ndarray((100,), cupy.float32, memptr=mem)
    np.testing.assert_array_equal(cupy.asnumpy(got), 0.25 * np.arange(100, dtype=np.float32))


@pytest.mark.gpu
def test_missing_kernel_in_a_module():
    mod = jitkern.RawModule(code=MODULE, name_expressions=["fx3<float>"])
    with pytest.raises(ValueError, match="no kernel named 'nope'.*'test_multiply', 'test_sum'"):
        mod.get_function("nope")
    with pytest.raises(AttributeError, match="no kernel named 'nope'"):
        mod.get_function("nope")
    with pytest.raises(RuntimeError, match="no kernel named 'nope'"):  # CuPy's driver error
        mod.get_function("nope")
    assert mod.get_function("test_sum").name == "test_sum"


@pytest.mark.gpu
def test_structured_scalar_and_arrays_in_elementwise(rng):
    k = jitkern.ElementwiseKernel("float64 x, S s", "float64 y",
                                  "y = x * s.b + s.a + s.c[1];", name="rec_scalar")
    s = np.zeros((), REC)
    s["a"], s["b"], s["c"] = 1.5, -2.25, (3, 4, 5)
    x = rng.standard_normal(1000)
    for _ in range(2):  # the second call takes the generated launcher
        y = k(jitkern.asarray(x), s[()])
        np.testing.assert_allclose(y.get(), x * -2.25 + 1.5 + 4, rtol=1e-15, atol=1e-14)
    other = np.zeros((), np.dtype([("a", "f8"), ("b", "f8"), ("c", "i4", (3,))], align=True))
    other["b"], other["c"] = 3.0, (0, 7, 0)
    np.testing.assert_allclose(k(jitkern.asarray(x), other[()]).get(), x * 3.0 + 7, rtol=1e-15,
                               atol=1e-14)


@pytest.mark.gpu
def test_structured_arrays_from_cupy(rng):
    cupy = pytest.importorskip("cupy")
    host = np.zeros(500, REC)
    host["a"] = rng.standard_normal(500)
    host["b"] = rng.standard_normal(500)
    host["c"] = rng.integers(-9, 9, (500, 3))
    try:
        dev = cupy.asarray(host)
    except (TypeError, ValueError, NotImplementedError) as exc:  # no structured arrays
        pytest.skip(f"this CuPy cannot hold structured arrays: {exc}")
    k = jitkern.ElementwiseKernel("T r", "float64 y", "y = r.a * r.b + r.c[2];", name="rec_arr")
    y = k(dev, jitkern.full(500, np.nan, np.float64))
    np.testing.assert_allclose(y.get(), host["a"].astype(np.float64) * host["b"] + host["c"][:, 2],
                               rtol=1e-15, atol=1e-13)


@pytest.mark.gpu
def test_pickled_kernels_launch_without_compiling():
    mod = jitkern.RawModule(code=FILL)
    k = mod.get_function("fill")
    ek = jitkern.ElementwiseKernel("T x", "T y", "y = x * 3", "tri")
    x = jitkern.arange(10, dtype=np.float32)
    ek(x)
    compiles = cache.stats["compiles"]
    back, ek_back = pickle.loads(pickle.dumps((k, ek)))
    assert back is not k and ek_back is not ek
    a = jitkern.full(64, np.nan, np.float32)
    back((1,), (64,), (a, np.float32(2.0), 64))
    np.testing.assert_array_equal(a.get(), 2.0 * np.arange(64, dtype=np.float32))
    np.testing.assert_array_equal(ek_back(x).get(), 3 * np.arange(10, dtype=np.float32))
    assert cache.stats["compiles"] == compiles
