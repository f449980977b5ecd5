"""A raw kernel's launch is checked against its signature as NVRTC compiled it (issue 25,
part 2): after #if/#ifdef, -D/-U options, included headers, typedefs, macros and templates.
No GPU: the kernels compile for the fake driver's device (sm_90) and the fake driver records
the bytes each cuLaunchKernel would have received."""

import os
import shutil
import subprocess
import sys
import uuid

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import jitkern
from jitkern import KernelArgumentError
from jitkern.compat.texture import TextureObject
from jitkern.compiler.strings.c_params import kernel_params
from jitkern.runtime import driver
from jitkern.runtime.fakedriver import FakeDriver
from test_raw_checked_args import Dev  # a device array stand-in at a random address


@pytest.fixture
def fake():
    with driver.use(FakeDriver()) as d:
        yield d


# CuPy's idiom: the precision is an option, the type a macro.
PRECISION = r"""
#if PRECISION == 2
#define TYPE double
#else
#define TYPE float
#endif
extern "C" __global__ void scale(const TYPE* x, TYPE* y, TYPE a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}
"""


def refused(k, args) -> str:
    with pytest.raises(KernelArgumentError) as info:
        k((1,), (32,), args)
    return str(info.value)


def test_the_precision_option_decides_the_types(fake, rng):
    k = jitkern.RawKernel(PRECISION, "scale", options=("-DPRECISION=2",))
    x, y = Dev(rng, np.float64), Dev(rng, np.float64)
    a = float(rng.standard_normal())
    k((1,), (32,), (x, y, a, 4))
    assert fake.launches[-1].words(2) == [x.ptr, y.ptr]
    assert fake.launches[-1].raw(2, 8) == np.float64(a).tobytes()  # a double, as compiled
    # float32 arrays for the kernel compiled as double: refused, naming what a user needs
    message = refused(k, (Dev(rng, np.float32), y, a, 4))
    assert message.startswith("scale: argument 0 (x): the kernel expects const TYPE* "
                              "(const double*), a pointer to float64, got "), message
    assert "of float32" in message
    assert len(fake.launches) == 1


def test_the_default_branch_is_float(fake, rng):
    k = jitkern.RawKernel(PRECISION, "scale")
    x, y = Dev(rng, np.float32), Dev(rng, np.float32)
    k((1,), (32,), (x, y, 0.5, 4))
    assert fake.launches[-1].raw(2, 4) == np.float32(0.5).tobytes()
    assert "pointer to float32" in refused(k, (x, Dev(rng, np.float64), 0.5, 4))


def test_an_old_double_version_under_if_0_is_not_read(fake, rng):
    src = r"""
    #if 0
    extern "C" __global__ void k(const double* x, double* y, double a) {}
    extern "C" __global__ void k_old(double* x) {}
    #endif
    extern "C" __global__ void k(const float* x, float* y, float a) {}
    """
    k = jitkern.RawKernel(src, "k")
    x = Dev(rng, np.float32)
    k((1,), (32,), (x, x, 2.0))
    assert fake.launches[-1].raw(2, 4) == np.float32(2.0).tobytes()
    assert "a pointer to float32" in refused(k, (Dev(rng, np.float64), x, 2.0))


def test_typedef_using_and_define_types_are_the_compiled_ones(fake, rng):
    src = r"""
    #define REAL double
    #define REAL_IS_NOT_THIS float
    typedef REAL real_t;
    using index_t = long long;
    typedef float* fptr;
    extern "C" __global__ void k(const real_t* x, fptr y, index_t n, size_t m) {}
    """
    k = jitkern.RawKernel(src, "k")
    x, y = Dev(rng, np.float64), Dev(rng, np.float32)
    n, m = int(rng.integers(-(2**62), 2**62)), int(rng.integers(0, 2**63))
    k((1,), (32,), (x, y, n, m))
    assert fake.launches[-1].raw(2, 8) == np.int64(n).tobytes()
    assert fake.launches[-1].raw(3, 8) == np.uint64(m).tobytes()
    assert "real_t* (const double*)" in refused(k, (y, y, n, m))
    assert "argument 1 (y): the kernel expects fptr (float*)" in refused(k, (x, x, n, m))
    with pytest.raises(jitkern.JitkernOverflowError, match="size_t \\(unsigned long\\)"):
        k((1,), (32,), (x, y, n, -1))


def test_an_undefined_option_takes_the_other_branch(fake, rng):
    src = r"""
    #ifdef USE_DOUBLE
    typedef double value_t;
    #else
    typedef float value_t;
    #endif
    extern "C" __global__ void k(value_t* x) {}
    """
    on = jitkern.RawKernel(src, "k", options=("-DUSE_DOUBLE",))
    off = jitkern.RawKernel(src, "k", options=("-DUSE_DOUBLE", "-UUSE_DOUBLE"))
    x64, x32 = Dev(rng, np.float64), Dev(rng, np.float32)
    on((1,), (32,), (x64,))
    off((1,), (32,), (x32,))
    assert "pointer to float64" in refused(on, (x32,))
    assert "pointer to float32" in refused(off, (x64,))


def test_types_and_structs_from_an_included_header(fake, rng, tmp_path):
    (tmp_path / "mytypes.h").write_text(
        "typedef double value_t;\n"
        "struct __align__(16) Pair { float a; double b; };\n")
    src = r"""
    #include "mytypes.h"
    extern "C" __global__ void k(const value_t* x, Pair p, const Pair* ps) {}
    """
    k = jitkern.RawKernel(src, "k", options=(f"-I{tmp_path}",))
    pair = np.dtype({"names": ["a", "b"], "formats": ["f4", "f8"], "offsets": [0, 8],
                     "itemsize": 16})
    p = np.zeros(1, pair)
    p["a"], p["b"] = rng.standard_normal(), rng.standard_normal()
    x, ps = Dev(rng, np.float64), Dev(rng, pair)
    k((1,), (32,), (x, p, ps))
    assert fake.launches[-1].raw(1, 16) == p.tobytes()
    assert "pointer to float64" in refused(k, (Dev(rng, np.float32), p, ps))
    swapped = np.zeros(1, np.dtype([("b", "f8"), ("a", "f4")], align=True))
    assert "disagrees with the struct's field" in refused(k, (x, swapped, ps))


def test_structs_the_compiler_cannot_describe_are_checked_by_size(fake, rng):
    src = r"""
    struct Opaque;                                         // only declared
    struct Methods { float a; __device__ float twice() const { return 2 * a; }
                     static const int limit = 4; double b; };
    struct Hidden { float a; private: float b; };           // not an aggregate
    struct Bits { int a; unsigned flags : 3; };
    struct Shaped { int tag; union { float f; int i; }; };
    extern "C" __global__ void k(Opaque* o, const float* x, Methods m, Hidden h, Bits b,
                                 Shaped s) {}
    """
    k = jitkern.RawKernel(src, "k")
    methods = np.zeros((), np.dtype([("a", "f4"), ("b", "f8")], align=True))[()]
    methods["a"], methods["b"] = rng.standard_normal(2)
    eight = [np.zeros((), np.dtype([(c, "i4") for c in "uv"]))[()] for _ in range(3)]
    x = Dev(rng, np.float32)
    for opaque in (Dev(rng, np.int8), Dev(rng, np.complex128)):  # any array for Opaque*
        k((1,), (32,), (opaque, x, methods, *eight))
    assert fake.launches[-1].raw(2, 16) == methods.tobytes()
    # the other parameters are still checked, each as far as the compiler describes it
    assert "argument 1 (x): the kernel expects const float*" in refused(
        k, (x, Dev(rng, np.float64), methods, *eight))
    swapped = np.zeros((), np.dtype([("b", "f8"), ("a", "f4")], align=True))[()]
    assert "argument 2 (m)" in refused(k, (x, x, swapped, *eight))
    assert "argument 3 (h): the kernel expects Hidden (8 bytes" in refused(
        k, (x, x, methods, np.zeros((), np.dtype("f4,f4,f4"))[()], *eight[1:]))
    assert len(fake.launches) == 2


def test_a_struct_defined_under_if_is_the_compiled_one(fake, rng):
    src = r"""
    #ifdef WIDE
    struct P { double x; double y; };
    #else
    struct P { float x; float y; };
    #endif
    extern "C" __global__ void k(P p, const P* ps) {}
    """
    wide = np.dtype([("x", "f8"), ("y", "f8")])
    narrow = np.dtype([("x", "f4"), ("y", "f4")])
    k = jitkern.RawKernel(src, "k", options=("-DWIDE",))
    k((1,), (32,), (np.ones(1, wide), Dev(rng, wide)))
    # the source defines P twice: its fields are not known, the compiler's size is
    message = refused(k, (np.ones(1, wide), Dev(rng, narrow)))
    assert "a pointer to 16-byte elements" in message and "(8 bytes)" in message
    narrow_k = jitkern.RawKernel(src, "k")
    narrow_k((1,), (32,), (np.ones(1, narrow), Dev(rng, narrow)))


def test_template_kernels_are_checked_as_instantiated(fake, rng):
    src = r"""
    template <typename T, int N>
    __global__ void tk(const T* x, T* y, T a, int n) {}
    """
    module = jitkern.RawModule(code=src, name_expressions=("tk<double, 2>", "tk<float, 3>"))
    k64, k32 = module.get_function("tk<double, 2>"), module.get_function("tk<float, 3>")
    x64, x32 = Dev(rng, np.float64), Dev(rng, np.float32)
    k64((1,), (32,), (x64, x64, 1.5, 4))
    assert fake.launches[-1].raw(2, 8) == np.float64(1.5).tobytes()
    k32((1,), (32,), (x32, x32, 1.5, 4))
    assert fake.launches[-1].raw(2, 4) == np.float32(1.5).tobytes()
    message = refused(k64, (x32, x64, 1.5, 4))
    assert message.startswith("tk<double, 2>: argument 0 (x): the kernel expects const double*")


def test_common_macro_names_do_not_break_the_probe(fake, rng):
    # the probe is appended after the user's code, where these macros are still defined
    src = r"""
    #define N 256
    #define T float
    #define type int
    #define value 3
    #define size 4
    #define at(i) i
    struct Item { T weight; int count; };
    extern "C" __global__ void k(const T* x, Item item, type n) {}
    """
    k = jitkern.RawKernel(src, "k")
    item = np.zeros((), np.dtype([("weight", "f4"), ("count", "i4")]))[()]
    k((1,), (32,), (Dev(rng, np.float32), item, 7))
    assert fake.launches[-1].raw(1, 8) == item.tobytes()
    assert "const T* (const float*)" in refused(k, (Dev(rng, np.float64), item, 7))
    swapped = np.zeros((), np.dtype([("count", "i4"), ("weight", "f4")]))[()]
    assert "disagrees with the struct's field weight" in refused(
        k, (Dev(rng, np.float32), swapped, 7))


def test_kernels_in_a_namespace_and_behind_macros(fake, rng):
    src = r"""
    namespace lib {
    extern "C" __global__ void in_ns(const float* x) {}
    }
    #define KERNEL(name, T) extern "C" __global__ void name(const T* x) {}
    KERNEL(from_macro, double)
    """
    module = jitkern.RawModule(code=src)
    in_ns = module.get_function("in_ns")
    in_ns((1,), (32,), (Dev(rng, np.float32),))
    assert "pointer to float32" in refused(in_ns, (Dev(rng, np.float64),))
    # a kernel named through a macro: its types cannot be asked for, so they are not checked
    from_macro = module.get_function("from_macro")
    for dtype in (np.float64, np.int8):
        from_macro((1,), (32,), (Dev(rng, dtype),))
    assert len(fake.launches) == 3


_REPEAT = """
import sys, uuid
import numpy as np
import jitkern
from jitkern.runtime import driver
from jitkern.runtime.fakedriver import FakeDriver
from jitkern.toolchain import cache
sys.path.insert(0, sys.argv[2])
from test_signature import PRECISION, Dev

rng = np.random.default_rng(int(sys.argv[3]))
with driver.use(FakeDriver()) as fake:
    src = PRECISION + "// " + sys.argv[1]
    k = jitkern.RawKernel(src, "scale", options=("-DPRECISION=2",))
    x = Dev(rng, np.float64)
    k((1,), (32,), (x, x, 1.0, 4))
    try:
        k((1,), (32,), (Dev(rng, np.float32), x, 1.0, 4))
        refused = "no"
    except jitkern.KernelArgumentError as exc:
        refused = str(exc)
    print(cache.identity()[1], cache.stats["compiles"], len(fake.launches), refused, sep="|")
"""


def test_a_repeat_build_in_a_fresh_process_compiles_nothing_and_still_checks(
        tmp_path, rng, shared_identity):
    env = dict(os.environ, JITKERN_CACHE_DIR=str(tmp_path / "cache"))
    root = os.path.dirname(os.path.dirname(os.path.abspath(jitkern.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")])
    tag, here = uuid.uuid4().hex, os.path.dirname(os.path.abspath(__file__))
    runs = [subprocess.run([sys.executable, "-c", _REPEAT, tag, here,
                            str(rng.integers(2**32))],
                           env=env, capture_output=True, text=True, timeout=600)
            for _ in range(2)]
    assert all(r.returncode == 0 for r in runs), [r.stderr for r in runs]
    first, second = (r.stdout.strip().split("|") for r in runs)
    assert first[0] == second[0] == shared_identity[1], "jitkern's files changed meanwhile"
    assert (first[1], second[1]) == ("1", "0")  # the second process compiled nothing
    for out in (first, second):
        assert out[2] == "1"  # the refused launch never reached the driver
        assert out[3].startswith("scale: argument 0 (x): the kernel expects const TYPE* "
                                 "(const double*), a pointer to float64"), out[3]


def test_the_probe_adds_no_kernel(fake):
    module = jitkern.RawModule(code=PRECISION, options=("-DPRECISION=2",))
    info = module.inspect(arch="sm_90")
    assert "scale" in info.source and "__jitkern_signature" not in info.source
    from jitkern.kernels.raw import available_kernels

    assert available_kernels(module._binary("sm_90")) == ["scale"]


def test_a_cpp_kernel_and_several_kernels_of_one_module(fake, rng):
    src = r"""
    __global__ void cpp_kernel(const double* x, long long n) {}
    extern "C" __global__ void first(const float* a, unsigned short b) {}
    extern "C" { __global__ void second(const int* a, const signed char* b) {} }
    """
    module = jitkern.RawModule(code=src, name_expressions=("cpp_kernel",))
    cpp, first, second = (module.get_function(n) for n in ("cpp_kernel", "first", "second"))
    n = int(rng.integers(-(2**62), 2**62))
    cpp((1,), (32,), (Dev(rng, np.float64), n))
    assert fake.launches[-1].raw(1, 8) == np.int64(n).tobytes()
    assert "argument 0 (x): the kernel expects const double*" in refused(
        cpp, (Dev(rng, np.float32), n))
    first((1,), (32,), (Dev(rng, np.float32), 65535))
    assert fake.launches[-1].raw(1, 2) == np.uint16(65535).tobytes()
    with pytest.raises(jitkern.JitkernOverflowError, match="unsigned short"):
        first((1,), (32,), (Dev(rng, np.float32), 65536))
    second((1,), (32,), (Dev(rng, np.int32), Dev(rng, np.int8)))
    assert "const signed char*, a pointer to int8" in refused(
        second, (Dev(rng, np.int32), Dev(rng, np.uint16)))
    assert len(fake.launches) == 3


def test_restrict_grid_constant_and_texture_handles(fake, rng):
    src = r"""
    struct Params { float scale; int count; };
    extern "C" __global__ void k(const float* __restrict__ x, float* __restrict__ y,
                                 const __grid_constant__ Params p, cudaTextureObject_t tex,
                                 void* any, const char* bytes) {}
    """
    k = jitkern.RawKernel(src, "k")
    params = np.dtype([("scale", "f4"), ("count", "i4")])
    p = np.zeros((), params)[()]
    p["scale"], p["count"] = rng.standard_normal(), rng.integers(1000)
    tex, handle = TextureObject.__new__(TextureObject), int(rng.integers(1, 2**62))
    tex._handle = handle
    x = Dev(rng, np.float32)
    anything = [Dev(rng, dtype) for dtype in (np.complex128, np.int16)]
    try:
        k((1,), (32,), (x, x, p, tex, *anything))
        k((1,), (32,), (x, x, p, tex, *anything[::-1]))  # void*, char*: any array
    finally:
        tex._handle = None  # a handle no driver made: nothing to destroy
    assert fake.launches[-1].raw(2, 8) == p.tobytes()
    assert fake.launches[-1].words(6)[3:] == [handle, anything[1].ptr, anything[0].ptr]
    message = refused(k, (x, Dev(rng, np.float64), p, 0, *anything))
    assert "argument 1 (y): the kernel expects float*, a pointer to float32" in message
    wrong = np.zeros((), np.dtype([("count", "i4"), ("scale", "f4")]))[()]
    message = refused(k, (x, x, wrong, 0, *anything))
    assert "argument 2 (p): the kernel expects struct const Params (Params)" in message, message


def test_jitify_and_nvcc_builds_are_checked_as_compiled(fake, rng):
    pytest.importorskip("cuda.bindings.nvrtc")
    src = r"""
    #include <type_traits>
    #include <not_a_header_anywhere.h>
    typedef std::conditional<(PRECISION > 1), double, float>::type real;
    extern "C" __global__ void k(const real* x, real a) {}
    """
    with pytest.warns(UserWarning, match="not_a_header_anywhere.h"):
        k = jitkern.RawKernel(src, "k", jitify=True, options=("-DPRECISION=2",))
        k((1,), (32,), (Dev(rng, np.float64), 2.0))
    assert fake.launches[-1].raw(1, 8) == np.float64(2.0).tobytes()
    assert "const real* (const double*)" in refused(k, (Dev(rng, np.float32), 2.0))
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed")
    nv = jitkern.RawKernel(PRECISION, "scale", backend="nvcc", options=("-DPRECISION=2",))
    x = Dev(rng, np.float64)
    nv((1,), (32,), (x, x, 0.5, 4))
    assert fake.launches[-1].raw(2, 8) == np.float64(0.5).tobytes()
    assert "const TYPE* (const double*)" in refused(nv, (Dev(rng, np.float32), x, 0.5, 4))


def test_cupy_bfloat16_and_cuda_bfloat16(fake, rng):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    src = r"""
    #include <cupy/bfloat16.cuh>
    extern "C" __global__ void k(const bfloat16* x, __nv_bfloat16* y, bfloat16 a) {}
    """
    k = jitkern.RawKernel(src, "k")
    bf16 = np.dtype(ml_dtypes.bfloat16)
    a = float(rng.standard_normal())
    x, y = jitkern.empty(4, bf16), jitkern.empty(4, bf16)  # (CUDA's array interface has no
    k((1,), (32,), (x, y, a))                              # bfloat16: jitkern's arrays)
    assert fake.launches[-1].raw(2, 2) == np.array(a, bf16).tobytes()
    assert fake.launches[-1].words(2) == [x.data.ptr, y.data.ptr]
    k((1,), (32,), (x, y, bf16.type(-a)))
    assert fake.launches[-1].raw(2, 2) == np.array(-a, bf16).tobytes()
    assert "argument 1 (y): the kernel expects __nv_bfloat16*, a pointer to bfloat16" in refused(
        k, (x, jitkern.empty(4, np.float16), a))


def test_an_old_standard_is_not_probed_and_not_checked(fake, rng):
    k = jitkern.RawKernel(PRECISION, "scale", options=("-std=c++11",))
    k((1,), (32,), (Dev(rng, np.float64), Dev(rng, np.int32), 1.0, 4))  # accepted: unknown
    assert len(fake.launches) == 1


def test_the_source_names_the_parameters_for_messages():
    src = r"""
    // a comment with __global__ void my_add(int) in it
    extern "C" __global__
    void my_add(const float* x1, const float *__restrict__ x2, float y[], unsigned int N) { }
    """
    params = kernel_params(src, "my_add")
    assert [(p.name, p.pointer) for p in params] == [
        ("x1", True), ("x2", True), ("y", True), ("N", False)]
    assert kernel_params('extern "C" __global__ void k(void) {}', "k") == ()
    assert kernel_params('extern "C" __global__ void k() {}', "other") is None


# ---------------------------------------------------------------------------
# Many C types, spelled many ways: a launch packs and accepts what the compiled type says


TYPES = [  # (C type as written, as the compiler spells it, NumPy dtype)
    ("char", "char", "int8"), ("signed char", "signed char", "int8"),
    ("unsigned char", "unsigned char", "uint8"), ("short", "short", "int16"),
    ("unsigned short", "unsigned short", "uint16"), ("int", "int", "int32"),
    ("unsigned int", "unsigned int", "uint32"), ("unsigned", "unsigned int", "uint32"),
    ("long", "long", "int64"), ("unsigned long", "unsigned long", "uint64"),
    ("long long", "long long", "int64"), ("unsigned long long", "unsigned long long", "uint64"),
    ("size_t", "unsigned long", "uint64"), ("ptrdiff_t", "long", "int64"),
    ("int8_t", "signed char", "int8"), ("uint16_t", "unsigned short", "uint16"),
    ("int64_t", "long", "int64"), ("float", "float", "float32"),
    ("double", "double", "float64"), ("__half", "__half", "float16"),
    ("half", "__half", "float16"), ("float16", "float16", "float16"), ("bool", "bool", "bool"),
    ("complex<float>", "complex<float>", "complex64"),
    ("thrust::complex<double>", "complex<double>", "complex128"),
    ("cudaTextureObject_t", "unsigned long long", "uint64"),
]
SPELLINGS = ("plain", "typedef", "define", "option", "template")
HEADERS = """#include <cuda/std/cstdint>
#include <cupy/float16.cuh>
#include <cupy/complex.cuh>
using cuda::std::int8_t; using cuda::std::uint16_t; using cuda::std::int64_t;
"""


def _module(spelling: str):
    """One RawModule with a kernel per type of TYPES, each spelled ``spelling``."""
    lines, options, names = [HEADERS], [], []
    if spelling == "template":
        lines.append("template <class T> __global__ void k(T v, T* p, const T* q) {}")
        names = [f"k<{c}>" for c, _, _ in TYPES]
        return jitkern.RawModule(code="\n".join(lines), name_expressions=names), names
    for i, (ctype, _compiled, _dtype) in enumerate(TYPES):
        spelled = {"plain": ctype, "typedef": f"t{i}", "define": f"T{i}", "option": f"O{i}"}
        spelled = spelled[spelling]
        if spelling == "typedef":
            lines.append(f"typedef {ctype} t{i};")
        elif spelling == "define":
            lines.append(f"#define T{i} {ctype}")
        elif spelling == "option":
            options.append(f"-DO{i}={ctype}")
        lines.append(f'extern "C" __global__ void k{i}({spelled} v, {spelled}* p, '
                     f"const {spelled}* q) {{}}")
        names.append(f"k{i}")
    return jitkern.RawModule(code="\n".join(lines), options=tuple(options)), names


def _value(draw, dtype: np.dtype):
    if dtype.kind == "b":
        return draw(st.booleans())
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return draw(st.integers(int(info.min), int(info.max)))
    finite = st.floats(-1e4, 1e4, width=16 if dtype.itemsize <= 2 else 32)
    if dtype.kind == "c":
        return complex(draw(finite), draw(finite))
    return draw(finite)


def _other(dtype: np.dtype) -> np.dtype:
    """A dtype of another width (what a pointer to ``dtype`` refuses)."""
    return np.dtype("float32" if dtype.itemsize != 4 else "float64")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_each_type_is_packed_and_checked_as_compiled(data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    spelling = data.draw(st.sampled_from(SPELLINGS))
    index = data.draw(st.integers(0, len(TYPES) - 1))
    _written, compiled, name = TYPES[index]
    dtype = np.dtype(name)
    value = _value(data.draw, dtype)
    with driver.use(FakeDriver()) as fake:
        module, names = _module(spelling)
        k = module.get_function(names[index])
        p, q = Dev(rng, dtype), Dev(rng, dtype)
        as_numpy = data.draw(st.booleans())
        arg = dtype.type(value) if as_numpy else value
        k((1,), (32,), (arg, p, q))
        assert fake.launches[-1].raw(0, dtype.itemsize) == np.array(value, dtype).tobytes()
        assert fake.launches[-1].words(3)[1:] == [p.ptr, q.ptr]
        other = Dev(rng, _other(dtype))
        if compiled in ("char", "unsigned char"):  # C's byte pointers take any array
            k((1,), (32,), (arg, other, q))
            assert fake.launches[-1].words(3)[1] == other.ptr
        else:
            message = refused(k, (arg, other, q))
            assert "argument 1 (p): the kernel expects" in message, message
            assert f"{compiled}*" in message and f"of {_other(dtype)}" in message, message
        if dtype.kind != "b":
            assert "argument 0 (v)" in refused(k, (_other(dtype).type(1), p, q))
