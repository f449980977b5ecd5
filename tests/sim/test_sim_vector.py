"""The vectorised simulator (issue 19): which kernels it runs, the same results and the
same errors as the per-thread scheduler, and the launches it hands to that scheduler.

Every other simulated test of the suite also runs both ways (tests/conftest.py turns on
``vector.DIFFERENTIAL``); these tests name the paths and run without that check.
"""

import math

import numpy as np
import pytest

import jitkern
from jitkern import jit
from jitkern.errors import KernelAssertionError
from jitkern.sim import vector

FULL = 0xFFFFFFFF


@pytest.fixture
def paths(monkeypatch):
    """Run a launch on one path: ``paths("vector")`` or ``paths("threads")``."""
    monkeypatch.setattr(vector, "DIFFERENTIAL", False)

    def use(mode):
        monkeypatch.setattr(vector, "MODE", mode)

    return use


def both(paths, kernel, grid, block, make_args):
    """The arguments after a launch on each path (fresh copies of ``make_args()``)."""
    out = {}
    for mode in ("threads", "vector"):
        paths(mode)
        args = make_args()
        kernel.simulate[grid, block](*args)
        assert kernel.simulate.last_path == mode
        out[mode] = args
    return out["threads"], out["vector"]


def assert_same_bits(a_args, b_args):
    for a, b in zip(a_args, b_args):
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype
            assert a.tobytes() == b.tobytes()


@jit.rawkernel()
def squared_diff(x, y, z, n):
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    if i < n:
        z[i] = (x[i] - y[i]) ** 2


def test_elementwise_kernel_runs_vectorised_and_matches_numpy(paths, rng):
    paths("auto")
    n = int(rng.integers(1000, 5000))
    x, y = rng.random(n, np.float32), rng.random(n, np.float32)
    z = np.full(n, np.nan, np.float32)
    squared_diff.simulate[(n + 255) // 256, 256](x, y, z, np.int32(n))
    assert squared_diff.simulate.last_path == "vector"
    assert squared_diff.simulate.why_threads is None
    np.testing.assert_array_equal(z, (x - y) * (x - y))


@jit.rawkernel()
def branches_and_loops(x, out, counts, n):
    i = jit.grid(1)
    if i >= n:
        return
    v = x[i]
    steps = 0
    while v > 1 and steps < 60:  # Collatz-like: each thread its own trip count
        if v % 2 == 0:
            v = v // 2
        else:
            v = 3 * v + 1
        steps += 1
        if steps == 40:
            break
    acc = np.int64(0)
    for k in range(i % 7, 50, 3):
        if k % 5 == 0:
            continue
        acc += k * v
    out[i] = acc if steps % 2 == 0 else -acc
    counts[i] = steps


def test_divergent_loops_break_continue_and_return_match_per_thread(paths, rng):
    n = int(rng.integers(300, 700))
    x = rng.integers(1, 10_000, n).astype(np.int64)

    def args():
        return x.copy(), np.full(n, -7, np.int64), np.full(n, -7, np.int32), n

    threads, vec = both(paths, branches_and_loops, (n + 127) // 128, 128, args)
    assert_same_bits(threads, vec)
    assert (vec[2] >= 0).all()


@jitkern.rawkernel()
def block_sum(x, out, n):
    partial = jit.shared_memory(np.float32, 8)
    tid = jit.threadIdx.x
    i = jit.grid(1)
    v = x[i] if i < n else np.float32(0)
    for offset in (16, 8, 4, 2, 1):
        v += jit.shfl_down_sync(FULL, v, offset)
    if tid % 32 == 0:
        partial[tid // 32] = v
    jit.syncthreads()
    if tid < 32:
        v = partial[tid] if tid < 8 else np.float32(0)
        for offset in (4, 2, 1):
            v += jit.shfl_xor_sync(FULL, v, offset)
        if tid == 0:
            jit.atomic_add(out, 0, v)


def test_block_reduction_with_shared_memory_and_shuffles_is_bit_identical(paths, rng):
    n = int(rng.integers(2000, 9000))
    x = rng.standard_normal(n).astype(np.float32)
    threads, vec = both(paths, block_sum, (n + 255) // 256, 256,
                        lambda: (x, np.zeros(1, np.float32), n))
    assert_same_bits(threads, vec)
    assert abs(vec[1][0] - x.astype(np.float64).sum()) <= 1e-4 * np.abs(x).sum()


@jitkern.rawkernel()
def histogram(data, bins, n):
    local = jit.shared_memory(np.uint32, 64)
    for b in range(jit.threadIdx.x, 64, jit.blockDim.x):
        local[b] = 0
    jit.syncthreads()
    for i in range(jit.grid(1), n, jit.gridsize(1)):
        jit.atomic_add(local, data[i], 1)
    jit.syncthreads()
    for b in range(jit.threadIdx.x, 64, jit.blockDim.x):
        if local[b] > 0:
            jit.atomic_add(bins, b, local[b])


def test_shared_atomics_histogram_runs_vectorised(paths, rng):
    n = int(rng.integers(1000, 4000))
    data = rng.integers(0, 64, n).astype(np.int32)
    threads, vec = both(paths, histogram, 3, 96, lambda: (data, np.zeros(64, np.uint32), n))
    assert_same_bits(threads, vec)
    np.testing.assert_array_equal(vec[1], np.bincount(data, minlength=64))


@jitkern.rawkernel()
def votes(x, out):
    i = jit.grid(1)
    lane = jit.laneid()
    positive = x[i] > 0
    ballot = jit.ballot_sync(FULL, positive)
    everyone = jit.all_sync(FULL, positive)
    anyone = jit.any_sync(FULL, positive)
    got = jit.shfl_sync(FULL, x[i], (lane + 3) % 32)
    up = jit.shfl_up_sync(FULL, x[i], 5, 16)
    out[i] = np.int64(ballot) + (1 << 40) * np.int64(everyone) + (1 << 41) * np.int64(anyone)
    out[i] += (got + up) * (1 << 42)


def test_votes_and_shuffles_match_per_thread(paths, rng):
    x = rng.integers(-3, 4, 192).astype(np.int64)
    x[:32] = 1  # one warp where every predicate holds

    threads, vec = both(paths, votes, 2, 96, lambda: (x, np.full(192, -1, np.int64)))
    assert_same_bits(threads, vec)


@jitkern.rawkernel()
def shifted_copy(x, y):
    i = jit.grid(1)
    y[i] = x[i + 1]


def test_an_error_reports_the_per_thread_place_and_writes(paths, rng):
    paths("auto")
    x = rng.random(64, np.float32)
    y = np.full(64, np.nan, np.float32)
    with pytest.raises(KernelAssertionError, match=r"index 64 is out of bounds for x") as info:
        shifted_copy.simulate[2, 32](x, y)
    assert "thread (31, 0, 0) of block (1, 0, 0)" in str(info.value)
    np.testing.assert_array_equal(y[:63], x[1:])  # the threads before it ran
    assert shifted_copy.simulate.last_path == "threads"
    assert "check failed" in shifted_copy.simulate.why_threads


def test_the_vectorised_checks_find_the_same_error(paths, rng):
    paths("vector")  # no rerun: the vectorised path's own message
    x = rng.random(64, np.float32)
    with pytest.raises(KernelAssertionError) as info:
        shifted_copy.simulate[2, 32](x, np.zeros(64, np.float32))
    assert "index 64 is out of bounds for x of shape (64,)" in str(info.value)
    assert "thread (31, 0, 0) of block (1, 0, 0)" in str(info.value)


@jitkern.rawkernel()
def divergent_barrier(out):
    i = jit.threadIdx.x
    if i < 16:
        jit.syncthreads()
    out[i] = i


@jitkern.rawkernel()
def unassigned(x, out):
    i = jit.threadIdx.x
    if i > 3:
        v = x[i]
    out[i] = v


@jitkern.rawkernel()
def bad_mask(out):
    i = jit.threadIdx.x
    out[i] = jit.shfl_sync(0x0000FFFF, i, 0)


@pytest.mark.parametrize(
    ("kernel", "words"),
    [
        (divergent_barrier, "barrier divergence in block (0, 0, 0)"),
        (unassigned, "local variable 'v' is read before it is assigned in thread (0, 0, 0)"),
        (bad_mask, "warp-collective misuse"),
    ],
)
def test_vectorised_checks(paths, kernel, words):
    paths("vector")
    out = np.zeros(32, np.float32 if kernel is unassigned else np.uint32)
    args = (np.ones(32, np.float32), out) if kernel is unassigned else (out,)
    with pytest.raises(KernelAssertionError) as info:
        kernel.simulate[1, 32](*args)
    assert words in str(info.value)


@jitkern.rawkernel()
def printing(x):
    i = jit.grid(1)
    if i == 0:
        print(x[i])


@jitkern.rawkernel()
def float_atomics_in_loop(x, out, n):
    for i in range(jit.grid(1), n, jit.gridsize(1)):
        jit.atomic_add(out, 0, x[i])


@jitkern.rawkernel()
def missing_barrier(x, out):
    s = jit.shared_memory(np.float32, 64)
    i = jit.threadIdx.x
    s[i] = x[i]
    out[i] = s[63 - i]  # reads another thread's element: no syncthreads between


def test_what_is_not_vectorised_runs_per_thread(paths, rng, capsys):
    paths("auto")
    x = rng.random(64, np.float32)
    printing.simulate[1, 32](x)
    assert printing.simulate.last_path == "threads"
    assert "print" in printing.simulate.why_threads
    assert capsys.readouterr().out.strip() == f"{float(x[0]):g}"

    out = np.zeros(1, np.float32)
    float_atomics_in_loop.simulate[2, 8](x, out, 64)
    assert float_atomics_in_loop.simulate.last_path == "threads"
    want = np.float32(0)
    for t in range(16):  # the per-thread order: each thread's elements in turn
        for i in range(t, 64, 16):
            want += x[i]
    assert out[0] == want

    out = np.full(64, -1, np.float32)
    missing_barrier.simulate[1, 64](x, out)  # a race: the per-thread order decides
    assert missing_barrier.simulate.last_path == "threads"
    assert "shared" in missing_barrier.simulate.why_threads
    assert np.isnan(out[:32]).all()  # read before the other thread wrote: 0xff bytes
    np.testing.assert_array_equal(out[32:], x[31::-1])

    block_sum.simulate(1, 256, (x, np.zeros(1, np.float32), 64), racecheck=True)
    assert block_sum.simulate.last_path == "threads"
    assert "racecheck" in block_sum.simulate.why_threads


def test_vector_mode_refuses_what_it_cannot_run(paths, rng):
    paths("vector")
    with pytest.raises(vector.NotVectorised, match="print"):
        printing.simulate[1, 32](rng.random(32, np.float32))


@jit.rawkernel(device=True)
def clamp_steps(v, limit):
    if v > limit:
        return limit, np.int32(1)
    steps = np.int32(0)
    while v * 2 < limit:
        v = v * 2
        steps += 1
        if steps > 5:
            return v, steps
    return v, steps


@jit.rawkernel()
def with_device_function(x, out, steps, scratch_out):
    i = jit.grid(1)
    scratch = jit.local_memory(np.float32, 4)
    for k in range(4):
        scratch[k] = x[i] * k
    v, s = clamp_steps(x[i], np.float32(50))
    out[i] = v + scratch[i % 4]
    steps[i] = s
    scratch_out[i] = scratch[3 - i % 4]


def test_device_functions_with_early_returns_and_local_arrays(paths, rng):
    x = (rng.random(128) * 80).astype(np.float32)

    def args():
        return (x, np.full(128, np.nan, np.float32), np.full(128, -1, np.int32),
                np.full(128, np.nan, np.float32))

    threads, vec = both(paths, with_device_function, 2, 64, args)
    assert_same_bits(threads, vec)
    np.testing.assert_array_equal(vec[3], x * (3 - np.arange(128) % 4).astype(np.float32))


def test_the_differential_check_finds_a_wrong_vectorised_result(monkeypatch, rng):
    from jitkern.errors import InternalError
    from jitkern.sim import vecruntime

    monkeypatch.setattr(vector, "DIFFERENTIAL", True)
    monkeypatch.setattr(vector, "MODE", "auto")
    monkeypatch.setattr(vecruntime, "sel", lambda m, value, old: value)  # ignores the mask
    n = 256
    x = rng.integers(1, 10_000, n).astype(np.int64)
    args = (x, np.zeros(n, np.int64), np.zeros(n, np.int32), n)
    # a fresh build reads the patched helper (the simulator keeps its builds per kernel and
    # in the memo of builds: clear_memo forgets both)
    branches_and_loops.clear_memo()
    with pytest.raises(InternalError, match="differs between the vectorised and the per-thread"):
        branches_and_loops.simulate[2, 128](*args)
    branches_and_loops.clear_memo()


@jit.rawkernel()
def maths(x, out):
    i = jit.grid(1)
    v = x[i]
    out[i, 0] = math.sin(v) + math.cos(v)
    out[i, 1] = math.exp(v / 4) - math.log(abs(v) + 1)
    out[i, 2] = math.sqrt(abs(v)) * math.tanh(v)
    out[i, 3] = math.atan2(v, v + 1) - math.pow(abs(v), 1.5)
    out[i, 4] = min(v, v * v) / max(v, 1 - v)
    out[i, 5] = v ** 3 + v ** 0.5


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_math_functions_are_bit_identical_on_both_paths(paths, rng, dtype):
    x = (rng.standard_normal(320) * 4).astype(dtype)
    threads, vec = both(paths, maths, 5, 64, lambda: (x, np.full((320, 6), np.nan, dtype)))
    assert_same_bits(threads, vec)


@jitkern.rawkernel()
def read_after_atomics(out):
    s = jit.shared_memory(np.int32, 1)
    t = jit.threadIdx.x
    if t == 0:
        s[0] = 0
    jit.syncthreads()
    jit.atomic_add(s, 0, 1)
    out[t] = s[0]  # races with the other threads' atomics: the per-thread order decides


def test_a_read_racing_with_shared_atomics_runs_per_thread(paths):
    paths("auto")
    out = np.full(32, -1, np.int32)
    read_after_atomics.simulate[1, 32](out)
    assert read_after_atomics.simulate.last_path == "threads"
    np.testing.assert_array_equal(out, np.arange(1, 33))  # thread k saw k + 1 increments


@jit.rawkernel()
def thread_block_group(x, out):
    g = jit.cg.this_thread_block()
    s = jit.shared_memory(np.float32, 64)
    r = g.thread_rank()
    s[r] = x[jit.grid(1)]
    g.sync()
    out[jit.grid(1)] = s[g.size() - 1 - r] + np.float32(g.group_index().x)


def test_this_thread_block_runs_vectorised(paths, rng):
    x = rng.random(128, np.float32)
    threads, vec = both(paths, thread_block_group, 2, 64,
                        lambda: (x, np.full(128, np.nan, np.float32)))
    assert_same_bits(threads, vec)
    want = x.reshape(2, 64)[:, ::-1] + np.arange(2, dtype=np.float32)[:, None]
    np.testing.assert_array_equal(vec[1], want.reshape(-1))


@jit.rawkernel()
def parameter_as_loop_variable(out, k):
    i = jit.grid(1)
    out[i] = k
    for k in range(i % 3, 4):
        out[i] += k


def test_a_parameter_reused_as_loop_variable(paths, rng):
    k = int(rng.integers(10, 100))
    threads, vec = both(paths, parameter_as_loop_variable, 1, 32,
                        lambda: (np.zeros(32, np.int64), k))
    assert_same_bits(threads, vec)
    np.testing.assert_array_equal(vec[0], k + np.array([sum(range(i % 3, 4)) for i in range(32)]))
