"""fuse, stage 1: call the user's function with proxy arrays and record the array operations.

Python runs everything that is not array arithmetic: helper functions, closures, loops and
``if`` over Python values (unrolled), ``getattr(numpy, 'sqrt')``, ``*args`` wrappers. A proxy
(:class:`Var`) answers Python's operators, NumPy's protocols (``__array_ufunc__`` for
``numpy.sqrt(x)``, ``__array_function__`` for ``numpy.where``/``numpy.sum``) and the array
methods fuse supports; each records a :class:`Node`. What cannot be recorded (a Python
``if`` on an array value, an unsupported routine) raises a :class:`FuseTraceError` that
names the user's line.

The result is a :class:`Graph`: the inputs (argument positions, with the basic indexing
applied to them), the nodes in creation order, the returned nodes and the writes into
argument arrays (``x += y``, ``x[...] = y``, ``out=x``).
"""

from __future__ import annotations

import dataclasses
import linecache
import os
import sys

import numpy

from ...arrays import describe
from ...errors import JitkernAttributeError, JitkernTypeError
from . import ops
from ..reduction import normalize_axis

_PY_SCALARS = (bool, int, float, complex)
_HERE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the jitkern package
_NUMPY_DIR = os.path.dirname(numpy.__file__)


class FuseTraceError(JitkernTypeError):
    """What fuse cannot record, at the user's line: ``file.py:LINE: message``, the line."""

    def __init__(self, message: str, hint: str = "", location=None):
        filename, lineno = location or user_location()
        self.filename, self.lineno = filename, lineno
        text = linecache.getline(filename, lineno).strip() if filename else ""
        parts = [f"{filename}:{lineno}: {message}" if filename else message]
        if text:
            parts.append(f"    {text}")
        if hint:
            parts.append(hint)
        super().__init__("\n".join(parts))


class FuseAttributeError(JitkernAttributeError):
    """An array attribute or method fuse does not record."""


def user_location():
    """(file, line) of the innermost frame outside jitkern and NumPy: the user's code."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith((_HERE, _NUMPY_DIR, "<__array_function__")):
            return filename, frame.f_lineno
        frame = frame.f_back
    return "", 0


# ---------------------------------------------------------------------------
# the graph


@dataclasses.dataclass(eq=False)
class Node:
    op: str  # 'arg' 'const' 'ufunc' 'cast' 'where' 'reduce' 'real' 'imag'
    args: tuple
    dtype: numpy.dtype
    ndim: int
    weak: bool = False  # a Python scalar: promotes as NumPy 2 promotes Python numbers
    attrs: tuple = ()
    reduced: bool = False  # depends on a reduction's result

    def __repr__(self) -> str:
        return f"<{self.op} {self.dtype}{' weak' if self.weak else ''} ndim={self.ndim}>"


@dataclasses.dataclass(frozen=True)
class Input:
    """A kernel input: argument ``position`` with the basic-index ``keys`` applied in turn."""

    position: int
    keys: tuple
    scalar: bool

    def value(self, args):
        v = args[self.position]
        for key in self.keys:
            v = v[_thaw(key)]
        return v


def _freeze(key):
    """A hashable spelling of a basic index (slices are not hashable before Python 3.12)."""
    if isinstance(key, tuple):
        return ("tuple", tuple(_freeze(k) for k in key))
    if isinstance(key, slice):
        return ("slice", key.start, key.stop, key.step)
    if isinstance(key, numpy.integer):
        return int(key)
    return key


def _thaw(key):
    if isinstance(key, tuple) and key and key[0] == "tuple":
        return tuple(_thaw(k) for k in key[1])
    if isinstance(key, tuple) and key and key[0] == "slice":
        return slice(*key[1:])
    return key


@dataclasses.dataclass
class Graph:
    inputs: list  # Input per 'arg' node, in order
    arg_nodes: list  # the 'arg' node of each input
    outputs: tuple  # returned nodes (or plain Python values)
    tuple_result: bool
    writes: dict  # Input (the written view) -> node

    def describe(self) -> str:
        """One line per node: what was recorded (for tests and docs)."""
        names = {}
        lines = []
        for node in self.order():
            name = f"v{len(names)}"
            names[node] = name
            args = ", ".join(names.get(a, "?") for a in node.args)
            attrs = f" {node.attrs}" if node.attrs else ""
            lines.append(f"{name} = {node.op}{attrs}({args}) -> {node.dtype}")
        return "\n".join(lines)

    def order(self) -> list:
        """The nodes the outputs and writes need, each after its operands."""
        seen, out = set(), []

        def visit(node):
            if not isinstance(node, Node) or id(node) in seen:
                return
            seen.add(id(node))
            for a in node.args:
                visit(a)
            out.append(node)

        for node in [*self.outputs, *self.writes.values()]:
            visit(node)
        return out


# ---------------------------------------------------------------------------
# the trace


class Trace:
    def __init__(self):
        self.inputs: dict = {}  # Input -> arg node
        self.writes: dict = {}

    def argument(self, position: int, value):
        if value is None:
            return None
        if isinstance(value, numpy.generic):  # before Python's: numpy.float64 is a float
            node = self._arg(Input(position, (), True), value.dtype, 0, False)
            return Var(self, node)
        if isinstance(value, _PY_SCALARS):
            node = self._arg(Input(position, (), True), numpy.result_type(value), 0, True)
            return Var(self, node)
        dtype, ndim = array_signature(value)
        node = self._arg(Input(position, (), False), dtype, ndim, False)
        return Var(self, node, Input(position, (), False))

    def _arg(self, inp: Input, dtype, ndim, weak) -> Node:
        node = self.inputs.get(inp)
        if node is None:
            node = self.inputs[inp] = Node("arg", (), numpy.dtype(dtype), ndim, weak, (inp,))
        return node

    def view(self, var: Var, key, write: bool = False) -> Var:
        if not write:
            var._check_readable()
        target = var._target
        if target is None or var._node.op != "arg" or var._node.attrs[0] != target:
            raise FuseTraceError(
                "fuse indexes only the function's array arguments, before computing with them",
                "index an argument (x[0], x[:, None], x[1:]), or pass the indexed array",
            )
        _check_key(key)
        try:
            ndim = _dummy(var._node.ndim)[key].ndim
        except IndexError as exc:
            raise FuseTraceError(f"index {key!r}: {exc}") from None
        inp = Input(target.position, target.keys + (_freeze(key),), False)
        node = self._arg(inp, var._node.dtype, ndim, False)
        return Var(self, node, inp)

    def graph(self, result) -> Graph:
        tuple_result = isinstance(result, tuple)
        items = result if tuple_result else (result,)
        outputs = tuple(i._node if isinstance(i, Var) else _returned_value(i) for i in items)
        inputs = list(self.inputs)
        return Graph(
            inputs, [self.inputs[i] for i in inputs], outputs, tuple_result, dict(self.writes)
        )


def _returned_value(value):
    if value is None or isinstance(value, (*_PY_SCALARS, numpy.generic)):
        return value
    raise FuseTraceError(
        f"a fused function returns arrays (or a tuple of them), not {type(value).__name__}"
    )


def array_signature(value) -> tuple:
    """(dtype, ndim) of an array argument of any kind."""
    dtype, ndim = getattr(value, "dtype", None), getattr(value, "ndim", None)
    if isinstance(dtype, numpy.dtype) and isinstance(ndim, int):
        return dtype, ndim
    info = describe(value)
    return info.dtype, len(info.shape)


def _dummy(ndim: int):
    return numpy.lib.stride_tricks.as_strided(numpy.zeros(1), (1 << 20,) * ndim, (0,) * ndim)


def _check_key(key) -> None:
    items = key if isinstance(key, tuple) else (key,)
    for k in items:
        if k is None or k is Ellipsis or isinstance(k, slice):
            if isinstance(k, slice) and any(isinstance(p, Var) for p in (k.start, k.stop, k.step)):
                raise FuseTraceError("a slice bound is an array value; use Python numbers")
            continue
        if isinstance(k, (int, numpy.integer)) and not isinstance(k, bool):
            continue
        raise FuseTraceError(
            f"index {k!r} is not supported in a fused function",
            "fuse takes basic indexing of arguments: ints, slices, None, ...; "
            "boolean and integer-array indexing (x[mask]) are not elementwise",
        )


# ---------------------------------------------------------------------------
# recording operations


def operand(trace: Trace, value) -> Node:
    if isinstance(value, Var):
        value._check_readable()
        return value._node
    if isinstance(value, numpy.generic):  # strong, as in NumPy 2 (numpy.float64 is a float)
        return Node("const", (), value.dtype, 0, False, (value.item(),))
    if isinstance(value, bool):
        return Node("const", (), numpy.dtype("?"), 0, False, (value,))
    if isinstance(value, _PY_SCALARS):
        return Node("const", (), numpy.result_type(value), 0, True, (value,))
    if isinstance(value, numpy.ndarray):
        raise FuseTraceError(
            "a NumPy array inside a fused function: only its arguments can be arrays",
            "pass the array as an argument",
        )
    raise FuseTraceError(
        f"a {type(value).__name__} cannot be an operand of an array operation in a fused function"
    )


def _loop_operand(node: Node):
    if node.weak and node.dtype.kind != "b":
        return {"i": int, "u": int, "f": float, "c": complex}[node.dtype.kind]
    return node.dtype


def _combine(nodes):
    ndim = max((n.ndim for n in nodes), default=0)
    reduced = any(n.reduced for n in nodes)
    weak = bool(nodes) and all(n.weak for n in nodes)
    return ndim, reduced, weak


def call_ufunc(trace: Trace, name: str, inputs, out=None, dtype=None):
    row = ops.UFUNCS.get(name)
    if row is None:
        raise FuseTraceError(
            f"numpy.{name} is not supported in a fused function",
            f"supported ufuncs: {', '.join(sorted(ops.UFUNCS))}",
        )
    if len(inputs) != row.nin:
        raise FuseTraceError(f"numpy.{name} takes {row.nin} argument(s), got {len(inputs)}")
    nodes = [operand(trace, v) for v in inputs]
    loop = resolve_loop(name, nodes, dtype)
    nout = len(row.templates)
    for j in range(nout):
        if row.template(j, loop[0]) is None:
            types = ", ".join(_type_text(n) for n in nodes)
            raise FuseTraceError(f"numpy.{name}({types}): no {loop[0]} loop in fused kernels")
    ndim, reduced, weak = _combine(nodes)
    results = [
        Node("ufunc", tuple(nodes), loop[row.nin + j], ndim, weak, (name, j, loop), reduced)
        for j in range(nout)
    ]
    outs = _out_tuple(out, nout)
    values = []
    for j, node in enumerate(results):
        if outs[j] is not None:
            assign(outs[j], node, f"numpy.{name}(..., out=...)")
            values.append(outs[j])
        else:
            values.append(Var(trace, node))
    return values[0] if nout == 1 else tuple(values)


def _out_tuple(out, nout):
    if out is None:
        return (None,) * nout
    outs = out if isinstance(out, tuple) else (out,)
    if len(outs) != nout or not all(o is None or isinstance(o, Var) for o in outs):
        raise FuseTraceError("out= takes the fused function's array arguments")
    return outs


def resolve_loop(name: str, nodes, dtype=None) -> tuple:
    """NumPy's loop dtypes (inputs, then outputs) for ``numpy.<name>`` on these operands."""
    ufunc = getattr(numpy, name)
    loop_ops = tuple(_loop_operand(n) for n in nodes)
    signature = None
    if dtype is not None:
        signature = (None,) * ufunc.nin + (numpy.dtype(dtype),) * ufunc.nout
    try:
        if signature is not None:
            loop = ufunc.resolve_dtypes(loop_ops + (None,) * ufunc.nout, signature=signature)
        else:
            loop = ufunc.resolve_dtypes(loop_ops + (None,) * ufunc.nout)
    except (TypeError, numpy.exceptions.DTypePromotionError) as exc:
        types = ", ".join(_type_text(n) for n in nodes)
        raise FuseTraceError(f"numpy.{name}({types}): {exc}") from None
    for dt in loop:
        if dt not in _SUPPORTED_DTYPES:
            raise FuseTraceError(f"numpy.{name}: dtype {dt} is not supported in kernels")
    return tuple(loop)


_SUPPORTED_DTYPES = frozenset(ops.CTYPES)


def _type_text(node: Node) -> str:
    if node.weak:
        return f"Python {_loop_operand(node).__name__}"
    return str(node.dtype)


def assign(var: Var, node: Node, what: str) -> None:
    """Write ``node`` into ``var`` as NumPy's in-place operations do (same_kind casting)."""
    if not isinstance(var, Var):
        raise FuseTraceError(f"{what}: the target must be an array argument of the function")
    target = var._node.dtype
    if not _can_store(node, target):
        raise FuseTraceError(
            f"{what}: cannot cast {_type_text(node)} to {target} (casting='same_kind')",
            f"convert explicitly, e.g. y.astype(numpy.{target})",
        )
    if node.dtype != target:
        node = Node("cast", (node,), target, node.ndim, False, (), node.reduced)
    var._node = node
    if var._target is not None:
        var._trace.writes[var._target] = node


def _can_store(node: Node, target: numpy.dtype) -> bool:
    if node.weak:
        return "biufc".index(node.dtype.kind) <= "biufc".index(target.kind)
    return numpy.can_cast(node.dtype, target, "same_kind")


def cast_var(var: Var, dtype) -> Var:
    dtype = numpy.dtype(dtype)
    node = var._node
    if dtype not in _SUPPORTED_DTYPES:
        raise FuseTraceError(f"astype: dtype {dtype} is not supported in kernels")
    if node.dtype == dtype and not node.weak:
        return Var(var._trace, node)
    return Var(var._trace, Node("cast", (node,), dtype, node.ndim, False, (), node.reduced))


def where(trace: Trace, condition, x=None, y=None):
    if x is None or y is None:
        raise FuseTraceError(
            "numpy.where(condition) (the indices form) is not elementwise",
            "use numpy.where(condition, x, y)",
        )
    nodes = [operand(trace, v) for v in (condition, x, y)]
    values = [_weak_value(n) for n in nodes[1:]]
    dtype = numpy.result_type(*values)
    ndim, reduced, weak = _combine(nodes)
    weak = nodes[1].weak and nodes[2].weak
    return Var(trace, Node("where", tuple(nodes), dtype, ndim, weak, (), reduced))


def _weak_value(node: Node):
    if node.weak:
        return {"i": 0, "u": 0, "f": 0.0, "c": 0j}[node.dtype.kind]
    return node.dtype


def clip(trace: Trace, x, a_min=None, a_max=None, out=None, **kwargs):
    kwargs.pop("min", None), kwargs.pop("max", None)
    if kwargs:
        raise FuseTraceError(f"numpy.clip: unsupported keyword(s) {', '.join(kwargs)}")
    value = x
    if a_min is not None:
        value = call_ufunc(trace, "maximum", (value, a_min))
    if a_max is not None:
        value = call_ufunc(trace, "minimum", (value, a_max))
    if value is x:
        value = Var(trace, operand(trace, x))
    if out is not None:
        assign(out, value._node, "numpy.clip(..., out=...)")
        return out
    return value


def copyto(trace: Trace, dst, src, casting="same_kind", where=True):
    if where is not True:
        raise FuseTraceError(
            "numpy.copyto(..., where=...) is not supported in fused functions",
            "use dst[...] = numpy.where(mask, src, dst)",
        )
    node = operand(trace, src)
    if casting == "unsafe" and isinstance(dst, Var) and node.dtype != dst._node.dtype:
        node = Node("cast", (node,), dst._node.dtype, node.ndim, False, (), node.reduced)
    assign(dst, node, "numpy.copyto")


def part(trace: Trace, x, which: str):
    node = operand(trace, x)
    dtype = ops.real_dtype(node.dtype)
    return Var(trace, Node(which, (node,), dtype, node.ndim, node.weak, (), node.reduced))


def reduce(trace: Trace, name: str, x, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    if kwargs:
        raise FuseTraceError(
            f"numpy.{name}: unsupported keyword(s) {', '.join(kwargs)}",
            "fused reductions take axis=, dtype= and keepdims=",
        )
    if out is not None:
        raise FuseTraceError(
            f"numpy.{name}(..., out=...) is not supported in fused functions",
            "return the result instead",
        )
    node = operand(trace, x)
    if node.reduced:
        raise FuseTraceError(
            f"numpy.{name} of a reduced value: fuse makes one reduction per function",
            "split the function in two fused functions",
        )
    if isinstance(axis, list):
        axis = tuple(axis)
    if any(isinstance(a, Var) for a in (axis if isinstance(axis, tuple) else (axis,))):
        raise FuseTraceError(f"numpy.{name}: axis must be Python ints, not array values")
    axes = normalize_axis(axis, node.ndim, f"numpy.{name}")
    requested = None if dtype is None else numpy.dtype(dtype)
    if name == "mean":
        return _mean(trace, node, axes, bool(keepdims), requested)
    out_dtype = ops.reduced_dtype(name, node.dtype, requested)
    ndim = node.ndim if keepdims else node.ndim - len(axes)
    attrs = (name, axes, bool(keepdims), requested)
    return Var(trace, Node("reduce", (node,), out_dtype, ndim, False, attrs, True))


def _mean(trace: Trace, node: Node, axes, keepdims: bool, requested):
    """NumPy's mean: a sum (ints in float64, float16 in float32), divided by the count of
    reduced elements (known when the kernel runs), cast to mean's dtype."""
    with numpy.errstate(all="ignore"):
        out = numpy.mean(numpy.zeros((1,), node.dtype), dtype=requested).dtype
    acc = requested or out
    if node.dtype.kind in "biu" and requested is None:
        acc = numpy.dtype(numpy.float64)
    elif acc == numpy.float16:
        acc = numpy.dtype(numpy.float32)
    ndim = node.ndim if keepdims else node.ndim - len(axes)
    total = Node("reduce", (node,), acc, ndim, False, ("sum", axes, keepdims, acc), True)
    count = Node("count", (), numpy.dtype(numpy.int64), 0, True, (total,), True)
    mean = call_ufunc(trace, "true_divide", (Var(trace, total), Var(trace, count)))
    return cast_var(mean, out) if mean._node.dtype != out else mean


# ---------------------------------------------------------------------------
# the proxy


def _binary(name):
    ufunc = ops.BINARY_OPERATORS[name]

    def forward(self, other):
        return call_ufunc(self._trace, ufunc, (self, other))

    def reflected(self, other):
        return call_ufunc(self._trace, ufunc, (other, self))

    def inplace(self, other):
        if ufunc == "divmod":
            return NotImplemented
        self._check_readable()
        result = call_ufunc(self._trace, ufunc, (self, other))
        assign(self, result._node, f"{_INPLACE_SPELLING.get(name, name)}=")
        return self

    return forward, reflected, inplace


_INPLACE_SPELLING = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//",
                     "mod": "%", "pow": "**", "and": "&", "or": "|", "xor": "^", "lshift": "<<",
                     "rshift": ">>"}  # fmt: skip


def _unary(name):
    ufunc = ops.UNARY_OPERATORS[name]

    def method(self):
        return call_ufunc(self._trace, ufunc, (self,))

    return method


_REFUSED_CONVERSIONS = {
    "__bool__": (
        (
            "the truth value of an array is only known on the device: a Python 'if', 'and', "
            "'or', 'not', 'while' or max()/min() on an array value cannot be traced"
        ),
        "use numpy.where(condition, a, b), & | ~, or numpy.maximum/numpy.minimum",
    ),
    "__float__": (
        "float() (or a math.* function) of an array value cannot be traced",
        "use numpy's functions (numpy.sqrt, ...) and x.astype(numpy.float64)",
    ),
    "__int__": ("int() of an array value cannot be traced", "use x.astype(numpy.int64)"),
    "__complex__": (
        "complex() of an array value cannot be traced",
        "use x.astype(numpy.complex128)",
    ),
    "__index__": (
        "an array value cannot be used as a Python index or count",
        "indices in fused functions are Python ints",
    ),
    "__len__": ("len() of an array is not known while tracing", "pass the size as an argument"),
    "__iter__": ("iterating over an array is not elementwise", "use array operations"),
}


def _refused(name):
    message, hint = _REFUSED_CONVERSIONS[name]

    def method(self, *args):
        raise FuseTraceError(message, hint)

    return method


class Var:
    """A proxy array (or scalar) in a traced fused function."""

    __slots__ = ("_node", "_stale", "_target", "_trace")
    __array_priority__ = 1000
    __hash__ = None

    def __init__(self, trace: Trace, node: Node, target: Input | None = None):
        self._trace, self._node, self._target = trace, node, target
        self._stale = False

    def __repr__(self) -> str:
        return f"<jitkern.fuse traced {self._node.dtype} value, ndim={self._node.ndim}>"

    def _check_readable(self):
        if self._stale:
            raise FuseTraceError("this array was partly written above; fuse cannot read it again")

    # NumPy's protocols
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__":
            raise FuseTraceError(
                f"numpy.{ufunc.__name__}.{method} is not supported in fused functions",
                "use numpy.sum/prod/max/min/all/any for reductions",
            )
        out = kwargs.pop("out", None)
        dtype = kwargs.pop("dtype", None)
        kwargs.pop("casting", None)
        if kwargs.get("where", True) is not True:
            raise FuseTraceError(
                f"numpy.{ufunc.__name__}(..., where=...) is not supported", "use numpy.where"
            )
        kwargs.pop("where", None)
        if kwargs:
            raise FuseTraceError(
                f"numpy.{ufunc.__name__}: unsupported keyword(s) {', '.join(kwargs)}"
            )
        if isinstance(out, tuple) and all(o is None for o in out):
            out = None
        return call_ufunc(self._trace, ufunc.__name__, inputs, out, dtype)

    def __array_function__(self, func, types, args, kwargs):
        handler = FUNCTIONS.get(func)
        if handler is None:
            name = getattr(func, "__name__", repr(func))
            raise FuseTraceError(
                f"numpy.{name} is not supported in a fused function",
                f"fuse records elementwise ufuncs and {', '.join(SUPPORTED_FUNCTION_NAMES)}",
            )
        return handler(self._trace, *args, **kwargs)

    def __array__(self, *args, **kwargs):
        raise FuseTraceError(
            "a traced array cannot become a NumPy array",
            "use numpy's functions on it (they are recorded), not numpy.asarray",
        )

    # properties
    @property
    def dtype(self):
        return self._node.dtype

    @property
    def ndim(self):
        return self._node.ndim

    @property
    def shape(self):
        raise FuseAttributeError(
            "x.shape is not known while tracing a fused function "
            "(kernels are made per dtype and ndim); use x.ndim"
        )

    size = shape

    @property
    def real(self):
        return part(self._trace, self, "real")

    @property
    def imag(self):
        return part(self._trace, self, "imag")

    # methods
    def conj(self):
        return call_ufunc(self._trace, "conjugate", (self,))

    conjugate = conj

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        return cast_var(self, dtype)

    def copy(self, order="C"):
        return Var(self._trace, self._node)

    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        return reduce(self._trace, "sum", self, axis, dtype, out, keepdims)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False):
        return reduce(self._trace, "prod", self, axis, dtype, out, keepdims)

    def max(self, axis=None, out=None, keepdims=False):
        return reduce(self._trace, "max", self, axis, None, out, keepdims)

    def min(self, axis=None, out=None, keepdims=False):
        return reduce(self._trace, "min", self, axis, None, out, keepdims)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        return reduce(self._trace, "mean", self, axis, dtype, out, keepdims)

    def all(self, axis=None, out=None, keepdims=False):
        return reduce(self._trace, "all", self, axis, None, out, keepdims)

    def any(self, axis=None, out=None, keepdims=False):
        return reduce(self._trace, "any", self, axis, None, out, keepdims)

    def __getitem__(self, key):
        return self._trace.view(self, key)

    def __setitem__(self, key, value):
        node = operand(self._trace, value)
        if _whole(key):
            assign(self, node, "x[...] =")
            return
        view = self._trace.view(self, key, write=True)
        assign(view, node, f"x[{key!r}] =")
        self._stale = True

    def __getattr__(self, name):
        raise FuseAttributeError(
            f"arrays in fused functions have no attribute {name!r} fuse can record "
            "(supported: dtype, ndim, real, imag, astype, copy, conj, sum, prod, max, min, mean, "
            "all, any, and the operators)"
        )


def _whole(key) -> bool:
    items = key if isinstance(key, tuple) else (key,)
    return all(k is Ellipsis or k == slice(None) for k in items if not isinstance(k, Var))


for _name in ops.BINARY_OPERATORS:
    _f, _r, _i = _binary(_name)
    setattr(Var, f"__{_name}__", _f)
    if _name not in ("lt", "le", "gt", "ge", "eq", "ne"):
        setattr(Var, f"__r{_name}__", _r)
        setattr(Var, f"__i{_name}__", _i)
for _name in ops.UNARY_OPERATORS:
    setattr(Var, f"__{_name}__", _unary(_name))
for _name in _REFUSED_CONVERSIONS:
    setattr(Var, _name, _refused(_name))
Var.__idivmod__ = None


def _reduction_function(name):
    def handler(trace, x, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        if name in ("max", "amax", "min", "amin", "all", "any") and dtype is not None:
            raise FuseTraceError(f"numpy.{name} takes no dtype=")
        return reduce(trace, name, x, axis, dtype, out, keepdims, **kwargs)

    return handler


def _around(trace, x, decimals=0, out=None):
    if decimals != 0:
        raise FuseTraceError("numpy.round(x, decimals) is supported for decimals=0 only")
    return call_ufunc(trace, "rint", (x,), out)


FUNCTIONS = {
    numpy.where: where,
    numpy.clip: clip,
    numpy.copyto: copyto,
    numpy.real: lambda trace, x: part(trace, x, "real"),
    numpy.imag: lambda trace, x: part(trace, x, "imag"),
    numpy.round: _around,
    numpy.around: _around,
    numpy.astype: lambda trace, x, dtype, copy=True: cast_var(x, dtype),
    numpy.copy: lambda trace, x, order="K": Var(trace, operand(trace, x)),
    **{getattr(numpy, name): _reduction_function(name) for name in (*ops.REDUCTIONS, "mean")},
}

SUPPORTED_FUNCTION_NAMES = (
    "where", "clip", "copyto", "real", "imag", "round", "astype", "copy", *ops.REDUCTIONS, "mean",
)  # fmt: skip


def trace(fn, args, kwargs) -> Graph:
    """Call ``fn`` with proxies for ``args`` and return what it recorded."""
    t = Trace()
    proxies = [t.argument(k, a) for k, a in enumerate(args)]
    result = fn(*proxies, **kwargs)
    return t.graph(result)


__all__ = ["FuseAttributeError", "FuseTraceError", "Graph", "Input", "Node", "Var", "trace"]
