"""Interop without a GPU: dtype tables, CAI dicts and DLPack capsules of arrays built
around a fake device pointer, describe() dispatch and its errors."""

import ctypes
import gc

import numpy as np
import pytest

from jitkern import dtypes
from jitkern.arrays import _dlpack, core, interop
from jitkern.runtime import driver, libraries
from jitkern.runtime.device import Stream
from jitkern.runtime.fakedriver import FakeDriver

FAKE_PTR = 0x7F00_0000_0000


class FakeMemory:
    """Stands in for a MemoryPointer: nothing is freed."""

    ptr = FAKE_PTR
    device_id = 3
    stream = 0


def fake_array(shape=(3, 4), dtype="float32", stream=0):
    dt = np.dtype(dtype)
    strides = tuple(s for s in np.empty(shape, dt).strides)
    size = int(np.prod(shape))
    st = Stream.null if stream == 0 else Stream(_handle=stream)
    return core.make(tuple(shape), strides, dt, FAKE_PTR, FakeMemory(), None, 3, st, size)


# -- dtypes -------------------------------------------------------------------------


@pytest.mark.parametrize("name,code,ctype", [
    ("bool", 6, "bool"), ("int8", 0, "signed char"), ("int64", 0, "long long"),
    ("uint16", 1, "unsigned short"), ("float16", 2, "__half"), ("float64", 2, "double"),
    ("complex64", 5, "jk_complex64"), ("complex128", 5, "jk_complex128"),
])
def test_dtype_table(name, code, ctype):
    dt = np.dtype(name)
    assert dtypes.to_dlpack(dt) == (code, dt.itemsize * 8)
    assert dtypes.from_dlpack(code, dt.itemsize * 8) == dt
    assert dtypes.ctype(dt) == ctype
    assert dtypes.from_typestr(dt.str) == dt


@pytest.mark.parametrize("spelling", [np.float32, "float32", "f4", "<f4", np.dtype("float32")])
def test_normalize_spellings(spelling):
    assert dtypes.normalize(spelling) == np.dtype(np.float32)


def test_normalize_defaults_and_errors():
    assert dtypes.normalize(None) == np.float64
    assert dtypes.normalize(float) == np.float64
    assert dtypes.normalize(int) == np.int64
    assert dtypes.normalize(complex) == np.complex128
    with pytest.raises(TypeError, match="do not support dtype"):
        dtypes.normalize("U3")
    with pytest.raises(TypeError, match="non-native byte order"):
        dtypes.normalize(">f4")
    with pytest.raises(TypeError, match="not a data type"):
        dtypes.normalize("nonsense")
    with pytest.raises(TypeError, match="DLPack dtype float8 is not supported"):
        dtypes.from_dlpack(2, 8)
    with pytest.raises(TypeError, match="int32x4"):
        dtypes.from_dlpack(0, 32, 4)


def test_bfloat16_optional():
    if dtypes.BFLOAT16 is None:
        with pytest.raises(TypeError, match="ml_dtypes"):
            dtypes.from_dlpack(4, 16)
    else:
        assert dtypes.from_dlpack(4, 16) == dtypes.BFLOAT16
        assert dtypes.ctype(dtypes.BFLOAT16) == "__nv_bfloat16"


# -- fake arrays: attributes, views, CAI ----------------------------------------------


def test_attributes_of_fake_array():
    a = fake_array((3, 4), "int16")
    assert (a.shape, a.strides, a.size, a.ndim, a.itemsize, a.nbytes) == ((3, 4), (8, 2), 12, 2, 2, 24)
    assert a.data.ptr == FAKE_PTR and a.ptr == FAKE_PTR and a.flags.c_contiguous
    assert a.flags["C_CONTIGUOUS"] and not a.flags["F"] and a.flags.owndata
    assert len(a) == 3
    t = a.T
    assert t.shape == (4, 3) and t.strides == (2, 8) and t.flags.f_contiguous and t.base is a


def test_views_of_fake_array():
    a = fake_array((6, 5), "float64")
    v = a[::-2, 1:4]
    assert v.shape == (3, 3) and v.strides == (-80, 8)
    assert v.ptr == FAKE_PTR + 5 * 40 + 8 and v.base is a and v.data.mem is a.data.mem
    assert v[1].base is a  # views of views point at the owner
    assert a.reshape(3, 10).strides == (80, 8) and a.reshape(-1).shape == (30,)
    assert a[None, ..., None].shape == (1, 6, 5, 1)
    assert a[2].ravel().ptr == FAKE_PTR + 80
    s = a[:, :1].squeeze()
    assert s.shape == (6,) and s.strides == (40,)
    with pytest.raises(ValueError, match="cannot reshape"):
        a.reshape(4, 4)
    with pytest.raises(IndexError, match="basic indexing"):
        a[[0, 1]]
    c = fake_array((4,), "complex64")
    assert c.real.dtype == np.float32 and c.real.strides == (8,)
    assert c.imag.ptr == FAKE_PTR + 4


def test_cai_of_fake_array():
    a = fake_array((3, 4), "float32", stream=0)
    cai = a.__cuda_array_interface__
    assert cai == {"shape": (3, 4), "typestr": "<f4", "descr": [("", "<f4")],
                   "data": (FAKE_PTR, False), "strides": None, "version": 3, "stream": 1}
    v = a[:, ::-1]
    cai = v.__cuda_array_interface__
    assert cai["strides"] == (16, -4) and cai["data"] == (FAKE_PTR + 12, False)
    assert fake_array((2,), "bool", stream=0xABC).__cuda_array_interface__["stream"] == 0xABC
    assert fake_array((0,), "uint8").__cuda_array_interface__["data"] == (0, False)


def test_parse_cai_round_trip():
    fake = FakeDriver(devices=4)
    fake.pointer_device = lambda ptr: 3
    with driver.use(fake):
        _parse_cai_round_trip()


def _parse_cai_round_trip():
    a = fake_array((5, 2), "complex128")[::-1]
    info = interop.parse_cai(a.__cuda_array_interface__, a)
    assert info == interop.ArrayInfo(a.ptr, (5, 2), (-32, 16), np.dtype("complex128"), 3,
                                     False, a, 1)
    cai = {"shape": (2, 3), "typestr": "<i2", "data": (FAKE_PTR, True), "version": 2}
    info = interop.parse_cai(cai, None)
    assert info.strides == (6, 2) and info.readonly and info.stream is None
    with pytest.raises(ValueError, match="stream 0"):
        interop.parse_cai(dict(cai, stream=0), None)
    with pytest.raises(TypeError, match="mask"):
        interop.parse_cai(dict(cai, mask=object()), None)


# -- DLPack ------------------------------------------------------------------------------


@pytest.mark.parametrize("versioned", [False, True])
def test_dlpack_capsule_contents(versioned):
    a = fake_array((6, 5), "float16")[1::2, ::-1]
    before = _dlpack.live_count()
    capsule = a.__dlpack__(stream=-1, max_version=(1, 0) if versioned else None)
    assert _dlpack.live_count() == before + 1
    name = _dlpack.NAME_V if versioned else _dlpack.NAME
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    address = get(capsule, name)
    struct = (_dlpack.DLManagedTensorVersioned if versioned else _dlpack.DLManagedTensor)
    managed = struct.from_address(address)
    t = managed.dl_tensor
    assert t.data == a.ptr and t.byte_offset == 0
    assert (t.device.device_type, t.device.device_id) == (2, 3)
    assert (t.ndim, t.dtype.code, t.dtype.bits, t.dtype.lanes) == (2, 2, 16, 1)
    assert [t.shape[i] for i in range(2)] == [3, 5]
    assert [t.strides[i] for i in range(2)] == [10, -1]  # elements, not bytes
    if versioned:
        assert (managed.version.major, managed.version.minor) == (1, 0) and managed.flags == 0
    del capsule, managed, t
    gc.collect()
    assert _dlpack.live_count() == before  # an unconsumed capsule frees its tensor


def test_dlpack_consumed_capsule_keeps_array_alive():
    a = fake_array((4,), "int32")
    before = _dlpack.live_count()
    capsule = a.__dlpack__(stream=-1, max_version=(1, 0))
    info = interop.info_from_capsule(capsule)
    assert (info.ptr, info.shape, info.strides, info.dtype, info.device_id) == (
        FAKE_PTR, (4,), (4,), np.dtype("int32"), 3)
    del capsule
    gc.collect()
    assert _dlpack.live_count() == before + 1  # the consumer still holds it
    del info
    gc.collect()
    assert _dlpack.live_count() == before


def test_dlpack_reader_on_numpy_capsules():
    h = np.arange(24, dtype=np.int16).reshape(4, 6)[::-1, 1::2]
    imp = _dlpack.read_capsule(h.__dlpack__())
    assert imp.ptr == h.ctypes.data and imp.shape == (4, 3) and imp.strides == (-6, 2)
    assert imp.device_type == _dlpack.KDL_CPU and (imp.code, imp.bits) == (0, 16)
    with pytest.raises(TypeError, match="not on a CUDA GPU"):
        interop.info_from_capsule(h.__dlpack__())


def test_numpy_consumes_our_capsules():
    """The exported struct read by a real consumer: NumPy, given a CPU device type."""
    host = np.arange(20, dtype=np.float32).reshape(4, 5)
    view = host[::-1, ::2]

    class CpuProducer:
        def __dlpack_device__(self):
            return (_dlpack.KDL_CPU, 0)

        def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
            return _dlpack.make_capsule(view.ctypes.data, view.shape, [s // 4 for s in view.strides],
                                        2, 32, _dlpack.KDL_CPU, 0, view,
                                        versioned=max_version is not None)

    before = _dlpack.live_count()
    got = np.from_dlpack(CpuProducer())
    np.testing.assert_array_equal(got, view)
    del got
    gc.collect()
    assert _dlpack.live_count() == before


def test_dlpack_errors():
    a = fake_array((2,), "float32")
    with pytest.raises(ValueError, match="stream=0"):
        a.__dlpack__(stream=0)
    with pytest.raises(BufferError, match="DLPack device"):
        a.__dlpack__(dl_device=(2, 7))
    with pytest.raises(BufferError, match="copy=False"):
        a.__dlpack__(dl_device=(1, 0), copy=False)
    assert a.__dlpack_device__() == (2, 3)


# -- describe ------------------------------------------------------------------------------


def test_describe_fake_array_and_pointer():
    a = fake_array((2, 3), "uint8")[:, 1:]
    info = interop.describe(a)
    assert info == (a.ptr, (2, 2), (3, 1), np.dtype("uint8"), 3, False, a, None)
    assert interop.pointer_of(a) == a.ptr


def test_describe_refuses_host_memory():
    with pytest.raises(TypeError, match=r"host memory.*jitkern\.asarray"):
        interop.describe(np.zeros(3))
    with pytest.raises(TypeError, match="jitkern.asarray"):
        interop.describe(np.float32(1))
    with pytest.raises(TypeError, match="jitkern.asarray"):
        interop.describe([1, 2, 3])

    class HostDLPack:
        def __dlpack__(self, **kw):
            return np.zeros(2).__dlpack__()

        def __dlpack_device__(self):
            return (1, 0)

    with pytest.raises(TypeError, match="jitkern.asarray"):
        interop.describe(HostDLPack())


def test_describe_generic_dlpack_producer():
    a = fake_array((3,), "complex64")

    class Producer:  # a CUDA DLPack producer with no CAI
        def __dlpack_device__(self):
            return (2, 3)

        def __dlpack__(self, stream=None, max_version=None, **kw):
            assert stream == 1  # the legacy default stream, spelled as the standard asks
            return a.__dlpack__(stream=-1, max_version=max_version)

    info = interop.describe(Producer())
    assert info.ptr == FAKE_PTR and info.dtype == np.complex64 and info.strides == (8,)


def test_extractor_chosen_once_per_type():
    class Cai:
        @property
        def __cuda_array_interface__(self):
            return {"shape": (1,), "typestr": "<f4", "data": (0, False), "version": 3}

    fn = interop.extractor_for(Cai)
    assert interop.extractor_for(Cai) is fn and libraries._extractors[Cai] is fn
    assert fn is libraries.BY_KIND["cai"].describe  # the table's row for CAI classes
