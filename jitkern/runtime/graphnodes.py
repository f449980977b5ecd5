"""The kernel nodes of a captured graph, and updating their parameters in place.

A capture is recorded by the driver, not by jitkern (a launch inside a capture takes the
same path as any other), so the kernel nodes are found afterwards: on a graph's first
``nodes()``/``node()``/``update()``, :func:`walk` lists the graph's nodes in dependency
order (capture order, for the launches of one stream), looks each kernel node's function
up among the functions jitkern loaded (:func:`register`, by ``CUfunction`` handle), and
copies its parameter values into a buffer of the node's own. :func:`update` checks and
packs new values into that copy (the function's :class:`~.graphargs.ArgMap`) and passes
it to ``cuGraphExecKernelNodeSetParams``, which copies it into the executable graph: the
next launch of the graph uses it; launches already queued do not. See docs/graphs.md.
"""

from __future__ import annotations

import ctypes
import heapq
import weakref

from ..errors import CUDAError, JitkernIndexError, JitkernTypeError, JitkernValueError
from . import driver
from .driver import check, drv
from .args import dtype_of

# int(CUfunction) -> (weak reference to the runtime.module.Function, its _DeviceState)
FUNCTIONS: dict[int, tuple] = {}


def register(handle, function, state) -> None:
    """Note that ``handle`` is ``function``'s kernel on ``state``'s device (not the hot
    path: once per function and device)."""
    try:
        key = int(handle)
    except (TypeError, ValueError):  # a test's stand-in handle: never a graph node's
        return
    FUNCTIONS[key] = (weakref.ref(function), state)


def param_sizes(handle) -> list[int] | None:
    """The parameter sizes of a kernel jitkern loaded, by handle (None if unknown)."""
    entry = FUNCTIONS.get(int(handle))
    return entry[1].param_sizes if entry is not None else None


driver.resets(globals(), FUNCTIONS=dict)


def kernel_name(handle) -> str | None:
    """The name of the kernel jitkern loaded as ``handle`` (a fault's error names it)."""
    entry = FUNCTIONS.get(int(handle))
    function = entry[0]() if entry is not None else None
    return function.name if function is not None else None


driver.kernel_name_of = kernel_name


class KernelNode:
    """One kernel node of a captured graph, as ``g.nodes()`` lists it.

    ``name``: the kernel's name; ``index``: which launch of that kernel in the graph it
    is (0 for the first); ``position``: its place among the graph's kernel nodes, in
    capture order; ``kernel``: the kernel object (None for a kernel jitkern did not
    load); ``grid``, ``block`` (each (x, y, z)), ``shared_mem``: as captured or last
    updated; ``args``: the values given to updates, by argument index (the graph keeps
    them alive until they are replaced or the graph is destroyed).
    """

    __slots__ = ("name", "index", "position", "function", "grid", "block", "shared_mem",
                 "args", "_node", "_params", "_raw", "_pointers", "_offsets", "_sizes",
                 "_packers", "_exec", "_exec_id", "_forms", "_fast")

    @property
    def kernel(self):
        owner = getattr(self.function, "owner", None)
        return owner() if owner is not None else None

    @property
    def label(self) -> str:
        return f"{self.name}#{self.index}"

    def __repr__(self) -> str:
        return (f"<jitkern graph node {self.label} (kernel node {self.position}) "
                f"grid={self.grid} block={self.block} shared_mem={self.shared_mem}>")


# -- walking a graph -------------------------------------------------------------------


def walk(graph, exec_handle) -> list[KernelNode]:
    """The kernel nodes of ``graph`` (a CUgraph) in dependency order, each with a copy
    of its parameters that updates of ``exec_handle`` (its CUgraphExec) are made from."""
    d = drv()
    kernel_type = int(d.CUgraphNodeType.CU_GRAPH_NODE_TYPE_KERNEL)
    out: list[KernelNode] = []
    counts: dict = {}
    for node in _ordered(d, graph):
        if int(check(d.cuGraphNodeGetType(node), "cuGraphNodeGetType")) != kernel_type:
            continue
        params = check(d.cuGraphKernelNodeGetParams(node), "cuGraphKernelNodeGetParams")
        kn = _kernel_node(node, params, len(out), exec_handle)
        owner = kn.kernel
        key = id(owner) if owner is not None else (kn.function or int(params.func))
        if kn.function is not None and kn.function.owners:  # one count per shared Function set
            key = min(id(k) for k in kn.function.owners)
        kn.index = counts.get(key, 0)
        counts[key] = kn.index + 1
        out.append(kn)
    return out


def _ordered(d, graph) -> list:
    """The graph's nodes, dependencies first; among independent nodes (separate streams
    of a capture) in the order the driver lists them."""
    count = check(d.cuGraphGetNodes(graph, 0), "cuGraphGetNodes")[-1]
    nodes = list(check(d.cuGraphGetNodes(graph, count), "cuGraphGetNodes")[0])[:int(count)]
    try:
        deps = [_dependencies(d, node) for node in nodes]
    except CUDAError:  # edges the binding cannot report: keep the driver's order
        return nodes
    position = {int(node): i for i, node in enumerate(nodes)}
    waiting = [len(ds) for ds in deps]
    users: list[list[int]] = [[] for _ in nodes]
    for i, ds in enumerate(deps):
        for dep in ds:
            users[position[int(dep)]].append(i)
    ready = [i for i, n in enumerate(waiting) if n == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        i = heapq.heappop(ready)
        order.append(nodes[i])
        for j in users[i]:
            waiting[j] -= 1
            if waiting[j] == 0:
                heapq.heappush(ready, j)
    return order if len(order) == len(nodes) else nodes


def _dependencies(d, node) -> list:
    result = d.cuGraphNodeGetDependencies(node, 0)
    check(result[:1], "cuGraphNodeGetDependencies")
    count = int(result[-1])
    if count == 0:
        return []
    result = d.cuGraphNodeGetDependencies(node, count)
    check(result[:1], "cuGraphNodeGetDependencies")
    return list(result[1])[:count]


def _kernel_node(node, params, position: int, exec_handle) -> KernelNode:
    kn = KernelNode()
    handle = int(params.func)
    entry = FUNCTIONS.get(handle)
    function = entry[0]() if entry is not None else None
    state = entry[1] if function is not None else None
    kn.name = function.name if function is not None else f"<kernel 0x{handle:x}>"
    kn.position, kn.function, kn.args, kn._packers = position, function, {}, {}
    kn._forms, kn._fast = {}, {}  # the hot path's: see _repack
    kn.grid = (int(params.gridDimX), int(params.gridDimY), int(params.gridDimZ))
    kn.block = (int(params.blockDimX), int(params.blockDimY), int(params.blockDimZ))
    kn.shared_mem = int(params.sharedMemBytes)
    kn._node, kn._params, kn._exec, kn._exec_id = node, params, exec_handle, int(exec_handle)
    kn._raw = kn._pointers = kn._offsets = kn._sizes = None
    sizes = state.param_sizes if state is not None else None
    captured = int(params.kernelParams or 0)
    if sizes is not None and (captured or not sizes):
        _copy_parameters(kn, params, captured, state.param_layout, sizes)
    return kn


def _copy_parameters(kn: KernelNode, params, captured: int, layout, sizes) -> None:
    """Give the node a parameter buffer of its own holding the captured values, and point
    its CUDA_KERNEL_NODE_PARAMS at it (the driver owns the captured array)."""
    if layout is not None:
        offsets = [offset for offset, _size in layout]
    else:
        offsets, pos = [], 0
        for size in sizes:
            offsets.append(pos)
            pos += size
    total = max([o + s for o, s in zip(offsets, sizes)] + [8])
    raw = ctypes.create_string_buffer(total)
    base = ctypes.addressof(raw)
    for i, (offset, size) in enumerate(zip(offsets, sizes)):
        source = ctypes.c_void_p.from_address(captured + 8 * i).value
        ctypes.memmove(base + offset, source, size)
    pointers = (ctypes.c_void_p * max(len(sizes), 1))(*[base + o for o in offsets])
    params.kernelParams = ctypes.addressof(pointers)
    params.extra = 0
    kn._raw, kn._pointers, kn._offsets, kn._sizes = raw, pointers, offsets, sizes


# -- finding a node ----------------------------------------------------------------------


def of(nodes: list[KernelNode], kernel) -> list[KernelNode]:
    """The nodes launched from ``kernel`` (a kernel object, a bound launch, or a
    runtime Function), in capture order."""
    function = kernel if hasattr(kernel, "arg_map") else getattr(kernel, "function", None)
    if function is not None and hasattr(function, "arg_map"):
        return [n for n in nodes if n.function is function]
    # a kernel object: its own nodes, and those of kernel objects of the same definition,
    # which launch the same Functions (the memo of builds shares them)
    return [n for n in nodes if n.kernel is kernel
            or (n.function is not None and kernel in n.function.owners)]


def find(nodes: list[KernelNode], target, index: int | None = None) -> KernelNode:
    """The node ``target`` names: a KernelNode of this graph, a kernel (its only node, or
    its ``index``-th), or a ``(kernel, index)`` pair."""
    if isinstance(target, KernelNode):
        if not nodes or target._exec_id != nodes[0]._exec_id:
            raise JitkernValueError(f"graph node {target.label} belongs to another graph; "
                                    "take nodes from g.nodes() of the graph you update")
        return target
    if type(target) is tuple and len(target) == 2 and index is None:
        target, index = target
    matches = of(nodes, target)
    name = _kernel_name(target)
    if not matches:
        listed = ", ".join(n.label for n in nodes) or "none"
        raise JitkernValueError(
            f"{name} has no kernel node in this graph (its kernel nodes: {listed}); a launch "
            "is a node only if it ran on the captured stream inside the capture")
    if index is None:
        if len(matches) > 1:
            raise JitkernValueError(
                f"{name} has {len(matches)} kernel nodes in this graph "
                f"({', '.join(n.label for n in matches)}); say which: g.node({name}, i) or "
                f"g.update(({name}, i), ...)")
        return matches[0]
    if type(index) is not int or not -len(matches) <= index < len(matches):
        raise JitkernIndexError(
            f"{name} has {len(matches)} kernel node(s) in this graph; index {index!r} is out "
            f"of range")
    return matches[index]


def _kernel_name(kernel) -> str:
    for attr in ("__name__", "name"):
        value = getattr(kernel, attr, None)
        if isinstance(value, str):
            return value
    function = getattr(kernel, "function", None)
    if function is not None:
        return function.name
    return type(kernel).__name__


# -- updating a node -------------------------------------------------------------------


def update(node: KernelNode, args: tuple, named: dict, grid, block, shared_mem) -> None:
    """Replace ``node``'s arguments (all by position, or some by name) and, if given, its
    grid, block and dynamic shared memory, in the executable graph."""
    if grid is None and block is None and shared_mem is None:
        # The hot path of a loop that updates nodes: arguments given the way an earlier
        # update of this node gave them (the same count by position or the same names).
        if args:
            indices = node._forms.get(len(args))
            if indices is not None and _repack(node, indices, args):
                return
        elif named:
            indices = node._forms.get(tuple(named))
            if indices is not None and _repack(node, indices, named.values()):
                return
    _update(node, args, named, grid, block, shared_mem)


def update_many(nodes: list[KernelNode], updates) -> None:
    """Apply ``updates`` ((node, args) pairs; args a tuple or list of every argument by
    position, or a dict of some by name) in order, as :func:`update` would one by one."""
    exec_id = nodes[0]._exec_id if nodes else None
    forms_of = _FORMS_OF
    set_params = drv().cuGraphExecKernelNodeSetParams  # one look-up for all the nodes
    for item in updates:
        try:
            target, values = item
        except (TypeError, ValueError):
            raise JitkernTypeError(
                f"update_many: each update is a (node, args) pair, args a tuple of every "
                f"argument by position or a dict of some by name; got {item!r}") from None
        if type(target) is KernelNode and target._exec_id == exec_id:
            node = target
        else:
            node = find(nodes, target)
        kind = forms_of.get(type(values))
        if kind is None:
            raise JitkernTypeError(
                f"update_many: graph node {node.label}: the arguments are a tuple (every one "
                f"by position) or a dict (some by name), not {type(values).__name__}")
        if kind == "named":
            indices = node._forms.get(tuple(values))
            if indices is None or not _repack(node, indices, values.values(), set_params):
                _update(node, (), values, None, None, None)
        else:
            indices = node._forms.get(len(values))
            if indices is None or not _repack(node, indices, values, set_params):
                _update(node, tuple(values), {}, None, None, None)


_FORMS_OF = {tuple: "position", list: "position", dict: "named"}


def _repack(node: KernelNode, indices: tuple, values, set_params=None) -> bool:
    """Pack ``values`` (user arguments ``indices``) into the node's parameter buffer and
    set it: each value's type must already have a packer for its parameter (made, and
    checked, by an earlier update of this node) and, for a JIT kernel, the value the
    specialisation key the node's binary was compiled for. False, with the node as it
    was, when anything else holds: the general path checks again, packs, or says what
    is wrong."""
    fast = node._fast
    raw = node._raw
    saved = raw.raw
    try:
        for i, value in zip(indices, values):
            entry = fast.get((i, type(value)))
            if entry is None:
                entry = _fast_entry(node, i, type(value))
                if entry is None:
                    break
            keyer, want, pack, dims = entry
            if keyer is not None:
                got = keyer(value)
                if got is not want and got != want:  # interned: mostly the same object
                    break
            pack(value)
            if dims is not None and not dims(value):
                break
        else:
            if set_params is None:
                set_params = drv().cuGraphExecKernelNodeSetParams
            (err,) = set_params(node._exec, node._node, node._params)
            if err == 0:
                stored = node.args
                for i, value in zip(indices, values):
                    stored[i] = value
                return True
    except Exception:  # refused or not packable here: the general path words the error
        pass
    ctypes.memmove(raw, saved, len(saved))
    return False


def _fast_entry(node: KernelNode, i: int, cls: type):
    """(key reader or None, the key, packer, shape/stride packer or None) of user argument
    ``i`` given a ``cls``, once the general path has made its packer; else None."""
    pack = node._packers.get((i, cls))
    if pack is None:
        return None
    amap = node.function.arg_map
    keyer = want = dims = None
    if amap.key is not None:
        want = amap.key[i]
        keyer = amap.keyer_for(cls) if amap.keyer_for is not None else amap.keyer
        if keyer is None:  # the type is the key: the packer was made for this one
            if want is not cls:
                return None
    else:
        want = amap.pointee(i)  # a C pointer's element type: another dtype takes the
        if want is not None:    # general path, which refuses it by name
            keyer = dtype_of
    if amap.extras and amap.extras[i]:
        def dims(value, amap=amap, packers=node._packers, sizes=node._sizes):
            return _repack_dims(amap, packers, sizes, i, value)
    entry = node._fast[(i, cls)] = (keyer, want, pack, dims)
    return entry


def _repack_dims(amap, packers, sizes, i: int, value) -> bool:
    """Pack a JIT array's shape/stride parameters (as ArgMap.slots lists them)."""
    first = amap.count(sizes) + sum(len(items) for items in amap.extras[:i])
    shape, strides = amap.dims(value)
    for k, (kind, axis) in enumerate(amap.extras[i]):
        pack = packers.get((first + k, int))
        if pack is None:
            return False
        pack(int(shape[axis] if kind == "shape" else strides[axis]))
    return True


def _update(node: KernelNode, args: tuple, named: dict, grid, block, shared_mem) -> None:
    label = f"graph node {node.label}"
    amap = _arg_map(node, label)
    if not args and not named and grid is None and block is None and shared_mem is None:
        raise JitkernTypeError(f"{label}: nothing to update; give arguments (by position "
                               "or by name), grid=, block= or shared_mem=")
    grid, block, shared_mem = amap.launch_dims(label, grid, block, shared_mem)
    count = amap.count(node._sizes)
    changes = amap.changes(label, count, args, named) if args or named else {}
    pairs = [pair for i, value in changes.items() for pair in amap.slots(label, count, i, value)]
    saved = node._raw.raw
    amap.write(label, count, node._packers, node._raw, node._offsets, node._sizes, pairs, saved)
    params = node._params
    new_grid, new_block = grid or node.grid, block or node.block
    new_shared = node.shared_mem if shared_mem is None else shared_mem
    dims_changed = grid is not None or block is not None or shared_mem is not None
    if dims_changed:
        _set_dims(params, new_grid, new_block, new_shared)
    (err,) = drv().cuGraphExecKernelNodeSetParams(node._exec, node._node, params)
    if err != 0:  # the node keeps what the executable graph still has
        ctypes.memmove(node._raw, saved, len(saved))
        if dims_changed:
            _set_dims(params, node.grid, node.block, node.shared_mem)
        check((err,), f"updating {label} (cuGraphExecKernelNodeSetParams)")
    node.args.update(changes)
    node.grid, node.block, node.shared_mem = new_grid, new_block, new_shared
    if changes:  # the hot path may take this form of update from now on
        node._forms[len(args) if args else tuple(named)] = tuple(changes)


def _set_dims(params, grid, block, shared_mem) -> None:
    params.gridDimX, params.gridDimY, params.gridDimZ = grid
    params.blockDimX, params.blockDimY, params.blockDimZ = block
    params.sharedMemBytes = shared_mem


def _arg_map(node: KernelNode, label: str):
    """The node's ArgMap, or the error saying why the node cannot be updated."""
    function = node.function
    if function is None:
        reason = "its kernel was not loaded by jitkern (another library's kernel)"
    elif function.arg_map is None:
        owner = node.kernel
        kind = type(owner).__name__ if owner is not None else "this kind of"
        reason = (f"{kind} kernels make their parameters per call (pointers, sizes and "
                  "index arithmetic of each array); only RawKernel, RawModule and "
                  "@jitkern.rawkernel kernel nodes can be updated")
    elif node._raw is None:
        reason = "its parameter sizes are unknown (neither its binary nor the driver said)"
    else:
        return function.arg_map
    raise JitkernTypeError(f"{label} cannot be updated in place: {reason}; capture the graph "
                           "again with the new arguments")
