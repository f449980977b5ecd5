"""jitkern: a Python-to-CUDA JIT compiler and custom-kernel toolkit.

``import jitkern`` needs no GPU and no CUDA toolkit and touches no device;
names are loaded from their submodules on first access.
"""

from __future__ import annotations

import importlib

from .errors import (
    CompileError,
    CUDAError,
    FunctionNotFoundError,
    InternalError,
    JitError,
    JitIndexError,
    JitkernAttributeError,
    JitkernBufferError,
    JitkernError,
    JitkernFileNotFoundError,
    JitkernIndexError,
    JitkernKeyError,
    JitkernNotImplementedError,
    JitkernOverflowError,
    JitkernRuntimeError,
    JitkernTypeError,
    JitkernValueError,
    JitkernAxisError,
    JitNameError,
    JitSyntaxError,
    JitTypeError,
    JitValueError,
    KernelArgumentError,
    KernelAssertionError,
    LaunchError,
    OutOfMemoryError,
    StreamCaptureError,
)

from .config import VERSION as __version__  # noqa: E402, F401 - one place for the version

# public name -> module that defines it (loaded on first access)
_LAZY = {
    # devices and streams
    "Device": "jitkern.runtime.device",
    "Stream": "jitkern.runtime.device",
    "Event": "jitkern.runtime.device",
    "Graph": "jitkern.runtime.device",
    "get_current_stream": "jitkern.runtime.device",
    "get_elapsed_time": "jitkern.runtime.device",
    "synchronize": "jitkern.runtime.device",
    "is_available": "jitkern.runtime.driver",
    "get_default_memory_pool": "jitkern.runtime.memory",
    # compile cache
    "compile_with_cache": "jitkern.compat.api",
    "memoize": "jitkern.compat.api",
    "clear_memo": "jitkern.compat.api",
    "clear_cache": "jitkern.compat.api",
    # string kernels
    "RawKernel": "jitkern.kernels.raw",
    "RawModule": "jitkern.kernels.raw",
    "ElementwiseKernel": "jitkern.kernels.elementwise",
    "ReductionKernel": "jitkern.kernels.reduction",
    "fuse": "jitkern.kernels.fuse",
    "load": "jitkern.kernels.exported",
    # JIT
    "rawkernel": "jitkern.jit",
    # arrays
    "ndarray": "jitkern.arrays",
    "asarray": "jitkern.arrays",
    "array": "jitkern.arrays",
    "empty": "jitkern.arrays",
    "zeros": "jitkern.arrays",
    "ones": "jitkern.arrays",
    "full": "jitkern.arrays",
    "arange": "jitkern.arrays",
    "empty_like": "jitkern.arrays",
    "zeros_like": "jitkern.arrays",
    "ones_like": "jitkern.arrays",
    "full_like": "jitkern.arrays",
    "asnumpy": "jitkern.arrays",
    "from_dlpack": "jitkern.arrays",
}
_SUBMODULES = {
    "jit", "backend", "arrays", "kernels", "config", "errors", "texture", "cuda", "graph",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"jitkern.{name}")
    # NumPy's routine names (jitkern.sqrt, jitkern.where, ...), as CuPy code calls them
    routines = importlib.import_module("jitkern.kernels.fuse.api").ROUTINES
    if name in routines:
        globals()[name] = routines[name]
        return routines[name]
    raise JitkernAttributeError(f"module 'jitkern' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | _SUBMODULES)


__all__ = [
    "CUDAError", "CompileError", "FunctionNotFoundError", "InternalError", "JitError", "JitIndexError", "JitNameError",
    "JitSyntaxError", "JitTypeError", "JitValueError", "JitkernAttributeError",
    "JitkernBufferError", "JitkernError", "JitkernFileNotFoundError", "JitkernIndexError",
    "JitkernKeyError", "JitkernNotImplementedError", "JitkernOverflowError",
    "JitkernRuntimeError", "JitkernTypeError", "JitkernValueError", "JitkernAxisError",
    "KernelArgumentError",
    "KernelAssertionError", "LaunchError", "OutOfMemoryError", "StreamCaptureError", *_LAZY,
]
