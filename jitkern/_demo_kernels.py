"""Kernels used by ``python -m jitkern demo`` (a real file: the JIT reads its source)."""

from jitkern import jit


@jit.rawkernel()
def grid_stride_copy(x, y, size):
    tid = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    ntid = jit.gridDim.x * jit.blockDim.x
    for i in range(tid, size, ntid):
        y[i] = x[i]
