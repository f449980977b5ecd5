"""fuse's basic indexing, as NumPy's: of argument arrays, and of values computed inside the
fused function.

- An argument (or a view of one) indexed with ints, slices, ``None`` and ``...`` is a view
  the kernel reads (:class:`~.graph.Input` keeps the keys, applied when the kernel runs).
- A computed value indexed with only ``None``, ``:`` and ``...`` (a batch-norm's
  ``mean[None, :, None, None]``) adds broadcast axes: the operations that made it are read
  again through views of their operands (:func:`reindex`), so the kernel stays elementwise.
- A reduction's result is an array by the time the next kernel runs: any basic index of it
  is a ``view`` node, applied to that array.

Pure functions on shapes, keys and :class:`~.graph.Node` values.
"""

from __future__ import annotations

import dataclasses

import numpy

from ...arrays import describe
from .graph import FuseIndexError, FuseTraceError, Node, _freeze

#: Nodes whose value is an array when the next kernel runs: they are read through a view
#: node, not recomputed.
MATERIALIZED = ("reduce", "view")


def array_signature(value) -> tuple:
    """(dtype, ndim) of an array argument of any kind."""
    dtype, ndim = getattr(value, "dtype", None), getattr(value, "ndim", None)
    if isinstance(dtype, numpy.dtype) and isinstance(ndim, int):
        return dtype, ndim
    info = describe(value)
    return info.dtype, len(info.shape)


def array_shape(value) -> tuple:
    shape = getattr(value, "shape", None)
    return tuple(shape) if shape is not None else tuple(describe(value).shape)


def dummy(shape: tuple):
    """A view of one element with ``shape``: NumPy's indexing rules without the memory."""
    return numpy.lib.stride_tricks.as_strided(numpy.zeros(1), shape, (0,) * len(shape))


def check_key(key) -> None:
    """Refuse what is not basic indexing (masks, integer arrays, array-valued bounds)."""
    items = key if isinstance(key, tuple) else (key,)
    for k in items:
        if k is None or k is Ellipsis or isinstance(k, slice):
            if isinstance(k, slice) and any(_is_traced(p) for p in (k.start, k.stop, k.step)):
                raise FuseTraceError("a slice bound is an array value; use Python numbers")
            continue
        if isinstance(k, (int, numpy.integer)) and not isinstance(k, bool):
            continue
        raise FuseTraceError(
            f"index {k!r} is not supported in a fused function",
            "fuse takes basic indexing of arguments: ints, slices, None, ...; "
            "boolean and integer-array indexing (x[mask]) are not elementwise",
        )


def _is_traced(value) -> bool:
    return hasattr(value, "_trace") and hasattr(value, "_node")


def indexed_shape(shape: tuple, key) -> tuple:
    """The shape of ``a[key]`` for ``a`` of ``shape``; NumPy's IndexError, as fuse's."""
    try:
        return dummy(shape)[key].shape
    except IndexError as exc:
        raise FuseIndexError(f"index {key!r} of an array of shape {shape}: {exc}") from None


def gives_scalar(key, ndim: int) -> bool:
    """Whether NumPy's ``a[key]`` is a scalar (a copy), not a view: an int per axis."""
    items = key if isinstance(key, tuple) else (key,)
    return len(items) == ndim and all(
        isinstance(k, (int, numpy.integer)) and not isinstance(k, bool) for k in items)


def expands_only(key) -> bool:
    """Whether ``key`` only adds axes (``None``, ``:``, ``...``): elementwise on any value."""
    items = key if isinstance(key, tuple) else (key,)
    return all(k is None or k is Ellipsis or k == slice(None) for k in items)


# ---------------------------------------------------------------------------
# indexing a computed value


def reindex(node: Node, key, leaf_view, shape_of=None) -> Node:
    """``node[key]``: the elementwise operations that made ``node`` rebuilt over views of
    their leaves. ``leaf_view(leaf, keys)`` gives an argument leaf read through ``keys`` (one
    after the other); a leaf of ndim m under a value of ndim n first gets n - m leading axes,
    so NumPy's broadcasting lines up. An expand-only ``key`` (``None``, ``:``, ``...``) reads
    every leaf alike; any other needs this call's shapes (``shape_of(node)``): a leaf that
    broadcasts along an axis keeps its one element there."""
    n = node.ndim
    shape = shape_of(node) if shape_of is not None else (1,) * n
    ndim = len(indexed_shape(shape, key))
    items = None if shape_of is None else _axis_items(key, n)
    memo: dict = {}

    def leaf_keys(leaf: Node) -> tuple:
        align = () if leaf.ndim == n else ((None,) * (n - leaf.ndim) + (Ellipsis,),)
        if items is None:
            return (*align, key)
        own = (1,) * (n - leaf.ndim) + tuple(shape_of(leaf))
        return (*align, _leaf_key(items, shape, own))

    def visit(v):
        if not isinstance(v, Node):
            return v
        done = memo.get(id(v))
        if done is not None:
            return done
        if v.ndim == 0:
            out = v  # a scalar broadcasts as it is
        elif v.op == "arg":
            out = leaf_view(v, leaf_keys(v))
        elif v.op in MATERIALIZED:
            out = view_node(v, leaf_keys(v), shape_of(v) if shape_of is not None else None)
        else:
            args = tuple(visit(a) for a in v.args)
            dims = [a.ndim for a in args if isinstance(a, Node)]
            out = dataclasses.replace(v, args=args, ndim=max(dims, default=0))
        memo[id(v)] = out
        return out

    result = visit(node)
    if result.ndim != ndim:
        raise FuseTraceError(
            "indexing a value computed from scalars only: it has no axes in a kernel",
            "index an array (an argument, or a value computed from one)",
        )
    return result


def _axis_items(key, ndim: int) -> list:
    """``key`` per axis of an ``ndim``-d value: None (a new axis), or the int or slice that
    indexes the next axis (``...`` and the missing trailing axes become ``:``)."""
    items = list(key) if isinstance(key, tuple) else [key]
    used = sum(1 for k in items if k is not None and k is not Ellipsis)
    if Ellipsis not in items:
        items.append(Ellipsis)
    at = items.index(Ellipsis)
    return items[:at] + [slice(None)] * (ndim - used) + items[at + 1:]


def _leaf_key(items, shape, own) -> tuple:
    """The key that reads a leaf of (aligned) shape ``own`` for ``value[key]``, ``value``
    of ``shape``: the same index where the leaf spans the axis, its one element where it
    broadcasts."""
    out, axis = [], 0
    for item in items:
        if item is None:
            out.append(None)
            continue
        if own[axis] == shape[axis]:
            out.append(item)
        elif isinstance(item, slice):
            out.append(slice(0, min(1, len(range(*item.indices(shape[axis]))))))
        else:
            out.append(0)
        axis += 1
    return tuple(out)


def view_node(node: Node, keys: tuple, shape: tuple | None = None) -> Node:
    """A reduction's (or a view's) result read through ``keys`` when the next kernel runs;
    ``shape``, its shape in this call, checks the indices (NumPy's IndexError)."""
    base, before = (node.args[0], node.attrs[0]) if node.op == "view" else (node, ())
    shape = (1,) * node.ndim if shape is None else shape
    for k in keys:
        shape = indexed_shape(shape, k)
    frozen = before + tuple(_freeze(k) for k in keys)
    return Node("view", (base,), node.dtype, len(shape), False, (frozen,), node.reduced)


__all__ = ["MATERIALIZED", "array_shape", "array_signature", "check_key", "dummy",
           "expands_only", "gives_scalar", "indexed_shape", "reindex", "view_node"]  # fmt: skip
