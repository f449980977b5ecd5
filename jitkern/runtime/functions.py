"""The loaded kernels of a kernel object, per device and per arch: the one cache every kind uses.

A :class:`~.module.Function` already keeps its own state (module handle, parameter
layout, packing plans) per device, so the devices that run one binary share one Function;
only devices that need different binaries (GPUs of different archs) get different
Functions. :class:`Functions` holds that for every build a kernel object makes, by a key
the kind chooses (None for a kernel of one source: RawKernel, an exported kernel; the
argument types of a ``@rawkernel`` specialisation; the generated source of a string
kernel), so no kind can load one device's binary on another.

Which binary a device runs, and how it is built, is the caller's to say (the kernels build
for the device's Arch through their memo, jitkern's array kernels for its compute
capability): this module is a cache and calls nothing above the runtime.
"""

from __future__ import annotations

from . import driver, module
from .module import Function


class Functions:
    """key -> the :class:`~.module.Function` each device runs for it: a cache only (the
    kernel object that owns it builds on a miss: kernels/base.py, ``Kernel._function``).

    ``which`` names the binary a device runs (an Arch, a compute capability): devices that
    run one binary share its Function. The device -> Function map keeps a repeat lookup to
    one dict get; on a machine with one GPU, to one dict get without asking for the current
    device. Everything is dropped when ``driver.use`` swaps the driver (its generation).
    """

    __slots__ = ("_by_binary", "_by_device", "_one_gpu", "_generation")

    def __init__(self):
        self._by_binary: dict = {}  # (key, which) -> Function
        self._by_device: dict = {}  # (key, device id) -> Function
        self._one_gpu: dict = {}  # key -> Function, while one GPU is visible
        self._generation = driver.generation  # loaded through this driver (driver.use)

    def current(self, key=None) -> Function | None:
        """The Function of ``key`` loaded on the current device, or None (build it, then
        :meth:`add` it)."""
        if self._generation != driver.generation:  # another driver now: load again
            self.clear()
        if not module._multi_device:
            fn = self._one_gpu.get(key)
            if fn is not None:
                return fn
        return self._by_device.get((key, driver.current_device_id()))

    def built(self, key, which) -> Function | None:
        """The Function of ``key`` built for binary ``which``, if one was (another device of
        the same arch loaded it)."""
        return self._by_binary.get((key, which))

    def add(self, key, which, device_id: int, fn: Function) -> Function:
        """Keep ``fn`` as ``key``'s Function for binary ``which``, loaded on ``device_id``
        now (a missing kernel name fails here)."""
        self._by_binary[(key, which)] = fn
        fn.handle(device_id)
        self._by_device[(key, device_id)] = fn
        if driver.device_count() == 1:
            self._one_gpu[key] = fn
        return fn

    def copy(self) -> "Functions":
        """Another cache holding the same Functions (a new kernel object of a remembered
        definition starts with what the first one loaded: kernels/made_again.py)."""
        other = Functions.__new__(Functions)
        other._by_binary, other._by_device = self._by_binary.copy(), self._by_device.copy()
        other._one_gpu, other._generation = self._one_gpu.copy(), self._generation
        return other

    def loaded(self) -> list[Function]:
        """Every Function made so far (each binary's once)."""
        return list(dict.fromkeys(self._by_binary.values()))

    def clear(self) -> None:
        """Forget every Function (the next lookup builds again: the memo, the compile cache)."""
        self._by_binary.clear()
        self._by_device.clear()
        self._one_gpu.clear()
        self._generation = driver.generation

    def __len__(self) -> int:
        return len({key for key, _which in self._by_binary})
