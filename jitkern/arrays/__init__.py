"""Device arrays (``jitkern.ndarray``), their constructors, and interop with other
GPU libraries through ``__cuda_array_interface__`` (v3) and DLPack.

Importing this package touches no GPU and does not import ``cuda.bindings``. Its public
names load on first use. The pure tables every stage reads (``jitkern/dtypes.py``,
``jitkern/layout.py``, ``jitkern/records.py``) live at the package's ground, beside
``errors.py``, not here: a stage below the arrays reads them without climbing up a layer.
"""

from __future__ import annotations

import importlib

from ..errors import JitkernAttributeError

# public name -> the module that defines it
_NAMES = {
    "DevicePointer": "core",
    "Flags": "core",
    "ndarray": "core",
    "arange": "creation",
    "array": "creation",
    "asarray": "creation",
    "asnumpy": "creation",
    "empty": "creation",
    "empty_like": "creation",
    "from_dlpack": "creation",
    "full": "creation",
    "full_like": "creation",
    "ones": "creation",
    "ones_like": "creation",
    "zeros": "creation",
    "zeros_like": "creation",
    "ArrayInfo": "interop",
    "describe": "interop",
    "pointer_of": "interop",
}

__all__ = sorted(_NAMES)


def __getattr__(name: str):
    module = _NAMES.get(name)
    if module is None:
        raise JitkernAttributeError(f"module 'jitkern.arrays' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted({*globals(), *_NAMES})
