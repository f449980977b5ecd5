"""simulated_device() checks its own arguments, and refuses another library's GPU array
cleanly in every kernel kind (issue 27): the simulator does not model other libraries'
memory (docs/debugging.md), so such an array is a KernelArgumentError naming the kernel
and the argument, never an AttributeError from inside the simulator."""

import numpy as np
import pytest

import jitkern
from jitkern import jit


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        ({"capacity": -1}, jitkern.JitkernValueError,
         "simulated_device(capacity=...): expected an int >= 1, got -1"),
        ({"capacity": 0}, jitkern.JitkernValueError,
         "simulated_device(capacity=...): expected an int >= 1, got 0"),
        ({"capacity": "1"}, jitkern.JitkernTypeError,
         "simulated_device(capacity=...): expected an int >= 1, got str '1'"),
        ({"capacity": 1.5e9}, jitkern.JitkernTypeError, "got float 1500000000.0"),
        ({"devices": 0}, jitkern.JitkernValueError,
         "simulated_device(devices=...): expected an int >= 1, got 0"),
        ({"devices": -2}, jitkern.JitkernValueError, "got -2"),
        ({"devices": "2"}, jitkern.JitkernTypeError,
         "simulated_device(devices=...): expected an int >= 1, got str '2'"),
        ({"devices": True}, jitkern.JitkernTypeError, "got bool True"),
        ({"cc": (9,)}, jitkern.JitkernValueError,
         "simulated_device(cc=...): expected a (major, minor) pair such as (9, 0), got 1 "
         "value(s): (9,)"),
        ({"cc": (9, 0, 1)}, jitkern.JitkernValueError, "got 3 value(s): (9, 0, 1)"),
        ({"cc": "9.0"}, jitkern.JitkernTypeError,
         "simulated_device(cc=...): expected a (major, minor) tuple of ints such as (9, 0), "
         "or a list of one per device, got str '9.0'"),
        ({"cc": 90}, jitkern.JitkernTypeError, "got int 90"),
        ({"cc": (9, "0")}, jitkern.JitkernTypeError,
         "simulated_device(cc=...): major and minor are ints, got str '0' in (9, '0')"),
        ({"cc": (0, 0)}, jitkern.JitkernValueError,
         "expected a major >= 1 and a minor from 0 to 9 (sm_90 is (9, 0)), got (0, 0)"),
        ({"cc": (9, 10)}, jitkern.JitkernValueError, "got (9, 10)"),
        ({"cc": (-1, 0)}, jitkern.JitkernValueError, "got (-1, 0)"),
        ({"devices": 2, "cc": [(9, 0)]}, jitkern.JitkernValueError,
         "simulated_device(cc=...): a list gives one (major, minor) per device: expected 2, "
         "got 1"),
        ({"devices": 2, "cc": [(9, 0), (8,)]}, jitkern.JitkernValueError, "got 1 value(s): (8,)"),
    ],
)
def test_simulated_device_refuses_a_wrong_argument_when_entered(kwargs, error, words):
    with pytest.raises(error) as info:
        with jitkern.simulated_device(**kwargs):
            pytest.fail("the block ran")
    assert words in str(info.value)


def test_valid_arguments_are_what_the_device_reports():
    with jitkern.simulated_device(devices=np.int64(2), cc=[(8, 6), (9, 0)],
                                  capacity=1 << 20) as device:
        assert jitkern.Device(0).compute_capability == "86"
        assert jitkern.Device(1).compute_capability == "90"
        assert device.capacity == 1 << 20 and type(device.capacity) is int
    with jitkern.simulated_device(cc=(8, 0)):
        assert jitkern.Device().compute_capability == "80"


class Foreign:
    """Another library's array: only ``__cuda_array_interface__`` (no get/set)."""

    def __init__(self, ptr: int, n: int):
        self._ptr, self._n = ptr, n

    @property
    def __cuda_array_interface__(self):
        return {"shape": (self._n,), "typestr": "<f4", "data": (self._ptr, False),
                "version": 3, "strides": None}


DOUBLE = jitkern.ElementwiseKernel("float32 x", "float32 y", "y = x * 2", "double_it")
TOTAL = jitkern.ReductionKernel("float32 x", "float32 y", "x", "a + b", "y = a", "0", "total")
ONES = jitkern.RawKernel('extern "C" __global__ void ones(float* y) { y[threadIdx.x] = 1; }',
                         "ones")


@jitkern.rawkernel()
def ones_jit(y):
    y[jit.threadIdx.x] = 1.0


@jitkern.fuse()
def add(a, b):
    return a + b


CALLS = {
    "ElementwiseKernel output": (lambda x, f: DOUBLE(x, f), "double_it: argument 1 (y)"),
    "ElementwiseKernel input": (lambda x, f: DOUBLE(f), "double_it: argument 0 (x)"),
    "ReductionKernel": (lambda x, f: TOTAL(f), "total: argument 0 (x)"),
    "RawKernel": (lambda x, f: ONES((1,), (4,), (f,)), "ones: argument 0 (y)"),
    "rawkernel": (lambda x, f: ones_jit[1, 4](f), "ones_jit: argument 0"),
    "fuse": (lambda x, f: add(x, f), "add: argument 1"),
}


@pytest.mark.parametrize("kind", sorted(CALLS))
def test_another_librarys_array_is_refused_naming_the_kernel_and_argument(kind, rng):
    call, where = CALLS[kind]
    outside = rng.standard_normal(4).astype(np.float32)  # memory no simulated device holds
    before = outside.copy()
    with jitkern.simulated_device():
        x = jitkern.asarray(rng.standard_normal(4).astype(np.float32))
        with pytest.raises(jitkern.KernelArgumentError) as info:
            call(x, Foreign(outside.ctypes.data, 4))
    message = str(info.value)
    assert message.startswith(f"{where}: a {__name__}.Foreign is another library's GPU array")
    assert "does not model other libraries' GPU memory" in message
    np.testing.assert_array_equal(outside, before)


def test_another_librarys_array_is_refused_by_a_simulate_launch_too(rng):
    outside = np.zeros(4, np.float32)
    with pytest.raises(jitkern.KernelArgumentError, match=r"^double_it: argument 1 \(y\): a "):
        DOUBLE.simulate(rng.standard_normal(4).astype(np.float32),
                        Foreign(outside.ctypes.data, 4))


@pytest.mark.parametrize("kind", ["ElementwiseKernel output", "fuse"])
def test_an_interface_over_the_simulated_memory_is_that_memory(kind, rng):
    """A __cuda_array_interface__ view of the device's own memory is read and written in
    place, as on a GPU."""
    x0 = rng.standard_normal(4).astype(np.float32)
    with jitkern.simulated_device():
        x = jitkern.asarray(x0)
        y = jitkern.full(4, np.nan, np.float32)
        if kind == "fuse":
            out = add(x, Foreign(x.ptr, 4))
            np.testing.assert_array_equal(out.get(), 2 * x0)
        else:
            DOUBLE(x, Foreign(y.ptr, 4))
            np.testing.assert_array_equal(y.get(), 2 * x0)
