"""CUDA arrays (jitkern.compat.texture.CUDAarray) copied from and to host and device memory,
on a GPU (``[gpu]``) and on jitkern's simulated device (``[sim]``: cuArray3DCreate and
cuMemcpy3D over host memory), checked against the data copied in."""

import numpy as np
import pytest

import jitkern
from jitkern.compat import texture as T
from jitkern.cuda import runtime

FLOAT = runtime.cudaChannelFormatKindFloat

_DTYPES = {
    np.float16: FLOAT, np.float32: FLOAT, np.int8: runtime.cudaChannelFormatKindSigned,
    np.int16: runtime.cudaChannelFormatKindSigned, np.int32: runtime.cudaChannelFormatKindSigned,
    np.uint8: runtime.cudaChannelFormatKindUnsigned,
    np.uint16: runtime.cudaChannelFormatKindUnsigned,
    np.uint32: runtime.cudaChannelFormatKindUnsigned,
}


def float_channels(n=1):
    return T.ChannelFormatDescriptor(*([32] * n + [0] * (4 - n)), FLOAT)


@pytest.mark.parametrize("dims", [(67, 0, 0), (67, 19, 0), (67, 19, 31)])
@pytest.mark.parametrize("nch", [1, 2, 4])
@pytest.mark.parametrize("where", ["host", "device", "stream"])
def test_cuda_array_round_trip(rng, dims, nch, where, on_device):
    dtype = list(_DTYPES)[(sum(dims) + nch + len(where)) % len(_DTYPES)]
    width, height, depth = dims
    shape = tuple(s for s in (depth, height) if s) + (nch * width,)
    data = (rng.random(shape) * 100).astype(dtype)
    desc = T.ChannelFormatDescriptor(*([8 * np.dtype(dtype).itemsize] * nch + [0] * (4 - nch)),
                                     _DTYPES[dtype])
    arr = T.CUDAarray(desc, width, height, depth)
    assert arr.shape == shape and arr.ndim == len(shape)
    if on_device is not None:  # the simulated device holds the array's bytes
        assert on_device.arrays[arr.ptr].data.nbytes == arr.nbytes
    if where == "host":
        out = np.full_like(data, 7)
        arr.copy_from(data)
        arr.copy_to(out)
    else:
        stream = jitkern.Stream() if where == "stream" else None
        src = jitkern.asarray(data)
        dst = jitkern.full(shape, 7, dtype)
        if stream is not None:
            jitkern.Stream.null.synchronize()
        arr.copy_from(src, stream)
        arr.copy_to(dst, stream)
        if stream is not None:
            stream.synchronize()
        out = dst.get()
    np.testing.assert_array_equal(out, data)


def test_cuda_array_copy_checks_shape_and_type(on_device):
    arr = T.CUDAarray(float_channels(2), 8, 4)
    with pytest.raises(ValueError, match=r"expected \(4, 16\) elements of 4 byte"):
        arr.copy_from(np.zeros((4, 8), np.float32))
    with pytest.raises(ValueError, match="got 64 element\\(s\\) of 8 byte"):
        arr.copy_from(np.zeros((4, 16), np.float64))
    with pytest.raises(ValueError, match="C-contiguous"):
        arr.copy_from(np.zeros((16, 4), np.float32).T)
