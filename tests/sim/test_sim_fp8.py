"""tests/jit/test_fp8.py's kernels run by the simulator (with ml_dtypes for NumPy's float8
types): CUDA's saturating conversions and float32 arithmetic, bit for bit."""

import importlib.util
import pathlib

import numpy as np
import pytest

ml_dtypes = pytest.importorskip("ml_dtypes")

_PATH = pathlib.Path(__file__).resolve().parents[1] / "jit" / "test_fp8.py"
_SPEC = importlib.util.spec_from_file_location("fp8_kernels_for_sim", _PATH)
gpu = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(gpu)


def test_conversions_saturate_as_cuda_does(rng):
    n = 300
    f, h, a, b = gpu._inputs(rng, n)
    outs = [np.zeros(n, d) for d in (a.dtype, b.dtype, np.float32, np.float16)]
    outs.append(np.full(n, np.nan, ml_dtypes.bfloat16))  # the GPU test's bfloat16 output
    gpu.conversions.simulate[3, 128](f, h, a, b, *outs)
    np.testing.assert_array_equal(outs[0].view(np.uint8), gpu._saturate(f, a.dtype).view(np.uint8))
    want5 = gpu._saturate(h.astype(np.float32), b.dtype)
    np.testing.assert_array_equal(outs[1].view(np.uint8), want5.view(np.uint8))
    np.testing.assert_array_equal(outs[2], a.astype(np.float32))
    np.testing.assert_array_equal(outs[3], b.astype(np.float16))
    want_bf = a.astype(ml_dtypes.bfloat16)  # e4m3 -> bfloat16 is exact
    assert outs[4].dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(outs[4].view(np.uint16), want_bf.view(np.uint16))


def test_arithmetic_is_float32_then_one_saturating_rounding(rng):
    n = 300
    a, b, c = ((rng.standard_normal(n) * 20).astype(ml_dtypes.float8_e4m3fn) for _ in range(3))
    y, z = np.zeros(n, a.dtype), np.zeros(n, a.dtype)
    w = np.full(n, np.nan, np.float32)
    gpu.fp8_math.simulate[3, 128](a, b, c, y, z, w)
    f = [v.astype(np.float32) for v in (a, b, c)]
    want_y = gpu._saturate(f[0] * f[1] + f[2], a.dtype)
    np.testing.assert_array_equal(y.view(np.uint8), want_y.view(np.uint8))
    want_z = gpu._saturate(-f[0] + np.abs(f[2]) * 2, a.dtype)
    np.testing.assert_array_equal(z.view(np.uint8), want_z.view(np.uint8))
    np.testing.assert_array_equal(w, f[0] * f[1])
    # ml_dtypes' own rounding of the same sums overflows to NaN where CUDA saturates
    assert (y.view(np.uint8) != (f[0] * f[1] + f[2]).astype(a.dtype).view(np.uint8)).any()
