"""Texture and surface objects of the simulated device, and how simulated kernels read them.

On a GPU, ``cuTexObjectCreate`` and ``cuSurfObjectCreate`` turn a resource (a CUDA array,
linear or pitched device memory) and a sampling description into a 64-bit handle that
kernels pass by value. The simulated device does the same with :class:`TextureCalls` (a
mixin of its driver stand-in): each handle names a :class:`Texture` or :class:`Surface`
in this module's table, holding a live NumPy view of the resource's host memory, so a
copy into the CUDA array after the texture was made is seen by later reads, and surface
writes land in the array.

A kernel's ``tex2D<float>(t, x, y)`` (RawKernel/ElementwiseKernel C, through
:mod:`.ctextures`) or ``jit.texture.tex2D(t, x, y, numpy.float32)`` (a JIT kernel) calls
:func:`sample` with the handle. It models the texture unit:

- point filtering reads texel ``floor(x)``; linear filtering blends the texels around
  ``x - 0.5`` (texel centres at ``i + 0.5``) with the hardware's 9-bit fixed-point
  weights: the fractional part is rounded to a multiple of 1/256 (1.8 format) before it
  weighs, as CUDA's programming guide describes, so results equal a GPU's wherever the
  texture unit's arithmetic is exact (and are within float32 rounding elsewhere);
- normalized coordinates are scaled by the extent; address modes clamp, border (the
  border colour outside), and for normalized coordinates wrap and mirror (CUDA supports
  wrap and mirror only for normalized coordinates: with unnormalized ones they clamp);
- ``cudaReadModeNormalizedFloat`` turns integer texels into floats in [0, 1] (unsigned,
  ``v / (2**bits - 1)``) or [-1, 1] (signed); half-float texels read as float32.

Texture reads are pure functions of the handle and coordinates and work on arrays of
coordinates as well as on one thread's scalars (the vectorised path calls them with
arrays). Surface reads and writes take byte x coordinates, as CUDA's do, and the boundary
mode: ``cudaBoundaryModeTrap`` (the default: an out-of-range access is an error, as the
GPU's fault), ``Zero`` (reads give 0, writes are dropped) and ``Clamp``.
"""

from __future__ import annotations

import itertools
import sys
import types

import numpy

from ..errors import JitkernNotImplementedError, JitkernValueError, KernelAssertionError
from . import runtime as R

# The driver's values (cuda.h), which the runtime's equal (jitkern.cuda.runtime).
WRAP, CLAMP, MIRROR, BORDER = 0, 1, 2, 3
POINT, LINEAR = 0, 1
READ_AS_INTEGER, NORMALIZED_COORDINATES, SRGB = 0x01, 0x02, 0x10
RESOURCE_ARRAY, RESOURCE_MIPMAPPED, RESOURCE_LINEAR, RESOURCE_PITCH2D = 0, 1, 2, 3
BOUNDARY_ZERO, BOUNDARY_CLAMP, BOUNDARY_TRAP = 0, 1, 2
#: CUarray_format values -> the dtype of one channel.
FORMATS = {
    0x01: numpy.dtype(numpy.uint8), 0x02: numpy.dtype(numpy.uint16),
    0x03: numpy.dtype(numpy.uint32), 0x08: numpy.dtype(numpy.int8),
    0x09: numpy.dtype(numpy.int16), 0x0A: numpy.dtype(numpy.int32),
    0x10: numpy.dtype(numpy.float16), 0x20: numpy.dtype(numpy.float32),
}
_FORMAT_NAMES = {
    "CU_AD_FORMAT_UNSIGNED_INT8": 0x01, "CU_AD_FORMAT_UNSIGNED_INT16": 0x02,
    "CU_AD_FORMAT_UNSIGNED_INT32": 0x03, "CU_AD_FORMAT_SIGNED_INT8": 0x08,
    "CU_AD_FORMAT_SIGNED_INT16": 0x09, "CU_AD_FORMAT_SIGNED_INT32": 0x0A,
    "CU_AD_FORMAT_HALF": 0x10, "CU_AD_FORMAT_FLOAT": 0x20,
}
_MODE_NAMES = {WRAP: "wrap", CLAMP: "clamp", MIRROR: "mirror", BORDER: "border"}
#: Weights of linear filtering: multiples of 1/256 (the texture unit's 1.8 fixed point).
WEIGHT_STEPS = 256
# Coordinates beyond this many texels are the same as this many (every mode has settled
# by then), which keeps floor() of huge or infinite values inside int64.
_FAR = numpy.float32(2.0**24)

_OBJECTS: dict[int, object] = {}
_HANDLES = itertools.count(0x7E5_0000_0001)


# ---------------------------------------------------------------------------
# the objects behind the handles


class Texture:
    """What a texture handle names: ``texels`` (axes z, y, x, channel; a live view of the
    resource), ``ndim`` (1-3: the dimensions of the CUDA array or pitched memory),
    ``resource`` (``'array'``, ``'linear'`` or ``'pitch2d'``), and the sampling."""

    kind = "texture"

    def __init__(self, texels, ndim, resource, address, filter_mode, flags, border):
        self.texels, self.ndim, self.resource = texels, ndim, resource
        self.address = tuple(address)
        self.filter_mode = filter_mode
        self.normalized = bool(flags & NORMALIZED_COORDINATES)
        channel = texels.dtype
        # Integer texels read as integers only with the "read as integer" flag; floats always
        # read as floats (half floats promoted to float32).
        self.integer = channel.kind in "iu" and bool(flags & READ_AS_INTEGER)
        self.value_dtype = channel if self.integer else numpy.dtype(numpy.float32)
        self.border = numpy.array(list(border) + [0.0] * (4 - len(border)), numpy.float32)

    def values(self, index) -> numpy.ndarray:
        """Channel 0 of the texels at ``index`` (z, y, x arrays), as the unit returns them."""
        raw = self.texels[index + (0,)]
        if self.integer or raw.dtype.kind == "f":
            return raw.astype(self.value_dtype)
        return normalized(raw)


class Surface:
    """What a surface handle names: the CUDA array's elements as bytes (axes z, y, and
    x in bytes) and its ``ndim``."""

    kind = "surface"

    def __init__(self, texels, ndim):
        self.element_bytes = texels.dtype.itemsize * texels.shape[-1]
        self.bytes = texels.view(numpy.uint8).reshape(texels.shape[:3] + (self.element_bytes,))
        self.ndim = ndim


def normalized(raw: numpy.ndarray) -> numpy.ndarray:
    """Integer texels as cudaReadModeNormalizedFloat gives them (correctly rounded)."""
    info = numpy.iinfo(raw.dtype)
    if info.min == 0:
        return (raw / numpy.float64(info.max)).astype(numpy.float32)
    return numpy.maximum(raw / numpy.float64(info.max), -1.0).astype(numpy.float32)


def _place() -> str:
    """``file:line`` of the kernel statement that called into this module."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
    return f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else "the kernel"


def register(obj) -> int:
    handle = next(_HANDLES)
    _OBJECTS[handle] = obj
    return handle


def release(handle: int) -> bool:
    return _OBJECTS.pop(int(handle), None) is not None


def lookup(handle, kind: str, function: str):
    """The texture or surface ``handle`` names (the error says what was passed instead)."""
    obj = _OBJECTS.get(int(handle))
    if obj is None or obj.kind != kind:
        other = f"a {obj.kind} object" if obj is not None else "no live object"
        what = "jitkern.compat.texture.TextureObject" if kind == "texture" else "SurfaceObject"
        raise JitkernValueError(
            f"{_place()}: {function}: the handle {int(handle):#x} names {other} of the "
            f"simulated device; pass the .ptr of a {what} made while the simulated device "
            "was the driver (in simulation, textures made on a real GPU cannot be read)")
    return obj


# ---------------------------------------------------------------------------
# texture reads


def _axis_extent(tex: Texture, axis: int) -> int:
    return tex.texels.shape[2 - axis]


def _check_shape(tex: Texture, function: str, dims: int, fetch: bool) -> None:
    if fetch and tex.resource != "linear":
        raise JitkernValueError(
            f"{_place()}: {function} reads linear memory "
            f"(cudaResourceTypeLinear), but this texture is over a {_RESOURCE_TEXT[tex.resource]}; "
            "use tex1D/tex2D/tex3D")
    if not fetch and tex.resource == "linear":
        raise JitkernValueError(
            f"{_place()}: {function} of a texture over linear memory "
            "(cudaResourceTypeLinear): use tex1Dfetch")
    if not fetch and tex.ndim != dims:
        raise JitkernValueError(
            f"{_place()}: {function} of a {tex.ndim}-D texture: use "
            f"tex{tex.ndim}D (the simulator reads a texture with as many coordinates as "
            "its resource has dimensions)")


_RESOURCE_TEXT = {"array": "CUDA array", "linear": "linear memory",
                  "pitch2d": "pitched 2-D memory"}


def _check_result(tex: Texture, function: str, dtype: numpy.dtype) -> None:
    if (tex.value_dtype.kind == "f") != (dtype.kind == "f"):
        channel = tex.texels.dtype
        mode = ("cudaReadModeElementType" if tex.integer or channel.kind == "f"
                else "cudaReadModeNormalizedFloat")
        raise JitkernValueError(
            f"{_place()}: {function}<{_CNAMES.get(dtype.name, dtype.name)}> of a "
            f"texture of {channel.name} texels read with {mode}, which gives "
            f"{'floats' if tex.value_dtype.kind == 'f' else 'integers'}: read it as "
            f"{'float' if tex.value_dtype.kind == 'f' else _CNAMES[channel.name]}")


_CNAMES = {"float32": "float", "float16": "__half", "int8": "char", "uint8": "unsigned char",
           "int16": "short", "uint16": "unsigned short", "int32": "int",
           "uint32": "unsigned int", "float64": "double", "int64": "long long",
           "uint64": "unsigned long long"}


def _texel_coordinate(tex: Texture, axis: int, c) -> numpy.ndarray:
    """Coordinate ``c`` of ``axis`` in texels (normalized ones scaled, wrapped or mirrored)."""
    c = numpy.asarray(c, numpy.float32)
    c = numpy.where(numpy.isnan(c), numpy.float32(0), c)
    c = numpy.clip(c, -_FAR, _FAR)
    if not tex.normalized:
        return c
    mode = tex.address[axis]
    if mode == WRAP:
        c = c - numpy.floor(c)
    elif mode == MIRROR:
        whole = numpy.floor(c)
        frac = c - whole
        c = numpy.where(numpy.mod(whole, 2) == 0, frac, numpy.float32(1) - frac)
    return c * numpy.float32(_axis_extent(tex, axis))


def _address(tex: Texture, axis: int, i) -> tuple:
    """(indices inside the axis, which of them hit the border colour or None)."""
    n = _axis_extent(tex, axis)
    mode = tex.address[axis]
    if tex.normalized and mode == WRAP:
        return numpy.mod(i, n), None
    if mode == BORDER:
        outside = (i < 0) | (i >= n)
        return numpy.clip(i, 0, n - 1), outside
    return numpy.clip(i, 0, n - 1), None  # clamp (and mirror, whose coordinate is mirrored)


def _gather(tex: Texture, corner: list) -> numpy.ndarray:
    """The texels at one corner: per axis x, y, z an (index, border mask) pair."""
    index = (0,) * (3 - len(corner)) + tuple(i for i, _ in reversed(corner))
    values = tex.values(index)
    masks = [m for _, m in corner if m is not None]
    if masks:
        outside = numpy.logical_or.reduce(masks)
        border = tex.border[0].astype(tex.value_dtype)
        values = numpy.where(outside, border, values).astype(tex.value_dtype)
    return values


def _point(tex: Texture, coords) -> numpy.ndarray:
    corner = []
    for axis, c in enumerate(coords):
        i = numpy.floor(_texel_coordinate(tex, axis, c)).astype(numpy.int64)
        corner.append(_address(tex, axis, i))
    return _gather(tex, corner)


def _linear(tex: Texture, coords) -> numpy.ndarray:
    per_axis = []
    for axis, c in enumerate(coords):
        t = _texel_coordinate(tex, axis, c) - numpy.float32(0.5)
        base = numpy.floor(t)
        steps = numpy.float32(WEIGHT_STEPS)
        alpha = numpy.rint((t - base) * steps) / steps  # 9-bit fixed point: k / 256
        i0 = base.astype(numpy.int64)
        per_axis.append([(_address(tex, axis, i0), numpy.float32(1) - alpha),
                         (_address(tex, axis, i0 + 1), alpha)])
    out = None
    for corner in itertools.product(*per_axis):
        weight = corner[0][1]
        for _, w in corner[1:]:
            weight = weight * w  # exact: products of multiples of 1/256 fit float32
        term = weight * _gather(tex, [a for a, _ in corner]).astype(numpy.float32)
        out = term if out is None else out + term
    return out


def sample(handle, dtype, function: str, coords):
    """``function`` (tex1D/tex2D/tex3D) of texture ``handle`` at ``coords`` (x[, y[, z]]),
    as ``dtype``: scalars for one thread's scalars, arrays for arrays of threads."""
    dtype = numpy.dtype(dtype)

    def one(h, cs):
        tex = lookup(h, "texture", function)
        _check_shape(tex, function, len(cs), fetch=False)
        _check_result(tex, function, dtype)
        read = _linear if tex.filter_mode == LINEAR else _point
        return read(tex, cs).astype(dtype)

    return _per_handle(handle, coords, one)


def fetch(handle, dtype, function: str, i):
    """``tex1Dfetch`` of a texture over linear memory: element ``i`` (0 outside, as CUDA
    documents), no filtering, with the texture's read mode."""
    dtype = numpy.dtype(dtype)

    def one(h, cs):
        tex = lookup(h, "texture", function)
        _check_shape(tex, function, 1, fetch=True)
        _check_result(tex, function, dtype)
        n = tex.texels.shape[2]
        idx = numpy.asarray(cs[0]).astype(numpy.int64)
        inside = (idx >= 0) & (idx < n)
        zeros = numpy.zeros_like(idx)
        values = tex.values((zeros, zeros, numpy.where(inside, idx, 0)))
        return numpy.where(inside, values, 0).astype(dtype)

    return _per_handle(handle, (i,), one)


def _per_handle(handle, coords, one):
    """``one(handle, coords)`` per distinct handle (a thread's, or every thread's of an
    array); a scalar for scalar arguments."""
    handles = numpy.asarray(handle)
    scalar = handles.ndim == 0 and all(numpy.ndim(c) == 0 for c in coords)
    if handles.ndim == 0 or (handles == handles.flat[0]).all():
        out = one(handles.flat[0], coords)
    else:
        shape = numpy.broadcast_shapes(handles.shape, *(numpy.shape(c) for c in coords))
        out = None
        for h in numpy.unique(handles):
            part = numpy.broadcast_to(one(h, coords), shape)
            out = part.copy() if out is None else numpy.where(handles == h, part, out)
    out = numpy.asarray(out)
    return out[()] if scalar else out


# ---------------------------------------------------------------------------
# surfaces (one thread at a time: the vectorised path runs surface kernels per thread)


def _surface_place(function: str, handle, dtype, coords, boundary):
    """(the surface, the element's (z, y, x) index or None when a Zero-mode access falls
    outside); raises on a Trap-mode access outside or a misaligned x."""
    surf = lookup(handle, "surface", function)
    dtype = numpy.dtype(dtype)
    if len(coords) != surf.ndim:
        raise JitkernValueError(
            f"{_place()}: {function} of a {surf.ndim}-D surface: use "
            f"surf{surf.ndim}D{function[6:]}")
    if dtype.itemsize != surf.element_bytes:
        raise JitkernValueError(
            f"{_place()}: {function} of {dtype.itemsize}-byte values "
            f"({_CNAMES.get(dtype.name, dtype.name)}) on a surface of {surf.element_bytes}-byte "
            "elements: read and write whole elements")
    x = int(coords[0])
    if x % surf.element_bytes:
        raise KernelAssertionError(
            f"{_place()}: {function}: x = {x} bytes is not a multiple of the "
            f"{surf.element_bytes}-byte element (x is in bytes) in {R.thread_text()}")
    index = [x // surf.element_bytes] + [int(c) for c in coords[1:]]
    extents = [surf.bytes.shape[2], surf.bytes.shape[1], surf.bytes.shape[0]][: len(index)]
    outside = [not 0 <= i < n for i, n in zip(index, extents)]
    if any(outside):
        if boundary == BOUNDARY_TRAP:
            axis = outside.index(True)
            raise KernelAssertionError(
                f"{_place()}: {function}: coordinate {'xyz'[axis]} = "
                f"{coords[axis]}{' bytes' if axis == 0 else ''} is outside the surface "
                f"({_extent_text(surf)}) with cudaBoundaryModeTrap in {R.thread_text()}")
        if boundary == BOUNDARY_ZERO:
            return surf, None
        index = [min(max(i, 0), n - 1) for i, n in zip(index, extents)]
    x, y, z = index + [0] * (3 - len(index))
    return surf, (z, y, x)


def _extent_text(surf: Surface) -> str:
    d, h, w, eb = surf.bytes.shape
    dims = [f"{w} elements of {eb} bytes"] + ([f"{h} rows"] if surf.ndim > 1 else [])
    return ", ".join(dims + ([f"{d} layers"] if surf.ndim > 2 else []))


def surface_read(handle, dtype, function: str, coords, boundary=BOUNDARY_TRAP):
    """``surfNDread<dtype>`` at byte x (and y, z)."""
    surf, place = _surface_place(function, handle, dtype, coords, boundary)
    dtype = numpy.dtype(dtype)
    if place is None:
        return dtype.type(0)
    return surf.bytes[place].view(dtype)[0]


def surface_write(value, handle, function: str, coords, boundary=BOUNDARY_TRAP) -> None:
    """``surfNDwrite(value, ...)`` at byte x (and y, z): the value's bytes."""
    value = numpy.asarray(value)
    surf, place = _surface_place(function, handle, value.dtype, coords, boundary)
    if place is not None:
        surf.bytes[place] = value.reshape(1).view(numpy.uint8)


def names() -> dict:
    """The run-time names the builtins' simulator spellings use."""
    return {"_jk_tex_sample": sample, "_jk_tex_fetch": fetch, "_jk_surf_read": surface_read,
            "_jk_surf_write": surface_write}


# ---------------------------------------------------------------------------
# the driver calls of the simulated device


class _ResourceDesc:
    """The driver's CUDA_RESOURCE_DESC: the fields jitkern sets, all zero at first."""

    def __init__(self):
        self.resType = RESOURCE_ARRAY
        self.res = types.SimpleNamespace(
            array=types.SimpleNamespace(hArray=0),
            linear=types.SimpleNamespace(devPtr=0, format=0, numChannels=0, sizeInBytes=0),
            pitch2D=types.SimpleNamespace(devPtr=0, format=0, numChannels=0, width=0, height=0,
                                          pitchInBytes=0))
        self.flags = 0


class _TextureDesc:
    """The driver's CUDA_TEXTURE_DESC: the fields jitkern sets, all zero at first."""

    def __init__(self):
        self.addressMode = [WRAP] * 3
        self.filterMode = POINT
        self.flags = 0
        self.maxAnisotropy = 0
        self.borderColor = [0.0] * 4


def _enum(value):
    return int(value)


class TextureCalls:
    """``cuTexObjectCreate``/``Destroy``, ``cuSurfObjectCreate``/``Destroy`` and the
    descriptor getters, for a simulated device class to inherit. The device provides:

    - ``sim_array_texels(hArray) -> (texels, ndim)``: a CUDA array's memory as a writable
      NumPy array of axes (depth, height, width, channels) of the channel dtype (1 for the
      missing axes), and whether the array is 1-, 2- or 3-D;
    - ``sim_memory(ptr, nbytes) -> numpy.ndarray``: ``nbytes`` of device memory from
      ``ptr`` as a writable uint8 array (for linear and pitched resources).
    """

    CUDA_RESOURCE_DESC = _ResourceDesc
    CUDA_TEXTURE_DESC = _TextureDesc
    CUresourcetype = staticmethod(_enum)
    CUaddress_mode = staticmethod(_enum)
    CUfilter_mode = staticmethod(_enum)
    CU_TRSF_READ_AS_INTEGER = READ_AS_INTEGER
    CU_TRSF_NORMALIZED_COORDINATES = NORMALIZED_COORDINATES
    CU_TRSF_SRGB = SRGB
    CUarray_format = types.SimpleNamespace(**_FORMAT_NAMES)
    _INVALID_VALUE = 1

    def cuTexObjectCreate(self, res, tex, view=None):
        if view is not None:
            return (self._INVALID_VALUE, 0)
        if int(tex.flags) & SRGB:
            raise JitkernNotImplementedError(
                "cuTexObjectCreate: sRGB textures are not simulated; run on a GPU")
        texels, ndim, resource = self._resource(res)
        modes = [int(m) for m in tex.addressMode] + [WRAP] * 3
        obj = Texture(texels, ndim, resource, modes[:3], int(tex.filterMode), int(tex.flags),
                      [float(c) for c in tex.borderColor])
        obj.descriptors = (res, tex)
        return (0, register(obj))

    def cuTexObjectDestroy(self, handle):
        return (0,) if release(handle) else (self._INVALID_VALUE,)

    def cuSurfObjectCreate(self, res):
        if int(res.resType) != RESOURCE_ARRAY:
            return (self._INVALID_VALUE, 0)
        texels, ndim, _ = self._resource(res)
        obj = Surface(texels, ndim)
        obj.descriptors = (res,)
        return (0, register(obj))

    def cuSurfObjectDestroy(self, handle):
        return (0,) if release(handle) else (self._INVALID_VALUE,)

    def cuTexObjectGetResourceDesc(self, handle):
        obj = _OBJECTS.get(int(handle))
        return (0, obj.descriptors[0]) if obj is not None else (self._INVALID_VALUE, None)

    def cuTexObjectGetTextureDesc(self, handle):
        obj = _OBJECTS.get(int(handle))
        ok = obj is not None and obj.kind == "texture"
        return (0, obj.descriptors[1]) if ok else (self._INVALID_VALUE, None)

    cuSurfObjectGetResourceDesc = cuTexObjectGetResourceDesc

    def _resource(self, res) -> tuple:
        """(texels, ndim, resource kind) of a CUDA_RESOURCE_DESC."""
        kind = int(res.resType)
        if kind == RESOURCE_ARRAY:
            texels, ndim = self.sim_array_texels(res.res.array.hArray)
            return texels, ndim, "array"
        if kind == RESOURCE_LINEAR:
            lin = res.res.linear
            dtype = FORMATS[int(lin.format)]
            nch = int(lin.numChannels)
            count = int(lin.sizeInBytes) // (dtype.itemsize * nch)
            raw = self.sim_memory(int(lin.devPtr), count * dtype.itemsize * nch)
            return raw.view(dtype).reshape(1, 1, count, nch), 1, "linear"
        if kind == RESOURCE_PITCH2D:
            p = res.res.pitch2D
            dtype = FORMATS[int(p.format)]
            nch, width, height = int(p.numChannels), int(p.width), int(p.height)
            pitch = int(p.pitchInBytes)
            row = width * nch * dtype.itemsize
            raw = self.sim_memory(int(p.devPtr), pitch * (height - 1) + row)
            texels = numpy.ndarray((1, height, width, nch), dtype, buffer=raw,
                                   strides=(pitch * height, pitch, nch * dtype.itemsize,
                                            dtype.itemsize))
            return texels, 2, "pitch2d"
        raise JitkernNotImplementedError(
            f"cuTexObjectCreate: resource type {kind} is not simulated (CUDA arrays, linear "
            "and pitched memory are)")


__all__ = ["Surface", "Texture", "TextureCalls", "fetch", "names", "sample", "surface_read",
           "surface_write"]
