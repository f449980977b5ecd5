"""Lazy access to the CUDA driver through ``cuda.bindings``.

``cuda.bindings`` costs a few hundred milliseconds to import and fails where no
driver is installed, so it is imported on first use. ``drv()`` returns the
module; ``check()`` turns a ``CUresult`` into :class:`jitkern.CUDAError`.

The seam for tests: ``with driver.use(fake):`` makes ``fake`` (an object with the
``cu*`` functions a test needs; :class:`jitkern.runtime.fakedriver.FakeDriver` has the
ones a launch needs) the driver every part of the runtime calls, and resets the state
the runtime derived from the driver (loaded modules, memory pools, the cached launch
entry points, registered with :func:`resets`); both are restored after the block.
Tests fake the driver this way instead of replacing private names.
"""

from __future__ import annotations

import threading

from ..config import settings
from ..errors import CUDAError

_lock = threading.Lock()
_standin_lock = threading.RLock()
_driver_module = None
_initialised = False
_device_count: int | None = None
_primary_contexts: dict[int, object] = {}
_derived: list[tuple[dict, dict]] = []  # (module namespace, {name: factory}): see resets()
#: Run once as the driver starts: per-process facts of the layers above (the toolchain's
#: identity and NVRTC facts, registered by the kernels and arrays), computed beside the
#: driver's own start (hundreds of ms) rather than on a kernel's first launch.
on_start: list = []
#: Where ``JITKERN_SIMULATE=1`` was set when jitkern was imported: a callable that makes the
#: process's driver a simulated device (jitkern/__init__.py registers the simulator's, which
#: the runtime cannot import); the driver's first start calls it instead of loading CUDA's,
#: once. None otherwise (and once started).
standin = None


def at_start(callback) -> None:
    """Run ``callback()`` when the driver starts (once, however often it is registered)."""
    if callback not in on_start:
        on_start.append(callback)


def drv():
    """The ``cuda.bindings.driver`` module, with ``cuInit`` done."""
    if _initialised:
        return _driver_module
    return _initialise()


def _initialise():
    global _driver_module, _initialised, _device_count, standin
    if standin is not None:
        with _standin_lock:  # a second thread waits until the device is in place
            start, standin = standin, None
            if start is not None:
                start()  # enters driver.use(simulated device) for the rest of the process
    with _lock:
        if _initialised:
            return _driver_module
        for callback in on_start:
            callback()
        try:
            from cuda.bindings import driver as d
        except Exception as exc:  # cuda-python missing or broken
            raise _no_driver(f"cannot import cuda.bindings ({exc})") from None
        try:
            (err,) = d.cuInit(0)
        except Exception as exc:  # libcuda.so not found by pathfinder
            raise _no_driver(f"{type(exc).__name__}: {exc}") from None
        if err == d.CUresult.CUDA_ERROR_NO_DEVICE:
            _device_count = 0
        elif err != d.CUresult.CUDA_SUCCESS:
            raise _no_driver(f"cuInit failed with {_name(d, err)}", int(err))
        else:
            err, count = d.cuDeviceGetCount()
            _device_count = int(count) if err == d.CUresult.CUDA_SUCCESS else 0
        _driver_module = d
        _initialised = True
        return d


def resets(namespace: dict, **factories) -> None:
    """Declare module-level state derived from the driver: ``factories[name]()`` is the
    value ``namespace[name]`` takes when :class:`use` swaps the driver (called after the
    swap, so a factory may call ``drv()``); the old value comes back afterwards. A module
    first imported inside such a block (jitkern imports its parts lazily) gets its values
    from the factories at once, and its own values back when the block ends."""
    _derived.append((namespace, factories))
    if _active_uses:
        originals = {name: namespace.get(name) for name in factories}
        for block in _active_uses:
            block._saved[1].append((namespace, originals))
        for name, factory in factories.items():
            namespace[name] = factory()


def source_runner():
    """The driver's own way to run a kernel from its CUDA C source, without compiling it:
    a simulated device's ``run_array_kernel(source, symbol, grid, block, args)`` (the
    simulator's, which the runtime cannot import), or None for a real driver and for fakes
    that only record launches. Read after a swap (a :func:`resets` factory); looked up on
    the driver's class, so a fake that answers every attribute is not asked."""
    d = drv()
    run = getattr(type(d), "run_array_kernel", None)
    return None if run is None else run.__get__(d)


_active_uses: list = []  # the driver.use blocks entered and not yet left, outermost first
#: Called (no arguments) after a driver.use block swaps the driver in or out: what holds
#: handles or launchers of the previous driver drops them (kernels/base.py: every kernel
#: object's installed launcher and loaded Functions), so the next launch goes through the
#: driver now in use.
on_swap: list = []
#: Changes whenever a driver.use block is entered or left: per-object caches of what was
#: loaded through the driver (runtime/functions.py) compare it and start again.
generation = 0


class use:
    """``with driver.use(fake, devices=1):`` run the block against ``fake`` as the CUDA
    driver (the one seam for tests and the CPU launch benchmark; see the module doc).

    ``fake`` needs only the ``cu*`` functions the code under test calls, each returning
    a tuple whose first item is the ``CUresult`` (0 for success), as ``cuda.bindings``
    does. ``devices`` is what :func:`device_count` says (default: ``fake.devices``, else
    1). Nesting is allowed."""

    def __init__(self, fake, devices: int | None = None):
        self.fake = fake
        self.devices = getattr(fake, "devices", 1) if devices is None else devices
        self._saved = None

    def __enter__(self):
        global _driver_module, _initialised, _device_count, _primary_contexts, _attr_cache
        global _primary_ids
        self._saved = ((_driver_module, _initialised, _device_count, _primary_contexts,
                        _attr_cache, _primary_ids),
                       [(ns, {name: ns.get(name) for name in f}) for ns, f in _derived])
        global generation
        _driver_module, _initialised, _device_count = self.fake, True, self.devices
        _primary_contexts, _attr_cache, _primary_ids = {}, {}, {}
        generation += 1
        for namespace, factories in _derived:
            for name, factory in factories.items():
                namespace[name] = factory()
        _active_uses.append(self)
        for callback in on_swap:
            callback()
        return self.fake

    def __exit__(self, *exc):
        global _driver_module, _initialised, _device_count, _primary_contexts, _attr_cache
        global _primary_ids
        global generation
        own, derived = self._saved
        _active_uses.remove(self)
        generation += 1
        (_driver_module, _initialised, _device_count, _primary_contexts, _attr_cache,
         _primary_ids) = own
        for namespace, values in derived:
            namespace.update(values)
        for callback in on_swap:
            callback()


def _no_driver(reason: str, code=None) -> CUDAError:
    """The error for a machine where the driver cannot start: it names what runs without a
    GPU. While the simulator is on (``settings.simulate``) with no simulated device in use,
    what reached the driver needs a device (memory, a kernel's attributes): the message
    names the two ways to have a simulated one."""
    reason = reason.rstrip(". ")
    if settings.simulate:
        hint = ("; the simulator is on (settings.simulate) but no simulated device is in use, "
                "and this call needs a device: start the program with JITKERN_SIMULATE=1 in "
                "its environment, or run it inside `with jitkern.simulated_device():`, where "
                "a simulated device stands in for the GPU; or pass NumPy arrays to simulated "
                "kernels (k.simulate)")
    else:
        hint = (". Without a GPU, run the program unchanged on jitkern's simulated device "
                "(JITKERN_SIMULATE=1, or `with jitkern.simulated_device():`), or one kernel on "
                "the CPU with NumPy arrays: k.simulate[grid, block](*args) (ElementwiseKernel "
                "and ReductionKernel: k.simulate(*args)); k.inspect(..., arch=...) compiles "
                "without a GPU")
    return CUDAError(f"no CUDA driver found: {reason}{hint}", code)


def _name(d, err) -> str:
    try:
        e2, s = d.cuGetErrorName(err)
        return s.decode() if e2 == d.CUresult.CUDA_SUCCESS else str(int(err))
    except Exception:
        return str(err)


def _describe(d, err) -> str:
    try:
        e2, s = d.cuGetErrorString(err)
        if e2 == d.CUresult.CUDA_SUCCESS and s:
            return s.decode()
    except Exception:
        pass
    return ""


# A kernel's own fault, seen by the next call that waits for the device (launches are
# asynchronous): illegal address, assert/trap, illegal instruction, misaligned address,
# invalid address space or pc, launch failure, hardware stack error.
_KERNEL_FAULTS = frozenset((700, 710, 714, 715, 716, 717, 718, 719))

def is_kernel_fault(err) -> bool:
    """Whether ``err`` is a kernel's fault (sticky: every later call of the context fails)."""
    return int(err) in _KERNEL_FAULTS


#: What a kernel fault's error adds: where to look next (docs/debugging.md).
FAULT_HINT = (
    "\n(a kernel launched before this call faulted; the context cannot be used again in this "
    "process. Find the kernel and line: rerun with JITKERN_DEBUG=1 (JIT kernels check every "
    "index and name the kernel, line and thread), run the kernel in the simulator "
    "(kernel.simulate[grid, block](...) or JITKERN_SIMULATE=1), or run the program under "
    "`compute-sanitizer` with JITKERN_EXACT_ALLOC=1, whose report names the .py file and line "
    "of a JIT kernel's access; see docs/debugging.md)"
)


#: The handle of the kernel this process launched last (every launch path stores it: one
#: list store, ~10 ns); a fault's error names that kernel through ``kernel_name_of``.
LAST_LAUNCH: list = [None]
#: handle -> the kernel's name, or None (set by runtime.graphnodes, which knows jitkern's)
kernel_name_of = None


def _last_kernel_hint() -> str:
    handle = LAST_LAUNCH[0]
    name = None
    if handle is not None and kernel_name_of is not None:
        try:
            name = kernel_name_of(handle)
        except Exception:  # a stand-in handle: no name to give
            name = None
    if name is None:
        return ""
    return (f"\n(the last kernel this process launched was {name!r}; launches are asynchronous, "
            "so an earlier one may have faulted: CUDA_LAUNCH_BLOCKING=1 makes each launch "
            "wait and reports a fault at its own launch)")


def check(result, what: str = "CUDA call"):
    """Unwrap a ``cuda.bindings`` result tuple, raising CUDAError on failure.

    Returns the single value (or tuple of values) after the status code.
    """
    err = result[0]
    if err != 0:
        d = _driver_module
        hint = _last_kernel_hint() + FAULT_HINT if int(err) in _KERNEL_FAULTS else ""
        raise CUDAError(f"{what} failed: {_name(d, err)}: {_describe(d, err)}{hint}", int(err))
    if len(result) == 1:
        return None
    if len(result) == 2:
        return result[1]
    return result[1:]


def is_available() -> bool:
    """True when a driver loads and at least one device is visible."""
    try:
        drv()
    except CUDAError:
        return False
    return bool(_device_count)


def simulating_without_gpu() -> bool:
    """JITKERN_SIMULATE is on and no GPU is usable: synchronizing has nothing to wait for."""
    return settings.simulate and not is_available()


def device_count() -> int:
    """Number of visible CUDA devices; 0 where the driver finds none."""
    drv()
    return int(_device_count or 0)


def require_device(device_id: int) -> None:
    n = device_count()
    if n == 0:
        raise CUDAError("no CUDA device: the driver loaded but found no GPU")
    if not 0 <= device_id < n:
        raise CUDAError(f"device {device_id} does not exist: {n} device(s) visible (0..{n - 1})")


def primary_context(device_id: int):
    """Retain (once) and return the primary context of ``device_id``."""
    ctx = _primary_contexts.get(device_id)
    if ctx is not None:
        return ctx
    require_device(device_id)
    d = drv()
    with _lock:
        ctx = _primary_contexts.get(device_id)
        if ctx is None:
            dev = check(d.cuDeviceGet(device_id), "cuDeviceGet")
            ctx = check(d.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
            _primary_contexts[device_id] = ctx
    return ctx


_primary_ids: dict[int, int] = {}  # int(primary CUcontext) -> device id


def current_device_id() -> int:
    """The device of the current context, making device 0 current if none is.

    The one current-device lookup (context, device and the kernels use it). It is on the
    allocation and launch paths: one ``cuCtxGetCurrent`` and a dict lookup for the
    primary contexts jitkern knows; any other context asks the driver."""
    d = drv()
    _err, ctx = d.cuCtxGetCurrent()
    dev = _primary_ids.get(int(ctx))
    if dev is not None:
        return dev
    if int(ctx) != 0:
        dev = int(check(d.cuCtxGetDevice(), "cuCtxGetDevice"))
    else:
        dev = 0
        set_current(0)
    primary = primary_context(dev)
    if int(check(d.cuCtxGetCurrent(), "cuCtxGetCurrent")) == int(primary):
        _primary_ids[int(primary)] = dev
    return dev


def set_current(device_id: int) -> None:
    d = drv()
    check(d.cuCtxSetCurrent(primary_context(device_id)), "cuCtxSetCurrent")


def driver_version() -> int:
    """The driver's CUDA version as 1000*major + 10*minor (e.g. 13000)."""
    d = drv()
    return int(check(d.cuDriverGetVersion(), "cuDriverGetVersion"))


_attr_cache: dict[tuple[int, str], int] = {}


def device_attribute(device_id: int, name: str) -> int:
    """A ``CU_DEVICE_ATTRIBUTE_<NAME>`` value, cached per device."""
    key = (device_id, name)
    value = _attr_cache.get(key)
    if value is None:
        d = drv()
        require_device(device_id)
        attr = getattr(d.CUdevice_attribute, "CU_DEVICE_ATTRIBUTE_" + name.upper())
        value = int(check(d.cuDeviceGetAttribute(attr, device_id), "cuDeviceGetAttribute"))
        _attr_cache[key] = value
    return value


def compute_capability(device_id: int) -> tuple[int, int]:
    return (
        device_attribute(device_id, "compute_capability_major"),
        device_attribute(device_id, "compute_capability_minor"),
    )


def device_name(device_id: int) -> str:
    d = drv()
    raw = check(d.cuDeviceGetName(256, device_id), "cuDeviceGetName")
    return raw.split(b"\0", 1)[0].decode()


def mem_info(device_id: int) -> tuple[int, int]:
    """(free, total) bytes on ``device_id``."""
    d = drv()
    prev = check(d.cuCtxGetCurrent(), "cuCtxGetCurrent")
    set_current(device_id)
    try:
        free, total = check(d.cuMemGetInfo(), "cuMemGetInfo")
    finally:
        d.cuCtxSetCurrent(prev)  # as it was, "no context" included
    return int(free), int(total)
