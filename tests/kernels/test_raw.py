"""RawKernel and RawModule without a GPU: construction, inspection, errors."""

import os

import numpy as np
import pytest

import jitkern
from jitkern import CompileError

MY_ADD = r"""
extern "C" __global__
void my_add(const float* x1, const float* x2, float* y) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    y[tid] = x1[tid] + x2[tid];
}
"""


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_inspect_without_gpu(arch):
    k = jitkern.RawKernel(MY_ADD, "my_add")
    info = k.inspect(arch=arch)
    assert info.source == MY_ADD
    assert info.cubin[:4] == b"\x7fELF"
    assert info.arch == arch
    assert info.registers > 0
    assert info.shared_bytes == 0
    assert info.local_bytes == 0


def test_public_attributes():
    k = jitkern.RawKernel(MY_ADD, "my_add", options=("-DFOO=1",))
    assert k.code == MY_ADD
    assert k.name == "my_add"
    assert k.backend == "nvrtc"
    assert "-DFOO=1" in k.options
    assert k.enable_cooperative_groups is False


@pytest.mark.parametrize("kwargs,exc,words", [
    (dict(code=1, name="k"), TypeError, "code: expected CUDA source"),
    (dict(code=MY_ADD, name=""), ValueError, "name"),
    (dict(code=MY_ADD, name="my_add", backend="clang"), ValueError, "backend"),
    (dict(code=MY_ADD, name="my_add", options=(3,)), TypeError, "options"),
])
def test_constructor_errors(kwargs, exc, words):
    with pytest.raises(exc, match=words):
        jitkern.RawKernel(**kwargs)


def test_compile_error_names_kernel_file():
    k = jitkern.RawKernel('extern "C" __global__ void bad(float* x) { x[0] = nope; }', "bad")
    with pytest.raises(CompileError, match=r"bad\.cu"):
        k.inspect(arch="sm_90")


def test_template_module_inspect():
    code = r"""
    template<typename T>
    __global__ void fx3(T* arr, int N) {
        unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
        if (tid < N) arr[tid] = arr[tid] * 3;
    }"""
    mod = jitkern.RawModule(code=code, options=("-std=c++11",),
                            name_expressions=["fx3<float>", "fx3<double>"])
    info = mod.inspect(arch="sm_90")
    assert info.cubin[:4] == b"\x7fELF"
    assert "-std=c++11" in mod.options


def test_module_needs_exactly_one_origin(tmp_path):
    with pytest.raises(TypeError, match="exactly one"):
        jitkern.RawModule()
    with pytest.raises(TypeError, match="exactly one"):
        jitkern.RawModule(code="", path=str(tmp_path / "x.cubin"))


def test_module_path_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        jitkern.RawModule(path=str(tmp_path / "missing.cubin"))
    junk = tmp_path / "junk.cubin"
    junk.write_bytes(os.urandom(64))
    with pytest.raises(ValueError, match="not a CUDA binary"):
        jitkern.RawModule(path=str(junk))


def test_module_loads_binaries_written_by_compile(tmp_path):
    k = jitkern.RawKernel(MY_ADD, "my_add")
    cubin = tmp_path / "my_add.cubin"
    cubin.write_bytes(k.inspect(arch="sm_90").cubin)
    mod = jitkern.RawModule(path=str(cubin))
    assert mod._binary().fmt == "cubin"
    from jitkern.toolchain import nvrtc as compiler

    ptx = compiler.compile_source(MY_ADD, arch="sm_80", fmt="ptx").data
    p = tmp_path / "my_add.ptx"
    p.write_bytes(ptx)
    assert jitkern.RawModule(path=str(p))._binary().fmt == "ptx"


def test_launch_without_gpu_says_so(monkeypatch):
    from jitkern.runtime import driver

    if driver.is_available():
        pytest.skip("a GPU is present")
    k = jitkern.RawKernel(MY_ADD, "my_add")
    with pytest.raises(jitkern.CUDAError, match="no CUDA (driver found|device)"):
        k((1,), (1,), (np.float32(1),))
