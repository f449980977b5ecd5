"""``jitkern.fuse``: a Python function of elementwise array arithmetic -> one kernel.

Built on the JIT compiler. The function is parsed by the JIT's frontend; its body
(assignments to names and a final ``return expr``) becomes a JIT *device function*
over scalars: each array argument is a scalar of its dtype, each NumPy scalar a scalar
of its type, and each Python scalar a *weak* scalar (as NumPy 2 promotes Python
numbers). It is emitted in the JIT's ``mode='numpy'``, so operators, math functions and
type promotion are exactly the JIT's numpy-mode rules. The kernel is then an
:class:`ElementwiseKernel` whose operation calls that function, or, when the returned
expression is wrapped in ``xp.sum``/``prod``/``max``/``min`` (``amax``/``amin``, or the
method forms ``expr.sum(...)``) with constant ``axis``/``keepdims``, a
:class:`ReductionKernel` whose map expression calls it.

Array-module spellings name NumPy's functions: a global bound to ``cupy`` or ``jitkern``
is read as ``numpy`` (``cp.exp``, ``jitkern.where``), as are ``numpy`` and ``math``
themselves. Kernels are cached per argument signature (dtype and ndim of each array,
type of each scalar). With only NumPy arrays and scalars, the function runs through
NumPy instead (array-module names bound to NumPy for that call).
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import types as pytypes

import numpy

from ..arrays import describe
from ..errors import JitError, JitkernTypeError, JitSyntaxError, JitTypeError
from ..jit import frontend
from ..jit import types as T
from ..jit.program import Program
from ..jit.statements import FunctionEmitter
from .elementwise import ElementwiseKernel
from .reduction import ReductionKernel

#: Modules a fused function may be written against; their names are looked up in NumPy.
ARRAY_MODULES = ("cupy", "jitkern")


class FuseError(JitSyntaxError, ValueError):
    """A construct ``fuse`` cannot turn into a kernel: ``file.py:LINE:COL``, the line, a caret."""


@dataclasses.dataclass(frozen=True)
class Reduction:
    """How a final ``xp.<name>(expr, ...)`` reduces: ReductionKernel's expressions."""

    reduce_expr: str
    identity: str | None  # None: no identity (an empty reduction is an error, as in NumPy)
    widens: bool  # bools and narrower ints accumulate in (u)int64, as NumPy's sum and prod
    ordered: bool  # needs ordered (real) values


REDUCTIONS = {
    "sum": Reduction("a + b", "0", True, False),
    "prod": Reduction("a * b", "1", True, False),
    "max": Reduction("jk::npmax(a, b)", None, False, True),  # NaN propagates, as in NumPy
    "amax": Reduction("jk::npmax(a, b)", None, False, True),
    "min": Reduction("jk::npmin(a, b)", None, False, True),
    "amin": Reduction("jk::npmin(a, b)", None, False, True),
}

#: NumPy's reduction functions, for names bound to them.
_NUMPY_REDUCTIONS = {getattr(numpy, name): name for name in REDUCTIONS}

_PY_SCALAR_TYPES = {bool: T.bool_, int: T.int64, float: T.float64, complex: T.complex128}
_HOST_TYPES = (numpy.ndarray, numpy.generic, bool, int, float, complex)
_OPERATION_RESULT = "jk_fused_result"


# ---------------------------------------------------------------------------
# names: array modules read as NumPy, Python builtins that are not elementwise refused


def _is_array_module(value) -> bool:
    return isinstance(value, pytypes.ModuleType) and value.__name__ in ARRAY_MODULES


def _as_numpy(value):
    return numpy if _is_array_module(value) else value


#: Python builtins that work elementwise on arrays; fuse refuses the others.
_ELEMENTWISE_BUILTINS = (abs, pow)
_BUILTIN_HINTS = {
    "max": "use xp.maximum(a, b)",
    "min": "use xp.minimum(a, b)",
    "sum": "return xp.sum(expr, axis=...) as the function's result",
    "round": "use xp.rint(x)",
}


def _refuse_python_builtin(value) -> None:
    if getattr(value, "__module__", None) != "builtins" or not callable(value):
        return
    if any(value is b for b in _ELEMENTWISE_BUILTINS):
        return
    name = getattr(value, "__name__", repr(value))
    hint = _BUILTIN_HINTS.get(name, "use the array module's function (e.g. xp.float32(x))")
    raise JitkernTypeError(f"Python's {name}() does not work elementwise on arrays; {hint}")


class _FuseProgram(Program):
    """A JIT program whose free names resolve as fuse reads them."""

    def capture(self, func, name: str) -> frontend.Captured:
        value = _as_numpy(frontend.lookup(func, name))
        _refuse_python_builtin(value)
        return frontend.capture(value)


def _names_array_module(func, node) -> bool:
    """Whether ``node`` is a name bound to numpy, cupy or jitkern."""
    if not isinstance(node, ast.Name):
        return False
    try:
        value = _as_numpy(frontend.lookup(func, node.id))
    except KeyError:
        return False
    return value is numpy


def _numpy_function(fn):
    """``fn`` with the array modules its globals name bound to NumPy (``fn`` when none)."""
    env = fn.__globals__
    swapped = {n: numpy for n in fn.__code__.co_names if _is_array_module(env.get(n))}
    if not swapped:
        return fn
    clone = pytypes.FunctionType(
        fn.__code__, {**env, **swapped}, fn.__name__, fn.__defaults__, fn.__closure__
    )
    clone.__kwdefaults__ = fn.__kwdefaults__
    return clone


# ---------------------------------------------------------------------------
# the body: checked, one name per assignment, the final reduction peeled off


@dataclasses.dataclass(frozen=True)
class ReductionCall:
    name: str
    axis: object
    keepdims: bool

    @property
    def reduction(self) -> Reduction:
        return REDUCTIONS[self.name]

    def options(self) -> dict:
        return {"axis": self.axis, "keepdims": self.keepdims}


@dataclasses.dataclass(frozen=True)
class _Body:
    device: frontend.ParsedFunction  # the device function's AST (reduction peeled off)
    reduction: ReductionCall | None


_SHAPE_HINT = "a fused function is assignments to names ('t = x - y') and a final 'return expr'"


class _BodyReader:
    """Reads the fused function's statements; one place refuses what fuse does not take."""

    def __init__(self, parsed: frontend.ParsedFunction):
        self.parsed = parsed

    def error(self, node, message: str, hint: str = "", cls=FuseError):
        return frontend.error(cls, self.parsed.source, node, message, hint)

    def read(self) -> _Body:
        tree = self.parsed.tree
        stmts = _without_docstring(tree.body)
        if not stmts or not isinstance(stmts[-1], ast.Return) or stmts[-1].value is None:
            last = stmts[-1] if stmts else tree
            raise self.error(last, "a fused function must end with 'return expr'", _SHAPE_HINT)
        for stmt in stmts[:-1]:
            self.statement(stmt)
        reduction, value = self.peel(stmts[-1].value)
        _ExpressionChecker(self).visit(value)
        body = [*stmts[:-1], ast.copy_location(ast.Return(value), stmts[-1])]
        renamed = _Renamer(tree).rename(body)
        device = ast.copy_location(
            ast.FunctionDef(
                name=tree.name,
                args=tree.args,
                body=renamed,
                decorator_list=[],
                returns=None,
                type_comment=None,
                type_params=[],
            ),
            tree,
        )
        parsed = dataclasses.replace(self.parsed, tree=device)
        return _Body(parsed, reduction)

    def statement(self, stmt) -> None:
        if isinstance(stmt, ast.Return):
            raise self.error(stmt, "'return' must be the last statement of a fused function")
        if isinstance(stmt, ast.Assign) and all(_is_name_target(t) for t in stmt.targets):
            _ExpressionChecker(self).visit(stmt.value)
            return
        if isinstance(stmt, ast.Pass):
            return
        what, hint = _STATEMENTS.get(type(stmt).__name__, ("this statement", _SHAPE_HINT))
        raise self.error(stmt, f"{what} is not supported in fused functions", hint)

    def peel(self, node):
        """``xp.sum(e, axis=...)`` / ``e.sum(axis=...)`` -> (ReductionCall, e); else (None, node)."""
        form = self.reduction_form(node)
        if form is None:
            return None, node
        name, is_method = form
        args = list(node.args)
        if is_method:  # e.sum(axis)
            target = node.func.value
        elif args:  # xp.sum(e, axis)
            target, args = args[0], args[1:]
        else:
            raise self.error(node, f"{name}() needs the expression to reduce")
        if len(args) > 1 or any(isinstance(a, ast.Starred) for a in args):
            raise self.error(node, f"{name}() takes the axis as its one positional argument")
        options = {"axis": None, "keepdims": False}
        if args:
            options["axis"] = self.constant(args[0], name, "axis")
        for kw in node.keywords:
            if kw.arg not in options:
                raise self.error(
                    kw.value if kw.arg is None else kw,
                    f"{name}(): only axis= and keepdims= are supported in fused functions",
                )
            options[kw.arg] = self.constant(kw.value, name, kw.arg)
        return ReductionCall(name, options["axis"], bool(options["keepdims"])), target

    def reduction_form(self, node):
        """(name, is_method) when ``node`` calls a reduction: ``xp.sum(...)``, ``e.sum(...)``
        or a name bound to one of NumPy's (``from numpy import sum as total``)."""
        if not isinstance(node, ast.Call):
            return None
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in REDUCTIONS:
            return func.attr, not _names_array_module(self.parsed.func, func.value)
        if isinstance(func, ast.Name):
            try:
                value = frontend.lookup(self.parsed.func, func.id)
            except KeyError:
                return None
            name = _NUMPY_REDUCTIONS.get(_hashable(value))
            return (name, False) if name else None
        return None

    def constant(self, node, name: str, what: str):
        """A literal, or a global bound to an int, a tuple of ints, None or a bool."""
        if isinstance(node, ast.Name):
            try:
                value = frontend.lookup(self.parsed.func, node.id)
            except KeyError:
                pass
            else:
                if value is None or isinstance(value, (bool, int, numpy.integer, tuple)):
                    return value
        else:
            try:
                return ast.literal_eval(node)
            except ValueError:
                pass
        raise self.error(
            node, f"{name}(): {what} must be a constant", "write the value, e.g. axis=(0, 1)"
        )


def _hashable(value):
    try:
        hash(value)
    except TypeError:
        return None
    return value


def _without_docstring(stmts) -> list:
    if (
        stmts
        and isinstance(stmts[0], ast.Expr)
        and isinstance(stmts[0].value, ast.Constant)
        and isinstance(stmts[0].value.value, str)
    ):
        return list(stmts[1:])
    return list(stmts)


def _is_name_target(target) -> bool:
    if isinstance(target, ast.Name):
        return True
    return isinstance(target, (ast.Tuple, ast.List)) and all(
        _is_name_target(t) for t in target.elts
    )


_STATEMENTS = {  # statement -> (what it is, what to write instead)
    "AugAssign": ("in-place assignment", "write t = t + ... (a new value, as NumPy would make)"),
    "AnnAssign": ("an annotated assignment", "drop the annotation"),
    "Assign": ("assignment to an element or attribute", _SHAPE_HINT),
    "For": ("a for loop", _SHAPE_HINT),
    "While": ("a while loop", _SHAPE_HINT),
    "If": ("an if statement", "use xp.where(condition, a, b)"),
    "Expr": ("an expression statement", _SHAPE_HINT),
    "FunctionDef": (
        "a nested def",
        "define it at module level with @jitkern.rawkernel(device=True)",
    ),
    "Import": ("import", "import at module level"),
    "ImportFrom": ("import", "import at module level"),
}


class _ExpressionChecker(ast.NodeVisitor):
    """Refuses what runs in a kernel but not elementwise on NumPy arrays (or not at all)."""

    def __init__(self, reader: _BodyReader):
        self.reader = reader

    def refuse(self, node, message: str, hint: str):
        raise self.reader.error(node, message, hint)

    def visit_BoolOp(self, node):
        self.refuse(node, "'and' / 'or' do not work elementwise on arrays", "use & and |")

    def visit_UnaryOp(self, node):
        if isinstance(node.op, ast.Not):
            self.refuse(node, "'not' does not work elementwise on arrays", "use ~condition")
        self.generic_visit(node)

    def visit_IfExp(self, node):
        self.refuse(
            node, "'a if c else b' does not work elementwise on arrays", "use xp.where(c, a, b)"
        )

    def visit_Compare(self, node):
        if len(node.ops) > 1:
            self.refuse(
                node,
                "chained comparisons do not work elementwise on arrays",
                "use (a < b) & (b < c)",
            )
        self.generic_visit(node)

    def visit_Subscript(self, node):
        self.refuse(node, "indexing is not elementwise", "index the arrays before the call")

    def visit_Call(self, node):
        form = self.reader.reduction_form(node)
        if form is not None:
            self.refuse(
                node,
                f"{form[0]}() can only be the outermost call of the returned expression",
                "fuse makes one kernel: an elementwise map, then at most one reduction",
            )
        self.generic_visit(node)


class _Renamer(ast.NodeTransformer):
    """Gives every assignment a name of its own, so that a name may be rebound to a value of
    another type (as in NumPy) while each JIT local keeps the one type it is assigned."""

    def __init__(self, tree: ast.FunctionDef):
        self.params = {a.arg for a in tree.args.args}
        self.taken = self.params | {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        self.current: dict[str, str] = {}

    def rename(self, stmts) -> list:
        return [self.visit(s) for s in stmts]

    def visit_Assign(self, node):
        value = self.visit(node.value)  # reads the names bound before this statement
        targets = [self.visit(t) for t in node.targets]
        return ast.copy_location(ast.Assign(targets=targets, value=value), node)

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Store):
            new = self.fresh(node.id)
        else:
            new = self.current.get(node.id, node.id)
        return ast.copy_location(ast.Name(id=new, ctx=node.ctx), node)

    def fresh(self, name: str) -> str:
        new = name
        if name in self.current or name in self.params:
            k = 2
            while f"{name}_{k}" in self.taken:
                k += 1
            new = f"{name}_{k}"
            self.taken.add(new)
        self.current[name] = new
        return new


# ---------------------------------------------------------------------------
# arguments, the device function and the kernels


def _argument_type(a) -> tuple[T.Scalar, bool]:
    """(JIT type, weak) of an argument: a Python scalar is weak, as in NumPy 2."""
    t = _PY_SCALAR_TYPES.get(type(a))
    if t is not None:
        return t, True
    if isinstance(a, (numpy.ndarray, numpy.generic)):
        return T.scalar_from_dtype(a.dtype), False
    dtype = getattr(a, "dtype", None)
    if not isinstance(dtype, numpy.dtype):
        dtype = describe(a).dtype
    return T.scalar_from_dtype(dtype), False


def _signature_key(a):
    """Decides the kernel: a scalar's type, an array's dtype and ndim."""
    cls = type(a)
    if cls in _PY_SCALAR_TYPES or isinstance(a, numpy.generic):
        return cls
    dtype, ndim = getattr(a, "dtype", None), getattr(a, "ndim", None)
    if dtype is None or ndim is None:
        info = describe(a)
        return (cls, info.dtype, len(info.shape))
    return (dtype, ndim)


class _DeviceEmitter(FunctionEmitter):
    """The fused body as a JIT device function in numpy mode, Python-scalar parameters weak."""

    def __init__(self, parsed, arg_types, weak, program, cname):
        self.weak_params = tuple(weak)
        super().__init__(parsed, arg_types, "numpy", program, "device", cname)

    def _bind_params(self) -> None:
        super()._bind_params()
        for name, weak in zip(self.parsed.params, self.weak_params):
            if weak:
                self.locals[name] = dataclasses.replace(self.locals[name], weak=True)


@dataclasses.dataclass(frozen=True)
class _DeviceFunction:
    cname: str
    params: tuple  # T.Scalar per argument
    result: T.Type
    preamble: str  # the JIT's includes and prelude, then the function

    @property
    def in_params(self) -> str:
        return ", ".join(f"{t.name} in{k}" for k, t in enumerate(self.params))

    @property
    def call(self) -> str:
        return f"{self.cname}({', '.join(f'in{k}' for k in range(len(self.params)))})"


def _emit_device_function(body: _Body, types, weak) -> _DeviceFunction:
    parsed = body.device
    program = _FuseProgram("numpy")
    cname = program.unique_name(f"jk_fused_{parsed.name}")
    emitter = _DeviceEmitter(parsed, types, weak, program, cname)
    program.stack.append(parsed.func)
    code = emitter.emit()
    program.device_code.append(code.code)
    signature = ", ".join(("weak " if w else "") + t.describe() for t, w in zip(types, weak))
    header = (
        f"// jitkern.fuse: {parsed.qualname} from {parsed.source.filename}\n"
        f"// signature: ({signature}); mode=numpy"
    )
    # The function's #line directives point at the Python file; what the string kernel
    # adds after the preamble is generated code, so hand attribution back to it.
    preamble = program.assemble("", header) + f'#line 1 "jitkern_fused_{parsed.name}.cu"\n'
    return _DeviceFunction(cname, tuple(types), code.return_type, preamble)


def _outputs(fn: _DeviceFunction, body: _Body) -> tuple:
    """The output types: one scalar, or a tuple's items (several outputs)."""
    result = fn.result
    items = result.items if isinstance(result, T.Tuple) else (result,)
    returned = body.device.tree.body[-1]
    if not all(isinstance(t, T.Scalar) for t in items):
        raise frontend.error(
            JitTypeError,
            body.device.source,
            returned,
            f"a fused function returns numbers, not {result}",
        )
    if body.reduction is not None and len(items) > 1:
        raise frontend.error(
            FuseError, body.device.source, returned, "a reduction takes one value, not a tuple"
        )
    return items


def _elementwise_kernel(fn: _DeviceFunction, outs, name: str) -> ElementwiseKernel:
    if len(outs) == 1:
        operation = f"out0 = {fn.call};"
    else:
        stores = " ".join(
            f"out{k} = {_OPERATION_RESULT}{'.tail' * k}.head;" for k in range(len(outs))
        )
        operation = f"const {fn.result.ctype} {_OPERATION_RESULT} = {fn.call}; {stores}"
    out_params = ", ".join(f"{t.name} out{k}" for k, t in enumerate(outs))
    return ElementwiseKernel(fn.in_params, out_params, operation, name, preamble=fn.preamble)


def _reduced_type(reduction: Reduction, t: T.Scalar) -> T.Scalar:
    """NumPy's result type: sum/prod widen bools and ints to 64 bits; max/min keep t."""
    if reduction.widens and t.kind in "biu" and t.itemsize < 8:
        return T.uint64 if t.kind == "u" else T.int64
    return t


def _reduction_kernel(fn: _DeviceFunction, elem: T.Scalar, body: _Body, name: str):
    call = body.reduction
    reduction = call.reduction
    if reduction.ordered and elem.is_complex:
        raise frontend.error(
            JitTypeError,
            body.device.source,
            body.device.tree.body[-1],
            f"{call.name}() of complex numbers is not supported (complex numbers are not ordered)",
        )
    out = _reduced_type(reduction, elem)
    accumulate = T.float32 if out.is_half else out  # half values add up in float
    return ReductionKernel(
        fn.in_params,
        f"{out.name} out0",
        fn.call,
        reduction.reduce_expr,
        "out0 = a",
        reduction.identity,
        name,
        reduce_type=accumulate.ctype,
        preamble=fn.preamble,
    )


# ---------------------------------------------------------------------------
# the user's object


class Fused:
    """A fused function: call it like the original.

    ``kernel_for(*args)`` returns the kernel a call with such arguments runs (NumPy arrays
    stand for device arrays of their dtype), ``inspect(*args, arch=...)`` its source and
    CUBIN without a GPU.
    """

    def __init__(self, fn, kernel_name=None):
        if not isinstance(fn, pytypes.FunctionType):
            raise JitkernTypeError(f"fuse expects a Python function, got {type(fn).__name__}")
        functools.update_wrapper(self, fn)
        self._fn = fn
        self.kernel_name = kernel_name or f"fused_{fn.__name__.strip('<>')}"
        self._body: _Body | None = None
        self._kernels: dict = {}  # signature key -> (kernel, call options)

    def __call__(self, *args):
        if all(isinstance(a, _HOST_TYPES) for a in args):
            return _numpy_function(self._fn)(*args)
        key = tuple([_signature_key(a) for a in args])
        entry = self._kernels.get(key)
        if entry is None:
            entry = self._entry(args, key)
        kernel, options = entry
        return kernel(*args, **options)

    def kernel_for(self, *args):
        """The ElementwiseKernel or ReductionKernel run for arguments like ``args``."""
        return self._entry(args, tuple(_signature_key(a) for a in args))[0]

    def inspect(self, *args, arch=None):
        """Source, CUBIN and resource use of the kernel for ``args`` (NumPy arrays allowed)."""
        kernel, options = self._entry(args, tuple(_signature_key(a) for a in args))
        return kernel.inspect(*args, arch=arch, **options)

    def _entry(self, args, key):
        entry = self._kernels.get(key)
        if entry is None:
            try:
                entry = self._build(args)
            except JitError as exc:
                raise exc.with_traceback(None) from None
            self._kernels[key] = entry
        return entry

    def _read_body(self) -> _Body:
        if self._body is None:
            self._body = _BodyReader(frontend.parse_function(self._fn)).read()
        return self._body

    def _build(self, args):
        body = self._read_body()
        parsed = body.device
        if len(args) != len(parsed.params):
            raise frontend.error(
                JitTypeError,
                parsed.source,
                parsed.tree,
                f"{parsed.qualname}() takes {len(parsed.params)} arguments "
                f"({', '.join(parsed.params)}), got {len(args)}",
            )
        types, weak = zip(*[_argument_type(a) for a in args]) if args else ((), ())
        fn = _emit_device_function(body, types, weak)
        outs = _outputs(fn, body)
        if body.reduction is None:
            return _elementwise_kernel(fn, outs, self.kernel_name), {}
        kernel = _reduction_kernel(fn, outs[0], body, self.kernel_name)
        return kernel, body.reduction.options()

    def __repr__(self) -> str:
        return f"<jitkern.fuse {self.__name__!r}>"


def fuse(*args, kernel_name=None):
    """Fuse a function of elementwise array arithmetic into one kernel.

    ``@jitkern.fuse()``, ``@jitkern.fuse`` and ``@jitkern.fuse(kernel_name='k')`` all work.
    """
    if len(args) == 1 and callable(args[0]) and kernel_name is None:
        return Fused(args[0])
    if args:
        raise JitkernTypeError("fuse: use @jitkern.fuse() or @jitkern.fuse(kernel_name='name')")
    return lambda fn: Fused(fn, kernel_name)


__all__ = ["REDUCTIONS", "FuseError", "Fused", "fuse"]
