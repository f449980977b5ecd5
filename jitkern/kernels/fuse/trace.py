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

import numpy

from . import ops
from . import routines as _routines
from .graph import (
    FuseAttributeError, FuseIndexError, FuseTraceError, Graph, Input, Node, ReadsWrittenMemory,
    SequentialGraph, _freeze, _thaw,
)
from .promotion import SUPPORTED_DTYPES, can_store, resolve_loop, type_text, weak_value
from .views import (
    MATERIALIZED, array_shape, array_signature, check_key, expands_only, gives_scalar,
    indexed_shape, reindex, view_node,
)
from ..reduction import normalize_axis

_PY_SCALARS = (bool, int, float, complex)


# ---------------------------------------------------------------------------
# the trace


class Trace:
    """What one traced call recorded, and the argument memory as the function sees it.

    By default values flow from each write to the reads after it, so the whole function is
    one kernel (a :class:`Graph`); that is NumPy's result while the arguments share no
    memory, which kernels/fuse/alias.py checks per call. ``sequential``: in memory order
    (a :class:`SequentialGraph`), for calls whose arguments do share memory: every write
    is a step, and every read of an argument is a read of its memory after the writes
    before it."""

    def __init__(self, dispatch, sequential: bool = False, nargs: int = 0):
        self.dispatch = dispatch  # NumPy's functions and CuPy's routines: what they record
        self.inputs: dict = {}  # Input -> arg node
        self.writes: dict = {}  # Input (the written view) -> node (value flow only)
        self.shapes: dict = {}  # Input -> the shape of this call's argument (view)
        self.shape_read = False  # the function read a .shape/.size: plans are per shape
        self.memory: list = []  # Vars over argument memory: they see each write
        self.sequential, self.nargs = sequential, nargs
        self.reads: dict = {}  # sequential: slot Input -> (view Input, writes before it)
        self.targets: dict = {}  # sequential: slot Input -> the view Input it writes
        self.steps: list = []  # sequential: (target slot, node), in order
        self._slots: dict = {}
        self._held: dict = {}  # value flow: view Input -> what reading it gives after a write

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
        return self._memory_var(inp, numpy.dtype(dtype), ndim)

    def _arg(self, inp: Input, dtype, ndim, weak) -> Node:
        node = self.inputs.get(inp)
        if node is None:
            node = self.inputs[inp] = Node("arg", (), numpy.dtype(dtype), ndim, weak, (inp,))
        return node

    # -- argument memory ---------------------------------------------------------
    def _memory_var(self, view: Input, dtype, ndim, keep: bool = True) -> Var:
        var = Var(self, self.current(view, dtype, ndim), view)
        if keep:
            self.memory.append(var)
        return var

    def current(self, view: Input, dtype, ndim) -> Node:
        """What reading ``view`` gives now: its memory after the writes so far
        (sequential), else the value last written to it or the argument itself."""
        if self.sequential:
            return self._arg(self._slot("read", view, len(self.steps)), dtype, ndim, False)
        held = self._held.get(view)
        return self._arg(view, dtype, ndim, False) if held is None else held

    def _slot(self, kind: str, view: Input, epoch: int = 0) -> Input:
        """The operand slot (an Input past the arguments) of a read or a write target."""
        key = (kind, view, epoch)
        slot = self._slots.get(key)
        if slot is None:
            slot = self._slots[key] = Input(self.nargs + len(self._slots), (), False)
            self.shapes[slot] = self.shapes[view]
            if kind == "read":
                self.reads[slot] = (view, epoch)
            else:
                self.targets[slot] = view
        return slot

    def write(self, var: Var, node: Node) -> None:
        """``node`` (in the target's dtype) stored into the argument memory ``var`` views."""
        view = var._target
        if not self.sequential:
            self.writes[view] = node
            held = self._held[view] = carried(node, self.inputs[view])
            for v in self.memory:
                if v._target == view:
                    v._node = held
            var._node = held
            return
        if node.op == "arg" and self.reads.get(node.attrs[0]) == (view, len(self.steps)):
            return  # its own memory, unchanged (x[1:] = x[1:])
        self.steps.append((self._slot("target", view), node))
        for v in self.memory:
            v._node = self.current(v._target, v._node.dtype, v._node.ndim)

    def is_memory(self, var: Var) -> bool:
        """Whether ``var`` reads argument memory (not a value computed from it)."""
        if var._target is None:
            return False
        return self.sequential or self.writes.get(var._target) is None

    # -- indexing ------------------------------------------------------------------
    def view(self, var: Var, key, write: bool = False) -> Var:
        """``var[key]``: a view of argument memory, or a computed value indexed."""
        check_key(key)
        target = var._target
        if not self.is_memory(var):
            if not write:
                return self._computed_view(var, key)
            if target is not None:
                raise ReadsWrittenMemory  # part of a written argument: in memory order
            raise FuseTraceError(
                "a value computed in the function can only be written whole",
                "write y[...] = ..., or write into an argument (or a view of one)")
        shape = indexed_shape(self.shapes[target], key)
        inp = Input(target.position, target.keys + (_freeze(key),), False)
        self.shapes[inp] = shape
        dtype = var._node.dtype
        if not write and gives_scalar(key, len(self.shapes[target])):
            return Var(self, self.current(inp, dtype, 0))  # NumPy: a scalar, a copy
        return self._memory_var(inp, dtype, len(shape), keep=not write)

    def _computed_view(self, var: Var, key) -> Var:
        """``value[key]`` of a value computed in the function (or an argument after a
        write): its operations read through views of their operands; a reduction's result,
        an array by the next kernel, read through a view. Keys other than ``None``, ``:``
        and ``...`` depend on this call's shapes: the plan is then per shape."""
        node = var._node
        if node.op in MATERIALIZED and node.ndim:
            return Var(self, view_node(node, (key,), self.shape_of(node, record=False)))
        if expands_only(key):
            return Var(self, reindex(node, key, self._leaf_view))
        self.shape_read = True
        shape_of = lambda n: self.shape_of(n, record=False)  # noqa: E731
        return Var(self, reindex(node, key, self._leaf_view, shape_of))

    def _leaf_view(self, leaf: Node, keys: tuple) -> Node:
        inp = leaf.attrs[0]
        shape = self.shapes.get(inp, (1,) * leaf.ndim)
        for k in keys:
            shape = indexed_shape(shape, k)
        view = Input(inp.position, inp.keys + tuple(_freeze(k) for k in keys), False)
        self.shapes[view] = shape
        return self._arg(view, leaf.dtype, len(shape), False)

    def shape_of(self, node: Node, record: bool = True) -> tuple:
        """The shape ``node`` has in this call (NumPy's broadcasting and reductions)."""
        if record:
            self.shape_read = True
        if node.op == "arg":
            return self.shapes.get(node.attrs[0], ())
        if node.op in ("const", "count"):
            return ()
        if node.op == "view":
            shape = self.shape_of(node.args[0], record)
            for k in node.attrs[0]:
                shape = indexed_shape(shape, _thaw(k))
            return shape
        if node.op == "reduce":
            shape = self.shape_of(node.args[0], record)
            _name, axes, keepdims, _requested = node.attrs
            if keepdims:
                return tuple(1 if k in axes else n for k, n in enumerate(shape))
            return tuple(n for k, n in enumerate(shape) if k not in axes)
        return numpy.broadcast_shapes(*[self.shape_of(a, record) for a in node.args])

    def graph(self, result) -> Graph | SequentialGraph:
        tuple_result = isinstance(result, tuple)
        items = result if tuple_result else (result,)
        outputs = tuple(i._node if isinstance(i, Var) else _returned_value(i) for i in items)
        if self.sequential:
            return SequentialGraph(self.nargs, dict(self.reads), dict(self.targets),
                                   list(self.steps), outputs, tuple_result, self.shape_read)
        inputs = list(self.inputs)
        return Graph(
            inputs, [self.inputs[i] for i in inputs], outputs, tuple_result, dict(self.writes),
            self.shape_read,
        )


def carried(value: Node, base: Node) -> Node:
    """The array ``base`` views after ``value`` was written into it: ``value`` with
    ``base``'s shape (``x[...] = y`` keeps x's shape where y broadcasts)."""
    if _reads(value, base):
        return value
    true = Node("const", (), numpy.dtype(numpy.bool_), 0, False, (True,))
    ndim = max(value.ndim, base.ndim)
    return Node("where", (true, value, base), value.dtype, ndim, False, (), value.reduced)


def _reads(node: Node, base: Node) -> bool:
    """Whether ``node`` reads ``base`` elementwise (then it has at least its shape)."""
    seen, todo = set(), [node]
    while todo:
        n = todo.pop()
        if n is base:
            return True
        if id(n) in seen or n.op in MATERIALIZED:
            continue
        seen.add(id(n))
        todo.extend(a for a in n.args if isinstance(a, Node))
    return False


def _returned_value(value):
    if value is None or isinstance(value, (*_PY_SCALARS, numpy.generic)):
        return value
    raise FuseTraceError(
        f"a fused function returns arrays (or a tuple of them), not {type(value).__name__}"
    )


# ---------------------------------------------------------------------------
# recording operations


def operand(trace: Trace, value) -> Node:
    if isinstance(value, Var):
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
            types = ", ".join(type_text(n) for n in nodes)
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


def assign(var: Var, node: Node, what: str, casting: str = "same_kind") -> None:
    """Write ``node`` into ``var`` as NumPy does: ``same_kind`` casting for in-place
    operators and ``out=``, ``unsafe`` for ``x[...] = y``. An argument (or a view of one)
    is written; a value computed in the function just takes the new value."""
    if not isinstance(var, Var):
        raise FuseTraceError(f"{what}: the target must be an array argument of the function")
    target = var._node.dtype
    if not can_store(node, target, casting):
        raise FuseTraceError(
            f"{what}: cannot cast {type_text(node)} to {target} (casting={casting!r})",
            f"convert explicitly, e.g. y.astype(numpy.{target})",
        )
    if node.dtype != target or node.weak:
        node = Node("cast", (node,), target, node.ndim, False, (), node.reduced)
    if var._target is None:
        var._node = node
        return
    var._trace.write(var, node)


def cast_var(var: Var, dtype) -> Var:
    dtype = numpy.dtype(dtype)
    node = var._node
    if dtype not in SUPPORTED_DTYPES:
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
    values = [weak_value(n) for n in nodes[1:]]
    dtype = numpy.result_type(*values)
    ndim, reduced, weak = _combine(nodes)
    weak = nodes[1].weak and nodes[2].weak
    return Var(trace, Node("where", tuple(nodes), dtype, ndim, weak, (), reduced))


def clip(trace: Trace, x, a_min=None, a_max=None, out=None, **kwargs):
    a_min = kwargs.pop("min", None) if a_min is None else a_min  # NumPy 2's keyword names
    a_max = kwargs.pop("max", None) if a_max is None else a_max
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
    assign(dst, operand(trace, src), "numpy.copyto", casting)


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
        result = call_ufunc(self._trace, ufunc, (self, other))
        if self._target is None and self._node.ndim == 0:
            return result  # a scalar is immutable: x += y rebinds x (NumPy's and CuPy's too)
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

    __slots__ = ("_node", "_target", "_trace")
    __array_priority__ = 1000
    __hash__ = None

    def __init__(self, trace: Trace, node: Node, target: Input | None = None):
        self._trace, self._node, self._target = trace, node, target

    def __repr__(self) -> str:
        return f"<jitkern.fuse traced {self._node.dtype} value, ndim={self._node.ndim}>"

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
        return self._trace.dispatch.numpy_function(self._trace, func, args, kwargs)

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
        return _routines.around(self, decimals, out)

    # CuPy's hooks: cupy.<ufunc>(x) and cupy.sum(x)-style reductions called with a proxy
    def __cupy_override_elementwise_kernel__(self, kernel, *args, **kwargs):
        return self._trace.dispatch.cupy_ufunc(self._trace, kernel, args, kwargs)

    def __cupy_override_reduction_kernel__(self, kernel, axis, dtype, out, keepdims):
        return self._trace.dispatch.cupy_reduction(self._trace, kernel, self, axis=axis,
                                                   dtype=dtype, out=out, keepdims=keepdims)

    def any(self, axis=None, out=None, keepdims=False):
        return reduce(self._trace, "any", self, axis, None, out, keepdims)

    def __getitem__(self, key):
        return self._trace.view(self, key)

    def __setitem__(self, key, value):
        """``x[key] = value``: NumPy's unsafe casting; ``value`` broadcasts to ``x[key]``."""
        node = operand(self._trace, value)
        if self._target is None and self._node.ndim == 0:
            raise FuseTraceError("a scalar does not support item assignment (as in NumPy)")
        if _whole(key):
            if self._target is not None:
                indexed_shape(self._trace.shapes[self._target], key)  # NumPy's IndexError
            assign(self, node, f"x[{_key_text(key)}] =", "unsafe")
            return
        view = self._trace.view(self, key, write=True)
        assign(view, node, f"x[{_key_text(key)}] =", "unsafe")

    def __getattr__(self, name):
        raise FuseAttributeError(
            f"arrays in fused functions have no attribute {name!r} fuse can record "
            "(supported: dtype, ndim, shape, size, real, imag, astype, copy, conj, clip, round, "
            "sum, prod, max, min, mean, all, any, and the operators)"
        )


def _whole(key) -> bool:
    items = key if isinstance(key, tuple) else (key,)
    return all(k is Ellipsis or (isinstance(k, slice) and k == slice(None)) for k in items)


def _key_text(key) -> str:
    items = key if isinstance(key, tuple) else (key,)
    return ", ".join("..." if k is Ellipsis else ":" if k == slice(None) else repr(k)
                     for k in items)


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


def trace(fn, args, kwargs, dispatch, sequential: bool = False) -> Graph | SequentialGraph:
    """Call ``fn`` with proxies for ``args`` and return what it recorded (in memory order,
    a :class:`SequentialGraph`, when ``sequential``: see :class:`Trace`). ``dispatch``
    (kernels/fuse/dispatch.py) says what NumPy's functions and CuPy's routines record."""
    t = Trace(dispatch, sequential, len(args))
    proxies = [t.argument(k, a) for k, a in enumerate(args)]
    with dispatch.recording(t):
        result = fn(*proxies, **kwargs)
    return t.graph(result)


__all__ = [
    "FuseAttributeError", "FuseIndexError", "FuseTraceError", "Graph", "Input", "Node", "Var",
    "trace",
]  # fmt: skip
