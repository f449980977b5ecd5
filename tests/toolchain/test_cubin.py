"""Reading a CUBIN without a GPU: its kernels and each kernel's parameter layout.

The expected layouts are written out by hand from C's layout rules (each parameter at the
next multiple of its alignment), not computed the way the reader computes them."""

import pytest

from jitkern.toolchain import nvrtc as compiler, cubin
from jitkern.runtime import driver, module

SOURCE = r"""
struct Three { double a[3]; };                  // 24 bytes, aligned to 8
struct alignas(16) Wide { float v[3]; };        // 16 bytes, aligned to 16
extern "C" __global__ void mixed(float* x, int n, double d, char c, Three t, short h,
                                 float4 f, Wide w) {
    x[0] = n + d + c + t.a[2] + h + f.w + w.v[0];
}
extern "C" __global__ void none() {}
extern "C" __global__ void one_char(char c, float* y) { y[0] = c; }
__device__ __noinline__ float helper(float v) { return v * 2; }
extern "C" __global__ void calls(float* y) { y[0] = helper(y[1]); }
template <typename T> __global__ void tk(T* y) { y[0] = 1; }
"""

# (offset, size) by hand: float* @0 (8); int @8 (4); double @16 (8, pad 12..15);
# char @24 (1); Three @32 (24, pad to 8); short @56 (2); float4 @64 (16, pad to 16);
# Wide @80 (16)
MIXED = [(0, 8), (8, 4), (16, 8), (24, 1), (32, 24), (56, 2), (64, 16), (80, 16)]


@pytest.fixture(scope="module", params=["sm_80", "sm_90", "sm_90a", "sm_120"])
def binary(request):
    return compiler.compile_source(SOURCE, name_expressions=("tk<double>",), arch=request.param)


def test_kernel_names_are_the_entry_functions_only(binary):
    names = cubin.kernel_names(binary.data)
    assert sorted(names) == sorted(["mixed", "none", "one_char", "calls",
                                    binary.lowered("tk<double>")])
    assert not any("helper" in n for n in names)  # a device function is not a kernel


def test_parameter_layouts_match_c_layout_rules(binary):
    layouts = cubin.param_layouts(binary.data)
    assert layouts["mixed"] == MIXED
    assert layouts["none"] == []
    assert layouts["one_char"] == [(0, 1), (8, 8)]
    assert layouts[binary.lowered("tk<double>")] == [(0, 8)]


class NoDriver:
    devices = 1

    def __getattr__(self, name):
        raise AssertionError("the driver was asked")


def test_function_reads_its_layout_from_the_cubin_without_a_driver(binary):
    with driver.use(NoDriver()):
        assert module.param_layout(None, binary, "mixed") == MIXED
        assert module.param_layout(None, binary, binary.lowered("tk<double>")) == [(0, 8)]


class FakeDriver:
    """cuFuncGetParamCount/Info of a 3-parameter kernel; a probe past the end is an error."""

    def __init__(self, with_count=True):
        self.calls = []
        if with_count:
            self.cuFuncGetParamCount = lambda handle: (0, 3)

    def cuFuncGetParamInfo(self, handle, index):
        self.calls.append(index)
        if index >= 3:
            return (1, 0, 0)  # CUDA_ERROR_INVALID_VALUE: what compute-sanitizer reports
        return (0, index * 8, 8)


def test_driver_layout_asks_for_the_count_and_never_probes_past_the_last():
    fake = FakeDriver()
    ptx = compiler.compile_source('extern "C" __global__ void k(float* a, float* b, float* c)'
                                  " { a[0] = b[0] + c[0]; } // ptx-layout", arch="compute_80")
    with driver.use(fake):
        assert module.param_layout("handle", ptx, "k") == [(0, 8), (8, 8), (16, 8)]
    assert fake.calls == [0, 1, 2]


def test_driver_without_a_count_gives_no_layout_rather_than_probing():
    fake = FakeDriver(with_count=False)
    ptx = compiler.compile_source('extern "C" __global__ void k(float* a) { a[0] = 1; } // nc',
                                  arch="compute_80")
    with driver.use(fake):
        assert module.param_layout("handle", ptx, "k") is None
    assert fake.calls == []


def test_unreadable_data_is_none_not_a_crash():
    assert cubin.kernel_names(b"\x7fELF" + b"\0" * 10) is None
    assert cubin.param_layouts(b"not an elf") is None
