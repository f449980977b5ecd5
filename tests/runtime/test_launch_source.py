"""The generated launchers through the fake-driver seam (driver.use): their source can be
read (codegen.launch_source), and k[grid, block](...) runs the same generated launch as
k(grid, block, args), packing the same values."""

import numpy as np
import pytest

from jitkern import KernelArgumentError, jit
from jitkern.errors import JitTypeError
from jitkern.runtime import codegen, driver
from jitkern.runtime.fakedriver import FakeDriver


class DeviceArray:
    """A 1-D float32 device array as far as a launch reads it (the pointer is never used)."""

    def __init__(self, rng, n=64):
        self.ptr, self.n = int(rng.integers(1, 2**30)) * 256, n

    @property
    def __cuda_array_interface__(self):
        return {"data": (self.ptr, False), "shape": (self.n,), "typestr": "<f4",
                "strides": None, "version": 3}


@jit.rawkernel()
def scale_into(x, out, a):
    i = jit.threadIdx.x
    out[i] = x[i] * a


@pytest.fixture
def fake():
    d = FakeDriver(cc=(9, 0))
    scale_into._entries.clear()
    with driver.use(d):
        yield d
    scale_into._entries.clear()
    scale_into._set_call(scale_into._launch)


def _words(launch):
    return launch.words(2) + [np.frombuffer(launch.raw(2, 4), np.float32)[0]]


def test_the_launch_source_is_the_generated_launcher(fake, rng):
    x, out = DeviceArray(rng), DeviceArray(rng)
    a = np.float32(rng.standard_normal())
    assert codegen.launch_source(scale_into) is None  # the general path: nothing generated
    for _ in range(3):
        scale_into((1,), (32,), (x, out, a))
    source = codegen.launch_source(scale_into)
    assert source.startswith("def run(grid, block, args") and "def star(config" in source
    assert "_launch(_h, gx, gy, gz, bx, by, bz, shared_mem, s, _params, 0)" in source
    assert codegen.launch_source(scale_into[1, 32]) == source  # the subscript form's launcher
    bound = scale_into.bind(1, 32, x, out, a)
    assert "def run(*, _launch=_launch" in codegen.launch_source(bound)


def test_subscript_and_call_forms_pack_the_same_launch(fake, rng):
    x, out = DeviceArray(rng), DeviceArray(rng)
    for _ in range(3):
        scale_into[2, 32](x, out, np.float32(1))
    generated = scale_into.func
    assert scale_into[2, 32].__func__ is generated.star  # straight to the generated launch
    a = np.float32(rng.standard_normal())
    scale_into[2, 32](x, out, a)
    by_subscript = fake.launches[-1]
    scale_into((2,), (32,), (x, out, a))
    by_call = fake.launches[-1]
    assert scale_into.func is generated  # neither form left the generated launcher
    assert _words(by_subscript) == _words(by_call) == [x.ptr, out.ptr, a]
    assert by_subscript.grid == by_call.grid == (2, 1, 1)
    assert by_subscript.block == by_call.block == (32, 1, 1)


def test_subscript_keywords_and_errors_on_the_generated_launcher(fake, rng):
    x, out = DeviceArray(rng), DeviceArray(rng)
    for _ in range(3):
        scale_into[1, 32](x, out, np.float32(1))
    a = np.float32(rng.standard_normal())
    scale_into[1, 32](x, out, a, shared_mem=256)
    assert fake.launches[-1].shared_mem == 256 and _words(fake.launches[-1])[2] == a
    with pytest.raises(KernelArgumentError, match=r"shared_mem is given both in the brackets"):
        scale_into[1, 32, 128](x, out, a, shared_mem=256)
    with pytest.raises(KernelArgumentError, match=r"only shared_mem= and stream= as keywords"):
        scale_into[1, 32](x, out, a, blocks=2)
    n = len(fake.launches)
    with pytest.raises(JitTypeError, match=r"scale_into\(\) takes 3 arguments \(x, out, a\), got 2"):
        scale_into[1, 32](x, out)  # one argument short: the general path explains
    assert len(fake.launches) == n


def test_the_seam_restores_the_driver_state():
    before = (driver.is_available(), driver.drv() if driver.is_available() else None)
    fake = FakeDriver(devices=3)
    with driver.use(fake):
        assert driver.drv() is fake and driver.device_count() == 3
        assert driver.current_device_id() == 0  # made device 0 current, as the driver does
        assert fake.current == fake.context(0)
    assert (driver.is_available(), driver.drv() if driver.is_available() else None) == before
