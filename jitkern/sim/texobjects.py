"""Texture and surface objects of the simulated device (:mod:`.device`).

On a GPU, ``cuTexObjectCreate`` and ``cuSurfObjectCreate`` turn a resource (a CUDA array,
linear or pitched device memory) and a sampling description into a 64-bit handle that
kernels pass by value. :class:`TextureCalls` (a mixin of the simulated device) does the
same: each handle names a :class:`Texture` or :class:`Surface` in :data:`OBJECTS`, which
holds a live NumPy view of the resource's memory (a copy into the CUDA array after the
texture was made is seen by later reads; surface writes land in the array) and the
sampling description. The simulator's texture reads (``jit.texture.tex2D``, the C
``tex2D<float>``; :mod:`.textures`) look the handles up here.
"""

from __future__ import annotations

import itertools
import types

import numpy

from ..errors import JitkernNotImplementedError

# The driver's values (cuda.h), which the runtime's equal (jitkern.cuda.runtime).
WRAP, CLAMP, MIRROR, BORDER = 0, 1, 2, 3
POINT, LINEAR = 0, 1
READ_AS_INTEGER, NORMALIZED_COORDINATES, SRGB = 0x01, 0x02, 0x10
RESOURCE_ARRAY, RESOURCE_MIPMAPPED, RESOURCE_LINEAR, RESOURCE_PITCH2D = 0, 1, 2, 3
#: CUarray_format values -> the dtype of one channel.
FORMATS = {
    0x01: numpy.dtype(numpy.uint8), 0x02: numpy.dtype(numpy.uint16),
    0x03: numpy.dtype(numpy.uint32), 0x08: numpy.dtype(numpy.int8),
    0x09: numpy.dtype(numpy.int16), 0x0A: numpy.dtype(numpy.int32),
    0x10: numpy.dtype(numpy.float16), 0x20: numpy.dtype(numpy.float32),
}

#: handle -> the Texture or Surface it names (one table for every simulated device).
OBJECTS: dict[int, object] = {}
_HANDLES = itertools.count(0x7E5_0000_0001)


class Texture:
    """What a texture handle names: ``texels`` (axes z, y, x, channel; a live view of the
    resource), ``ndim`` (1-3: the dimensions of the CUDA array; 1 for linear memory, 2 for
    pitched), ``resource`` (``'array'``, ``'linear'`` or ``'pitch2d'``) and the sampling:
    ``address`` (x, y, z modes), ``filter_mode``, ``normalized`` coordinates, ``integer``
    (integer texels read as integers: the driver's read-as-integer flag), ``border``."""

    kind = "texture"

    def __init__(self, texels, ndim, resource, address, filter_mode, flags, border):
        self.texels, self.ndim, self.resource = texels, ndim, resource
        self.address = tuple(address)
        self.filter_mode = filter_mode
        self.normalized = bool(flags & NORMALIZED_COORDINATES)
        self.integer = texels.dtype.kind in "iu" and bool(flags & READ_AS_INTEGER)
        # what a read gives: integers as they are, else floats (half floats as float32)
        self.value_dtype = texels.dtype if self.integer else numpy.dtype(numpy.float32)
        self.border = numpy.array(list(border) + [0.0] * (4 - len(border)), numpy.float32)
        self.descriptors = ()


class Surface:
    """What a surface handle names: the CUDA array's elements as bytes (axes z, y, x and
    the element's bytes) and its ``ndim``."""

    kind = "surface"

    def __init__(self, texels, ndim):
        self.element_bytes = texels.dtype.itemsize * texels.shape[-1]
        self.bytes = texels.view(numpy.uint8).reshape(texels.shape[:3] + (self.element_bytes,))
        self.ndim = ndim
        self.descriptors = ()


def register(obj) -> int:
    handle = next(_HANDLES)
    OBJECTS[handle] = obj
    return handle


def release(handle) -> bool:
    return OBJECTS.pop(int(handle), None) is not None


class ResourceDesc:
    """The driver's ``CUDA_RESOURCE_DESC``: the fields jitkern sets, zero at first."""

    def __init__(self):
        self.resType = RESOURCE_ARRAY
        self.res = types.SimpleNamespace(
            array=types.SimpleNamespace(hArray=0),
            linear=types.SimpleNamespace(devPtr=0, format=0, numChannels=0, sizeInBytes=0),
            pitch2D=types.SimpleNamespace(devPtr=0, format=0, numChannels=0, width=0, height=0,
                                          pitchInBytes=0))
        self.flags = 0


class TextureDesc:
    """The driver's ``CUDA_TEXTURE_DESC``: the fields jitkern sets, zero at first."""

    def __init__(self):
        self.addressMode = [WRAP] * 3
        self.filterMode = POINT
        self.flags = 0
        self.maxAnisotropy = 0
        self.borderColor = [0.0] * 4


def _enum(value) -> int:
    return int(value)


class TextureCalls:
    """``cuTexObjectCreate``/``Destroy``, ``cuSurfObjectCreate``/``Destroy`` and the
    descriptor getters, for the simulated device to inherit. It reads the device's CUDA
    arrays (``self.arrays``: handle -> an object with ``desc`` and ``data``, the bytes as
    (depth, height, row)) and memory (``self.view(ptr, nbytes, what)``: a uint8 view)."""

    CUDA_RESOURCE_DESC = ResourceDesc
    CUDA_TEXTURE_DESC = TextureDesc
    CUresourcetype = staticmethod(_enum)
    CUaddress_mode = staticmethod(_enum)
    CUfilter_mode = staticmethod(_enum)
    CU_TRSF_READ_AS_INTEGER = READ_AS_INTEGER
    CU_TRSF_NORMALIZED_COORDINATES = NORMALIZED_COORDINATES
    CU_TRSF_SRGB = SRGB
    _INVALID_VALUE, _INVALID_HANDLE = 1, 400

    def cuTexObjectCreate(self, res, tex, view=None):
        if view is not None:
            return (self._INVALID_VALUE, 0)
        if int(tex.flags) & SRGB:
            raise JitkernNotImplementedError(
                "cuTexObjectCreate: sRGB textures are not simulated; run on a GPU")
        texels, ndim, resource = self._resource(res)
        if texels is None:
            return (self._INVALID_HANDLE, 0)
        modes = [int(m) for m in tex.addressMode] + [WRAP] * 3
        obj = Texture(texels, ndim, resource, modes[:3], int(tex.filterMode), int(tex.flags),
                      [float(c) for c in tex.borderColor])
        obj.descriptors = (res, tex)
        return (0, register(obj))

    def cuTexObjectDestroy(self, handle):
        return (0,) if release(handle) else (self._INVALID_HANDLE,)

    def cuSurfObjectCreate(self, res):
        if int(res.resType) != RESOURCE_ARRAY:
            return (self._INVALID_VALUE, 0)
        texels, ndim, _ = self._resource(res)
        if texels is None:
            return (self._INVALID_HANDLE, 0)
        obj = Surface(texels, ndim)
        obj.descriptors = (res,)
        return (0, register(obj))

    def cuSurfObjectDestroy(self, handle):
        return (0,) if release(handle) else (self._INVALID_HANDLE,)

    def cuTexObjectGetResourceDesc(self, handle):
        obj = OBJECTS.get(int(handle))
        ok = obj is not None and obj.kind == "texture"
        return (0, obj.descriptors[0]) if ok else (self._INVALID_HANDLE, None)

    def cuTexObjectGetTextureDesc(self, handle):
        obj = OBJECTS.get(int(handle))
        ok = obj is not None and obj.kind == "texture"
        return (0, obj.descriptors[1]) if ok else (self._INVALID_HANDLE, None)

    def cuSurfObjectGetResourceDesc(self, handle):
        obj = OBJECTS.get(int(handle))
        ok = obj is not None and obj.kind == "surface"
        return (0, obj.descriptors[0]) if ok else (self._INVALID_HANDLE, None)

    def _resource(self, res) -> tuple:
        """(texels, ndim, resource kind) of a CUDA_RESOURCE_DESC; texels None for an
        unknown CUDA array."""
        kind = int(res.resType)
        if kind == RESOURCE_ARRAY:
            return (*self._array_texels(res.res.array.hArray), "array")
        if kind == RESOURCE_LINEAR:
            lin = res.res.linear
            dtype = FORMATS[int(lin.format)]
            nch = int(lin.numChannels)
            count = int(lin.sizeInBytes) // (dtype.itemsize * nch)
            raw = self.view(int(lin.devPtr), count * dtype.itemsize * nch, "cuTexObjectCreate")
            return raw.view(dtype).reshape(1, 1, count, nch), 1, "linear"
        if kind == RESOURCE_PITCH2D:
            p = res.res.pitch2D
            dtype = FORMATS[int(p.format)]
            nch, width, height = int(p.numChannels), int(p.width), int(p.height)
            pitch = int(p.pitchInBytes)
            row = width * nch * dtype.itemsize
            raw = self.view(int(p.devPtr), pitch * (height - 1) + row, "cuTexObjectCreate")
            texels = numpy.ndarray((1, height, width, nch), dtype, buffer=raw,
                                   strides=(pitch * height, pitch, nch * dtype.itemsize,
                                            dtype.itemsize))
            return texels, 2, "pitch2d"
        raise JitkernNotImplementedError(
            f"cuTexObjectCreate: resource type {kind} is not simulated (CUDA arrays, linear "
            "and pitched memory are)")

    def _array_texels(self, handle) -> tuple:
        """(the CUDA array's texels (depth, height, width, channels), its ndim)."""
        array = self.arrays.get(int(handle))
        if array is None:
            return None, 0
        d = array.desc
        dtype = FORMATS[int(d.Format)]
        depth, height = max(int(d.Depth), 1), max(int(d.Height), 1)
        texels = array.data.view(dtype).reshape(depth, height, int(d.Width), int(d.NumChannels))
        return texels, 3 if int(d.Depth) else 2 if int(d.Height) else 1


__all__ = ["OBJECTS", "Surface", "Texture", "TextureCalls", "register", "release"]
