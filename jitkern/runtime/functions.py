"""The loaded kernels of a kernel object, per device and per arch: the one cache every kind uses.

A :class:`~.module.Function` already keeps its own state (module handle, parameter
layout, packing plans) per device, so the devices that run one binary share one Function;
only devices that need different binaries (GPUs of different archs) get different
Functions. :class:`Functions` holds that for every build a kernel object makes, by a key
the kind chooses (None for a kernel of one source: RawKernel, an exported kernel; the
argument types of a ``@rawkernel`` specialisation; the generated source of a string
kernel), so no kind can load one device's binary on another.

Which binary a device runs is the caller's to say (``binary_of(device_id)``: the kernels
pass the device's Arch, jitkern's array kernels its compute capability), so this module
needs nothing of the toolchain.
"""

from __future__ import annotations

from . import driver, module
from .module import Function


class Functions:
    """key -> the :class:`~.module.Function` each device runs for it.

    ``make(key, which, *extra)`` builds the Function for binary ``which`` (what
    ``binary_of(device_id)`` names: an Arch, a compute capability) on a miss, with that
    device current; ``extra`` is what :meth:`current` was given beyond the key (a source
    made only on a miss). The device -> Function memo keeps a repeat lookup to one dict get;
    on a machine with one GPU, to one dict get without asking for the current device.
    """

    __slots__ = ("_by_binary", "_by_device", "_one_gpu", "_make", "_binary_of", "_generation")

    def __init__(self, make, binary_of):
        self._by_binary: dict = {}  # (key, which) -> Function
        self._by_device: dict = {}  # (key, device id) -> Function
        self._one_gpu: dict = {}  # key -> Function, while one GPU is visible
        self._make = make
        self._binary_of = binary_of
        self._generation = driver.generation  # loaded through this driver (driver.use)

    def current(self, key=None, *extra) -> Function:
        """The Function of ``key`` for the current device, loaded there (a missing kernel
        name fails here)."""
        if self._generation != driver.generation:  # another driver now: load again
            self.clear()
        if not module._multi_device:
            fn = self._one_gpu.get(key)
            if fn is not None:
                return fn
        device_id = driver.current_device_id()
        fn = self._by_device.get((key, device_id))
        if fn is None:
            fn = self._load(key, device_id, extra)
        return fn

    def _load(self, key, device_id: int, extra) -> Function:
        which = self._binary_of(device_id)
        fn = self._by_binary.get((key, which))
        if fn is None:
            fn = self._by_binary[(key, which)] = self._make(key, which, *extra)
        fn.handle(device_id)
        self._by_device[(key, device_id)] = fn
        if driver.device_count() == 1:
            self._one_gpu[key] = fn
        return fn

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


class SourceFunctions(Functions):
    """:class:`Functions` keyed by a generated source (or a small key whose source is made
    only on a miss): ``compile(source, which, symbol) -> Binary`` builds each device's
    binary, ``on_new(fn)`` (optional) is told of each Function made. jitkern's own array
    kernels use it (they look theirs up on every call)."""

    __slots__ = ("_compile", "_on_new")

    def __init__(self, compile, binary_of, on_new=None):
        super().__init__(self._make_function, binary_of)
        self._compile = compile
        self._on_new = on_new

    def _make_function(self, key, which, symbol, display_name=None, make_source=None):
        source = key if make_source is None else make_source()
        made = Function(self._compile(source, which, symbol), symbol, display_name=display_name)
        if self._on_new is not None:
            self._on_new(made)
        return made
