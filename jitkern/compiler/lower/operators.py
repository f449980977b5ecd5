"""Operators: arithmetic through the builtin records, ``not``/``-``/``~``, Python's
``and``/``or`` and chained comparisons (each operand once, left to right), ``a if c
else b`` and tuples (:class:`OperatorsMixin` of the expression emitter).
"""

from __future__ import annotations

import ast
import dataclasses

from ...errors import JitSyntaxError
from .. import builtins as B
from .. import infer
from .. import types as T
from ..values import Const, operand, Value
from .common import _COMPARE_TEXT, _IDENTITY, _is_bool, _item_kind, _PLAIN_CODE, _UNARY
from .spelling import CompileProblem, FOLD, problem


_CHAIN_LINKS = 64


class OperatorsMixin:
    """Operators, ``and``/``or``, comparisons, ``a if c else b`` and tuples for the
    expression emitter."""

    # -- operators --------------------------------------------------------

    def expr_BinOp(self, node):
        # A long sum is a left-deep chain ((a + b) + c) + ...: walk it with a loop rather
        # than recursion, so an expression of any length lowers (Python's parser already
        # builds it without recursing that deep).
        chain = []
        while isinstance(node, ast.BinOp):
            chain.append(node)
            node = node.left
        result = self.expr(node)
        # a back end whose parser limits nesting (Python's: 200 parentheses) holds a long
        # chain's value in a local every _CHAIN_LINKS links
        hold = self.spelling.hold if len(chain) > _CHAIN_LINKS else None
        for k, link in enumerate(reversed(chain)):
            right = self.expr(link.right)
            try:
                result = self.binary(type(link.op).__name__, result, right)
            except CompileProblem as exc:
                if exc.node is None:
                    exc.node = link
                raise
            if hold is not None and k % _CHAIN_LINKS == _CHAIN_LINKS - 1:
                result = hold(self, result)
        return result

    def binary(self, op_name: str, left, right):
        if isinstance(left, Const) and isinstance(right, Const):
            # numbers fold; so do compile-time objects (x.dtype == numpy.float32)
            return self.fold(getattr(ast, op_name), left.value, right.value)
        pointer = B.pointer_operator(op_name, left, right)
        if pointer is not None:  # iterator arithmetic: x + n, it - x.begin()
            return self.call_builtin(*pointer)
        record = B.OPERATORS.get(op_name)
        if record is None:
            raise problem(f"operator {op_name} is not supported in kernels", "", JitSyntaxError)
        return self.call_builtin(record, [left, right])

    def fold(self, op_class, *values):
        try:
            return Const(FOLD[op_class](*values))
        except ZeroDivisionError:
            raise problem("division by zero in a constant expression") from None
        except (TypeError, ValueError, OverflowError) as exc:
            raise problem(f"cannot fold this constant expression: {exc}") from None

    def expr_UnaryOp(self, node):
        item = self.expr(node.operand)
        op = type(node.op)
        if isinstance(item, Const) and item.is_scalar:
            return self.fold(op, item.value)
        v = self.materialize(item)
        if not isinstance(v.type, T.Scalar):
            raise problem(f"unary {_UNARY[op]} needs a number, got {v.type}")
        out = self.unary(op, v)
        # Python operators on Python scalars give Python scalars: a weak operand stays weak.
        return dataclasses.replace(out, weak=True) if v.weak else out

    def unary(self, op, v: Value) -> Value:
        """``not``/``~``/``-``/``+`` on a number: the rules and errors of every back end;
        the text is :meth:`render_unary`'s."""
        t = v.type
        if op is ast.Not:
            v = self.convert(v, T.bool_)
            return Value(self.render_unary(op, v), T.bool_)
        if t is T.bool_ and op in (ast.USub, ast.UAdd) and self.mode == "numpy" and not v.weak:
            raise problem(
                f"NumPy has no unary {_UNARY[op]} for bools",
                "use ~x (or numpy.logical_not) to negate a condition, or convert to an int first",
            )
        if op is ast.UAdd:
            return v
        if op is ast.Invert and t is T.bool_ and v.weak:  # a Python bool: ~True == -2
            t = infer.literal_type(0, self.mode)
            v = self.convert(v, t)
        if op is ast.Invert and t.kind not in "iub":
            raise problem(f"~ needs an integer or bool, got {t}")
        if op is ast.USub and t is T.bool_:
            t = infer.literal_type(0, self.mode)
            v = self.convert(v, t)
        return Value(self.render_unary(op, v), t)

    def render_unary(self, op, v: Value) -> str:
        """The text of a checked ``not`` (``v`` a bool), ``~`` (an integer or bool) or ``-``."""
        return self.spelling.unary(self, op, v)

    def render_negative(self, v: Value) -> str:
        """``-v`` of a number (unary minus and numpy.negative)."""
        return self.spelling.negative(self, v)

    def expr_BoolOp(self, node):
        items = [self.expr(v) for v in node.values]
        if all(_is_bool(i) for i in items):
            return self.join_truths(node.op, items)
        return self.select_operand(node.op, items)

    def truth_item(self, node):
        """``node`` as a condition (``if``/``while``/``assert``, a conditional's test):
        there ``and``/``or`` only need their operands' truth, which ``&&``/``||`` give."""
        if isinstance(node, ast.BoolOp):
            return self.join_truths(node.op, [self.truth_item(v) for v in node.values])
        return self.expr(node)

    def join_truths(self, op, items):
        """``a and b`` / ``a or b`` as a bool: the operands' truth joined with the back
        end's short-circuiting words (the value of Python's ``and``/``or`` of bools)."""
        if all(isinstance(i, Const) and i.is_scalar for i in items):
            fold = all if isinstance(op, ast.And) else any
            return Const(bool(fold(bool(i.value) for i in items)))
        codes = [self.convert(self.materialize(i), T.bool_).code for i in items]
        return Value("(" + self.spelling.bool_words[type(op)].join(codes) + ")", T.bool_)

    def select_operand(self, op, items):
        """Python's ``a or b`` / ``a and b`` of numbers: the first operand that decides
        (``or``: a true one, ``and``: a false one), else the last; each evaluated once,
        left to right, and only while undecided. Operands of different types: the
        result has their common type (NumPy's promotion, Python numbers weak, as for
        ``a + b``). A compile-time operand decides at compile time (docs/jit.md)."""
        stop_on = isinstance(op, ast.Or)
        kept = []
        for k, item in enumerate(items):
            if isinstance(item, Const) and item.is_scalar:
                if bool(item.value) == stop_on or k == len(items) - 1:
                    kept.append(item)
                    break
                continue  # a constant that decides nothing: Python goes on to the next
            if not (isinstance(item, Value) and isinstance(item.type, T.Scalar)):
                word = "or" if stop_on else "and"
                raise problem(f"'{word}' needs numbers or bools, got {_item_kind(item)}")
            kept.append(item)
        if len(kept) == 1:
            return kept[0]
        t = infer.result_type([operand(i) for i in kept], self.mode)
        code = self.convert(kept[-1], t).code
        for item in reversed(kept[:-1]):
            first, later = self.evaluate_once(item)
            test = self.convert(first, T.bool_).code
            mine = self.convert(later, t).code
            code = self.render_ifexp(test, mine, code) if stop_on else (
                self.render_ifexp(test, code, mine)
            )
        weak = all(infer.is_weak(operand(i)) for i in kept)
        return Value(code, t, weak=weak)

    def evaluate_once(self, item):
        """``(first, later)``: ``item`` computed where ``first`` stands, read again as
        ``later`` (a temporary, unless ``item`` is a name or a literal, which reads the same
        every time and has no effects)."""
        if not isinstance(item, Value) or _PLAIN_CODE.fullmatch(item.code):
            return item, item
        tmp = self.temp()
        self.hoist(item.type, tmp)
        first = dataclasses.replace(item, code=self.render_assign(tmp, item.code), lvalue=False)
        return first, dataclasses.replace(item, code=tmp, lvalue=False)

    def render_assign(self, name: str, code: str) -> str:
        """An expression storing ``code`` in the local ``name``, whose value it is."""
        return self.spelling.assign(self, name, code)

    def render_sequence(self, firsts, last: str) -> str:
        """An expression evaluating ``firsts`` in order, then ``last``, whose value it is."""
        return self.spelling.sequence(self, firsts, last)

    def expr_Compare(self, node):
        items = [self.expr(node.left)] + [self.expr(c) for c in node.comparators]
        if len(node.ops) == 1:
            return self.comparison(node.ops[0], items[0], items[1])
        # a < f(x) < b: each operand evaluated once, left to right, and no further once a
        # comparison is false; a middle operand is held in a temporary for its two uses
        firsts, laters = [], []
        for k, item in enumerate(items):
            needed = 0 < k < len(items) - 1 or (
                k == 0 and not _PLAIN_CODE.fullmatch(getattr(items[1], "code", "0"))
            )
            first, later = self.evaluate_once(item) if needed else (item, item)
            firsts.append(first.code if first is not later else None)
            laters.append(later)
        parts = []
        for k, op in enumerate(node.ops):
            part = self.comparison(op, laters[k], laters[k + 1])
            ahead = [c for c in (firsts[k] if k == 0 else None, firsts[k + 1]) if c]
            if ahead:
                part = Value(self.render_sequence(ahead, self.materialize(part).code), T.bool_)
            parts.append(part)
        if all(isinstance(p, Const) for p in parts):
            return Const(all(p.value for p in parts))
        codes = [self.materialize(p).code for p in parts]
        return Value("(" + self.spelling.bool_words[ast.And].join(codes) + ")", T.bool_)

    def comparison(self, op, left, right):
        name = type(op).__name__
        if name in _IDENTITY:
            return self.identity(name, left, right)
        if name not in B.OPERATORS:
            raise problem(
                f"the comparison {_COMPARE_TEXT.get(name, name)!r} is not supported in kernels",
                "use ==, !=, <, <=, >, >=",
                JitSyntaxError,
            )
        return self.binary(name, left, right)

    def identity(self, name: str, left, right) -> Const:
        """``a is b`` / ``a is not b``: a compile-time answer (captured None, dtypes...)."""
        if isinstance(left, Const) and isinstance(right, Const):
            return Const(_IDENTITY[name](left.value, right.value))
        for const, other in ((left, right), (right, left)):
            if isinstance(const, Const) and const.value is None and isinstance(other, Value):
                return Const(name == "IsNot")  # a run-time value is never None
        raise problem(
            f"'{_COMPARE_TEXT[name]}' compares compile-time values in kernels (e.g. a captured "
            "None: if flag is None:)",
            "use == or != on numbers",
            JitSyntaxError,
        )

    def expr_IfExp(self, node):
        cond = self.truth_item(node.test)
        if isinstance(cond, Const) and cond.is_scalar:
            return self.expr(node.body if cond.value else node.orelse)
        body, orelse = self.expr(node.body), self.expr(node.orelse)
        ops = [operand(body), operand(orelse)]
        if all(isinstance(o, (T.Scalar, bool, int, float, complex)) for o in ops):
            t = infer.result_type(ops, self.mode)
        elif ops[0] == ops[1]:
            t = ops[0]
        else:
            raise problem(f"both branches must have one type, got {ops[0]} and {ops[1]}")
        c = self.convert(self.materialize(cond), T.bool_).code
        a, b = self.convert(body, t).code, self.convert(orelse, t).code
        return Value(self.render_ifexp(c, a, b), t)

    def render_ifexp(self, c: str, a: str, b: str) -> str:
        """``a if c else b`` of a checked condition and two branches of one type."""
        return self.spelling.ifexp(self, c, a, b)

    def expr_Tuple(self, node):
        items = [self.expr(e) for e in node.elts]
        if all(isinstance(i, Const) for i in items):
            return Const(tuple(i.value for i in items))
        values = [self.materialize(i) for i in items]
        t = T.tuple_of([v.type for v in values])
        return Value(self.tuple_code(t, [v.code for v in values]), t)
