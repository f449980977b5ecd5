"""Device memory from each device's stream-ordered memory pool.

The default pool of each device gets an unbounded release threshold the first
time jitkern allocates on it, so freed blocks stay in the pool and the next
allocation of a similar size is a cheap reuse rather than a ``cuMemAlloc``.
Freeing is stream ordered: a block returns to the pool after the work queued
on its stream before the free.
"""

from __future__ import annotations

from ..errors import InternalError, OutOfMemoryError
from . import driver
from .driver import check, drv

_pools: dict[int, object] = {}


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
            try:
                drv().cuMemFreeAsync(self.ptr, self.stream)
            except Exception:
                pass

    def __repr__(self) -> str:
        return f"<MemoryPointer 0x{self.ptr:x} {self.size} bytes on device {self.device_id}>"


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
    return MemoryPointer(int(ptr), size, device_id, stream)


def _alloc_failed(err, size, device_id, stream, pool) -> MemoryPointer:
    d = drv()
    if err == d.CUresult.CUDA_ERROR_INVALID_CONTEXT or err == d.CUresult.CUDA_ERROR_INVALID_VALUE:
        # No (or another) context current: make the device current and retry once.
        driver.set_current(device_id)
        err, ptr = d.cuMemAllocFromPoolAsync(size, pool, stream)
        if err == 0:
            return MemoryPointer(int(ptr), size, device_id, stream)
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
        check(drv().cuMemcpyHtoDAsync(dst, host_buffer, nbytes, stream), "cuMemcpyHtoDAsync")
        check(drv().cuStreamSynchronize(stream), "cuStreamSynchronize")


def memcpy_dtoh(host_buffer, src: int, nbytes: int, stream: int = 0) -> None:
    if nbytes:
        check(drv().cuMemcpyDtoHAsync(host_buffer, src, nbytes, stream), "cuMemcpyDtoHAsync")
        check(drv().cuStreamSynchronize(stream), "cuStreamSynchronize")


def memset_d8(dst: int, value: int, nbytes: int, stream: int = 0) -> None:
    if nbytes:
        check(drv().cuMemsetD8Async(dst, value & 0xFF, nbytes, stream), "cuMemsetD8Async")
