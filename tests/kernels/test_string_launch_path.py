"""The generated launch path of ElementwiseKernel/ReductionKernel, without a GPU.

A fake driver records every cuLaunchKernel; the packed parameter bytes are read back
from the pointer array the launcher passes. Checks that a repeated call takes the
generated path (no new runner, no analysis), that CuPy-like arrays are read through
their own attributes, and that a different layout misses the guard."""

import ctypes

import numpy as np
import pytest

import jitkern
from jitkern import KernelArgumentError
from jitkern.arrays import core
from jitkern.runtime import driver, fakedriver, memory
from jitkern.runtime.device import Stream
from jitkern.runtime import runner as _launcher
from jitkern.kernels import elementwise as E


class FakeDriver(fakedriver.FakeDriver):
    calls: list = []

    @classmethod
    def cuLaunchKernel(cls, handle, gx, gy, gz, bx, by, bz, shm, stream, params, extra):
        # The first three parameters are 8-byte pointers, the fourth the int count.
        ptrs = ctypes.cast(params, ctypes.POINTER(ctypes.c_void_p))
        values = [ctypes.c_uint64.from_address(ptrs[k]).value for k in range(3)]
        values.append(ctypes.c_int32.from_address(ptrs[3]).value)
        cls.calls.append(((gx, bx), values))
        return (0,)


class FakeFunction:
    name = "fake"
    watch = None  # not a debug build
    general: list = []

    def launch(self, grid, block, args, shared_mem=0, stream=None):
        self.general.append(args)

    def handle(self, device_id=None):
        return [(0, 8), (8, 8), (16, 8), (24, 4)]

    def param_layout(self, device_id=None):  # module.Function reads it from the CUBIN
        return self.handle(device_id)


class FakeMem:
    __slots__ = ("__weakref__", "ptr", "size")

    def __init__(self, ptr, size):
        self.ptr, self.size = ptr, size


@pytest.fixture
def kernel(monkeypatch):
    FakeDriver.calls = []
    heap = [1 << 20]

    def malloc(size, device_id, stream=0):
        heap[0] += 4096
        return FakeMem(heap[0], size)

    monkeypatch.setattr(memory, "malloc", malloc)
    analyses = []
    original = E.ElementwiseKernel._analyze

    def counting(self, *args):
        analyses.append(1)
        return original(self, *args)

    monkeypatch.setattr(E.ElementwiseKernel, "_analyze", counting)
    monkeypatch.setattr(E.ElementwiseKernel, "_function", lambda self, source: FakeFunction())
    k = jitkern.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x - y", "fake_sub")
    with driver.use(FakeDriver()):
        yield k, analyses


def arr(n, ptr):
    dt = np.dtype(np.float32)
    return core.make((n,), (4,), dt, ptr, None, None, 0, Stream.null, n)


class CupyLike:
    """Reads like a CuPy array: dtype, size, _c_contiguous, ndim, shape, strides, data."""

    __cuda_array_interface__ = None

    class _Mem:
        def __init__(self, ptr):
            self.ptr, self.device_id = ptr, 0

    class _Dev:
        id = 0

    def __init__(self, n, ptr):
        self.dtype, self.size, self._c_contiguous = np.dtype(np.float32), n, True
        self.data, self.device, self.ndim = self._Mem(ptr), self._Dev(), 1
        self.shape, self.strides = (n,), (4,)


CupyLike.__module__ = "cupy._core.core"


def last_runner(k):
    """The runner whose generated entry the kernel object calls now (the last layout)."""
    (run,) = [r for r in k._runners.values() if getattr(r, "entry", None) is k.func]
    return run


def test_repeated_calls_take_the_generated_path(kernel):
    k, analyses = kernel
    x, y, z = arr(1024, 4096), arr(1024, 8192), arr(1024, 16384)
    for _ in range(3):
        assert k(x, y, z) is z
    assert len(analyses) == 1 and len(k._runners) == 1
    assert k.func is last_runner(k).entry  # calls go straight to the generated entry
    assert FakeDriver.calls[-1] == ((1, 256), [4096, 8192, 16384, 1024])
    z2 = k(x, y)  # output allocated: another layout
    assert z2.shape == (1024,) and z2.dtype == np.float32
    assert FakeDriver.calls[-1][1][:2] == [4096, 8192]
    assert FakeDriver.calls[-1][1][2] == z2.data.ptr


def test_cupy_like_arrays_are_read_through_their_attributes(kernel):
    k, analyses = kernel
    x, y, z = CupyLike(2048, 4096), CupyLike(2048, 8192), CupyLike(2048, 16384)
    for _ in range(2):
        k(x, y, z)
    assert FakeDriver.calls[-1] == ((2, 256), [4096, 8192, 16384, 2048])
    assert len(analyses) == 1
    guarded = last_runner(k).guarded
    assert guarded((x, y, z), None) is z  # the guarded runner matches these arrays
    assert guarded((CupyLike(1000, 4096), y, z), None) is _launcher.MISS  # another size
    bent = CupyLike(2048, 4096)
    bent._c_contiguous = False
    assert guarded((bent, y, z), None) is _launcher.MISS
    assert guarded((arr(2048, 4096), y, z), None) is _launcher.MISS  # another type


def test_misaligned_pointer_takes_the_general_path(kernel):
    k, _analyses = kernel
    FakeFunction.general = []
    x, y, z = arr(1024, 4096), arr(1024, 8192), arr(1024, 16384)
    k(x, y, z)
    before = len(FakeDriver.calls)
    k(arr(1024, 4100), y, z)  # 4-byte aligned, not 16: the unvectorised variant
    assert len(FakeDriver.calls) == before
    assert [a[:3] for a in FakeFunction.general] == [(4100, 8192, 16384)]


def test_scalar_types_are_part_of_the_layout(kernel):
    k, analyses = kernel
    x, z = arr(64, 4096), arr(64, 8192)
    k(x, 2.0, z)
    k(x, np.float32(2.0), z)
    assert len(analyses) == 2  # a Python float and a NumPy float32 are two layouts


class CAIOnly:
    """Nothing but ``__cuda_array_interface__`` (like a Numba device array)."""

    def __init__(self, n, ptr):
        self._cai = {
            "shape": (n,),
            "typestr": "<f4",
            "data": (ptr, False),
            "version": 3,
            "strides": None,
        }

    @property
    def __cuda_array_interface__(self):
        return self._cai


def test_guard_checks_types_before_reading_type_specific_attributes(kernel):
    k, analyses = kernel
    cai = (CAIOnly(512, 4096), CAIOnly(512, 8192), CAIOnly(512, 16384))
    for _ in range(2):
        assert k(*cai) is cai[2]
    assert FakeDriver.calls[-1] == ((1, 256), [4096, 8192, 16384, 512])
    # Objects whose __cuda_array_interface__ cannot be read, in the same places: a miss
    # (the type check comes first), not an AttributeError from the CAI runner's read.
    other = (HostOnly(), HostOnly(), HostOnly())
    assert last_runner(k).guarded(other, None) is _launcher.MISS
    with pytest.raises(KernelArgumentError, match="input 'x'"):
        k(*other)
    cupy_like = (CupyLike(512, 4096), CupyLike(512, 8192), CupyLike(512, 16384))
    assert k(*cupy_like) is cupy_like[2]
    assert len(analyses) == 2


class HostOnly:
    """Like a CPU tensor of a library whose GPU tensors have the interface."""

    @property
    def __cuda_array_interface__(self):
        raise AttributeError("not on a GPU")


def test_record_scalars_are_packed_as_bytes_and_guarded_by_dtype(kernel):
    rec_t = np.dtype([("a", "<f4"), ("b", "<i4")])
    other_t = np.dtype([("a", "<i4"), ("b", "<f4")])
    rec = np.array([(1.5, 7)], rec_t)[0]
    seen = []

    class RecordFunction:
        name = "rec"

        def handle(self, device_id=None):
            return [(0, 8), (8, 8)]

        param_layout = handle

    class RecordDriver(fakedriver.FakeDriver):
        @staticmethod
        def cuLaunchKernel(handle, gx, gy, gz, bx, by, bz, shm, stream, params, extra):
            ptrs = ctypes.cast(params, ctypes.POINTER(ctypes.c_void_p))
            seen.append(
                (
                    ctypes.c_uint64.from_address(ptrs[0]).value,
                    ctypes.string_at(ptrs[1], 8),
                )
            )
            return (0,)

    with driver.use(RecordDriver()):
        step = _launcher.Step(
            RecordFunction(), (1, 1, 1), (32, 1, 1), [("p0", "Q"), _launcher.scalar_slot(1, rec_t)], ()
        )
        run = _launcher.bind_runner(_launcher.make_runner(
            kernel_name="rec",
            device_id=0,
            kinds=[("array", None), ("scalar", rec_t)],
            steps=[step],
            result="None",
            slow=lambda args, stream: "slow",
            first_args=(arr(8, 4096), rec),
        ))
        assert run.guarded((arr(8, 4096), rec), None) is None
        assert seen == [(4096, rec.tobytes())]
        other = np.array([(3, 2.5)], other_t)[0]
        assert run.guarded((arr(8, 4096), other), None) is _launcher.MISS


def test_keywords_leave_the_fast_entry_and_a_stream_keeps_it(kernel):
    k, analyses = kernel
    x, y, z = arr(1024, 4096), arr(1024, 8192), arr(1024, 16384)
    k(x, y, z)
    entry = k.func
    assert k(x, y, z, block_size=128) is z  # another launch shape: the general path
    assert FakeDriver.calls[-1][0] == (2, 128)  # four elements per thread
    assert k.func is entry  # block_size calls do not replace the entry
    assert k(x, y, z, stream=Stream.null) is z and k.func is entry
    assert FakeDriver.calls[-1][0] == (1, 256)
    with pytest.raises(KernelArgumentError, match="argument"):
        k(x, y, z, x)  # four arguments: the entry's unpacking misses, _launch explains
    assert len(analyses) == 2


def test_only_kernels_with_a_generated_runner_replace_their_call(kernel):
    k, _analyses = kernel
    assert k.func == k._launch  # before any call: the general call
    k(arr(64, 4096), arr(64, 8192), arr(64, 16384))
    assert k.func != k._launch
    empty = arr(0, 4096)
    k2 = jitkern.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x - y", "fake_sub")
    k2(empty, empty, empty)  # nothing to launch: no generated runner
    assert k2.func == k2._launch


def test_allocated_outputs_take_blocks_of_the_allocators_cache(kernel):
    k, _analyses = kernel
    x, y = arr(1024, 4096), arr(1024, 8192)
    k(x, y)  # builds the runner; its output comes from the (fake) malloc
    blocks, bucket = memory.free_list(0, 0, 4096)
    assert bucket == 4096
    blocks.append(0x77000)  # a block freed earlier on the legacy stream
    z = k(x, y)
    assert z.data.ptr == 0x77000 and blocks == [] and z._mem._bucket == 4096
    assert FakeDriver.calls[-1][1] == [4096, 8192, 0x77000, 1024]
    z2 = k(x, y)  # the list is empty: malloc
    assert z2.data.ptr not in (0x77000, 0)
    del z
    assert blocks == [0x77000]  # freed back into the list, no driver call


def test_a_reductions_default_call_goes_straight_to_its_entry_and_keywords_leave_it():
    rng = np.random.default_rng()
    rows, cols = int(rng.integers(2, 50)), int(rng.integers(2, 300))
    fake = fakedriver.FakeDriver()
    with driver.use(fake):
        k = jitkern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "entry_total")
        # arrays over addresses the fake driver never reads (it runs nothing): the test
        # checks results' shapes, the launched pointer and which call the kernel makes
        x = core.make((rows, cols), (4 * cols, 4), np.dtype(np.float32), 1 << 24, None, None,
                      0, Stream.null, rows * cols)
        assert k.func == k._launch  # before any call: the general call
        assert k(x).shape == ()  # builds the layout's runner and installs its entry
        entry = k.func
        assert entry != k._launch and entry == last_runner(k).entry
        assert k(x).shape == () and k.func is entry
        assert k(x, axis=1).shape == (rows,)  # a keyword: the general path, as asked
        assert k(x, keepdims=True).shape == (1, 1)
        out = core.make((), (), np.dtype(np.float32), 1 << 25, None, None, 0, Stream.null, 1)
        assert k(x, out=out) is out
        assert k.func is entry  # keyword calls do not replace the entry
        n = len(fake.launches)
        r = k(x)
        assert r.shape == () and len(fake.launches) == n + 1 and k.func is entry
        assert fake.launches[-1].words(1) == [x.data.ptr]  # the input's pointer, first
        x2 = arr(cols, 1 << 26)  # another layout: the general path, then its entry
        k(x2), k(x2)
        assert k.func is not entry and k.func == last_runner(k).entry
