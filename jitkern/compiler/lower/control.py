"""Control flow: conditions, ``if``/``while``/``for`` (over ``range``, ``jit.range`` or
a constant tuple), ``break``/``continue``, ``return`` and ``assert``
(:class:`ControlFlowMixin` of the function emitter).
"""

from __future__ import annotations

import ast

from ...errors import JitNameError, JitSyntaxError, JitValueError
from .. import builtins as B
from .. import infer
from .. import types as T
from ..values import Const, operand, Value
from .spelling import CompileProblem, problem
from .texts import _item_text, _op_text, unroll_pragma


class ControlFlowMixin:
    """Control flow for the function emitter."""

    # -- control flow ------------------------------------------------------

    def condition(self, node, item=None) -> str:
        """The C++ bool of a condition (``item``: ``node`` already lowered by truth_item)."""
        value = self.materialize(self.truth_item(node) if item is None else item)
        if not isinstance(value.type, T.Scalar):
            raise problem(f"a condition must be a number or bool, got {value.type}", node=node)
        return self.convert(value, T.bool_).code

    def stmt_If(self, node) -> None:
        test = self.truth_item(node.test)  # lowered once: its temporaries are declared once
        if isinstance(test, Const):
            # compile-time condition (e.g. on x.dtype): only the taken branch is compiled
            self.block(node.body if test.value else node.orelse)
            return
        self.mark(node)
        self.open_block("if", self.condition(node.test, test))
        self.nested(node.body)
        orelse = node.orelse
        while len(orelse) == 1 and isinstance(orelse[0], ast.If):
            elif_node = orelse[0]
            self.mark_branch(elif_node)
            self.open_block("elif", self.condition(elif_node.test))
            self.nested(elif_node.body)
            orelse = elif_node.orelse
        if orelse:
            self.open_block("else")
            self.nested(orelse)
        self.close_block()

    def stmt_While(self, node) -> None:
        if node.orelse:
            raise problem(
                "while ... else is not supported in kernels",
                "use a flag variable",
                JitSyntaxError,
                node.orelse[0],
            )
        self.mark(node)
        self.open_block("while", self.condition(node.test))
        self.loop_body(node.body)
        self.close_block()

    def loop_body(self, stmts, var: str | None = None) -> None:
        self.state.loop_depth += 1
        try:
            self.nested(stmts, var)
        finally:
            self.state.loop_depth -= 1

    def stmt_Break(self, node) -> None:
        self.mark(node)
        self.line("break;")

    def stmt_Continue(self, node) -> None:
        self.mark(node)
        self.line("continue;")

    def stmt_For(self, node) -> None:
        if node.orelse:
            raise problem(
                "for ... else is not supported in kernels",
                "use a flag variable",
                JitSyntaxError,
                node.orelse[0],
            )
        if not isinstance(node.target, ast.Name):
            raise problem(
                "the loop variable must be a single name", "", JitSyntaxError, node.target
            )
        if not isinstance(node.iter, ast.Call):
            iterable = self.expr(node.iter)
            if isinstance(iterable, Const) and isinstance(iterable.value, tuple):
                self.for_constants(node, iterable.value)
                return
        record, args, kwargs = self.range_call(node.iter)
        bound = self.bind(record, args, kwargs)
        start, stop, step = bound[:3]
        unroll = bound[3].value if len(bound) > 3 else None
        if isinstance(stop, Const) and stop.value is None:
            start, stop = Const(0), start
        self.mark(node)
        var = self.loop_variable(node.target, [start, stop, step])
        t = var.type
        arg_nodes = list(node.iter.args) + [kw.value for kw in node.iter.keywords]
        start_node, stop_node, step_node = (
            [None] + arg_nodes[:1] + [None]
            if len(node.iter.args) == 1
            else (arg_nodes + [None, None, None])[:3]
        )
        stop_code = self.at(stop_node, lambda: self.convert(stop, t).code)
        step_code = self.at(step_node, lambda: self.convert(step, t).code)
        if isinstance(step, Const) and step.value == 0:
            raise problem("range() step must not be zero", cls=JitValueError, node=node.iter)
        pragma = unroll_pragma(unroll)
        start_code = self.at(start_node, lambda: self.convert(start, t).code)
        self.range_loop(var, (start, stop, step), (start_code, stop_code, step_code), pragma, node)

    def range_loop(self, var: Value, items, codes, pragma: str, node) -> None:
        """The loop of a checked ``for var in range(start, stop, step)``: ``items`` are the
        bounds as written (a constant step picks the comparison), ``codes`` the same
        converted to the variable's type, in the order the loop evaluates them."""
        self.spelling.range_loop(self, var, items, codes, pragma, node)

    def for_constants(self, node, values: tuple) -> None:
        """``for v in (16, 8, 4):`` -- a fully unrolled loop over a constant array."""
        if not values or not all(Const(v).is_scalar for v in values):
            raise problem(
                "a for loop over a tuple needs a non-empty tuple of numbers", node=node.iter
            )
        self.mark(node)
        var = self.lookup_local(node.target.id)
        t = var.type if var is not None else infer.result_type(list(values), self.mode)
        if var is None:
            cname = self.c_name(node.target.id)
            self.hoist(t, cname)
            if self.state.depth:
                self.flag_unset(t, cname)
            var = self.state.locals[node.target.id] = Value(cname, t, lvalue=True)
        self.constant_loop(var, [self.literal(v, t) for v in values], node)

    def constant_loop(self, var: Value, codes: list, node) -> None:
        """The loop of a checked ``for var in (c0, c1, ...)``, ``codes`` the constants'."""
        self.spelling.constant_loop(self, var, codes, node)

    def range_call(self, node):
        if isinstance(node, ast.Call):
            callee = self.expr(node.func)
            if isinstance(callee, Const) and callee.value in (B.range_, B.jit_range, range):
                record = B.jit_range if callee.value is B.jit_range else B.range_
                args = [self.expr(a) for a in node.args]
                kwargs = {kw.arg: self.expr(kw.value) for kw in node.keywords}
                return record, args, kwargs
            if isinstance(node.func, ast.Name) and node.func.id == "range":
                where = (
                    "a variable of the kernel"
                    if node.func.id in self.state.assigned
                    else ("bound to " + _item_text(callee) + " outside the kernel")
                )
                raise problem(
                    f"'range' here is {where}, so range(...) is not Python's range",
                    "rename that variable; the name range is needed for the loop",
                    JitNameError,
                    node.func,
                )
        raise problem(
            "for loops in kernels iterate over range(...), jit.range(...) or a constant tuple",
            "write `for i in range(start, stop, step):`",
            JitSyntaxError,
            node,
        )

    def loop_variable(self, target: ast.Name, bounds) -> Value:
        for b in bounds:
            op = operand(b)
            kind = (
                infer.literal_type(op, self.mode).kind
                if infer.is_weak(op)
                else getattr(op, "kind", None)
            )
            if kind not in ("i", "u", "b"):
                raise problem(f"range() takes integers, got {_op_text(op)}", node=target)
        existing = self.state.locals.get(target.id)
        if existing is not None:
            if not (isinstance(existing.type, T.Scalar) and existing.type.kind in "iu"):
                raise problem(
                    f"loop variable {target.id!r} has type {existing.type}",
                    "use a new name for the loop",
                    node=target,
                )
            return existing
        t = infer.result_type([operand(b) for b in bounds], self.mode)
        if t is T.bool_:
            t = infer.literal_type(0, self.mode)
        cname = self.c_name(target.id)
        self.hoist(t, cname)
        self.flag_unset(t, cname)  # after a loop that ran no iteration it is unassigned
        value = Value(cname, t, lvalue=True)
        self.state.locals[target.id] = value
        return value

    def loop_bound(self, item, t: T.Scalar, code: str, what: str) -> str:
        """A run-time bound is read once, before the loop; a constant stays inline."""
        if isinstance(item, Const):
            return code
        return self.bind_temp(Value(code, t), what)

    def at(self, node, thunk):
        """Run ``thunk``, blaming ``node`` (when known) for any problem it raises."""
        try:
            return thunk()
        except CompileProblem as exc:
            if node is not None and exc.node is None:
                exc.node = node
            raise

    def stmt_Return(self, node) -> None:
        self.mark(node)
        if node.value is None or (
            isinstance(node.value, ast.Constant) and node.value.value is None
        ):
            if self.kind == "device" and self.state.return_type not in (None, T.void):
                raise problem("this function also returns a value", node=node)
            if self.kind == "device":
                self.state.return_type = T.void
            self.line("return;")
            return
        if self.kind == "kernel":
            self.expr(node.value)  # an undefined name in it is named first, as Python would
            raise problem(
                "kernels cannot return a value",
                "write results into an array argument",
                node=node.value,
            )
        item = self.expr(node.value)
        if self.state.return_type is None:
            value = self.materialize_deep(item)
            self.state.return_type = value.type
        else:
            self.check_assignable(item, self.state.return_type, "the return type", node.value)
            value = (
                self.convert(item, self.state.return_type)
                if isinstance(self.state.return_type, T.Scalar)
                else self.materialize_deep(item)
            )
            if value.type != self.state.return_type:
                raise problem(
                    f"returns {value.type} here but {self.state.return_type} earlier",
                    node=node.value,
                )
        self.line(f"return {value.code};")

    def materialize_deep(self, item) -> Value:
        if isinstance(item, Const) and isinstance(item.value, tuple):
            values = [self.materialize(Const(v)) for v in item.value]
            t = T.tuple_of([v.type for v in values])
            return Value(self.tuple_code(t, [v.code for v in values]), t)
        value = self.materialize(item)
        if isinstance(value.type, (T.Array, T.Opaque)) or value.type is T.void:
            raise problem(f"device functions return numbers or tuples, not {value.type}")
        return value

    def stmt_Assert(self, node) -> None:
        test = self.truth_item(node.test)
        if isinstance(test, Const) and test.value:
            return
        self.mark(node)
        message = ast.unparse(node.test)
        if node.msg is not None:
            msg = self.expr(node.msg)
            if not (isinstance(msg, Const) and isinstance(msg.value, str)):
                raise problem("the assert message must be a string constant", node=node.msg)
            message = msg.value
        cond = self.condition(node.test, test) if not isinstance(test, Const) else None
        self.assert_line(cond, message, node)

    def assert_line(self, cond: str | None, message: str, node) -> None:
        """A checked ``assert``: fail with ``message`` where ``cond`` (None: always) is false."""
        self.spelling.assert_line(self, cond, message, node)
