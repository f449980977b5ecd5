"""CUDA runtime enum values under the names CuPy exposes in ``cupy.cuda.runtime``.

Only the constants texture and surface code passes to :mod:`jitkern.compat.texture`. The values
are the CUDA runtime's (``driver_types.h``); the texture module maps them to the driver
API it calls. Pure data: importing this module needs no GPU and no toolkit.
"""

from __future__ import annotations

# cudaChannelFormatKind
cudaChannelFormatKindSigned = 0
cudaChannelFormatKindUnsigned = 1
cudaChannelFormatKindFloat = 2
cudaChannelFormatKindNone = 3

# cudaResourceType
cudaResourceTypeArray = 0
cudaResourceTypeMipmappedArray = 1
cudaResourceTypeLinear = 2
cudaResourceTypePitch2D = 3

# cudaTextureAddressMode
cudaAddressModeWrap = 0
cudaAddressModeClamp = 1
cudaAddressModeMirror = 2
cudaAddressModeBorder = 3

# cudaTextureFilterMode
cudaFilterModePoint = 0
cudaFilterModeLinear = 1

# cudaTextureReadMode
cudaReadModeElementType = 0
cudaReadModeNormalizedFloat = 1

# cudaArray flags (CUDAarray's ``flags``)
cudaArrayDefault = 0
cudaArrayLayered = 1
cudaArraySurfaceLoadStore = 2
cudaArrayCubemap = 4
cudaArrayTextureGather = 8

# cudaMemcpyKind (accepted for completeness; copies pick their direction themselves)
cudaMemcpyHostToHost = 0
cudaMemcpyHostToDevice = 1
cudaMemcpyDeviceToHost = 2
cudaMemcpyDeviceToDevice = 3
cudaMemcpyDefault = 4

is_hip = False
