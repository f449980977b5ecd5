"""ElementwiseKernel/ReductionKernel(debug=True) on a GPU: raw-argument accesses are
bounds-checked; a failure raises KernelAssertionError naming the parameter. A twin's [sim]
item runs the same kernel in the simulator, whose own checks raise at the launch, naming the
parameter, index and shape in its words."""

import re

import numpy as np
import pytest

import jitkern
from jitkern.runtime import debugcheck

POISON = np.float32(-777.0)


@pytest.fixture(autouse=True)
def no_pending():
    debugcheck.PENDING.clear()
    yield
    leftover = dict(debugcheck.PENDING)
    debugcheck.PENDING.clear()
    assert not leftover, "a debug launch was never checked"


def shift_kernel(debug):
    return jitkern.ElementwiseKernel(
        "raw T src, int32 off", "T dst", "dst = src[i + off]", "debug_shift", debug=debug
    )


def test_raw_argument_out_of_bounds_read(rng, launch):
    n = 1000
    h = rng.standard_normal(n).astype(np.float32)
    src = launch.to_device(h)
    dst = launch.full(n, POISON, np.float32)
    k = shift_kernel(True)
    message = launch.debug_error(lambda: launch(k)(src, np.int32(3), dst),
                                 lambda: jitkern.Device().synchronize())  # fmt: skip
    if launch.simulated:
        assert message.startswith("debug_shift operation line 1: index ")
        index = int(re.search(r"index (\d+) is out of bounds for src of shape \(1000,\)",
                              message).group(1))  # fmt: skip
        assert 1000 <= index < 1003
        assert re.search(r"in thread \(\d+, 0, 0\) of block \(\d+, 0, 0\)", message)
    else:
        assert message.startswith("ElementwiseKernel 'debug_shift': out-of-bounds flat index ")
        index = int(re.search(r"flat index (\d+)", message).group(1))
        assert 1000 <= index < 1003
        assert "of raw argument src (size 1000, shape (1000,))" in message
        assert re.search(r"in thread \(\d+,0,0\) of block \(\d+,0,0\)", message)
    np.testing.assert_array_equal(launch.get(dst)[: n - 3], h[3:])


def test_raw_argument_out_of_bounds_write_is_skipped(rng, launch):
    n = 500
    h = rng.standard_normal(n).astype(np.float32)
    backing = launch.full(n + 32, POISON, np.float32)
    k = jitkern.ElementwiseKernel(
        "T x, int32 off", "raw T out", "out[i + off] = x", "debug_scatter", debug=True
    )
    x = launch.to_device(h)
    message = launch.debug_error(lambda: launch(k)(x, np.int32(2), backing[:n]),
                                 lambda: k.check_debug())  # fmt: skip
    if launch.simulated:
        assert "index 500 is out of bounds for out of shape (500,)" in message
    else:
        assert "of raw argument out (size 500, shape (500,))" in message
    full = launch.get(backing)
    np.testing.assert_array_equal(full[2:n], h[: n - 2])
    assert np.all(full[n:] == POISON), "the out-of-bounds store landed"


@pytest.mark.gpu
def test_raw_multi_index_names_axis(rng):
    table = rng.standard_normal((3, 5)).astype(np.float32)
    k = jitkern.ElementwiseKernel(
        "int32 r, int32 c, raw T t",
        "T y",
        "int idx[] = {r, c}; y = t[idx];",
        "debug_lookup",
        debug=True,
    )
    rows = np.array([0, 2, 1, 2], np.int32)
    cols = np.array([4, 0, 5, 1], np.int32)  # (1, 5) is out of bounds on axis 1
    y = jitkern.full(4, POISON, np.float32)
    k(jitkern.asarray(rows), jitkern.asarray(cols), jitkern.asarray(table), y)
    with pytest.raises(jitkern.KernelAssertionError) as info:
        y.get()
    message = str(info.value)
    assert "out-of-bounds index 5 on axis 1 of raw argument t (shape (3, 5))" in message
    assert "of block (0,0,0)" in message
    got = y.get()
    np.testing.assert_array_equal(got[[0, 1, 3]], table[rows[[0, 1, 3]], cols[[0, 1, 3]]])


@pytest.mark.gpu
def test_correct_debug_elementwise_and_normal_after_debug(rng):
    n = 4096
    h = rng.standard_normal(n).astype(np.float32)
    src = jitkern.asarray(h)
    debug, normal = shift_kernel(True), shift_kernel(False)
    out = debug(src, np.int32(0), jitkern.full(n, POISON, np.float32))
    jitkern.Device().synchronize()
    np.testing.assert_array_equal(out.get(), h)
    # The normal kernel has its own binary, without checks, and its fast launcher.
    out2 = normal(src, np.int32(0), jitkern.full(n, POISON, np.float32))
    np.testing.assert_array_equal(out2.get(), h)
    assert "_jk_dcarray" not in normal.cached_code
    assert set(normal.cached_codes.values()).isdisjoint(debug.cached_codes.values())
    # a kernel object is a partial: after a call, the normal kernel calls its generated
    # entry directly; the debug kernel keeps the general call (it checks after launches)
    assert normal.func != normal._call and debug.func == debug._call


def test_reduction_raw_weights_out_of_bounds(rng, launch):
    x = rng.standard_normal((6, 4)).astype(np.float32)
    w = rng.standard_normal(5).astype(np.float32)
    k = jitkern.ReductionKernel(
        "T x, raw T w", "T y", "x * w[_J]", "a + b", "y = a", "0", "debug_wsum", debug=True
    )
    # _J runs over the reduced axis (6 rows) but w has 5 entries.
    dx, dw = launch.to_device(x), launch.to_device(w)
    message = launch.debug_error(lambda: launch(k)(dx, dw, axis=0),
                                 lambda: jitkern.Device().synchronize())  # fmt: skip
    if launch.simulated:
        assert message.startswith("debug_wsum ")
        assert "index 5 is out of bounds for w of shape (5,)" in message
    else:
        assert message.startswith("ReductionKernel 'debug_wsum': ")
        assert "of raw argument w (size 5, shape (5,))" in message
    ok = jitkern.ReductionKernel(
        "T x, raw T w", "T y", "x * w[_J]", "a + b", "y = a", "0", "debug_wsum_ok", debug=True
    )
    w6 = rng.standard_normal(6).astype(np.float32)
    got = launch.get(launch(ok)(dx, launch.to_device(w6), axis=0))
    np.testing.assert_allclose(got, (x * w6[:, None]).sum(axis=0), rtol=1e-5, atol=1e-5)
