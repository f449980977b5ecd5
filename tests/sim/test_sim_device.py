"""jitkern.simulated_device(): jitkern arrays in host memory, every kernel kind in the
simulator with the arrays' memory written in place, and a GPU's faults (out of memory, an
access outside every allocation, a compiled launch) raised as errors, never run."""

import numpy as np
import pytest

import jitkern
from jitkern import config
from jitkern.errors import CUDAError, InternalError, OutOfMemoryError
from jitkern.runtime import driver


def test_arrays_live_in_the_devices_host_memory(rng):
    h = rng.standard_normal((5, 7))
    with jitkern.simulated_device() as dev:
        a = jitkern.asarray(h)
        assert isinstance(a, jitkern.ndarray)
        block = dev.allocations[a.ptr]  # a pool block of its own, at an address of its own
        np.testing.assert_array_equal(block.data[: a.nbytes].view(np.float64).reshape(5, 7), h)
        assert driver.device_name(0) == "jitkern simulated device"
        np.testing.assert_array_equal(a[1:, ::-2].get(), h[1:, ::-2])


def test_new_memory_is_poisoned_and_zeros_clears_it():
    with jitkern.simulated_device():
        e = jitkern.empty(300, np.uint8)
        assert (e.get() == 0xA5).all()  # a kernel that writes nothing shows
        z = jitkern.zeros(300, np.uint8)
        assert not z.get().any()


def test_reading_past_an_allocation_is_an_illegal_address(rng):
    with jitkern.simulated_device():
        a = jitkern.asarray(rng.standard_normal(4).astype(np.float32))
        past = jitkern.ndarray((100_000,), np.float32, memptr=a.data)  # 400 kB over 16 B
        with pytest.raises(CUDAError, match=r"illegal address.*runs 399984 byte\(s\) past the "
                                            r"end of the allocation at 0x[0-9a-f]+ \(16 bytes\)"
                           ) as info:
            past.get()
        assert info.value.code == 700 and "cuMemcpyDtoH" in str(info.value)


def test_freed_memory_is_never_reused_and_faults():
    with jitkern.simulated_device() as dev:
        driver.set_current(0)
        ptr = driver.check(dev.cuMemAlloc(64))
        view = dev.view(ptr, 64)
        view[:] = 3
        driver.check(dev.cuMemFree(ptr))
        assert (view == 3).all()  # the NumPy view still owns its bytes: Python never reuses them
        with pytest.raises(CUDAError, match=r"allocation at 0x[0-9a-f]+ \(64 bytes\), which was "
                                            "freed"):
            dev.cuMemsetD8Async(ptr, 0, 64, 0)
        again = driver.check(dev.cuMemAlloc(64))
        assert again > ptr  # addresses are never handed out twice
        with pytest.raises(CUDAError, match="is in no allocation"):
            dev.cuMemcpyDtoDAsync(again, 12345, 8, 0)


def test_capacity_is_an_out_of_memory_error():
    with jitkern.simulated_device(capacity=1 << 20):
        with pytest.raises(OutOfMemoryError, match=r"2097152 bytes.*free memory") as info:
            jitkern.empty(2 << 20, np.uint8)
        assert isinstance(info.value, MemoryError)
        a = jitkern.full(1 << 18, 5, np.uint8)  # the pool works afterwards
        assert int(a.get().sum()) == 5 << 18


def test_compiled_launches_are_refused_loudly():
    with jitkern.simulated_device() as dev:
        with pytest.raises(InternalError, match="cuLaunchKernel .* reached jitkern's simulated "
                                                "device"):
            dev.cuLaunchKernel(1, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0)
        with pytest.raises(InternalError, match="cuModuleLoadData"):
            dev.cuModuleLoadData(b"\x7fELF")


def test_constructors_give_device_arrays_only_on_the_simulated_device(monkeypatch):
    monkeypatch.setattr(config.settings, "simulate", True)  # JITKERN_SIMULATE=1 alone
    assert type(jitkern.zeros(3)) is np.ndarray
    assert type(jitkern.random.rand(3)) is np.ndarray
    with jitkern.simulated_device():
        z = jitkern.arange(6, dtype=np.float32)
        assert type(z) is jitkern.ndarray
        np.testing.assert_array_equal(z.get(), np.arange(6, dtype=np.float32))
    assert config.settings.simulate and type(jitkern.ones(2)) is np.ndarray


def test_simulation_is_off_again_after_the_block():
    before = config.settings.simulate
    with jitkern.simulated_device():
        assert config.settings.simulate
    assert config.settings.simulate == before


# -- every kernel kind, with jitkern arrays written in place ---------------------------

TWICE = r"""extern "C" __global__ void twice(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2 * x[i];
}"""


def test_raw_kernel_writes_device_memory_in_place(rng):
    h = rng.standard_normal(300).astype(np.float32)
    k = jitkern.RawKernel(TWICE, "twice")
    with jitkern.simulated_device():
        x = jitkern.asarray(h)
        y = jitkern.full(300, np.nan, np.float32)
        ptr = y.ptr
        k((3,), (128,), (x, y, np.int32(300)))
        assert y.ptr == ptr
        np.testing.assert_array_equal(y.get(), h * 2)


def test_jit_kernel_sees_views_of_device_memory(rng):
    @jitkern.rawkernel()
    def add_one(x, n):
        i = jitkern.jit.grid(1)
        if i < n:
            x[i] = x[i] + 1

    h = rng.integers(-50, 50, 200).astype(np.int64)
    with jitkern.simulated_device():
        a = jitkern.asarray(h)
        add_one[2, 128](a, 200)
        np.testing.assert_array_equal(a.get(), h + 1)
        v = a[::-2]  # a strided view: the kernel writes through its strides
        add_one[1, 128](v, 100)
        want = h + 1
        want[::-2] += 1
        np.testing.assert_array_equal(a.get(), want)


def test_elementwise_and_reduction_kernels_return_device_arrays(rng):
    h = rng.standard_normal((6, 9))
    square = jitkern.ElementwiseKernel("T x", "T y", "y = x * x", "jk_test_square")
    total = jitkern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "jk_test_sum")
    with jitkern.simulated_device():
        a = jitkern.asarray(h)
        sq = square(a)
        assert isinstance(sq, jitkern.ndarray)
        np.testing.assert_array_equal(sq.get(), h * h)
        out = jitkern.asarray(np.full((6, 9), np.nan))  # poisoned
        square(a, out)
        np.testing.assert_array_equal(out.get(), h * h)
        s = total(a, axis=1)
        assert isinstance(s, jitkern.ndarray)
        np.testing.assert_allclose(s.get(), h.sum(axis=1), rtol=1e-13)


def test_raw_module_fuse_and_routines_run_in_the_simulator(rng):
    h = rng.standard_normal(50).astype(np.float32)
    module = jitkern.RawModule(code=r"""
    extern "C" __global__ void inc(float* x, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) x[i] += 1.0f;
    }""")
    axpy = jitkern.fuse()(lambda a, x, y: a * x + y)
    with jitkern.simulated_device():
        x = jitkern.asarray(h)
        module.get_function("inc")((1,), (64,), (x, np.int32(50)))  # nothing compiled
        np.testing.assert_array_equal(x.get(), h + np.float32(1))
        r = axpy(np.float32(3), x, x)
        assert isinstance(r, jitkern.ndarray)
        np.testing.assert_allclose(r.get(), 3 * (h + 1) + (h + 1), rtol=1e-6)
        s = jitkern.sqrt(jitkern.abs(x))
        assert isinstance(s, jitkern.ndarray)
        np.testing.assert_allclose(s.get(), np.sqrt(np.abs(h + 1)), rtol=1e-6)
        with pytest.raises(jitkern.FunctionNotFoundError, match="no __global__ function "
                                                                 "of this name.*'inc'"):
            module.get_function("missing")((1,), (64,), (x, np.int32(50)))


def test_two_devices_keep_their_memory_apart(rng):
    from jitkern.runtime.context import pointer_device

    hs = [rng.standard_normal(20 + i) for i in range(6)]
    with jitkern.simulated_device(devices=2) as dev:
        arrays = []
        for i, h in enumerate(hs):  # alternate devices: device 1's addresses are higher
            with jitkern.Device(i % 2):
                arrays.append(jitkern.asarray(h))
        for i, (a, h) in enumerate(zip(arrays, hs)):
            assert a.device.id == i % 2 == pointer_device(a.ptr) == dev.pointer_device(a.ptr)
            np.testing.assert_array_equal(a.get(), h)
        arrays[0][...] = arrays[1][:20]  # across devices: a peer copy
        np.testing.assert_array_equal(arrays[0].get(), hs[1][:20])


def test_strided_copies_and_conversions_run_the_copy_kernels(rng):
    h = rng.standard_normal((7, 9)) * 100
    with jitkern.simulated_device() as dev:
        a = jitkern.asarray(h)
        r = a[::-2, 1::3].astype(np.int32)  # below the source pointer: negative strides
        np.testing.assert_array_equal(r.get(), h[::-2, 1::3].astype(np.int32))
        f = a.astype(np.float16)
        np.testing.assert_array_equal(f.get(), h.astype(np.float16))
        a[1::2, ::-3] = 0  # a strided fill: jk_fill, also below the pointer
        want = h.copy()
        want[1::2, ::-3] = 0
        np.testing.assert_array_equal(a.get(), want)
        c = a.T.copy()
        assert c.flags.c_contiguous and c.ptr in dev.allocations
        np.testing.assert_array_equal(c.get(), want.T)


def test_an_array_kept_after_the_block_never_enters_a_memory_cache(rng):
    pool = jitkern.get_default_memory_pool()
    cached = pool.n_free_blocks()
    exact = config.settings.exact_alloc
    with jitkern.simulated_device() as dev:
        assert config.settings.exact_alloc  # one allocation per array, of its exact size
        kept = jitkern.asarray(rng.standard_normal(10))
        assert dev.allocations[kept.ptr].size == 80
    assert config.settings.exact_alloc == exact
    del kept  # freed after its driver is gone: nothing may be cached for the next device
    assert pool.n_free_blocks() == cached


def test_an_array_freed_inside_a_later_block_frees_nothing_there(rng):
    h = rng.standard_normal(30)
    with jitkern.simulated_device():
        kept = jitkern.asarray(rng.standard_normal(30))  # outlives its block
    with jitkern.simulated_device() as dev:
        live = jitkern.asarray(h)  # same size, first allocation: an address of its own
        assert live.ptr != kept.ptr
        del kept  # as the garbage collector may do at any time
        assert live.ptr in dev.allocations
        np.testing.assert_array_equal(live.get(), h)
