"""Results follow the inputs on a GPU (issue 17 part 4): CuPy arrays in, cupy.ndarray out
from CuPy's memory pool; PyTorch tensors in, tensors out from torch's caching allocator on
the same device; jitkern arrays in, jitkern arrays out. Values against NumPy on fresh
random inputs; each library's pool is first handed a block of NaNs of the result's size,
so a kernel that wrote nothing would return NaNs, not a previous run's answer. The jitkern
arrays' test has a simulated twin: NumPy arrays in, NumPy arrays out."""

import numpy as np
import pytest

import jitkern

def _cupy():
    return pytest.importorskip("cupy")


def _torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    return torch


def poison_cupy_pool(cupy, shape, dtype):
    """Free a NaN-filled (or all-ones) block of this size into CuPy's pool: the next
    cupy.empty of this size on this stream gets it back."""
    junk = cupy.empty(shape, dtype)
    junk.fill(np.nan if np.dtype(dtype).kind in "fc" else -1)
    cupy.cuda.get_current_stream().synchronize()
    del junk


def axpy():
    return jitkern.ElementwiseKernel("T x, T y, T a", "T z", "z = a * x + y", "follow_axpy_gpu")


@pytest.mark.gpu
def test_elementwise_on_cupy_arrays_gives_cupy_arrays_from_cupys_pool(rng):
    cupy = _cupy()
    k = axpy()
    pool = cupy.get_default_memory_pool()
    for n in (4096, 4096, 4096, 1000, 1 << 20):  # repeats: the generated launcher
        xh, yh = rng.standard_normal(n), rng.standard_normal(n)
        a = float(rng.standard_normal())
        x, y = cupy.asarray(xh), cupy.asarray(yh)
        poison_cupy_pool(cupy, (n,), np.float64)
        before = pool.used_bytes()
        z = k(x, y, np.float64(a))
        assert type(z) is cupy.ndarray and z.dtype == np.float64 and z.shape == (n,)
        assert isinstance(z.data.mem, cupy.cuda.memory.PooledMemory)
        assert pool.used_bytes() >= before + n * 8
        np.testing.assert_allclose(cupy.asnumpy(z), a * xh + yh, rtol=1e-15, atol=1e-15)
        # the user's next line is CuPy's own
        np.testing.assert_allclose(float((z - y).sum()), float((a * xh).sum()), rtol=1e-9,
                                   atol=1e-12 * n)
        del z  # else the next iteration's result frees this one as it is bound: no growth seen


@pytest.mark.gpu
def test_reduction_on_cupy_arrays_is_a_cupy_array_kmeans_argmin_works(rng):
    cupy = _cupy()
    # k-means' assignment step, as CuPy's examples write it: squared distances of every
    # point to every centroid, reduced over the coordinates, then argmin in CuPy.
    sqdist = jitkern.ReductionKernel("T x, T c", "T d", "(x - c) * (x - c)", "a + b", "d = a",
                                     "0", "follow_sqdist")
    for points, k, dims in ((5000, 7, 3), (5000, 7, 3), (300, 16, 40)):
        xh = rng.standard_normal((points, dims)).astype(np.float32)
        ch = rng.standard_normal((k, dims)).astype(np.float32)
        x, c = cupy.asarray(xh), cupy.asarray(ch)
        poison_cupy_pool(cupy, (points, k), np.float32)
        d = sqdist(x[:, None, :], c[None, :, :], axis=2)
        assert type(d) is cupy.ndarray and d.shape == (points, k)
        assert isinstance(d.data.mem, cupy.cuda.memory.PooledMemory)
        want = ((xh[:, None, :].astype(np.float64) - ch[None, :, :]) ** 2).sum(2)
        np.testing.assert_allclose(cupy.asnumpy(d), want, rtol=1e-5, atol=1e-5)
        labels = d.argmin(axis=1)  # what failed with a jitkern.ndarray
        assert type(labels) is cupy.ndarray
        # ties within float32 rounding aside, CuPy's argmin agrees with NumPy's
        picked = want[np.arange(points), cupy.asnumpy(labels)]
        np.testing.assert_allclose(picked, want.min(1), rtol=1e-5, atol=1e-5)


@pytest.mark.gpu
def test_fuse_on_cupy_arrays_gives_cupy_arrays(rng):
    cupy = _cupy()

    @jitkern.fuse()
    def norm_rows(x):
        return np.sqrt((x * x).sum(axis=1))

    @jitkern.fuse()
    def blend(x, y, t):
        return x * (1 - t) + y * t

    for _ in range(2):
        xh, yh = rng.standard_normal((300, 70)), rng.standard_normal((300, 70))
        t = float(rng.uniform())
        x, y = cupy.asarray(xh), cupy.asarray(yh)
        poison_cupy_pool(cupy, (300,), np.float64)
        r = norm_rows(x)
        assert type(r) is cupy.ndarray and r.shape == (300,)
        np.testing.assert_allclose(cupy.asnumpy(r), np.sqrt((xh * xh).sum(1)), rtol=1e-13)
        poison_cupy_pool(cupy, (300, 70), np.float64)
        b = blend(x, y, t)
        assert type(b) is cupy.ndarray
        assert isinstance(b.data.mem, cupy.cuda.memory.PooledMemory)
        np.testing.assert_allclose(cupy.asnumpy(b), xh * (1 - t) + yh * t, rtol=1e-13,
                                   atol=1e-15)


@pytest.mark.gpu
def test_a_cupy_stream_given_orders_the_result_on_it(rng):
    cupy = _cupy()
    k = axpy()
    s = cupy.cuda.Stream(non_blocking=True)
    for _ in range(3):
        xh = rng.standard_normal(1 << 16).astype(np.float32)
        with s:
            x = cupy.asarray(xh)
            poison_cupy_pool(cupy, xh.shape, np.float32)
            z = k(x, x, np.float32(0.5), stream=s)
            assert type(z) is cupy.ndarray
            got = cupy.asnumpy(z, stream=s)
        s.synchronize()
        np.testing.assert_allclose(got, np.float32(0.5) * xh + xh, rtol=1e-6)


@pytest.mark.gpu
def test_torch_tensors_give_torch_tensors_on_their_device(rng):
    torch = _torch()
    k = axpy()
    total = jitkern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "follow_tsum")
    for n in (4096, 4096, 777):
        xh, yh = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        x, y = torch.from_numpy(xh).cuda(), torch.from_numpy(yh).cuda()
        junk = torch.full((n,), float("nan"), device=x.device)
        del junk  # torch's cache hands this block to the next tensor of its size
        before = torch.cuda.memory_allocated(x.device)
        z = k(x, y, np.float32(2.0))
        assert isinstance(z, torch.Tensor) and z.device == x.device and z.dtype == torch.float32
        assert torch.cuda.memory_allocated(x.device) >= before + n * 4
        np.testing.assert_allclose(z.cpu().numpy(), 2 * xh + yh, rtol=1e-6, atol=1e-6)
        m = torch.from_numpy(rng.standard_normal((n, 3))).cuda()
        s = total(m, axis=0)
        assert isinstance(s, torch.Tensor) and s.shape == (3,) and s.device == m.device
        np.testing.assert_allclose(s.cpu().numpy(), m.cpu().numpy().sum(0), rtol=1e-12,
                                   atol=1e-12 * n)
        del z, s  # the next iteration's allocation must show as growth, not as a swap


def test_jitkern_arrays_give_jitkern_arrays(rng, launch):
    k = axpy()
    for n in (4096, 4096):
        xh = rng.standard_normal(n)
        x = launch.to_device(xh)
        z = launch(k)(x, x, np.float64(3.0))
        assert type(z) is (np.ndarray if launch.simulated else jitkern.ndarray)  # the inputs'
        np.testing.assert_allclose(launch.get(z), 4 * xh, rtol=1e-15)


@pytest.mark.gpu
def test_cupy_and_jitkern_arguments_give_cupy_arrays(rng):
    cupy = _cupy()
    k = axpy()
    for _ in range(2):
        xh, yh = rng.standard_normal(2048), rng.standard_normal(2048)
        z = k(jitkern.asarray(xh), cupy.asarray(yh), np.float64(-1.0))
        assert type(z) is cupy.ndarray
        np.testing.assert_allclose(cupy.asnumpy(z), yh - xh, rtol=1e-15, atol=1e-15)


@pytest.mark.gpu
def test_jitkern_routines_on_cupy_arrays_give_cupy_arrays(rng):
    cupy = _cupy()
    for _ in range(2):
        xh = np.abs(rng.standard_normal((64, 129)))
        x = cupy.asarray(xh)
        poison_cupy_pool(cupy, xh.shape, np.float64)
        root = jitkern.sqrt(x)
        assert type(root) is cupy.ndarray
        np.testing.assert_allclose(cupy.asnumpy(root), np.sqrt(xh), rtol=1e-15)
        poison_cupy_pool(cupy, (64,), np.float64)
        total = jitkern.sum(x, axis=1)
        assert type(total) is cupy.ndarray and total.shape == (64,)
        np.testing.assert_allclose(cupy.asnumpy(total), xh.sum(1), rtol=1e-13)


def _iota():
    return jitkern.ElementwiseKernel("int64 start", "raw int64 y", "y[i] = start + i",
                                     "follow_iota_gpu")


@pytest.mark.gpu
@pytest.mark.parametrize("library", ["jitkern", "cupy", "torch"])
def test_a_kernel_with_no_arrays_gives_the_set_librarys_arrays(rng, monkeypatch, library):
    module = {"cupy": _cupy, "torch": _torch}.get(library, lambda: None)()
    monkeypatch.setattr(jitkern.config.settings, "results", library)
    k = _iota()
    for _ in range(2):  # the general path, then the generated one
        n, start = int(rng.integers(1, 100_000)), int(rng.integers(-1 << 40, 1 << 40))
        y = k(start, size=n)
        want = start + np.arange(n, dtype=np.int64)
        if library == "cupy":
            assert type(y) is module.ndarray
            assert int((y - module.asarray(want)).sum()) == 0  # used with the program's arrays
        elif library == "torch":
            assert type(y) is module.Tensor and y.is_cuda
            assert int((y - module.as_tensor(want, device=y.device)).abs().sum()) == 0
        else:
            assert type(y) is jitkern.ndarray
            np.testing.assert_array_equal(y.get(), want)
