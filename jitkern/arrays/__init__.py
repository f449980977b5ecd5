"""Device arrays (``jitkern.ndarray``), their constructors, and interop with other
GPU libraries through ``__cuda_array_interface__`` (v3) and DLPack.

Importing this package touches no GPU and does not import ``cuda.bindings``.
"""

from .core import DevicePointer, Flags, ndarray
from .creation import (
    arange,
    array,
    asarray,
    asnumpy,
    empty,
    empty_like,
    from_dlpack,
    full,
    full_like,
    ones,
    ones_like,
    zeros,
    zeros_like,
)
from .interop import ArrayInfo, describe, pointer_of

__all__ = [
    "ArrayInfo", "DevicePointer", "Flags", "arange", "array", "asarray", "asnumpy", "describe",
    "empty", "empty_like", "from_dlpack", "full", "full_like", "ndarray", "ones", "ones_like",
    "pointer_of", "zeros", "zeros_like",
]
