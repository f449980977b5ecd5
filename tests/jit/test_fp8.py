"""float8_e4m3fn and float8_e5m2: array element types (ml_dtypes, DLPack, PyTorch), JIT
scalar types (__nv_fp8_e4m3/__nv_fp8_e5m2 from <cuda_fp8.h>, computed in float32 like
half, saturating where CUDA saturates), ElementwiseKernel type names, RawKernel arguments.

CPU: types, promotion, generated C++, sm_90 compiles (no ml_dtypes needed for the JIT);
with ml_dtypes also the simulator. GPU: conversions and arithmetic against ml_dtypes and
PyTorch (skipped where neither is installed)."""

import numpy as np
import pytest

import jitkern
from jitkern import jit
from jitkern import dtypes
from jitkern.errors import JitkernTypeError
from jitkern.compiler import infer
from jitkern.jit import rawkernel
from jitkern.compiler import types as T

E4, E5 = T.float8_e4m3fn, T.float8_e5m2
A_E4, A_E5 = T.array(E4, 1, True, True), T.array(E5, 1, True, True)
A_F32, A_F16 = T.array(T.float32, 1, True, True), T.array(T.float16, 1, True, True)
A_BF16 = T.array(T.bfloat16, 1, True, True)

ml_dtypes = None
try:
    import ml_dtypes
except ImportError:
    pass
needs_ml_dtypes = pytest.mark.skipif(ml_dtypes is None, reason="needs ml_dtypes")


@rawkernel()
def conversions(f, h, a, b, to_e4, to_e5, back_f, back_h, back_bf):
    i = jit.grid(1)
    if i < f.size:
        to_e4[i] = f[i]  # float32 -> e4m3: round to nearest even, saturating
        to_e5[i] = h[i]  # float16 -> e5m2
        back_f[i] = a[i]  # e4m3 -> float32: exact
        back_h[i] = b[i]  # e5m2 -> float16: exact
        back_bf[i] = a[i]  # e4m3 -> bfloat16: exact


@rawkernel()
def fp8_math(a, b, c, y, z, w):
    i = jit.grid(1)
    if i < a.size:
        y[i] = a[i] * b[i] + c[i]  # float32 arithmetic, one rounding to e4m3 where stored
        z[i] = -a[i] + abs(c[i]) * 2
        w[i] = np.float32(a[i]) * np.float32(b[i])


def lines(kernel, *types) -> list:
    source = kernel.emit(*types).split("}  // namespace jk\n", 1)[1]
    return [ln.strip() for ln in source.splitlines() if ln.strip() and not ln.startswith("#")]


# -- types and promotion ---------------------------------------------------------------


def test_scalar_types():
    assert (E4.ctype, E5.ctype) == ("__nv_fp8_e4m3", "__nv_fp8_e5m2")
    assert E4.itemsize == E5.itemsize == 1 and E4.kind == E5.kind == "f"
    assert E4.is_half and E4.is_float8 and not T.float16.is_float8
    assert T.scalar_from_dtype("float8_e5m2") is E5


@pytest.mark.parametrize("mode", ["cuda", "numpy"])
def test_promotion(mode):
    r = infer.result_type
    assert r([E4, E4], mode) is E4
    assert r([E4, E5], mode) is T.float16  # float16 holds both exactly
    assert r([E4, T.float16], mode) is T.float16
    assert r([E5, T.bfloat16], mode) is T.bfloat16
    assert r([E4, T.float32], mode) is T.float32
    assert r([E4, T.int8], mode) is E4
    assert r([E4, T.bool_], mode) is E4
    expected_weak = T.float32 if mode == "cuda" else E4  # cuda mode types 2.0 as float32
    assert r([E4, 2.0], mode) is expected_weak


def test_int32_with_float8_follows_each_mode():
    assert infer.result_type([E4, T.int32], "cuda") is E4  # CuPy's cuda mode: the float
    assert infer.result_type([E4, T.int32], "numpy") is T.float64  # as NumPy's float16


# -- generated C++ and compiles --------------------------------------------------------


ARGS = (A_F32, A_F16, A_E4, A_E5, A_E4, A_E5, A_F32, A_F16, A_BF16)


def test_conversions_emit_cuda_fp8_spellings():
    text = lines(conversions, *ARGS)
    assert text[0].startswith('extern "C" __global__ void conversions(float* f, __half* h, ')
    assert "__nv_fp8_e4m3* a, __nv_fp8_e5m2* b," in text[0]
    assert "to_e4[i] = (__nv_fp8_e4m3)(f[i]);" in text
    assert "to_e5[i] = (__nv_fp8_e5m2)(__half2float(h[i]));" in text
    assert "back_f[i] = (float)(a[i]);" in text
    assert "back_h[i] = __float2half((float)(b[i]));" in text
    assert "back_bf[i] = __float2bfloat16((float)(a[i]));" in text
    assert "#include <cuda_fp8.h>" in conversions.emit(*ARGS)


def test_arithmetic_is_float32_rounded_once_where_stored():
    text = lines(fp8_math, A_E4, A_E4, A_E4, A_E4, A_E4, A_F32)
    assert "y[i] = __nv_fp8_e4m3((((float)(a[i]) * (float)(b[i])) + (float)(c[i])));" in text
    assert any(ln.startswith("z[i] = __nv_fp8_e4m3(((-(float)(a[i])) + ") for ln in text)


@pytest.mark.parametrize("kernel,types", [(conversions, ARGS), (fp8_math, (A_E4,) * 5 + (A_F32,))])
def test_compiles_for_sm90(kernel, types):
    assert kernel.inspect(*types, arch="sm_90").cubin[:4] == b"\x7fELF"


def test_float8_dlpack_codes():
    for code in (dtypes.DL_FLOAT8_E4M3FN, dtypes.DL_FLOAT8_E5M2):
        if ml_dtypes is None:
            with pytest.raises(JitkernTypeError, match="install ml_dtypes for float8_e"):
                dtypes.from_dlpack(code, 8)
        else:
            dt = dtypes.from_dlpack(code, 8)
            assert dt.itemsize == 1 and dtypes.to_dlpack(dt) == (code, 8)


@needs_ml_dtypes
def test_dtype_table_rows():
    e4, e5 = np.dtype(ml_dtypes.float8_e4m3fn), np.dtype(ml_dtypes.float8_e5m2)
    assert dtypes.to_dlpack(e4) == (10, 8) and dtypes.to_dlpack(e5) == (12, 8)
    assert dtypes.ctype(e4) == "__nv_fp8_e4m3" and dtypes.normalize("float8_e5m2") == e5
    assert T.scalar_from_dtype(e4) is E4


@needs_ml_dtypes
def test_elementwise_kernel_type_names_compile_for_sm90():
    k = jitkern.ElementwiseKernel(
        "float8_e4m3fn x, float32 s", "float8_e5m2 y", "y = __nv_fp8_e5m2((float)x * s)", "f8"
    )
    e4, e5 = np.zeros(64, ml_dtypes.float8_e4m3fn), np.zeros(64, ml_dtypes.float8_e5m2)
    result = k.inspect(e4, np.float32(2), e5, arch="sm_90")
    assert "#include <cuda_fp8.h>" in result.source and result.cubin[:4] == b"\x7fELF"
    assert "const __nv_fp8_e4m3& x" in result.source


# -- GPU -----------------------------------------------------------------------------------


def _saturate(x32, dtype):
    top = float(ml_dtypes.finfo(dtype).max)
    return np.clip(x32, -top, top).astype(dtype)  # NaN stays NaN


def _inputs(rng, n):
    f = (rng.standard_normal(n) * 100).astype(np.float32)
    f[:6] = [1e6, -1e6, np.inf, -np.inf, np.nan, 448.5]  # saturate, saturate, NaN kept
    h = (rng.standard_normal(n) * 1000).astype(np.float16)
    h[:2] = [np.float16(65000), np.float16(-np.inf)]  # beyond e5m2's 57344: saturates
    a = (rng.standard_normal(n) * 8).astype(ml_dtypes.float8_e4m3fn)
    b = (rng.standard_normal(n) * 8).astype(ml_dtypes.float8_e5m2)
    return f, h, a, b


@needs_ml_dtypes
def test_conversions_match_ml_dtypes_with_cuda_saturation(rng, launch):
    n = 1000
    f, h, a, b = _inputs(rng, n)
    # NaN-poisoned: a saturated or rounded value may be zero
    kinds = (a.dtype, b.dtype, np.float32, np.float16, ml_dtypes.bfloat16)
    outs = [launch.to_device(np.full(n, np.nan, d)) for d in kinds]
    launch(conversions)[(n + 127) // 128, 128](*map(launch.to_device, (f, h, a, b)), *outs)
    got = [launch.get(o) for o in outs]
    np.testing.assert_array_equal(got[0].view(np.uint8), _saturate(f, a.dtype).view(np.uint8))
    want5 = _saturate(h.astype(np.float32), b.dtype)
    np.testing.assert_array_equal(got[1].view(np.uint8), want5.view(np.uint8))
    np.testing.assert_array_equal(got[2], a.astype(np.float32))
    np.testing.assert_array_equal(got[3], b.astype(np.float16))
    np.testing.assert_array_equal(got[4].astype(np.float32), a.astype(np.float32))


@needs_ml_dtypes
def test_arithmetic_matches_float32_then_one_saturating_rounding(rng, launch):
    n = 1000
    a, b, c = ((rng.standard_normal(n) * 20).astype(ml_dtypes.float8_e4m3fn) for _ in range(3))
    y, z = (launch.to_device(np.full(n, np.nan, a.dtype)) for _ in range(2))
    w = launch.to_device(np.full(n, np.nan, np.float32))
    launch(fp8_math)[(n + 127) // 128, 128](*map(launch.to_device, (a, b, c)), y, z, w)
    f = [v.astype(np.float32) for v in (a, b, c)]
    want_y = _saturate(f[0] * f[1] + f[2], a.dtype)  # products of e4m3 values are exact
    np.testing.assert_array_equal(launch.get(y).view(np.uint8), want_y.view(np.uint8))
    want_z = _saturate(-f[0] + np.abs(f[2]) * 2, a.dtype)
    np.testing.assert_array_equal(launch.get(z).view(np.uint8), want_z.view(np.uint8))
    np.testing.assert_array_equal(launch.get(w), f[0] * f[1])


@pytest.mark.gpu
def test_pytorch_float8_tensors(rng):
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "float8_e4m3fn"):
        pytest.skip("this PyTorch has no float8 types")
    n = 512
    src = torch.tensor(rng.standard_normal(n) * 50, dtype=torch.float32, device="cuda")
    src[:3] = torch.tensor([1e5, -1e5, 300.0])
    a = (torch.randn(n, device="cuda") * 8).to(torch.float8_e4m3fn)
    b = (torch.randn(n, device="cuda") * 8).to(torch.float8_e5m2)
    h = torch.randn(n, device="cuda").to(torch.float16)
    nan = torch.full((n,), float("nan"), device="cuda")  # every output poisoned with NaN
    to_e4 = nan.to(torch.float8_e4m3fn)
    to_e5 = nan.to(torch.float8_e5m2)
    back_f = nan.clone()
    back_h = nan.to(torch.float16)
    back_bf = nan.to(torch.bfloat16)
    conversions[(n + 127) // 128, 128](src, h, a, b, to_e4, to_e5, back_f, back_h, back_bf)
    torch.cuda.synchronize()
    clipped = src.clamp(-448, 448)  # PyTorch's own conversion does not saturate
    assert torch.equal(to_e4.view(torch.uint8), clipped.to(torch.float8_e4m3fn).view(torch.uint8))
    assert torch.equal(to_e5.view(torch.uint8), h.to(torch.float8_e5m2).view(torch.uint8))
    assert torch.equal(back_f, a.float())
    assert torch.equal(back_h, b.to(torch.float16))
    assert torch.equal(back_bf, a.to(torch.bfloat16))


@pytest.mark.gpu
@needs_ml_dtypes
def test_elementwise_and_raw_kernels_take_float8_arrays(rng):
    n = 300
    a = (rng.standard_normal(n) * 8).astype(ml_dtypes.float8_e4m3fn)
    k = jitkern.ElementwiseKernel(
        "float8_e4m3fn x, float32 s", "float8_e5m2 y", "y = __nv_fp8_e5m2((float)x * s)", "f8"
    )
    poison = jitkern.asarray(np.full(n, np.nan, ml_dtypes.float8_e5m2))
    y = k(jitkern.asarray(a), np.float32(3), poison)
    want = _saturate(a.astype(np.float32) * 3, np.dtype(ml_dtypes.float8_e5m2))
    np.testing.assert_array_equal(y.get().view(np.uint8), want.view(np.uint8))
    raw = jitkern.RawKernel(
        r"""#include <cuda_fp8.h>
        extern "C" __global__ void widen(const __nv_fp8_e4m3* x, float* y, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) y[i] = (float)x[i];
        }""",
        "widen",
    )
    out = jitkern.asarray(np.full(n, np.nan, np.float32))
    raw((3,), (128,), (jitkern.asarray(a), out, np.int32(n)))
    np.testing.assert_array_equal(out.get(), a.astype(np.float32))
