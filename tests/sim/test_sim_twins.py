"""The GPU tests' kernels (tests/jit/test_jit_gpu.py), run by the simulator against NumPy.

These run on every machine. Each test launches the very kernel object its GPU twin
launches, with NumPy arrays in place of device arrays, and checks the same results:
where a GPU test and its twin here disagree, one of the two back ends has a bug.
"""

import importlib.util
import math
import pathlib

import numpy as np
import pytest

_PATH = pathlib.Path(__file__).resolve().parents[1] / "jit" / "test_jit_gpu.py"
_SPEC = importlib.util.spec_from_file_location("jit_gpu_kernels_for_sim", _PATH)
gpu = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(gpu)


def poisoned(shape, dtype):
    return np.full(shape, np.nan if np.dtype(dtype).kind in "fc" else 7, dtype)


def test_spec_grid_stride_copy_both_styles(rng):
    size = np.uint32(5000)
    h = rng.standard_normal(int(size)).astype(np.float32)
    y = poisoned(int(size), np.float32)
    gpu.elementwise_copy.simulate((4,), (128,), (h, y, size))
    np.testing.assert_array_equal(y, h)
    y2 = poisoned(int(size), np.float32)
    gpu.elementwise_copy.simulate[3, 64](h, y2, size)
    np.testing.assert_array_equal(y2, h)


@pytest.mark.parametrize(
    "dtype", [np.float16, np.float32, np.float64, np.int32, np.int64, np.uint8]
)
def test_squared_diff_dtypes(rng, dtype):
    n = 301
    a = (rng.standard_normal(n) * 10).astype(dtype)
    b = (rng.standard_normal(n) * 10).astype(dtype)
    z = poisoned(n, dtype)
    gpu.sqdiff.simulate[(n + 63) // 64, 64](a, b, z, n)
    with np.errstate(all="ignore"):
        if dtype == np.float16:  # computed in float32, rounded once where stored
            d = a.astype(np.float32) - b.astype(np.float32)
            expect = (d * d).astype(dtype)
        else:
            expect = ((a - b) ** 2).astype(dtype)
    # the same typed arithmetic as NumPy: bit-identical
    np.testing.assert_array_equal(z, expect)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint32, np.float32, np.float64])
def test_floor_division_and_remainder_follow_python(rng, dtype):
    n = 512
    lo = 0 if np.dtype(dtype).kind == "u" else -100
    a = rng.integers(lo, 100, n).astype(dtype)
    b = rng.integers(lo, 100, n).astype(dtype)
    if np.dtype(dtype).kind == "f":
        a = (a + rng.random(n)).astype(dtype)
        b = np.where(b == 0, 3, b).astype(dtype)
    else:
        b = np.where(b == 0, 7, b).astype(dtype)
    q, r = poisoned(n, dtype), poisoned(n, dtype)
    t_dtype = dtype if np.dtype(dtype).kind == "f" else np.float64
    t = poisoned(n, t_dtype)
    gpu.divmod_kernel.simulate[(n + 127) // 128, 128](a, b, q, r, t, n)
    np.testing.assert_array_equal(q, np.floor_divide(a, b))
    np.testing.assert_array_equal(r, np.remainder(a, b))
    np.testing.assert_array_equal(t, np.true_divide(a, b).astype(t_dtype))


def test_integer_division_by_zero_gives_zero():
    out = poisoned(32, np.int32)
    gpu.int_division_by_zero.simulate[1, 32](np.arange(-16, 16, dtype=np.int32), out)
    np.testing.assert_array_equal(out, np.zeros(32, np.int32))


def test_power(rng):
    a = rng.integers(-5, 6, 64).astype(np.int64)
    b = rng.integers(0, 8, 64).astype(np.int64)
    x = rng.random(64).astype(np.float32) + 0.5
    oi, of = poisoned(64, np.int64), poisoned(64, np.float32)
    gpu.power_kernel.simulate[1, 64](a, b, oi, of, x)
    np.testing.assert_array_equal(oi, a**b)
    np.testing.assert_allclose(of, x**3 + x ** np.float32(0.5), rtol=1e-6)


def test_control_flow_tuples_device_functions(rng):
    n = 300
    h = (rng.standard_normal(n) * 2).astype(np.float32)
    out, flags, steps = poisoned(n, np.float32), np.zeros(n, np.bool_), poisoned(n, np.int64)
    gpu.control_flow.simulate[2, 256](h, out, flags, steps, n)
    np.testing.assert_array_equal(out, np.clip(h, -1, 1))
    np.testing.assert_array_equal(flags, (h < -1) | (h > 1))

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
    np.testing.assert_array_equal(steps, expect)


@pytest.mark.parametrize(
    "n,start,step", [(10, 0, 1), (10, 3, 4), (-7, 5, -3), (0, 0, 1), (5, 9, 2)]
)
def test_loop_variable_follows_python(n, start, step):
    def python(n, start, step):
        k = -5
        count = 0
        for k in range(start, n, step):
            count += 1
            k = 1000
        return k, count

    out = poisoned(2, np.int64)
    gpu.loop_variable_semantics.simulate[1, 1](out, n, start, step)
    assert tuple(out) == python(n, start, step)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_math_functions(rng, dtype):
    n = 300
    h = (rng.standard_normal(n) * 2).astype(dtype)
    h[:3] = [np.nan, np.inf, -np.inf]
    outs = [poisoned(n, dtype) for _ in range(8)] + [np.zeros(n, np.bool_)]
    gpu.math_kernel.simulate[2, 256](h, *outs, n)
    rtol = 2e-6 if dtype == np.float32 else 1e-13
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
    for got, want in zip(outs, expect):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-6, equal_nan=True)
    # correctly rounded operations are bit-identical to NumPy's
    np.testing.assert_array_equal(outs[0], expect[0])


def test_two_d_indexing_and_shape_unpacking(rng):
    h = rng.standard_normal((37, 53)).astype(np.float32)
    dst = poisoned((53, 37), np.float32)
    gpu.transpose_kernel.simulate[(4, 3), (16, 16)](h, dst)
    np.testing.assert_array_equal(dst, h.T)


def test_partial_indexing_and_views(rng):
    h = rng.standard_normal((40, 30)).astype(np.float64)
    out = poisoned(40, np.float64)
    gpu.row_sums.simulate[1, 64](h, out)
    np.testing.assert_allclose(out, h.sum(axis=1), rtol=1e-12)
    view = h[::2, ::-3]  # a strided view with a negative stride
    out2 = poisoned(20, np.float64)
    gpu.row_sums.simulate[1, 64](view, out2)
    np.testing.assert_allclose(out2, view.sum(axis=1), rtol=1e-12)


def test_one_d_strided_view(rng):
    h = rng.standard_normal(1000).astype(np.float32)
    out = poisoned(334, np.float32)
    gpu.strided_copy.simulate[2, 256](h[::3], out, 334)
    np.testing.assert_array_equal(out, h[::3] * 2)


def test_block_reduction_shared_memory_and_shuffles(rng):
    n = 5000
    h = rng.random(n).astype(np.float32)
    out = np.zeros(1, np.float32)
    gpu.block_sum.simulate[(n + 1023) // 1024, 1024](h, out, n)
    np.testing.assert_allclose(out[0], h.astype(np.float64).sum(), rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.uint64, np.int64])
def test_atomic_histogram(rng, dtype):
    n = 5000
    h = rng.integers(0, 64, n).astype(np.int32)
    bins = np.zeros(64, dtype)
    gpu.histogram.simulate[8, 64](h, bins, n)
    np.testing.assert_array_equal(bins, np.bincount(h, minlength=64))


def test_atomic_operations():
    a = np.array([-1, 1000, 0, 0, 0xFFFF, 100, 0, 0], np.int32)
    old = poisoned((5, 64), np.int32)
    f = np.array([0.0, 100.0], np.float64)
    fold = poisoned(64, np.float64)
    gpu.atomics_zoo.simulate[1, 64](a, old, f, fold)
    assert a[0] == 63 and a[1] == 0
    assert a[2] == 0xFFFF and a[3] == 0 and a[4] == 0xFF00
    assert a[5] == 100 - 128 and 1 <= a[6] <= 64 and a[7] == 5
    assert sorted(fold) == [0.5 * k for k in range(64)]
    np.testing.assert_allclose(f, [32.0, 84.0])
    # threads run in order in the simulator: the old values are the running results
    np.testing.assert_array_equal(old[0], np.maximum.accumulate(np.r_[-1, np.arange(63)]))


def test_warp_votes_matches_and_bits(rng):
    h = rng.integers(-3, 4, 32).astype(np.int32)
    out = poisoned((9, 32), np.int64)
    gpu.votes.simulate[1, 32](h, out)
    ballot = sum(1 << k for k in range(32) if h[k] > 0)
    assert (out[0] == ballot).all()
    assert (out[1] == int(all(h > 0))).all() and (out[2] == int(any(h > 0))).all()
    assert (out[3] == int((h > 0).sum())).all()
    np.testing.assert_array_equal(out[4], np.arange(32))
    for k in range(32):
        assert out[5, k] == sum(1 << j for j in range(32) if h[j] == h[k])
    assert (out[6] == h[3]).all()
    u = h.astype(np.uint32)
    clz = np.array([32 - int(v).bit_length() for v in u])
    ffs = np.array([(int(v) & -int(v)).bit_length() for v in u])
    np.testing.assert_array_equal(out[7], clz + ffs * 100)
    assert (out[8] == 0xFFFFFFFF).all()


def test_cooperative_grid_sync():
    n = 4 * 256
    x = np.zeros(n, np.int64)
    out = np.zeros(n, np.int64)
    gpu.grid_sync_kernel.simulate[4, 256](x, out, n)
    rev = (np.arange(n) * 2)[::-1]
    np.testing.assert_array_equal(out, rev.reshape(-1, 32).sum(axis=1).repeat(32))


def test_cub_warp_and_block_reduce(rng):
    h = rng.random(128 * 8).astype(np.float32)
    s = np.zeros(1, np.float32)
    m = poisoned(8, np.float32)
    gpu.cub_reduce.simulate[8, 128](h, s, m)
    np.testing.assert_allclose(s[0], h.sum(dtype=np.float64), rtol=1e-5)
    np.testing.assert_array_equal(m, h.reshape(8, 128).max(axis=1))


def test_complex_values(rng):
    z = (rng.standard_normal(32) + 1j * rng.standard_normal(32)).astype(np.complex64)
    w = (rng.standard_normal(32) + 1j * rng.standard_normal(32)).astype(np.complex64)
    out, mag = poisoned(32, np.complex64), poisoned(32, np.float32)
    gpu.complex_kernel.simulate[1, 32](z, w, out, mag)
    v = z * w + np.conj(z)
    np.testing.assert_allclose(out, np.exp(v) + (v.real + 1j), rtol=1e-5)
    np.testing.assert_allclose(mag, np.abs(v) + v.imag, rtol=1e-5, atol=1e-5)


def test_print_goes_to_stdout(capsys):
    gpu.printer.simulate[1, 32](np.array([1.5], np.float32), 3)
    out = capsys.readouterr().out
    assert out == "n = 3 x0 = 1.5 flag True 7\n"


def test_dynamic_shared_memory_and_misc_builtins(rng):
    n = 64
    hx = rng.standard_normal(n)
    out = poisoned(n, np.float64)
    counts = np.zeros(6, np.int64)
    hh = rng.standard_normal(n).astype(np.float16)
    h = hh.copy()
    gpu.misc_builtins.simulate[1, n, n * 8](hx, out, counts, h)
    np.testing.assert_array_equal(out, (hx * 2)[::-1])
    assert counts[0] == (hx > 0).sum() and counts[1] == 1 and counts[2] == 0 and counts[3] == 1
    assert counts[4] == n and counts[5] == n - 1
    np.testing.assert_array_equal(h, hh.reshape(-1, 2)[:, ::-1].reshape(-1))


def test_cooperative_group_tiles_memcpy_async_and_cub_custom_op(rng):
    h = rng.standard_normal(64).astype(np.float32)
    out = np.zeros((7, 64), np.float32)
    staged = np.zeros(64, np.float32)
    flags = np.zeros(64, np.bool_)
    hsum = np.zeros(1, np.float16)
    gpu.groups_and_tiles.simulate[1, 64](h, out, staged, flags, hsum)
    t = h.reshape(4, 16)
    np.testing.assert_array_equal(staged, h[::-1])
    np.testing.assert_array_equal(out[0], t[:, :1].repeat(16, axis=1).reshape(-1))
    down = np.concatenate([t[:, 1:], t[:, -1:]], axis=1).reshape(-1)
    np.testing.assert_array_equal(out[1], down)
    np.testing.assert_array_equal(out[2], h.reshape(-1, 2)[:, ::-1].reshape(-1))
    np.testing.assert_array_equal(out[3], np.arange(64) // 16)
    np.testing.assert_array_equal(out[4], t.max(axis=1).repeat(16))
    np.testing.assert_array_equal(out[5], t.min(axis=1).repeat(16))
    warp_max = h.reshape(2, 32).max(axis=1)
    assert out[6, 0] == warp_max[0] and out[6, 32] == warp_max[1]
    assert flags.all()
    assert hsum[0] == 64


def test_half_precision_math(rng):
    h = (rng.random(32) * 3).astype(np.float16)
    out = poisoned(32, np.float16)
    gpu.half_math.simulate[1, 32](h, out)
    f = h.astype(np.float32)
    want = np.sqrt(f).astype(np.float16) + np.exp(f).astype(np.float16) * h - np.abs(h) // 1
    np.testing.assert_allclose(out.astype(np.float32), want.astype(np.float32), rtol=5e-3)


def test_scaled_copy_reads_size(rng):
    h = rng.standard_normal(100).astype(np.float32)
    y = poisoned(100, np.float32)
    gpu.scaled_copy.simulate[1, 128](h, y, np.float32(1.5))
    np.testing.assert_array_equal(y, h * np.float32(1.5))


def test_launches_switch_signatures_and_layouts(rng):
    n = 1000
    h32 = rng.standard_normal(2 * n).astype(np.float32)
    h64 = rng.standard_normal(n)
    cases = [
        (h32[:n], np.float32),
        (h64, np.float64),
        (h32[::2], np.float32),  # a strided view: another signature
        (h32[:n], np.float32),
    ]
    for k, (x, dtype) in enumerate(cases):
        a = dtype(k + 1.5)
        y = poisoned(n, dtype)
        if k % 2:
            gpu.scaled_copy.simulate((n + 127) // 128, 128, (x, y, a))
        else:
            gpu.scaled_copy.simulate[(n + 127) // 128, 128, 0, None](x, y, a)
        np.testing.assert_array_equal(y, x * a, err_msg=f"case {k}")


def test_device_functions_are_not_launched():
    from jitkern.errors import JitkernTypeError

    with pytest.raises(JitkernTypeError, match="clamp_pair is a device function"):
        gpu.clamp_pair.simulate[1, 1](1.0, 0.0, 2.0)
