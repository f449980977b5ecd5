"""fuse on the CPU: a traced :class:`~._fuse_trace.Graph` evaluated node by node with NumPy.

The graph is what the fused kernels compute, typed: every ufunc node carries the loop
NumPy resolved (its input and output dtypes), casts and reductions their dtypes. Running
each node as that NumPy loop on host copies gives the fused kernels' results without a
GPU (``Fused.simulate`` and ``JITKERN_SIMULATE=1``), including writes into arguments.
"""

from __future__ import annotations

import numpy

from ..errors import InternalError
from ._fuse_trace import Graph, Node


def _node_value(node: Node, values: dict, args):
    op = node.op
    if op == "arg":
        value = node.attrs[0].value(args)
        return numpy.asarray(value, dtype=node.dtype)
    if op == "const":
        return numpy.asarray(node.attrs[0], dtype=node.dtype)
    operands = [values[a] for a in node.args]
    if op == "ufunc":
        name, out, loop = node.attrs
        ufunc = getattr(numpy, name)
        inputs = [v.astype(t, copy=False) for v, t in zip(operands, loop)]
        result = ufunc(*inputs, signature=tuple(loop))
        return numpy.asarray(result[out] if isinstance(result, tuple) else result)
    if op == "cast":
        return operands[0].astype(node.dtype)
    if op == "where":
        c, x, y = operands
        return numpy.where(c.astype(bool), x.astype(node.dtype), y.astype(node.dtype))
    if op in ("real", "imag"):
        return getattr(numpy, op)(operands[0]).astype(node.dtype)
    if op == "reduce":
        return _reduce(node, operands[0])
    if op == "count":
        total = node.attrs[0]
        shape = values[total.args[0]].shape
        return numpy.asarray(numpy.prod([shape[a] for a in total.attrs[1]]), numpy.int64)
    raise InternalError(f"fuse's simulator has no rule for a {op!r} node")


def _reduce(node: Node, x):
    name, axes, keepdims, _requested = node.attrs
    if name in ("all", "any"):
        return getattr(numpy, name)(x.astype(bool), axis=axes, keepdims=keepdims)
    x = x.astype(node.dtype)  # the kernel maps each element to the reduced type first
    fn = getattr(numpy, name)
    if name in ("sum", "prod", "nansum", "nanprod"):
        return numpy.asarray(fn(x, axis=axes, dtype=node.dtype, keepdims=keepdims))
    return numpy.asarray(fn(x, axis=axes, keepdims=keepdims))


def evaluate(graph: Graph, args: tuple):
    """The graph's outputs for host ``args`` (NumPy arrays and scalars); writes into
    argument arrays are made in ``args``."""
    values: dict = {}
    with numpy.errstate(all="ignore"):
        for node in graph.order():
            values[node] = _node_value(node, values, args)
        for target, node in graph.writes.items():
            view = target.value(args)
            view[...] = values[node].astype(view.dtype)
    items = [values[o] if isinstance(o, Node) else o for o in graph.outputs]
    return tuple(items) if graph.tuple_result else items[0]
