"""The spec's ReductionKernel example (l2norm) over several axes, and two outputs at once.

    python examples/reduction_l2norm.py [--simulate]

Needs a CUDA GPU; --simulate (or JITKERN_SIMULATE=1) runs the same program on jitkern's
simulated device, whose kernels run in the CPU simulator (their C translated into JIT
kernels; examples/README.md).
"""

import sys

import numpy as np

import jitkern
from gpu_or_simulated import main as example_main, simulated


def main(xp=jitkern):
    """``xp``: jitkern (arrays on the device), or numpy while ``settings.simulate`` is on
    (every kernel then runs its ``.simulate``, which takes NumPy arrays)."""
    l2norm = jitkern.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")
    x = xp.arange(10, dtype=np.float32).reshape(2, 5)
    print(l2norm(x, axis=1))                    # [ 5.477226 15.9687195]
    print(l2norm(x))                            # full reduction
    print(l2norm(x, axis=0, keepdims=True))

    stats = jitkern.ReductionKernel("T x", "T total, T mean", "x", "a + b",
                                    "total = a; mean = a / N_RED", "0", "sum_and_mean",
                                    preamble="#define N_RED 5")
    total, mean = stats(x, axis=1)              # every output is returned
    print(total, mean)

    # Same bits on every run: no atomics, a fixed order.
    size = 1 << 12 if simulated() else 1 << 22  # the simulator runs Python per thread
    big = xp.asarray(np.random.default_rng(0).random(size, dtype=np.float32))
    first, second = l2norm(big), l2norm(big)
    assert jitkern.asnumpy(first).tobytes() == jitkern.asnumpy(second).tobytes()


if __name__ == "__main__":
    sys.exit(example_main(main, sys.argv[1:], "reduction_l2norm.py"))
