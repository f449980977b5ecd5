"""Shape/stride arithmetic checked against NumPy itself (no GPU)."""

import numpy as np
import pytest

from jitkern import layout

SHAPE = (4, 5, 6)


def _host(dtype=np.float32):
    return np.arange(np.prod(SHAPE), dtype=dtype).reshape(SHAPE)


KEYS = [
    0, -1, 3, slice(None), slice(1, 3), slice(None, None, -1), slice(None, None, 2),
    slice(3, 0, -2), slice(-2, None), slice(10, 20), slice(0, 0),
    (1, 2), (1, 2, 3), (-1, -2, -3), (Ellipsis, 1), (1, Ellipsis), (None, 1), (1, None, 2),
    (slice(None, None, -1), Ellipsis, slice(None, None, -3)), (None, Ellipsis, None),
    (slice(1, None, 2), None, -1, slice(None, None, -1)), Ellipsis, (), np.int64(2),
    (np.int32(-1), slice(None), np.uint8(1)),
]


@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_index_matches_numpy(key):
    h = _host()
    k = key if isinstance(key, tuple) else (key,)
    view = h[k] if any(x is Ellipsis for x in k) else h[k + (Ellipsis,)]  # arrays, not scalars
    shape, strides, offset = layout.index(h.shape, h.strides, key)
    assert shape == view.shape
    if view.size:
        assert strides == view.strides
        assert offset == view.ctypes.data - h.ctypes.data


_BASIC_ONLY = r"only integers, slices .* valid indices"


@pytest.mark.parametrize(
    "key, message",
    [
        ((1, 2, 3, 4), "too many indices"),
        ((Ellipsis, Ellipsis), "single ellipsis"),
        (4, "index 4 is out of bounds for axis 0 with size 4"),
        (-5, "index -5 is out of bounds for axis 0 with size 4"),
        ((0, 5), "index 5 is out of bounds for axis 1 with size 5"),
        ([1, 2], _BASIC_ONLY),
        (np.array([1]), _BASIC_ONLY),
        (True, _BASIC_ONLY),
        (1.5, _BASIC_ONLY),
        ("a", _BASIC_ONLY),
    ],
)
def test_index_errors(key, message):
    h = _host()
    with pytest.raises(IndexError, match=message):
        layout.index(h.shape, h.strides, key)


def test_index_messages():
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 5"):
        layout.index(SHAPE, (120, 24, 4), (0, 7))
    with pytest.raises(IndexError, match="basic indexing"):
        layout.index(SHAPE, (120, 24, 4), [0, 1])
    with pytest.raises(IndexError, match="too many indices"):
        layout.index(SHAPE, (120, 24, 4), (0, 0, 0, 0))


VIEWS = [
    (slice(None),), (slice(None, None, -1),), (slice(None), slice(None, None, 2)),
    (slice(1, 3), slice(None), slice(None, None, -1)), (Ellipsis, slice(0, 1)), (None,),
    (slice(None), None, slice(None)),
]
NEWSHAPES = [(120,), (-1,), (4, 30), (2, 2, 5, 6), (20, -1), (1, 120, 1), (6, 5, 4), (3, 40)]


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("key", VIEWS, ids=repr)
@pytest.mark.parametrize("newshape", NEWSHAPES, ids=repr)
def test_reshape_strides_match_numpy(key, newshape, transpose):
    h = _host()
    v = h.T[key] if transpose else h[key]
    try:
        target = layout.resolve_shape(v.size, newshape)
    except ValueError as exc:
        with pytest.raises(ValueError) as numpy_error:  # NumPy refuses it too, for the same reason
            v.reshape(newshape)
        assert str(exc).split(" (")[0] == str(numpy_error.value).split(" (")[0]
        return
    strides = layout.reshape_strides(v.shape, v.strides, v.itemsize, target)
    expected = v.reshape(target)
    if strides is None:
        assert not np.shares_memory(expected, v) or expected.size <= 1
    else:
        assert np.shares_memory(expected, v) or v.size == 0
        manual = np.lib.stride_tricks.as_strided(v, target, strides)
        assert np.array_equal(manual, expected)


def test_resolve_shape():
    assert layout.resolve_shape(12, (3, -1)) == (3, 4)
    assert layout.resolve_shape(12, [12]) == (12,)
    assert layout.resolve_shape(0, (0, 5)) == (0, 5)
    for bad, message in [
        ((5, -1), r"cannot reshape array of size 12 into shape \(5, -1\)"),
        ((-1, -1), "only specify one unknown dimension"),
        ((13,), r"cannot reshape array of size 12 into shape \(13,\)"),
        ((-2, 6), "negative dimensions"),
    ]:
        with pytest.raises(ValueError, match=message):
            layout.resolve_shape(12, bad)


@pytest.mark.parametrize("shape", [(), (0,), (1,), (5,), (1, 5), (5, 1), (3, 4, 5), (2, 0, 3),
                                   (1, 1, 7)])
def test_contiguity_matches_numpy(shape):
    h = np.zeros(shape, np.float64)
    for v in (h, h.T, np.asfortranarray(h), h[..., ::2] if h.ndim else h, h[::-1] if h.ndim else h):
        assert layout.is_c_contiguous(v.shape, v.strides, 8) == v.flags.c_contiguous
        assert layout.is_f_contiguous(v.shape, v.strides, 8) == v.flags.f_contiguous
    if h.size:  # NumPy gives empty arrays all-zero strides; any strides are valid there
        assert layout.c_strides(shape, 8) == h.strides
        assert layout.f_strides(shape, 8) == np.zeros(shape, order="F").strides


def test_span():
    h = _host(np.float64)
    for key in [(slice(None),), (slice(None, None, -1), slice(None), slice(None, None, -2)),
                (1, slice(None, None, 3))]:
        v = h[key]
        lo, hi = layout.span(v.shape, v.strides, 8)
        addrs = [v[idx + (Ellipsis,)].ctypes.data - v.ctypes.data for idx in np.ndindex(v.shape)]
        assert lo == min(addrs) and hi == max(addrs) + 8
    assert layout.span((0, 4), (32, 8), 8) == (0, 0)


@pytest.mark.parametrize("axes", [(), (1, 0, 2), (2, 0, 1), (-1, 0, 1), ((0, 2, 1),)])
def test_transpose_axes(axes):
    h = _host()
    perm = layout.transpose_axes(3, axes)
    expected = h.transpose(*axes) if axes else h.transpose()
    assert tuple(h.shape[i] for i in perm) == expected.shape
    assert tuple(h.strides[i] for i in perm) == expected.strides


def test_transpose_axes_errors():
    with pytest.raises(ValueError, match="repeated axis"):
        layout.transpose_axes(3, (0, 0, 1))
    with pytest.raises(ValueError, match="don't match"):
        layout.transpose_axes(3, (0, 1))
    with pytest.raises(ValueError, match="out of bounds"):
        layout.transpose_axes(2, (0, 5))


def test_broadcast_strides():
    assert layout.broadcast_strides((3,), (8,), (4, 3)) == (0, 8)
    assert layout.broadcast_strides((4, 1), (8, 8), (4, 3)) == (8, 0)
    assert layout.broadcast_strides((), (), (2, 2)) == (0, 0)
    with pytest.raises(ValueError, match="could not broadcast"):
        layout.broadcast_strides((2,), (8,), (4, 3))


def test_collapse():
    # a C-contiguous 3-D array is one run
    assert layout.collapse((4, 5, 6), (120, 24, 4)) == ((120,), [(4,)])
    # length-1 axes vanish; a transposed operand blocks merging
    dims, (a, b) = layout.collapse((4, 1, 6), (24, 24, 4), (4, 999, 16))
    assert dims == (4, 6) and a == (24, 4) and b == (4, 16)
    # a step in the last axis keeps the outer axis merged only where it lines up
    assert layout.collapse((3, 4), (32, 8)) == ((12,), [(8,)])
    assert layout.collapse((3, 4), (64, 8)) == ((3, 4), [(64, 8)])
    assert layout.collapse((1, 1), (8, 8)) == ((1,), [(0,)])
    # zero strides (broadcast) merge with each other
    assert layout.collapse((3, 4), (0, 0)) == ((12,), [(0,)])


def test_collapse_preserves_order():
    h = _host()
    for v in (h[::-1, :, ::2], h.transpose(1, 0, 2)[:, ::-1], h[:, 1:4, :]):
        dims, (st,) = layout.collapse(v.shape, v.strides)
        flat = np.lib.stride_tricks.as_strided(v, dims, st)
        assert np.array_equal(flat.ravel(), v.ravel())


def test_normalize_shape():
    assert layout.normalize_shape(5) == (5,)
    assert layout.normalize_shape(np.int64(5)) == (5,)
    assert layout.normalize_shape([2, np.int32(3)]) == (2, 3)
    assert layout.normalize_shape(()) == ()
    with pytest.raises(ValueError, match="negative"):
        layout.normalize_shape((2, -1))
    with pytest.raises(TypeError, match="shape: expected an int or a sequence of ints, got 2.5"):
        layout.normalize_shape(2.5)


def test_ranges_overlap():
    assert layout.ranges_overlap((0, 10), (5, 15))
    assert not layout.ranges_overlap((0, 10), (10, 20))
    assert not layout.ranges_overlap((0, 0), (0, 20))


# -- one element in several axes: the two callers of collapse keep their edge ------------
# (arrays' copy kernels loop over one axis of length 1; the string kernels' launch struct
# has no axis at all)


def _one_element_view(rng, dtype):
    """A (1, 1, 1) view picked at a random place of a random 3-D array (strides not C)."""
    base = rng.standard_normal((3, 4, 5)).astype(dtype)
    i, j, k = (int(rng.integers(0, n)) for n in base.shape)
    return base[i : i + 1, j : j + 1, k : k + 1]


def test_an_all_size_1_elementwise_launch_collapses_to_no_axis(rng):
    from jitkern import ElementwiseKernel

    k = ElementwiseKernel("T x, T y", "T z", "z = x * y + _ind.size()", "one_elem")
    x, y = _one_element_view(rng, np.float32), _one_element_view(rng, np.float32)
    assert x.strides != layout.c_strides(x.shape, 4)
    source = k.inspect(x, y, arch="sm_90").source
    assert "ElementwiseKernel 'one_elem': linear loop, 0-d after collapsing" in source
    keep = ElementwiseKernel("T x", "T z", "z = x", "one_keep", reduce_dims=False)
    source = keep.inspect(x, arch="sm_90").source
    assert "ElementwiseKernel 'one_keep': strided loop, 3-d after collapsing" in source


def test_an_all_size_1_elementwise_launch_matches_numpy(rng, launch):
    import jitkern

    k = jitkern.ElementwiseKernel("T x, T y", "T z", "z = x * y + _ind.size()", "one_elem")
    hx, hy = _one_element_view(rng, np.float64), _one_element_view(rng, np.float64)
    x = launch.to_device(np.ascontiguousarray(rng.standard_normal((3, 4, 5))))[1:2, 2:3, 3:4]
    x[...] = launch.to_device(np.ascontiguousarray(hx))
    z = launch.poisoned((1, 1, 1), np.float64)
    launch(k)(x, launch.to_device(hy), z)
    np.testing.assert_allclose(launch.get(z), hx * hy + 1, rtol=1e-15)


@pytest.mark.gpu
def test_an_all_size_1_strided_copy_matches_numpy(rng):
    import jitkern

    host = rng.standard_normal((3, 4, 5))
    d = jitkern.asarray(host)
    i, j, k = (int(rng.integers(0, n)) for n in host.shape)
    view = d[i : i + 1, j : j + 1, k : k + 1]
    out = jitkern.full((1, 1, 1), np.nan, np.float64)
    out[...] = view  # a strided same-type copy: collapse keeps one axis of length 1
    assert np.array_equal(out.get(), host[i : i + 1, j : j + 1, k : k + 1])
    assert np.array_equal(view.astype(np.float32).get(), host[i : i + 1, j : j + 1, k : k + 1].astype(np.float32))
