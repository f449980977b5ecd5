"""JIT kernels launched with protocol-only arrays (``__cuda_array_interface__`` on the
class or on the instance, JAX-like; DLPack-only objects) without a GPU: compiled for sm_90,
launched into a recorder standing for cuLaunchKernel. They must take the general launch
path once, then stay on the generated launcher (which reads each array once per call),
pack the right pointer/shape/strides, and fall back to the right specialisation when the
layout or dtype changes."""

import ctypes
import types

import numpy as np
import pytest

import jitkern
from jitkern import jit
from jitkern.arrays import interop
from jitkern.arrays.interop import ArrayInfo
from jitkern.runtime import driver, libraries
from jitkern.runtime.fakedriver import FakeDriver
from jitkern.errors import KernelArgumentError
from jitkern.kernels import jit as jit_kernel


@jitkern.rawkernel()
def axpy(x, y, out, a, n):
    """A contiguous 1-D signature has no derived parameters: the launcher packs directly."""
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    if i < n:
        out[i] = a * x[i] + y[i]


@jitkern.rawkernel()
def axpy_shape(x, y, out, a, n):
    """x.shape[0] is a derived parameter: the launcher appends it (the extras path)."""
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    if i < x.shape[0] and i < n:
        out[i] = a * x[i] + y[i]


KERNELS = [axpy, axpy_shape]


class ClassCAI:
    """A Numba/JAX-like array: the interface is a property of the class (a new dict per
    read, as JAX builds it)."""

    def __init__(self, ptr, shape, typestr="<f4", strides=None):
        self.ptr, self.shape, self.typestr, self.strides = ptr, shape, typestr, strides

    @property
    def __cuda_array_interface__(self):
        return {"data": (self.ptr, False), "shape": self.shape, "typestr": self.typestr,
                "strides": self.strides, "version": 3}


class InstanceCAI:
    """The interface set on each instance (the class has none)."""

    def __init__(self, ptr, shape, typestr="<f4", strides=None):
        self.__cuda_array_interface__ = {"data": (ptr, False), "shape": shape,
                                         "typestr": typestr, "strides": strides, "version": 3}


class DLPackOnly:
    """Nothing but __dlpack__/__dlpack_device__; its capsule reading is stood in for by an
    extractor that counts its calls (no capsule can be made without a GPU library)."""

    reads = 0

    def __init__(self, ptr, shape, typestr="<f4", strides=None):
        dtype = np.dtype(typestr)
        strides = strides or tuple(int(s) for s in np.empty(shape, dtype).strides)
        self.info = ArrayInfo(ptr, tuple(shape), strides, dtype, 0, False, self)

    def __dlpack__(self, **kwargs):
        raise AssertionError("the stand-in is read through its registered extractor")

    def __dlpack_device__(self):
        return (2, 0)  # kDLCUDA


def _read_dlpack(obj):
    DLPackOnly.reads += 1
    return obj.info


KINDS = [ClassCAI, InstanceCAI, DLPackOnly]


class RecordingDriver(FakeDriver):
    """The fake driver, counting pointer queries (describe() of a CAI asks the driver for
    the pointer's device) and reading each launch's parameters."""

    def __init__(self):
        super().__init__(cc=(9, 0))
        self.queries, self.calls = [], []

    def cuPointerGetAttribute(self, attr, ptr):
        self.queries.append(ptr)
        return super().cuPointerGetAttribute(attr, ptr)

    def cuLaunchKernel(self, h, gx, gy, gz, bx, by, bz, shm, s, params, extra):
        nargs = _function_of(h)._states[0].last_plan.nargs
        ptrs = ctypes.cast(params, ctypes.POINTER(ctypes.c_void_p))
        words = [ctypes.c_int64.from_address(ptrs[i]).value for i in (0, 1, 2)]
        a = ctypes.c_float.from_address(ptrs[3]).value
        rest = [ctypes.c_int64.from_address(ptrs[i]).value for i in range(4, nargs)]
        self.calls.append((h, words, a, rest))
        return (0,)


def _function_of(handle):
    (fn,) = {id(f): f for k in KERNELS for f in k._functions.loaded()
             if f.handle(0) == handle}.values()
    return fn


@pytest.fixture
def launches(monkeypatch):
    """(handle, pointers/values packed) per launch, through the fake driver."""
    monkeypatch.setitem(libraries._extractors, DLPackOnly, _read_dlpack)
    from jitkern.runtime import driver as _drv_module

    monkeypatch.setattr(_drv_module, "current_device_id", lambda: 0)  # an sm_90 device
    monkeypatch.setattr(_drv_module, "compute_capability", lambda device_id: (9, 0))
    monkeypatch.setattr(_drv_module, "driver_version", lambda: 13000)
    fake = RecordingDriver()
    use = driver.use(fake)
    use.__enter__()
    general = []
    real_launch = jit_kernel.JitKernel._launch
    for k in KERNELS:
        def counting(*args, _k=k, **kwargs):
            general.append(_k)
            return real_launch(_k, *args, **kwargs)

        k.clear_memo()
        monkeypatch.setattr(k, "_launch", counting, raising=False)
        k._set_call(k._launch)
    yield types.SimpleNamespace(calls=fake.calls, general=general, queries=fake.queries)
    use.__exit__(None, None, None)
    for k in KERNELS:
        k.clear_memo()
        k._set_call(real_launch.__get__(k))


def _signature_of(kernel, handle):
    """The JIT types of the specialisation whose Function the launch ran."""
    (key,) = [build[0] for (build, _arch), f in kernel._functions._by_binary.items()
              if f.handle(0) == handle]
    return list(kernel._entries[key].signature[:3])


def _pointers(rng, n):
    return [int(p) * 256 for p in rng.choice(2**30, size=n, replace=False) + 1]


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.__name__)
@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_repeated_launches_stay_on_the_generated_launcher(launches, rng, kind, kernel):
    n = int(rng.integers(100, 5000))
    derived = [n] if kernel is axpy_shape else []
    for step in range(8):
        if step == 2:
            before = len(launches.general)
            DLPackOnly.reads = 0
            launches.queries.clear()
        px, py, po = _pointers(rng, 3)
        a = np.float32(rng.standard_normal())
        kernel[3, 128](kind(px, (n,)), kind(py, (n,)), kind(po, (n,)), a, n)
        _h, words, packed_a, rest = launches.calls[-1]
        assert words == [px, py, po] and packed_a == a and rest == [n] + derived
    assert before in (1, 2) and len(launches.general) == before  # then never again
    assert kernel.func is not kernel._launch  # a generated launcher is the kernel's call
    assert launches.queries == []  # no describe() of a CAI once the launcher is made
    if kind is DLPackOnly and kernel is axpy:  # one reading of each array per launch
        assert DLPackOnly.reads == 6 * 3


def _layout(kernel, handle):
    return [(t.dtype.name, t.ndim, t.contiguous) for t in _signature_of(kernel, handle)]


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_a_changed_layout_or_dtype_launches_its_own_specialisation(launches, rng, kind):
    n = int(rng.integers(100, 5000))
    a = np.float32(rng.standard_normal())

    def launch(x_strides=None, typestr="<f4"):
        px, py, po = _pointers(rng, 3)
        axpy[3, 128](kind(px, (n,), typestr, x_strides), kind(py, (n,), typestr),
                     kind(po, (n,), typestr), a, n)
        h, words, packed_a, rest = launches.calls[-1]
        assert words == [px, py, po] and packed_a == a
        return h, rest

    for _ in range(3):
        first, rest = launch()
    assert rest == [n] and _layout(axpy, first) == [("float32", 1, True)] * 3
    general = len(launches.general)
    # x with a stride of two elements: its own specialisation, with x's shape and stride
    # appended after the user's arguments
    strided, rest = launch(x_strides=(8,))
    assert len(launches.general) == general + 1
    assert strided != first and rest == [n, n, 8]
    assert _layout(axpy, strided) == [("float32", 1, False)] + [("float32", 1, True)] * 2
    for _ in range(3):  # the strided signature's guards hold too: on its launcher after one more
        assert launch(x_strides=(8,)) == (strided, [n, n, 8])
    settled = len(launches.general)
    assert settled <= general + 2
    launch(x_strides=(8,))
    assert len(launches.general) == settled
    general = settled
    # float64 arrays: another specialisation
    wide, rest = launch(typestr="<f8")
    assert wide not in (first, strided) and rest == [n]
    assert _layout(axpy, wide) == [("float64", 1, True)] * 3
    # back to the first layout: the first Function again, on the generated launcher after
    # at most one general launch
    for _ in range(3):
        again, rest = launch()
        assert again == first and rest == [n]
    assert len(launches.general) <= general + 3
    tail = len(launches.general)
    launch()
    assert len(launches.general) == tail


def test_an_instance_without_the_interface_is_refused_by_name(launches, rng):
    n = 64
    px, py, po = _pointers(rng, 3)
    for _ in range(3):
        axpy[1, 64](InstanceCAI(px, (n,)), InstanceCAI(py, (n,)), InstanceCAI(po, (n,)),
                    np.float32(1), n)
    bare = InstanceCAI(px, (n,))
    del bare.__cuda_array_interface__
    with pytest.raises(KernelArgumentError, match=r"InstanceCAI without __cuda_array_interface__"):
        axpy[1, 64](bare, InstanceCAI(py, (n,)), InstanceCAI(po, (n,)), np.float32(1), n)
