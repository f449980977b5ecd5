"""Device memory from each device's stream-ordered memory pool.

The default pool of each device gets an unbounded release threshold the first
time jitkern allocates on it, so freed blocks stay in the pool and the next
allocation of a similar size is a cheap reuse rather than a ``cuMemAlloc``.
Freeing is stream ordered: a block returns to the pool after the work queued
on its stream before the free.

During a graph capture that jitkern began (``Stream.begin_capture``), allocations on
the capturing stream become the graph's allocation nodes and frees of them its free
nodes. A block allocated before the capture and dropped during it is not freed into
the graph (that would free memory the graph does not own): the capture holds it and
hands it to the :class:`~.device.Graph`, which frees it when the graph is destroyed.
Host copies, which synchronize, are refused on a capturing stream.
"""

from __future__ import annotations

import weakref

from ..errors import InternalError, OutOfMemoryError, StreamCaptureError
from . import debugcheck, driver
from .driver import check, drv

_pools: dict[int, object] = {}


class CaptureRecord:
    """What jitkern tracks about one capture it runs: blocks allocated in it (weakly),
    and blocks allocated before it that were dropped during it (held, not freed)."""

    __slots__ = ("allocated", "held", "stream")

    def __init__(self, stream=None):
        self.allocated: dict[int, weakref.ref] = {}
        self.held: list[tuple[int, int]] = []  # (ptr, stream handle)
        self.stream = stream  # the captured Stream, kept alive until the held blocks are freed


# Stream handle -> record, for the captures jitkern began and has not ended. Read on
# the allocation and free paths only while non-empty (one truth test otherwise).
CAPTURES: dict[int, CaptureRecord] = {}


def refuse_during_capture(stream: int, what: str) -> None:
    """Raise StreamCaptureError if jitkern is capturing on ``stream`` (or, for
    ``stream=None``, on any stream): ``what`` cannot be recorded into a graph."""
    if not CAPTURES:
        return
    if stream is None or stream in CAPTURES:
        raise StreamCaptureError(
            f"{what} cannot be done while stream 0x{(stream or next(iter(CAPTURES))):x} is "
            "being captured into a CUDA graph (it would wait for work that has not run); "
            "do it before begin_capture() or after end_capture()"
        )


def _pool(device_id: int):
    pool = _pools.get(device_id)
    if pool is None:
        d = drv()
        pool = check(d.cuDeviceGetDefaultMemPool(device_id), "cuDeviceGetDefaultMemPool")
        threshold = d.cuuint64_t(0xFFFFFFFFFFFFFFFF)
        check(d.cuMemPoolSetAttribute(
            pool, d.CUmemPool_attribute.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, threshold),
            "cuMemPoolSetAttribute")
        _pools[device_id] = pool
    return pool


class MemoryPointer:
    """An owned device allocation; returned to the pool when collected.

    ``ptr`` is the device address; ``size`` its byte count; ``device_id`` its
    device; ``stream`` the stream the free is ordered on.
    """

    __slots__ = ("ptr", "size", "device_id", "stream", "_owner", "__weakref__")

    def __init__(self, ptr: int, size: int, device_id: int, stream: int, owner=None):
        self.ptr = ptr
        self.size = size
        self.device_id = device_id
        self.stream = stream
        self._owner = owner  # keeps a foreign allocation alive; None means we free it

    def __int__(self) -> int:
        return self.ptr

    def __del__(self):
        if self._owner is None and self.ptr:
            if CAPTURES and self.stream in CAPTURES and _hold(self.ptr, self.stream):
                return
            try:
                drv().cuMemFreeAsync(self.ptr, self.stream)
            except Exception:
                pass

    def __repr__(self) -> str:
        return f"<MemoryPointer 0x{self.ptr:x} {self.size} bytes on device {self.device_id}>"


def _hold(ptr: int, stream: int) -> bool:
    """During a capture on ``stream``: keep ``ptr`` from being freed into the graph
    unless the graph allocated it. True when held."""
    record = CAPTURES[stream]
    if ptr in record.allocated:
        del record.allocated[ptr]
        return False
    record.held.append((ptr, stream))
    return True


def free_now(ptr: int, stream: int) -> None:
    """Return ``ptr`` to its pool, ordered on ``stream`` (errors ignored: used by finalizers)."""
    try:
        drv().cuMemFreeAsync(ptr, stream)
    except Exception:
        pass


_alloc_fn = None


def malloc(size: int, device_id: int, stream: int = 0) -> MemoryPointer:
    """``size`` bytes on ``device_id``, ordered on ``stream`` (a raw handle)."""
    global _alloc_fn
    if size == 0:
        return MemoryPointer(0, 0, device_id, stream, owner=())
    if _alloc_fn is None:
        _alloc_fn = drv().cuMemAllocFromPoolAsync
    pool = _pools.get(device_id) or _pool(device_id)
    err, ptr = _alloc_fn(size, pool, stream)
    if err != 0:
        return _alloc_failed(err, size, device_id, stream, pool)
    mem = MemoryPointer(int(ptr), size, device_id, stream)
    if CAPTURES and stream in CAPTURES:
        CAPTURES[stream].allocated[mem.ptr] = weakref.ref(mem)
    return mem


def _alloc_failed(err, size, device_id, stream, pool) -> MemoryPointer:
    d = drv()
    if err == d.CUresult.CUDA_ERROR_INVALID_CONTEXT or err == d.CUresult.CUDA_ERROR_INVALID_VALUE:
        # No (or another) context current: make the device current and retry once.
        driver.set_current(device_id)
        err, ptr = d.cuMemAllocFromPoolAsync(size, pool, stream)
        if err == 0:
            return MemoryPointer(int(ptr), size, device_id, stream)
    if err == d.CUresult.CUDA_ERROR_OUT_OF_MEMORY and stream in CAPTURES:
        raise OutOfMemoryError(size, None, device_id)  # no synchronizing during a capture
    if err == d.CUresult.CUDA_ERROR_OUT_OF_MEMORY:
        # Give cached blocks back and try once more before giving up.
        d.cuStreamSynchronize(stream)
        d.cuMemPoolTrimTo(pool, 0)
        err, ptr = d.cuMemAllocFromPoolAsync(size, pool, stream)
        if err == 0:
            return MemoryPointer(int(ptr), size, device_id, stream)
        try:
            free, _total = driver.mem_info(device_id)
        except Exception:
            free = None
        raise OutOfMemoryError(size, free, device_id)
    check((err,), "cuMemAllocFromPoolAsync")
    raise InternalError("unreachable: please report this")


def memcpy_dtod(dst: int, src: int, nbytes: int, stream: int = 0) -> None:
    if nbytes:
        check(drv().cuMemcpyAsync(dst, src, nbytes, stream), "cuMemcpyAsync")


def memcpy_htod(dst: int, host_buffer, nbytes: int, stream: int = 0) -> None:
    """Copy from a host object supporting the buffer protocol (synchronous w.r.t. host data)."""
    if nbytes:
        refuse_during_capture(stream, "copying host memory to the device")
        check(drv().cuMemcpyHtoDAsync(dst, host_buffer, nbytes, stream), "cuMemcpyHtoDAsync")
        check(drv().cuStreamSynchronize(stream), "cuStreamSynchronize")


def memcpy_dtoh(host_buffer, src: int, nbytes: int, stream: int = 0) -> None:
    if nbytes:
        refuse_during_capture(stream, "copying device memory to the host")
        check(drv().cuMemcpyDtoHAsync(host_buffer, src, nbytes, stream), "cuMemcpyDtoHAsync")
        check(drv().cuStreamSynchronize(stream), "cuStreamSynchronize")
    if debugcheck.PENDING:  # a copy to the host is a synchronisation point
        debugcheck.check_pending()


def memset_d8(dst: int, value: int, nbytes: int, stream: int = 0) -> None:
    if nbytes:
        check(drv().cuMemsetD8Async(dst, value & 0xFF, nbytes, stream), "cuMemsetD8Async")
