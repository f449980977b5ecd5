"""CuPy's ``cupy.cuda`` spellings that user-kernel code reaches for.

``jitkern.cuda.runtime`` holds the CUDA runtime enum constants (``cudaChannelFormatKindFloat``,
``cudaResourceTypeArray``, ``cudaAddressModeClamp``, ...) and ``jitkern.cuda.texture`` is
:mod:`jitkern.compat.texture`, so ``from cupy.cuda import runtime, texture`` ports by changing
``cupy`` to ``jitkern``. ``jitkern.cuda.Stream`` (``Stream.null.synchronize()``), ``Event``,
``Device`` and ``get_current_stream`` are jitkern's. Importing this package touches no device.
"""

from __future__ import annotations

import importlib

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
        from ..errors import JitkernAttributeError

        raise JitkernAttributeError(f"module 'jitkern.cuda' has no attribute {name!r}; it has "
                                    f"{', '.join(sorted({*_SUBMODULES, *_NAMES}))}")
    value = importlib.import_module(module)
    globals()[name] = value
    return value
