"""What the simulator checks that the GPU cannot: each error's class, place and words."""

import inspect
import re

import numpy as np
import pytest

import jitkern
from jitkern import jit
from jitkern.errors import JitTypeError, KernelAssertionError

FILE = re.escape(__file__)


def line_of(kernel, text: str) -> int:
    lines, first = inspect.getsourcelines(kernel.py_func)
    for k, line in enumerate(lines):
        if text in line:
            return first + k
    raise AssertionError(text)


@jitkern.rawkernel()
def shifted_copy(x, y):
    i = jit.grid(1)
    y[i] = x[i + 1]


def test_out_of_bounds_read_names_line_thread_block_index_and_shape():
    x, y = np.zeros(64, np.float32), np.full(64, np.nan, np.float32)
    line = line_of(shifted_copy, "y[i] = x[i + 1]")
    with pytest.raises(KernelAssertionError) as info:
        shifted_copy.simulate[2, 32](x, y)
    msg = str(info.value)
    assert re.match(rf"{FILE}:{line}: index 64 is out of bounds for x of shape \(64,\)", msg)
    assert "thread (31, 0, 0) of block (1, 0, 0)" in msg
    # the threads before the faulty one ran: every element but the last was copied
    np.testing.assert_array_equal(y[:63], x[:63])


@jitkern.rawkernel()
def previous(x, y):
    i = jit.threadIdx.x
    y[i] = x[np.int32(i) - 1]


@jitkern.rawkernel()
def previous_unsigned(x, y):
    i = jit.threadIdx.x
    y[i] = x[i - 1]  # threadIdx.x is a uint32, as in CUDA: 0 - 1 wraps


def test_negative_index_is_out_of_bounds_not_wrapped():
    x = np.arange(8, dtype=np.int32)
    with pytest.raises(
        KernelAssertionError, match=r"index -1 is out of bounds .* thread \(0, 0, 0\)"
    ):
        previous.simulate[1, 8](x, np.zeros(8, np.int32))
    with pytest.raises(KernelAssertionError, match=r"index 4294967295 is out of bounds"):
        previous_unsigned.simulate[1, 8](x, np.zeros(8, np.int32))


@jitkern.rawkernel()
def transpose_wrong(src, dst):
    x, y = jit.grid(2)
    dst[y, x] = src[x, y]


def test_two_d_out_of_bounds_names_the_axis():
    src = np.zeros((4, 8), np.float32)
    line = line_of(transpose_wrong, "dst[y, x] = src[x, y]")
    with pytest.raises(KernelAssertionError) as info:
        transpose_wrong.simulate[1, (8, 4)](src, np.zeros((4, 8), np.float32))
    msg = str(info.value)
    assert msg.startswith(
        f"{__file__}:{line}: index (4, 0) is out of bounds for src of shape (4, 8)"
    )
    assert "axis 0 has size 4" in msg and "thread (4, 0, 0) of block (0, 0, 0)" in msg


@jitkern.rawkernel()
def shared_overrun(out):
    s = jit.shared_memory(np.int32, 16)
    t = jit.threadIdx.x
    s[t] = t
    jit.syncthreads()
    out[t] = s[t]


def test_shared_memory_out_of_bounds():
    line = line_of(shared_overrun, "s[t] = t")
    with pytest.raises(
        KernelAssertionError, match=rf":{line}: index 16 is out of bounds for s of shape \(16,\)"
    ):
        shared_overrun.simulate[1, 32](np.zeros(32, np.int32))


@jitkern.rawkernel()
def maybe_unset(x, out):
    i = jit.threadIdx.x
    if x[i] > 0:
        v = x[i]
    out[i] = v


def test_read_of_an_unassigned_local_names_it_and_its_line():
    x = np.array([1, 2, -3, 4], np.int32)
    line = line_of(maybe_unset, "out[i] = v")
    with pytest.raises(KernelAssertionError) as info:
        maybe_unset.simulate[1, 4](x, np.zeros(4, np.int32))
    msg = str(info.value)
    assert msg.startswith(f"{__file__}:{line}: local variable 'v' is read before it is assigned")
    assert "thread (2, 0, 0)" in msg


@jitkern.rawkernel()
def sync_in_branch(x):
    i = jit.threadIdx.x
    if i < 16:
        jit.syncthreads()
    x[i] = i


@jitkern.rawkernel()
def sync_in_both_branches(x):
    i = jit.threadIdx.x
    if i < 16:
        jit.syncthreads()
    else:
        jit.syncthreads()
    x[i] = i


def test_barrier_divergence_is_reported():
    with pytest.raises(KernelAssertionError) as info:
        sync_in_branch.simulate[1, 32](np.zeros(32, np.int32))
    msg = str(info.value)
    line = line_of(sync_in_branch, "jit.syncthreads()")
    assert "barrier divergence in block (0, 0, 0)" in msg
    assert (
        "16 thread(s) exited" in msg
        and f"16 thread(s) wait at the syncthreads at {__file__}:{line}" in msg
    )
    with pytest.raises(KernelAssertionError, match="barrier divergence") as info:
        sync_in_both_branches.simulate[1, 32](np.zeros(32, np.int32))
    first = line_of(sync_in_both_branches, "jit.syncthreads()")
    assert f":{first}" in str(info.value) and f":{first + 2}" in str(info.value)


@jitkern.rawkernel()
def half_mask_shuffle(x):
    i = jit.threadIdx.x
    x[i] = jit.shfl_sync(0xFFFF, x[i], 0)


@jitkern.rawkernel()
def shuffle_after_exit(x):
    i = jit.threadIdx.x
    if i >= 16:
        return
    x[i] = jit.shfl_down_sync(0xFFFFFFFF, x[i], 1)


def test_warp_collective_misuse_is_reported():
    line = line_of(half_mask_shuffle, "jit.shfl_sync")
    with pytest.raises(KernelAssertionError) as info:
        half_mask_shuffle.simulate[1, 32](np.zeros(32, np.int32))
    msg = str(info.value)
    assert msg.startswith(f"{__file__}:{line}: warp-collective misuse: a shuffle")
    assert "mask 0x0000ffff, which excludes its own lane 16" in msg
    with pytest.raises(KernelAssertionError, match=r"names lane\(s\) \[16, 17,.*which have exited"):
        shuffle_after_exit.simulate[1, 32](np.zeros(32, np.int32))


@jitkern.rawkernel()
def neighbour_sum(x, out, sync):
    s = jit.shared_memory(np.float32, 64)
    t = jit.threadIdx.x
    s[t] = x[t]
    if sync:
        jit.syncthreads()
    out[t] = s[t] + s[(t + 1) % 64]


def test_racecheck_finds_a_missing_syncthreads(rng):
    x = rng.random(64).astype(np.float32)
    out = np.full(64, np.nan, np.float32)
    neighbour_sum.simulate(1, 64, (x, out, True), racecheck=True)
    np.testing.assert_array_equal(out, x + np.roll(x, -1))
    read = line_of(neighbour_sum, "out[t] = s[t] + s[(t + 1) % 64]")
    write = line_of(neighbour_sum, "s[t] = x[t]")
    with pytest.raises(KernelAssertionError) as info:
        neighbour_sum.simulate(1, 64, (x, out, False), racecheck=True)
    msg = str(info.value)
    assert msg.startswith(f"{__file__}:{write}: shared-memory race on element 1")
    assert "thread (1, 0, 0) of block (0, 0, 0) writes it" in msg
    assert f"thread (0, 0, 0) read it at {__file__}:{read}" in msg


@jitkern.rawkernel()
def checked(x):
    assert x[jit.threadIdx.x] >= 0, "x must be non-negative"


def test_assert_raises_kernel_assertion_error():
    line = line_of(checked, "assert x")
    with pytest.raises(
        KernelAssertionError,
        match=rf":{line}: assertion failed: x must be non-negative in thread \(2, 0, 0\)",
    ):
        checked.simulate[1, 4](np.array([1, 2, -3, 4], np.int32))


@jitkern.rawkernel()
def int_accumulator(x, out):
    s = 0
    s += x[jit.threadIdx.x]
    out[0] = s


def test_compile_errors_are_the_gpu_builds():
    x = np.zeros(4, np.float32)
    with pytest.raises(JitTypeError) as gpu_error:
        int_accumulator.emit(x, x)
    with pytest.raises(JitTypeError) as sim_error:
        int_accumulator.simulate[1, 4](x, x)
    assert str(sim_error.value) == str(gpu_error.value)
    assert "cannot store a value of type float32 in variable 's' of type int32" in str(
        sim_error.value
    )


@jitkern.rawkernel()
def stop_here(x):
    i = jit.threadIdx.x
    doubled = x[i] * 2
    breakpoint()  # noqa: T100 - the simulator's pdb support is under test
    x[i] = doubled


def test_breakpoint_stops_in_the_users_source_with_its_names(monkeypatch):
    seen = []

    def hook(*args, **kwargs):
        import sys

        frame = sys._getframe(1)
        seen.append((frame.f_code.co_filename, frame.f_lineno, dict(frame.f_locals)))

    monkeypatch.setattr("sys.breakpointhook", hook)
    x = np.arange(4, dtype=np.float32)
    stop_here.simulate[1, 4](x)
    line = line_of(stop_here, "breakpoint()")
    assert [(f, n) for f, n, _ in seen] == [(__file__, line)] * 4
    assert [float(loc["doubled"]) for _, _, loc in seen] == [0.0, 2.0, 4.0, 6.0]
    np.testing.assert_array_equal(x, [0, 2, 4, 6])


# -- the worked examples of docs/debugging.md ---------------------------------------------

BLOCK = 64


@jitkern.rawkernel()
def smooth(x, y, n):
    i = jit.grid(1)
    if i < n:
        y[i] = (x[i - 1] + x[i] + x[i + 1]) / 3


@jitkern.rawkernel()
def smooth_shared(x, y, n, sync):
    tile = jit.shared_memory(np.float32, BLOCK + 2)
    t = jit.threadIdx.x
    i = jit.grid(1)
    tile[t + 1] = x[i] if i < n else np.float32(0)
    if t == 0:
        tile[0] = x[i - 1] if i > 0 else np.float32(0)
    if t == BLOCK - 1:
        tile[BLOCK + 1] = x[i + 1] if i + 1 < n else np.float32(0)
    if sync == 1:
        jit.syncthreads()
    if 0 < i < n - 1:
        if sync == 2:
            jit.syncthreads()  # the wrong place: the end threads never reach it
        y[i] = (tile[t] + tile[t + 1] + tile[t + 2]) / 3


def test_debugging_doc_out_of_bounds_example(rng):
    x = rng.random(200).astype(np.float32)
    with pytest.raises(
        KernelAssertionError,
        match=r"index 4294967295 is out of bounds for x of shape \(200,\) in thread \(0, 0, 0\)",
    ):
        smooth.simulate[1, 256](x, np.zeros_like(x), np.int32(200))


def test_debugging_doc_missing_syncthreads_example(rng):
    x = rng.random(4 * BLOCK).astype(np.float32)
    y = np.zeros_like(x)
    smooth_shared.simulate[4, BLOCK](x, y, x.size, 0)
    assert np.isnan(y[1:-1]).any()  # a read before the neighbour's store: the 0xff fill
    with pytest.raises(KernelAssertionError, match="shared-memory race on element 1"):
        smooth_shared.simulate(4, BLOCK, (x, y, x.size, 0), racecheck=True)
    with pytest.raises(KernelAssertionError, match="barrier divergence in block"):
        smooth_shared.simulate[4, BLOCK](x, y, x.size, 2)
    y[:] = np.nan
    smooth_shared.simulate(4, BLOCK, (x, y, x.size, 1), racecheck=True)
    want = (x[:-2] + x[1:-1] + x[2:]) / np.float32(3)
    np.testing.assert_array_equal(y[1:-1], want)
