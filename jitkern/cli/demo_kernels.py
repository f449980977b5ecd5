"""Kernels used by ``python -m jitkern demo`` (a real file: the JIT reads its source)."""

import numpy as np

from jitkern import jit


@jit.rawkernel()
def grid_stride_copy(x, y, size):
    tid = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    ntid = jit.gridDim.x * jit.blockDim.x
    for i in range(tid, size, ntid):
        y[i] = x[i]


@jit.rawkernel()
def block_sum(x, out, n):
    """Shared memory, warp shuffles, a barrier and an atomic: one partial sum per block."""
    partial = jit.shared_memory(np.float32, 32)
    tid = jit.threadIdx.x
    v = np.float32(0)
    for i in range(jit.grid(1), n, jit.gridsize(1)):
        v += x[i]
    for offset in (16, 8, 4, 2, 1):
        v += jit.shfl_down_sync(0xFFFFFFFF, v, offset)
    if tid % 32 == 0:
        partial[tid // 32] = v
    jit.syncthreads()
    if tid < 32:
        v = partial[tid] if tid < jit.blockDim.x // 32 else np.float32(0)
        for offset in (16, 8, 4, 2, 1):
            v += jit.shfl_xor_sync(0xFFFFFFFF, v, offset)
        if tid == 0:
            jit.atomic_add(out, 0, v)
