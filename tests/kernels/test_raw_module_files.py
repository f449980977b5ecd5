"""RawModule(path=...) of a .ptx, .cubin or .fatbin file loads as it is and get_function launches
its kernels (issue 25): without a GPU through the fake driver (the files made here by NVRTC, in
tmp_path), on the GPU in test_raw_module_files_gpu.py. A file the device cannot run is refused
before loading, naming both; a PTX the driver cannot read is explained."""

import struct
import uuid

import numpy as np
import pytest

import jitkern
from jitkern.runtime import driver
from jitkern.runtime.fakedriver import FakeDriver
from jitkern.toolchain import nvrtc

SOURCE = r"""
extern "C" __global__ void scale_k(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * x[i];
}
"""
LAYOUT = [(0, 8), (8, 4), (12, 4)]  # float*, float, int


class ParamDriver(FakeDriver):
    """The fake driver answering the parameter queries a PTX or fatbin kernel needs (a CUBIN's
    layout is read from the file itself) and remembering each loaded image."""

    def cuFuncGetParamCount(self, handle):  # noqa: N802 - the driver's name
        return (0, len(LAYOUT))

    def cuFuncGetParamInfo(self, handle, index):  # noqa: N802
        return (0, *LAYOUT[index])


def unique_source() -> str:
    return SOURCE + f"// {uuid.uuid4()}\n"  # a fresh binary: no module loaded before


def write(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def packed(launch) -> tuple:
    """(pointer, float, int) as the launch packed them."""
    ptr = int.from_bytes(launch.raw(0, 8), "little")
    (a,) = struct.unpack("<f", launch.raw(1, 4))
    (n,) = struct.unpack("<i", launch.raw(2, 4))
    return ptr, a, n


@pytest.mark.parametrize("fmt, arch", [("ptx", "sm_80"), ("ptx", "sm_90"), ("cubin", "sm_90"),
                                       ("cubin", "sm_80")])
def test_a_file_loads_as_it_is_and_its_kernel_launches(tmp_path, rng, fmt, arch):
    data = nvrtc.compile_source(unique_source(), arch=arch, fmt=fmt).data
    path = write(tmp_path, f"scale.{fmt}", data)
    n, a = int(rng.integers(1, 1000)), float(np.float32(rng.standard_normal()))
    cc = (8, 6) if arch == "sm_80" else (9, 0)  # sm_80 code on an 8.6 GPU: same major, newer
    with driver.use(ParamDriver(cc=cc)) as fake:
        mod = jitkern.RawModule(path=str(path))
        k = mod.get_function("scale_k")
        x = jitkern.empty(n, np.float32)
        k((-(-n // 128),), (128,), (x, a, n))
        (device, image), = fake.loads
        assert image.rstrip(b"\0") == data.rstrip(b"\0")  # the file itself, not rebuilt
        assert packed(fake.launches[-1]) == (x.data.ptr, a, n)
        assert k.file_path == str(path) and mod.file_path == str(path)


def test_a_fatbin_loads_and_launches(tmp_path, rng):
    k = jitkern.RawKernel(unique_source(), "scale_k")
    k.export(tmp_path / "scale", arch=("sm_80", "sm_90"), format="fatbin")
    fatbin = next(tmp_path.glob("scale*.fatbin"))
    n = int(rng.integers(1, 1000))
    with driver.use(ParamDriver(cc=(8, 0))) as fake:
        mod = jitkern.RawModule(path=str(fatbin))
        x = jitkern.empty(n, np.float32)
        mod.get_function("scale_k")((1,), (32,), (x, 2.0, n))
        assert fake.loads[0][1] == fatbin.read_bytes()
        assert packed(fake.launches[-1]) == (x.data.ptr, 2.0, n)


@pytest.mark.parametrize("fmt, arch, cc, rule", [
    ("cubin", "sm_90", (8, 0), "a CUBIN runs only on GPUs of its major version"),
    ("cubin", "sm_80", (9, 0), "a CUBIN runs only on GPUs of its major version"),
    ("cubin", "sm_86", (8, 0), "a CUBIN runs only on GPUs of its major version"),
    ("ptx", "sm_90", (8, 9), "PTX runs on its target GPU and newer ones"),
    ("ptx", "sm_90a", (10, 0), "code for sm_90a runs only on that GPU"),
])
def test_a_file_the_device_cannot_run_is_refused_before_loading(tmp_path, fmt, arch, cc, rule):
    data = nvrtc.compile_source(unique_source(), arch=arch, fmt=fmt).data
    path = write(tmp_path, f"scale.{fmt}", data)
    with driver.use(ParamDriver(cc=cc)) as fake:
        mod = jitkern.RawModule(path=str(path))
        with pytest.raises(jitkern.LaunchError) as info:
            mod.get_function("scale_k")
        assert fake.loads == [] and fake.launches == []
    message = str(info.value)
    assert isinstance(info.value, ValueError)
    assert f"path={str(path)!r} holds" in message and f"for {arch}" in message
    assert f"device 0 (compute capability {cc[0]}.{cc[1]}) cannot run" in message
    assert rule in message


class OldDriver(ParamDriver):
    """A driver that refuses every PTX as of a newer ISA than it knows."""

    def cuModuleLoadData(self, data):  # noqa: N802
        if bytes(data).lstrip().startswith(b"//") or b".version" in bytes(data)[:4096]:
            return (222, None)  # CUDA_ERROR_UNSUPPORTED_PTX_VERSION
        return super().cuModuleLoadData(data)


def test_ptx_newer_than_the_driver_is_explained(tmp_path):
    data = nvrtc.compile_source(unique_source(), arch="sm_80", fmt="ptx").data
    old_isa = data.replace(b".version ", b".version 8.7 //", 1)  # as CUDA 12.8 writes it
    path = write(tmp_path, "scale.ptx", old_isa)
    with driver.use(OldDriver(cc=(9, 0), version=12040)):
        mod = jitkern.RawModule(path=str(path))
        with pytest.raises(jitkern.LaunchError) as info:
            mod.get_function("scale_k")
    message = str(info.value)
    assert f"path={str(path)!r}: the driver could not load this ptx file" in message
    assert "PTX ISA 8.7, which needs a CUDA 12.8 driver or newer" in message
    assert "the driver is CUDA 12.4" in message

