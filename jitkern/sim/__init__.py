"""The CPU simulator: every kernel kind run without a GPU, with the GPU build's semantics
and checks a GPU cannot make (docs/debugging.md).

- JIT kernels (``kernel.simulate``, :mod:`.simulator`): the JIT's own parsing and typing,
  then the emitter writes Python over NumPy scalars instead of CUDA C++ (:mod:`.emit`'s
  spellings), run by the per-thread :mod:`.scheduler` or, written again over arrays of
  threads (:mod:`.vecemit`), by :mod:`.vector`.
- String kernels (RawKernel, RawModule, ElementwiseKernel, ReductionKernel, and so fuse's
  kernels): their C is translated by the C subset (:mod:`.csubset`, :mod:`.ctranslate`, ...)
  into the simulator's own kernels (:mod:`.translated`): :mod:`.raw`, :mod:`.elementwise`,
  :mod:`.reduction`.
- A simulated device (:mod:`.device`, ``jitkern.simulated_device()``): a CUDA driver
  stand-in whose memory is host memory, so jitkern arrays work without a GPU.

``JITKERN_SIMULATE=1`` (``jitkern.config.settings.simulate``) makes every launch of a
program run here. Importing this package loads none of it: each name below loads its
module on first use (a JIT kernel's simulation needs no C translator).
"""

import importlib

from ..errors import JitkernAttributeError

#: the package's names -> the module holding each
_NAMES = {"Simulator": "simulator", "BoundSimulation": "simulator",
          "SimulatedDevice": "device", "simulated_device": "device"}


def __getattr__(name: str):
    module = _NAMES.get(name)
    if module is None:
        raise JitkernAttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


__all__ = sorted(_NAMES)
