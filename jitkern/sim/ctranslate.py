"""pycparser's AST of a string kernel -> the Python of JIT kernels (see :mod:`.csubset`).

:class:`Translator` writes one Python function per C function. Every value carries its C
type; operands are converted explicitly to the type C computes in, and every literal is
typed, so the JIT (in ``mode='numpy'``) computes exactly what the C does. Expressions with
side effects (``x++``, ``a = b`` inside an expression) become statements before the one
that uses them.
"""

from __future__ import annotations

import keyword
import math

import numpy

from ..pyexpr import function_of
from .csubset import (
    _BASE, TYPEDEFS, Pointer, ctor, line_of, promote, refuse,
)
from .cstructs import ADDRESS, START, CStruct, Ref, Structs, view_name

#: Device functions every translated module defines: C's integer division and remainder
#: (truncating toward zero: Python's floor, one up where inexact and the signs differ; no
#: branch, so the vectorised path runs it as plain array arithmetic), and round() (halves
#: away from zero).
HELPERS = '''
@jit.rawkernel(device=True, mode="numpy")
def _c_div(a, b):
    q = a // b
    return q + ((q * b != a) & ((a < 0) != (b < 0)))


@jit.rawkernel(device=True, mode="numpy")
def _c_rem(a, b):
    return a - _c_div(a, b) * b


try:  # bfloat16 is ml_dtypes' type (csubset.ctor spells it so)
    import ml_dtypes as _c_ml_dtypes
    _c_bfloat16 = numpy.dtype(_c_ml_dtypes.bfloat16)
except ImportError:
    _c_bfloat16 = None


# __double2half: rounded once, as CUDA does (the JIT converts through float32: where float32
# lands on a tie between two half values, the double's side of the tie decides)
@jit.rawkernel(device=True, mode="numpy")
def _c_double2half(x):
    f = numpy.float32(x)
    h = numpy.float16(f)
    if x != numpy.float64(f) and not math.isnan(x):
        hd = numpy.float64(h)
        if math.isinf(hd):
            hd = math.copysign(65536.0, hd)
        other = numpy.float64(2.0) * numpy.float64(f) - hd
        if numpy.float64(numpy.float16(other)) == other or abs(other) == 65536.0:
            if (x > numpy.float64(f)) == (other > hd):
                h = numpy.float16(other)
    return h



# __double2bfloat16: rounded once, as CUDA does (the JIT converts through float32: where float32
# lands on a tie between two bfloat16 values, the double's side of the tie decides)
@jit.rawkernel(device=True, mode="numpy")
def _c_double2bfloat16(x):
    f = numpy.float32(x)
    h = _c_bfloat16(f)
    if x != numpy.float64(f) and not math.isnan(x):
        hd = numpy.float64(h)
        if math.isinf(hd):
            hd = math.copysign(3.402823669209385e+38, hd)
        other = numpy.float64(2.0) * numpy.float64(f) - hd
        if numpy.float64(_c_bfloat16(other)) == other or abs(other) == 3.402823669209385e+38:
            if (x > numpy.float64(f)) == (other > hd):
                h = _c_bfloat16(other)
    return h


@jit.rawkernel(device=True, mode="numpy")
def _c_round(x):
    t = numpy.trunc(x)
    d = x - t
    if d >= 0.5:
        t = t + 1
    elif d <= -0.5:
        t = t - 1
    return t
'''

_RESERVED = set(keyword.kwlist) | {
    "numpy", "math", "jit", "range", "len", "min", "max", "abs", "int", "float", "bool",
    "complex", "print", "pow", "i", "True", "False", "None", "divmod", "round", "sum",
}
from .cexpressions import (  # noqa: F401 - Function: the string kernels' names
    Expressions,
    Function,
)
from .csubset import Var  # noqa: F401 - the string kernels' names


class Translator(Structs, Expressions):
    """Writes JIT Python for the functions of one translation unit. ``types`` maps
    typedef names (type placeholders) to dtypes; ``where`` names the code in errors."""

    def __init__(self, where: str, types: dict | None = None):
        self.where = where
        self.locate = lambda n: f"{where} line {n}"  # the user's place of a C line
        self.c_line = 0  # the C line of the statement being written
        self.types = {**TYPEDEFS, **(types or {})}
        self.functions: dict[str, Function] = {}
        self.scopes: list[dict] = []
        self.used: set = set()
        self.lines: list[str] = []
        self.depth = 1
        self.pre: list[str] = []
        self.loops: list = []  # per loop: the lines a `continue` runs first
        self.counter = 0
        self.ret = None
        self.names: dict = {}  # extra names the caller binds (i, _ind, ...)
        self.loop_header = ""
        self.loop_prologue: list = []  # lines each pass of that loop starts with
        self.raw_shapes: dict = {}  # raw arrays' Python names -> (their shape's, loop rank)
        self.indexed_by_ind: set = set()  # the raw arrays indexed by _ind.get()
        self.entry_py: dict = {}
        self.templates = None  # the unit's function templates (.ctemplates.Templates)
        self.structs: dict = {}  # struct name -> CStruct
        self.struct_alias: dict = {}  # typedef name -> struct name
        self.views: dict = {}  # (char* parameter's Python name, dtype) -> None, in order
        self.char_params: dict = {}  # the kernel's char* parameters: Python name -> index
        self.c_names: dict = {}  # their C names
        self.refs: list = []  # the reference parameters' Python names (returned)
        self.struct_arrays: set = set()  # struct parameters' array fields (read-only)

    # -- errors ------------------------------------------------------------
    def at(self, node) -> str:
        coord = getattr(node, "coord", None)
        column = f", column {coord.column}" if coord is not None and coord.column else ""
        return f"{self.where} line {line_of(node) or self.c_line}{column}"

    def refuse(self, what: str, node):
        return refuse(what, self.at(node))

    # -- types of declarations -------------------------------------------
    def base_type(self, node):
        """The dtype of an IdentifierType (or a complex type) node."""
        names = node.names
        if len(names) == 1 and names[0] in self.types:
            return self.types[names[0]]
        if len(names) == 1 and (names[0] in self.struct_alias or names[0] in self.structs):
            return self.struct_named(names[0], node)
        key = tuple(sorted(names))
        t = _BASE.get(key)
        if t is None:
            if names == ["void"]:
                return None
            raise self.refuse(f"the type {' '.join(names)!r}", node)
        return t

    def decl_type(self, node):
        """(dtype or Pointer, array dims or None) of a declaration's type node."""
        cls = type(node).__name__
        if cls == "TypeDecl":
            if type(node.type).__name__ == "Struct" and node.type.decls is None:
                return self.struct_named(node.type.name, node), None
            if type(node.type).__name__ != "IdentifierType":
                raise self.refuse("a union, enum or nested struct type", node)
            return self.base_type(node.type), None
        if cls == "PtrDecl" and "volatile" in (node.quals or []):  # T& (csubset._references)
            inner, dims = self.decl_type(node.type)
            if isinstance(inner, (Pointer, Ref)) or dims is not None or inner is None:
                raise self.refuse("a reference to a pointer, an array or void", node)
            return Ref(inner, "const" in (getattr(node.type, "quals", None) or [])), None
        if cls == "PtrDecl":
            inner, dims = self.decl_type(node.type)
            if isinstance(inner, Pointer) or dims is not None:
                raise self.refuse("a pointer to a pointer or to an array", node)
            if inner is None:
                raise self.refuse("a void pointer", node)
            return Pointer(inner), None
        if cls == "ArrayDecl":
            inner, dims = self.decl_type(node.type)
            if isinstance(inner, Pointer):
                raise self.refuse("an array of pointers", node)
            dim = None if node.dim is None else self.constant(node.dim)
            return inner, [dim, *(dims or [])]
        raise self.refuse(f"the declarator {cls}", node)

    def constant(self, node) -> int:
        """A constant integer expression (array sizes)."""
        v = self.expr(node)
        try:
            return int(function_of("", v.code, {"numpy": numpy, "math": math})())
        except Exception:
            raise self.refuse("an array size that is not a constant", node) from None

    # -- names -------------------------------------------------------------
    def fresh(self, name: str) -> str:
        """A Python name for C name ``name``, unused so far in this function."""
        py = name
        if py in _RESERVED or py.startswith(("_jk", "_c_")):
            py = name + "_c"
        base = py
        while py in self.used:
            self.counter += 1
            py = f"{base}_{self.counter}"
        self.used.add(py)
        return py

    def temp(self) -> str:
        self.counter += 1
        name = f"_c_t{self.counter}"
        self.used.add(name)
        return name

    def declare(self, name: str, var: Var) -> Var:
        self.scopes[-1][name] = var
        return var

    def lookup(self, name: str):
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    # -- output ------------------------------------------------------------
    def emit(self, line: str) -> None:
        """One line of Python; statements carry their C line as a comment, which the
        simulator's errors are rewritten to name (:func:`.translated.at_c_line`)."""
        if self.c_line > 0 and line not in ("pass", "else:", "break", "continue"):
            line += f"  # {self.locate(self.c_line)}"
        self.lines.append("    " * self.depth + line)

    def flush(self) -> None:
        for line in self.pre:
            self.emit(line)
        self.pre = []

    # -- functions ---------------------------------------------------------
    def signature(self, funcdef) -> Function:
        decl = funcdef.decl
        fdecl = decl.type
        ret, dims = self.decl_type(fdecl.type)
        if dims is not None:
            raise self.refuse("a function returning an array", funcdef)
        kernel = "_Noreturn" in decl.funcspec
        if kernel and ret is not None:
            raise self.refuse("a __global__ function that returns a value", funcdef)
        params = []
        for p in (fdecl.args.params if fdecl.args is not None else []):
            if type(p).__name__ == "Typename":  # (void)
                continue
            if type(p).__name__ != "Decl":
                raise self.refuse("a variadic function", funcdef)
            t, dims = self.decl_type(p.type)
            if dims is not None:  # float a[] as a parameter is a pointer
                t = Pointer(t)
            if isinstance(t, Ref) and (t.const or kernel):  # const T&: as a value
                if kernel and not t.const:
                    raise self.refuse("a reference parameter of a __global__ function", p)
                t = t.elem
            if isinstance(t, Ref) and isinstance(t.elem, CStruct):
                raise self.refuse(f"a struct {t.elem.name} passed by non-const reference", p)
            if isinstance(t, Pointer) and isinstance(t.elem, CStruct):
                raise self.refuse(f"a pointer to struct {t.elem.name} as a parameter (pass a "
                                  "char* and cast it in the kernel)", p)
            params.append((p.name, t))
        return Function(decl.name, "", ret, params, kernel)

    def function(self, funcdef, fn: Function, extra_params=(), prologue=()) -> str:
        """The Python of one C function (``extra_params``: Python parameters added first,
        ``prologue``: lines the body starts with)."""
        self.used = set(self.functions_py())
        self.scopes = [dict(self.names), {}]
        self.lines, self.depth, self.pre, self.loops, self.ret = [], 1, [], [], fn.ret
        py_params = list(extra_params)
        self.used.update(py_params)
        self.views, self.char_params, self.refs, self.struct_arrays = {}, {}, [], set()
        for k, (name, t) in enumerate(fn.params):
            if isinstance(t, CStruct):
                self.declare(name, self.struct_var(name, t, funcdef, fn.kernel, py_params))
                continue
            py = self.fresh(name)
            if isinstance(t, Ref):
                py_params.append(py)
                self.refs.append(py)
                self.declare(name, Var(py, t.elem))
                continue
            if fn.kernel and isinstance(t, Pointer) and t.elem.itemsize == 1 and (
                    t.elem.kind in "iu"):
                self.char_params[py] = k
                self.c_names[py] = name
            if isinstance(t, Pointer):
                offset = None
                if not fn.kernel:
                    offset = self.fresh(py + "_o")
                    py_params += [py, offset]
                else:
                    py_params.append(py)
                self.declare(name, Var(py, t, offset))
            else:
                py_params.append(py)
                self.declare(name, Var(py, t))
        for line in prologue:
            self.emit(line)
        self.block_items(funcdef.body)
        if self.refs and fn.ret is None:  # falling off the end returns the references
            self.emit(f"return {self.tuple_target(self.refs)}")
        if self.views:
            fn.views = [(self.char_params[py], dtype) for py, dtype in self.views]
            py_params += [view_name(py, dtype) for py, dtype in self.views]
            for py in dict.fromkeys(p for p, _ in self.views):
                py_params += [START.format(py), ADDRESS.format(py)]
        head = []
        if not fn.kernel:
            head.append('@jit.rawkernel(device=True, mode="numpy")')
        head.append(f"def {fn.py}({', '.join(py_params)}):")
        body = self.lines or ["    pass"]
        return "\n".join(head + body) + "\n"

    def functions_py(self):
        return [f.py for f in self.functions.values()]

    # -- statements ------------------------------------------------------
    def block_items(self, compound) -> None:
        self.scopes.append({})
        for item in compound.block_items or []:
            self.statement(item)
        self.scopes.pop()

    def statement(self, node) -> None:
        method = getattr(self, "s_" + type(node).__name__, None)
        if method is None:
            raise self.refuse(f"the statement {type(node).__name__}", node)
        saved = self.c_line
        self.c_line = line_of(node) or saved
        try:
            method(node)
        finally:
            self.c_line = saved

    def s_Compound(self, node) -> None:
        self.block_items(node)

    def s_EmptyStatement(self, node) -> None:
        pass

    def s_Decl(self, node) -> None:
        storage = node.storage or []
        if type(node.type).__name__ == "FuncDecl":
            raise self.refuse("a function declared inside a function", node)
        t, dims = self.decl_type(node.type)
        name = node.name
        if isinstance(t, Ref):
            raise self.refuse("a reference variable (references are parameters only)", node)
        if isinstance(t, CStruct) and dims is None and "register" not in storage:
            self.struct_local(node, t)
            return
        if isinstance(t, CStruct):
            raise self.refuse(f"an array of struct {t.name}, or a shared one", node)
        if "register" in storage:  # __shared__
            self.shared(node, t, dims, "extern" in storage)
            return
        if "extern" in storage:
            raise self.refuse("an extern declaration inside a function", node)
        if dims is not None:
            self.local_array(node, t, dims)
            return
        py = self.fresh(name)
        if isinstance(t, Pointer):
            if node.init is None:
                raise self.refuse("a pointer declared without a value", node)
            v = self.expr(node.init)
            if not v.is_pointer:
                raise self.refuse("a pointer made from a number", node)
            if v.type.view is not None:  # a pointer into a char* parameter's bytes
                if v.type.elem != t.elem:
                    raise self.refuse("a pointer initialised from a pointer of another type", node)
                t = v.type
            offset = py + "_o" if py + "_o" not in self.used else self.fresh(py + "_o")
            self.used.add(offset)
            self.flush()
            self.emit(f"{offset} = {v.offset or 'numpy.int64(0)'}")
            self.declare(name, Var(v.base, t, offset))
            return
        if node.init is None:
            init = f"{ctor(t)}(0)"
        else:
            if type(node.init).__name__ == "InitList":
                raise self.refuse("an initializer list for a scalar", node)
            v = self.expr(node.init)
            init = self.to(v, t, node)
        self.flush()
        self.emit(f"{py} = {init}")
        self.declare(name, Var(py, t))

    def shared(self, node, t, dims, extern: bool) -> None:
        if isinstance(t, Pointer) or dims is None:
            raise self.refuse("a __shared__ scalar or pointer (declare an array)", node)
        py = self.fresh(node.name)
        if extern:
            if dims[0] is not None or len(dims) > 1:
                raise self.refuse("extern __shared__ with a size", node)
            self.emit(f"{py} = jit.shared_memory({ctor(t)}, None)")
        else:
            self.emit(f"{py} = jit.shared_memory({ctor(t)}, {math.prod(dims)})")
        self.declare(node.name, Var(py, Pointer(t, tuple(dims[1:]))))

    def local_array(self, node, t, dims) -> None:
        if dims[0] is None:
            if type(node.init).__name__ != "InitList":
                raise self.refuse("an array without a size", node)
            dims = [len(node.init.exprs), *dims[1:]]
        py = self.fresh(node.name)
        size = math.prod(dims)
        self.emit(f"{py} = jit.local_memory({ctor(t)}, {size})")
        var = self.declare(node.name, Var(py, Pointer(t, tuple(dims[1:]))))
        if node.init is not None:
            if type(node.init).__name__ != "InitList" or len(dims) > 1:
                raise self.refuse("this array initializer", node)
            k = self.temp()
            self.emit(f"for {k} in range({size}):")
            self.emit(f"    {py}[{k}] = {ctor(t)}(0)")
            for j, e in enumerate(node.init.exprs):
                v = self.expr(e)
                self.flush()
                self.emit(f"{var.py}[{j}] = {self.to(v, t, e)}")

    def s_DeclList(self, node) -> None:
        for d in node.decls:
            self.s_Decl(d)

    def s_Assignment(self, node) -> None:
        self.assign(node, statement=True)
        self.flush()

    def s_UnaryOp(self, node) -> None:
        if node.op in ("p++", "p--", "++", "--"):
            self.incdec(node, statement=True)
        else:
            self.expr(node)
        self.flush()

    def s_FuncCall(self, node) -> None:
        v = self.call(node)
        self.flush()
        if v is not None and v.code:
            self.emit(v.code)

    def s_BinaryOp(self, node) -> None:
        self.expr(node)
        self.flush()

    s_ID = s_Constant = s_ArrayRef = s_Cast = s_TernaryOp = s_StructRef = s_BinaryOp

    def s_ExprList(self, node) -> None:
        for e in node.exprs:
            self.statement(e)

    def s_Return(self, node) -> None:
        if node.expr is None:
            if self.ret is not None:
                raise self.refuse("return without a value", node)
            self.emit(f"return {self.tuple_target(self.refs)}" if self.refs else "return")
            return
        if self.ret is None:
            raise self.refuse("returning a value from a void function", node)
        v = self.expr(node.expr)
        if isinstance(self.ret, CStruct):
            v = self.struct_value(v, self.ret, node)
            codes = [self.to(v.parts[f], d, node) for f, d in self.ret.scalar_fields]
        else:
            codes = [self.to(v, self.ret, node)]
        self.flush()
        self.emit(f"return {self.tuple_target(codes + self.refs)}")

    def condition(self, node) -> tuple[list, str]:
        """(statements to run first, a Python bool) of a condition."""
        saved, self.pre = self.pre, []
        v = self.expr(node)
        code = self.truth(v, node)
        pre, self.pre = self.pre, saved
        return pre, code

    def s_If(self, node) -> None:
        pre, cond = self.condition(node.cond)
        self.pre.extend(pre)
        self.flush()
        self.emit(f"if {cond}:")
        self.nested(node.iftrue)
        if node.iffalse is not None:
            self.emit("else:")
            self.nested(node.iffalse)

    def nested(self, node) -> None:
        self.depth += 1
        start = len(self.lines)
        self.scopes.append({})
        self.statement(node)
        self.scopes.pop()
        if len(self.lines) == start:
            self.emit("pass")
        self.depth -= 1

    def loop(self, pre, cond, body, cont: list, after: list) -> None:
        """``while`` over ``body``; ``cont`` runs before each ``continue`` and ``after``
        at the end of each pass."""
        if pre or cond is None:
            self.emit("while True:")
            self.depth += 1
            for line in pre:
                self.emit(line)
            if cond is not None:
                self.emit(f"if not {cond}:")
                self.emit("    break")
            self.depth -= 1
        else:
            self.emit(f"while {cond}:")
        self.loops.append(cont)
        self.depth += 1
        self.scopes.append({})
        self.statement(body)
        self.scopes.pop()
        for line in after:
            self.emit(line)
        self.emit("pass")
        self.depth -= 1
        self.loops.pop()

    def captured(self, fn) -> list:
        """The lines ``fn()`` emits (at depth 0), taken out of the output."""
        saved_lines, saved_depth = self.lines, self.depth
        self.lines, self.depth = [], 0
        fn()
        self.flush()
        out = self.lines
        self.lines, self.depth = saved_lines, saved_depth
        return out

    def s_For(self, node) -> None:
        self.scopes.append({})
        if node.init is not None:
            self.statement(node.init)
            self.flush()
        pre, cond = ([], None) if node.cond is None else self.condition(node.cond)
        step = [] if node.next is None else self.captured(lambda: self.statement(node.next))
        self.loop(pre, cond, node.stmt, step, step)
        self.scopes.pop()

    def s_While(self, node) -> None:
        if type(node.cond).__name__ == "ID" and node.cond.name == "__jk_loop":
            self.emit(self.loop_header)  # ElementwiseKernel's loop over the elements
            for line in self.loop_prologue:
                self.emit("    " + line)
            self.loops.append([])
            self.nested(node.stmt)
            self.loops.pop()
            return
        pre, cond = self.condition(node.cond)
        self.loop(pre, cond, node.stmt, [], [])

    def s_DoWhile(self, node) -> None:
        pre, cond = self.condition(node.cond)
        check = [*pre, f"if not {cond}:", "    break"]
        self.loop([], None, node.stmt, check, check)

    def s_Switch(self, node) -> None:
        """``switch`` as an if/elif chain: each group of ``case`` labels ends in ``break``
        (or ``return``/``continue``); falling through into the next group is refused."""
        v = self.expr(node.cond)
        if v.is_pointer or v.type.kind not in "biu":
            raise self.refuse("a switch on a non-integer", node)
        t = promote(v.type)
        value = self.temp()
        self.flush()
        self.emit(f"{value} = {self.to(v, t, node)}")
        groups = self.switch_groups(node)
        first = True
        for labels, stmts in groups:
            if labels is None:
                cond = None
            else:
                tests = [f"{value} == {self.to(self.expr(e), t, e)}" for e in labels]
                cond = " or ".join(tests)
            if cond is None and first:
                self.emit("if True:")
            elif cond is None:
                self.emit("else:")
            else:
                self.emit(f"{'if' if first else 'elif'} {cond}:")
            first = False
            self.depth += 1
            self.scopes.append({})
            start = len(self.lines)
            for st in stmts:
                self.statement(st)
            if len(self.lines) == start:
                self.emit("pass")
            self.scopes.pop()
            self.depth -= 1

    def switch_groups(self, node) -> list:
        """[(case expressions or None for default, statements)], in order, default last."""
        items = node.stmt.block_items or [] if type(node.stmt).__name__ == "Compound" else []
        groups, labels, default = [], [], None
        for item in items:
            kind = type(item).__name__
            if kind not in ("Case", "Default"):
                raise self.refuse("a statement before the first case of a switch", item)
            stmts = list(item.stmts or [])
            if kind == "Case":
                labels.append(item.expr)
            if not stmts:
                if kind == "Default":
                    raise self.refuse("default sharing statements with a case", item)
                continue
            while type(stmts[-1]).__name__ == "Compound" and stmts[-1].block_items:
                stmts = stmts[:-1] + list(stmts[-1].block_items)  # case 2: { ...; break; }
            ends = type(stmts[-1]).__name__
            if ends == "Break":
                stmts = stmts[:-1]
            elif ends not in ("Return", "Continue") and item is not items[-1]:
                raise self.refuse("a switch case falling through to the next one", item)
            if _has_break(stmts):
                raise self.refuse("break inside a switch case before its end", item)
            if kind == "Default":
                if labels:
                    raise self.refuse("default sharing statements with a case", item)
                default = stmts
            else:
                groups.append((labels, stmts))
            labels = []
        if default is not None:
            groups.append((None, default))
        return groups

    def s_Break(self, node) -> None:
        if not self.loops:
            raise self.refuse("break outside a loop", node)
        self.emit("break")

    def s_Continue(self, node) -> None:
        if not self.loops:
            raise self.refuse("continue outside a loop", node)
        for line in self.loops[-1]:
            self.emit(line)
        self.emit("continue")

    # -- expressions -----------------------------------------------------
def _has_break(stmts) -> bool:
    """Whether a ``break`` (not inside a nested loop or switch) is among ``stmts``."""
    for st in stmts:
        kind = type(st).__name__
        if kind == "Break":
            return True
        if kind in ("For", "While", "DoWhile", "Switch"):
            continue
        children = [c for _, c in st.children()] if hasattr(st, "children") else []
        if kind in ("Compound", "If") and _has_break(children):
            return True
    return False


def translate_unit(ast, where: str, types: dict, *, keep=None, special=None, locate=None,
                   templates=None):
    """Translate the functions of ``ast``: (the translator, {C name: Python source}).
    ``templates``: the unit's function templates, instantiated where called.
    ``keep``: the C names of the kernels to translate (None: all; device functions always);
    ``special``: {C name: entry(translator, funcdef) -> Python source} for the functions
    the caller writes itself (ElementwiseKernel's loop, a reduction's parts)."""
    tr = Translator(where, types)
    tr.templates = templates
    if locate is not None:
        tr.locate = locate
    special = special or {}
    defs, entries = [], []
    for ext in ast.ext:
        cls = type(ext).__name__
        if cls == "Typedef" and line_of(ext) <= 0 and type(ext.type.type).__name__ != "Struct":
            continue  # the prelude's placeholder typedefs (its vector structs are read)
        if cls == "Typedef":
            tr.typedef(ext)
            continue
        if cls == "Decl" and ext.name is None and type(ext.type).__name__ == "Struct":
            tr.define_struct(ext.type)
            continue
        if cls == "FuncDef" and ext.decl.name in special:
            entries.append(ext)
        elif cls == "FuncDef":
            fn = tr.signature(ext)
            fn.py = _function_py(fn)
            if fn.name in tr.functions:
                raise tr.refuse(f"a second definition of {fn.name}", ext)
            tr.functions[fn.name] = fn
            defs.append((ext, fn))
        elif cls == "Decl" and type(ext.type).__name__ == "FuncDecl":
            continue  # a prototype
        elif cls == "Decl":
            raise tr.refuse(f"the global variable {ext.name!r}", ext)
        else:
            raise tr.refuse(f"the declaration {cls}", ext)
    sources = {}
    for ext, fn in defs:
        if keep is None or fn.name in keep or not fn.kernel:
            sources[fn.name] = tr.function(ext, fn)
    for ext in entries:
        sources[ext.decl.name] = special[ext.decl.name](tr, ext)
    for k, source in enumerate(templates.sources if templates is not None else ()):
        sources[f"<instantiation {k}>"] = source
    return tr, sources


def _function_py(fn: Function) -> str:
    if not fn.kernel:
        return "_c_fn_" + fn.name
    return fn.name + "_c" if fn.name in _RESERVED or fn.name.startswith(("_c_", "_jk")) else fn.name
