"""Every kernel kind runs, on each device, the binary built for that device and loaded there
(issue 16): ElementwiseKernel, ReductionKernel and jitkern's array kernels go through the one
per-source cache of Functions (runtime/functions.py), not a dict filled on the first device.

CPU only: the fake driver (runtime/fakedriver.py) stands for two GPUs of different compute
capability and records which device each module is loaded on; NVRTC builds the CUBINs."""

import os

import numpy as np
import pytest

import jitkern
from jitkern.cuda import Device
from jitkern.runtime import driver
from jitkern.runtime.fakedriver import FakeDriver
from jitkern.toolchain import cubin

CCS = [(9, 0), (8, 0)]  # device 0 an H100's, device 1 an A100's


def _factor() -> int:
    return int.from_bytes(os.urandom(2), "little") + 2  # a fresh source: nothing cached


def _elementwise():
    return jitkern.ElementwiseKernel("float32 x", "float32 y", f"y = x * {_factor()}", "scaled")


def _reduction():
    return jitkern.ReductionKernel("float32 x", "float32 y", f"x * {_factor()}", "a + b",
                                   "y = a", "0", "total")


def _loads_by_device(fake, symbol):
    """device -> arch of each module holding ``symbol`` loaded there."""
    out: dict[int, list[int]] = {}
    for device, image in fake.loads:
        if symbol in (cubin.kernel_names(image) or []):
            out.setdefault(device, []).append(cubin.elf_arch(image))
    return out


@pytest.mark.parametrize("make, symbol", [(_elementwise, "scaled"), (_reduction, "total")])
@pytest.mark.parametrize("size", [64, 1 << 20])  # one block, and a reduction split in two
def test_string_kernel_on_device_1_loads_its_own_binary_there(make, symbol, size):
    fake = FakeDriver(devices=2, cc=CCS)
    with driver.use(fake):
        kernel = make()
        for device in (0, 1, 0, 1):  # each device twice: the second call is the fast path
            with Device(device):
                kernel(jitkern.empty(size, np.float32))
    assert _loads_by_device(fake, symbol) == {0: [90], 1: [80]}
    handles = [launch.handle for launch in fake.launches if fake.functions[launch.handle] == symbol]
    assert len(handles) == 4 and handles[0] == handles[2] and handles[1] == handles[3]
    assert handles[0] != handles[1]  # device 1 launched its own module's function


def test_array_copy_kernel_on_device_1_loads_its_own_binary_there():
    fake = FakeDriver(devices=2, cc=CCS)
    dtype = [np.float64, np.int32, np.int16][int.from_bytes(os.urandom(1), "little") % 3]
    with driver.use(fake):
        for device in (0, 1):
            with Device(device):
                jitkern.empty(256, np.float32).astype(dtype)  # a casting copy: jk_copy
    assert _loads_by_device(fake, "jk_copy") == {0: [90], 1: [80]}


def test_devices_of_one_arch_share_one_binary_loaded_on_each():
    fake = FakeDriver(devices=2, cc=(9, 0))
    with driver.use(fake):
        kernel = _elementwise()
        for device in (0, 1):
            with Device(device):
                kernel(jitkern.empty(32, np.float32))
    images = [image for _, image in fake.loads if "scaled" in (cubin.kernel_names(image) or [])]
    assert [device for device, image in fake.loads if image in images] == [0, 1]
    assert images[0] == images[1]  # compiled once, loaded on both


@pytest.mark.gpu
def test_string_and_array_kernels_give_each_devices_own_results(rng):
    if driver.device_count() < 2:
        pytest.skip("needs two GPUs")
    factor = _factor()
    scale = jitkern.ElementwiseKernel("float32 x", "float32 y", f"y = x * {factor}", "scaled")
    total = jitkern.ReductionKernel("float32 x", "float32 y", "x", "a + b", "y = a", "0", "total")
    for device in (0, 1, 0, 1):
        with Device(device):
            host = rng.standard_normal(1 << 16).astype(np.float32)
            x = jitkern.asarray(host)
            y = jitkern.full(host.shape, np.nan, np.float32)  # poisoned
            scale(x, y)
            np.testing.assert_allclose(y.get(), host * np.float32(factor), rtol=1e-6)
            np.testing.assert_allclose(float(total(x).get()), host.astype(np.float64).sum(),
                                       rtol=1e-4, atol=1e-2)
            np.testing.assert_array_equal(x.astype(np.float64).get(), host.astype(np.float64))
