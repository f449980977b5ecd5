"""The GPU tests of tests/jit/test_compat.py and test_trust.py, run by the simulator.

Each test launches the kernel object its GPU twin launches, with NumPy arrays, and
checks the same results against NumPy (on every machine: no GPU needed).
"""

import importlib.util
import pathlib

import numpy as np

_JIT = pathlib.Path(__file__).resolve().parents[1] / "jit"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"{name}_for_sim", _JIT / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


compat = _load("test_compat")
trust = _load("test_trust")


def poisoned(shape, dtype):
    return np.full(shape, np.nan if np.dtype(dtype).kind in "fc" else -7, dtype)


def test_cupy_module_reads_as_numpy(rng):
    h = rng.standard_normal(32).astype(np.float32)
    y = poisoned(32, np.float32)
    compat.cupy_spellings.simulate[1, 32](h, y)
    # float32 arithmetic, each operation rounded (the simulator does not contract to FMA)
    expected = h * np.float32(1.5) + np.float32(2) + np.float32(2)
    np.testing.assert_array_equal(y, expected)


def test_numpy_dtype_type(rng):
    h = (rng.standard_normal(32) * 10).astype(np.float32)
    y, z = poisoned(32, np.int32), poisoned(32, np.float64)
    compat.dtype_type.simulate[1, 32](h, y, z)
    np.testing.assert_array_equal(y, h.astype(np.int32))
    np.testing.assert_array_equal(z, h.astype(np.float64) + 0.5)


def test_captured_none(rng):
    h = rng.standard_normal(32).astype(np.float32)
    for scale, expected in ((None, h), (2.0, h * np.float32(2))):
        y = poisoned(32, np.float32)
        compat.make_scaler(scale).simulate[1, 32](h, y)
        np.testing.assert_array_equal(y, expected)


def test_device_function_factory(rng):
    a, b = rng.standard_normal(32).astype(np.float32), rng.standard_normal(32).astype(np.float32)
    out = poisoned(32, np.float32)
    compat.factory_kernel.simulate[1, 32](a, b, out)
    f = np.float32
    np.testing.assert_array_equal(out, (a + b + f(10)) - (a + b + f(1)))


def test_group_members():
    grid, block = 3, 64
    out = np.full((grid * block, 14), -1, np.int64)
    compat.group_members.simulate[grid, block](out)
    t = np.arange(grid * block)
    expected = np.stack(
        [
            np.full_like(t, grid),
            np.ones_like(t),
            t // block,
            t // block,
            np.full_like(t, grid * block),
            np.full_like(t, grid),
            np.zeros_like(t),
            t % block,
            t // block,
            t % block,
            np.full_like(t, block),
            np.full_like(t, block),
            np.full_like(t, block),
            np.full_like(t, grid * block + block),
        ],
        axis=1,
    )
    np.testing.assert_array_equal(out, expected)


def test_cub_complex_sum(rng):
    h = (rng.standard_normal(32) + 1j * rng.standard_normal(32)).astype(np.complex64)
    out = poisoned(1, np.complex64)
    compat.complex_sum.simulate[1, 32](h, out)
    np.testing.assert_allclose(out[0], h.astype(np.complex128).sum(), rtol=1e-5)


def test_augmented_assignment_calls_the_index_function_once():
    x = np.zeros(32, np.int32)
    m = np.ones((8, 4))
    calls = np.zeros(1, np.int32)
    smem_out = poisoned(4, np.int32)
    compat.augmented.simulate[1, 32](x, m, calls, smem_out)
    assert calls[0] == 4 * 32  # four calls per thread, not seven
    np.testing.assert_array_equal(x, np.ones(32))
    np.testing.assert_array_equal(m, np.full((8, 4), 2.0))
    np.testing.assert_array_equal(smem_out, [0, 0, 0, 0])


def test_half_arithmetic_is_float32_then_one_rounding(rng):
    n = 1024
    a, b, c = (rng.standard_normal(n).astype(np.float16) for _ in range(3))
    y = poisoned(n, np.float16)
    compat.fma_half.simulate[n // 256, 256](a, b, c, y)
    f32 = np.float32
    once = (a.astype(f32) * b.astype(f32) + c.astype(f32)).astype(np.float16)
    np.testing.assert_array_equal(y.view(np.uint16), once.view(np.uint16))
    per_op = a * b + c  # NumPy's float16 ufuncs round after each operation
    assert (per_op.view(np.uint16) != once.view(np.uint16)).any()
    y2 = poisoned(n, np.float16)
    compat.half_local.simulate[n // 256, 256](a, b, c, y2)  # the local t rounds
    np.testing.assert_array_equal(y2.view(np.uint16), per_op.view(np.uint16))


def test_cub_half_sum_accumulates_in_float32(rng):
    x = (rng.random(32) * 100).astype(np.float16)
    out = poisoned(1, np.float16)
    compat.half_warp_sum.simulate[1, 32](x, out)
    # the warp's tree order, in float32, rounded once: within one float16 step of NumPy's
    assert abs(float(out[0]) - float(np.sum(x))) <= float(np.spacing(np.sum(x)))
    tree = x.astype(np.float32)
    for offset in (16, 8, 4, 2, 1):
        tree[:offset] = tree[:offset] + tree[offset : 2 * offset]
    assert out.view(np.uint16)[0] == tree[:1].astype(np.float16).view(np.uint16)[0]


def test_zero_d_arrays(rng):
    h = rng.standard_normal(32).astype(np.float32)
    scale = np.float32(rng.standard_normal())
    s, out = np.array(scale), np.array(0.5)
    y = poisoned(32, np.float32)
    compat.zero_d.simulate[1, 32](s, h, y, out)
    np.testing.assert_array_equal(y, h * scale + np.float32(1))
    assert float(out) == 0.5 + float(scale)


# -- tests/jit/test_trust.py -------------------------------------------------------------


def test_sum_of_600_terms_adds_left_to_right_in_float32(tmp_path, rng):
    k = trust._long_sum_kernel(tmp_path, 600)
    x = rng.standard_normal(600).astype(np.float32)
    y = np.full(1, np.nan, np.float32)
    k.simulate[1, 1](x, y)
    assert y[0] == np.add.accumulate(x, dtype=np.float32)[-1]


# test_trust's other GPU tests have simulated twins in test_sim_semantics.py (a rebound
# global, colliding names) and test_sim_checks.py (an unassigned local is reported).
