"""The CPU simulator: every kernel kind run without a GPU, with the GPU build's semantics
and checks a GPU cannot make (docs/debugging.md).

- JIT kernels (``kernel.simulate``, :mod:`.simulator`): the JIT's own parsing and typing,
  then :mod:`.emit` writes Python over NumPy scalars instead of CUDA C++, run by the
  per-thread :mod:`.scheduler` or, written again over arrays of threads, by :mod:`.vector`.
- String kernels (RawKernel, RawModule, ElementwiseKernel, ReductionKernel, and so fuse's
  kernels): their C is translated by the C subset (:mod:`.csubset`, :mod:`.ctranslate`, ...)
  into the simulator's own kernels (:mod:`.translated`): :mod:`.raw`, :mod:`.elementwise`,
  :mod:`.reduction`.
- A simulated device (:mod:`.device`, ``jitkern.simulated_device()``): a CUDA driver
  stand-in whose memory is host memory, so jitkern arrays work without a GPU.

``JITKERN_SIMULATE=1`` (``jitkern.config.settings.simulate``) makes every launch of a
program run here.
"""

from .device import SimulatedDevice, simulated_device
from .simulator import BoundSimulation, Simulator, block_size_of, launch_keywords

__all__ = ["BoundSimulation", "SimulatedDevice", "Simulator", "block_size_of",
           "launch_keywords", "simulated_device"]
