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

On top of the driver's pool sits a small cache in Python (CuPy's caching allocator, in
miniature): a freed block goes to a free list per (device, stream, size rounded up to
512 bytes) and the next allocation of that size on that stream takes it back with no
driver call. Stream order makes that safe: the free was queued after every use of the
block on that stream, and the new owner's work is queued after the free. A block is
never handed to another stream (that allocation goes to the driver's pool, which orders
it). Only streams whose lifetime jitkern knows take part: the legacy default stream of
each device and the streams jitkern created (their cached blocks go back to the driver
when the stream is destroyed); a foreign stream handle, the per-thread default stream,
and any stream while it is being captured into a graph use the driver's pool directly,
so a capture records its allocations as graph nodes and graph memory never enters the
cache. The cache is returned to the driver on an out-of-memory retry, by
``jitkern.get_default_memory_pool().free_all_blocks()`` and at exit.
"""

from __future__ import annotations

import atexit
import weakref

from .. import config
from ..errors import InternalError, OutOfMemoryError, StreamCaptureError
from . import debugcheck, driver
from .driver import check, drv

_pools: dict[int, object] = {}

# The cache: (device id, stream handle, bucket bytes) -> device pointers of freed
# blocks of that bucket, last freed last. Streams whose blocks may be cached: the
# legacy default stream (0, and CU_STREAM_LEGACY = 1) and the streams jitkern made
# (added and removed by runtime.device.Stream).
_free: dict[tuple, list] = {}
CACHE_STREAMS: set = {0, 1}
BUCKET = 512  # cached blocks are rounded up to a multiple of this many bytes


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

    __slots__ = ("__weakref__", "_bucket", "_owner", "device_id", "ptr", "size", "stream")

    def __init__(self, ptr: int, size: int, device_id: int, stream: int, owner=None,
                 bucket: int = 0):
        self.ptr = ptr
        self.size = size
        self.device_id = device_id
        self.stream = stream
        self._owner = owner  # keeps a foreign allocation alive; None means we free it
        self._bucket = bucket  # its size in the cache; 0: freed to the driver's pool

    def __int__(self) -> int:
        return self.ptr

    def __del__(self):
        bucket = self._bucket  # nonzero only for blocks jitkern allocated outside a capture
        if bucket:
            stream = self.stream
            if stream in CACHE_STREAMS and (stream < 2 or _not_captured(stream)):
                blocks = _free.get((self.device_id, stream, bucket))
                if blocks is None:
                    _free[(self.device_id, stream, bucket)] = [self.ptr]
                else:
                    blocks.append(self.ptr)
                return
        if self._owner is None and self.ptr:
            stream = self.stream
            if CAPTURES and stream in CAPTURES and _hold(self.ptr, stream):
                return
            try:
                drv().cuMemFreeAsync(self.ptr, stream)
            except Exception:
                pass

    def __repr__(self) -> str:
        return f"<MemoryPointer 0x{self.ptr:x} {self.size} bytes on device {self.device_id}>"


class CachedBlock(MemoryPointer):
    """A block a generated launcher took straight from the legacy stream's free list of one
    size (runtime.launcher's alloc slot), put back on that list when collected: what
    MemoryPointer does for such a block, without its lookups (the legacy stream is always
    cached and never captured). One subclass per (device, size), :func:`block_class`, holds
    everything but the pointer, so a launcher makes one in two statements (no Python
    ``__init__`` call, the costliest part of an allocating launch)."""

    __slots__ = ()


def block_class(device_id: int, size: int) -> type:
    """The :class:`CachedBlock` class of ``size``-byte blocks of ``device_id``'s legacy
    stream: its ``size``, ``device_id``, ``stream`` (0), ``_bucket`` and ``_blocks`` (the
    free list, :func:`free_list`) are class attributes, so ``m = object.__new__(cls);
    m.ptr = ptr`` makes a block owning ``ptr``, which ``__del__`` appends to ``_blocks``."""
    key = (device_id, size)
    cls = _block_classes.get(key)
    if cls is None:
        blocks, bucket = free_list(device_id, 0, size)

        def __del__(self, _append=blocks.append):  # noqa: N807 - the finaliser
            _append(self.ptr)

        cls = _block_classes[key] = type("CachedBlock", (CachedBlock,), {
            "__slots__": (), "__module__": __name__, "size": size, "device_id": device_id,
            "stream": 0, "_owner": None, "_bucket": bucket, "_blocks": blocks,
            "__del__": __del__})
    return cls


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


def _not_captured(stream: int) -> bool:
    """True unless ``stream`` is being captured (by jitkern or by another library)."""
    if CAPTURES and stream in CAPTURES:
        return False
    err, status = drv().cuStreamIsCapturing(stream)
    return err == 0 and int(status) == 0  # CU_STREAM_CAPTURE_STATUS_NONE


_alloc_fn = None
# The allocator's driver-derived state: fresh under driver.use(fake), restored after.
_block_classes: dict = {}  # (device id, size) -> its CachedBlock class (block_class)
driver.resets(globals(), _alloc_fn=lambda: None, _pools=dict, _free=dict,
               _block_classes=dict)

#: Exact allocations (``JITKERN_EXACT_ALLOC=1``, ``jitkern.cuda.set_allocator(None)``): each
#: allocation is a ``cuMemAlloc`` of exactly the bytes asked for, freed when dropped; nothing
#: is rounded up or cached, so compute-sanitizer reports an access past an array's end.
_exact = config.settings.exact_alloc


class ExactPointer(MemoryPointer):
    """An allocation of its own (exact mode): ``cuMemFree`` when collected."""

    __slots__ = ()

    def __del__(self):
        try:
            drv().cuMemFree(self.ptr)
        except Exception:
            pass  # at exit the driver may be gone


def set_exact(on: bool) -> None:
    """Turn exact allocations on (the cache's free blocks go back to the driver) or off."""
    global _exact
    if on and not _exact and _pools:
        release_cached(synchronize=True)
    _exact = bool(on)
    config.settings.exact_alloc = _exact


def _exact_malloc(size: int, device_id: int, stream: int) -> MemoryPointer:
    d = drv()
    err, ptr = d.cuMemAlloc(size)
    if err == d.CUresult.CUDA_ERROR_INVALID_CONTEXT:
        driver.set_current(device_id)
        err, ptr = d.cuMemAlloc(size)
    if err == d.CUresult.CUDA_ERROR_OUT_OF_MEMORY:
        raise OutOfMemoryError(size, None, device_id)
    check((err,), "cuMemAlloc")
    return ExactPointer(int(ptr), size, device_id, stream)


def malloc(size: int, device_id: int, stream: int = 0) -> MemoryPointer:
    """``size`` bytes on ``device_id``, ordered on ``stream`` (a raw handle)."""
    global _alloc_fn
    if size == 0:
        return MemoryPointer(0, 0, device_id, stream, owner=())
    if _exact:
        return _exact_malloc(size, device_id, stream)
    bucket = (size + 511) & -512
    if stream in CACHE_STREAMS and (stream < 2 or _not_captured(stream)):
        blocks = _free.get((device_id, stream, bucket))
        if blocks:
            try:
                return MemoryPointer(blocks.pop(), size, device_id, stream, None, bucket)
            except IndexError:  # another thread took the last one
                pass
    else:
        bucket = 0  # not cached: a foreign or capturing stream
    if _alloc_fn is None:
        _alloc_fn = drv().cuMemAllocFromPoolAsync
    pool = _pools.get(device_id) or _pool(device_id)
    err, ptr = _alloc_fn(bucket or size, pool, stream)
    if err != 0:
        return _alloc_failed(err, size, device_id, stream, pool, bucket)
    mem = MemoryPointer(int(ptr), size, device_id, stream, None, bucket)
    if CAPTURES and stream in CAPTURES:
        CAPTURES[stream].allocated[mem.ptr] = weakref.ref(mem)
    return mem


def _alloc_failed(err, size, device_id, stream, pool, bucket) -> MemoryPointer:
    d = drv()
    if err == d.CUresult.CUDA_ERROR_INVALID_CONTEXT or err == d.CUresult.CUDA_ERROR_INVALID_VALUE:
        # No (or another) context current: make the device current and retry once.
        driver.set_current(device_id)
        err, ptr = d.cuMemAllocFromPoolAsync(bucket or size, pool, stream)
        if err == 0:
            return MemoryPointer(int(ptr), size, device_id, stream, None, bucket)
    if err == d.CUresult.CUDA_ERROR_OUT_OF_MEMORY and stream in CAPTURES:
        raise OutOfMemoryError(size, None, device_id)  # no synchronizing during a capture
    if err == d.CUresult.CUDA_ERROR_OUT_OF_MEMORY:
        # Give cached blocks back (ours and the pool's) and try once more.
        release_cached(device_id, synchronize=True)
        d.cuStreamSynchronize(stream)
        d.cuMemPoolTrimTo(pool, 0)
        err, ptr = d.cuMemAllocFromPoolAsync(bucket or size, pool, stream)
        if err == 0:
            return MemoryPointer(int(ptr), size, device_id, stream, None, bucket)
        try:
            free, _total = driver.mem_info(device_id)
        except Exception:
            free = None
        raise OutOfMemoryError(size, free, device_id)
    check((err,), "cuMemAllocFromPoolAsync")
    raise InternalError("unreachable: please report this")


def release_cached(device_id: int | None = None, stream: int | None = None,
                   synchronize: bool = False) -> int:
    """Return the cached free blocks (of ``device_id`` and ``stream`` where given) to the
    driver's pool, each freed on its own stream with its device's context current; with
    ``synchronize``, wait for those streams so that the pool can release the memory.
    Returns the number of blocks."""
    keys = [k for k in list(_free) if (device_id is None or k[0] == device_id)
            and (stream is None or k[1] == stream)]
    count = 0
    for dev in sorted({k[0] for k in keys}):
        count += _release_device(dev, [k for k in keys if k[0] == dev], synchronize)
    return count


def _release_device(device_id: int, keys: list, synchronize: bool) -> int:
    d = drv()
    pushed = len(_pools) > 1  # the legacy stream 0 is the current context's
    if pushed:
        check(d.cuCtxPushCurrent(driver.primary_context(device_id)), "cuCtxPushCurrent")
    count, streams = 0, set()
    try:
        for key in keys:
            blocks = _free[key]
            if blocks:  # a stream with cached blocks is alive (see forget_stream)
                streams.add(key[1])
            while blocks:  # emptied in place: launchers hold these lists (free_list)
                d.cuMemFreeAsync(blocks.pop(), key[1])
                count += 1
        if synchronize and not CAPTURES:
            for s in streams:
                d.cuStreamSynchronize(s)
    finally:
        if pushed:
            d.cuCtxPopCurrent()
    return count


def free_list(device_id: int, stream: int, size: int) -> tuple[list, int]:
    """(the cache's list of free blocks for ``size`` bytes on ``device_id``'s ``stream``, its
    bucket). The list object stays the same for the life of the process, so a generated
    launcher can keep it and take a block with ``MemoryPointer(blocks.pop(), size,
    device_id, stream, None, bucket)`` when it is not empty, as ``malloc`` would; only
    for the legacy stream (never captured), and ``malloc`` otherwise."""
    bucket = (size + 511) & -512
    return _free.setdefault((device_id, stream, bucket), []), bucket


def cache_stream(stream: int) -> None:
    """Let blocks freed on ``stream`` (a stream jitkern owns) be cached."""
    CACHE_STREAMS.add(stream)


def forget_stream(stream: int) -> None:
    """``stream`` is about to be destroyed: free its cached blocks on it, cache no more."""
    CACHE_STREAMS.discard(stream)
    if stream > 1:
        release_cached(stream=stream)
        for key in [k for k in _free if k[1] == stream]:
            del _free[key]  # its handle may be reused by a new stream


class MemoryPool:
    """The device memory jitkern allocates from (``jitkern.get_default_memory_pool()``,
    CuPy's name): each device's stream-ordered pool with jitkern's cache of free blocks
    in front of it (see the module doc)."""

    def free_all_blocks(self, stream=None) -> None:
        """Give every cached free block (on ``stream`` only, when given) back to the
        driver, and release the driver pools' unused memory to the device."""
        if stream is not None:  # a jitkern.Stream (or any object with .ptr) or a handle
            release_cached(stream=int(getattr(stream, "ptr", stream)))
            return
        release_cached(synchronize=True)
        d = drv() if _pools else None
        for pool in _pools.values():
            d.cuMemPoolTrimTo(pool, 0)

    def n_free_blocks(self) -> int:
        """How many freed blocks the cache holds."""
        return sum(len(blocks) for blocks in _free.values())

    def free_bytes(self) -> int:
        """Bytes held by the cache's free blocks."""
        return sum(key[2] * len(blocks) for key, blocks in _free.items())

    def used_bytes(self) -> int:
        """Bytes of the pools in use by live allocations (not counting the cache)."""
        return self._pool_attribute("CU_MEMPOOL_ATTR_USED_MEM_CURRENT") - self.free_bytes()

    def total_bytes(self) -> int:
        """Bytes the pools hold from the device (in use, cached or free in the pool)."""
        return self._pool_attribute("CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT")

    @staticmethod
    def _pool_attribute(name: str) -> int:
        d = drv() if _pools else None
        total = 0
        for pool in _pools.values():
            attr = getattr(d.CUmemPool_attribute, name)
            total += int(check(d.cuMemPoolGetAttribute(pool, attr), "cuMemPoolGetAttribute"))
        return total


    def malloc(self, size: int) -> MemoryPointer:
        """``size`` bytes on the current device, ordered on the legacy stream (CuPy's
        ``MemoryPool.malloc``; ``jitkern.cuda.set_allocator(pool.malloc)`` turns exact
        allocations off again)."""
        return malloc(int(size), driver.current_device_id(), 0)


_default_pool = MemoryPool()


def get_default_memory_pool() -> MemoryPool:
    """The pool every jitkern allocation comes from (CuPy's name)."""
    return _default_pool


@atexit.register
def _release_at_exit() -> None:
    CACHE_STREAMS.clear()  # frees from now on go straight to the driver
    try:
        release_cached()
    except Exception:  # noqa: BLE001, S110 - the driver may be gone at exit: nothing to tell
        pass


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
