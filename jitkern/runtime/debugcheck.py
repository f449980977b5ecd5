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

This module imports only the driver: ``device.py`` calls into it.
"""

from __future__ import annotations

import dataclasses
import threading

import numpy

from ..errors import InternalError, KernelAssertionError
from .driver import check, current_device_id, drv

#: The name of the record in every debug module.
RECORD_NAME = "jk_debug_record"
MAX_DIMS = 8  # dimensions of the shape kept in the record (more are shown as "...")
SINK_BYTES = 1024

#: C++ shared by every debug build (JIT kernels and string kernels), at global scope.
DEVICE_SOURCE = r"""
// ---- jitkern debug mode: the first failed bounds check of a launch is recorded here ----
constexpr int jk_debug_dims = %(dims)d;  // dimensions of the shape kept
struct jk_debug_record_t {
  unsigned int flag; int site; int axis; int ndim;
  long long index; long long extent;
  long long shape[%(dims)d];
  unsigned int thread[3]; unsigned int block[3];
};
__device__ jk_debug_record_t jk_debug_record;
// A failing access reads or writes here instead of out of bounds.
__device__ __align__(16) unsigned char jk_debug_sink[%(sink)d];
template <class T> __device__ __forceinline__ T* jk_debug_sink_for() {
  static_assert(sizeof(T) <= %(sink)d, "jitkern debug mode: element type too large");
  return reinterpret_cast<T*>(jk_debug_sink);
}
// Claims the record for the first failed check and fills it in, except the shape, which
// the caller writes when this returns true (no address of the caller's shape is taken,
// so arrays stay in registers on the path that passes).
__device__ __noinline__ bool jk_debug_claim(int site, int axis, long long index,
                                            long long extent, int ndim) {
  if (atomicCAS(&jk_debug_record.flag, 0u, 1u) != 0u) return false;  // not the first
  jk_debug_record.site = site;
  jk_debug_record.axis = axis;
  jk_debug_record.ndim = ndim;
  jk_debug_record.index = index;
  jk_debug_record.extent = extent;
  jk_debug_record.thread[0] = threadIdx.x;
  jk_debug_record.thread[1] = threadIdx.y;
  jk_debug_record.thread[2] = threadIdx.z;
  jk_debug_record.block[0] = blockIdx.x;
  jk_debug_record.block[1] = blockIdx.y;
  jk_debug_record.block[2] = blockIdx.z;
  return true;
}
""" % {"dims": MAX_DIMS, "sink": SINK_BYTES}

#: The host view of ``jk_debug_record_t`` (natural C alignment).
RECORD_DTYPE = numpy.dtype(
    [
        ("flag", "<u4"),
        ("site", "<i4"),
        ("axis", "<i4"),
        ("ndim", "<i4"),
        ("index", "<i8"),
        ("extent", "<i8"),
        ("shape", "<i8", (MAX_DIMS,)),
        ("thread", "<u4", (3,)),
        ("block", "<u4", (3,)),
    ],
    align=True,
)

#: What an access site indexes, as the message names it.
_KIND_TEXT = {
    "array": "",
    "shared": "shared array ",
    "local": "local array ",
    "raw": "raw argument ",
}


@dataclasses.dataclass(frozen=True)
class Site:
    """One checked access in the generated source: where it is and what it indexes.

    ``file``/``line`` are the user's Python line (None for string kernels); ``name`` is the
    indexed expression as written; ``kind`` is 'array', 'shared', 'local' or 'raw', or
    'unset' for a read of the local ``name`` that may run before any assignment of it.
    """

    file: str | None
    line: int | None
    name: str
    kind: str = "array"

    def to_json(self) -> list:
        return [self.file, self.line, self.name, self.kind]

    @classmethod
    def from_json(cls, data) -> "Site":
        file, line, name, kind = data
        return cls(file, line, name, kind)


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
