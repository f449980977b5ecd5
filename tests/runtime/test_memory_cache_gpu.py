"""The allocator's cache on the GPU: blocks come back on the same stream and hold the
right data through many cycles, other streams and captures keep the driver pool's path,
and free_all_blocks / a destroyed stream give the cache back."""

import gc

import numpy as np
import pytest

import jitkern
from jitkern.runtime import memory

pytestmark = pytest.mark.gpu

POOL = jitkern.get_default_memory_pool


def fma_kernel():
    return jitkern.ElementwiseKernel(
        "float32 x, float32 y", "float32 z", "z = x * y + 1.0f", "cache_fma"
    )


def test_many_cycles_reuse_blocks_and_keep_results(rng):
    n = 4099  # not a multiple of the vector width or the block
    k = fma_kernel()
    seen = set()
    for cycle in range(200):
        xh = rng.standard_normal(n).astype(np.float32)
        yh = rng.standard_normal(n).astype(np.float32)
        x, y = jitkern.asarray(xh), jitkern.asarray(yh)
        poisoned = jitkern.full((n,), np.nan, np.float32)  # takes a cached block
        k(x, y, poisoned)
        z = k(x, y)  # an allocated output, from the cache after the first cycle
        seen.add(z.data.ptr)
        want = xh * yh + np.float32(1)
        np.testing.assert_allclose(z.get(), want, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(poisoned.get(), want, rtol=1e-6, atol=1e-6)
        del x, y, z, poisoned
    assert len(seen) <= 4  # the same few blocks went round and round


def test_a_freed_block_returns_on_its_stream_only(rng):
    nbytes = 1 << 16
    a = jitkern.empty(nbytes // 4, np.float32)
    ptr = a.data.ptr
    del a
    b = jitkern.empty(nbytes // 4, np.float32)
    assert b.data.ptr == ptr  # the legacy stream: its block came back
    del b
    s = jitkern.Stream()
    with s:
        c = jitkern.empty(nbytes // 4, np.float32)  # another stream: the driver's pool
        assert c.data.ptr != ptr
        host = rng.standard_normal(nbytes // 4).astype(np.float32)
        c.set(host)
        cptr = c.data.ptr
        del c
        d = jitkern.empty(nbytes // 4, np.float32)
        assert d.data.ptr == cptr  # back on the stream it was freed on
        d.fill(3.0)
        np.testing.assert_array_equal(d.get(), np.full(nbytes // 4, 3.0, np.float32))
        del d
    gc.collect()  # other tests' garbage freed now, not inside the count below
    before = POOL().n_free_blocks()
    del s
    gc.collect()
    assert POOL().n_free_blocks() == before - 1  # the destroyed stream's block went back


def test_free_all_blocks_empties_the_cache():
    arrays = [jitkern.empty(1000 + 512 * k, np.float64) for k in range(8)]
    del arrays
    pool = POOL()
    assert pool.n_free_blocks() >= 8 and pool.free_bytes() >= 8 * 8000
    used = pool.used_bytes()
    pool.free_all_blocks()
    assert pool.n_free_blocks() == 0 and pool.free_bytes() == 0
    assert pool.used_bytes() == used  # cached blocks were never counted as used
    assert pool.total_bytes() >= pool.used_bytes()


def test_capture_allocations_bypass_the_cache(rng):
    n = 3000
    k = fma_kernel()
    xh = rng.standard_normal(n).astype(np.float32)
    x = jitkern.asarray(xh)
    s = jitkern.Stream()
    with s:
        warm = jitkern.empty(n, np.float32)  # a block cached on s before the capture
        warm_ptr = warm.data.ptr
        del warm
        cached = POOL().n_free_blocks()
        k(x, x)  # load the module before capturing
        s.synchronize()
        s.begin_capture()
        out = k(x, x)  # a graph allocation node, not the cached block
        graph = s.end_capture()
    assert out.data.ptr != warm_ptr
    assert POOL().n_free_blocks() == cached  # the capture neither took nor added blocks
    graph.launch(s)
    s.synchronize()
    np.testing.assert_allclose(out.get(stream=s), xh * xh + 1, rtol=1e-6)
    del out
    assert POOL().n_free_blocks() == cached  # graph memory never enters the cache
    del graph
    gc.collect()


def test_reduction_scratch_comes_from_the_cache(rng):
    red = jitkern.ReductionKernel("float64 x", "float64 y", "x", "a + b", "y = a", "0", "c_sum")
    for _ in range(20):
        xh = rng.standard_normal(1 << 22)
        got = float(red(jitkern.asarray(xh)).get())
        assert got == pytest.approx(float(np.sum(xh)), rel=1e-12, abs=1e-9)
    assert POOL().n_free_blocks() >= 1  # the scratch buffers went back to the cache
    assert {0, 1} <= memory.CACHE_STREAMS
