"""Texture and surface objects against NumPy, each test twice: ``[gpu]`` on a GPU and
``[sim]`` on the simulated device (``jitkern.simulated_device()``: the CPU simulator's
texture unit, jitkern/sim/textures.py). CUDA-array copies, point and linear-filtered reads
in 1-D/2-D/3-D (unnormalized and normalized coordinates), linear and pitched resources,
surface writes, ElementwiseKernel textures; CuPy's objects and the release of handles are
GPU-only."""

import gc
import itertools

import numpy as np
import pytest

import jitkern
from jitkern.compat import texture as T
from jitkern.runtime import driver
from jitkern.cuda import runtime

FLOAT = runtime.cudaChannelFormatKindFloat
CLAMP = runtime.cudaAddressModeClamp


def sized(on_device, gpu, sim):
    """A size for the back end: the simulator's per-thread reference run costs more."""
    return gpu if on_device is None else sim


def float_channels(n=1):
    return T.ChannelFormatDescriptor(*([32] * n + [0] * (4 - n)), FLOAT)


def poisoned(shape, dtype=np.float32):
    a = jitkern.empty(shape, dtype)
    a.fill(np.nan)
    return a


def texture_over(data, *, filter_mode, normalized=False, desc=None,
                 read_mode=runtime.cudaReadModeElementType):
    """A texture over a CUDA array holding ``data`` (axes z, y, x), clamped on every axis."""
    desc = desc or float_channels()
    dims = data.shape[::-1]  # width, height, depth
    arr = T.CUDAarray(desc, *dims)
    arr.copy_from(data)
    res = T.ResourceDescriptor(runtime.cudaResourceTypeArray, cuArr=arr)
    tex = T.TextureDescriptor((CLAMP,) * 3, filter_mode, read_mode,
                              normalizedCoords=int(normalized))
    return T.TextureObject(res, tex)


def linear_reference(data, coords):
    """What the texture unit's linear filter returns at texel coordinates ``coords``
    (x, y, z), clamped: texel centres at i + 0.5, weights from the fractional part.
    Coordinates are multiples of 1/8, which the hardware's 8-bit weights hold exactly."""
    nd = data.ndim
    per_axis = []
    for axis, c in enumerate(coords):
        n = data.shape[nd - 1 - axis]
        t = np.asarray(c, np.float64) - 0.5
        i0 = np.floor(t)
        w = t - i0
        i0 = i0.astype(np.int64)
        per_axis.append([(np.clip(i0, 0, n - 1), 1 - w), (np.clip(i0 + 1, 0, n - 1), w)])
    out = np.zeros(np.shape(coords[0]))
    for corner in itertools.product(*per_axis):
        weight = np.prod([w for _, w in corner], axis=0)
        index = tuple(i for i, _ in reversed(corner))
        out += weight * data.astype(np.float64)[index]
    return out


SAMPLE = r"""
extern "C" __global__ void sample1d(cudaTextureObject_t t, const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1D<float>(t, x[i]);
}
extern "C" __global__ void sample2d(cudaTextureObject_t t, const float* x, const float* y,
                                    float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<float>(t, x[i], y[i]);
}
extern "C" __global__ void sample3d(cudaTextureObject_t t, const float* x, const float* y,
                                    const float* z, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex3D<float>(t, x[i], y[i], z[i]);
}
extern "C" __global__ void fetch1d(cudaTextureObject_t t, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float>(t, i);
}
"""


@pytest.fixture
def sampler(on_device):
    return jitkern.RawModule(code=SAMPLE)


def assert_filtered(got, ref):
    """``got`` is the texture unit's linear filter at the coordinates ``ref`` was made for."""
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def assert_trilinear(got, ref):
    """3-D: the texture unit's default trilinear filtering (the runtime's default, which
    CuPy's TextureDescriptor keeps: trilinear optimisation allowed) is not exact trilinear
    interpolation: on an H100 (2026-11-23) 3-4% of samples of data in [0, 1) differed by up to
    4.4e-3. The rest match to float precision, and a wrong texel would be off by ~0.3."""
    close = np.isclose(got, ref, rtol=1e-5, atol=1e-6)
    assert close.mean() > 0.9, f"only {close.mean():.1%} of the samples match exactly"
    np.testing.assert_allclose(got, ref, atol=1e-2)


def random_coords(rng, shape_xyz, count):
    """Texel coordinates in multiples of 1/8, mostly inside, some beyond each edge."""
    return [rng.integers(-16, 8 * n + 16, count) / 8.0 for n in shape_xyz]


def run_sample(sampler, tex, coords, normalized_by=None):
    n = coords[0].size
    scaled = [c / s for c, s in zip(coords, normalized_by)] if normalized_by else coords
    args = [jitkern.asarray(c.astype(np.float32)) for c in scaled]
    out = poisoned(n)
    kernel = sampler.get_function(f"sample{len(coords)}d")
    kernel(((n + 127) // 128,), (128,), (tex, *args, out, n))
    return out.get()


@pytest.mark.parametrize("shape", [(64,), (24, 40), (6, 10, 12)])
def test_linear_filtered_reads_match_numpy(on_device, sampler, rng, shape):
    data = rng.random(shape, dtype=np.float32)
    tex = texture_over(data, filter_mode=runtime.cudaFilterModeLinear)
    coords = random_coords(rng, shape[::-1], sized(on_device, 3000, 500))
    got = run_sample(sampler, tex, coords)
    (assert_trilinear if len(shape) == 3 else assert_filtered)(got, linear_reference(data, coords))


@pytest.mark.parametrize("shape", [(64,), (16, 32), (8, 16, 32)])
def test_linear_filtered_reads_with_normalized_coordinates(on_device, sampler, rng, shape):
    # Power-of-two extents: u = x / width is exact in float32.
    data = rng.random(shape, dtype=np.float32)
    tex = texture_over(data, filter_mode=runtime.cudaFilterModeLinear, normalized=True)
    coords = random_coords(rng, shape[::-1], sized(on_device, 3000, 500))
    got = run_sample(sampler, tex, coords, normalized_by=shape[::-1])
    (assert_trilinear if len(shape) == 3 else assert_filtered)(got, linear_reference(data, coords))


@pytest.mark.parametrize("shape", [(67,), (19, 67), (7, 19, 31)])
def test_point_reads_return_the_texel(on_device, sampler, rng, shape):
    data = rng.standard_normal(shape).astype(np.float32)
    tex = texture_over(data, filter_mode=runtime.cudaFilterModePoint)
    # Fractions kept away from 1 so that float32 does not round up to the next texel.
    count = sized(on_device, 2000, 500)
    coords = [rng.integers(0, n, count) + 0.05 + 0.9 * rng.random(count) for n in shape[::-1]]
    got = run_sample(sampler, tex, coords)
    index = tuple(np.floor(c).astype(np.int64) for c in reversed(coords))
    np.testing.assert_array_equal(got, data[index])


def test_normalized_float_read_mode_scales_integers(on_device, sampler, rng):
    data = rng.integers(0, 256, (8, 16), dtype=np.uint8)
    desc = T.ChannelFormatDescriptor(8, 0, 0, 0, runtime.cudaChannelFormatKindUnsigned)
    tex = texture_over(data, filter_mode=runtime.cudaFilterModeLinear, desc=desc,
                       read_mode=runtime.cudaReadModeNormalizedFloat)
    coords = random_coords(rng, (16, 8), sized(on_device, 2000, 500))
    got = run_sample(sampler, tex, coords)
    # The unit's unorm8 filtering is a little coarser than float32: on an H100 up to 7.6e-6
    # off (a texel step is 1/255 = 3.9e-3).
    np.testing.assert_allclose(got, linear_reference(data / 255.0, coords), atol=3e-5)


def aligned_view(n, dtype=np.float32):
    """A device array of n elements starting at the texture alignment the device needs."""
    device = driver.current_device_id()
    align = max(driver.device_attribute(device, "texture_alignment"),
                driver.device_attribute(device, "texture_pitch_alignment"))
    itemsize = np.dtype(dtype).itemsize
    buf = jitkern.empty(n + align // itemsize, dtype)
    buf.fill(np.nan if np.dtype(dtype).kind == "f" else 0x7B)  # callers set() their part
    skip = (-buf.data.ptr % align) // itemsize
    return buf[skip: skip + n]


def test_linear_resource_fetch(on_device, sampler, rng):
    n = 1000
    data = rng.standard_normal(n).astype(np.float32)
    arr = aligned_view(n)
    arr.set(data)
    res = T.ResourceDescriptor(runtime.cudaResourceTypeLinear, arr=arr, chDesc=float_channels(),
                               sizeInBytes=arr.nbytes)
    tex = T.TextureObject(res, T.TextureDescriptor((CLAMP,), runtime.cudaFilterModePoint,
                                                   runtime.cudaReadModeElementType))
    out = poisoned(n)
    sampler.get_function("fetch1d")(((n + 127) // 128,), (128,), (tex, out, n))
    np.testing.assert_array_equal(out.get(), data)


def test_pitch2d_resource_linear_filtering(on_device, sampler, rng):
    width, height = 64, 20
    pitch_align = driver.device_attribute(driver.current_device_id(), "texture_pitch_alignment")
    pitch = -(-width * 4 // pitch_align) * pitch_align
    data = rng.random((height, width), dtype=np.float32)
    rows = np.full((height, pitch // 4), np.nan, np.float32)
    rows[:, :width] = data
    arr = aligned_view(rows.size)
    arr.set(rows.ravel())
    res = T.ResourceDescriptor(runtime.cudaResourceTypePitch2D, arr=arr, chDesc=float_channels(),
                               width=width, height=height, pitchInBytes=pitch)
    tex = T.TextureObject(res, T.TextureDescriptor((CLAMP, CLAMP), runtime.cudaFilterModeLinear,
                                                   runtime.cudaReadModeElementType))
    coords = random_coords(rng, (width, height), sized(on_device, 3000, 500))
    got = run_sample(sampler, tex, coords)
    np.testing.assert_allclose(got, linear_reference(data, coords), rtol=1e-5, atol=1e-6)


# -- CUDA arrays (copies: tests/compat/test_cuda_array.py, also on the simulated device) --


@pytest.mark.gpu
def test_handles_are_released_when_objects_go(rng):
    # Free memory is the whole device's: other processes (pytest-xdist workers) allocate
    # and free at the same time. So the release is measured over a short window, against a
    # baseline taken with the arrays alive, and must show in one of a few attempts (an
    # unreleased array never shows a 128 MiB rise).
    device = driver.current_device_id()
    rises = []
    for _attempt in range(5):
        live = []
        for _ in range(3):
            arr = T.CUDAarray(float_channels(4), 2048, 2048)  # 64 MiB
            tex = T.TextureObject(T.ResourceDescriptor(runtime.cudaResourceTypeArray, cuArr=arr),
                                  T.TextureDescriptor())
            live.append((arr, tex))
        del arr, tex
        jitkern.synchronize()
        with_arrays, _ = driver.mem_info(device)
        live.clear()
        gc.collect()
        jitkern.synchronize()
        released, _ = driver.mem_info(device)
        rises.append(released - with_arrays)
        if rises[-1] >= 128 * 2**20:
            break
    assert max(rises) >= 128 * 2**20, [r / 2**20 for r in rises]


# -- surfaces ------------------------------------------------------------------------

SURFACE = r"""
extern "C" __global__ void update(cudaSurfaceObject_t s, const float* add, int w, int h, int d) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x >= w || y >= h || z >= d) return;
    int i = (z * h + y) * w + x;
    if (d > 1) {
        float v = surf3Dread<float>(s, x * 4, y, z);
        surf3Dwrite(2.0f * v + add[i], s, x * 4, y, z);
    } else if (h > 1) {
        float v = surf2Dread<float>(s, x * 4, y);
        surf2Dwrite(2.0f * v + add[i], s, x * 4, y);
    } else {
        float v = surf1Dread<float>(s, x * 4);
        surf1Dwrite(2.0f * v + add[i], s, x * 4);
    }
}
"""


@pytest.mark.parametrize("shape", [(64,), (32, 64), (16, 32, 64)])
def test_surface_read_and_write(on_device, rng, shape):
    if on_device is not None:  # surfaces run per thread in the simulator: fewer threads
        shape = shape[:-1] + (16,)
    dims = shape[::-1] + (0,) * (3 - len(shape))
    start = rng.standard_normal(shape).astype(np.float32)
    add = rng.standard_normal(shape).astype(np.float32)
    arr = T.CUDAarray(float_channels(), *dims, runtime.cudaArraySurfaceLoadStore)
    arr.copy_from(start)
    surf = T.SurfaceObject(T.ResourceDescriptor(runtime.cudaResourceTypeArray, cuArr=arr))
    k = jitkern.RawKernel(SURFACE, "update")
    w, h, d = (max(n, 1) for n in dims)
    k(((w + 7) // 8, (h + 7) // 8, d), (8, 8, 1), (surf, jitkern.asarray(add), w, h, d))
    out = np.full(shape, np.nan, np.float32)
    arr.copy_to(out)
    np.testing.assert_array_equal(out, 2.0 * start + add)


def test_surface_needs_a_load_store_array(on_device):
    arr = T.CUDAarray(float_channels(), 16)
    with pytest.raises(ValueError, match="cudaArraySurfaceLoadStore"):
        T.SurfaceObject(T.ResourceDescriptor(runtime.cudaResourceTypeArray, cuArr=arr))


# -- ElementwiseKernel ---------------------------------------------------------------


@pytest.mark.parametrize("shape", [(64,), (32, 64), (19, 32, 64)])
def test_elementwise_kernel_reads_a_texture(on_device, rng, shape):
    if on_device is not None:  # the simulator's per-thread reference run: fewer elements
        shape = shape[:-2] + (8, 16) if len(shape) > 1 else shape
    data = rng.random(shape, dtype=np.float32)
    tex = texture_over(data, filter_mode=runtime.cudaFilterModePoint)
    coords = {
        1: "tex1D<T>(texObj, i + 0.5f)",
        2: "tex2D<T>(texObj, (float)(i % width) + 0.5f, (float)(i / width) + 0.5f)",
        3: ("tex3D<T>(texObj, (float)(i % width) + 0.5f, (float)((i / width) % height) + 0.5f,"
            " (float)(i / (width * height)) + 0.5f)"),
    }[len(shape)]
    k = jitkern.ElementwiseKernel("T x, U texObj, uint64 width, uint64 height", "T y",
                                  f"y = {coords} + x;", name=f"tex{len(shape)}d")
    x = rng.standard_normal(shape).astype(np.float32)
    width = shape[-1]
    height = shape[-2] if len(shape) > 1 else 1
    for _ in range(2):  # the second call takes the generated launcher
        y = k(jitkern.asarray(x), tex, width, height)
        np.testing.assert_array_equal(y.get(), data + x)


def test_elementwise_linear_filtering_between_texels(on_device, rng):
    n = 256
    data = rng.random(n, dtype=np.float32)
    tex = texture_over(data, filter_mode=runtime.cudaFilterModeLinear)
    k = jitkern.ElementwiseKernel("float32 u, U t", "float32 y", "y = tex1D<float>(t, u);",
                                  name="tex_lerp")
    u = rng.integers(0, 8 * n, sized(on_device, 4096, 1000)) / 8.0
    got = k(jitkern.asarray(u.astype(np.float32)), tex).get()
    np.testing.assert_allclose(got, linear_reference(data, [u]), rtol=1e-5, atol=1e-6)


# -- CuPy's own texture objects ------------------------------------------------------


@pytest.mark.gpu
def test_cupy_texture_object_is_accepted(rng):
    cupy = pytest.importorskip("cupy")
    from cupy.cuda import runtime as crt
    from cupy.cuda import texture as ct

    data = rng.random((16, 32), dtype=np.float32)
    ch = ct.ChannelFormatDescriptor(32, 0, 0, 0, crt.cudaChannelFormatKindFloat)
    arr = ct.CUDAarray(ch, 32, 16)
    arr.copy_from(cupy.asarray(data))
    res = ct.ResourceDescriptor(crt.cudaResourceTypeArray, cuArr=arr)
    tex = ct.TextureObject(res, ct.TextureDescriptor((crt.cudaAddressModeClamp,) * 2,
                                                     crt.cudaFilterModeLinear,
                                                     crt.cudaReadModeElementType))
    cupy.cuda.Device().synchronize()
    coords = random_coords(rng, (32, 16), 2000)
    got = run_sample(jitkern.RawModule(code=SAMPLE), tex, coords)
    np.testing.assert_allclose(got, linear_reference(data, coords), rtol=1e-5, atol=1e-6)
    k = jitkern.ElementwiseKernel("float32 u, float32 v, U t", "float32 y",
                                  "y = tex2D<float>(t, u, v);", name="cupy_tex")
    y = k(cupy.asarray(coords[0].astype(np.float32)), cupy.asarray(coords[1].astype(np.float32)),
          tex)
    np.testing.assert_allclose(jitkern.asnumpy(y), linear_reference(data, coords), rtol=1e-5,
                               atol=1e-6)
