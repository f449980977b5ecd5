"""ElementwiseKernel on a GPU: the spec's examples, dtypes, broadcasting, views, raw, size=."""

import numpy as np
import pytest

import jitkern
from jitkern.toolchain import cache


ALL_DTYPES = [
    "bool",
    "int8",
    "uint8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]


def dev(a):
    return jitkern.asarray(np.ascontiguousarray(a))


def host(a):
    return jitkern.asnumpy(a)


def poisoned(shape, dtype):
    """An output that holds NaN (or a sentinel), never a previous run's right answer."""
    a = jitkern.empty(shape, dtype)
    a.fill(np.nan if np.dtype(dtype).kind in "fc" else 7)
    return a


@pytest.fixture(scope="module")
def squared_diff():
    return jitkern.ElementwiseKernel(
        "float32 x, float32 y", "float32 z", "z = (x - y) * (x - y)", "squared_diff"
    )


def test_spec_squared_diff_broadcast_and_scalar(squared_diff, rng, launch):
    xh = rng.standard_normal((2, 5)).astype(np.float32)
    yh = rng.standard_normal(5).astype(np.float32)
    x, y = launch.to_device(xh), launch.to_device(yh)
    expected = (xh - yh) * (xh - yh)
    np.testing.assert_allclose(launch.get(launch(squared_diff)(x, y)), expected, rtol=1e-6)
    np.testing.assert_allclose(launch.get(launch(squared_diff)(x, 5)), (xh - np.float32(5)) ** 2, rtol=1e-6)
    z = launch.poisoned((2, 5), np.float32)
    out = launch(squared_diff)(x, y, z)
    assert out is z
    np.testing.assert_allclose(launch.get(z), expected, rtol=1e-6)


def test_spec_generic_kernels(rng, launch):
    gen = jitkern.ElementwiseKernel(
        "T x, T y", "T z", "T diff = x - y;\nz = diff * diff;", "squared_diff_generic"
    )
    for dt in (np.float32, np.float64, np.int32):
        xh = (rng.standard_normal((2, 5)) * 100).astype(dt)
        yh = (rng.standard_normal(5) * 100).astype(dt)
        r = launch(gen)(launch.to_device(xh), launch.to_device(yh))
        assert r.dtype == dt
        np.testing.assert_array_equal(launch.get(r), (xh - yh) * (xh - yh))
    sup = jitkern.ElementwiseKernel(
        "X x, Y y", "Z z", "z = (x - y) * (x - y)", "squared_diff_super_generic"
    )
    xh = rng.standard_normal((2, 5)).astype(np.float32)
    yh = rng.integers(-100, 100, 5).astype(np.int32)
    x, y = launch.to_device(xh), launch.to_device(yh)
    with pytest.raises(TypeError, match="'Z'"):
        launch(sup)(x, y)
    z = launch.poisoned((2, 5), np.float64)
    launch(sup)(x, y, z)
    # CUDA's promotion: float32 - int32 is float32, squared in float32, stored as float64
    d = xh - yh.astype(np.float32)
    np.testing.assert_allclose(launch.get(z), (d * d).astype(np.float64), rtol=1e-6)


def test_spec_add_reverse_raw(rng, launch):
    add_reverse = jitkern.ElementwiseKernel(
        "T x, raw T y", "T z", "z = x + y[_ind.size() - i - 1]", "add_reverse"
    )
    xh = rng.standard_normal(10).astype(np.float32)
    yh = rng.standard_normal(10).astype(np.float32)
    np.testing.assert_array_equal(launch.get(launch(add_reverse)(launch.to_device(xh), launch.to_device(yh))), xh + yh[::-1])
    # raw argument that is a strided 2-D view: indexed in C order over its own shape
    base = rng.standard_normal((5, 8)).astype(np.float32)
    yv = launch.to_device(base)[:, ::4]  # (5, 2), non-contiguous
    out = launch(add_reverse)(launch.to_device(np.zeros(10, np.float32)), yv)
    np.testing.assert_array_equal(launch.get(out), base[:, ::4].ravel()[::-1])


def test_clipped_relu_and_abs2(rng, launch):
    clipped = jitkern.ElementwiseKernel(
        "float64 x, float64 cap", "float64 y", "y = min(max(x, 0.0), cap)", "clipped_relu"
    )
    x = rng.standard_normal(10_000) * 10
    np.testing.assert_array_equal(launch.get(launch(clipped)(launch.to_device(x), 6.0)), np.clip(x, 0, 6))
    abs2 = jitkern.ElementwiseKernel(
        "complex128 z",
        "float64 mag2",
        "mag2 = z.real() * z.real() + z.imag() * z.imag()",
        "abs_squared",
    )
    z = x + 1j * x[::-1]
    np.testing.assert_allclose(launch.get(launch(abs2)(launch.to_device(z))), np.abs(z) ** 2, rtol=1e-12)


def test_seed_003_examples(rng, launch):
    add = jitkern.ElementwiseKernel(
        "float32 x, float32 y", "float32 z", "z = x + y * 2", "custom_add"
    )
    n = launch.pick(1000, 200)
    ah = rng.standard_normal(n).astype(np.float32)
    bh = rng.standard_normal(n).astype(np.float32)
    a, b = launch.to_device(ah), launch.to_device(bh)
    # y * 2 is exact, so x + y * 2 rounds once on both sides (with or without an FMA)
    np.testing.assert_array_equal(launch.get(launch(add)(a, b)), ah + bh * np.float32(2))
    relu = jitkern.ElementwiseKernel(
        "float32 x, float32 y, float32 alpha",
        "float32 z",
        "float temp = x * alpha + y;\nz = temp > 0 ? temp : 0; // ReLU activation",
        "relu_transform",
    )
    np.testing.assert_array_equal(
        launch.get(launch(relu)(a, b, 0.5)), np.maximum(ah * np.float32(0.5) + bh, 0)
    )
    trig = jitkern.ElementwiseKernel(
        "float32 x",
        "float32 sin_x, float32 cos_x, float32 tan_x",
        "sin_x = sinf(x); cos_x = cosf(x); tan_x = tanf(x);",
        "trig_functions",
    )
    ang = np.linspace(0, 2 * np.pi, n, dtype=np.float32)
    s, c, t = (launch.get(r) for r in launch(trig)(launch.to_device(ang)))
    # Each output against NumPy (float64 reference; float32 functions to a few ulp, and
    # tan away from its poles, where float32 rounding of the angle dominates).
    ref = ang.astype(np.float64)
    np.testing.assert_allclose(s, np.sin(ref), rtol=0, atol=2e-6)
    np.testing.assert_allclose(c, np.cos(ref), rtol=0, atol=2e-6)
    away = np.abs(np.cos(ref)) > 1e-2
    np.testing.assert_allclose(t[away], np.tan(ref)[away], rtol=1e-5, atol=2e-6)
    # The in-place example names x as input and output: refused with a clear message,
    # and the working spelling updates the array in place.
    with pytest.raises(ValueError, match="already an input"):
        jitkern.ElementwiseKernel(
            "float32 x, float32 alpha", "float32 x", "x = x * alpha + 1", "inplace_transform"
        )
    inplace = jitkern.ElementwiseKernel(
        "float32 x, float32 alpha", "float32 y", "y = x * alpha + 1", "inplace_transform"
    )
    dh = rng.standard_normal(n).astype(np.float32)
    data = launch.to_device(dh)
    out = launch(inplace)(data, 2.0, data)
    assert out is data
    np.testing.assert_array_equal(launch.get(data), dh * np.float32(2) + np.float32(1))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_all_dtypes_copy_and_scale(dtype, rng, launch):
    k = jitkern.ElementwiseKernel("T x, T y", "T z", "z = x + y", "add_generic")
    dt = np.dtype(dtype)
    n = 1000 + 3
    if dt.kind == "b":
        x, y = rng.random(n) > 0.5, rng.random(n) > 0.5
    elif dt.kind in "iu":
        x = rng.integers(0, 50, n).astype(dt)
        y = rng.integers(0, 50, n).astype(dt)
    elif dt.kind == "c":
        x = (rng.random(n) + 1j * rng.random(n)).astype(dt)
        y = (rng.random(n) + 1j * rng.random(n)).astype(dt)
    else:
        x, y = rng.random(n).astype(dt), rng.random(n).astype(dt)
    if dt == np.float16:
        k = jitkern.ElementwiseKernel("T x, T y", "T z", "z = x + y", "add_half")
    r = launch.get(launch(k)(launch.to_device(x), launch.to_device(y)))
    assert r.dtype == dt
    expected = (x | y) if dt.kind == "b" else x + y
    if dt.kind == "b":
        np.testing.assert_array_equal(r, expected)
    else:
        np.testing.assert_allclose(r, expected, rtol=1e-3 if dt == np.float16 else 1e-6)


def test_views_negative_strides_and_broadcasting(rng, launch):
    k = jitkern.ElementwiseKernel("T x, T y", "T z", "z = x * 2 + y", "axpy_like")
    a = rng.random((64, 48)).astype(np.float32)
    b = rng.random((48,)).astype(np.float32)
    da, db = launch.to_device(a), launch.to_device(b)
    np.testing.assert_allclose(launch.get(launch(k)(da[::-1, ::-2], db[::-2])), a[::-1, ::-2] * 2 + b[::-2])
    np.testing.assert_allclose(
        launch.get(launch(k)(da.T, launch.to_device(rng.random((64,)).astype(np.float32)))).shape, (48, 64)
    )
    col = rng.random((64, 1)).astype(np.float32)
    np.testing.assert_allclose(launch.get(launch(k)(da, launch.to_device(col))), a * 2 + col, rtol=1e-6)
    # vectors along the innermost dimension: aligned sub-blocks, and misaligned ones
    np.testing.assert_allclose(launch.get(launch(k)(da[:, 4:44], db[4:44])), a[:, 4:44] * 2 + b[4:44])
    np.testing.assert_allclose(launch.get(launch(k)(da[:, 1:45], db[1:45])), a[:, 1:45] * 2 + b[1:45])
    np.testing.assert_allclose(launch.get(launch(k)(da[1:, 4:44], db[4:44])), a[1:, 4:44] * 2 + b[4:44])
    x2 = launch.to_device(rng.random(launch.pick(1 << 16, 1 << 10)).astype(np.float32))
    np.testing.assert_allclose(
        launch.get(launch(k)(x2[::2], x2[1::2])), launch.get(x2)[::2] * 2 + launch.get(x2)[1::2], rtol=1e-6
    )
    # misaligned contiguous views take the non-vector path
    np.testing.assert_allclose(
        launch.get(launch(k)(x2[1:], x2[:-1])), launch.get(x2)[1:] * 2 + launch.get(x2)[:-1], rtol=1e-6
    )


def test_output_shape_rules_and_zero_size(rng, launch):
    k = jitkern.ElementwiseKernel("T x", "T y", "y = x + 1", "inc")
    with pytest.raises(ValueError, match="broadcast"):
        launch(k)(launch.to_device(np.zeros((2, 5), np.float32)), launch.poisoned((5,), np.float32))
    out = launch(k)(launch.to_device(np.zeros((0, 3), np.float32)))
    assert out.shape == (0, 3)
    xh = rng.standard_normal((3, 1)).astype(np.float32)
    y = launch(k)(launch.to_device(xh), launch.poisoned((3, 4), np.float32))
    np.testing.assert_array_equal(launch.get(y), np.broadcast_to(xh + np.float32(1), (3, 4)))


def test_size_and_all_raw(rng, launch):
    k = jitkern.ElementwiseKernel("raw T x", "raw T y", "y[i] = x[_ind.size() - 1 - i] * 2", "rev2")
    xh = rng.standard_normal(8)
    x = launch.to_device(xh)
    y = launch(k)(x, size=8)
    np.testing.assert_array_equal(launch.get(y), xh[::-1] * 2)
    with pytest.raises(ValueError, match="size"):
        launch(k)(x)
    k2 = jitkern.ElementwiseKernel("T x", "T y", "y = x", "copy1")
    with pytest.raises(ValueError, match="size="):
        launch(k2)(x, size=8)


def test_no_return_return_tuple_loop_prep(rng, launch):
    k = jitkern.ElementwiseKernel(
        "T x",
        "T y",
        "y = x + offset",
        "shift",
        no_return=True,
        loop_prep="T offset = 3;",
        after_loop="(void)offset;",
    )
    y = launch.poisoned((4,), np.float32)
    xh = rng.standard_normal(4).astype(np.float32)
    assert launch(k)(launch.to_device(xh), y) is None
    np.testing.assert_array_equal(launch.get(y), xh + np.float32(3))
    k2 = jitkern.ElementwiseKernel("T x", "T y", "y = x", "copy_t", return_tuple=True)
    r = launch(k2)(launch.to_device(np.zeros(4, np.float32)))
    assert isinstance(r, tuple) and len(r) == 1


def test_scalars_types_and_errors(launch):
    k = jitkern.ElementwiseKernel("T x, T s", "T y", "y = x * s", "scale")
    r = launch(k)(3, 4)
    assert r.dtype == np.int64 and r.shape == () and int(launch.get(r)) == 12
    r = launch(k)(launch.to_device(np.ones(3, np.float32)), 2.5)
    assert r.dtype == np.float32
    k8 = jitkern.ElementwiseKernel("int8 x, int8 s", "int8 y", "y = x * s", "scale8")
    with pytest.raises(TypeError, match="does not fit"):
        launch(k8)(launch.to_device(np.ones(3, np.int8)), 300)
    with pytest.raises(TypeError, match="float32"):
        launch(k8)(launch.to_device(np.ones(3, np.float32)), 1)
    if not launch.simulated:  # (the simulator's arrays are NumPy arrays)
        with pytest.raises(TypeError, match="jitkern.asarray"):
            k(np.ones(3, np.float32), 1.0)


@pytest.mark.gpu
def test_no_recompilation_on_second_call(rng):
    k = jitkern.ElementwiseKernel("T x", "T y", "y = x * 3", "triple")
    xh = rng.standard_normal(100).astype(np.float32)
    x = dev(xh)
    k(x)
    before = dict(cache.stats)
    for _ in range(3):
        k(x)
        np.testing.assert_array_equal(host(k(dev(xh), poisoned(100, np.float32))), xh * 3)
    assert cache.stats == before


@pytest.mark.gpu
def test_cached_code_and_inspect():
    k = jitkern.ElementwiseKernel("T x", "T y", "y = x * 3", "triple_c")
    k(dev(np.arange(100, dtype=np.float32)))
    assert "triple_c" in k.cached_code
    ins = k.inspect(np.zeros(100, np.float32))
    assert ins.cubin and "triple_c" in ins.source
    # resource use comes from ptxas's log (None when another test left a log-less cache entry)
    assert ins.registers is None or ins.registers > 0


@pytest.mark.gpu
def test_stream_and_foreign_arrays(rng):
    k = jitkern.ElementwiseKernel("T x", "T y", "y = x + 1", "inc_s")
    s = jitkern.Stream()
    xh = rng.standard_normal(1000).astype(np.float32)
    x = dev(xh)
    y = k(x, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(host(y), xh + np.float32(1))
    cupy = pytest.importorskip("cupy")
    cx = cupy.asarray(xh)
    cy = cupy.full(1000, cupy.nan, dtype=cupy.float32)
    k(cx, cy)
    cupy.cuda.Device().synchronize()
    np.testing.assert_array_equal(cupy.asnumpy(cy), xh + np.float32(1))


# ---------------------------------------------------------------------------
# Foreign arrays and the generated launch path.


def _foreign_makers():
    makers = []
    try:
        import cupy

        makers.append(("cupy", cupy.asarray, cupy.asnumpy))
    except ImportError:
        pass
    try:
        import torch

        if torch.cuda.is_available():
            makers.append(
                ("torch", lambda a: torch.as_tensor(a, device="cuda"), lambda t: t.cpu().numpy())
            )
    except ImportError:
        pass
    return makers


@pytest.mark.parametrize("maker", _foreign_makers(), ids=lambda m: m[0])
@pytest.mark.gpu
def test_foreign_arrays_every_call_shape(squared_diff, maker, rng):
    _name, to_dev, to_host = maker
    for n in (1024, 1024, 1024, 1000, 1025, 1024):  # repeats hit the generated path
        x = rng.standard_normal(n).astype(np.float32)
        y = rng.standard_normal(n).astype(np.float32)
        dx, dy = to_dev(x), to_dev(y)
        z = to_dev(np.full(n, np.nan, np.float32))
        out = squared_diff(dx, dy, z)
        assert out is z
        np.testing.assert_allclose(to_host(z), (x - y) ** 2, rtol=1e-6)
        np.testing.assert_allclose(host(squared_diff(dx, dy)), (x - y) ** 2, rtol=1e-6)
    # Views (non-contiguous, offset by one element: misaligned for vectors) and 2-D.
    x = rng.standard_normal(2049).astype(np.float32)
    y = rng.standard_normal(2049).astype(np.float32)
    dx, dy = to_dev(x), to_dev(y)
    for _ in range(2):
        np.testing.assert_allclose(host(squared_diff(dx[1:], dy[1:])), (x[1:] - y[1:]) ** 2,
                                   rtol=1e-6)
        np.testing.assert_allclose(host(squared_diff(dx[::2], dy[::2])),
                                   (x[::2] - y[::2]) ** 2, rtol=1e-6)
    # The same element count as the 1-D calls before, as (1, n) and (n, 1): the 1-D
    # layout's checks (torch: stride and numel) must miss them.
    n = 1024
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    for shape in ((1, n), (n, 1)):
        out = squared_diff(to_dev(x).reshape(shape), to_dev(y).reshape(shape))
        assert out.shape == shape
        np.testing.assert_allclose(host(out), ((x - y) ** 2).reshape(shape), rtol=1e-6)
    m = rng.standard_normal((8, 256)).astype(np.float32)
    r = rng.standard_normal(256).astype(np.float32)
    for _ in range(2):
        np.testing.assert_allclose(host(squared_diff(to_dev(m), to_dev(r))), (m - r) ** 2,
                                   rtol=1e-6)


@pytest.mark.gpu
def test_foreign_and_jitkern_arrays_alternate(squared_diff, rng):
    cupy = pytest.importorskip("cupy")
    x = rng.standard_normal(4096).astype(np.float32)
    y = rng.standard_normal(4096).astype(np.float32)
    for _ in range(3):
        for to_dev in (dev, cupy.asarray):
            z = to_dev(np.full(4096, np.nan, np.float32))
            squared_diff(to_dev(x), to_dev(y), z)
            np.testing.assert_allclose(jitkern.asnumpy(jitkern.asarray(z)), (x - y) ** 2,
                                       rtol=1e-6)


@pytest.mark.parametrize("n", [1, 7, 1024, 4099, 1 << 20])
def test_mixed_dtypes_float32_in_float64_out(n, rng, launch):
    n = launch.pick(n, min(n, 4099))  # the simulator: at most 4099 values
    k = jitkern.ElementwiseKernel(
        "float32 x", "float64 y", "y = exp((double)x) + x * (1.5 + x * 0.25)", "mixed_f32_f64"
    )
    x = rng.standard_normal(n + 1).astype(np.float32)
    ref = x.astype(np.float64)
    want = np.exp(ref) + ref * (1.5 + ref * 0.25)
    for view in (slice(0, n), slice(1, n + 1)):  # aligned, then misaligned by one float
        y = launch.poisoned((n,), np.float64)
        launch(k)(launch.to_device(x)[view], y)
        # float64 arithmetic: the error is held to the terms' magnitude (they can cancel).
        scale = np.exp(ref[view]) + np.abs(ref[view] * (1.5 + ref[view] * 0.25))
        np.testing.assert_array_less(np.abs(launch.get(y) - want[view]), 1e-14 * scale)
        np.testing.assert_array_less(np.abs(launch.get(launch(k)(launch.to_device(x)[view])) - want[view]), 1e-14 * scale)


def test_output_shape_that_does_not_broadcast_names_the_output(squared_diff, launch):
    x = launch.zeros((4,), np.float32)
    with pytest.raises(ValueError, match=r"output 'z'.*\(3,\).*\(4,\)"):
        launch(squared_diff)(x, x, launch.zeros((3,), np.float32))
    with pytest.raises(ValueError, match=r"output 'z'.*\(1,\).*\(4,\)"):
        launch(squared_diff)(x, x, launch.zeros((1,), np.float32))


@pytest.mark.gpu
def test_launch_path_compiles_once(rng):
    k = jitkern.ElementwiseKernel("float32 x", "float32 y", "y = 2 * x", "twice_once")
    x = dev(rng.standard_normal(512).astype(np.float32))
    k(x)
    before = dict(cache.stats)
    for _ in range(5):
        np.testing.assert_array_equal(host(k(x)), 2 * host(x))
    assert cache.stats == before
    assert len(k._runners) == 1
