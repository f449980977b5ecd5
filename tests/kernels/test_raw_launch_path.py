"""The RawKernel launch path without a GPU: a fake driver records every cuLaunchKernel."""

import ctypes
import struct

import numpy as np
import pytest

from jitkern import KernelArgumentError
from jitkern.runtime import driver, launch, module
from jitkern.kernels.raw import RawKernel


SIZES = (8, 8, 4)  # const float*, float*, float


def packed(x_ptr, y_ptr, a):
    """The bytes of (const float* x, float* y, float a), written out by hand."""
    return [x_ptr.to_bytes(8, "little"), y_ptr.to_bytes(8, "little"), struct.pack("<f", a)]


class FakeArray:
    __slots__ = ("_ptr",)

    def __init__(self, ptr):
        self._ptr = ptr


launch.register_array_type(FakeArray, "{a}._ptr")


@pytest.fixture
def kernel():
    calls = []

    class FakeDriver:
        @staticmethod
        def cuLaunchKernel(*args):
            # what the kernel would read: each void* of kernelParams, at the call
            params = args[9]
            packed = []
            for i, size in enumerate(SIZES):
                slot = ctypes.c_void_p.from_address(params + 8 * i).value
                packed.append(ctypes.string_at(slot, size))
            calls.append(args + (packed,))
            return (0,)

        cuLaunchCooperativeKernel = cuLaunchKernel

    fn = module.Function.__new__(module.Function)
    fn.name, fn._check_sizes = "f", False
    fn.fast, fn._fast_cooperative = None, False
    state = module._DeviceState("H", None, 0, param_layout=[(0, 8), (8, 8), (16, 4)])
    fn._states, fn._last_state, fn._last_device = {0: state}, state, 0
    fn.owners = set()
    with driver.use(FakeDriver):
        k = RawKernel('extern "C" __global__ void f(const float* x, float* y, float a) {}', "f")
        fn.params = k._params
        k._functions._one_gpu[None] = fn  # what the kernel launches on this one-GPU stand-in
        yield k, calls


def test_first_launch_takes_the_general_path_then_the_generated_one(kernel):
    k, calls = kernel
    assert k.func == k._launch
    k((2,), (32,), (FakeArray(16), FakeArray(32), np.float32(1.5)))
    assert k.func != k._launch  # the generated launcher
    k((3,), (64,), (FakeArray(48), FakeArray(64), np.float32(2.5)), shared_mem=128)
    assert [c[:9] for c in calls] == [("H", 2, 1, 1, 32, 1, 1, 0, 0), ("H", 3, 1, 1, 64, 1, 1, 128, 0)]
    assert calls[0][-1] == packed(16, 32, 1.5)  # the general path's buffer
    assert calls[1][-1] == packed(48, 64, 2.5)  # the generated launcher's buffer


def test_other_types_and_streams_fall_back_and_still_launch(kernel):
    k, calls = kernel
    args = (FakeArray(16), FakeArray(32), np.float32(1.5))
    k(1, 32, args)
    fast = k.func
    k(1, 32, (FakeArray(16), FakeArray(32), 1.5))  # Python float: another signature
    k(1, 32, args, stream=7)  # explicit stream: general path
    assert calls[-1][8] == 7
    assert len(calls) == 3
    assert calls[1][-1] == packed(16, 32, 1.5)  # Python float converted to the float param
    assert calls[2][-1] == packed(16, 32, 1.5)
    k(1, 32, args)
    assert k.func is fast  # the first signature's launcher again, not regenerated


def test_errors_raise_from_the_generated_path(kernel):
    k, calls = kernel
    k(1, 32, (FakeArray(16), FakeArray(32), np.float32(1.5)))
    with pytest.raises(KernelArgumentError, match="takes 3 argument"):
        k(1, 32, (FakeArray(16), FakeArray(32)))
    with pytest.raises(KernelArgumentError,
                       match=r"^f: argument 0 \(x\): the kernel expects a pointer"):
        k(1, 32, (1.0, FakeArray(32), np.float32(1)))
    with pytest.raises(KernelArgumentError,
                       match=r"^f: argument 2 \(a\): a numpy.ndarray lives in host memory"):
        k(1, 32, (FakeArray(16), FakeArray(32), np.zeros(3)))
    with pytest.raises(KernelArgumentError, match=r"^f: argument 1 \(y\): cannot pass a builtins.str"):
        k(1, 32, (FakeArray(16), "y", np.float32(1)))
    assert len(calls) == 1


def test_kernel_object_behaves_like_an_object(kernel):
    k, _calls = kernel
    assert isinstance(k, RawKernel)
    other = RawKernel(k.code, "f")
    assert k != other and len({k, other, k}) == 2  # equal only to itself, hashable
    assert {k: 1}[k] == 1
    assert repr(k) == "<jitkern.RawKernel 'f'>"
    import pickle

    # Pickles as its code and options (issue 8; see tests/kernels/test_pickle.py).
    back = pickle.loads(pickle.dumps(k))
    assert isinstance(back, RawKernel) and back is not k
    assert (back.code, back.name, back.options) == (k.code, k.name, k.options)
