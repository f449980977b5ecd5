"""DLPack capsules written and read with ctypes (dlpack.h, versions 0.8 and 1.x).

Export: :func:`make_capsule` allocates a ``DLManagedTensor`` (or the versioned
struct) whose deleter drops the reference that keeps the exported array alive.
The capsule's destructor, which frees a capsule no consumer took, is NumPy's
own C destructor for DLPack capsules (found through ``PyCapsule_GetDestructor``);
it saves the pending exception and calls the tensor's deleter, which is what
dlpack.h asks of a producer. Where NumPy has none, a ctypes destructor does the same.

Import: :func:`read_capsule` takes ownership of a capsule (renaming it
``used_dltensor``) and returns its fields plus a holder whose collection
calls the producer's deleter.
"""

from __future__ import annotations

import ctypes
import struct

import numpy

from ..errors import JitkernBufferError, JitkernTypeError

KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED = 1, 2, 3, 13
FLAG_READ_ONLY, FLAG_IS_COPIED = 1, 2
VERSION = (1, 0)


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", DELETER),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", DLTensor),
    ]


# Capsule names must outlive the capsules: module-level bytes, never freed.
NAME, USED_NAME = b"dltensor", b"used_dltensor"
NAME_V, USED_NAME_V = b"dltensor_versioned", b"used_dltensor_versioned"

_api = ctypes.pythonapi
_capsule_new = _api.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_is_valid = _api.PyCapsule_IsValid
_capsule_is_valid.restype = ctypes.c_int
_capsule_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_get_pointer = _api.PyCapsule_GetPointer
_capsule_get_pointer.restype = ctypes.c_void_p
_capsule_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_set_name = _api.PyCapsule_SetName
_capsule_set_name.restype = ctypes.c_int
_capsule_set_name.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_get_destructor = _api.PyCapsule_GetDestructor
_capsule_get_destructor.restype = ctypes.c_void_p
_capsule_get_destructor.argtypes = [ctypes.py_object]

# ---------------------------------------------------------------------------
# Export

# address of a live managed tensor -> (struct, shape array, strides array, owner)
_live: dict[int, tuple] = {}


def _release(address: int) -> None:
    _live.pop(address, None)


_deleter = DELETER(_release)


def live_count() -> int:
    """How many exported tensors no consumer has freed yet (for tests)."""
    return len(_live)


def _fallback_destructor(name: bytes):
    """A ctypes capsule destructor (used only where NumPy offers none)."""
    get_name = _api.PyCapsule_GetName
    get_name.restype = ctypes.c_char_p
    get_name.argtypes = [ctypes.c_void_p]
    get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
        ("PyCapsule_GetPointer", _api))

    def destroy(capsule: int) -> None:
        if get_name(capsule) == name:
            _release(get_pointer(capsule, name))

    return ctypes.CFUNCTYPE(None, ctypes.c_void_p)(destroy)


_destructors: dict[bool, object] = {}


def _destructor(versioned: bool) -> int:
    """Address of a C capsule destructor that calls the tensor's deleter if unconsumed."""
    fn = _destructors.get(versioned)
    if fn is None:
        fn = _numpy_destructor(versioned)
        if fn is None:
            fn = _fallback_destructor(NAME_V if versioned else NAME)
        _destructors[versioned] = fn
    return fn if isinstance(fn, int) else ctypes.cast(fn, ctypes.c_void_p).value


def _numpy_destructor(versioned: bool) -> int | None:
    probe = numpy.empty(0)
    try:
        capsule = probe.__dlpack__(max_version=(1, 0)) if versioned else probe.__dlpack__()
    except TypeError:  # NumPy < 2.1: no versioned capsules
        return None
    name = NAME_V if versioned else NAME
    if not _capsule_is_valid(capsule, name):
        return None
    return _capsule_get_destructor(capsule) or None


def make_capsule(ptr: int, shape, strides_elems, dtype_code: int, dtype_bits: int,
                 device_type: int, device_id: int, owner, *, versioned: bool,
                 readonly: bool = False, copied: bool = False):
    """A DLPack capsule describing memory at ``ptr``; ``owner`` is kept alive until the
    consumer calls the deleter (or the capsule is dropped unconsumed)."""
    ndim = len(shape)
    shape_arr = (ctypes.c_int64 * max(ndim, 1))(*shape)
    strides_arr = (ctypes.c_int64 * max(ndim, 1))(*strides_elems)
    if versioned:
        managed = DLManagedTensorVersioned()
        managed.version.major, managed.version.minor = VERSION
        managed.flags = (FLAG_READ_ONLY if readonly else 0) | (FLAG_IS_COPIED if copied else 0)
    else:
        managed = DLManagedTensor()
    t = managed.dl_tensor
    t.data = ptr or None
    t.device.device_type, t.device.device_id = device_type, device_id
    t.ndim = ndim
    t.dtype.code, t.dtype.bits, t.dtype.lanes = dtype_code, dtype_bits, 1
    t.shape = ctypes.cast(shape_arr, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.cast(strides_arr, ctypes.POINTER(ctypes.c_int64))
    t.byte_offset = 0
    address = ctypes.addressof(managed)
    managed.manager_ctx = address
    managed.deleter = _deleter
    _live[address] = (managed, shape_arr, strides_arr, owner)
    return _capsule_new(address, NAME_V if versioned else NAME, _destructor(versioned))


# ---------------------------------------------------------------------------
# Import


class Imported:
    """Fields of a consumed DLPack tensor; collecting it calls the producer's deleter."""

    __slots__ = (
        "__weakref__",
        "_address",
        "_deleter",
        "bits",
        "code",
        "device_id",
        "device_type",
        "lanes",
        "ptr",
        "readonly",
        "shape",
        "strides",
    )

    def __del__(self):
        deleter, self._deleter = self._deleter, None
        if deleter:
            deleter(self._address)


# The structs' fields as struct formats (64-bit, dlpack.h): the versioned header
# (version, manager_ctx, deleter, flags), then a DLTensor (data, device type and id,
# ndim, dtype code/bits/lanes, shape, strides, byte_offset). One unpack reads them all,
# where ctypes field access costs a Python object per field.
_HEADER_V = struct.Struct("<IIQQQ")
_TENSOR = struct.Struct("<QiiiBBHQQQ")
_deleters: dict[int, object] = {}  # a producer's deleter address -> its ctypes callable


def read_capsule(capsule) -> Imported:
    """Take ownership of a ``dltensor``/``dltensor_versioned`` capsule and read it.

    ``strides`` are in elements, or None for a compact row-major tensor.
    """
    if _capsule_is_valid(capsule, NAME_V):
        address = _capsule_get_pointer(capsule, NAME_V)
        raw = ctypes.string_at(address, _HEADER_V.size + _TENSOR.size)
        major, minor, _ctx, deleter, flags = _HEADER_V.unpack_from(raw)
        if major > VERSION[0]:
            raise JitkernBufferError(
                f"DLPack {major}.{minor} is newer than jitkern understands (1.x)")
        readonly = bool(flags & FLAG_READ_ONLY)
        tensor = _TENSOR.unpack_from(raw, _HEADER_V.size)
        used = USED_NAME_V
    elif _capsule_is_valid(capsule, NAME):
        address = _capsule_get_pointer(capsule, NAME)
        raw = ctypes.string_at(address, _TENSOR.size + 16)
        tensor = _TENSOR.unpack_from(raw)
        deleter = int.from_bytes(raw[_TENSOR.size + 8 :], "little")
        readonly = False
        used = USED_NAME
    else:
        raise JitkernTypeError("expected an unconsumed DLPack capsule ('dltensor' or 'dltensor_versioned')")
    _capsule_set_name(capsule, used)
    data, device_type, device_id, ndim, code, bits, lanes, shape_p, strides_p, offset = tensor
    info = Imported()
    info._address = address
    info._deleter = _deleter_of(deleter) if deleter else None
    info.ptr = data + offset
    info.shape = _int64s(shape_p, ndim)
    info.strides = _int64s(strides_p, ndim) if strides_p and ndim else None
    info.code, info.bits, info.lanes = code, bits, lanes
    info.device_type, info.device_id = device_type, device_id
    info.readonly = readonly
    return info


def _int64s(address: int, count: int) -> tuple:
    if not count:
        return ()
    return struct.unpack(f"<{count}q", ctypes.string_at(address, 8 * count))


def _deleter_of(address: int):
    fn = _deleters.get(address)
    if fn is None:
        fn = _deleters[address] = DELETER(address)
    return fn
