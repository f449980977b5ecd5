"""``x[i]``: array elements and row views, tuples, shapes, and a debug build's checked
accesses (:class:`SubscriptsMixin` of the expression emitter).
"""

from __future__ import annotations

import ast

import numpy

from ...errors import JitSyntaxError
from ... import debugrecord as debugcheck  # Site: the ground module both stages read
from .. import builtins as B
from .. import types as T
from ..values import Const, Value
from .common import (
    ArrayDims,
    _describe_const,
    _launch_in_kernel_problem,
    _refuse_negative,
    _tuple_index_problem,
)
from .spelling import problem


class SubscriptsMixin:
    """``x[i]`` for the expression emitter."""

    # -- subscripts -------------------------------------------------------

    def expr_Subscript(self, node):
        base = self.expr(node.value)
        index_node = node.slice
        if isinstance(index_node, ast.Slice):
            raise problem(
                "slices are not supported in kernels", "index element by element", JitSyntaxError
            )
        if isinstance(base, ArrayDims):
            k = self.const_int(index_node, f"{base.attr} index")
            return Value(
                self.array_shape(base.array, k)
                if base.attr == "shape"
                else self.array_stride(base.array, k),
                T.int64,
            )
        if isinstance(base, Const):
            return self.const_subscript(base.value, index_node)
        if isinstance(base, Value) and isinstance(base.type, T.Tuple):
            return self.tuple_item(base, self.const_int(index_node, "a tuple index"))
        if self.program.debug:
            return self.subscript(base, self.index_items(index_node), ast.unparse(node.value), node)
        return self.subscript(base, self.index_items(index_node))

    def const_subscript(self, obj, index_node):
        if isinstance(obj, B.CubTemplate):
            items = index_node.elts if isinstance(index_node, ast.Tuple) else [index_node]
            params = [self.expr(i) for i in items]
            if not all(isinstance(p, Const) for p in params):
                raise problem(f"cub.{obj.name}[...] takes compile-time parameters")
            try:
                return Const(obj.instantiate([p.value for p in params]))
            except TypeError as exc:
                raise problem(str(exc)) from None
        if hasattr(obj, "py_func") and getattr(obj, "device", None) is not None:
            raise _launch_in_kernel_problem(obj)
        if isinstance(obj, tuple):
            k = self.const_int(index_node, "a tuple index")
            if not -len(obj) <= k < len(obj):
                raise _tuple_index_problem(k, len(obj))
            return Const(obj[k])
        raise problem(f"{_describe_const(obj)} cannot be indexed")

    def index_items(self, index_node) -> list:
        if isinstance(index_node, ast.Tuple):
            return [self.materialize(self.array_index(i)) for i in index_node.elts]
        item = self.array_index(index_node)
        if isinstance(item, Value) and isinstance(item.type, T.Tuple):
            return [self.tuple_item(item, k) for k in range(len(item.type.items))]
        if isinstance(item, Const) and isinstance(item.value, tuple):
            return [self.materialize(Const(v)) for v in item.value]
        return [self.materialize(item)]

    def array_index(self, node):
        """One index of an array element; a negative constant is refused: kernels index
        memory directly, so x[-1] would read before the array, not its last element."""
        item = self.expr(node)
        values = item.value if isinstance(item, Const) and isinstance(item.value, tuple) else (
            item.value if isinstance(item, Const) else None,
        )
        _refuse_negative(values, node)
        return item

    def subscript(self, base: Value, indices: list, name: str | None = None, node=None) -> Value:
        """``base[indices]``; in a debug build each index is checked against its extent
        (``name`` and ``node``: what the error message names, and where)."""
        checked = self.checked_subscript(base, indices, name, node)
        return self.spelling.subscript(self, base, indices, checked)

    def checked_subscript(self, base: Value, indices: list, name, node) -> Value:
        """``base[indices]`` after every check, its type, and its C++ (which is CUDA's
        spelling; the simulator's writes its own)."""
        t = base.type
        for idx in indices:
            if not (isinstance(idx.type, T.Scalar) and idx.type.kind in "biu"):
                raise problem(f"an index must be an integer, got {idx.type}")
        if isinstance(t, T.Tuple):
            raise problem("tuples are indexed with constant integers")
        if isinstance(t, T.FancyIterator):  # it[k]: the value it computes there (read-only)
            if len(indices) != 1:
                raise problem(f"a {t.describe()} takes one index")
            return Value(f"{base.code}[{indices[0].code}]", t.elem)
        if isinstance(t, T.Pointer):
            if len(indices) != 1:
                raise problem("a pointer takes one index")
            if self.program.debug:
                checked = self.checked_element(base, indices[0], t.elem, name, node)
                if checked is not None:
                    return checked
            return Value(f"{base.code}[{indices[0].code}]", t.elem, lvalue=True)
        if not isinstance(t, T.Array):
            raise problem(f"a value of type {t} cannot be indexed")
        if len(indices) > t.ndim:
            raise problem(
                f"too many indices ({len(indices)}) for a {t.ndim}-d array",
                "index a 0-d array with x[()]" if t.ndim == 0 else "",
            )
        if t.ndim == 0:  # x[()]: the one element
            return Value(f"(*{base.code})", t.dtype, lvalue=True)
        if t.is_pointer_like:
            if self.program.debug:
                checked = self.checked_element(base, indices[0], t.dtype, name, node)
                if checked is not None:
                    return checked
            return Value(f"{base.code}[{indices[0].code}]", t.dtype, lvalue=True)
        if self.program.debug:
            return self.checked_subarray(base, indices, name, node)
        ic = t.index_ctype
        offset = " + ".join(
            f"({ic})({idx.code}) * {base.code}.strides[{k}]" for k, idx in enumerate(indices)
        )
        address = f"(char*){base.code}.ptr + {offset}"
        if len(indices) == t.ndim:
            return Value(f"(*({t.dtype.ctype}*)({address}))", t.dtype, lvalue=True)
        rest = range(len(indices), t.ndim)
        sub_t = T.array(t.dtype, t.ndim - len(indices), False, t.index32)
        shape = ", ".join(f"{base.code}.shape[{k}]" for k in rest)
        strides = ", ".join(f"{base.code}.strides[{k}]" for k in rest)
        code = f"{sub_t.ctype}{{({t.dtype.ctype}*)({address}), {{{shape}}}, {{{strides}}}}}"
        return Value(code, sub_t)

    # -- debug builds: checked accesses (jk::dbg in program.DEBUG_HELPERS) ----

    def checked_element(self, base: Value, index: Value, elem, name, node):
        """``base[index]`` on a 1-D contiguous array or a shared-memory pointer, checked
        against its element count; None when that count is not known here."""
        extent = self.debug_extent(base)
        if extent is None or not isinstance(elem, T.Scalar):
            return None
        kind = "array"
        if isinstance(base.type, T.Pointer):  # jit.local_memory's or shared memory
            kind = "local" if base.type.space == "local" else "shared"
        site = self.debug_site(base, name, node, kind)
        code = f"(*jk::dbg::at1({base.code}, (long long)({index.code}), {extent}, {site}))"
        return Value(code, elem, lvalue=True)

    def checked_subarray(self, base: Value, indices: list, name, node) -> Value:
        """``base[i0, ...]`` on an array that carries its shape: each index on its axis."""
        t = base.type
        site = self.debug_site(base, name, node, "array")
        args = ", ".join(f"({idx.code})" for idx in indices)
        if len(indices) == t.ndim:
            return Value(f"(*jk::dbg::at({base.code}, {site}, {args}))", t.dtype, lvalue=True)
        sub_t = T.array(t.dtype, t.ndim - len(indices), False, t.index32)
        return Value(f"jk::dbg::sub({base.code}, {site}, {args})", sub_t)

    def debug_site(self, base: Value, name, node, kind: str) -> int:
        line = self.source.position(node)[0] if node is not None else self.state.debug_line
        site = debugcheck.Site(self.source.filename, line, name or self.debug_name(base), kind)
        return self.program.debug_site(site)

    def debug_extent(self, base: Value) -> str | None:
        """C++ for the element count of a pointer-like array or pointer (the emitter knows)."""
        return None

    def debug_name(self, base: Value) -> str:
        return "an array"

    def tuple_item(self, item: Value, k: int) -> Value:
        checked = self.checked_tuple_item(item, k)
        return self.spelling.tuple_item(self, item, k, checked)

    def checked_tuple_item(self, item: Value, k: int) -> Value:
        """Item ``k`` of a tuple after the checks, its type, and its C++."""
        items = item.type.items
        if not -len(items) <= k < len(items):
            raise _tuple_index_problem(k, len(items))
        k %= len(items)
        return Value(item.code + ".tail" * k + ".head", items[k])

    def const_int(self, node, what: str) -> int:
        item = self.expr(node)
        if (
            isinstance(item, Const)
            and isinstance(item.value, (int, numpy.integer))
            and not isinstance(item.value, bool)
        ):
            return int(item.value)
        raise problem(f"{what} must be a compile-time integer")
