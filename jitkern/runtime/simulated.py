"""The simulated device in use now (jitkern/sim/device.py, a driver stand-in), as the
runtime and the kernels see it: whether one is the driver, jitkern arrays as NumPy views
of its memory, what it refuses as a GPU does (host arrays given to a kernel), and the work
a stream capture on it records instead of running. Here, not in sim/, because code that
never simulates asks it (jitkern's constructors, a RawKernel's attributes): a first GPU
launch loads nothing of the simulator.

``JITKERN_SIMULATE=1`` in the environment when jitkern is imported makes the whole process
run on a simulated device (the driver starts as one: ``driver.standin``), as if the program
ran inside ``with jitkern.simulated_device():``.
"""

from __future__ import annotations

import contextlib
import threading

import numpy

from .. import config
from ..errors import KernelArgumentError
from . import driver
from .device import stream_handle

#: The simulated devices entered (``jitkern.simulated_device()``, and the process's own
#: under ``JITKERN_SIMULATE=1``, which is never left) and not yet left.
ACTIVE: list = []
_call = threading.local()  # .stream: the stream a kernel object's own call was given


def active():
    """The simulated device the runtime is using now, or None (a GPU, or no device). Under
    ``JITKERN_SIMULATE=1`` the first question starts the process's simulated device."""
    if driver.standin is not None:
        driver.drv()
    return ACTIVE[-1] if ACTIVE and driver._driver_module is ACTIVE[-1] else None


HOST_ON_DEVICE = (
    "lives in host memory and cannot be passed to a kernel, on jitkern's simulated device as "
    "on a GPU; copy it to the device first with jitkern.asarray(x), or run the kernel itself "
    "on NumPy arrays: k.simulate[grid, block](*args) (ElementwiseKernel and ReductionKernel: "
    "k.simulate(*args))")


@contextlib.contextmanager
def kernel_call(stream, args=(), what=None):
    """The block is a kernel object's own call running in the simulator (what the simulate
    switch makes its call; not its ``.simulate``, which takes NumPy arrays). On a simulated
    device a NumPy array among ``args`` is refused as a GPU launch refuses it (``what(i)``
    names argument ``i`` as the kind's GPU errors do), and ``stream`` is the stream a
    capture there records the call on (None: the current stream)."""
    if what is not None and isinstance(args, (tuple, list)) and active() is not None:
        for i, value in enumerate(args):
            if isinstance(value, numpy.ndarray) and not _one_record(value):
                raise KernelArgumentError(f"{what(i)}: a numpy.ndarray {HOST_ON_DEVICE}")
    saved = getattr(_call, "stream", None)
    _call.stream = stream
    try:
        yield
    finally:
        _call.stream = saved


def _one_record(value: numpy.ndarray) -> bool:
    """A structured array of one element: a struct passed by value, as a GPU launch takes it
    (docs/raw_kernels.md); whether the parameter is one, the kernel's own checks say."""
    return value.dtype.fields is not None and value.size == 1


def record(stream, run) -> bool:
    """On a simulated device whose stream is capturing, ``run`` (a kernel's work, ready to
    run) goes into the capture instead of running now, as a GPU records a launch: True.
    ``stream``: the launch's (None: the kernel call's, else the current stream)."""
    device, handle = _capturing_stream(stream)
    return handle is not None and device.capture(handle, run)


def capturing(stream=None) -> bool:
    """Whether a kernel call on ``stream`` (None: the call's, else the current stream) would
    be recorded by a capture on the simulated device in use."""
    device, handle = _capturing_stream(stream)
    return handle is not None and device.is_capturing(handle)


def _capturing_stream(stream) -> tuple:
    """(the simulated device, the handle of the stream a call on ``stream`` uses), or
    (device, None) where no stream of a simulated device is capturing."""
    device = active()
    if device is None or not device.capturing():
        return device, None
    if stream is None:
        stream = getattr(_call, "stream", None)
    return device, stream_handle(stream)


def host_arrays() -> bool:
    """True while ``settings.simulate`` is on with no simulated device (set by a program, as
    Dask's simulated workers may have it): jitkern's constructors then give NumPy arrays. On
    a simulated device (``JITKERN_SIMULATE=1``, ``simulated_device()``) they give jitkern
    arrays in its memory."""
    return config.settings.simulate and active() is None


def not_modelled(array, what: str) -> KernelArgumentError:
    """The error for another library's GPU array (``__cuda_array_interface__`` memory that
    no simulated device holds) given to a kernel in the simulator: it is not modelled."""
    kind = f"{type(array).__module__}.{type(array).__qualname__}"
    return KernelArgumentError(
        f"{what}: a {kind} is another library's GPU array; the simulator does not model other "
        "libraries' GPU memory: pass a jitkern array (jitkern.asarray(numpy_array)) or, "
        "to a .simulate launch, a NumPy array")


def host_view(array) -> numpy.ndarray | None:
    """``array`` (a jitkern array, or anything with ``__cuda_array_interface__``) as a
    zero-copy NumPy view of the simulated device's memory; None when no simulated device is
    in use or ``array`` is not a device array."""
    device = active()
    if device is None or isinstance(array, numpy.ndarray):
        return None
    ptr = getattr(array, "ptr", None)
    if isinstance(ptr, int) and isinstance(getattr(array, "dtype", None), numpy.dtype):
        # a jitkern array: its own fields (CAI cannot spell bfloat16 or float8)
        return device.host_view(ptr, tuple(array.shape), tuple(array.strides), array.dtype)
    cai = getattr(array, "__cuda_array_interface__", None)
    if cai is None or device._block_at(int(cai["data"][0])) is None:
        return None  # not this device's memory: another library's (see not_modelled)
    dtype = numpy.dtype(cai["typestr"])
    shape = tuple(cai["shape"])
    strides = cai.get("strides")
    if strides is None:
        strides = tuple(dtype.itemsize * int(numpy.prod(shape[i + 1:], dtype=numpy.int64))
                        for i in range(len(shape)))
    return device.host_view(cai["data"][0], shape, tuple(strides), dtype)
