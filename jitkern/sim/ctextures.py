"""CUDA's texture and surface functions in the C subset (see :mod:`.cexpressions`).

``tex2D<float>(t, x, y)`` reaches the translator as ``tex2D((float)0, t, x, y)`` (the
preprocessor moves the template argument onto a cast, :mod:`.csubset`) and becomes the
JIT's ``jit.texture.tex2D(t, x, y, numpy.float32)``, which the simulator runs against the
simulated device's texture objects (:mod:`.textures`). Surface functions take their
boundary mode as a constant (``cudaBoundaryModeTrap``, CUDA's default, when left out).
"""

from __future__ import annotations

from .csubset import _VECTOR, F32, I32, U64, Pointer, Val

#: CUDA name -> (coordinates, whether it takes a template type, is a write, coordinate type).
_FUNCTIONS = {
    "tex1D": (1, True, False, F32), "tex2D": (2, True, False, F32),
    "tex3D": (3, True, False, F32), "tex1Dfetch": (1, True, False, I32),
    "surf1Dread": (1, True, False, I32), "surf2Dread": (2, True, False, I32),
    "surf3Dread": (3, True, False, I32), "surf1Dwrite": (1, False, True, I32),
    "surf2Dwrite": (2, False, True, I32), "surf3Dwrite": (3, False, True, I32),
}
#: cudaSurfaceBoundaryMode's values.
BOUNDARY_MODES = {"cudaBoundaryModeZero": 0, "cudaBoundaryModeClamp": 1,
                  "cudaBoundaryModeTrap": 2}
_TEXEL_KINDS = "iuf"


def handler(name: str):
    """The translator's handler of CUDA function ``name``, or None."""
    if name not in _FUNCTIONS:
        return None
    return lambda tr, n, node: call(tr, n, node)


def _is_type_marker(node) -> bool:
    return (type(node).__name__ == "Cast" and type(node.expr).__name__ == "Constant"
            and node.expr.value == "0")


def call(tr, name: str, node) -> Val:
    dims, templated, write, coord_type = _FUNCTIONS[name]
    exprs = list(node.args.exprs) if node.args is not None else []
    if templated:
        if not exprs or not _is_type_marker(exprs[0]):
            raise tr.refuse(f"{name}() without its template argument (write {name}<float>(...))",
                            node)
        spelled = getattr(getattr(getattr(exprs[0].to_type, "type", None), "type", None),
                          "names", None) or []
        if len(spelled) == 1 and _VECTOR.fullmatch(spelled[0]):
            raise tr.refuse(f"{name}<{spelled[0]}> (a texel of a CUDA vector type)", node)
        marker, exprs = tr.expr(exprs[0]), exprs[1:]
        result = marker.type
        if result.kind not in _TEXEL_KINDS or result.itemsize > (4 if name[:3] == "tex" else 8):
            raise tr.refuse(f"{name}<{result.name}>", node)
    surface = name.startswith("surf")
    value = None
    if write:
        if not exprs:
            raise tr.refuse(f"{name}() with no arguments", node)
        value, exprs = tr.expr(exprs[0]), exprs[1:]
        if value.is_pointer or value.type.kind not in _TEXEL_KINDS:
            raise tr.refuse(f"{name}() of a value that is not a number of 1 to 8 bytes", node)
    expected = 1 + dims
    if len(exprs) not in ((expected, expected + 1) if surface else (expected,)):
        raise tr.refuse(f"{name}() with {len(exprs) + templated + write} argument(s)", node)
    handle = tr.expr(exprs[0])
    if handle.is_pointer or handle.type.kind not in "iu":
        raise tr.refuse(f"{name}() of something that is not a texture or surface object", node)
    parts = [tr.to(handle, U64, node)]
    for c in exprs[1:1 + dims]:
        v = tr.expr(c)
        if isinstance(v.type, Pointer):
            raise tr.refuse(f"a pointer given to {name}()", node)
        parts.append(tr.to(v, coord_type, node))
    if templated:
        parts.append(f"numpy.{result.name}")
    if surface:
        parts.append(str(_boundary(tr, name, exprs[1 + dims:], node)))
    if write:
        parts.insert(0, value.code)
        return Val(f"jit.texture.{name}({', '.join(parts)})", None)
    return Val(f"jit.texture.{name}({', '.join(parts)})", result)


def _boundary(tr, name: str, rest: list, node) -> int:
    """The boundary mode argument's value: a constant (CUDA's Trap when there is none)."""
    if not rest:
        return BOUNDARY_MODES["cudaBoundaryModeTrap"]
    arg = rest[0]
    kind = type(arg).__name__
    if kind == "ID" and arg.name in BOUNDARY_MODES:
        return BOUNDARY_MODES[arg.name]
    if kind == "Constant" and arg.type == "int" and int(arg.value, 0) in (0, 1, 2):
        return int(arg.value, 0)
    raise tr.refuse(f"a boundary mode of {name}() that is not cudaBoundaryModeZero, Clamp or "
                    "Trap", node)
