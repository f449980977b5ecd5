"""CuPy's ``cupy.cuda`` spellings that user-kernel code reaches for.

``jitkern.cuda.runtime`` holds the CUDA runtime enum constants (``cudaChannelFormatKindFloat``,
``cudaResourceTypeArray``, ``cudaAddressModeClamp``, ...) and ``jitkern.cuda.texture`` is
:mod:`jitkern.compat.texture`, so ``from cupy.cuda import runtime, texture`` ports by changing
``cupy`` to ``jitkern``. Importing this package touches no device.
"""

from __future__ import annotations

import importlib

from ..errors import JitkernAttributeError

_SUBMODULES = {"runtime": "jitkern.cuda.runtime", "texture": "jitkern.compat.texture"}


def __getattr__(name: str):
    module = _SUBMODULES.get(name)
    if module is None:
        raise JitkernAttributeError(f"module 'jitkern.cuda' has no attribute {name!r}; it has "
                                    f"{', '.join(sorted(_SUBMODULES))}")
    value = importlib.import_module(module)
    globals()[name] = value
    return value
