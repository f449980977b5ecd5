"""Calls: builtins bound to their records, device functions, factories, cub objects
and the diagnosis of shadowed builtins (:class:`CallsMixin` of the expression emitter).
"""

from __future__ import annotations

import ast
import types

from ...errors import JitSyntaxError, JitTypeError, JitValueError
from .. import builtins as B
from .. import frontend, infer
from .. import types as T
from ..values import Const, operand, Value
from .common import (
    BoundMethod,
    _describe_const,
    _py_function_record,
    _refuse_negative,
    _shadows_a_builtin,
)
from .spelling import CompileProblem, problem


class CallsMixin:
    """Calls for the expression emitter."""

    # -- calls ------------------------------------------------------------

    def expr_Call(self, node):
        callee = self.expr(node.func)
        args = [self.expr(a) for a in node.args]
        for a in node.args:
            if isinstance(a, ast.Starred):
                raise problem("*args in calls is not supported in kernels", "", JitSyntaxError)
        kwargs = {}
        for kw in node.keywords:
            if kw.arg is None:
                raise problem("**kwargs in calls is not supported in kernels", "", JitSyntaxError)
            kwargs[kw.arg] = self.expr(kw.value)
        if self.program.debug:  # the line of checks made inside the call (atomics, ldg)
            self.state.debug_line = self.source.position(node)[0]
        if isinstance(node.func, ast.Name) and _shadows_a_builtin(node.func.id, callee):
            raise self.shadowed_builtin(node.func.id, callee)
        return self.call(callee, args, kwargs)

    def shadowed_builtin(self, name: str, callee) -> CompileProblem:
        """``abs(x)`` where ``abs`` names a parameter, a local or a global: say which."""
        params = getattr(self, "parsed", None)
        owner = "device function" if getattr(self, "kind", "kernel") == "device" else "kernel"
        if isinstance(callee, Value):
            role = "parameter" if params and name in params.params else "local variable"
            what = f"the {role} {name!r} of the {owner} (of type {callee.type})"
            hint = f"rename the {role}"
        else:
            module = getattr(self.func, "__module__", None) or "the kernel's module"
            what = f"the global {name} = {callee.value!r} of {module}"
            hint = "rename the global, or pass the value as an argument"
        return problem(
            f"{name!r} here is {what}, which shadows Python's {name}(), so it cannot be called",
            f"{hint}; the builtin {name}() is then available in the {owner}",
        )

    def call(self, callee, args, kwargs):
        if isinstance(callee, BoundMethod):
            return self.call_builtin(callee.record, [callee.receiver] + args, kwargs)
        if not isinstance(callee, Const):
            raise problem(f"a value of type {callee.type} is not callable")
        fn = callee.value
        if fn is breakpoint and self.spelling.breakpoint is not None:
            return Value(self.spelling.breakpoint(self), T.void)
        if isinstance(fn, B.Builtin):
            return self.call_builtin(fn, args, kwargs)
        if isinstance(fn, B.Marker):
            return Const(fn)
        if isinstance(fn, B.CubClass):
            return self.cub_instance(fn, args)
        if hasattr(fn, "py_func") and getattr(fn, "device", None) is False:
            raise problem(
                f"{fn.__name__} is a kernel, and a kernel cannot call another kernel",
                f"make {fn.__name__} a device function with @jitkern.rawkernel(device=True) "
                "and call it here, or launch it from the host",
            )
        if hasattr(fn, "__jit_device__"):
            if kwargs:
                raise problem("device functions take positional arguments only")
            return self.call_device(fn, args)
        if frontend.is_dtype(fn):
            return self.call_builtin(B.dtype_cast, [Const(fn)] + args, kwargs)
        if isinstance(fn, types.FunctionType):
            return self.call_factory(fn, args, kwargs)
        record = _py_function_record(fn)
        if record is None:
            raise problem(
                f"{_describe_const(fn)} cannot be called in kernels",
                "see the builtin table in docs/jit.md",
            )
        if (
            record.fold is not None
            and not kwargs
            and args
            and all(isinstance(a, Const) and (a.is_scalar) for a in args)
        ):
            try:
                return Const(record.fold(*[a.value for a in args]))
            except (ValueError, TypeError, OverflowError, ZeroDivisionError) as exc:
                raise problem(f"cannot fold {record.name}(...): {exc}") from None
        return self.call_builtin(record, args, kwargs)

    def call_factory(self, fn, args, kwargs):
        """``make(10)``: a plain Python function run at compile time on constant arguments.

        What it returns must be something a kernel can hold (a device function, a
        number, a dtype); it is then used like a captured global.
        """
        refusal = (
            f"Python function {fn.__qualname__!r} cannot be called from a kernel",
            (
                "decorate it with @jitkern.rawkernel(device=True), or call it with constant "
                "arguments and return a device function (a factory)"
            ),
        )
        if not all(isinstance(a, Const) for a in [*args, *kwargs.values()]):
            raise problem(*refusal)
        try:
            result = fn(*[a.value for a in args], **{k: v.value for k, v in kwargs.items()})
        except Exception as exc:  # noqa: BLE001  (the user's factory failed: say where and why)
            raise problem(f"{fn.__qualname__}(...) raised {type(exc).__name__}: {exc}") from None
        try:
            frontend.capture(result)
        except TypeError:
            raise problem(*refusal) from None
        if isinstance(result, types.FunctionType) and not hasattr(result, "__jit_device__"):
            raise problem(*refusal)
        return Const(result)

    def bind(self, record: B.Builtin, args, kwargs) -> list:
        names = record.param_names()
        star = next((i for i, n in enumerate(names) if n.startswith("*")), None)
        if star is not None:
            return self.bind_varargs(record, names, star, args, kwargs)
        if len(args) > len(names):
            raise problem(
                f"{record.name}() takes at most {len(names)} arguments "
                f"({', '.join(names)}), got {len(args)}"
            )
        bound = list(args)
        defaults = record.defaults()
        first_default = len(names) - len(defaults)
        for i in range(len(args), len(names)):
            name = names[i]
            if name in kwargs:
                bound.append(kwargs.pop(name))
            elif i >= first_default:
                bound.append(Const(defaults[i - first_default]))
            else:
                raise problem(
                    f"{record.name}() is missing the argument {name!r}",
                    f"signature: {record.name}({', '.join(record.params)})",
                )
        if kwargs:
            bad = next(iter(kwargs))
            raise problem(
                f"{record.name}() got an unexpected keyword argument {bad!r}",
                f"signature: {record.name}({', '.join(record.params)})",
            )
        return bound

    def bind_varargs(self, record: B.Builtin, names, star: int, args, kwargs) -> list:
        """``f(*values, key=default, ...)``: the values, then each keyword-only argument."""
        keyword_only = names[star + 1:]
        if len(args) < star:
            raise problem(f"{record.name}() needs at least {star} arguments")
        unknown = [k for k in kwargs if k not in keyword_only]
        if unknown:
            allowed = ", ".join(keyword_only) or "none"
            raise problem(
                f"{record.name}() got an unexpected keyword argument {unknown[0]!r}",
                f"keyword arguments it takes: {allowed}",
            )
        defaults = record.defaults()[-len(keyword_only):] if keyword_only else []
        given = [kwargs.get(k) for k in keyword_only]
        return list(args) + [v if v is not None else Const(d) for v, d in zip(given, defaults)]

    def call_builtin(self, record: B.Builtin, args, kwargs=None):
        items = self.bind(record, args, dict(kwargs or {}))
        items = self.collapse_addresses(record, items)
        try:
            sig = record.rule(items, self.mode)
        except (TypeError, ValueError) as exc:
            raise problem(
                f"{record.name}: {exc}",
                f"{record.name} accepts: {record.accepts}" if record.accepts else "",
                JitValueError if isinstance(exc, ValueError) else JitTypeError,
            ) from None
        for header in record.includes:
            self.include(header)
        if record.cooperative:
            self.program.cooperative = True
        if record.min_arch:
            self.require_arch(record.min_arch, record.name)
        codes = []
        for item, target in zip(items, sig.args):
            if target is None:
                codes.append(item.code if isinstance(item, Value) else "")
            else:
                codes.append(self.convert(item, target).code)
        code = self.render(record, codes, sig, items)
        if isinstance(code, (Value, Const)):
            return code
        weak = record.keeps_weak and all(infer.is_weak(operand(i)) for i in items)
        return Value(code, sig.result, weak=weak)

    def render(self, record: B.Builtin, codes, sig, items):
        """The code of a checked builtin call: its record's template (a back end that
        emits another language, such as the simulator's, overrides only this)."""
        return self.spelling.render(self, record, codes, sig, items)

    def collapse_addresses(self, record, items):
        if not record.address_of:
            return items
        out = list(items)
        for array_pos, index_pos in sorted(record.address_of, reverse=True):
            base = self.materialize(out[array_pos])
            index_item = out[index_pos]
            if isinstance(index_item, Const):
                _refuse_negative(
                    index_item.value if isinstance(index_item.value, tuple) else
                    (index_item.value,)
                )
            if isinstance(index_item, Const) and isinstance(index_item.value, tuple):
                indices = [self.materialize(Const(v)) for v in index_item.value]
            elif isinstance(index_item, Value) and isinstance(index_item.type, T.Tuple):
                indices = [
                    self.tuple_item(index_item, k) for k in range(len(index_item.type.items))
                ]
            else:
                indices = [self.materialize(index_item)]
            element = self.subscript(base, indices)
            out[array_pos : index_pos + 1] = [element]
        return out

    def cub_instance(self, cls: B.CubClass, args):
        if (
            len(args) != 1
            or not isinstance(args[0], Value)
            or getattr(args[0].type, "family", None) != "cub_storage"
        ):
            raise problem(
                f"{cls.cname} takes its TempStorage (e.g. temp[0] of "
                "jit.shared_memory(WarpReduce[T].TempStorage, 1))"
            )
        return Value(self.render_cub_instance(cls, args[0]), cls.instance_type)

    def render_cub_instance(self, cls: B.CubClass, storage: Value) -> str:
        """``WarpReduce[T](temp)``: a checked cub object over its TempStorage."""
        return self.spelling.cub_instance(self, cls, storage)
