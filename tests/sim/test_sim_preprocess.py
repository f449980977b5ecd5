"""String kernels' preprocessor directives and options, the same on the GPU and in the
simulator (issue 25, part 2): the simulator runs a real C preprocessor (pcpp) with the
kernel's -D/-U/-I/-include options before its C subset. Each test is a twin: [sim] runs the
kernel in the simulator everywhere, [gpu] on the device; both are checked against NumPy.
RawKernel.simulate also takes the frozen dataclass and NamedTuple structs a GPU launch takes."""

import dataclasses
import typing

import numpy as np
import pytest

import jitkern
from jitkern import KernelArgumentError

SCALED = r"""
#ifndef SCALE
#define SCALE 2
#endif
#if PRECISION == 2
#define REAL double
#else
#define REAL float
#endif
#if 0
extern "C" __global__ void scaled(const double* x, double* y, int n, int unused) {}
#endif
extern "C" __global__ void scaled(const REAL* x, REAL* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
#ifdef NEGATE
    if (i < n) y[i] = -SCALE * x[i];
#else
    if (i < n) y[i] = SCALE * x[i];
#endif
}
"""

CASES = [  # (options, dtype, factor)
    ((), np.float32, 2),
    (("-DSCALE=3",), np.float32, 3),
    (("-DPRECISION=2",), np.float64, 2),
    (("-DPRECISION=2", "-DSCALE=5", "-DNEGATE"), np.float64, -5),
    (("-DNEGATE", "-UNEGATE", "--define-macro=SCALE=7"), np.float32, 7),
]


@pytest.mark.parametrize("options, dtype, factor", CASES)
def test_options_and_conditionals_decide_the_code_and_the_types(launch, rng, options, dtype,
                                                                factor):
    n = int(rng.integers(1, 300))
    x = rng.standard_normal(n).astype(dtype)
    y = launch.poisoned(n, dtype)
    k = jitkern.RawKernel(SCALED, "scaled", options=options)
    launch(k)(((n + 63) // 64,), (64,), (launch.to_device(x), y, n))
    np.testing.assert_array_equal(launch.get(y), (factor * x.astype(np.float64)).astype(dtype))
    other = np.float64 if dtype == np.float32 else np.float32
    with pytest.raises(KernelArgumentError, match=r"scaled: argument 1 \(y\): the kernel "
                                                  r"expects REAL\* \((float|double)\*\)"):
        launch(k)((1,), (64,), (launch.to_device(x), launch.zeros(n, other), n))


def test_a_header_from_an_include_folder(launch, rng, tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "defs.h").write_text(
        "#pragma once\n"
        "#define SQUARE(v) ((v) * (v))\n"
        "#ifndef OFFSET\n#define OFFSET 1\n#endif\n"
        "typedef double value_t;\n")
    src = r"""
    #include "lib/defs.h"
    extern "C" __global__ void k(const value_t* x, value_t* y, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = SQUARE(x[i]) + OFFSET;
    }
    """
    n = int(rng.integers(1, 300))
    x = rng.standard_normal(n)
    for options, offset in (((f"-I{tmp_path}",), 1), ((f"-I{tmp_path}", "-DOFFSET=-4"), -4)):
        y = launch.poisoned(n, np.float64)
        k = jitkern.RawKernel(src, "k", options=options)
        launch(k)(((n + 63) // 64,), (64,), (launch.to_device(x), y, n))
        # the GPU may fuse x * x + offset (one rounding, NumPy's two): near a cancellation
        # that last bit is large against the result, not against its terms
        np.testing.assert_allclose(launch.get(y), x * x + offset, rtol=1e-15,
                                   atol=2.3e-16 * float((x * x + abs(offset)).max()))
    with pytest.raises(KernelArgumentError,
                       match=r"argument 0 \(x\): the kernel expects "
                             r"const value_t\* \(const double\*\)"):
        launch(k)((1,), (64,), (launch.to_device(x.astype(np.float32)), y, n))


def test_a_pre_included_header(launch, rng, tmp_path):
    (tmp_path / "pre.h").write_text("#define BIAS 0.25f\n")
    src = r"""
    extern "C" __global__ void k(const float* x, float* y, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = x[i] + BIAS;
    }
    """
    n = int(rng.integers(1, 300))
    x = rng.standard_normal(n).astype(np.float32)
    y = launch.poisoned(n, np.float32)
    k = jitkern.RawKernel(src, "k", options=(f"-include={tmp_path / 'pre.h'}",))
    launch(k)(((n + 63) // 64,), (64,), (launch.to_device(x), y, n))
    np.testing.assert_array_equal(launch.get(y), x + np.float32(0.25))


def test_an_elementwise_kernel_sees_its_options(launch, rng):
    k = jitkern.ElementwiseKernel(
        "T x", "T y", "y = SCALE * x + SHIFT",
        "scale_shift", preamble="#ifndef SHIFT\n#define SHIFT 0\n#endif",
        options=("-DSCALE=3",))
    x = rng.standard_normal(int(rng.integers(1, 300)))
    y = launch.poisoned(x.shape, np.float64)
    if launch.simulated:
        k.simulate(x, y)
    else:
        k(launch.to_device(x), y)
    np.testing.assert_allclose(launch.get(y), 3 * x, rtol=1e-15)


# -- structs by value: the same argument forms on the GPU and in the simulator ----------

PAIR = r"""
struct Pair { double scale; int shift; float bias; };
extern "C" __global__ void affine(const double* x, double* y, Pair p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = p.scale * x[i] + p.shift + p.bias;
}
"""


@dataclasses.dataclass(frozen=True)
class PairClass:
    scale: float
    shift: int
    bias: float


class PairTuple(typing.NamedTuple):
    scale: float
    shift: int
    bias: float


@pytest.mark.parametrize("form", [PairClass, PairTuple, "record"])
def test_struct_arguments_as_dataclass_namedtuple_or_record(launch, rng, form):
    n = int(rng.integers(1, 300))
    x = rng.standard_normal(n)
    scale, shift = float(rng.standard_normal()), int(rng.integers(-100, 100))
    bias = float(np.float32(rng.standard_normal()))
    if form == "record":
        dt = np.dtype([("scale", "f8"), ("shift", "i4"), ("bias", "f4")], align=True)
        value = np.array((scale, shift, bias), dt)[()]
    else:
        value = form(scale, shift, bias)
    y = launch.poisoned(n, np.float64)
    k = jitkern.RawKernel(PAIR, "affine")
    launch(k)(((n + 63) // 64,), (64,), (launch.to_device(x), y, value, n))
    np.testing.assert_allclose(launch.get(y), scale * x + shift + bias, rtol=1e-15)


def test_a_dataclass_with_a_float_for_an_integer_field_is_refused(launch, rng):
    n = 8
    x = launch.to_device(rng.standard_normal(n))
    y = launch.poisoned(n, np.float64)
    k = jitkern.RawKernel(PAIR, "affine")
    with pytest.raises(KernelArgumentError, match=r"shift"):
        launch(k)((1,), (64,), (x, y, PairClass(1.0, 2.5, 0.0), n))
    assert np.isnan(launch.get(y)).all()


class AffineTuple(typing.NamedTuple):
    scale: float
    shift: int


def test_a_header_struct_and_template_kernels_as_compiled(launch, rng, tmp_path):
    (tmp_path / "affine.h").write_text(
        "#ifndef AFFINE_H\n#define AFFINE_H\n"
        "struct Affine { double scale; int shift; };\n"
        "#endif\n")
    src = r"""
    #include "affine.h"
    template <typename T>
    __global__ void apply(const T* x, T* y, Affine a, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = (T)(a.scale * x[i] + a.shift);
    }
    """
    module = jitkern.RawModule(code=src, options=(f"-I{tmp_path}",),
                               name_expressions=("apply<float>", "apply<double>"))
    n = int(rng.integers(1, 300))
    scale, shift = float(rng.standard_normal()), int(rng.integers(-50, 50))
    affine = AffineTuple(scale, shift)
    for ctype, dtype, rtol in (("float", np.float32, 1.2e-7), ("double", np.float64, 1e-15)):
        x = rng.standard_normal(n).astype(dtype)
        y = launch.poisoned(n, dtype)
        k = module.get_function(f"apply<{ctype}>")
        launch(k)(((n + 63) // 64,), (64,), (launch.to_device(x), y, affine, n))
        want = (scale * x.astype(np.float64) + shift).astype(dtype)
        np.testing.assert_allclose(launch.get(y), want, rtol=rtol)
    with pytest.raises(KernelArgumentError, match=r"apply<double>: argument 1 \(y\)"):
        launch(k)((1,), (64,), (launch.to_device(x), launch.zeros(n, np.float32), affine, n))
