"""The allocator's cache of freed blocks, without a GPU: a counting fake driver stands in
for cuda.bindings, so every test sees exactly which driver calls an allocation and a free
make (a cache hit makes none)."""

import gc
import itertools
import random

import pytest

import jitkern
from jitkern.runtime import driver, memory
from jitkern.runtime.fakedriver import FakeDriver
from jitkern.errors import OutOfMemoryError

OWNED = 0x5000  # a stream handle jitkern made (registered with cache_stream)
FOREIGN = 0x6000  # a handle jitkern did not make (CuPy's, PyTorch's)


class CountingDriver(FakeDriver):
    """The fake driver, recording every allocator call; allocations come 4 KiB apart."""

    def __init__(self):
        super().__init__(devices=2)
        self.calls = []
        self.capturing = set()  # streams a (foreign) capture runs on
        self.oom = 0  # how many allocations fail with out of memory before one succeeds
        self._next = itertools.count(0x10000, 0x1000)

    def cuMemAllocFromPoolAsync(self, size, pool, stream):
        self.calls.append(("alloc", size, stream))
        if self.oom:
            self.oom -= 1
            return (self.CUresult.CUDA_ERROR_OUT_OF_MEMORY, 0)
        return (0, next(self._next))

    def cuMemFreeAsync(self, ptr, stream):
        self.calls.append(("free", ptr, stream))
        return (0,)

    def cuStreamIsCapturing(self, stream):
        self.calls.append(("is_capturing", stream))
        return (0, 1 if stream in self.capturing else 0)

    def cuStreamSynchronize(self, stream):
        self.calls.append(("sync", stream))
        return (0,)

    def cuMemPoolTrimTo(self, pool, size):
        self.calls.append(("trim", pool))
        return (0,)

    def cuCtxPushCurrent(self, ctx):
        self.calls.append(("push", ctx))
        return (0,)

    def cuCtxPopCurrent(self):
        self.calls.append(("pop",))
        return (0, None)

    def kinds(self):
        return [c[0] for c in self.calls]


@pytest.fixture
def fake():
    """The allocator against the counting driver, through the runtime's one seam
    (driver.use gives the allocator fresh pools and free lists, and restores them)."""
    d = CountingDriver()
    with driver.use(d):
        memory.cache_stream(OWNED)  # a stream jitkern made
        try:
            yield d
        finally:
            memory.forget_stream(OWNED)
            memory.CAPTURES.pop(OWNED, None)


def pool_of(fake, device):
    """The driver's memory pool of ``device`` (what cuDeviceGetDefaultMemPool answers)."""
    return fake.cuDeviceGetDefaultMemPool(device)[1]


def test_a_freed_block_is_reused_on_the_same_stream_without_a_driver_call(fake):
    m = memory.malloc(1000, 0, 0)
    ptr = m.ptr
    assert fake.calls == [("alloc", 1024, 0)]  # rounded up to the cache's 512-byte bucket
    del m
    assert fake.calls == [("alloc", 1024, 0)]  # the free went to the cache
    for _ in range(5):
        m = memory.malloc(1000, 0, 0)
        assert m.ptr == ptr and m.size == 1000
        del m
    m2 = memory.malloc(600, 0, 0)  # another size of the same 1024-byte bucket
    assert m2.ptr == ptr and m2.size == 600
    assert fake.calls == [("alloc", 1024, 0)]
    assert jitkern.get_default_memory_pool().n_free_blocks() == 0


def test_a_live_block_is_never_handed_out_twice(fake):
    blocks = [memory.malloc(256, 0, 0) for _ in range(4)]
    ptrs = {b.ptr for b in blocks}
    assert len(ptrs) == 4
    del blocks[1:]
    again = [memory.malloc(256, 0, 0) for _ in range(4)]
    assert blocks[0].ptr not in {b.ptr for b in again}
    assert len({b.ptr for b in again}) == 4
    assert fake.kinds().count("alloc") == 5  # three came back from the cache


def test_other_sizes_and_devices_do_not_share_blocks(fake):
    m = memory.malloc(512, 0, 0)
    ptr = m.ptr
    del m
    assert memory.malloc(1024, 0, 0).ptr != ptr  # another bucket
    assert memory.malloc(512, 1, 0).ptr != ptr  # stream 0 of another device
    assert memory.malloc(512, 0, 0).ptr == ptr


def test_a_block_is_not_reused_on_another_stream(fake):
    m = memory.malloc(512, 0, OWNED)
    ptr = m.ptr
    del m
    other = memory.malloc(512, 0, 0)  # the legacy stream: not ordered after OWNED's work
    assert other.ptr != ptr
    assert fake.calls[-1] == ("alloc", 512, 0)
    same = memory.malloc(512, 0, OWNED)
    assert same.ptr == ptr


def test_foreign_streams_use_the_driver_pool(fake):
    m = memory.malloc(512, 0, FOREIGN)
    ptr = m.ptr
    del m
    assert fake.calls == [("alloc", 512, FOREIGN), ("free", ptr, FOREIGN)]
    assert memory.malloc(512, 0, FOREIGN).ptr != ptr


def test_a_stream_captured_by_another_library_bypasses_the_cache(fake):
    warm = memory.malloc(512, 0, OWNED)
    del warm  # one cached block on OWNED
    fake.capturing.add(OWNED)
    m = memory.malloc(512, 0, OWNED)  # a graph allocation node, not the cached block
    assert ("alloc", 512, OWNED) in fake.calls
    assert m._bucket == 0
    del m
    assert fake.calls[-1][0] == "free"  # a free node of the graph
    assert jitkern.get_default_memory_pool().n_free_blocks() == 1  # the cache is untouched
    fake.capturing.clear()


def test_jitkern_captures_keep_their_path(fake, monkeypatch):
    before = memory.malloc(512, 0, OWNED)  # made before the capture: cacheable
    assert before._bucket == 512
    record = memory.CaptureRecord()
    memory.CAPTURES[OWNED] = record
    m = memory.malloc(512, 0, OWNED)
    assert m._bucket == 0 and m.ptr in record.allocated  # a graph node, recorded
    del m
    assert fake.calls[-1][0] == "free" and not record.allocated
    ptr = before.ptr
    del before  # dropped during the capture: held for the graph, not cached
    assert record.held == [(ptr, OWNED)]
    assert jitkern.get_default_memory_pool().n_free_blocks() == 0


def test_free_all_blocks_returns_the_cache_to_the_driver(fake):
    a, b, c = memory.malloc(512, 0, 0), memory.malloc(4096, 1, 0), memory.malloc(512, 0, OWNED)
    ptrs = (a.ptr, b.ptr, c.ptr)
    del a, b, c
    pool = jitkern.get_default_memory_pool()
    assert pool.n_free_blocks() == 3 and pool.free_bytes() == 512 + 4096 + 512
    fake.calls.clear()
    pool.free_all_blocks()
    frees = {(c[1], c[2]) for c in fake.calls if c[0] == "free"}
    assert frees == {(ptrs[0], 0), (ptrs[1], 0), (ptrs[2], OWNED)}
    # each device's blocks are freed with its context current; then the pools are trimmed
    assert ("push", fake.context(0)) in fake.calls and ("push", fake.context(1)) in fake.calls
    assert {c[1] for c in fake.calls if c[0] == "trim"} == {pool_of(fake, 0), pool_of(fake, 1)}
    assert pool.n_free_blocks() == 0
    fake.calls.clear()
    m = memory.malloc(512, 0, 0)
    assert fake.calls == [("alloc", 512, 0)]
    del m


def test_free_all_blocks_of_one_stream(fake):
    a, b = memory.malloc(512, 0, 0), memory.malloc(512, 0, OWNED)
    kept, released = a.ptr, b.ptr
    del a, b
    pool = jitkern.get_default_memory_pool()
    pool.free_all_blocks(stream=OWNED)
    assert pool.n_free_blocks() == 1 and ("free", released, OWNED) in fake.calls
    fake.calls.clear()
    assert memory.malloc(512, 0, 0).ptr == kept and fake.calls == []  # stream 0's stayed


def test_out_of_memory_returns_the_cache_and_retries(fake):
    cached = memory.malloc(8192, 0, 0)
    ptr = cached.ptr
    del cached
    fake.calls.clear()
    fake.oom = 1
    m = memory.malloc(4096, 0, 0)
    kinds = fake.kinds()
    assert kinds[0] == "alloc" and ("free", ptr, 0) in fake.calls
    assert kinds.index("trim") < len(kinds) - 1 and kinds[-1] == "alloc"
    assert m.ptr and jitkern.get_default_memory_pool().n_free_blocks() == 0
    fake.oom = 2
    with pytest.raises(OutOfMemoryError, match="out of memory on device 0"):
        memory.malloc(4096, 0, 0)


def test_a_destroyed_stream_gives_its_blocks_back(fake):
    m = memory.malloc(512, 0, OWNED)
    ptr = m.ptr
    del m
    memory.forget_stream(OWNED)
    assert ("free", ptr, OWNED) in fake.calls
    fake.calls.clear()
    jitkern.get_default_memory_pool().free_all_blocks()
    assert not [c for c in fake.calls if c[0] == "sync"]  # a destroyed stream is never synced
    assert OWNED not in memory.CACHE_STREAMS
    assert jitkern.get_default_memory_pool().n_free_blocks() == 0
    m = memory.malloc(512, 0, OWNED)  # now a foreign handle: straight to the driver
    p2 = m.ptr
    del m
    assert fake.calls[-1] == ("free", p2, OWNED)


def test_jitkern_streams_register_and_unregister(monkeypatch):
    from jitkern.runtime import device

    calls = []
    monkeypatch.setattr(memory, "cache_stream", lambda s: calls.append(("cache", s)))
    monkeypatch.setattr(memory, "forget_stream", lambda s: calls.append(("forget", s)))

    class StreamDriver(FakeDriver):
        class CUstream_flags:
            CU_STREAM_NON_BLOCKING = 1
            CU_STREAM_DEFAULT = 0

        def cuStreamCreateWithPriority(self, flags, priority):
            return (0, 0x7777)

        def cuStreamDestroy(self, handle):
            calls.append(("destroy", int(handle)))
            return (0,)

    with driver.use(StreamDriver()):
        s = device.Stream()
        assert calls == [("cache", 0x7777)]
        wrapped = device.Stream(_handle=0x8888)  # not ours: never registered
        del s, wrapped
        gc.collect()
        assert calls == [("cache", 0x7777), ("forget", 0x7777), ("destroy", 0x7777)]


def test_zero_bytes_touch_nothing(fake):
    m = memory.malloc(0, 0, 0)
    assert m.ptr == 0
    del m
    assert fake.calls == []


def test_a_launchers_free_list_stays_the_same_list(fake):
    blocks, bucket = memory.free_list(0, 0, 1000)
    assert bucket == 1024 and blocks == []
    m = memory.malloc(1000, 0, 0)
    ptr = m.ptr
    del m
    assert blocks == [ptr]  # the free went into the list the launcher holds
    jitkern.get_default_memory_pool().free_all_blocks()
    assert blocks == [] and memory.free_list(0, 0, 1000)[0] is blocks
    m = memory.malloc(1000, 0, 0)
    del m
    assert len(blocks) == 1


def test_a_launchers_block_reads_as_its_allocation_and_goes_back_to_its_list(fake):
    size = random.randrange(1, 1 << 16)
    cls = memory.block_class(1, size)  # what a generated launcher makes its outputs from
    blocks, bucket = memory.free_list(1, 0, size)
    assert cls._blocks is blocks and memory.block_class(1, size) is cls
    m = memory.malloc(size, 1, 0)  # a block of the driver's pool
    ptr = m.ptr
    del m
    assert blocks == [ptr]
    block = object.__new__(cls)  # the launcher's two statements
    block.ptr = blocks.pop()
    assert isinstance(block, memory.MemoryPointer) and int(block) == ptr
    assert (block.size, block.device_id, block.stream, block._bucket) == (size, 1, 0, bucket)
    del block
    assert blocks == [ptr]  # back in the list, no free to the driver
    assert memory.malloc(size, 1, 0).ptr == ptr  # and malloc hands it out again
    assert fake.kinds() == ["alloc"]
    jitkern.get_default_memory_pool().free_all_blocks()
    assert blocks == [] and memory.block_class(1, size)._blocks is blocks
