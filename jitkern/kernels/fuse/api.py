"""NumPy's routine names on ``jitkern`` (``jitkern.sqrt``, ``jitkern.where``, ``jitkern.sum``).

Code written for CuPy calls ``cp.sqrt(x)`` inside fused functions; with ``import jitkern as
cp`` these names make that work. Each is NumPy's routine when it meets traced values (NumPy
hands them to the proxies' ``__array_ufunc__``/``__array_function__``, so the operation is
recorded) or host values; on device arrays it runs as a one-routine fused kernel.
"""

from __future__ import annotations

import numpy

from . import ops as _fuse_ops
from . import routines as _fuse_routines
from .trace import Var
from . import Fused

_HOST = (numpy.ndarray, numpy.generic, bool, int, float, complex, type(None))

#: The extra function names (besides the ufuncs) fuse records.
FUNCTIONS = ("where", "clip", "copyto", "real", "imag", "abs", "mean", *_fuse_ops.REDUCTIONS,
             *_fuse_routines.ROUTINES)  # fmt: skip


class Routine:
    """``jitkern.<name>``: NumPy's routine of that name, run where its arguments live."""

    def __init__(self, name: str):
        self.__name__ = self.__qualname__ = name
        self.__doc__ = f"numpy.{name} on traced values, NumPy arrays, or device arrays."
        self._numpy = getattr(numpy, name)
        self._fused = None

    def __call__(self, *args, **kwargs):
        values = (*args, *kwargs.values())
        if any(isinstance(v, Var) for v in values) or all(isinstance(v, _HOST) for v in values):
            return self._numpy(*args, **kwargs)
        return self._kernel()(*args, **kwargs)

    @property
    def simulate(self):
        """``jitkern.sqrt.simulate(x)``: the routine's fused kernels run in the simulator on
        NumPy arrays (docs/debugging.md), as ``Fused.simulate``; not NumPy's routine."""
        return self._kernel().simulate

    def _kernel(self) -> Fused:
        if self._fused is None:
            fn = self._numpy
            self._fused = Fused(lambda *a, **k: fn(*a, **k), kernel_name=f"jitkern_{self.__name__}")
        return self._fused

    def __reduce__(self):
        return (routine, (self.__name__,))

    def __repr__(self) -> str:
        return f"<jitkern routine {self.__name__!r}>"


ROUTINES = {
    name: Routine(name) for name in (*sorted(_fuse_ops.UFUNCS), *FUNCTIONS) if hasattr(numpy, name)
}


def routine(name: str) -> Routine:
    return ROUTINES[name]


__all__ = ["ROUTINES", "Routine"]
