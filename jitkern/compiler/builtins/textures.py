"""Texture and surface object reads and writes: ``jit.texture.tex2D(t, x, y, numpy.float32)``.

A texture or surface object reaches a kernel as its 64-bit handle (``TextureObject.ptr``,
``SurfaceObject.ptr``; in CUDA ``cudaTextureObject_t`` is ``unsigned long long``). The
records emit CUDA's template functions (``tex2D<float>(t, x, y)``) and, for the simulator,
calls of :mod:`jitkern.sim.textures`, which reads the simulated device's objects. The
string kernels' translation into JIT kernels (sim/ctextures.py) spells CUDA's calls with
these records, so RawKernel and ElementwiseKernel textures run in the simulator too.
"""

from __future__ import annotations

import numpy

from ...errors import JitkernTypeError
from .. import types as T
from ..values import Const
from .records import Builtin, Namespace, Sig, const_int, scalar_of

#: The element types CUDA's texture fetches return (``tex2D<T>``).
TEXEL_TYPES = (T.int8, T.uint8, T.int16, T.uint16, T.int32, T.uint32, T.float32)
#: Surface reads and writes move whole elements of these sizes.
SURFACE_TYPES = TEXEL_TYPES + (T.int64, T.uint64, T.float64)
#: cudaBoundaryModeZero, Clamp, Trap (the default).
BOUNDARY_MODES = {0: "cudaBoundaryModeZero", 1: "cudaBoundaryModeClamp",
                  2: "cudaBoundaryModeTrap"}
_AXES = "xyz"


def _handle(item, what: str):
    t = scalar_of(item, what)
    if t.is_complex or t.is_float or t is T.bool_:
        raise JitkernTypeError(f"{what} must be an object's handle (an integer), got {t}")


def _element_type(item, allowed) -> T.Scalar:
    t = None
    if isinstance(item, Const):
        try:
            t = T.scalar_from_dtype(numpy.dtype(item.value))
        except TypeError:
            t = None
    if t not in allowed:
        names = ", ".join(a.name for a in allowed)
        raise JitkernTypeError(f"dtype must be a compile-time NumPy dtype, one of {names}; got "
                               f"{getattr(item, 'value', item)!r}")
    return t


def _boundary(item) -> int:
    return const_int(item, "boundary (cudaBoundaryModeZero/Clamp/Trap: 0, 1 or 2)",
                     set(BOUNDARY_MODES))


def _tuple(codes) -> str:
    return "(" + "".join(f"{c}, " for c in codes) + ")"


def _texture_read(cname: str, dims: int, fetch: bool = False) -> Builtin:
    coords = ("i",) if fetch else tuple(_AXES[:dims])
    coord_type = T.int32 if fetch else T.float32

    def rule(items, mode):
        _handle(items[0], "texture")
        result = _element_type(items[-1], TEXEL_TYPES)
        return Sig((T.uint64,) + (coord_type,) * len(coords) + (None,), result)

    def template(codes, sig, items, ctx):
        args = ", ".join(codes[1:-1])
        return f"{cname}<{sig.result.ctype}>((cudaTextureObject_t){codes[0]}, {args})"

    def py(codes, sig, items, ctx):
        call = "_jk_tex_fetch" if fetch else "_jk_tex_sample"
        where = codes[1] if fetch else _tuple(codes[1:-1])
        return f"{call}({codes[0]}, {ctx.type_code(sig.result)}, {cname!r}, {where})"

    what = ("element i of a texture over linear memory (no filtering; 0 outside)" if fetch else
            f"the texture at {', '.join(coords)} (float texel coordinates, or normalized ones)")
    return Builtin(
        f"texture.{cname}",
        ("texture", *coords, "dtype"),
        "texture: the object's handle (TextureObject.ptr); dtype: "
        + "/".join(t.name for t in TEXEL_TYPES),
        rule,
        template,
        f"CUDA's {cname}<T>: {what}, as dtype.",
        "texture",
        py=py,
    )


def _surface_read(dims: int) -> Builtin:
    cname = f"surf{dims}Dread"
    coords = tuple(_AXES[:dims])

    def rule(items, mode):
        _handle(items[0], "surface")
        _boundary(items[-1])
        result = _element_type(items[-2], SURFACE_TYPES)
        return Sig((T.uint64,) + (T.int32,) * dims + (None, None), result)

    def template(codes, sig, items, ctx):
        args = ", ".join(codes[1:1 + dims])
        mode = BOUNDARY_MODES[int(items[-1].value)]
        return f"{cname}<{sig.result.ctype}>((cudaSurfaceObject_t){codes[0]}, {args}, {mode})"

    def py(codes, sig, items, ctx):
        where = _tuple(codes[1:1 + dims])
        return (f"_jk_surf_read({codes[0]}, {ctx.type_code(sig.result)}, {cname!r}, {where}, "
                f"{int(items[-1].value)})")

    return Builtin(
        f"texture.{cname}",
        ("surface", *coords, "dtype", "boundary=2"),
        "surface: the object's handle (SurfaceObject.ptr); x in bytes; dtype: "
        + "/".join(t.name for t in SURFACE_TYPES),
        rule,
        template,
        f"CUDA's {cname}<T>: the element at byte x{', row y' if dims > 1 else ''}"
        f"{', layer z' if dims > 2 else ''}; boundary: 0 zero, 1 clamp, 2 trap (default).",
        "texture",
        py=py,
    )


def _surface_write(dims: int) -> Builtin:
    cname = f"surf{dims}Dwrite"
    coords = tuple(_AXES[:dims])

    def rule(items, mode):
        value = scalar_of(items[0], "value")
        if value not in SURFACE_TYPES:
            raise JitkernTypeError(
                f"value must be one of {', '.join(t.name for t in SURFACE_TYPES)}, got {value}")
        _handle(items[1], "surface")
        _boundary(items[-1])
        return Sig((None, T.uint64) + (T.int32,) * dims + (None,), T.void)

    def template(codes, sig, items, ctx):
        args = ", ".join(codes[2:2 + dims])
        mode = BOUNDARY_MODES[int(items[-1].value)]
        return f"{cname}({codes[0]}, (cudaSurfaceObject_t){codes[1]}, {args}, {mode})"

    def py(codes, sig, items, ctx):
        where = _tuple(codes[2:2 + dims])
        return (f"_jk_surf_write({codes[0]}, {codes[1]}, {cname!r}, {where}, "
                f"{int(items[-1].value)})")

    return Builtin(
        f"texture.{cname}",
        ("value", "surface", *coords, "boundary=2"),
        "value: a number of the surface's element size; x in bytes",
        rule,
        template,
        f"CUDA's {cname}: writes value's bytes at byte x{', row y' if dims > 1 else ''}"
        f"{', layer z' if dims > 2 else ''}; boundary as for reads.",
        "texture",
        py=py,
    )


TEXTURE_RECORDS = {
    "tex1D": _texture_read("tex1D", 1),
    "tex2D": _texture_read("tex2D", 2),
    "tex3D": _texture_read("tex3D", 3),
    "tex1Dfetch": _texture_read("tex1Dfetch", 1, fetch=True),
    **{f"surf{n}Dread": _surface_read(n) for n in (1, 2, 3)},
    **{f"surf{n}Dwrite": _surface_write(n) for n in (1, 2, 3)},
}

texture = Namespace("texture", TEXTURE_RECORDS)

