"""The CUDA C++ back end's spellings (:class:`.backend.Spelling`): what the shared
emitter's decisions look like in the C++ that NVRTC compiles. Each function takes the
emitter first (:mod:`.backend`); :data:`CUDA` is the table."""

from __future__ import annotations

import ast

from ...errors import JitSyntaxError
from .. import builtins as B
from .. import types as T
from ..program import DeviceFunction
from ..values import Const, Value
from .backend import Spelling
from .functions import FunctionCode
from .names import generated_name, user_c_name
from .spelling import _HALF_ROUND, convert, literal, problem
from .state import FunctionState
from .texts import _c_string


def _literal(e, value, t: T.Scalar) -> str:
    """The back end's constant ``value`` of type ``t`` (:func:`literal` checks range and kind)."""
    return literal(value, t)


def _convert(e, code: str, src: T.Type, dst: T.Type) -> str:
    """The back end's conversion of ``code`` from ``src`` to ``dst``."""
    return convert(code, src, dst)


def _half_round(e, t: T.Scalar) -> str:
    """The back end's function rounding a float32 to the half type ``t`` (_HALF_ROUND)."""
    return _HALF_ROUND[t.name]


def _tuple_code(e, t: T.Tuple, codes) -> str:
    nested = "{}"
    for code in reversed(list(codes)):
        nested = f"{{{code}, {nested}}}"
    return f"{t.ctype}{nested}"


def _helper(e, name: str) -> str:
    """The back end's spelling of jitkern's run-time helper ``name`` (``jk::name``)."""
    return f"jk::{name}"


def _power(e, t: T.Scalar, a: str, b: str) -> str:
    """``a ** b`` of floats or complex numbers of type ``t``."""
    return f"{'powf' if t is T.float32 else 'pow'}({a}, {b})"


def _group_sync(e, item, code: str) -> str:
    if getattr(item.type, "family", None) == "grid":
        e.program.cooperative = True
    return f"cooperative_groups::sync({code})"


def _unary(e, op, v: Value) -> str:
    """The text of a checked ``not`` (``v`` a bool), ``~`` (an integer or bool) or ``-``."""
    t = v.type
    if op is ast.USub:
        return e.render_negative(v)
    if op is ast.Not or t is T.bool_:
        return f"(!{v.code})"
    return f"(({t.ctype})~{v.code})"


def _negative(e, v: Value) -> str:
    """``-v`` of a number (unary minus and numpy.negative)."""
    t = v.type
    if t.is_complex:
        e.need_complex()
    if t.itemsize < 4 and t.kind in "iu":
        return f"(({t.ctype})(-{v.code}))"
    if t.is_float8:  # cuda_fp8.h has no arithmetic: negated in float32 (exact)
        return e.via_float(t, f"(-{e.to_float(t, v.code)})")
    return f"(-{v.code})"


def _assign(e, name: str, code: str) -> str:
    """An expression storing ``code`` in the local ``name``, whose value it is."""
    return f"({name} = {code})"


def _sequence(e, firsts, last: str) -> str:
    """An expression evaluating ``firsts`` in order, then ``last``, whose value it is."""
    return "(" + ", ".join([*firsts, last]) + ")"


def _ifexp(e, c: str, a: str, b: str) -> str:
    """``a if c else b`` of a checked condition and two branches of one type."""
    return f"({c} ? {a} : {b})"


def _render(e, record: B.Builtin, codes, sig, items):
    """The code of a checked builtin call: its record's C++ template."""
    template = record.template
    if callable(template):
        return template(codes, sig, items, e)
    return template.format(*codes, T=sig.result.ctype)


def _cub_instance(e, cls: B.CubClass, storage: Value) -> str:
    """``WarpReduce[T](temp)``: a checked cub object over its TempStorage."""
    e.include(cls.template.include)
    return f"{cls.cname}({storage.code})"


def _field(e, code: str, attr: str, member: str) -> str:
    """The back end's spelling of field ``attr`` (C++ member ``member``) of the struct
    ``code``."""
    return f"{code}.{member}"


def _dim(e, item: Value, attr: str, k: int, known: str | None) -> str:
    """``item.shape[k]`` or ``item.strides[k]`` (``attr``) of a checked axis, as an
    int64; ``known``: the value where the C++ build passes or knows it."""
    return known or f"((long long){item.code}.{attr}[{k}])"


def _printf(e, text: str, args: list) -> str:
    return f"printf({', '.join([_c_string(text)] + args)})"


def _print_spec(e, value: Value):
    """(conversion, [argument codes]) showing a scalar or a pointer ``value``."""
    t = value.type
    if isinstance(t, T.Pointer):
        return "%p", [f"(const void*)({value.code})"]
    if t is T.bool_:
        return "%s", [f'(({value.code}) ? "True" : "False")']
    if t.is_complex:
        e.need_complex()
        return "(%g%+gj)", [f"(double)({value.code}).real()", f"(double)({value.code}).imag()"]
    if t.is_float:
        return "%g", [
            f"(double)({e.convert(value, T.float32).code if t.is_half else value.code})"
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


def _device_functor(e, device, t: T.Scalar) -> str:
    fn = e.program_device_function(device, (t, t))
    return (
        f"[] ({t.ctype} a, {t.ctype} b) -> {fn.return_type.ctype} "
        f"{{ return {fn.cname}(a, b); }}"
    )


def _device_call(e, fn: DeviceFunction, values: list) -> str:
    """The call of a checked, specialised device function ``fn``."""
    codes = []
    for v in values:
        codes.append(v.code)
        if e.program.debug and (
            isinstance(v.type, T.Pointer) or getattr(v.type, "is_pointer_like", False)
        ):
            codes.append(e.debug_extent(v) or "-1LL")
    return f"{fn.cname}({', '.join(codes)})"


def _finish(e) -> FunctionCode:
    plans, params, setup = e.parameters()
    head = (
        'extern "C" __global__ void'
        if e.kind == "kernel"
        else f"__device__{'' if e.state.recursive else ' __forceinline__'} "
        f"{(e.state.return_type or T.void).ctype}"
    )
    decls = ["    " + d for d in setup + e.state.prologue + e.state.hoisted]
    text = "\n".join([f"{head} {e.cname}({', '.join(params)}) {{", *decls, *e.state.body, "}"])
    return FunctionCode(e.cname, text, e.state.return_type or T.void, tuple(plans))


def _reference(e, element: Value) -> Value:
    """``element`` held so that its address is computed once, here (x[g(x)] += v)."""
    ref = e.temp("ref")
    e.line(f"auto& {ref} = {element.code};")
    return Value(ref, element.type, lvalue=True)


def _copy_struct(e, code: str) -> str:
    """The back end's copy of the struct ``code`` (C++ assignment copies already)."""
    return code


def _line(e, text: str) -> None:
    e.state.body.append("    " * (e.state.depth + 1) + text)


def _open_block(e, word: str, cond: str = "") -> None:
    e.line(e.spelling.blocks[word].format(cond))


def _mark_branch(e, node) -> None:
    """An ``elif``'s own line: nothing in C++ (no #line between ``}`` and ``else``)."""


def _bind_temp(e, value: Value, prefix: str = "t") -> str:
    """A new temporary holding ``value`` (evaluated once, here); its name."""
    tmp = e.temp(prefix)
    e.line(f"const {value.type.ctype} {tmp} = {value.code};")
    return tmp


def _mark(e, node) -> None:
    lineno, _col = e.source.position(node)
    e.state.debug_line = lineno
    e.line("// " + e.source.statement_text(node))
    path = e.source.filename.replace("\\", "\\\\").replace('"', '\\"')
    e.state.body.append(f'#line {lineno} "{path}"')


def _declare_shared(e, elem: T.Type, size, align) -> str:
    name = e.program.unique_name(generated_name("smem"))
    align_txt = f"__align__({align}) " if align else ""
    if size is None:
        e.state.prologue.append("extern __shared__ __align__(16) unsigned char jk_dynamic_smem[];")
        code = f"reinterpret_cast<{elem.ctype}*>(jk_dynamic_smem)"
        e.state.debug_bounds[code] = f"jk::dbg::dynamic_extent<{elem.ctype}>()"
        return code
    e.state.prologue.append(f"__shared__ {align_txt}{elem.ctype} {name}[{size}];")
    e.state.debug_bounds[name] = f"{int(size)}LL"
    return name


def _declare_local(e, elem: T.Type, size: int) -> str:
    """A per-thread array, declared at the function's start (it lives as long as the
    pointer a local variable may keep to it)."""
    name = e.program.unique_name(generated_name("local"))
    e.state.prologue.append(f"{elem.ctype} {name}[{size}];")
    e.state.debug_bounds[name] = f"{int(size)}LL"  # debug builds check its indices too
    return name


def _range_loop(e, var: Value, items, codes, pragma: str, node) -> None:
    """The loop of a checked ``for var in range(start, stop, step)``: ``items`` are the
    bounds as written (a constant step picks the comparison), ``codes`` the same
    converted to the variable's type, in the order the loop evaluates them."""
    _start, stop, step = items
    start_code, stop_code, step_code = codes
    t = var.type
    e.line("{")
    e.state.depth += 1
    stop_code = e.loop_bound(stop, t, stop_code, "stop")
    step_code = e.loop_bound(step, t, step_code, "step")
    # A hidden counter drives the loop and the loop variable takes its value at the top
    # of each iteration, as in Python: assigning the variable in the body does not
    # change the iteration, and after the loop it holds the last value it took.
    it = e.temp("it")
    if isinstance(step, Const) or t.kind == "u":
        forward = t.kind == "u" or step.value > 0
        cond = f"{it} {'<' if forward else '>'} {stop_code}"
    else:
        cond = f"({step_code} > 0 ? {it} < {stop_code} : {it} > {stop_code})"
    if pragma:
        e.state.body.append(pragma)
    e.line(f"for ({t.ctype} {it} = {start_code}; {cond}; {it} += {step_code}) {{")
    e.line(f"    {var.code} = {it};")
    e.mark_set(var.code, "    ", dominates=False)  # not after the loop
    e.loop_body(node.body, var.code)
    e.line("}")
    e.state.depth -= 1
    e.line("}")


def _constant_loop(e, var: Value, codes: list, node) -> None:
    """The loop of a checked ``for var in (c0, c1, ...)``, ``codes`` the constants'."""
    table, k = e.temp("values"), e.temp("k")
    e.line("{")
    e.state.depth += 1
    e.line(f"const {var.type.ctype} {table}[{len(codes)}] = {{{', '.join(codes)}}};")
    e.state.body.append("#pragma unroll")
    e.line(f"for (int {k} = 0; {k} < {len(codes)}; ++{k}) {{")
    e.line(f"    {var.code} = {table}[{k}];")
    e.mark_set(var.code, "    ", dominates=False)
    e.loop_body(node.body, var.code)
    e.line("}")
    e.state.depth -= 1
    e.line("}")


def _assert_line(e, cond: str | None, message: str, node) -> None:
    """A checked ``assert``: fail with ``message`` where ``cond`` (None: always) is false."""
    lineno, _col = e.source.position(node)
    cond = cond or "false"
    e.line(
        f"if (!{cond}) {{ __assertfail({_c_string(message)}, "
        f"{_c_string(e.source.filename)}, {lineno}, "
        f"{_c_string(e.parsed.qualname)}, 1); }}"
    )



def _type_code(e, t: T.Scalar) -> str:
    return t.ctype


def _tuple_item(e, item: Value, k: int, checked: Value) -> Value:
    return checked


def _subscript(e, base: Value, indices: list, checked: Value) -> Value:
    return checked


def _c_only(e, *args):
    """What only the simulator spells (a wait for the scheduler, a statement's place)."""
    raise problem("this construct runs only in the simulator", "", JitSyntaxError)


def _refuse(e, message: str, hint: str = ""):
    raise problem(message, hint)


CUDA = Spelling(
    name="CUDA C++", state=FunctionState,
    c_name=user_c_name, line=_line, mark=_mark, mark_expression_first=False, finish=_finish,
    site=_c_only, context="", yields=_c_only, refuse=_refuse, breakpoint=None, hold=None,
    literal=_literal, convert=_convert, half_round=_half_round, type_code=_type_code,
    tuple_code=_tuple_code, tuple_item=_tuple_item, helper=_helper, power=_power,
    unary=_unary, negative=_negative, bool_words={ast.And: " && ", ast.Or: " || "},
    ifexp=_ifexp, assign=_assign, sequence=_sequence, render=_render, dim=_dim,
    field=_field, copy_struct=_copy_struct, cub_instance=_cub_instance,
    device_call=_device_call, device_functor=_device_functor, group_sync=_group_sync,
    printf=_printf, print_spec=_print_spec, subscript=_subscript, reference=_reference,
    declare_shared=_declare_shared, declare_local=_declare_local,
    blocks={"if": "if ({}) {{", "elif": "}} else if ({}) {{", "else": "}} else {{",
            "while": "while ({}) {{", "end": "}"},
    open_block=_open_block, mark_branch=_mark_branch, bind_temp=_bind_temp,
    range_loop=_range_loop, constant_loop=_constant_loop, assert_line=_assert_line,
)  # fmt: skip
