"""The spec's ElementwiseKernel examples: squared_diff, type-generic kernels, raw arguments.

    python examples/elementwise_squared_diff.py

Needs a CUDA GPU (the simulator, --simulate, runs @rawkernel JIT kernels only; without a
GPU this example prints what it would compile and stops).
"""

import sys

import numpy as np

import jitkern


def main():
    squared_diff = jitkern.ElementwiseKernel(
        "float32 x, float32 y", "float32 z", "z = (x - y) * (x - y)", "squared_diff")
    x = jitkern.arange(10, dtype=np.float32).reshape(2, 5)
    y = jitkern.arange(5, dtype=np.float32)
    print(squared_diff(x, y))          # broadcast a row against a matrix
    print(squared_diff(x, 5))          # a scalar

    generic = jitkern.ElementwiseKernel(
        "T x, T y", "T z", "T diff = x - y;\nz = diff * diff;", "squared_diff_generic")
    print(generic(jitkern.arange(5, dtype=np.float64), 1.5))

    add_reverse = jitkern.ElementwiseKernel(
        "T x, raw T y", "T z", "z = x + y[_ind.size() - i - 1]", "add_reverse")
    print(add_reverse(jitkern.arange(5, dtype=np.int32), jitkern.arange(0, 50, 10, dtype=np.int32)))

    # What was compiled, and what it costs (no GPU needed for inspect with arch=).
    print(squared_diff.inspect(np.zeros(1 << 20, np.float32), np.zeros(1 << 20, np.float32),
                               arch="sm_90"))


def explain_without_gpu() -> None:
    why = ("the simulator runs @rawkernel JIT kernels, not ElementwiseKernel"
           if "--simulate" in sys.argv[1:] else "this example needs a CUDA GPU and none was found")
    print(f"{why}; what squared_diff compiles to for sm_90:")
    kernel = jitkern.ElementwiseKernel(
        "float32 x, float32 y", "float32 z", "z = (x - y) * (x - y)", "squared_diff")
    print(kernel.inspect(np.zeros(1 << 20, np.float32), np.zeros(1 << 20, np.float32),
                         arch="sm_90"))


if __name__ == "__main__":
    if jitkern.is_available() and "--simulate" not in sys.argv[1:]:
        main()
    else:
        explain_without_gpu()
