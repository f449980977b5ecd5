"""cupyx.jit's names: the builtins kernels use (compiler/builtins) and ``rawkernel``.

``jitkern.jit`` (the public face) re-exports them; kernel text that jitkern generates itself
(a string kernel translated for the simulator, a fused function's simulator path) names
them as ``jit.<name>`` over this module, which lies below the faces.
"""


from ..compiler import builtins as _b
from .jit import JitKernel, rawkernel

__jit_names__ = True  # the compiler reads this module as it reads jitkern.jit

threadIdx = _b.threadIdx
blockIdx = _b.blockIdx
blockDim = _b.blockDim
gridDim = _b.gridDim
warpsize = _b.warpsize
grid = _b.grid
gridsize = _b.gridsize
laneid = _b.laneid
range = _b.jit_range

syncthreads = _b.syncthreads
syncthreads_count = _b.syncthreads_count
syncthreads_and = _b.syncthreads_and
syncthreads_or = _b.syncthreads_or
syncwarp = _b.syncwarp
threadfence = _b.threadfence
threadfence_block = _b.threadfence_block
threadfence_system = _b.threadfence_system
clock64 = _b.clock64
nanosleep = _b.nanosleep

shared_memory = _b.shared_memory
local_memory = _b.local_memory
ldg = _b.ldg

atomic_add = _b.ATOMICS["atomic_add"]
atomic_sub = _b.ATOMICS["atomic_sub"]
atomic_exch = _b.ATOMICS["atomic_exch"]
atomic_min = _b.ATOMICS["atomic_min"]
atomic_max = _b.ATOMICS["atomic_max"]
atomic_inc = _b.ATOMICS["atomic_inc"]
atomic_dec = _b.ATOMICS["atomic_dec"]
atomic_cas = _b.ATOMICS["atomic_cas"]
atomic_and = _b.ATOMICS["atomic_and"]
atomic_or = _b.ATOMICS["atomic_or"]
atomic_xor = _b.ATOMICS["atomic_xor"]

shfl_sync = _b.SHUFFLES["shfl_sync"]
shfl_up_sync = _b.SHUFFLES["shfl_up_sync"]
shfl_down_sync = _b.SHUFFLES["shfl_down_sync"]
shfl_xor_sync = _b.SHUFFLES["shfl_xor_sync"]
all_sync = _b.VOTES["all_sync"]
any_sync = _b.VOTES["any_sync"]
ballot_sync = _b.VOTES["ballot_sync"]
activemask = _b.activemask
match_any_sync = _b.match_any_sync
match_all_sync = _b.match_all_sync

popc = _b.popc
clz = _b.clz
ffs = _b.ffs
brev = _b.brev

cg = _b.cg
cub = _b.cub
thrust = _b.thrust
#: texture and surface object reads and writes: jit.texture.tex2D(t.ptr, x, y, numpy.float32)
texture = _b.texture
#: every NumPy ufunc of the table fuse uses, with NumPy's loop: jit.ufunc.gcd(a, b)
ufunc = _b.ufunc

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
