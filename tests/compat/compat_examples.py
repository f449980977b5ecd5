"""The examples of CuPy's user-kernel documentation (the spec), written against a module
``cp`` so the same definitions serve the CPU tests (compile for sm_90) and the GPU tests
(run with jitkern's and CuPy's arrays). Only the kernels come from the documentation; the
inputs and checks are ours."""

import numpy as np

#: the names RawKernel.attributes holds, each also a property of the kernel
KERNEL_ATTRIBUTES = (
    "max_threads_per_block",
    "shared_size_bytes",
    "const_size_bytes",
    "local_size_bytes",
    "num_regs",
    "ptx_version",
    "binary_version",
    "cache_mode_ca",
    "max_dynamic_shared_size_bytes",
    "preferred_shared_memory_carveout",
)

MY_ADD = r"""
extern "C" __global__
void my_add(const float* x1, const float* x2, float* y) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    y[tid] = x1[tid] + x2[tid];
}
"""

COMPLEX_KERNEL = r"""
#include <cupy/complex.cuh>
extern "C" __global__
void my_func(const complex<float>* x1, const complex<float>* x2,
             complex<float>* y, float a) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    y[tid] = x1[tid] + a * x2[tid];
}
"""

# a kernel that needs more than the default 48 KiB of dynamic shared memory
BIG_SHARED = r"""
extern "C" __global__
void through_shared(const float* x, float* y, int n) {
    extern __shared__ float tile[];
    for (int k = threadIdx.x; k < n; k += blockDim.x) tile[k] = x[k];
    __syncthreads();
    for (int k = threadIdx.x; k < n; k += blockDim.x) y[k] = tile[n - 1 - k];
}
"""

TWO_KERNELS = r"""
extern "C"{
__global__ void test_sum(const float* x1, const float* x2, float* y, \
                         unsigned int N)
{
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < N)
    {
        y[tid] = x1[tid] + x2[tid];
    }
}
__global__ void test_multiply(const float* x1, const float* x2, float* y, \
                              unsigned int N)
{
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < N)
    {
        y[tid] = x1[tid] * x2[tid];
    }
}
}"""

FX3 = r"""
template<typename T>
__global__ void fx3(T* arr, int N) {
    unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < N) {
        arr[tid] = arr[tid] * 3;
    }
}
"""
FX3_NAMES = ["fx3<float>", "fx3<double>"]


def squared_diff(cp):
    return cp.ElementwiseKernel(
        "float32 x, float32 y", "float32 z", "z = (x - y) * (x - y)", "squared_diff"
    )


def squared_diff_generic(cp):
    return cp.ElementwiseKernel("T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff_generic")


def squared_diff_generic_body(cp):
    return cp.ElementwiseKernel(
        "T x, T y",
        "T z",
        """
            T diff = x - y;
            z = diff * diff;
        """,
        "squared_diff_generic",
    )


def squared_diff_super_generic(cp):
    return cp.ElementwiseKernel(
        "X x, Y y", "Z z", "z = (x - y) * (x - y)", "squared_diff_super_generic"
    )


def add_reverse(cp):
    return cp.ElementwiseKernel(
        "T x, raw T y", "T z", "z = x + y[_ind.size() - i - 1]", "add_reverse"
    )


def all_raw_double(cp):
    """Every argument raw: the loop size comes from size=."""
    return cp.ElementwiseKernel("raw T x", "raw T y", "y[i] = x[i] * 2", "all_raw_double")


def l2norm(cp):
    return cp.ReductionKernel(
        "T x",  # input params
        "T y",  # output params
        "x * x",  # map
        "a + b",  # reduce
        "y = sqrt(a)",  # post-reduction map
        "0",  # identity value
        "l2norm",  # kernel name
    )


def fused(cp):
    """The fuse section's three functions, decorated as the documentation does."""

    @cp.fuse()
    def squared_diff(x, y):
        return (x - y) * (x - y)

    @cp.fuse()
    def sum_of_products(x, y):
        return cp.sum(x * y, axis=-1)

    @cp.fuse(kernel_name="squared_diff")
    def squared_diff_named(x, y):
        return (x - y) * (x - y)

    return squared_diff, sum_of_products, squared_diff_named


def elementwise_copy(jit):
    @jit.rawkernel()
    def elementwise_copy(x, y, size):
        tid = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        ntid = jit.gridDim.x * jit.blockDim.x
        for i in range(tid, size, ntid):
            y[i] = x[i]

    return elementwise_copy


def sq(x, y):
    """float64 reference of (x - y)**2."""
    d = np.asarray(x, np.float64) - np.asarray(y, np.float64)
    return d * d
