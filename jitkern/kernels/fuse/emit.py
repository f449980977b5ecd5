"""fuse, stage 2: a traced :class:`~.graph.Graph` -> the kernels that compute it.

- No reduction: one :class:`ElementwiseKernel` whose operation is the recorded nodes, one
  C++ statement each (``const float v3 = sqrtf(v2);``), storing the returned values and the
  writes into argument arrays.
- Reductions: one :class:`ReductionKernel` each, in the order the function made them: the
  nodes before it are a ``__device__`` map function in the preamble, reading the arguments
  and the results of earlier reductions (``(x - x.mean()).sum()`` is two kernels).
  Elementwise work on the last reduced value alone (``sqrt(sum(x * x) + 10)``) is its
  ``post_map_expr``. Work that combines reduced values with the arguments again (``x -
  x.sum()``), or several outputs, run as one more ElementwiseKernel over the reduced
  arrays and the arguments.

A :class:`Plan` holds the kernels and runs them for a call; its kernels are ordinary
ElementwiseKernel/ReductionKernel objects (``Plan.kernels``), so anything that runs those
runs a fused function: the GPU, and the simulator (each kernel's ``.simulate`` runs this
same C++ through the C subset, sim/cprelude.py knowing the jk:: prelude).
"""

from __future__ import annotations

import dataclasses

import numpy

from ...arrays import describe
from ...arrays.core import allocate_like, stream_of
from ...compiler.jk_prelude import PRELUDE
from . import ops
from .graph import ReadsWrittenMemory, _thaw
from .trace import FuseTraceError, Graph, Input, Node
from ..elementwise import ElementwiseKernel
from ..reduction import ReductionKernel

REDUCED = "reduced"  # (REDUCED, node): a kernel input that is an earlier stage's result
COUNT = "count"  # (COUNT, node): how many elements that stage reduced per output
VIEW = "view"  # (VIEW, node): an earlier stage's result, indexed (node.attrs[0]: the keys)


class _Emitter:
    """C++ statements for a graph's nodes, each once, in order (``const float v3 =
    sqrtf(v2);``); one per kernel body. The GPU compiles them and the simulator runs the
    same text (sim/cprelude.py: the jk:: prelude they call)."""

    def __init__(self, names: dict):
        self.names = dict(names)  # node -> the name holding its value
        self.lines: list[str] = []

    def name(self, node: Node) -> str:
        name = self.names.get(node)
        if name is None:
            expr = getattr(self, f"node_{node.op}")(node)
            name = f"v{len(self.lines)}"
            self.lines.append(self.statement(name, node, expr))
            self.names[node] = name
        return name

    def value(self, node: Node, dst=None) -> str:
        """``node`` in the compute type of ``dst`` (of its own dtype when None)."""
        dst = node.dtype if dst is None else numpy.dtype(dst)
        if node.op == "const":
            return ops.literal(node.attrs[0], dst)
        code = ops.load(self.name(node), node.dtype)
        return ops.cast(code, node.dtype, dst)

    def statement(self, name: str, node: Node, expr: str) -> str:
        return f"const {ops.ctype(node.dtype)} {name} = {ops.store(expr, node.dtype)};"

    def node_cast(self, node: Node) -> str:
        return self.value(node.args[0], node.dtype)

    def node_where(self, node: Node) -> str:
        c, x, y = node.args
        return (f"({self.value(c, numpy.bool_)} ? {self.value(x, node.dtype)} : "
                f"{self.value(y, node.dtype)})")

    def node_real(self, node: Node) -> str:
        x = node.args[0]
        if x.dtype.kind == "c":
            return f"(({self.value(x)}).real())"
        return self.value(x, node.dtype)

    def node_imag(self, node: Node) -> str:
        x = node.args[0]
        if x.dtype.kind == "c":
            return f"(({self.value(x)}).imag())"
        return ops.literal(0, node.dtype)

    def node_ufunc(self, node: Node) -> str:
        name, out, loop = node.attrs
        row = ops.UFUNCS[name]
        codes = [self.value(a, loop[k]) for k, a in enumerate(node.args)]
        result = loop[row.nin + out]
        t = ops.compute_ctype(result)
        expr = row.template(out, loop[0]).format(*codes, T=t)
        return f"{t}({expr})" if result.kind == "c" else f"(({t})({expr}))"

    def node_arg(self, node: Node) -> str:
        raise FuseTraceError("internal: an argument without a kernel parameter")

    node_count = node_arg

    def node_reduce(self, node: Node) -> str:
        raise FuseTraceError(
            "a reduced value is combined with another reduction's inputs in a way fuse does "
            "not support",
            "split the function in two fused functions",
        )

    def body(self) -> str:
        return "\n".join(self.lines)


def _preamble(graph_dtypes) -> str:
    text = PRELUDE.strip() + "\n" + ops.HELPERS
    if any(numpy.dtype(d).kind == "c" for d in graph_dtypes):
        text = "#include <jitkern/complex.cuh>\n" + text + ops.COMPLEX_HELPERS
    if any(numpy.dtype(d) == numpy.float16 for d in graph_dtypes):
        text = "#include <cuda_fp16.h>\n" + text
    return text


def _dtypes(nodes) -> set:
    out = set()
    for n in nodes:
        out.add(n.dtype)
        if n.op == "ufunc":
            out.update(n.attrs[2])
    return out


def _reachable(roots, stop=()) -> list:
    """Nodes ``roots`` depend on, operands first, not looking past ``stop``."""
    seen, out = set(), []

    def visit(node):
        if not isinstance(node, Node) or id(node) in seen:
            return
        seen.add(id(node))
        if node not in stop and node.op != "view":  # a view reads a result: an input
            for a in node.args:
                visit(a)
        out.append(node)

    for r in roots:
        visit(r)
    return out


# ---------------------------------------------------------------------------
# stages


@dataclasses.dataclass
class Stage:
    """One kernel of a plan: what it computes (the nodes, read by every back end) and the
    ElementwiseKernel/ReductionKernel the GPU runs."""

    kernel: object
    sources: tuple  # per kernel input: an Input (from the arguments), (REDUCED | COUNT, node)
    options: dict
    writes: tuple = ()  # Inputs written (outputs after the returned ones)
    n_returned: int = 0
    in_nodes: tuple = ()  # the node of each kernel input
    outputs: tuple = ()  # elementwise: the returned nodes, then the written ones
    reduce: Node | None = None  # a reduction stage's reduce node
    post: Node | None = None  # ... and the node it returns (None: the reduced value)

    def inputs(self, args, results=None) -> list:
        """The kernel's input values: argument views, and earlier stages' ``results``."""
        return [s.value(args) if isinstance(s, Input) else _result(s, results)
                for s in self.sources]


def _result(source, results):
    kind, node = source
    if kind != VIEW:
        return results[node]
    value = results[node.args[0]]
    for key in node.attrs[0]:
        value = value[_thaw(key)]
    return value


_SOURCE_KINDS = {"reduce": REDUCED, "count": COUNT, "view": VIEW}

#: The nodes a stage reads as kernel inputs: arguments, earlier stages' results (also
#: indexed: views) and reduction counts.
INPUT_OPS = ("arg", *_SOURCE_KINDS)


def _sources(in_nodes) -> list:
    return [n.attrs[0] if n.op == "arg" else (_SOURCE_KINDS[n.op], n) for n in in_nodes]


def _stage_inputs(nodes) -> list:
    """The nodes a stage reads as kernel inputs."""
    return [n for n in nodes if n.op in INPUT_OPS]


def _params(nodes, sources) -> str:
    return ", ".join(f"{n.dtype.name} in{k}" for k, n in enumerate(nodes))


def _elementwise_stage(name, in_nodes, sources, returned, writes) -> Stage:
    names = {n: f"in{k}" for k, n in enumerate(in_nodes)}
    em = _Emitter(names)
    stores = []
    outs = []
    for j, node in enumerate(returned):
        code = ops.store(em.value(node), node.dtype)
        stores.append(f"out{j} = {code};")
        outs.append(f"{node.dtype.name} out{j}")
    for j, (inp, node) in enumerate(writes, start=len(returned)):
        code = ops.store(em.value(node), node.dtype)
        stores.append(f"out{j} = {code};")
        outs.append(f"{node.dtype.name} out{j}")
    nodes = _reachable([*returned, *(n for _, n in writes)])
    kernel = ElementwiseKernel(
        _params(in_nodes, sources),
        ", ".join(outs),
        "\n".join([em.body(), *stores]),
        name,
        preamble=_preamble(_dtypes(nodes)),
        return_tuple=True,
    )
    return Stage(
        kernel, tuple(sources), {}, tuple(inp for inp, _ in writes), len(returned),
        tuple(in_nodes), (*returned, *(n for _, n in writes)),
    )  # fmt: skip


def _reduction_stage(name, reduce_node: Node, post: Node | None, earlier=()) -> Stage:
    rname, axes, keepdims, _requested = reduce_node.attrs
    row = ops.REDUCTIONS[rname]
    x = reduce_node.args[0]
    pre = _reachable([x], stop=tuple(earlier))
    in_nodes = _stage_inputs(pre)
    sources = _sources(in_nodes)
    out = reduce_node.dtype
    if rname in ("all", "any"):
        acc_type, acc_ctype = numpy.dtype(numpy.bool_), "bool"
    else:
        acc_type, acc_ctype = out, ops.compute_ctype(out)
    names = {n: f"in{k}" for k, n in enumerate(in_nodes)}
    em = _Emitter(names)
    mapped = em.value(x) if rname in ("all", "any") else em.value(x, out)
    if row.map_fn:
        mapped = f"{row.map_fn}({mapped})"
    params = ", ".join(f"{ops.ctype(n.dtype)} in{k}" for k, n in enumerate(in_nodes))
    function = (
        f"__device__ __forceinline__ {acc_ctype} jk_fused_map({params}) {{\n"
        + "".join(f"  {line}\n" for line in em.lines)
        + f"  return {mapped};\n}}\n"
    )
    final = post if post is not None else reduce_node
    post_em = _Emitter({reduce_node: "a"})
    stored = ops.store(post_em.value(final), final.dtype)
    post_map = "\n".join([*post_em.lines, f"out0 = {stored};"])
    reduce_expr = row.complex_expr if (out.kind == "c" and row.complex_expr) else row.reduce_expr
    nodes = _reachable([final])
    kernel = ReductionKernel(
        _params(in_nodes, sources),
        f"{final.dtype.name} out0",
        f"jk_fused_map({', '.join(f'in{k}' for k in range(len(in_nodes)))})",
        reduce_expr,
        post_map,
        row.identity,
        name,
        reduce_type=acc_ctype,
        preamble=_preamble(_dtypes(nodes) | {acc_type}) + function,
    )
    return Stage(
        kernel, tuple(sources), {"axis": axes, "keepdims": keepdims}, in_nodes=tuple(in_nodes),
        reduce=reduce_node, post=post,
    )  # fmt: skip


# ---------------------------------------------------------------------------
# the plan


class Plan:
    """The kernels of one traced signature and how a call runs them."""

    #: The per-call check of a plan that writes arguments (kernels/fuse/alias.py): None
    #: where nothing the plan writes can share memory with what it reads.
    guard = None

    def __init__(self, graph: Graph, name: str):
        self.graph = graph
        self.tuple_result = graph.tuple_result
        self.returned = [o for o in graph.outputs if isinstance(o, Node)]
        self.writes = list(graph.writes.items())
        self.stages: list[Stage] = []
        self.reduces = [n for n in graph.order() if n.op == "reduce"]
        self.reduce = self.reduces[0] if len(self.reduces) == 1 else None
        self.shape_dependent = graph.shape_dependent
        if not self.returned and not self.writes:
            pass  # nothing to compute: the function returns None or Python values
        elif not self.reduces:
            self._plan_elementwise(name)
        else:
            self._plan_reductions(name)
        self.fast = self._fast_runner()

    def _plan_elementwise(self, name) -> None:
        self._elementwise_stages(name, self.returned, ())

    def _elementwise_stages(self, name, returned, stop) -> None:
        """The ElementwiseKernels of ``returned`` and the writes: one per set of arrays the
        outputs are computed from (a kernel's outputs share one shape, NumPy's outputs only
        where they read the same arrays: ``t[:, None] - t`` is (n, n), ``t[:, None]`` is
        (n, 1); a write's own target counts), the writes last: the kernels before them
        read the arguments as they were on entry."""
        args = dict(zip(self.graph.inputs, self.graph.arg_nodes))

        def reads(nodes, target=None):
            leaves = _stage_inputs(_reachable(nodes, stop=stop))
            ids = {id(n) for n in leaves if n.ndim}
            if target in args:
                ids.add(id(args[target]))
            return frozenset(ids)

        groups: dict = {}
        for node in returned:
            groups.setdefault(reads([node]), ([], []))[0].append(node)
        writing: dict = {}
        for target, node in self.writes:
            key = reads([node], target)
            (groups if key in groups else writing).setdefault(key, ([], []))[1].append(
                (target, node))
        table = {**groups, **writing}
        order = sorted(table, key=lambda k: bool(table[k][1]))  # (stable: readers first)
        _check_write_order([table[k] for k in order if table[k][1]])
        for k, key in enumerate(order):
            nodes, writes = table[key]
            in_nodes = _stage_inputs(_reachable([*nodes, *(n for _, n in writes)], stop=stop))
            label = f"{name}_{k}" if k else name
            self.stages.append(
                _elementwise_stage(label, in_nodes, _sources(in_nodes), nodes, writes))

    def _plan_reductions(self, name) -> None:
        """One ReductionKernel per reduction, in order; the last one also computes a lone
        returned value that depends on it alone; one ElementwiseKernel for the rest."""
        *first, last = self.reduces
        for k, r in enumerate(first):
            self.stages.append(_reduction_stage(f"{name}_r{k}" if k else name, r, None,
                                                self.reduces[:k]))
        last_name = f"{name}_r{len(first)}" if first else name
        post = self._lone_post(last)
        self.stages.append(_reduction_stage(last_name, last, post, first))
        if post is not None:
            return
        rest = [n for n in self.returned if n.op != "reduce"]
        if rest or self.writes:
            self._elementwise_stages(f"{name}_post", rest, tuple(self.reduces))

    def _lone_post(self, last: Node):
        """The returned value computed from ``last`` alone (its post_map), or None."""
        if len(self.returned) != 1 or self.writes:
            return None
        post = self.returned[0]
        nodes = _reachable([post], stop=tuple(self.reduces))
        if last not in nodes or any(n.op in INPUT_OPS and n is not last for n in nodes):
            return None
        return None if post is last else post

    @property
    def kernels(self) -> tuple:
        return tuple(s.kernel for s in self.stages)

    # -- running ---------------------------------------------------------------
    def _fast_runner(self):
        """The call for the common plans (one kernel reading whole arguments, returning
        arrays or writing whole arguments), or None: no dict of results, no views, no Input
        objects on the way."""
        if not self.stages:
            return lambda args: self._result(args, {})
        if len(self.stages) != 1:
            return None
        stage = self.stages[0]
        if not all(isinstance(s, Input) and not s.keys for s in stage.sources):
            return None
        if self.writes:
            return self._fast_writer(stage)
        if not all(isinstance(o, Node) for o in self.graph.outputs):
            return None
        positions = tuple(s.position for s in stage.sources)
        kernel, options, as_tuple = stage.kernel, stage.options, self.tuple_result
        if isinstance(kernel, ReductionKernel):
            if as_tuple:
                return lambda args: (kernel(*[args[p] for p in positions], **options),)
            return lambda args: kernel(*[args[p] for p in positions], **options)
        if as_tuple:
            return lambda args: kernel(*[args[p] for p in positions])
        return lambda args: kernel(*[args[p] for p in positions])[0]

    def _fast_writer(self, stage):
        """``x += y``-like plans: one elementwise kernel writing whole arguments and
        returning no array; it is called with its inputs and then the written arguments."""
        if stage.n_returned or any(w.keys for w in stage.writes):
            return None
        if any(isinstance(o, Node) for o in self.graph.outputs):
            return None
        positions = tuple(s.position for s in stage.sources)
        targets = tuple(w.position for w in stage.writes)
        kernel, result = stage.kernel, self._result

        def run(args):
            kernel(*[args[p] for p in positions], *[args[q] for q in targets])
            return result(args, {})

        return run

    def run(self, args):
        fast = self.fast
        if fast is not None:
            return fast(args)
        return self.run_with(args, self.kernels, _results_like(args))

    def run_with(self, args, kernels, alloc):
        """Run the stages with ``kernels`` (one per stage, called as its ElementwiseKernel
        or ReductionKernel is: the GPU's, or the simulator's) and ``alloc(shape, dtype)``
        making the outputs of stages that also write into arguments."""
        results = {}
        counts = {n.attrs[0]: n for n in self.graph.order() if n.op == "count"}
        for stage, kernel in zip(self.stages, kernels):
            values = stage.inputs(args, results)
            if stage.reduce is not None:
                value = kernel(*values, **stage.options)
                results[stage.post or stage.reduce] = value
                if stage.reduce in counts:
                    results[counts[stage.reduce]] = _count(values, stage.options["axis"])
                continue
            outs = self._run_elementwise(stage, kernel, values, args, alloc)
            for node, out in zip(self._stage_returned(stage), outs):
                results[node] = out
        return self._result(args, results)

    def _run_elementwise(self, stage, kernel, values, args, alloc):
        if not stage.writes:
            return kernel(*values)
        targets = [inp.value(args) for inp in stage.writes]
        shape = numpy.broadcast_shapes(*[_shape(v) for v in values if not _is_scalar(v)])
        outs = [alloc(shape, n.dtype) for n in self._stage_returned(stage)]
        return kernel(*values, *outs, *targets)[: stage.n_returned]

    def _stage_returned(self, stage):
        return list(stage.outputs[: stage.n_returned])

    def _result(self, args, results):
        items = []
        for o in self.graph.outputs:
            if isinstance(o, Node):
                items.append(results[o])
            else:
                items.append(o)
        return tuple(items) if self.tuple_result else items[0]

    # -- inspection ---------------------------------------------------------------
    def inspect(self, args, arch):
        stage = self.stages[0]
        values = stage.inputs(args)
        if isinstance(stage.kernel, ElementwiseKernel) and stage.writes:
            shape = numpy.broadcast_shapes(*[_shape(v) for v in values if not _is_scalar(v)])
            outs = [numpy.empty(shape, n.dtype) for n in self._stage_returned(stage)]
            targets = [inp.value(args) for inp in stage.writes]
            return stage.kernel.inspect(*values, *outs, *targets, arch=arch)
        return stage.kernel.inspect(*values, arch=arch, **stage.options)


def _check_write_order(groups) -> None:
    """Kernels that write arguments each read them as they were on entry: where one reads
    what another writes, only memory order says what NumPy computes (kernels/fuse/alias.py
    traces the function again)."""
    if len(groups) < 2:
        return
    for k, (nodes, writes) in enumerate(groups):
        read = {n.attrs[0] for n in _reachable([*nodes, *(n for _, n in writes)])
                if n.op == "arg"}
        if any(target in read for j, (_, other) in enumerate(groups) if j != k
               for target, _ in other):
            raise ReadsWrittenMemory


def _results_like(args):
    """``alloc(shape, dtype)`` for outputs of stages that also write into arguments: arrays
    of the arguments' library, as the kernels' own results are."""
    return lambda shape, dtype: allocate_like(args, shape, dtype, stream_of(None))


def _count(values, axes) -> int:
    """How many elements the reduction over ``values`` combined per output."""
    shapes = [_shape(v) for v in values if not _is_scalar(v)]
    shape = numpy.broadcast_shapes(*shapes) if shapes else ()
    return int(numpy.prod([shape[a] for a in axes], dtype=numpy.int64))


def _is_scalar(v) -> bool:
    return isinstance(v, (bool, int, float, complex, numpy.generic))


def _shape(v) -> tuple:
    shape = getattr(v, "shape", None)
    return tuple(shape) if shape is not None else describe(v).shape


__all__ = ["COUNT", "REDUCED", "Plan", "Stage"]
