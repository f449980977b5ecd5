"""ReductionKernel on a GPU: spec examples, every axis combination vs NumPy, determinism."""

import itertools

import numpy as np
import pytest

import jitkern



def dev(a):
    return jitkern.asarray(np.ascontiguousarray(a))


def host(a):
    return jitkern.asnumpy(a)


@pytest.fixture(scope="module")
def l2norm():
    return jitkern.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")


@pytest.fixture(scope="module")
def ksum():
    return jitkern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "ksum")


def test_spec_l2norm(l2norm, rng, launch):
    xh = rng.standard_normal((2, 5)).astype(np.float32)
    want = np.sqrt((xh.astype(np.float64) ** 2).sum(axis=1))
    np.testing.assert_allclose(launch.get(launch(l2norm)(launch.to_device(xh), axis=1)), want, rtol=1e-6)


def test_seed_001_l2_norm_squared(rng, launch):
    k = jitkern.ReductionKernel(
        "float64 x", "float64 y", "x * x", "a + b", "y = a", "0", "l2_norm_sq"
    )
    x = rng.standard_normal(launch.pick(1_000_000, 5000))
    got = float(launch.get(launch(k)(launch.to_device(x))))
    np.testing.assert_allclose(got, np.sum(x * x), rtol=1e-10)


def test_seed_003_shifted_examples_are_explained(rng, launch):
    with pytest.raises(ValueError, match="shifted"):
        jitkern.ReductionKernel("float32 x", "float32 out", "x * x", "a + b", "0", "sum_of_squares")
    k = jitkern.ReductionKernel(
        "float32 x", "float32 out", "x * x", "a + b", "out = a", "0", "sum_of_squares"
    )
    h = rng.standard_normal(1000).astype(np.float32)
    data = launch.to_device(h)
    want = (h.astype(np.float64) ** 2).sum()
    np.testing.assert_allclose(float(launch.get(launch(k)(data))), want, rtol=1e-5)
    np.testing.assert_allclose(launch.get(launch(k)(data.reshape(1, -1), axis=1)), [want], rtol=1e-5)
    w = jitkern.ReductionKernel(
        "float32 x, float32 w", "float32 out", "x * w", "a + b", "out = a", "0", "weighted_sum"
    )
    vh, wh = rng.random(1000).astype(np.float32), rng.random(1000).astype(np.float32)
    want = (vh.astype(np.float64) * wh).sum()  # positive terms: no cancellation
    np.testing.assert_allclose(float(launch.get(launch(w)(launch.to_device(vh), launch.to_device(wh)))), want, rtol=1e-5)


def _axis_combos(ndim):
    for r in range(ndim + 1):
        yield from itertools.combinations(range(ndim), r)


SHAPES = [(37,), (1000,), (6, 7), (64, 300), (300, 64), (3, 4, 5), (5, 1, 33, 2), (4, 6, 8, 10)]


@pytest.mark.parametrize("shape", SHAPES)
def test_every_axis_combination_float64(ksum, shape, rng, launch):
    shape = launch.pick(shape, tuple(min(s, 24) for s in shape))  # the simulator: smaller
    x = rng.standard_normal(shape)
    d = launch.to_device(x)
    for axes in _axis_combos(len(shape)):
        got = launch.get(launch(ksum)(d, axis=axes))
        np.testing.assert_allclose(
            got, x.sum(axis=axes), rtol=1e-12, atol=1e-12, err_msg=f"axis={axes}"
        )
        got = launch.get(launch(ksum)(d, axis=axes, keepdims=True))
        assert got.shape == x.sum(axis=axes, keepdims=True).shape


@pytest.mark.parametrize("shape", [(2000, 3), (3, 2000), (128, 128, 3)])
def test_float32_and_int_and_views(ksum, shape, rng, launch):
    shape = launch.pick(shape, tuple(min(s, 30) for s in shape))  # the simulator: smaller
    x = rng.standard_normal(shape).astype(np.float32)
    d = launch.to_device(x)
    for axes in _axis_combos(len(shape)):
        tol = 1e-5 * np.sqrt(max(1, x.size))
        np.testing.assert_allclose(
            launch.get(launch(ksum)(d, axis=axes)),
            x.sum(axis=axes, dtype=np.float64),
            rtol=1e-4,
            atol=tol,
        )
    xi = rng.integers(-100, 100, shape).astype(np.int32)
    di = launch.to_device(xi)
    for axes in _axis_combos(len(shape)):
        got = launch.get(launch(ksum)(di, axis=axes))
        np.testing.assert_array_equal(got, xi.sum(axis=axes, dtype=np.int32))
    v = d[::-1]
    got = launch.get(launch(ksum)(v, axis=0))
    np.testing.assert_allclose(got, x[::-1].sum(axis=0), rtol=1e-4, atol=1e-3)


def test_max_without_identity_and_zero_size(rng, launch):
    kmax = jitkern.ReductionKernel("T x", "T y", "x", "max(a, b)", "y = a", None, "kmax")
    x = rng.standard_normal((50, 70)).astype(np.float32) - 10
    for axis in (None, 0, 1):
        np.testing.assert_array_equal(launch.get(launch(kmax)(launch.to_device(x), axis=axis)), x.max(axis=axis))
    with pytest.raises(ValueError, match="identity"):
        launch(kmax)(launch.to_device(np.zeros((0, 3), np.float32)), axis=0)
    ksum = jitkern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "ksum0")
    np.testing.assert_array_equal(launch.get(launch(ksum)(launch.to_device(np.zeros((0, 3), np.float32)), axis=0)), [0, 0, 0])
    assert launch.get(launch(ksum)(launch.to_device(np.zeros((3, 0), np.float32)), axis=0)).shape == (0,)


def test_several_outputs_and_out(rng, launch):
    k = jitkern.ReductionKernel(
        "T x", "T s, T m", "x", "a + b", "s = a; m = a / _red_n", "0", "sum_mean", preamble=""
    )
    x = rng.standard_normal((20, 30))
    with pytest.raises(jitkern.CompileError, match="_red_n"):
        launch(k)(launch.to_device(x), axis=1)  # _red_n is not a thing: the compile error shows the line
    k = jitkern.ReductionKernel(
        "T x", "T s, T d", "x", "a + b", "s = a; d = a * 2", "0", "sum_double"
    )
    s, dbl = launch(k)(launch.to_device(x), axis=1)
    np.testing.assert_allclose(launch.get(s), x.sum(1), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(launch.get(dbl), 2 * x.sum(1), rtol=1e-13, atol=1e-13)
    out = launch.full((30,), np.nan, np.float64)
    out2 = launch.full((30,), np.nan, np.float64)
    r = launch(k)(launch.to_device(x), axis=0, out=(out, out2))
    assert r[0] is out and r[1] is out2
    np.testing.assert_allclose(launch.get(out), x.sum(0), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(launch.get(out2), 2 * x.sum(0), rtol=1e-13, atol=1e-13)


def test_broadcast_inputs_and_scalars(rng, launch):
    k = jitkern.ReductionKernel("T x, T w, T c", "T y", "x * w + c", "a + b", "y = a", "0", "wsum")
    x = rng.standard_normal((40, 50))
    w = rng.standard_normal((50,))
    np.testing.assert_allclose(
        launch.get(launch(k)(launch.to_device(x), launch.to_device(w), 1.0, axis=1)), (x * w + 1).sum(1), rtol=1e-13, atol=1e-13
    )


def test_axis_errors(ksum, launch):
    d = launch.to_device(np.zeros((3, 4), np.float32))
    with pytest.raises(np.exceptions.AxisError, match="axis 2 is out of bounds"):
        launch(ksum)(d, axis=2)
    with pytest.raises(ValueError, match="duplicate"):
        launch(ksum)(d, axis=(0, -2))


def test_raw_argument_leading_axes(rng, launch):
    k = jitkern.ReductionKernel(
        "T x, raw T w", "T y", "x * w[_J]", "a + b", "y = a", "0", "raw_weights"
    )
    x = rng.standard_normal((4, 3))
    w = rng.standard_normal(4)
    np.testing.assert_allclose(
        launch.get(launch(k)(launch.to_device(x), launch.to_device(w), axis=0)), (x * w[:, None]).sum(0), rtol=1e-13, atol=1e-13
    )
    with pytest.raises(ValueError, match="lead"):
        launch(k)(launch.to_device(x), launch.to_device(w), axis=1)


@pytest.mark.parametrize("shape,axis", [((5, 3), 0), ((4, 2, 3), (0, 1)), ((7,), None),
                                        ((300, 70), 0)])
def test_cupys_index_names_in_map_expr(rng, launch, shape, axis):
    """CuPy's names: ``_i`` the output element, ``_J`` the index within the reduction (C order
    over the reduced axes), ``_j = _J * n_out + _i`` the flat index in the reduced-axes-first
    input space, so a raw copy of the input reads the element with ``w[_j]`` (CuPy's
    first_nonzero idiom: the smallest ``_j`` of a nonzero element)."""
    ins = "T x, raw T w, int64 big"
    weighted = jitkern.ReductionKernel(ins, "float64 y", "x * w[_j]", "a + b", "y = a",
                                       "0", "index_names_j")
    first = jitkern.ReductionKernel(ins, "int64 y", "x != 0 ? (long long)_j : big",
                                    "min(a, b)", "y = a", "big", "index_names_first")
    last_j = jitkern.ReductionKernel(ins, "int64 y", "(long long)_J", "max(a, b)",
                                     "y = a", "-1", "index_names_J")
    x = rng.standard_normal(shape)
    x[rng.random(shape) < 0.5] = 0.0
    w = rng.standard_normal(shape)
    axes = tuple(range(x.ndim)) if axis is None else (axis,) if isinstance(axis, int) else axis
    out_axes = [d for d in range(x.ndim) if d not in axes]
    n_red = int(np.prod([shape[d] for d in axes]))
    n_out = int(np.prod([shape[d] for d in out_axes]))
    big = np.int64(1 << 40)
    dx, dw = launch.to_device(x), launch.to_device(w)
    got = [launch.get(launch(k)(dx, dw, big, axis=axis)).reshape(-1)
           for k in (weighted, first, last_j)]
    # the input with the reduced axes first: row _J, column _i, flat index _j
    flat_x = x.transpose(list(axes) + out_axes).reshape(n_red, n_out)
    flat_w = w.transpose(list(axes) + out_axes).reshape(-1)
    flat = np.arange(n_red * n_out).reshape(n_red, n_out)
    np.testing.assert_allclose(got[0], (flat_x * flat_w[flat]).sum(axis=0), rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_array_equal(got[1], np.where(flat_x != 0, flat, big).min(axis=0))
    np.testing.assert_array_equal(got[2], np.full(n_out, n_red - 1))


@pytest.mark.parametrize(
    "shape,axis", [((1 << 22,), None), ((512, 4096), 1), ((4096, 512), 0), ((100_000, 3), 1)]
)
def test_deterministic_bits(ksum, shape, axis, rng, launch):
    shape = launch.pick(shape, tuple(min(s, 64) for s in shape))  # the simulator: smaller
    x = rng.standard_normal(shape).astype(np.float32)
    d = launch.to_device(x)
    a = launch.get(launch(ksum)(d, axis=axis))
    b = launch.get(launch(ksum)(d, axis=axis))
    assert a.tobytes() == b.tobytes()
    # the same bits, and the right sum (a float32 tree sum: within log2(n) eps of sum |x|)
    x64 = x.astype(np.float64)
    err = np.abs(a - x64.sum(axis=axis))
    assert np.all(err <= 1e-5 * np.abs(x64).sum(axis=axis)), err.max()


@pytest.mark.parametrize(
    "shape,axis",
    [((64, 32, 256), (0, 2)), ((64, 32, 256), (1, 2)), ((3, 40, 1000), (0, 2)),
     ((256, 16, 4096), (0, 2)), ((16, 8, 6), (0, 2))],
)
def test_several_reduced_axes_float32_vs_numpy(l2norm, shape, axis, rng, launch):
    shape = launch.pick(shape, tuple(min(s, 24) for s in shape))  # the simulator: smaller
    x = rng.standard_normal(shape).astype(np.float32)
    want = np.sqrt((x.astype(np.float64) ** 2).sum(axis=axis))
    for keep in (False, True):
        got = launch.get(launch(l2norm)(launch.to_device(x), axis=axis, keepdims=keep))
        np.testing.assert_allclose(got, want.reshape(got.shape), rtol=1e-5)
    # A view one element off (misaligned for vectors) and the same bits twice.
    flat = launch.to_device(rng.standard_normal(x.size + 1).astype(np.float32))
    view = flat[1:].reshape(shape)
    a = launch.get(launch(l2norm)(view, axis=axis))
    b = launch.get(launch(l2norm)(view, axis=axis))
    ref = np.sqrt((launch.get(view).astype(np.float64) ** 2).sum(axis=axis))
    np.testing.assert_allclose(a, ref, rtol=1e-5)
    assert a.tobytes() == b.tobytes()


def test_empty_post_map_writes_every_output(rng, launch):
    k = jitkern.ReductionKernel("T x", "T s, T t", "x", "a + b", "", "0", "two_outs_gpu")
    x = rng.standard_normal((30, 40))
    s, t = launch(k)(launch.to_device(x), axis=1)
    # another summation order: a sum that cancels to near zero differs by n*eps*sum|x|
    bound = x.shape[1] * np.finfo(np.float64).eps * np.abs(x).sum(1)
    np.testing.assert_allclose(launch.get(s), x.sum(1), rtol=1e-12, atol=bound.max())
    np.testing.assert_allclose(launch.get(t), x.sum(1), rtol=1e-12, atol=bound.max())


@pytest.mark.gpu
def test_foreign_inputs_and_outputs(l2norm, rng):
    cupy = pytest.importorskip("cupy")
    for n in (1024, 1024, 1 << 22, 1 << 22, 1000):  # repeats: the generated path
        x = rng.standard_normal(n).astype(np.float32)
        got = float(host(l2norm(cupy.asarray(x))))
        np.testing.assert_allclose(got, np.sqrt((x.astype(np.float64) ** 2).sum()), rtol=1e-5)
    m = rng.standard_normal((64, 300)).astype(np.float32)
    out = cupy.full(300, np.nan, cupy.float32)
    for _ in range(2):
        r = l2norm(cupy.asarray(m), axis=0, out=out)
        assert r is out
        np.testing.assert_allclose(cupy.asnumpy(out), np.sqrt((m.astype(np.float64) ** 2).sum(0)),
                                   rtol=1e-5)


@pytest.mark.gpu
def test_on_a_stream_outputs_and_scratch_follow_it(ksum, rng):
    s = jitkern.Stream()
    x = rng.standard_normal(1 << 22).astype(np.float32)
    d = dev(x)
    with s:
        for _ in range(3):
            r = ksum(d)
    s.synchronize()
    # a float32 sum's error scales with sum(|x|), not with the sum (which may be near 0)
    assert abs(float(host(r)) - x.sum(dtype=np.float64)) <= 1e-5 * np.abs(x).sum(dtype=np.float64)
    r2 = ksum(d, stream=s)
    s.synchronize()
    assert host(r2).tobytes() == host(r).tobytes()
