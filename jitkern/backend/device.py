"""Devices, streams and events.

Each device is used through its primary context, retained lazily. The current
stream is per thread: ``with stream:`` pushes it, leaving the block pops it.
"""

from __future__ import annotations

import threading

from ..errors import CUDAError, JitkernTypeError
from . import driver
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
        prev = self._saved.pop()
        if int(prev) != 0:
            check(drv().cuCtxSetCurrent(prev), "cuCtxSetCurrent")

    def synchronize(self) -> None:
        with self:
            check(drv().cuCtxSynchronize(), "cuCtxSynchronize")

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


def get_device_id() -> int:
    """The id of the current device (device 0 if no context is current)."""
    return driver.current_device_id()


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
    """A CUDA stream. ``Stream()`` creates a non-blocking stream on the current device.

    ``Stream.null`` is the legacy default stream. Use ``with stream:`` to make it
    current for launches and allocations that are not given a stream.
    """

    null: "Stream"

    __slots__ = ("ptr", "device_id", "_owned", "__weakref__")

    def __init__(self, null: bool = False, non_blocking: bool = True, priority: int = 0,
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
        self._owned = True

    @classmethod
    def from_external(cls, obj) -> "Stream":
        """Wrap any stream-like object (see :func:`stream_handle`) without owning it."""
        return cls(_handle=stream_handle(obj))

    def __cuda_stream__(self):
        return (0, self.ptr)

    def synchronize(self) -> None:
        check(drv().cuStreamSynchronize(self.ptr), "cuStreamSynchronize")

    def done(self) -> bool:
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
                drv().cuStreamDestroy(self.ptr)
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

    __slots__ = ("ptr",)

    def __init__(self, block: bool = False, disable_timing: bool = False):
        d = drv()
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
                drv().cuEventDestroy(self.ptr)
            except Exception:
                pass


def get_elapsed_time(start: Event, end: Event) -> float:
    """Milliseconds between two recorded events (waits for ``end``)."""
    end.synchronize()
    return float(check(drv().cuEventElapsedTime(start.ptr, end.ptr), "cuEventElapsedTime"))


def synchronize() -> None:
    """Wait for all work on the current device."""
    driver.current_device_id()
    check(drv().cuCtxSynchronize(), "cuCtxSynchronize")


__all__ = [
    "CUDAError", "Device", "Event", "Stream", "get_current_stream", "get_device_id",
    "get_elapsed_time", "stream_handle", "synchronize",
]
