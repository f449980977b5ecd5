"""ReductionKernel's checks of what it is given at construction and call: the axis
argument, ``reduce_type``, and arguments shifted by one (identity given as post_map_expr)."""

from __future__ import annotations

import re

import numpy

from ..compiler.strings.params import CTYPES, CUPY_CTYPES, ParamError, ctype_of
from ..errors import JitkernAxisError, JitkernTypeError, JitkernValueError


def normalize_axis(axis, ndim: int, kernel: str) -> tuple:
    """``axis`` (None, int or tuple; negatives allowed) -> sorted tuple of distinct axes."""
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, tuple) else (axis,)
    out = []
    for ax in items:
        if not isinstance(ax, (int, numpy.integer)) or isinstance(ax, bool):
            raise JitkernTypeError(f"{kernel}: axis must be an int or a tuple of ints, got {axis!r}")
        ax = int(ax)
        if not -ndim <= ax < ndim:
            raise JitkernAxisError(
                f"{kernel}: axis {ax} is out of bounds for an array of dimension {ndim}"
            )
        ax %= ndim
        if ax in out:
            raise JitkernValueError(f"{kernel}: duplicate value in axis: {axis!r}")
        out.append(ax)
    return tuple(sorted(out))


_C_TYPE_WORDS = frozenset(
    "signed unsigned char short int long float double bool void size_t ptrdiff_t half __half "
    "__nv_bfloat16 int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t "
    "const".split())


def _checked_reduce_type(value, params, preamble, kernel: str):
    """``reduce_type`` as a C type name, refused at construction when it is none this kernel
    can know (a C scalar, a parameter's type or placeholder, a name the preamble defines, a
    template or namespaced type), rather than by NVRTC inside generated code."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        try:
            return ctype_of(numpy.dtype(value))
        except (TypeError, ValueError) as exc:
            raise JitkernTypeError(
                f"{kernel}: reduce_type: expected a C type name or a NumPy dtype, got "
                f"{value!r} ({exc})") from None
    text = value.strip()
    known = set(CTYPES.values()) | set(CUPY_CTYPES.values()) | {p.ctype for p in params}
    if text in known or "<" in text or "::" in text:
        return text
    words = re.findall(r"[A-Za-z_]\w*", text)
    preamble = preamble if isinstance(preamble, str) else ""
    if words and all(w in _C_TYPE_WORDS or w in known or re.search(rf"\b{w}\b", preamble)
                     for w in words) and re.fullmatch(r"[\w\s\*]+", text):
        return text
    hint = ""
    try:
        hint = f"; {text!r} is NumPy's name: give the C type {ctype_of(numpy.dtype(text))!r}"
    except (TypeError, ValueError, ParamError):
        pass
    raise JitkernValueError(
        f"{kernel}: reduce_type {value!r} is not a C type this kernel knows (a C scalar type, "
        f"a parameter's type, or a type its preamble defines){hint}")


def _check_shifted_arguments(kernel, identity, name) -> None:
    """Catch ``ReductionKernel(..., 'a + b', '0', 'my_name')``: identity given as post_map_expr."""
    post = kernel.post_map_expr.strip()
    outputs = {p.name for p in kernel.out_params}
    looks_like_literal = post.replace(".", "", 1).replace("-", "", 1).isdigit()
    if (
        looks_like_literal
        and isinstance(identity, str)
        and identity.isidentifier()
        and not any(o in post for o in outputs)
    ):
        raise JitkernValueError(
            f"{name}: post_map_expr is {post!r} and identity is {identity!r}: the arguments look "
            "shifted by one. The order is (in_params, out_params, map_expr, reduce_expr, "
            f"post_map_expr, identity, name): e.g. ReductionKernel(..., {kernel.reduce_expr!r}, "
            f"'{kernel.out_params[0].name} = a', {post!r}, {identity!r})"
        )
