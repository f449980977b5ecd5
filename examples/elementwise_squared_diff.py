"""The spec's ElementwiseKernel examples: squared_diff, type-generic kernels, raw arguments.

    python examples/elementwise_squared_diff.py [--simulate]

Needs a CUDA GPU; --simulate (or JITKERN_SIMULATE=1) runs the same program on jitkern's
simulated device, whose kernels run in the CPU simulator (their C translated into JIT
kernels; examples/README.md). Without either it prints what it would compile and stops.
"""

import sys

import numpy as np

import jitkern


def main(xp=jitkern):
    """``xp``: jitkern (arrays on the device), or numpy while ``settings.simulate`` is on
    (every kernel then runs its ``.simulate``, which takes NumPy arrays)."""
    squared_diff = jitkern.ElementwiseKernel(
        "float32 x, float32 y", "float32 z", "z = (x - y) * (x - y)", "squared_diff")
    x = xp.arange(10, dtype=np.float32).reshape(2, 5)
    y = xp.arange(5, dtype=np.float32)
    print(squared_diff(x, y))          # broadcast a row against a matrix
    print(squared_diff(x, 5))          # a scalar

    generic = jitkern.ElementwiseKernel(
        "T x, T y", "T z", "T diff = x - y;\nz = diff * diff;", "squared_diff_generic")
    print(generic(xp.arange(5, dtype=np.float64), 1.5))

    add_reverse = jitkern.ElementwiseKernel(
        "T x, raw T y", "T z", "z = x + y[_ind.size() - i - 1]", "add_reverse")
    print(add_reverse(xp.arange(5, dtype=np.int32), xp.arange(0, 50, 10, dtype=np.int32)))

    # What was compiled, and what it costs (no GPU needed for inspect with arch=).
    print(squared_diff.inspect(np.zeros(1 << 20, np.float32), np.zeros(1 << 20, np.float32),
                               arch="sm_90"))


def explain_without_gpu() -> None:
    why = "this example needs a CUDA GPU (or --simulate) and none was found"
    print(f"{why}; what squared_diff compiles to for sm_90:")
    kernel = jitkern.ElementwiseKernel(
        "float32 x, float32 y", "float32 z", "z = (x - y) * (x - y)", "squared_diff")
    print(kernel.inspect(np.zeros(1 << 20, np.float32), np.zeros(1 << 20, np.float32),
                         arch="sm_90"))


if __name__ == "__main__":
    if "--simulate" in sys.argv[1:]:
        with jitkern.simulated_device():  # what JITKERN_SIMULATE=1 does for the whole run
            main()
    elif jitkern.is_available():
        main()
    else:
        explain_without_gpu()
