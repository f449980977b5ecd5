"""The vectorised simulator's emitter (:mod:`.vector` runs what it writes): the one
emitter of :mod:`jitkern.compiler.statements` given :data:`VECTOR`, the spellings of
statements over arrays of threads under a mask (emit.PYTHON's, with stores, loops,
collectives and atomics replaced), and :class:`VectorEmitter`, which lowers control flow
for such arrays: both sides of a divergent ``if`` under their masks, loops while any
thread is in them, ``return``/``break``/``continue`` clearing mask bits, locals some path
leaves unassigned carrying the mask of the threads that assigned them. What it cannot
write that way raises :class:`NotVectorised` (the launch then runs per thread).
"""

from __future__ import annotations

import ast
import dataclasses


from ..compiler import builtins as B
from ..compiler import types as T
from ..compiler.expressions import problem
from ..compiler.statements import FunctionCode, FunctionEmitter, generated_name
from ..compiler.values import Const, Value
from ..errors import JitkernNotImplementedError
from . import emit
from .emit import CONTEXT, SimFunction, type_name

_COLLECTIVES = ("_jk_SYNC", "_jk_SYNCWARP", "_jk_SHFL", "_jk_VOTE", "_jk_ACTIVEMASK")

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


class VectorEmitter(FunctionEmitter):
    """The emitter with control flow lowered for arrays of threads under masks (its
    spellings are :data:`VECTOR`); see the module docstring."""

    program: VectorProgram

    def store_field(self, field, item, node) -> None:
        if isinstance(field, Value) and field.code not in self.state.elements:
            self.refuse("a write to a field of a struct argument (run per thread)")
        super().store_field(field, item, node)


    # -- output -------------------------------------------------------------------


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
                    mask = self.state.mask
                    if mask != outer:
                        self.body_line(f"{mask} = {mask} & {outer}")
                    self.header(f"if _jk_any({self.state.mask}):")
                    self.state.extra += 1
        finally:
            self.state.extra = saved

    def header(self, text: str) -> None:
        self.body_line(text)
        self.state.extra += 1
        self.body_line("pass")
        self.state.extra -= 1

    def body_line(self, text: str) -> None:
        """A line as it is (not a statement to translate), at the current depth."""
        state = self.state
        state.body.append((state.depth + state.extra, text, state.user_line))

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




    # -- expressions ---------------------------------------------------------------------


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


    def expr(self, node):
        item = super().expr(node)
        t = getattr(item, "type", None)
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









    def atomic(self, op: str, codes, sig) -> str:
        array, index = self.state.elements[codes[0]]
        self.note_written(array)
        if index.startswith("_jk_ix("):  # the atomic notes its own access, not a read
            index = "_jk_ixa(" + index[len("_jk_ix(") :]
        if op == "cas":
            code = f"_jk_vatomic_cas({array}, {index}, {codes[1]}, {codes[2]}, {self.state.mask})"
        else:
            code = f"_jk_vatomic({op!r}, {array}, {index}, {codes[1]}, {self.state.mask})"
        looping = bool(self.state.loop_depth or self.state.loops)
        site = {"op": op, "kind": sig.result.kind, "loop": looping,
                "device": self.kind == "device", "used": True}
        self.state.atomic_codes[code] = site
        self.program.atomic_sites.append(site)
        return code





    # -- assembly -------------------------------------------------------------------------



# ---------------------------------------------------------------------------
# the spellings over arrays of threads (the rest are emit.PYTHON's)


def _refuse(e, why: str, hint: str = ""):
    raise NotVectorised(why)


def _field(e, code: str, attr: str, member: str = "") -> str:
    element = e.state.elements.get(code)
    if element is not None:  # p[i].x: element i of the field's view p['x'] (NumPy's)
        array, index = element
        return emit.element(e, f"{array}[{attr!r}]", index, T.void).code
    if code not in e._param_cnames() and code not in e.state.argument_fields:
        e.refuse("struct locals and struct results (run per thread)")
    out = emit.PYTHON.field(e, code, attr)  # of a struct argument: one value for all threads
    e.state.argument_fields.add(out)
    return out


def _copy_struct(e, code: str) -> str:
    e.refuse("struct locals (run per thread)")


def _line(e, text: str) -> None:
    text = text.removeprefix("auto ")
    if text.endswith(";"):
        text = e.translate(text[:-1])
        if text is None:
            return
    e.body_line(text)


def _range_loop(e, var: Value, items, codes, pragma: str, node) -> None:
    _start, _stop, step = items
    start_code, stop_code, step_code = codes
    tn = type_name(var.type)
    e.loop_variable_slot(var)
    it, stop, stp = e.temp("it"), e.temp("stop"), e.temp("step")
    lm, brk = e.temp("lm"), e.temp("brk")
    e.line(f"{it} = _jk_ctr({start_code}, {tn})")
    e.line(f"{stop} = _jk_ctr({stop_code}, {tn})")
    e.line(f"{stp} = _jk_step({step_code}, {e.state.mask}, {tn})")
    e.loop_head(brk, lm, None)
    if isinstance(step, Const) or var.type.kind == "u":
        forward = var.type.kind == "u" or step.value > 0
        e.line(f"{lm} = {brk} & ({it} {'<' if forward else '>'} {stop})")
    else:
        e.line(f"{lm} = {brk} & _jk_in_range({it}, {stop}, {stp})")
    e.line(f"if not _jk_any({lm}): break")
    e.line(f"{brk} = {lm}")
    e.body_line(f"{var.code} = _jk_sel({lm}, {tn}({it}), {var.code})")
    e.masked(lm, lambda: e.mark_set(var.code, dominates=False))
    e.loop_rest(node, lm, brk, var.code)
    e.state.extra += 1
    e.line(f"{it} = {it} + {stp}")
    e.state.extra -= 1


def _constant_loop(e, var: Value, codes: list, node) -> None:
    lm, brk, k = e.temp("lm"), e.temp("brk"), e.temp("k")
    e.loop_variable_slot(var)
    e.loop_head(brk, lm, f"for {k} in ({''.join(c + ', ' for c in codes)}):")
    e.line(f"{lm} = {brk}")
    e.line(f"if not _jk_any({lm}): break")
    e.body_line(f"{var.code} = _jk_sel({lm}, {k}, {var.code})")
    e.masked(lm, lambda: e.mark_set(var.code, dominates=False))
    e.loop_rest(node, lm, brk, var.code)


def _assert_line(e, cond: str | None, message: str, node) -> None:
    failing = e.temp("fail")
    e.line(f"{failing} = {e.state.mask} & ~({cond})" if cond else f"{failing} = {e.state.mask}")
    e.line(f"if _jk_any({failing}): _jk_assert_fail({failing}, {message!r})")


def _power(e, t: T.Scalar, a: str, b: str) -> str:
    # NumPy's scalar ** (the per-thread path's) rounds differently from its array
    # loop: floats are raised thread by thread
    if t.kind in "fc":
        return f"_jk_spow({a}, {b})"
    return f"_jk_np.power({a}, {b})"


def _ifexp(e, c: str, a: str, b: str) -> str:
    return f"_jk_where({c}, {a}, {b})"


def _subscript(e, base: Value, indices: list, checked: Value) -> Value:
    t = base.type
    if isinstance(t, T.FancyIterator):
        e.refuse("a fancy iterator (jit.thrust runs per thread)")
    codes = [e.convert(i, T.int64).code if i.type is T.bool_ else i.code for i in indices]
    name = repr(emit._array_name(base.code))
    if isinstance(t, T.Pointer) or t.is_pointer_like:
        index = f"_jk_ix({codes[0]}, {base.code}, {name}, {e.state.mask})"
        return emit.element(e, base.code, index, checked.type)
    if len(indices) != t.ndim:
        e.refuse("a sub-array of an n-d array")
    index = f"_jk_ixn({base.code}, {name}, {e.state.mask}, {', '.join(codes)})"
    return emit.element(e, base.code, index, checked.type)


def _reference(e, element: Value) -> Value:
    if element.code not in e.state.elements:  # p.x += v of a struct argument
        e.refuse("a write to a field of a struct argument (run per thread)")
    array, index = e.state.elements[element.code]
    held = e.temp("ref")
    e.body_line(f"{held} = {index}")
    return emit.element(e, array, held, element.type)


def _declare_shared(e, elem: T.Type, size, align) -> str:
    if not isinstance(elem, T.Scalar):
        e.refuse(f"shared memory of {elem}")
    dtype = emit.numpy_type(elem)
    return emit.shared_array(e, elem, size, dtype, "_jk_T.dynamic({})", "_jk_T.shared({})")


def _declare_local(e, elem: T.Type, size: int) -> str:
    return emit.prologue_temp(e, "local", f"_jk_T.local({type_name(elem)}, {int(size)})")


def _yields(e, request: str) -> str:
    kind = request.split(",", 1)[0].strip()
    if kind not in _COLLECTIVES or "_jk_op_" in request or "lambda" in request:
        e.refuse(f"the collective {kind}")
    return f"_jk_coll({e.state.mask}, {request})"


#: Complex operations whose NumPy array loop rounds otherwise than NumPy's scalars (the
#: per-thread path's): the product's terms may be fused (FMA), the magnitude is not
#: libm's hypot; these helpers compute as the scalars do.
_COMPLEX_SCALAR_WAY = {"operator *": "_jk_cmul", "abs": "_jk_cabs"}


def _render(e, record, codes, sig, items):
    if record.name in B.ATOMICS:
        return e.atomic(record.name[len("atomic_") :], codes, sig)
    if record.name.startswith("texture.surf"):  # memory no argument holds: one order
        e.refuse(f"{record.name[len('texture.'):]} (surfaces run per thread)")
    if record.name in _COMPLEX_SCALAR_WAY and getattr(sig.args[0], "is_complex", False):
        return f"{_COMPLEX_SCALAR_WAY[record.name]}({', '.join(codes)})"
    return emit.PYTHON.render(e, record, codes, sig, items)


def _device_call(e, fn, values: list) -> str:
    return f"{fn.cname}({', '.join([CONTEXT, e.state.mask] + [v.code for v in values])})"


def _device_functor(e, device, t: T.Scalar) -> str:
    e.refuse("a device function as an operator")


def _printf(e, text: str, args: list) -> str:
    e.refuse("print")


def _finish(e):
    first = e.parsed.source.position(e.parsed.tree)[0]
    params = [CONTEXT, "_jk_m"] + [e.lookup_local(p).code for p in e.parsed.params]
    if e.kind == "kernel":
        e.program.params = tuple(params[2:])
    lines = [f"def {e.cname}({', '.join(params)}):", "    pass", "    jk_live = _jk_m"]
    setup = list(e.state.prologue)
    for cname, flag in e.state.set_flags.items():
        setup += [f"{cname} = None", f"{flag} = _jk_false"]
    if e.kind == "device":
        setup.append("jk_ret = None")
    mapping = [first, first, first, first]
    for text in setup:
        lines.append("    " + text)
        mapping.append(first)
    for depth, text, user_line in e.state.body:
        lines.append("    " * (depth + 1) + text)
        mapping.append(user_line)
    if e.kind == "device":
        lines.append("    return jk_ret")
        mapping.append(mapping[-1])
    text = "\n".join(lines) + "\n"
    rt = e.state.return_type or T.void
    e.program.functions[e.cname] = SimFunction(
        e.cname, text, mapping, e.source.filename, False, rt
    )
    return FunctionCode(e.cname, text, rt, ())


def _open_block(e, word: str, cond: str = "") -> None:
    e.header(e.spelling.blocks[word].format(cond))


def _breakpoint(e):
    e.refuse("breakpoint()")


#: The simulator's spellings over arrays of threads: emit.PYTHON's, with what a batch of
#: threads under a mask writes differently (stores, loops, collectives, atomics) replaced.
VECTOR = dataclasses.replace(
    emit.PYTHON, name="Python (arrays of threads)", state=VectorState, refuse=_refuse,
    field=_field, copy_struct=_copy_struct, line=_line, power=_power, ifexp=_ifexp,
    bool_words={ast.And: " & ", ast.Or: " | "}, subscript=_subscript, reference=_reference,
    declare_shared=_declare_shared, declare_local=_declare_local, yields=_yields,
    render=_render, device_call=_device_call, device_functor=_device_functor,
    printf=_printf, finish=_finish, open_block=_open_block, range_loop=_range_loop,
    constant_loop=_constant_loop, assert_line=_assert_line, breakpoint=_breakpoint,
)  # fmt: skip


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


__all__ = ["NotVectorised", "VECTOR", "VectorEmitter", "VectorProgram"]
