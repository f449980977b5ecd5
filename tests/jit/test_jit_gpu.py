"""@rawkernel: each construct and builtin against NumPy on fresh random data.

Each test that takes ``launch`` runs twice: ``[gpu]`` launches the kernel on the GPU with
jitkern arrays (marked gpu), ``[sim]`` runs the same kernel object in the simulator with
NumPy arrays (on every machine). Where the two disagree, one back end has a bug. The tests
without ``launch`` need the GPU itself (the compile cache, streams, CuPy and torch arrays).
"""

import contextlib
import math

import numpy as np
import pytest

import jitkern
from jitkern import jit
from jitkern.toolchain import cache
from jitkern.jit import rawkernel


def dev(a):
    return jitkern.asarray(np.ascontiguousarray(a))


def empty_like_host(shape, dtype):
    out = jitkern.empty(shape, dtype)
    out.fill(np.nan if np.dtype(dtype).kind in "fc" else 7)
    return out


# -- the spec ------------------------------------------------------------------


@rawkernel()
def elementwise_copy(x, y, size):
    tid = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    ntid = jit.gridDim.x * jit.blockDim.x
    for i in range(tid, size, ntid):
        y[i] = x[i]


def test_spec_grid_stride_copy_both_styles(launch, rng):
    size = np.uint32(launch.pick(gpu=2**22, sim=5000))
    grid, block = launch.pick(gpu=(128, 1024), sim=(4, 128))
    h = rng.standard_normal(int(size)).astype(np.float32)
    x = launch.to_device(h)
    y = launch.poisoned(int(size), np.float32)
    launch(elementwise_copy)((grid,), (block,), (x, y, size))
    np.testing.assert_array_equal(launch.get(y), h)
    y2 = launch.poisoned(int(size), np.float32)
    launch(elementwise_copy)[grid - 1, block // 2](x, y2, size)
    np.testing.assert_array_equal(launch.get(y2), h)


@pytest.mark.gpu
def test_second_launch_does_not_recompile(rng):
    h = rng.standard_normal(1000).astype(np.float32)
    x, y = dev(h), empty_like_host(1000, np.float32)
    elementwise_copy[4, 128](x, y, 1000)
    before = dict(cache.stats)
    parsed_before = elementwise_copy._parsed
    for _ in range(3):
        y.fill(np.nan)  # each launch must write y again
        elementwise_copy[4, 128](x, y, 1000)
        np.testing.assert_array_equal(y.get(), h)
    assert cache.stats["compiles"] == before["compiles"]
    assert cache.stats["misses"] == before["misses"]
    assert elementwise_copy._parsed is parsed_before
    np.testing.assert_array_equal(y.get(), h)


@rawkernel()
def sqdiff(x, y, z, n):
    i = jit.grid(1)
    if i < n:
        z[i] = (x[i] - y[i]) ** 2


@pytest.mark.parametrize(
    "dtype", [np.float16, np.float32, np.float64, np.int32, np.int64, np.uint8]
)
def test_squared_diff_dtypes(launch, rng, dtype):
    n = launch.pick(gpu=3001, sim=301)
    a = (rng.standard_normal(n) * 10).astype(dtype)
    b = (rng.standard_normal(n) * 10).astype(dtype)
    z = launch.poisoned(n, dtype)
    launch(sqdiff)[(n + 63) // 64, 64](launch.to_device(a), launch.to_device(b), z, n)
    got = launch.get(z)
    if launch.simulated:
        with np.errstate(all="ignore"):
            if dtype == np.float16:  # computed in float32, rounded once where stored
                d = a.astype(np.float32) - b.astype(np.float32)
                expect = (d * d).astype(dtype)
            else:
                expect = ((a - b) ** 2).astype(dtype)
        # the same typed arithmetic as NumPy: bit-identical
        np.testing.assert_array_equal(got, expect)
    else:
        expect = ((a - b) ** 2).astype(dtype)
        np.testing.assert_allclose(
            got.astype(np.float64),
            expect.astype(np.float64),
            rtol={np.float16: 2e-3, np.float32: 1e-6, np.float64: 1e-14}.get(dtype, 0),
        )


# -- Python semantics ----------------------------------------------------------


@rawkernel(mode="numpy")
def divmod_kernel(a, b, q, r, t, n):
    i = jit.grid(1)
    if i < n:
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]
        t[i] = a[i] / b[i]


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint32, np.float32, np.float64])
def test_floor_division_and_remainder_follow_python(launch, rng, dtype):
    n = launch.pick(gpu=4096, sim=512)
    lo = 0 if np.dtype(dtype).kind == "u" else -100
    a = rng.integers(lo, 100, n).astype(dtype)
    b = rng.integers(lo, 100, n).astype(dtype)
    if np.dtype(dtype).kind == "f":
        a = (a + rng.random(n)).astype(dtype)
        b = np.where(b == 0, 3, b).astype(dtype)
    else:
        b = np.where(b == 0, 7, b).astype(dtype)
    q, r = launch.poisoned(n, dtype), launch.poisoned(n, dtype)
    t_dtype = dtype if np.dtype(dtype).kind == "f" else np.float64
    t = launch.poisoned(n, t_dtype)
    launch(divmod_kernel)[(n + 127) // 128, 128](
        launch.to_device(a), launch.to_device(b), q, r, t, n
    )
    np.testing.assert_array_equal(launch.get(q), np.floor_divide(a, b))
    if launch.simulated:  # NumPy's own operations: bit-identical
        np.testing.assert_array_equal(launch.get(r), np.remainder(a, b))
        np.testing.assert_array_equal(launch.get(t), np.true_divide(a, b).astype(t_dtype))
    else:
        # float64 results at float64 tolerances (t is float64 for integer inputs)
        r_tol = 1e-6 if np.dtype(dtype) == np.float32 else 1e-13
        t_tol = 1e-6 if np.dtype(t_dtype) == np.float32 else 1e-15
        np.testing.assert_allclose(launch.get(r), np.remainder(a, b), rtol=r_tol, atol=r_tol)
        np.testing.assert_allclose(launch.get(t), np.true_divide(a, b), rtol=t_tol)


@rawkernel()
def int_division_by_zero(a, out):
    i = jit.threadIdx.x
    out[i] = a[i] // 0 + a[i] % 0


def test_integer_division_by_zero_gives_zero(launch):
    out = launch.poisoned(32, np.int32)
    launch(int_division_by_zero)[1, 32](launch.to_device(np.arange(-16, 16, dtype=np.int32)), out)
    np.testing.assert_array_equal(launch.get(out), np.zeros(32, np.int32))


@rawkernel()
def power_kernel(a, b, out_i, out_f, x):
    i = jit.threadIdx.x
    out_i[i] = a[i] ** b[i]
    out_f[i] = x[i] ** 3 + x[i] ** 0.5


def test_power(launch, rng):
    a = rng.integers(-5, 6, 64).astype(np.int64)
    b = rng.integers(0, 8, 64).astype(np.int64)
    x = rng.random(64).astype(np.float32) + 0.5
    oi, of = launch.poisoned(64, np.int64), launch.poisoned(64, np.float32)
    launch(power_kernel)[1, 64](
        launch.to_device(a), launch.to_device(b), oi, of, launch.to_device(x)
    )
    np.testing.assert_array_equal(launch.get(oi), a**b)
    rtol = launch.pick(gpu=1e-5, sim=1e-6)
    np.testing.assert_allclose(launch.get(of), x**3 + x ** np.float32(0.5), rtol=rtol)


# -- control flow, tuples, device functions ----------------------------------


@rawkernel(device=True)
def clamp_pair(v, lo, hi):
    if v < lo:
        return lo, True
    if v > hi:
        return hi, True
    return v, False


@rawkernel(device=True)
def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


@rawkernel()
def control_flow(x, out, flags, steps, n):
    i = jit.grid(1)
    if i >= n:
        return
    v, clipped = clamp_pair(x[i], -1.0, 1.0)
    out[i] = v
    flags[i] = clipped
    acc = 0
    for k in range(10, 0, -3):
        if k == 4:
            continue
        acc += k
    for k in jit.range(4, unroll=True):
        acc += k
    steps[i] = collatz_steps(i + 1) + acc * 0 if i % 2 == 0 or i > 5 and not clipped else -acc


def test_control_flow_tuples_device_functions(launch, rng):
    n = launch.pick(gpu=1000, sim=300)
    h = (rng.standard_normal(n) * 2).astype(np.float32)
    out, flags, steps = (
        launch.poisoned(n, np.float32),
        launch.poisoned(n, np.bool_),
        launch.poisoned(n, np.int64),
    )
    launch(control_flow)[(n + 255) // 256, 256](launch.to_device(h), out, flags, steps, n)
    np.testing.assert_array_equal(launch.get(out), np.clip(h, -1, 1))
    np.testing.assert_array_equal(launch.get(flags), (h < -1) | (h > 1))

    def collatz(m):
        s = 0
        while m != 1:
            m = m // 2 if m % 2 == 0 else 3 * m + 1
            s += 1
        return s

    acc = (10 + 7 + 1) + (0 + 1 + 2 + 3)
    clipped = (h < -1) | (h > 1)
    expect = [
        collatz(i + 1) if (i % 2 == 0 or (i > 5 and not clipped[i])) else -acc for i in range(n)
    ]
    np.testing.assert_array_equal(launch.get(steps), expect)


@rawkernel()
def loop_variable_semantics(out, n, start, step):
    k = -5
    count = 0
    for k in range(start, n, step):
        count += 1
        k = 1000  # as in Python: does not change the iteration
    out[0] = k  # 1000 (the body's last assignment) if the loop ran, else -5
    out[1] = count


@pytest.mark.parametrize(
    "n,start,step", [(10, 0, 1), (10, 3, 4), (-7, 5, -3), (0, 0, 1), (5, 9, 2)]
)
def test_loop_variable_follows_python(launch, n, start, step):
    def python(n, start, step):
        k = -5
        count = 0
        for k in range(start, n, step):
            count += 1
            k = 1000
        return k, count

    out = launch.poisoned(2, np.int64)
    launch(loop_variable_semantics)[1, 1](out, n, start, step)
    assert tuple(launch.get(out)) == python(n, start, step)


# -- math ----------------------------------------------------------------------

UNARY = [
    ("sqrt", math.sqrt, np.sqrt, (0.1, 10)),
    ("exp", math.exp, np.exp, (-3, 3)),
    ("log", math.log, np.log, (0.1, 10)),
    ("sin", math.sin, np.sin, (-3, 3)),
    ("tanh", math.tanh, np.tanh, (-3, 3)),
    ("erf", math.erf, None, (-2, 2)),
    ("floor", None, np.floor, (-5, 5)),
    ("cbrt", math.cbrt, np.cbrt, (-5, 5)),
    ("log1p", math.log1p, np.log1p, (0, 3)),
]


@rawkernel()
def math_kernel(x, o1, o2, o3, o4, o5, o6, o7, o8, o9, n):
    i = jit.grid(1)
    if i < n:
        v = x[i]
        o1[i] = math.sqrt(abs(v) + 0.1)
        o2[i] = np.exp(v)
        o3[i] = math.log(abs(v) + 0.1)
        o4[i] = math.sin(v)
        o5[i] = np.tanh(v)
        o6[i] = math.erf(v)
        o7[i] = np.floor(v)
        o8[i] = math.atan2(v, 2.0) + math.hypot(v, 3.0) + math.copysign(1.0, v)
        o9[i] = math.isnan(v) or math.isinf(v) or not math.isfinite(v)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_math_functions(launch, rng, dtype):
    n = launch.pick(gpu=1000, sim=300)
    h = (rng.standard_normal(n) * 2).astype(dtype)
    h[:3] = [np.nan, np.inf, -np.inf]
    outs = [launch.poisoned(n, dtype) for _ in range(8)] + [launch.poisoned(n, np.bool_)]
    launch(math_kernel)[(n + 255) // 256, 256](launch.to_device(h), *outs, n)
    got = [launch.get(o) for o in outs]
    rtol = 2e-6 if dtype == np.float32 else 1e-13
    # float64 computed in float32 must fail (the simulator's float64 is NumPy's)
    atol = 1e-6 if dtype == np.float32 or launch.simulated else 1e-14
    with np.errstate(all="ignore"):
        erf = np.vectorize(math.erf, otypes=[np.float64])(h.astype(np.float64))
        expect = [
            np.sqrt(np.abs(h) + dtype(0.1)),
            np.exp(h),
            np.log(np.abs(h) + dtype(0.1)),
            np.sin(h),
            np.tanh(h),
            erf.astype(dtype),
            np.floor(h),
            np.arctan2(h, dtype(2)) + np.hypot(h, dtype(3)) + np.copysign(dtype(1), h),
            ~np.isfinite(h),
        ]
    for g, want in zip(got, expect):
        np.testing.assert_allclose(g, want, rtol=rtol, atol=atol, equal_nan=True)
    if launch.simulated:  # correctly rounded operations are bit-identical to NumPy's
        np.testing.assert_array_equal(got[0], expect[0])


# -- arrays: 2-D, strided views, shape/strides, partial indexing --------------------


@rawkernel()
def transpose_kernel(src, dst):
    x, y = jit.grid(2)
    rows, cols = src.shape
    if y < rows and x < cols:
        dst[x, y] = src[y, x]


def test_two_d_indexing_and_shape_unpacking(launch, rng):
    h = rng.standard_normal((37, 53)).astype(np.float32)
    dst = launch.poisoned((53, 37), np.float32)
    launch(transpose_kernel)[(4, 3), (16, 16)](launch.to_device(h), dst)
    np.testing.assert_array_equal(launch.get(dst), h.T)


@rawkernel(mode="numpy")  # s = 0.0 is float64 here (float32 in cuda mode)
def row_sums(m, out):
    r = jit.grid(1)
    if r < m.shape[0]:
        row = m[r]
        s = 0.0
        for c in range(len(row)):
            s += row[c]
        out[r] = s


def test_partial_indexing_and_views(launch, rng):
    h = rng.standard_normal((40, 30)).astype(np.float64)
    d = launch.to_device(h)
    out = launch.poisoned(40, np.float64)
    launch(row_sums)[1, 64](d, out)
    # The kernel adds left to right, as cumsum does: the same bits (a relative tolerance
    # against NumPy's pairwise sum fails for a row whose sum lands near zero).
    np.testing.assert_array_equal(launch.get(out), np.cumsum(h, axis=1)[:, -1])
    view = d[::2, ::-3]  # a strided view with a negative stride
    out2 = launch.poisoned(20, np.float64)
    launch(row_sums)[1, 64](view, out2)
    np.testing.assert_array_equal(launch.get(out2), np.cumsum(h[::2, ::-3], axis=1)[:, -1])


@rawkernel()
def strided_copy(x, y, n):
    i = jit.grid(1)
    if i < n:
        y[i] = x[i] * x.dtype.type(2)


def test_one_d_strided_view(launch, rng):
    h = rng.standard_normal(1000).astype(np.float32)
    d = launch.to_device(h)
    out = launch.poisoned(334, np.float32)
    launch(strided_copy)[2, 256](d[::3], out, 334)
    np.testing.assert_array_equal(launch.get(out), h[::3] * 2)


# -- shared memory, shuffles, atomics ----------------------------------------------


@rawkernel()
def block_sum(x, out, n):
    smem = jit.shared_memory(np.float32, 32)
    tid = jit.threadIdx.x
    i = jit.blockIdx.x * jit.blockDim.x + tid
    v = x[i] if i < n else np.float32(0)
    for offset in (16, 8, 4, 2, 1):
        v += jit.shfl_down_sync(0xFFFFFFFF, v, offset)
    lane = tid % 32
    warp = tid // 32
    if lane == 0:
        smem[warp] = v
    jit.syncthreads()
    if warp == 0:
        v = smem[lane] if lane < jit.blockDim.x // 32 else np.float32(0)
        for offset in (16, 8, 4, 2, 1):
            v += jit.shfl_xor_sync(0xFFFFFFFF, v, offset)
        if lane == 0:
            jit.atomic_add(out, 0, v)


def test_block_reduction_shared_memory_and_shuffles(launch, rng):
    n = launch.pick(gpu=100_000, sim=5000)
    h = rng.random(n).astype(np.float32)
    out = launch.zeros(1, np.float32)
    launch(block_sum)[(n + 1023) // 1024, 1024](launch.to_device(h), out, n)
    rtol = launch.pick(gpu=1e-4, sim=1e-5)
    np.testing.assert_allclose(launch.get(out)[0], h.astype(np.float64).sum(), rtol=rtol)


@rawkernel()
def histogram(x, bins, n):
    for i in range(jit.grid(1), n, jit.gridsize(1)):
        jit.atomic_add(bins, x[i], 1)


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.uint64, np.int64])
def test_atomic_histogram(launch, rng, dtype):
    n = launch.pick(gpu=200_000, sim=5000)
    h = rng.integers(0, 64, n).astype(np.int32)
    bins = launch.zeros(64, dtype)
    grid, block = launch.pick(gpu=(64, 256), sim=(8, 64))
    launch(histogram)[grid, block](launch.to_device(h), bins, n)
    np.testing.assert_array_equal(launch.get(bins), np.bincount(h, minlength=64))


@rawkernel()
def atomics_zoo(a, old, f, fold):
    i = jit.threadIdx.x
    old[0, i] = jit.atomic_max(a, 0, i)
    old[1, i] = jit.atomic_min(a, 1, i)
    old[2, i] = jit.atomic_or(a, 2, 1 << (i % 16))
    old[3, i] = jit.atomic_xor(a, 3, 1)
    old[4, i] = jit.atomic_and(a, 4, ~(1 << (i % 8)))
    jit.atomic_sub(a, 5, 2)
    jit.atomic_cas(a, 6, 0, i + 1)
    jit.atomic_exch(a, 7, 5)
    fold[i] = jit.atomic_add(f, 0, 0.5)
    jit.atomic_sub(f, 1, 0.25)


def test_atomic_operations(launch):
    a = launch.to_device(np.array([-1, 1000, 0, 0, 0xFFFF, 100, 0, 0], np.int32))
    old = launch.poisoned((5, 64), np.int32)
    f = launch.to_device(np.array([0.0, 100.0], np.float64))
    fold = launch.poisoned(64, np.float64)
    launch(atomics_zoo)[1, 64](a, old, f, fold)
    got = launch.get(a)
    assert got[0] == 63 and got[1] == 0
    assert got[2] == 0xFFFF and got[3] == 0 and got[4] == 0xFF00
    assert got[5] == 100 - 128 and 1 <= got[6] <= 64 and got[7] == 5
    assert sorted(launch.get(fold)) == [0.5 * k for k in range(64)]
    np.testing.assert_allclose(launch.get(f), [32.0, 84.0])
    # The returned old values, in whatever order the threads ran: the initial value is seen
    # by exactly one thread, the rest see values only the other threads could have left.
    o = launch.get(old)
    assert (o[0] == -1).sum() == 1 and set(o[0][o[0] != -1]) <= set(range(64))
    assert (o[1] == 1000).sum() == 1 and set(o[1][o[1] != 1000]) <= set(range(64))
    assert (o[2] == 0).sum() == 1 and ((o[2] & ~0xFFFF) == 0).all()
    assert sorted(o[3]) == [0] * 32 + [1] * 32
    assert (o[4] == 0xFFFF).sum() == 1 and ((o[4] | 0xFF) == 0xFFFF).all()
    if launch.simulated:  # threads run in order in the simulator: the running results
        np.testing.assert_array_equal(o[0], np.maximum.accumulate(np.r_[-1, np.arange(63)]))


@rawkernel()
def votes(x, out):
    i = jit.threadIdx.x
    pred = x[i] > 0
    out[0, i] = jit.ballot_sync(0xFFFFFFFF, pred)
    out[1, i] = jit.all_sync(0xFFFFFFFF, pred)
    out[2, i] = jit.any_sync(0xFFFFFFFF, pred)
    out[3, i] = jit.popc(jit.ballot_sync(0xFFFFFFFF, pred))
    out[4, i] = jit.laneid()
    out[5, i] = jit.match_any_sync(jit.activemask(), x[i])
    out[6, i] = jit.shfl_sync(0xFFFFFFFF, x[i], 3)
    out[7, i] = jit.clz(x[i]) + jit.ffs(x[i]) * 100
    out[8, i] = jit.brev(jit.activemask())


def test_warp_votes_matches_and_bits(launch, rng):
    h = rng.integers(-3, 4, 32).astype(np.int32)
    out = launch.poisoned((9, 32), np.int64)
    launch(votes)[1, 32](launch.to_device(h), out)
    got = launch.get(out)
    ballot = sum(1 << k for k in range(32) if h[k] > 0)
    assert (got[0] == ballot).all()
    assert (got[1] == int(all(h > 0))).all() and (got[2] == int(any(h > 0))).all()
    assert (got[3] == int((h > 0).sum())).all()
    np.testing.assert_array_equal(got[4], np.arange(32))
    for k in range(32):
        assert got[5, k] == sum(1 << j for j in range(32) if h[j] == h[k])
    assert (got[6] == h[3]).all()
    u = h.astype(np.uint32)
    clz = np.array([32 - int(v).bit_length() for v in u])
    ffs = np.array([(int(v) & -int(v)).bit_length() for v in u])
    np.testing.assert_array_equal(got[7], clz + ffs * 100)
    assert (got[8] == 0xFFFFFFFF).all()


# -- cooperative groups, cub ---------------------------------------------------------


@rawkernel()
def grid_sync_kernel(x, out, n):
    g = jit.cg.this_grid()
    b = jit.cg.this_thread_block()
    i = g.thread_rank()
    if i < n:
        x[i] = i * 2
    g.sync()
    tile = jit.cg.tiled_partition(b, 32)
    if i < n:
        j = n - 1 - i
        v = x[j]
        out[i] = jit.cg.reduce(tile, v, jit.cg.plus) + tile.thread_rank() * 0


def test_cooperative_grid_sync(launch):
    n = 4 * 256
    x = launch.zeros(n, np.int64)
    out = launch.zeros(n, np.int64)
    launch(grid_sync_kernel)[4, 256](x, out, n)
    rev = (np.arange(n) * 2)[::-1]
    np.testing.assert_array_equal(launch.get(out), rev.reshape(-1, 32).sum(axis=1).repeat(32))


@rawkernel()
def cub_reduce(x, out_sum, out_max):
    WarpReduce = jit.cub.WarpReduce[np.float32]
    BlockReduce = jit.cub.BlockReduce[np.float32, 128]
    wtemp = jit.shared_memory(WarpReduce.TempStorage, 4)
    btemp = jit.shared_memory(BlockReduce.TempStorage, 1)
    tid = jit.threadIdx.x
    v = x[jit.blockIdx.x * 128 + tid]
    warp_total = WarpReduce(wtemp[tid // 32]).Sum(v)
    block_max = BlockReduce(btemp[0]).Reduce(v, jit.cub.Max())
    if tid % 32 == 0:
        jit.atomic_add(out_sum, 0, warp_total)
    if tid == 0:
        out_max[jit.blockIdx.x] = block_max


def test_cub_warp_and_block_reduce(launch, rng):
    h = rng.random(128 * 8).astype(np.float32)
    s = launch.zeros(1, np.float32)
    m = launch.poisoned(8, np.float32)
    launch(cub_reduce)[8, 128](launch.to_device(h), s, m)
    rtol = launch.pick(gpu=1e-4, sim=1e-5)
    np.testing.assert_allclose(launch.get(s)[0], h.sum(dtype=np.float64), rtol=rtol)
    np.testing.assert_array_equal(launch.get(m), h.reshape(8, 128).max(axis=1))


# -- complex, casts, print, other array libraries --------------------------------------


@rawkernel()
def complex_kernel(z, w, out, mag):
    i = jit.threadIdx.x
    v = z[i] * w[i] + z[i].conjugate()
    out[i] = np.exp(v) + complex(v.real, 1.0)
    mag[i] = abs(v) + v.imag


def test_complex_values(launch, rng):
    z = (rng.standard_normal(32) + 1j * rng.standard_normal(32)).astype(np.complex64)
    w = (rng.standard_normal(32) + 1j * rng.standard_normal(32)).astype(np.complex64)
    out, mag = launch.poisoned(32, np.complex64), launch.poisoned(32, np.float32)
    launch(complex_kernel)[1, 32](launch.to_device(z), launch.to_device(w), out, mag)
    v = z * w + np.conj(z)
    np.testing.assert_allclose(launch.get(out), np.exp(v) + (v.real + 1j), rtol=1e-5)
    np.testing.assert_allclose(launch.get(mag), np.abs(v) + v.imag, rtol=1e-5, atol=1e-5)


def test_print_goes_to_stdout(launch, capfd):
    launch(printer)[1, 32](launch.to_device(np.array([1.5], np.float32)), 3)
    launch.synchronize()
    out = capfd.readouterr().out
    assert "n = 3 x0 = 1.5 flag True 7" in out
    if launch.simulated:  # Python's print: the line and nothing else
        assert out == "n = 3 x0 = 1.5 flag True 7\n"


@rawkernel()
def printer(x, n):
    i = jit.threadIdx.x
    if i == 0:
        print("n =", n, "x0 =", x[0], "flag", x[0] > 0, 7)


@rawkernel()
def add_one(x, y, n):
    i = jit.grid(1)
    if i < n:
        y[i] = x[i] + 1


@pytest.mark.gpu
def test_cupy_arrays_as_arguments(rng):
    cp = pytest.importorskip("cupy")
    h = rng.standard_normal(500).astype(np.float32)
    x = cp.asarray(h)
    y = cp.full_like(x, cp.nan)
    add_one[2, 256](x, y, 500)
    np.testing.assert_allclose(cp.asnumpy(y), h + 1)


def torch_with_cuda():
    """PyTorch, or a skip where it is missing or has no CUDA."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    return torch


@pytest.mark.gpu
def test_torch_tensors_as_arguments(rng):
    torch = torch_with_cuda()
    h = rng.standard_normal(500).astype(np.float32)
    x = torch.from_numpy(h).cuda()
    y = torch.full_like(x, float("nan"))
    add_one[2, 256](x, y, 500)
    torch.cuda.synchronize()
    np.testing.assert_allclose(y.cpu().numpy(), h + 1)
    hb = torch.randn(256, device="cuda").to(torch.bfloat16)
    yb = torch.full_like(hb, float("nan"))
    add_one[1, 256](hb, yb, 256)
    torch.cuda.synchronize()
    np.testing.assert_allclose(
        yb.float().cpu().numpy(), (hb.float() + 1).to(torch.bfloat16).float().cpu().numpy()
    )


# -- the long tail of builtins -----------------------------------------------------


@rawkernel()
def misc_builtins(x, out, counts, h):
    dyn = jit.shared_memory(np.float64, None)
    tid = jit.threadIdx.x
    dyn[tid] = jit.ldg(x, tid) * 2
    jit.syncthreads()
    out[tid] = dyn[jit.blockDim.x - 1 - tid]
    counts[0] = jit.syncthreads_count(x[tid] > 0)
    counts[1] = jit.syncthreads_and(x[tid] > -100)
    counts[2] = jit.syncthreads_or(x[tid] > 100)
    jit.threadfence()
    jit.threadfence_block()
    jit.syncwarp()
    t0 = jit.clock64()
    counts[3] = jit.clock64() >= t0
    jit.atomic_add(counts, 4, 1)
    h[tid] = jit.shfl_xor_sync(0xFFFFFFFF, h[tid], 1)
    jit.atomic_max(counts, (5,), tid)


def test_dynamic_shared_memory_and_misc_builtins(launch, rng):
    n = 64
    hx = rng.standard_normal(n)
    out = launch.poisoned(n, np.float64)
    counts = launch.zeros(6, np.int64)
    hh = rng.standard_normal(n).astype(np.float16)
    h = launch.to_device(hh)
    launch(misc_builtins)[1, n, n * 8](launch.to_device(hx), out, counts, h)
    np.testing.assert_array_equal(launch.get(out), (hx * 2)[::-1])
    c = launch.get(counts)
    assert c[0] == (hx > 0).sum() and c[1] == 1 and c[2] == 0 and c[3] == 1
    assert c[4] == n and c[5] == n - 1
    np.testing.assert_array_equal(launch.get(h), hh.reshape(-1, 2)[:, ::-1].reshape(-1))


def test_device_assert_stops_the_kernel(tmp_path, launch):
    import subprocess
    import sys
    import textwrap

    script = tmp_path / "assert_kernel.py"
    script.write_text(
        textwrap.dedent("""
        import numpy as np
        import jitkern
        from jitkern import jit

        @jitkern.rawkernel()
        def checked(x):
            assert x[jit.threadIdx.x] >= 0, "x must be non-negative"

        checked[1, 4](jitkern.asarray(np.array([1, 2, -3, 4], np.int32)))
        jitkern.synchronize()
    """)
    )
    if launch.simulated:  # the same kernel in the simulator, on a NumPy array
        script.write_text(script.read_text().replace(
            "checked[1, 4](jitkern.asarray(", "checked.simulate[1, 4](("))
    import os

    env = dict(os.environ, PYTHONPATH=os.getcwd())
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode != 0
    assert "x must be non-negative" in proc.stdout + proc.stderr
    if launch.simulated:
        assert "KernelAssertionError" in proc.stderr and "checked.simulate[1, 4]" in proc.stderr


@rawkernel(device=True)
def max_op(a, b):
    return a if a > b else b


@rawkernel()
def groups_and_tiles(x, out, staged_out, flags, hsum):
    block = jit.cg.this_thread_block()
    tile = jit.cg.tiled_partition(block, 16)
    tid = block.thread_rank()
    staged = jit.shared_memory(np.float32, 64)
    jit.cg.memcpy_async(block, staged, 0, x, 0, 64 * 4)
    jit.cg.wait(block)
    staged_out[tid] = staged[63 - tid]
    v = x[tid]
    out[0, tid] = tile.shfl(v, 0)
    out[1, tid] = tile.shfl_down(v, 1)
    out[2, tid] = tile.shfl_xor(v, 1)
    out[3, tid] = tile.meta_group_rank()
    out[4, tid] = jit.cg.reduce(tile, v, jit.cg.greater)
    out[5, tid] = jit.cg.reduce(tile, v, jit.cg.less)
    WarpReduce = jit.cub.WarpReduce[np.float32]
    temp = jit.shared_memory(WarpReduce.TempStorage, 2)
    out[6, tid] = WarpReduce(temp[tid // 32]).Reduce(v, max_op)
    mask, same = jit.match_all_sync(0xFFFFFFFF, 7)
    flags[tid] = same and mask == 0xFFFFFFFF and tile.any(v > 1000) == False  # noqa: E712
    block.sync()
    jit.atomic_add(hsum, 0, np.float16(1))


def test_cooperative_group_tiles_memcpy_async_and_cub_custom_op(launch, rng):
    h = rng.standard_normal(64).astype(np.float32)
    out = launch.poisoned((7, 64), np.float32)  # NaN: row 3 expects zeros
    staged = launch.poisoned(64, np.float32)
    flags = launch.zeros(64, np.bool_)  # False: the test wants all True
    hsum = launch.zeros(1, np.float16)
    launch(groups_and_tiles)[1, 64](launch.to_device(h), out, staged, flags, hsum)
    got = launch.get(out)
    t = h.reshape(4, 16)
    np.testing.assert_array_equal(launch.get(staged), h[::-1])
    np.testing.assert_array_equal(got[0], t[:, :1].repeat(16, axis=1).reshape(-1))
    down = np.concatenate([t[:, 1:], t[:, -1:]], axis=1).reshape(-1)
    np.testing.assert_array_equal(got[1], down)
    np.testing.assert_array_equal(got[2], h.reshape(-1, 2)[:, ::-1].reshape(-1))
    np.testing.assert_array_equal(got[3], np.arange(64) // 16)
    np.testing.assert_array_equal(got[4], t.max(axis=1).repeat(16))
    np.testing.assert_array_equal(got[5], t.min(axis=1).repeat(16))
    warp_max = h.reshape(2, 32).max(axis=1)
    assert got[6, 0] == warp_max[0] and got[6, 32] == warp_max[1]
    assert launch.get(flags).all()
    assert launch.get(hsum)[0] == 64


@rawkernel()
def half_math(x, out):
    i = jit.threadIdx.x
    out[i] = math.sqrt(x[i]) + np.exp(x[i]) * x[i] - abs(x[i]) // 1


def test_half_precision_math(launch, rng):
    h = (rng.random(32) * 3).astype(np.float16)
    out = launch.poisoned(32, np.float16)
    launch(half_math)[1, 32](launch.to_device(h), out)
    f = h.astype(np.float32)
    want = np.sqrt(f).astype(np.float16) + np.exp(f).astype(np.float16) * h - np.abs(h) // 1
    got = launch.get(out).astype(np.float32)
    np.testing.assert_allclose(got, want.astype(np.float32), rtol=5e-3)


# -- the launch path ---------------------------------------------------------------


@rawkernel()
def scaled_copy(x, y, a):
    i = jit.grid(1)
    if i < y.size:
        y[i] = x[i] * a


def test_launches_switch_signatures_layouts_and_streams(launch, rng):
    # After its first launch a signature runs through one generated function whose
    # checks (types, dtype, layout) must send every other signature back to the
    # general path; given and current streams stay on the generated path. The simulator
    # has no streams: there the stream cases launch with None and the current stream.
    n = 1000
    h32 = rng.standard_normal(2 * n).astype(np.float32)
    h64 = rng.standard_normal(n)
    x32, x64 = launch.to_device(h32[:n]), launch.to_device(h64)
    strided = launch.to_device(h32)[::2]
    stream = launch.stream()
    cases = [
        (x32, np.float32, h32[:n], "call"),
        (x64, np.float64, h64, "call"),
        (x32, np.float32, h32[:n], stream),
        (strided, np.float32, h32[::2], "call"),
        (x32, np.float32, h32[:n], "current"),
        (x64, np.float64, h64, stream),
        (x32, np.float32, h32[:n], "call"),
    ]
    grid = (n + 127) // 128
    for k, (x, dtype, host, how) in enumerate(cases):
        a = dtype(k + 1.5)
        y = launch.poisoned(n, dtype)
        if how == "current":
            with stream if stream is not None else contextlib.nullcontext():
                launch(scaled_copy)[grid, 128](x, y, a)
        elif how == "call":
            launch(scaled_copy)(grid, 128, (x, y, a))
        else:
            launch(scaled_copy)[grid, 128, 0, how](x, y, a)
        launch.synchronize(stream)
        np.testing.assert_array_equal(launch.get(y), host * a, err_msg=f"case {k}")


def test_scaled_copy_reads_size(launch, rng):
    h = rng.standard_normal(100).astype(np.float32)
    y = launch.poisoned(100, np.float32)
    launch(scaled_copy)[1, 128](launch.to_device(h), y, np.float32(1.5))
    np.testing.assert_array_equal(launch.get(y), h * np.float32(1.5))


def test_device_functions_are_not_launched():
    from jitkern.errors import JitkernTypeError

    with pytest.raises(JitkernTypeError, match="clamp_pair is a device function"):
        clamp_pair.simulate[1, 1](1.0, 0.0, 2.0)


@pytest.mark.gpu
def test_jit_kernel_launches_on_each_device(rng):
    from jitkern.runtime import driver

    if driver.device_count() < 2:
        pytest.skip("needs two GPUs")
    for device_id in (0, 1, 0):
        with jitkern.Device(device_id):
            h = rng.standard_normal(500).astype(np.float32)
            y = empty_like_host(500, np.float32)
            scaled_copy[4, 128](dev(h), y, np.float32(3))
            np.testing.assert_array_equal(y.get(), h * np.float32(3))


@pytest.mark.gpu
def test_cupy_arrays_switch_dtypes_and_layouts(rng):
    # The generated launcher's checks of CuPy arrays (dtype, contiguity, ndim) must send
    # every other signature back to the general path.
    cp = pytest.importorskip("cupy")
    n = 600
    h32 = rng.standard_normal(2 * n).astype(np.float32)
    h64 = rng.standard_normal(n)
    cases = [
        (cp.asarray(h32[:n]), h32[:n], np.float32),
        (cp.asarray(h64), h64, np.float64),
        (cp.asarray(h32)[::2], h32[::2], np.float32),
        (cp.asarray(h32[:n].reshape(20, 30)).T.ravel(order="K")[:n], None, np.float32),
        (cp.asarray(h32[:n]), h32[:n], np.float32),
    ]
    for k, (x, host, dtype) in enumerate(cases):
        if host is None:
            host = cp.asnumpy(x)
        a = dtype(k + 0.5)
        y = cp.full(n, np.nan, dtype)
        scaled_copy[(n + 127) // 128, 128](x, y, a)
        np.testing.assert_array_equal(cp.asnumpy(y), host * a, err_msg=f"case {k}")


@jit.rawkernel()
def doubled(x, y):
    i = jit.grid(1)
    if i < x.size:
        y[i] = x[i] * 2


@pytest.mark.gpu
def test_torch_single_element_and_strided_views_take_their_own_layout(rng):
    # The generated launcher's torch check for a 1-D contiguous tensor is stride() == (1,):
    # a 1-element view with stride 2 is contiguous for torch but must still take the
    # general path, which keys it by its own layout; the launches around it stay fast.
    torch = torch_with_cuda()
    h = rng.standard_normal(64).astype(np.float32)
    base = torch.from_numpy(h).cuda()
    cases = [(base[:8], h[:8]), (base[::2][:1], h[::2][:1]), (base[:8], h[:8]),
             (base[::3][:2], h[::3][:2]), (base[5:6], h[5:6]), (base[:8], h[:8])]
    for k, (x, hx) in enumerate(cases):
        y = torch.full((x.numel(),), float("nan"), dtype=torch.float32, device="cuda")
        doubled[1, 32](x, y)
        torch.cuda.synchronize()
        np.testing.assert_array_equal(y.cpu().numpy(), hx * np.float32(2), err_msg=f"case {k}")


@pytest.mark.gpu
def test_torch_tensors_switch_dtypes_and_layouts(rng):
    torch = torch_with_cuda()
    n = 600
    h32 = rng.standard_normal(2 * n).astype(np.float32)
    h64 = rng.standard_normal(n)
    cases = [
        (torch.from_numpy(h32[:n]).cuda(), h32[:n], np.float32, torch.float32),
        (torch.from_numpy(h64).cuda(), h64, np.float64, torch.float64),
        (torch.from_numpy(h32).cuda()[::2], h32[::2], np.float32, torch.float32),
        (torch.from_numpy(h32[:n]).cuda(), h32[:n], np.float32, torch.float32),
    ]
    for k, (x, host, dtype, tdtype) in enumerate(cases):
        a = dtype(k + 0.5)
        y = torch.full((n,), float("nan"), dtype=tdtype, device="cuda")
        scaled_copy[(n + 127) // 128, 128](x, y, a)
        torch.cuda.synchronize()
        np.testing.assert_array_equal(y.cpu().numpy(), host * a, err_msg=f"case {k}")
