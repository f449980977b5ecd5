"""Functions: ``print``, calls of device functions (recursive ones included, declared
ahead), and the emitted function's signature and parameters
(:class:`FunctionsMixin` of the function emitter).
"""

from __future__ import annotations

import ast
import dataclasses

from ...errors import JitRecursionError
from .. import types as T
from ..program import DeviceFunction
from ..values import Const, Value
from .names import generated_name, user_c_name
from .spelling import problem
from .texts import _const_text


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


#: How many specialisations of one device function may be under emission at once: a
#: recursion whose calls change the argument types (int8 -> int16 -> ...) stops here.
_MAX_RECURSIVE_SPECIALISATIONS = 4


class FunctionsMixin:
    """``print``, device-function calls and the signature for the function emitter."""

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
        return self.spelling.printf(self, text, args)

    def print_spec(self, value: Value):
        """(conversion, [argument codes]) showing a scalar or a pointer ``value``."""
        return self.spelling.print_spec(self, value)

    def device_functor(self, device, t: T.Scalar) -> str:
        return self.spelling.device_functor(self, device, t)

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
        return self.spelling.device_call(self, fn, values)

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
        emitter = type(self)(parsed, arg_types, self.mode, program, "device", cname,
                             self.spelling)
        program.stack.append(device.py_func)
        program.pending[key] = emitter
        try:
            code = emitter.emit()
        finally:
            program.stack.pop()
            del program.pending[key]
        found = DeviceFunction(cname, code.return_type, code.code)
        program.device_functions[key] = found
        if emitter.state.recursive:  # C++ needs it declared before its own body calls it
            program.prototypes.append(code.code.split("\n", 1)[0].removesuffix(" {") + ";")
        program.device_code.append(code.code)
        return found

    def recursive_call(self) -> DeviceFunction:
        """This function, called from its own body (directly or through others): its return
        type is the one its returns before this call gave (none anywhere: void)."""
        if self.state.return_type is None:
            if any(isinstance(n, ast.Return) and n.value is not None
                   for n in ast.walk(self.parsed.tree)):
                raise problem(
                    f"{self.parsed.name} calls itself before a return statement gives its type",
                    "return the base case first (if n < 2: return n), then recurse",
                    JitRecursionError,
                )
            self.state.return_type = T.void
        self.state.recursive = True
        return DeviceFunction(self.cname, self.state.return_type, "")

    # -- assembly ----------------------------------------------------------

    def finish(self) -> FunctionCode:
        return self.spelling.finish(self)

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
                axes = sorted(self.state.pointer_extents.get(cname, ()))
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
