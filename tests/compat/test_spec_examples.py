"""CPU: every example of CuPy's user-kernel documentation builds under jitkern and compiles
for sm_90 (no GPU): the generated or given source, a CUBIN, and the documented errors."""

import compat_examples as ex
import numpy as np
import pytest

import jitkern as cp
from jitkern import jit

ARCH = "sm_90"
F32 = np.float32


def _cubin(info):
    assert info.arch == "sm_90" and info.cubin[:4] == b"\x7fELF"
    return info


def test_squared_diff_compiles_for_broadcast_scalar_and_explicit_output():
    k = ex.squared_diff(cp)
    x, y = np.zeros((2, 5), F32), np.zeros(5, F32)
    z = np.zeros((2, 5), F32)
    for args in ((x, y), (x, 5), (x, y, z)):
        info = _cubin(k.inspect(*args, arch=ARCH))
        assert "(x - y) * (x - y)" in info.source and "squared_diff" in info.source


def test_squared_diff_refuses_an_output_of_the_wrong_shape():
    k = ex.squared_diff(cp)
    with pytest.raises(ValueError, match="shape"):
        k.inspect(np.zeros((2, 5), F32), np.zeros(5, F32), np.zeros((5, 2), F32), arch=ARCH)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.complex64])
def test_type_generic_kernels_bind_t_from_the_arrays(dtype):
    for make in (ex.squared_diff_generic, ex.squared_diff_generic_body):
        k = make(cp)
        info = _cubin(k.inspect(np.zeros(7, dtype), np.zeros(7, dtype), arch=ARCH))
        ctype = {
            np.float32: "float",
            np.float64: "double",
            np.int32: "int",
            np.complex64: "complex<float>",
        }[dtype]
        assert f"typedef {ctype} T;" in info.source


def test_super_generic_needs_the_output():
    k = ex.squared_diff_super_generic(cp)
    x, y = np.zeros(4, np.float32), np.zeros(4, np.float64)
    with pytest.raises(TypeError, match="Z"):
        k.inspect(x, y, arch=ARCH)
    info = _cubin(k.inspect(x, y, np.zeros(4, np.float64), arch=ARCH))
    for line in ("typedef float X;", "typedef double Y;", "typedef double Z;"):
        assert line in info.source


def test_add_reverse_and_all_raw_with_size():
    k = ex.add_reverse(cp)
    info = _cubin(k.inspect(np.zeros(9, F32), np.zeros(9, F32), arch=ARCH))
    assert "_ind.size() - i - 1" in info.source
    raw = ex.all_raw_double(cp)
    _cubin(raw.inspect(np.zeros(9, F32), np.zeros(9, F32), size=9, arch=ARCH))
    with pytest.raises(ValueError, match="size"):
        raw.inspect(np.zeros(9, F32), np.zeros(9, F32), arch=ARCH)  # no size, nothing to broadcast


def test_l2norm_axis_1_keepdims_and_full():
    k = ex.l2norm(cp)
    x = np.zeros((2, 5), F32)
    for kw in ({"axis": 1}, {"axis": 1, "keepdims": True}, {}):
        info = _cubin(k.inspect(x, arch=ARCH, **kw))
        assert "sqrt(a)" in info.source


def test_raw_kernel_my_add_and_attributes_names():
    k = cp.RawKernel(ex.MY_ADD, "my_add")
    info = _cubin(k.inspect(arch=ARCH))
    assert info.name == "my_add" and info.registers > 0
    assert (k.code, k.name, k.backend, k.file_path) == (ex.MY_ADD, "my_add", "nvrtc", None)
    for attr in ex.KERNEL_ATTRIBUTES:
        assert isinstance(getattr(type(k), attr), property), attr
    assert type(k).max_dynamic_shared_size_bytes.fset is not None
    assert type(k).preferred_shared_memory_carveout.fset is not None
    assert type(k).num_regs.fset is None


def test_complex_kernel_with_the_cupy_header():
    k = cp.RawKernel(ex.COMPLEX_KERNEL, "my_func")
    _cubin(k.inspect(arch=ARCH))


def test_big_dynamic_shared_memory_kernel_compiles():
    _cubin(cp.RawKernel(ex.BIG_SHARED, "through_shared").inspect(arch=ARCH))


def test_translate_cucomplex_by_position_as_cupy_allows():
    code = r"""
    #include <cuComplex.h>
    extern "C" __global__ void conj_all(cuFloatComplex* z, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) z[i] = cuConjf(z[i]);
    }"""
    k = cp.RawKernel(code, "conj_all", (), "nvrtc", True)
    assert k.translate_cucomplex is True
    _cubin(k.inspect(arch=ARCH))


def test_raw_module_two_kernels():
    mod = cp.RawModule(code=ex.TWO_KERNELS)
    info = mod.inspect(arch=ARCH)
    assert info.cubin[:4] == b"\x7fELF"
    binary = cp.compile_with_cache(ex.TWO_KERNELS, arch=ARCH)
    assert {"test_sum", "test_multiply"} <= set(binary.resources)
    assert mod.file_path is None and mod.code == ex.TWO_KERNELS


def test_name_expressions_lower_both_templates_with_cxx11():
    mod = cp.RawModule(code=ex.FX3, options=("-std=c++11",), name_expressions=ex.FX3_NAMES)
    assert mod.name_expressions == tuple(ex.FX3_NAMES)
    binary = cp.compile_with_cache(
        ex.FX3, options=("-std=c++11",), arch=ARCH, name_expressions=ex.FX3_NAMES
    )
    lowered = {binary.lowered(n) for n in ex.FX3_NAMES}
    assert len(lowered) == 2 and all(s.startswith("_Z") for s in lowered)
    assert lowered <= set(binary.resources)


def test_fuse_examples_compile_and_run_with_numpy():
    squared_diff, sum_of_products, named = ex.fused(cp)
    x, y = np.arange(10), np.arange(10)[::-1]
    expected = np.array([81, 49, 25, 9, 1, 1, 9, 25, 49, 81])
    np.testing.assert_array_equal(squared_diff(x, y), expected)  # NumPy in: NumPy runs it
    np.testing.assert_array_equal(named(x, y), expected)
    a, b = np.arange(12.0).reshape(3, 4), np.arange(12.0)[::-1].reshape(3, 4)
    np.testing.assert_array_equal(sum_of_products(a, b), (a * b).sum(axis=-1))
    for f, args in ((squared_diff, (x, y)), (named, (x, y)), (sum_of_products, (a, b))):
        info = f.inspect(*args, arch=ARCH)
        infos = info if isinstance(info, (list, tuple)) else [info]
        assert all(i.cubin[:4] == b"\x7fELF" for i in infos)
    assert "squared_diff" in named.kernel_for(x, y).name
    assert (named.name, squared_diff.name) == ("squared_diff", "squared_diff")
    assert squared_diff.func.__name__ == "squared_diff"


def test_jit_elementwise_copy_compiles():
    k = ex.elementwise_copy(jit)
    size = np.uint32(1000)
    info = _cubin(k.inspect(np.zeros(1000, F32), np.zeros(1000, F32), size, arch=ARCH))
    assert "blockIdx.x" in info.source and "gridDim.x" in info.source
