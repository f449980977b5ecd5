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

The methods live by construct in :mod:`.lower` (assignments, control flow,
functions); this module keeps the emitter's state, output and dispatch.
"""

from __future__ import annotations

import ast
import dataclasses

from ..errors import (
    JitkernOverflowError,
    JitNameError,
    JitOverflowError,
    JitSyntaxError,
    JitTypeError,
)
from . import frontend
from . import types as T
from .expressions import ExpressionEmitter
from .lower.assignments import AssignmentsMixin
from .lower.control import ControlFlowMixin
from .lower.functions import FunctionCode, FunctionsMixin  # noqa: F401 - FunctionCode: sim
from .lower.names import ascii_spelling, generated_name, user_c_name  # noqa: F401 - kernels.jit
from .lower.spelling import CompileProblem, problem
from .lower.backend import Spelling
from .lower.cuda import CUDA
from .lower.texts import _STATEMENT_HINTS
from .program import Program
from .values import Value


class FunctionEmitter(AssignmentsMixin, ControlFlowMixin, FunctionsMixin, ExpressionEmitter):
    """Lowers one function (the kernel, or one specialisation of a device function) for
    the back end whose :class:`~.lower.backend.Spelling` it is given (CUDA C++ by default)."""

    def __init__(
        self,
        parsed: frontend.ParsedFunction,
        arg_types,
        mode: str,
        program: Program,
        kind: str,
        cname: str,
        spelling: Spelling = CUDA,
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
        self.spelling = spelling
        self.state = spelling.state.of(parsed)
        self._bind_params()

    # -- parameters and locals ---------------------------------------------

    def _bind_params(self) -> None:
        self.program.use_structs(self.arg_types)
        for name, t in zip(self.parsed.params, self.arg_types):
            cname = self.c_name(name)
            if isinstance(t, T.Array):
                self.state.aliases[name] = Value(cname, t)
            else:
                self.state.locals[name] = Value(cname, t, lvalue=True)
            if self.passes_extent(t):
                self.state.debug_bounds[cname] = generated_name("shape0", cname)

    def c_name(self, name: str) -> str:
        cname = self.spelling.c_name(name)
        while cname in self.state.cnames:
            cname += "_"
        self.state.cnames.add(cname)
        return cname

    def lookup_local(self, name: str):
        if name in self.state.locals:
            return self.state.locals[name]
        if name in self.state.aliases:
            return self.state.aliases[name]
        return None

    def capture_global(self, name: str):
        if name in self.state.assigned:
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
        self.state.hoisted.append(f"{t.ctype} {cname}{{}};")

    def flag_unset(self, t: T.Type, cname: str) -> None:
        """Debug builds: give a local that some path may leave unassigned a flag, false
        until an assignment runs. Pointers need none: their element count, hoisted as 0,
        fails the bounds check of any access through an unassigned one."""
        if self.program.debug and isinstance(t, (T.Scalar, T.Tuple)):
            flag = self.state.set_flags[cname] = generated_name("set", cname)
            self.state.hoisted.append(f"bool {flag} = false;")

    def mark_set(self, cname: str, indent: str = "", dominates: bool = True) -> None:
        """After an assignment of ``cname``: its flag, if it has one, says so; the reads
        that follow in this block (``dominates``) need no check."""
        flag = self.state.set_flags.get(cname)
        if flag is not None:
            self.line(f"{indent}{flag} = true;")
            if dominates:
                self.state.assigned_here[-1].add(cname)

    def read_local(self, node, local):
        """A read of a flagged local that no earlier assignment in its block (or an
        enclosing one) dominates checks the flag where it happens (inside ``a if c else b``
        too): an unassigned one records the read's site, then reads the zero it was
        initialised with. The compiler folds the checks that every path passes."""
        cname = getattr(local, "code", None)
        flag = self.state.set_flags.get(cname)
        if flag is None or cname in self.state.assigned_here[-1]:
            return local
        site = self.debug_site(local, node.id, node, "unset")
        return dataclasses.replace(local, code=f"jk::dbg::use({local.code}, {flag}, {site})")

    def temp(self, prefix: str = "t") -> str:
        self.state.temps += 1
        return generated_name(f"{prefix}{self.state.temps}")

    # -- output ------------------------------------------------------------

    def line(self, text: str) -> None:
        self.spelling.line(self, text)

    def open_block(self, word: str, cond: str = "") -> None:
        self.spelling.open_block(self, word, cond)

    def close_block(self) -> None:
        end = self.spelling.blocks["end"]  # None where the language needs no closing line
        if end is not None:
            self.line(end)

    def mark_branch(self, node) -> None:
        """An ``elif``'s own line (nothing in C++: no #line between ``}`` and ``else``)."""
        self.spelling.mark_branch(self, node)

    def bind_temp(self, value: Value, prefix: str = "t") -> str:
        """A new temporary holding ``value`` (evaluated once, here); its name."""
        return self.spelling.bind_temp(self, value, prefix)

    def mark(self, node) -> None:
        self.spelling.mark(self, node)

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
        outer, self.state.current_statement = self.state.current_statement, node
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
            self.state.current_statement = outer

    def nested(self, stmts, assigned: str | None = None) -> None:
        """A block's statements; ``assigned``: a local every path into it has assigned
        (the loop variable). What the block assigns is forgotten after it."""
        self.state.depth += 1
        here = self.state.assigned_here
        here.append(here[-1] | ({assigned} if assigned else set()))
        try:
            self.block(stmts)
        finally:
            self.state.assigned_here.pop()
            self.state.depth -= 1

    def stmt_Pass(self, node) -> None:
        pass

    def stmt_Expr(self, node) -> None:
        first = self.spelling.mark_expression_first  # (a barrier's site is its own line)
        if first:
            self.mark(node)
        item = self.expr(node.value)
        if isinstance(item, Value):
            if not first:
                self.mark(node)
            self.line(item.code + ";")

    # -- helpers used by builtin templates ---------------------------------

    def pointer_array_extent(self, item: Value, attr: str, k: int) -> str:
        param = item.code
        if self.kind != "kernel" or param not in self._param_cnames():
            raise problem(
                "the shape of a 1-D contiguous array is only known in the kernel that received it",
                "pass len(x) to the device function as an argument",
            )
        self.state.pointer_extents.setdefault(param, set()).add(k)
        return generated_name(f"shape{k}", param)

    def _param_cnames(self) -> set:
        return {self.lookup_local(p).code for p in self.parsed.params}

    def declare_shared(self, elem: T.Type, size, align) -> str:
        return self.spelling.declare_shared(self, elem, size, align)

    def declare_local(self, elem: T.Type, size: int) -> str:
        """A per-thread array, declared at the function's start (it lives as long as the
        pointer a local variable may keep to it)."""
        return self.spelling.declare_local(self, elem, size)

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
            return self.state.debug_bounds.get(base.code)
        if isinstance(t, T.Array) and t.is_pointer_like and base.code in self._param_cnames():
            if self.kind == "kernel":
                return self.pointer_array_extent(base, "shape", 0)
            return self.state.debug_bounds.get(base.code)
        return None

    def debug_name(self, base: Value) -> str:
        for table in (self.state.aliases, self.state.locals):
            for name, value in table.items():
                if isinstance(value, Value) and value.code == base.code:
                    return name
        return "an array"
