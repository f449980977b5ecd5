"""Assignments: ``=``, annotated and augmented assignment, unpacking, and the
stores behind them (:class:`AssignmentsMixin` of the function emitter).
"""

from __future__ import annotations

import ast

from ...errors import JitNameError, JitSyntaxError, JitUnpackError
from .. import infer
from .. import types as T
from ..values import Const, operand, Value
from .common import ArrayDims, BoundMethod
from .names import generated_name
from .spelling import problem
from .texts import _binding_text, _const_text, _item_text, _op_text


class AssignmentsMixin:
    """Assignments for the function emitter."""

    def stmt_Assign(self, node) -> None:
        self.mark(node)
        item = self.expr(node.value)
        if len(node.targets) > 1 and isinstance(item, Value) and isinstance(item.type, T.Scalar):
            item = Value(self.bind_temp(item), item.type)
        for target in node.targets:
            self.assign(target, item)

    def stmt_AnnAssign(self, node) -> None:
        raise problem(
            "annotated assignments are not supported in kernels",
            "drop the annotation, or convert with numpy.float32(...) etc.",
            JitSyntaxError,
        )

    def stmt_AugAssign(self, node) -> None:
        self.mark(node)
        op = type(node.op).__name__
        if isinstance(node.target, ast.Name):
            current = self.lookup_local(node.target.id)
            if current is None:
                raise problem(
                    f"local variable {node.target.id!r} is used before assignment",
                    "assign it first",
                    JitNameError,
                    node=node.target,
                )
            current = self.read_local(node.target, current)
            self.assign(node.target, self.binary(op, current, self.expr(node.value)))
            return
        if isinstance(node.target, (ast.Subscript, ast.Attribute)):
            # x[g(x)] += v, p[i].x += v: the base and index are evaluated once, into a reference
            element = self.expr(node.target)
            if not (isinstance(element, Value) and element.lvalue):
                raise problem("this expression cannot be assigned to", "", JitSyntaxError, node)
            element = self.reference(element)
            result = self.binary(op, element, self.expr(node.value))
            if isinstance(node.target, ast.Attribute):
                self.store_field(element, result, node.target)
            else:
                self.store(element, result, node.target)
            return
        raise problem(
            "only names and elements can be updated in place", "", JitSyntaxError, node.target
        )

    def reference(self, element: Value) -> Value:
        """``element`` held so that its address is computed once, here (x[g(x)] += v)."""
        return self.spelling.reference(self, element)

    def assign(self, target, item) -> None:
        if isinstance(target, ast.Name):
            self.assign_name(target, item)
        elif isinstance(target, ast.Subscript):
            self.store(self.expr(target), item, target)
        elif isinstance(target, ast.Attribute):  # p.x = v, p[i].x = v
            self.store_field(self.expr(target), item, target)
        elif isinstance(target, (ast.Tuple, ast.List)):
            self.unpack(target, item)
        else:
            raise problem(
                f"cannot assign to {type(target).__name__.lower()} in kernels",
                "assign to a name, an array element, a struct field or a tuple of names",
                JitSyntaxError,
                target,
            )

    def store(self, element, item, node) -> None:
        if not (isinstance(element, Value) and element.lvalue):
            raise problem("this expression cannot be assigned to", "", JitSyntaxError, node)
        src = operand(item) if isinstance(item, (Value, Const)) else item
        if (isinstance(item, Const) and not item.is_scalar) or not infer.can_store(
            src, element.type
        ):
            raise problem(
                f"cannot store {_item_text(item)} in an element of type {element.type}",
                "take .real, or convert explicitly",
                node=node,
            )
        self.line(f"{element.code} = {self.convert(item, element.type).code};")

    def store_field(self, field, item, node) -> None:
        """``p.x = v``: a struct field's type is fixed by its declaration, so a value goes in
        as into a variable of that type (same-kind conversions only)."""
        if not (isinstance(field, Value) and field.lvalue):
            raise problem("this expression cannot be assigned to", "", JitSyntaxError, node)
        self.check_assignable(item, field.type, f"field {node.attr!r} of type", node)
        self.line(f"{field.code} = {self.convert(item, field.type).code};")

    def check_assignable(self, item, target_t, what, node) -> None:
        src = operand(item) if isinstance(item, (Value, Const)) else item
        if isinstance(item, Const) and not item.is_scalar:
            raise problem(f"{_const_text(item)} cannot be stored in {what} {target_t}", node=node)
        if not infer.can_assign(src, target_t, self.mode):
            raise problem(
                f"cannot store a value of type {_op_text(src)} in {what} {target_t}",
                "convert explicitly (e.g. numpy.float32(x), int(x)), or give the variable the "
                "wider type at its first assignment (s = 0.0 instead of s = 0)",
                node=node,
            )

    def assign_name(self, target: ast.Name, item) -> None:
        name = target.id
        if name in self.state.aliases:
            raise problem(
                f"{name!r} is bound to {_binding_text(self.state.aliases[name])} and cannot "
                "be reassigned",
                "use a new name",
                node=target,
            )
        existing = self.state.locals.get(name)
        if existing is not None:
            self.check_assignable(item, existing.type, f"variable {name!r} of type", target)
            code = self.convert(item, existing.type).code
            if isinstance(existing.type, T.Struct):
                code = self.copy_struct(code)
            self.line(f"{existing.code} = {code};")
            self.mark_set(existing.code)
            self.track_extent(existing.code, item)
            return
        if isinstance(item, (ArrayDims, BoundMethod)) or (
            isinstance(item, Const) and not item.is_scalar
        ):
            self.state.aliases[name] = item
            return
        value = self.materialize(item)
        t = value.type
        if t is T.void:
            raise problem("this call returns nothing", "call it as a statement", node=target)
        if isinstance(t, T.Array):
            self.state.aliases[name] = value
            return
        cname = self.c_name(name)
        if isinstance(t, T.Opaque) and not t.default_constructible:
            if self.state.depth:
                raise problem(
                    f"{name!r} ({t}) must be first assigned at the top level of the "
                    "function, not inside a block",
                    "move the assignment up",
                    node=target,
                )
            self.line(f"auto {cname} = {value.code};")
            self.state.aliases[name] = Value(cname, t)
            return
        if isinstance(t, T.Struct):  # a struct local holds a copy, as in C
            value = Value(self.copy_struct(value.code), t)
        self.hoist(t, cname)
        if self.state.depth:  # first assigned inside a block: other paths may not assign it
            self.flag_unset(t, cname)
        self.state.locals[name] = Value(cname, t, lvalue=True, weak=value.weak)
        self.line(f"{cname} = {value.code};")
        self.mark_set(cname)
        if self.program.debug and isinstance(t, T.Pointer):
            extent = generated_name("extent", cname)
            self.hoist(T.int64, extent)
            self.state.debug_bounds[cname] = extent
            self.track_extent(cname, value)

    def copy_struct(self, code: str) -> str:
        """The back end's copy of the struct ``code`` (C++ assignment copies already)."""
        return self.spelling.copy_struct(self, code)

    def track_extent(self, cname: str, item) -> None:
        """Debug builds: a pointer local's element count follows its assignments (-1, not
        checked, when the assigned pointer's count is unknown)."""
        extent = self.state.debug_bounds.get(cname)
        if extent is not None and isinstance(item, Value) and isinstance(item.type, T.Pointer):
            self.line(f"{extent} = {self.debug_extent(item) or '-1'};")

    def unpack(self, target, item) -> None:
        items = self.items_of(item, len(target.elts), target)
        for sub, value in zip(target.elts, items):
            self.assign(sub, value)

    def items_of(self, item, count: int, node) -> list:
        if isinstance(item, ArrayDims):
            n = item.array.type.ndim
            getter = self.array_shape if item.attr == "shape" else self.array_stride
            values = [Value(getter(item.array, k), T.int64) for k in range(n)]
        elif isinstance(item, Const) and isinstance(item.value, tuple):
            values = [Const(v) for v in item.value]
        elif isinstance(item, Value) and isinstance(item.type, T.Tuple):
            held = Value(self.bind_temp(item), item.type)
            values = [self.tuple_item(held, k) for k in range(len(item.type.items))]
        else:
            raise problem(f"cannot unpack {_item_text(item)}", "unpack a tuple",
                          JitUnpackError, node=node)
        if len(values) != count:
            raise problem(f"cannot unpack {len(values)} values into {count} names",
                          cls=JitUnpackError, node=node)
        return values
