"""Texture and surface objects in the simulator, what only it does: the path a launch takes
(texture reads vectorised, surfaces per thread), the errors a GPU would answer with a fault
or garbage (a surface access outside with cudaBoundaryModeTrap, a misaligned x, a read of
the wrong shape or type, a destroyed handle), and what the C subset refuses. The sampling
itself is checked against NumPy in tests/kernels/test_texture_gpu.py and
test_texture_modes.py, whose [sim] items run here too."""

import gc

import numpy as np
import pytest

import jitkern
from jitkern import JitkernValueError, KernelArgumentError, jit
from jitkern.compat import texture as T
from jitkern.cuda import runtime
from jitkern.errors import CompileError, JitTypeError, KernelAssertionError
from jitkern.sim import vector

pytest.importorskip("pycparser")

CLAMP, POINT, LINEAR = (runtime.cudaAddressModeClamp, runtime.cudaFilterModePoint,
                        runtime.cudaFilterModeLinear)


@pytest.fixture
def device():
    with jitkern.simulated_device() as d:
        yield d
        gc.collect()


def float_array(data, flags=0):
    ch = T.ChannelFormatDescriptor(32, 0, 0, 0, runtime.cudaChannelFormatKindFloat)
    arr = T.CUDAarray(ch, *data.shape[::-1], flags=flags)
    arr.copy_from(data)
    return arr


def texture(data, filter_mode=POINT):
    res = T.ResourceDescriptor(runtime.cudaResourceTypeArray, cuArr=float_array(data))
    return T.TextureObject(res, T.TextureDescriptor((CLAMP,) * 3, filter_mode,
                                                    runtime.cudaReadModeElementType))


def surface(data):
    arr = float_array(data, runtime.cudaArraySurfaceLoadStore)
    return arr, T.SurfaceObject(T.ResourceDescriptor(runtime.cudaResourceTypeArray, cuArr=arr))


READ2D = r"""
extern "C" __global__ void read2d(cudaTextureObject_t t, const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<float>(t, x[i], 0.5f);
}
extern "C" __global__ void read_int(cudaTextureObject_t t, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<int>(t, i + 0.5f, 0.5f);
}
"""


def test_texture_reads_run_vectorised_and_agree_with_the_threads(device, rng):
    data = rng.random((4, 64), dtype=np.float32)
    tex = texture(data, LINEAR)
    k = jitkern.RawKernel(READ2D, "read2d")
    x = (rng.integers(0, 8 * 64, 300) / 8.0).astype(np.float32)
    out = np.full(300, np.nan, np.float32)
    k.simulate((3,), (128,), (tex, x, out, np.int32(300)))  # the suite compares both paths
    assert k.simulate.last_path == "vector"
    saved = vector.MODE
    vector.MODE = "threads"
    try:
        again = np.full(300, np.nan, np.float32)
        k.simulate((3,), (128,), (tex, x, again, np.int32(300)))
    finally:
        vector.MODE = saved
    assert k.simulate.last_path == "threads"
    np.testing.assert_array_equal(again, out)
    t = x - 0.5
    want = np.interp(t, np.arange(64), data[0])  # x on the 1/8 grid: exact weights
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-7)


SURF = r"""
extern "C" __global__ void bump(cudaSurfaceObject_t s, int step, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) surf1Dwrite(surf1Dread<float>(s, i * step) + 1.0f, s, i * step);
}
"""


def test_surface_kernels_run_per_thread_and_say_why(device, rng):
    data = rng.standard_normal(100).astype(np.float32)
    arr, surf = surface(data)
    k = jitkern.RawKernel(SURF, "bump")
    k((1,), (128,), (surf, np.int32(4), np.int32(100)))
    assert k.simulate.last_path == "threads"
    assert "surfaces run per thread" in k.simulate.why_threads
    out = np.full(100, np.nan, np.float32)
    arr.copy_to(out)
    np.testing.assert_array_equal(out, data + np.float32(1))


def test_a_surface_access_outside_with_trap_is_an_error(device, rng):
    _, surf = surface(rng.random(16, dtype=np.float32))
    k = jitkern.RawKernel(SURF, "bump")
    with pytest.raises(KernelAssertionError,
                       match=r"RawKernel 'bump' line 4: surf1Dread: coordinate x = 64 bytes is "
                             r"outside the surface \(16 elements of 4 bytes\) with "
                             r"cudaBoundaryModeTrap in thread \(16, 0, 0\) of block"):
        k((1,), (32,), (surf, np.int32(4), np.int32(17)))


def test_a_misaligned_surface_x_is_an_error(device, rng):
    _, surf = surface(rng.random(16, dtype=np.float32))
    k = jitkern.RawKernel(SURF, "bump")
    with pytest.raises(KernelAssertionError, match=r"x = 3 bytes is not a multiple of the "
                                                   r"4-byte element \(x is in bytes\)"):
        k((1,), (32,), (surf, np.int32(3), np.int32(2)))


def test_a_read_with_the_wrong_dimensions_or_type_is_refused(device, rng):
    tex = texture(rng.random(32, dtype=np.float32))  # 1-D
    k = jitkern.RawKernel(READ2D, "read2d")
    x = np.zeros(4, np.float32)
    with pytest.raises(JitkernValueError, match=r"tex2D of a 1-D texture: use tex1D"):
        k.simulate((1,), (32,), (tex, x, np.zeros(4, np.float32), np.int32(4)))
    tex2 = texture(rng.random((2, 32), dtype=np.float32))
    with pytest.raises(JitkernValueError,
                       match=r"tex2D<int> of a texture of float32 texels .* gives floats: "
                             r"read it as float"):
        jitkern.RawKernel(READ2D, "read_int").simulate(
            (1,), (32,), (tex2, np.zeros(4, np.int32), np.int32(4)))


def test_a_destroyed_or_foreign_handle_is_named(device, rng):
    tex = texture(rng.random((2, 8), dtype=np.float32))
    handle = np.uint64(tex.ptr)
    del tex
    gc.collect()
    k = jitkern.RawKernel(READ2D, "read2d")
    with pytest.raises(JitkernValueError, match=rf"tex2D: the handle {int(handle):#x} names no "
                                                r"live object of the simulated device"):
        k.simulate((1,), (32,), (handle, np.zeros(4, np.float32), np.zeros(4, np.float32),
                                 np.int32(4)))
    _, surf = surface(rng.random((2, 8), dtype=np.float32))
    with pytest.raises(JitkernValueError, match=r"names a surface object"):
        k.simulate((1,), (32,), (surf, np.zeros(4, np.float32), np.zeros(4, np.float32),
                                 np.int32(4)))


def test_a_texture_for_a_number_parameter_is_refused(device, rng):
    tex = texture(rng.random((2, 8), dtype=np.float32))
    k = jitkern.RawKernel(READ2D, "read2d")
    with pytest.raises(KernelArgumentError, match=r"read2d: argument 3 \(n\): the kernel "
                                                  r"expects int, got a TextureObject"):
        k.simulate((1,), (32,), (tex, np.zeros(4, np.float32), np.zeros(4, np.float32), tex))


def test_the_descriptor_getters_give_back_what_was_made(device, rng):
    tex = texture(rng.random((2, 8), dtype=np.float32), LINEAR)
    res = device.cuTexObjectGetResourceDesc(tex.ptr)[1]
    desc = device.cuTexObjectGetTextureDesc(tex.ptr)[1]
    assert res.res.array.hArray == tex.ResDesc.cuArr.ptr
    assert int(desc.filterMode) == LINEAR
    assert device.cuSurfObjectGetResourceDesc(tex.ptr)[0] != 0  # not a surface


@pytest.mark.parametrize("code, what", [
    ("out[i] = tex2D(t, 0.5f, 0.5f);", r"tex2D\(\) without its template argument"),
    ("out[i] = tex2D<double>(t, 0.5f, 0.5f);", r"tex2D<float64>"),
    ("out[i] = tex2D<float2>(t, 0.5f, 0.5f).x;", r"tex2D<float2> \(a texel of a CUDA vector type\)"),
    ("surf1Dwrite(1.0f, t, 0, mode);", r"a boundary mode of surf1Dwrite\(\) that is not"),
])
def test_the_c_subset_refuses_what_it_cannot_read(code, what):
    src = ('extern "C" __global__ void k(cudaTextureObject_t t, float* out, int mode) {\n'
           f"    int i = threadIdx.x;\n    {code}\n}}\n")
    k = jitkern.RawKernel(src, "k")
    with pytest.raises(CompileError, match=rf"RawKernel 'k' line 3, column \d+: {what}"):
        k.simulate((1,), (32,), (np.uint64(1), np.zeros(32, np.float32), np.int32(0)))


def test_the_texture_reference_api_stays_refused():
    src = ('texture<float, 2> tex;\nextern "C" __global__ void k(float* out) '
           "{ out[0] = 1.0f; }\n")
    with pytest.raises(CompileError, match=r"line 1, column \d+: 'texture' is outside the C subset"):
        jitkern.RawKernel(src, "k").simulate((1,), (1,), (np.zeros(1, np.float32),))


def test_jit_texture_dtype_must_be_a_texel_type():
    @jitkern.rawkernel()
    def bad(t, out):
        out[0] = jit.texture.tex1D(t, np.float32(0.5), np.float64)

    with pytest.raises(JitTypeError, match=r"texture.tex1D: dtype must be a compile-time NumPy "
                                           r"dtype, one of int8, .*float32; got .*float64"):
        bad.simulate[1, 1](np.uint64(1), np.zeros(1, np.float64))
