"""fuse on the CPU: a plan's stages as JIT kernels, run by the JIT's simulator.

The second emitter next to :mod:`._fuse_emit`. Each :class:`~._fuse_emit.Stage` of a plan
(the nodes its C++ kernel computes) becomes the Python source of a ``@jitkern.rawkernel``
kernel, which ``Fused.simulate`` (and every call while ``JITKERN_SIMULATE=1``) runs with
``kernel.simulate[grid, block]``: the JIT's parsing and typing, then its simulator.

- Every node is one statement whose type is the dtype NumPy resolved for it: operands are
  converted explicitly (``numpy.float32(v2)``) to the node's loop types, and each ufunc is
  the JIT's ``ufunc.<name>`` builtin (:mod:`jitkern.compiler.builtins.ufuncs`, the same row the
  C++ kernels format), whose simulation is NumPy's loop with ``signature=``.
- An elementwise stage is a grid-stride loop over the broadcast shape's elements; the host
  passes its array inputs broadcast and raveled, and puts the flat outputs back in shape
  (returned arrays, writes into arguments).
- A reduction stage runs one block per output element: each thread maps and combines a
  strided part of the reduced elements, then a shared-memory tree (``syncthreads`` between
  levels) combines the threads' values with the reduction's ufunc, and thread 0 applies the
  post-map and stores. The host passes each input with the reduced axes last, raveled.

:func:`runners` gives a plan's stages as callables that take what its ElementwiseKernel /
ReductionKernel take, so :meth:`~._fuse_emit.Plan.run_with` runs a plan on either.
"""

from __future__ import annotations

import itertools
import linecache
import math

import numpy

from ... import jit
from ...compiler.strings.layout import broadcast_shape
from ...errors import JitkernValueError
from . import ops
from .emit import NodeWalker
from .trace import Node

#: Threads per block of an elementwise stage, and at most this many blocks.
BLOCK, MAX_BLOCKS = 128, 64
#: Threads per block of a reduction stage (the shared-memory tree's width).
REDUCE_BLOCK = 32

_COUNTER = itertools.count()
_GLOBALS = {"numpy": numpy, "math": math, "jit": jit, "ufunc": jit.ufunc}
_IDENTITIES = {"0": 0, "1": 1, "true": True, "false": False}


# ---------------------------------------------------------------------------
# expressions: node -> JIT Python


def _ctor(dtype) -> str:
    dt = numpy.dtype(dtype)
    return "numpy.bool_" if dt.kind == "b" else f"numpy.{dt.name}"


def _float_text(v: float) -> str:
    if math.isnan(v):
        return "math.nan"
    if math.isinf(v):
        return "math.inf" if v > 0 else "-math.inf"
    return repr(v)


def literal(value, dtype) -> str:
    """A Python number as a constant of ``dtype`` (NumPy casts it so)."""
    dt = numpy.dtype(dtype)
    if dt.kind == "c":
        z = complex(value)
        return f"{_ctor(dt)}(complex({_float_text(z.real)}, {_float_text(z.imag)}))"
    if dt.kind == "b":
        return f"numpy.bool_({bool(value)})"
    if isinstance(value, complex):
        value = value.real
    if dt.kind in "iu":
        return f"{_ctor(dt)}({int(numpy.array(int(value)).astype(dt))})"
    return f"{_ctor(dt)}({_float_text(float(value))})"


def cast(code: str, src, dst) -> str:
    """``code`` (a value of ``src``) converted to ``dst`` as NumPy's ``astype`` (and fuse's
    C++) convert: complex to real keeps the real part, real to complex goes through the
    real part's type."""
    src, dst = numpy.dtype(src), numpy.dtype(dst)
    if src == dst:
        return code
    if dst.kind == "c" and src.kind != "c":
        return f"{_ctor(dst)}({_ctor(ops.real_dtype(dst))}({code}))"
    if src.kind == "c" and dst.kind == "b":
        return f"({code} != {literal(0, src)})"
    if src.kind == "c" and dst.kind != "c":
        return f"{_ctor(dst)}({code}.real)"
    return f"{_ctor(dst)}({code})"


class _Nodes(NodeWalker):
    """JIT statements for nodes (the Python twin of ``_fuse_emit._Emitter``)."""

    SPELLING = {"where": "({x} if {c} else {y})", "real": "{0}.real", "imag": "{0}.imag"}
    literal = staticmethod(literal)

    def __init__(self, names: dict, held: dict | None = None):
        super().__init__(names)
        self.held = dict(held or {})  # node -> the dtype its name holds, where not its own

    def value(self, node: Node, dst=None) -> str:
        dst = node.dtype if dst is None else numpy.dtype(dst)
        if node.op == "const":
            return literal(node.attrs[0], dst)
        return cast(self.name(node), self.held.get(node, node.dtype), dst)

    def statement(self, name: str, node: Node, expr: str) -> str:
        return f"{name} = {expr}"

    def node_ufunc(self, node: Node) -> str:
        name, out, loop = node.attrs
        codes = [self.value(a, loop[k]) for k, a in enumerate(node.args)]
        call = f"ufunc.{name}({', '.join(codes)})"
        return f"{call}[{out}]" if len(ops.UFUNCS[name].templates) > 1 else call


def _indent(lines, depth: int) -> list:
    return ["    " * depth + line for line in lines]


def _inputs(in_nodes, index: str):
    """Parameter names and the names each input's node is read through."""
    params = [f"in{k}" for k in range(len(in_nodes))]
    names = {n: (f"in{k}[{index}]" if n.ndim else f"in{k}") for k, n in enumerate(in_nodes)}
    return params, names


def elementwise_source(stage, name: str) -> str:
    params, names = _inputs(stage.in_nodes, "i")
    em = _Nodes(names)
    stores = [f"out{j}[i] = {em.value(node)}" for j, node in enumerate(stage.outputs)]
    outs = [f"out{j}" for j in range(len(stage.outputs))]
    return "\n".join(
        [
            f"def {name}({', '.join([*params, *outs, 'n'])}):",
            "    for i in range(jit.grid(1), n, jit.gridsize(1)):",
            *_indent([*em.lines, *stores], 2),
        ]
    ) + "\n"


def _accumulator(stage) -> numpy.dtype:
    """The type the reduction combines in: bool for all/any, else the result's (float16
    in float32), as the C++ kernel's reduce_type."""
    node = stage.reduce
    if node.attrs[0] in ("all", "any"):
        return numpy.dtype(numpy.bool_)
    return numpy.dtype(numpy.float32) if node.dtype == numpy.float16 else node.dtype


def reduction_source(stage, name: str) -> str:
    rname = stage.reduce.attrs[0]
    row = ops.REDUCTIONS[rname]
    acc = _accumulator(stage)
    params, names = _inputs(stage.in_nodes, "i")
    em = _Nodes(names)
    mapped = em.value(stage.reduce.args[0], acc)
    map_lines = [*em.lines, f"m = {mapped}"]
    if row.nan_to is not None:  # NaN (either part, for complex) is the identity
        map_lines.append(f"m = m if m == m else {literal(row.nan_to, acc)}")
    post = _Nodes({stage.reduce: "a"}, {stage.reduce: acc})
    final = stage.post if stage.post is not None else stage.reduce
    stored = post.value(final)
    first = "partial[0]"
    if row.identity is not None:
        first = f"partial[0] if valid > 0 else {literal(_IDENTITIES[row.identity], acc)}"
    combine = f"ufunc.{row.ufunc}"
    b = REDUCE_BLOCK
    body = [
        f"def {name}({', '.join([*params, 'out0', 'n_out', 'n_red'])}):",
        f"    partial = jit.shared_memory({_ctor(acc)}, {b})",
        "    t = jit.threadIdx.x",
        f"    valid = min(n_red, {b})",
        "    for o in range(jit.blockIdx.x, n_out, jit.gridDim.x):",
        f"        for r in range(t, n_red, {b}):",
        "            i = o * n_red + r",
        *_indent(map_lines, 3),
        "            if r == t:",
        "                acc = m",
        "            else:",
        f"                acc = {combine}(acc, m)",
        "        if t < valid:",
        "            partial[t] = acc",
        "        jit.syncthreads()",
        f"        s = {b // 2}",
        "        while s > 0:",
        "            if t < s and t + s < valid:",
        f"                partial[t] = {combine}(partial[t], partial[t + s])",
        "            jit.syncthreads()",
        "            s //= 2",
        "        if t == 0:",
        f"            a = {first}",
        *_indent(post.lines, 3),
        f"            out0[o] = {stored}",
        "        jit.syncthreads()",
    ]
    return "\n".join(body) + "\n"


def define(source: str, name: str):
    """The ``@rawkernel(mode='numpy')`` kernel ``name`` defined by ``source``; the source is
    registered with linecache so the JIT (and tracebacks) read it like a file's."""
    filename = f"<jitkern fuse {name} #{next(_COUNTER)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = dict(_GLOBALS)
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - the source made above
    return jit.rawkernel(mode="numpy")(namespace[name])


# ---------------------------------------------------------------------------
# running: callables taking what the stage's GPU kernel takes


def _is_array(v) -> bool:
    return isinstance(v, numpy.ndarray)


def _host_value(v, node: Node, shape, order=None):
    """An input as the kernel reads it: an array broadcast to ``shape`` (its axes in
    ``order``) and raveled, or a NumPy scalar of the node's dtype (for a scalar, and for a
    0-d array such as a full reduction's result: ``_inputs`` reads 0-d nodes unindexed)."""
    if not _is_array(v):
        return node.dtype.type(v)
    if node.ndim == 0:
        return node.dtype.type(v[()])
    full = numpy.broadcast_to(v, shape)
    if order is not None:
        full = full.transpose(order)
    return numpy.ascontiguousarray(full).ravel()


class SimElementwise:
    """An elementwise stage on the simulator, called as its ElementwiseKernel is:
    ``(*inputs)`` or ``(*inputs, *outputs)``; returns the outputs."""

    def __init__(self, stage, name: str):
        self.stage, self.name = stage, name
        self.source = elementwise_source(stage, name)
        self.kernel = define(self.source, name)

    def __call__(self, *values):
        stage = self.stage
        nin = len(stage.in_nodes)
        inputs, given = values[:nin], values[nin:]
        # the GPU kernel's rule and error (its ElementwiseKernel/ReductionKernel broadcasts)
        shape = broadcast_shape([v.shape for v in values if _is_array(v)], self.name)
        size = math.prod(shape)
        outs = list(given) or [numpy.empty(shape, n.dtype) for n in stage.outputs]
        flat = [numpy.empty(size, n.dtype) for n in stage.outputs]
        if size:
            host = [_host_value(v, n, shape) for v, n in zip(inputs, stage.in_nodes)]
            grid = min(MAX_BLOCKS, -(-size // BLOCK))
            self.kernel.simulate[grid, BLOCK](*host, *flat, numpy.int64(size))
        for out, f in zip(outs, flat):
            out[...] = f.reshape(shape)
        return tuple(outs)


class SimReduction:
    """A reduction stage on the simulator, called as its ReductionKernel is:
    ``(*inputs, axis=..., keepdims=...)``; returns the reduced array."""

    def __init__(self, stage, name: str):
        self.stage, self.name = stage, name
        self.source = reduction_source(stage, name)
        self.kernel = define(self.source, name)

    def __call__(self, *values, axis, keepdims):
        stage = self.stage
        rname = stage.reduce.attrs[0]
        # the GPU kernel's rule and error (its ElementwiseKernel/ReductionKernel broadcasts)
        shape = broadcast_shape([v.shape for v in values if _is_array(v)], self.name)
        kept = [d for d in range(len(shape)) if d not in axis]
        n_out = math.prod(shape[d] for d in kept)
        n_red = math.prod(shape[d] for d in axis)
        if n_red == 0 and n_out and ops.REDUCTIONS[rname].identity is None:
            raise JitkernValueError(
                f"numpy.{rname}: zero-size reduction with no identity "
                f"(shape {shape}, axis {axis}): NumPy refuses it too"
            )
        final = stage.post if stage.post is not None else stage.reduce
        out = numpy.empty(n_out, final.dtype)
        if n_out:
            order = [*kept, *axis]
            host = [_host_value(v, n, shape, order) for v, n in zip(values, stage.in_nodes)]
            grid = min(MAX_BLOCKS, n_out)
            self.kernel.simulate[grid, REDUCE_BLOCK](
                *host, out, numpy.int64(n_out), numpy.int64(n_red)
            )
        if keepdims:
            return out.reshape([1 if d in axis else n for d, n in enumerate(shape)])
        return out.reshape([shape[d] for d in kept])


def runners(plan) -> list:
    """The plan's stages as simulator callables (made once per plan)."""
    made = plan.__dict__.get("_simulated")
    if made is None:
        made = plan._simulated = [
            (SimReduction if stage.reduce is not None else SimElementwise)(
                stage, stage.kernel.name
            )
            for stage in plan.stages
        ]
    return made


def source(plan) -> str:
    """The JIT kernels' source, one function per stage, in the order they run."""
    return "\n\n".join(r.source for r in runners(plan))


__all__ = ["SimElementwise", "SimReduction", "runners", "source"]
