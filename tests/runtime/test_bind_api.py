"""Bound launches without a GPU: the kernel is compiled for sm_90, the device state and
the driver's cuLaunchKernel are stand-ins that record what would be launched."""

import ctypes
import struct

import numpy as np
import pytest

import jitkern
from jitkern import jit
from jitkern.runtime import driver, module
from jitkern.runtime.fakedriver import FakeDriver
from jitkern.toolchain.nvrtc import compile_source
from jitkern.runtime.device import Stream
from jitkern.errors import JitkernIndexError, KernelArgumentError
from jitkern.compiler.strings import c_params as _signature

SOURCE = r"""
extern "C" __global__ void axpy(const float* x, float* y, double a, long long n, float b) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i] + b;
}
"""
LAYOUT = "<QQdqf"  # the parameter buffer: two pointers, double, long long, float


class FakeArray:
    """Anything with __cuda_array_interface__ passes as a device pointer."""

    def __init__(self, ptr):
        self.ptr = ptr

    @property
    def __cuda_array_interface__(self):
        return {"data": (self.ptr, False), "shape": (4,), "typestr": "<f4", "version": 3}


@pytest.fixture(scope="module")
def binary():
    return compile_source(SOURCE, arch="sm_90", program_name="axpy.cu")


@pytest.fixture
def launches():
    """Replace the driver seen by bound launches; record (dims, stream, buffer bytes)."""
    calls = []

    def launch(h, gx, gy, gz, bx, by, bz, shm, s, params, extra):
        ptrs = ctypes.cast(params, ctypes.POINTER(ctypes.c_void_p))
        raw = b"".join(ctypes.string_at(ptrs[i], n) for i, n in enumerate((8, 8, 8, 8, 4)))
        calls.append(((gx, gy, gz), (bx, by, bz), shm, s, struct.unpack("<QQdqf", raw)))
        return (0,)

    fake = FakeDriver()
    fake.cuLaunchKernel = launch
    with driver.use(fake):
        yield calls


@pytest.fixture
def fn(binary):
    f = module.Function(binary, "axpy", params=_signature.kernel_params(SOURCE, "axpy"))
    return f


def bound(fn, rng, **kw):
    args = (FakeArray(0x1000), FakeArray(0x2000), float(rng.standard_normal()),
            int(rng.integers(1, 1 << 40)), 1.5)
    return fn.bind((3, 2), 128, args, **kw), args


def test_bind_packs_once_and_launches_the_packed_buffer(fn, launches, rng):
    b, args = bound(fn, rng, shared_mem=64)
    b()
    b()
    want = (0x1000, 0x2000, args[2], args[3], 1.5)
    assert launches == [((3, 2, 1), (128, 1, 1), 64, 0, want)] * 2
    assert list(b.args) == list(args) and len(b.args) == 5


def test_set_arg_repacks_only_its_slot(fn, launches, rng):
    b, args = bound(fn, rng)
    a = float(rng.standard_normal())
    b.set_arg(2, a)
    b.args[-2] = 7  # a negative index counts from the end
    b.args[1] = FakeArray(0x9000)
    b.set_arg(4, np.float32(-2.25))  # a 4-byte float parameter takes float32 ...
    b.set_arg(4, 0.5)  # ... or a Python float (converted)
    b()
    assert launches[-1][4] == (args[0].ptr, 0x9000, a, 7, 0.5)  # slot 0 untouched
    assert b.args[2] == a and b.args[1].ptr == 0x9000


def test_the_stream_follows_the_current_one_unless_given(fn, launches, rng):
    b, _ = bound(fn, rng)
    fixed, _ = bound(fn, rng, stream=Stream(_handle=0x55))
    with Stream(_handle=0x77):
        b()
        fixed()
    b()
    assert [c[3] for c in launches] == [0x77, 0x55, 0]


@pytest.mark.parametrize("index,value,words", [
    (2, 3, r"argument 2 \(a\) of axpy: the bound launch has a float64 scalar there, got Python int"),
    (3, 1.5, r"argument 3 \(n\).*an int64 scalar there, got Python float"),
    (3, np.int32(4), r"argument 3 \(n\).*int64 scalar there, got numpy.int32"),
    (0, 5, r"argument 0 \(x\).*a device pointer \(an array\) there, got Python int"),
    (2, FakeArray(1), r"argument 2 \(a\).*float64 scalar there, got .*FakeArray"),
    (3, 2**70, r"argument 3 \(n\) of axpy: 1180591620717411303424 does not fit"),
    (1, np.zeros(3), r"argument 1 \(y\) of axpy: .*numpy.ndarray lives in host memory"),
])
def test_set_arg_checks_the_slot_type_and_names_the_argument(fn, launches, rng, index, value,
                                                             words):
    b, args = bound(fn, rng)
    with pytest.raises(KernelArgumentError, match=words):
        b.set_arg(index, value)
    b()
    assert launches[-1][4] == (0x1000, 0x2000, args[2], args[3], 1.5)  # unchanged


@pytest.mark.parametrize("index", [5, -6, "1", 1.0])
def test_set_arg_index_out_of_range(fn, launches, rng, index):
    b, _ = bound(fn, rng)
    with pytest.raises(JitkernIndexError, match=f"index {index!r} is out of range; axpy takes 5"):
        b.set_arg(index, 1.0)


def test_bind_checks_count_and_kinds_with_parameter_names(fn, launches):
    with pytest.raises(KernelArgumentError, match=r"axpy takes 5 argument\(s\) \(const float\* x"):
        fn.bind(1, 32, (FakeArray(1), FakeArray(2), 1.0))
    with pytest.raises(KernelArgumentError, match=r"argument 1 \(y\): the kernel expects a pointer"):
        fn.bind(1, 32, (FakeArray(1), 2.0, 1.0, 4, 1.5))
    with pytest.raises(KernelArgumentError, match="shared_mem: expected a non-negative int"):
        fn.bind(1, 32, (FakeArray(1), FakeArray(2), 1.0, 4, 1.5), shared_mem=-1)
    with pytest.raises(KernelArgumentError, match="block: every dimension must be at least 1"):
        fn.bind(1, 0, (FakeArray(1), FakeArray(2), 1.0, 4, 1.5))


def test_rawkernel_bind_names_the_parameters_without_a_gpu():
    k = jitkern.RawKernel(SOURCE, "axpy")
    with pytest.raises(KernelArgumentError, match=r"axpy takes 5 argument\(s\).*but 2 were given"):
        k.bind(1, 32, FakeArray(1), FakeArray(2))
    with pytest.raises(KernelArgumentError, match=r"argument 2 \(a\): the kernel expects a scalar"):
        k.bind(1, 32, FakeArray(1), FakeArray(2), FakeArray(3), 4, 1.5)


def test_a_bound_launch_is_not_picklable(fn, launches, rng):
    import pickle

    b, _ = bound(fn, rng)
    with pytest.raises(TypeError, match="bind the kernel again"):
        pickle.dumps(b)


class FakeMatrix:
    """A 2-D float64 device array stand-in (CUDA array interface v3, C order)."""

    def __init__(self, ptr, shape, dtype="<f8"):
        self.ptr, self.shape, self.typestr = ptr, shape, dtype

    @property
    def __cuda_array_interface__(self):
        return {"data": (self.ptr, False), "shape": self.shape, "typestr": self.typestr,
                "strides": None, "version": 3}


@jitkern.rawkernel()
def row_sums(m, out):
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    if i < m.shape[0]:
        acc = m[i, 0]
        for j in range(1, m.shape[1]):
            acc += m[i, j]
        out[i] = acc


def _fake_sm90_device(monkeypatch):
    """The current device, as the runtime's driver module reports it: an sm_90 (13.0 driver)."""
    from jitkern.runtime import driver

    monkeypatch.setattr(driver, "current_device_id", lambda: 0)
    monkeypatch.setattr(driver, "compute_capability", lambda device_id: (9, 0))
    monkeypatch.setattr(driver, "driver_version", lambda: 13000)


@pytest.fixture
def jit_launches(monkeypatch):
    """JIT kernels compiled for sm_90 and launched into a recorder: (pointers, extras)."""
    from jitkern.runtime import driver as _drv_module

    monkeypatch.setattr(_drv_module, "current_device_id", lambda: 0)  # an sm_90 device
    monkeypatch.setattr(_drv_module, "compute_capability", lambda device_id: (9, 0))
    monkeypatch.setattr(_drv_module, "driver_version", lambda: 13000)
    calls = []

    def launch(h, gx, gy, gz, bx, by, bz, shm, s, params, extra):
        ptrs = ctypes.cast(params, ctypes.POINTER(ctypes.c_void_p))
        calls.append(tuple(ctypes.c_int64.from_address(ptrs[i]).value for i in range(6)))
        return (0,)

    fake = FakeDriver()
    fake.cuLaunchKernel = launch
    row_sums._entries.clear()
    with driver.use(fake):
        yield calls


def test_jit_bind_repacks_the_derived_shape_and_strides(jit_launches):
    b = row_sums.bind(3, 128, FakeMatrix(0x1000, (300, 7)), FakeArray(0x2000))
    b()
    # m's pointer, out's pointer, then m's shape and byte strides (derived parameters)
    assert jit_launches[-1] == (0x1000, 0x2000, 300, 7, 56, 8)
    b.set_arg(0, FakeMatrix(0x3000, (200, 11)))
    b()
    assert jit_launches[-1] == (0x3000, 0x2000, 200, 11, 88, 8)
    assert len(b.args) == 2 and b.args[0].ptr == 0x3000


def test_jit_bind_refuses_another_specialisation(jit_launches):
    b = row_sums.bind(3, 128, FakeMatrix(0x1000, (300, 7)), FakeArray(0x2000))
    with pytest.raises(KernelArgumentError,
                       match=r"argument 0 of row_sums: the bound launch is specialised for "
                             r".*float64.*got .*float32"):
        b.set_arg(0, FakeMatrix(0x3000, (300, 7), "<f4"))
    b()
    assert jit_launches[-1] == (0x1000, 0x2000, 300, 7, 56, 8)


class TypedArray(FakeArray):
    """A device array of a given element type (the fake's pointers are never read)."""

    def __init__(self, ptr, typestr):
        super().__init__(ptr)
        self.typestr = typestr

    @property
    def __cuda_array_interface__(self):
        return {"data": (self.ptr, False), "shape": (4,), "typestr": self.typestr, "version": 3}


def test_set_arg_checks_a_pointers_element_type_as_the_bind_did(launches, rng):
    k = jitkern.RawKernel(SOURCE, "axpy")
    x, y = TypedArray(0x1000, "<f4"), TypedArray(0x2000, "<f4")
    b = k.bind(1, 32, x, y, 2.0, int(rng.integers(1, 100)), 1.5)
    fresh = TypedArray(int(rng.integers(1, 1 << 30)) * 256, "<f4")
    b.set_arg(0, fresh)
    b()
    assert launches[-1][4][0] == fresh.ptr
    for typestr, name in (("<f8", "float64"), ("<i4", "int32")):
        with pytest.raises(KernelArgumentError,
                           match=rf"set_arg: axpy: argument 0 \(x\): .*const float\*.*{name}"):
            b.set_arg(0, TypedArray(0x3000, typestr))
        with pytest.raises(KernelArgumentError, match=rf"argument 0 \(x\).*{name}"):
            k.bind(1, 32, TypedArray(0x3000, typestr), y, 2.0, 3, 1.5)  # what bind says
    b()  # the refused ones left the bound argument as it was
    assert launches[-1][4][0] == fresh.ptr
    loose = jitkern.RawKernel(SOURCE, "axpy", check_args=False)
    unchecked = loose.bind(1, 32, x, y, 2.0, 3, 1.5)
    wide = TypedArray(0x4000, "<f8")
    unchecked.set_arg(0, wide)  # check_args=False passes what it is given
    unchecked()
    assert launches[-1][4][0] == wide.ptr
