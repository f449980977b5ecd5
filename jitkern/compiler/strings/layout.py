"""The string kernels' shapes: broadcasting and collapsing dimensions.

Pure functions over shapes and byte strides (no device work), shared by
ElementwiseKernel and ReductionKernel and tested on the CPU. What each argument is
(a scalar or an array, and its layout) is read by runtime/args.py, the one reader.
"""

from __future__ import annotations

from ... import layout
from ...layout import broadcast_strides, c_strides, max_extent  # noqa: F401 (kernels read them here)
from ...errors import JitkernValueError


def broadcast_shape(shapes, kernel: str) -> tuple:
    """NumPy's broadcast of ``shapes`` (raises naming every shape when they disagree)."""
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for shape in shapes:
        offset = ndim - len(shape)
        for k, s in enumerate(shape):
            cur = out[offset + k]
            if cur == 1:
                out[offset + k] = s
            elif s != 1 and s != cur:
                listed = ", ".join(str(tuple(x)) for x in shapes)
                raise JitkernValueError(f"{kernel}: shapes {listed} cannot be broadcast together")
    return tuple(out)


def collapse(shape, strides_list, *, keep=False):
    """Merge adjacent dimensions that every array walks contiguously; drop size-1 ones.

    Returns ``(shape, [strides, ...])`` describing the same element order (C order
    over ``shape``). With ``keep`` nothing is merged. An all-size-1 shape collapses to
    ``()``: the launch struct then has no axis (generated code depends on it).
    """
    if keep:
        return tuple(shape), [tuple(s) for s in strides_list]
    return layout.collapse(shape, *strides_list, min_ndim=0)
