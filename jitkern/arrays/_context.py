"""Which device is current, switching to an array's device, and ordering streams.

``current_device_id`` is on the allocation hot path: one ``cuCtxGetCurrent`` and a
dict lookup for the primary contexts jitkern knows.
"""

from __future__ import annotations

import threading

from ..backend import driver
from ..backend.driver import check, drv

_primary_ids: dict[int, int] = {}  # int(primary CUcontext) -> device id


def current_device_id() -> int:
    """The current device (device 0 made current if no context is)."""
    _err, ctx = drv().cuCtxGetCurrent()
    dev = _primary_ids.get(int(ctx))
    if dev is not None:
        return dev
    dev = driver.current_device_id()
    primary = driver.primary_context(dev)
    if int(check(drv().cuCtxGetCurrent(), "cuCtxGetCurrent")) == int(primary):
        _primary_ids[int(primary)] = dev
    return dev


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
    d = drv()
    ev = _event(device_id)
    check(d.cuEventRecord(ev, producer), "cuEventRecord")
    check(d.cuStreamWaitEvent(consumer, ev, 0), "cuStreamWaitEvent")
