"""String kernels behave as CuPy's (issue 25, section 3): parameter names CuPy allows, Python
scalars for ``raw`` scalar parameters. Each twin test runs on the GPU ([gpu]) and in the
simulator ([sim]) from one body, against NumPy, with poisoned outputs."""

import numpy as np
import pytest

import jitkern
from jitkern.compiler.strings.params import ParamError

PI = "3.141592653589793"


# -- names: CuPy reserves 'i' in ElementwiseKernel, nothing plain in ReductionKernel ----------


def test_a_window_kernel_may_name_its_length_n(rng, launch):
    n = int(rng.integers(5, 400))
    hann = jitkern.ElementwiseKernel(
        "int64 n", "float64 w", f"w = 0.5 - 0.5 * cos(2.0 * {PI} * i / (n - 1))", "hann_n")
    w = launch.poisoned(n, np.float64)
    out = launch(hann)(n, w)
    assert out is w
    np.testing.assert_allclose(launch.get(w), np.hanning(n), rtol=1e-12, atol=1e-15)


def test_an_array_parameter_may_be_named_n(rng, launch):
    x = rng.standard_normal(int(rng.integers(1, 3000)))
    k = jitkern.ElementwiseKernel("float64 n, raw float64 m", "float64 y",
                                  "y = n * 2.0 + m[_ind.size() - 1 - i]", "named_n")
    y = launch.poisoned(x.shape, np.float64)
    launch(k)(launch.to_device(x), launch.to_device(x), y)
    np.testing.assert_allclose(launch.get(y), x * 2 + x[::-1], rtol=1e-15)


def test_reduction_parameters_may_be_named_i_and_n(rng, launch):
    rows, cols = (int(v) for v in rng.integers(1, 300, 2))
    x, y = rng.standard_normal((2, rows, cols))
    dot = jitkern.ReductionKernel("float64 i, float64 n", "float64 s", "i * n", "a + b",
                                  "s = a", "0", "dot_in")
    s = launch.poisoned(rows, np.float64)
    launch(dot)(launch.to_device(x), launch.to_device(y), s, axis=1)
    np.testing.assert_allclose(launch.get(s), (x * y).sum(axis=1), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("params, name, why", [
    ("float32 i", "'i'", "element's index"),
    ("float32 x, float32 _ind", "'_ind'", "starting with '_'"),
    ("float32 _k", "'_k'", "starting with '_'"),
])
def test_elementwise_refuses_the_names_cupy_reserves(params, name, why):
    with pytest.raises(ParamError) as info:
        jitkern.ElementwiseKernel(params, "float32 y", "y = 0", "reserved")
    assert isinstance(info.value, ValueError) and isinstance(info.value, jitkern.JitkernError)
    assert f"{name} is reserved" in str(info.value) and why in str(info.value)
    assert f"in_params {params!r}" in str(info.value)


def test_reduction_refuses_underscore_names_but_not_i():
    with pytest.raises(ParamError, match="'_s' is reserved"):
        jitkern.ReductionKernel("float32 _s", "float32 y", "_s", "a + b", "y = a", "0", "r")
    k = jitkern.ReductionKernel("float32 i", "float32 y", "i", "a + b", "y = a", "0", "r_i")
    assert [p.name for p in k.in_params] == ["i"]


# -- raw scalar parameters take Python and NumPy scalars, converted to their declared type ----


def test_raw_scalars_take_python_scalars(rng, launch):
    x = rng.standard_normal(int(rng.integers(1, 5000))).astype(np.float32)
    a, k0 = float(rng.standard_normal()), int(rng.integers(-50, 50))
    k = jitkern.ElementwiseKernel("T x, raw T a, raw int32 k", "T y", "y = x * a + k", "raw_sc")
    y = launch.poisoned(x.shape, np.float32)
    launch(k)(launch.to_device(x), a, k0, y)
    np.testing.assert_array_equal(launch.get(y), x * np.float32(a) + np.float32(k0))


def test_raw_scalar_sets_the_length_of_an_all_raw_kernel(rng, launch):
    n = int(rng.integers(1, 2000))
    x = rng.standard_normal(n)
    rev = jitkern.ElementwiseKernel("raw T x, raw int64 m", "raw T y", "y[i] = x[m - 1 - i]",
                                    "raw_rev")
    y = launch.poisoned(n, np.float64)
    launch(rev)(launch.to_device(x), np.int64(n), y, size=n)
    np.testing.assert_array_equal(launch.get(y), x[::-1])


def test_reduction_raw_scalar_weight(rng, launch):
    x = rng.standard_normal((int(rng.integers(1, 50)), int(rng.integers(1, 700))))
    w = float(rng.standard_normal())
    k = jitkern.ReductionKernel("T x, raw T w", "T y", "x * w", "a + b", "y = a", "0", "rw_red")
    y = launch.poisoned(x.shape[0], np.float64)
    launch(k)(launch.to_device(x), w, y, axis=1)
    np.testing.assert_allclose(launch.get(y), (x * w).sum(axis=1), rtol=1e-12, atol=1e-12)


def test_a_raw_scalar_out_of_its_type_is_refused_naming_it():
    k = jitkern.ElementwiseKernel("T x, raw int8 k", "T y", "y = x + k", "raw_int8")
    with pytest.raises(TypeError) as info:
        k.simulate(np.zeros(4, np.float32), 300)
    assert "'k'" in str(info.value) and "300" in str(info.value)
