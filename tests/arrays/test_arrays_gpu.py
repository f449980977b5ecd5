"""jitkern.ndarray on a GPU, checked against NumPy on fresh random data.

Every test runs twice (the ``on_device`` fixture): ``[gpu]`` on a GPU, ``[sim]`` on
jitkern's simulated device (host memory; strided copies, conversions and fills run the
copy/fill kernels' C in the simulator). Tests of other libraries' GPU memory, of two devices
and of the GPU allocator's speed skip their ``[sim]`` item with ``sim_gap``."""

import gc

import numpy as np
import pytest

from jitkern.arrays import (
    _dlpack,
    arange,
    array,
    asarray,
    asnumpy,
    describe,
    empty,
    empty_like,
    full,
    full_like,
    ndarray,
    ones,
    ones_like,
    pointer_of,
    zeros,
    zeros_like,
)
from jitkern.runtime.device import Stream
from jitkern.errors import OutOfMemoryError

pytestmark = pytest.mark.usefixtures("on_device")

#: the [sim] item of a test of another library's GPU memory
FOREIGN = pytest.mark.sim_gap("another library's arrays live on a real GPU")

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]


def random(rng, shape, dtype, low=-100, high=100):
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind == "u":
        return rng.integers(0, high, shape).astype(dt)
    if dt.kind == "i":
        return rng.integers(low, high, shape).astype(dt)
    if dt.kind == "c":
        return (rng.uniform(low, high, shape) + 1j * rng.uniform(low, high, shape)).astype(dt)
    return rng.uniform(low, high, shape).astype(dt)


def assert_same(dev, host):
    got = dev.get() if isinstance(dev, ndarray) else dev
    assert got.shape == host.shape
    assert got.dtype == host.dtype
    np.testing.assert_array_equal(got, host)


# -- round trips --------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (5, 7), (2, 3, 4), (3, 0, 2)])
def test_round_trip(rng, dtype, shape):
    h = random(rng, shape, dtype)
    a = asarray(h)
    assert a.shape == h.shape and a.dtype == h.dtype
    # C-contiguous like h (the strides of an empty array are free to differ)
    # (ascontiguousarray makes a 0-d array 1-d, so a 0-d array's strides are ())
    want = np.ascontiguousarray(h).strides if np.ndim(h) else ()
    assert a.strides == want or not np.size(h)
    assert a.size == h.size and a.ndim == h.ndim and a.nbytes == h.nbytes
    assert a.itemsize == h.itemsize and a.flags.c_contiguous and a.flags.owndata
    assert_same(a, h)
    assert_same(asnumpy(a), h)
    np.testing.assert_array_equal(np.asarray(a), h)


def test_fortran_round_trip(rng):
    h = np.asfortranarray(random(rng, (4, 6), "float32"))
    a = asarray(h)
    assert a.flags.f_contiguous and not a.flags.c_contiguous
    assert_same(a, h)
    f = a.get(order="F")
    assert f.flags.f_contiguous
    np.testing.assert_array_equal(f, h)


def test_set_and_get_with_stream(rng):
    h = random(rng, (64, 33), "float64")
    s = Stream()
    a = empty(h.shape, h.dtype)
    a.set(h, stream=s)
    np.testing.assert_array_equal(a.get(stream=s), h)
    with pytest.raises(ValueError, match="shape mismatch"):
        a.set(h[:3])


def test_set_casts_like_numpy(rng):
    a = empty(5, np.int32)
    a.set(np.array([1.7, -2.2, 3.0, 4.9, 0.0]))
    np.testing.assert_array_equal(a.get(), np.array([1, -2, 3, 4, 0], np.int32))


# -- views ----------------------------------------------------------------------

VIEW_KEYS = [
    np.s_[::-1], np.s_[1:, ::-2], np.s_[..., None, 1], np.s_[2], np.s_[-1, ::3],
    np.s_[::2, ::-1, 1:3], np.s_[None, :, 0, None], np.s_[5:1:-2, ..., ::-1], np.s_[:, :0],
]


@pytest.mark.parametrize("key", VIEW_KEYS, ids=repr)
def test_views(rng, key):
    h = random(rng, (6, 5, 4), "float32")
    a = asarray(h)
    v = a[key]
    hv = h[key]
    assert v.shape == hv.shape
    assert v.strides == hv.strides or not hv.size
    assert v.base is a and not v.flags.owndata
    assert_same(v, hv)
    assert_same(v.copy(), hv.copy())
    assert v.copy().flags.c_contiguous


def test_view_pointer_and_data(rng):
    h = random(rng, (6, 5), "int32")
    a = asarray(h)
    v = a[2:, 1]
    assert v.data.ptr == a.data.ptr + 2 * 20 + 4 == v.ptr == pointer_of(v)
    assert v.data.mem is a.data.mem
    assert v.device.id == a.device.id
    del a
    gc.collect()
    assert_same(v, h[2:, 1])  # the base allocation outlives the view's parent name


def test_strided_get_through_device_gather(rng):
    h = random(rng, (4096,), "float64")
    a = asarray(h)
    v = a[::-1000]  # the span is far larger than the data: gathered on the device first
    assert_same(v, h[::-1000])


def test_reshape_ravel_transpose(rng):
    h = random(rng, (6, 4, 5), "int16")
    a = asarray(h)
    r = a.reshape(4, -1)
    assert r.ptr == a.ptr and r.base is a
    assert_same(r, h.reshape(4, -1))
    assert_same(a.reshape((120,)), h.reshape(120))
    assert_same(a.T, h.T)
    assert_same(a.transpose(1, 0, 2), h.transpose(1, 0, 2))
    assert_same(a.swapaxes(0, 2), h.swapaxes(0, 2))
    assert_same(a.T.ravel(), h.T.ravel())  # non-contiguous: copied, as NumPy
    assert_same(a.T.reshape(-1, 6), h.T.reshape(-1, 6))
    assert_same(a[:, ::2].reshape(6, -1), h[:, ::2].reshape(6, -1))
    assert_same(a.reshape(6, 20, order="F"), h.reshape(6, 20, order="F"))
    assert_same(a[::-1].ravel(), h[::-1].ravel())
    assert_same(a.flatten(), h.flatten())
    assert_same(a[:, :1].squeeze(), h[:, :1].squeeze())
    assert a.ravel().ptr == a.ptr
    with pytest.raises(ValueError, match="cannot reshape"):
        a.reshape(7, -1)


# -- copies, conversions, fills ------------------------------------------------

CAST_PAIRS = [(s, d) for s in DTYPES for d in ("float64", "int32")] + \
             [("float64", d) for d in DTYPES] + \
             [("float16", "int8"), ("complex64", "bool"), ("bool", "complex128"),
              ("uint8", "float16"), ("complex128", "complex64"), ("int64", "uint16"),
              ("float32", "complex64"), ("float16", "float32")]


@pytest.mark.parametrize("src,dst", sorted(set(CAST_PAIRS)))
def test_astype(rng, src, dst):
    # values every type holds exactly, so the casts are well defined
    h = rng.integers(0, 100, (7, 9)).astype(src)
    a = asarray(h)
    assert_same(a.astype(dst), h.astype(dst))
    assert_same(a[::-2, 1::3].astype(dst), h[::-2, 1::3].astype(dst))


def test_astype_rounding(rng):
    h = rng.standard_normal(1000) * 1000
    a = asarray(h)
    assert_same(a.astype(np.float32), h.astype(np.float32))
    assert_same(a.astype(np.float16), h.astype(np.float16))
    assert_same(a.astype(np.int32), h.astype(np.int32))  # truncation toward zero
    c = (h + 1j * h[::-1]).astype(np.complex128)
    with pytest.warns(np.exceptions.ComplexWarning):
        expected = c.astype(np.float32)
    assert_same(asarray(c).astype(np.float32), expected)


def test_astype_no_copy(rng):
    a = asarray(random(rng, 5, "float32"))
    assert a.astype(np.float32, copy=False) is a
    assert a.astype(np.float32) is not a


def test_astype_keeps_fortran_order(rng):
    h = np.asfortranarray(random(rng, (3, 4), "int32"))
    b = asarray(h).astype(np.float64)
    assert b.flags.f_contiguous
    assert_same(b, h.astype(np.float64))


@pytest.mark.parametrize("dtype", DTYPES)
def test_fill(rng, dtype):
    h = random(rng, (9, 8), dtype)
    value = random(rng, (), dtype)[()]
    a = asarray(h)
    a.fill(value)
    h.fill(value)
    assert_same(a, h)
    a[1::2, ::-3] = 0  # a non-contiguous fill: the kernel path
    h[1::2, ::-3] = 0
    assert_same(a, h)


@pytest.mark.parametrize("value,dtype", [(0, "float64"), (1.5, "float64"), (-1, "int64"),
                                         (0x01010101, "int32"), (3 + 4j, "complex128"),
                                         (2.5, "float16"), (True, "bool"), (7, "uint8")])
def test_fill_patterns(value, dtype):
    a = empty((33, 3), dtype)
    other = (not value) if dtype == "bool" else value + 17
    a.set(np.full((33, 3), other, dtype))  # poisoned: fill(0) into recycled zeros proves nothing
    a.fill(value)
    assert_same(a, np.full((33, 3), value, dtype))
    a[1:].fill(value - 1 if dtype != "bool" else False)  # an odd start address
    expected = np.full((33, 3), value, dtype)
    expected[1:] = value - 1 if dtype != "bool" else False
    assert_same(a, expected)


def test_setitem(rng):
    h = random(rng, (8, 6), "float32")
    a = asarray(h)
    row = random(rng, 6, "float64")
    a[2] = row
    h[2] = row
    a[::2, ::-1] = 5
    h[::2, ::-1] = 5
    block = random(rng, (3, 2), "int64")
    a[1:4, 2:4] = block
    h[1:4, 2:4] = block
    a[:, 0] = asarray(h[:, 5].copy())
    h[:, 0] = h[:, 5]
    a[4:] = asarray(random(rng, 6, "float32")[::-1].copy())[None, :]  # broadcast a device row
    h[4:] = a[4].get()
    a[...] = a[::-1]  # overlapping source and destination
    h[...] = h[::-1].copy()
    assert_same(a, h)
    a[1:] = a[:-1]
    h[1:] = h[:-1].copy()
    assert_same(a, h)
    a[0, 0] = np.float32(-3)
    h[0, 0] = -3
    assert_same(a, h)
    with pytest.raises(ValueError, match="broadcast"):
        a[:2] = np.zeros((3, 6))


def test_copy_non_contiguous(rng):
    for dtype in ("uint8", "float16", "int32", "float64", "complex128"):
        h = random(rng, (10, 11, 3), dtype)
        a = asarray(h)
        for v, hv in ((a[::-1, 2:, ::2], h[::-1, 2:, ::2]), (a.transpose(2, 0, 1), h.transpose(2, 0, 1))):
            c = v.copy()
            assert c.flags.c_contiguous and c.ptr != v.ptr
            assert_same(c, hv.copy())
            assert_same(v.copy(order="F"), np.asfortranarray(hv))


# -- constructors ----------------------------------------------------------------


def dirty_pool(shape, dtype):
    """Free a block of this size holding nonzero bytes, so that the pool's next allocation
    of the size is likely to reuse it: a zeros() that forgot to clear would then show."""
    full(shape, 0x5A, dtype)


def test_constructors(rng):
    dirty_pool((3, 4), np.int16)
    assert_same(zeros((3, 4), np.int16), np.zeros((3, 4), np.int16))
    assert_same(ones(5), np.ones(5))
    assert_same(ones((2, 2), np.complex64), np.ones((2, 2), np.complex64))
    assert_same(full((2, 3), 7), np.full((2, 3), 7))
    assert_same(full((2, 3), 2.5, np.float32), np.full((2, 3), 2.5, np.float32))
    assert_same(arange(10), np.arange(10))
    assert_same(arange(2, 11, 3, dtype=np.float32), np.arange(2, 11, 3, dtype=np.float32))
    assert_same(arange(1.0, 0.0, -0.25), np.arange(1.0, 0.0, -0.25))
    e = empty((4, 5), np.uint32, order="F")
    assert e.shape == (4, 5) and e.flags.f_contiguous and e.dtype == np.uint32
    h = np.asfortranarray(random(rng, (3, 4), "float32"))
    a = asarray(h)
    assert empty_like(a).flags.f_contiguous and empty_like(a).shape == (3, 4)
    dirty_pool(h.shape, h.dtype)
    assert_same(zeros_like(a), np.zeros_like(h))
    assert_same(ones_like(a, dtype=np.int8), np.ones_like(h, dtype=np.int8))
    assert_same(full_like(h, 3), np.full_like(h, 3))
    assert_same(zeros_like(a, shape=(2, 2)), np.zeros((2, 2), np.float32))
    assert_same(asarray([[1, 2], [3, 4]], dtype=np.float16), np.array([[1, 2], [3, 4]], np.float16))
    assert_same(asarray(3.5), np.asarray(3.5))
    assert_same(asarray(np.arange(6, dtype=">i4")), np.arange(6, dtype=np.int32))


def test_array_copy_semantics(rng):
    h = random(rng, 10, "float32")
    a = asarray(h)
    assert asarray(a) is a
    b = array(a)
    assert b.ptr != a.ptr
    assert_same(b, h)
    assert array(a, copy=False) is a
    assert array(a, copy=None) is a
    assert array(a, dtype=np.float64).dtype == np.float64
    with pytest.raises(ValueError, match="copy=False"):
        array(h, copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        array(a, dtype=np.int8, copy=False)
    assert_same(array([1, 2, 3]), np.array([1, 2, 3]))


def test_unsupported_dtypes():
    with pytest.raises(TypeError, match="do not support dtype"):
        asarray(np.array(["a", "b"]))
    with pytest.raises(TypeError, match="do not support dtype"):
        empty(3, np.longdouble)
    with pytest.raises(TypeError, match="do not support dtype"):
        asarray([object()])


def test_repr_and_str(rng):
    h = random(rng, (3, 4), "float32")
    a = asarray(h)
    assert repr(a) == repr(h)
    assert repr(a).startswith("array([[") and repr(a).endswith("dtype=float32)")
    assert str(a) == str(h)
    assert repr(asarray(np.arange(3))) == "array([0, 1, 2])"


def test_scalar_conversions():
    a = asarray(np.array([2.5]))
    assert float(a) == 2.5 and a.item() == 2.5 and bool(a)
    assert int(asarray(np.int64(7))) == 7
    assert len(asarray(np.zeros((4, 2)))) == 4
    with pytest.raises(TypeError, match="unsized"):
        len(asarray(np.float32(1)))
    assert [x.item() for x in asarray(np.arange(3))] == [0, 1, 2]
    with pytest.raises(ValueError, match="NumPy needs a copy"):
        np.asarray(a, copy=False)


def test_out_of_memory():
    with pytest.raises(OutOfMemoryError) as info:
        empty(1 << 50, np.uint8)  # 1 PiB
    message = str(info.value)
    assert "1125899906842624 bytes" in message and "free memory" in message
    assert isinstance(info.value, MemoryError)
    a = empty(1 << 20, np.float32)  # the pool still works afterwards
    a.fill(1)
    assert a.get().sum() == 1 << 20


@pytest.mark.sim_gap("times the GPU's stream-ordered pool")
def test_allocation_loop_is_fast():
    import time

    for _ in range(100):
        empty(1 << 20, np.float32)
    # the best of several rounds: other processes (pytest-xdist workers) share the CPU, and
    # a round they interrupt says nothing about the allocator
    n, rounds = 400, []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(n):
            empty(1 << 20, np.float32)
        rounds.append((time.perf_counter() - t0) / n)
    per = min(rounds)
    assert per < 50e-6, f"empty+free took {per * 1e6:.1f} us"


def test_streams_order_work(rng):
    s = Stream()
    with s:
        a = empty(1 << 22, np.float32)
        a.fill(3)
        assert a.stream == s.ptr
    # read on the legacy default stream: must see the fill done on s
    np.testing.assert_array_equal(a.get()[::4096], np.full(1024, 3, np.float32))
    assert a.__cuda_array_interface__["stream"] == s.ptr
    assert zeros(3).__cuda_array_interface__["stream"] == 1


# -- interop ------------------------------------------------------------------------


def test_cuda_array_interface(rng):
    h = random(rng, (4, 6), "float32")
    a = asarray(h)
    cai = a.__cuda_array_interface__
    assert cai["version"] == 3 and cai["typestr"] == "<f4" and cai["strides"] is None
    assert cai["data"] == (a.ptr, False) and cai["shape"] == (4, 6)
    v = a[:, ::-2]
    cai = v.__cuda_array_interface__
    assert cai["strides"] == (24, -8) and cai["data"][0] == v.ptr


def test_describe_and_pointer(rng):
    a = asarray(random(rng, (3, 5), "int64"))
    info = describe(a)
    assert (info.ptr, info.shape, info.strides, info.dtype) == (a.ptr, a.shape, a.strides, a.dtype)
    assert info.device_id == a.device.id and info.owner is a and not info.readonly
    with pytest.raises(TypeError, match="jitkern.asarray"):
        describe(np.zeros(3))


def test_dlpack_export_reimport(rng):
    h = random(rng, (5, 6), "complex64")
    a = asarray(h)
    before = _dlpack.live_count()
    for cap in (a.__dlpack__(), a.__dlpack__(max_version=(1, 0)), a[::-1, 1::2].__dlpack__(stream=2)):
        from jitkern.arrays import from_dlpack

        b = from_dlpack(cap)
        assert b.ptr in (a.ptr, a[::-1, 1::2].ptr)
        del b
    gc.collect()
    assert _dlpack.live_count() == before
    assert a.__dlpack_device__() == (2, a.device.id)
    host = np.from_dlpack(a, device="cpu")
    np.testing.assert_array_equal(host, h)


@FOREIGN
def test_cupy_interop(rng):
    cp = pytest.importorskip("cupy")
    h = random(rng, (6, 7), "float32")
    a = asarray(h)
    c = cp.asarray(a)  # through __cuda_array_interface__: shares memory
    assert c.data.ptr == a.ptr
    c *= 2
    cp.cuda.runtime.deviceSynchronize()
    assert_same(a, h * 2)
    v = cp.asarray(a[::-1, ::2])
    np.testing.assert_array_equal(cp.asnumpy(v), (h * 2)[::-1, ::2])
    d = cp.from_dlpack(a[1:])
    assert d.data.ptr == a[1:].ptr
    # and back: CuPy -> jitkern without a copy
    src = cp.arange(24, dtype=cp.float64).reshape(4, 6)[:, ::-1]
    j = asarray(src)
    assert j.ptr == src.data.ptr and j.strides == src.strides
    assert_same(j, cp.asnumpy(src))
    j.fill(1)
    assert float(src.sum()) == 24.0
    info = describe(src)
    assert info.ptr == src.data.ptr and info.owner is src and info.strides == src.strides
    assert pointer_of(src) == src.data.ptr


@FOREIGN
def test_torch_interop(rng):
    torch = pytest.importorskip("torch")
    h = random(rng, (5, 4), "float32")
    a = asarray(h)
    t = torch.as_tensor(a, device="cuda")  # __cuda_array_interface__
    assert t.data_ptr() == a.ptr
    t2 = torch.from_dlpack(a)  # DLPack
    assert t2.data_ptr() == a.ptr
    t2 += 1
    torch.cuda.synchronize()
    assert_same(a, h + 1)
    before = _dlpack.live_count()
    t3 = torch.from_dlpack(a[1:, ::2])
    assert t3.data_ptr() == a[1:, ::2].ptr and _dlpack.live_count() == before + 1
    del t3
    gc.collect()
    assert _dlpack.live_count() == before
    # torch -> jitkern without a copy, several dtypes
    for dtype in (torch.float16, torch.int64, torch.bool, torch.complex64, torch.uint8):
        src = (torch.arange(12, device="cuda") % 3).to(dtype).reshape(3, 4).t()
        j = asarray(src)
        assert j.ptr == src.data_ptr()
        np.testing.assert_array_equal(j.get(), src.cpu().numpy())
    src = torch.zeros(3, 4, device="cuda")
    j = asarray(src)
    j[1] = 5
    torch.cuda.synchronize()
    assert float(src.sum()) == 20.0
    info = describe(src)
    assert info.ptr == src.data_ptr() and info.dtype == np.float32 and info.strides == (16, 4)
    assert info.device_id == src.device.index and info.owner is src
    with pytest.raises(TypeError, match="jitkern.asarray"):
        describe(torch.zeros(3))
    # CPU tensors are host data: asarray copies them
    assert_same(asarray(torch.arange(4)), np.arange(4))


@FOREIGN
def test_torch_bfloat16():
    torch = pytest.importorskip("torch")
    pytest.importorskip("ml_dtypes")
    src = torch.arange(8, device="cuda").to(torch.bfloat16)
    j = asarray(src)  # CAI cannot spell bfloat16: DLPack is used
    assert j.dtype.name == "bfloat16" and j.ptr == src.data_ptr()
    np.testing.assert_array_equal(j.astype(np.float32).get(), np.arange(8, dtype=np.float32))
    back = torch.from_dlpack(j)
    assert back.dtype == torch.bfloat16 and back.data_ptr() == j.ptr


@FOREIGN
def test_jax_interop(rng):
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    try:
        gpu = jax.devices("gpu")
    except RuntimeError:
        pytest.skip("JAX has no GPU backend here")
    h = random(rng, (4, 5), "float32")
    a = asarray(h)
    x = jax.dlpack.from_dlpack(a)
    np.testing.assert_array_equal(np.asarray(x), h)
    y = jax.device_put(jnp.arange(10, dtype=jnp.float32), gpu[0])
    j = asarray(y)
    np.testing.assert_array_equal(j.get(), np.arange(10, dtype=np.float32))


@FOREIGN
def test_numba_interop(rng):
    cuda = pytest.importorskip("numba.cuda")
    h = random(rng, 10, "int32")
    a = asarray(h)
    d = cuda.as_cuda_array(a)
    np.testing.assert_array_equal(d.copy_to_host(), h)
    j = asarray(cuda.to_device(h))
    assert_same(j, h)


@pytest.mark.sim_gap("compiles with NVRTC and launches the loaded Function: the GPU path itself")
def test_kernel_launch_takes_arrays(rng):
    from jitkern.kernels.base import resolve_arch
    from jitkern.toolchain.nvrtc import compile_source
    from jitkern.runtime.module import Function

    src = r'''extern "C" __global__ void twice(const float* x, float* y, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 2 * x[i]; }'''
    fn = Function(compile_source(src, arch=resolve_arch(None)), "twice")
    h = random(rng, 1000, "float32")
    x = asarray(h)
    y = empty_like(x)
    y.fill(np.nan)
    fn.launch(4, 256, (x, y, np.int32(1000)))
    assert_same(y, h * 2)


def test_stream_lifetimes():
    """Streams an array was allocated or written on may be dropped by the user first."""
    s = Stream()
    with s:
        a = empty(1 << 20, np.float32)
        a.fill(1)
    s2 = Stream()
    a[::2].fill(2, stream=s2)
    a.fill(3, stream=s2)
    del s, s2
    gc.collect()
    np.testing.assert_array_equal(a.get()[:4], [3, 3, 3, 3])  # waits on s2's writes
    del a
    gc.collect()  # the free is queued on s, still alive until then
    b = empty(1 << 20, np.float32)
    b.fill(0)
    assert float(b.get().sum()) == 0


def test_two_devices(rng):
    from jitkern.runtime import driver
    from jitkern.runtime.device import Device

    if driver.device_count() < 2:
        pytest.skip("needs two GPUs")
    h = random(rng, (50, 3), "float64")
    with Device(1):
        b = asarray(h)
    assert b.device.id == 1 and describe(b).device_id == 1
    assert_same(b, h)
    assert_same(b[::-1].copy(), h[::-1])  # runs on device 1 though device 0 is current
    assert b[::-1].copy().device.id == 1
    a = zeros((50, 3))
    assert a.device.id == 0
    a[...] = b[::-1]  # across devices
    assert_same(a, h[::-1])
    c = b.astype(np.float32)
    assert c.device.id == 1 and np.array_equal(c.get(), h.astype(np.float32))


def test_ndarray_constructor(rng):
    a = ndarray((3, 4), np.float32)
    assert a.shape == (3, 4) and a.strides == (16, 4) and a.dtype == np.float32
    a.fill(2)
    assert_same(a, np.full((3, 4), 2, np.float32))
    b = ndarray((2, 4), np.float32, memptr=a[1:].data)  # a view of a's rows 1-2
    assert b.ptr == a.ptr + 16
    b.fill(5)
    assert_same(a, np.array([[2] * 4, [5] * 4, [5] * 4], np.float32))
    f = ndarray((3, 2), np.int8, order="F")
    assert f.flags.f_contiguous and f.strides == (1, 3)


def test_subclass_is_described():
    class Mine(ndarray):
        __slots__ = ()

    a = asarray(np.arange(3, dtype=np.float32))
    m = Mine((3,), np.float32, memptr=a.data)
    assert describe(m).ptr == a.ptr and pointer_of(m) == a.ptr


@FOREIGN
def test_foreign_array_on_second_device():
    from jitkern.runtime import driver

    if driver.device_count() < 2:
        pytest.skip("needs two GPUs")
    torch = pytest.importorskip("torch")
    src = torch.arange(6, device="cuda:1", dtype=torch.float32)
    j = asarray(src)
    assert j.device.id == 1 and describe(src).device_id == 1
    np.testing.assert_array_equal(j[::-1].copy().get(), np.arange(6, dtype=np.float32)[::-1])
    t = torch.from_dlpack(j)
    assert t.device.index == 1 and t.data_ptr() == src.data_ptr()


@FOREIGN
def test_pointer_device_for_each_allocator():
    """The owning device of memory from each allocator kind (cudaMalloc, pools, VMM)."""
    from jitkern.runtime.context import pointer_device
    from jitkern.runtime import driver
    from jitkern.runtime.device import Device

    for dev in range(min(driver.device_count(), 2)):
        with Device(dev):
            assert pointer_device(empty(4).ptr) == dev  # the stream-ordered pool
        torch = pytest.importorskip("torch")
        assert pointer_device(torch.zeros(4, device=f"cuda:{dev}").data_ptr()) == dev
    jax = pytest.importorskip("jax")
    try:
        gpus = jax.devices("gpu")
    except RuntimeError:
        pytest.skip("JAX has no GPU backend here")
    for dev, gpu in enumerate(gpus[:2]):
        x = jax.device_put(jax.numpy.ones(4), gpu)
        assert asarray(x).device.id == dev
