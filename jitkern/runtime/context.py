"""Which device is current, switching to an array's device, and ordering streams.

``current_device_id`` is :func:`.driver.current_device_id` (the one lookup, re-exported
here for the arrays layer).
"""

from __future__ import annotations

import threading

from . import driver, memory
from .driver import check, current_device_id, drv  # noqa: F401 - current_device_id: the one lookup, re-exported
from ..errors import StreamCaptureError

class on_device:
    """``with on_device(i):`` makes device ``i`` current for the block if it is not."""

    __slots__ = ("_previous", "device_id")

    def __init__(self, device_id: int):
        self.device_id = device_id
        self._previous = None

    def __enter__(self):
        if current_device_id() != self.device_id:
            self._previous = check(drv().cuCtxGetCurrent(), "cuCtxGetCurrent")
            driver.set_current(self.device_id)
        return self

    def __exit__(self, *exc):
        if self._previous is not None:
            drv().cuCtxSetCurrent(self._previous)
            self._previous = None


# Stream handles as the driver reads them: 0 and 1 are both the legacy default stream.
LEGACY = 1
PER_THREAD = 2

class _Events(threading.local):
    def __init__(self):
        self.by_device: dict[int, object] = {}  # device id -> a reusable event (timing off)


_events = _Events()  # per thread: a record and its wait must not interleave with another's
driver.resets(globals(), _events=_Events)  # event handles are the driver's: fresh under driver.use


def _event(device_id: int):
    ev = _events.by_device.get(device_id)
    if ev is None:
        d = drv()
        flags = int(d.CUevent_flags.CU_EVENT_DISABLE_TIMING)
        ev = _events.by_device[device_id] = check(d.cuEventCreate(flags), "cuEventCreate")
    return ev


def same_stream(a: int, b: int) -> bool:
    return a == b or (a in (0, LEGACY) and b in (0, LEGACY))


def order_after(consumer: int, producer: int | None, device_id: int) -> None:
    """Make stream ``consumer`` wait for the work queued so far on ``producer``.

    A no-op when they are the same stream (or ``producer`` is None). Recording
    and waiting on one reusable event is enough: the wait captures the event's
    state at the time of the call.
    """
    if producer is None or same_stream(consumer, producer):
        return
    if memory.CAPTURES and (consumer in memory.CAPTURES) != (producer in memory.CAPTURES):
        _order_across_capture(consumer)
        return
    d = drv()
    ev = _event(device_id)
    check(d.cuEventRecord(ev, producer), "cuEventRecord")
    check(d.cuStreamWaitEvent(consumer, ev, 0), "cuStreamWaitEvent")


def _order_across_capture(consumer: int) -> None:
    """One of the two streams is being captured into a graph (see runtime/graph.py).

    Work queued before the capture cannot be waited for by a graph, which runs later,
    whenever it is launched: the graph's launch stream orders it, so no wait is made.
    Work queued in the capture has not run: nothing outside the capture can wait for it.
    """
    if consumer in memory.CAPTURES:
        return
    raise StreamCaptureError(
        "an array written during a graph capture was used on another stream before the "
        "capture ended; its values exist only once the graph is launched")


def pointer_device(ptr: int) -> int | None:
    """The device that owns device memory at ``ptr`` (None if CUDA does not know it).

    ``CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL`` read through cuda.bindings 13.3 says 0 for
    memory of device 1 (seen on two H200s), so the device is found from the owning
    context (``cudaMalloc`` memory), memory pool (stream-ordered allocations) or
    physical allocation (``cuMemCreate``).
    """
    if driver.device_count() == 1:
        return 0 if _memory_type(ptr) else None
    d = drv()
    attrs = d.CUpointer_attribute
    err, ctx = d.cuPointerGetAttribute(attrs.CU_POINTER_ATTRIBUTE_CONTEXT, ptr)
    if err != 0:
        return None
    if int(ctx):
        return _context_device(ctx)
    err, pool = d.cuPointerGetAttribute(attrs.CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, ptr)
    if err == 0 and pool is not None and int(pool):
        return _pool_device(pool)
    dev = _mapped_device(ptr)
    if dev is not None:
        return dev
    err, dev = d.cuPointerGetAttribute(attrs.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr)
    return int(dev) if err == 0 else None


def _mapped_device(ptr: int) -> int | None:
    """The device of virtual-memory-management memory (``cuMemCreate``, e.g. JAX/XLA's)."""
    d = drv()
    err, handle = d.cuMemRetainAllocationHandle(ptr)
    if err != 0:
        return None
    try:
        err, prop = d.cuMemGetAllocationPropertiesFromHandle(handle)
        return int(prop.location.id) if err == 0 else None
    finally:
        d.cuMemRelease(handle)


def _memory_type(ptr: int) -> int:
    d = drv()
    err, kind = d.cuPointerGetAttribute(d.CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, ptr)
    return int(kind) if err == 0 else 0


def _context_device(ctx) -> int | None:
    for dev in range(driver.device_count()):
        if int(driver.primary_context(dev)) == int(ctx):
            return dev
    d = drv()
    check(d.cuCtxPushCurrent(ctx), "cuCtxPushCurrent")
    try:
        return int(check(d.cuCtxGetDevice(), "cuCtxGetDevice"))
    finally:
        d.cuCtxPopCurrent()


def _pool_device(pool) -> int | None:
    d = drv()
    for dev in range(driver.device_count()):
        default = check(d.cuDeviceGetDefaultMemPool(dev), "cuDeviceGetDefaultMemPool")
        if int(default) == int(pool):
            return dev
    location = d.CUmemLocation()
    location.type = d.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    for dev in range(driver.device_count()):
        location.id = dev
        err, flags = d.cuMemPoolGetAccess(pool, location)
        if err == 0 and int(flags) == int(d.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE):
            return dev
    return None
