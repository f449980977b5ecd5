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

import sys

import numpy

from ...arrays import describe
from . import ops
from .graph import FuseAttributeError, FuseIndexError, FuseTraceError, Graph, Input, Node, _freeze
from ..reduction import normalize_axis

_PY_SCALARS = (bool, int, float, complex)


# ---------------------------------------------------------------------------
# the trace


class Trace:
    def __init__(self):
        self.inputs: dict = {}  # Input -> arg node
        self.writes: dict = {}
        self.shapes: dict = {}  # Input -> the shape of this call's argument (view)
        self.shape_read = False  # the function read a .shape/.size: plans are per shape

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
        inp = Input(position, (), False)
        self.shapes[inp] = array_shape(value)
        node = self._arg(inp, dtype, ndim, False)
        return Var(self, node, inp)

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
            shape = _dummy(self.shapes[target])[key].shape
        except IndexError as exc:
            raise FuseIndexError(f"index {key!r} of an array of shape {self.shapes[target]}: "
                                 f"{exc}") from None
        inp = Input(target.position, target.keys + (_freeze(key),), False)
        self.shapes[inp] = shape
        node = self._arg(inp, var._node.dtype, len(shape), False)
        return Var(self, node, inp)

    def shape_of(self, node: Node) -> tuple:
        """The shape ``node`` has in this call (NumPy's broadcasting and reductions)."""
        self.shape_read = True
        if node.op == "arg":
            return self.shapes.get(node.attrs[0], ())
        if node.op in ("const", "count"):
            return ()
        if node.op == "reduce":
            shape = self.shape_of(node.args[0])
            _name, axes, keepdims, _requested = node.attrs
            if keepdims:
                return tuple(1 if k in axes else n for k, n in enumerate(shape))
            return tuple(n for k, n in enumerate(shape) if k not in axes)
        return numpy.broadcast_shapes(*[self.shape_of(a) for a in node.args])

    def graph(self, result) -> Graph:
        tuple_result = isinstance(result, tuple)
        items = result if tuple_result else (result,)
        outputs = tuple(i._node if isinstance(i, Var) else _returned_value(i) for i in items)
        inputs = list(self.inputs)
        return Graph(
            inputs, [self.inputs[i] for i in inputs], outputs, tuple_result, dict(self.writes),
            self.shape_read,
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


def array_shape(value) -> tuple:
    shape = getattr(value, "shape", None)
    return tuple(shape) if shape is not None else tuple(describe(value).shape)


def _dummy(shape: tuple):
    """A view of one element with ``shape``: NumPy's indexing rules without the memory."""
    return numpy.lib.stride_tricks.as_strided(numpy.zeros(1), shape, (0,) * len(shape))


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
        """This call's shape; reading it makes the fused function's kernels per shape."""
        return self._trace.shape_of(self._node)

    @property
    def size(self):
        return int(numpy.prod(self.shape, dtype=numpy.int64))

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

    def clip(self, min=None, max=None, out=None, **kwargs):
        return clip(self._trace, self, min, max, out, **kwargs)

    def round(self, decimals=0, out=None):
        return _around(self._trace, self, decimals, out)

    # CuPy's hooks: cupy.<ufunc>(x) and cupy.sum(x)-style reductions called with a proxy
    def __cupy_override_elementwise_kernel__(self, kernel, *args, **kwargs):
        return cupy_ufunc(self._trace, kernel, args, kwargs)

    def __cupy_override_reduction_kernel__(self, kernel, axis, dtype, out, keepdims):
        return cupy_reduction(self._trace, kernel, self, axis=axis, dtype=dtype, out=out,
                              keepdims=keepdims)

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
            "(supported: dtype, ndim, shape, size, real, imag, astype, copy, conj, clip, round, "
            "sum, prod, max, min, mean, all, any, and the operators)"
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
    with _cupy_routines_recorded(t):
        result = fn(*proxies, **kwargs)
    return t.graph(result)



# ---------------------------------------------------------------------------
# CuPy's routines: cupy.sin(x), cupy.where(c, x, y), cupy.sum(x, axis=1), cupy.nansum(x), ...
# A proxy answers CuPy's override hooks (ufuncs and reductions called with it), and while a
# function is traced, CuPy's fusion switch routes its Python-level routines (rounding,
# real/imag, clip, where, all/any, nan*) to ``_CupyHistory``. CuPy is never imported here:
# the switch is set only where the user's program has imported it.

_CUPY_SPECIAL = {
    "clip": lambda t, a, lo=None, hi=None, out=None: clip(t, a, lo, hi, out),
    "where": lambda t, c, x=None, y=None: where(t, c, x, y),
    "round": lambda t, x, decimals=0, out=None: _around(t, x, decimals, out),
    "real": lambda t, x: part(t, x, "real"),
    "imag": lambda t, x: part(t, x, "imag"),
}


def _cupy_name(kernel) -> str:
    name = getattr(kernel, "name", "") or ""
    return name[5:] if name.startswith("cupy_") else name


def cupy_ufunc(trace: Trace, kernel, args, kwargs):
    """``cupy.<ufunc>(...)`` (or a routine CuPy writes as one) with a traced argument."""
    name = _cupy_name(kernel)
    special = _CUPY_SPECIAL.get(name)
    if special is not None:
        return special(trace, *args, **kwargs)
    if type(kernel).__name__ != "ufunc" or name not in ops.UFUNCS:
        what = f"cupy.{name}" if type(kernel).__name__ == "ufunc" else f"{kernel!r}"
        raise FuseTraceError(
            f"{what} is not supported in a jitkern.fuse function",
            "fuse records NumPy's and CuPy's ufuncs in its table (jitkern.fuse.UFUNCS), "
            "where, clip, round, real, imag and the reductions; call other kernels outside it",
        )
    out, dtype = kwargs.pop("out", None), kwargs.pop("dtype", None)
    kwargs.pop("casting", None)
    if kwargs:
        raise FuseTraceError(f"cupy.{name}: unsupported keyword(s) {', '.join(kwargs)}")
    return call_ufunc(trace, name, args, out, dtype)


def cupy_reduction(trace: Trace, kernel, x, axis=None, dtype=None, out=None, keepdims=False):
    """``cupy.sum(x)``, ``cupy.all(x)``, ``cupy.nansum(x)``, ... with a traced argument."""
    name = _cupy_name(kernel)
    for suffix in ("_with_dtype", "_complex_dtype", "_keep_dtype"):
        name = name.removesuffix(suffix)
    if name not in ops.REDUCTIONS:
        raise FuseTraceError(
            f"{kernel!r} is not supported in a jitkern.fuse function",
            f"fuse records the reductions {', '.join(sorted(ops.REDUCTIONS))} and mean",
        )
    return reduce(trace, name, x, axis, dtype, out, keepdims)


class _CupyHistory:
    """Where CuPy's fusion switch sends its routines while a jitkern.fuse function traces."""

    def __init__(self, trace: Trace):
        self.trace = trace

    def call_ufunc(self, kernel, *args, **kwargs):
        return cupy_ufunc(self.trace, kernel, args, kwargs)

    def call_reduction(self, kernel, x, **kwargs):
        return cupy_reduction(self.trace, kernel, x, **kwargs)

    def call_indexing(self, kernel, *args, **kwargs):
        raise FuseTraceError("CuPy's fused indexing is not supported; index the arguments")


class _cupy_routines_recorded:
    """While tracing: CuPy's fusion switch on, pointing at this trace (when CuPy is loaded)."""

    def __init__(self, trace: Trace):
        self.switch = sys.modules.get("cupy._core._fusion_thread_local")
        self.trace = trace

    def __enter__(self):
        if self.switch is None:
            return
        local = self.switch.thread_local
        self.saved = {k: getattr(local, k) for k in ("is_new_fusing", "history")
                      if hasattr(local, k)}
        local.is_new_fusing, local.history = True, _CupyHistory(self.trace)

    def __exit__(self, *exc):
        if self.switch is None:
            return
        local = self.switch.thread_local
        local.is_new_fusing = self.saved.get("is_new_fusing", False)
        if "history" in self.saved:
            local.history = self.saved["history"]
        else:
            del local.history

__all__ = [
    "FuseAttributeError", "FuseIndexError", "FuseTraceError", "Graph", "Input", "Node", "Var",
    "trace",
]  # fmt: skip
