"""The spec's ReductionKernel example (l2norm) over several axes, and two outputs at once.

    python examples/reduction_l2norm.py [--simulate]

Needs a CUDA GPU, or --simulate: the kernels run in jitkern's CPU simulator on NumPy
arrays (their C translated into JIT kernels).
"""

import sys

import numpy as np

import jitkern


def main(xp=jitkern):
    """``xp``: jitkern (arrays on the GPU) or numpy (with the simulator on)."""
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
    size = 1 << 22 if xp is jitkern else 1 << 12  # the simulator runs Python per thread
    big = xp.asarray(np.random.default_rng(0).random(size, dtype=np.float32))
    first, second = l2norm(big), l2norm(big)
    if xp is jitkern:
        first, second = first.get(), second.get()
    assert np.asarray(first).tobytes() == np.asarray(second).tobytes()


if __name__ == "__main__":
    if "--simulate" in sys.argv[1:]:
        jitkern.config.settings.simulate = True
        main(np)
    elif not jitkern.is_available():
        print("this example needs a CUDA GPU and none was found")
    else:
        main()
