"""The loaded kernels of a kernel object, per device: the one cache every kind uses.

A :class:`~.module.Function` already keeps its own state (module handle, parameter
layout) per device, so the devices that run one binary share one Function; only
devices that need different binaries (GPUs of different archs) get different
Functions. :class:`Functions` holds that for one kernel (RawKernel, an exported
kernel); :class:`SourceFunctions` holds it for each generated source of a kernel that
generates several (ElementwiseKernel, ReductionKernel, jitkern's own array kernels).

Which binary a device runs is the caller's to say (``binary_of(device_id)``: the
kernels pass the device's Arch, jitkern's array kernels its compute capability), so
this module needs nothing of the toolchain.
"""

from __future__ import annotations

from . import driver
from .module import Function


class Functions:
    """The loaded kernels of one kernel object: one :class:`~.module.Function` per binary.

    ``binary_of(device_id)`` names the binary a device runs (hashable: an Arch, a
    Binary); ``make(that)`` builds its Function on a miss, with that device current. The
    device -> Function memo keeps a repeat lookup to one dict get.
    """

    __slots__ = ("_by_binary", "_by_device", "_make", "_binary_of")

    def __init__(self, make, binary_of):
        self._by_binary: dict = {}
        self._by_device: dict = {}
        self._make = make
        self._binary_of = binary_of

    def current(self):
        """The Function for the current device, loaded there (a missing name fails here)."""
        device_id = driver.current_device_id()
        fn = self._by_device.get(device_id)
        if fn is None:
            which = self._binary_of(device_id)
            fn = self._by_binary.get(which)
            if fn is None:
                fn = self._by_binary[which] = self._make(which)
            fn.handle(device_id)
            self._by_device[device_id] = fn
        return fn


class SourceFunctions:
    """A key naming a generated source and kernel (the source itself, or a small key whose
    source is made only on a miss) -> :class:`Functions`: each device runs the source
    compiled for its own binary (``compile(source, which, symbol) -> Binary``, called with
    that device current), loaded on that device.

    ``on_new(fn)`` (optional) is told of each Function made (debug builds keep a record per
    binary). On a machine with one GPU a repeat lookup is one dict get (jitkern's array
    kernels look theirs up on every call); with several it asks for the current device.
    """

    __slots__ = ("_by_key", "_one_gpu", "_compile", "_binary_of", "_on_new")

    def __init__(self, compile, binary_of, on_new=None):
        self._by_key: dict = {}
        self._one_gpu: dict = {}  # key -> Function, while one GPU is visible
        self._compile = compile
        self._binary_of = binary_of
        self._on_new = on_new

    def current(self, key, symbol: str, display_name: str | None = None,
                make_source=None) -> Function:
        """The Function of ``symbol`` for the current device, loaded there. ``key`` names the
        source and the symbol; the source is ``key`` itself, or ``make_source()``."""
        fn = self._one_gpu.get(key)
        if fn is not None:
            return fn
        functions = self._by_key.get(key)
        if functions is None:
            def make(which):
                source = key if make_source is None else make_source()
                made = Function(self._compile(source, which, symbol), symbol,
                                display_name=display_name)
                if self._on_new is not None:
                    self._on_new(made)
                return made

            functions = self._by_key[key] = Functions(make, self._binary_of)
        fn = functions.current()
        if driver.device_count() == 1:
            self._one_gpu[key] = fn
        return fn

    def __len__(self) -> int:
        return len(self._by_key)
