"""CuPy's elementwise routines inside fuse (issue 25): ``fix``, ``sinc``, ``i0``, ``angle``,
``nan_to_num``, ``isclose``, ``isposinf``/``isneginf``, ``around`` with decimals, ``copyto``,
``bitwise_count``, called as NumPy's routines, as ``jitkern.<name>`` and as CuPy's kernels
(through CuPy's override hook: a stand-in here, CuPy itself on the GPU).

Twins (GPU with jitkern arrays; simulator with NumPy arrays) against NumPy: the result dtype
is NumPy's on the same dtypes; values are compared with NumPy on float64 (complex128)
inputs, at the result dtype's tolerance. Inputs mix random values with 0, -0, halves,
NaN and the infinities.
"""

import warnings

import numpy as np
import pytest

import jitkern
from jitkern.kernels.fuse import FuseTraceError
from test_fuse_alias import compile_every_kernel

#: rtol, atol per result dtype char
_TOL = {"e": (2e-3, 2e-3), "f": (4e-6, 1e-6), "d": (1e-13, 1e-14), "F": (4e-6, 1e-6),
        "D": (1e-13, 1e-14)}  # fmt: skip
_SPECIAL = [0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, 1e-3, np.nan, np.inf, -np.inf]


def _input(rng, dtype, n=60):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(n) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -100), min(info.max, 100), n).astype(dtype)
    real = np.concatenate([rng.uniform(-40, 40, n - len(_SPECIAL)), _SPECIAL])
    if dtype.kind == "c":
        imag = np.concatenate([rng.uniform(-40, 40, n - len(_SPECIAL)), _SPECIAL[::-1]])
        return (real + 1j * imag).astype(dtype)
    return real.astype(dtype)


def _wide(a):
    kind = a.dtype.kind
    return a.astype(np.complex128) if kind == "c" else a.astype(np.float64) if kind == "f" else a


#: name -> (the fused function's body, input dtypes); NATIVE: compared with NumPy on the
#: same dtype (rounding, replacement values: a float64 reference is another answer)
FLOATS = ["float64", "float32", "float16"]
INTS = ["int8", "int32", "uint8", "int64"]
CASES = {
    "fix": (lambda x: np.fix(x), FLOATS + INTS + ["bool"]),
    "sinc": (lambda x: np.sinc(x), FLOATS + ["int16", "complex128"]),
    "i0": (lambda x: np.i0(x), FLOATS + ["int32", "uint8"]),
    "angle": (lambda x: np.angle(x), FLOATS + ["int8", "complex64", "complex128"]),
    "angle deg": (lambda x: np.angle(x, deg=True), ["float64", "complex128"]),
    "nan_to_num": (lambda x: np.nan_to_num(x), FLOATS + INTS + ["bool", "complex128"]),
    "nan_to_num values": (lambda x: np.nan_to_num(x, nan=-1.5, posinf=9.0, neginf=-8.0),
                          ["float64", "float32", "complex64"]),
    "isclose": (lambda x: np.isclose(x, x[::-1] * (1 + 1e-9), equal_nan=True),
                FLOATS + ["int32", "complex128"]),
    "isclose tolerances": (lambda x: np.isclose(x, np.floor(x), rtol=0.1, atol=0.25),
                           ["float64", "float32"]),
    "isposinf, isneginf": (lambda x: (np.isposinf(x), np.isneginf(x)), FLOATS + ["int16"]),
    "around 2": (lambda x: np.around(x, 2), FLOATS),
    "round -1": (lambda x: np.round(x, -1), ["float64", "float32", "int32", "int64"]),
    "round 0": (lambda x: x.round(), FLOATS + INTS + ["complex128"]),
    "bitwise_count": (lambda x: np.bitwise_count(x), INTS + ["bool", "uint64"]),
}
NATIVE = {"fix", "nan_to_num", "nan_to_num values", "around 2", "round -1", "round 0"}


def _check(got, same, wide):
    """dtype and shape NumPy's on the same dtypes; values NumPy's on float64 (``wide``),
    rounded to the result's dtype, at its tolerance (``same`` itself where wide is None)."""
    got, same = (v if isinstance(v, tuple) else (v,) for v in (got, same))
    wide = same if wide is None else wide if isinstance(wide, tuple) else (wide,)
    for g, s, w in zip(got, same, wide):
        s = np.asarray(s)
        assert g.dtype == s.dtype and g.shape == s.shape, (g.dtype, s.dtype)
        if s.dtype.kind in "biu":
            np.testing.assert_array_equal(g, s)
            continue
        with np.errstate(over="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # complex to real: the real part, as NumPy's
            w = np.asarray(w).astype(s.dtype)
        rtol, atol = _TOL[s.dtype.char]
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("name", list(CASES))
def test_routines_match_numpy(launch, rng, name):
    body, dtypes = CASES[name]
    fused = jitkern.fuse(body)
    for dtype in dtypes:
        x = _input(rng, dtype)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            same = body(x)
            wide = None if name in NATIVE else body(_wide(x))
        got = launch(fused)(launch.to_device(x))
        got = tuple(launch.get(g) for g in got) if isinstance(got, tuple) else launch.get(got)
        _check(got, same, wide)


@pytest.mark.parametrize("name", list(CASES))
def test_routine_kernels_compile(rng, name):
    body, dtypes = CASES[name]
    fused = jitkern.fuse(body)
    for dtype in dtypes:
        assert compile_every_kernel(fused, _input(rng, dtype)) >= 1


def test_copyto_into_argument_views(launch, rng):
    @jitkern.fuse()
    def copies(dst, src):
        np.copyto(dst[1:], src[:-1] * 2)
        np.copyto(dst[:1], 7.5, casting="unsafe")

    dst, src = _input(rng, "int32"), _input(rng, "int16")
    with pytest.raises(TypeError, match="Cannot cast"):
        copies.func(dst.copy(), src.astype(np.float64))  # NumPy: same_kind, no float into int
    with pytest.raises(FuseTraceError, match="cannot cast float64 to int32"):
        launch(copies)(launch.to_device(dst), launch.to_device(src.astype(np.float64)))
    want = dst.copy()
    copies.func(want, src)
    device = launch.to_device(dst)
    launch(copies)(device, launch.to_device(src))
    np.testing.assert_array_equal(launch.get(device), want)


def test_jitkern_names_run_the_routines_on_device(launch, rng):
    x = _input(rng, "float64")
    for name in ("fix", "sinc", "i0", "nan_to_num", "isposinf", "bitwise_count"):
        arg = x if name != "bitwise_count" else _input(rng, "int32")
        got = launch.get(launch(getattr(jitkern, name))(launch.to_device(arg)))
        with np.errstate(all="ignore"):
            want = getattr(np, name)(arg)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14, equal_nan=True)


@pytest.mark.parametrize("fn, words", [
    (lambda z: np.i0(z), "i0 is not defined for complex"),
    (lambda z: np.isposinf(z), "isposinf of complex values is ambiguous"),
    (lambda z: np.around(z, 1), "to 1 decimals is not supported"),
])
def test_routine_refusals_say_why(fn, words):
    with pytest.raises(FuseTraceError, match=words) as info:
        jitkern.fuse(fn).graph_for(np.zeros(3, np.complex128))
    assert isinstance(info.value, TypeError) and isinstance(info.value, jitkern.JitkernError)


# ---------------------------------------------------------------------------
# CuPy's kernels, as CuPy calls them with a traced argument


class ufunc:  # noqa: N801 - CuPy's class name, which fuse reads
    """A stand-in for a CuPy ufunc: CuPy's __call__ hands any argument with the override
    hook the call (cupy/_core/_kernel.pyx); fuse reads the kernel's name."""

    def __init__(self, name, nin):
        self.name, self.nin = f"cupy_{name}", nin

    def __call__(self, *args, **kwargs):
        for a in args:
            if hasattr(a, "__cupy_override_elementwise_kernel__"):
                return a.__cupy_override_elementwise_kernel__(self, *args, **kwargs)
        raise AssertionError("the stand-in runs only on traced values")


_fix, _sinc, _i0 = ufunc("fix", 1), ufunc("sinc", 1), ufunc("i0", 1)
_angle, _angle_deg, _copy = ufunc("angle", 1), ufunc("angle_deg", 1), ufunc("copy", 1)
_round = ufunc("round", 2)


@jitkern.fuse()
def cupy_kernels(x, out):
    _copy(_fix(x) + _sinc(x) + _i0(x) * 0 + _angle_deg(x) + _round(x, 1), out)  # copyto
    return _copy(_angle(x)), _fix(x, out=None)


def test_cupys_kernels_through_the_override_hook(launch, rng):
    x = _input(rng, "float64")
    out = launch.poisoned(x.shape, np.float32)
    got = launch(cupy_kernels)(launch.to_device(x), out)
    with np.errstate(all="ignore"):
        want = (np.fix(x) + np.sinc(x) + np.i0(x) * 0 + np.angle(x, deg=True)
                + np.around(x, 1)).astype(np.float32)
    np.testing.assert_allclose(launch.get(out), want, rtol=4e-6, atol=1e-6, equal_nan=True)
    np.testing.assert_allclose(launch.get(got[0]), np.angle(x), rtol=1e-15)
    np.testing.assert_array_equal(launch.get(got[1]), np.fix(x))


@pytest.mark.gpu
def test_cupy_routines_inside_fuse():
    cupy = pytest.importorskip("cupy")

    @jitkern.fuse()
    def with_cupy(x, out):
        cupy.copyto(out, cupy.fix(x) + cupy.sinc(x) + cupy.i0(x / 10) + cupy.angle(x, deg=True))
        return cupy.around(x, 2), cupy.bitwise_count(cupy.abs(x).astype(cupy.int32))

    rng = np.random.default_rng()
    x = rng.uniform(-20, 20, 500)
    out = cupy.full(500, cupy.nan)
    rounded, bits = with_cupy(cupy.asarray(x), out)
    want = np.fix(x) + np.sinc(x) + np.i0(x / 10) + np.angle(x, deg=True)
    np.testing.assert_allclose(cupy.asnumpy(out), want, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(cupy.asnumpy(rounded), np.around(x, 2), rtol=1e-15)
    np.testing.assert_array_equal(cupy.asnumpy(bits), np.bitwise_count(np.abs(x).astype(np.int32)))
