"""The simulator's back end: the typed program as Python over NumPy scalars.

:data:`PYTHON` is a spelling (:class:`~jitkern.compiler.lower.backend.Spelling`) given to
the one statement emitter of :mod:`jitkern.compiler.statements`: parsing, name resolution,
every type rule (``infer`` and the builtin records' rules) and every error are the CUDA back end's
own, so a kernel the GPU build refuses is refused here with the same message, and a value
has the same type in both. What differs is only the text: constants are NumPy scalars of their type,
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

import numpy

from ..compiler import builtins as B
from ..compiler import frontend
from ..compiler import types as T
from ..compiler.expressions import call_argument, check_conversion, problem
from ..compiler.lower.backend import Spelling
from ..compiler.lower.cuda import CUDA
from ..compiler.lower.spelling import literal as cpp_literal
from ..compiler.lower.state import FunctionState
from ..compiler.program import Program
from ..compiler.statements import FunctionCode, FunctionEmitter
from ..compiler.values import Value
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

    @classmethod
    def of(cls, parsed):
        state = super().of(parsed)
        state.user_line = parsed.source.position(parsed.tree)[0]  # the def's line
        return state


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


# ---------------------------------------------------------------------------
# the Python back end's spellings (compiler/lower/backend.py); ``e`` is the emitter


def _c_name(name: str) -> str:
    return name + "_" if keyword.iskeyword(name) or name.startswith(("_jk", "jk_")) else name


def _line(e, text: str) -> None:
    text = text.removeprefix("auto ")  # an opaque local (a group): Python needs no type
    e.state.body.append((e.state.depth, text, e.state.user_line))


def header(e, text: str) -> None:
    """A block header; ``pass`` keeps an empty (or compile-time pruned) body valid."""
    e.line(text)
    e.state.depth += 1
    e.line("pass")
    e.state.depth -= 1


def _mark(e, node) -> None:
    e.state.user_line = e.source.position(node)[0]


def _site(e) -> str:
    """``'file:line'`` of the statement being emitted, as a Python literal."""
    return repr(f"{e.source.filename}:{e.state.user_line}")


def _yields(e, request: str) -> str:
    e.state.generator = True
    return f"(yield ({request}))"


def _breakpoint(e) -> str:
    return "breakpoint()"  # pdb in the user's source, with its names


def _refuse(e, message: str, hint: str = ""):
    """Refuse a builtin call the simulator cannot run (a record's ``py`` calls this)."""
    raise problem(message, hint)


# -- constants and conversions ---------------------------------------------------


def _literal(e, value, t: T.Scalar) -> str:
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
    return e.program.constant(value, t)


def _convert(e, code: str, src: T.Type, dst: T.Type) -> str:
    check_conversion(src, dst)
    if dst is T.bool_:
        return f"({code} != {e.literal(0, src)})"
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


def _half_round(e, t: T.Scalar) -> str:
    # the GPU build's __float2half_rn; an explicit conversion is _jk_t_float16
    numpy_type(t)  # refused here without ml_dtypes
    return f"_jk_round_{t.name}"  # float16, bfloat16, float8_e4m3fn, float8_e5m2


def _type_code(e, t: T.Scalar) -> str:
    return type_name(t)


# -- expressions ----------------------------------------------------------------


def _tuple_code(e, t: T.Tuple, codes) -> str:
    return "(" + "".join(f"{c}, " for c in codes) + ")"


def _tuple_item(e, item: Value, k: int, checked: Value) -> Value:
    return Value(f"{item.code}[{k % len(item.type.items)}]", checked.type)


def _helper(e, name: str) -> str:
    return "_jk_" + _HELPERS.get(name, name)


def _power(e, t: T.Scalar, a: str, b: str) -> str:
    return f"({a} ** {b})"


def _render(e, record, codes, sig, items):
    """A builtin call in the record's simulator spelling (``py=``, beside its C++)."""
    template = record.py
    if template is B.NEUTRAL:  # the C++ template only calls back into the emitter
        return CUDA.render(e, record, codes, sig, items)
    if template is None:
        raise problem(
            f"{record.name} is not simulated yet",
            "run this kernel on a GPU (docs/debugging.md lists what the simulator runs)",
        )
    if callable(template):
        return template(codes, sig, items, e)
    return template.format(*codes)


def _dim(e, item: Value, attr: str, k: int, known: str | None) -> str:
    return f"_jk_t_int64({item.code}.{attr}[{k}])"  # NumPy's, whatever the C++ passes


def _subscript(e, base: Value, indices: list, checked: Value) -> Value:
    t = base.type
    # a NumPy bool index would select, not index
    codes = [e.convert(i, T.int64).code if i.type is T.bool_ else i.code for i in indices]
    if isinstance(t, T.FancyIterator):  # the value it computes: no memory, no bounds
        return Value(f"_jk_fancy_at({base.code}, {codes[0]})", checked.type)
    name = repr(_array_name(base.code))
    if isinstance(t, T.Pointer) or t.is_pointer_like:
        return element(e, base.code, f"_jk_ix({codes[0]}, {base.code}, {name})", checked.type)
    index = f"_jk_ixn({base.code}, {name}, {', '.join(codes)})"
    if len(indices) == t.ndim:
        return element(e, base.code, index, checked.type)
    return Value(f"{base.code}[{index}]", checked.type)


def element(e, array: str, index: str, elem: T.Type) -> Value:
    """``array[index]``, remembered (for atomics and ``x[i] += v``)."""
    code = f"{array}[{index}]"
    e.state.elements[code] = (array, index)
    return Value(code, elem, lvalue=True)


def _field(e, code: str, attr: str, member: str = "") -> str:
    out = f"{code}[{attr!r}]"  # NumPy's field name (the C++ member's is not used here)
    e.state.fields[out] = (code, attr)
    return out


def _copy_struct(e, code: str) -> str:
    return f"{code}.copy()"  # a struct local is a copy, as in C, not a view


def _declare_shared(e, elem: T.Type, size, align) -> str:
    if getattr(elem, "family", None) == "cub_storage":
        dtype = object  # cub's TempStorage: the simulator's reductions need none
    elif isinstance(elem, T.Scalar):
        dtype = numpy_type(elem)
    else:
        raise problem(f"shared memory of {elem} is not simulated")
    return shared_array(e, elem, size, dtype, "_jk_T.block.dynamic({})", "_jk_T.block.shared[{}]")


def shared_array(e, elem: T.Type, size, dtype, dynamic: str, static: str) -> str:
    """A shared array, taken in the function's prologue: ``dynamic`` over the element
    type's name when ``size`` is None, else ``static`` over the name of a new static array
    of ``size`` elements of ``dtype`` (registered with the program)."""
    if size is None:
        return prologue_temp(e, "smem", dynamic.format(type_name(elem)))
    name = e.program.unique_name("jk_smem")
    e.program.shared[name] = (numpy.dtype(dtype), int(size))
    return prologue_temp(e, "smem", static.format(repr(name)))


def prologue_temp(e, prefix: str, code: str) -> str:
    """A temporary set to ``code`` at the function's start; its name."""
    tmp = e.temp(prefix)
    e.state.prologue.append(f"{tmp} = {code}")
    return tmp


def _declare_local(e, elem: T.Type, size: int) -> str:
    return prologue_temp(e, "local", f"_jk_local({type_name(elem)}, {int(size)})")


def _unary(e, op, v: Value) -> str:
    # NumPy's ~ on a bool is logical not, as C++'s ! is
    return e.render_negative(v) if op is ast.USub else f"(~{v.code})"


def _negative(e, v: Value) -> str:
    return f"(-{v.code})"  # NumPy scalars wrap narrow ints themselves


def _ifexp(e, c: str, a: str, b: str) -> str:
    return f"({a} if {c} else {b})"


def _assign(e, name: str, code: str) -> str:
    return f"({name} := {code})"


def _sequence(e, firsts, last: str) -> str:
    return f"({''.join(c + ', ' for c in firsts)}{last})[-1]"


def _group_sync(e, item, code: str) -> str:
    family = getattr(item.type, "family", None)
    if family == "grid":
        e.program.cooperative = True
        return e.yields(f"_jk_GRID_SYNC, {e.site()}")
    if family == "tile":
        return e.yields(f"_jk_SYNCWARP, {e.site()}, {code}.mask")
    return e.yields(f"_jk_SYNC, {e.site()}, None, None, None")


def _cub_instance(e, cls, storage: Value) -> str:
    if cls.template.family == "warp_reduce":  # the warp's lanes: the reduction's mask
        return "_jk_T.warp_mask"
    return "None"  # the simulator's reductions need no storage


def _device_call(e, fn, values: list) -> str:
    call = f"{fn.cname}({', '.join([CONTEXT] + [v.code for v in values])})"
    called = e.program.functions.get(fn.cname)  # None: a recursive call
    if called is not None and called.generator:
        call = yields_from(e, call)
    return call


def yields_from(e, call: str) -> str:
    """A call of a device function that waits for the scheduler."""
    e.state.generator = True
    return f"(yield from {call})"


def _device_functor(e, device, t: T.Scalar) -> str:
    fn = e.program_device_function(device, (t, t))
    if e.program.functions[fn.cname].generator:
        raise problem("a reduction operator cannot synchronise threads")
    return f"(lambda a, b: {fn.cname}({CONTEXT}, a, b))"


def _printf(e, text: str, args: list) -> str:
    return f"_jk_printf({text!r}, ({''.join(a + ', ' for a in args)}))"


def _print_spec(e, value: Value):
    t = value.type
    kind = "pointer" if isinstance(t, T.Pointer) else _PRINT_KINDS.get(t.kind, "int")
    spec, *args = _PRINT_SPECS["bool" if t is T.bool_ else kind]
    return spec, [a.format(value.code) for a in args]


def _reference(e, element_: Value) -> Value:
    field = e.state.fields.get(element_.code)
    if field is not None:  # p[i].x += v: p[i] (a numpy.void viewing the element) once
        held = e.bind_temp(Value(field[0], element_.type), "ref")
        return Value(e.render_field(held, field[1]), element_.type, lvalue=True)
    array, index = e.state.elements[element_.code]  # every element subscript() made
    held = e.bind_temp(Value(index, T.int64), "ref")  # the index, evaluated once
    return element(e, array, held, element_.type)


def _hold(e, item):
    """A scalar expression computed into a local (a half keeps its float32 value)."""
    if not (isinstance(item, Value) and isinstance(item.type, T.Scalar)):
        return item
    t = item.type
    inner = call_argument(item.code, e.half_round(t)) if t.is_half else None
    tmp = e.temp()
    e.line(f"{tmp} = {inner if inner is not None else item.code}")
    code = f"{e.half_round(t)}({tmp})" if inner is not None else tmp
    return Value(code, item.type, weak=item.weak)


# -- statements -----------------------------------------------------------------


def _open_block(e, word: str, cond: str = "") -> None:
    header(e, e.spelling.blocks[word].format(cond))


def _bind_temp(e, value: Value, prefix: str = "t") -> str:
    tmp = e.temp(prefix)
    e.line(f"{tmp} = {value.code}")
    return tmp


def _range_loop(e, var: Value, items, codes, pragma: str, node) -> None:
    # the values the C++ counter takes, as scalars of the loop's type; the bounds are
    # evaluated once, as in the C++ loop
    header(e, f"for {var.code} in _jk_range({', '.join(codes)}, {type_name(var.type)}):")
    e.loop_body(node.body)


def _constant_loop(e, var: Value, codes: list, node) -> None:
    header(e, f"for {var.code} in ({''.join(c + ', ' for c in codes)}):")
    e.loop_body(node.body)


def _assert_line(e, cond: str | None, message: str, node) -> None:
    e.line(f"if not {cond or 'False'}: _jk_assert_fail({message!r})")


# -- assembly ---------------------------------------------------------------------


def _finish(e) -> FunctionCode:
    first = e.parsed.source.position(e.parsed.tree)[0]
    params = ", ".join([CONTEXT] + [e.lookup_local(p).code for p in e.parsed.params])
    lines = [f"def {e.cname}({params}):", "    pass"]
    mapping = [first, first, first]
    for text in e.state.prologue:
        lines.append("    " + text)
        mapping.append(first)
    for depth, text, user_line in e.state.body:
        lines.append("    " * (depth + 1) + text)
        mapping.append(user_line)
    if e.state.generator:  # make it a generator even when its yields were pruned
        lines.append("    if False: yield")
        mapping.append(mapping[-1])
    text = "\n".join(lines) + "\n"
    e.program.functions[e.cname] = SimFunction(
        e.cname, text, mapping, e.source.filename, e.state.generator,
        e.state.return_type or T.void,
    )
    return FunctionCode(e.cname, text, e.state.return_type or T.void, ())


#: The simulator's spellings, one thread at a time (the per-thread scheduler's).
PYTHON = Spelling(
    name="Python (one thread)", state=SimState,
    c_name=_c_name, line=_line, mark=_mark, mark_expression_first=True, finish=_finish,
    site=_site, context=CONTEXT, yields=_yields, refuse=_refuse, breakpoint=_breakpoint, hold=_hold,
    literal=_literal, convert=_convert, half_round=_half_round, type_code=_type_code,
    tuple_code=_tuple_code, tuple_item=_tuple_item, helper=_helper, power=_power,
    unary=_unary, negative=_negative, bool_words={ast.And: " and ", ast.Or: " or "},
    ifexp=_ifexp, assign=_assign, sequence=_sequence, render=_render, dim=_dim,
    field=_field, copy_struct=_copy_struct, cub_instance=_cub_instance,
    device_call=_device_call, device_functor=_device_functor, group_sync=_group_sync,
    printf=_printf, print_spec=_print_spec, subscript=_subscript, reference=_reference,
    declare_shared=_declare_shared, declare_local=_declare_local,
    blocks={"if": "if {}:", "elif": "elif {}:", "else": "else:", "while": "while {}:",
            "end": None},
    open_block=_open_block, mark_branch=_mark, bind_temp=_bind_temp,
    range_loop=_range_loop, constant_loop=_constant_loop, assert_line=_assert_line,
)  # fmt: skip


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


def run_text(source: str, filename: str, namespace: dict) -> dict:
    """Run generated Python ``source`` (the C subset's translation of a string kernel:
    sim/translated.py) in ``namespace``, which it returns."""
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - text the simulator wrote
    return namespace


def generate(parsed: frontend.ParsedFunction, types: tuple, mode: str, cname: str, py_func):
    """Emit a kernel and its device functions; returns the program (its ``functions``)."""
    program = SimProgram(mode)
    emitter = FunctionEmitter(parsed, types, mode, program, "kernel", cname, PYTHON)
    program.stack.append(py_func)
    emitter.emit()
    return program
