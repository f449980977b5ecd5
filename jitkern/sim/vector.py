"""Vectorised simulation: every thread of a batch of blocks runs each statement at once.

:class:`VectorEmitter` is :class:`.emit.PyEmitter` with control flow spelled for
arrays: a value is a NumPy array over the batch's threads (or a scalar every thread
shares), and each block of statements runs under a mask of the threads that take it.
Both sides of a divergent ``if`` run under their masks; a loop runs while any thread
is still in it; ``return``, ``break`` and ``continue`` clear mask bits; a local that
some path leaves unassigned carries a mask of the threads that assigned it (the
per-thread simulator's "read before it is assigned" check); loads, stores and atomics
only touch the threads of the mask, in thread order. Barriers and warp collectives
are answered where every thread reaches them, with the per-thread scheduler's checks
(:mod:`.vecruntime`).

What it cannot run the same way (print, clock64, breakpoint, cooperative groups,
cub, jit.thrust, grid sync and clusters, racecheck, atomics whose order would differ
from the per-thread scheduler's) makes the launch run on the per-thread scheduler
(:mod:`.scheduler`), which stays the reference: :func:`run` picks the path and
records it (``kernel.simulate.last_path``).
"""

from __future__ import annotations

import ast
import dataclasses
import re

import numpy

from ..errors import (
    InternalError,
    JitError,
    JitkernNotImplementedError,
    KernelArgumentError,
    KernelAssertionError,
)
from ..compiler import builtins as B
from ..compiler import types as T
from ..compiler.expressions import problem
from ..compiler.statements import FunctionCode, FunctionEmitter, generated_name
from ..compiler.values import Const, Value
from . import emit, scheduler, textures, vecruntime
from .emit import CONTEXT, SimFunction, type_name

#: "auto": vectorise what can be, else the per-thread scheduler; "threads": always the
#: per-thread scheduler; "vector": vectorise or raise (tests).
MODE = "auto"
#: True: run each vectorisable launch both ways and compare the results bit for bit
#: (the test suite's differential check; the per-thread results are kept).
DIFFERENTIAL = False
#: Threads per batch: blocks are run together up to about this many threads.
BATCH_THREADS = 1 << 17

_COLLECTIVES = ("_jk_SYNC", "_jk_SYNCWARP", "_jk_SHFL", "_jk_VOTE", "_jk_ACTIVEMASK")
_T_ATTRS = frozenset(["lane", "shared", "dynamic", "local", "block", "rank"])


class NotVectorised(JitkernNotImplementedError):
    """Raised while emitting: the kernel runs on the per-thread scheduler instead."""


class VectorProgram(emit.SimProgram):
    def __init__(self, mode: str):
        super().__init__(mode)
        self.atomic_sites: list = []
        self.written: set = set()  # array codes stored to ("*": by a device function)
        self.params: tuple = ()  # the kernel's parameter names in the generated code


def _is_bool_item(item) -> bool:
    t = getattr(item, "type", None)
    return t is T.bool_ or isinstance(getattr(item, "value", None), bool)


@dataclasses.dataclass
class VectorState(emit.SimState):
    """A function's state over arrays of threads: the mask of the threads a line runs for."""

    mask: str = "jk_live"
    loops: list = dataclasses.field(default_factory=list)  # (iteration's mask, loop's) per loop
    extra: int = 0  # indentation of the `if any(mask):` around a block's rest
    atomic_codes: dict = dataclasses.field(default_factory=dict)
    #: p['g'] of a struct argument p: read by every thread
    argument_fields: set = dataclasses.field(default_factory=set)


class VectorEmitter(emit.PyEmitter):
    """PyEmitter over arrays of threads under masks; see the module docstring."""

    program: VectorProgram

    State = VectorState

    def refuse(self, why: str):
        raise NotVectorised(why)

    def render_field(self, code: str, attr: str, member: str = "") -> str:
        element = self.state.elements.get(code)
        if element is not None:  # p[i].x: element i of the field's view p['x'] (NumPy's)
            array, index = element
            return self.element(f"{array}[{attr!r}]", index, T.void).code
        if code not in self._param_cnames() and code not in self.state.argument_fields:
            self.refuse("struct locals and struct results (run per thread)")
        out = super().render_field(code, attr)  # of a struct argument: one value for all threads
        self.state.argument_fields.add(out)
        return out

    def store_field(self, field, item, node) -> None:
        if isinstance(field, Value) and field.code not in self.state.elements:
            self.refuse("a write to a field of a struct argument (run per thread)")
        super().store_field(field, item, node)

    def copy_struct(self, code: str) -> str:
        self.refuse("struct locals (run per thread)")

    # -- output -------------------------------------------------------------------

    def line(self, text: str) -> None:
        text = text.removeprefix("auto ")
        if text.endswith(";"):
            text = self.translate(text[:-1])
            if text is None:
                return
        self.state.body.append((self.state.depth + self.state.extra, text, self.state.user_line))

    def translate(self, stmt: str):
        """A statement the shared emitter wrote for one thread, for the threads of the
        mask (None: already written)."""
        if stmt == "return" or stmt.startswith("return "):
            self.exit_threads(stmt[len("return ") :] or None)
            return None
        if stmt in ("break", "continue"):
            self.leave_loop(stmt == "break")
            return None
        if stmt in self.state.atomic_codes:
            self.state.atomic_codes[stmt]["used"] = False
            return stmt[:-1] + ", False)" if "_jk_vatomic(" in stmt else stmt
        lhs, eq, rhs = stmt.partition(" = ")
        if eq and lhs in self.state.elements:
            array, index = self.state.elements[lhs]
            self.note_written(array)
            return f"_jk_st({array}, {index}, {rhs}, {self.state.mask})"
        if eq and lhs in self.local_codes():
            if self.state.depth == 0:
                return stmt
            return f"{lhs} = _jk_sel({self.state.mask}, {rhs}, {lhs})"
        return stmt

    def note_written(self, array: str) -> None:
        # (a field's view, p['x'], writes its array p)
        self.program.written.add(emit._array_name(array) if self.kind == "kernel" else "*")

    def local_codes(self) -> set:
        return {v.code for v in self.state.locals.values()}

    def exit_threads(self, value) -> None:
        gone = self.temp("gone")
        self.line(f"{gone} = {self.state.mask}")
        if value is not None:
            self.line(f"jk_ret = _jk_sel({gone}, {value}, jk_ret)")
        self.line(f"jk_live = jk_live & ~{gone}")
        for lm, brk in self.state.loops:
            self.line(f"{lm} = {lm} & ~{gone}")
            self.line(f"{brk} = {brk} & ~{gone}")

    def leave_loop(self, broken: bool) -> None:
        gone = self.temp("gone")
        self.line(f"{gone} = {self.state.mask}")
        lm, brk = self.state.loops[-1]
        self.line(f"{lm} = {lm} & ~{gone}")
        if broken:
            self.line(f"{brk} = {brk} & ~{gone}")

    def masked(self, mask: str, thunk):
        outer, self.state.mask = self.state.mask, mask
        try:
            return thunk()
        finally:
            self.state.mask = outer

    def block(self, stmts) -> None:
        saved = self.state.extra
        try:
            for k, stmt in enumerate(stmts):
                self.statement(stmt)
                if k + 1 < len(stmts) and _exits(stmt):
                    # threads that left (return/break/continue) skip the rest of the block
                    outer = self.state.loops[-1][0] if self.state.loops else "jk_live"
                    if self.state.mask != outer:
                        self.state.body.append((self.state.depth + self.state.extra,
                                          f"{self.state.mask} = {self.state.mask} & {outer}", self.state.user_line))
                    self.header(f"if _jk_any({self.state.mask}):")
                    self.state.extra += 1
        finally:
            self.state.extra = saved

    def header(self, text: str) -> None:
        self.state.body.append((self.state.depth + self.state.extra, text, self.state.user_line))
        self.state.body.append((self.state.depth + self.state.extra + 1, "pass", self.state.user_line))

    # -- locals that some path may leave unassigned ---------------------------------

    def flag_unset(self, t: T.Type, cname: str) -> None:
        if not isinstance(t, (T.Scalar, T.Tuple)):
            self.refuse(f"a local of type {t} assigned inside a block")
        self.state.set_flags[cname] = generated_name("set", cname)

    def mark_set(self, cname: str, indent: str = "", dominates: bool = True) -> None:
        flag = self.state.set_flags.get(cname)
        if flag is not None:
            self.line(f"{flag} = {flag} | {self.state.mask}")
            if dominates:
                self.state.assigned_here[-1].add(cname)

    def read_local(self, node, local):
        cname = getattr(local, "code", None)
        flag = self.state.set_flags.get(cname)
        if flag is None or cname in self.state.assigned_here[-1]:
            return local
        return Value(f"_jk_rd({cname}, {flag}, {self.state.mask}, {node.id!r})", local.type,
                     lvalue=False, weak=local.weak)

    # -- control flow -----------------------------------------------------------------

    def condition_of(self, item, node) -> str:
        value = self.materialize(item)
        if not isinstance(value.type, T.Scalar):
            raise problem(f"a condition must be a number or bool, got {value.type}", node=node)
        return self.convert(value, T.bool_).code

    def split(self, cond: str):
        """Temporaries: the condition, and the masks of the threads taking each side."""
        c, yes, no = self.temp("c"), self.temp("m"), self.temp("m")
        self.line(f"{c} = {cond}")
        self.line(f"{yes} = {self.state.mask} & {c}")
        self.line(f"{no} = {self.state.mask} & ~{c}")
        return c, yes, no

    def stmt_If(self, node) -> None:
        test = self.expr(node.test)
        if isinstance(test, Const):
            self.block(node.body if test.value else node.orelse)
            return
        self.mark(node)
        _c, yes, no = self.split(self.condition_of(test, node.test))
        self.header(f"if _jk_any({yes}):")
        self.masked(yes, lambda: self.nested(node.body))
        if node.orelse:
            self.header(f"if _jk_any({no}):")
            self.masked(no, lambda: self.nested(node.orelse))

    def loop_variable_slot(self, var: Value) -> None:
        """A loop variable the loop assigns under its mask is bound before the loop runs
        (a parameter, or a local some path leaves unassigned, already is)."""
        params = {getattr(self.lookup_local(p), "code", None) for p in self.parsed.params}
        if var.code not in self.state.set_flags and var.code not in params:
            self.state.prologue.append(f"{var.code} = None")

    def loop_head(self, brk: str, lm: str, iterate: str | None) -> None:
        """Open a loop that runs while a thread of ``brk`` is in it (``iterate``: what
        the loop iterates, None: ``while True``)."""
        self.line(f"{brk} = {self.state.mask}")
        self.header(iterate or "while True:")
        self.state.extra += 1

    def loop_rest(self, node, lm: str, brk: str, var: str | None) -> None:
        self.state.extra -= 1  # the body is nested() one deeper: back to the loop's level
        self.state.loops.append((lm, brk))
        try:
            self.masked(lm, lambda: self.loop_body(node.body, var))
        finally:
            self.state.loops.pop()

    def stmt_While(self, node) -> None:
        if node.orelse:
            return super().stmt_While(node)  # the shared emitter's error
        self.mark(node)
        lm, brk = self.temp("lm"), self.temp("brk")
        self.loop_head(brk, lm, None)
        cond = self.masked(brk, lambda: self.condition_of(self.expr(node.test), node.test))
        self.line(f"{lm} = {brk} & {cond}")
        self.line(f"if not _jk_any({lm}): break")
        self.line(f"{brk} = {lm}")
        self.loop_rest(node, lm, brk, None)
        return None

    def range_loop(self, var: Value, items, codes, pragma: str, node) -> None:
        _start, _stop, step = items
        start_code, stop_code, step_code = codes
        tn = type_name(var.type)
        self.loop_variable_slot(var)
        it, stop, stp = self.temp("it"), self.temp("stop"), self.temp("step")
        lm, brk = self.temp("lm"), self.temp("brk")
        self.line(f"{it} = _jk_ctr({start_code}, {tn})")
        self.line(f"{stop} = _jk_ctr({stop_code}, {tn})")
        self.line(f"{stp} = _jk_step({step_code}, {self.state.mask}, {tn})")
        self.loop_head(brk, lm, None)
        if isinstance(step, Const) or var.type.kind == "u":
            forward = var.type.kind == "u" or step.value > 0
            self.line(f"{lm} = {brk} & ({it} {'<' if forward else '>'} {stop})")
        else:
            self.line(f"{lm} = {brk} & _jk_in_range({it}, {stop}, {stp})")
        self.line(f"if not _jk_any({lm}): break")
        self.line(f"{brk} = {lm}")
        self.state.body.append((self.state.depth + self.state.extra,
                          f"{var.code} = _jk_sel({lm}, {tn}({it}), {var.code})", self.state.user_line))
        self.masked(lm, lambda: self.mark_set(var.code, dominates=False))
        self.loop_rest(node, lm, brk, var.code)
        self.state.extra += 1
        self.line(f"{it} = {it} + {stp}")
        self.state.extra -= 1

    def constant_loop(self, var: Value, codes: list, node) -> None:
        lm, brk, k = self.temp("lm"), self.temp("brk"), self.temp("k")
        self.loop_variable_slot(var)
        self.loop_head(brk, lm, f"for {k} in ({''.join(c + ', ' for c in codes)}):")
        self.line(f"{lm} = {brk}")
        self.line(f"if not _jk_any({lm}): break")
        self.state.body.append((self.state.depth + self.state.extra,
                          f"{var.code} = _jk_sel({lm}, {k}, {var.code})", self.state.user_line))
        self.masked(lm, lambda: self.mark_set(var.code, dominates=False))
        self.loop_rest(node, lm, brk, var.code)

    def assert_line(self, cond: str | None, message: str, node) -> None:
        failing = self.temp("fail")
        self.line(f"{failing} = {self.state.mask} & ~({cond})" if cond else f"{failing} = {self.state.mask}")
        self.line(f"if _jk_any({failing}): _jk_assert_fail({failing}, {message!r})")

    # -- expressions ---------------------------------------------------------------------

    BOOL_WORDS = {ast.And: " & ", ast.Or: " | "}  # noqa: RUF012 - the base's table, respelled

    def expr_BoolOp(self, node):
        items = [self.expr(node.values[0])]
        if all(isinstance(i, Const) and i.is_scalar for i in items) and all(
            isinstance(v, ast.Constant) for v in node.values
        ):
            return super().expr_BoolOp(node)
        if not all(_is_bool_item(i) for i in items):
            # Python's `a or b` of numbers returns an operand: per thread (see select_operand)
            self.refuse("'and'/'or' that returns an operand (evaluated only where undecided)")
        is_and = isinstance(node.op, ast.And)
        acc = self.temp("b")
        self.line(f"{acc} = {self.condition_of(items[0], node.values[0])}")
        for sub in node.values[1:]:
            rest = self.temp("m")  # the threads whose value is not decided yet
            self.line(f"{rest} = {self.state.mask} & {'' if is_and else '~'}{acc}")
            code = self.masked(rest, lambda s=sub: self.condition_of(self._bool_operand(s), s))
            self.line(f"{acc} = {acc} {'&' if is_and else '|'} {code}")
        return Value(acc, T.bool_)

    def expr_IfExp(self, node):
        cond = self.expr(node.test)
        if isinstance(cond, Const) and cond.is_scalar:
            return super().expr_IfExp(node)
        c, yes, no = self.split(self.condition_of(cond, node.test))
        return super().expr_IfExp(ast.IfExp(test=_Held(c, node.test), body=_InMask(node.body, yes),
                                             orelse=_InMask(node.orelse, no)))

    def expr__Held(self, node):
        return Value(node.code, T.bool_)

    def expr__InMask(self, node):
        return self.masked(node.mask, lambda: self.expr(node.node))

    def render_power(self, t: T.Scalar, a: str, b: str) -> str:
        # NumPy's scalar ** (the per-thread path's) rounds differently from its array
        # loop: floats are raised thread by thread
        if t.kind == "f":
            return f"_jk_spow({a}, {b})"
        return f"_jk_np.power({a}, {b})"

    def expr(self, node):
        item = super().expr(node)
        t = getattr(item, "type", None)
        if getattr(t, "is_complex", False):
            # NumPy's complex arithmetic on arrays rounds differently from its scalars'
            self.refuse("complex arithmetic")
        if getattr(t, "is_float8", False):
            self.refuse(f"{t.name} (ml_dtypes' types are computed per thread)")
        return item

    def _bool_operand(self, node):
        item = self.expr(node)
        if not _is_bool_item(item):
            self.refuse("'and'/'or' that returns an operand (evaluated only where undecided)")
        return item

    def expr_Compare(self, node):
        if len(node.ops) > 1:  # a < f(x) < b: f runs only where a < f(x) held, per thread
            self.refuse("a chained comparison (its operands are evaluated only while true)")
        return super().expr_Compare(node)

    def select_operand(self, op, items):
        # Python's `a or b` returns an operand and evaluates b only when a does not decide:
        # per thread, since the threads of a batch decide differently (a where() would
        # evaluate b for all of them)
        value = super().select_operand(op, items)
        if not isinstance(value, Const) and sum(not isinstance(i, Const) for i in items) > 1:
            self.refuse("'and'/'or' that returns an operand (evaluated only where undecided)")
        return value

    def evaluate_once(self, item):
        first, later = super().evaluate_once(item)
        if first is not later:  # a chained comparison's operand: evaluated only while true
            self.refuse("a chained comparison whose operands are evaluated only while true")
        return first, later

    def render_ifexp(self, c: str, a: str, b: str) -> str:
        return f"_jk_where({c}, {a}, {b})"

    def subscript(self, base: Value, indices: list) -> Value:
        checked = FunctionEmitter.subscript(self, base, indices)  # the GPU build's checks
        t = base.type
        if isinstance(t, T.FancyIterator):
            self.refuse("a fancy iterator (jit.thrust runs per thread)")
        codes = [self.convert(i, T.int64).code if i.type is T.bool_ else i.code for i in indices]
        name = repr(emit._array_name(base.code))
        if isinstance(t, T.Pointer) or t.is_pointer_like:
            index = f"_jk_ix({codes[0]}, {base.code}, {name}, {self.state.mask})"
            return self.element(base.code, index, checked.type)
        if len(indices) != t.ndim:
            self.refuse("a sub-array of an n-d array")
        index = f"_jk_ixn({base.code}, {name}, {self.state.mask}, {', '.join(codes)})"
        return self.element(base.code, index, checked.type)

    def reference(self, element: Value) -> Value:
        if element.code not in self.state.elements:  # p.x += v of a struct argument
            self.refuse("a write to a field of a struct argument (run per thread)")
        array, index = self.state.elements[element.code]
        held = self.temp("ref")
        self.state.body.append((self.state.depth + self.state.extra, f"{held} = {index}", self.state.user_line))
        return self.element(array, held, element.type)

    def declare_shared(self, elem: T.Type, size, align) -> str:
        if not isinstance(elem, T.Scalar):
            self.refuse(f"shared memory of {elem}")
        dtype = emit.numpy_type(elem)
        if size is None:
            code = f"_jk_T.dynamic({type_name(elem)})"
        else:
            name = self.program.unique_name("jk_smem")
            self.program.shared[name] = (numpy.dtype(dtype), int(size))
            code = f"_jk_T.shared({name!r})"
        tmp = self.temp("smem")
        self.state.prologue.append(f"{tmp} = {code}")
        return tmp

    def declare_local(self, elem: T.Type, size: int) -> str:
        tmp = self.temp("local")
        self.state.prologue.append(f"{tmp} = _jk_T.local({type_name(elem)}, {int(size)})")
        return tmp

    def yields(self, request: str) -> str:
        kind = request.split(",", 1)[0].strip()
        if kind not in _COLLECTIVES or "_jk_op_" in request or "lambda" in request:
            self.refuse(f"the collective {kind}")
        return f"_jk_coll({self.state.mask}, {request})"

    def yields_from(self, call: str) -> str:
        self.refuse("a generator call")

    def render(self, record, codes, sig, items):
        if record.name in B.ATOMICS:
            return self.atomic(record.name[len("atomic_") :], codes, sig)
        if record.name.startswith("texture.surf"):  # memory no argument holds: one order
            self.refuse(f"{record.name[len('texture.'):]} (surfaces run per thread)")
        return super().render(record, codes, sig, items)

    def atomic(self, op: str, codes, sig) -> str:
        array, index = self.state.elements[codes[0]]
        self.note_written(array)
        if index.startswith("_jk_ix("):  # the atomic notes its own access, not a read
            index = "_jk_ixa(" + index[len("_jk_ix(") :]
        if op == "cas":
            code = f"_jk_vatomic_cas({array}, {index}, {codes[1]}, {codes[2]}, {self.state.mask})"
        else:
            code = f"_jk_vatomic({op!r}, {array}, {index}, {codes[1]}, {self.state.mask})"
        site = {"op": op, "kind": sig.result.kind, "loop": bool(self.state.loop_depth or self.state.loops),
                "device": self.kind == "device", "used": True}
        self.state.atomic_codes[code] = site
        self.program.atomic_sites.append(site)
        return code

    def render_device_call(self, fn, values: list) -> str:
        return f"{fn.cname}({', '.join([CONTEXT, self.state.mask] + [v.code for v in values])})"

    def device_functor(self, device, t: T.Scalar) -> str:
        self.refuse("a device function as an operator")

    def call(self, callee, args, kwargs):
        if isinstance(callee, Const) and callee.value is breakpoint:
            self.refuse("breakpoint()")
        return super().call(callee, args, kwargs)

    def render_printf(self, text: str, args: list) -> str:
        self.refuse("print")

    # -- assembly -------------------------------------------------------------------------

    def finish(self):
        first = self.parsed.source.position(self.parsed.tree)[0]
        params = [CONTEXT, "_jk_m"] + [self.lookup_local(p).code for p in self.parsed.params]
        if self.kind == "kernel":
            self.program.params = tuple(params[2:])
        lines = [f"def {self.cname}({', '.join(params)}):", "    pass", "    jk_live = _jk_m"]
        setup = list(self.state.prologue)
        for cname, flag in self.state.set_flags.items():
            setup += [f"{cname} = None", f"{flag} = _jk_false"]
        if self.kind == "device":
            setup.append("jk_ret = None")
        mapping = [first, first, first, first]
        for text in setup:
            lines.append("    " + text)
            mapping.append(first)
        for depth, text, user_line in self.state.body:
            lines.append("    " * (depth + 1) + text)
            mapping.append(user_line)
        if self.kind == "device":
            lines.append("    return jk_ret")
            mapping.append(mapping[-1])
        text = "\n".join(lines) + "\n"
        rt = self.state.return_type or T.void
        self.program.functions[self.cname] = SimFunction(
            self.cname, text, mapping, self.source.filename, False, rt
        )
        return FunctionCode(self.cname, text, rt, ())


class _Held(ast.expr):
    """A condition already computed into a temporary (``code``)."""

    _fields = ()

    def __init__(self, code, like):
        super().__init__(lineno=like.lineno, col_offset=like.col_offset,
                         end_lineno=like.end_lineno, end_col_offset=like.end_col_offset)
        self.code = code


class _InMask(ast.expr):
    """An expression evaluated under another mask (an ``a if c else b`` branch)."""

    _fields = ()

    def __init__(self, node, mask):
        super().__init__(lineno=node.lineno, col_offset=node.col_offset,
                         end_lineno=node.end_lineno, end_col_offset=node.end_col_offset)
        self.node, self.mask = node, mask


def _exits(stmt) -> bool:
    """Whether ``stmt`` may make threads leave its block (return, or a break/continue of
    the enclosing loop)."""
    todo = [stmt]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Return, ast.Break, ast.Continue)):
            return True
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.For, ast.While)):
                todo += [n for n in ast.walk(child) if isinstance(n, ast.Return)]
            elif isinstance(child, ast.stmt):
                todo.append(child)
    return False


# -- building ---------------------------------------------------------------------------


class Vectorised:
    """One signature's vectorised Python, or why there is none (``reason``)."""

    def __init__(self, program=None, function=None, namespace=None, reason=None):
        self.program, self.function, self.namespace = program, function, namespace
        self.reason = reason
        # the arguments a launch may write (kept to undo a launch that reruns per thread)
        self.written = ()
        if program is not None:
            every = "*" in program.written
            self.written = tuple(k for k, name in enumerate(program.params)
                                 if every or name in program.written)
        self.source = (
            "\n".join(fn.text for fn in program.functions.values()) if program else ""
        )


def build(parsed, types, mode, cname, py_func) -> Vectorised:
    program = VectorProgram(mode)
    try:
        emitter = VectorEmitter(parsed, types, mode, program, "kernel", cname)
        program.stack.append(py_func)
        emitter.emit()
    except NotVectorised as exc:
        return Vectorised(reason=str(exc))
    except JitError as exc:  # the per-thread build, which succeeded, is the judge
        return Vectorised(reason=f"not vectorised: {exc}")
    reason = _atomic_order(program.atomic_sites)
    if reason:
        return Vectorised(reason=reason)
    namespace = vecruntime.names()
    namespace.update(textures.names())
    namespace["_jk_where"] = _where
    namespace.update(program.constants)
    source = "\n".join(fn.text for fn in program.functions.values())
    reason = _unknown_names(source, namespace)
    if reason:
        return Vectorised(reason=reason)
    for fn in program.functions.values():
        emit.compile_function(fn, namespace)
    return Vectorised(program, namespace[cname], namespace)


def _where(c, a, b):
    if type(c) is not numpy.ndarray:
        return a if c else b
    return numpy.where(c, a, b)


def _atomic_order(sites) -> str | None:
    """Atomics are applied in thread order per statement; a thread that runs several
    whose order matters would see another order than the per-thread scheduler's."""
    sensitive = [
        s for s in sites
        if s["used"] or s["op"] in ("exch", "cas", "inc", "dec")
        or (s["kind"] in "fc" and s["op"] in ("add", "sub"))
    ]
    if not sensitive:
        return None
    if len(sites) == 1 and not sites[0]["loop"] and not sites[0]["device"]:
        return None
    return "atomics whose order decides their results, run more than once per thread"


_NAME = re.compile(r"\b_jk_\w+")
_T_ATTR = re.compile(r"\b_jk_T\.(\w+)")
_CONTEXT_NAMES = frozenset(
    [n.strip() for n in (CONTEXT + ", _jk_m").split(",")]
    + [f"_jk_n{g}{ax}" for g in "bg" for ax in "xyz"]  # set by each launch
)


def _unknown_names(source: str, namespace: dict) -> str | None:
    for name in sorted(set(_NAME.findall(source))):
        if name not in namespace and name not in _CONTEXT_NAMES:
            return f"{name} has no vectorised form"
    for attr in set(_T_ATTR.findall(source)):
        if attr not in _T_ATTRS:
            return f"_jk_T.{attr} has no vectorised form"
    if re.search(r"\b_jk_T\.block\.", source):  # the grid, the cluster
        return "a group other than this_thread_block()"
    if "breakpoint(" in source or "yield" in source:
        return "breakpoint() or a generator"
    return None


# -- running ------------------------------------------------------------------------------


def launch(vec: Vectorised, grid, block, args, shared_mem: int) -> None:
    """Run the vectorised kernel over the whole grid, a batch of blocks at a time."""
    g, b = scheduler.dims3(grid, "grid"), scheduler.dims3(block, "block")
    size = b[0] * b[1] * b[2]
    if size > 1024:
        raise KernelArgumentError(f"block: at most 1024 threads per block, got {b}")
    namespace = vec.namespace
    for ax, n in zip("xyz", b):
        namespace[f"_jk_nb{ax}"] = numpy.uint32(n)
    for ax, n in zip("xyz", g):
        namespace[f"_jk_ng{ax}"] = numpy.uint32(n)
    blocks = [(x, y, z) for z in range(g[2]) for y in range(g[1]) for x in range(g[0])]
    per = max(1, BATCH_THREADS // size)
    fn, shared = vec.function, vec.program.shared
    args = tuple(args)
    with numpy.errstate(all="ignore"):
        try:
            for start in range(0, len(blocks), per):
                batch = vecruntime.Batch(blocks[start : start + per], b, shared, shared_mem)
                vecruntime.BATCH[0] = batch
                live = numpy.ones(batch.n, bool)
                fn(batch, batch.tx, batch.ty, batch.tz, batch.bx, batch.by, batch.bz, live, *args)
        except KernelAssertionError as exc:
            raise exc.with_traceback(scheduler._user_frames(exc.__traceback__)) from None
        finally:
            vecruntime.BATCH[0] = None


def run(kernel, simulated, grid, block, host, shared_mem: int, racecheck: bool, cluster) -> None:
    """Run a simulated launch: vectorised where it can be (see the module docstring),
    else on the per-thread scheduler. Records the path in ``kernel.simulate.last_path``."""
    vec, reason = _vectorised(simulated, racecheck, cluster)
    if MODE == "vector" and vec is None:
        raise NotVectorised(reason)
    if vec is None:
        kernel.__dict__["_simulate_path"] = ("threads", reason)
        _threads(simulated, grid, block, host, shared_mem, racecheck, cluster)
        return
    kernel.__dict__["_simulate_path"] = ("vector", None)
    if DIFFERENTIAL:
        _differential(kernel, vec, simulated, grid, block, host, shared_mem)
        return
    arrays = [host[k] for k in vec.written if isinstance(host[k], numpy.ndarray)]
    saved = vecruntime.snapshot(arrays)
    try:
        launch(vec, grid, block, host, shared_mem)
    except KernelArgumentError:
        raise
    except Exception as exc:  # noqa: BLE001 - see below
        # an error the checks found (rerun per thread: its exact thread, message and the
        # writes of the threads before it), a race, or a gap in the vectorised path
        vecruntime.restore(saved)
        if isinstance(exc, vecruntime.Race):
            why = str(exc)
        elif isinstance(exc, KernelAssertionError):
            why = "a check failed: rerun per thread for its place and the writes before it"
        else:
            why = f"the vectorised run failed: {exc!r}"
        kernel.__dict__["_simulate_path"] = ("threads", why)
        _threads(simulated, grid, block, host, shared_mem, racecheck, cluster)


def _threads(simulated, grid, block, host, shared_mem, racecheck, cluster) -> None:
    scheduler.launch(simulated.function, simulated.generator, simulated.program,
                     simulated.namespace, grid, block, host, shared_mem, racecheck, cluster)


def _vectorised(simulated, racecheck, cluster):
    if MODE == "threads":
        return None, "the per-thread scheduler was asked for"
    if racecheck:
        return None, "racecheck=True runs on the per-thread scheduler"
    if cluster is not None or simulated.program.cooperative:
        return None, "clusters and grid sync run on the per-thread scheduler"
    vec = simulated.__dict__.get("vectorised")
    if vec is None:
        vec = simulated.vectorised = build(*simulated.emit_args)
    return (vec if vec.function is not None else None), vec.reason


def _differential(kernel, vec, simulated, grid, block, host, shared_mem) -> None:
    """Both paths on copies of the arguments; the per-thread one is the reference."""
    arrays = [k for k, a in enumerate(host) if isinstance(a, numpy.ndarray)]
    mine = vecruntime.aliased_copies(host, arrays)
    want = None
    try:
        _threads(simulated, grid, block, host, shared_mem, False, None)
    except Exception as exc:  # noqa: BLE001 - compared below, then raised
        want = exc
    got = None
    try:
        launch(vec, grid, block, mine, shared_mem)
    except Exception as exc:  # noqa: BLE001 - compared below
        got = exc
    name = kernel.__name__
    if isinstance(got, vecruntime.Race):
        if want is not None:
            raise want
        return  # a racing kernel: the per-thread order decides (run() runs it per thread)
    if (want is None) != (got is None) or (want is not None and type(want) is not type(got)):
        raise InternalError(
            f"{name}: the vectorised simulation raised {got!r}, the per-thread one {want!r}"
        ) from (got or want)
    if want is not None:
        raise want
    for k in arrays:
        a, b = host[k], mine[k]
        if a.tobytes() != b.tobytes():
            bad = numpy.flatnonzero(_value_bytes(a) != _value_bytes(b))
            if not bad.size:
                continue
            raise InternalError(
                f"{name}: argument {k} differs between the vectorised and the per-thread "
                f"simulation (first differing byte {int(bad[0])}: "
                f"{a.reshape(-1)[int(bad[0]) // a.itemsize]!r} per thread, "
                f"{b.reshape(-1)[int(bad[0]) // b.itemsize]!r} vectorised)"
            )


def _value_bytes(a):
    """The bytes of ``a``'s elements that hold values: NumPy copies a record with a sub-array
    field field by field, leaving its padding as the new memory had it."""
    rows = numpy.ascontiguousarray(a).reshape(-1).view(numpy.uint8).reshape(-1, a.itemsize)
    if a.dtype.fields is None:
        return rows.reshape(-1)
    used = numpy.zeros(a.itemsize, bool)
    _mark_fields(a.dtype, 0, used)
    return numpy.where(used, rows, 0).reshape(-1)


def _mark_fields(dtype, offset, used) -> None:
    if dtype.fields is None:
        used[offset:offset + dtype.itemsize] = True
        return
    for field, at, *_ in dtype.fields.values():
        _mark_fields(field, offset + at, used)


__all__ = ["MODE", "DIFFERENTIAL", "NotVectorised", "VectorEmitter", "build", "run"]
