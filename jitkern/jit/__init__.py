"""The Python -> CUDA JIT compiler: ``@rawkernel`` and the names kernels use.

The public names match ``cupyx.jit``: code written for it ports by changing the
import to ``from jitkern import jit``. Inside a kernel, these names are compiled
to CUDA; called from Python they raise.

Pipeline (one module per stage, imports flowing one way)::

    frontend      source -> AST, positions, captured globals
    types/infer   the types and the type rules (both modes)
    builtins      one record per builtin (checking, emission, docs)
    expressions   expressions -> (C++ expression, type)
    statements    statements -> a C++ function
    program       shared per-program state and source assembly
    kernel        specialisation, compile cache, on-disk index, launch
"""

from ..kernels import jit_names as _names

__jit_names__ = True  # the compiler reads this module as cupyx.jit's names (frontend)
from ..kernels.jit_names import JitKernel, __all__, rawkernel  # noqa: F401


def __getattr__(name: str):
    value = globals()[name] = _names.builtin(name, __name__)
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
