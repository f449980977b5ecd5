"""Texture and surface objects: CuPy's ``cupy.cuda.texture`` on the CUDA driver API.

The classes keep CuPy's names and constructor signatures::

    from jitkern.cuda import runtime
    from jitkern.compat.texture import (ChannelFormatDescriptor, CUDAarray, ResourceDescriptor,
                                 TextureDescriptor, TextureObject, SurfaceObject)

    ch = ChannelFormatDescriptor(32, 0, 0, 0, runtime.cudaChannelFormatKindFloat)
    arr = CUDAarray(ch, width, height)           # a 2-D CUDA array
    arr.copy_from(numpy_or_gpu_array)            # shape (height, width)
    res = ResourceDescriptor(runtime.cudaResourceTypeArray, cuArr=arr)
    tex = TextureDescriptor((runtime.cudaAddressModeClamp,) * 2, runtime.cudaFilterModeLinear,
                            runtime.cudaReadModeElementType)
    texobj = TextureObject(res, tex)             # pass it to a RawKernel or ElementwiseKernel

Descriptors are plain Python values, checked when they are made and usable without a GPU;
``CUDAarray``, ``TextureObject`` and ``SurfaceObject`` own driver handles (``cuArray3DCreate``,
``cuTexObjectCreate``, ``cuSurfObjectCreate``) and release them when the object is collected
(a texture keeps its resource, and so its array, alive). The texture *reference* API was
removed in CUDA 12: ``TextureReference`` and ``RawModule.get_texref`` raise
:class:`jitkern.JitkernNotImplementedError`.
"""

from __future__ import annotations

import ctypes

import numpy

from ..runtime import driver
from ..runtime.device import stream_handle
from ..cuda import runtime
from ..cuda.runtime import (
    cudaArrayCubemap,
    cudaArrayDefault,
    cudaArrayLayered,
    cudaArraySurfaceLoadStore,
    cudaArrayTextureGather,
)
from ..layout import c_strides
from ..errors import JitkernNotImplementedError, JitkernTypeError, JitkernValueError
from ..lazy import lazy_import

_interop = lazy_import("jitkern.arrays.interop")  # array interop, only when an array is bound

# The runtime constants CuPy users pass, re-exported for ``from jitkern.compat.texture import *``.
_RUNTIME_NAMES = [n for n in dir(runtime) if n.startswith("cuda")]
globals().update({n: getattr(runtime, n) for n in _RUNTIME_NAMES})

# (channel kind, bits) -> CUarray_format value, and the NumPy dtype of one channel.
_FORMATS = {
    (runtime.cudaChannelFormatKindUnsigned, 8): ("CU_AD_FORMAT_UNSIGNED_INT8", numpy.uint8),
    (runtime.cudaChannelFormatKindUnsigned, 16): ("CU_AD_FORMAT_UNSIGNED_INT16", numpy.uint16),
    (runtime.cudaChannelFormatKindUnsigned, 32): ("CU_AD_FORMAT_UNSIGNED_INT32", numpy.uint32),
    (runtime.cudaChannelFormatKindSigned, 8): ("CU_AD_FORMAT_SIGNED_INT8", numpy.int8),
    (runtime.cudaChannelFormatKindSigned, 16): ("CU_AD_FORMAT_SIGNED_INT16", numpy.int16),
    (runtime.cudaChannelFormatKindSigned, 32): ("CU_AD_FORMAT_SIGNED_INT32", numpy.int32),
    (runtime.cudaChannelFormatKindFloat, 16): ("CU_AD_FORMAT_HALF", numpy.float16),
    (runtime.cudaChannelFormatKindFloat, 32): ("CU_AD_FORMAT_FLOAT", numpy.float32),
}
_KIND_NAMES = {
    runtime.cudaChannelFormatKindSigned: "cudaChannelFormatKindSigned",
    runtime.cudaChannelFormatKindUnsigned: "cudaChannelFormatKindUnsigned",
    runtime.cudaChannelFormatKindFloat: "cudaChannelFormatKindFloat",
}
_ADDRESS_MODES = {
    runtime.cudaAddressModeWrap: "cudaAddressModeWrap",
    runtime.cudaAddressModeClamp: "cudaAddressModeClamp",
    runtime.cudaAddressModeMirror: "cudaAddressModeMirror",
    runtime.cudaAddressModeBorder: "cudaAddressModeBorder",
}
_FILTER_MODES = {runtime.cudaFilterModePoint: "cudaFilterModePoint",
                 runtime.cudaFilterModeLinear: "cudaFilterModeLinear"}
_READ_MODES = {runtime.cudaReadModeElementType: "cudaReadModeElementType",
               runtime.cudaReadModeNormalizedFloat: "cudaReadModeNormalizedFloat"}
_RESOURCE_TYPES = {
    runtime.cudaResourceTypeArray: "cudaResourceTypeArray",
    runtime.cudaResourceTypeMipmappedArray: "cudaResourceTypeMipmappedArray",
    runtime.cudaResourceTypeLinear: "cudaResourceTypeLinear",
    runtime.cudaResourceTypePitch2D: "cudaResourceTypePitch2D",
}
_ARRAY_FLAGS = (cudaArrayDefault | cudaArrayLayered | cudaArraySurfaceLoadStore
                | cudaArrayCubemap | cudaArrayTextureGather)


def _int(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, numpy.integer)):
        raise JitkernTypeError(f"{what}: expected an int, got {type(value).__name__} {value!r}")
    return int(value)


def _choice(value, table: dict, what: str) -> int:
    value = _int(value, what)
    if value not in table:
        listed = ", ".join(f"{name} ({v})" for v, name in table.items())
        raise JitkernValueError(f"{what}: {value} is not one of {listed}")
    return value


class _CChannelFormatDesc(ctypes.Structure):
    _fields_ = [("x", ctypes.c_int), ("y", ctypes.c_int), ("z", ctypes.c_int),
                ("w", ctypes.c_int), ("f", ctypes.c_int)]


# ---------------------------------------------------------------------------
# Descriptors (plain values: no GPU needed)


class ChannelFormatDescriptor:
    """The bits of each channel and their kind (``cudaChannelFormatDesc``).

    ``ChannelFormatDescriptor(x, y, z, w, f)``: bits of the x, y, z, w channels (unused
    channels 0, used ones first and all the same size: 8/16/32 for integers, 16/32 for
    floats) and ``f``, one of ``runtime.cudaChannelFormatKind{Signed,Unsigned,Float}``.
    """

    def __init__(self, x, y, z, w, f):
        bits = [_int(v, f"ChannelFormatDescriptor: {n}") for n, v in zip("xyzw", (x, y, z, w))]
        kind = _choice(f, _KIND_NAMES, "ChannelFormatDescriptor: f")
        used = [b for b in bits if b]
        if not used or bits[: len(used)] != used or len(set(used)) != 1:
            raise JitkernValueError(
                f"ChannelFormatDescriptor{(x, y, z, w)}: the used channels must come first "
                "(x, then y, z, w) and have the same number of bits, e.g. (32, 32, 0, 0)")
        if (kind, used[0]) not in _FORMATS:
            sizes = sorted(b for k, b in _FORMATS if k == kind)
            raise JitkernValueError(
                f"ChannelFormatDescriptor: {used[0]}-bit channels of {_KIND_NAMES[kind]} are "
                f"not supported; use {', '.join(map(str, sizes))} bits")
        if len(used) == 3:
            raise JitkernValueError(
                "ChannelFormatDescriptor: CUDA arrays have 1, 2 or 4 channels, not 3")
        self.x, self.y, self.z, self.w = bits
        self.f = kind
        self.num_channels = len(used)
        self.channel_bits = used[0]
        format_name, self.channel_dtype = _FORMATS[(kind, used[0])]
        self._format_name = format_name
        self.channel_dtype = numpy.dtype(self.channel_dtype)
        self._desc = _CChannelFormatDesc(*bits, kind)

    @property
    def ptr(self) -> int:
        """Address of a host ``cudaChannelFormatDesc`` holding these values."""
        return ctypes.addressof(self._desc)

    @property
    def element_bytes(self) -> int:
        """Bytes of one element (all channels)."""
        return self.num_channels * self.channel_bits // 8

    def get_channel_format(self) -> dict:
        """``{'x': .., 'y': .., 'z': .., 'w': .., 'f': ..}``, the values given."""
        return {"x": self.x, "y": self.y, "z": self.z, "w": self.w, "f": self.f}

    def _driver_format(self, d):
        return getattr(d.CUarray_format, self._format_name)

    def __repr__(self) -> str:
        return (f"<jitkern.compat.texture.ChannelFormatDescriptor ({self.x}, {self.y}, {self.z}, "
                f"{self.w}) {_KIND_NAMES[self.f]}>")


def _check_desc(desc, what: str) -> ChannelFormatDescriptor:
    if not isinstance(desc, ChannelFormatDescriptor):
        raise JitkernTypeError(f"{what}: expected a jitkern.compat.texture.ChannelFormatDescriptor, got "
                               f"{type(desc).__module__}.{type(desc).__qualname__}")
    return desc


class TextureDescriptor:
    """How a texture is sampled (``cudaTextureDesc``).

    ``addressModes``: up to 3 of ``runtime.cudaAddressMode{Wrap,Clamp,Mirror,Border}`` (one
    per dimension; missing ones are Wrap, the runtime's zero); ``filterMode``:
    ``cudaFilterModePoint`` or ``cudaFilterModeLinear``; ``readMode``:
    ``cudaReadModeElementType`` or ``cudaReadModeNormalizedFloat``; ``sRGB``,
    ``normalizedCoords``: truthy ints; ``borderColors``: up to 4 floats; ``maxAnisotropy``.
    """

    def __init__(self, addressModes=None, filterMode=0, readMode=0, sRGB=None,
                 borderColors=None, normalizedCoords=None, maxAnisotropy=None):
        modes = () if addressModes is None else tuple(addressModes)
        if len(modes) > 3:
            raise JitkernValueError(
                f"TextureDescriptor: addressModes has {len(modes)} entries; at most 3 (x, y, z)")
        self.addressModes = tuple(
            _choice(m, _ADDRESS_MODES, f"TextureDescriptor: addressModes[{i}]")
            for i, m in enumerate(modes))
        self.filterMode = _choice(filterMode, _FILTER_MODES, "TextureDescriptor: filterMode")
        self.readMode = _choice(readMode, _READ_MODES, "TextureDescriptor: readMode")
        self.sRGB = 0 if sRGB is None else _int(sRGB, "TextureDescriptor: sRGB")
        colors = () if borderColors is None else tuple(borderColors)
        if len(colors) > 4:
            raise JitkernValueError(
                f"TextureDescriptor: borderColors has {len(colors)} entries; at most 4")
        try:
            self.borderColors = tuple(float(c) for c in colors)
        except (TypeError, ValueError):
            raise JitkernTypeError(
                f"TextureDescriptor: borderColors must be numbers, got {colors!r}") from None
        self.normalizedCoords = (0 if normalizedCoords is None
                                 else _int(normalizedCoords, "TextureDescriptor: normalizedCoords"))
        self.maxAnisotropy = (0 if maxAnisotropy is None
                              else _int(maxAnisotropy, "TextureDescriptor: maxAnisotropy"))
        if self.maxAnisotropy < 0:
            raise JitkernValueError(
                f"TextureDescriptor: maxAnisotropy must be >= 0, got {self.maxAnisotropy}")

    def get_texture_desc(self) -> dict:
        """The descriptor's fields as a dict (runtime names)."""
        return {"addressMode": self.addressModes, "filterMode": self.filterMode,
                "readMode": self.readMode, "sRGB": self.sRGB, "borderColor": self.borderColors,
                "normalizedCoords": self.normalizedCoords, "maxAnisotropy": self.maxAnisotropy}

    def _driver_desc(self, d, integer_format: bool):
        """The ``CUDA_TEXTURE_DESC`` (``d`` is ``cuda.bindings.driver``)."""
        desc = d.CUDA_TEXTURE_DESC()
        modes = list(self.addressModes) + [runtime.cudaAddressModeWrap] * (3 - len(self.addressModes))
        desc.addressMode = [d.CUaddress_mode(m) for m in modes]
        desc.filterMode = d.CUfilter_mode(self.filterMode)
        flags = 0
        # The runtime's cudaReadModeElementType is the driver's "read as integer" flag:
        # without it the driver promotes integer texels to normalized floats.
        if self.readMode == runtime.cudaReadModeElementType and integer_format:
            flags |= d.CU_TRSF_READ_AS_INTEGER
        if self.normalizedCoords:
            flags |= d.CU_TRSF_NORMALIZED_COORDINATES
        if self.sRGB:
            flags |= d.CU_TRSF_SRGB
        desc.flags = flags
        desc.maxAnisotropy = self.maxAnisotropy
        desc.borderColor = list(self.borderColors) + [0.0] * (4 - len(self.borderColors))
        return desc

    def __repr__(self) -> str:
        return (f"<jitkern.compat.texture.TextureDescriptor filter={_FILTER_MODES[self.filterMode]} "
                f"read={_READ_MODES[self.readMode]} normalized={bool(self.normalizedCoords)}>")


class ResourceDescriptor:
    """What a texture or surface reads (``cudaResourceDesc``).

    ``restype`` is ``runtime.cudaResourceTypeArray`` (give ``cuArr``, a :class:`CUDAarray`),
    ``cudaResourceTypeLinear`` (give ``arr``, a contiguous GPU array, ``chDesc`` and
    ``sizeInBytes``) or ``cudaResourceTypePitch2D`` (``arr``, ``chDesc``, ``width``,
    ``height`` in elements and ``pitchInBytes``). Mipmapped arrays are not supported.
    """

    def __init__(self, restype, cuArr=None, arr=None, chDesc=None, sizeInBytes=0, width=0,
                 height=0, pitchInBytes=0):
        self.restype = _choice(restype, _RESOURCE_TYPES, "ResourceDescriptor: restype")
        self.cuArr, self.arr, self.chDesc = cuArr, arr, chDesc
        self.sizeInBytes = _int(sizeInBytes, "ResourceDescriptor: sizeInBytes")
        self.width = _int(width, "ResourceDescriptor: width")
        self.height = _int(height, "ResourceDescriptor: height")
        self.pitchInBytes = _int(pitchInBytes, "ResourceDescriptor: pitchInBytes")
        _RESOURCE_CHECKS[self.restype](self)

    def _check_array(self) -> None:
        if not isinstance(self.cuArr, CUDAarray):
            raise JitkernTypeError(
                "ResourceDescriptor(cudaResourceTypeArray): cuArr must be a "
                f"jitkern.compat.texture.CUDAarray, got {type(self.cuArr).__name__}")

    def _check_linear(self) -> None:
        what = "ResourceDescriptor(cudaResourceTypeLinear)"
        self._check_memory(what)
        if self.sizeInBytes <= 0:
            raise JitkernValueError(f"{what}: sizeInBytes must be > 0, got {self.sizeInBytes}")
        if self.sizeInBytes > self._nbytes:
            raise JitkernValueError(f"{what}: sizeInBytes={self.sizeInBytes} is more than the "
                                    f"array's {self._nbytes} bytes")

    def _check_pitch2d(self) -> None:
        what = "ResourceDescriptor(cudaResourceTypePitch2D)"
        self._check_memory(what)
        if self.width <= 0 or self.height <= 0:
            raise JitkernValueError(f"{what}: width and height (in elements) must be > 0, got "
                                    f"{self.width} x {self.height}")
        row = self.width * self.chDesc.element_bytes
        if self.pitchInBytes < row:
            raise JitkernValueError(f"{what}: pitchInBytes={self.pitchInBytes} is less than a "
                                    f"row of {self.width} elements ({row} bytes)")
        if self.pitchInBytes * (self.height - 1) + row > self._nbytes:
            raise JitkernValueError(f"{what}: {self.height} rows of pitch {self.pitchInBytes} "
                                    f"do not fit in the array's {self._nbytes} bytes")

    def _check_mipmapped(self) -> None:
        raise JitkernNotImplementedError(
            "ResourceDescriptor: cudaResourceTypeMipmappedArray is not supported (CuPy does not "
            "support mipmapped textures either); use cudaResourceTypeArray")

    def _check_memory(self, what: str) -> None:
        if self.arr is None:
            raise JitkernValueError(f"{what}: arr (a GPU array) is required")
        _check_desc(self.chDesc, f"{what}: chDesc")
        info = _device_array(self.arr, f"{what}: arr")
        self._ptr, self._nbytes = info

    def get_resource_desc(self) -> dict:
        """The descriptor's fields as a dict (runtime names)."""
        return {"resType": self.restype, "cuArr": self.cuArr, "arr": self.arr,
                "chDesc": self.chDesc, "sizeInBytes": self.sizeInBytes, "width": self.width,
                "height": self.height, "pitchInBytes": self.pitchInBytes}

    def _driver_desc(self, d):
        """The ``CUDA_RESOURCE_DESC`` (``d`` is ``cuda.bindings.driver``)."""
        desc = d.CUDA_RESOURCE_DESC()
        desc.resType = d.CUresourcetype(self.restype)
        if self.restype == runtime.cudaResourceTypeArray:
            desc.res.array.hArray = self.cuArr._handle
        elif self.restype == runtime.cudaResourceTypeLinear:
            desc.res.linear.devPtr = self._ptr
            desc.res.linear.format = self.chDesc._driver_format(d)
            desc.res.linear.numChannels = self.chDesc.num_channels
            desc.res.linear.sizeInBytes = self.sizeInBytes
        else:
            desc.res.pitch2D.devPtr = self._ptr
            desc.res.pitch2D.format = self.chDesc._driver_format(d)
            desc.res.pitch2D.numChannels = self.chDesc.num_channels
            desc.res.pitch2D.width = self.width
            desc.res.pitch2D.height = self.height
            desc.res.pitch2D.pitchInBytes = self.pitchInBytes
        return desc

    def _channel_desc(self) -> ChannelFormatDescriptor:
        return self.cuArr.desc if self.restype == runtime.cudaResourceTypeArray else self.chDesc

    def __repr__(self) -> str:
        return f"<jitkern.compat.texture.ResourceDescriptor {_RESOURCE_TYPES[self.restype]}>"


_RESOURCE_CHECKS = {
    runtime.cudaResourceTypeArray: ResourceDescriptor._check_array,
    runtime.cudaResourceTypeLinear: ResourceDescriptor._check_linear,
    runtime.cudaResourceTypePitch2D: ResourceDescriptor._check_pitch2d,
    runtime.cudaResourceTypeMipmappedArray: ResourceDescriptor._check_mipmapped,
}


def _device_array(arr, what: str) -> tuple[int, int]:
    """(pointer, bytes) of a C-contiguous GPU array (host arrays refused)."""
    if isinstance(arr, numpy.ndarray):
        raise JitkernTypeError(f"{what}: a numpy.ndarray lives in host memory; textures read GPU "
                               "memory: copy it with jitkern.asarray(x) first")
    try:
        info = _interop.describe(arr)
    except TypeError as exc:
        raise JitkernTypeError(f"{what}: expected a GPU array, got {type(arr).__name__} ({exc})"
                               ) from None
    itemsize = numpy.dtype(info.dtype).itemsize
    if tuple(info.strides) != tuple(c_strides(info.shape, itemsize)):
        raise JitkernValueError(f"{what}: the array must be C-contiguous")
    return info.ptr, int(numpy.prod(info.shape, dtype=numpy.int64)) * itemsize


# ---------------------------------------------------------------------------
# Objects that own driver handles


class CUDAarray:
    """A CUDA array (``CUarray``): 1-D (``height=depth=0``), 2-D (``depth=0``) or 3-D.

    ``flags``: ``runtime.cudaArrayDefault`` or ``cudaArraySurfaceLoadStore`` (needed by
    :class:`SurfaceObject`), ... Allocated with ``cuArray3DCreate`` outside jitkern's
    memory pool, freed when the object is collected. ``copy_from``/``copy_to`` move data
    from/to a host NumPy array or a GPU array of shape ``(nch * width,)``,
    ``(height, nch * width)`` or ``(depth, height, nch * width)`` (``nch`` channels).
    """

    def __init__(self, desc, width, height=0, depth=0, flags=0):
        self.desc = _check_desc(desc, "CUDAarray: desc")
        self.width = _int(width, "CUDAarray: width")
        self.height = _int(height, "CUDAarray: height")
        self.depth = _int(depth, "CUDAarray: depth")
        self.flags = _int(flags, "CUDAarray: flags")
        self._handle = None
        if self.width <= 0 or self.height < 0 or self.depth < 0:
            raise JitkernValueError(f"CUDAarray: width must be > 0 and height, depth >= 0, got "
                                    f"{(self.width, self.height, self.depth)}")
        if self.depth and not self.height:
            raise JitkernValueError("CUDAarray: a 3-D array (depth > 0) needs height > 0")
        if self.flags & ~_ARRAY_FLAGS:
            raise JitkernValueError(f"CUDAarray: unknown flags {self.flags:#x}")
        self.ndim = 3 if self.depth else 2 if self.height else 1
        d = driver.drv()
        self.device_id = driver.current_device_id()
        ad = d.CUDA_ARRAY3D_DESCRIPTOR()
        ad.Width, ad.Height, ad.Depth = self.width, self.height, self.depth
        ad.Format = desc._driver_format(d)
        ad.NumChannels = desc.num_channels
        ad.Flags = self.flags
        self._handle = driver.check(d.cuArray3DCreate(ad), f"cuArray3DCreate for {self!r}")
        self._destroy = d.cuArrayDestroy

    @property
    def ptr(self) -> int:
        """The ``CUarray`` handle as an int."""
        return int(self._handle) if self._handle is not None else 0

    @property
    def shape(self) -> tuple:
        """The shape ``copy_from``/``copy_to`` expect (channels folded into the last axis)."""
        row = (self.desc.num_channels * self.width,)
        return {1: row, 2: (self.height, *row), 3: (self.depth, self.height, *row)}[self.ndim]

    @property
    def nbytes(self) -> int:
        return self.desc.element_bytes * self.width * max(self.height, 1) * max(self.depth, 1)

    def copy_from(self, in_arr, stream=None) -> None:
        """Copy a host (NumPy) or GPU array into this CUDA array; async on ``stream`` if given."""
        self._copy(in_arr, stream, to_array=True)

    def copy_to(self, out_arr, stream=None) -> None:
        """Copy this CUDA array into a host (NumPy) or GPU array; async on ``stream`` if given."""
        self._copy(out_arr, stream, to_array=False)

    def _copy(self, other, stream, *, to_array: bool) -> None:
        what = f"CUDAarray.{'copy_from' if to_array else 'copy_to'}"
        ptr, host = self._linear_side(other, what, writable=not to_array)
        d = driver.drv()
        m = d.CUDA_MEMCPY3D()
        row = self.width * self.desc.element_bytes
        m.WidthInBytes, m.Height, m.Depth = row, max(self.height, 1), max(self.depth, 1)
        kind = d.CUmemorytype.CU_MEMORYTYPE_HOST if host else d.CUmemorytype.CU_MEMORYTYPE_DEVICE
        array_kind = d.CUmemorytype.CU_MEMORYTYPE_ARRAY
        # The linear side (host or device memory at ``ptr``) and the array side.
        linear, other = ("src", "dst") if to_array else ("dst", "src")
        setattr(m, other + "MemoryType", array_kind)
        setattr(m, other + "Array", self._handle)
        setattr(m, linear + "MemoryType", kind)
        setattr(m, linear + "Pitch", row)
        setattr(m, linear + "Height", max(self.height, 1))
        setattr(m, linear + ("Host" if host else "Device"), ptr)
        if stream is None:
            driver.check(d.cuMemcpy3D(m), what)
        else:
            driver.check(d.cuMemcpy3DAsync(m, stream_handle(stream)), what)

    def _linear_side(self, arr, what: str, *, writable: bool) -> tuple[int, bool]:
        """(address, is_host) of the array copied from/to, after checking its layout."""
        if isinstance(arr, numpy.ndarray):
            if not arr.flags.c_contiguous:
                raise JitkernValueError(f"{what}: the NumPy array must be C-contiguous")
            if writable and not arr.flags.writeable:
                raise JitkernValueError(f"{what}: the NumPy array is read-only")
            size, itemsize, ptr, host = arr.size, arr.dtype.itemsize, arr.ctypes.data, True
        else:
            ptr, nbytes = _device_array(arr, what)
            info = _interop.describe(arr)
            itemsize = numpy.dtype(info.dtype).itemsize
            size, host = nbytes // itemsize, False
        if itemsize * 8 != self.desc.channel_bits or size * itemsize != self.nbytes:
            raise JitkernValueError(
                f"{what}: expected {self.shape} elements of {self.desc.channel_bits // 8} "
                f"byte(s) (shape {self.shape}, {self.desc.channel_dtype.name} for this "
                f"descriptor), got {size} element(s) of {itemsize} byte(s)")
        return ptr, host

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle is not None:
            self._handle = None
            try:
                self._destroy(handle)
            except Exception:
                pass

    def __repr__(self) -> str:
        dims = (self.width, self.height, self.depth)[: getattr(self, "ndim", 3)]
        return f"<jitkern.compat.texture.CUDAarray {'x'.join(map(str, dims))} {self.desc!r}>"


class _DriverObject:
    """A texture or surface object: its driver handle, passed to kernels by value, and
    destroyed with the object (``_destroy`` is the driver's destroy function)."""

    _handle = None

    @property
    def ptr(self) -> int:
        """The handle (what the kernel receives: cudaTextureObject_t/cudaSurfaceObject_t)."""
        return int(self._handle) if self._handle is not None else 0

    def __del__(self):
        handle = self._handle
        if handle is not None:
            self._handle = None
            try:
                self._destroy(handle)
            except Exception:  # interpreter shutdown: the driver may be gone already
                pass

    def __repr__(self) -> str:
        return f"<jitkern.compat.texture.{type(self).__name__} 0x{self.ptr:x}>"


class TextureObject(_DriverObject):
    """A texture object (``cudaTextureObject_t``) over a resource, sampled as described.

    Pass it to a :class:`jitkern.RawKernel` for a ``cudaTextureObject_t`` parameter, or to
    an :class:`jitkern.ElementwiseKernel` for a parameter typed by its own placeholder
    (``'U texObj'``). ``ptr`` is the handle; it is destroyed when the object is collected.
    """

    def __init__(self, ResDesc, TexDesc):
        if not isinstance(ResDesc, ResourceDescriptor):
            raise JitkernTypeError(f"TextureObject: ResDesc must be a "
                                   f"jitkern.compat.texture.ResourceDescriptor, got {type(ResDesc).__name__}")
        if not isinstance(TexDesc, TextureDescriptor):
            raise JitkernTypeError(f"TextureObject: TexDesc must be a "
                                   f"jitkern.compat.texture.TextureDescriptor, got {type(TexDesc).__name__}")
        self.ResDesc, self.TexDesc = ResDesc, TexDesc
        self._handle = None
        d = driver.drv()
        self.device_id = driver.current_device_id()
        integer = ResDesc._channel_desc().f != runtime.cudaChannelFormatKindFloat
        if TexDesc.filterMode == runtime.cudaFilterModeLinear and integer and (
                TexDesc.readMode == runtime.cudaReadModeElementType):
            raise JitkernValueError(
                "TextureObject: linear filtering of an integer texture needs "
                "readMode=cudaReadModeNormalizedFloat (filtered values are floats)")
        self._handle = driver.check(
            d.cuTexObjectCreate(ResDesc._driver_desc(d), TexDesc._driver_desc(d, integer), None),
            "cuTexObjectCreate")
        self._destroy = d.cuTexObjectDestroy



class SurfaceObject(_DriverObject):
    """A surface object (``cudaSurfaceObject_t``) over a :class:`CUDAarray` made with
    ``flags=runtime.cudaArraySurfaceLoadStore``; kernels read and write it with
    ``surf1Dwrite``/``surf2Dread``/... (x offsets in bytes)."""

    def __init__(self, ResDesc):
        if not isinstance(ResDesc, ResourceDescriptor):
            raise JitkernTypeError(f"SurfaceObject: ResDesc must be a "
                                   f"jitkern.compat.texture.ResourceDescriptor, got {type(ResDesc).__name__}")
        self.ResDesc = ResDesc
        self._handle = None
        if ResDesc.restype != runtime.cudaResourceTypeArray:
            raise JitkernValueError(
                "SurfaceObject: surfaces are backed by CUDA arrays only: use "
                f"ResourceDescriptor(cudaResourceTypeArray, cuArr=...), got "
                f"{_RESOURCE_TYPES[ResDesc.restype]}")
        if not ResDesc.cuArr.flags & cudaArraySurfaceLoadStore:
            raise JitkernValueError(
                "SurfaceObject: the CUDAarray was made without "
                "flags=runtime.cudaArraySurfaceLoadStore, which surfaces need")
        d = driver.drv()
        self.device_id = driver.current_device_id()
        self._handle = driver.check(d.cuSurfObjectCreate(ResDesc._driver_desc(d)),
                                    "cuSurfObjectCreate")
        self._destroy = d.cuSurfObjectDestroy



TEXREF_REMOVED = (
    "the texture reference API (texture<...> globals, RawModule.get_texref, TextureReference) "
    "was removed in CUDA 12; use texture objects instead: jitkern.compat.texture.TextureObject passed "
    "as a cudaTextureObject_t kernel argument (see docs/textures.md)")


class TextureReference:
    """CuPy's binding of a module's texture reference: not available (removed in CUDA 12)."""

    def __init__(self, *args, **kwargs):
        raise JitkernNotImplementedError(f"TextureReference: {TEXREF_REMOVED}")


__all__ = ["CUDAarray", "ChannelFormatDescriptor", "ResourceDescriptor", "SurfaceObject",
           "TextureDescriptor", "TextureObject", "TextureReference", *_RUNTIME_NAMES]
