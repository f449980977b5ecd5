"""Debug mode's device-side record and the host-side registry of pending checks.

A debug build (``@rawkernel(debug=True)``, ``JITKERN_DEBUG=1``, ``ElementwiseKernel(...,
debug=True)``) bounds-checks every array access on the device (and, in JIT kernels, every
read of a local that a path may leave unassigned). The first failing check of
a module records what failed in ``jk_debug_record`` (a ``__device__`` global of the
module, so one per binary and device) and the failing thread skips the access: it reads
or writes a scratch sink instead of the array.

After a debug launch the launcher calls :func:`launched`, which records an event on the
launch's stream and puts the kernel's :class:`Watch` in a registry. Every host
synchronisation point (``Stream.synchronize``, ``Device.synchronize``, copies to the host)
calls :func:`check_pending`: with no debug launch in flight that is one test of an empty
dict; otherwise each watch whose event completed reads its record and, when a check
failed, raises :class:`jitkern.KernelAssertionError` with the Python file:line, the
thread, the block, the index and the shape.

This module imports only the driver and the record's layout (:mod:`jitkern.debugrecord`,
which the compiler writes the C++ of): ``device.py`` calls into it.
"""

from __future__ import annotations

import threading

import numpy

from ..debugrecord import (  # noqa: F401 (kernels read the record's names here)
    DEVICE_SOURCE,
    MAX_DIMS,
    RECORD_DTYPE,
    RECORD_NAME,
    SINK_BYTES,
    Site,
)
from ..errors import InternalError, KernelAssertionError
from .driver import check, current_device_id, drv

#: What an access site indexes, as the message names it.
_KIND_TEXT = {
    "array": "",
    "shared": "shared array ",
    "local": "local array ",
    "raw": "raw argument ",
}


class Watch:
    """The debug record of one binary: its sites, where to find it on each device, and the
    event after its last launch per device.

    ``address_of(device_id)`` returns the ``(pointer, size)`` of ``jk_debug_record`` in the
    binary loaded on that device. ``label`` names the kernel in messages.
    """

    def __init__(self, label: str, sites, address_of):
        self.label = label
        self.sites = tuple(sites)
        self._address_of = address_of
        self._addresses: dict[int, tuple[int, int] | None] = {}
        self._events: dict[int, int] = {}

    def record_launch(self, device_id: int, stream: int) -> None:
        d = drv()
        event = self._events.get(device_id)
        if event is None:
            flags = int(d.CUevent_flags.CU_EVENT_DISABLE_TIMING)
            event = self._events[device_id] = int(check(d.cuEventCreate(flags), "cuEventCreate"))
        check(d.cuEventRecord(event, stream), "cuEventRecord")

    def done(self, device_id: int) -> bool:
        event = self._events.get(device_id)
        return event is None or drv().cuEventQuery(event)[0] == 0

    def wait(self, device_id: int) -> None:
        event = self._events.get(device_id)
        if event is not None:
            check(drv().cuEventSynchronize(event), "cuEventSynchronize")

    def read(self, device_id: int):
        """The record on ``device_id`` (a NumPy record), reset to 'no violation' when set;
        None when the binary has no record (no checked access survived compilation)."""
        where = self._addresses.get(device_id, False)
        if where is False:
            where = self._addresses[device_id] = self._address_of(device_id)
        if where is None:
            return None
        ptr, size = where
        if size != RECORD_DTYPE.itemsize:
            raise InternalError(
                f"debug record of {size} bytes, expected {RECORD_DTYPE.itemsize}: please report"
            )
        host = numpy.zeros((), RECORD_DTYPE)
        d = drv()
        check(d.cuMemcpyDtoH(host.ctypes.data, ptr, size), "cuMemcpyDtoH (debug record)")
        if host["flag"]:
            check(d.cuMemsetD8(ptr, 0, size), "cuMemsetD8 (debug record)")
        return host

    def error(self, record) -> KernelAssertionError:
        return KernelAssertionError(describe(self, record))

    def __del__(self):
        events, self._events = getattr(self, "_events", {}), {}
        for event in events.values():
            try:
                drv().cuEventDestroy(event)
            except Exception:
                pass


def describe(watch: Watch, record) -> str:
    """The message of a failed check: ``file.py:12: out-of-bounds index 1024 on axis 0 of x
    (shape (1024,)) in thread (0,0,0) of block (4,0,0)``, then the kernel."""
    site_id = int(record["site"])
    if not 0 <= site_id < len(watch.sites):
        raise InternalError(
            f"debug record names site {site_id} of {len(watch.sites)}: please report"
        )
    site = watch.sites[site_id]
    where = f"{site.file}:{site.line}: " if site.file else f"{watch.label}: "
    thread = ",".join(str(int(v)) for v in record["thread"])
    block = ",".join(str(int(v)) for v in record["block"])
    tail = f" ({watch.label})" if site.file else ""
    if site.kind == "unset":
        return (
            f"{where}local variable {site.name!r} is read before it is assigned in thread "
            f"({thread}) of block ({block}){tail}; on this path no assignment ran and debug "
            "mode read it as zero (only the first failed check since the last report is "
            "recorded)"
        )
    ndim = int(record["ndim"])
    dims = [int(v) for v in record["shape"][: min(ndim, MAX_DIMS)]]
    if ndim > MAX_DIMS:
        shape = "(" + ", ".join(map(str, dims)) + ", ...)"
    else:
        shape = str(tuple(dims))
    what = f"{_KIND_TEXT.get(site.kind, '')}{site.name}"
    index, axis = int(record["index"]), int(record["axis"])
    if axis < 0:
        access = (
            f"out-of-bounds flat index {index} of {what} (size {int(record['extent'])}, "
            f"shape {shape})"
        )
    else:
        access = f"out-of-bounds index {index} on axis {axis} of {what} (shape {shape})"
    return (
        f"{where}{access} in thread ({thread}) of block ({block}){tail}; debug mode skipped "
        "the access (only the first failed check since the last report is recorded)"
    )


# ---------------------------------------------------------------------------
# the registry: (id(watch), device) -> (watch, device) for launches not checked yet

PENDING: dict = {}
_lock = threading.Lock()


def launched(watch: Watch, device_id: int, stream: int) -> None:
    """Note a debug launch on ``stream`` (a raw handle) of the current device."""
    watch.record_launch(device_id, stream)
    with _lock:
        PENDING[(id(watch), device_id)] = (watch, device_id)


def check_pending() -> None:
    """Raise KernelAssertionError for the first finished debug launch whose check failed.

    Called by every synchronisation point; costs one dict test when nothing is pending.
    Launches still running stay pending (their stream was not the one synchronised).
    """
    if not PENDING:
        return
    _check(list(PENDING.values()))


def check_watches(watches, device_ids=()) -> None:
    """``kernel.check_debug()``: wait for the noted launches of ``watches`` and read their
    records on those devices and on ``device_ids`` (where launches that were not noted,
    bound launches and graph replays, may have recorded a failure; the caller has
    synchronised those devices)."""
    for watch in watches:
        for device_id in sorted(set(device_ids) | set(watch._events)):
            watch.wait(device_id)
            with _lock:
                PENDING.pop((id(watch), device_id), None)
            record = watch.read(device_id)
            if record is not None and record["flag"]:
                raise watch.error(record) from None


def synchronize_current() -> int:
    """Wait for all work of the current device (without checking); its id."""
    device_id = current_device_id()
    check(drv().cuCtxSynchronize(), "cuCtxSynchronize")
    return device_id


def _check(items) -> None:
    for watch, device_id in items:
        if not watch.done(device_id):
            continue
        with _lock:
            if PENDING.get((id(watch), device_id), (None,))[0] is not watch:
                continue
            del PENDING[(id(watch), device_id)]
        record = watch.read(device_id)
        if record is not None and record["flag"]:
            raise watch.error(record) from None
