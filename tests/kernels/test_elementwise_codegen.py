"""ElementwiseKernel without a GPU: layouts, variants, generated code, NVRTC for sm_80/sm_90."""

import collections
import re

import numpy as np
import pytest

from jitkern.toolchain import nvrtc as compiler
from jitkern.errors import KernelArgumentError
from jitkern.compiler.strings import layout as _layout
from jitkern.kernels.elementwise import ElementwiseKernel

ARCHS = ["sm_80", "sm_90"]


@pytest.fixture(scope="module")
def squared_diff():
    return ElementwiseKernel(
        "float32 x, float32 y", "float32 z", "z = (x - y) * (x - y)", "squared_diff"
    )


def _variant(source):
    return re.search(
        r"ElementwiseKernel '\w+': (\w+) loop, (\d+)-d after collapsing, ([\w ]+) "
        r"indices",
        source,
    ).groups()


# -- layout helpers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shapes,expected",
    [
        ([(2, 5), (5,)], (2, 5)),
        ([(3, 1), (1, 4)], (3, 4)),
        ([(), (7,)], (7,)),
        ([], ()),
        ([(0, 3), (3,)], (0, 3)),
        ([(2, 1, 4), (5, 1)], (2, 5, 4)),
    ],
)
def test_broadcast_shape(shapes, expected):
    assert _layout.broadcast_shape(shapes, "k") == expected
    assert expected == np.broadcast_shapes(*shapes) if shapes else True


def test_broadcast_shape_error():
    with pytest.raises(ValueError, match=r"\(2, 5\), \(4,\) cannot be broadcast"):
        _layout.broadcast_shape([(2, 5), (4,)], "k")


def test_collapse():
    shape, strides = _layout.collapse((4, 5, 6), [(120, 24, 4), (0, 0, 4)])
    assert shape == (20, 6) and strides == [(24, 4), (0, 4)]
    shape, strides = _layout.collapse((4, 1, 6), [(24, 24, 4)])
    assert shape == (24,) and strides == [(4,)]
    shape, strides = _layout.collapse((4, 6), [(-24, -4)])
    assert shape == (24,) and strides == [(-4,)]
    shape, strides = _layout.collapse((4, 6), [(4, 16)])  # transposed: no merge
    assert shape == (4, 6)


# -- variants ------------------------------------------------------------------------------


def test_contiguous_is_vector_with_int_indices(squared_diff):
    x = np.zeros(1 << 20, np.float32)
    ins = squared_diff.inspect(x, x, arch="sm_90")
    assert _variant(ins.source) == ("vector", "1", "int")
    assert "_jk_vec<float, 4>" in ins.source


def test_views_and_broadcast_are_strided(squared_diff):
    x = np.zeros((64, 48), np.float32)
    assert (
        _variant(squared_diff.inspect(x[:, ::2], np.float32(1), arch="sm_90").source)[0]
        == "strided"
    )
    assert _variant(squared_diff.inspect(x, x[0], arch="sm_90").source) == (
        "strided_vector",
        "2",
        "int",
    )
    assert _variant(squared_diff.inspect(x, x[:, :1], arch="sm_90").source)[0] == "strided_vector"
    assert _variant(squared_diff.inspect(x[:, 1:4], x[0, 1:4], arch="sm_90").source)[0] == "strided"
    # a scalar broadcast keeps the vector path (the constant is read in place)
    assert _variant(squared_diff.inspect(x, 1.0, arch="sm_90").source)[0] == "vector"


def test_reduce_dims_false_keeps_dimensions():
    k = ElementwiseKernel("T x", "T y", "y = x", "copy_nd", reduce_dims=False)
    assert _variant(k.inspect(np.zeros((4, 5, 6), np.float32), arch="sm_90").source)[:2] == (
        "strided",
        "3",
    )


def test_large_sizes_use_64_bit_indices(squared_diff):
    big = np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), (3 << 30,), (0,))
    out = np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), (3 << 30,), (4,))
    assert _variant(squared_diff.inspect(big, big, out, arch="sm_90").source)[2] == "long long"


def test_output_loads_are_dropped_when_every_element_is_written(squared_diff):
    x = np.zeros(1 << 20, np.float32)
    src = squared_diff.inspect(x, x, arch="sm_90").source
    ptx = compiler.compile_source(src, arch="sm_90", fmt="ptx").data.decode()
    ops = collections.Counter(re.findall(r"(?:ld|st)\.global[.\w]*", ptx))
    # two inputs loaded per stored vector; the output is never read
    assert ops["ld.global.v4.f32"] == 2 * ops["st.global.v4.f32"]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize(
    "dtype",
    [
        "bool",
        "int8",
        "uint16",
        "int32",
        "int64",
        "float16",
        "float32",
        "float64",
        "complex64",
        "complex128",
    ],
)
def test_compiles_every_dtype(arch, dtype):
    k = ElementwiseKernel("T x, T y", "T z", "z = x + y", "add_t")
    x = np.zeros((8, 8), dtype)
    for args in [(x, x), (x[:, ::2], x[0, ::2]), (x, x[0])]:
        ins = k.inspect(*args, arch=arch)
        assert ins.cubin and ins.arch == arch


@pytest.mark.parametrize("arch", ARCHS)
def test_spec_kernels_compile(arch):
    kernels = [
        (
            ElementwiseKernel(
                "T x, raw T y", "T z", "z = x + y[_ind.size() - i - 1]", "add_reverse"
            ),
            (np.zeros(10, np.float32), np.zeros(10, np.float32)),
        ),
        (
            ElementwiseKernel(
                "float64 x, float64 cap", "float64 y", "y = min(max(x, 0.0), cap)", "clipped_relu"
            ),
            (np.zeros(10), 6.0),
        ),
        (
            ElementwiseKernel(
                "complex128 z",
                "float64 mag2",
                "mag2 = z.real() * z.real() + z.imag() * z.imag()",
                "abs_squared",
            ),
            (np.zeros(10, np.complex128),),
        ),
        (
            ElementwiseKernel(
                "float32 x",
                "float32 sin_x, float32 cos_x, float32 tan_x",
                "sin_x = sinf(x); cos_x = cosf(x); tan_x = tanf(x);",
                "trig",
            ),
            (np.zeros(10, np.float32),),
        ),
        (
            ElementwiseKernel("raw T x", "raw T y", "y[i] = x[i]", "all_raw"),
            (np.zeros((3, 4), np.float32),),
        ),
    ]
    for k, args in kernels:
        size = 12 if k.name == "all_raw" else None
        ins = k.inspect(*args, arch=arch, size=size)
        assert ins.cubin


def test_cached_codes():
    k = ElementwiseKernel("T x", "T y", "y = x", "copy_cc")
    with pytest.raises(RuntimeError, match="exactly one"):
        k.cached_code
    k.inspect(np.zeros(4, np.float32), arch="sm_90")
    assert "copy_cc" in k.cached_code
    k.inspect(np.zeros(4, np.float64), arch="sm_90")
    assert len(k.cached_codes) == 2


# -- call-time errors (found before anything touches a GPU) -----------------------------------


def test_errors_before_launch():
    k = ElementwiseKernel("T x, T y", "T z", "z = x + y", "add_e")
    x = np.zeros(4, np.float32)
    with pytest.raises(KernelArgumentError, match="got 4 argument"):
        k.inspect(x, x, x, x, arch="sm_90")
    with pytest.raises(KernelArgumentError, match="outputs must be arrays"):
        k.inspect(x, x, 1.0, arch="sm_90")
    with pytest.raises(ValueError, match="cannot be broadcast"):
        k.inspect(x, np.zeros(3, np.float32), arch="sm_90")
    with pytest.raises(ValueError, match=r"output 'z' has shape \(5,\)"):
        k.inspect(np.zeros((2, 5), np.float32), x[:1], np.zeros(5, np.float32), arch="sm_90")
    with pytest.raises(TypeError, match="'T'"):
        k.inspect(x, np.zeros(4, np.float64), arch="sm_90")
    raw = ElementwiseKernel("raw T x", "raw T y", "y[i] = x", "raw_e")
    with pytest.raises(KernelArgumentError, match="output 'y': outputs must be arrays"):
        raw.inspect(x, 1.0, size=4, arch="sm_90")


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(in_params="T x", out_params="", operation="", name="k"), "at least one output"),
        (
            dict(in_params="T x", out_params="T y", operation="y = x", name="bad name"),
            "kernel name",
        ),
        (dict(in_params="T x", out_params="T y", operation=3, name="k"), "operation"),
        (dict(in_params="T x", out_params="T x", operation="", name="k"), "already an input"),
    ],
)
def test_definition_errors(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        ElementwiseKernel(**kwargs)


def test_host_arrays_are_refused_at_call():
    k = ElementwiseKernel("T x", "T y", "y = x", "host_e")
    with pytest.raises(TypeError, match="jitkern.asarray"):
        k(np.zeros(4, np.float32))


# -- broadcasting against NumPy (hypothesis) -------------------------------------------------

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


@settings(max_examples=200, deadline=None)
@given(hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=5, max_side=4))
def test_broadcast_shape_matches_numpy(shapes):
    assert _layout.broadcast_shape(shapes.input_shapes, "k") == shapes.result_shape


@settings(max_examples=200, deadline=None)
@given(
    hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5),
    st.lists(st.sampled_from([1, -1, 2]), min_size=4, max_size=4),
)
def test_collapse_preserves_element_order(shape, steps):
    full_shape = [s * abs(k) for s, k in zip(shape, steps)]
    full = np.arange(int(np.prod(full_shape)), dtype=np.int32).reshape(full_shape)
    view = full[tuple(slice(None, None, k) for k in steps[: len(shape)])]
    new_shape, (new_strides,) = _layout.collapse(view.shape, [view.strides])
    again = np.lib.stride_tricks.as_strided(view, new_shape, new_strides)
    np.testing.assert_array_equal(again.ravel(), view.ravel())
