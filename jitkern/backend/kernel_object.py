"""The base of kernel objects: a ``functools.partial`` whose function is the launch.

Calling an instance whose class defines ``__call__`` in Python costs about 250 ns
more on CPython 3.12 than calling a partial, which CPython calls directly. So a
kernel object (RawKernel, @rawkernel) is a partial whose function is its whole
launch: the general path at first, then the launcher generated for the last
argument signature (backend.launch.make_fast_launcher), which falls back to the
general path on any miss. ``_set_call`` swaps that function.
"""

from __future__ import annotations

import functools

from ..errors import JitkernRuntimeError, JitkernTypeError


def _not_ready(*args, **kwargs):  # replaced by the subclass's __init__
    raise JitkernRuntimeError("the kernel object is not initialised")


class KernelPartial(functools.partial):
    """Compared and hashed by identity; not picklable (``_pickle_hint`` says what to do)."""

    _pickle_hint = "a kernel cannot be pickled"

    def __new__(cls, *args, **kwargs):
        return super().__new__(cls, _not_ready)

    def _set_call(self, func) -> None:
        """Make ``func`` what calling the kernel runs (it keeps the instance's __dict__)."""
        if self.func is not func:
            self.__setstate__((func, (), None, self.__dict__))

    def __reduce__(self):
        raise JitkernTypeError(self._pickle_hint)

    def __eq__(self, other):
        return self is other

    __hash__ = object.__hash__
