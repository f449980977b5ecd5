"""Stage 3a: lower Python expressions to (C++ expression, type) values.

:class:`ExpressionEmitter` has one ``expr_<Node>`` method per supported AST
expression; anything else is refused in one place (:meth:`expr`). The methods live by
construct in :mod:`.lower` (attributes, subscripts, operators, calls); operators and
builtins go through the records of :mod:`.builtins`; constant operands fold through
:data:`~.lower.spelling.FOLD`. The statement emitter (:mod:`.statements`) extends this class.
"""

from __future__ import annotations

from ..errors import JitkernOverflowError, JitNameError, JitOverflowError, JitSyntaxError
from . import frontend, infer
from . import types as T
from .lower.attributes import AttributesMixin
from .lower.calls import CallsMixin
from .lower.common import _EXPR_HINTS, _construct_name, _describe_const
from .lower.operators import OperatorsMixin
from .lower.spelling import CompileProblem, call_argument, problem

# what the simulator's back end and the tests read from here
from .lower.spelling import FOLD, check_conversion  # noqa: F401
from .lower.subscripts import SubscriptsMixin
from .values import Const, Value


class ExpressionEmitter(AttributesMixin, SubscriptsMixin, OperatorsMixin, CallsMixin):
    """Lowers expressions; what one function's lowering accumulates is ``self.state``
    (:class:`~.lower.state.FunctionState`)."""

    # set by the subclass
    source: frontend.Source
    mode: str
    program: object
    func: object
    state: object

    # -- dispatch ---------------------------------------------------------

    def expr(self, node):
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            raise problem(
                f"{_construct_name(node)} is not supported in kernels",
                _EXPR_HINTS.get(type(node).__name__, ""),
                JitSyntaxError,
                node,
            )
        outer, self.state.current_expr = self.state.current_expr, node
        try:
            return method(node)
        except CompileProblem as exc:
            if exc.node is None:
                exc.node = node
            raise
        except JitkernOverflowError as exc:  # a literal beyond 64 bits met a type rule
            raise problem(
                str(exc), "write it as a float (1e30) or use smaller values", JitOverflowError, node
            ) from None
        finally:
            self.state.current_expr = outer

    def value(self, node) -> Value:
        """Lower ``node`` to a runtime value (materialising a scalar constant)."""
        return self.materialize(self.expr(node))

    def materialize(self, item) -> Value:
        if isinstance(item, Value):
            return item
        if item.is_scalar:
            t = infer.literal_type(item.value, self.mode)
            return Value(self.literal(item.value, t), t)
        raise problem(f"{_describe_const(item.value)} is not a value here")

    # -- leaves -----------------------------------------------------------

    def expr_Constant(self, node):
        if isinstance(node.value, (bool, int, float, complex, str)) or node.value is None:
            return Const(node.value)
        raise problem(f"constant {node.value!r} is not supported in kernels")

    def expr_Name(self, node):
        local = self.lookup_local(node.id)
        if local is not None:
            return self.read_local(node, local)
        return Const(self.capture_global(node.id))

    def read_local(self, node, local):
        """A read of the local ``node`` names (debug builds check it was assigned)."""
        return local

    def capture_global(self, name: str):
        if (name == "breakpoint" and self.spelling.breakpoint is not None
                and name not in self.func.__globals__):
            return breakpoint  # the simulator runs Python: pdb works in kernels
        try:
            captured = self.program.capture(self.func, name)
        except KeyError:
            raise problem(
                f"name {name!r} is not defined",
                "define it before the kernel, pass it as an argument, or assign it in the kernel",
                JitNameError,
            ) from None
        except TypeError as exc:
            raise problem(f"{name!r}: {exc}") from None
        return captured.value

    # -- conversions and helpers for builtin templates ----------------------

    def convert(self, item, target: T.Type) -> Value:
        if isinstance(item, Const):
            if not item.is_scalar:
                raise problem(f"{_describe_const(item.value)} is not a number")
            if target.is_complex if isinstance(target, T.Scalar) else False:
                self.need_complex()
            return Value(self.literal(item.value, target), target)
        if item.type == target:
            return item
        if isinstance(target, T.Scalar) and target.is_complex:
            self.need_complex()
        return Value(self.convert_code(item.code, item.type, target), target)

    def literal(self, value, t: T.Scalar) -> str:
        """The back end's constant ``value`` of type ``t`` (its range and kind checked)."""
        return self.spelling.literal(self, value, t)

    def convert_code(self, code: str, src: T.Type, dst: T.Type) -> str:
        """The back end's conversion of ``code`` from ``src`` to ``dst``."""
        return self.spelling.convert(self, code, src, dst)

    def to_float(self, t: T.Scalar, code: str) -> str:
        inner = call_argument(code, self.half_round(t)) if t.is_half else None
        return inner if inner is not None else self.convert_code(code, t, T.float32)

    def via_float(self, t: T.Scalar, code: str) -> str:
        """A float32 result as type ``t``; a half keeps its float32 value for the next operation."""
        if t.is_half:
            return f"{self.half_round(t)}({code})"
        return self.convert_code(code, T.float32, t)

    def half_round(self, t: T.Scalar) -> str:
        """The back end's function rounding a float32 to the half type ``t`` (_HALF_ROUND)."""
        return self.spelling.half_round(self, t)

    def zero(self, t: T.Scalar) -> str:
        return self.literal(0, t)

    def type_code(self, t: T.Scalar) -> str:
        """The back end's name of the scalar type ``t``."""
        return self.spelling.type_code(self, t)

    # -- what the simulator's builtin spellings (their records' py=) call -------

    def site(self) -> str:
        """``'file:line'`` of the statement being emitted, a literal of the language."""
        return self.spelling.site(self)

    def yields(self, request: str) -> str:
        """A wait for the scheduler (a barrier, a warp collective): the simulator's."""
        return self.spelling.yields(self, request)

    @property
    def context(self) -> str:
        """The leading parameters of every generated function (the simulator's thread)."""
        return self.spelling.context

    def refuse(self, message: str, hint: str = ""):
        """Refuse a builtin call this back end cannot run (a record's ``py`` calls this)."""
        self.spelling.refuse(self, message, hint)

    def tuple_code(self, t: T.Tuple, codes) -> str:
        return self.spelling.tuple_code(self, t, codes)

    def helper(self, name: str) -> str:
        """The back end's spelling of jitkern's run-time helper ``name`` (``jk::name``)."""
        return self.spelling.helper(self, name)

    def render_power(self, t: T.Scalar, a: str, b: str) -> str:
        """``a ** b`` of floats or complex numbers of type ``t``."""
        return self.spelling.power(self, t, a, b)

    def include(self, header: str) -> None:
        self.program.includes.add(header)
        return None

    def need_complex(self) -> None:
        self.program.includes.add("<jitkern/complex.cuh>")

    def require_arch(self, arch: int, what: str) -> None:
        self.program.min_arch = max(self.program.min_arch, arch)
        self.program.arch_needs.setdefault((what, self.span()), arch)

    def span(self) -> str:
        """``file:LINE:COL-ENDCOL`` of the expression being emitted (else its statement):
        where an arch requirement is reported, with a caret, when the target is older."""
        node = self.state.current_expr or self.state.current_statement
        if node is None:
            return self.source.filename
        line, col = self.source.position(node)
        end = col + 1
        if getattr(node, "end_lineno", None) == getattr(node, "lineno", None):
            end = node.end_col_offset + self.source.indent + 1
        return f"{self.source.filename}:{line}:{col}-{end}"

    def where(self) -> str:
        """``file:line`` of the statement being emitted."""
        node = self.state.current_statement
        if node is None:
            return self.source.filename
        return f"{self.source.filename}:{self.source.position(node)[0]}"

    def group_sync(self, item, code: str) -> str:
        return self.spelling.group_sync(self, item, code)
