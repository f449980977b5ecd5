"""The simulator against the GPU itself: the same kernels, the same inputs, the same bits.

Integer results and correctly rounded float operations must match bit for bit (the
kernels avoid a * b + c, which NVRTC contracts into an FMA); jitkern arrays passed to
the simulator are copied to the host and back.
"""

import numpy as np
import pytest

import jitkern
from jitkern import jit

pytestmark = pytest.mark.gpu

# Different sentinels on the two sides: an element neither writes differs (NaN would not:
# assert_array_equal treats NaN as equal to NaN).
GPU_POISON, SIM_POISON = -7, 99


def gpu_poisoned(shape, dtype):
    # jitkern.arrays.full: a device array even while simulate is on (jitkern.full then
    # gives a NumPy array, the namespace's rule under JITKERN_SIMULATE)
    return jitkern.arrays.full(shape, GPU_POISON, dtype)


def sim_poisoned(shape, dtype):
    return np.full(shape, SIM_POISON, dtype)


@jitkern.rawkernel()
def typed_ops(a, b, x, y, out_i, out_f, out_c):
    i = jit.grid(1)
    if i < a.size:
        out_i[0, i] = a[i] * b[i] + 12345
        out_i[1, i] = a[i] // (b[i] | 1)
        out_i[2, i] = a[i] % (b[i] | 1)
        out_i[3, i] = (a[i] << (b[i] & 31)) ^ (a[i] >> 3)
        out_i[4, i] = int(x[i] * 1e9)  # saturating float -> int
        out_f[0, i] = x[i] * y[i]
        out_f[1, i] = x[i] / y[i]
        out_f[2, i] = np.sqrt(abs(x[i]))
        out_f[3, i] = x[i] - y[i]
        out_f[4, i] = x[i] // y[i] + x[i] % y[i]
        out_c[i] = np.float16(x[i]) * np.float16(y[i])


def test_typed_arithmetic_matches_the_gpu_bit_for_bit(rng):
    n = 4096
    a = rng.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)
    b = rng.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)
    x = (rng.standard_normal(n) * 10).astype(np.float32)
    y = (rng.standard_normal(n) * 10).astype(np.float32)
    shapes = [((5, n), np.int32), ((5, n), np.float32), (n, np.float16)]
    gpu_out = [gpu_poisoned(s, d) for s, d in shapes]
    typed_ops[(n + 255) // 256, 256](*map(jitkern.asarray, (a, b, x, y)), *gpu_out)
    sim_out = [sim_poisoned(s, d) for s, d in shapes]
    typed_ops.simulate[(n + 255) // 256, 256](a, b, x, y, *sim_out)
    for g, s in zip(gpu_out, sim_out):
        np.testing.assert_array_equal(s, g.get())


@jitkern.rawkernel()
def warp_ops(x, out):
    i = jit.threadIdx.x
    v = x[i]
    out[0, i] = jit.shfl_down_sync(0xFFFFFFFF, v, 3)
    out[1, i] = jit.shfl_xor_sync(0xFFFFFFFF, v, 5, 16)
    out[2, i] = jit.shfl_up_sync(0xFFFFFFFF, v, 2, 8)
    out[3, i] = jit.shfl_sync(0xFFFFFFFF, v, i % 7, 4)
    out[4, i] = jit.ballot_sync(0xFFFFFFFF, v > 0)
    out[5, i] = jit.syncthreads_count(v > 0)
    out[6, i] = jit.match_any_sync(0xFFFFFFFF, v % 3)


def test_warp_collectives_match_the_gpu(rng):
    x = rng.integers(-50, 50, 128).astype(np.int32)
    g = gpu_poisoned((7, 128), np.int64)
    warp_ops[1, 128](jitkern.asarray(x), g)
    s = sim_poisoned((7, 128), np.int64)
    warp_ops.simulate[1, 128](x, s)
    np.testing.assert_array_equal(s, g.get())


def test_jitkern_arrays_are_copied_to_the_host_and_back(rng):
    n = 1000
    a = rng.integers(-100, 100, n).astype(np.int32)
    b = rng.integers(-100, 100, n).astype(np.int32)
    x = rng.standard_normal(n).astype(np.float32) + 5
    y = rng.standard_normal(n).astype(np.float32) + 5
    shapes = [((5, n), np.int32), ((5, n), np.float32), (n, np.float16)]
    on_device = [gpu_poisoned(s, d) for s, d in shapes]
    typed_ops.simulate[4, 256](*map(jitkern.asarray, (a, b, x, y)), *on_device)
    on_host = [sim_poisoned(s, d) for s, d in shapes]
    typed_ops.simulate[4, 256](a, b, x, y, *on_host)
    for d, h in zip(on_device, on_host):
        np.testing.assert_array_equal(d.get(), h)


@jitkern.rawkernel()
def offset_copy(x, y):
    i = jit.grid(1)
    y[i] = x[i] + 1


def test_simulate_turned_on_after_a_gpu_launch_is_seen(monkeypatch, rng):
    from jitkern.config import settings
    from jitkern.sim import Simulator

    runs = []
    real = Simulator.__call__
    monkeypatch.setattr(Simulator, "__call__", lambda *a, **k: runs.append(1) or real(*a, **k))
    x = rng.integers(-100, 100, 256).astype(np.int32)
    dx, dy = jitkern.asarray(x), gpu_poisoned(256, np.int32)
    for _ in range(3):  # the generated launcher is installed after the first launch
        offset_copy[2, 128](dx, dy)
    np.testing.assert_array_equal(dy.get(), x + 1)
    assert runs == []
    monkeypatch.setattr(settings, "simulate", True)
    dy2 = gpu_poisoned(256, np.int32)
    offset_copy[2, 128](dx, dy2)
    assert runs == [1]
    np.testing.assert_array_equal(dy2.get(), x + 1)
    with pytest.raises(jitkern.KernelAssertionError, match="out of bounds"):
        offset_copy[3, 128](dx, dy2)  # the simulator's bounds check: it ran on the CPU


@jitkern.fuse()
def _fused_update(x, y):
    x += y * 2
    return np.sqrt(np.abs(x)) + y.sum()


def test_fused_simulate_matches_the_gpu_and_copies_writes_back(rng):
    hx, hy = rng.standard_normal(500), rng.standard_normal(500)
    gx, gy = jitkern.asarray(hx), jitkern.asarray(hy)
    g = _fused_update(gx, gy)
    sx = jitkern.asarray(hx)
    s = _fused_update.simulate(sx, jitkern.asarray(hy))
    np.testing.assert_array_equal(sx.get(), gx.get())  # x += y * 2: exact in both
    # the sum's order differs: its rounding, up to ~1e-16 of sum(|y|) per step, is absolute,
    # and sqrt(|x|) + sum(y) may cancel to a small value
    np.testing.assert_allclose(s.get(), g.get(), rtol=1e-13, atol=1e-13 * np.abs(hy).sum())
