"""Kernels the export tests export (the JIT reads kernels from a source file)."""

import jitkern
from jitkern import jit


@jit.rawkernel()
def scaled_rows(x, m, alpha, out):
    """out[i] = alpha * x[i] + m[i, 1] (m is a strided 2-D view)."""
    i = jit.grid(1)
    if i < out.size:
        out[i] = alpha * x[i] + m[i, 1]


@jit.rawkernel(device=True)
def twice(v):
    return v * 2


RAW_SOURCE = r"""
template <typename T> __global__ void scale3(T* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * T(3);
}
extern "C" __global__ void add_scalar(const double* x, double c, double* y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + c;
}
"""


def saxpy():
    return jitkern.ElementwiseKernel("T x, T y, float32 a", "T z", "z = a * x + y", "saxpy_exp")


def l2norm():
    return jitkern.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm_exp")


@jitkern.fuse()
def fused_axpy(x, y, a):
    return a * x + y * y


@jitkern.fuse()
def fused_sum_of_squares(x):
    return (x * x).sum()
