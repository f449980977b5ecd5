"""GPU: RawModule(path=...) of .ptx, .cubin and .fatbin files runs their kernels, against NumPy
(the CPU side, with the fake driver, is test_raw_module_files.py)."""

import uuid

import numpy as np
import pytest

import jitkern
from jitkern.runtime import driver
from jitkern.toolchain import discovery, nvrtc

pytestmark = pytest.mark.gpu

SOURCE = r"""
extern "C" __global__ void scale_k(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * x[i];
}
"""

# The same kernel as PTX ISA 7.0 (CUDA 11.0) for sm_80, written by hand: every driver jitkern
# supports reads it and compiles it for its GPU (sm_80 and newer).
OLD_PTX = b"""\
.version 7.0
.target sm_80
.address_size 64

.visible .entry scale_k(
    .param .u64 scale_k_x,
    .param .f32 scale_k_a,
    .param .u32 scale_k_n
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .f32 %f<3>;
    .reg .b64 %rd<5>;

    ld.param.u64 %rd1, [scale_k_x];
    ld.param.f32 %f1, [scale_k_a];
    ld.param.u32 %r1, [scale_k_n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r5, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.f32 %f2, [%rd4];
    mul.rn.f32 %f2, %f2, %f1;
    st.global.f32 [%rd4], %f2;
DONE:
    ret;
}
"""


def _device_arch() -> str:
    major, minor = driver.compute_capability(driver.current_device_id())
    return f"{major}{minor}"


def _run(mod, rng):
    n = int(rng.integers(1, 100_000))
    x = rng.standard_normal(n).astype(np.float32)
    a = np.float32(rng.standard_normal())
    d = jitkern.asarray(x)
    mod.get_function("scale_k")((-(-n // 128),), (128,), (d, a, np.int32(n)))
    np.testing.assert_array_equal(d.get(), x * a)


def test_hand_written_old_ptx_is_compiled_by_the_driver(tmp_path, rng):
    path = tmp_path / "old.ptx"
    path.write_bytes(OLD_PTX)
    _run(jitkern.RawModule(path=str(path)), rng)


def test_nvrtc_ptx_runs_or_says_the_driver_is_too_old(tmp_path, rng):
    source = SOURCE + f"// {uuid.uuid4()}\n"
    path = tmp_path / "new.ptx"
    path.write_bytes(nvrtc.compile_source(source, arch=f"compute_{_device_arch()}",
                                          fmt="ptx").data)
    mod = jitkern.RawModule(path=str(path))
    major, minor = discovery.nvrtc_version()
    if driver.driver_version() >= major * 1000 + minor * 10:
        _run(mod, rng)
        return
    with pytest.raises(jitkern.LaunchError, match="the driver could not load this ptx file"):
        mod.get_function("scale_k")


def test_cubin_and_fatbin_files_run(tmp_path, rng):
    source = SOURCE + f"// {uuid.uuid4()}\n"
    cubin = tmp_path / "k.cubin"
    arch = f"sm_{_device_arch()}"
    cubin.write_bytes(jitkern.RawKernel(source, "scale_k").inspect(arch=arch).cubin)
    _run(jitkern.RawModule(path=str(cubin)), rng)
    jitkern.RawKernel(source, "scale_k").export(tmp_path / "f", arch=(arch,), format="fatbin")
    _run(jitkern.RawModule(path=str(tmp_path / "f.fatbin")), rng)
