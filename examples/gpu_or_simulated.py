"""Where an example runs: on the GPU, or on jitkern's simulated device (every example
imports this; see examples/README.md).

``--simulate`` on an example's command line, or ``JITKERN_SIMULATE=1`` in its environment,
runs the same program on jitkern's simulated device (docs/debugging.md): jitkern arrays in
host memory, every kernel in the CPU simulator, on small inputs. Without either and without
a GPU, an example prints one line on stderr saying what it needs and exits with status
``NEEDS_GPU`` (1).
"""

import contextlib
import sys

import jitkern

#: The exit status of an example (or benchmark) that needs a GPU and finds none.
NEEDS_GPU = 1


def device(argv, name: str):
    """A context manager to run example ``name`` in: the simulated device for ``--simulate``
    (``JITKERN_SIMULATE=1`` is one already), else the GPU; None, with the one-line message
    printed, where there is no GPU."""
    if "--simulate" in argv:
        return jitkern.simulated_device()
    if jitkern.is_available():
        return contextlib.nullcontext()
    print(f"{name}: needs a CUDA GPU and none was found; run it with --simulate (or "
          "JITKERN_SIMULATE=1) to run it on jitkern's simulated device", file=sys.stderr)
    return None


def main(run, argv, name: str) -> int:
    """An example's ``main``: ``run()`` where :func:`device` says, and the exit status (0,
    or ``NEEDS_GPU`` where there is no GPU)."""
    on = device(argv, name)
    if on is None:
        return NEEDS_GPU
    with on:
        run()
    return 0


def simulated() -> bool:
    """Whether this runs on the simulated device (small inputs: the simulator runs Python
    per thread)."""
    return jitkern.config.settings.simulate


def where() -> str:
    return "in the simulator" if simulated() else "on the GPU"
