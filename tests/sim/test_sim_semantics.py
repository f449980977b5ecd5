"""The simulator computes in the types the JIT infers: results are NumPy's typed results."""

import numpy as np
import pytest

import jitkern
from jitkern import jit
from jitkern.config import settings


@jitkern.rawkernel()
def int32_wraps(a, b, out):
    i = jit.threadIdx.x
    out[0, i] = a[i] * b[i] + 7  # int32 * int32 + int32 literal: int32, wrapping
    out[1, i] = a[i] // b[i]
    out[2, i] = a[i] % b[i]
    out[3, i] = (a[i] << 3) ^ (b[i] >> 2)
    out[4, i] = -a[i]


def test_int32_arithmetic_wraps_and_divides_like_python(rng):
    a = rng.integers(-(2**31), 2**31, 64, dtype=np.int64).astype(np.int32)
    b = rng.integers(-(2**31), 2**31, 64, dtype=np.int64).astype(np.int32)
    b[b == 0] = 3
    a[0], b[0] = -7, 2  # Python's floor and sign of the divisor
    out = np.zeros((5, 64), np.int32)
    int32_wraps.simulate[1, 64](a, b, out)
    with np.errstate(all="ignore"):
        want = [a * b + np.int32(7), a // b, a % b, (a << 3) ^ (b >> 2), -a]
    for got, expect in zip(out, want):
        np.testing.assert_array_equal(got, expect)
    assert out[1, 0] == -4 and out[2, 0] == 1


@jitkern.rawkernel()
def float32_ops(x, y, out):
    i = jit.threadIdx.x
    out[0, i] = x[i] * y[i]
    out[1, i] = x[i] / y[i] - 1.5  # 1.5 is a float32 literal in cuda mode
    out[2, i] = np.sqrt(abs(x[i]))
    out[3, i] = x[i] + y[i] * 0.1
    out[4, i] = np.float32(x[i] > 0)


def test_float32_correctly_rounded_operations_are_bit_identical(rng):
    x = rng.standard_normal(64).astype(np.float32)
    y = rng.standard_normal(64).astype(np.float32)
    out = np.full((5, 64), np.nan, np.float32)
    float32_ops.simulate[1, 64](x, y, out)
    f = np.float32
    want = [x * y, x / y - f(1.5), np.sqrt(np.abs(x)), x + y * f(0.1), (x > 0).astype(f)]
    for got, expect in zip(out, want):
        np.testing.assert_array_equal(got, expect)


@jitkern.rawkernel(mode="numpy")
def numpy_mode(x, out):
    i = jit.threadIdx.x
    out[i] = x[i] * 2.0 + 1  # numpy mode: weak literals keep float32


@jitkern.rawkernel()
def cuda_mode_division(a, out):
    i = jit.threadIdx.x
    out[i] = a[i] / 3  # int32 / int32 is float64 in both modes


def test_modes_type_literals_as_the_gpu_build(rng):
    x = rng.standard_normal(32).astype(np.float32)
    out = np.full(32, np.nan, np.float64)
    numpy_mode.simulate[1, 32](x, out)
    np.testing.assert_array_equal(out, (x * np.float32(2) + np.float32(1)).astype(np.float64))
    a = rng.integers(-100, 100, 32).astype(np.int32)
    cuda_mode_division.simulate[1, 32](a, out)
    np.testing.assert_array_equal(out, a / 3)


@jitkern.rawkernel()
def conversions(x, out_i, out_u, out_h):
    i = jit.threadIdx.x
    out_i[i] = int(x[i])  # C++'s (int)float: truncate, saturate, NaN -> 0
    out_u[i] = np.uint8(np.int32(x[i]))  # int -> narrower int wraps
    out_h[i] = np.float16(x[i]) + np.float16(1)


def test_casts_follow_cpp():
    x = np.array([1.9, -1.9, 3e9, -3e9, np.nan, 300.5, -1.0, 65504.0], np.float32)
    # poisoned: NaN converts to 0, so zero-filled outputs could not tell
    oi, ou, oh = np.full(8, 77, np.int32), np.full(8, 77, np.uint8), np.full(8, np.nan, np.float16)
    conversions.simulate[1, 8](x, oi, ou, oh)
    big, small = np.iinfo(np.int32).max, np.iinfo(np.int32).min
    np.testing.assert_array_equal(oi, [1, -1, big, small, 0, 300, -1, 65504])
    np.testing.assert_array_equal(
        ou, np.array([1, -1, big, small, 0, 300, -1, 65504]).astype(np.uint8)
    )
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(oh, x.astype(np.float16) + np.float16(1))


@jitkern.rawkernel()
def indices_3d(out):
    x, y, z = jit.grid(3)
    gx, gy, _gz = jit.gridsize(3)
    flat = (z * gy + y) * gx + x
    out[flat, 0] = x
    out[flat, 1] = y
    out[flat, 2] = z
    out[flat, 3] = jit.blockIdx.z * 100 + jit.threadIdx.z


def test_three_d_grids_and_blocks():
    grid, block = (2, 3, 2), (4, 2, 3)
    dims = [g * b for g, b in zip(grid, block)]
    out = np.full((dims[0] * dims[1] * dims[2], 4), -1, np.int64)
    indices_3d.simulate[grid, block](out)
    z, y, x = np.meshgrid(*[np.arange(d) for d in dims[::-1]], indexing="ij")
    np.testing.assert_array_equal(out[:, 0], x.ravel())
    np.testing.assert_array_equal(out[:, 1], y.ravel())
    np.testing.assert_array_equal(out[:, 2], z.ravel())
    np.testing.assert_array_equal(out[:, 3], ((z // 3) * 100 + z % 3).ravel())


@jitkern.rawkernel(device=True)
def stage(s, value):
    t = jit.threadIdx.x
    s[t] = value
    jit.syncthreads()  # a barrier inside a device function
    return s[jit.blockDim.x - 1 - t]


@jitkern.rawkernel()
def reverse_block(x, out):
    s = jit.shared_memory(np.float64, 128)
    i = jit.grid(1)
    out[i] = stage(s, x[i])


def test_device_function_with_a_barrier(rng):
    x = rng.standard_normal(256)
    out = np.full(256, np.nan)
    reverse_block.simulate[2, 128](x, out)
    np.testing.assert_array_equal(out, x.reshape(2, 128)[:, ::-1].ravel())


@jitkern.rawkernel()
def stamp(out):
    t0 = jit.clock64()
    out[jit.threadIdx.x] = jit.clock64() - t0


def test_clock64_is_a_counter():
    out = np.zeros(4, np.int64)
    stamp.simulate[1, 4](out)
    assert (out > 0).all()


def test_jitkern_simulate_setting_runs_launches_on_the_cpu(monkeypatch, rng):
    monkeypatch.setattr(settings, "simulate", True)
    x = rng.standard_normal(100).astype(np.float32)
    y = np.full(100, np.nan, np.float32)
    float_copy[1, 128](x, y, 100)
    np.testing.assert_array_equal(y, x)
    y[:] = np.nan
    float_copy((1,), (128,), (x, y, 100))
    np.testing.assert_array_equal(y, x)


def test_simulate_turned_on_after_a_gpu_launch_applies_to_the_next_launch(monkeypatch, rng):
    # stands for the generated GPU launcher a first launch installs (it skips the checks
    # of the general launch, the settings.simulate one among them)
    gpu_calls = []

    def installed_launcher(grid, block, args, shm=0, stream=None):
        gpu_calls.append(args)

    monkeypatch.setattr(settings, "simulate", False)
    float_copy._install(installed_launcher)
    x = rng.standard_normal(100).astype(np.float32)
    y = np.full(100, np.nan, np.float32)
    float_copy[1, 128](x, y, 100)
    assert len(gpu_calls) == 1 and np.isnan(y).all()  # the fast path ran
    monkeypatch.setattr(settings, "simulate", True)
    float_copy[1, 128](x, y, 100)
    np.testing.assert_array_equal(y, x)  # simulated, not the installed launcher
    y[:] = np.nan
    float_copy((1,), (128,), (x, y, 100))
    np.testing.assert_array_equal(y, x)
    assert len(gpu_calls) == 1
    assert float_copy.func == float_copy._simulated  # the simulator is the call now


def test_reload_turning_simulate_on_uninstalls_launchers(monkeypatch):
    from jitkern import config

    monkeypatch.setattr(settings, "simulate", False)
    float_copy._install(lambda *a, **k: None)
    monkeypatch.setenv("JITKERN_SIMULATE", "1")
    try:
        config.reload()
        assert float_copy.func == float_copy._simulated  # the switch's call, not the launcher
    finally:
        monkeypatch.delenv("JITKERN_SIMULATE")
        config.reload()
    assert settings.simulate is False


@jitkern.rawkernel()
def float_copy(x, y, n):
    i = jit.grid(1)
    if i < n:
        y[i] = x[i]


def test_generated_python_is_built_once_per_signature(rng):
    x = rng.standard_normal(10).astype(np.float32)
    y = np.zeros(10, np.float32)
    float_copy.simulate[1, 16](x, y, 10)
    built = float_copy.simulate.build((x, y, 10))
    float_copy.simulate[1, 16](x, y, 10)
    assert float_copy.simulate.build((x, y, 10)) is built
    source = float_copy.simulate.source(x, y, 10)
    assert source.startswith("def jk_sim_float_copy(") and "_jk_ix(i, x, 'x')" in source
    float_copy.simulate[1, 16](x.astype(np.float64), y, 10)  # a new signature
    other = float_copy.simulate.build((x.astype(np.float64), y, 10))
    assert other is not built and other.source != built.source


@pytest.mark.parametrize("bad", [(0,), (1, 2, 3, 4), "x"])
def test_launch_dimensions_are_checked(bad):
    from jitkern.errors import KernelArgumentError

    with pytest.raises(KernelArgumentError, match="grid"):
        float_copy.simulate(bad, 32, (np.zeros(1), np.zeros(1), 1))


@jitkern.rawkernel()
def unsigned_grid_stride(x, y, size):
    for i in range(jit.grid(1), size, jit.gridsize(1)):
        y[i] = x[i] + 1


def test_grid_stride_loop_with_more_threads_than_elements(rng):
    # uint32 bounds: threads past the end run no iteration (no wrap-around of stop - start)
    x = rng.integers(0, 100, 300).astype(np.int32)
    y = np.full(300, -1, np.int32)
    unsigned_grid_stride.simulate[4, 128](x, y, np.uint32(300))
    np.testing.assert_array_equal(y, x + 1)


SCALE = 2


@jitkern.rawkernel()
def scaled(x, out):
    i = jit.threadIdx.x
    out[i] = x[i] * SCALE


def test_a_rebound_global_is_noticed_at_the_next_simulated_launch(monkeypatch, rng):
    x = rng.integers(1, 1000, 4).astype(np.int32)
    out = np.full(4, -1, np.int32)
    scaled.simulate[1, 4](x, out)
    np.testing.assert_array_equal(out, x * 2)
    monkeypatch.setitem(globals(), "SCALE", 5)
    out.fill(-1)
    scaled.simulate[1, 4](x, out)
    np.testing.assert_array_equal(out, x * 5)


@jitkern.rawkernel()
def colliding_names(x, x_shape0, x_ptr, jk_t1, _jk_T):
    café = x[1, 2]
    x[0, 0] = x_shape0 + 10 * x_ptr + 100 * jk_t1 + café + x.shape[1] + 1000 * _jk_T


def test_colliding_and_unicode_names_run(rng):
    # the twin of tests/jit/test_trust.py's GPU test, plus a name like the simulator's own
    host = rng.standard_normal((3, 5))
    x = host.copy()
    colliding_names.simulate[1, 1](x, 1.0, 2.0, 3.0, 4.0)
    expected = host.copy()
    expected[0, 0] = 1.0 + 20.0 + 300.0 + host[1, 2] + 5 + 4000.0
    np.testing.assert_array_equal(x, expected)


@jitkern.rawkernel()
def atomics_all(a, i, old, cmp_val):
    t = jit.threadIdx.x
    old[0, t] = jit.atomic_inc(a, i, a.dtype.type(5))
    old[1, t] = jit.atomic_dec(a, i + 1, a.dtype.type(3))
    old[2, t] = jit.atomic_cas(a, i + 2, cmp_val, a.dtype.type(t))
    old[3, t] = jit.atomic_exch(a, i + 3, a.dtype.type(t))
    old[4, t] = jit.atomic_max(a, i + 4, a.dtype.type(t * 3 % 7))


def test_atomics_follow_cudas_definitions():
    a = np.array([0, 1, 9, 0, 0], np.uint32)
    old = np.zeros((5, 12), np.uint32)
    atomics_all.simulate[1, 12](a, np.int32(0), old, np.uint32(9))
    inc, dec, cas, exch, mx = [], [], [], [], []
    state = [0, 1, 9, 0, 0]
    for t in range(12):  # the simulator runs thread 0, 1, ...: a sequential model
        inc.append(state[0])
        state[0] = 0 if state[0] >= 5 else state[0] + 1
        dec.append(state[1])
        state[1] = 3 if state[1] == 0 or state[1] > 3 else state[1] - 1
        cas.append(state[2])
        state[2] = t if state[2] == 9 else state[2]
        exch.append(state[3])
        state[3] = t
        mx.append(state[4])
        state[4] = max(state[4], t * 3 % 7)
    np.testing.assert_array_equal(old, [inc, dec, cas, exch, mx])
    np.testing.assert_array_equal(a, state)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int64, np.uint64])
def test_atomic_add_in_the_element_type(dtype):
    values = np.array([0.1, 0.2, 0.3, 1e4, -1e4, 7, 3, 5] * 4, np.float64)
    if np.dtype(dtype).kind in "iu":
        values = np.arange(32)
    a = np.zeros(1, dtype)
    add_all.simulate[1, 32](values.astype(dtype), a)
    want = np.zeros((), dtype)
    with np.errstate(all="ignore"):
        for v in values.astype(dtype):  # thread order, each sum rounded to the type
            want = (want + v).astype(dtype)
    assert a[0] == want and a.dtype == dtype


@jitkern.rawkernel()
def add_all(x, out):
    jit.atomic_add(out, 0, x[jit.threadIdx.x])


@jitkern.rawkernel()
def shuffles(x, out):
    i = jit.threadIdx.x
    v = x[i]
    out[0, i] = jit.shfl_sync(0xFFFFFFFF, v, i % 7, 4)
    out[1, i] = jit.shfl_up_sync(0xFFFFFFFF, v, 2, 8)
    out[2, i] = jit.shfl_down_sync(0xFFFFFFFF, v, 3)
    out[3, i] = jit.shfl_xor_sync(0xFFFFFFFF, v, 5, 16)


def test_shuffle_widths_follow_cuda(rng):
    x = rng.integers(-1000, 1000, 64).astype(np.int64)
    out = np.zeros((4, 64), np.int64)
    shuffles.simulate[1, 64](x, out)
    lanes = np.arange(64)
    lane = lanes % 32
    warp = lanes - lane

    def pick(src):
        return x[warp + src]

    start4, start8 = lane - lane % 4, lane - lane % 8
    np.testing.assert_array_equal(out[0], pick(start4 + (lanes % 7) % 4))  # srcLane % width
    np.testing.assert_array_equal(out[1], pick(np.where(lane - 2 >= start8, lane - 2, lane)))
    np.testing.assert_array_equal(out[2], pick(np.where(lane + 3 < 32, lane + 3, lane)))
    xor = lane ^ 5
    np.testing.assert_array_equal(out[3], pick(np.where(xor // 16 == lane // 16, xor, lane)))


@pytest.mark.parametrize("raw,expected", [("1", True), ("yes", True), ("0", False), ("", False)])
def test_jitkern_simulate_is_read_from_the_environment(monkeypatch, raw, expected):
    from jitkern.config import Settings

    monkeypatch.setenv("JITKERN_SIMULATE", raw)
    assert Settings.from_environ().simulate is expected
