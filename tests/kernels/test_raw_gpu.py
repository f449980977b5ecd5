"""RawKernel and RawModule on a GPU: every example of the spec, attributes, streams, errors."""

import io

import numpy as np
import pytest

import jitkern
from jitkern import KernelArgumentError, LaunchError


MY_ADD = r"""
extern "C" __global__
void my_add(const float* x1, const float* x2, float* y) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    y[tid] = x1[tid] + x2[tid];
}
"""


def poisoned(shape, dtype):
    a = jitkern.empty(shape, dtype)
    a.fill(np.nan if np.dtype(dtype).kind in "fc" else -7)
    return a


def test_spec_add_kernel(rng, launch):
    k = jitkern.RawKernel(MY_ADD, "my_add")
    h1 = rng.standard_normal((5, 5)).astype(np.float32)
    h2 = rng.standard_normal((5, 5)).astype(np.float32)
    y = launch.poisoned((5, 5), np.float32)
    launch(k)((5,), (5,), (launch.to_device(h1), launch.to_device(h2), y))
    np.testing.assert_array_equal(launch.get(y), h1 + h2)


def test_numba_style_grid_and_block_ints(rng, launch):
    k = jitkern.RawKernel(MY_ADD, "my_add")
    n = 1024 * 37
    h1, h2 = rng.standard_normal((2, n)).astype(np.float32)
    y = launch.poisoned(n, np.float32)
    launch(k)(37, 1024, (launch.to_device(h1), launch.to_device(h2), y))
    np.testing.assert_array_equal(launch.get(y), h1 + h2)


def test_spec_complex_kernel(rng, launch):
    k = jitkern.RawKernel(r"""
    #include <jitkern/complex.cuh>
    extern "C" __global__
    void my_func(const complex<float>* x1, const complex<float>* x2, complex<float>* y, float a) {
        int tid = blockDim.x * blockIdx.x + threadIdx.x;
        y[tid] = x1[tid] + a * x2[tid];
    }""", "my_func")
    h1 = (rng.standard_normal(25) + 1j * rng.standard_normal(25)).astype(np.complex64)
    h2 = (rng.standard_normal(25) + 1j * rng.standard_normal(25)).astype(np.complex64)
    y = launch.poisoned(25, np.complex64)
    a = np.float32(rng.standard_normal())
    launch(k)((5,), (5,), (launch.to_device(h1), launch.to_device(h2), y, a))
    np.testing.assert_allclose(launch.get(y), h1 + a * h2, rtol=1e-6)


@pytest.mark.gpu
def test_attributes_and_settable_ones():
    k = jitkern.RawKernel(MY_ADD, "my_add")
    attrs = k.attributes
    for name in ("max_threads_per_block", "shared_size_bytes", "const_size_bytes",
                 "local_size_bytes", "num_regs", "ptx_version", "binary_version", "cache_mode_ca",
                 "max_dynamic_shared_size_bytes", "preferred_shared_memory_carveout"):
        assert name in attrs
        assert getattr(k, name) == attrs[name]
    assert attrs["num_regs"] > 0
    k.max_dynamic_shared_size_bytes = 50000
    assert k.max_dynamic_shared_size_bytes == 50000
    k.preferred_shared_memory_carveout = 50
    assert k.preferred_shared_memory_carveout == 50
    with pytest.raises(AttributeError, match="has no setter"):
        k.num_regs = 3


def test_dynamic_shared_memory_over_48k_after_raising_limit(rng, launch):
    k = jitkern.RawKernel(r"""
    extern "C" __global__ void rev(const float* x, float* y, int n) {
        extern __shared__ float buf[];
        for (int i = threadIdx.x; i < n; i += blockDim.x) buf[i] = x[i];
        __syncthreads();
        for (int i = threadIdx.x; i < n; i += blockDim.x) y[i] = buf[n - 1 - i];
    }""", "rev")
    n = 16384  # 64 KiB of shared memory
    h = rng.standard_normal(n).astype(np.float32)
    y = launch.poisoned(n, np.float32)
    with pytest.raises(LaunchError, match="max_dynamic_shared_size_bytes"):
        launch(k)((1,), (256,), (launch.to_device(h), y, np.int32(n)), shared_mem=n * 4)
    # (in the simulator too: the setter keeps the opt-in for kernel.simulate)
    k.max_dynamic_shared_size_bytes = n * 4
    launch(k)((1,), (256,), (launch.to_device(h), y, np.int32(n)), shared_mem=n * 4)
    launch.synchronize()
    np.testing.assert_array_equal(launch.get(y), h[::-1])


def test_spec_raw_module(rng, launch):
    mod = jitkern.RawModule(code=r"""
    extern "C"{
    __global__ void test_sum(const float* x1, const float* x2, float* y, unsigned int N) {
        unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
        if (tid < N) y[tid] = x1[tid] + x2[tid];
    }
    __global__ void test_multiply(const float* x1, const float* x2, float* y, unsigned int N) {
        unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
        if (tid < N) y[tid] = x1[tid] * x2[tid];
    }
    }""")
    N = 10
    h1 = rng.standard_normal((N, N)).astype(np.float32)
    h2 = rng.standard_normal((N, N)).astype(np.float32)
    x1, x2 = launch.to_device(h1), launch.to_device(h2)
    y = launch.poisoned((N, N), np.float32)
    launch(mod.get_function("test_sum"))((N,), (N,), (x1, x2, y, N ** 2))
    np.testing.assert_array_equal(launch.get(y), h1 + h2)
    launch(mod.get_function("test_multiply"))((N,), (N,), (x1, x2, y, N ** 2))
    np.testing.assert_array_equal(launch.get(y), h1 * h2)
    # (read from the compiled binary's symbols, before any GPU is needed)
    with pytest.raises(LaunchError, match="no kernel (named )?'test_divide'"):
        mod.get_function("test_divide")


def test_spec_templates_via_name_expressions(rng, launch):
    code = r"""
    template<typename T>
    __global__ void fx3(T* arr, int N) {
        unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
        if (tid < N) arr[tid] = arr[tid] * 3;
    }"""
    name_exp = ["fx3<float>", "fx3<double>"]
    mod = jitkern.RawModule(code=code, options=("-std=c++11",), name_expressions=name_exp)
    for name, dtype in zip(name_exp, (np.float32, np.float64)):
        h = rng.standard_normal(10).astype(dtype)
        a = launch.to_device(h)
        launch(mod.get_function(name))((1,), (10,), (a, 10))
        np.testing.assert_array_equal(launch.get(a), h * 3)
    with pytest.raises(ValueError, match="name_expressions"):
        mod.get_function("fx3<int>")


@pytest.mark.gpu
def test_get_global_constant_memory(rng):
    mod = jitkern.RawModule(code=r"""
    __constant__ float coeffs[4];
    extern "C" __global__ void poly(const float* x, float* y, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = coeffs[0] + x[i] * (coeffs[1] + x[i] * (coeffs[2] + x[i] * coeffs[3]));
    }""")
    c = rng.standard_normal(4).astype(np.float32)
    ptr = mod.get_global("coeffs")
    assert ptr.size == 16
    jitkern.ndarray((4,), np.float32, memptr=ptr).set(c)
    h = rng.standard_normal(1000).astype(np.float32)
    y = poisoned(1000, np.float32)
    mod.get_function("poly")((4,), (256,), (jitkern.asarray(h), y, np.int32(1000)))
    c64, h64 = c.astype(np.float64), h.astype(np.float64)
    expected = c64[0] + h64 * (c64[1] + h64 * (c64[2] + h64 * c64[3]))
    # Horner in float32: absolute error scales with the terms, not with the (maybe tiny) result
    scale = np.abs(c64[0]) + np.abs(h64) * (np.abs(c64[1]) + np.abs(h64) * (
        np.abs(c64[2]) + np.abs(h64) * np.abs(c64[3])))
    assert np.all(np.abs(y.get() - expected) <= 1e-6 * scale + 1e-30)


@pytest.mark.gpu
def test_compile_log_stream():
    k = jitkern.RawKernel('extern "C" __global__ void w(float* x) { int unused_var = 1; x[0] = 1; }', "w")
    log = io.StringIO()
    k.compile(log_stream=log)
    assert "unused_var" in log.getvalue()


@pytest.mark.gpu
def test_streams_and_events(rng):
    k = jitkern.RawKernel(MY_ADD, "my_add")
    n = 1 << 20
    h1, h2 = rng.standard_normal((2, n)).astype(np.float32)
    x1, x2 = jitkern.asarray(h1), jitkern.asarray(h2)
    y = poisoned(n, np.float32)
    jitkern.synchronize()
    s = jitkern.Stream()
    start, end = jitkern.Event(), jitkern.Event()
    with s:
        assert jitkern.get_current_stream() is s
        start.record()
        k((n // 256,), (256,), (x1, x2, y))
        end.record()
    assert jitkern.get_current_stream() is jitkern.Stream.null
    s.synchronize()
    assert start.elapsed_time(end) > 0
    np.testing.assert_array_equal(y.get(), h1 + h2)
    y2 = poisoned(n, np.float32)
    jitkern.synchronize()
    k((n // 256,), (256,), (x1, x2, y2), stream=s.ptr)  # raw handle
    s.synchronize()
    np.testing.assert_array_equal(y2.get(), h1 + h2)


@pytest.mark.gpu
def test_cooperative_groups_grid_sync(rng):
    k = jitkern.RawKernel(r"""
    #include <cooperative_groups.h>
    namespace cg = cooperative_groups;
    extern "C" __global__ void two_phase(const float* x, float* partial, float* out, int n) {
        cg::grid_group grid = cg::this_grid();
        float s = 0;
        for (int i = grid.thread_rank(); i < n; i += grid.size()) s += x[i];
        partial[grid.thread_rank()] = s;
        grid.sync();
        if (grid.thread_rank() == 0) {
            float t = 0;
            for (unsigned long long i = 0; i < grid.size(); ++i) t += partial[i];
            out[0] = t;
        }
    }""", "two_phase", enable_cooperative_groups=True)
    n = 100000
    h = rng.integers(-8, 8, n).astype(np.float32)
    blocks, threads = 8, 128
    partial = poisoned(blocks * threads, np.float32)
    out = poisoned(1, np.float32)
    k((blocks,), (threads,), (jitkern.asarray(h), partial, out, np.int32(n)))
    assert out.get()[0] == h.sum()


def test_argument_errors_launch_nothing(rng, launch):
    k = jitkern.RawKernel(MY_ADD, "my_add")
    x = launch.to_device(rng.standard_normal(32).astype(np.float32))
    with pytest.raises(KernelArgumentError, match="takes 3 argument"):
        launch(k)((1,), (32,), (x, x))
    with pytest.raises(KernelArgumentError, match=r"argument 2 \(y\).*pointer"):
        launch(k)((1,), (32,), (x, x, 1.5))
    if not launch.simulated:  # (the simulator's arrays are NumPy arrays)
        with pytest.raises(TypeError, match=r"jitkern\.asarray"):
            k((1,), (32,), (x, x, np.zeros(32, np.float32)))
    with pytest.raises(LaunchError, match="block x=2,048 is over CUDA.s limit of 1,024"):
        launch(k)((1,), (2048,), (x, x, x))


@pytest.mark.gpu
def test_cupy_and_torch_arrays_as_arguments(rng):
    k = jitkern.RawKernel(MY_ADD, "my_add")
    h1, h2 = rng.standard_normal((2, 256)).astype(np.float32)
    cp = pytest.importorskip("cupy")
    y = cp.full(256, np.nan, cp.float32)
    k((1,), (256,), (cp.asarray(h1), cp.asarray(h2), y))
    cp.cuda.Device().synchronize()
    np.testing.assert_array_equal(cp.asnumpy(y), h1 + h2)
    torch = pytest.importorskip("torch")
    t = torch.full((256,), float("nan"), device="cuda")
    k((1,), (256,), (torch.from_numpy(h1).cuda(), torch.from_numpy(h2).cuda(), t))
    torch.cuda.synchronize()
    np.testing.assert_array_equal(t.cpu().numpy(), h1 + h2)
    with pytest.raises(KernelArgumentError, match="CPU torch.Tensor"):
        k((1,), (256,), (torch.from_numpy(h1), torch.from_numpy(h2), t))


def test_translate_cucomplex(rng, launch):
    k = jitkern.RawKernel(r"""
    #include <cuComplex.h>
    extern "C" __global__ void cmul(const cuFloatComplex* a, const cuFloatComplex* b, cuFloatComplex* c) {
        int i = threadIdx.x;
        c[i] = cuCmulf(a[i], cuConjf(b[i]));
    }""", "cmul", translate_cucomplex=True)
    a = (rng.standard_normal(64) + 1j * rng.standard_normal(64)).astype(np.complex64)
    b = (rng.standard_normal(64) + 1j * rng.standard_normal(64)).astype(np.complex64)
    c = launch.poisoned(64, np.complex64)
    launch(k)((1,), (64,), (launch.to_device(a), launch.to_device(b), c))
    np.testing.assert_allclose(launch.get(c), a * np.conj(b), rtol=1e-6)


@pytest.mark.gpu
def test_jitify_std_headers(rng):
    k = jitkern.RawKernel(r"""
    #include <type_traits>
    #include <limits>
    template <class T> __device__ T clampit(T v) {
        static_assert(std::is_floating_point<T>::value, "float only");
        return v > std::numeric_limits<T>::max() / 2 ? std::numeric_limits<T>::max() / 2 : v;
    }
    extern "C" __global__ void k(float* x) { x[threadIdx.x] = clampit(x[threadIdx.x]); }
    """, "k", jitify=True)
    h = rng.standard_normal(32).astype(np.float32)
    h[3] = np.finfo(np.float32).max
    a = jitkern.asarray(h)
    k((1,), (32,), (a,))
    expected = h.copy()
    expected[3] = np.finfo(np.float32).max / 2
    np.testing.assert_array_equal(a.get(), expected)


@pytest.mark.gpu
def test_dynamic_parallelism_with_dc(rng):
    k = jitkern.RawKernel(r"""
    extern "C" __global__ void child(float* x) { x[threadIdx.x] *= 2; }
    extern "C" __global__ void parent(float* x) { if (threadIdx.x == 0) child<<<1, 64>>>(x); }
    """, "parent", options=("-dc",))
    h = rng.standard_normal(64).astype(np.float32)
    a = jitkern.asarray(h)
    k((1,), (32,), (a,))
    np.testing.assert_array_equal(a.get(), h * 2)


@pytest.mark.gpu
def test_nvcc_backend_when_available(rng):
    import shutil

    if shutil.which("nvcc") is None:
        pytest.skip("no nvcc on PATH")
    k = jitkern.RawKernel(MY_ADD, "my_add", backend="nvcc")
    h1, h2 = rng.standard_normal((2, 64)).astype(np.float32)
    y = poisoned(64, np.float32)
    k((1,), (64,), (jitkern.asarray(h1), jitkern.asarray(h2), y))
    np.testing.assert_array_equal(y.get(), h1 + h2)


@pytest.mark.gpu
def test_second_launch_does_not_recompile(rng):
    from jitkern.toolchain import cache

    k = jitkern.RawKernel(MY_ADD + "\n// no-recompile", "my_add")
    xh = rng.standard_normal(32).astype(np.float32)
    x = jitkern.asarray(xh)
    y = poisoned(32, np.float32)
    k((1,), (32,), (x, x, y))
    compiles = cache.stats["compiles"]
    for _ in range(5):
        y.fill(np.nan)
        k((1,), (32,), (x, x, y))
        np.testing.assert_array_equal(y.get(), xh + xh)  # the cached kernel still runs
    assert cache.stats["compiles"] == compiles


@pytest.mark.gpu
def test_multi_device_refuses_foreign_array(rng):
    from jitkern.runtime import driver

    if driver.device_count() < 2:
        pytest.skip("needs two GPUs")
    k = jitkern.RawKernel(MY_ADD, "my_add")
    with jitkern.Device(1):
        x1 = jitkern.asarray(rng.standard_normal(32).astype(np.float32))
    with jitkern.Device(0):
        x0 = jitkern.asarray(rng.standard_normal(32).astype(np.float32))
        with pytest.raises(KernelArgumentError, match="device 1.*device 0"):
            k((1,), (32,), (x0, x1, x0))


@pytest.mark.gpu
def test_same_kernel_launches_on_each_device(rng):
    # Modules load per device: one kernel object runs on device 0, 1, then 0 again, with
    # and without a stream of that device, and every result is that device's own.
    from jitkern.runtime import driver

    if driver.device_count() < 2:
        pytest.skip("needs two GPUs")
    k = jitkern.RawKernel(MY_ADD, "my_add")
    for dev in (0, 1, 0, 1):
        with jitkern.Device(dev):
            h1, h2 = (rng.standard_normal(64).astype(np.float32) for _ in range(2))
            y = poisoned(64, np.float32)
            k((1,), (64,), (jitkern.asarray(h1), jitkern.asarray(h2), y))
            np.testing.assert_array_equal(y.get(), h1 + h2)
            s = jitkern.Stream()
            y2 = poisoned(64, np.float32)
            k((1,), (64,), (jitkern.asarray(h2), jitkern.asarray(h2), y2), stream=s)
            s.synchronize()
            np.testing.assert_array_equal(y2.get(), h2 + h2)
