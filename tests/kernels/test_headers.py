"""jitkern's CUDA headers: complex.cuh, the cuComplex.h bridge, jitify's std shims.

CPU tests compile with NVRTC for sm_80 and sm_90; GPU tests run every complex
function over fresh random inputs in both precisions and compare with NumPy.
"""

import functools
import os
import re
from fractions import Fraction

import numpy as np
import pytest

import jitkern
from jitkern import CompileError
from jitkern.toolchain import discovery as toolchain
from jitkern.toolchain.nvrtc import compile_source
from jitkern.compiler.strings.cucomplex import BRIDGE_INCLUDE, translate_cucomplex
from jitkern.compiler.strings.jitify import (
    JITIFY_INCLUDE, STAND_INS, jitify_options, shim_headers)

ARCHS = ["sm_80", "sm_90"]
HEADER_DIR = os.path.join(toolchain.PACKAGE_INCLUDE, "jitkern")

# ---------------------------------------------------------------------------
# Kernel sources

SPEC_COMPLEX_EXAMPLE = r"""
#include <jitkern/complex.cuh>
extern "C" __global__
void my_func(const complex<float>* x1, const complex<float>* x2,
             complex<float>* y, float a) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    y[tid] = x1[tid] + a * x2[tid];
}
"""

# complex -> complex functions: C++ expression of z, NumPy equivalent.
UNARY = {
    "exp": ("exp(z)", np.exp),
    "log": ("log(z)", np.log),
    "log10": ("log10(z)", np.log10),
    "sqrt": ("sqrt(z)", np.sqrt),
    "sin": ("sin(z)", np.sin),
    "cos": ("cos(z)", np.cos),
    "tan": ("tan(z)", np.tan),
    "sinh": ("sinh(z)", np.sinh),
    "cosh": ("cosh(z)", np.cosh),
    "tanh": ("tanh(z)", np.tanh),
    "asin": ("asin(z)", np.arcsin),
    "acos": ("acos(z)", np.arccos),
    "atan": ("atan(z)", np.arctan),
    "asinh": ("asinh(z)", np.arcsinh),
    "acosh": ("acosh(z)", np.arccosh),
    "atanh": ("atanh(z)", np.arctanh),
    "conj": ("conj(z)", np.conj),
    "proj": ("proj(z)", lambda z: z),  # identity on finite values
    "neg": ("-z", np.negative),
    "pos": ("+z", lambda z: z),
    "exp_qualified": ("jitkern::exp(z)", np.exp),
}

# complex -> real functions.
TO_REAL = {
    "abs": ("abs(z)", np.abs),
    "arg": ("arg(z)", np.angle),
    "norm": ("norm(z)", lambda z: z.real**2 + z.imag**2),
    "real": ("real(z)", np.real),
    "imag": ("imag(z)", np.imag),
    "real_member": ("z.real() + 0 * z.imag()", np.real),
}

# (complex z, complex w) -> complex.
BINARY = {
    "add": ("z + w", np.add),
    "sub": ("z - w", np.subtract),
    "mul": ("z * w", np.multiply),
    "div": ("z / w", np.divide),
    "pow": ("pow(z, w)", np.power),
    "compound": (
        "[&] { complex<T> c = z; c += w; c *= z; c -= w; c /= w; return c; }()",
        lambda z, w: ((z + w) * z - w) / w,
    ),
}

# (complex z, real s) -> complex: real scalars on both sides.
WITH_REAL = {
    "z_plus_s": ("z + s", lambda z, s: z + s),
    "s_plus_z": ("s + z", lambda z, s: s + z),
    "z_minus_s": ("z - s", lambda z, s: z - s),
    "s_minus_z": ("s - z", lambda z, s: s - z),
    "z_times_s": ("z * s", lambda z, s: z * s),
    "s_times_z": ("s * z", lambda z, s: s * z),
    "z_div_s": ("z / s", lambda z, s: z / s),
    "s_div_z": ("s / z", lambda z, s: s / z),
    "pow_z_s": ("pow(z, s)", lambda z, s: np.power(z, s.astype(z.dtype))),
    "pow_s_z": ("pow(s, z)", lambda z, s: np.power(s.astype(z.dtype), z)),
    "pow_z_int": ("pow(z, 3)", lambda z, s: z * z * z),
    "pow_z_negint": ("pow(z, -2)", lambda z, s: 1 / (z * z)),
    "polar": ("polar(s, z.real())", lambda z, s: s * np.exp(1j * z.real)),
    "compound_s": (
        "[&] { complex<T> c = z; c += s; c *= s; c -= s; c /= s; return c; }()",
        lambda z, s: ((z + s) * s - s) / s,
    ),
}

PREDICATES = {
    "isnan": ("isnan(z)", lambda z: np.isnan(z)),
    "isinf": ("isinf(z)", lambda z: np.isinf(z)),
    "isfinite": ("isfinite(z)", lambda z: np.isfinite(z)),
}

_PRELUDE = r"""
#include <jitkern/complex.cuh>
#define JK_INDEX int i = blockDim.x * blockIdx.x + threadIdx.x; if (i >= n) return;
"""


def _kernel_pair(name: str, params: str, body: str) -> str:
    """One templated body, instantiated as extern "C" kernels name_f and name_d."""
    out = [
        f"template <typename T> __device__ void {name}_impl({params}, int n) {{ JK_INDEX {body} }}"
    ]
    call_args = ", ".join(p.split()[-1].lstrip("*") for p in params.split(",")) + ", n"
    for suffix, T in (("f", "float"), ("d", "double")):
        typed = params.replace("T", T).replace("complex<T>", f"complex<{T}>")
        out.append(
            f'extern "C" __global__ void {name}_{suffix}({typed}, int n) '
            f"{{ {name}_impl<{T}>({call_args}); }}"
        )
    return "\n".join(out)


# (prefix, table, kernel parameters, body) of each family of kernel pairs
_FAMILIES = [
    ("u", UNARY, "const complex<T>* zs, complex<T>* out", "complex<T> z = zs[i]; out[i] = {};"),
    ("r", TO_REAL, "const complex<T>* zs, T* out", "complex<T> z = zs[i]; out[i] = {};"),
    (
        "b",
        BINARY,
        "const complex<T>* zs, const complex<T>* ws, complex<T>* out",
        "complex<T> z = zs[i], w = ws[i]; out[i] = {};",
    ),
    (
        "s",
        WITH_REAL,
        "const complex<T>* zs, const T* ss, complex<T>* out",
        "complex<T> z = zs[i]; T s = ss[i]; out[i] = {};",
    ),
    ("p", PREDICATES, "const complex<T>* zs, bool* out", "complex<T> z = zs[i]; out[i] = {};"),
]


def kernel_pairs() -> dict:
    """{pair name: its source} for every complex function and operator."""
    return {
        f"{prefix}_{name}": _kernel_pair(f"{prefix}_{name}", params, body.format(expr))
        for prefix, table, params, body in _FAMILIES
        for name, (expr, _) in table.items()
    }


def complex_functions_source() -> str:
    """Kernels exercising every complex function and operator, in both precisions."""
    return "\n".join([_PRELUDE, *kernel_pairs().values(), _MISC, _CONSTRUCT])


# Mixed precisions, conversions, comparisons, layout, __shared__ storage.
_MISC = r"""
static_assert(sizeof(complex<float>) == 8 && alignof(complex<float>) == 8, "complex64 layout");
static_assert(sizeof(complex<double>) == 16 && alignof(complex<double>) == 16, "complex128 layout");

extern "C" __global__ void mixed(const complex<float>* a, const complex<double>* b,
                                 complex<double>* out, complex<float>* out_f, bool* eq, int n) {
    JK_INDEX
    complex<float> z = a[i];
    complex<double> w = b[i];
    out[5 * i + 0] = z + w;            // promotes to complex<double>
    out[5 * i + 1] = z * 2.0;          // double scalar promotes
    out[5 * i + 2] = w / z;
    out[5 * i + 3] = complex<double>(z);
    out[5 * i + 4] = jitkern::complex<double>(1.5, -2.5) - z;
    out_f[3 * i + 0] = w;              // implicit narrowing, like the spec's assignments
    out_f[3 * i + 1] = z * 2;          // int scalar keeps float
    float2 f2 = z;                     // float2 view, as cuComplex.h code uses
    complex<float> g = make_float2(f2.y, f2.x);
    out_f[3 * i + 2] = g;
    eq[6 * i + 0] = z == z;
    eq[6 * i + 1] = z != z;
    eq[6 * i + 2] = z == w;
    eq[6 * i + 3] = complex<float>(z.real()) == z.real();
    eq[6 * i + 4] = z.real() == complex<float>(z.real(), 1.0f);
    eq[6 * i + 5] = complex<double>(2.0) != 2;
}

"""

_CONSTRUCT = r"""
extern "C" __global__ void construct(complex<float>* out, complex<double>* out_d) {
    __shared__ complex<float> tile[32];  // a trivial default constructor allows __shared__
    tile[threadIdx.x] = complex<float>(threadIdx.x, -1.0f * threadIdx.x);
    __syncthreads();
    complex<float> zero{};
    complex<float> from_real = 2.5f;
    complex<float> z;
    z.real(3.0f);
    z.imag(4.0f);
    out[threadIdx.x] = tile[31 - threadIdx.x] + zero + complex<float>();
    if (threadIdx.x == 0) {
        out[32] = from_real;
        out[33] = z;
        out[34] = complex<float>(z.x + z.y, z.y);
        out_d[0] = complex<double>(1.0);
        out_d[1] = complex<double>(complex<float>(1.25f, 0.5f));
    }
}
"""


def _device(a: np.ndarray):
    """A GPU copy of ``a``: a jitkern.ndarray, or a bare __cuda_array_interface__ buffer."""
    a = np.ascontiguousarray(a)
    try:
        return jitkern.asarray(a)
    except (AttributeError, ImportError, NotImplementedError):
        return _CaiBuffer(a)


def _host(d) -> np.ndarray:
    jitkern.synchronize()
    return d.get()


class _CaiBuffer:
    """A device buffer from jitkern's allocator, for when jitkern.asarray is missing."""

    def __init__(self, a: np.ndarray):
        from jitkern.runtime import driver, memory

        self.dtype, self.shape = a.dtype, a.shape
        self.mem = memory.malloc(max(a.nbytes, 1), driver.current_device_id())
        memory.memcpy_htod(int(self.mem), a, a.nbytes)
        self.__cuda_array_interface__ = {
            "shape": a.shape,
            "typestr": a.dtype.str,
            "data": (int(self.mem), False),
            "version": 3,
            "strides": None,
            "stream": None,
        }

    def get(self) -> np.ndarray:
        from jitkern.runtime import memory

        out = np.empty(self.shape, self.dtype)
        memory.memcpy_dtoh(out, int(self.mem), out.nbytes)
        return out


# ---------------------------------------------------------------------------
# complex.cuh: compile (CPU)


@pytest.mark.parametrize("arch", ARCHS)
def test_every_complex_function_compiles(arch):
    binary = compile_source(complex_functions_source(), arch=arch, program_name="cx.cu")
    assert binary.data[:4] == b"\x7fELF"
    for name in ("u_atanh_f", "u_atanh_d", "b_pow_f", "s_pow_s_z_d", "mixed", "construct"):
        assert name in binary.resources


@pytest.mark.parametrize("arch", ARCHS)
def test_spec_complex_example_compiles(arch):
    k = jitkern.RawKernel(SPEC_COMPLEX_EXAMPLE, "my_func")
    info = k.inspect(arch=arch)
    assert info.cubin[:4] == b"\x7fELF"
    assert info.local_bytes == 0  # no stack frame for a complex multiply-add


@pytest.mark.parametrize("std", ["-std=c++11", "-std=c++14", "-std=c++20"])
def test_complex_headers_compile_under_other_standards(std):
    # The spec's template example passes -std=c++11; the headers must not need C++17.
    src = translate_cucomplex(CUCOMPLEX_FLOAT) + SPEC_COMPLEX_EXAMPLE
    binary = compile_source(src, options=(std,), arch="sm_80")
    assert {"cuc_f", "my_func"} <= set(binary.resources)


def test_complex_header_includes_nothing_heavy():
    # Light on purpose: no <cmath>, <cuda/std/complex> or cuda_fp16.h; only jitkern's traits,
    # which include nothing themselves.
    for name, allowed in (("complex.cuh", ["<jitkern/traits.cuh>"]), ("traits.cuh", [])):
        with open(os.path.join(HEADER_DIR, name)) as f:
            text = f.read()
        assert re.findall(r"^\s*#\s*include\s*(\S+)", text, re.MULTILINE) == allowed


def test_complex_in_jitkern_namespace_and_global():
    src = (
        _PRELUDE
        + r"""
    extern "C" __global__ void k(jitkern::complex<double>* out) {
        ::complex<double> a(1.0, 2.0);
        jitkern::complex<double> b = jitkern::sqrt(a) + jitkern::conj(a);
        out[0] = b * jitkern::abs(a);
    }
    """
    )
    assert "k" in compile_source(src, arch="sm_80").resources


@pytest.mark.parametrize(
    "bad, message",
    [
        ("complex<float> z(1.0f); float f = z;", "complex<float>"),  # no silent real part
        ("complex<float> z(1.0f); auto w = z + make_int2(1, 2);", "operator"),
    ],
)
def test_complex_refuses_lossy_or_meaningless_code(bad, message):
    src = _PRELUDE + f'extern "C" __global__ void k() {{ {bad} }}'
    with pytest.raises(CompileError) as info:
        compile_source(src, arch="sm_80")
    assert message in str(info.value)


# ---------------------------------------------------------------------------
# translate_cucomplex (CPU)

CUCOMPLEX_FLOAT = r"""
#include <cuComplex.h>
extern "C" __global__ void cuc_f(const cuFloatComplex* a, const cuFloatComplex* b,
                                 cuFloatComplex* out, float* mag, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= n) return;
    cuFloatComplex x = a[i], y = b[i];
    cuComplex s = cuCaddf(x, y);
    out[8 * i + 0] = s;
    out[8 * i + 1] = cuCsubf(x, y);
    out[8 * i + 2] = cuCmulf(x, y);
    out[8 * i + 3] = cuCdivf(x, y);
    out[8 * i + 4] = cuConjf(x);
    out[8 * i + 5] = cuCfmaf(x, y, s);
    out[8 * i + 6] = make_cuFloatComplex(cuCrealf(x) * 2.0f, cuCimagf(y));
    out[8 * i + 7] = make_cuComplex(x.x + y.y, x.y);  // float2-style field access
    mag[i] = cuCabsf(x);
}
"""

CUCOMPLEX_DOUBLE = r"""
#include "cuComplex.h"
extern "C" __global__ void cuc_d(const cuDoubleComplex* a, const cuDoubleComplex* b,
                                 cuDoubleComplex* out, double* mag, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= n) return;
    cuDoubleComplex x = a[i], y = b[i];
    cuDoubleComplex s = cuCadd(x, y);
    out[8 * i + 0] = s;
    out[8 * i + 1] = cuCsub(x, y);
    out[8 * i + 2] = cuCmul(x, y);
    out[8 * i + 3] = cuCdiv(x, y);
    out[8 * i + 4] = cuConj(x);
    out[8 * i + 5] = cuCfma(x, y, s);
    out[8 * i + 6] = make_cuDoubleComplex(cuCreal(x) * 2.0, cuCimag(y));
    out[8 * i + 7] = cuComplexFloatToDouble(cuComplexDoubleToFloat(x));
    mag[i] = cuCabs(x);
}
"""


def test_translate_rewrites_angle_and_quote_includes():
    src = '#include <cuComplex.h>\n  #  include "cuComplex.h"\nint x;\n'
    out = translate_cucomplex(src)
    assert out == f"{BRIDGE_INCLUDE}\n  #  include <jitkern/cucomplex.cuh>\nint x;\n"
    assert out.count("\n") == src.count("\n")  # line numbers do not move


def test_translate_adds_the_bridge_when_missing():
    src = 'extern "C" __global__ void k(cuFloatComplex* z) { z[0] = cuConjf(z[0]); }'
    assert translate_cucomplex(src) == f"{BRIDGE_INCLUDE}\n{src}"


def test_translate_is_idempotent_and_leaves_other_includes():
    src = "#include <cuda_fp16.h>\n#include <cuComplex.h>\n#include <cuComplex_extra.h>\n"
    once = translate_cucomplex(src)
    assert translate_cucomplex(once) == once
    assert "#include <cuda_fp16.h>" in once and "cuComplex_extra.h" in once


def test_translate_rejects_non_str():
    with pytest.raises(TypeError, match="str"):
        translate_cucomplex(b"#include <cuComplex.h>")


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("src, name", [(CUCOMPLEX_FLOAT, "cuc_f"), (CUCOMPLEX_DOUBLE, "cuc_d")])
def test_cucomplex_code_compiles_translated(arch, src, name):
    binary = compile_source(translate_cucomplex(src), arch=arch)
    assert name in binary.resources


def test_cucomplex_types_are_jitkern_complex():
    src = translate_cucomplex(r"""
    #include <cuComplex.h>
    #include <cuComplex.h>
    static_assert(sizeof(cuFloatComplex) == 8 && alignof(cuDoubleComplex) == 16, "");
    extern "C" __global__ void k(complex<float>* z, cuDoubleComplex* w) {
        cuFloatComplex a = z[0];          // the same type as complex<float>
        z[0] = exp(a) + cuCmulf(a, a);    // complex.cuh functions work on cuComplex values
        w[0] = cuCfma(w[0], w[0], w[1]);
    }
    """)
    assert "k" in compile_source(src, arch="sm_90").resources


@pytest.mark.parametrize("arch", ARCHS)
def test_rawkernel_translate_cucomplex(arch):
    k = jitkern.RawKernel(CUCOMPLEX_FLOAT, "cuc_f", translate_cucomplex=True)
    info = k.inspect(arch=arch)
    assert "jitkern/cucomplex.cuh" in info.source
    assert info.cubin[:4] == b"\x7fELF"


# ---------------------------------------------------------------------------
# jitify=True (CPU)

JITIFY_TEMPLATES = r"""
#include <type_traits>
#include <limits>
#include <cstdint>
#include <utility>
#include <tuple>
#include <array>
#include <algorithm>
#include <climits>
#include <cfloat>

template <typename T, typename = std::enable_if_t<std::is_floating_point<T>::value>>
__device__ T biggest() { return std::numeric_limits<T>::max(); }

template <typename T>
__device__ auto plus_one() -> decltype(std::declval<T>() + 1) { return T(1) + 1; }

template <typename T>
__device__ typename std::make_unsigned<T>::type as_unsigned(T v) { return v; }

extern "C" __global__ void jit_std(float* f, double* d, long long* q, std::int32_t n) {
    static_assert(std::is_same<std::int64_t, long long>::value ||
                  std::is_same<std::int64_t, long>::value, "int64_t");
    static_assert(std::is_same_v<std::remove_cv_t<const int>, int>, "remove_cv_t");
    static_assert(sizeof(std::uint8_t) == 1 && sizeof(int32_t) == 4, "cstdint");
    static_assert(std::numeric_limits<int>::max() == INT_MAX && CHAR_BIT == 8, "climits");
    std::tuple<int, float, double> t(n, 2.5f, 0.25);
    std::array<long long, 4> arr{{1, 2, 3, 4}};
    auto p = std::make_pair(n, 1.5);
    int a = 3, b = 7;
    std::swap(a, b);
    f[0] = biggest<float>();
    f[1] = FLT_MAX;
    f[2] = std::numeric_limits<float>::epsilon();
    d[0] = biggest<double>();
    d[1] = std::get<2>(t) + std::get<1>(t) + p.second;
    d[2] = std::min(1.5, d[3]) + std::max(2.0, d[4]);
    q[0] = std::get<0>(t) + plus_one<int>() + arr[3] + std::move(arr)[0];
    q[1] = a * 10 + b;
    q[2] = as_unsigned(-1) == UINT_MAX;
    q[3] = std::tuple_size<decltype(t)>::value + std::extent<int[5]>::value;
}
"""


@pytest.mark.parametrize("arch", ARCHS)
def test_jitify_std_template_code_compiles(arch):
    binary = compile_source(JITIFY_TEMPLATES, options=jitify_options(), arch=arch)
    assert "jit_std" in binary.resources


def test_jitify_std_template_code_fails_without_it():
    with pytest.raises(CompileError) as info:
        compile_source(JITIFY_TEMPLATES, arch="sm_80")
    assert "type_traits" in str(info.value)


def test_jitify_options_shape():
    opts = jitify_options()
    assert opts[0] == f"-I{JITIFY_INCLUDE}" and os.path.isdir(JITIFY_INCLUDE)
    assert all(isinstance(o, str) for o in opts)


def _cccl_dir() -> str:
    for folder in toolchain.include_dirs():
        if os.path.isfile(os.path.join(folder, "cuda", "std", "type_traits")):
            return folder
    pytest.fail("CCCL's libcu++ headers were not found on the include path")


def _shim_target(name: str) -> str:
    with open(os.path.join(JITIFY_INCLUDE, name)) as f:
        return re.search(r"#include <(cuda/std/[\w.]+)>", f.read()).group(1)


def _libcuxx_shims() -> list:
    return [name for name in shim_headers() if name not in STAND_INS]


def _shims_this_cccl_has() -> list:
    # <algorithm> falls back on libcu++'s parts where <cuda/std/algorithm> is missing (CCCL 3.0).
    return [
        name
        for name in _libcuxx_shims()
        if name == "algorithm" or os.path.isfile(os.path.join(_cccl_dir(), _shim_target(name)))
    ]


def test_stand_ins_are_the_headers_not_from_libcuxx():
    marked = set()
    for name in shim_headers():
        with open(os.path.join(JITIFY_INCLUDE, name)) as f:
            if '#include "__jitkern_host_only.h"' in f.read():
                marked.add(name)
    assert marked == set(STAND_INS)


def test_every_shim_includes_libcuxx_and_the_std_alias():
    for name in _libcuxx_shims():
        with open(os.path.join(JITIFY_INCLUDE, name)) as f:
            text = f.read()
        target = _shim_target(name)
        assert f"#if __has_include(<{target}>)" in text, name
        assert '#include "__jitkern_std.h"' in text, name
        assert "#error" in text or name == "algorithm", name


def test_shims_for_headers_this_cccl_lacks_say_so():
    missing = sorted(set(_libcuxx_shims()) - set(_shims_this_cccl_has()))
    for name in missing[:3]:
        src = f'#include <{name}>\nextern "C" __global__ void k() {{}}\n'
        with pytest.raises(CompileError, match="needs libcu\\+\\+'s"):
            compile_source(src, options=jitify_options(), arch="sm_80")


def test_all_shims_compile_together():
    # One translation unit including every shim: each is valid, and they coexist
    # with complex.cuh and the CUDA headers.
    includes = "\n".join(f"#include <{name}>" for name in _shims_this_cccl_has())
    src = (
        includes
        + r"""
    #include <cuda_fp16.h>
    #include <jitkern/complex.cuh>
    #include <cassert>
    extern "C" __global__ void k(float* out, complex<float>* z) {
        assert(out != nullptr);
        out[0] = std::sin(out[1]) + std::sqrt(out[2]) + std::abs(out[3]) + std::fmin(1.0f, out[4]);
        out[1] = std::is_same<decltype(std::declval<float>() * 2.0f), float>::value;
        std::complex<float> s(1.0f, 2.0f);
        z[0] = sqrt(z[0]) + complex<float>(s.real(), s.imag());
    }
    """
    )
    compile_source(src, options=jitify_options(), arch="sm_90")


@pytest.mark.parametrize("arch", ARCHS)
def test_rawkernel_jitify(arch):
    k = jitkern.RawKernel(JITIFY_TEMPLATES, "jit_std", jitify=True)
    assert jitify_options()[0] in k.options
    info = k.inspect(arch=arch)
    assert info.cubin[:4] == b"\x7fELF"


# ---------------------------------------------------------------------------
# GPU: numerics against NumPy

RTOL = {np.complex64: 1e-5, np.complex128: 1e-12}
# Operations whose error is held to the size of their intermediate terms (see the test).
ERROR_SCALE = {
    "compound": lambda z, w: (np.abs(z + w) * np.abs(z) + np.abs(w)) / np.abs(w),
}
_SUFFIX = {np.complex64: "f", np.complex128: "d"}
_REAL = {np.complex64: np.float32, np.complex128: np.float64}


@pytest.fixture(scope="module")
def functions_binary():
    return compile_source(complex_functions_source(), program_name="complex_functions.cu")


def _launch(binary, name, *args):
    from jitkern.runtime.module import Function

    n = len(args[0]) if hasattr(args[0], "__len__") else args[0].shape[0]
    Function(binary, name).launch(((n + 127) // 128,), (128,), (*args, np.int32(n)))


@functools.lru_cache(maxsize=None)
def _module(pair=None):
    """The module of every complex kernel, or (``pair``) of one pair of them: the simulator
    translates a whole module, and the full one has constructs outside its C subset."""
    if pair is None:
        return jitkern.RawModule(code=complex_functions_source())
    return jitkern.RawModule(code=_PRELUDE + kernel_pairs()[pair])


def _run(launch, name, *args):
    """Kernel ``name`` over ``len(args[0])`` elements, on the GPU or in the simulator."""
    module = _module(name.rsplit("_", 1)[0]) if launch.simulated else _module()
    n = args[0].shape[0]
    launch(module.get_function(name))(((n + 127) // 128,), (128,), (*args, np.int32(n)))
    launch.synchronize()


def _random_complex(rng, n, dtype, scale=3.0):
    z = np.empty(n, dtype)
    z.real = rng.uniform(-scale, scale, n)
    z.imag = rng.uniform(-scale, scale, n)
    return z


# Points on and next to the branch cuts, with both signs of zero, and near 0 and 1.
_EDGES = [
    (2, 0.0),
    (2, -0.0),
    (-2, 0.0),
    (-2, -0.0),
    (0.5, 0.0),
    (0.5, -0.0),
    (-0.5, 0.0),
    (0.0, 2),
    (-0.0, 2),
    (0.0, -2),
    (-0.0, -2),
    (0.0, 0.5),
    (1e-4, 1e-4),
    (-1e-4, 3e-5),
    (1.0, 1e-3),
    (1.0001, -0.0),
    (0.9999, 0.0),
    (3, 1e-3),
    (-3, -1e-3),
    (1e-3, 2.5),
]


def _with_edges(z):
    edges = np.empty(len(_EDGES), z.dtype)
    edges.real = [e[0] for e in _EDGES]
    edges.imag = [e[1] for e in _EDGES]
    return np.concatenate([z, edges])


def _reference(func, *arrays):
    """NumPy's answer in double precision (the truth the float kernels are held to)."""
    up = [a.astype(np.complex128) if np.iscomplexobj(a) else a.astype(np.float64) for a in arrays]
    return func(*up)


def _assert_close(actual, expected, rtol, what):
    # Relative to the modulus of each complex result, as numpy.testing does for complex.
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=0, err_msg=what)


# The simulator runs Python per thread: its runs take fewer random values (the edges all).
_N = {"gpu": 4000, "sim": 300}
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_function_matches_numpy(launch, rng, dtype, name):
    z = _with_edges(_random_complex(rng, _N[repr(launch)], dtype))
    out = launch.poisoned(z.shape, dtype)
    _run(launch, f"u_{name}_{_SUFFIX[dtype]}", launch.to_device(z), out)
    expected = _reference(UNARY[name][1], z)
    _assert_close(launch.get(out), expected, RTOL[dtype], f"{name} over {dtype.__name__}")


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("name", list(TO_REAL))
def test_real_valued_function_matches_numpy(launch, rng, dtype, name):
    z = _with_edges(_random_complex(rng, _N[repr(launch)], dtype))
    out = launch.poisoned(z.shape, _REAL[dtype])
    _run(launch, f"r_{name}_{_SUFFIX[dtype]}", launch.to_device(z), out)
    expected = _reference(TO_REAL[name][1], z)
    _assert_close(launch.get(out), expected, RTOL[dtype], f"{name} over {dtype.__name__}")


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_operation_matches_numpy(launch, rng, dtype, name):
    n = _N[repr(launch)]
    z = _random_complex(rng, n, dtype)
    w = _random_complex(rng, n, dtype)
    out = launch.poisoned(z.shape, dtype)
    _run(launch, f"b_{name}_{_SUFFIX[dtype]}", launch.to_device(z), launch.to_device(w), out)
    expected = _reference(BINARY[name][1], z, w)
    what = f"{name} over {dtype.__name__}"
    if name not in ERROR_SCALE:
        _assert_close(launch.get(out), expected, RTOL[dtype], what)
        return
    # A chain of operations can cancel: its rounding error scales with the magnitudes of
    # the terms, not with the (possibly much smaller) result.
    z64, w64 = z.astype(np.complex128), w.astype(np.complex128)
    error = np.abs(launch.get(out).astype(np.complex128) - expected)
    worst = np.max(error / (RTOL[dtype] * ERROR_SCALE[name](z64, w64)))
    assert worst <= 1, f"{what}: error {worst:.2f}x the tolerance"


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("name", list(WITH_REAL))
def test_real_scalar_operation_matches_numpy(launch, rng, dtype, name):
    n = _N[repr(launch)]
    z = _random_complex(rng, n, dtype)
    s = rng.uniform(-3, 3, n).astype(_REAL[dtype])
    s[np.abs(s) < 0.05] = 0.5  # keep z / s well conditioned
    if name == "pow_z_s":
        s[::3] = np.round(s[::3])  # integral exponents take the repeated-squaring path
    out = launch.poisoned(z.shape, dtype)
    _run(launch, f"s_{name}_{_SUFFIX[dtype]}", launch.to_device(z), launch.to_device(s), out)
    expected = _reference(WITH_REAL[name][1], z, s)
    _assert_close(launch.get(out), expected, RTOL[dtype], f"{name} over {dtype.__name__}")


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_classification_matches_numpy(launch, dtype):
    values = [0.0, 1.5, -2.0, np.inf, -np.inf, np.nan]
    re, im = np.meshgrid(values, values)
    z = np.empty(re.size, dtype)
    z.real, z.imag = re.ravel(), im.ravel()
    for name, (_, func) in PREDICATES.items():
        out = launch.to_device(~func(z))  # poisoned with the wrong answer everywhere
        _run(launch, f"p_{name}_{_SUFFIX[dtype]}", launch.to_device(z), out)
        np.testing.assert_array_equal(launch.get(out), func(z), err_msg=name)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_proj_of_infinities(launch, dtype):
    z = np.array(
        [complex(np.inf, 2), complex(-np.inf, -3), complex(1, -np.inf), complex(np.nan, np.inf)],
        dtype,
    )
    out = launch.poisoned(z.shape, dtype)
    _run(launch, f"u_proj_{_SUFFIX[dtype]}", launch.to_device(z), out)
    got = launch.get(out)
    assert np.all(got.real == np.inf)
    assert list(np.signbit(got.imag)) == [False, True, True, False]
    assert np.all(got.imag == 0)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_careful_numerics_at_extreme_magnitudes(launch, dtype):
    big = 1e30 if dtype is np.complex64 else 1e300
    sfx = _SUFFIX[dtype]
    z = np.array([complex(3 * big, 4 * big), complex(big, big), complex(3 * big, -big)], dtype)
    w = np.array([complex(big, big), complex(2 * big, -big), complex(big, 2 * big)], dtype)
    zd, wd = launch.to_device(z), launch.to_device(w)

    mag = launch.poisoned(3, _REAL[dtype])
    _run(launch, f"r_abs_{sfx}", zd, mag)  # hypot: no overflow of x^2
    np.testing.assert_allclose(launch.get(mag), np.abs(z.astype(np.complex128)), rtol=RTOL[dtype])

    quo = launch.poisoned(3, dtype)
    _run(launch, f"b_div_{sfx}", zd, wd, quo)  # Smith's division
    np.testing.assert_allclose(launch.get(quo), z.astype(np.complex128) / w, rtol=RTOL[dtype])

    root = launch.poisoned(3, dtype)
    _run(launch, f"u_sqrt_{sfx}", zd, root)
    np.testing.assert_allclose(
        launch.get(root), np.sqrt(z.astype(np.complex128)), rtol=RTOL[dtype]
    )

    # log near |z| = 1: the real part is tiny and must keep its relative accuracy.
    eps = 1e-3 if dtype is np.complex64 else 1e-7
    near_one = np.array(
        [
            complex(1, eps),
            complex(np.cos(0.3), np.sin(0.3) * (1 + eps)),
            complex(0.6, 0.8),
            complex(-0.8, 0.6 + eps),
        ],
        dtype,
    )
    out = launch.poisoned(near_one.shape, dtype)
    _run(launch, f"u_log_{sfx}", launch.to_device(near_one), out)
    got = launch.get(out)
    exact = [
        float(Fraction(float(v.real)) ** 2 + Fraction(float(v.imag)) ** 2 - 1) for v in near_one
    ]  # |z|^2 - 1 without rounding
    np.testing.assert_allclose(got.real, 0.5 * np.log1p(exact), rtol=10 * RTOL[dtype])


@pytest.mark.gpu
def test_mixed_precision_and_conversions(functions_binary, rng):
    n = 1000
    a = _random_complex(rng, n, np.complex64)
    b = _random_complex(rng, n, np.complex128)
    b[::7] = a[::7]  # some equal pairs for ==
    out = _device(np.full(5 * n, np.nan, np.complex128))
    out_f = _device(np.full(3 * n, np.nan, np.complex64))
    a64 = a.astype(np.complex128)
    want_flags = np.zeros((n, 6), np.bool_)
    want_flags[:, 0] = want_flags[:, 3] = True
    want_flags[:, 2] = a64 == b
    eq = _device(~want_flags.ravel())  # poisoned with the wrong answer everywhere
    _launch(functions_binary, "mixed", _device(a), _device(b), out, out_f, eq)
    got = _host(out).reshape(n, 5)
    np.testing.assert_allclose(got[:, 0], a64 + b, rtol=1e-12)
    np.testing.assert_allclose(got[:, 1], a64 * 2.0, rtol=1e-12)
    np.testing.assert_allclose(got[:, 2], b / a64, rtol=1e-12)
    np.testing.assert_array_equal(got[:, 3], a64)
    np.testing.assert_allclose(got[:, 4], (1.5 - 2.5j) - a64, rtol=1e-12)
    got_f = _host(out_f).reshape(n, 3)
    np.testing.assert_array_equal(got_f[:, 0], b.astype(np.complex64))
    np.testing.assert_array_equal(got_f[:, 1], a * np.float32(2))
    np.testing.assert_array_equal(got_f[:, 2], a.imag + 1j * a.real)
    flags = _host(eq).reshape(n, 6)
    np.testing.assert_array_equal(flags[:, 0], True)
    np.testing.assert_array_equal(flags[:, 1], False)
    np.testing.assert_array_equal(flags[:, 2], a64 == b)
    np.testing.assert_array_equal(flags[:, 3], True)
    np.testing.assert_array_equal(flags[:, 4], False)
    np.testing.assert_array_equal(flags[:, 5], False)


def test_construction_and_shared_memory(launch):
    module = jitkern.RawModule(code=_PRELUDE + _CONSTRUCT) if launch.simulated else _module()
    out = launch.poisoned(35, np.complex64)
    out_d = launch.poisoned(2, np.complex128)
    launch(module.get_function("construct"))(1, 32, (out, out_d))
    launch.synchronize()
    got = launch.get(out)
    k = np.arange(31, -1, -1, dtype=np.float32)
    np.testing.assert_array_equal(got[:32], k - 1j * k)
    np.testing.assert_array_equal(got[32:], [2.5, 3 + 4j, 7 + 4j])
    np.testing.assert_array_equal(launch.get(out_d), [1.0, 1.25 + 0.5j])


def test_spec_complex_example_runs(launch, rng):
    # The spec's example, verbatim apart from the header's name (the inputs are ours).
    complex_kernel = jitkern.RawKernel(SPEC_COMPLEX_EXAMPLE, "my_func")
    x1 = _random_complex(rng, 25, np.complex64).reshape(5, 5)
    x2 = _random_complex(rng, 25, np.complex64).reshape(5, 5)
    y = launch.poisoned((5, 5), np.complex64)
    args = (launch.to_device(x1), launch.to_device(x2), y, np.float32(2.0))
    launch(complex_kernel)((5,), (5,), args)
    launch.synchronize()
    # x1 + a * x2 in complex<float>: the GPU may fuse a * x2 + x1 into one FMA per part
    want = x1.astype(np.complex128) + 2.0 * x2.astype(np.complex128)
    np.testing.assert_allclose(launch.get(y), want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_cucomplex_code_runs_translated(launch, rng, dtype):
    src, name = (CUCOMPLEX_FLOAT, "cuc_f") if dtype is np.complex64 else (CUCOMPLEX_DOUBLE, "cuc_d")
    k = jitkern.RawKernel(src, name, translate_cucomplex=True)
    n = _N[repr(launch)] // 2
    x, y = _random_complex(rng, n, dtype), _random_complex(rng, n, dtype)
    out = launch.poisoned(8 * n, dtype)
    mag = launch.poisoned(n, _REAL[dtype])
    args = (launch.to_device(x), launch.to_device(y), out, mag, np.int32(n))
    launch(k)(((n + 127) // 128,), (128,), args)
    launch.synchronize()
    x64, y64 = x.astype(np.complex128), y.astype(np.complex128)
    if dtype is np.complex64:
        last = x64.real + y64.imag + 1j * x64.imag
    else:  # through complex<float> and back
        last = x64.astype(np.complex64).astype(np.complex128)
    expected = [
        x64 + y64,
        x64 - y64,
        x64 * y64,
        x64 / y64,
        np.conj(x64),
        x64 * y64 + (x64 + y64),
        2 * x64.real + 1j * y64.imag,
        last,
    ]
    got = launch.get(out).reshape(n, 8)
    for col, want in enumerate(expected):
        _assert_close(got[:, col], want, RTOL[dtype], f"{name} column {col}")
    _assert_close(launch.get(mag), np.abs(x64), RTOL[dtype], "cuCabs")


@pytest.mark.gpu
def test_jitify_kernel_runs():
    k = jitkern.RawKernel(JITIFY_TEMPLATES, "jit_std", jitify=True)
    f = _device(np.full(3, np.nan, np.float32))
    d = _device(np.array([0, 0, 0, 0.5, 3.0], np.float64))
    q = _device(np.zeros(4, np.int64))
    k(1, 1, (f, d, q, np.int32(7)))
    fin = np.finfo(np.float32)
    np.testing.assert_array_equal(_host(f), [fin.max, fin.max, fin.eps])
    np.testing.assert_array_equal(
        _host(d)[:3], [np.finfo(np.float64).max, 0.25 + 2.5 + 1.5, 0.5 + 3.0]
    )
    np.testing.assert_array_equal(_host(q), [7 + 2 + 4 + 1, 73, 1, 3 + 5])
