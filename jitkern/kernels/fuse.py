"""``jitkern.fuse``: a Python function of elementwise array arithmetic -> one kernel.

The function's source is parsed with :mod:`ast` (a small translator of its own: the
JIT compiler's frontend targets statement-level kernels, this one only array
expressions). The body may assign local names and must end in ``return expr``;
``expr`` is built from the arguments, numbers, arithmetic and comparison
operators, ``where`` and the math functions of :data:`MATH`, and may be wrapped
in a final ``sum``/``prod``/``max``/``min`` (``amax``/``amin``) with ``axis`` and
``keepdims``, which makes a ReductionKernel instead of an ElementwiseKernel.
Functions are named by their last attribute (``cp.exp``, ``np.exp``, ``jitkern.exp``
and ``math.exp`` are all ``exp``).

Result types follow NumPy exactly: each sub-expression's dtype is found by
evaluating the same expression with NumPy on empty arrays of the argument
dtypes, and the C++ casts every operand to that type. With NumPy arrays (or only
scalars) the function runs through NumPy. Kernels are cached per argument types.
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap

import numpy

from .elementwise import ElementwiseKernel
from .params import ctype_of
from .reduction import ReductionKernel


class FuseError(ValueError):
    """A construct ``fuse`` cannot turn into a kernel (with the source position)."""


# name -> (NumPy function, C++ template over {0}, {1} with operands cast to the result type)
MATH = {
    "exp": (numpy.exp, "exp({0})"),
    "log": (numpy.log, "log({0})"),
    "log2": (numpy.log2, "log2({0})"),
    "log10": (numpy.log10, "log10({0})"),
    "sqrt": (numpy.sqrt, "sqrt({0})"),
    "sin": (numpy.sin, "sin({0})"),
    "cos": (numpy.cos, "cos({0})"),
    "tan": (numpy.tan, "tan({0})"),
    "arcsin": (numpy.arcsin, "asin({0})"),
    "arccos": (numpy.arccos, "acos({0})"),
    "arctan": (numpy.arctan, "atan({0})"),
    "sinh": (numpy.sinh, "sinh({0})"),
    "cosh": (numpy.cosh, "cosh({0})"),
    "tanh": (numpy.tanh, "tanh({0})"),
    "floor": (numpy.floor, "floor({0})"),
    "ceil": (numpy.ceil, "ceil({0})"),
    "abs": (numpy.abs, "_jk_abs({0})"),
    "absolute": (numpy.abs, "_jk_abs({0})"),
    "square": (numpy.square, "(({0}) * ({0}))"),
    "negative": (numpy.negative, "(-({0}))"),
    "maximum": (numpy.maximum, "_jk_max({0}, {1})"),
    "minimum": (numpy.minimum, "_jk_min({0}, {1})"),
    "arctan2": (numpy.arctan2, "atan2({0}, {1})"),
    "hypot": (numpy.hypot, "hypot({0}, {1})"),
    "power": (numpy.power, "_jk_pow({0}, {1})"),
}
REDUCTIONS = {
    "sum": (numpy.sum, "a + b", "0"),
    "prod": (numpy.prod, "a * b", "1"),
    "max": (numpy.max, "_jk_max(a, b)", None),
    "amax": (numpy.max, "_jk_max(a, b)", None),
    "min": (numpy.min, "_jk_min(a, b)", None),
    "amin": (numpy.min, "_jk_min(a, b)", None),
}
_BINOPS = {
    ast.Add: (numpy.add, "({0} + {1})"),
    ast.Sub: (numpy.subtract, "({0} - {1})"),
    ast.Mult: (numpy.multiply, "({0} * {1})"),
    ast.Div: (numpy.true_divide, "({0} / {1})"),
    ast.FloorDiv: (numpy.floor_divide, "_jk_floordiv({0}, {1})"),
    ast.Mod: (numpy.remainder, "_jk_mod({0}, {1})"),
    ast.Pow: (numpy.power, "_jk_pow({0}, {1})"),
    ast.BitAnd: (numpy.bitwise_and, "({0} & {1})"),
    ast.BitOr: (numpy.bitwise_or, "({0} | {1})"),
    ast.BitXor: (numpy.bitwise_xor, "({0} ^ {1})"),
    ast.LShift: (numpy.left_shift, "({0} << {1})"),
    ast.RShift: (numpy.right_shift, "({0} >> {1})"),
}
_COMPARES = {
    ast.Lt: (numpy.less, "<"),
    ast.LtE: (numpy.less_equal, "<="),
    ast.Gt: (numpy.greater, ">"),
    ast.GtE: (numpy.greater_equal, ">="),
    ast.Eq: (numpy.equal, "=="),
    ast.NotEq: (numpy.not_equal, "!="),
}
_UNARY = {
    ast.USub: (numpy.negative, "(-{0})"),
    ast.UAdd: (numpy.positive, "(+{0})"),
    ast.Invert: (numpy.invert, "(~{0})"),
    ast.Not: (numpy.logical_not, "(!{0})"),
}

PREAMBLE = r"""
template <typename T> __device__ __forceinline__ T _jk_abs(T x) { return x < T(0) ? T(-x) : x; }
template <typename T> __device__ __forceinline__ T _jk_max(T a, T b) {
  return (a != a || a > b) ? a : b; }  // NaN propagates, as in NumPy
template <typename T> __device__ __forceinline__ T _jk_min(T a, T b) {
  return (a != a || a < b) ? a : b; }
template <typename T> __device__ __forceinline__ T _jk_floordiv(T a, T b) {
  if (b == T(0)) return T(0);
  T q = a / b; if ((a % b != T(0)) && ((a < T(0)) != (b < T(0)))) q = q - T(1); return q; }
__device__ __forceinline__ float _jk_floordiv(float a, float b) { return floorf(a / b); }
__device__ __forceinline__ double _jk_floordiv(double a, double b) { return floor(a / b); }
template <typename T> __device__ __forceinline__ T _jk_mod(T a, T b) {
  if (b == T(0)) return T(0);
  T r = a % b; if (r != T(0) && ((r < T(0)) != (b < T(0)))) r = r + b; return r; }
__device__ __forceinline__ float _jk_mod(float a, float b) {
  float r = fmodf(a, b); if (r != 0.0f && ((r < 0.0f) != (b < 0.0f))) r += b; return r; }
__device__ __forceinline__ double _jk_mod(double a, double b) {
  double r = fmod(a, b); if (r != 0.0 && ((r < 0.0) != (b < 0.0))) r += b; return r; }
template <typename T> __device__ __forceinline__ T _jk_pow(T a, T b) {
  T r = T(1); while (b > T(0)) { if (b % T(2) != T(0)) r = r * a; a = a * a; b = b / T(2); }
  return r; }
__device__ __forceinline__ float _jk_pow(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double _jk_pow(double a, double b) { return pow(a, b); }
"""


class _Expr:
    """A translated sub-expression: its C++ code, its dtype, and a NumPy evaluator."""

    __slots__ = ("code", "dtype", "numpy")

    def __init__(self, code: str, dtype, evaluate):
        self.code, self.dtype, self.numpy = code, dtype, evaluate


def _cast(e: _Expr, dtype) -> str:
    if e.dtype == dtype:
        return e.code
    return f"(({ctype_of(numpy.dtype(dtype))})({e.code}))"


class _Translator:
    """Walks the function body; state lives on this object, one per argument signature."""

    def __init__(self, fn, tree: ast.FunctionDef, filename: str, first_line: int, dummies):
        self.fn, self.tree, self.filename, self.first_line = fn, tree, filename, first_line
        self.env: dict[str, _Expr] = {}
        for k, (name, dummy) in enumerate(zip(self._arg_names(), dummies)):
            self.env[name] = _Expr(f"in{k}", _dtype_of(dummy), lambda vals, k=k: vals[k])

    def _arg_names(self):
        return [a.arg for a in self.tree.args.args]

    def error(self, node, message: str) -> FuseError:
        line = self.first_line + getattr(node, "lineno", 1) - 1
        col = getattr(node, "col_offset", 0) + 1
        return FuseError(f"{self.filename}:{line}:{col}: {message}")

    # -- statements -------------------------------------------------------------------
    def run(self):
        """-> (expression, reduction or None) of the returned value."""
        body = [s for s in self.tree.body if not _is_docstring(s)]
        for stmt in body[:-1]:
            if not (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
            ):
                raise self.error(
                    stmt,
                    "fuse supports assignments to a name ('t = x - y') and a final 'return expr'",
                )
            self.env[stmt.targets[0].id] = self.visit(stmt.value)
        last = body[-1] if body else self.tree
        if not isinstance(last, ast.Return) or last.value is None:
            raise self.error(last, "a fused function must end with 'return expr'")
        return self.visit_return_value(last.value)

    def visit_return_value(self, node):
        reduction = _reduction_call(node)
        if reduction is None:
            return self.visit(node), None
        name, target, kwargs = reduction
        inner = self.visit(target)
        options = {}
        for kw in kwargs:
            if kw.arg not in ("axis", "keepdims"):
                raise self.error(kw, f"{name}(): only axis= and keepdims= are supported")
            try:
                options[kw.arg] = ast.literal_eval(kw.value)
            except ValueError:
                raise self.error(kw, f"{name}(): {kw.arg}= must be a constant") from None
        return inner, (name, options)

    # -- expressions ------------------------------------------------------------------
    def visit(self, node) -> _Expr:
        method = getattr(self, "visit_" + type(node).__name__, None)
        if method is None:
            raise self.error(
                node,
                f"{type(node).__name__} is not supported in fused functions; "
                "use arithmetic, comparisons, where() and math functions",
            )
        return method(node)

    def visit_Name(self, node):
        if node.id in self.env:
            return self.env[node.id]
        raise self.error(node, f"name {node.id!r} is not an argument or a local of the function")

    def visit_Constant(self, node):
        v = node.value
        if type(v) not in (bool, int, float):
            raise self.error(node, f"constant {v!r} is not a number")
        code = ("true" if v else "false") if type(v) is bool else repr(v)
        if type(v) is float and code in ("inf", "nan"):
            code = "(1.0/0.0)" if code == "inf" else "(0.0/0.0)"
        return _Expr(code, _weak_dtype(v), lambda vals, v=v: v)

    def visit_BinOp(self, node):
        entry = _BINOPS.get(type(node.op))
        if entry is None:
            raise self.error(node, f"operator {type(node.op).__name__} is not supported")
        return self._apply(
            entry[0],
            entry[1],
            [self.visit(node.left), self.visit(node.right)],
            node,
            operand_type="result",
        )

    def visit_UnaryOp(self, node):
        ufunc, template = _UNARY[type(node.op)]
        return self._apply(ufunc, template, [self.visit(node.operand)], node)

    def visit_Compare(self, node):
        if len(node.ops) != 1:
            raise self.error(node, "chained comparisons are not supported; use (a < b) & (b < c)")
        ufunc, op = _COMPARES[type(node.ops[0])]
        return self._apply(
            ufunc,
            "({0} %s {1})" % op,
            [self.visit(node.left), self.visit(node.comparators[0])],
            node,
            operand_type="common",
        )

    def visit_Call(self, node):
        name = _callee_name(node.func)
        if node.keywords:
            raise self.error(node, f"{name}(): keyword arguments are not supported here")
        args = [self.visit(a) for a in node.args]
        if name == "where":
            if len(args) != 3:
                raise self.error(node, "where() takes (condition, x, y)")
            cond, a, b = args
            result = _eval_dtype(numpy.where, [cond, a, b])
            code = f"(({cond.code}) ? {_cast(a, result)} : {_cast(b, result)})"
            return _Expr(code, result, lambda vals: numpy.where(*[e.numpy(vals) for e in args]))
        entry = MATH.get(name)
        if entry is None:
            raise self.error(
                node,
                f"function {name!r} is not supported in fused functions "
                f"(supported: where, {', '.join(sorted(MATH))})",
            )
        return self._apply(entry[0], entry[1], args, node, operand_type="result")

    def _apply(self, ufunc, template, args, node, operand_type="result") -> _Expr:
        try:
            result = _eval_dtype(ufunc, args)
        except TypeError as exc:
            raise self.error(node, f"NumPy refuses these types: {exc}") from None
        if operand_type == "common":
            common = numpy.result_type(*[_as_operand(a) for a in args])
            codes = [_cast(a, common) for a in args]
        elif result == numpy.bool_ and ufunc is not numpy.logical_not:
            codes = [_cast(a, numpy.result_type(*[_as_operand(x) for x in args])) for a in args]
        else:
            compute = result if result != numpy.float16 else numpy.dtype(numpy.float32)
            codes = [_cast(a, compute) for a in args]
        code = template.format(*codes)
        if result == numpy.float16:
            code = f"((__half)({code}))"
        return _Expr(code, result, lambda vals: ufunc(*[e.numpy(vals) for e in args]))


def _is_docstring(stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(getattr(stmt, "value", None), ast.Constant)


def _callee_name(func) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return "<expression>"


def _reduction_call(node):
    """``xp.sum(expr, axis=...)`` or ``expr.sum(axis=...)`` -> (name, expr, keywords)."""
    if not isinstance(node, ast.Call):
        return None
    name = _callee_name(node.func)
    if name not in REDUCTIONS:
        return None
    if isinstance(node.func, ast.Attribute) and not node.args:
        return name, node.func.value, node.keywords
    if len(node.args) != 1:
        return None
    return name, node.args[0], node.keywords


def _weak_dtype(value):
    """A Python scalar stays weakly typed (NumPy 2): it is the value itself."""
    return value


def _dtype_of(dummy):
    return dummy.dtype if isinstance(dummy, (numpy.ndarray, numpy.generic)) else dummy


def _as_operand(e: _Expr):
    d = e.dtype
    return numpy.empty((0,), d) if isinstance(d, numpy.dtype) else d


def _eval_dtype(ufunc, args):
    out = ufunc(*[_as_operand(a) for a in args])
    return numpy.asarray(out).dtype if not isinstance(out, numpy.ndarray) else out.dtype


def _numpy_is_enough(args) -> bool:
    return all(
        isinstance(a, (numpy.ndarray, numpy.generic, bool, int, float, complex)) for a in args
    )


class Fused:
    """A fused function: call it like the original."""

    def __init__(self, fn, kernel_name=None):
        functools.update_wrapper(self, fn)
        self._fn = fn
        self.kernel_name = kernel_name or f"fused_{fn.__name__}"
        source = textwrap.dedent(inspect.getsource(fn))
        module = ast.parse(source)
        self._tree = next(n for n in module.body if isinstance(n, (ast.FunctionDef,)))
        self._filename = inspect.getsourcefile(fn) or "<fused>"
        self._first_line = fn.__code__.co_firstlineno
        self._kernels: dict = {}

    def _signature(self, args):
        return tuple(
            (a.dtype, a.ndim)
            if hasattr(a, "dtype") and hasattr(a, "shape") and not isinstance(a, numpy.generic)
            else type(a)
            if not isinstance(a, numpy.generic)
            else a.dtype.type
            for a in args
        )

    def _dummies(self, args):
        out = []
        for a in args:
            if isinstance(a, numpy.generic):
                out.append(a)
            elif hasattr(a, "dtype") and hasattr(a, "shape"):
                out.append(numpy.empty((0,), numpy.dtype(a.dtype)))
            else:
                out.append(a)
        return out

    def _translate(self, args):
        if len(args) != len(self._tree.args.args):
            raise TypeError(
                f"{self.__name__}() takes {len(self._tree.args.args)} arguments, got {len(args)}"
            )
        tr = _Translator(
            self._fn, self._tree, self._filename, self._first_line, self._dummies(args)
        )
        return tr.run()

    def __call__(self, *args):
        if _numpy_is_enough(args):
            expr, reduction = self._translate(args)
            value = expr.numpy(args)
            if reduction is not None:
                name, options = reduction
                value = REDUCTIONS[name][0](value, **options)
            return value
        key = self._signature(args)
        kernel = self._kernels.get(key)
        if kernel is None:
            kernel = self._kernels[key] = self._build(args)
        kernel, options = kernel
        if options is None:
            return kernel(*args)
        return kernel(*args, **options)

    def _build(self, args):
        expr, reduction = self._translate(args)
        in_params = []
        for k, a in enumerate(args):
            dt = numpy.dtype(a.dtype) if hasattr(a, "dtype") else _python_param_dtype(a)
            in_params.append(f"{dt.name} in{k}")
        in_text = ", ".join(in_params)
        if reduction is None:
            out_dt = (
                numpy.dtype(expr.dtype)
                if isinstance(expr.dtype, numpy.dtype)
                else numpy.asarray(expr.dtype).dtype
            )
            k = ElementwiseKernel(
                in_text,
                f"{out_dt.name} out0",
                f"out0 = {_cast(expr, out_dt)};",
                self.kernel_name,
                preamble=PREAMBLE,
            )
            return k, None
        name, options = reduction
        np_fn, reduce_expr, identity = REDUCTIONS[name]
        elem = (
            numpy.dtype(expr.dtype)
            if isinstance(expr.dtype, numpy.dtype)
            else numpy.asarray(expr.dtype).dtype
        )
        out_dt = np_fn(numpy.zeros((1,), elem)).dtype
        k = ReductionKernel(
            in_text,
            f"{out_dt.name} out0",
            _cast(expr, out_dt),
            reduce_expr,
            "out0 = a",
            identity,
            self.kernel_name,
            reduce_type=ctype_of(out_dt),
            preamble=PREAMBLE,
        )
        return k, options

    def __repr__(self) -> str:
        return f"<jitkern.fuse {self.__name__!r}>"


def _python_param_dtype(value) -> numpy.dtype:
    return numpy.dtype(
        {bool: numpy.bool_, int: numpy.int64, float: numpy.float64, complex: numpy.complex128}[
            type(value)
        ]
    )


def fuse(*args, kernel_name=None):
    """Fuse a function of elementwise array arithmetic into one kernel.

    ``@jitkern.fuse()``, ``@jitkern.fuse`` and ``@jitkern.fuse(kernel_name='k')`` all work.
    """
    if len(args) == 1 and callable(args[0]) and kernel_name is None:
        return Fused(args[0])
    if args:
        raise TypeError("fuse: use @jitkern.fuse() or @jitkern.fuse(kernel_name='name')")
    return lambda fn: Fused(fn, kernel_name)


__all__ = ["FuseError", "Fused", "fuse"]
