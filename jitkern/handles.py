"""Opaque CUDA handles passed to kernels by value: texture and surface objects.

A texture object (``cudaTextureObject_t``) or surface object (``cudaSurfaceObject_t``)
is an ``unsigned long long`` in the kernel. The Python objects that hold one
(``jitkern.compat.texture.TextureObject``/``SurfaceObject`` and CuPy's classes of the same
names) expose it as ``.ptr``. They are recognised by class name and module, decided
once per class, so the launch path pays one dict lookup.
"""

from __future__ import annotations

# class name -> the C type of the handle it holds
HANDLE_CTYPES = {
    "TextureObject": "cudaTextureObject_t",
    "SurfaceObject": "cudaSurfaceObject_t",
}
_MODULES = ("jitkern.", "cupy.")

_kinds: dict[type, str | None] = {}


def handle_ctype(cls: type) -> str | None:
    """``'cudaTextureObject_t'``/``'cudaSurfaceObject_t'`` for a texture/surface class, else None."""
    try:
        return _kinds[cls]
    except KeyError:
        pass
    module = getattr(cls, "__module__", "") or ""
    kind = HANDLE_CTYPES.get(cls.__name__) if module.startswith(_MODULES) else None
    _kinds[cls] = kind
    return kind


def handle_value(obj) -> int:
    """The handle as an int (``obj.ptr``)."""
    return int(obj.ptr)
