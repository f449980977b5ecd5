"""A CPU stand-in for ``cuda.bindings.driver``: enough of it to load and launch kernels.

For tests and the CPU launch benchmark, through the runtime's one seam::

    from jitkern.runtime import driver
    from jitkern.runtime.fakedriver import FakeDriver

    with driver.use(FakeDriver(cc=(9, 0))) as fake:
        kernel((1,), (32,), (x, y, n))
        (launch,) = fake.launches
        launch.grid, launch.words(3)  # (1, 1, 1), the 8-byte words of parameters 0-2

Modules "load" to fresh handles (``loads`` keeps each module's device and bytes), contexts
are ints, every pointer is device memory (of the device it was allocated on, else 0,
unless ``pointer_device`` says otherwise), devices may differ in compute capability
(``cc=[(9, 0), (8, 0)]``), and each ``cuLaunchKernel``/``cuLaunchCooperativeKernel`` is recorded (or,
with ``record=False``, answered by a stub that does nothing: the benchmark's). A test that needs another
answer from a call subclasses it or sets the attribute on the instance.

Streams can be captured into graphs: a launch on a capturing stream becomes a kernel node
holding a copy of its parameter values (their sizes are the ones jitkern read for the
kernel, as the driver knows them from the binary), the nodes of a capture form a chain,
``cuGraphLaunch`` records one :class:`Launch` per kernel node of the executable graph, and
``cuGraphExecKernelNodeSetParams`` copies new values into the executable graph's node
(each call is also kept in ``node_updates``)::

    with driver.use(FakeDriver()) as fake, jitkern.graph.capture() as g:
        kernel((1,), (32,), (x, y, n))
    g.update(kernel, y=z)
    exec_handle, node, launch = fake.node_updates[-1]  # launch.words(3): what was set
"""

from __future__ import annotations

import ctypes
import itertools
import types

from . import graphnodes

CUresult = types.SimpleNamespace(
    CUDA_SUCCESS=0, CUDA_ERROR_INVALID_VALUE=1, CUDA_ERROR_OUT_OF_MEMORY=2,
    CUDA_ERROR_NO_DEVICE=100, CUDA_ERROR_INVALID_CONTEXT=201, CUDA_ERROR_NOT_FOUND=500,
    CUDA_ERROR_LAUNCH_FAILED=719)
_ATTRIBUTES = ("COMPUTE_CAPABILITY_MAJOR", "COMPUTE_CAPABILITY_MINOR", "MAX_THREADS_PER_BLOCK",
               "MULTIPROCESSOR_COUNT", "MAX_SHARED_MEMORY_PER_BLOCK")


class Launch:
    """One recorded launch: the handle, dims, shared memory, stream and parameter array."""

    __slots__ = ("block", "cooperative", "grid", "handle", "params", "shared_mem", "stream")

    def __init__(self, handle, grid, block, shared_mem, stream, params, cooperative):
        self.handle, self.grid, self.block = handle, grid, block
        self.shared_mem, self.stream, self.params = shared_mem, stream, params
        self.cooperative = cooperative

    def raw(self, index: int, size: int) -> bytes:
        """``size`` bytes of parameter ``index``, read now (the buffer is the kernel's)."""
        slot = ctypes.c_void_p.from_address(self.params + 8 * index).value
        return ctypes.string_at(slot, size)

    def words(self, count: int) -> list[int]:
        """Parameters ``0..count-1`` read as signed 8-byte integers (pointers, int64)."""
        return [int.from_bytes(self.raw(i, 8), "little", signed=True) for i in range(count)]


class KernelNodeParams:
    """The fake's ``CUDA_KERNEL_NODE_PARAMS``: the fields jitkern reads and sets."""

    def __init__(self, func=0, grid=(1, 1, 1), block=(1, 1, 1), shared_mem=0, params=0):
        self.func = func
        self.gridDimX, self.gridDimY, self.gridDimZ = grid
        self.blockDimX, self.blockDimY, self.blockDimZ = block
        self.sharedMemBytes, self.kernelParams, self.extra = shared_mem, params, 0


class _Copy:
    """A copy of a launch's parameter values (``sizes`` bytes each) and its ``void*[]``."""

    def __init__(self, params: int, sizes):
        sizes = list(sizes or ())
        self.raw = [ctypes.create_string_buffer(
            ctypes.string_at(ctypes.c_void_p.from_address(params + 8 * i).value, n) or b"\0")
            for i, n in enumerate(sizes)]
        self.pointers = (ctypes.c_void_p * max(len(sizes), 1))(
            *[ctypes.addressof(r) for r in self.raw])
        self.ptr = ctypes.addressof(self.pointers) if sizes else 0


class _Node:
    """A kernel node: its launch (the copy's parameters) and the nodes it depends on."""

    def __init__(self, launch: Launch, copy: _Copy, deps: list):
        self.launch, self.copy, self.deps = launch, copy, deps


class FakeDriver:
    """See the module doc. ``devices``: how many GPUs ``cuDeviceGetCount`` says; ``cc``:
    their compute capability (one ``(major, minor)`` for all, or a list of one per device);
    ``version``: the driver's CUDA version; ``record``: keep each launch (else only ``count`` it)."""

    CUresult = CUresult
    CUdevice_attribute = types.SimpleNamespace(
        **{f"CU_DEVICE_ATTRIBUTE_{name}": name for name in _ATTRIBUTES})
    CUpointer_attribute = types.SimpleNamespace(
        CU_POINTER_ATTRIBUTE_MEMORY_TYPE=2, CU_POINTER_ATTRIBUTE_CONTEXT=1,
        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL=9, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE=17)

    def __init__(self, devices: int = 1, cc=(9, 0), record: bool = True, version: int = 13000):
        self.devices, self.record, self.version = devices, record, version
        per_device = isinstance(cc, list)
        self.ccs = [tuple(c) for c in cc] if per_device else [tuple(cc)] * max(devices, 1)
        self.cc = self.ccs[0]
        self.launches: list[Launch] = []
        self.loads: list[tuple[int, bytes]] = []  # (device, image) of each cuModuleLoadData
        self.allocations: dict[int, int] = {}  # pointer -> device it was allocated on
        self.current = 0  # the current context (0: none)
        self._handles = itertools.count(0x1000)
        self._addresses = itertools.count(1 << 32, 1 << 20)
        self.functions: dict[int, str] = {}  # function handle -> kernel symbol
        self.nodes: dict[int, _Node] = {}  # graph node handle -> node
        self.graphs: dict[int, list[int]] = {}  # graph handle -> its node handles
        self.execs: dict[int, dict[int, _Node]] = {}  # executable graph -> its nodes
        self.node_updates: list[tuple[int, int, Launch]] = []  # (exec, node, new launch)
        self._capturing: dict[int, list[int]] = {}  # stream -> the nodes captured so far
        self.stream_flags: dict[int, int] = {}  # stream -> the flags it was created with
        if not record:  # the cheapest stand-in: what the CPU launch benchmark times
            self.cuLaunchKernel = self.cuLaunchCooperativeKernel = _launch_stub

    @staticmethod
    def context(device_id: int) -> int:
        """The primary context of ``device_id`` as this driver spells it."""
        return 0xC0 + device_id

    # -- start-up, devices and contexts
    def cuInit(self, flags):
        return (0,)

    def cuDriverGetVersion(self):
        return (0, self.version)

    def cuDeviceGetCount(self):
        return (0, self.devices)

    def cuDeviceGet(self, ordinal):
        return (0, ordinal)

    def cuDevicePrimaryCtxRetain(self, dev):
        return (0, self.context(int(dev)))

    def cuCtxGetCurrent(self):
        return (0, self.current)

    def cuCtxSetCurrent(self, ctx):
        self.current = int(ctx)
        return (0,)

    def cuCtxGetDevice(self):
        return (0, self.current - 0xC0)

    def cuDeviceGetAttribute(self, attr, dev):
        cc = self.ccs[int(dev)]
        values = {"COMPUTE_CAPABILITY_MAJOR": cc[0], "COMPUTE_CAPABILITY_MINOR": cc[1],
                  "MAX_THREADS_PER_BLOCK": 1024, "MULTIPROCESSOR_COUNT": 132,
                  "MAX_SHARED_MEMORY_PER_BLOCK": 49152}
        return (0, values[attr])

    def cuPointerGetAttribute(self, attr, ptr):
        """Every pointer is device memory (``CU_MEMORYTYPE_DEVICE``) of the device
        ``self.pointer_device(ptr)`` says (0 unless a test sets it), in its primary context."""
        if attr == self.CUpointer_attribute.CU_POINTER_ATTRIBUTE_CONTEXT:
            return (0, self.context(self.pointer_device(ptr)))
        if attr == self.CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
            return (0, 2)
        return (1, 0)

    def pointer_device(self, ptr: int) -> int:
        return self.allocations.get(int(ptr), 0)

    def cuGetErrorName(self, err):
        return (0, f"CUDA_ERROR_{int(err)}".encode())

    def cuGetErrorString(self, err):
        return (0, b"fake driver error")

    # -- memory: addresses from a counter, nothing behind them (never read on the CPU)
    CUmemPool_attribute = types.SimpleNamespace(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD=4)

    @staticmethod
    def cuuint64_t(value):
        return value

    def cuDeviceGetDefaultMemPool(self, dev):
        return (0, 0x9000 + int(dev))

    def cuMemPoolSetAttribute(self, pool, attr, value):
        return (0,)

    def cuMemAllocFromPoolAsync(self, size, pool, stream):
        ptr = next(self._addresses)
        self.allocations[ptr] = int(pool) - 0x9000  # the pool is the device's (above)
        return (0, ptr)

    def cuMemFreeAsync(self, ptr, stream):
        return (0,)

    def cuCtxSynchronize(self):
        return (0,)

    def cuStreamSynchronize(self, stream):
        return (0,)

    def cuStreamIsCapturing(self, stream):
        return (0, 1 if int(stream) in self._capturing else 0)

    # -- streams and graphs
    CUstream_flags = types.SimpleNamespace(CU_STREAM_DEFAULT=0, CU_STREAM_NON_BLOCKING=1)
    CUstreamCaptureStatus = types.SimpleNamespace(
        CU_STREAM_CAPTURE_STATUS_NONE=0, CU_STREAM_CAPTURE_STATUS_ACTIVE=1,
        CU_STREAM_CAPTURE_STATUS_INVALIDATED=2)
    CUstreamCaptureMode = int
    CUgraphInstantiate_flags = types.SimpleNamespace(
        CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH=1)
    CUgraphNodeType = types.SimpleNamespace(CU_GRAPH_NODE_TYPE_KERNEL=0)
    CUDA_KERNEL_NODE_PARAMS = KernelNodeParams

    def cuStreamCreateWithPriority(self, flags, priority):
        handle = next(self._handles)
        self.stream_flags[handle] = int(flags)
        return (0, handle)

    def cuStreamDestroy(self, stream):
        return (0,)

    def cuStreamBeginCapture(self, stream, mode):
        self._capturing[int(stream)] = []
        return (0,)

    def cuStreamEndCapture(self, stream):
        graph = next(self._handles)
        self.graphs[graph] = self._capturing.pop(int(stream))
        return (0, graph)

    def cuGraphInstantiate(self, graph, flags):
        graph_exec = next(self._handles)
        self.execs[graph_exec] = {h: self.nodes[h] for h in self.graphs[graph]}
        return (0, graph_exec)

    def cuGraphLaunch(self, graph_exec, stream):
        for node in self.execs[int(graph_exec)].values():
            launch = node.launch
            self.launches.append(Launch(launch.handle, launch.grid, launch.block,
                                        launch.shared_mem, stream, launch.params, False))
        return (0,)

    def cuGraphUpload(self, graph_exec, stream):
        return (0,)

    def cuGraphExecDestroy(self, graph_exec):
        return (0,)

    def cuGraphDestroy(self, graph):
        return (0,)

    def cuGraphGetNodes(self, graph, count):
        nodes = self.graphs[int(graph)]
        return (0, nodes[:count] if count else [], len(nodes))

    def cuGraphNodeGetType(self, node):
        return (0, self.CUgraphNodeType.CU_GRAPH_NODE_TYPE_KERNEL)

    def cuGraphNodeGetDependencies(self, node, count):
        deps = self.nodes[int(node)].deps
        return (0, deps[:count] if count else [], [], len(deps))

    def cuGraphKernelNodeGetParams(self, node):
        launch = self.nodes[int(node)].launch
        return (0, KernelNodeParams(launch.handle, launch.grid, launch.block,
                                    launch.shared_mem, launch.params))

    def cuGraphExecKernelNodeSetParams(self, graph_exec, node, p):
        nodes = self.execs.get(int(graph_exec), {})
        old = nodes.get(int(node))
        if old is None:
            return (CUresult.CUDA_ERROR_INVALID_VALUE,)
        copy = _Copy(int(p.kernelParams), graphnodes.param_sizes(p.func))
        launch = Launch(p.func, (p.gridDimX, p.gridDimY, p.gridDimZ),
                        (p.blockDimX, p.blockDimY, p.blockDimZ), p.sharedMemBytes, 0,
                        copy.ptr, False)
        nodes[int(node)] = _Node(launch, copy, old.deps)
        self.node_updates.append((int(graph_exec), int(node), launch))
        return (0,)

    def _capture_node(self, h, grid, block, shared_mem, params, captured: list) -> None:
        copy = _Copy(params, graphnodes.param_sizes(h))
        handle = next(self._handles)
        launch = Launch(h, grid, block, shared_mem, 0, copy.ptr, False)
        self.nodes[handle] = _Node(launch, copy, captured[-1:])
        captured.append(handle)

    # -- modules
    def cuModuleLoadData(self, data):
        self.loads.append((self.current - 0xC0, bytes(data)))
        return (0, next(self._handles))

    def cuModuleGetFunction(self, module, name: bytes):
        handle = next(self._handles)
        self.functions[handle] = name.decode()
        return (0, handle)

    def cuModuleUnload(self, module):
        return (0,)

    # -- launches
    def cuLaunchKernel(self, h, gx, gy, gz, bx, by, bz, shared_mem, stream, params, extra):
        captured = self._capturing.get(int(stream))
        if captured is not None:
            self._capture_node(h, (gx, gy, gz), (bx, by, bz), shared_mem, params, captured)
            return (0,)
        self.launches.append(Launch(h, (gx, gy, gz), (bx, by, bz), shared_mem, stream, params,
                                    False))
        return (0,)

    def cuLaunchCooperativeKernel(self, h, gx, gy, gz, bx, by, bz, shared_mem, stream, params):
        self.launches.append(Launch(h, (gx, gy, gz), (bx, by, bz), shared_mem, stream, params,
                                    True))
        return (0,)


_SUCCESS = (0,)


def cuLaunchKernel(*args):  # noqa: N802 - the driver's name (launchers check __name__)
    return _SUCCESS


_launch_stub = cuLaunchKernel
