"""Arguments that share memory: NumPy's sequential result, whatever a call passes.

A fused function traced once runs as one plan (kernels/fuse/emit.py): every argument is
read as it was on entry and the written ones are stored at the end. That is NumPy's
result exactly when no written argument (or view of one) shares memory with another
argument view the function touches. So a plan that writes checks each call
(:class:`Guard`): first the byte spans of the arguments (a few integer comparisons, all a
call pays when nothing is shared), and only where two spans meet, NumPy's exact test
(``numpy.shares_memory``) on *shadows* of the views: NumPy arrays at the arrays'
addresses, with their strides, that are never read.

Where memory is shared, the call runs the function's :class:`SequentialPlan`: the function
traced again in memory order (:class:`~.graph.SequentialGraph`), one kernel per write in
the order the function made them, each reading the memory as it is at that point. A read
whose memory a write changes before the read is used (``y`` in ``x += y; x += y`` with
``y`` a reversed view of ``x``) is copied just before that write, as NumPy copies a ufunc
input that overlaps its output. A read of exactly the memory a kernel writes (``x += y``
with ``y is x``) needs no copy: each element is read before it is written.

All of it sits at the call: the GPU, the simulated device and ``Fused.simulate`` run the
same decisions, and only ``run_plan(plan, operands)`` (how one plan runs) differs.
"""

from __future__ import annotations

import numpy

from ...arrays import describe
from ...runtime import memory
from ...runtime import simulated as simdevice
from ...runtime.device import synchronize
from .emit import Plan
from .graph import Graph, Input, Node, SequentialGraph, _thaw, as_view
from .views import array_signature

#: Work NumPy's exact overlap test may do before it answers "maybe" (taken as shared).
MAX_WORK = 1 << 14


# ---------------------------------------------------------------------------
# where arrays are


def region(a) -> tuple[int, int]:
    """The byte range ``[lo, hi)`` array ``a`` (NumPy or device) spans; empty: ``(0, 0)``.
    On every call of a plan that writes: kept to one describe() and a loop over the axes."""
    if isinstance(a, numpy.ndarray):
        return numpy.lib.array_utils.byte_bounds(a) if a.size else (0, 0)
    info = describe(a)
    lo = hi = info.ptr
    for n, stride in zip(info.shape, info.strides):
        if n == 0:
            return 0, 0
        if stride < 0:
            lo += (n - 1) * stride
        else:
            hi += (n - 1) * stride
    return lo, hi + info.dtype.itemsize


class _Interface:
    """An ``__array_interface__`` at a device address: NumPy's view of the layout alone."""

    __slots__ = ("__array_interface__",)

    def __init__(self, ptr: int, shape, strides, itemsize: int):
        self.__array_interface__ = {"version": 3, "shape": tuple(shape), "typestr":
                                    f"|V{itemsize}", "strides": tuple(strides),
                                    "data": (ptr, False)}  # fmt: skip


def shadow(a) -> numpy.ndarray:
    """``a``'s layout as a NumPy array at ``a``'s address, for NumPy's overlap tests and
    indexing arithmetic only: it is never read (a NumPy array is its own shadow)."""
    if isinstance(a, numpy.ndarray):
        return a
    info = describe(a)
    if 0 in info.shape:
        return numpy.empty(info.shape, f"V{info.dtype.itemsize}")
    return numpy.asarray(_Interface(info.ptr, info.shape, info.strides, info.dtype.itemsize))


def _bounds(a: numpy.ndarray) -> tuple:
    return numpy.lib.array_utils.byte_bounds(a) if a.size else (0, 0)


class Shadows:
    """The shadows of one call's argument views, made once each."""

    def __init__(self, args):
        self.args, self.made = args, {}

    def __getitem__(self, view: Input) -> numpy.ndarray:
        s = self.made.get(view)
        if s is None:
            s = shadow(self.args[view.position])
            for key in view.keys:
                s = s[as_view(_thaw(key))]
            self.made[view] = s
        return s

    def shared(self, a: Input, b: Input) -> bool:
        """Whether views ``a`` and ``b`` share a byte (NumPy's exact test, bounded)."""
        if a == b:
            return self[a].size > 0
        try:
            return numpy.shares_memory(self[a], self[b], max_work=MAX_WORK)
        except numpy.exceptions.TooHardError:
            return True

    def same(self, a: Input, b: Input) -> bool:
        """Whether ``a`` and ``b`` are the same elements at the same places (element ``i``
        of one is element ``i`` of the other, byte for byte)."""
        if a == b:
            return True
        x, y = self[a], self[b]
        return (x.shape == y.shape and x.strides == y.strides and x.itemsize == y.itemsize
                and _bounds(x) == _bounds(y))


# ---------------------------------------------------------------------------
# the check each call of a writing plan makes


class Guard:
    """``guard(args)``: whether a call must run in memory order, because a view the plan
    writes shares memory with another view it touches. Made once per plan."""

    def __init__(self, graph: Graph):
        written = list(graph.writes)
        touched = set(written) | {n.attrs[0] for n in graph.order()
                                  if n.op == "arg" and not n.attrs[0].scalar}
        pairs = {frozenset((w, t)) for w in written for t in touched if t != w}
        self.pairs = [tuple(sorted(p, key=repr)) for p in pairs]
        self.same_argument = any(a.position == b.position for a, b in self.pairs)
        self.positions = sorted({i.position for pair in self.pairs for i in pair})
        index = {p: k for k, p in enumerate(self.positions)}
        self.crossing = tuple({(index[a.position], index[b.position]) for a, b in self.pairs})

    @classmethod
    def of(cls, graph: Graph):
        """The guard of a plan that writes arguments; None for one that does not, or that
        touches no view but the ones it writes (``x *= 2``, ``x -= x.mean()``): nothing
        can share memory with what it writes, so a call checks nothing."""
        guard = cls(graph) if graph.writes else None
        return guard if guard is not None and guard.pairs else None

    def __call__(self, args):
        """False, or (shared memory found) the call's :class:`Shadows`, for the steps."""
        if not self.same_argument:  # every pair spans two arguments: compare their spans
            spans = [region(args[p]) for p in self.positions]
            for i, j in self.crossing:
                if spans[i][0] < spans[j][1] and spans[j][0] < spans[i][1]:
                    break
            else:
                return False
        shadows = Shadows(args)
        return any(shadows.shared(a, b) for a, b in self.pairs) and shadows


def execute(plan, args, sequential, run_plan):
    """A call: ``run_plan(plan, args)``, or where its arguments share memory the memory-order
    plan ``sequential()`` (traced on first need) run step by step with ``run_plan``.
    (``Fused.__call__`` inlines the first half: the check is its only cost.)"""
    guard = plan.guard
    shared = guard is not None and guard(args)
    if not shared:
        return run_plan(plan, args)
    return in_memory_order(plan, args, sequential, run_plan, shared)


def in_memory_order(plan, args, sequential, run_plan, shadows=None):
    """A call whose arguments share memory the plan writes: step by step."""
    memory_order = plan if isinstance(plan, SequentialPlan) else sequential()
    return memory_order.run(args, run_plan, shadows if isinstance(shadows, Shadows) else None)


def plan_for(graph, name: str):
    """The plan of a traced graph: one kernel's worth (with its guard), or memory order."""
    if isinstance(graph, SequentialGraph):
        return SequentialPlan(graph, name)
    plan = Plan(graph, name)
    plan.guard = Guard.of(graph)
    return plan


# ---------------------------------------------------------------------------
# memory order


def _always(args) -> bool:
    return True


class SequentialPlan:
    """A function's writes, one plan each in the function's order, then its results; the
    operands are the arguments and then the slots (:class:`~.graph.SequentialGraph`)."""

    guard = staticmethod(_always)

    def __init__(self, graph: SequentialGraph, name: str):
        self.graph = graph
        self.shape_dependent = graph.shape_dependent
        self.writes = [graph.targets[slot] for slot, _ in graph.steps]
        self.steps = [Plan(_graph((None,), False, {slot: node}), f"{name}_w{k}")
                      for k, (slot, node) in enumerate(graph.steps)]
        self.final = Plan(_graph(graph.outputs, graph.tuple_result, {}), f"{name}_result")
        slots = {slot.position: slot for slot in graph.reads}
        last = {}  # read slot -> the last step that reads it (len(steps): the results)
        for k, plan in enumerate([*self.steps, self.final]):
            for node in plan.graph.order():
                if node.op == "arg" and node.attrs[0].position in slots:
                    last[slots[node.attrs[0].position]] = k
        self.reads = [(slot, *graph.reads[slot], k) for slot, k in last.items()]

    @property
    def plans(self) -> list:
        return [*self.steps, self.final]

    @property
    def kernels(self) -> tuple:
        return tuple(k for plan in self.plans for k in plan.kernels)

    def run(self, args, run_plan, shadows=None):
        """The steps for ``args``: each after the ones before, copies taken in time."""
        shadows = shadows or Shadows(args)
        operands = [*args, *([None] * (len(self.graph.reads) + len(self.graph.targets)))]
        for slot, view in self.graph.targets.items():
            operands[slot.position] = view.value(args)
        copies = [[] for _ in range(len(self.steps) + 1)]
        for slot, view, epoch, last in self.reads:
            live = view.value(args)
            if self._changes(shadows, view, epoch, last):
                copies[epoch].append((slot, live))
            else:
                operands[slot.position] = live
        for k, step in enumerate(self.steps):
            for slot, live in copies[k]:
                operands[slot.position] = run_plan(copy_plan(*array_signature(live)), (live,))
            run_plan(step, operands)
        return run_plan(self.final, operands)

    def _changes(self, shadows: Shadows, view: Input, epoch: int, last: int) -> bool:
        """Whether the memory ``view`` read after ``epoch`` writes is written before (or,
        other than element by element, while) step ``last`` reads it."""
        for k in range(epoch, min(last + 1, len(self.writes))):
            target = self.writes[k]
            if shadows.shared(view, target) and (k < last or not shadows.same(view, target)):
                return True
        return False

    def inspect(self, args, arch):
        operands = [*args, *([None] * (len(self.graph.reads) + len(self.graph.targets)))]
        for slot, view in [*self.graph.targets.items(),
                           *((s, v) for s, (v, _e) in self.graph.reads.items())]:
            operands[slot.position] = view.value(args)
        first = self.steps[0] if self.steps else self.final
        return first.inspect(operands, arch)


def _graph(outputs, tuple_result, writes) -> Graph:
    graph = Graph([], [], tuple(outputs), tuple_result, dict(writes))
    args = [n for n in graph.order() if n.op == "arg"]
    return Graph([n.attrs[0] for n in args], args, graph.outputs, tuple_result, graph.writes)


_COPIES: dict = {}


def copy_plan(dtype, ndim: int) -> Plan:
    """The plan that copies an array of ``dtype`` and ``ndim`` (a snapshot of a read)."""
    plan = _COPIES.get((dtype, ndim))
    if plan is None:
        node = Node("arg", (), numpy.dtype(dtype), ndim, False, (Input(0, (), False),))
        plan = _COPIES[(dtype, ndim)] = Plan(_graph((node,), False, {}), "jk_fused_copy")
    return plan


# ---------------------------------------------------------------------------
# Fused.simulate: host arrays that share memory as the device arrays do


def host_arguments(args, name: str = "fused function") -> tuple[tuple, list]:
    """(``args`` with device arrays as NumPy arrays, the write-backs to run after): views
    of a simulated device's memory (written in place), else copies, one copy of the bytes
    per group of arguments that share memory, so that they still share it. Another
    library's GPU array is refused unless it lies in a simulated device's memory (the
    simulator cannot read a real GPU's)."""
    host, back, copied = list(args), [], []
    for k, a in enumerate(args):
        if not on_device(a):
            if hasattr(a, "__cuda_array_interface__") and not isinstance(a, numpy.ndarray):
                view = simdevice.host_view(a)
                if view is None:
                    raise simdevice.not_modelled(a, f"{name}: argument {k}")
                host[k] = view
            continue
        view = simdevice.host_view(a)
        if view is not None:
            host[k] = view
        else:
            copied.append(k)
    for group in _groups(args, copied):
        if len(group) == 1:
            a = args[group[0]]
            copy = host[group[0]] = a.get()
            back.append(lambda a=a, copy=copy: a.set(copy))
        else:
            back.append(_copy_group(args, group, host))
    return tuple(host), back


def _groups(args, positions) -> list:
    """``positions`` grouped where their arrays' byte spans meet (transitively)."""
    spans = sorted((region(args[k]), k) for k in positions)
    groups, end = [], None
    for (lo, hi), k in spans:
        if groups and lo < end:
            groups[-1].append(k)
            end = max(end, hi)
        else:
            groups.append([k])
            end = hi
    return groups


def _copy_group(args, group, host):
    """One host copy of the bytes a group of device arrays spans, each array a view of it;
    returns the write-back of those bytes."""
    spans = [region(args[k]) for k in group]
    lo, hi = min(s[0] for s in spans), max(s[1] for s in spans)
    synchronize()  # the arrays' streams have finished with the bytes
    raw = numpy.empty(hi - lo, numpy.uint8)
    memory.memcpy_dtoh(raw, lo, hi - lo)
    for k in group:
        info = describe(args[k])
        host[k] = numpy.ndarray(info.shape, info.dtype, buffer=raw,
                                offset=info.ptr - lo, strides=info.strides)
    return lambda: memory.memcpy_htod(lo, raw, hi - lo)


def on_device(a) -> bool:
    """Whether ``a`` is a device array ``Fused.simulate`` copies to the host and back."""
    return hasattr(a, "get") and hasattr(a, "set") and hasattr(a, "__cuda_array_interface__")


__all__ = ["Guard", "SequentialPlan", "execute", "host_arguments", "on_device", "plan_for",
           "region", "shadow"]  # fmt: skip
