"""A kernel name is checked against the compiled binary's own symbols, without a GPU."""

import pytest

import jitkern
from jitkern.runtime import driver

TWO = r"""
extern "C" __global__ void my_add(float* y) { y[0] += 1; }
extern "C" __global__ void my_sub(float* y) { y[0] -= 1; }
"""
TEMPLATE = r"""
template <typename T> __global__ void scale(T* y, T a) { y[0] *= a; }
extern "C" __global__ void plain(float* y) { y[0] = 0; }
"""


@pytest.fixture
def no_gpu(monkeypatch):
    """As on a machine without a GPU (this one may or may not have one)."""
    monkeypatch.setattr(driver, "is_available", lambda: False)

    def refuse(*a, **k):
        raise jitkern.CUDAError("no CUDA driver found")

    monkeypatch.setattr(driver, "current_device_id", refuse)


@pytest.mark.parametrize("arch", ["sm_90", "compute_90"])
def test_missing_name_lists_the_kernels_the_code_holds(arch):
    k = jitkern.RawKernel(TWO, "my_mul")
    with pytest.raises(jitkern.FunctionNotFoundError) as info:
        k.inspect(arch=arch)
    message = str(info.value)
    assert message.startswith("name: this code has no kernel 'my_mul'")
    assert "'my_add'" in message and "'my_sub'" in message
    assert isinstance(info.value, ValueError)


def test_empty_code_holds_no_kernels():
    with pytest.raises(jitkern.FunctionNotFoundError, match="no kernels at all") as info:
        jitkern.RawKernel("", "k").inspect(arch="sm_90")
    assert 'extern "C" __global__ void k(' in str(info.value)


def test_only_a_device_function_of_that_name_is_not_a_kernel():
    src = 'extern "C" __device__ __noinline__ float k(float v) { return v; }\n' + TWO
    with pytest.raises(jitkern.FunctionNotFoundError, match="no kernel 'k'"):
        jitkern.RawKernel(src, "k").inspect(arch="sm_90")


@pytest.mark.parametrize("name", ["scale<float>", "scale"])
def test_template_name_points_at_name_expressions(name):
    with pytest.raises(jitkern.FunctionNotFoundError) as info:
        jitkern.RawKernel(TEMPLATE, name).inspect(arch="sm_90")
    message = str(info.value)
    assert "'plain'" in message
    assert "RawModule(code=..., name_expressions=[" in message and "get_function(" in message


def test_mangled_kernel_suggests_extern_c():
    src = "__global__ void mangled(float* y) { y[0] = 1; }"
    with pytest.raises(jitkern.FunctionNotFoundError, match='declare the kernel extern "C"'):
        jitkern.RawKernel(src, "mangled").inspect(arch="sm_90")


def test_present_name_inspects_with_registers():
    info = jitkern.RawKernel(TWO, "my_sub").inspect(arch="sm_90")
    assert info.registers is not None and info.registers > 0


def test_module_kernels_reach_inspect_by_name_without_a_driver(no_gpu):
    mod = jitkern.RawModule(code=TEMPLATE, name_expressions=["scale<float>"])
    scaled = mod.get_function("scale<float>").inspect(arch="sm_90")
    assert scaled.registers is not None and scaled.name == "scale<float>"
    assert mod.get_function("plain").inspect(arch="sm_90").registers is not None


def test_module_missing_and_uninstantiated_names_without_a_driver(no_gpu):
    mod = jitkern.RawModule(code=TEMPLATE, name_expressions=["scale<float>"])
    with pytest.raises(jitkern.FunctionNotFoundError) as info:
        mod.get_function("scale<double>").inspect(arch="sm_90")
    message = str(info.value)
    assert message.startswith("name: this module has no kernel 'scale<double>'")
    assert "'scale<float>'" in message and "'plain'" in message  # named as the user named them
    assert "name_expressions (now ['scale<float>'])" in message
    with pytest.raises(jitkern.FunctionNotFoundError, match="no kernel 'nope'"):
        mod.get_function("nope").inspect(arch="sm_90")


def test_module_kernel_cannot_launch_without_a_driver(no_gpu):
    import numpy as np

    k = jitkern.RawModule(code=TWO).get_function("my_add")
    with pytest.raises(jitkern.CUDAError, match="no CUDA driver"):
        k((1,), (1,), (np.float32(1),))
