"""The kernels the graph tests capture (tests/runtime/test_graph_gpu.py and
test_graph_update_gpu.py): a RawKernel's source and a @rawkernel, over N elements."""

import jitkern
from jitkern import jit

N = 3000  # not a multiple of the block: the bounds checks matter
THREADS = 128
BLOCKS = (N + THREADS - 1) // THREADS

TWICE = r"""
extern "C" __global__ void twice(const double* x, double* y, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0 * x[i];
}
"""


@jitkern.rawkernel()
def add_scalar(x, out, c, n):
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    if i < n:
        out[i] = x[i] + c
