"""jitkern.fuse: NumPy path and generated kernels on the CPU, device arrays on a GPU."""

import numpy as np
import pytest

import jitkern
from jitkern.kernels.fuse import FuseError, fuse


@fuse()
def squared_diff(x, y):
    return (x - y) * (x - y)


@fuse(kernel_name="sum_of_products")
def sum_of_products(x, y):
    return np.sum(x * y, axis=-1)


@fuse
def mixed(x, y, s):
    t = np.where(x > y, x, y * s)
    return np.exp(-t) + np.sqrt(abs(x)) // 2 + x % 3 - np.maximum(x, 1.5)


@fuse()
def method_max(x):
    return (x * 2).max(axis=0, keepdims=True)


def test_spec_numpy_path():
    x, y = np.arange(10), np.arange(10)[::-1]
    np.testing.assert_array_equal(squared_diff(x, y), [81, 49, 25, 9, 1, 1, 9, 25, 49, 81])
    assert squared_diff(3, 5) == 4
    np.testing.assert_array_equal(sum_of_products(np.ones((3, 4)), np.ones((3, 4))), [4, 4, 4])


def test_numpy_path_matches_numpy_types():
    x = np.arange(5, dtype=np.float32)
    r = mixed(x, np.ones(5, np.float32), 2.0)
    assert r.dtype == np.float32
    expected = (
        np.exp(-np.where(x > 1, x, 2.0 * np.ones(5, np.float32)))
        + np.sqrt(abs(x)) // 2
        + x % 3
        - np.maximum(x, 1.5)
    )
    np.testing.assert_allclose(r, expected, rtol=1e-6)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_generated_kernels_compile(arch):
    f32 = np.zeros((4, 6), np.float32)
    k, _ = mixed._build((f32, f32, 2.0))
    assert k.inspect(f32, f32, 2.0, arch=arch).cubin
    k, opts = sum_of_products._build((np.zeros((4, 6), np.int32),) * 2)
    assert opts == {"axis": -1} and k.name == "sum_of_products"
    assert k.inspect(
        np.zeros((4, 6), np.int32), np.zeros((4, 6), np.int32), axis=-1, arch=arch
    ).cubin
    k, opts = method_max._build((f32,))
    assert k.inspect(f32, axis=0, keepdims=True, arch=arch).cubin


def test_unsupported_constructs_name_the_line():
    @fuse()
    def bad(x):
        for _ in range(3):
            x = x + 1
        return x

    with pytest.raises(FuseError, match=r"test_fuse.py:\d+:\d+: .*assignments"):
        bad._build((np.zeros(3, np.float32),))

    @fuse()
    def bad_call(x):
        return np.cumsum(x)

    with pytest.raises(FuseError, match="'cumsum' is not supported"):
        bad_call._build((np.zeros(3, np.float32),))


@pytest.mark.gpu
def test_fuse_on_device(rng):
    x = rng.random((50, 40)).astype(np.float32)
    y = rng.random((50, 40)).astype(np.float32)
    dx, dy = jitkern.asarray(x), jitkern.asarray(y)
    np.testing.assert_allclose(jitkern.asnumpy(squared_diff(dx, dy)), (x - y) ** 2, rtol=1e-6)
    np.testing.assert_allclose(jitkern.asnumpy(sum_of_products(dx, dy)), (x * y).sum(-1), rtol=1e-5)
    np.testing.assert_allclose(
        jitkern.asnumpy(mixed(dx, dy, 2.0)), mixed(x, y, 2.0), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_array_equal(jitkern.asnumpy(method_max(dx)), (x * 2).max(0, keepdims=True))
    xi = jitkern.asarray(np.arange(10))
    np.testing.assert_array_equal(
        jitkern.asnumpy(squared_diff(xi, xi[::-1])), [81, 49, 25, 9, 1, 1, 9, 25, 49, 81]
    )
