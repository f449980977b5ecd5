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
    JitAttributeError,
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
    JitOverflowError,
    JitRecursionError,
    JitSyntaxError,
    JitTypeError,
    JitUnpackError,
    JitValueError,
    KernelArgumentError,
    KernelAssertionError,
    LaunchError,
    OutOfMemoryError,
    ParamError,
    SimulatorError,
    StreamCaptureError,
)

from .config import VERSION as __version__  # noqa: E402, F401 - one place for the version
from .config import settings as _settings  # noqa: E402
from .compat import NUMPY_NAMES as _NUMPY_NAMES  # noqa: E402 - names only, nothing loaded

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
    "simulated_device": "jitkern.sim.device",
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
    "autotune": "jitkern.kernels.autotune",
    "Config": "jitkern.kernels.autotune",
    # JIT
    "rawkernel": "jitkern.jit",
    # arrays (the constructors make NumPy arrays while JITKERN_SIMULATE is on)
    "ndarray": "jitkern.arrays",
    "asarray": "jitkern.compat.namespace",
    "array": "jitkern.compat.namespace",
    "empty": "jitkern.compat.namespace",
    "zeros": "jitkern.compat.namespace",
    "ones": "jitkern.compat.namespace",
    "full": "jitkern.compat.namespace",
    "arange": "jitkern.compat.namespace",
    "empty_like": "jitkern.compat.namespace",
    "zeros_like": "jitkern.compat.namespace",
    "ones_like": "jitkern.compat.namespace",
    "full_like": "jitkern.compat.namespace",
    "asnumpy": "jitkern.arrays",
    "from_dlpack": "jitkern.arrays",
    # CuPy's array namespace: routines, linear algebra, random (docs/compat.md)
    **dict.fromkeys(("allclose", "isclose", "array_equal", "linspace", "reshape", "ravel",
                     "transpose", "swapaxes", "squeeze", "get_array_module"),
                    "jitkern.compat.routines"),
    **dict.fromkeys(("dot", "matmul", "vdot", "inner"), "jitkern.compat.linalg"),
}
#: public submodules that live elsewhere in the package
_SUBMODULE_PATHS = {"random": "jitkern.compat.random"}
_SUBMODULES = {"jit", "arrays", "kernels", "config", "errors", "cuda", "graph", "dask"}
#: the ground's tables, which the package's own modules import as ``from .. import dtypes``:
#: that asks this module for the name first, before the submodule is loaded
_GROUND_MODULES = {"dtypes", "layout", "records"}


def _enter_simulated_device():
    """JITKERN_SIMULATE=1: the driver starts as a simulated device (docs/debugging.md)."""
    importlib.import_module("jitkern.sim.device").enter_for_process()


if _settings.simulate:  # JITKERN_SIMULATE=1: the whole process runs on a simulated device
    importlib.import_module("jitkern.runtime.driver").standin = _enter_simulated_device


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES or name in _SUBMODULE_PATHS or name in _GROUND_MODULES:
        return importlib.import_module(_SUBMODULE_PATHS.get(name, f"jitkern.{name}"))
    if name in _NUMPY_NAMES:  # NumPy's dtype names and constants (jitkern.float32 is NumPy's)
        value = getattr(importlib.import_module("jitkern.compat.namespace"), name)
        globals()[name] = value
        return value
    # NumPy's routine names (jitkern.sqrt, jitkern.where, ...), as CuPy code calls them
    routines = importlib.import_module("jitkern.kernels.fuse.api").ROUTINES
    if name in routines:
        globals()[name] = routines[name]
        return routines[name]
    raise importlib.import_module("jitkern.compat.missing").missing(name)


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | _SUBMODULES | set(_SUBMODULE_PATHS) | set(_NUMPY_NAMES))


__all__ = [
    "CUDAError", "CompileError", "FunctionNotFoundError", "InternalError", "JitAttributeError",
    "JitError", "JitIndexError", "JitNameError", "JitOverflowError",
    "JitRecursionError", "JitSyntaxError", "JitTypeError", "JitUnpackError", "JitValueError",
    "JitkernAttributeError",
    "JitkernBufferError", "JitkernError", "JitkernFileNotFoundError", "JitkernIndexError",
    "JitkernKeyError", "JitkernNotImplementedError", "JitkernOverflowError",
    "JitkernRuntimeError", "JitkernTypeError", "JitkernValueError", "JitkernAxisError",
    "KernelArgumentError", "ParamError", "SimulatorError",
    "KernelAssertionError", "LaunchError", "OutOfMemoryError", "StreamCaptureError", *_LAZY,
]
