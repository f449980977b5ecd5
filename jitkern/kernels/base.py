"""The base of kernel objects: a ``functools.partial`` whose function is the launch.

Calling an instance whose class defines ``__call__`` in Python costs about 250 ns
more on CPython 3.12 than calling a partial, which CPython calls directly. So a
kernel object (RawKernel, @rawkernel) is a partial whose function is its whole
launch: the general path at first, then the launcher generated for the last
argument signature (backend.launch.make_fast_launcher), which falls back to the
general path on any miss. ``_set_call`` swaps that function.

``bind`` is shared by every kernel kind: the subclass says, in ``_bind_parts``, which
:class:`~.module.Function` and which full argument tuple a call with ``args`` would
launch, and :meth:`~.module.Function.bind` does the rest (one mechanism, the packed
parameter buffer of the launch plans).
"""

from __future__ import annotations

import functools

from ..errors import JitkernRuntimeError, JitkernTypeError
from ..runtime import driver
from ..toolchain import target
from ..toolchain.target import Arch


def resolve_arch(arch) -> Arch:
    """The one Arch a build is for: the user's ``arch=`` parsed (target.parse), or, for
    None, the current device's (target.for_device: CUBIN where NVRTC can, never PTX newer
    than the driver). 'sm_90', 90, (9, 0) and an sm_90 device give the same Arch, so the
    same cache entry."""
    if arch is not None:
        return target.parse(arch)
    capability = driver.compute_capability(driver.current_device_id())
    return target.for_device(capability, driver.driver_version())


def _not_ready(*args, **kwargs):  # replaced by the subclass's __init__
    raise JitkernRuntimeError("the kernel object is not initialised")


class KernelPartial(functools.partial):
    """Compared and hashed by identity; not picklable (``_pickle_hint`` says what to do)."""

    _pickle_hint = "a kernel cannot be pickled"

    #: Allow ``cluster=`` launches of 9 to 16 blocks per cluster (CUDA's non-portable
    #: cluster sizes, which H100-class GPUs have); 8 is the portable limit otherwise.
    allow_nonportable_cluster_size = False

    def __new__(cls, *args, **kwargs):
        return super().__new__(cls, _not_ready)

    def _set_call(self, func) -> None:
        """Make ``func`` what calling the kernel runs (it keeps the instance's __dict__)."""
        if self.func is not func:
            _name_as_call(func, self._call_name())
            self.__setstate__((func, (), None, self.__dict__))

    def _call_name(self) -> str:
        """The name Python's own call errors give (``RawKernel.__call__() missing ...``)."""
        return f"{type(self).__name__}.__call__"

    def bind(self, grid, block, *args, shared_mem: int = 0, stream=None):
        """A :class:`~jitkern.runtime.module.BoundLaunch`: this launch with ``args`` packed
        once. Calling it re-launches with the same arguments at about the cost of a bare
        ``cuLaunchKernel``; ``set_arg(i, value)`` or ``args[i] = value`` replaces one
        (checked against its type). ``stream=None`` follows the current stream at each
        call; the device is the current one now. See docs/graphs.md."""
        function, launch_args, cooperative, refresh = self._bind_parts(args)
        return function.bind(grid, block, launch_args, shared_mem, stream, cooperative,
                             user_count=len(args), refresh=refresh)

    def _bind_parts(self, args: tuple):  # overridden by the kernel kinds
        raise JitkernTypeError(f"{type(self).__name__} cannot be bound")

    def __reduce__(self):
        raise JitkernTypeError(self._pickle_hint)

    def __eq__(self, other):
        return self is other

    __hash__ = object.__hash__


def _name_as_call(func, qualname: str) -> None:
    """Python's own errors for a wrong call (a missing or unknown argument) name the
    function called: make that ``RawKernel.__call__`` (or a JIT kernel's own name), not an
    internal ``_launch``."""
    target = getattr(func, "__func__", func)
    try:
        target.__qualname__ = qualname
        target.__name__ = qualname.rpartition(".")[2]
    except (AttributeError, TypeError):
        pass  # a builtin or a partial: nothing to rename
