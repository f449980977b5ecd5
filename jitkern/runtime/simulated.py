"""The simulated device in use now (jitkern/sim/device.py, a driver stand-in), as the
runtime and the kernels see it: whether one is the driver, and jitkern arrays as NumPy views
of its memory. Here, not in sim/, because code that never simulates asks it (jitkern's
constructors, a RawKernel's attributes): a first GPU launch loads nothing of the simulator.
"""

from __future__ import annotations

import numpy

from .. import config
from ..errors import KernelArgumentError
from . import driver

#: The simulated devices entered (``jitkern.simulated_device()``) and not yet left.
ACTIVE: list = []


def active():
    """The simulated device the runtime is using now, or None (a GPU, or no device)."""
    return ACTIVE[-1] if ACTIVE and driver._driver_module is ACTIVE[-1] else None


def host_arrays() -> bool:
    """True while the simulator is on with no simulated device (``JITKERN_SIMULATE=1``
    alone): jitkern's constructors then give NumPy arrays. On a simulated device they give
    jitkern arrays in its memory."""
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
