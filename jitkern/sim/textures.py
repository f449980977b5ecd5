"""How simulated kernels read and write texture and surface objects.

The objects are the simulated device's (jitkern/sim/texobjects.py: what
``cuTexObjectCreate``/``cuSurfObjectCreate`` made, by handle). A kernel's
``tex2D<float>(t, x, y)`` (RawKernel/ElementwiseKernel C, through :mod:`.ctextures`) or
``jit.texture.tex2D(t, x, y, numpy.float32)`` (a JIT kernel) calls :func:`sample` with the
handle, which models the texture unit:

- point filtering reads texel ``floor(x)``; linear filtering blends the texels around
  ``x - 0.5`` (texel centres at ``i + 0.5``) with the hardware's 9-bit fixed-point
  weights: the fractional part is rounded to a multiple of 1/256 (1.8 format) before it
  weighs, as CUDA's programming guide describes, so results equal a GPU's wherever the
  texture unit's arithmetic is exact (and are within float32 rounding elsewhere);
- normalized coordinates are scaled by the extent; address modes clamp, border (the
  border colour outside), and for normalized coordinates wrap and mirror (CUDA supports
  wrap and mirror only for normalized coordinates: with unnormalized ones they clamp).
  Mirror folds the texel index ``i`` (period ``2n``; ``i`` in ``[n, 2n)`` reads
  ``2n - 1 - i``), not the coordinate, as an H200 does;
- linear filtering reads a 1-D CUDA array as one row of a 2-D texture at y = 0, so with a
  border y address mode the border colour weighs 1/2 (an H200 does; other modes fold row
  -1 onto row 0);
- ``cudaReadModeNormalizedFloat`` turns integer texels into floats in [0, 1] (unsigned,
  ``v / (2**bits - 1)``) or [-1, 1] (signed); half-float texels read as float32, and a
  linearly filtered half texture's result is rounded to half (to nearest, ties away from
  zero), as an H200's is.

Texture reads are pure functions of the handle and coordinates and work on arrays of
coordinates as well as on one thread's scalars (the vectorised path calls them with
arrays). Surface reads and writes take byte x coordinates, as CUDA's do, and the boundary
mode: ``cudaBoundaryModeTrap`` (the default: an out-of-range access is an error, as the
GPU's fault), ``Zero`` (reads give 0, writes are dropped) and ``Clamp``; kernels that use
surfaces run on the per-thread scheduler (the vectorised path refuses them: surface memory
is no kernel argument, so the differential check could not compare it).
"""

from __future__ import annotations

import itertools
import sys

import numpy

from ..errors import JitkernValueError, KernelAssertionError
from .texobjects import BORDER, LINEAR, MIRROR, OBJECTS, WRAP, Surface, Texture
from . import runtime as R

BOUNDARY_ZERO, BOUNDARY_CLAMP, BOUNDARY_TRAP = 0, 1, 2
#: Weights of linear filtering: multiples of 1/256 (the texture unit's 1.8 fixed point).
WEIGHT_STEPS = 256
# Coordinates beyond this many texels are the same as this many (every mode has settled
# by then), which keeps floor() of huge or infinite values inside int64.
_FAR = numpy.float32(2.0**24)


def _place() -> str:
    """``file:line`` of the kernel statement that called into this module."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
    return f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else "the kernel"


def _values_at(tex, index) -> numpy.ndarray:
    """Channel 0 of the texels at ``index`` (z, y, x arrays), as the unit returns them."""
    raw = tex.texels[index + (0,)]
    if tex.integer or raw.dtype.kind == "f":
        return raw.astype(tex.value_dtype)
    return normalized(raw)


def normalized(raw: numpy.ndarray) -> numpy.ndarray:
    """Integer texels as cudaReadModeNormalizedFloat gives them (correctly rounded)."""
    info = numpy.iinfo(raw.dtype)
    if info.min == 0:
        return (raw / numpy.float64(info.max)).astype(numpy.float32)
    return numpy.maximum(raw / numpy.float64(info.max), -1.0).astype(numpy.float32)


def lookup(handle, kind: str, function: str):
    """The texture or surface ``handle`` names (the error says what was passed instead)."""
    obj = OBJECTS.get(int(handle))
    if obj is None or obj.kind != kind:
        other = f"a {obj.kind} object" if obj is not None else "no live object"
        what = "TextureObject" if kind == "texture" else "SurfaceObject"
        raise JitkernValueError(
            f"{_place()}: {function}: the handle {int(handle):#x} names {other} of the "
            f"simulated device; pass a jitkern.compat.texture.{what} (or its .ptr) made "
            "inside jitkern.simulated_device() (textures made on a GPU cannot be simulated)")
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
    if tex.address[axis] == WRAP:
        c = c - numpy.floor(c)
    return c * numpy.float32(_axis_extent(tex, axis))  # mirror folds the index (_address)


def _address(tex: Texture, axis: int, i) -> tuple:
    """(indices inside the axis, which of them hit the border colour or None)."""
    n = _axis_extent(tex, axis)
    mode = tex.address[axis]
    if tex.normalized and mode == WRAP:
        return numpy.mod(i, n), None
    if tex.normalized and mode == MIRROR:
        j = numpy.mod(i, 2 * n)
        return numpy.where(j >= n, 2 * n - 1 - j, j), None
    if mode == BORDER:
        outside = (i < 0) | (i >= n)
        return numpy.clip(i, 0, n - 1), outside
    return numpy.clip(i, 0, n - 1), None  # clamp (and mirror, whose coordinate is mirrored)


def _gather(tex: Texture, corner: list) -> numpy.ndarray:
    """The texels at one corner: per axis x, y, z an (index, border mask) pair."""
    index = (0,) * (3 - len(corner)) + tuple(i for i, _ in reversed(corner))
    values = _values_at(tex, index)
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
    if tex.ndim == 1 and tex.resource == "array":
        coords = (coords[0], numpy.zeros(numpy.shape(coords[0]), numpy.float32))
    half = tex.texels.dtype == numpy.float16
    # a half texture's terms add exactly in float64 before the one rounding to half
    acc = numpy.float64 if half else numpy.float32
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
        term = weight.astype(acc) * _gather(tex, [a for a, _ in corner]).astype(acc)
        out = term if out is None else out + term
    return _half_away(out) if half else out


def _half_away(v: numpy.ndarray) -> numpy.ndarray:
    """``v`` rounded to half float, to nearest with ties away from zero, as float32."""
    with numpy.errstate(over="ignore", invalid="ignore"):  # a huge border colour: inf
        r = v.astype(numpy.float16)
        away = numpy.nextafter(r, numpy.copysign(numpy.inf, v).astype(numpy.float16))
        tie = (numpy.abs(v - r) == numpy.abs(away - v)) & (numpy.abs(away) > numpy.abs(r))
    return numpy.where(tie, away, r).astype(numpy.float32)


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
        values = _values_at(tex, (zeros, zeros, numpy.where(inside, idx, 0)))
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


__all__ = ["fetch", "names", "sample", "surface_read", "surface_write"]
