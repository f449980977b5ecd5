"""The simulator's back end: the typed program as Python over NumPy scalars.

:class:`PyEmitter` is the statement emitter of :mod:`..statements` with the spelling
changed: parsing, name resolution, every type rule (``infer`` and the builtin
records' rules) and every error are the CUDA back end's own, so a kernel the GPU
build refuses is refused here with the same message, and a value has the same type
in both. What differs is only the text: constants are NumPy scalars of their type,
conversions are NumPy constructors (or the C++ rule where NumPy differs, see
:mod:`.runtime`), builtins render through their records' ``py`` spelling, and a barrier or a warp
collective is a ``yield`` to the scheduler.

Each generated line remembers the user's line; :func:`compile_function` gives the
code object the user's file name and those line numbers, so tracebacks, ``pdb``
and the checks' messages point at the kernel's source.
"""

from __future__ import annotations

import ast
import dataclasses
import keyword
from typing import ClassVar

import numpy

from ..compiler import builtins as B
from ..compiler import frontend
from ..compiler import types as T
from ..compiler.expressions import ExpressionEmitter, call_argument, check_conversion, problem
from ..compiler.expressions import literal as cpp_literal
from ..compiler.lower.state import FunctionState
from ..compiler.program import Program
from ..compiler.statements import FunctionCode, FunctionEmitter
from ..compiler.values import Const, Value
from . import runtime

#: The leading parameters of every generated function: the thread, its indices, its block's.
CONTEXT = "_jk_T, _jk_tx, _jk_ty, _jk_tz, _jk_bx, _jk_by, _jk_bz"

_NUMPY_NAMES = {"bool": "bool_"}


class SimProgram(Program):
    """A program's state for the Python back end: constants, shared arrays, functions."""

    def __init__(self, mode: str):
        super().__init__(mode)
        self.constants: dict = {}  # name -> NumPy scalar
        self._constant_names: dict = {}  # (type name, repr) -> name
        self.shared: dict = {}  # name -> (dtype, size) of a static shared array
        self.functions: dict = {}  # cname -> SimFunction, callees first

    def constant(self, value, t: T.Scalar) -> str:
        key = (t.name, repr(value), type(value).__name__)
        name = self._constant_names.get(key)
        if name is None:
            name = f"_jk_k{len(self.constants)}"
            cls = numpy_type(t)
            self.constants[name] = runtime.saturating(cls)(value) if t.is_float8 else cls(value)
            self._constant_names[key] = name
        return name


@dataclasses.dataclass
class SimState(FunctionState):
    """A function's state in the Python back ends: also where its lines come from."""

    generator: bool = False  # a barrier or a collective makes the function a generator
    user_line: int = 0  # the user's line of the statement being emitted
    elements: dict = dataclasses.field(default_factory=dict)  # element code -> (array, index)
    fields: dict = dataclasses.field(default_factory=dict)  # field code -> (struct, field name)


class SimFunction:
    def __init__(self, cname, text, lines, filename, generator, return_type):
        self.cname = cname
        self.text = text
        self.lines = lines  # user line per generated line (1-based, index 0 unused)
        self.filename = filename
        self.generator = generator
        self.return_type = return_type


def numpy_type(t: T.Scalar):
    if t.name == "bfloat16" or t.is_float8:  # NumPy has none of these: ml_dtypes' types
        dtype = T.ml_dtype(t.name)
        if dtype is None:
            raise problem(
                f"{t.name} is simulated with ml_dtypes, which is not installed",
                "pip install ml_dtypes (NumPy has no such type)",
            )
        return dtype.type
    return getattr(numpy, _NUMPY_NAMES.get(t.name, t.name))


def type_name(t: T.Scalar) -> str:
    numpy_type(t)
    return f"_jk_t_{t.name}"


class PyEmitter(FunctionEmitter):
    """FunctionEmitter emitting Python; see the module docstring."""

    program: SimProgram

    State = SimState

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.state.user_line = self.parsed.source.position(self.parsed.tree)[0]

    # -- names and output ------------------------------------------------------

    def c_name(self, name: str) -> str:
        cname = name
        if keyword.iskeyword(cname) or cname.startswith(("_jk", "jk_")):
            cname += "_"
        while cname in self.state.cnames:
            cname += "_"
        self.state.cnames.add(cname)
        return cname

    def line(self, text: str) -> None:
        text = text.removeprefix("auto ")  # an opaque local (a group): Python needs no type
        self.state.body.append((self.state.depth, text, self.state.user_line))

    def header(self, text: str) -> None:
        """A block header; ``pass`` keeps an empty (or compile-time pruned) body valid."""
        self.line(text)
        self.state.depth += 1
        self.line("pass")
        self.state.depth -= 1

    def mark(self, node) -> None:
        self.state.user_line = self.source.position(node)[0]

    def site(self) -> str:
        """``'file:line'`` of the statement being emitted, as a Python literal."""
        return repr(f"{self.source.filename}:{self.state.user_line}")

    def yields(self, request: str) -> str:
        self.state.generator = True
        return f"(yield ({request}))"

    # -- constants and conversions ---------------------------------------------

    def literal(self, value, t: T.Scalar) -> str:
        cpp_literal(value, t)  # the GPU build's checks and errors (range, kind)
        if t.is_complex:
            value = complex(value)
        elif t.is_float:
            value = float(value)
            if t.is_half:
                value = numpy.float32(value)  # C++ rounds a half constant through float
        elif t is T.bool_:
            value = bool(value)
        else:
            value = int(value)
        return self.program.constant(value, t)

    def convert_code(self, code: str, src: T.Type, dst: T.Type) -> str:
        check_conversion(src, dst)
        if dst is T.bool_:
            return f"({code} != {self.literal(0, src)})"
        cls = type_name(dst)
        if dst.is_half:
            if src.kind in "fiub" and src is not T.float32 and not src.is_half:
                code = f"_jk_t_float32({code})"
            if dst.is_float8:  # CUDA's constructor saturates; ml_dtypes' does not
                return f"_jk_to_{dst.name}({code})"
            return f"{cls}({code})"
        if dst.kind in "iu" and src.kind == "f":
            return f"_jk_f2i({code}, {cls})"
        return f"{cls}({code})"

    def half_round(self, t: T.Scalar) -> str:
        # the GPU build's __float2half_rn; an explicit conversion is _jk_t_float16
        return f"_jk_round_{t.name}"  # float16, bfloat16, float8_e4m3fn, float8_e5m2

    def via_float(self, t: T.Scalar, code: str) -> str:
        if t.is_half:
            numpy_type(t)  # refused here without ml_dtypes
        return super().via_float(t, code)

    def zero(self, t: T.Scalar) -> str:
        return self.literal(0, t)

    context = CONTEXT

    def type_code(self, t: T.Scalar) -> str:
        return type_name(t)

    def tuple_code(self, t: T.Tuple, codes) -> str:
        return "(" + "".join(f"{c}, " for c in codes) + ")"

    def tuple_item(self, item: Value, k: int) -> Value:
        checked = super().tuple_item(item, k)  # the GPU build's checks and errors
        return Value(f"{item.code}[{k % len(item.type.items)}]", checked.type)

    def helper(self, name: str) -> str:
        return "_jk_" + _HELPERS.get(name, name)

    def render_power(self, t: T.Scalar, a: str, b: str) -> str:
        return f"({a} ** {b})"

    def render(self, record, codes, sig, items):
        """A builtin call in the record's simulator spelling (``py=``, beside its C++)."""
        template = record.py
        if template is B.NEUTRAL:  # the C++ template only calls back into the emitter
            return ExpressionEmitter.render(self, record, codes, sig, items)
        if template is None:
            raise problem(
                f"{record.name} is not simulated yet",
                "run this kernel on a GPU (docs/debugging.md lists what the simulator runs)",
            )
        if callable(template):
            return template(codes, sig, items, self)
        return template.format(*codes)

    def refuse(self, message: str, hint: str = ""):
        """Refuse a builtin call the simulator cannot run (a record's ``py`` calls this)."""
        raise problem(message, hint)

    # -- arrays ------------------------------------------------------------------

    def render_dim(self, item: Value, attr: str, k: int, known: str | None) -> str:
        return f"_jk_t_int64({item.code}.{attr}[{k}])"  # NumPy's, whatever the C++ passes

    def subscript(self, base: Value, indices: list) -> Value:
        checked = super().subscript(base, indices)  # the GPU build's checks and errors
        t = base.type
        # a NumPy bool index would select, not index
        codes = [self.convert(i, T.int64).code if i.type is T.bool_ else i.code for i in indices]
        if isinstance(t, T.FancyIterator):  # the value it computes: no memory, no bounds
            return Value(f"_jk_fancy_at({base.code}, {codes[0]})", checked.type)
        name = repr(_array_name(base.code))
        if isinstance(t, T.Pointer) or t.is_pointer_like:
            return self.element(base.code, f"_jk_ix({codes[0]}, {base.code}, {name})", checked.type)
        index = f"_jk_ixn({base.code}, {name}, {', '.join(codes)})"
        if len(indices) == t.ndim:
            return self.element(base.code, index, checked.type)
        return Value(f"{base.code}[{index}]", checked.type)

    def element(self, array: str, index: str, elem: T.Type) -> Value:
        code = f"{array}[{index}]"
        self.state.elements[code] = (array, index)
        return Value(code, elem, lvalue=True)

    # -- structs: numpy.void records (an array element's is a view of it) ------------

    def render_field(self, code: str, attr: str, member: str = "") -> str:
        out = f"{code}[{attr!r}]"  # NumPy's field name (the C++ member's is not used here)
        self.state.fields[out] = (code, attr)
        return out

    def copy_struct(self, code: str) -> str:
        return f"{code}.copy()"  # a struct local is a copy, as in C, not a view

    def declare_shared(self, elem: T.Type, size, align) -> str:
        if getattr(elem, "family", None) == "cub_storage":
            dtype = object  # cub's TempStorage: the simulator's reductions need none
        elif isinstance(elem, T.Scalar):
            dtype = numpy_type(elem)
        else:
            raise problem(f"shared memory of {elem} is not simulated")
        if size is None:
            code = f"_jk_T.block.dynamic({type_name(elem)})"
        else:
            name = self.program.unique_name("jk_smem")
            self.program.shared[name] = (numpy.dtype(dtype), int(size))
            code = f"_jk_T.block.shared[{name!r}]"
        tmp = self.temp("smem")
        self.state.prologue.append(f"{tmp} = {code}")
        return tmp

    def declare_local(self, elem: T.Type, size: int) -> str:
        tmp = self.temp("local")
        self.state.prologue.append(f"{tmp} = _jk_local({type_name(elem)}, {int(size)})")
        return tmp

    # -- operators and expressions whose C++ spelling is inline -----------------

    BOOL_WORDS: ClassVar[dict] = {ast.And: " and ", ast.Or: " or "}

    def render_unary(self, op, v: Value) -> str:
        # NumPy's ~ on a bool is logical not, as C++'s ! is
        return self.render_negative(v) if op is ast.USub else f"(~{v.code})"

    def render_negative(self, v: Value) -> str:
        return f"(-{v.code})"  # NumPy scalars wrap narrow ints themselves

    def render_ifexp(self, c: str, a: str, b: str) -> str:
        return f"({a} if {c} else {b})"

    def render_assign(self, name: str, code: str) -> str:
        return f"({name} := {code})"

    def render_sequence(self, firsts, last: str) -> str:
        return f"({''.join(c + ', ' for c in firsts)}{last})[-1]"

    def group_sync(self, item, code: str) -> str:
        family = getattr(item.type, "family", None)
        if family == "grid":
            self.program.cooperative = True
            return self.yields(f"_jk_GRID_SYNC, {self.site()}")
        if family == "tile":
            return self.yields(f"_jk_SYNCWARP, {self.site()}, {code}.mask")
        return self.yields(f"_jk_SYNC, {self.site()}, None, None, None")

    def render_cub_instance(self, cls, storage: Value) -> str:
        if cls.template.family == "warp_reduce":  # the warp's lanes: the reduction's mask
            return "_jk_T.warp_mask"
        return "None"  # the simulator's reductions need no storage

    def capture_global(self, name: str):
        if name == "breakpoint" and name not in self.func.__globals__:
            return breakpoint  # the simulator runs Python: pdb works in kernels
        return super().capture_global(name)

    def call(self, callee, args, kwargs):
        if isinstance(callee, Const) and callee.value is breakpoint:
            return Value("breakpoint()", T.void)  # pdb in the user's source, with its names
        return super().call(callee, args, kwargs)

    def render_device_call(self, fn, values: list) -> str:
        call = f"{fn.cname}({', '.join([CONTEXT] + [v.code for v in values])})"
        called = self.program.functions.get(fn.cname)  # None: a recursive call
        if called is not None and called.generator:
            call = self.yields_from(call)
        return call

    def yields_from(self, call: str) -> str:
        self.state.generator = True
        return f"(yield from {call})"

    def device_functor(self, device, t: T.Scalar) -> str:
        fn = self.program_device_function(device, (t, t))
        if self.program.functions[fn.cname].generator:
            raise problem("a reduction operator cannot synchronise threads")
        return f"(lambda a, b: {fn.cname}({CONTEXT}, a, b))"

    def render_printf(self, text: str, args: list) -> str:
        return f"_jk_printf({text!r}, ({''.join(a + ', ' for a in args)}))"

    def print_spec(self, value: Value):
        t = value.type
        kind = "pointer" if isinstance(t, T.Pointer) else _PRINT_KINDS.get(t.kind, "int")
        spec, *args = _PRINT_SPECS["bool" if t is T.bool_ else kind]
        return spec, [a.format(value.code) for a in args]

    # -- statements whose C++ spelling is inline ---------------------------------

    def stmt_Expr(self, node) -> None:
        self.mark(node)  # before the expression: a barrier's site is this line
        super().stmt_Expr(node)

    def reference(self, element: Value) -> Value:
        field = self.state.fields.get(element.code)
        if field is not None:  # p[i].x += v: p[i] (a numpy.void viewing the element) once
            held = self.bind_temp(Value(field[0], element.type), "ref")
            return Value(self.render_field(held, field[1]), element.type, lvalue=True)
        array, index = self.state.elements[element.code]  # every element subscript() made
        held = self.bind_temp(Value(index, T.int64), "ref")  # the index, evaluated once
        return self.element(array, held, element.type)

    def expr_BinOp(self, node):
        # Python's parser nests at most 200 parentheses: a long chain (a + b + ... , each
        # link parenthesised) is held in a local every _CHAIN_LINKS links
        chain, first = [], node
        while isinstance(first, ast.BinOp):
            chain.append(first)
            first = first.left
        if len(chain) <= _CHAIN_LINKS:
            return super().expr_BinOp(node)
        result = self.expr(first)
        for k, link in enumerate(reversed(chain)):
            right = self.expr(link.right)
            op = type(link.op).__name__
            result = self.at(link, lambda r=result, v=right, o=op: self.binary(o, r, v))
            if k % _CHAIN_LINKS == _CHAIN_LINKS - 1:
                result = self.hold(result)
        return result

    def hold(self, item):
        """A scalar expression computed into a local (a half keeps its float32 value)."""
        if not (isinstance(item, Value) and isinstance(item.type, T.Scalar)):
            return item
        t = item.type
        inner = call_argument(item.code, self.half_round(t)) if t.is_half else None
        tmp = self.temp()
        self.line(f"{tmp} = {inner if inner is not None else item.code}")
        code = f"{self.half_round(t)}({tmp})" if inner is not None else tmp
        return Value(code, item.type, weak=item.weak)

    BLOCKS: ClassVar[dict] = {
        "if": "if {}:",
        "elif": "elif {}:",
        "else": "else:",
        "while": "while {}:",
        "end": None,
    }

    def open_block(self, word: str, cond: str = "") -> None:
        self.header(self.BLOCKS[word].format(cond))

    def mark_branch(self, node) -> None:
        self.mark(node)

    def bind_temp(self, value: Value, prefix: str = "t") -> str:
        tmp = self.temp(prefix)
        self.line(f"{tmp} = {value.code}")
        return tmp

    def range_loop(self, var: Value, items, codes, pragma: str, node) -> None:
        # the values the C++ counter takes, as scalars of the loop's type; the bounds are
        # evaluated once, as in the C++ loop
        self.header(f"for {var.code} in _jk_range({', '.join(codes)}, {type_name(var.type)}):")
        self.loop_body(node.body)

    def constant_loop(self, var: Value, codes: list, node) -> None:
        self.header(f"for {var.code} in ({''.join(c + ', ' for c in codes)}):")
        self.loop_body(node.body)

    def assert_line(self, cond: str | None, message: str, node) -> None:
        self.line(f"if not {cond or 'False'}: _jk_assert_fail({message!r})")

    # -- assembly ----------------------------------------------------------------

    def finish(self) -> FunctionCode:
        first = self.parsed.source.position(self.parsed.tree)[0]
        params = ", ".join([CONTEXT] + [self.lookup_local(p).code for p in self.parsed.params])
        lines = [f"def {self.cname}({params}):", "    pass"]
        mapping = [first, first, first]
        for text in self.state.prologue:
            lines.append("    " + text)
            mapping.append(first)
        for depth, text, user_line in self.state.body:
            lines.append("    " * (depth + 1) + text)
            mapping.append(user_line)
        if self.state.generator:  # make it a generator even when its yields were pruned
            lines.append("    if False: yield")
            mapping.append(mapping[-1])
        text = "\n".join(lines) + "\n"
        self.program.functions[self.cname] = SimFunction(
            self.cname,
            text,
            mapping,
            self.source.filename,
            self.state.generator,
            self.state.return_type or T.void,
        )
        return FunctionCode(self.cname, text, self.state.return_type or T.void, ())


_CHAIN_LINKS = 64


#: print()'s conversion and argument patterns, by the kind of value shown.
_PRINT_SPECS = {
    "pointer": ("%#x", "id({})"),
    "bool": ("%s", "('True' if {} else 'False')"),
    "complex": ("(%g%+gj)", "float({}.real)", "float({}.imag)"),
    "float": ("%g", "float({})"),
    "int": ("%d", "int({})"),
}
_PRINT_KINDS = {"c": "complex", "f": "float"}

#: The C++ run-time helper (jk::name) -> its function in .runtime, where the names differ.
_HELPERS = {"pow2": "square", "uipow": "ipow"}


def _array_name(code: str) -> str:
    return code.split("[", 1)[0]


def compile_function(fn: SimFunction, namespace: dict):
    """Define ``fn`` in ``namespace``, its code object naming the user's file and lines."""
    tree = ast.parse(fn.text, filename=f"<jitkern simulate {fn.cname}>")
    last = len(fn.lines) - 1
    for node in ast.walk(tree):
        if hasattr(node, "lineno") and node.lineno is not None:
            line = fn.lines[min(node.lineno, last)]
            node.lineno = node.end_lineno = line
            node.col_offset = node.end_col_offset = 0
    code = compile(tree, fn.filename, "exec")
    exec(code, namespace)  # noqa: S102 - the generated kernel, compiled just above
    return namespace[fn.cname]


def generate(parsed: frontend.ParsedFunction, types: tuple, mode: str, cname: str, py_func):
    """Emit a kernel and its device functions; returns the program (its ``functions``)."""
    program = SimProgram(mode)
    emitter = PyEmitter(parsed, types, mode, program, "kernel", cname)
    program.stack.append(py_func)
    emitter.emit()
    return program
