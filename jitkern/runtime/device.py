"""Devices, streams, events and executable graphs.

Each device is used through its primary context, retained lazily. The current
stream is per thread: ``with stream:`` pushes it, leaving the block pops it.
A stream's work can be captured into a :class:`Graph` (``begin_capture`` /
``end_capture``, CuPy's names) and replayed with one call; see docs/graphs.md.
"""

from __future__ import annotations

import threading

from ..errors import CUDAError, JitkernTypeError, JitkernValueError, StreamCaptureError
from . import debugcheck, driver, graphnodes, memory
from .driver import check, drv


class Device:
    """A CUDA device. ``with Device(i):`` makes it current for the block."""

    __slots__ = ("id", "_saved")

    def __init__(self, device_id: int = None):
        if device_id is None:
            device_id = driver.current_device_id()
        if not isinstance(device_id, int) or isinstance(device_id, bool):
            raise JitkernTypeError(f"Device(device_id): expected an int, got {type(device_id).__name__}")
        self.id = device_id
        self._saved = []

    def use(self) -> "Device":
        driver.set_current(self.id)
        return self

    def __enter__(self) -> "Device":
        d = drv()
        prev = check(d.cuCtxGetCurrent(), "cuCtxGetCurrent")
        self._saved.append(prev)
        driver.set_current(self.id)
        return self

    def __exit__(self, *exc) -> None:
        # what was current before, "no context" included (a fresh process, a thread that
        # had not used the GPU): the block leaves the thread as it found it
        check(drv().cuCtxSetCurrent(self._saved.pop()), "cuCtxSetCurrent")

    def synchronize(self) -> None:
        memory.refuse_during_capture(None, "Device.synchronize()")
        with self:
            check(drv().cuCtxSynchronize(), "cuCtxSynchronize")
        if debugcheck.PENDING:
            debugcheck.check_pending()

    @property
    def compute_capability(self) -> str:
        """Compute capability as a string, e.g. ``"90"`` (as CuPy spells it)."""
        major, minor = driver.compute_capability(self.id)
        return f"{major}{minor}"

    @property
    def arch(self) -> str:
        return "sm_" + self.compute_capability

    @property
    def name(self) -> str:
        return driver.device_name(self.id)

    @property
    def mem_info(self) -> tuple[int, int]:
        """(free, total) bytes."""
        return driver.mem_info(self.id)

    def attribute(self, name: str) -> int:
        """A device attribute by its CUDA name without the prefix, e.g. ``"multiprocessor_count"``."""
        return driver.device_attribute(self.id, name)

    def __eq__(self, other) -> bool:
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self) -> int:
        return hash(("jitkern.Device", self.id))

    def __repr__(self) -> str:
        return f"<jitkern.Device {self.id}>"


#: The id of the current device (device 0 if no context is current): CuPy's name for
#: :func:`.driver.current_device_id`, the one lookup.
get_device_id = driver.current_device_id


class _StreamState(threading.local):
    def __init__(self):
        self.stack: list[Stream] = []


_stream_state = _StreamState()

# How many threads have made a stream current (via ``with`` or ``use``), summed.
# While it is 0 every thread's current stream is the legacy default, so the
# launch fast path can skip the thread-local lookup. A one-element list so the
# generated launchers can hold a reference to it.
STREAMS_IN_USE = [0]


class Stream:
    """A CUDA stream. ``Stream()`` creates a stream on the current device that, as CuPy's
    ``Stream()`` does, synchronizes with the legacy default stream (work queued there
    before, a fill or a copy, finishes first); ``Stream(non_blocking=True)`` one that does not.

    ``Stream.null`` is the legacy default stream. Use ``with stream:`` to make it
    current for launches and allocations that are not given a stream.
    """

    null: "Stream"

    __slots__ = ("ptr", "device_id", "_owned", "__weakref__")

    def __init__(self, null: bool = False, non_blocking: bool = False, priority: int = 0,
                 *, _handle: int | None = None, _device_id: int | None = None):
        if null:
            self.ptr, self.device_id, self._owned = 0, _device_id, False
            return
        if _handle is not None:
            self.ptr, self.device_id, self._owned = int(_handle), _device_id, False
            return
        d = drv()
        self.device_id = driver.current_device_id()
        flags = d.CUstream_flags.CU_STREAM_NON_BLOCKING if non_blocking else d.CUstream_flags.CU_STREAM_DEFAULT
        handle = check(d.cuStreamCreateWithPriority(int(flags), priority), "cuStreamCreateWithPriority")
        self.ptr = int(handle)
        self._owned = d  # the driver that made it destroys it (a fake's handle never reaches CUDA)
        memory.cache_stream(self.ptr)  # its lifetime is known: freed blocks may be cached

    @classmethod
    def from_external(cls, obj) -> "Stream":
        """Wrap any stream-like object (see :func:`stream_handle`) without owning it."""
        return cls(_handle=stream_handle(obj))

    def __cuda_stream__(self):
        return (0, self.ptr)

    def synchronize(self) -> None:
        if self.ptr == 0 and driver.simulating_without_gpu():
            return  # JITKERN_SIMULATE on a machine without a GPU: simulated work is done
        memory.refuse_during_capture(self.ptr, "Stream.synchronize()")
        check(drv().cuStreamSynchronize(self.ptr), "cuStreamSynchronize")
        if debugcheck.PENDING:  # a debug kernel's failed bounds check raises here
            debugcheck.check_pending()

    def done(self) -> bool:
        memory.refuse_during_capture(self.ptr, "Stream.done")
        (err,) = drv().cuStreamQuery(self.ptr)
        if err == 0:
            return True
        if err == drv().CUresult.CUDA_ERROR_NOT_READY:
            return False
        check((err,), "cuStreamQuery")
        return False

    def record(self, event: "Event | None" = None) -> "Event":
        event = event if event is not None else Event()
        event.record(self)
        return event

    def wait_event(self, event: "Event") -> None:
        check(drv().cuStreamWaitEvent(self.ptr, event.ptr, 0), "cuStreamWaitEvent")

    # -- graph capture (CuPy's names) ---------------------------------------
    def begin_capture(self, mode=None) -> None:
        """Start capturing the work queued on this stream into a CUDA graph.

        Until :meth:`end_capture`, launches, pool allocations and device copies queued
        on this stream are recorded instead of run. ``mode`` is ``"relaxed"`` (the
        default, as in CuPy), ``"thread_local"`` or ``"global"``, or the matching int
        (``CU_STREAM_CAPTURE_MODE_*``: 0 global, 1 thread local, 2 relaxed).
        """
        mode = _capture_mode(mode)
        if self.ptr == 0:
            raise StreamCaptureError(
                "begin_capture: the legacy default stream (Stream.null) cannot be captured; "
                "capture on a jitkern.Stream() (or use jitkern.graph.capture(), which makes one)")
        if self.ptr in memory.CAPTURES or self.is_capturing():
            raise StreamCaptureError(f"begin_capture: {self!r} is already capturing")
        d = drv()
        check(d.cuStreamBeginCapture(self.ptr, d.CUstreamCaptureMode(mode)),
              "cuStreamBeginCapture")
        memory.CAPTURES[self.ptr] = memory.CaptureRecord(self)

    def end_capture(self) -> "Graph":
        """End the capture begun by :meth:`begin_capture`; return the instantiated :class:`Graph`."""
        d = drv()
        record = memory.CAPTURES.pop(self.ptr, None)
        none = d.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_NONE
        if record is None and self._capture_status() == none:
            raise StreamCaptureError(f"end_capture: {self!r} is not capturing (call "
                                     "begin_capture() first)")
        err, graph = d.cuStreamEndCapture(self.ptr)
        if err != 0:
            _release(record)
            name = driver._name(d, err)
            if err == d.CUresult.CUDA_ERROR_STREAM_CAPTURE_INVALIDATED:
                raise StreamCaptureError(
                    f"end_capture: the capture on {self!r} was invalidated by an operation that "
                    "cannot be captured (a synchronization, a host copy, a query of a capturing "
                    f"stream, or work on the legacy stream) ({name})", int(err)) from None
            raise StreamCaptureError(
                f"end_capture: {self!r} is not capturing (call begin_capture() first; a capture "
                f"must end on the stream and, unless relaxed, the thread that began it) ({name})",
                int(err)) from None
        try:
            return Graph._instantiate(graph, record)
        except BaseException:
            _release(record)
            raise

    def is_capturing(self) -> bool:
        """True while this stream is capturing; raises StreamCaptureError if its capture
        was invalidated (as CuPy does)."""
        d = drv()
        status = self._capture_status()
        if status == d.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_ACTIVE:
            return True
        if status == d.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_NONE:
            return False
        raise StreamCaptureError(
            f"the capture on {self!r} has been invalidated by an earlier error; end it with "
            "end_capture()")

    def _capture_status(self):
        return check(drv().cuStreamIsCapturing(self.ptr), "cuStreamIsCapturing")

    def use(self) -> "Stream":
        """Make this the current stream of the calling thread (until changed)."""
        stack = _stream_state.stack
        if stack:
            stack[-1] = self
        else:
            stack.append(self)
            STREAMS_IN_USE[0] += 1
        return self

    def __enter__(self) -> "Stream":
        _stream_state.stack.append(self)
        STREAMS_IN_USE[0] += 1
        return self

    def __exit__(self, *exc) -> None:
        _stream_state.stack.pop()
        STREAMS_IN_USE[0] -= 1

    def __del__(self):
        if getattr(self, "_owned", False) and self.ptr:
            try:
                memory.forget_stream(self.ptr)  # its cached blocks go back to the pool
                self._owned.cuStreamDestroy(self.ptr)
            except Exception:
                pass

    def __eq__(self, other) -> bool:
        return isinstance(other, Stream) and other.ptr == self.ptr

    def __hash__(self) -> int:
        return hash(("jitkern.Stream", self.ptr))

    def __repr__(self) -> str:
        return f"<jitkern.Stream 0x{self.ptr:x}>"


Stream.null = Stream(null=True)


def get_current_stream() -> Stream:
    """The calling thread's current stream (``Stream.null`` unless one was entered)."""
    stack = _stream_state.stack
    return stack[-1] if stack else Stream.null


def current_stream_handle() -> int:
    stack = _stream_state.stack
    return stack[-1].ptr if stack else 0


def stream_handle(stream) -> int:
    """The raw ``CUstream`` of ``stream`` as an int.

    Accepts None (the current stream), :class:`Stream`, an int handle, an object
    with the ``__cuda_stream__`` protocol (cuda.core), ``cuda_stream`` (PyTorch)
    or ``ptr`` (CuPy).
    """
    if stream is None:
        return current_stream_handle()
    if isinstance(stream, Stream):
        return stream.ptr
    if isinstance(stream, int) and not isinstance(stream, bool):
        return stream
    proto = getattr(stream, "__cuda_stream__", None)
    if proto is not None:
        pair = proto() if callable(proto) else proto
        return int(pair[1])
    for attr in ("cuda_stream", "ptr", "handle"):
        value = getattr(stream, attr, None)
        if value is not None:
            try:
                return int(value)
            except (TypeError, ValueError):
                continue
    raise JitkernTypeError(
        "stream: expected None, a jitkern.Stream, an int handle, or an object with "
        f"__cuda_stream__ / cuda_stream / ptr; got {type(stream).__name__}"
    )


class Event:
    """A CUDA event, timing enabled unless ``disable_timing``."""

    __slots__ = ("ptr", "_driver")

    def __init__(self, block: bool = False, disable_timing: bool = False):
        self._driver = d = drv()  # destroyed through the driver that made it
        driver.current_device_id()
        flags = 0
        if block:
            flags |= int(d.CUevent_flags.CU_EVENT_BLOCKING_SYNC)
        if disable_timing:
            flags |= int(d.CUevent_flags.CU_EVENT_DISABLE_TIMING)
        self.ptr = int(check(d.cuEventCreate(flags), "cuEventCreate"))

    def record(self, stream=None) -> "Event":
        check(drv().cuEventRecord(self.ptr, stream_handle(stream)), "cuEventRecord")
        return self

    def synchronize(self) -> None:
        check(drv().cuEventSynchronize(self.ptr), "cuEventSynchronize")

    def done(self) -> bool:
        (err,) = drv().cuEventQuery(self.ptr)
        return err == 0

    def elapsed_time(self, end: "Event") -> float:
        """Milliseconds from this event to ``end`` (both recorded and complete)."""
        return get_elapsed_time(self, end)

    def __del__(self):
        if getattr(self, "ptr", 0):
            try:
                self._driver.cuEventDestroy(self.ptr)
            except Exception:
                pass


_CAPTURE_MODES = {"global": 0, "thread_local": 1, "relaxed": 2}


def _capture_mode(mode) -> int:
    if mode is None:
        return _CAPTURE_MODES["relaxed"]
    if isinstance(mode, str) and mode in _CAPTURE_MODES:
        return _CAPTURE_MODES[mode]
    if isinstance(mode, int) and not isinstance(mode, bool) and mode in _CAPTURE_MODES.values():
        return mode
    raise JitkernValueError(
        f"begin_capture(mode): expected None, 'relaxed', 'thread_local', 'global' or 0-2, "
        f"got {mode!r}")


def _release(record) -> None:
    """Free the blocks a capture held (its graph was not made, or is gone)."""
    if record is not None:
        for ptr, stream in record.held:
            memory.free_now(ptr, stream)
        record.held.clear()


class Graph:
    """An executable CUDA graph, made by :meth:`Stream.end_capture` (CuPy's ``Graph``).

    ``launch(stream=None)`` replays it on ``stream`` (the current stream when None);
    ``upload(stream=None)`` prepares it on the device ahead of its first launch. Arrays
    allocated during the capture and still referenced afterwards are the graph's
    outputs: their addresses stay fixed and every launch rewrites them. The graph keeps
    them, and the blocks dropped during the capture, until it is destroyed.
    ``nodes()``, ``node()`` and ``update()`` list its kernel nodes and replace their
    arguments, grid or block in place, without a new capture (docs/graphs.md).
    """

    __slots__ = ("graph", "graphExec", "_keep", "_held", "_stream", "_launch_fn", "_nodes",
                 "_driver", "__weakref__")

    def __init__(self, *args, **kwargs):
        raise JitkernTypeError("Graph cannot be made directly: use Stream.end_capture() or "
                               "jitkern.graph.capture()")

    @classmethod
    def _instantiate(cls, graph, record) -> "Graph":
        d = drv()
        self = object.__new__(cls)
        self.graph, self.graphExec, self._keep, self._held = graph, None, [], []
        self._stream, self._nodes, self._driver = None, None, d  # destroyed by its own driver
        flags = int(d.CUgraphInstantiate_flags.CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH)
        self.graphExec = check(d.cuGraphInstantiate(graph, flags), "cuGraphInstantiate")
        self._launch_fn = d.cuGraphLaunch
        if record is not None:
            self._keep = [m for m in (r() for r in record.allocated.values()) if m is not None]
            self._held = record.held
            self._stream = record.stream  # the held blocks are freed on it
        return self

    def launch(self, stream=None) -> None:
        """Replay the graph on ``stream`` (the current stream when None)."""
        if stream is None:
            s = current_stream_handle() if STREAMS_IN_USE[0] else 0
        else:
            s = stream_handle(stream)
        (err,) = self._launch_fn(self.graphExec, s)
        if err != 0:
            check((err,), "cuGraphLaunch")

    def upload(self, stream=None) -> None:
        """Upload the graph to the device on ``stream`` without running it."""
        check(drv().cuGraphUpload(self.graphExec, stream_handle(stream)), "cuGraphUpload")

    # -- kernel nodes and their updates (runtime/graphnodes.py) ---------------------
    def nodes(self, kernel=None) -> list:
        """The graph's kernel nodes (:class:`~.graphnodes.KernelNode`) in capture order:
        all of them, or those launched from ``kernel`` (a kernel object or a bound
        launch). Found by walking the graph once, on the first call."""
        nodes = self._kernel_nodes()
        return list(nodes) if kernel is None else graphnodes.of(nodes, kernel)

    def node(self, kernel, index: int | None = None):
        """The kernel node launched from ``kernel``: its only one, or its ``index``-th
        (0 for the first launch of ``kernel`` in the capture)."""
        return graphnodes.find(self._kernel_nodes(), kernel, index)

    def update(self, node, /, *args, grid=None, block=None, shared_mem=None, **named):
        """Replace a kernel node's arguments in place; the next ``launch()`` uses them.

        ``node``: a node from :meth:`nodes`/:meth:`node`, a kernel with one node in the
        graph, or ``(kernel, index)``. The new arguments are given all by position (as to
        the kernel) or some by name (``x=new_x``); ``grid=``, ``block=``, ``shared_mem=``
        change the node's launch configuration (the captured one stays otherwise).
        Each value must keep the compiled kernel the node runs (same dtype, ndim and
        layout for a JIT kernel; the C type of a RawKernel's parameter): anything else is
        refused with :class:`~jitkern.KernelArgumentError`, to be captured again. The
        graph keeps the values it is given alive. Returns the node.
        """
        target = graphnodes.find(self._kernel_nodes(), node)
        graphnodes.update(target, args, named, grid, block, shared_mem)
        return target

    def update_many(self, updates) -> None:
        """Update several kernel nodes in one call: ``updates`` is an iterable of
        ``(node, args)`` pairs, ``args`` a tuple of every argument by position or a dict of
        some by name (``node`` as for :meth:`update`). The same checks as :meth:`update`,
        in order: a refused update raises with the earlier ones applied and its own node
        as it was. Cheaper than a loop of :meth:`update` calls (one call, no keyword
        arguments re-spread per node)."""
        graphnodes.update_many(self._kernel_nodes(), updates)

    def _kernel_nodes(self) -> list:
        nodes = self._nodes
        if nodes is None:
            nodes = self._nodes = graphnodes.walk(self.graph, self.graphExec)
        return nodes

    def debug_dot_str(self, flags: int = 0) -> str:
        """The graph in Graphviz DOT form (``cuGraphDebugDotPrint``), for debugging."""
        import os
        import tempfile

        fd, path = tempfile.mkstemp(suffix=".dot")
        os.close(fd)
        try:
            check(drv().cuGraphDebugDotPrint(self.graph, path.encode(), flags),
                  "cuGraphDebugDotPrint")
            with open(path) as f:
                return f.read()
        finally:
            os.unlink(path)

    def __del__(self):
        d = getattr(self, "_driver", None) or _driver_if_loaded()
        if d is None:
            return
        try:
            if getattr(self, "graphExec", None) is not None:
                d.cuGraphExecDestroy(self.graphExec)
            if getattr(self, "graph", None) is not None:
                d.cuGraphDestroy(self.graph)
        except Exception:
            pass
        for ptr, stream in getattr(self, "_held", ()):
            memory.free_now(ptr, stream)

    def __repr__(self) -> str:
        return f"<jitkern.Graph 0x{int(self.graphExec or 0):x}>"


def _driver_if_loaded():
    try:
        return drv()
    except Exception:
        return None


def get_elapsed_time(start: Event, end: Event) -> float:
    """Milliseconds between two recorded events (waits for ``end``)."""
    end.synchronize()
    return float(check(drv().cuEventElapsedTime(start.ptr, end.ptr), "cuEventElapsedTime"))


def synchronize() -> None:
    """Wait for all work on the current device."""
    if driver.simulating_without_gpu():
        return  # JITKERN_SIMULATE on a machine without a GPU: simulated work is done
    memory.refuse_during_capture(None, "jitkern.synchronize()")
    driver.current_device_id()
    check(drv().cuCtxSynchronize(), "cuCtxSynchronize")
    if debugcheck.PENDING:
        debugcheck.check_pending()


__all__ = [
    "CUDAError", "Device", "Event", "Graph", "Stream", "get_current_stream", "get_device_id",
    "get_elapsed_time", "stream_handle", "synchronize",
]
