"""Stand-ins for PyTorch tensors and CuPy arrays over jitkern device memory, for timing
launches with the driver stubbed (``bench_launch.py --fake``) on a machine without a GPU.

jitkern recognises a library by its class's module (runtime.args), so a class whose
``__module__`` is ``torch`` (or ``cupy``) is read exactly as the real one is, through
the same attributes. The stand-ins' attributes are plain Python ones, so they cost
about what the real C-level ones do; the figures compare jitkern with itself (one
checkout against another), not with the real libraries. Installed only where the real
library is missing (``install()``), never on a machine that has it.
"""

from __future__ import annotations

import sys
import types

_NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128", "bfloat16"]


class _TorchDType:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"


def _fake_torch_module():
    torch = types.ModuleType("torch")
    for name in _NAMES:
        setattr(torch, name, _TorchDType(name))
    torch.cuda = types.SimpleNamespace(is_available=lambda: False)
    torch.__jitkern_fake__ = True

    def empty(*shape, size=None, dtype=None, device=None):  # results follow the inputs
        import jitkern

        dims = size if size is not None else (
            shape[0] if len(shape) == 1 and isinstance(shape[0], tuple) else shape)
        return Tensor(jitkern.empty(dims, dtype.name), dtype)

    torch.empty = empty
    return torch


def _fake_cupy_module():
    cupy = types.ModuleType("cupy")
    cupy.ndarray = ndarray
    cupy.cuda = types.SimpleNamespace(Stream=type("Stream", (), {}))  # (no other stream here)
    cupy.__jitkern_fake__ = True
    return cupy


class Tensor:
    """The attributes jitkern reads from a ``torch.Tensor`` on the GPU."""

    __slots__ = ("_base", "_ptr", "_shape", "_stride", "_itemsize", "dtype", "is_cuda",
                 "shape", "_numel")

    def __init__(self, base, torch_dtype):
        self._base = base  # keeps the jitkern array's memory alive
        self._ptr = base.data.ptr
        self.shape = tuple(base.shape)
        self._itemsize = base.itemsize
        self._numel = int(base.size)
        self._stride = tuple(s // base.itemsize for s in base.strides)
        self.dtype = torch_dtype
        self.is_cuda = True

    def data_ptr(self):
        return self._ptr

    def stride(self):
        return self._stride

    def dim(self):
        return len(self.shape)

    def numel(self):
        return self._numel

    def element_size(self):
        return self._itemsize

    def is_contiguous(self):
        return True

    def get_device(self):
        return 0


Tensor.__module__ = "torch"


class _Memory:
    __slots__ = ("ptr", "device_id")

    def __init__(self, ptr):
        self.ptr, self.device_id = ptr, 0


class ndarray:
    """The attributes jitkern reads from a ``cupy.ndarray`` (plain slots, as CuPy's are)."""

    __slots__ = ("_base", "data", "shape", "strides", "dtype", "size", "ndim", "itemsize",
                 "_c_contiguous", "device")

    def __init__(self, base, dtype=None):
        if dtype is not None:  # cupy.ndarray(shape, dtype): results follow the inputs
            import jitkern

            base = jitkern.empty(base, dtype)
        self._base = base
        self.data = _Memory(base.data.ptr)
        self.shape, self.strides, self.dtype = tuple(base.shape), tuple(base.strides), base.dtype
        self.size, self.ndim, self.itemsize = base.size, base.ndim, base.itemsize
        self._c_contiguous = True
        self.device = types.SimpleNamespace(id=0)

    @property
    def __cuda_array_interface__(self):
        return {"data": (self.data.ptr, False), "shape": self.shape,
                "typestr": self.dtype.str, "strides": None, "version": 3}


ndarray.__module__ = "cupy"


def install() -> dict:
    """{kind name: make(jitkern array) -> stand-in} for the libraries not installed here
    (a fake ``torch`` module is put in sys.modules for jitkern's dtype table)."""
    kinds = {}
    try:
        import torch  # noqa: F401
    except ImportError:
        torch = sys.modules["torch"] = _fake_torch_module()
    if getattr(torch, "__jitkern_fake__", False):
        kinds["PyTorch (stand-in)"] = lambda a: Tensor(a, torch.float32)
    try:
        import cupy  # noqa: F401
    except ImportError:
        cupy = sys.modules["cupy"] = _fake_cupy_module()
    if getattr(cupy, "__jitkern_fake__", False):
        kinds["CuPy (stand-in)"] = ndarray
    return kinds
