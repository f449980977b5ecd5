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

from ..errors import JitkernAttributeError
from ..kernels.jit import JitKernel, rawkernel
from ..lazy import lazy_import

__jit_names__ = True  # the compiler reads this module as cupyx.jit's names (frontend)

# The names kernels use are the compiler's builtin records (compiler/builtins), loaded when
# one is first read: a fresh process whose kernels are all in the disk cache (the on-disk
# index names their source and binary) never loads the compiler's builtin tables.
_builtins = lazy_import("jitkern.compiler.builtins")  # the builtin tables, on the first read
_PLAIN = (
    "threadIdx", "blockIdx", "blockDim", "gridDim", "warpsize", "grid", "gridsize", "laneid",
    "syncthreads", "syncthreads_count", "syncthreads_and", "syncthreads_or", "syncwarp",
    "threadfence", "threadfence_block", "threadfence_system", "clock64", "nanosleep",
    "shared_memory", "local_memory", "ldg", "activemask", "match_any_sync", "match_all_sync",
    "popc", "clz", "ffs", "brev", "cg", "cub", "thrust",
    "texture",  # texture and surface object reads and writes: jit.texture.tex2D(t.ptr, x, y, f)
    "ufunc",  # every NumPy ufunc of the table fuse uses, with NumPy's loop: jit.ufunc.gcd(a, b)
)
_IN_TABLES = {  # name -> the builtins table that holds it
    **dict.fromkeys(("atomic_add", "atomic_sub", "atomic_exch", "atomic_min", "atomic_max",
                     "atomic_inc", "atomic_dec", "atomic_cas", "atomic_and", "atomic_or",
                     "atomic_xor"), "ATOMICS"),
    **dict.fromkeys(("shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync"),
                    "SHUFFLES"),
    **dict.fromkeys(("all_sync", "any_sync", "ballot_sync"), "VOTES"),
}


def __getattr__(name: str):
    if name in _PLAIN or name in _IN_TABLES or name == "range":
        if name == "range":
            value = _builtins.jit_range
        elif name in _IN_TABLES:
            value = getattr(_builtins, _IN_TABLES[name])[name]
        else:
            value = getattr(_builtins, name)
        globals()[name] = value
        return value
    raise JitkernAttributeError(f"module 'jitkern.jit' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "JitKernel",
    "ufunc",
    "rawkernel",
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "warpsize",
    "grid",
    "gridsize",
    "laneid",
    "range",
    "syncthreads",
    "syncthreads_count",
    "syncthreads_and",
    "syncthreads_or",
    "syncwarp",
    "threadfence",
    "threadfence_block",
    "threadfence_system",
    "clock64",
    "nanosleep",
    "shared_memory",
    "local_memory",
    "ldg",
    "atomic_add",
    "atomic_sub",
    "atomic_exch",
    "atomic_min",
    "atomic_max",
    "atomic_inc",
    "atomic_dec",
    "atomic_cas",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "shfl_sync",
    "shfl_up_sync",
    "shfl_down_sync",
    "shfl_xor_sync",
    "all_sync",
    "any_sync",
    "ballot_sync",
    "activemask",
    "match_any_sync",
    "match_all_sync",
    "popc",
    "clz",
    "ffs",
    "brev",
    "cg",
    "cub",
    "texture",
    "thrust",
]
