"""``jitkern.simulated_device()``: jitkern arrays in host memory, every kernel in the CPU
simulator (the driver stand-in: runtime/simdevice.py; docs/debugging.md).

Importing this module imports kernels/raw.py, which gives the simulated device its one way
to run CUDA C (the RawKernel simulator) for jitkern's own array kernels."""

from ..runtime.simdevice import SimulatedDevice, active, host_view, simulated_device
from . import raw  # noqa: F401 - registers the source runner (runtime.simdevice.SOURCE_RUNNER)

__all__ = ["SimulatedDevice", "active", "host_view", "simulated_device"]
