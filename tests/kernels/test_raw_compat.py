"""Raw CUDA written for CuPy, without a GPU: <cupy/...> headers, .ptr allocations as
pointers, missing-kernel and missing-file errors, nvcc with name_expressions, structured
dtypes in ElementwiseKernel."""

import errno

import numpy as np
import pytest

import jitkern
from jitkern.runtime import launch
from jitkern.toolchain.nvrtc import compile_source
from jitkern.kernels import raw as raw_module
from jitkern.compiler.strings.params import TypeResolutionError

ARCH = "sm_90"

SPEC_COMPLEX = r"""
#include <cupy/complex.cuh>
extern "C" __global__
void my_func(const complex<float>* x1, const complex<float>* x2,
             complex<float>* y, float a) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    y[tid] = x1[tid] + a * x2[tid];
}
"""

CARRAY = r"""
#include <cupy/carray.cuh>
extern "C" __global__ void gather(const float* src, long long n0, long long n1,
                                  long long s0, long long s1, float* out,
                                  thrust::complex<double>* z) {
    ptrdiff_t shape[2] = {n0, n1};
    ptrdiff_t strides[2] = {s0, s1};
    CArray<const float, 2> a(src, n0 * n1, shape, strides);
    CIndexer<2> ind(a.size(), a.shape());
    CUPY_FOR(i, a.size()) {
        ind.set(i);
        out[i] = a[ind.get()] - a[i] + (float)ind.get()[1];
        z[i] = exp(z[i]) * (double)float16(2.0f);  // CuPy's float16: converts to float
    }
}
"""


def test_cupy_complex_header_compiles_the_spec_example():
    info = jitkern.RawKernel(SPEC_COMPLEX, "my_func").inspect(arch=ARCH)
    assert info.cubin[:4] == b"\x7fELF"


def test_cupy_carray_header_names_compile():
    info = jitkern.RawKernel(CARRAY, "gather").inspect(arch=ARCH)
    assert info.cubin[:4] == b"\x7fELF"


def test_cupy_shims_live_in_jitkerns_include_folder():
    # On NVRTC's path (first), and so part of the compile cache's header digest.
    import os

    from jitkern.toolchain import discovery as toolchain

    assert toolchain.include_dirs()[0] == toolchain.PACKAGE_INCLUDE
    for name in ("complex.cuh", "carray.cuh"):
        assert os.path.isfile(os.path.join(toolchain.PACKAGE_INCLUDE, "cupy", name))


# -- objects with .ptr --------------------------------------------------------------


def _class(name, module, **attrs):
    return type(name, (), {"__module__": module, **attrs})


@pytest.mark.parametrize("cls", [
    # CuPy's MemoryPointer (cupy.cuda.alloc() returns one): ptr, device_id, mem.
    _class("MemoryPointer", "cupy.cuda.memory", ptr=0x7000, device_id=0, mem=None),
    # CuPy's Memory / jitkern's MemoryPointer: ptr, device_id, size.
    _class("Memory", "cupy.cuda.memory", ptr=0x7000, device_id=0, size=64),
])
def test_device_allocations_with_ptr_pass_as_pointers(cls):
    src = 'extern "C" __global__ void k(float* p, int n) {}'
    params = raw_module._signature.kernel_params(src, "k")
    obj = cls()
    plan = launch.build_plan((obj, 3), [8, 4], params, "k")
    plan.pack((obj, 3))
    assert np.frombuffer(bytes(plan._buffer)[:8], np.uint64)[0] == 0x7000
    assert plan.slots[0].pointer
    # Decided once per type: the getter is inlined as an expression.
    assert launch.pointer_getter(cls) == "{a}.ptr"
    with pytest.raises(jitkern.KernelArgumentError, match=r"argument 1 \(n\): the kernel expects a "
                                                          "scalar"):
        launch.build_plan((obj, obj), [8, 8], params, "k")


@pytest.mark.parametrize("cls", [
    _class("Stream", "cupy.cuda.stream", ptr=1, device_id=0),  # no mem/size: not memory
    _class("Thing", "mylib", ptr=1),
])
def test_other_ptr_objects_are_not_pointers(cls):
    with pytest.raises(jitkern.KernelArgumentError, match="cannot pass a"):
        launch.build_plan((cls(),), [8], None, "k")


def test_jitkern_device_pointer_counts_as_an_allocation():
    from jitkern.arrays.core import DevicePointer
    from jitkern.runtime.memory import MemoryPointer

    assert launch.pointer_getter(DevicePointer) == "{a}.ptr"
    assert launch.pointer_getter(MemoryPointer) == "{a}.ptr"


# -- errors -------------------------------------------------------------------------

MODULE = r"""
extern "C" __global__ void test_sum(float* x) { x[0] += 1; }
extern "C" __global__ void test_multiply(float* x) { x[0] *= 2; }
template <typename T> __global__ void fx3(T* a) { a[0] *= 3; }
"""


def test_missing_kernel_error_names_it_and_the_available_ones():
    binary = compile_source(MODULE, arch=ARCH, name_expressions=("fx3<float>",))
    err = raw_module.missing_function_error(binary, "test_nope")
    assert isinstance(err, jitkern.FunctionNotFoundError)
    # Whatever a ported program catches: CuPy's driver error is a RuntimeError; a missing
    # name reads as a ValueError or an AttributeError.
    for cls in (ValueError, AttributeError, RuntimeError, jitkern.JitkernError):
        assert isinstance(err, cls)
    msg = str(err)
    assert "no kernel named 'test_nope'" in msg
    assert "'fx3<float>', 'test_multiply', 'test_sum'" in msg
    assert 'extern "C"' in msg


def test_available_kernels_of_a_cubin_file(tmp_path):
    binary = compile_source(MODULE, arch=ARCH)
    path = tmp_path / "m.cubin"
    path.write_bytes(binary.data)
    mod = jitkern.RawModule(path=str(path))
    assert raw_module.available_kernels(mod._binary()) == ["test_multiply", "test_sum"]


def test_missing_binary_file_is_file_not_found_naming_the_path(tmp_path):
    path = tmp_path / "nowhere" / "kernels.cubin"
    with pytest.raises(jitkern.JitkernFileNotFoundError) as info:
        jitkern.RawModule(path=str(path))
    assert isinstance(info.value, FileNotFoundError)
    assert info.value.errno == errno.ENOENT and info.value.filename == str(path)
    assert str(path) in str(info.value) and ".cubin, .fatbin or .ptx" in str(info.value)
    with pytest.raises(FileNotFoundError, match=r"expected a \.cubin, \.fatbin or \.ptx file"):
        jitkern.RawModule(path=str(tmp_path))  # a folder is not a binary file


def test_nvcc_with_name_expressions_is_refused_up_front():
    with pytest.raises(jitkern.JitkernValueError, match="name_expressions needs backend='nvrtc'"):
        jitkern.RawModule(code=MODULE, backend="nvcc", name_expressions=["fx3<float>"])
    # Without name_expressions nvcc is still accepted (compiled on first use).
    assert jitkern.RawModule(code=MODULE, backend="nvcc").backend == "nvcc"


# -- structured dtypes in ElementwiseKernel -------------------------------------------

REC = np.dtype([("a", "f4"), ("b", "f8"), ("c", "i2", (3,)), ("z", "c8")], align=True)


def test_record_dtype_becomes_a_struct_with_numpys_layout():
    k = jitkern.ElementwiseKernel("T x, S s", "float64 y",
                                  "y = x.a + x.b + x.c[2] + s.b + abs(x.z);", name="recs")
    info = k.inspect(np.zeros(8, REC), np.zeros((), REC)[()], arch=ARCH)
    src = info.source
    assert "  float a;\n  char _jk_pad1[4];\n  double b;\n  short c[3];\n" in src
    assert "complex<float> z;" in src and "#include <cupy/complex.cuh>" in src
    assert "static_assert(sizeof(_jk_record_" in src and "== 32" in src
    assert "typedef _jk_record_" in src and "    S s," in src
    assert info.cubin[:4] == b"\x7fELF"


def test_nested_records_are_defined_first():
    outer = np.dtype([("p", REC), ("q", "u1")], align=True)
    k = jitkern.ElementwiseKernel("T x", "float64 y", "y = x.p.b + x.q;", name="nested")
    src = k.inspect(np.zeros(4, outer), arch=ARCH).source
    inner_at = src.index("== 32")
    assert src.index("== 40") > inner_at  # outer (40 bytes) after the inner struct


def test_record_layouts_c_cannot_express_are_refused():
    packed = np.dtype([("a", "f4"), ("b", "f8")])  # b at offset 4
    k = jitkern.ElementwiseKernel("T x", "float64 y", "y = x.b;", name="packed")
    with pytest.raises(TypeResolutionError, match="field 'b' is at offset 4.*align=True"):
        k.inspect(np.zeros(4, packed), arch=ARCH)
    odd = np.dtype({"names": ["my field"], "formats": ["f4"]})
    with pytest.raises(TypeResolutionError, match="'my field' is not a C identifier"):
        k.inspect(np.zeros(4, odd), arch=ARCH)
    # a C++ keyword is a fine Python name: its member is spelled class_ (issue 27)
    keyword = np.dtype({"names": ["class"], "formats": ["f4"]})
    reads = jitkern.ElementwiseKernel("T x", "float64 y", "y = x.class_;", name="keyword")
    assert "float class_;" in reads.inspect(np.zeros(4, keyword), arch=ARCH).source


def test_record_scalar_of_another_dtype_is_refused():
    other = np.dtype([("a", "f4")])
    k = jitkern.ElementwiseKernel("float32 x, S s", "float32 y", "y = x + s.a;", name="rs")
    from jitkern.compiler.strings.params import convert_scalar

    with pytest.raises(TypeResolutionError, match="is not a .* record"):
        convert_scalar(np.zeros((), other)[()], REC, "s", "rs")
    assert k.inspect(np.zeros(4, np.float32), np.zeros((), other)[()], arch=ARCH).registers > 0


def test_record_scalars_pack_at_c_alignment():
    # NumPy calls an unaligned-built record's alignment 1; C aligns the struct to 8.
    rec = np.dtype([("a", "f8"), ("b", "f8")])
    assert rec.alignment == 1
    plan = launch.build_plan((np.float32(1), np.zeros((), rec)[()]), [4, 16], None, "k")
    assert plan.fmt == "<f4x16s"
