"""CuPy's ``cupy.cuda`` spellings that user-kernel code reaches for.

``jitkern.cuda.runtime`` holds the CUDA runtime enum constants (``cudaChannelFormatKindFloat``,
``cudaResourceTypeArray``, ``cudaAddressModeClamp``, ...) and ``jitkern.cuda.texture`` is
:mod:`jitkern.compat.texture`, so ``from cupy.cuda import runtime, texture`` ports by changing
``cupy`` to ``jitkern``. ``jitkern.cuda.Stream`` (``Stream.null.synchronize()``), ``Event``,
``Device`` and ``get_current_stream`` are jitkern's. Importing this package touches no device.
"""

from __future__ import annotations

import importlib

from ..errors import JitkernAttributeError, JitkernTypeError
from ..runtime import memory

_SUBMODULES = {"runtime": "jitkern.cuda.runtime", "texture": "jitkern.compat.texture"}
#: cupy.cuda's classes and functions user code calls (``cp.cuda.Stream.null.synchronize()``)
_NAMES = {"Stream": "jitkern.runtime.device", "Event": "jitkern.runtime.device",
          "Device": "jitkern.runtime.device", "get_current_stream": "jitkern.runtime.device",
          "get_elapsed_time": "jitkern.runtime.device", "is_available": "jitkern.runtime.driver"}


def __getattr__(name: str):
    module = _SUBMODULES.get(name)
    if module is None and name in _NAMES:
        value = getattr(importlib.import_module(_NAMES[name]), name)
        globals()[name] = value
        return value
    if module is None:
        raise JitkernAttributeError(f"module 'jitkern.cuda' has no attribute {name!r}; it has "
                                    f"{', '.join(sorted({*_SUBMODULES, *_NAMES}))}")
    value = importlib.import_module(module)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_SUBMODULES) | set(_NAMES))


def set_allocator(allocator=None) -> None:
    """CuPy's ``cupy.cuda.set_allocator``: ``None`` makes every allocation its own
    ``cuMemAlloc`` of exactly its size, freed when dropped (no pool, no cache), so
    compute-sanitizer sees an access past an array's end (also ``JITKERN_EXACT_ALLOC=1``);
    ``jitkern.get_default_memory_pool().malloc`` puts the pool back. See docs/debugging.md."""
    if allocator is None:
        memory.set_exact(True)
    elif getattr(allocator, "__self__", None) is memory.get_default_memory_pool() and \
            getattr(allocator, "__name__", "") == "malloc":
        memory.set_exact(False)
    else:
        raise JitkernTypeError(
            "jitkern.cuda.set_allocator takes None (exact allocations) or "
            f"jitkern.get_default_memory_pool().malloc (the pool), not {allocator!r}: jitkern "
            "allocates through its own pool")

