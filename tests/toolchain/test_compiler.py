"""NVRTC compilation without a GPU: targets, options, errors, resource reports."""

import io

import pytest

from jitkern import CompileError
from jitkern.toolchain import nvrtc as compiler, cubin, discovery as toolchain, target

ADD = r"""
extern "C" __global__ void add(const float* x, const float* y, float* z, int n) {
    __shared__ float tile[128];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) z[i] = tile[threadIdx.x] + y[i];
}
"""


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_compiles_cubin_for_named_arch(arch):
    binary = compiler.compile_source(ADD, arch=arch)
    assert binary.fmt == "cubin"
    assert binary.arch == int(arch[3:])
    assert binary.data[:4] == b"\x7fELF"
    res = binary.resources["add"]
    assert res.shared_bytes == 128 * 4
    assert res.registers > 0


def test_ptx_format_on_request():
    binary = compiler.compile_source(ADD, arch="sm_80", fmt="ptx")
    assert binary.fmt == "ptx"
    assert b".target sm_80" in binary.data
    assert binary.resources == {}


def test_default_std_is_cxx17_and_can_be_overridden():
    assert compiler.normalize_options(())[0] == "-std=c++17"
    assert compiler.normalize_options(("-std=c++11",)) == ("-std=c++11",)
    # C++17 feature compiles by default
    src = 'template <class T> __device__ T f(T x) { if constexpr (sizeof(T) == 4) return x; else return -x; }\n' \
          'extern "C" __global__ void k(float* p) { p[0] = f(p[0]); }'
    compiler.compile_source(src, arch="sm_90")


def test_rdc_spellings_are_normalized():
    for spelling in ("-dc", "-rdc=true", "--relocatable-device-code=true"):
        assert "--relocatable-device-code=true" in compiler.normalize_options((spelling,))


def test_options_are_validated():
    with pytest.raises(TypeError, match="options"):
        compiler.normalize_options((1,))
    with pytest.raises(ValueError, match="arch"):
        compiler.normalize_options(("-arch=sm_90",))


def test_no_fast_math_by_default():
    src = 'extern "C" __global__ void k(float* p) { p[0] = p[0] / p[1]; }'
    slow = compiler.compile_source(src, arch="sm_90", fmt="ptx").data
    fast = compiler.compile_source(src, options=("--use_fast_math",), arch="sm_90", fmt="ptx").data
    assert b"div.rn.f32" in slow
    assert b"div.rn.f32" not in fast


def test_compile_error_shows_log_and_numbered_source():
    src = 'extern "C" __global__ void k(float* x) {\n    int a = 1;\n    x[0] = undefined_name;\n}\n'
    with pytest.raises(CompileError) as info:
        compiler.compile_source(src, arch="sm_80", program_name="mine.cu")
    err = info.value
    text = str(err)
    assert "undefined_name" in err.log
    assert 'identifier "undefined_name" is undefined' in text
    assert ">    3 |     x[0] = undefined_name;" in text
    assert err.source == src


def test_dump_source_on_error(monkeypatch, capsys):
    from jitkern.config import settings

    monkeypatch.setattr(settings, "dump_source_on_error", True)
    with pytest.raises(CompileError, match='identifier "nope" is undefined'):
        compiler.compile_source("__global__ void k() { nope; }\n// marker-xyz", arch="sm_80")
    assert "marker-xyz" in capsys.readouterr().err


def test_log_stream_receives_warnings():
    src = 'extern "C" __global__ void k(float* x) { int unused = 1; x[0] = 1; }'
    log = io.StringIO()
    compiler.compile_source(src, arch="sm_90", log_stream=log)
    assert "unused" in log.getvalue()


def test_name_expressions_are_lowered():
    src = "template <typename T> __global__ void fx3(T* a, int n) { a[0] *= 3; }"
    binary = compiler.compile_source(src, name_expressions=("fx3<float>", "fx3<double>"), arch="sm_80")
    assert binary.lowered("fx3<float>").startswith("_Z")
    assert binary.lowered("fx3<float>") != binary.lowered("fx3<double>")
    assert set(binary.resources) == {binary.lowered("fx3<float>"), binary.lowered("fx3<double>")}


def test_cuda_headers_from_wheels_compile():
    src = ('#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n#include <cuda/std/limits>\n'
           'extern "C" __global__ void k(__half* h, __nv_bfloat16* b, float* f) {\n'
           '  h[0] = __float2half(f[0]); b[0] = __float2bfloat16(cuda::std::numeric_limits<float>::max()); }')
    binary = compiler.compile_source(src, arch="sm_90")
    assert binary.fmt == "cubin" and cubin.kernel_names(binary.data) == ["k"]
    assert cubin.param_layouts(binary.data)["k"] == [(0, 8), (8, 8), (16, 8)]


def test_target_choice_rules(monkeypatch):
    monkeypatch.setattr(toolchain, "supported_archs", lambda: (75, 80, 86, 89, 90, 100, 120))
    monkeypatch.setattr(toolchain, "remembered_version", lambda: (13, 5))
    assert target.choose_target(90) == ("cubin", 90)
    assert target.choose_target(87) == ("cubin", 86)  # same major, lower minor
    assert target.choose_target(130, driver_version=13050) == ("ptx", 120)
    with pytest.raises(CompileError, match="would not load on driver 13.0"):
        target.choose_target(130, driver_version=13000)
    with pytest.raises(CompileError, match="cannot target"):
        target.choose_target(50)


def test_normalize_arch():
    assert target.parse("sm_90").cc == 90
    assert target.parse("compute_80").cc == 80
    assert target.parse((8, 6)).cc == 86
    assert target.parse("sm_90a").cc == 90
    with pytest.raises(ValueError, match="arch"):
        target.parse("hopper").cc


def test_relocatable_code_links_with_device_runtime():
    src = r"""
    extern "C" __global__ void child(float* x) { x[threadIdx.x] *= 2; }
    extern "C" __global__ void parent(float* x) { if (threadIdx.x == 0) child<<<1, 32>>>(x); }
    """
    binary = compiler.compile_source(src, options=("-dc",), arch="sm_90")
    assert binary.data[:4] == b"\x7fELF"


def test_nvcc_backend_missing_is_explained(monkeypatch):
    monkeypatch.setattr(compiler, "_nvcc_path", lambda: None)
    with pytest.raises(CompileError, match="needs nvcc"):
        compiler.compile_source('extern "C" __global__ void k() {}\n//nvcc-missing', arch="sm_80",
                                backend="nvcc")


def test_resource_parser():
    log = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'k' for 'sm_90'
ptxas info    : Function properties for k
ptxas         .     24 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 512 bytes smem, 380 bytes cmem[0]
"""
    res = compiler.parse_resources(log)["k"]
    assert (res.registers, res.shared_bytes, res.local_bytes) == (40, 512, 24)
    assert (res.spill_stores, res.spill_loads, res.const_bytes) == (8, 4, 380)


def test_resource_parser_with_interleaved_device_functions():
    # ptxas may report a callee's properties between an entry's header and its "Used" line
    log = """ptxas info    : Compiling entry function 'hist' for 'sm_80'
ptxas info    : Function properties for helper
ptxas         .     8 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Function properties for hist
ptxas         .     16 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 14 registers, used 0 barriers, 16 bytes cumulative stack size
ptxas info    : Compiling entry function 'other' for 'sm_80'
ptxas info    : Used 9 registers
ptxas info    : Function properties for other
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
"""
    res = compiler.parse_resources(log)
    assert (res["hist"].registers, res["hist"].local_bytes, res["hist"].spill_stores) == (14, 16, 4)
    assert (res["other"].registers, res["other"].local_bytes) == (9, 0)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("n", [1, 64, 1000])
def test_cubin_resources_agree_with_ptxas(arch, n):
    from jitkern.toolchain.cubin import cubin_resources

    src = (f"__device__ __noinline__ float helper(float* p, int i) {{ float a[16]; "
           f"for (int k = 0; k < 16; k++) a[k] = p[k + i]; return a[i & 15]; }}\n"
           f'extern "C" __global__ void k{n}(float* x) {{ __shared__ float s[{n}]; '
           f"s[threadIdx.x % {n}] = x[threadIdx.x]; __syncthreads(); "
           f"x[threadIdx.x] = s[{n} - 1 - threadIdx.x % {n}] + helper(x, threadIdx.x); }}\n"
           f'extern "C" __global__ void plain{n}(double* x, int m) {{ double acc[8]; '
           f"for (int i = 0; i < 8; i++) acc[i] = x[i * m + threadIdx.x]; x[threadIdx.x] = acc[m & 7]; }}")
    binary = compiler.compile_source(src, arch=arch)
    from_elf = cubin_resources(binary.data)
    for name in (f"k{n}", f"plain{n}"):
        res = binary.resources[name]
        assert from_elf[name]["registers"] == res.registers
        assert from_elf[name]["local_bytes"] == res.local_bytes
        assert from_elf[name].get("shared_bytes", 0) == res.shared_bytes
