"""RawModule(path=...) refuses a corrupt or truncated CUBIN, honours or refuses inspect(arch=),
and get_function of a name the binary does not hold raises without a GPU, as documented."""

import os
import struct
import uuid

import pytest

import jitkern
from conftest import has_gpu

SOURCE = r"""
extern "C" __global__ void scale_k(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * x[i];
}
"""


def _cubin(tmp_path, arch="sm_90"):
    src = SOURCE + f"// {uuid.uuid4()}\n"
    data = jitkern.RawKernel(src, "scale_k").inspect(arch=arch).cubin
    path = tmp_path / f"scale-{arch}.cubin"
    path.write_bytes(data)
    return path, data


@pytest.mark.parametrize("damage, words", [
    ("half", "truncated"),
    ("last-bytes", "truncated"),
    ("machine", "not CUDA"),
    ("class", "not a 64-bit little-endian ELF"),
    ("header-only", "truncated"),
])
def test_corrupt_or_truncated_cubin_is_refused(tmp_path, damage, words):
    path, data = _cubin(tmp_path)
    if damage == "half":
        data = data[: len(data) // 2]
    elif damage == "last-bytes":
        data = data[: -1 - int.from_bytes(os.urandom(1), "little") % 16]
    elif damage == "machine":
        data = data[:0x12] + struct.pack("<H", 62) + data[0x14:]  # x86-64
    elif damage == "class":
        data = data[:4] + b"\x01" + data[5:]
    else:
        data = data[:64]
    path.write_bytes(data)
    with pytest.raises(jitkern.JitkernValueError, match="not a usable CUBIN") as info:
        jitkern.RawModule(path=str(path))
    assert words in str(info.value) and str(path) in str(info.value)


def test_inspect_of_a_path_module_honours_or_refuses_arch(tmp_path):
    path, data = _cubin(tmp_path, "sm_80")
    mod = jitkern.RawModule(path=str(path))
    assert mod.inspect(arch="sm_80").cubin == data
    with pytest.raises(jitkern.JitkernValueError, match=r"a CUBIN for sm_80.*arch='sm_90'"):
        mod.inspect(arch="sm_90")
    with pytest.raises(jitkern.JitkernValueError, match="cannot be honoured"):
        mod.get_function("scale_k").inspect(arch="compute_80")


@pytest.mark.skipif(has_gpu(), reason="the path without a GPU")
def test_get_function_of_a_missing_kernel_raises_without_a_gpu(tmp_path):
    path, _data = _cubin(tmp_path)
    for mod in (jitkern.RawModule(path=str(path)), jitkern.RawModule(code=SOURCE)):
        with pytest.raises(jitkern.FunctionNotFoundError, match=r"no kernel 'nope'.*'scale_k'"):
            mod.get_function("nope")
        assert mod.get_function("scale_k").name == "scale_k"
