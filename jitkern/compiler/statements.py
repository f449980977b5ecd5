"""Stage 3b: lower a function's statements to CUDA C++.

:class:`FunctionEmitter` emits one function (the kernel, or one specialisation
of a device function). Each local's type is fixed at its first assignment and
its declaration is hoisted to the top of the function, zero-initialised, so
Python's function scoping holds in C++ and a local read on a path that did not
assign it reads zero, never an uninitialised variable. A debug build also gives each
local first assigned inside a block a ``bool jk_set_<name>`` flag, set by every
assignment and checked by every read (docs/debug_mode.md). Each statement is
preceded by its Python text as a comment and a ``#line`` directive naming the
user's file.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from typing import ClassVar

from ..errors import (
    JitkernOverflowError,
    JitNameError,
    JitOverflowError,
    JitSyntaxError,
    JitTypeError,
    JitValueError,
)
from . import builtins as B
from . import frontend, infer
from . import types as T
from .expressions import ArrayDims, BoundMethod, CompileProblem, ExpressionEmitter, problem
from .program import DeviceFunction, Program
from .values import Const, Value, operand

RESERVED_NAMES = frozenset(
    """
alignas alignof and asm auto bitand bitor bool break case catch char class compl const
constexpr const_cast continue decltype default delete do double dynamic_cast else enum explicit
export extern false float for friend goto if inline int long mutable namespace new noexcept not
operator or private protected public register reinterpret_cast return short signed sizeof
static static_assert static_cast struct switch template this throw true try typedef typeid
typename union unsigned using virtual void volatile wchar_t while xor threadIdx blockIdx blockDim
gridDim warpSize jk printf min max abs dim3 main half complex cub cooperative_groups
atomicAdd atomicSub atomicExch atomicMin atomicMax atomicInc atomicDec atomicCAS atomicAnd
atomicOr atomicXor
""".split()
)


def _template_functions() -> frozenset:
    """Free functions and namespaces the builtin records' C++ names: a user local of the
    same name would hide them, so such names are mangled too."""
    names = set()
    for record in B.all_records():
        if isinstance(record.template, str):
            names.update(re.findall(r"(?<![.\w])([A-Za-z_]\w*)\s*(?:\(|::|<)", record.template))
    for _record, row in B.MATH:
        names.update(n for n in (row.f32, row.f64, row.complex_fn) if n)
    return frozenset(names)


#: Names a user identifier must not become in C++ (keywords, CUDA's and the builtins').
TAKEN_NAMES = RESERVED_NAMES | _template_functions()

# Naming, in one place. Every name the emitter makes up starts with "jk_" followed by a tag
# without underscores (jk_t3, jk_shape0_x, jk_fn_twice); a user's name becomes a C++ name
# that never starts with "jk": kept when it is a plain ASCII identifier that is not taken,
# otherwise mangled to "jkv_" plus an ASCII spelling. So no made-up name can equal a user's.


def generated_name(tag: str, name: str = "") -> str:
    """A name the emitter makes up: ``jk_<tag>`` or ``jk_<tag>_<c name>``."""
    return f"jk_{tag}_{name}" if name else f"jk_{tag}"


def user_c_name(name: str) -> str:
    """The C++ spelling of a user's Python identifier (see the naming rule above)."""
    return name if _is_plain_c_name(name) else "jkv_" + ascii_spelling(name)


def ascii_spelling(name: str) -> str:
    """``name`` with each non-ASCII character spelled ``_u<hex>_`` (café -> caf_ue9_)."""
    return "".join(ch if ch.isascii() else f"_u{ord(ch):x}_" for ch in name)


def _is_plain_c_name(name: str) -> bool:
    return (
        name.isascii()
        and name.isidentifier()
        and not name.startswith("jk")
        and name not in TAKEN_NAMES
        and "__" not in name
        and not re.match(r"_[A-Z]", name)
    )


@dataclasses.dataclass(frozen=True)
class ParamPlan:
    """How the launcher turns one user argument into kernel parameters.

    ``extras``: ('shape', k) / ('stride', k) values appended after the user's
    arguments, as int64, in order.
    """

    name: str
    type: T.Type
    extras: tuple


@dataclasses.dataclass(frozen=True)
class FunctionCode:
    cname: str
    code: str
    return_type: T.Type
    params: tuple  # ParamPlan per parameter


class FunctionEmitter(ExpressionEmitter):
    def __init__(
        self,
        parsed: frontend.ParsedFunction,
        arg_types,
        mode: str,
        program: Program,
        kind: str,
        cname: str,
    ):
        if len(arg_types) != len(parsed.params):
            raise JitTypeError(
                f"{parsed.qualname}() takes {len(parsed.params)} arguments "
                f"({', '.join(parsed.params)}), got {len(arg_types)}"
            )
        self.parsed = parsed
        self.source = parsed.source
        self.func = parsed.func
        self.mode = mode
        self.program = program
        self.kind = kind
        self.cname = cname
        self.arg_types = tuple(arg_types)
        self.locals: dict[str, Value] = {}
        self.aliases: dict[str, object] = {}  # compile-time bindings (dtypes, arrays, groups)
        self.hoisted: list[str] = []
        self.prologue: list[str] = []
        self.body: list[str] = []
        self.depth = 0
        self.loop_depth = 0
        self.return_type = None
        self.pointer_extents: dict[str, set] = {}  # 1-D array param -> used shape axes
        # Debug builds: pointer C expression -> C++ for its element count.
        self.debug_bounds: dict[str, str] = {}
        # Debug builds: C name of a local that some path may leave unassigned -> its flag.
        self.set_flags: dict[str, str] = {}
        # ... and, per open block, the flagged locals every path to here has assigned.
        self.assigned_here: list[set] = [set()]
        self.debug_line = parsed.source.first_line
        self._tmp = 0
        self._cnames: set[str] = set()
        self.assigned = _assigned_names(parsed.tree)  # Python's rule: these names are local
        self.recursive = False  # called from its own body (directly or through others)
        self._bind_params()

    # -- parameters and locals ---------------------------------------------

    def _bind_params(self) -> None:
        for name, t in zip(self.parsed.params, self.arg_types):
            cname = self.c_name(name)
            if isinstance(t, T.Array):
                self.aliases[name] = Value(cname, t)
            else:
                self.locals[name] = Value(cname, t, lvalue=True)
            if self.passes_extent(t):
                self.debug_bounds[cname] = generated_name("shape0", cname)

    def c_name(self, name: str) -> str:
        cname = user_c_name(name)
        while cname in self._cnames:
            cname += "_"
        self._cnames.add(cname)
        return cname

    def lookup_local(self, name: str):
        if name in self.locals:
            return self.locals[name]
        if name in self.aliases:
            return self.aliases[name]
        return None

    def capture_global(self, name: str):
        if name in self.assigned:
            raise problem(
                f"local variable {name!r} is used before it is assigned",
                "assign it before this line (its type is fixed there)",
                JitNameError,
            )
        return super().capture_global(name)

    def hoist(self, t: T.Type, cname: str) -> None:
        """Declare a local at the top of the function, value-initialised (zero): a local
        assigned on some paths only then reads a defined value, never an uninitialised
        one (the compiler drops the store when every path assigns first)."""
        self.hoisted.append(f"{t.ctype} {cname}{{}};")

    def flag_unset(self, t: T.Type, cname: str) -> None:
        """Debug builds: give a local that some path may leave unassigned a flag, false
        until an assignment runs. Pointers need none: their element count, hoisted as 0,
        fails the bounds check of any access through an unassigned one."""
        if self.program.debug and isinstance(t, (T.Scalar, T.Tuple)):
            flag = self.set_flags[cname] = generated_name("set", cname)
            self.hoisted.append(f"bool {flag} = false;")

    def mark_set(self, cname: str, indent: str = "", dominates: bool = True) -> None:
        """After an assignment of ``cname``: its flag, if it has one, says so; the reads
        that follow in this block (``dominates``) need no check."""
        flag = self.set_flags.get(cname)
        if flag is not None:
            self.line(f"{indent}{flag} = true;")
            if dominates:
                self.assigned_here[-1].add(cname)

    def read_local(self, node, local):
        """A read of a flagged local that no earlier assignment in its block (or an
        enclosing one) dominates checks the flag where it happens (inside ``a if c else b``
        too): an unassigned one records the read's site, then reads the zero it was
        initialised with. The compiler folds the checks that every path passes."""
        cname = getattr(local, "code", None)
        flag = self.set_flags.get(cname)
        if flag is None or cname in self.assigned_here[-1]:
            return local
        site = self.debug_site(local, node.id, node, "unset")
        return dataclasses.replace(local, code=f"jk::dbg::use({local.code}, {flag}, {site})")

    def temp(self, prefix: str = "t") -> str:
        self._tmp += 1
        return generated_name(f"{prefix}{self._tmp}")

    # -- output ------------------------------------------------------------

    def line(self, text: str) -> None:
        self.body.append("    " * (self.depth + 1) + text)

    #: How a back end opens and closes a block: word -> pattern over the condition's code
    #: ("end": the closing line, None where the language needs none).
    BLOCKS: ClassVar[dict] = {
        "if": "if ({}) {{",
        "elif": "}} else if ({}) {{",
        "else": "}} else {{",
        "while": "while ({}) {{",
        "end": "}",
    }

    def open_block(self, word: str, cond: str = "") -> None:
        self.line(self.BLOCKS[word].format(cond))

    def close_block(self) -> None:
        if self.BLOCKS["end"] is not None:
            self.line(self.BLOCKS["end"])

    def mark_branch(self, node) -> None:
        """An ``elif``'s own line: nothing in C++ (no #line between ``}`` and ``else``)."""

    def bind_temp(self, value: Value, prefix: str = "t") -> str:
        """A new temporary holding ``value`` (evaluated once, here); its name."""
        tmp = self.temp(prefix)
        self.line(f"const {value.type.ctype} {tmp} = {value.code};")
        return tmp

    def mark(self, node) -> None:
        lineno, _col = self.source.position(node)
        self.debug_line = lineno
        self.line("// " + self.source.statement_text(node))
        path = self.source.filename.replace("\\", "\\\\").replace('"', '\\"')
        self.body.append(f'#line {lineno} "{path}"')

    # -- statements --------------------------------------------------------

    def emit(self) -> FunctionCode:
        stmts = self.parsed.tree.body
        if (
            stmts
            and isinstance(stmts[0], ast.Expr)
            and isinstance(stmts[0].value, ast.Constant)
            and isinstance(stmts[0].value.value, str)
        ):
            stmts = stmts[1:]  # docstring
        self.block(stmts)
        return self.finish()

    def block(self, stmts) -> None:
        for stmt in stmts:
            self.statement(stmt)

    def statement(self, node) -> None:
        method = getattr(self, "stmt_" + type(node).__name__, None)
        outer, self.current_statement = getattr(self, "current_statement", None), node
        try:
            if method is None:
                name, hint = _STATEMENT_HINTS.get(type(node).__name__, (type(node).__name__, ""))
                raise problem(f"{name} is not supported in kernels", hint, JitSyntaxError, node)
            method(node)
        except CompileProblem as exc:
            raise frontend.error(
                exc.cls, self.source, exc.node or node, exc.message, exc.hint
            ) from None
        except JitkernOverflowError as exc:  # a literal beyond 64 bits given a type here
            raise frontend.error(
                JitOverflowError, self.source, node, str(exc), "write it as a float (1e30)"
            ) from None
        finally:
            self.current_statement = outer

    def nested(self, stmts, assigned: str | None = None) -> None:
        """A block's statements; ``assigned``: a local every path into it has assigned
        (the loop variable). What the block assigns is forgotten after it."""
        self.depth += 1
        self.assigned_here.append(self.assigned_here[-1] | ({assigned} if assigned else set()))
        try:
            self.block(stmts)
        finally:
            self.assigned_here.pop()
            self.depth -= 1

    def stmt_Pass(self, node) -> None:
        pass

    def stmt_Expr(self, node) -> None:
        item = self.expr(node.value)
        if isinstance(item, Value):
            self.mark(node)
            self.line(item.code + ";")

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
        if isinstance(node.target, ast.Subscript):
            # x[g(x)] += v: the base and index are evaluated once, into a reference
            element = self.expr(node.target)
            if not (isinstance(element, Value) and element.lvalue):
                raise problem("this expression cannot be assigned to", "", JitSyntaxError, node)
            element = self.reference(element)
            self.store(element, self.binary(op, element, self.expr(node.value)), node.target)
            return
        raise problem(
            "only names and elements can be updated in place", "", JitSyntaxError, node.target
        )

    def reference(self, element: Value) -> Value:
        """``element`` held so that its address is computed once, here (x[g(x)] += v)."""
        ref = self.temp("ref")
        self.line(f"auto& {ref} = {element.code};")
        return Value(ref, element.type, lvalue=True)

    def assign(self, target, item) -> None:
        if isinstance(target, ast.Name):
            self.assign_name(target, item)
        elif isinstance(target, ast.Subscript):
            self.store(self.expr(target), item, target)
        elif isinstance(target, (ast.Tuple, ast.List)):
            self.unpack(target, item)
        else:
            raise problem(
                f"cannot assign to {type(target).__name__.lower()} in kernels",
                "assign to a name, an array element or a tuple of names",
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
        if name in self.aliases:
            raise problem(
                f"{name!r} is bound to {_binding_text(self.aliases[name])} and cannot "
                "be reassigned",
                "use a new name",
                node=target,
            )
        existing = self.locals.get(name)
        if existing is not None:
            self.check_assignable(item, existing.type, f"variable {name!r} of type", target)
            self.line(f"{existing.code} = {self.convert(item, existing.type).code};")
            self.mark_set(existing.code)
            self.track_extent(existing.code, item)
            return
        if isinstance(item, (ArrayDims, BoundMethod)) or (
            isinstance(item, Const) and not item.is_scalar
        ):
            self.aliases[name] = item
            return
        value = self.materialize(item)
        t = value.type
        if t is T.void:
            raise problem("this call returns nothing", "call it as a statement", node=target)
        if isinstance(t, T.Array):
            self.aliases[name] = value
            return
        cname = self.c_name(name)
        if isinstance(t, T.Opaque) and not t.default_constructible:
            if self.depth:
                raise problem(
                    f"{name!r} ({t}) must be first assigned at the top level of the "
                    "function, not inside a block",
                    "move the assignment up",
                    node=target,
                )
            self.line(f"auto {cname} = {value.code};")
            self.aliases[name] = Value(cname, t)
            return
        self.hoist(t, cname)
        if self.depth:  # first assigned inside a block: other paths may not assign it
            self.flag_unset(t, cname)
        self.locals[name] = Value(cname, t, lvalue=True, weak=value.weak)
        self.line(f"{cname} = {value.code};")
        self.mark_set(cname)
        if self.program.debug and isinstance(t, T.Pointer):
            extent = generated_name("extent", cname)
            self.hoist(T.int64, extent)
            self.debug_bounds[cname] = extent
            self.track_extent(cname, value)

    def track_extent(self, cname: str, item) -> None:
        """Debug builds: a pointer local's element count follows its assignments (-1, not
        checked, when the assigned pointer's count is unknown)."""
        extent = self.debug_bounds.get(cname)
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
            raise problem(f"cannot unpack {_item_text(item)}", "unpack a tuple", node=node)
        if len(values) != count:
            raise problem(f"cannot unpack {len(values)} values into {count} names", node=node)
        return values

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
        self.loop_depth += 1
        try:
            self.nested(stmts, var)
        finally:
            self.loop_depth -= 1

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
        _start, stop, step = items
        start_code, stop_code, step_code = codes
        t = var.type
        self.line("{")
        self.depth += 1
        stop_code = self.loop_bound(stop, t, stop_code, "stop")
        step_code = self.loop_bound(step, t, step_code, "step")
        # A hidden counter drives the loop and the loop variable takes its value at the top
        # of each iteration, as in Python: assigning the variable in the body does not
        # change the iteration, and after the loop it holds the last value it took.
        it = self.temp("it")
        if isinstance(step, Const) or t.kind == "u":
            forward = t.kind == "u" or step.value > 0
            cond = f"{it} {'<' if forward else '>'} {stop_code}"
        else:
            cond = f"({step_code} > 0 ? {it} < {stop_code} : {it} > {stop_code})"
        if pragma:
            self.body.append(pragma)
        self.line(f"for ({t.ctype} {it} = {start_code}; {cond}; {it} += {step_code}) {{")
        self.line(f"    {var.code} = {it};")
        self.mark_set(var.code, "    ", dominates=False)  # not after the loop
        self.loop_body(node.body, var.code)
        self.line("}")
        self.depth -= 1
        self.line("}")

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
            if self.depth:
                self.flag_unset(t, cname)
            var = self.locals[node.target.id] = Value(cname, t, lvalue=True)
        self.constant_loop(var, [self.literal(v, t) for v in values], node)

    def constant_loop(self, var: Value, codes: list, node) -> None:
        """The loop of a checked ``for var in (c0, c1, ...)``, ``codes`` the constants'."""
        table, k = self.temp("values"), self.temp("k")
        self.line("{")
        self.depth += 1
        self.line(f"const {var.type.ctype} {table}[{len(codes)}] = {{{', '.join(codes)}}};")
        self.body.append("#pragma unroll")
        self.line(f"for (int {k} = 0; {k} < {len(codes)}; ++{k}) {{")
        self.line(f"    {var.code} = {table}[{k}];")
        self.mark_set(var.code, "    ", dominates=False)
        self.loop_body(node.body, var.code)
        self.line("}")
        self.depth -= 1
        self.line("}")

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
                    if node.func.id in self.assigned
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
        existing = self.locals.get(target.id)
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
        self.locals[target.id] = value
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
            if self.kind == "device" and self.return_type not in (None, T.void):
                raise problem("this function also returns a value", node=node)
            if self.kind == "device":
                self.return_type = T.void
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
        if self.return_type is None:
            value = self.materialize_deep(item)
            self.return_type = value.type
        else:
            self.check_assignable(item, self.return_type, "the return type", node.value)
            value = (
                self.convert(item, self.return_type)
                if isinstance(self.return_type, T.Scalar)
                else self.materialize_deep(item)
            )
            if value.type != self.return_type:
                raise problem(
                    f"returns {value.type} here but {self.return_type} earlier", node=node.value
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
        lineno, _col = self.source.position(node)
        cond = cond or "false"
        self.line(
            f"if (!{cond}) {{ __assertfail({_c_string(message)}, "
            f"{_c_string(self.source.filename)}, {lineno}, "
            f"{_c_string(self.parsed.qualname)}, 1); }}"
        )

    # -- helpers used by builtin templates ---------------------------------

    def pointer_array_extent(self, item: Value, attr: str, k: int) -> str:
        param = item.code
        if self.kind != "kernel" or param not in self._param_cnames():
            raise problem(
                "the shape of a 1-D contiguous array is only known in the kernel that received it",
                "pass len(x) to the device function as an argument",
            )
        self.pointer_extents.setdefault(param, set()).add(k)
        return generated_name(f"shape{k}", param)

    def _param_cnames(self) -> set:
        return {self.lookup_local(p).code for p in self.parsed.params}

    def declare_shared(self, elem: T.Type, size, align) -> str:
        name = self.program.unique_name(generated_name("smem"))
        align_txt = f"__align__({align}) " if align else ""
        if size is None:
            self.prologue.append("extern __shared__ __align__(16) unsigned char jk_dynamic_smem[];")
            code = f"reinterpret_cast<{elem.ctype}*>(jk_dynamic_smem)"
            self.debug_bounds[code] = f"jk::dbg::dynamic_extent<{elem.ctype}>()"
            return code
        self.prologue.append(f"__shared__ {align_txt}{elem.ctype} {name}[{size}];")
        self.debug_bounds[name] = f"{int(size)}LL"
        return name

    def declare_local(self, elem: T.Type, size: int) -> str:
        """A per-thread array, declared at the function's start (it lives as long as the
        pointer a local variable may keep to it)."""
        name = self.program.unique_name(generated_name("local"))
        self.prologue.append(f"{elem.ctype} {name}[{size}];")
        self.debug_bounds[name] = f"{int(size)}LL"  # debug builds check its indices too
        return name

    # -- debug builds ------------------------------------------------------

    def passes_extent(self, t) -> bool:
        """Debug builds: a device function takes each 1-D contiguous array and pointer with
        its element count after it, so its accesses are checked too."""
        return (
            self.program.debug
            and self.kind == "device"
            and (isinstance(t, T.Pointer) or (isinstance(t, T.Array) and t.is_pointer_like))
        )

    def debug_extent(self, base: Value) -> str | None:
        t = base.type
        if isinstance(t, T.Pointer):
            return self.debug_bounds.get(base.code)
        if isinstance(t, T.Array) and t.is_pointer_like and base.code in self._param_cnames():
            if self.kind == "kernel":
                return self.pointer_array_extent(base, "shape", 0)
            return self.debug_bounds.get(base.code)
        return None

    def debug_name(self, base: Value) -> str:
        for table in (self.aliases, self.locals):
            for name, value in table.items():
                if isinstance(value, Value) and value.code == base.code:
                    return name
        return "an array"

    def printf(self, items, codes, sep, end) -> str:
        """``print(...)``: one printf-style format (constants inline, ``%`` escaped) and
        its arguments; the call's text is :meth:`render_printf`'s."""
        for what, value in (("sep", sep), ("end", end)):
            if not (isinstance(value, Const) and isinstance(value.value, str)):
                raise problem(f"print() takes {what} as a constant string")
        fmt, args = [], []
        for item, code in zip(items, codes):
            if isinstance(item, Const):
                if isinstance(item.value, (str, bool, int, float, complex)):
                    fmt.append(str(item.value).replace("%", "%%"))
                    continue
                raise problem(f"print() cannot show {_const_text(item)}")
            if not isinstance(item.type, (T.Pointer, T.Scalar)):
                raise problem(f"print() cannot show a value of type {item.type}")
            spec, arg = self.print_spec(item)
            fmt.append(spec)
            args.extend(arg)
        text = sep.value.replace("%", "%%").join(fmt) + end.value.replace("%", "%%")
        return self.render_printf(text, args)

    def render_printf(self, text: str, args: list) -> str:
        return f"printf({', '.join([_c_string(text)] + args)})"

    def print_spec(self, value: Value):
        """(conversion, [argument codes]) showing a scalar or a pointer ``value``."""
        t = value.type
        if isinstance(t, T.Pointer):
            return "%p", [f"(const void*)({value.code})"]
        if t is T.bool_:
            return "%s", [f'(({value.code}) ? "True" : "False")']
        if t.is_complex:
            self.need_complex()
            return "(%g%+gj)", [f"(double)({value.code}).real()", f"(double)({value.code}).imag()"]
        if t.is_float:
            return "%g", [
                f"(double)({self.convert(value, T.float32).code if t.is_half else value.code})"
            ]
        if t.kind == "i":
            return (
                ("%lld", [f"(long long)({value.code})"])
                if t.itemsize == 8
                else ("%d", [f"(int)({value.code})"])
            )
        return (
            ("%llu", [f"(unsigned long long)({value.code})"])
            if t.itemsize == 8
            else ("%u", [f"(unsigned int)({value.code})"])
        )

    def device_functor(self, device, t: T.Scalar) -> str:
        fn = self.program_device_function(device, (t, t))
        return (
            f"[] ({t.ctype} a, {t.ctype} b) -> {fn.return_type.ctype} "
            f"{{ return {fn.cname}(a, b); }}"
        )

    def call_device(self, device, args) -> Value:
        params = device.parsed().params
        if len(args) != len(params):
            raise problem(
                f"device function {device.__name__}() takes {len(params)} argument"
                f"{'' if len(params) == 1 else 's'} ({', '.join(params)}), got {len(args)}"
            )
        values = [self.materialize(a) for a in args]
        fn = self.program_device_function(device, tuple(v.type for v in values))
        return Value(self.render_device_call(fn, values), fn.return_type)

    def render_device_call(self, fn: DeviceFunction, values: list) -> str:
        """The call of a checked, specialised device function ``fn``."""
        codes = []
        for v in values:
            codes.append(v.code)
            if self.program.debug and (
                isinstance(v.type, T.Pointer) or getattr(v.type, "is_pointer_like", False)
            ):
                codes.append(self.debug_extent(v) or "-1LL")
        return f"{fn.cname}({', '.join(codes)})"

    def program_device_function(self, device, arg_types) -> DeviceFunction:
        program = self.program
        key = (device.py_func, arg_types)  # per object: a factory's closures share one def
        found = program.device_functions.get(key)
        if found is not None:
            return found
        pending = program.pending.get(key)
        if pending is not None:  # a recursive call: the function being emitted
            return pending.recursive_call()
        if program.stack.count(device.py_func) >= _MAX_RECURSIVE_SPECIALISATIONS:
            chain = " -> ".join(f.__name__ for f in program.stack + [device.py_func])
            raise problem(
                f"each recursive call of {device.__name__} has new argument types ({chain})",
                "convert the arguments so that the recursive calls keep their types",
            )
        parsed = device.parsed()
        cname = program.unique_name(generated_name("fn", user_c_name(parsed.name)))
        emitter = type(self)(parsed, arg_types, self.mode, program, "device", cname)
        program.stack.append(device.py_func)
        program.pending[key] = emitter
        try:
            code = emitter.emit()
        finally:
            program.stack.pop()
            del program.pending[key]
        found = DeviceFunction(cname, code.return_type, code.code)
        program.device_functions[key] = found
        if emitter.recursive:  # C++ needs it declared before its own body calls it
            program.prototypes.append(code.code.split("\n", 1)[0].removesuffix(" {") + ";")
        program.device_code.append(code.code)
        return found

    def recursive_call(self) -> DeviceFunction:
        """This function, called from its own body (directly or through others): its return
        type is the one its returns before this call gave (none anywhere: void)."""
        if self.return_type is None:
            if any(isinstance(n, ast.Return) and n.value is not None
                   for n in ast.walk(self.parsed.tree)):
                raise problem(
                    f"{self.parsed.name} calls itself before a return statement gives its type",
                    "return the base case first (if n < 2: return n), then recurse",
                )
            self.return_type = T.void
        self.recursive = True
        return DeviceFunction(self.cname, self.return_type, "")

    # -- assembly ----------------------------------------------------------

    def finish(self) -> FunctionCode:
        plans, params, setup = self.parameters()
        head = (
            'extern "C" __global__ void'
            if self.kind == "kernel"
            else f"__device__{'' if self.recursive else ' __forceinline__'} "
            f"{(self.return_type or T.void).ctype}"
        )
        decls = ["    " + d for d in setup + self.prologue + self.hoisted]
        text = "\n".join([f"{head} {self.cname}({', '.join(params)}) {{", *decls, *self.body, "}"])
        return FunctionCode(self.cname, text, self.return_type or T.void, tuple(plans))

    def parameters(self):
        plans, params, setup = [], [], []
        extras_params = []
        for name, t in zip(self.parsed.params, self.arg_types):
            cname = self.lookup_local(name).code
            if not isinstance(t, T.Array) or self.kind == "device":
                params.append(f"{t.ctype} {cname}")
                if self.passes_extent(t):
                    params.append(f"long long {generated_name('shape0', cname)}")
                plans.append(ParamPlan(name, t, ()))
                continue
            if t.is_pointer_like or t.ndim == 0:
                params.append(f"{t.ctype} {cname}")
                axes = sorted(self.pointer_extents.get(cname, ()))
                extras = tuple(("shape", k) for k in axes)
                extras_params += [f"long long {generated_name(f'shape{k}', cname)}" for k in axes]
                plans.append(ParamPlan(name, t, extras))
                continue
            ptr = generated_name("ptr", cname)
            params.append(f"{t.dtype.ctype}* {ptr}")
            n = t.ndim
            extras = tuple(("shape", k) for k in range(n)) + tuple(("stride", k) for k in range(n))
            shapes = [generated_name(f"shape{k}", cname) for k in range(n)]
            strides = [generated_name(f"stride{k}", cname) for k in range(n)]
            extras_params += [f"long long {p}" for p in shapes + strides]
            ic = t.index_ctype
            shape = ", ".join(f"({ic}){p}" for p in shapes)
            stride = ", ".join(f"({ic}){p}" for p in strides)
            setup.append(f"const {t.ctype} {cname} = {{{ptr}, {{{shape}}}, {{{stride}}}}};")
            plans.append(ParamPlan(name, t, extras))
        return plans, params + extras_params, setup


#: How many specialisations of one device function may be under emission at once: a
#: recursion whose calls change the argument types (int8 -> int16 -> ...) stops here.
_MAX_RECURSIVE_SPECIALISATIONS = 4


def _assigned_names(tree) -> frozenset:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return frozenset(names)


def unroll_pragma(unroll) -> str:
    """The ``#pragma`` of ``range(..., unroll=...)``; refuses a value it cannot take."""
    if unroll is None:
        return ""
    if unroll is True:
        return "#pragma unroll"
    if unroll is False:
        return "#pragma unroll 1"
    if isinstance(unroll, int) and unroll > 0:
        return f"#pragma unroll {unroll}"
    raise problem("unroll must be True, False or a positive constant int")


def _c_string(text: str) -> str:
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif 32 <= ord(ch) < 127:
            out.append(ch)
        else:
            out.extend(f"\\{b:03o}" for b in ch.encode())
    return '"' + "".join(out) + '"'


def _op_text(op) -> str:
    if infer.is_weak(op):
        return f"{type(op).__name__} (the literal {op!r})"
    return str(op)


def _const_text(item) -> str:
    return repr(item.value)


def _item_text(item) -> str:
    if isinstance(item, Value):
        return f"a value of type {item.type}"
    if isinstance(item, Const):
        return f"{item.value!r} ({type(item.value).__name__})"
    return type(item).__name__


def _binding_text(item) -> str:
    if isinstance(item, Value):
        return f"a {item.type}"
    if isinstance(item, Const):
        return repr(item.value)
    return "a compile-time value"


_STATEMENT_HINTS = {
    "FunctionDef": ("a nested def", "define it at module level with @rawkernel(device=True)"),
    "AsyncFunctionDef": ("async def", ""),
    "ClassDef": ("a class definition", "define classes outside kernels"),
    "With": ("with", ""),
    "AsyncWith": ("async with", ""),
    "AsyncFor": ("async for", ""),
    "Try": ("try", "kernels cannot catch exceptions"),
    "TryStar": ("try", "kernels cannot catch exceptions"),
    "Raise": ("raise", "use assert for device-side checks"),
    "Import": ("import", "import at module level"),
    "ImportFrom": ("import", "import at module level"),
    "Global": ("global", "pass the value as an argument"),
    "Nonlocal": ("nonlocal", "pass the value as an argument"),
    "Delete": ("del", ""),
    "Match": ("match", "use if/elif"),
}
