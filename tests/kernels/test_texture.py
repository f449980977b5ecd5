"""Texture and surface objects without a GPU: descriptors, their driver structs, argument
packing for RawKernel, ElementwiseKernel codegen with a texture placeholder, refusals."""

import numpy as np
import pytest

import jitkern
from jitkern import JitkernNotImplementedError, JitkernTypeError, JitkernValueError
from jitkern.compat import texture as T
from jitkern.runtime import launch
from jitkern.cuda import runtime
from jitkern.compiler.strings import c_params as _signature
from jitkern.compiler.strings.params import TypeResolutionError

drv = pytest.importorskip("cuda.bindings.driver")


def fake(cls, handle):
    """A texture/surface object holding ``handle`` without touching a driver."""
    obj = cls.__new__(cls)
    obj._handle = handle
    return obj


@pytest.fixture
def texobj(rng):
    obj = fake(T.TextureObject, int(rng.integers(1, 2**62)))
    yield obj
    obj._handle = None  # nothing to destroy


# -- constants ----------------------------------------------------------------------


def test_runtime_constants_have_cuda_runtime_values():
    # driver_types.h: the values a CuPy program passes.
    assert (runtime.cudaChannelFormatKindSigned, runtime.cudaChannelFormatKindUnsigned,
            runtime.cudaChannelFormatKindFloat) == (0, 1, 2)
    assert (runtime.cudaResourceTypeArray, runtime.cudaResourceTypeLinear,
            runtime.cudaResourceTypePitch2D) == (0, 2, 3)
    assert (runtime.cudaAddressModeWrap, runtime.cudaAddressModeClamp,
            runtime.cudaAddressModeMirror, runtime.cudaAddressModeBorder) == (0, 1, 2, 3)
    assert (runtime.cudaFilterModePoint, runtime.cudaFilterModeLinear) == (0, 1)
    assert (runtime.cudaReadModeElementType, runtime.cudaReadModeNormalizedFloat) == (0, 1)
    assert runtime.cudaArraySurfaceLoadStore == 2
    # The same names under jitkern.compat.texture and jitkern.cuda.texture (CuPy's module path).
    assert T.cudaFilterModeLinear == runtime.cudaFilterModeLinear
    assert jitkern.cuda.texture is T and jitkern.cuda.runtime is runtime


def test_driver_enums_match_runtime_values():
    # The texture module passes runtime values straight to the driver's enums.
    assert int(drv.CUaddress_mode.CU_TR_ADDRESS_MODE_BORDER) == runtime.cudaAddressModeBorder
    assert int(drv.CUaddress_mode.CU_TR_ADDRESS_MODE_MIRROR) == runtime.cudaAddressModeMirror
    assert int(drv.CUfilter_mode.CU_TR_FILTER_MODE_LINEAR) == runtime.cudaFilterModeLinear
    assert int(drv.CUresourcetype.CU_RESOURCE_TYPE_PITCH2D) == runtime.cudaResourceTypePitch2D
    assert drv.CUDA_ARRAY3D_SURFACE_LDST == runtime.cudaArraySurfaceLoadStore


# -- ChannelFormatDescriptor --------------------------------------------------------


@pytest.mark.parametrize("bits, kind, fmt, nch, dtype", [
    ((32, 0, 0, 0), runtime.cudaChannelFormatKindFloat, "CU_AD_FORMAT_FLOAT", 1, np.float32),
    ((16, 16, 0, 0), runtime.cudaChannelFormatKindFloat, "CU_AD_FORMAT_HALF", 2, np.float16),
    ((8, 8, 8, 8), runtime.cudaChannelFormatKindUnsigned, "CU_AD_FORMAT_UNSIGNED_INT8", 4,
     np.uint8),
    ((16, 0, 0, 0), runtime.cudaChannelFormatKindSigned, "CU_AD_FORMAT_SIGNED_INT16", 1,
     np.int16),
    ((32, 32, 32, 32), runtime.cudaChannelFormatKindSigned, "CU_AD_FORMAT_SIGNED_INT32", 4,
     np.int32),
])
def test_channel_format(bits, kind, fmt, nch, dtype):
    ch = T.ChannelFormatDescriptor(*bits, kind)
    assert ch.get_channel_format() == dict(zip("xyzwf", (*bits, kind)))
    assert ch.num_channels == nch and ch.channel_dtype == np.dtype(dtype)
    assert ch.element_bytes == nch * np.dtype(dtype).itemsize
    assert ch._driver_format(drv) == getattr(drv.CUarray_format, fmt)
    assert ch.ptr != 0


@pytest.mark.parametrize("args, words", [
    ((0, 32, 0, 0, 2), "come first"),
    ((32, 16, 0, 0, 2), "same number of bits"),
    ((0, 0, 0, 0, 2), "come first"),
    ((8, 0, 0, 0, 2), "8-bit channels of cudaChannelFormatKindFloat"),
    ((64, 0, 0, 0, 1), "64-bit"),
    ((32, 32, 32, 0, 2), "not 3"),
    ((32, 0, 0, 0, 7), "f: 7 is not one of"),
])
def test_channel_format_refusals(args, words):
    with pytest.raises(JitkernValueError, match=words):
        T.ChannelFormatDescriptor(*args)


def test_channel_format_type_errors():
    with pytest.raises(JitkernTypeError, match="x: expected an int, got float"):
        T.ChannelFormatDescriptor(32.0, 0, 0, 0, 2)
    with pytest.raises(TypeError, match="desc: expected a jitkern.compat.texture.ChannelFormatDescriptor"):
        T.CUDAarray((32, 0, 0, 0, 2), 64)


# -- TextureDescriptor --------------------------------------------------------------


def test_texture_descriptor_fields_and_driver_struct():
    td = T.TextureDescriptor((runtime.cudaAddressModeClamp, runtime.cudaAddressModeBorder),
                             runtime.cudaFilterModeLinear, runtime.cudaReadModeElementType,
                             borderColors=(0.5, 1.0), normalizedCoords=1, maxAnisotropy=4)
    assert td.get_texture_desc() == {
        "addressMode": (1, 3), "filterMode": 1, "readMode": 0, "sRGB": 0,
        "borderColor": (0.5, 1.0), "normalizedCoords": 1, "maxAnisotropy": 4}
    d = td._driver_desc(drv, integer_format=False)
    assert [int(m) for m in d.addressMode] == [1, 3, 0]  # the missing one is Wrap (zero)
    assert int(d.filterMode) == 1
    assert d.flags == drv.CU_TRSF_NORMALIZED_COORDINATES  # float texels: not read-as-integer
    assert list(d.borderColor) == [0.5, 1.0, 0.0, 0.0] and d.maxAnisotropy == 4


def test_read_mode_maps_to_the_drivers_read_as_integer_flag():
    # Runtime "element type" on integer texels == driver READ_AS_INTEGER; "normalized
    # float" == no flag (the driver's default promotes integers to [0, 1]).
    elem = T.TextureDescriptor(None, 0, runtime.cudaReadModeElementType)
    norm = T.TextureDescriptor(None, 0, runtime.cudaReadModeNormalizedFloat, sRGB=1)
    assert elem._driver_desc(drv, integer_format=True).flags == drv.CU_TRSF_READ_AS_INTEGER
    assert norm._driver_desc(drv, integer_format=True).flags == drv.CU_TRSF_SRGB
    assert elem._driver_desc(drv, integer_format=False).flags == 0


@pytest.mark.parametrize("kwargs, cls, words", [
    ({"addressModes": (0, 0, 0, 0)}, JitkernValueError, "at most 3"),
    ({"addressModes": (9,)}, JitkernValueError, r"addressModes\[0\]: 9 is not one of"),
    ({"filterMode": 2}, JitkernValueError, "filterMode: 2 is not one of"),
    ({"readMode": 5}, JitkernValueError, "readMode: 5"),
    ({"borderColors": (1, 2, 3, 4, 5)}, JitkernValueError, "at most 4"),
    ({"borderColors": ("red",)}, JitkernTypeError, "must be numbers"),
    ({"maxAnisotropy": -1}, JitkernValueError, ">= 0"),
    ({"normalizedCoords": 0.5}, JitkernTypeError, "normalizedCoords: expected an int"),
])
def test_texture_descriptor_refusals(kwargs, cls, words):
    with pytest.raises(cls, match=words):
        T.TextureDescriptor(**kwargs)


# -- ResourceDescriptor -------------------------------------------------------------


def test_resource_descriptor_checks_what_each_type_needs():
    ch = T.ChannelFormatDescriptor(32, 0, 0, 0, runtime.cudaChannelFormatKindFloat)
    with pytest.raises(TypeError, match="cuArr must be a jitkern.compat.texture.CUDAarray"):
        T.ResourceDescriptor(runtime.cudaResourceTypeArray)
    with pytest.raises(ValueError, match=r"cudaResourceTypeLinear\): arr \(a GPU array\) is required"):
        T.ResourceDescriptor(runtime.cudaResourceTypeLinear, chDesc=ch, sizeInBytes=16)
    with pytest.raises(TypeError, match="host memory"):
        T.ResourceDescriptor(runtime.cudaResourceTypeLinear, arr=np.zeros(4, np.float32),
                             chDesc=ch, sizeInBytes=16)
    with pytest.raises(JitkernNotImplementedError, match="MipmappedArray is not supported"):
        T.ResourceDescriptor(runtime.cudaResourceTypeMipmappedArray)
    with pytest.raises(ValueError, match="restype: 9 is not one of"):
        T.ResourceDescriptor(9)


def test_resource_descriptor_linear_and_pitch_sizes_are_checked(monkeypatch):
    # A stand-in GPU array of 64 float32 (256 bytes) at a fake address.
    monkeypatch.setattr(T, "_device_array", lambda arr, what: (0x10000, 256))
    ch = T.ChannelFormatDescriptor(32, 0, 0, 0, runtime.cudaChannelFormatKindFloat)
    res = T.ResourceDescriptor(runtime.cudaResourceTypeLinear, arr=object(), chDesc=ch,
                               sizeInBytes=256)
    d = res._driver_desc(drv)
    assert int(d.res.linear.devPtr) == 0x10000 and d.res.linear.sizeInBytes == 256
    assert d.res.linear.numChannels == 1
    with pytest.raises(ValueError, match="sizeInBytes=512 is more than the array's 256 bytes"):
        T.ResourceDescriptor(runtime.cudaResourceTypeLinear, arr=object(), chDesc=ch,
                             sizeInBytes=512)
    pitch = T.ResourceDescriptor(runtime.cudaResourceTypePitch2D, arr=object(), chDesc=ch,
                                 width=8, height=8, pitchInBytes=32)
    assert pitch._driver_desc(drv).res.pitch2D.pitchInBytes == 32
    with pytest.raises(ValueError, match="pitchInBytes=16 is less than a row of 8 elements"):
        T.ResourceDescriptor(runtime.cudaResourceTypePitch2D, arr=object(), chDesc=ch,
                             width=8, height=8, pitchInBytes=16)
    with pytest.raises(ValueError, match="9 rows of pitch 32 do not fit"):
        T.ResourceDescriptor(runtime.cudaResourceTypePitch2D, arr=object(), chDesc=ch,
                             width=8, height=9, pitchInBytes=32)


# -- the texture reference API -------------------------------------------------------


def test_texture_reference_api_is_refused_with_the_reason():
    with pytest.raises(JitkernNotImplementedError, match="removed in CUDA 12"):
        T.TextureReference(0, None, None)
    mod = jitkern.RawModule(code='extern "C" __global__ void k() {}')
    with pytest.raises(NotImplementedError, match=r"get_texref\('texref1D'\).*removed in CUDA 12"):
        mod.get_texref("texref1D")


# -- RawKernel argument packing -------------------------------------------------------

TEX_SRC = r"""
extern "C" __global__ void k(float* out, cudaTextureObject_t tex, cudaSurfaceObject_t surf,
                             int n) {}
"""


def test_texture_and_surface_pack_as_their_handles(texobj, rng):
    surf = fake(T.SurfaceObject, int(rng.integers(1, 2**62)))
    params = _signature.kernel_params(TEX_SRC, "k")
    assert [p.pointer for p in params] == [True, False, False, False]
    out = np.zeros(1)  # a device pointer is a plain int here
    plan = launch.build_plan((12345, texobj, surf, 7), [8, 8, 8, 4], params, "k")
    plan.pack((12345, texobj, surf, 7))
    raw = bytes(plan._buffer)[:28]
    assert np.frombuffer(raw[:24], np.uint64).tolist() == [12345, texobj.ptr, surf.ptr]
    assert np.frombuffer(raw[24:28], np.int32)[0] == 7
    assert [s.pointer for s in plan.slots] == [False, False, False, False]
    del out
    surf._handle = None


def test_texture_for_a_pointer_parameter_is_refused(texobj):
    params = _signature.kernel_params(TEX_SRC, "k")
    with pytest.raises(jitkern.KernelArgumentError,
                       match=r"argument 0 \(out\): the kernel expects a pointer"):
        launch.build_plan((texobj, texobj, texobj, 1), [8, 8, 8, 4], params, "k")


def test_cupy_texture_objects_are_recognised_by_name():
    # CuPy's classes (cupy.cuda.texture.TextureObject) are accepted the same way.
    cls = type("TextureObject", (), {"__module__": "cupy.cuda.texture", "ptr": 77})
    other = type("TextureObject", (), {"__module__": "mylib", "ptr": 77})
    plan = launch.build_plan((cls(),), [8], None, "k")
    plan.pack((cls(),))
    assert np.frombuffer(bytes(plan._buffer)[:8], np.uint64)[0] == 77
    with pytest.raises(jitkern.KernelArgumentError, match="cannot pass a mylib.TextureObject"):
        launch.build_plan((other(),), [8], None, "k")


# -- ElementwiseKernel ------------------------------------------------------------------


def test_elementwise_texture_placeholder_becomes_the_handle_type(texobj, arch):
    k = jitkern.ElementwiseKernel(
        "T x, U texObj, uint64 width", "T y",
        "T v = tex2D<T>(texObj, (float)(i % width), (float)(i / width)); y = v + x;",
        name="tex2d_add")
    info = k.inspect(np.zeros((4, 8), np.float32), texobj, 8, arch=arch)
    assert "typedef cudaTextureObject_t U;" in info.source
    assert "typedef float T;" in info.source
    assert "    U texObj," in info.source
    assert info.cubin[:4] == b"\x7fELF"


@pytest.fixture(params=["sm_90"])
def arch(request):
    return request.param


def test_elementwise_texture_needs_its_own_placeholder(texobj):
    x = np.zeros(8, np.float32)
    shared = jitkern.ElementwiseKernel("T x, T texObj", "T y", "y = x;", name="shared")
    with pytest.raises(TypeResolutionError,
                       match="placeholder 'T' of input 'texObj'.*also float32"):
        shared.inspect(x, texobj, arch="sm_90")
    fixed = jitkern.ElementwiseKernel("T x, uint64 texObj", "T y", "y = x;", name="fixed")
    with pytest.raises(TypeError, match="declared uint64, but a cudaTextureObject_t object"):
        fixed.inspect(x, texobj, arch="sm_90")
    # raw or not, a texture object is a scalar parameter (as CuPy passes it)
    raw = jitkern.ElementwiseKernel("T x, raw U texObj", "T y", "y = x;", name="rawtex")
    assert "U texObj" in raw.inspect(x, texobj, arch="sm_90").source


def test_reduction_kernel_refuses_textures(texobj):
    k = jitkern.ReductionKernel("T x, U texObj", "T y", "x", "a + b", "y = a", "0", "r")
    with pytest.raises(jitkern.KernelArgumentError,
                       match="input 'texObj': texture memory is not supported in ReductionKernel"):
        k.inspect(np.zeros(8, np.float32), texobj, arch="sm_90")
