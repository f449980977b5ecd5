"""The one launch generator and the one table of array libraries, through the fake-driver
seam: the subscript form checks its config once and refuses bad dims at the call, as the
call form does; arrays whose instances carry ``__cuda_array_interface__`` are read once per
call by ElementwiseKernel's generated launcher."""

import numpy as np
import pytest

import jitkern
from jitkern import KernelArgumentError, LaunchError, jit
from jitkern.runtime import codegen, driver
from jitkern.runtime.fakedriver import FakeDriver


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


class DeviceArray:
    """A 1-D float32 device array as far as a launch reads it (the pointer is never used)."""

    def __init__(self, rng, n=64):
        self.ptr, self.n = _pointer(rng), n

    @property
    def __cuda_array_interface__(self):
        return {"data": (self.ptr, False), "shape": (self.n,), "typestr": "<f4",
                "strides": None, "version": 3}


class Holder:
    """Nothing on the class; the instance carries a __cuda_array_interface__ dict."""

    def __init__(self, ptr=None, n=8):
        if ptr is not None:
            self.__cuda_array_interface__ = {"data": (ptr, False), "shape": (n,),
                                             "typestr": "<f4", "version": 3}


def _pointer(rng):
    return int(rng.integers(1, 2**30)) * 256


def test_a_subscript_config_never_launched_goes_straight_to_the_generated_launch(fake, rng):
    x, out = DeviceArray(rng), DeviceArray(rng)
    for _ in range(3):
        scale_into((1,), (32,), (x, out, np.float32(1)))
    generated = scale_into.func
    grid = int(rng.integers(2, 1000))
    launch = scale_into[grid, (16, 2)]  # dims not seen before: checked here, once
    assert launch.__func__ is generated.star
    a = np.float32(rng.standard_normal())
    launch(x, out, a)
    done = fake.launches[-1]
    assert (done.grid, done.block) == ((grid, 1, 1), (16, 2, 1))
    assert done.words(2) == [x.ptr, out.ptr]
    assert np.frombuffer(done.raw(2, 4), np.float32)[0] == a
    assert scale_into.func is generated  # no general launch on the way


def test_bad_dims_in_the_subscript_are_refused_at_the_call_like_the_call_form(fake, rng):
    x, out = DeviceArray(rng), DeviceArray(rng)
    for _ in range(3):
        scale_into[1, 32](x, out, np.float32(1))
    y = int(rng.integers(33, 65))  # each axis within its limit, 32 * y threads over 1024
    launch = scale_into[1, (32, y)]  # not refused yet: the subscript is not the launch
    n = len(fake.launches)
    with pytest.raises(LaunchError, match=rf"block=\(32, {y}\) has {32 * y:,} threads"):
        launch(x, out, np.float32(1))
    with pytest.raises(LaunchError, match=rf"block=\(32, {y}\) has {32 * y:,} threads"):
        scale_into((1,), (32, y), (x, out, np.float32(1)))
    assert len(fake.launches) == n


def test_instance_level_interfaces_are_read_once_per_call_by_elementwise(fake, rng):
    ek = jitkern.ElementwiseKernel("float32 x, float32 a", "float32 z", "z = x * a",
                                   "one_launch_scale")
    n = int(rng.integers(8, 64))
    x, z = Holder(_pointer(rng), n), Holder(_pointer(rng), n)
    for _ in range(3):
        a = np.float32(rng.standard_normal())
        assert ek(x, a, z) is z
        words = fake.launches[-1].words(3)
        assert x.__cuda_array_interface__["data"][0] in words
        assert z.__cuda_array_interface__["data"][0] in words
    source = codegen.launch_source(ek)
    assert "getattr(a0, '__cuda_array_interface__', None)" in source
    assert "_desc" not in source  # no describe() per call
    with pytest.raises(KernelArgumentError, match=r"Holder"):
        ek(Holder(), np.float32(1), z)  # an instance without the interface: refused by name
