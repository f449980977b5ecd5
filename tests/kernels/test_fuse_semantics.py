"""fuse follows NumPy's semantics (issue 25): writes into argument views (``x[:] = v``,
``x[...] = v``, ``x[0] = v``), augmented assignment of scalars, indexing values computed in
the function (a batch-norm's ``mean[expander]``), and ``get_array_module`` on traced values.

Each body runs as a twin (GPU with jitkern arrays; simulator with NumPy arrays) against the
same Python function run by NumPy: on the same dtypes for types and exact results, on
float64 for values. Written arguments are poisoned first.
"""

import types

import numpy as np
import pytest

import jitkern
from jitkern.kernels.fuse import FuseTraceError
from jitkern.kernels.fuse.graph import SequentialGraph
from test_fuse_alias import compile_every_kernel

# A stand-in for CuPy: fuse reads a module named cupy as NumPy's namespace.
cp = types.ModuleType("cupy")


def _f64(rng, shape):
    return rng.standard_normal(shape)


def _run(launch, fn, *host):
    """(the fused call's arguments after it ran as NumPy arrays, its result) and NumPy's."""
    want_args = [a.copy() if isinstance(a, np.ndarray) else a for a in host]
    with np.errstate(all="ignore"):
        want = fn.func(*want_args)
    device = [launch.to_device(a) if isinstance(a, np.ndarray) else a for a in host]
    got = launch(fn)(*device)
    got_args = [launch.get(d) if isinstance(a, np.ndarray) else d for a, d in zip(host, device)]
    if isinstance(got, tuple):
        return (got_args, tuple(launch.get(g) for g in got)), (want_args, want)
    return (got_args, None if got is None else launch.get(got)), (want_args, want)


def _same(got, want, exact=True):
    (got_args, got_result), (want_args, want_result) = got, want
    check = np.testing.assert_array_equal if exact else (
        lambda g, w: np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12))
    for g, w in zip(got_args, want_args):
        if isinstance(w, np.ndarray):
            assert g.dtype == w.dtype
            check(g, w)
    if want_result is None:
        assert got_result is None
        return
    pairs = zip(got_result, want_result) if isinstance(want_result, tuple) else \
        [(got_result, want_result)]
    for g, w in pairs:
        assert g.dtype == np.asarray(w).dtype and g.shape == np.shape(w)
        check(g, w)


# ---------------------------------------------------------------------------
# x[...] = v, x[:] = v, x[0] = v


@jitkern.fuse()
def set_ellipsis(y, x):
    y[...] = x
    return y


@jitkern.fuse()
def set_colon(y, x):
    y[:] = x
    return y


@jitkern.fuse()
def set_row_and_element(x, v, s):
    x[0] = v
    x[2, 1] = s
    x[:, 3] = s * 2


@jitkern.fuse()
def set_then_read_whole(x, v):
    x[1:3] = v
    return x * 2


@jitkern.fuse()
def element_in_place(x):
    x[0, 0] += 1
    v = x[1, 1]  # NumPy: a scalar, a copy; += rebinds it and writes nothing
    v += 100
    return x + v


@pytest.mark.parametrize("dst, src", [
    ("int32", "float64"), ("float32", "int64"), ("bool", "float64"), ("float64", "complex128"),
    ("complex64", "float32"), ("uint8", "int16"), ("float16", "float64"),
])
def test_setitem_of_a_whole_argument_casts_as_numpy(launch, rng, dst, src):
    """``y[...] = x`` and ``y[:] = x`` cast unsafely, as NumPy's assignment does (``y += x``
    keeps same_kind); a broadcast row fills every row; then ``y`` is read back."""
    x = (rng.standard_normal((5, 6)) * 40).astype(src)
    if np.dtype(src).kind == "c":
        x = x + 1j
    y = np.full((5, 6), 7, dst)
    for fn, value in ((set_ellipsis, x), (set_colon, x[2])):
        with np.errstate(all="ignore"), __import__("warnings").catch_warnings():
            __import__("warnings").simplefilter("ignore")
            _same(*_run(launch, fn, y, value))


def test_setitem_of_views_rows_elements_and_columns(launch, rng):
    x, v, s = _f64(rng, (4, 6)), _f64(rng, (6,)), float(rng.standard_normal())
    _same(*_run(launch, set_row_and_element, x, v, s))
    _same(*_run(launch, set_then_read_whole, x, v[:1]))
    _same(*_run(launch, element_in_place, x))
    ints = rng.integers(-9, 9, (4, 6)).astype(np.int16)
    _same(*_run(launch, set_row_and_element, ints, v, 2.75))  # unsafe: float into int16


def test_a_written_view_read_back_runs_in_memory_order():
    x = np.zeros((4, 6))
    assert isinstance(set_then_read_whole.graph_for(x, x[0]), SequentialGraph)


@pytest.mark.parametrize("fn, error, words", [
    (lambda x: x.__setitem__(slice(None), 1), IndexError, "0-dimensional"),
    (lambda x: (x * 2).__setitem__(0, 1), FuseTraceError, "can only be written whole"),
    (lambda x: x.sum().__setitem__(Ellipsis, 1), FuseTraceError, "does not support item"),
    (lambda x: x.__setitem__(x > 0, 0), FuseTraceError, "is not supported in a fused"),
], ids=["0-d colon", "computed part", "scalar", "mask"])
def test_setitem_refusals_name_the_line(fn, error, words):
    shape = () if "0-d" in words else (4,)
    with pytest.raises(error, match=words) as info:
        jitkern.fuse(fn).graph_for(np.zeros(shape))
    assert isinstance(info.value, jitkern.JitkernError)
    assert "test_fuse_semantics.py" in str(info.value)


# ---------------------------------------------------------------------------
# scalars: += rebinds (a scalar is immutable), NumPy's and CuPy's promotion


@jitkern.fuse()
def scalar_updates(x, s, t):
    s += 1.5  # an int scalar becomes a float
    t *= 2
    total = x.sum()
    total += 0.25  # a reduction to a scalar: rebinds too
    return x * s + t, total


def test_augmented_assignment_of_scalars_rebinds(launch, rng):
    x = rng.integers(-9, 9, (3, 5)).astype(np.int32)
    for s, t in ((2, np.int16(3)), (np.int64(-4), 1.5), (True, 2)):
        _same(*_run(launch, scalar_updates, x, s, t))


def test_in_place_on_an_int_array_temporary_is_refused_as_numpy_refuses():
    def temp(x):
        t = x * 2
        t += 1.5
        return t

    with pytest.raises(TypeError, match="Cannot cast"):
        temp(np.ones(3, np.int32))  # NumPy's UFuncTypeError
    with pytest.raises(FuseTraceError, match="cannot cast float64 to int32"):
        jitkern.fuse(temp).graph_for(np.ones(3, np.int32))


# ---------------------------------------------------------------------------
# indexing values computed in the function


@jitkern.fuse()
def batch_norm(x, gamma, beta, eps):
    axis = (0, 2, 3)
    expander = [None for _ in range(x.ndim)]
    expander[1] = slice(None)
    expander = tuple(expander)
    mean = x.mean(axis=axis)
    var = ((x - mean[expander]) ** 2).mean(axis=axis)
    y = (x - mean[expander]) / np.sqrt(var[expander] + eps)
    return gamma[expander] * y + beta[expander], mean, var


@jitkern.fuse()
def outer_of_computed(x, y):
    t = np.exp(x) * y
    return t[:, None] - t[None, :], t[..., None] * 2


@jitkern.fuse()
def index_a_reduction(x):
    s = x.sum(axis=0)
    return s[1] + x[0] * s[None, ::-1] + s[-1:]


def test_batch_norm_with_an_expander(launch, rng):
    x = rng.standard_normal((4, 3, 5, 6)) * 3 + 1
    gamma, beta = rng.standard_normal(3), rng.standard_normal(3)
    got = launch(batch_norm)(launch.to_device(x), launch.to_device(gamma),
                             launch.to_device(beta), 1e-5)
    want = batch_norm.func(x, gamma, beta, 1e-5)
    for g, w in zip(got, want):
        np.testing.assert_allclose(launch.get(g), w, rtol=1e-11, atol=1e-12)
    f32 = [a.astype(np.float32) for a in (x, gamma, beta)]
    got = launch(batch_norm)(*[launch.to_device(a) for a in f32], 1e-5)
    assert launch.get(got[0]).dtype == np.float32
    np.testing.assert_allclose(launch.get(got[0]), want[0], rtol=1e-4, atol=1e-4)


def test_indexing_computed_values_and_reductions(launch, rng):
    x, y = _f64(rng, (7,)), _f64(rng, (7,))
    _same(*_run(launch, outer_of_computed, x, y), exact=False)
    _same(*_run(launch, index_a_reduction, _f64(rng, (5, 4))), exact=False)


@jitkern.fuse()
def narrowed(x, y):
    t = x * y  # y broadcasts along some axes: those keep their one element
    d = np.exp(t)
    return t[1:, ::-1] + t[0], d[:, 1:] - d[:, :-1], t[-1, 2]


@pytest.mark.parametrize("xs, ys", [((3, 4), (4,)), ((3, 1), (4,)), ((1, 4), (3, 1))])
def test_any_basic_index_of_a_computed_value(launch, rng, xs, ys):
    _same(*_run(launch, narrowed, _f64(rng, xs), _f64(rng, ys)), exact=False)


def test_a_narrowed_computed_value_makes_the_plan_per_shape(rng):
    finite_difference = jitkern.fuse(lambda x: np.exp(x)[1:] - np.exp(x)[:-1])
    for n in (5, 9, 5):
        x = _f64(rng, (n,))
        got = finite_difference.simulate(x)
        np.testing.assert_allclose(got, np.exp(x)[1:] - np.exp(x)[:-1], rtol=1e-15)


# ---------------------------------------------------------------------------
# get_array_module


MODULES_SEEN = []


@jitkern.fuse()
def softplus_cupy(x):
    xp = cp.get_array_module(x)
    MODULES_SEEN.append(xp is cp)  # as CuPy's answer for its proxies: True while traced
    return xp.maximum(0, x) + xp.log1p(xp.exp(-abs(x))) + xp.sinc(x) * xp.pi


@jitkern.fuse()
def softplus_jitkern(x):
    xp = jitkern.get_array_module(x)
    return xp.maximum(0, x) + xp.log1p(xp.exp(-abs(x))) + xp.sinc(x)


def test_get_array_module_on_traced_values(launch, rng):
    x = _f64(rng, (40,)) * 3
    for fn in (softplus_cupy, softplus_jitkern):
        MODULES_SEEN.clear()
        fn.clear_cache()
        got = launch.get(launch(fn)(launch.to_device(x)))
        assert MODULES_SEEN in ([], [True])  # (softplus_jitkern records nothing)
        want = fn(x)  # NumPy arrays: the NumPy path, where get_array_module gives numpy
        assert isinstance(want, np.ndarray) and MODULES_SEEN[-1:] in ([], [False])
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("fn, args", [
    (set_row_and_element, (np.zeros((4, 6), np.int16), np.zeros(6), 2.5)),
    (set_then_read_whole, (np.zeros((4, 6)), np.zeros(1))),
    (element_in_place, (np.zeros((4, 6)),)),
    (batch_norm, (np.zeros((2, 3, 4, 5), np.float32), np.zeros(3, np.float32),
                  np.zeros(3, np.float32), 1e-5)),
    (outer_of_computed, (np.zeros(7), np.zeros(7))),
    (index_a_reduction, (np.zeros((5, 4)),)),
    (narrowed, (np.zeros((3, 1)), np.zeros(4))),
    (set_ellipsis, (np.zeros((3, 4), np.int32), np.zeros((3, 4), np.complex128))),
    (set_colon, (np.zeros((3, 4), np.float16), np.zeros(4, np.uint8))),
    (scalar_updates, (np.zeros((3, 5), np.int32), 2, np.int16(3))),
], ids=["setitem", "read back", "element", "batch norm", "outer", "reduction index",
        "narrowed", "complex into int", "uint8 into half", "scalars"])
def test_kernels_compile(fn, args):
    assert compile_every_kernel(fn, *args) >= 1
