"""Debug mode on a GPU (issue 10): out-of-bounds accesses of a debug build raise
KernelAssertionError at the next synchronisation with the Python line, thread, block,
index and shape; the failing access is skipped; normal builds are untouched.

Each twin test's [sim] item runs the same kernel in the simulator, whose own checks raise
KernelAssertionError at the launch (the first bad access ends it) with the same line, index,
array, shape, thread and block, in the simulator's words."""

import os
import re

import numpy as np
import pytest

import jitkern
from jitkern import jit
from jitkern.runtime import debugcheck
from jitkern.jit import rawkernel

HERE = os.path.abspath(__file__)
POISON = np.float32(-12345.0)


def line_of(marker: str) -> int:
    with open(HERE, encoding="utf-8") as f:
        for n, text in enumerate(f, 1):
            if text.rstrip().endswith("# " + marker):
                return n
    raise AssertionError(marker)


def where(marker: str) -> str:
    return f"{os.path.basename(HERE)}:{line_of(marker)}: "


@pytest.fixture(autouse=True)
def no_pending():
    debugcheck.PENDING.clear()
    yield
    leftover = dict(debugcheck.PENDING)
    debugcheck.PENDING.clear()
    assert not leftover, "a debug launch was never checked"


def shift_read(x, y, n):
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    if i < n:
        y[i] = x[i + 1]  # READ


def shift_write(x, y, n):
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    if i < n:
        y[i + 1] = x[i]  # WRITE


read_debug = rawkernel(debug=True)(shift_read)
write_debug = rawkernel(debug=True)(shift_write)
write_normal = rawkernel()(shift_write)


def test_out_of_bounds_read_names_line_thread_block_index_shape(rng, launch):
    n = 1024
    h = rng.standard_normal(n).astype(np.float32)
    x = launch.to_device(h)
    y = launch.full(n, POISON, np.float32)
    message = launch.debug_error(lambda: launch(read_debug)[4, 256](x, y, np.int32(n)),
                                 lambda: jitkern.Device().synchronize())  # fmt: skip
    assert where("READ") in message
    if launch.simulated:
        assert ("index 1024 is out of bounds for x of shape (1024,) in thread (255, 0, 0) of "
                "block (3, 0, 0)" in message)  # fmt: skip
    else:
        assert (
            "out-of-bounds index 1024 on axis 0 of x (shape (1024,)) in thread (255,0,0) of "
            "block (3,0,0)" in message
        )
        assert "kernel shift_read" in message
    out = launch.get(y)  # checked already: no second error
    np.testing.assert_array_equal(out[:-1], h[1:])


def test_out_of_bounds_write_is_skipped_and_reported_at_get(rng, launch):
    n = 1000
    h = rng.standard_normal(n).astype(np.float32)
    x = launch.to_device(h)
    backing = launch.full(n + 64, POISON, np.float32)
    y = backing[:n]  # the element after y is backing[n]: poisoned, must stay so
    # (a copy to the host is a synchronisation point)
    message = launch.debug_error(lambda: launch(write_debug)[8, 128](x, y, np.int32(n)),
                                 lambda: y.get())  # fmt: skip
    assert where("WRITE") in message
    if launch.simulated:
        assert "index 1000 is out of bounds for y of shape (1000,)" in message
        assert "thread (103, 0, 0) of block (7, 0, 0)" in message
    else:
        assert "index 1000 on axis 0 of y (shape (1000,))" in message
        assert "thread (103,0,0) of block (7,0,0)" in message
    full = launch.get(backing)
    np.testing.assert_array_equal(full[1:n], h[: n - 1])
    assert full[0] == POISON
    assert np.all(full[n:] == POISON), "the out-of-bounds store landed"


@pytest.mark.gpu
def test_normal_launch_after_debug_launch_uses_normal_binary(rng):
    n = 512
    h = rng.standard_normal(n).astype(np.float32)
    x = jitkern.asarray(h)
    backing = jitkern.full(n + 8, POISON, np.float32)
    write_debug[2, 256](x, backing[:n], np.int32(n))
    with pytest.raises(jitkern.KernelAssertionError, match="index 512 on axis 0 of y"):
        jitkern.Device().synchronize()
    assert backing.get()[n] == POISON
    # The same function, built normally: no check, so the store past y lands (in memory
    # this test owns) and no error is raised.
    write_normal[2, 256](x, backing[:n], np.int32(n))
    jitkern.Device().synchronize()
    assert backing.get()[n] == h[n - 1]
    assert "jk::dbg" not in write_normal.cached_code
    assert "jk::dbg" in write_debug.cached_code
    normal_keys = {fn.binary.key for fn in write_normal._functions.loaded()}
    debug_keys = {fn.binary.key for fn in write_debug._functions.loaded()}
    assert normal_keys and debug_keys and normal_keys.isdisjoint(debug_keys)
    # and the normal kernel keeps its generated fast launcher; the debug one never has one
    assert write_normal.func != write_normal._launch
    assert write_debug.func == write_debug._launch


@rawkernel(debug=True)
def rows(x, out):
    i = jit.threadIdx.x
    j = jit.threadIdx.y
    out[i, j] = x[i, j + 1]  # AXIS1


def test_two_dimensional_axis_and_stream_synchronize(rng, launch):
    h = rng.standard_normal((4, 8)).astype(np.float32)
    x = launch.to_device(h)
    out = launch.full((4, 8), POISON, np.float32)
    stream = launch.stream()
    launch.synchronize()  # (the stream does not wait for the legacy stream)
    message = launch.debug_error(lambda: launch(rows)[1, (4, 8), 0, stream](x, out),
                                 lambda: stream.synchronize())  # fmt: skip
    assert where("AXIS1") in message
    if launch.simulated:
        assert "is out of bounds for x of shape (4, 8) (axis 1 has size 8)" in message
        assert re.search(r"index \([0-3], 8\) .* in thread \([0-3], 7, 0\) of block \(0, 0, 0\)",
                         message)  # fmt: skip
    else:
        assert "index 8 on axis 1 of x (shape (4, 8))" in message
        assert re.search(r"in thread \([0-3],7,0\) of block \(0,0,0\)", message)
    got = launch.get(out)
    np.testing.assert_array_equal(got[:, :7], h[:, 1:])


@rawkernel(debug=True)
def shared_overflow(x, y):
    t = jit.threadIdx.x
    smem = jit.shared_memory(np.float32, 32)
    smem[t] = x[t]  # SHARED
    jit.syncthreads()
    if t < 32:
        y[t] = smem[31 - t]


def test_shared_memory_out_of_bounds(rng, launch):
    h = rng.standard_normal(40).astype(np.float32)
    x = launch.to_device(h)
    y = launch.full(32, POISON, np.float32)
    message = launch.debug_error(lambda: launch(shared_overflow)[1, 40](x, y),
                                 lambda: shared_overflow.check_debug())  # fmt: skip
    assert where("SHARED") in message
    if launch.simulated:  # the launch ends at the bad store, before any thread writes y
        assert "is out of bounds for smem of shape (32,)" in message
        index = int(re.search(r"index (\d+) is out of bounds", message).group(1))
        thread = int(re.search(r"in thread \((\d+), 0, 0\)", message).group(1))
        assert 32 <= index < 40 and thread == index
        return
    assert "of shared array smem (shape (32,))" in message
    index = int(re.search(r"out-of-bounds index (\d+)", message).group(1))
    thread = int(re.search(r"in thread \((\d+),0,0\)", message).group(1))
    assert 32 <= index < 40 and thread == index
    np.testing.assert_array_equal(y.get(), h[:32][::-1])


@rawkernel(debug=True)
def dynamic_overflow(x, y):
    t = jit.threadIdx.x
    buf = jit.shared_memory(np.float64, None)
    buf[t] = x[t]  # DYNAMIC
    jit.syncthreads()
    y[t] = buf[t]


def test_dynamic_shared_memory_extent_is_the_launch_size(rng, launch):
    h = rng.standard_normal(64)
    x = launch.to_device(h)
    y = launch.full(64, np.nan, np.float64)
    launch(dynamic_overflow)[1, 64, 64 * 8](x, y)  # enough: no error
    launch.synchronize()
    np.testing.assert_array_equal(launch.get(y), h)
    message = launch.debug_error(  # 16 doubles for 64 threads
        lambda: launch(dynamic_overflow)[1, 64, 16 * 8](x, y),
        lambda: jitkern.Device().synchronize(),
    )
    assert where("DYNAMIC") in message
    if launch.simulated:
        assert "index 16 is out of bounds for buf of shape (16,)" in message
    else:
        assert "of shared array buf (shape (16,))" in message


@rawkernel(device=True)
def load_at(a, i):
    return a[i]  # DEVICE


@rawkernel(debug=True)
def via_device_function(x, y, n):
    i = jit.grid(1)
    if i < n:
        y[i] = load_at(x, i + 2)


def test_device_function_access_is_checked(rng, launch):
    h = rng.standard_normal(100).astype(np.float32)
    x = launch.to_device(h)
    y = launch.full(100, POISON, np.float32)
    message = launch.debug_error(lambda: launch(via_device_function)[1, 128](x, y, np.int32(100)),
                                 lambda: jitkern.synchronize())  # fmt: skip
    assert where("DEVICE") in message
    if launch.simulated:
        assert "index 100 is out of bounds for a of shape (100,)" in message
    else:
        assert "of a (shape (100,))" in message
    np.testing.assert_array_equal(launch.get(y)[:98], h[2:])


@rawkernel(device=True)
def square(v):
    return v * v


@rawkernel(debug=True)
def stencil_sum(x, w, out, total, n):
    t = jit.threadIdx.x
    i = jit.blockIdx.x * jit.blockDim.x + t
    tile = jit.shared_memory(np.float64, 130)
    if i < n:
        tile[t + 1] = x[i]
    if t == 0:
        tile[0] = x[i - 1] if i > 0 else 0.0
    if t == jit.blockDim.x - 1 or i == n - 1:
        tile[t + 2] = x[i + 1] if i + 1 < n else 0.0
    jit.syncthreads()
    if i < n:
        v = w[0, 0] * tile[t] + w[0, 1] * tile[t + 1] + w[1, 0] * tile[t + 2]
        out[i] = v
        jit.atomic_add(total, 0, square(v))


def test_correct_kernel_in_debug_mode_matches_numpy(rng, launch):
    n = 1000
    h = rng.standard_normal(n)
    wh = rng.standard_normal((2, 2))
    x, w = launch.to_device(h), launch.to_device(wh)
    out = launch.full(n, np.nan, np.float64)
    total = launch.zeros(1, np.float64)
    launch(stencil_sum)[8, 128](x, w, out, total, np.int32(n))
    launch.synchronize()  # no error: every access was in bounds
    padded = np.concatenate([[0.0], h, [0.0]])
    expect = wh[0, 0] * padded[:-2] + wh[0, 1] * padded[1:-1] + wh[1, 0] * padded[2:]
    np.testing.assert_allclose(launch.get(out), expect, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(launch.get(total)[0], np.sum(expect**2), rtol=1e-10)


@rawkernel(debug=True)
def everyone_out_of_bounds(x, n):
    i = jit.grid(1)
    x[i + n] = 1.0  # MANY


def test_only_the_first_violation_is_reported_and_the_record_resets(rng, launch):
    x = launch.full(256, POISON, np.float32)
    message = launch.debug_error(lambda: launch(everyone_out_of_bounds)[2, 128](x, np.int32(256)),
                                 lambda: jitkern.Device().synchronize())  # fmt: skip
    if launch.simulated:
        index = int(re.search(r"index (\d+) is out of bounds", message).group(1))
        thread = int(re.search(r"in thread \((\d+), 0, 0\)", message).group(1))
        block = int(re.search(r"of block \((\d+), 0, 0\)", message).group(1))
    else:
        index = int(re.search(r"out-of-bounds index (\d+)", message).group(1))
        thread = int(re.search(r"in thread \((\d+),0,0\)", message).group(1))
        block = int(re.search(r"of block \((\d+),0,0\)", message).group(1))
    assert index == 256 + block * 128 + thread
    assert np.all(launch.get(x) == POISON)
    # The record was reset: a clean launch of the same binary raises nothing.
    launch(everyone_out_of_bounds)[1, 1](x, np.int32(0))  # writes x[0]
    launch.synchronize()
    assert launch.get(x)[0] == 1.0


# -- reads of a local before it is assigned ------------------------------------------


def gather_unguarded(x, y, n):
    i = jit.grid(1)
    if i < n:
        v = x[i]
    y[i] = v  # UNSET-READ


def gather_guarded(x, y, n):
    i = jit.grid(1)
    if i < n:
        v = x[i]
    if i < n:
        y[i] = v * 2.0


@rawkernel(debug=True)
def last_of(x, y, m):
    for k in range(m):
        last = x[k]
    y[0] = last + k  # LOOP-READ


def test_read_before_assignment_names_line_variable_thread_block(rng, launch):
    n = 63  # one block of 64: only thread 63 skips the assignment
    h = rng.standard_normal(64).astype(np.float32)
    x = launch.to_device(h)
    y = launch.full(64, POISON, np.float32)
    k = rawkernel(debug=True)(gather_unguarded)
    message = launch.debug_error(lambda: launch(k)[1, 64](x, y, np.int32(n)), lambda: y.get())
    assert where("UNSET-READ") in message
    if launch.simulated:  # the launch ends at the read: y[63] keeps its poison
        assert ("local variable 'v' is read before it is assigned in thread (63, 0, 0) of "
                "block (0, 0, 0)" in message)  # fmt: skip
        assert "out of bounds" not in message
        np.testing.assert_array_equal(y[:n], h[:n])
        return
    assert (
        "local variable 'v' is read before it is assigned in thread (63,0,0) of block "
        "(0,0,0) (kernel gather_unguarded)" in message
    )
    assert "out-of-bounds" not in message
    out = y.get()  # reported once; the unassigned read gave the zero v starts with
    np.testing.assert_array_equal(out[:n], h[:n])
    assert out[n] == 0.0


def test_guarded_read_raises_nothing_and_matches_numpy(rng, launch):
    n = 1000
    h = rng.standard_normal(n).astype(np.float32)
    x = launch.to_device(h)
    backing = launch.full(n + 24, POISON, np.float32)  # 4 blocks of 256 cover 1024
    y = backing[:n]
    debug = rawkernel(debug=True)(gather_guarded)
    launch(debug)[4, 256](x, y, np.int32(n))
    launch.synchronize()  # no error: v is read only where it was assigned
    full = launch.get(backing)
    np.testing.assert_array_equal(full[:n], h * np.float32(2.0))
    assert np.all(full[n:] == POISON)
    if launch.simulated:  # the simulator refuses the unguarded read in every build
        return
    # the normal build of the unguarded kernel has no check and never raises
    normal = rawkernel()(gather_unguarded)
    y2 = jitkern.full(64, POISON, np.float32)
    normal[1, 64](x[:64], y2, np.int32(63))
    out = y2.get()
    np.testing.assert_array_equal(out[:63], h[:63])
    assert out[63] == 0.0  # zero-initialised in every build
    assert "jk_set_" not in normal.cached_code


def test_loop_variable_and_loop_local_after_a_loop_that_ran_no_iteration(rng, launch):
    h = rng.standard_normal(8).astype(np.float64)
    x = launch.to_device(h)
    y = launch.full(1, np.nan, np.float64)
    launch(last_of)[1, 1](x, y, np.int32(5))
    np.testing.assert_allclose(launch.get(y)[0], h[4] + 4, rtol=1e-15, atol=0)  # no error
    y = launch.full(1, np.nan, np.float64)
    message = launch.debug_error(lambda: launch(last_of)[1, 1](x, y, np.int32(0)),
                                 lambda: jitkern.Device().synchronize())  # fmt: skip
    assert where("LOOP-READ") in message
    assert re.search(r"local variable '(last|k)' is read before it is assigned", message)
    if launch.simulated:  # the launch ends at the read: y keeps its NaN
        assert "thread (0, 0, 0) of block (0, 0, 0)" in message
        assert np.isnan(y[0])
        return
    assert "thread (0,0,0) of block (0,0,0) (kernel last_of)" in message
    assert y.get()[0] == 0.0
