"""cupyx.jit's names: the builtins kernels use (compiler/builtins) and ``rawkernel``.

``jitkern.jit`` (the public face) re-exports them; kernel text that jitkern generates itself
(a string kernel translated for the simulator, a fused function's simulator path) names
them as ``jit.<name>`` over this module, which lies below the faces.
"""

from ..errors import JitkernAttributeError
from ..lazy import lazy_import
from .jit import JitKernel, rawkernel

_builtins = lazy_import("jitkern.compiler.builtins")  # the builtin tables, on the first name read

__jit_names__ = True  # the compiler reads this module as it reads jitkern.jit

# The names kernels use are the compiler's builtin records (compiler/builtins), loaded when
# one is first read: a fresh process whose kernels are all in the disk cache (the on-disk
# index names their source and binary) never loads the compiler's builtin tables.
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


def builtin(name: str, module: str = __name__):
    """The builtin record cupyx.jit calls ``name`` (read as an attribute of ``module``)."""
    if name in _PLAIN or name in _IN_TABLES or name == "range":
        if name == "range":
            return _builtins.jit_range
        if name in _IN_TABLES:
            return getattr(_builtins, _IN_TABLES[name])[name]
        return getattr(_builtins, name)
    raise JitkernAttributeError(f"module {module!r} has no attribute {name!r}")


def __getattr__(name: str):
    value = globals()[name] = builtin(name)
    return value


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
