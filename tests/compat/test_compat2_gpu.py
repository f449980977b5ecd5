"""GPU: the second CuPy audit's features against NumPy: jit.thrust's fancy iterators (nvcc),
``_ind.get()`` in ElementwiseKernel operations (every loop variant), ReductionKernel without
an identity, and RawModule globals viewed by jitkern and by CuPy (``to_cupy()``)."""

import compat2_kernels as K
import numpy as np
import pytest

import jitkern

def poisoned(shape, dtype):
    fill = np.nan if np.dtype(dtype).kind in "fc" else -7
    return jitkern.asarray(np.full(shape, fill, dtype))


# -- 1. jit.thrust.make_counting_iterator / make_constant_iterator -------------------


def test_fancy_rows_match_numpy(rng, launch):
    rows = 8
    x, starts = K.fancy_inputs(rng, rows)
    outs = [launch.to_device(o) for o in K.fancy_outputs(rows)]
    x_d, starts_d = launch.to_device(x.ravel()), launch.to_device(starts)
    launch(K.fancy_rows)[1, rows](x_d, starts_d, *outs, K.ROW)
    squares, scanned, ints, floats = K.fancy_expected(x, starts)
    np.testing.assert_array_equal(launch.get(outs[0]), squares)
    np.testing.assert_array_equal(launch.get(outs[1]), scanned)
    np.testing.assert_array_equal(launch.get(outs[2]).reshape(rows, 8), ints.reshape(rows, 8))
    np.testing.assert_array_equal(launch.get(outs[3]), floats)


@pytest.mark.parametrize("changed", [True, False])
def test_the_other_rows_over_fancy_ranges_match_numpy(rng, changed, launch):
    n = 8
    x = np.arange(n, dtype=np.int32)
    if changed:  # mismatch finds the changed position
        p = int(rng.integers(0, n))
        x[p] = p + int(rng.integers(1, 50))
    outs = launch.to_device(np.full(8 * n, -7, np.int32))
    idx = launch.to_device(np.full(11, -7, np.int64))
    launch(K.more_fancy)[1, 1](launch.to_device(x), outs, idx)
    expected_outs, expected_idx = K.more_expected(x)
    np.testing.assert_array_equal(launch.get(outs).reshape(8, n), expected_outs)
    np.testing.assert_array_equal(launch.get(idx), expected_idx)


# -- 2. _ind.get() -------------------------------------------------------------------------


def _indices(shape):
    return np.indices(shape)


def test_ind_get_is_the_index_in_the_full_shape_with_reduce_dims_false(rng, launch):
    k = jitkern.ElementwiseKernel(
        "T x",
        "T y",
        "y = x + _ind.get()[0] * 100 + _ind.get()[1] * 10 + _ind.get()[2] + _ind.ndim * 1000",
        "ind3_gpu",
        reduce_dims=False,
    )
    h = rng.standard_normal((3, 4, 5))
    y = launch.poisoned((3, 4, 5), np.float64, fill=-7)
    launch(k)(launch.to_device(h), y)
    i0, i1, i2 = _indices((3, 4, 5))
    np.testing.assert_array_equal(launch.get(y), h + i0 * 100 + i1 * 10 + i2 + 3000)


def test_ind_get_follows_broadcasting(rng, launch):
    k = jitkern.ElementwiseKernel(
        "T x, T b",
        "T y",
        "y = x + b + _ind.get()[0] * 100 + _ind.get()[1] * 10 + _ind.get()[2]",
        "ind_bcast_gpu",
        reduce_dims=False,
    )
    xh = rng.standard_normal((3, 1, 5))
    bh = rng.standard_normal((4, 1))
    y = launch(k)(launch.to_device(xh), launch.to_device(bh))
    i0, i1, i2 = _indices((3, 4, 5))
    np.testing.assert_array_equal(launch.get(y), xh + bh + i0 * 100 + i1 * 10 + i2)


def test_ind_get_indexes_a_strided_raw_array(rng, launch):
    k = jitkern.ElementwiseKernel(
        "T x, raw T w", "T y", "y = x * w[_ind.get()]", "ind_raw_gpu", reduce_dims=False
    )
    base = rng.standard_normal((3, 5))
    w = launch.to_device(base).T  # (5, 3), strided
    xh = rng.standard_normal((5, 3))
    y = launch.poisoned((5, 3), np.float64, fill=-7)
    launch(k)(launch.to_device(xh), w, y)
    np.testing.assert_array_equal(launch.get(y), xh * base.T)


@pytest.mark.parametrize("shape", [(5, 7), (4, 8), (1000,)])
def test_ind_get_of_a_collapsed_contiguous_launch_is_the_flat_index(shape, launch):
    k = jitkern.ElementwiseKernel(
        "T x", "int64 y", "y = _ind.get()[0] + (long long)x", "ind_flat_gpu"
    )
    y = launch.poisoned(shape, np.int64, fill=-7)
    launch(k)(launch.to_device(np.zeros(shape, np.float32)), y)
    np.testing.assert_array_equal(launch.get(y), np.arange(np.prod(shape)).reshape(shape))


def test_ind_get_in_the_strided_vector_loop_is_row_and_column(rng, launch):
    k = jitkern.ElementwiseKernel(
        "T x, T b",
        "T y, T where",
        "y = x + b; where = _ind.get()[0] * 1000 + _ind.get()[1]",
        "ind_rowvec_gpu",
    )
    xh = rng.standard_normal((8, 64)).astype(np.float32)
    bh = rng.standard_normal(64).astype(np.float32)
    y, where = launch.poisoned((8, 64), np.float32), launch.poisoned((8, 64), np.float32)
    launch(k)(launch.to_device(xh), launch.to_device(bh), y, where)
    if not launch.simulated:  # (the simulator has one loop for every layout)
        assert any(key[1] == "strided_vector" for key in k.cached_codes)
    i0, i1 = _indices((8, 64))
    np.testing.assert_array_equal(launch.get(where), (i0 * 1000 + i1).astype(np.float32))
    np.testing.assert_array_equal(launch.get(y), xh + bh)


def test_ind_get_of_a_transposed_view_is_its_row_and_column(rng, launch):
    k = jitkern.ElementwiseKernel(
        "T x", "T y", "y = x + _ind.get()[0] * 100 + _ind.get()[1]", "ind_t_gpu"
    )
    base = rng.standard_normal((6, 5))
    y = launch(k)(launch.to_device(base).T)
    i0, i1 = _indices((5, 6))
    np.testing.assert_array_equal(launch.get(y), base.T + i0 * 100 + i1)


# -- 3. ReductionKernel without an identity -------------------------------------------


@pytest.mark.parametrize("identity", [None, ""])
def test_reduction_without_identity_starts_from_the_first_element(rng, identity, launch):
    k = jitkern.ReductionKernel("T x", "T y", "x", "max(a, b)", "y = a", identity, "kmax_gpu")
    assert k.identity == "" and k.reduce_type == "T"
    h = -np.abs(rng.standard_normal((7, 300))) - 1.0  # all negative: a 0 start would win
    np.testing.assert_array_equal(launch.get(launch(k)(launch.to_device(h), axis=1)), h.max(axis=1))


# -- 4. RawModule.get_global -------------------------------------------------------------

GLOBALS = r"""
__device__ float coeffs[4];
extern "C" __global__ void scale(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * coeffs[i % 4];
}
"""


def _run_scale(mod, h):
    y = poisoned(h.size, np.float32)
    mod.get_function("scale")((1,), (128,), (jitkern.asarray(h), y, np.int32(h.size)))
    return y.get()


@pytest.mark.gpu
def test_get_global_viewed_by_jitkern(rng):
    mod = jitkern.RawModule(code=GLOBALS)
    ptr = mod.get_global("coeffs")
    assert ptr.size == 16
    c = rng.standard_normal(4).astype(np.float32)
    jitkern.ndarray((4,), np.float32, memptr=ptr).set(c)
    h = rng.standard_normal(100).astype(np.float32)
    np.testing.assert_array_equal(_run_scale(mod, h), h * np.tile(c, 25))


@pytest.mark.gpu
def test_get_global_to_cupy_is_a_cupy_memory_pointer(rng):
    cupy = pytest.importorskip("cupy")
    mod = jitkern.RawModule(code=GLOBALS)
    ptr = mod.get_global("coeffs")
    mem = ptr.to_cupy()
    assert isinstance(mem, cupy.cuda.MemoryPointer) and mem.ptr == ptr.ptr
    view = cupy.ndarray((4,), cupy.float32, memptr=mem)  # CuPy's own idiom
    c = rng.standard_normal(4).astype(np.float32)
    view[...] = cupy.asarray(c)
    cupy.cuda.runtime.deviceSynchronize()
    h = rng.standard_normal(100).astype(np.float32)
    np.testing.assert_array_equal(_run_scale(mod, h), h * np.tile(c, 25))
    # and back: jitkern reads what CuPy wrote
    np.testing.assert_array_equal(jitkern.ndarray((4,), np.float32, memptr=ptr).get(), c)


@pytest.mark.gpu
def test_jitkern_ndarray_views_a_cupy_memory_pointer(rng):
    cupy = pytest.importorskip("cupy")
    h = rng.standard_normal((3, 4)).astype(np.float32)
    src = cupy.asarray(h)
    cupy.cuda.runtime.deviceSynchronize()
    view = jitkern.ndarray((3, 4), np.float32, memptr=src.data)
    np.testing.assert_array_equal(view.get(), h)
