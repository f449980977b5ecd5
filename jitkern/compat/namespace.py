"""NumPy's dtype names and constants on ``jitkern``, and the array constructors as
``jitkern.<name>`` calls them.

``jitkern.float32 is numpy.float32``, as ``cupy.float32`` is: CuPy code that says
``cp.float32``, ``cp.pi`` or ``x[:, cp.newaxis]`` runs after ``import jitkern as cp``.

The constructors (``jitkern.arange``, ``empty``, ``zeros``, ``asarray``, ...) make device arrays;
while ``jitkern.config.settings.simulate`` is on (``JITKERN_SIMULATE=1``) they make NumPy
arrays instead, the arrays simulated kernels take, so a program written for the GPU runs
unchanged on a machine without one (on a simulated device, jitkern.simulated_device(), they make
jitkern arrays in its host memory).
"""

from __future__ import annotations

import functools

import numpy

from .. import arrays
from ..runtime.simulated import host_arrays
from . import NUMPY_NAMES


for _name in NUMPY_NAMES:
    if hasattr(numpy, _name):
        globals()[_name] = getattr(numpy, _name)


def host_when_simulating(device_fn, host_fn):
    """``device_fn``, or ``host_fn`` (NumPy's) while the simulator is on."""

    @functools.wraps(device_fn)
    def call(*args, **kwargs):
        if host_arrays():  # JITKERN_SIMULATE=1 without a simulated device
            return host_fn(*args, **kwargs)
        return device_fn(*args, **kwargs)

    call.__doc__ = (
        f"{device_fn.__doc__ or ''}\n\nWith ``JITKERN_SIMULATE=1``: ``numpy.{host_fn.__name__}``, "
        "a host array for simulated kernels."
    ).strip()
    return call


#: The constructors: jitkern's (device arrays) and NumPy's (while simulating).
CONSTRUCTORS = ("empty", "zeros", "ones", "full", "arange", "empty_like", "zeros_like",
                "ones_like", "full_like", "asarray", "array")  # fmt: skip

for _name in CONSTRUCTORS:
    globals()[_name] = host_when_simulating(getattr(arrays, _name), getattr(numpy, _name))


__all__ = [*(n for n in NUMPY_NAMES if hasattr(numpy, n)), *CONSTRUCTORS]
