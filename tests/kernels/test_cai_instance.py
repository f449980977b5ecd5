"""``__cuda_array_interface__`` set on an instance rather than defined on its class (as
some libraries and hand-written wrappers do): RawKernel packs it, the array layer reads
it, and a class-level attribute keeps its per-type fast path."""

import ctypes
import struct

import numpy as np
import pytest

import jitkern
from jitkern import KernelArgumentError
from jitkern.arrays import interop
from jitkern.runtime import driver, launch
from jitkern.runtime.fakedriver import FakeDriver


class Holder:
    """Nothing on the class; each instance may get a __cuda_array_interface__ dict."""

    def __init__(self, ptr=None, shape=(8,)):
        if ptr is not None:
            self.__cuda_array_interface__ = {
                "data": (ptr, False),
                "shape": shape,
                "typestr": "<f4",
                "version": 3,
            }


class ClassLevel:
    def __init__(self, ptr):
        self.ptr = ptr

    @property
    def __cuda_array_interface__(self):
        return {"data": (self.ptr, False), "shape": (8,), "typestr": "<f4", "version": 3}


def packed(plan):
    return [
        ctypes.string_at(ptr, slot.size)
        for ptr, slot in zip(plan._pointers[: plan.nargs], plan.slots)
    ]


def test_rawkernel_packs_an_instance_level_interface(rng):
    ptr, ptr2 = (int(rng.integers(1, 2**40)) * 256 for _ in range(2))
    args = (Holder(ptr), np.float32(2.5))
    plan = launch.build_plan(args, None)
    plan.pack(args)
    assert packed(plan) == [struct.pack("<Q", ptr), struct.pack("<f", 2.5)]
    assert plan.slots[0].pointer
    args2 = (Holder(ptr2), np.float32(1.0))  # same plan (per type), the new pointer
    plan.pack(args2)
    assert packed(plan)[0] == struct.pack("<Q", ptr2)


def test_an_instance_without_the_interface_is_refused_by_name():
    plan = launch.build_plan((Holder(4096),), None)
    with pytest.raises(KernelArgumentError, match=r"Holder without __cuda_array_interface__"):
        plan.pack((Holder(),))
    with pytest.raises(KernelArgumentError, match=r"argument 0: cannot pass a .*Holder"):
        launch.build_plan((Holder(),), None)


def test_a_class_level_interface_keeps_its_fast_getter(rng):
    ptr = int(rng.integers(1, 2**40)) * 256
    plan = launch.build_plan((ClassLevel(ptr),), None)
    # the class's own attribute, read once per call: no instance-level lookup helper
    assert launch.array_read(ClassLevel) is launch._CAI_READ
    assert plan.slots[0].bind == "({a}_i := {a}.__cuda_array_interface__)"
    assert not plan.slots[0].env
    plan.pack((ClassLevel(ptr),))
    assert packed(plan) == [struct.pack("<Q", ptr)]


def test_the_array_layer_reads_an_instance_level_interface(rng):
    ptr = int(rng.integers(1, 2**40)) * 256
    with driver.use(FakeDriver()):
        info = interop.describe(Holder(ptr, (4, 2)))
        assert (info.ptr, info.shape, info.strides, info.dtype) == (
            ptr,
            (4, 2),
            (8, 4),
            np.dtype(np.float32),
        )
        # the layout key does not depend on the pointer (one launcher per layout)
        assert interop.layout_key(Holder(ptr, (4, 2))) == interop.layout_key(Holder(ptr + 256, (4, 2)))
        with pytest.raises(TypeError, match="cannot use a .*Holder as a GPU array"):
            interop.describe(Holder())


@pytest.mark.gpu
def test_rawkernel_and_elementwise_with_instance_level_interfaces(rng):
    n = 1000
    host = rng.standard_normal(n).astype(np.float32)
    x = jitkern.asarray(host)
    out = jitkern.full((n,), np.nan, np.float32)
    hx, hout = Holder(), Holder()
    hx.__cuda_array_interface__ = x.__cuda_array_interface__
    hout.__cuda_array_interface__ = out.__cuda_array_interface__
    k = jitkern.RawKernel(
        r"""extern "C" __global__ void twice(const float* x, float* y, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) y[i] = 2.0f * x[i];
        }""",
        "twice",
    )
    for _ in range(2):  # the second call takes the per-type plan
        k(((n + 127) // 128,), (128,), (hx, hout, np.int32(n)))
    np.testing.assert_array_equal(out.get(), 2 * host)
    out.fill(np.nan)
    e = jitkern.ElementwiseKernel("float32 x", "float32 y", "y = x * x + 1.0f", "sq1")
    e(hx, hout)
    np.testing.assert_allclose(out.get(), host * host + 1, rtol=1e-6)
