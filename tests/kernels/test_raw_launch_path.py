"""The RawKernel launch path without a GPU: a fake driver records every cuLaunchKernel."""

import numpy as np
import pytest

from jitkern import KernelArgumentError
from jitkern.backend import launch, module
from jitkern.kernels.raw import RawKernel


class FakeArray:
    __slots__ = ("_ptr",)

    def __init__(self, ptr):
        self._ptr = ptr


launch.register_array_type(FakeArray, "{a}._ptr")


@pytest.fixture
def kernel(monkeypatch):
    calls = []

    class FakeDriver:
        @staticmethod
        def cuLaunchKernel(*args):
            calls.append(args)
            return (0,)

        cuLaunchCooperativeKernel = cuLaunchKernel

    monkeypatch.setattr(module, "_drv", FakeDriver)
    monkeypatch.setattr(module, "_multi_device", False)
    k = RawKernel('extern "C" __global__ void f(const float* x, float* y, float a) {}', "f")
    fn = module.Function.__new__(module.Function)
    fn.name, fn.params, fn._check_sizes = "f", k._params, False
    fn.fast, fn._fast_cooperative = None, False
    state = module._DeviceState(handle="H", param_sizes=[8, 8, 4])
    fn._states, fn._last_state, fn._last_device = {0: state}, state, 0
    k._last = fn
    return k, calls


def test_first_launch_takes_the_general_path_then_the_generated_one(kernel):
    k, calls = kernel
    assert k.func == k._launch
    k((2,), (32,), (FakeArray(16), FakeArray(32), np.float32(1.5)))
    assert k.func != k._launch  # the generated launcher
    k((3,), (64,), (FakeArray(48), FakeArray(64), np.float32(2.5)), shared_mem=128)
    assert [c[:9] for c in calls] == [("H", 2, 1, 1, 32, 1, 1, 0, 0), ("H", 3, 1, 1, 64, 1, 1, 128, 0)]


def test_other_types_and_streams_fall_back_and_still_launch(kernel):
    k, calls = kernel
    args = (FakeArray(16), FakeArray(32), np.float32(1.5))
    k(1, 32, args)
    fast = k.func
    k(1, 32, (FakeArray(16), FakeArray(32), 1.5))  # Python float: another signature
    k(1, 32, args, stream=7)  # explicit stream: general path
    assert calls[-1][8] == 7
    assert len(calls) == 3
    k(1, 32, args)
    assert k.func is fast  # the first signature's launcher again, not regenerated


def test_errors_raise_from_the_generated_path(kernel):
    k, calls = kernel
    k(1, 32, (FakeArray(16), FakeArray(32), np.float32(1.5)))
    with pytest.raises(KernelArgumentError, match="takes 3 argument"):
        k(1, 32, (FakeArray(16), FakeArray(32)))
    with pytest.raises(KernelArgumentError, match="pointer"):
        k(1, 32, (1.0, FakeArray(32), np.float32(1)))
    assert len(calls) == 1


def test_kernel_object_behaves_like_an_object(kernel):
    k, _calls = kernel
    assert isinstance(k, RawKernel)
    assert k == k and k != RawKernel(k.code, "f")
    assert {k: 1}[k] == 1
    assert repr(k) == "<jitkern.RawKernel 'f'>"
    import pickle

    # Pickles as its code and options (issue 8; see tests/kernels/test_pickle.py).
    back = pickle.loads(pickle.dumps(k))
    assert isinstance(back, RawKernel) and back is not k
    assert (back.code, back.name, back.options) == (k.code, k.name, k.options)
